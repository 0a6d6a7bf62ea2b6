package zero

import (
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestRingNetNCCL holds the time of the ring's k/v exchange to NCCL's cost
// model: an all-gather of the cp·kv-byte buffer over a cp group of the
// shape (ranks, nodes) the placement gives it, counted here by hand from
// the GPUs topology.GPU gives the group's ranks (the slowest group's,
// when groups differ), timed by collectives.Model.Time as the replay
// times an all-gather; and each dk/dv send to the time of a point-to-point
// transfer, which NCCL does not tune: the path's latency plus its bytes
// at the link's bandwidth, NVLink's inside a node, the NIC's when some
// rank's next is on another node. Each size is also checked not to be the
// raw-link time (cp−1)·kv / bandwidth the ring had before, which ignored
// NCCL's latency and the link share it reaches.
func TestRingNetNCCL(t *testing.T) {
	const kv = 32768 * 4096 * 4 // Llama 3.1 8B's bf16 k and v under sdpa, a rank's 32,768 rows
	for _, c := range []struct {
		sets   []string
		shapes []collectives.Shape // the cp groups' shapes
		cross  bool                // a send crosses nodes
	}{
		{[]string{"cluster.nodes=1", "parallelism.dp=4", "parallelism.cp=2"}, []collectives.Shape{shp(2, 1)}, false},
		{[]string{"cluster.nodes=1", "parallelism.dp=4", "parallelism.cp=2", "cluster.placement=[dp, cp]"}, []collectives.Shape{shp(2, 1)}, false}, // GPUs d, d+4
		{[]string{"cluster.nodes=1", "parallelism.dp=1", "parallelism.cp=8"}, []collectives.Shape{shp(8, 1)}, false},
		{[]string{"parallelism.dp=2", "parallelism.cp=8"}, []collectives.Shape{shp(8, 1)}, false},
		{[]string{"parallelism.dp=2", "parallelism.cp=8", "cluster.placement=[dp, cp]"}, []collectives.Shape{shp(8, 2)}, true}, // GPUs d, d+2, …, d+14
		{[]string{"parallelism.dp=4", "parallelism.cp=4", "cluster.placement=[dp, cp]"}, []collectives.Shape{shp(4, 2)}, true}, // GPUs d, d+4, d+8, d+12
		{[]string{"parallelism.dp=1", "parallelism.cp=16"}, []collectives.Shape{shp(16, 2)}, true},
		{[]string{"cluster.gpus_per_node=6", "parallelism.dp=3", "parallelism.cp=4"}, []collectives.Shape{shp(4, 1), shp(4, 2)}, true}, // ranks 4–7 on nodes 0 and 1
		{[]string{"cluster.nodes=4", "cluster.gpus_per_node=4", "parallelism.dp=2", "parallelism.cp=8"}, []collectives.Shape{shp(8, 2)}, true},
	} {
		s := loadDefault(t, append([]string{"model.preset=llama3.1-8b"}, c.sets...)...)
		m, err := Model(s)
		if err != nil || m == nil {
			t.Fatalf("%v: NCCL's model %v, %v", c.sets, m, err)
		}
		r := ringSpec(s, nil)
		cp := int64(s.Parallelism.CP)
		link := s.Cluster.Intra
		lat := link.Latency
		if c.cross {
			link = s.Cluster.Inter
			lat = max(lat, link.Latency)
		}
		for _, b := range []int64{kv, 64 << 10} {
			var want units.Duration
			for _, sh := range c.shapes {
				ch, err := m.Time(collectives.AllGather, sh, collectives.Auto, units.Bytes(cp*b))
				if err != nil {
					t.Fatal(err)
				}
				want = max(want, ch.Time)
			}
			got, err := r.Net.Gather(b)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%v, %d B: all-gather %v, want NCCL's %v", c.sets, b, got, want)
			}
			if raw := float64((cp-1)*b) / float64(link.Bandwidth); ringNear(got.Seconds(), raw) {
				t.Errorf("%v, %d B: all-gather at the raw link's %g s", c.sets, b, raw)
			}
			send, err := r.Net.Send(2 * b)
			if err != nil {
				t.Fatal(err)
			}
			if want := lat + units.TransferTime(units.Bytes(2*b), link.Bandwidth); send != want {
				t.Errorf("%v, %d B: send %v, want %v", c.sets, 2*b, send, want)
			}
		}
	}
}

// TestRingNetAlgorithm: an explicit communication.algorithm times the
// ring's all-gather as it times the replay's other all-gathers (kindAlgo):
// ring, hierarchical and tree (which NCCL runs for all-reduce only: its
// all-gathers ring) are zerosim's alpha–beta lowerings, timed alone
// (collectives.ClosedForm); nvls is NCCL's, timed by its model; auto is
// NCCL's choice, and alpha–beta's on a cluster without a GPU preset
// (Model nil).
func TestRingNetAlgorithm(t *testing.T) {
	const kv = 32768 * 4096 * 4
	for _, c := range []struct {
		sets  []string
		algo  collectives.Algo // what times it
		model bool             // by NCCL's model
	}{
		{[]string{"communication.algorithm=ring"}, collectives.Ring, false},
		{[]string{"communication.algorithm=tree"}, collectives.Ring, false},
		{[]string{"communication.algorithm=hierarchical"}, collectives.Hierarchical, false},
		{[]string{"communication.algorithm=auto"}, collectives.Auto, true},
		{[]string{"communication.algorithm=nvls", "cluster.nodes=1", "parallelism.dp=1"}, collectives.NVLS, true},
		{nil, collectives.Auto, false}, // without a GPU preset (below)
	} {
		sets := append([]string{"model.preset=llama3.1-8b", "parallelism.dp=1", "parallelism.cp=16"}, c.sets...)
		if c.algo == collectives.NVLS {
			sets = append(sets, "parallelism.cp=8")
		}
		s := loadDefault(t, sets...)
		if c.sets == nil {
			s.Cluster.GPU = "" // a cluster of link figures only: Model is nil
		}
		topo, err := topology.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Model(s)
		if err != nil || c.model && m == nil || c.algo == collectives.Auto && !c.model && m != nil {
			t.Fatalf("%v: model %v, %v", c.sets, m, err)
		}
		group := make([]int, s.Parallelism.CP)
		for i := range group {
			group[i] = topo.Rank(0, i)
		}
		size := units.Bytes(int64(len(group)) * kv)
		var want units.Duration
		if c.model {
			ch, err := m.Time(collectives.AllGather, collectives.ShapeOf(topo, group), c.algo, size)
			if err != nil {
				t.Fatalf("%v: %v", c.sets, err)
			}
			want = ch.Time
		} else {
			if want, err = collectives.ClosedForm(topo, collectives.Spec{Op: collectives.AllGather, Algo: c.algo, Group: group, Bytes: size}); err != nil {
				t.Fatal(err)
			}
		}
		// The scenario's ring as Costs builds it, and one on a fabric of
		// the same parts, as the replay passes it.
		f := collectives.NewFabricOptions(sim.New(), topo, collectives.FabricOptions{NoTraffic: true, Model: m})
		for _, net := range []*RingNet{ringSpec(s, nil).Net, NewRingNet(s, f, m, algoOf[s.Communication.Algorithm])} {
			got, err := net.Gather(kv)
			if err != nil {
				t.Fatalf("%v: %v", c.sets, err)
			}
			if got != want {
				t.Errorf("%v: all-gather %v, want %v", c.sets, got, want)
			}
		}
	}
}

func shp(ranks, nodes int) collectives.Shape { return collectives.Shape{Ranks: ranks, Nodes: nodes} }
