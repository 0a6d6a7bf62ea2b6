package collectives

import (
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// FuzzCollective: any cluster and spec either errors or runs, never
// panics; when it runs with every link load ≤ 16, the engine's time equals
// the closed form and the traffic balances.
func FuzzCollective(f *testing.F) {
	f.Add(uint8(4), uint8(2), uint8(0), int64(300e9), int64(25e9), int64(500000), uint8(2), uint8(0), int64(64<<20), uint64(0xff))
	f.Add(uint8(1), uint8(8), uint8(0), int64(1), int64(0), int64(0), uint8(3), uint8(3), int64(1<<62), uint64(0x3))
	f.Add(uint8(3), uint8(5), uint8(2), int64(7), int64(13), int64(1), uint8(1), uint8(1), int64(12345), uint64(0x7fff))
	f.Fuzz(func(t *testing.T, nodes, gpus, nics uint8, intra, inter, lat int64, op, algo uint8, size int64, mask uint64) {
		p := topology.Params{Nodes: int(nodes%9) + 1, GPUsPerNode: int(gpus%9) + 1, NICsPerNode: int(nics % 4),
			Intra: topology.LinkParams{Bandwidth: units.Bandwidth(intra), Latency: units.Duration(lat)},
			Inter: topology.LinkParams{Bandwidth: units.Bandwidth(inter), Latency: units.Duration(lat)}}
		topo, err := topology.New(p)
		if err != nil {
			return
		}
		var group []int
		for r := range topo.Ranks() {
			if mask&(1<<(r%64)) != 0 {
				group = append(group, r)
			}
		}
		spec := Spec{Op: Op(op % 4), Algo: Algo(algo % 5), Group: group, Bytes: units.Bytes(size)}
		cf, cerr := ClosedForm(topo, spec)
		eng := sim.New()
		fab := NewFabric(eng, topo)
		h, serr := fab.Start(spec, nil)
		if serr != nil {
			return
		}
		eng.Run()
		tr := fab.Traffic()
		for _, c := range topology.Classes() {
			var s, r units.Bytes
			for i := range tr.Sent {
				s += tr.Sent[i][c]
				r += tr.Recv[i][c]
			}
			if s != tr.Total[c] || r != tr.Total[c] {
				t.Fatalf("class %v: sent %d recv %d total %d", c, s, r, tr.Total[c])
			}
		}
		if cerr != nil || !h.Done() {
			return
		}
		for i := range h.Plan.Phases {
			counts := linkLoad(topo, &h.Plan.Phases[i], nil)
			for _, w := range counts {
				if w > 16 {
					return
				}
			}
		}
		if got := units.Duration(h.End() - h.Start()); got != cf && h.End() != sim.MaxTime {
			t.Fatalf("%+v %v %v %v %d B: engine %d, closed form %d", p, spec.Op, spec.Algo, group, size, got, cf)
		}
	})
}
