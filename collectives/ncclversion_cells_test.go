package collectives

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestNCCLVersionCapCells holds the per-channel caps and rules that
// changed between patch releases where they bind, each figure by hand
// from tuning.cc at the tag (algorithm bandwidth of a 1 GiB all-reduce
// unless said, GB/s; B200 NVLink 900 × 40.1/50 = 721.8, 16 channels on one
// node and two per NIC across nodes, the model's channels):
//
//   - ring LL128 on one B200 node: min(721.8 × .92, 16 × perChMaxRingLL128Bws
//     [Blackwell][N1]) × 8/14: 2 × 36.7 to 2.28.9 (NVLink binds: 664.056),
//     34.5 in 2.29.2 (552), 40.0 from 2.29.7 (640);
//   - ring LL128 over 2 × 8 B200 with eight 800 Gb/s NICs (more than
//     NVLink's 721.8 per node): the N2 column, 2 × 36.7 in 2.28.3 (NVLink
//     binds), 34.6 from 2.28.7 to 2.29.2 (16 × 34.6 = 553.6), 40.0 from
//     2.29.7; × 16/30;
//   - NVLS tree over 4 × 8 B200 with the same NICs: perChMaxNVLSTreeBws
//     [Blackwell][N4] × 16 channels × 32/62, 43.1 in 2.28.3 and 2.28.7,
//     43.8 from 2.28.9 to 2.29.7; 2.30's 80.0 no longer binds and the
//     interior nodes' half of the NICs does (8 × 96 / 2 = 384, 96 GB/s the
//     search's figure for 800 Gb/s as 48 is for 400 Gb/s);
//   - ring LL128 over 2 × 2 H100 (two 400 Gb/s NICs, 96 GB/s, 4 channels):
//     ppn = 2 is not "ppn < 2", so 2.22 takes .92 like 2.23 (88.32 × 4/6);
//     one rank per node takes 0.7 in 2.19 and 2.20 as in 2.22;
//   - NVLS tree over 2 × 8 B200 (400 Gb/s NICs, 384 GB/s per node) at
//     512 MiB, log2(512 MiB / 64) = 23: 2.29.2 corrects it by the 24th
//     Simple factor its treeCorrectionFactor adds, .9 ("logSize < 24",
//     ncclTopoGetAlgoTime at v2.29.2-1), 2.28.9 does not.
func TestNCCLVersionCapCells(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	b200x := b200
	b200x.NICBW = 100e9
	h := h100(50e9, 0)
	const nvlink = 900 * 40.1 / 50
	one, two, four := Shape{Ranks: 8, Nodes: 1}, Shape{Ranks: 16, Nodes: 2}, Shape{Ranks: 32, Nodes: 4}
	cases := []struct {
		release string
		hw      Hardware
		algo    Algo
		proto   Proto
		sh      Shape
		size    units.Bytes
		want    float64
	}{
		{"2.28.9", b200, Ring, LL128, one, units.GiB, nvlink * .92 * 8 / 14},
		{"2.29.2", b200, Ring, LL128, one, units.GiB, 16 * 34.5 * 8 / 14},
		{"2.29.7", b200, Ring, LL128, one, units.GiB, 16 * 40.0 * 8 / 14},
		{"2.28.3", b200x, Ring, LL128, two, units.GiB, nvlink * .92 * 16 / 30},
		{"2.28.7", b200x, Ring, LL128, two, units.GiB, 16 * 34.6 * 16 / 30},
		{"2.28.9", b200x, Ring, LL128, two, units.GiB, 16 * 34.6 * 16 / 30},
		{"2.29.2", b200x, Ring, LL128, two, units.GiB, 16 * 34.6 * 16 / 30},
		{"2.29.7", b200x, Ring, LL128, two, units.GiB, 16 * 40.0 * 16 / 30},
		{"2.28.3", b200x, NVLSTree, Simple, four, units.GiB, 16 * 43.1 * 32 / 62},
		{"2.28.7", b200x, NVLSTree, Simple, four, units.GiB, 16 * 43.1 * 32 / 62},
		{"2.28.9", b200x, NVLSTree, Simple, four, units.GiB, 16 * 43.8 * 32 / 62},
		{"2.29.7", b200x, NVLSTree, Simple, four, units.GiB, 16 * 43.8 * 32 / 62},
		{"2.30", b200x, NVLSTree, Simple, four, units.GiB, 8 * 96.0 / 2},
		{"2.22", h, Ring, LL128, Shape{Ranks: 4, Nodes: 2}, units.GiB, 2 * 48 * .92 * 4 / 6},
		{"2.23", h, Ring, LL128, Shape{Ranks: 4, Nodes: 2}, units.GiB, 2 * 48 * .92 * 4 / 6},
		{"2.19", h, Ring, LL128, Shape{Ranks: 2, Nodes: 2}, units.GiB, 48 * 0.7},
		{"2.20", h, Ring, LL128, Shape{Ranks: 2, Nodes: 2}, units.GiB, 48 * 0.7},
		{"2.28.9", b200, NVLSTree, Simple, two, 512 * units.MiB, 8 * 48.0},
		{"2.29.2", b200, NVLSTree, Simple, two, 512 * units.MiB, 8 * 48.0 * .9},
	}
	for _, c := range cases {
		ch, ok := NewModel(versioned(c.hw, c.release)).Cost(AllReduce, c.sh, c.algo, c.proto, c.size)
		if got := ch.AlgBW / 1e9; !ok || math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("NCCL %s: %v/%v over %d ranks on %d nodes, %v: algbw %.4f GB/s (ok %v), want %.4f", c.release, c.algo, c.proto, c.sh.Ranks, c.sh.Nodes, c.size, got, ok, c.want)
		}
	}
}
