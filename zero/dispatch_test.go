package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
)

// TestDedupDispatchWire replays Mixtral-8x7B with ep 8 under
// communication.moe_dispatcher deepep and holds the links' bytes to hand
// counts: on 16 nodes of 4 GPUs each MoE layer's dispatch and combine
// send every rank's 4096 tokens (h 4096, bf16: 33,554,432 B) to the other
// node of its ep group once a token has one of its 2 experts there
// (P = 1 − C(4,2)/C(8,2) = 11/14: 26,364,197 B, to one rank) and forward
// to each of its 3 node peers the tokens of the 2 nodes' ranks of its
// local index that reach that peer's expert (2·33,554,432·(1 − C(7,2)/
// C(8,2)) = 16,777,216 B). Under the alltoall dispatcher the network
// carried 4 peers × 8,388,608 B per rank. In one node of 8 the dispatcher
// changes nothing: a token reaches its 2 experts' GPUs either way.
func TestDedupDispatchWire(t *testing.T) {
	const (
		layers, ranks   = 32, 64
		rail, node      = 26364197, 16777216
		alltoallPerPeer = 8388608
		a2aPerPass      = 2 * layers
	)
	for _, c := range []struct {
		name                     string
		gpn                      int
		dispatcher               string
		collectives              int
		network, nvlink, logical int64
	}{
		{"2 nodes of 4, deepep", 4, "deepep", 2 * a2aPerPass, ranks * a2aPerPass * rail, ranks * a2aPerPass * node * 3, a2aPerPass * (2*rail + 4*node)},
		{"2 nodes of 4, alltoall", 4, "alltoall", a2aPerPass, ranks * a2aPerPass * alltoallPerPeer * 4, ranks * a2aPerPass * alltoallPerPeer * 3, a2aPerPass * 8 * alltoallPerPeer},
		{"1 node of 8, deepep", 8, "deepep", a2aPerPass, 0, ranks * a2aPerPass * alltoallPerPeer * 7, a2aPerPass * 8 * alltoallPerPeer},
		{"1 node of 8, alltoall", 8, "alltoall", a2aPerPass, 0, ranks * a2aPerPass * alltoallPerPeer * 7, a2aPerPass * 8 * alltoallPerPeer},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mixtralOn(t, c.gpn, 3, 8)
			s.Communication.MoEDispatcher = scenariosDispatcher(c.dispatcher)
			r, err := Replay(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var fwd *PhaseBytes
			for i := range r.Phases {
				if r.Phases[i].Phase == PhaseForwardA2A {
					fwd = &r.Phases[i]
				}
			}
			if fwd == nil {
				t.Fatal("no forward all-to-all")
			}
			if fwd.Collectives != c.collectives || fwd.Logical != c.logical || fwd.Wire[topology.Inter] != c.network || fwd.Wire[topology.Intra] != c.nvlink {
				t.Errorf("forward all-to-all: %d collectives, %d B logical, network %d, nvlink %d; want %d, %d, %d, %d",
					fwd.Collectives, fwd.Logical, fwd.Wire[topology.Inter], fwd.Wire[topology.Intra], c.collectives, c.logical, c.network, c.nvlink)
			}
			t.Logf("%s: step %v", c.name, r.StepTime)
		})
	}
}

func scenariosDispatcher(d string) scenarios.MoEDispatcher { return scenarios.MoEDispatcher(d) }
