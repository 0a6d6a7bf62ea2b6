package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestGradsFreedEachStep holds the stage-0 gradients of one process with
// no data-parallel wrapper and one micro-step (stage0GradsFreed,
// scenarios.Scenario.GradsFreedEachStep) to their lifetime, derived by
// hand on two units of 600 and 400 bf16 parameters: nothing at rest; each
// unit's .grad (2 B a parameter, AccumulateGrad's, whatever reduce_dtype
// says: nothing reduces) made in its backward, the last unit's first
// (+800 B, then +1,200 B); all of it freed after the optimizer step
// (−2,000 B, its last gradient event). Where a buffer is kept (grad_accum
// > 1, dp 2, Megatron's and DeepSpeed's wrappers) it is at rest and no
// gradient event remains: 2,000 B for bf16, 4,000 B for Megatron's and
// DeepSpeed's fp32 buffers (grad_reduce_in_fp32, their presets).
func TestGradsFreedEachStep(t *testing.T) {
	type ev struct {
		ph   Phase
		unit int
		d    int64
	}
	freed := []ev{{PhaseBackward, 1, 800}, {PhaseBackward, 0, 1200}, {PhaseOptimizer, -1, -2000}}
	for _, c := range []struct {
		sets   []string
		rest   int64
		events []ev
	}{
		{nil, 0, freed},
		{[]string{"stack=torchtitan", "training.shard_dtype=bf16"}, 0, freed},
		{[]string{"stack=llm-foundry", "training.shard_dtype=bf16"}, 0, freed},
		{[]string{"stack=fms-fsdp", "training.shard_dtype=bf16"}, 0, freed},
		// An fp32 master with reduce_dtype fp32: still AccumulateGrad's
		// bf16 gradients, not an fp32 buffer.
		{[]string{"training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 0, freed},
		{[]string{"training.grad_accum=2"}, 2000, nil},
		{[]string{"parallelism.dp=2", "cluster.gpus_per_node=2"}, 2000, nil},
		{[]string{"stack=megatron", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 4000, nil},
		{[]string{"stack=deepspeed", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 4000, nil},
		// Megatron's wrapper whatever the padding rules asked: get_model
		// wraps in its DistributedDataParallel at every size (the
		// stack, not communication.padding, decides; GradsFreedEachStep).
		{[]string{"stack=megatron", "communication.padding=toy", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 4000, nil},
		// Megatron's param-and-grad buffer rules under another stack: that
		// buffer, kept (param_and_grad_buffer.py's grad_data), in bf16.
		{[]string{"communication.padding=megatron"}, 2000, nil},
	} {
		s, err := scenarios.Load("s.yaml", []byte(twoUnitsOneGPU), c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		r := mustAnalyze(t, s, Options{})
		g := r.Component(CompGrads)
		if g.AtRest != c.rest || g.Peak != 2000 && g.Peak != 4000 {
			t.Errorf("%v: grads at rest %d B, peak %d B; want %d at rest", c.sets, g.AtRest, g.Peak, c.rest)
		}
		var got []ev
		for _, e := range r.Timeline() {
			if e.Component == CompGrads {
				got = append(got, ev{e.Phase, e.Unit, e.Delta})
			}
		}
		if !slices.Equal(got, c.events) {
			t.Errorf("%v: gradient events %v, want %v", c.sets, got, c.events)
		}
	}
	// Seed 002's tables count 2 B of gradient a parameter at rest at every
	// stage, this one process too (16P at stage 0, ConventionSeed002):
	// 2,000 B, not convention zerosim's freed gradients.
	s, err := scenarios.Load("s.yaml", []byte(twoUnitsOneGPU), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := mustAnalyze(t, s, Options{Convention: ConventionSeed002}).Component(CompGrads); g.AtRest != 2000 {
		t.Errorf("convention seed002: grads at rest %d B, want 2000", g.AtRest)
	}
}
