package collectives

import (
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// modelAlone starts op over group alone on topo under NCCL's model of hw
// and returns the fabric's traffic and the plan's choice.
func modelAlone(t *testing.T, topo *topology.Topology, hw Hardware, op Op, group []int, S units.Bytes) (Traffic, Choice) {
	t.Helper()
	eng := sim.New()
	f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(hw)})
	h, err := f.Start(Spec{Op: op, Algo: Auto, Group: group, Bytes: S}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.Run()
	return f.Traffic(), h.Plan.Choice
}

// TestTreeOnOneSharedNICKeepsTwoLevel (review rev24, mutations of
// nicsEven: NICs a block does not reach counted as uneven, or the first
// NIC's count taken as the block's): a tree all-reduce over 3 nodes of 2
// ranks, GPUs 2 and 3 of 8 on 4 shared NICs (GPU j on NIC ⌊j/2⌋, both
// on NIC 1), splits evenly over the one NIC its ranks reach, so the
// two-level pattern stands for the tree (modelPattern): the inter-node
// rings, one per local rank over 3 nodes, run on ⌈S/2⌉ and send 2·(3−1)
// chunks of ⌈S/6⌉ each. With S = 3·2^28 that is 4·2^27 = 2^29 from
// every rank. NCCL's trees over the channels (railTrees) would put 1.5 S,
// S and 1.5 S through the three nodes' NICs (the double binary tree over
// 3 nodes: tree 0 2→0, 1→2, tree 1 its shift 2→0, 0→1, S/2 up and down
// each edge).
func TestTreeOnOneSharedNICKeepsTwoLevel(t *testing.T) {
	const S = 3 << 28
	topo := mustTopo(t, topology.Params{Nodes: 3, GPUsPerNode: 8, NICsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2000}})
	hw := h100(25e9, 0)
	hw.NICsPerNode = 4
	hw.Algos = 1 << Tree
	tr, c := modelAlone(t, topo, hw, AllReduce, []int{2, 3, 10, 11, 18, 19}, S)
	if c.Algo != Tree {
		t.Fatalf("NCCL_ALGO=Tree ran %v", c.Algo)
	}
	for _, r := range []int{2, 3, 10, 11, 18, 19} {
		if got := tr.Sent[r][topology.Inter]; got != 1<<29 {
			t.Errorf("rank %d sends %d B over the network, want %d (the two-level pattern's inter ring)", r, got, 1<<29)
		}
	}
	if tr.Total[topology.Inter] != 4*S {
		t.Errorf("network %d B, want %d", tr.Total[topology.Inter], 4*S)
	}
}

// TestRailTreeChainsStartAtCrossingRank (review rev24, mutation of
// railTrees: each node's chain started at the block's first rank instead
// of the channel's crossing rank): 2 + 8 + 2 H100 under NCCL_ALGO=Tree,
// one NIC per GPU, so C = 2 channels crossing at each block's rank c.
// Channel c's chain in a node runs c, c+1, …, c−1 (connect.cc
// ncclTopoPreset: treeIntra[0], the rank on the channel's NIC, is its
// head), each chain edge carrying X = ⌈S/(2C)⌉ = S/4 both ways in both
// trees. A rank sends X to each chain neighbour per tree: in the 8-rank
// node rank 8 (position 0) ends both chains (head of channel 0, tail of
// channel 1): 2 neighbours, 4X; rank 9 heads channel 1 and is inside
// channel 0's: 3, 6X; rank 15 ends channel 0's and is inside channel
// 1's (…, 14, 15, 8): 3, 6X; ranks 10–14 are inside both: 8X. The 2-rank
// nodes' ranks have one neighbour in each chain: 4X.
func TestRailTreeChainsStartAtCrossingRank(t *testing.T) {
	const S = 1 << 30
	const X = S / 4
	topo := mustTopo(t, topology.Params{Nodes: 3, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	hw := h100(50e9, 0)
	hw.Algos = 1 << Tree
	tr, c := modelAlone(t, topo, hw, AllReduce, seq(6, 18), S)
	if c.Algo != Tree {
		t.Fatalf("NCCL_ALGO=Tree ran %v", c.Algo)
	}
	want := map[int]units.Bytes{6: 4 * X, 7: 4 * X, 8: 4 * X, 9: 6 * X, 10: 8 * X, 11: 8 * X, 12: 8 * X, 13: 8 * X, 14: 8 * X, 15: 6 * X, 16: 4 * X, 17: 4 * X}
	for r, w := range want {
		if got := tr.Sent[r][topology.Intra]; got != w {
			t.Errorf("rank %d sends %d B over NVLink, want %d", r, got, w)
		}
	}
}

// TestSharedNICChannelsCrossThroughEachRank (review rev24, mutation of
// railCrossings: a NIC's channels always entered through its first rank):
// 2 nodes of 4 GPUs on 2 shared NICs (GPUs 0, 1 on NIC 0; 2, 3 on NIC 1).
// NCCL's channels go round-robin over the NICs and, on a NIC, through its
// GPUs in turn (search.cc ncclTopoSearchRecNet: net->net.localGpu, then
// the NIC's other local GPUs), so the C = 4 channels cross at GPUs 0, 2,
// 1, 3: every rank crosses on one channel and sends the same over the
// network. A ring all-reduce over 8 ranks sends 2·7·⌈S/8⌉ per crossing
// hop, a quarter of it per channel: 14·2^27/4 = 469,762,048 B a rank;
// the tree over the 2 nodes sends S from each node, S/4 a rank.
func TestSharedNICChannelsCrossThroughEachRank(t *testing.T) {
	const S = 1 << 30
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 4, NICsPerNode: 2,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2000}})
	for _, tc := range []struct {
		algo Algo
		want units.Bytes
	}{{Ring, 469_762_048}, {Tree, S / 4}} {
		hw := h100(25e9, 0)
		hw.NICsPerNode = 2
		hw.Algos = 1 << tc.algo
		tr, c := modelAlone(t, topo, hw, AllReduce, seq(0, 8), S)
		if c.Algo != tc.algo {
			t.Fatalf("NCCL_ALGO=%v ran %v", tc.algo, c.Algo)
		}
		for r := range 8 {
			if got := tr.Sent[r][topology.Inter]; got != tc.want {
				t.Errorf("%v: rank %d sends %d B over the network, want %d", tc.algo, r, got, tc.want)
			}
		}
	}
}

// TestChannelRangePAT (review rev24, mutation of ncclThreads: PAT given
// the Simple ring's 512 threads): comm->maxThreads[PAT][·] is never set
// (tuning.cc lines 244–256 at 5067397c2676d5aed50042fc39e5c8ee96eb0027
// set Ring, Tree, NVLS, NVLS-tree and CollNet only), so topoGetAlgoInfo's
// "nBytes < nc × 0 × threshold" never holds and PAT keeps all of the
// communicator's channels; then scheduleCollTasksToPlan splits the
// traffic. An all-gather of 3 KiB a rank over 16 nodes of one GPU:
// nBytes = 48 KiB; cells of ⌈32 KiB / 16⌉ = 2 KiB, 2 of them. PAT on
// comm's channels (≥ 2): ≤ 24 KiB of traffic a channel, one 32 KiB cell
// a channel: {0..1}. A Simple ring (512 × 64 B = 32 KiB a channel) drops
// to 1 channel, 48 KiB of traffic, both cells on it: {0..0}.
func TestChannelRangePAT(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	sh := Shape{Ranks: 16, Nodes: 16}
	for _, c := range []struct {
		algo   Algo
		lo, hi int
	}{{PAT, 0, 1}, {Ring, 0, 0}} {
		lo, hi, ok := m.ChannelRange(AllGather, sh, Choice{Algo: c.algo, Proto: Simple}, 1536, 2)
		if !ok || lo != c.lo || hi != c.hi {
			t.Errorf("%v: {%d..%d} (%v), want {%d..%d}", c.algo, lo, hi, ok, c.lo, c.hi)
		}
	}
}

// TestPinsDifferOnProtocolAlone (review rev24, mutation of PinsDiffer
// comparing NCCL_ALGO only): a calibration measured under NCCL_PROTO=Simple
// (hardware.protos) whose run leaves NCCL_PROTO unset differs in its pins
// (its curves are times of Simple-only choices), and one measured as the
// run is does not. Library names RCCL on an AMD GPU (mutation: always
// "NCCL").
func TestPinsDifferOnProtocolAlone(t *testing.T) {
	hw := h100(50e9, 0)
	measured := hw
	measured.Protos = 1 << Simple
	cal := &Calibration{HW: measured}
	want := "measured with NCCL_ALGO NCCL's default, NCCL_PROTO Simple (hardware.algos, hardware.protos), this run has NCCL_ALGO NCCL's default, NCCL_PROTO NCCL's default"
	if got := cal.PinsDiffer(hw); got != want {
		t.Errorf("PinsDiffer = %q, want %q", got, want)
	}
	if got := cal.PinsDiffer(measured); got != "" {
		t.Errorf("same pins: PinsDiffer = %q, want \"\"", got)
	}
	if got, want := NewModel(mi300x()).Library(), "RCCL"; got != want {
		t.Errorf("MI300X's library %q, want %q", got, want)
	}
	if got, want := NewModel(hw).Library(), "NCCL"; got != want {
		t.Errorf("H100's library %q, want %q", got, want)
	}
}
