package scenarios

import "fmt"

// GradSync is training.grad_sync: which micro-steps reduce the gradients.
type GradSync string

const (
	// GradSyncEvery reduces every micro-step's gradients: the trainer runs
	// each micro-batch's backward with the gradient hooks on.
	GradSyncEvery GradSync = "every"
	// GradSyncLast reduces only the last micro-step's: the trainer wraps
	// the others in no_sync (DDP's, FSDP1's; FSDP2's
	// set_requires_gradient_sync(False)) or DeepSpeed's and Megatron's
	// equivalents below stage 2.
	GradSyncLast GradSync = "last"
)

// resolveGradSync checks training.grad_sync; unset it stays "" and
// GradSyncEvery decides by stack.
func (l *loader) resolveGradSync(s *Scenario) *Error {
	return enum(l, "training.grad_sync", &s.Training.GradSync, "", GradSyncEvery, GradSyncLast)
}

// GradSyncEvery reports whether every micro-step of s reduces its
// gradients. training.grad_sync decides, but for DeepSpeed's stages 2 and
// 3 (NoSyncRefused), which reduce every micro-step whatever it says;
// unset, the stack:
//
//   - stages 2 and 3: every. torchtitan never calls
//     set_requires_gradient_sync (below), Composer never enters no_sync
//     for an FSDP model (ddp_sync_context, below), fms-fsdp has no
//     accumulation at all, and DeepSpeed's ZeRO-2 and ZeRO-3 reduce every
//     micro-step (engine.py allreduce_gradients, lines 2902-2904 at
//     deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641:
//     "ZeRO stage >= 2 communicates during non gradient accumulation
//     boundaries as well"). The Hugging Face Trainer under FSDP does run
//     no_sync (`zerosim import accelerate` writes grad_sync: last there).
//   - torchtitan, llm-foundry and fms-fsdp at stage 0 (their StackLayout's
//     syncsEveryAtStage0): every. torchtitan's
//     train_step runs forward_backward_step on each micro-batch with no
//     no_sync or set_requires_gradient_sync anywhere in the repository
//     (torchtitan/train.py:547-595 at pytorch/torchtitan
//     238fa9953e4aec2a62582121564273d7cbb1e9f1), and its DDP is composable
//     replicate (torchtitan/models/llama3/infra/parallelize.py:363-372),
//     whose reducer all-reduces each bucket in every backward
//     (torch/csrc/distributed/c10d/reducer.cpp at pytorch/pytorch
//     ad78a7b33a496f60c756927a4fcd8e3e8fc1aee6). The stack's stage 0 of
//     llm-foundry is FSDP's NO_SHARD (StackLayout), and Composer's
//     ddp_sync_context returns at once for a model that is not
//     DistributedDataParallel (composer/distributed/dist_strategy.py at
//     mosaicml/composer e147a68331e11588048ef6f2bc8ec83004c6d00b), so
//     FSDP's post-backward hook all-reduces every micro-step; llm-foundry
//     without fsdp_config is Composer DDP, which the importer marks
//     grad_sync: last. fms-fsdp's stage 0 is NO_SHARD too, and it has no
//     accumulation at all (warnGradSync).
//   - any other stack, or none, at stages 0 and 1: last, as DeepSpeed
//     (engine.py allreduce_gradients, lines 2906-2913 at edaa7221: below
//     stage 2 only at the gradient-accumulation boundary) and Megatron
//     (forward_backward_no_pipelining runs every micro-batch but the last
//     under no_sync_func, megatron/core/pipeline_parallel/schedules.py
//     line 478 at d580efc6) reduce.
func (s *Scenario) GradSyncEvery() bool {
	switch s.Training.GradSync {
	case GradSyncEvery:
		return true
	case GradSyncLast:
		return s.NoSyncRefused()
	}
	if s.Parallelism.Stage >= 2 {
		return true
	}
	l, _ := s.StackLayout()
	return s.Parallelism.Stage == 0 && l.syncsEveryAtStage0
}

// DeepSpeed reports whether s runs DeepSpeed's engine: stack deepspeed,
// communication.boundary deepspeed (which the stack sets at every stage),
// or one of ZeRO++'s keys (DeepSpeed's only, scenarios/zeropp.go). The
// rules that hold for DeepSpeed whatever the stage (master_dtype none's
// refusal) and for its stages 2 and 3 (NoSyncRefused) both ask this.
func (s *Scenario) DeepSpeed() bool {
	return s.Stack == "deepspeed" || s.Communication.Boundary == BoundaryDeepSpeed || s.Communication.ZeroPP()
}

// NoSyncRefused reports whether s runs DeepSpeed's ZeRO-2 or ZeRO-3
// (Scenario.DeepSpeed), which has no no_sync: engine.no_sync asserts "no_sync
// context manager is incompatible with gradient partitioning logic of ZeRO
// stage" at stage 2 and above (deepspeed/runtime/engine.py lines 3041-3042
// at deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641), and
// Accelerate's no_sync passes a nullcontext for DeepSpeed at stage 2 and
// above (src/accelerate/accelerator.py no_sync at huggingface/accelerate
// 16cb6eb8). There every micro-step reduces whatever training.grad_sync
// says (warnGradSync).
func (s *Scenario) NoSyncRefused() bool {
	return s.Parallelism.Stage >= 2 && s.DeepSpeed()
}

// HoldsUnshardedGrads reports whether the rank keeps its whole unsharded
// gradient from one micro-step to the next: training.grad_sync last at
// stage 2 or 3 with grad_accum > 1, FSDP's no_sync. FSDP1's
// _post_backward_hook returns before the reduce-scatter when not
// _sync_gradients and _finalize_params keeps ".grad [as] the unsharded
// gradient from prior no_sync() iterations" (torch/distributed/fsdp/
// _runtime_utils.py at pytorch/pytorch
// 00ae0bc91ac2c1718d1baa193d9d299e2b82776c), in the dtype the backward
// computed it in, param_dtype under mixed precision; FSDP2's post_backward
// with reduce_grads false (set_requires_gradient_sync(False)) keeps each
// parameter's unsharded gradient, upcast to the mixed-precision policy's
// reduce_dtype when that differs (FSDPParamGroup.post_backward and
// FSDPParam.to_accumulated_grad_if_needed,
// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at
// 002a76fbfea0ac0f199e4b8e2a0691074796c908 and _fsdp_param.py at
// 010ae4a89516fa3be548ab16dff711414ec12d0b). At stages 0
// and 1 the accumulated gradients live in the gradient buffers those
// stages keep anyway.
func (s *Scenario) HoldsUnshardedGrads() bool {
	return s.Parallelism.Stage >= 2 && s.Training.GradAccum > 1 && !s.GradSyncEvery()
}

// warnGradSync warns when training.grad_sync: last asks for what zerosim
// does not model: DeepSpeed's stages 2 and 3, which have no no_sync
// (NoSyncRefused; its opt-in coalesce_grad_reduction, engine.py lines
// 3052-3112 at edaa7221, which reduces once after the block's last
// backward, is not modelled), and when gradient accumulation is asked of
// fms-fsdp, whose train loop steps the optimizer after every batch
// (fms_fsdp/utils/train_utils.py train at foundation-model-stack/fms-fsdp
// 078c29e74593981ee1453fe0feca1e7ba5fa8aaf: zero_grad, forward, backward,
// clip_grad_norm_, step per batch).
func (l *loader) warnGradSync(s *Scenario) {
	t := &s.Training
	if t.GradSync == GradSyncLast && s.NoSyncRefused() {
		l.warn(s, "training.grad_sync", fmt.Sprintf("grad_sync: last has no effect under DeepSpeed's ZeRO stage %d: its engine.no_sync asserts at stages 2 and 3 (deepspeed/runtime/engine.py at edaa722), so every micro-step reduce-scatters; the opt-in coalesce_grad_reduction is not modelled (delete the key)", s.Parallelism.Stage))
	}
	if s.NoGradAccum() && t.GradAccum > 1 {
		l.warn(s, "training.grad_accum", fmt.Sprintf("grad_accum=%d: fms-fsdp 078c29e steps the optimizer after every batch (fms_fsdp/utils/train_utils.py train), no gradient accumulation; modelled as asked, but no setting of the stack reproduces it", t.GradAccum))
	}
}

// NoAccumFrom is where fms-fsdp's train loop steps the optimizer after
// every batch.
const NoAccumFrom = "fms_fsdp/utils/train_utils.py train at fms-fsdp 078c29e"

// NoGradAccum reports whether the trainer of s's stack has no gradient
// accumulation: fms-fsdp (NoAccumFrom: zero_grad, forward, backward,
// clip_grad_norm_, step per batch).
func (s *Scenario) NoGradAccum() bool {
	l, _ := s.StackLayout()
	return l.noAccum
}

// GradsFreedEachStep reports whether s, at ZeRO stage 0, keeps no gradient
// between steps: one micro-step (grad_accum 1) under a wrapper that keeps
// no gradient buffer around the model, or none. Each parameter's .grad is
// then made by its AccumulateGrad in the backward, unit by unit, and freed
// when the optimizer's zero_grad sets it to None (set_to_none=True,
// torch.optim's default since torch 2.0) once the step is over
// (torchtune's full_finetune_single_device calls
// self._optimizer.zero_grad(set_to_none=True) after every step,
// recipes/full_finetune_single_device.py lines 715-716 at pytorch/torchtune
// 1814feb17a9038e1a8053ce93111bd26774a8db6), or before the next forward
// (torchtitan, Composer, fms-fsdp: below), which leaves the same peak.
// Three cases:
//
//   - One process (dp·cp = 1) under any stack but Megatron and DeepSpeed,
//     which wraps nothing there. none: a plain torch.optim loop
//     (torchtune, KempnerForge: no mesh and no FSDP at world size 1,
//     kempnerforge/distributed/setup.py at 01b461a78f57). torchtitan:
//     parallelize_llama applies FSDP only when fsdp_enabled (dp_shard > 1
//     or cp > 1) and DDP only when dp_replicate > 1
//     (torchtitan/models/llama3/infra/parallelize.py lines 125-153 and
//     torchtitan/distributed/parallel_dims.py lines 318-335 at
//     pytorch/torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1): the
//     plain model; train_step calls self.optimizers.zero_grad() first
//     (torchtitan/train.py line 550). llm-foundry: Composer wraps DDP only
//     when dist.get_world_size() > 1 (composer/trainer/trainer.py line
//     1972 at mosaicml/composer e147a68331e11588048ef6f2bc8ec83004c6d00b);
//     with fsdp_config, FSDP1 clamps its strategy to NO_SHARD at world size
//     1 (_init_core_state, torch/distributed/fsdp/_init_utils.py at
//     pytorch/pytorch 39ec502db40696605fd91001e5a0afa23ed62f20): the next
//     case.
//   - FSDP1's NO_SHARD at any data-parallel size (FSDP1NoShard): FSDP1
//     keeps no gradient buffer. Autograd makes each unit's flat_param.grad
//     in its backward; the unit's _post_backward_hook all-reduces that very
//     tensor in place (_reduce_grad_no_shard: dist.all_reduce(
//     flat_param.grad), torch/distributed/fsdp/_runtime_utils.py at
//     pytorch/pytorch 3ade90a6aaa939cd6238e314c321b9f920db1471, the
//     NO_SHARD branch of _post_backward_hook: "If using NO_SHARD, then the
//     .grad attribute is the reduced unsharded gradient"), and the trainer
//     drops it: Composer calls optimizer.zero_grad(set_to_none=True) before
//     each batch (composer/trainer/trainer.py line 3050 at e147a683),
//     fms-fsdp optimizer.zero_grad() (fms_fsdp/utils/train_utils.py line 87
//     at foundation-model-stack/fms-fsdp
//     078c29e74593981ee1453fe0feca1e7ba5fa8aaf, torch>=2.2 by its
//     requirements.txt, so set_to_none).
//   - DeepSpeed (Scenario.DeepSpeed) at any data-parallel size: its
//     stage-0 engine all-reduces the parameters' own .grad after the
//     backward, through flattened copies of 5e8-element buckets it copies
//     back (buffered_allreduce_fallback, allreduce_and_copy,
//     deepspeed/runtime/engine.py at deepspeedai/DeepSpeed
//     edaa7221267243c7be7fb49c5d5f5c4fb97b4641; the copies are not
//     modelled), and keeps no buffer. Under bf16 or fp16 the optimizer
//     wrapper is FP16_Optimizer for FusedAdam (DDP_BFLOAT16 or FP16,
//     engine.py lines 2017-2019 and 2065-2067, _configure_fp16_optimizer
//     lines 2279-2334), whose step flattens the 16-bit .grad into an fp32
//     copy and sets each .grad to None before the update
//     (deepspeed/runtime/fp16/fused_optimizer.py lines 284-313;
//     memory's step temporaries count the copy), else
//     FP16_UnfusedOptimizer, which copies each .grad to its fp32 master's
//     (fp16/unfused_optimizer.py lines 215-220); the engine then zeroes
//     the optimizer's grads, and its own zero_grad sets every .grad to
//     None (_take_model_step, engine.py lines 3360-3369; zero_grad line
//     3316).
//
// Not under Megatron (stack: megatron, or its param-and-grad buffer's
// padding): get_model wraps every model chunk in Megatron's
// DistributedDataParallel whatever the data-parallel size
// (megatron/training/training.py line 986, wrap_with_ddp=True, at
// NVIDIA/Megatron-LM d580efc68a9f0dbf1945f834f6f6200cd01d3343), whose
// ParamAndGradBuffer allocates grad_data once and keeps it
// (megatron/core/distributed/param_and_grad_buffer.py line 628). Not under
// torch's DDP above one process (torchtitan's replicate, Composer without
// fsdp_config, Accelerate's MULTI_GPU),
// whose Reducer keeps its bucket buffers for the run
// (torch/csrc/distributed/c10d/reducer.cpp at pytorch/pytorch
// ad78a7b33a496f60c756927a4fcd8e3e8fc1aee6).
// With grad_accum > 1, .grad made by the first micro-step is kept through
// the others, and the last micro-step, which the memory timeline follows,
// starts with it.
func (s *Scenario) GradsFreedEachStep() bool {
	if s.Parallelism.Stage != 0 || s.Training.GradAccum > 1 {
		return false
	}
	if s.DeepSpeed() || s.FSDP1NoShard() {
		return true
	}
	return s.N() == 1 && s.Stack != "megatron" && s.Communication.Padding != PaddingMegatron
}

// TorchDDPGradCopies reports whether s, at ZeRO stage 0, runs PyTorch's DistributedDataParallel above one process
// with its default gradient_as_bucket_view=False, which keeps two copies of
// the gradients during the backward: the Reducer's bucket buffers, made
// once and kept for the run (bucket.gradients), and each parameter's .grad,
// which AccumulateGrad makes in the unit's backward and the Reducer copies
// into its bucket view (mark_variable_ready_dense: bucket_view.copy_(grad);
// only under gradient_as_bucket_view does it point grad at the bucket
// view), copying the reduced bucket back (copy_bucket_to_grad:
// grad.copy_(bucket_view)), torch/csrc/distributed/c10d/reducer.cpp at
// pytorch/pytorch ad78a7b33a496f60c756927a4fcd8e3e8fc1aee6. The trainer's
// zero_grad (set_to_none, torch.optim's default since torch 2.0) frees
// .grad after the step (GradsFreedEachStep's citations); the buckets stay.
// The stacks, at dp·cp > 1 and under communication.boundary reshard (no
// other boundary is torch DDP; torchtitan's preset fsdp2 boundary is
// FSDP2's, not applied at stage 0), each leaving gradient_as_bucket_view at
// its default
// (torch/nn/parallel/distributed.py DistributedDataParallel.__init__,
// gradient_as_bucket_view=False, passed on to dist.Reducer by
// _ddp_init_helper, at pytorch/pytorch
// 0028a164b2c000670e756008243689d9233e1a05):
//
//   - torchtitan: apply_ddp calls replicate(model, device_mesh=dp_mesh,
//     bucket_cap_mb=100) (torchtitan/models/llama3/infra/parallelize.py
//     lines 363-374 at pytorch/torchtitan
//     238fa9953e4aec2a62582121564273d7cbb1e9f1), torch's composable
//     replicate (imported from torch.distributed._composable.replicate,
//     line 13), which builds a DistributedDataParallel from those kwargs.
//   - llm-foundry: Composer's prepare_ddp_module builds
//     DistributedDataParallel(module, find_unused_parameters=...)
//     (composer/distributed/dist_strategy.py line 132 at mosaicml/composer
//     e147a68331e11588048ef6f2bc8ec83004c6d00b).
//
// Not yet without a stack (the generic model; Accelerate's MULTI_GPU, which
// `zerosim import accelerate` writes without one, also leaves
// DistributedDataParallelKwargs' gradient_as_bucket_view=False).
// Not Megatron (its own DistributedDataParallel, whose param.main_grad is a
// view of one ParamAndGradBuffer: GradsFreedEachStep), DeepSpeed
// (GradsFreedEachStep) or fms-fsdp (NO_SHARD: FSDP1NoShard). With
// grad_accum > 1, .grad made by the first micro-step accumulates under
// no_sync (DistributedDataParallel.no_sync, torch/nn/parallel/distributed.py)
// and the last micro-step, which the memory timeline follows, starts with
// it beside the buckets: two buffers for the whole micro-step.
//
// Both copies are in the parameters' dtype: initialize_buckets allocates
// each bucket with options.dtype(variable.dtype()) and check_grad_layout
// refuses a .grad of another dtype (reducer.cpp at ad78a7b3), unless DDP's
// own mixed_precision argument sets mixed_precision_param_dtype_ (buckets
// in param_dtype, .grad upcast to fp32 by _reducer_allreduce_and_upcast_hook,
// torch/distributed/algorithms/ddp_comm_hooks/mixed_precision_hooks.py at
// pytorch/pytorch 106dd7e7031f7d6c41da0d691f64e5014477b41e), which neither
// stack passes. Both stacks' DDP trains fp32 parameters under
// torch.autocast (torchtitan's maybe_enable_amp, torchtitan/distributed/
// utils.py lines 243-263 at 238fa9953e4aec2a62582121564273d7cbb1e9f1;
// Composer's amp_bf16, the llm-foundry importer's readPrecision), which a
// scenario says as param_dtype fp32 with training.autocast
// (scenarios/autocast.go): both copies fp32 then (memory's GradBytes 4).
func (s *Scenario) TorchDDPGradCopies() bool {
	if s.Parallelism.Stage != 0 || s.N() <= 1 {
		return false
	}
	if s.Communication.Padding == PaddingMegatron || s.DeepSpeed() {
		return false
	}
	switch b := s.Communication.Boundary; s.Stack {
	case "torchtitan":
		// Its preset's fsdp2 boundary is FSDP2's, which parallelize
		// applies only when fsdp_enabled; at stage 0 it replicates.
		// cp > 1 enables FSDP (parallel_dims.py lines 318-335 at
		// 238fa995: GradsFreedEachStep's citation).
		return b != BoundaryFSDP1 && s.Parallelism.CP <= 1
	case "llm-foundry":
		return b == BoundaryReshard || b == ""
	}
	// No stack is zerosim's generic model (docs/memory-model.md), whose
	// stage 0 keeps the one buffer: left as it was, though Accelerate's
	// MULTI_GPU import and a plain DDP loop would hold both copies.
	return false
}

// FSDP1NoShard reports whether s runs FSDP1's NO_SHARD: ZeRO stage 0 under
// communication.boundary fsdp1, PyTorch FSDP1 wrapping the model. The
// llm-foundry and fms-fsdp presets set it at every stage (their stage 0 is
// NO_SHARD: StackLayout; fms-fsdp's sharding_strategy "ddp" is
// ShardingStrategy.NO_SHARD, fms_fsdp/utils/train_utils.py get_policies at
// 078c29e), `zerosim import accelerate` writes it for fsdp_sharding_strategy
// NO_SHARD, and `zerosim import llm-foundry` writes boundary reshard for a
// run without fsdp_config, which Composer trains with torch DDP.
func (s *Scenario) FSDP1NoShard() bool {
	return s.Parallelism.Stage == 0 && s.Communication.Boundary == BoundaryFSDP1
}
