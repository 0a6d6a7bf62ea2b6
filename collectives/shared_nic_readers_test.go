package collectives

import (
	"testing"

	"github.com/zerosim/zerosim/topology"
)

// TestSharedNICReaders (review rev23): every reader of a shape's NIC count
// takes Shape.MinNICs. A group on GPUs 0–3 of two 8-GPU nodes with 4
// shared 25 GB/s NICs crosses NICs 0 and 1 (GPU j → NIC j·4/8) on each
// node: shape {8, 2, MinNICs 2}; Simple's wire fraction is the search's
// 24/25 = 0.96 whatever the NIC count (netBW over the NICs' nominal); 2
// NICs make 4 channels (two a NIC), 8 channel buffers (ncclTopoPostset
// doubles them), and 2 NVLS heads (min(ranks, NICs)).
func TestSharedNICReaders(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8, NICsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2000}})
	hw := h100(25e9, 0)
	hw.NICsPerNode = 4
	sh := ShapeOf(topo, []int{0, 1, 2, 3, 8, 9, 10, 11})
	if sh != (Shape{Ranks: 8, Nodes: 2, MinNICs: 2}) {
		t.Fatalf("shape %+v", sh)
	}
	m := NewModel(hw)
	if f := m.wireFraction(topology.Inter, sh, Simple); f != 0.96 {
		t.Errorf("wireFraction %v, want 0.96", f)
	}
	if c := m.channels(sh); c != 4 {
		t.Errorf("channels %v, want 4", c)
	}
	if b := BufferChannels(hw, sh); b != 8 {
		t.Errorf("BufferChannels %d, want 8", b)
	}
	if h := NVLSTune(hw, sh).Heads; h != 2 {
		t.Errorf("NVLS heads %d, want 2", h)
	}
}

// TestSharedNICsUnalignedGroups (review rev23 MED-1): a ring all-gather of
// 1 GiB over groups that do not sit evenly on a node's shared NICs (3 of
// 8 GPUs on 4 NICs, GPUs 1–4, 4 GPUs on 3 NICs, GPUs 5–7 on 3 NICs,
// every other GPU on 2) sends no NIC's bytes above its 25 GB/s over the
// collective's time: the group's channels go round-robin over the NICs its
// GPUs reach (railCrossings), as NCCL starts its channels at NICs.
func TestSharedNICsUnalignedGroups(t *testing.T) {
	const S = 1 << 30
	for _, tc := range []struct {
		name  string
		nics  int
		group []int
	}{
		{"3 of 8 on 4 NICs", 4, []int{0, 1, 2, 8, 9, 10}},
		{"GPUs 1-4 on 4 NICs", 4, []int{1, 2, 3, 4, 9, 10, 11, 12}},
		{"4 on 3 NICs", 3, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"GPUs 5-7 on 3 NICs", 3, []int{5, 6, 7, 13, 14, 15}},
		{"strided 0,2,4,6 on 2 NICs", 2, []int{0, 2, 4, 6, 8, 10, 12, 14}},
	} {
		topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8, NICsPerNode: tc.nics,
			Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2000}})
		hw := h100(25e9, 0)
		hw.NICsPerNode = tc.nics
		took, sent := allGatherAtOnce(t, topo, hw, S, tc.group)
		checkNICRates(t, tc.name, sent, took, 25e9)
	}
}
