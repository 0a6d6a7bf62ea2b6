package zero

import (
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// tiny returns seed 002's 260-parameter transformer on one node of n GPUs
// (units LN1 8, attention 64, LN2 8, FFN 148, output 32).
func tiny(stage, n, k int) *scenarios.Scenario {
	s := &scenarios.Scenario{Version: 1, Name: "tiny"}
	s.Cluster = scenarios.Cluster{Nodes: 1, GPUsPerNode: n, PeakBF16: 312e12, HBMBandwidth: 2e12,
		Intra: scenarios.Link{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: scenarios.Link{Bandwidth: 25e9, Latency: 2 * units.Microsecond}}
	s.Model = scenarios.Model{Kind: "tiny-transformer", Hidden: 4, Heads: 2, FFN: 16, Vocab: 8, SeqLen: 3, Layers: 1}
	for _, l := range []struct {
		name string
		p    units.Count
	}{{"ln1", 8}, {"attention", 64}, {"ln2", 8}, {"ffn", 148}, {"output", 32}} {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: l.name, Params: l.p})
	}
	s.Model.Params = 260
	s.Parallelism = scenarios.Parallelism{DP: n, CP: 1, Stage: stage, K: k}
	s.Training = scenarios.Training{MicroBatch: 1, MFU: 0.5}
	s.Communication = scenarios.Communication{BucketSize: 40e6, Algorithm: "ring", MaxInflightAllGathers: 2}
	return s
}

// mlp returns seed 000's N=8 example: 4 nodes × 2 GPUs, dp 4 across nodes
// on a slow 25 GB/s network, cp 2 inside a node over NVLink, a residual MLP of
// layers × (8H²+5H) parameters.
func mlp(stage, k int, hidden int64, layers int) *scenarios.Scenario {
	s := &scenarios.Scenario{Version: 1, Name: "seed000"}
	s.Cluster = scenarios.Cluster{Nodes: 4, GPUsPerNode: 2, PeakBF16: 312e12, HBMBandwidth: 2039e9,
		Intra: scenarios.Link{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: scenarios.Link{Bandwidth: 25e9, Latency: 2 * units.Microsecond}}
	s.Model = scenarios.Model{Kind: "mlp", Hidden: hidden, Layers: int64(layers), SeqLen: 1}
	for i := 0; i < layers; i++ {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: "layer", Params: units.Count(8*hidden*hidden + 5*hidden)})
	}
	s.Parallelism = scenarios.Parallelism{DP: 4, CP: 2, Stage: stage, K: k}
	s.Training = scenarios.Training{MicroBatch: 1024, MFU: 0.5}
	s.Communication = scenarios.Communication{BucketSize: 40e6, Algorithm: "ring", MaxInflightAllGathers: 2}
	return s
}

func off() *bool { b := false; return &b }

// With overlap off every task runs in one stream, so the step is exactly
// compute plus the sum of the collectives' closed-form times.
func TestOverlapOffIsComputePlusClosedForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *scenarios.Scenario
	}{
		{"tiny-stage0", tiny(0, 2, 1)}, {"tiny-stage1", tiny(1, 2, 1)}, {"tiny-stage2", tiny(2, 4, 2)}, {"tiny-stage3", tiny(3, 4, 1)},
		{"mlp-stage1-k1", mlp(1, 1, 256, 4)}, {"mlp-stage1-k4", mlp(1, 4, 256, 4)}, {"mlp-stage3-k2", mlp(3, 2, 256, 4)}, {"mlp-stage0", mlp(0, 1, 256, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Communication.Overlap = off()
			res, err := Replay(tc.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			topo, err := topology.Build(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			want := units.Duration(0)
			for _, task := range res.Schedule.Tasks {
				if !task.Kind.IsComm() {
					want += task.Dur
					continue
				}
				_, m := groupOf(res.N, res.K, task.Group, 0)
				cf, err := collectives.ClosedForm(topo, collectives.Spec{Op: opOf[task.Kind], Algo: collectives.Ring, Group: m, Bytes: units.Bytes(task.Bytes)})
				if err != nil {
					t.Fatal(err)
				}
				want += cf
			}
			if res.StepTime != want {
				t.Errorf("step %v (%d ps), want compute + Σ closed forms = %v (%d ps)", res.StepTime, res.StepTime, want, want)
			}
			for _, r := range res.Ranks {
				if sum := r.Compute + r.ExposedComm + r.Wait + r.Idle; sum != res.StepTime || r.Idle < 0 {
					t.Errorf("rank %d: compute+exposed+wait+idle = %v, step %v (idle %v)", r.Rank, sum, res.StepTime, r.Idle)
				}
			}
		})
	}
}

// Seed 002's communication table (bytes per GPU per step, N = 2): ZeRO-1 and
// ZeRO-2 move 1040 B (reduce-scatter 520 + post-optimizer all-gather 520),
// ZeRO-3 1560 B (forward all-gather 520, backward all-gather 520,
// reduce-scatter 520).
func TestSeed002CommunicationTable(t *testing.T) {
	want := map[int]map[Phase]int64{
		1: {PhaseBackwardRS: 520, PhasePostOptAG: 520},
		2: {PhaseBackwardRS: 520, PhasePostOptAG: 520},
		3: {PhaseForwardAG: 520, PhaseBackwardAG: 520, PhaseBackwardRS: 520},
	}
	total := map[int]int64{1: 1040, 2: 1040, 3: 1560}
	for stage := 1; stage <= 3; stage++ {
		res, err := Replay(tiny(stage, 2, 1), Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[Phase]int64{}
		for _, p := range res.Phases {
			got[p.Phase] = p.Logical
			// Exact: one rank of two sends half of each buffer.
			if p.Sent != p.Logical/2 {
				t.Errorf("stage %d %s: sent %d, want %d", stage, p.Phase, p.Sent, p.Logical/2)
			}
			// Wire: both ranks send over NVLink, nothing on the network.
			if p.Wire[topology.Intra] != p.Logical || p.Wire[topology.Inter] != 0 {
				t.Errorf("stage %d %s: wire %v, want [%d 0]", stage, p.Phase, p.Wire, p.Logical)
			}
		}
		if len(got) != len(want[stage]) {
			t.Errorf("stage %d: phases %v, want %v", stage, got, want[stage])
		}
		for ph, b := range want[stage] {
			if got[ph] != b {
				t.Errorf("stage %d %s: %d B, want %d", stage, ph, got[ph], b)
			}
		}
		if l, _ := res.PhaseTotal(); l != total[stage] {
			t.Errorf("stage %d: total %d B, want %d", stage, l, total[stage])
		}
	}
}
