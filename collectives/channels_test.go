package collectives

import (
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestChannelRange: the channel{Lo..Hi} NCCL logs for one collective
// alone, worked by hand from src/enqueue.cc (topoGetAlgoInfo and
// scheduleCollTasksToPlan) and src/graph/tuning.cc at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027. 2 × 8 H100 (16 ranks):
// comm->nChannels 16 (BufferChannels: the ring graph's 8, one per NDR
// NIC, duplicated), nvlsChannels 16.
//   - all-reduce 1 MiB, tree LL128: 640 threads × 8 B × 16 channels =
//     80 KiB ≤ 1 MiB keeps 16; traffic 2 MiB, 128 KiB a channel; cells of
//     16 KiB (32 KiB of traffic at 2 per byte), 64 of them, 4 a channel:
//     16 channels, {0..15}.
//   - all-reduce 8 KiB, tree LL: 512 × 8 B a channel, 2 channels; traffic
//     ×2 ×4 (LL) = 64 KiB, 32 KiB a channel; cells 4 KiB (32 KiB / 8), 2,
//     one a channel: {0..1}.
//   - all-reduce 256 KiB, ring LL: the threshold ×16 ranks, 512 × 128 B
//     = 64 KiB a channel, 4 channels; 2 MiB of traffic, 512 KiB a
//     channel, 64 cells of 4 KiB, 16 a channel: {0..3}.
//   - all-reduce 8 B, tree LL: 1 channel, one cell: {0..0}.
//   - all-reduce 128 MiB, NVLS-tree Simple: the 16 NVLS channels, 8,192
//     cells of 16 KiB, 512 a channel: {0..15}.
//   - all-gather of 4 KiB a rank (count 2,048 bf16, counted in bytes):
//     64 KiB over all ranks, ring Simple 512 × 64 B a channel: 2; traffic
//     ×16 ranks = 64 KiB, 32 KiB a channel; cells of 2 KiB, 2, one a
//     channel: {0..1}.
//
// One node of 4 V100 over PCIe (4 channels, 2 found and doubled): the
// ring graph's 12 GB/s is at most PCI_BW, so a Simple ring runs 256
// threads (tuning.cc line 245): 64 KiB keeps all 4 channels (4 × 256 ×
// 64 B = 64 KiB), 32 KiB of traffic each, one 16 KiB cell: {0..3}; at
// 512 threads it would keep 2, {0..1}.
func TestChannelRange(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	sh := Shape{Ranks: 16, Nodes: 2}
	pci := NewModel(Hardware{Arch: Volta, PCI: true, IntraBW: 16e9, NICBW: 12.5e9, NICsPerNode: 1})
	for _, c := range []struct {
		name   string
		m      *Model
		sh     Shape
		op     Op
		algo   Algo
		proto  Proto
		bytes  units.Bytes // the call's count × 2 (bf16)
		lo, hi int
	}{
		{"AR 1 MiB tree/LL128", m, sh, AllReduce, Tree, LL128, units.MiB, 0, 15},
		{"AR 8 KiB tree/LL", m, sh, AllReduce, Tree, LL, 8 * units.KiB, 0, 1},
		{"AR 256 KiB ring/LL", m, sh, AllReduce, Ring, LL, 256 * units.KiB, 0, 3},
		{"AR 8 B tree/LL", m, sh, AllReduce, Tree, LL, 8, 0, 0},
		{"AR 128 MiB nvlstree/Simple", m, sh, AllReduce, NVLSTree, Simple, 128 * units.MiB, 0, 15},
		{"AG 4 KiB a rank ring/Simple", m, sh, AllGather, Ring, Simple, 4 * units.KiB, 0, 1},
		{"PCIe AR 64 KiB ring/Simple", pci, Shape{Ranks: 4, Nodes: 1}, AllReduce, Ring, Simple, 64 * units.KiB, 0, 3},
	} {
		lo, hi, ok := c.m.ChannelRange(c.op, c.sh, Choice{Algo: c.algo, Proto: c.proto}, int64(c.bytes)/2, 2)
		if !ok || lo != c.lo || hi != c.hi {
			t.Errorf("%s: {%d..%d} (%v), want {%d..%d}", c.name, lo, hi, ok, c.lo, c.hi)
		}
	}
	if _, _, ok := NewModel(mi300x()).ChannelRange(AllReduce, sh, Choice{Algo: Ring, Proto: Simple}, 1<<20, 2); ok {
		t.Error("RCCL's channels: the model does not know them")
	}
}
