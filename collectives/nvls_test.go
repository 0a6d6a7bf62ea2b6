package collectives

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// gb200 is a GB200 NVL72 domain as one node (NCCL's MNNVL counts the
// NVLink domain as one node): NVLink5 900 GB/s per direction, one NDR
// 400 Gb/s NIC per GPU, a Grace (Arm) host.
func gb200(ppn int) Hardware {
	return Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: ppn, CPU: scenarios.HostArm}
}

// TestNVLSTune holds NVLSTune to NCCL's ncclNvlsTuning and NVLS graph
// (src/transport/nvls.cc lines 155–245, search.cc lines 755 and 1127 at
// 5067397c), case by case.
func TestNVLSTune(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	xdr := b200
	xdr.NICBW = 100e9
	for _, c := range []struct {
		name string
		hw   Hardware
		sh   Shape
		want NVLSTuning
	}{
		// SM90: 16 channels, 128 KiB; tree max = the chunk below 4 nodes, 64 KiB from 4.
		{"H100 1×8", h100(50e9, 0), Shape{Ranks: 8, Nodes: 1}, NVLSTuning{16, 8, 128 << 10, 128 << 10}},
		{"H100 2×8", h100(50e9, 0), Shape{Ranks: 16, Nodes: 2}, NVLSTuning{16, 8, 128 << 10, 128 << 10}},
		{"H100 4×8", h100(50e9, 0), Shape{Ranks: 32, Nodes: 4}, NVLSTuning{16, 8, 128 << 10, 64 << 10}},
		// One NVL72 domain: NVLS_NCHANNELS_SM100_NVL 24; heads min(72, 32).
		{"GB200 1×72", gb200(72), Shape{Ranks: 72, Nodes: 1}, NVLSTuning{24, 32, 128 << 10, 128 << 10}},
		// 8 domains at 50 GB/s (≥ 48): 24 channels, tree max 128 KiB over C2C (P2C).
		{"GB200 8×72", gb200(72), Shape{Ranks: 576, Nodes: 8}, NVLSTuning{24, 32, 128 << 10, 128 << 10}},
		// 2 nodes ≥ 48 GB/s: 32 channels; 8 ranks on PXB below 96 GB/s: tree max 64 KiB.
		{"B200 2×8", b200, Shape{Ranks: 16, Nodes: 2}, NVLSTuning{32, 8, 128 << 10, 64 << 10}},
		// ≥ 96 GB/s, ≤ 8 ranks: 24 channels, 256 KiB chunks.
		{"B200 XDR 4×8", xdr, Shape{Ranks: 32, Nodes: 4}, NVLSTuning{24, 8, 256 << 10, 256 << 10}},
		// heads across nodes: one per NIC (4 NICs per node).
		{"B200 4 NICs 4×8", Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 4}, Shape{Ranks: 32, Nodes: 4}, NVLSTuning{24, 4, 128 << 10, 64 << 10}},
		// The branches review s20 B found untested (M13, M24, M25): an Arm
		// host's two nodes of 8 and of 16 ranks, an x86 host at 100 GB/s
		// with 16 ranks a node, and two NVL72 domains.
		{"Grace 2×8", gb200(8), Shape{Ranks: 16, Nodes: 2}, NVLSTuning{32, 8, 128 << 10, 128 << 10}},
		{"Grace 2×16", gb200(16), Shape{Ranks: 32, Nodes: 2}, NVLSTuning{32, 16, 128 << 10, 64 << 10}},
		{"B200 XDR 4×16", xdr, Shape{Ranks: 64, Nodes: 4}, NVLSTuning{32, 8, 128 << 10, 128 << 10}},
		{"GB200 2×72", gb200(72), Shape{Ranks: 144, Nodes: 2}, NVLSTuning{32, 32, 128 << 10, 64 << 10}},
	} {
		if got := NVLSTune(c.hw, c.sh); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestNVLSFillBounded holds the NVLS pipeline fill to NCCL's chunking
// with its 32-head cap and its NVLS channels, bounded by the op's share
// of the buffer (QA13 findings 2 and 6), by hand:
//
// One GB200 NVL72 domain, 1 MiB all-reduce, NVLS: 24 channels × 32 heads
// = 768 ops; the chunk 128 KiB shrinks to 16 KiB (1 MiB < 2·768·32 KiB),
// but each op has 1,048,576/768 = 1,365.3 B, so the fill is 2 stages ×
// 1 MiB = 2,097,152 B. algbw = 900·40.1/50 · 0.74 · 72/73 = 526.815 GB/s:
// fill 3.981 µs, bandwidth 1.990 µs, latency 25 µs (NVLS over NVLink,
// tuning.cc): 30.971 µs (it was 98.65 µs with 16 × 72 ops).
//
// 8 such domains, 1 MiB, NVLS-tree: 24 channels × 32 heads = 768 ops,
// chunk 128 KiB → 32 KiB, each op 1,365.3 B; stages 2 + 2·log2 8 = 8:
// fill 8,388,608 B / 526.815 GB/s = 15.923 µs; bandwidth 1.990 µs;
// latency 25 + 6 × 20.9 = 150.4 µs: 168.314 µs (it was 1298.86 µs).
//
// 8 domains, 256 MiB: 268,435,456 < 4·768·128 KiB → 64 KiB, not < 768 ·
// 64 KiB; 64 KiB < 349,525 B a op: fill 8 × 64 KiB × 768 = 402,653,184 B
// = 764.317 µs; bandwidth 509.544 µs; 150.4 µs: 1424.261 µs.
func TestNVLSFillBounded(t *testing.T) {
	for _, c := range []struct {
		sh   Shape
		algo Algo
		size units.Bytes
		us   float64
	}{
		{Shape{Ranks: 72, Nodes: 1}, NVLS, units.MiB, 25 + 2097152/526.815e3 + 1048576/526.815e3},
		{Shape{Ranks: 576, Nodes: 8}, NVLSTree, units.MiB, 150.4 + 8388608/526.815e3 + 1048576/526.815e3},
		{Shape{Ranks: 576, Nodes: 8}, NVLSTree, 256 * units.MiB, 150.4 + 402653184/526.815e3 + 268435456/526.815e3},
	} {
		ch, ok := NewModel(gb200(72)).Cost(AllReduce, c.sh, c.algo, Simple, c.size)
		if !ok {
			t.Fatalf("%v %v: not run", c.sh, c.algo)
		}
		if got := float64(ch.Time) / 1e6; math.Abs(got-c.us) > 0.01 {
			t.Errorf("%v %v %d B: %.3f µs, want %.3f", c.sh, c.algo, c.size, got, c.us)
		}
	}
	// Over more than 32 local ranks NCCL runs NVLS for all-reduce only
	// (enqueue.cc line 2004).
	if _, ok := NewModel(gb200(72)).Cost(AllGather, Shape{Ranks: 72, Nodes: 1}, NVLS, Simple, units.MiB); ok {
		t.Error("NVLS all-gather over 72 local ranks: want not run")
	}
	if _, ok := NewModel(gb200(32)).Cost(AllGather, Shape{Ranks: 32, Nodes: 1}, NVLS, Simple, units.MiB); !ok {
		t.Error("NVLS all-gather over 32 local ranks: want run")
	}
}

// TestNVLSBuffers holds NVLSBuffers to ncclNvlsBufferSetup's nvlsTotalSize
// (src/transport/nvls.cc lines 425–430 at 5067397c), nvlsChannels · 2 ·
// (nvlsChunkSize · NCCL_STEPS) · nHeads, by hand (QA13 F8):
//   - one 72-GPU GB200 domain: 24 · 2 · (128 KiB · 8) · 32 = 1.5 GiB;
//   - 8 such domains: 24 channels (50 GB/s NICs), 32 heads: 1.5 GiB;
//   - 8 H100: 16 · 2 · 1 MiB · 8 = 256 MiB;
//   - 2 × 8 B200: 32 channels on two nodes: 32 · 2 · 1 MiB · 8 = 512 MiB;
//   - A100 (no NVLS): 0.
//
// RunsNVLS: a 1-node H100 all-reduce runs NVLS from some size; an
// all-gather over 2 × 8 H100 never does (NVLS across nodes needs CollNet).
func TestNVLSBuffers(t *testing.T) {
	for _, c := range []struct {
		name string
		hw   Hardware
		sh   Shape
		want int64
	}{
		{"GB200 1×72", gb200(72), Shape{Ranks: 72, Nodes: 1}, 1536 << 20},
		{"GB200 8×72", gb200(72), Shape{Ranks: 576, Nodes: 8}, 1536 << 20},
		{"H100 1×8", h100(50e9, 0), Shape{Ranks: 8, Nodes: 1}, 256 << 20},
		{"B200 2×8", Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}, Shape{Ranks: 16, Nodes: 2}, 512 << 20},
		{"A100 1×8", a100SXM(25e9, 8, 0), Shape{Ranks: 8, Nodes: 1}, 0},
	} {
		if got := NVLSBuffers(c.hw, c.sh); got != c.want {
			t.Errorf("%s: %d B, want %d", c.name, got, c.want)
		}
	}
	if !RunsNVLS(h100(50e9, 0), Shape{Ranks: 8, Nodes: 1}, []Op{AllReduce}) {
		t.Error("1 × 8 H100 all-reduce: want NVLS at some size")
	}
	if RunsNVLS(h100(50e9, 0), Shape{Ranks: 16, Nodes: 2}, []Op{AllGather, ReduceScatter}) {
		t.Error("2 × 8 H100 all-gather: NVLS cannot run across nodes without CollNet")
	}
}

// TestTreeSimpleFill72 checks the Simple tree's fill at 72 ranks per node
// (QA13 F7) against NCCL's tree, by hand. NCCL's tree inside a node is a
// chain through every local rank (src/graph/connect.cc lines 43–62 at
// 5067397c: tree.up = treeIntra[i−1], tree.down[0] = treeIntra[i+1]), so a chunk crosses 2 × 71 = 142 NVLink hops and 2·log2 8 = 6
// network hops; a Simple tree's chunk is one NCCL_STEPS step, 4 MiB / 8 =
// 512 KiB, never shrunk (enqueue.cc lines 2222–2225: chunkSteps 1, no tree
// Simple branch), and 256 MiB over 32 channels is 8 MiB a channel, 16
// chunks: the fill is real and no larger than the buffer makes. Each
// NVLink hop moves a channel's chunk at 721.8/32 GB/s, each network hop
// but the bottleneck at 332.03/32 GB/s (min(721.8, 3456)·0.92·0.5):
// 524,288 × (142·32/721.8e9 + 5·32/332.03e9) s = 3553.3 µs. auto does not
// run it: with NVLS-tree's fill bounded by NCCL's channels, heads and
// each op's share of the buffer (nvlsFill), 256 MiB runs NVLS-tree, so
// 128 MiB (tree/LL128, 1005 µs) to 256 MiB no longer jumps to 5022 µs.
func TestTreeSimpleFill72(t *testing.T) {
	m := NewModel(gb200(72))
	c, ok := m.comm(AllReduce, Shape{Ranks: 576, Nodes: 8}, Tree, Simple, 256*units.MiB)
	if !ok {
		t.Fatal("tree/Simple not run")
	}
	raw := c.algBW() / c.treeCorrection()
	if got, want := c.treeSimpleFill(raw), 524288*(142*32/721.8e9+5*32/332.03e9)*1e6; math.Abs(got-want) > 0.1 {
		t.Errorf("fill %.1f µs, want %.1f", got, want)
	}
	small, err := m.Choose(AllReduce, Shape{Ranks: 576, Nodes: 8}, Auto, 128*units.MiB)
	if err != nil {
		t.Fatal(err)
	}
	big, err := m.Choose(AllReduce, Shape{Ranks: 576, Nodes: 8}, Auto, 256*units.MiB)
	if err != nil || big.Algo == Tree && big.Proto == Simple {
		t.Errorf("256 MiB: auto %v/%v (%v), want anything but the tree's Simple pipeline", big.Algo, big.Proto, err)
	}
	if big.Time > 2*small.Time {
		t.Errorf("auto: 128 MiB %v, 256 MiB %v: more than twice the time for twice the bytes", small.Time, big.Time)
	}
}

// TestRankingKeepsFills holds what docs/collectives.md says of auto's
// ranking, which keeps NVLS-tree's fill (NCCL's cost has none). Over 8 ×
// 72 GB200 at 1 MiB NVLS-tree is ranked at NCCL's latency 25 +
// 2·log2(8)·20.9 = 150.4 µs (tuning.cc at 5067397c), its fill bounded at
// 8 stages × 1,048,576 B and the buffer, each at 526.815 GB/s: 150.4 +
// 9 × 1.990 = 168.314 µs, below tree/LL128's latency alone (14.0 +
// 2·(71·1.25 + 3·8.5) = 242.5 µs), so auto runs it. On 2 × 8 H100 at
// 8 MiB the fill keeps NVLS-tree's cost at its time, and auto runs
// ring/LL128.
func TestRankingKeepsFills(t *testing.T) {
	m := NewModel(gb200(72))
	nt, ok := m.Cost(AllReduce, Shape{Ranks: 576, Nodes: 8}, NVLSTree, Simple, units.MiB)
	if !ok {
		t.Fatal("NVLS-tree does not run")
	}
	if got, want := float64(nt.cost)/1e6, 150.4+9*1048576/526.815e3; math.Abs(got-want) > 0.01 {
		t.Errorf("NVLS-tree's cost %.3f µs, want %.3f", got, want)
	}
	ll, ok := m.Cost(AllReduce, Shape{Ranks: 576, Nodes: 8}, Tree, LL128, units.MiB)
	if !ok {
		t.Fatal("tree/LL128 does not run")
	}
	if lat := float64(ll.Latency) / 1e6; lat < 242.5 {
		t.Errorf("tree/LL128 latency %.1f µs, want ≥ 242.5", lat)
	}
	if c, err := m.Choose(AllReduce, Shape{Ranks: 576, Nodes: 8}, Auto, units.MiB); err != nil || c.Algo != NVLSTree {
		t.Errorf("8 × 72 GB200, 1 MiB: auto %v/%v (%v), want nvlstree", c.Algo, c.Proto, err)
	}
	h := NewModel(h100(50e9, 0))
	n, ok := h.Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLSTree, Simple, 8*units.MiB)
	if !ok || n.cost != n.Time {
		t.Errorf("2 × 8 H100, 8 MiB: NVLS-tree ranked at %v, timed at %v: want its fill in both", n.cost, n.Time)
	}
	if c, err := h.Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, Auto, 8*units.MiB); err != nil || c.Algo != Ring || c.Proto != LL128 {
		t.Errorf("2 × 8 H100, 8 MiB: auto %v/%v (%v), want ring/LL128", c.Algo, c.Proto, err)
	}
}

// TestNVLSMinLocalRanks holds the NVLS tuning of a group over nodes of
// unequal ranks to the smallest node's, as NCCL reads it (NVIDIA/nccl
// 5067397c2676d5aed50042fc39e5c8ee96eb0027), by hand from the source:
//
// 8 + 4 B200 ranks (2 × 8 GPUs, group 0..11), x86 host, eight 50 GB/s
// NICs a node: comm->minLocalRanks = min(8, 4) = 4 (init.cc lines
// 1392–1397). ncclNvlsTuning: compCap 100, nNodes 2 > 1 → 32 channels
// (nvls.cc line 211); ncclNvlsTreeSm100Tuning: nNodes 2, minNetBw 50 ≥ 48
// → 32 channels, tree max 128 KiB, then ppn = minLocalRanks 4 ≤ 4 → chunk
// 256 KiB and tree max 256 KiB (lines 167, 173–178). Heads: node 0 finds
// 8 (eight GPUs with eight NICs), node 1 at most its 4 GPUs (search.cc
// line 1127), the communicator keeps the fewest, 4 (connect.cc lines
// 430–433). Buffers: 32 · 2 · (256 KiB · 8) · 4 = 512 MiB (nvls.cc lines
// 425–430). The mean ranks a node, 6, gave {32, 6, 128 KiB, 64 KiB} and
// 384 MiB.
//
// NVLS-tree all-reduce of 1 GiB over that group: ops = 32 · 4 = 128,
// chunk min(256 KiB, 256 KiB), 1 GiB is not below 32 · 128 · 256 KiB =
// 1 GiB, so it stays; stages 2 + 2·log2 2 = 4; fill 4 · 256 KiB · 128 =
// 134,217,728 B. Its bandwidth is the 4-GPU node's too (init.cc lines
// 1439–1442 keep the least bwIntra, bwInter and channels of any rank):
// min(NVLink 721.8 · 0.74 · 4/5, network 4 · 48, 8 channels · 96) =
// 192 GB/s, so the NVLS-tree over 8 + 4 is the one over 4 + 4, to the
// picosecond. Against the mean ranks a node, 6 (the even 6 + 6): 288
// GB/s, and 32 · 6 ops of 64 KiB chunks (nvls.cc: two nodes at 50 GB/s,
// ppn 6 on an x86 host: tree max 64 KiB), fill 4 · 64 KiB · 192 =
// 50,331,648 B: the latency is 134,217,728 B / 192 GB/s − 50,331,648 B /
// 288 GB/s = 699,050,666.7 − 174,762,666.7 = 524,288,000 ps longer.
//
// 8 + 1 H100 ranks (group 0..8): the rank alone on its node has
// gpuCount 1 < 2 and no NVLS (nvls.cc line 262), so its NVLS graph has no
// channels, the communicator keeps 0 (init.cc line 1439) and turns NVLS
// off (line 1453): no NVLS buffers, no NVLS-tree (the mean, 4, gave
// 128 MiB and an NVLS-tree).
func TestNVLSMinLocalRanks(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 900e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	for _, c := range []struct {
		group []int
		want  Shape
	}{
		{seq(0, 16), Shape{Ranks: 16, Nodes: 2}},                // even: no MinPerNode
		{seq(0, 12), Shape{Ranks: 12, Nodes: 2, MinPerNode: 4}}, // 8 + 4
		{seq(0, 9), Shape{Ranks: 9, Nodes: 2, MinPerNode: 1}},   // 8 + 1
		{seq(3, 12), Shape{Ranks: 9, Nodes: 2}},                 // 5 + 4: the smallest is 9/2
	} {
		if got := ShapeOf(topo, c.group); got != c.want {
			t.Errorf("ShapeOf %v: %+v, want %+v", c.group, got, c.want)
		}
	}
	uneven, mean := Shape{Ranks: 12, Nodes: 2, MinPerNode: 4}, Shape{Ranks: 12, Nodes: 2}
	if got, want := NVLSTune(b200, uneven), (NVLSTuning{32, 4, 256 << 10, 256 << 10}); got != want {
		t.Errorf("8+4 B200: %+v, want %+v", got, want)
	}
	if got := NVLSBuffers(b200, uneven); got != 512<<20 {
		t.Errorf("8+4 B200 buffers: %d B, want %d", got, 512<<20)
	}
	m := NewModel(b200)
	a, ok1 := m.Cost(AllReduce, uneven, NVLSTree, Simple, units.GiB)
	b, ok2 := m.Cost(AllReduce, mean, NVLSTree, Simple, units.GiB)
	e, ok3 := m.Cost(AllReduce, Shape{Ranks: 8, Nodes: 2}, NVLSTree, Simple, units.GiB)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("8+4 B200 NVLS-tree: run %v %v %v, want all", ok1, ok2, ok3)
	}
	if a != e {
		t.Errorf("8+4 B200 NVLS-tree %+v, want 4+4's %+v", a, e)
	}
	if math.Abs(a.AlgBW-192e9) > 1e-3 || math.Abs(b.AlgBW-288e9) > 1e-3 {
		t.Errorf("8+4 B200 NVLS-tree algbw %g, mean's %g: want 192e9 and 288e9", a.AlgBW, b.AlgBW)
	}
	if got := a.Latency - b.Latency; got != 524_288_000 {
		t.Errorf("8+4 B200 NVLS-tree fill: %d ps over the mean's, want 524288000", got)
	}
	h := h100(50e9, 0)
	one := Shape{Ranks: 9, Nodes: 2, MinPerNode: 1}
	if got := NVLSBuffers(h, one); got != 0 {
		t.Errorf("8+1 H100 buffers: %d B, want 0", got)
	}
	if _, ok := m.Cost(AllReduce, one, NVLSTree, Simple, units.GiB); ok {
		t.Error("8+1 NVLS-tree: want not run (a node of one rank turns NVLS off)")
	}
}

// TestShapeOfRange holds ShapeOfRange (the memory model's shapes of rank
// 0's groups, built without the groups) and ShapeOf to the fabric's shape
// of the same group (blockShape of nodeBlocks) on every group topology
// forms, over placements that split groups unevenly; and by hand: 12 ranks
// on 2 × 8 GPUs are 8 + 4 ({12, 2, 4}), and K = 4's inter group 0, ranks
// 0, 3, 6, 9, is 3 + 1 ({4, 2, 1}; ranks 0, 4, 8 would be 2 + 1, whose
// smallest node is 3/2 = 1: {3, 2}).
func TestShapeOfRange(t *testing.T) {
	link := topology.LinkParams{Bandwidth: 100e9, Latency: 500}
	for _, p := range []topology.Params{
		{Nodes: 3, GPUsPerNode: 8},
		{Nodes: 2, GPUsPerNode: 8, DP: 12},
		{Nodes: 2, GPUsPerNode: 6, DP: 3, CP: 4},
		{Nodes: 4, GPUsPerNode: 4, DP: 2, CP: 8, DPFastest: true},
		{Nodes: 3, GPUsPerNode: 6, DP: 4, CP: 4, DPFastest: true},
	} {
		p.Intra, p.Inter = link, link
		topo := mustTopo(t, p)
		n := topo.Ranks()
		check := func(what string, got Shape, g []int) {
			blocks, _ := nodeBlocks(topo, g)
			if want := blockShape(topo, len(g), blocks); got != want || ShapeOf(topo, g) != want {
				t.Errorf("%+v %s %v: ShapeOfRange %+v, ShapeOf %+v, want %+v", p, what, g, got, ShapeOf(topo, g), want)
			}
		}
		check("all", ShapeOfRange(topo, 0, 1, n), topo.All())
		for k := 1; k <= n; k++ {
			if n%k != 0 {
				continue
			}
			intra, _ := topo.IntraGroups(k)
			for i, g := range intra {
				check("intra", ShapeOfRange(topo, i*n/k, 1, n/k), g)
			}
			inter, _ := topo.InterGroups(k)
			for i, g := range inter {
				check("inter", ShapeOfRange(topo, i, n/k, k), g)
			}
		}
	}
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8, DP: 12, Intra: link, Inter: link})
	if got, want := ShapeOfRange(topo, 0, 1, 12), (Shape{Ranks: 12, Nodes: 2, MinPerNode: 4}); got != want {
		t.Errorf("8 + 4: %+v, want %+v", got, want)
	}
	if got, want := ShapeOfRange(topo, 0, 3, 4), (Shape{Ranks: 4, Nodes: 2, MinPerNode: 1}); got != want {
		t.Errorf("ranks 0, 3, 6, 9: %+v, want %+v", got, want)
	}
	if got, want := ShapeOfRange(topo, 0, 4, 3), (Shape{Ranks: 3, Nodes: 2}); got != want {
		t.Errorf("ranks 0, 4, 8: %+v, want %+v", got, want)
	}
}

// TestFabricUnevenShape (review s21 A T1): the fabric prices an uneven
// group at NCCL's shape, its smallest node's ranks included: 8 + 4 B200
// ranks' NVLS-tree all-reduce, planned through the lowering (1 GiB) and
// through Prepare's choice (256 MiB), has the latency of the model's
// {12, 2, MinPerNode 4}, not of the even {12, 2}.
func TestFabricUnevenShape(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8, DP: 12,
		Intra: topology.LinkParams{Bandwidth: 900e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	m := NewModel(b200)
	f := NewFabricOptions(sim.New(), topo, FabricOptions{Model: m})
	for _, size := range []units.Bytes{units.GiB, 256 * units.MiB} {
		pr, err := f.Prepare(Spec{Op: AllReduce, Algo: NVLSTree, Group: topo.All(), Bytes: size}, nil)
		if err != nil {
			t.Fatal(err)
		}
		uneven, err := m.Time(AllReduce, Shape{Ranks: 12, Nodes: 2, MinPerNode: 4}, NVLSTree, size)
		if err != nil {
			t.Fatal(err)
		}
		even, err := m.Time(AllReduce, Shape{Ranks: 12, Nodes: 2}, NVLSTree, size)
		if err != nil {
			t.Fatal(err)
		}
		if got := pr.Plan().Choice.Latency; got != uneven.Latency || got == even.Latency {
			t.Errorf("%d B: latency %d ps, want the uneven shape's %d (the even shape's is %d)", size, got, uneven.Latency, even.Latency)
		}
	}
}
