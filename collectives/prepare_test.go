package collectives

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// prepSpecs are collectives over a 4 × 4 cluster (NVLink 300e9, network
// 25e9): hierarchical, flat rings across nodes, one node, the tree, sizes
// that do not divide evenly.
func prepSpecs(topo *topology.Topology) []Spec {
	all := topo.All()
	odd := []int{3, 0, 9, 14, 5, 6}
	return []Spec{
		{Op: AllReduce, Algo: Auto, Group: all, Bytes: 1 << 26},
		{Op: ReduceScatter, Algo: Auto, Group: all, Bytes: 1<<26 + 7},
		{Op: AllGather, Algo: Ring, Group: all, Bytes: 3e6},
		{Op: AllReduce, Algo: Ring, Group: odd, Bytes: 999_999},
		{Op: AllGather, Algo: Auto, Group: all[:4], Bytes: 4096},
		{Op: AllReduce, Algo: Tree, Group: all, Bytes: 1 << 20},
	}
}

// A prepared collective runs exactly like Start (its closed form alone on
// the links) and accounts the bytes Wire counts; a second size over the same
// group (derived from the first lowering) equals a fresh lowering.
func TestPrepared(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 4, GPUsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2 * units.Microsecond}})
	eng := sim.New()
	f := NewFabricOptions(eng, topo, FabricOptions{NoTraffic: true})
	for i, spec := range prepSpecs(topo) {
		for _, bytes := range []units.Bytes{spec.Bytes, spec.Bytes*3 + 1, 0} {
			spec := spec
			spec.Bytes = bytes
			name := fmt.Sprintf("case %d (%v %v over %d, %d B)", i, spec.Op, spec.Algo, len(spec.Group), bytes)
			p, err := f.Prepare(spec, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			fresh, err := NewFabric(sim.New(), topo).Prepare(spec, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(p.Plan().Phases, fresh.Plan().Phases) || p.Wire() != fresh.Wire() || !reflect.DeepEqual(p.Sent(), fresh.Sent()) {
				t.Errorf("%s: derived plan differs from a fresh lowering", name)
			}
			want, err := Wire(topo, spec)
			if err != nil {
				t.Fatal(err)
			}
			if p.Wire() != want.Total {
				t.Errorf("%s: wire %v, want %v", name, p.Wire(), want.Total)
			}
			sent := make([][topology.NumClasses]units.Bytes, topo.Ranks())
			for _, rb := range p.Sent() {
				sent[rb.Rank] = rb.Bytes
			}
			if !reflect.DeepEqual(sent, want.Sent) {
				t.Errorf("%s: sent %v, want %v", name, sent, want.Sent)
			}
			cf, err := ClosedForm(topo, spec)
			if err != nil {
				t.Fatal(err)
			}
			h, err := f.StartPrepared(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			eng.Run()
			if got := units.Duration(h.End() - h.Start()); !h.Done() || got != cf {
				t.Errorf("%s: took %v, closed form %v", name, got, cf)
			}
		}
	}
	if tr := f.Traffic(); tr.Total != ([topology.NumClasses]units.Bytes{}) || len(tr.Sent) != 0 {
		t.Errorf("NoTraffic fabric accounted %v", tr.Total)
	}
}

// Restricted to the ranks of node 0, a ring over every rank keeps the
// transfers that touch node 0, takes the full ring's time alone (every
// port of node 0 carries its full load and the bottleneck is symmetric),
// reports the full wire bytes and only node 0's sends.
func TestPreparedRestricted(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 4, GPUsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2 * units.Microsecond}})
	keep := make([]bool, topo.Ranks())
	for r := range 4 {
		keep[r] = true
	}
	for i, spec := range prepSpecs(topo)[:3] {
		eng := sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{NoTraffic: true})
		p, err := f.Prepare(spec, keep)
		if err != nil {
			t.Fatal(err)
		}
		full, err := Wire(topo, spec)
		if err != nil {
			t.Fatal(err)
		}
		if p.Wire() != full.Total {
			t.Errorf("case %d: wire %v, want %v", i, p.Wire(), full.Total)
		}
		for _, rb := range p.Sent() {
			if rb.Rank >= 4 || rb.Bytes != full.Sent[rb.Rank] {
				t.Errorf("case %d: sent %+v, want only node 0 (%v)", i, rb, full.Sent[rb.Rank])
			}
		}
		if len(p.Sent()) != 4 {
			t.Errorf("case %d: %d sources, want 4", i, len(p.Sent()))
		}
		cf, err := ClosedForm(topo, spec)
		if err != nil {
			t.Fatal(err)
		}
		h, err := f.StartPrepared(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		if got := units.Duration(h.End() - h.Start()); got != cf {
			t.Errorf("case %d: restricted took %v, closed form %v", i, got, cf)
		}
	}
	if _, err := NewFabric(sim.New(), topo).Prepare(prepSpecs(topo)[0], keep[:3]); err == nil {
		t.Error("keep of the wrong length accepted")
	}
}

// A restricted lowering is the full lowering with only the transfers that
// touch a kept rank: the same phases, latencies, bottlenecks, bytes and
// per-class transfer counts (of every transfer), and the kept transfers in
// the full plan's order, for every op and algorithm on groups in and out of
// order, on shared NICs, a degraded link and the [dp, cp] placement; timed
// by NCCL's model too (auto). The second lowering of each case on the same
// lowering (its memos and cached blocks) equals the first.
func TestRestrictedLowering(t *testing.T) {
	intra := topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond}
	inter := topology.LinkParams{Bandwidth: 25e9, Latency: 2 * units.Microsecond}
	model := NewModel(Hardware{Arch: Hopper, IntraBW: 300e9, NICBW: 25e9, NICsPerNode: 4})
	for ti, p := range []topology.Params{
		{Nodes: 4, GPUsPerNode: 4, Intra: intra, Inter: inter},
		{Nodes: 3, GPUsPerNode: 8, NICsPerNode: 2, Intra: intra, Inter: inter},
		{Nodes: 4, GPUsPerNode: 4, CP: 2, DPFastest: true, Intra: intra, Inter: inter},
		{Nodes: 4, GPUsPerNode: 4, Intra: intra, Inter: inter,
			Overrides: []topology.Override{{Node: 1, GPU: 2, Class: topology.Inter, Bandwidth: 7e9, Latency: 9 * units.Microsecond}}},
	} {
		topo := mustTopo(t, p)
		all := topo.All()
		n := len(all)
		rev := slices.Clone(all)
		slices.Reverse(rev)
		keep := make([]bool, n)
		for r := range 4 {
			keep[r] = true
		}
		for gi, g := range [][]int{all, all[:4], all[:5], {3, 0, 9, 14, 5, 6}, {n - 1, 0}, all[2:], rev} {
			for _, op := range []Op{ReduceScatter, AllGather, AllReduce, AllToAll} {
				for _, algo := range []Algo{Auto, Ring, Hierarchical, Tree} {
					spec := Spec{Op: op, Algo: algo, Group: g, Bytes: 1<<20 + 3}
					name := fmt.Sprintf("topology %d, group %d, %v %v", ti, gi, op, algo)
					full, err := Lower(topo, spec)
					if err != nil {
						// Hierarchical over uneven nodes, a tree of anything but
						// all-reduce; any other error is a failure.
						if algo == Tree && op != AllReduce || algo == Hierarchical && strings.Contains(err.Error(), "same number of ranks on every node") {
							continue
						}
						t.Fatalf("%s: %v", name, err)
					}
					var fullModel *Plan
					if algo == Auto && op != AllToAll { // what a model times (lowerTimed)
						if fullModel, err = LowerModel(topo, model, spec); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
					}
					lw := newLowering(topo)
					lw.keep = keep
					for range 2 {
						r, err := lw.lower(spec)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkRestricted(t, name, keep, r, full)
						if fullModel == nil {
							continue
						}
						rm, _, err := lw.lowerModel(model, spec)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkRestricted(t, name+" (model)", keep, rm, fullModel)
					}
				}
			}
		}
	}
}

func checkRestricted(t *testing.T, name string, keep []bool, r, full *Plan) {
	t.Helper()
	if len(r.Phases) != len(full.Phases) {
		t.Fatalf("%s: %d phases, want %d", name, len(r.Phases), len(full.Phases))
	}
	for i := range full.Phases {
		w, got := full.Phases[i], r.Phases[i]
		var kept []Transfer
		var paths []topology.Path
		var count [topology.NumClasses]int64
		for j, x := range w.Transfers {
			count[w.paths[j].Class]++
			if keep[x.Src] || keep[x.Dst] {
				kept, paths = append(kept, x), append(paths, w.paths[j])
			}
		}
		if got.count != count || w.count != count {
			t.Errorf("%s: phase %s counts %v (full %v), want %v", name, w.Name, got.count, w.count, count)
		}
		if !slices.Equal(got.Transfers, kept) || !slices.Equal(got.paths, paths) {
			t.Errorf("%s: phase %s keeps %v, want %v", name, w.Name, got.Transfers, kept)
		}
		// A rail phase's channel 0 leads its transfers: the restriction
		// keeps its kept ones first.
		first := 0
		for _, x := range w.Transfers[:w.first] {
			if keep[x.Src] || keep[x.Dst] {
				first++
			}
		}
		if got.first != first {
			t.Errorf("%s: phase %s keeps %d of channel 0's transfers first, want %d", name, w.Name, got.first, first)
		}
		got.Transfers, got.paths, got.first = w.Transfers, w.paths, w.first
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: phase %s\n got %+v\nwant %+v", name, w.Name, got, w)
		}
	}
	rp, fp := *r, *full
	rp.Phases, fp.Phases = nil, nil
	if !reflect.DeepEqual(rp, fp) {
		t.Errorf("%s: plan %+v, want %+v", name, rp, fp)
	}
}

// TestSoloRunnerMatchesFreshEngines: Bench times every group alone on one
// engine and fabric, one after another (soloRunner); each time equals the
// same collective's on a fresh engine and fabric, timed by NCCL's model and
// by the alpha–beta lowering, in two passes over prepSpecs (the second over
// a fabric that has lowered them all once).
func TestSoloRunnerMatchesFreshEngines(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 4, GPUsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 2 * units.Microsecond}})
	for _, m := range []*Model{nil, NewModel(h100(25e9, 2*units.Microsecond))} {
		var solo soloRunner
		timed := 0
		for pass := range 2 {
			for i, spec := range prepSpecs(topo) {
				eng := sim.New()
				f := NewFabricOptions(eng, topo, FabricOptions{Model: m, NoTraffic: true})
				h, err := f.Start(spec, nil)
				if err != nil {
					t.Fatal(err)
				}
				eng.Run()
				fresh := units.Duration(h.End() - h.Start())
				if !h.Plan.Timed {
					continue
				}
				timed++
				got, err := solo.alone(topo, m, h.Plan, spec)
				if err != nil {
					t.Fatal(err)
				}
				if got != fresh {
					t.Errorf("model %v, pass %d, spec %d: alone on the shared engine %v, on a fresh one %v", m != nil, pass, i, got, fresh)
				}
			}
		}
		if m != nil && timed == 0 {
			t.Error("no spec was timed by the model")
		}
	}
}
