package scenarios

import "fmt"

// Autocast is training.autocast: the dtype torch.autocast runs the matmuls
// of a model whose parameters are fp32 (training.param_dtype: fp32) in,
// bf16 or fp16; unset (or none): no autocast.
//
// This is the data-parallel recipe of HF Trainer and Accelerate MULTI_GPU
// under mixed_precision bf16, torchtitan's DDP (maybe_enable_amp when
// dp_shard·cp = 1, torchtitan/distributed/utils.py lines 243-263 at
// pytorch/torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1) and
// Composer's amp_bf16 under DDP (llm-foundry): the model keeps its fp32
// parameters, which the optimizer steps themselves (no master copy), their
// fp32 gradients and fp32 Adam states, and autocast casts each weight to
// the autocast dtype as an op uses it. Its cache keeps the cast of every
// fp32 leaf that requires a gradient (cached_cast: "cache lower_precision_fp
// casts of fp32 model weights (leaves)", can_try_cache requires
// arg.requires_grad() && arg.is_leaf() && !arg.is_view(),
// aten/src/ATen/autocast_mode.cpp at pytorch/pytorch
// 008ec6b1840c94ff6d0f685bc10fbf585167c673) until the outermost autocast
// region exits (autocast.__exit__: "Drop the cache when we exit to a
// nesting level that's outside any instance of autocast",
// torch.clear_autocast_cache(), torch/amp/autocast_mode.py at
// 00021b139cd20c11bfa24ca91ed4998bec3fb743), the end of the forward and
// its loss; autograd keeps the casts a matmul saved for backward past it.
// The cache tests the tensor's requires_grad flag, not the grad mode, so
// reentrant checkpointing's no_grad forward caches the casts too. A
// checkpointed block's backward re-enters autocast to recompute
// (torch/utils/checkpoint.py at 0008d771a4015b0b43165ea470653b52e92b2148:
// CheckpointFunction.backward runs the function under torch.enable_grad()
// and device_autocast_ctx, the non-reentrant recompute_fn under
// device_autocast_ctx), outside the forward's autocast, so it casts its
// weights anew and the casts live, saved by the recomputed graph, to the
// block's backward. memory/timeline.go (UnitInfo.Casts) and
// zero/compute.go (autocastCastBytes) model both.
//
// Which parameters are cast: the weights of the ops on autocast's
// lower-precision list (linear, matmul, mm, addmm among them:
// AT_FORALL_LOWER_PRECISION_FP, which autocast_mode.cpp at 008ec6b1
// registers with the lower_precision_fp policy), the tensors of two or more dimensions; not nn.Embedding's
// weight (embedding is on no autocast list) and not the norms' weights
// (layer_norm is on the fp32 list; an RMSNorm multiplies its fp32 weight
// elementwise, which autocast leaves alone), zerosim's one-dimensional
// tensors. Linear biases, one-dimensional too, are cast but not counted.
const AutocastNone DType = "none"

// Autocasts reports whether the model's fp32 parameters run under
// torch.autocast (training.autocast bf16 or fp16).
func (t *Training) Autocasts() bool {
	return t.Autocast != "" && t.Autocast != AutocastNone
}

// resolveAutocast validates training.autocast: bf16 or fp16 over fp32
// parameters, at ZeRO stage 0 (torch DDP) or under PyTorch FSDP
// (AutocastStageRefusal, autocast_fsdp.go), outside DeepSpeed and Megatron,
// whose engines cast their own 16-bit parameters, and without fp8.
func (l *loader) resolveAutocast(s *Scenario) *Error {
	t := &s.Training
	const key = "training.autocast"
	if !l.has(key) {
		return nil
	}
	if err := oneOf(l, key, t.Autocast, AutocastNone, BF16, FP16); err != nil {
		return err
	}
	if !t.Autocasts() {
		return nil
	}
	if t.ParamDType != FP32 {
		return l.errPath(key, fmt.Sprintf("autocast %s casts fp32 parameters, but training.param_dtype is %s: there is nothing to cast (set param_dtype: fp32 for torch.autocast over an fp32 model, or drop autocast for %s parameters beside an fp32 master)", t.Autocast, t.ParamDType, t.ParamDType))
	}
	if why := AutocastStageRefusal(s); why != "" {
		return l.errPath(key, why)
	}
	if s.DeepSpeed() || s.Stack == "megatron" {
		return l.errPath(key, "autocast does not go with DeepSpeed or stack megatron: their engines keep 16-bit parameters beside an fp32 master (drop autocast and set param_dtype: bf16)")
	}
	if s.Parallelism.EP > 1 {
		return l.errPath(key, "autocast does not go with parallelism.ep > 1: zerosim does not model which routed experts a rank casts (drop one)")
	}
	if t.FP8 != "" && t.FP8 != FP8None {
		return l.errPath(key, "autocast does not go with training.fp8: fp8 weights are stepped through an fp32 master (drop one)")
	}
	for _, g := range s.Model.Groups {
		if g.Precision != FP32 {
			return l.errPath(key, fmt.Sprintf("autocast does not go with model group %q in %s: under autocast every parameter is fp32 (give the group fp32, or drop autocast)", g.Name, g.Precision))
		}
	}
	return nil
}
