package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestTaskBoundEveryMicroStep holds countTasks' bound above the schedule's
// tasks where stage 0 all-reduces every micro-step (torchtitan's DDP,
// llm-foundry's NO_SHARD): a bound that counted one reduction per step let
// checkSize admit a stage-0 schedule grad_accum times its size (default,
// 1MB buckets, grad_accum 1024: 13,872,129 tasks built before the exact
// count refused them).
func TestTaskBoundEveryMicroStep(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"torchtitan", []string{"stack=torchtitan"}},
		{"llm-foundry", []string{"stack=llm-foundry"}},
		{"no stack", nil},
		{"deepspeed", []string{"stack=deepspeed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, _ := scenarios.Example("seed002-tiny")
			sets := append([]string{"parallelism.zero_stage=0", "communication.bucket_size=1B", "training.grad_accum=8"}, c.sets...)
			s, err := scenarios.Load("f.yaml", data, sets)
			if err != nil {
				t.Fatal(err)
			}
			checkTaskBound(t, s)
		})
	}
}
