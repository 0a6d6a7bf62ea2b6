package collectives_test

import (
	"fmt"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// A 64 MiB ring all-reduce over 8 GPUs on 300 GB/s links with 500 ns per
// step: the closed form and the engine agree to the picosecond.
func Example() {
	topo, err := topology.New(topology.Params{Nodes: 1, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond}})
	if err != nil {
		panic(err)
	}
	spec := collectives.Spec{Op: collectives.AllReduce, Algo: collectives.Ring, Group: topo.All(), Bytes: 64 * units.MiB}
	cf, _ := collectives.ClosedForm(topo, spec)

	eng := sim.New()
	fab := collectives.NewFabric(eng, topo)
	h, _ := fab.Start(spec, func() { fmt.Println("done at", eng.Now(), "ps") })
	eng.Run()
	tr := fab.Traffic()
	fmt.Println(cf, int64(cf) == int64(h.End()), tr.MaxSent(topology.Intra))
	// Output:
	// done at 398468374 ps
	// 398.468µs true 112.00 MiB
}
