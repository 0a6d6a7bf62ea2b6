package collectives

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestTimedPlanSlowsOnDegradedLink: a collective timed by NCCL's model (the
// default algorithm, auto) runs at the pace of a link slower than its class
// (cluster.link_overrides), as an alpha–beta ring does: never faster than
// the bytes its slowest NIC sends at that NIC's bandwidth. Before the work
// was taken at the class's bandwidth, a timed plan normalised the slow link
// away and ended at the model's nominal time whatever the override (QA s16
// finding 2: 418.15 ms with node 1's NICs at 1 GB/s or at 50).
func TestTimedPlanSlowsOnDegradedLink(t *testing.T) {
	const nominal = 50e9
	hw := Hardware{Arch: Hopper, NVLS: true, IntraBW: 300e9, NICBW: nominal, NICsPerNode: 8}
	topoAt := func(bw units.Bandwidth) *topology.Topology {
		p := topology.Params{Nodes: 2, GPUsPerNode: 8,
			Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nominal, Latency: 2000}}
		if bw != nominal {
			p.Overrides = []topology.Override{{Node: 1, GPU: -1, Class: topology.Inter, Bandwidth: bw}}
		}
		return mustTopo(t, p)
	}
	for _, op := range []Op{AllReduce, ReduceScatter, AllGather} {
		for _, size := range []units.Bytes{64 << 20, 1 << 30} {
			prev := units.Duration(0)
			for _, div := range []int64{1, 2, 10, 50} {
				name := fmt.Sprintf("%v of %d B, node 1's NICs at 1/%d", op, size, div)
				bw := units.Bandwidth(nominal / div)
				topo := topoAt(bw)
				eng := sim.New()
				f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(hw)})
				p, err := f.Prepare(Spec{Op: op, Algo: Auto, Group: topo.All(), Bytes: size}, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !p.Plan().Timed {
					t.Fatalf("%s: not timed by the model", name)
				}
				if _, err := f.StartPrepared(p, func() {}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				eng.Run()
				got := units.Duration(eng.Now())
				if div == 1 && got != p.Plan().Choice.Time {
					t.Errorf("%s: %v, want the model's %v on nominal links", name, got, p.Plan().Choice.Time)
				}
				// The slowest NIC's bytes at its bandwidth bound the time.
				var most units.Bytes
				for _, rb := range p.Sent() {
					if topo.Node(rb.Rank) == 1 {
						most = max(most, rb.Bytes[topology.Inter])
					}
				}
				floor := units.Duration(int64(most) * 1e12 / int64(bw))
				if got < floor {
					t.Errorf("%s: %v, faster than node 1's NIC moves its %d B (%v)", name, got, most, floor)
				}
				if got < prev {
					t.Errorf("%s: %v, faster than at a faster NIC (%v)", name, got, prev)
				}
				prev = got
			}
		}
	}
}

// TestTimedPlanWaitsOnSlowHop: a link override's latency delays a timed
// collective as NCCL's model delays one whose every hop of that class is
// that slow (its pipeline waits on its slowest hop at every step): equal,
// to the picosecond, to the nominal topology under a model whose network
// latency is raised by the override's excess.
func TestTimedPlanWaitsOnSlowHop(t *testing.T) {
	const excess = 50 * units.Microsecond
	hw := Hardware{Arch: Hopper, NVLS: true, IntraBW: 300e9, NICBW: 50e9, NICsPerNode: 8}
	params := topology.Params{Nodes: 4, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}}
	slowHW := hw
	slowHW.InterLatency += excess
	run := func(p topology.Params, hw Hardware, spec Spec) units.Duration {
		topo := mustTopo(t, p)
		eng := sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(hw)})
		spec.Group = topo.All()
		if _, err := f.Start(spec, func() {}); err != nil {
			t.Fatal(err)
		}
		eng.Run()
		return units.Duration(eng.Now())
	}
	slow := params
	slow.Overrides = []topology.Override{{Node: 2, GPU: 3, Class: topology.Inter, Latency: 2000 + excess}}
	for _, spec := range []Spec{
		{Op: AllReduce, Algo: Auto, Bytes: 4 << 10},
		{Op: AllReduce, Algo: Auto, Bytes: 256 << 20},
		{Op: AllGather, Algo: Auto, Bytes: 1 << 20},
		{Op: ReduceScatter, Algo: Auto, Bytes: 64 << 20},
	} {
		nominal := run(params, hw, spec)
		got, want := run(slow, hw, spec), run(params, slowHW, spec)
		if got != want || got <= nominal {
			t.Errorf("%v of %d B: %v with one NIC %v slower, want %v (every hop %v slower; nominal %v)", spec.Op, spec.Bytes, got, excess, want, excess, nominal)
		}
	}
}

// TestTimedPlanClassesAtTheirRate: where NCCL's model is faster than the
// busiest link class of the lowering (NVLS reduces inside the NVSwitch and
// moves fewer NVLink bytes than the ring pattern it is lowered on), only
// that class is squeezed into the model's time; every other class keeps its
// bytes at its links' rate, on nominal links too (review s16 A13). Scaled
// by the busiest class's factor instead, the NICs' phases took less time
// than the NICs need for their bytes, and under concurrent traffic they
// claimed a share of a link they could not fill.
func TestTimedPlanClassesAtTheirRate(t *testing.T) {
	hw := Hardware{Arch: Hopper, NVLS: true, IntraBW: 300e9, NICBW: 50e9, NICsPerNode: 8}
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	squeezed := 0
	for _, size := range []units.Bytes{64 << 20, 1 << 30, 4 << 30} {
		eng := sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(hw)})
		p, err := f.Prepare(Spec{Op: AllReduce, Algo: Auto, Group: topo.All(), Bytes: size}, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan := p.Plan()
		need := linkNeed(plan)
		busiest := 0.0
		for _, n := range need {
			busiest = max(busiest, n)
		}
		bw := float64(plan.Choice.Time - plan.Choice.Latency)
		if bw >= busiest {
			continue // the model is not faster than the lowering here
		}
		var took [topology.NumClasses + 1]float64
		for i := range plan.Phases {
			took[phaseClass(&plan.Phases[i])] += float64(plan.Phases[i].dur)
		}
		for k, n := range need {
			if n == 0 || n == busiest {
				continue
			}
			squeezed++
			// Whole picoseconds per phase: one per phase of slack.
			if want := min(n, bw); took[k] < want-float64(len(plan.Phases)) {
				t.Errorf("%v all-reduce of %d B: class %d's phases take %.0f ps, less than its links need for its bytes (%.0f ps; model %.0f ps)",
					plan.Algo, size, k, took[k], want, bw)
			}
		}
		if _, err := f.StartPrepared(p, func() {}); err != nil {
			t.Fatal(err)
		}
		eng.Run()
		if got := units.Duration(eng.Now()); got != plan.Choice.Time {
			t.Errorf("%v all-reduce of %d B alone: %v, want the model's %v", plan.Algo, size, got, plan.Choice.Time)
		}
	}
	if squeezed == 0 {
		t.Fatal("no size where the model is faster than the lowering's busiest class: the test checks nothing")
	}
}

// TestRingVisitsGPUsNodeByNode: the flat ring orders a group's ranks by
// GPU, as NCCL builds its rings from the topology whatever the ranks'
// order (gpuOrder). Four ranks on two nodes, named alternately by node:
// the ring crosses the network twice per phase (out of node 0 and back),
// not at every hop; each of the two crossings carries its ring step's
// (n−1)·⌈S/n⌉ bytes.
func TestRingVisitsGPUsNodeByNode(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 2,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	const size = 4 << 20
	for _, group := range [][]int{{0, 2, 1, 3}, {0, 1, 2, 3}, {3, 1, 2, 0}} {
		p, err := Lower(topo, Spec{Op: AllGather, Algo: Ring, Group: group, Bytes: size})
		if err != nil {
			t.Fatal(err)
		}
		var crossings int
		var inter units.Bytes
		p.EachTransfer(func(src, dst int, c topology.Class, b units.Bytes) {
			if c == topology.Inter {
				crossings++
				inter += b
			}
		})
		if want := units.Bytes(2 * 3 * size / 4); crossings != 2 || inter != want {
			t.Errorf("ring all-gather over %v: %d network crossings carrying %d B, want 2 carrying %d B", group, crossings, inter, want)
		}
	}
}

// TestTreeVisitsGPUsNodeByNode: the alpha–beta double binary tree takes its
// positions in GPU order too (gpuOrder), as NCCL builds its trees from the
// topology: over eight ranks on two nodes named alternately by node it has
// the GPU-ordered group's edges, 4 of its 14 crossing the network (in
// rank order 8 did: 16 transfers, up and down).
func TestTreeVisitsGPUsNodeByNode(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	crossings := func(group []int) (n int) {
		p, err := Lower(topo, Spec{Op: AllReduce, Algo: Tree, Group: group, Bytes: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		p.EachTransfer(func(src, dst int, c topology.Class, b units.Bytes) {
			if c == topology.Inter {
				n++
			}
		})
		return n
	}
	sorted, alternate := crossings([]int{0, 1, 2, 3, 4, 5, 6, 7}), crossings([]int{0, 4, 1, 5, 2, 6, 3, 7})
	if sorted != alternate || sorted != 2*4 {
		t.Errorf("tree transfers crossing the network: %d over the GPU-ordered group, %d over the alternating one, want 8 each (4 edges, up and down)", sorted, alternate)
	}
}
