package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestRingBytes holds the run's context-parallel ring phase to a count from
// the ring's definition in torch/distributed/tensor/experimental/_attention.py
// at pytorch/pytorch 0123248 (RingTraffic), typed here from Llama 3.1 8B's
// shape (32 heads of 128, 8 kv heads) rather than from the code's helpers,
// under both attentions: sdpa repeats k and v to the 32 heads before SDPA
// (torchtitan 9dec370), flash hands SDPA its 8 kv heads with enable_gqa
// (torchtitan since ff0829c), which the ring gathers as it receives them
// (memory.RingKVHeads). Per block and micro-step each rank holds X =
// micro_batch·(seq_len/cp)·kv·128 elements of each of k and v (kv = 32
// under sdpa, 8 under flash) and:
//
//   - all-gathers its bf16 k and v (2 tensors · 2 B · X) once in forward,
//     once in backward and once more when full or selective recompute reruns
//     the forward; a ring all-gather has each rank send the cp − 1 chunks it
//     did not start with;
//   - sends its fp32 dk and dv (2 tensors · 4 B · X) to the next rank of
//     its group in each of the backward's cp rounds.
//
// Wire bytes follow the placement: inside a node all of it is NVLink; with
// [dp, cp] on 2 nodes × 8 a group's two ranks are 8 GPUs apart, on
// different nodes; a flat ring of 16 ranks over 2 nodes crosses the
// network on two hops (rank 7 to 8 and 15 to 0), each carrying its
// sender's whole share.
func TestRingBytes(t *testing.T) {
	const headDim = 128
	for _, a := range []struct {
		attention string
		kv        int64
	}{{"sdpa", 32}, {"flash", 8}} {
		testRingBytes(t, a.attention, a.kv, headDim)
	}
}

func testRingBytes(t *testing.T, attention string, heads, headDim int64) {
	for _, c := range []struct {
		name                    string
		sets                    []string
		layers, cp, seq, mb, ga int64
		rerun                   bool
		ranks                   int64
		crossing                int64 // ranks whose every send crosses the network
		netAll                  bool  // every send crosses the network
	}{
		{"cp 2 in a node, no recompute", []string{"cluster.nodes=1", "parallelism.dp=4", "parallelism.cp=2", "training.recompute=none"},
			4, 2, 4096, 1, 1, false, 8, 0, false},
		{"cp 4, full recompute, grad_accum 3, micro-batch 2", []string{"cluster.nodes=1", "parallelism.dp=2", "parallelism.cp=4", "training.recompute=full",
			"training.grad_accum=3", "training.micro_batch=2", "model.seq_len=8192"},
			4, 4, 8192, 2, 3, true, 8, 0, false},
		{"cp 2, op recompute keeps the SDPA outputs", []string{"cluster.nodes=1", "parallelism.dp=4", "parallelism.cp=2", "training.recompute=op"},
			4, 2, 4096, 1, 1, false, 8, 0, false},
		{"cp 2 placed [dp, cp] across 2 nodes, selective", []string{"parallelism.dp=8", "parallelism.cp=2", "cluster.placement=[dp, cp]", "training.recompute=selective"},
			4, 2, 4096, 1, 1, true, 16, 0, true},
		{"cp 16 over 2 nodes, flat ring", []string{"parallelism.dp=1", "parallelism.cp=16", "training.recompute=none", "communication.algorithm=ring", "model.seq_len=16384"},
			4, 16, 16384, 1, 1, false, 16, 2, false},
	} {
		t.Run(attention+", "+c.name, func(t *testing.T) {
			sets := append([]string{"model.preset=llama3.1-8b", "model.layers=4", "training.attention=" + attention}, c.sets...)
			res, err := Replay(loadDefault(t, sets...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			x := c.mb * (c.seq / c.cp) * heads * headDim
			kv, dkv := 2*2*x, 2*4*x
			gathers := int64(2)
			if c.rerun {
				gathers = 3
			}
			// Per rank and step.
			sent := c.layers * c.ga * (gathers*(c.cp-1)*kv + c.cp*dkv)
			logical := c.layers * c.ga * (gathers*c.cp*kv + c.cp*dkv)
			colls := c.layers * c.ga * (gathers + c.cp)
			got := cpRingPhase(t, res)
			if got.Sent != sent || got.Logical != logical || int64(got.Collectives) != colls {
				t.Errorf("sent %d, logical %d, %d collectives; want %d, %d, %d", got.Sent, got.Logical, got.Collectives, sent, logical, colls)
			}
			var wire, most [topology.NumClasses]int64
			switch {
			case c.netAll:
				wire[topology.Inter], most[topology.Inter] = c.ranks*sent, sent
			case c.crossing > 0:
				wire[topology.Inter], most[topology.Inter] = c.crossing*sent, sent
				wire[topology.Intra], most[topology.Intra] = (c.ranks-c.crossing)*sent, sent
			default:
				wire[topology.Intra], most[topology.Intra] = c.ranks*sent, sent
			}
			if got.Wire != wire || got.MaxRankWire != most {
				t.Errorf("wire %v, busiest %v; want %v, %v", got.Wire, got.MaxRankWire, wire, most)
			}
		})
	}
}

// TestRingBytesDoc holds docs/compute-model.md's figures for Llama 3.1 8B at
// cp 2 to the replay that command runs.
func TestRingBytesDoc(t *testing.T) {
	var quotes []string
	for _, policy := range []string{"selective", "none"} {
		res, err := Replay(loadDefault(t, "model.preset=llama3.1-8b", "parallelism.dp=8", "parallelism.cp=2", "training.recompute="+policy), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ring := cpRingPhase(t, res)
		gib := func(b int64) float64 { return float64(b) / (1 << 30) }
		if policy == "none" {
			quotes = append(quotes, fmt.Sprintf("without recompute %.2f GiB", gib(ring.Sent)))
			continue
		}
		quotes = append(quotes, fmt.Sprintf("28X = %.0f MiB a block, %.2f GiB a step per rank, %.0f GiB of NVLink over the %d ranks",
			float64(ring.Sent)/32/(1<<20), gib(ring.Sent), gib(ring.Wire[topology.Intra]), res.N))
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestRingBytesDoc (zerosim run default --set model.preset=llama3.1-8b --set parallelism.dp=8 --set parallelism.cp=2)", quotes...)
}

// cpRingPhase is res's context-parallel ring phase; the test fails without
// one.
func cpRingPhase(t *testing.T, res *Result) *PhaseBytes {
	t.Helper()
	for i := range res.Phases {
		if res.Phases[i].Phase == PhaseCPRing {
			return &res.Phases[i]
		}
	}
	t.Fatalf("no %q phase in %v", PhaseCPRing, res.Phases)
	return nil
}

// TestRingBytesNCCL holds the ring phase's all-gathers to the replay's own
// all-gather of the same bytes over the same groups (one source of truth):
// a collectives.Fabric with the scenario's NCCL model (Model) and the
// algorithm the replay gives an all-gather, started on every cp group and
// counted by the fabric's own traffic accounting, transfer by transfer.
// The fabric's network bytes are held in turn to NCCL's patterns: over m
// nodes of g ranks each, NCCL's rail rings (what its cost model picks for
// an all-gather over nodes, collectives.LowerModel) send m·(n−1)/n of the
// n·KV-byte buffer between nodes, the explicit two-level algorithm (m−1)
// of it, and inside one node nothing. Each rank also sends its dk/dv to
// the next rank of its group cp times a micro-step, over the network on the
// hops that leave a node (crossing, counted from the placement by hand:
// under [cp, dp] at dp 1, cp 16 ranks 7→8 and 15→0; under [dp, cp] at dp
// 2, cp 8 a group's positions 0–3 are GPUs d, d+2, d+4, d+6 of node 0 and
// 4–7 the same of node 1, so 3→4 and 7→0 in each of the 2 groups).
func TestRingBytesNCCL(t *testing.T) {
	const kvHeads, headDim, layers = 8, 128, 4 // Llama 3.1 8B under flash (enable_gqa)
	for _, c := range []struct {
		name      string
		sets      []string
		algo      collectives.Algo
		m, g      int64 // nodes a group spans, its ranks per node
		groups    int64
		crossing  int64 // dk/dv hops between nodes, over all groups
		netGather func(n, m, kv int64) int64
	}{
		{"2 × 8 H100, dp 1, cp 16: NCCL's rail rings", []string{"parallelism.dp=1", "parallelism.cp=16", "model.seq_len=16384"},
			collectives.Auto, 2, 8, 1, 2, func(n, m, kv int64) int64 { return m * (n - 1) * kv }},
		{"2 × 8 H100, [dp, cp], dp 2, cp 8: NCCL's rail rings of 4 ranks a node", []string{"parallelism.dp=2", "parallelism.cp=8",
			"cluster.placement=[dp, cp]", "model.seq_len=8192"},
			collectives.Auto, 2, 4, 2, 4, func(n, m, kv int64) int64 { return m * (n - 1) * kv }},
		{"2 × 8 H100, dp 1, cp 16, hierarchical", []string{"parallelism.dp=1", "parallelism.cp=16", "model.seq_len=16384",
			"communication.algorithm=hierarchical"},
			collectives.Hierarchical, 2, 8, 1, 2, func(n, m, kv int64) int64 { return (m - 1) * n * kv }},
		{"1 × 8 H100, dp 1, cp 8", []string{"cluster.nodes=1", "parallelism.dp=1", "parallelism.cp=8", "model.seq_len=8192"},
			collectives.Auto, 1, 8, 1, 0, func(n, m, kv int64) int64 { return 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			sets := append([]string{"model.preset=llama3.1-8b", "model.layers=4", "training.attention=flash", "training.recompute=none"}, c.sets...)
			s := loadDefault(t, sets...)
			res, err := Replay(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := c.m * c.g
			x := s.Training.MicroBatch * (s.Model.SeqLen / n) * kvHeads * headDim
			kv, dkv := 2*2*x, 2*4*x
			gathers := int64(layers * 2) // forward and backward, one micro-step
			permute := layers * n * dkv

			topo, err := topology.Build(s)
			if err != nil {
				t.Fatal(err)
			}
			model, err := Model(s)
			if err != nil {
				t.Fatal(err)
			}
			if model == nil {
				t.Fatal("no NCCL model for an H100 cluster")
			}
			eng := sim.New()
			f := collectives.NewFabricOptions(eng, topo, collectives.FabricOptions{Model: model})
			for d := range topo.DP() {
				group := make([]int, n)
				for i := range group {
					group[i] = topo.Rank(d, i)
				}
				if _, err := f.Start(collectives.Spec{Op: collectives.AllGather, Algo: c.algo, Group: group, Bytes: units.Bytes(n * kv)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			eng.Run()
			tr := f.Traffic()
			if got, want := int64(tr.Total[topology.Inter]), c.groups*c.netGather(n, c.m, kv); got != want {
				t.Fatalf("the replay's all-gather of %d B over each of %d groups sends %d B between nodes, NCCL's pattern %d", n*kv, c.groups, got, want)
			}
			ranks := c.groups * n
			got := cpRingPhase(t, res)
			var wire, most [topology.NumClasses]int64
			for cl := range wire {
				wire[cl] = gathers * int64(tr.Total[cl])
				most[cl] = gathers * int64(tr.MaxSent(topology.Class(cl)))
			}
			wire[topology.Inter] += c.crossing * permute
			wire[topology.Intra] += (ranks - c.crossing) * permute
			// Every rank sends as much as the others on each class here
			// (the buffer splits evenly), and some send their dk/dv over
			// each class that carries any.
			for cl := range most {
				if wire[cl] > 0 {
					most[cl] += permute
				}
			}
			if c.crossing == 0 {
				most[topology.Inter] = 0
			}
			if got.Wire != wire || got.MaxRankWire != most {
				t.Errorf("wire %v, busiest %v; want %v, %v", got.Wire, got.MaxRankWire, wire, most)
			}
			if want := gathers*(n-1)*kv + permute; got.Sent != want {
				t.Errorf("sent %d per rank, want %d", got.Sent, want)
			}
		})
	}
}
