package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/memory"
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

// TestTaskBoundFSDPStage2Regathers holds countTasks' bound to the schedule's
// own regather rule (regathersAt) on four layers of one bucket each over 2
// GPUs, a micro-steps: each micro-step has a forward and a backward per
// layer (8a), the step reduce-scatters every bucket once under no_sync
// (a times where every micro-step reduces), gathers it after the
// optimizer (4) and runs the optimizer (1). FSDP1 SHARD_GRAD_OP regathers
// only after a reducing backward, never under no_sync; FSDP2 after every
// backward (4(a−1) either way). The bound counts a post-optimizer gather
// per reducing micro-step and 8 tasks of slack. Counting FSDP1's
// regathers under no_sync refused default.yaml at grad_accum 4096 with a
// bound of 1,667,417 tasks (the schedule has 287,074).
func TestTaskBoundFSDPStage2Regathers(t *testing.T) {
	const a = 64
	for _, c := range []struct {
		boundary, sync string
		tasks, bound   int64
	}{
		{"fsdp1", "last", 8*a + 4 + 4 + 1, 8*a + 2*4 + 8},
		{"fsdp1", "every", 8*a + 4*a + 4 + 4*(a-1) + 1, 8*a + (2*a+(a-1))*4 + 8},
		{"fsdp2", "last", 8*a + 4 + 4 + 4*(a-1) + 1, 8*a + (2+(a-1))*4 + 8},
		{"fsdp2", "every", 8*a + 4*a + 4 + 4*(a-1) + 1, 8*a + (2*a+(a-1))*4 + 8},
	} {
		t.Run(c.boundary+" "+c.sync, func(t *testing.T) {
			s := fourLayers(t, "parallelism.zero_stage=2", "communication.boundary="+c.boundary, "training.grad_sync="+c.sync,
				fmt.Sprintf("training.grad_accum=%d", a), "communication.bucket_size=200MB")
			mrep, err := memory.Analyze(s, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			if n, b := int64(len(sc.Tasks)), countTasks(s, mrep.Groups).bound(); n != c.tasks || b != c.bound {
				t.Errorf("%d tasks, bound %d; want %d and %d", n, b, c.tasks, c.bound)
			}
		})
	}
	data, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", data, []string{"parallelism.zero_stage=2", "communication.boundary=fsdp1",
		"training.grad_accum=4096", "training.grad_sync=last"})
	if err != nil {
		t.Fatal(err)
	}
	mrep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := countTasks(s, mrep.Groups).bound(); b > MaxTasks {
		t.Errorf("default.yaml, FSDP1 stage 2, grad_accum 4096 under no_sync: bound %d tasks, more than the %d a replay allows", b, MaxTasks)
	}
}
