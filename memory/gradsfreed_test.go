package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestGradsFreedEachStep holds the stage-0 gradients that no wrapper
// keeps in a buffer, at one micro-step (stage0GradsFreed,
// scenarios.Scenario.GradsFreedEachStep), to their lifetime, derived by
// hand on two units of 600 and 400 bf16 parameters: nothing at rest; each
// unit's .grad (2 B a parameter, AccumulateGrad's) made in its backward,
// the last unit's first (+800 B, then +1,200 B); all of it freed after the
// optimizer step (−2,000 B, its last gradient event). That is one process
// without a data-parallel wrapper (whatever reduce_dtype says: nothing
// reduces), FSDP1's NO_SHARD at any dp (flat_param.grad all-reduced in
// place; under reduce_dtype fp32 cast to fp32 before it and kept so:
// +1,600, +2,400, −4,000 B) and DeepSpeed's stage 0 at any dp (its step
// drops .grad; reduce_dtype fp32 is its flattened copy's, not .grad's).
// Where a buffer is kept (grad_accum > 1, no stack at dp 2, Megatron's DDP
// at any dp) it is at rest and no gradient event remains: 2,000 B for
// bf16, 4,000 B for fp32 buffers (grad_reduce_in_fp32). Torch DDP at dp 2
// (torchtitan's replicate and Composer without fsdp_config, which the
// importer gives boundary reshard: scenarios.Scenario.TorchDDPGradCopies)
// keeps its buckets at rest and makes and frees .grad beside them as
// above; with grad_accum > 1 both are at rest.
func TestGradsFreedEachStep(t *testing.T) {
	type ev struct {
		ph   Phase
		unit int
		d    int64
	}
	freed := []ev{{PhaseBackward, 1, 800}, {PhaseBackward, 0, 1200}, {PhaseOptimizer, -1, -2000}}
	freed32 := []ev{{PhaseBackward, 1, 1600}, {PhaseBackward, 0, 2400}, {PhaseOptimizer, -1, -4000}}
	dp2 := []string{"parallelism.dp=2", "cluster.gpus_per_node=2"}
	at2 := func(sets ...string) []string { return append(slices.Clone(dp2), sets...) }
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
		// No stack above one process: the generic model's one buffer.
		{[]string{"parallelism.dp=2", "cluster.gpus_per_node=2"}, 2000, nil},
		// torchtitan's DDP above one process: the Reducer's buckets, 1,000
		// bf16 parameters = 2,000 B, kept, and beside them each unit's
		// .grad (800 B for unit 1, 1,200 B for unit 0) from its backward
		// until zero_grad after the step (TorchDDPGradCopies): peak 4,000 B.
		// With gradient accumulation .grad, accumulated under no_sync, is
		// there from the last micro-step's start beside the buckets.
		{at2("stack=torchtitan", "training.shard_dtype=bf16", "training.grad_accum=2"), 4000, nil},
		{[]string{"stack=megatron", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 4000, nil},
		{[]string{"stack=deepspeed", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 0, freed},
		{at2("stack=deepspeed", "training.master_dtype=fp32", "training.reduce_dtype=fp32"), 0, freed},
		{at2("stack=deepspeed", "training.master_dtype=fp32"), 0, freed},
		{at2("stack=deepspeed", "training.master_dtype=fp32", "training.grad_accum=2"), 2000, nil},
		{at2("stack=llm-foundry", "training.shard_dtype=bf16"), 0, freed},
		{at2("stack=fms-fsdp", "training.shard_dtype=bf16"), 0, freed},
		{at2("stack=llm-foundry", "training.master_dtype=fp32", "training.reduce_dtype=fp32"), 0, freed32},
		{[]string{"stack=llm-foundry", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 0, freed32},
		{at2("stack=llm-foundry", "training.shard_dtype=bf16", "training.grad_accum=2"), 2000, nil},
		// FSDP1 under no_sync: .grad all the same (grad_accum 1).
		{at2("stack=llm-foundry", "training.shard_dtype=bf16", "training.grad_sync=last"), 0, freed},
		// Composer's DDP (no fsdp_config: the importer's boundary reshard).
		{at2("stack=llm-foundry", "training.shard_dtype=bf16", "communication.boundary=reshard"), 2000, freed},
		{at2("stack=llm-foundry", "training.shard_dtype=bf16", "communication.boundary=reshard", "training.grad_accum=2"), 4000, nil},
		// Torch DDP under reduce_dtype fp32 (gaps29 s29): torchtitan's DDP
		// and Composer's run torch.autocast over fp32 parameters
		// (maybe_enable_amp, torchtitan/distributed/utils.py lines 243-263
		// at 238fa9953e4a; Composer's amp_bf16 precision context, the
		// importer's readPrecision), so AccumulateGrad's .grad is fp32, and
		// the Reducer makes each bucket in its parameters' dtype
		// (initialize_buckets: options.dtype(variable.dtype()), unless
		// DDP's own mixed_precision set mixed_precision_param_dtype_,
		// which neither passes) and refuses a .grad of another dtype
		// (check_grad_layout), torch/csrc/distributed/c10d/reducer.cpp at
		// ad78a7b33a49: both copies 4 B a parameter, 4,000 B of buckets at
		// rest and .grad +1,600, +2,400, −4,000 B; with grad_accum 2
		// both at rest, 8,000 B.
		{at2("stack=torchtitan", "training.master_dtype=fp32", "training.reduce_dtype=fp32"), 4000, freed32},
		{at2("stack=torchtitan", "training.master_dtype=fp32", "training.reduce_dtype=fp32", "training.grad_accum=2"), 8000, nil},
		{at2("stack=llm-foundry", "communication.boundary=reshard", "training.master_dtype=fp32", "training.reduce_dtype=fp32"), 4000, freed32},
		{at2("stack=llm-foundry", "communication.boundary=reshard", "training.master_dtype=fp32", "training.reduce_dtype=fp32", "training.grad_accum=2"), 8000, nil},
		// torchtitan under FSDP1's boundary is NO_SHARD, not DDP: .grad only.
		{at2("stack=torchtitan", "training.shard_dtype=bf16", "communication.boundary=fsdp1"), 0, freed},
		{at2("stack=torchtitan", "training.shard_dtype=bf16"), 2000, freed},
		// cp > 1 makes torchtitan apply FSDP, not DDP: the one buffer.
		{[]string{"parallelism.cp=2", "cluster.gpus_per_node=2", "stack=torchtitan", "training.shard_dtype=bf16"}, 2000, nil},
		{at2("stack=megatron", "training.master_dtype=fp32", "training.reduce_dtype=fp32"), 4000, nil},
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
		// The peak: the buffer and all the freed gradients (the last
		// event frees them).
		want := c.rest
		if n := len(c.events); n > 0 {
			want -= c.events[n-1].d
		}
		if g.AtRest != c.rest || g.Peak != want {
			t.Errorf("%v: grads at rest %d B, peak %d B; want %d, %d", c.sets, g.AtRest, g.Peak, c.rest, want)
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

// TestDeepSpeedStage0StepTemp holds the optimizer temporaries of
// DeepSpeed's stage 0 (dsFlatGradCopy) on the two units of
// TestGradsFreedEachStep, bf16 with an fp32 master, at dp 2: with
// FusedAdam (the deepspeed preset's optimizer_impl fused) FP16_Optimizer's
// step holds the 1,000 per-parameter fp32 copies and their flattened
// concatenation at once, 2 × 4,000 B, beside the 2,000 B of bf16 .grad:
// the step peaks at the rest + 10,000 B. Any other optimizer
// (FP16_UnfusedOptimizer) and every other stage keep one grad.float()
// copy: 4,000 B at stage 0, the rank's 500-element shard's 2,000 B at
// stage 1.
func TestDeepSpeedStage0StepTemp(t *testing.T) {
	for _, c := range []struct {
		sets       []string
		temp, step int64
	}{
		{nil, 8000, 10000},
		{[]string{"training.optimizer_impl=foreach"}, 4000, 6000},
		{[]string{"parallelism.zero_stage=1"}, 2000, 0},
	} {
		sets := append([]string{"parallelism.dp=2", "cluster.gpus_per_node=2", "stack=deepspeed", "training.master_dtype=fp32"}, c.sets...)
		s, err := scenarios.Load("s.yaml", []byte(twoUnitsOneGPU), sets)
		if err != nil {
			t.Fatalf("%v: %v", sets, err)
		}
		r := mustAnalyze(t, s, Options{})
		if got := r.Component(CompStepTemp).Peak; got != c.temp {
			t.Errorf("%v: optimizer temporaries %d B, want %d", sets, got, c.temp)
		}
		if c.step == 0 {
			continue
		}
		i := slices.IndexFunc(r.PhasePeaks, func(p PhasePeak) bool { return p.Phase == PhaseOptimizer })
		if i < 0 {
			t.Fatalf("%v: no optimizer phase among the peaks %v", sets, r.PhasePeaks)
		}
		if p := r.PhasePeaks[i]; p.Bytes-r.AtRest != c.step {
			t.Errorf("%v: optimizer step peaks %d B above the rest, want %d", sets, p.Bytes-r.AtRest, c.step)
		}
	}
}
