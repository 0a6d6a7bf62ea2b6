package zero

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// cluster returns a GPT-like model of layers equal blocks on nodes × gpn
// GPUs (NVLink 450 GB/s inside, 50 GB/s per GPU between nodes).
func cluster(nodes, gpn, stage, k, layers int) *scenarios.Scenario {
	s := &scenarios.Scenario{Version: 1, Name: fmt.Sprintf("%dx%d", nodes, gpn)}
	s.Cluster = scenarios.Cluster{Nodes: nodes, GPUsPerNode: gpn, PeakBF16: 989e12, HBMBandwidth: 3350e9,
		Intra: scenarios.Link{Bandwidth: 450e9, Latency: 500 * units.Nanosecond},
		Inter: scenarios.Link{Bandwidth: 50e9, Latency: 2 * units.Microsecond}}
	s.Model = scenarios.Model{Kind: "transformer", Hidden: 1024, SeqLen: 2048, Heads: 16, Layers: int64(layers)}
	s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: "embedding", Params: 50257 * 1024})
	for i := 0; i < layers; i++ {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: fmt.Sprintf("block.%d", i), Params: 12*1024*1024 + 13*1024})
	}
	s.Parallelism = scenarios.Parallelism{DP: nodes * gpn, CP: 1, Stage: stage, K: k}
	s.Training = scenarios.Training{MicroBatch: 1, MFU: 0.5}
	s.Communication = scenarios.Communication{BucketSize: 40e6, Algorithm: "auto", MaxInflightAllGathers: 2}
	return s
}

// comparable strips what legitimately differs between the full run and the
// fast path: the flag itself and the number of engine events.
func comparable(r *Result) Result {
	c := *r
	c.Symmetric, c.Events = false, 0
	return c
}

// The symmetric fast path gives exactly the full simulation's results, to
// the picosecond and the byte, for stages 0–3 and K = 1 and 4.
func TestSymmetricFastPathEqualsFullSimulation(t *testing.T) {
	type sc struct {
		name string
		s    func(stage, k int) *scenarios.Scenario
	}
	cases := []sc{
		{"seed000", func(stage, k int) *scenarios.Scenario { return mlp(stage, k, 256, 4) }},
		{"512gpu", func(stage, k int) *scenarios.Scenario { return cluster(64, 8, stage, k, 4) }},
	}
	for _, c := range cases {
		for stage := 0; stage <= 3; stage++ {
			for _, k := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/stage%d/k%d", c.name, stage, k), func(t *testing.T) {
					s := c.s(stage, k)
					if !Symmetric(s) {
						t.Fatal("scenario not symmetric")
					}
					fast, err := Replay(s, Options{})
					if err != nil {
						t.Fatal(err)
					}
					full, err := Replay(s, Options{Full: true})
					if err != nil {
						t.Fatal(err)
					}
					if !fast.Symmetric || full.Symmetric {
						t.Fatalf("Symmetric flags: fast %v, full %v", fast.Symmetric, full.Symmetric)
					}
					if fast.Events >= full.Events {
						t.Errorf("fast path ran %d events, full %d", fast.Events, full.Events)
					}
					a, b := comparable(fast), comparable(full)
					if !reflect.DeepEqual(a, b) {
						t.Errorf("fast path differs: step %v vs %v", fast.StepTime, full.StepTime)
						if !reflect.DeepEqual(a.Ranks, b.Ranks) {
							t.Errorf("ranks differ: %+v vs %+v", a.Ranks[0], b.Ranks[0])
						}
						if !reflect.DeepEqual(a.Phases, b.Phases) {
							t.Errorf("phases differ: %+v vs %+v", a.Phases, b.Phases)
						}
						if !reflect.DeepEqual(a.Collectives, b.Collectives) {
							t.Errorf("collectives differ")
						}
					}
				})
			}
		}
	}
}

// A scenario with a slow GPU or a degraded link is not symmetric; the
// straggler is named.
func TestStraggler(t *testing.T) {
	s := mlp(1, 1, 256, 4)
	s.Cluster.GPUOverrides = []scenarios.GPUOverride{{Rank: 5, Speed: 0.5}}
	if Symmetric(s) {
		t.Fatal("slow GPU scenario reported symmetric")
	}
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Straggler == nil || res.Straggler.Rank != 5 {
		t.Fatalf("straggler %+v, want rank 5", res.Straggler)
	}
	base, err := Replay(mlp(1, 1, 256, 4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.StepTime <= base.StepTime {
		t.Errorf("slow GPU step %v not slower than %v", res.StepTime, base.StepTime)
	}
	// Everyone waits for rank 5 at the first gradient reduce-scatter.
	for _, r := range res.Ranks {
		if r.Rank != 5 && r.Wait == 0 {
			t.Errorf("rank %d never waited for the straggler", r.Rank)
		}
	}
	s2 := mlp(1, 1, 256, 4)
	s2.Cluster.LinkOverrides = []scenarios.LinkOverride{{Node: 2, Class: "inter", Bandwidth: 5e9}}
	deg, err := Replay(s2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if deg.StepTime <= base.StepTime {
		t.Errorf("degraded link step %v not slower than %v", deg.StepTime, base.StepTime)
	}
}
