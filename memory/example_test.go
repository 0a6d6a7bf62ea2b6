package memory_test

import (
	"fmt"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// Seed 000's hidden_dim=13 padding test: 1,417 parameters on 4 ranks are
// padded to 1,420 and each rank owns 355 elements.
func ExampleNewLayout() {
	h := int64(13)
	l, err := memory.NewLayout(memory.LayoutSpec{
		Params: []memory.Param{
			{Name: "fc1.weight", Numel: 4 * h * h}, {Name: "fc1.bias", Numel: 4 * h},
			{Name: "fc2.weight", Numel: 4 * h * h}, {Name: "fc2.bias", Numel: h},
		},
		Shards: 4,
	})
	if err != nil {
		panic(err)
	}
	start, end := l.Shard(0, 3)
	fmt.Println(l.Numel, l.Size, l.ShardElems(), l.PaddingElems(), start, end, l.RankNumel(3))
	// Output: 1417 1420 355 3 1065 1420 352
}

// Seed 002's tiny transformer at ZeRO-3 on 2 GPUs: 1,820 B at rest, and the
// FFN's 296-byte gather is the largest unit. The peak is the optimizer
// step's: in backward each unit's parameters are released as its
// reduce-scatter starts (the five units' gradients fit in DeepSpeed's
// three buckets in flight, memory.ReduceScatterLags, so none is reduced
// before the last backward ends).
func ExampleAnalyze() {
	s := &scenarios.Scenario{
		Name:        "seed002",
		Parallelism: scenarios.Parallelism{DP: 2, Stage: 3},
		Model: scenarios.Model{LayerList: []scenarios.Layer{
			{Name: "ln1", Params: 8}, {Name: "attn", Params: 64}, {Name: "ln2", Params: 8},
			{Name: "ffn", Params: 148}, {Name: "out", Params: 32},
		}},
		Cluster: scenarios.Cluster{Nodes: 1, GPUsPerNode: 2, GPU: "A100-80GB"},
	}
	if err := scenarios.Resolve(s); err != nil { // defaults, presets, validation
		panic(err)
	}
	r, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("at rest:", r.AtRest, "peak:", r.Peak, "in", r.PeakPhase)
	for u := range r.Units {
		fmt.Print(r.UnitGather(u), " ")
	}
	fmt.Println()
	// Output:
	// at rest: 1820 peak: 2600 in optimizer step
	// 16 128 16 296 64
}
