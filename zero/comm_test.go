package zero

import (
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestCommunicatorSerializes: two all-gathers issued on one communicator
// run one after the other (the second ends at twice the first's time, the
// first unslowed); on two communicators over the same ranks (DeepSpeed
// ZeRO-3's) they overlap and share the links (both end later than one
// alone).
func TestCommunicatorSerializes(t *testing.T) {
	topo, err := topology.New(topology.Params{Nodes: 2, GPUsPerNode: 4, DP: 8, CP: 1,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	hw := collectives.Hardware{Arch: collectives.Hopper, NVLS: true, IntraBW: 300e9, NICBW: 50e9, NICsPerNode: 4}
	var began [2]units.Duration
	run := func(comms [2]Comm) [2]units.Duration {
		eng := sim.New()
		n := &fabricNet{f: collectives.NewFabricOptions(eng, topo, collectives.FabricOptions{NoTraffic: true, Model: collectives.NewModel(hw)}),
			topo: topo, algo: collectives.Auto, prep: map[prepKey]*prepared{}}
		var end [2]units.Duration
		for i, c := range comms {
			n.Start(netCollective{Kind: AllGather, Phase: PhaseForwardAG, Group: GroupAll, Index: 0, Members: topo.All(), Bytes: 256 << 20, Weight: 1, Comm: c},
				func() { began[i] = units.Duration(eng.Now()) }, func() { end[i] = units.Duration(eng.Now()) })
		}
		eng.Run()
		if n.err != nil {
			t.Fatal(n.err)
		}
		return end
	}
	one := run([2]Comm{CommGroup, CommGroup})
	if one[0] <= 0 || one[1] != 2*one[0] {
		t.Errorf("same communicator: ends %v, want the second at twice the first", one)
	}
	if began != [2]units.Duration{0, one[0]} {
		t.Errorf("same communicator: began at %v, want the second when the first ended (%v)", began, one[0])
	}
	two := run([2]Comm{CommGroup, CommParams})
	if two[0] <= one[0] || two[1] <= one[0] || two[1] >= one[1] {
		t.Errorf("two communicators: ends %v, want both later than one alone (%v) and sooner than serialized (%v)", two, one[0], one[1])
	}
	if began != [2]units.Duration{} {
		t.Errorf("two communicators: began at %v, want both at once", began)
	}
}

// TestPrefetchDepthNotSlower: issue 15's 64-GPU ZeRO-3 example, where two
// prefetched gathers used to share the links and made depth 2 slower than
// depth 1; on one communicator they serialize and depth 2 is no slower.
// The backward prefetch stays at depth 1 in both runs: this test is about
// the forward gathers' queue on their one communicator.
func TestPrefetchDepthNotSlower(t *testing.T) {
	var steps [2]units.Duration
	for i, d := range []string{"1", "2"} {
		data, _ := scenarios.Example("gpt3-175b-16k")
		s, err := scenarios.Load("gpt3-175b-16k.yaml", data, []string{"cluster.nodes=8", "parallelism.dp=64", "communication.prefetch_depth=" + d, "communication.backward_prefetch_depth=1"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		steps[i] = res.StepTime
	}
	if steps[1] > steps[0] {
		t.Errorf("prefetch depth 2 step %v slower than depth 1 %v", steps[1], steps[0])
	}
}
