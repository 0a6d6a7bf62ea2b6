package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestExpertParallelShapes replays expert-parallel layouts beyond the
// Mixtral acceptance case — with context parallelism, dp-fastest placement
// (the full simulation), stage 0, and one rank per expert shard group
// (ep = N, nothing to gather or reduce for the experts) — and holds the
// representative-node fast path to the full simulation.
func TestExpertParallelShapes(t *testing.T) {
	for _, doc := range []string{
		"version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 32, cp: 2, zero_stage: 3, ep: 8}\n",
		"version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB, placement: [dp, cp]}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 32, cp: 2, zero_stage: 2, ep: 4}\n",
		"version: 1\ncluster: {nodes: 4, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: qwen3-30b-a3b}\nparallelism: {dp: 32, zero_stage: 0, ep: 16}\n",
		"version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: deepseek-v2-lite}\nparallelism: {dp: 16, zero_stage: 3, ep: 16}\n",
	} {
		s, err := scenarios.Load("x.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		full, err := Replay(s, Options{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if fast.StepTime != full.StepTime || fast.StepTime <= fast.Compute {
			t.Errorf("%s: step %v (symmetric %v), full simulation %v, compute %v", doc, fast.StepTime, Symmetric(s), full.StepTime, fast.Compute)
		}
	}
}
