package sim_test

import (
	"fmt"

	"github.com/zerosim/zerosim/sim"
)

// Two equal flows on one 25 GB/s link share it and finish together, after
// twice the time one flow takes alone; a coupled group finishes in one event.
func Example() {
	e := sim.New()
	link := sim.NewResource("nic0-out", 25e9)
	a := e.StartFlow(1<<20, []*sim.Resource{link}, nil)
	b := e.StartFlow(1<<20, []*sim.Resource{link}, func() { fmt.Println("b done at", e.Now(), "ps") })
	e.Run()
	fmt.Println(a.End(), b.End(), sim.TransferTime(1<<20, 25e9))

	// A 4-rank ring step: each rank's egress to the next rank's ingress.
	out := make([]*sim.Resource, 4)
	in := make([]*sim.Resource, 4)
	for i := range 4 {
		out[i], in[i] = sim.NewResource("out", 25e9), sim.NewResource("in", 25e9)
	}
	var ring [][]*sim.Resource
	for i := range 4 {
		ring = append(ring, []*sim.Resource{out[i], in[(i+1)%4]})
	}
	e = sim.New()
	g := e.StartGroup(1<<20, ring, nil)
	e.Run()
	fmt.Println(g.End(), e.Events())
	// Output:
	// b done at 83886080 ps
	// 83886080 83886080 41943040
	// 41943040 1
}
