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
// torch.autocast (training.autocast bf16 or fp16 with param_dtype fp32),
// which casts their weights.
func (t *Training) Autocasts() bool {
	return t.autocastSet() && t.ParamDType == FP32
}

// AutocastOps reports whether a model of 16-bit parameters runs under
// torch.autocast of the same dtype (training.autocast equal to
// param_dtype): DeepSpeed's torch_autocast section beside bf16.enabled,
// accepted since DeepSpeed 39a682d79 (PR #7700, 2025-12-04), which
// removed _validate_auto_cast_settings' assertions "Cannot enable both
// torch autocast and bfloat16" and "... and fp16"
// (deepspeed/runtime/torch_autocast.py at deepspeedai/DeepSpeed
// 39a682d7992183fd0ce2c1c70152106e20052a45). The engine still casts the
// module's parameters to bf16 (engine.py _configure_distributed_model:
// self.module.bfloat16() at 39a682d79; _cast_module_mixed_precision to
// the same param dtype at edaa72212), so autocast casts no weight and
// its cache holds nothing: its lower-precision ops (linear, bmm, baddbmm)
// find their inputs bf16 already. What changes is the ops on autocast's
// fp32 lists (AT_FORALL_FP32 and AT_FORALL_FP32_SET_OPT_DTYPE, which
// aten/src/ATen/autocast_mode.cpp at pytorch/pytorch
// 008ec6b1840c94ff6d0f685bc10fbf585167c673 registers with the fp32 and
// fp32_set_opt_dtype policies): layer_norm casts its bf16
// input to fp32 and saves that copy for backward, and softmax without a
// dtype writes fp32 probabilities, which the next bmm casts back to
// bf16 (memory/tensors.go, BlockDims.Autocast). The engine enters
// torch.autocast around the module's forward only (autocast_if_enabled
// in torch_autocast.py, DeepSpeedEngine.forward in engine.py at
// 39a682d79); a loss the training loop computes outside it is as
// training.cross_entropy says. Gradients are reduced in the parameters'
// dtype: init_autocast_params gives the Linear and Conv weights
// comm_dtype bf16, the dtype they hold already, and every other
// parameter its own (get_comm_dtype), so the ZeRO buckets stay bf16.
func (t *Training) AutocastOps() bool {
	return t.autocastSet() && t.ParamDType != FP32
}

func (t *Training) autocastSet() bool {
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
	if !t.autocastSet() {
		return nil
	}
	if t.ParamDType != FP32 {
		return l.resolveAutocastOps(s)
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

// resolveAutocastOps validates training.autocast over 16-bit parameters
// (Training.AutocastOps): DeepSpeed's torch_autocast beside bf16.enabled,
// at ZeRO stages 1–3, of the parameters' own dtype, bf16.
func (l *loader) resolveAutocastOps(s *Scenario) *Error {
	t := &s.Training
	const key = "training.autocast"
	switch {
	case !s.DeepSpeed():
		return l.errPath(key, fmt.Sprintf("autocast %s over %s parameters is modelled for stack deepspeed (its torch_autocast section beside bf16.enabled), not stack %q (set param_dtype: fp32 for torch.autocast over an fp32 model, or drop autocast)", t.Autocast, t.ParamDType, s.Stack))
	case t.ParamDType != BF16 || t.Autocast != BF16:
		return l.errPath(key, fmt.Sprintf("autocast %s over %s parameters is not modelled: zerosim models DeepSpeed's torch_autocast bf16 beside bf16.enabled (set both to bf16, or drop autocast)", t.Autocast, t.ParamDType))
	case s.Parallelism.Stage == 0:
		return l.errPath(key, "autocast over bf16 parameters is modelled at zero_stage 1, 2 or 3 (DeepSpeed's ZeRO optimizers), not 0 (set zero_stage, or drop autocast)")
	case s.Communication.ZeroQuantizedWeights:
		// _validate_auto_cast_settings (deepspeed/runtime/torch_autocast.py
		// at 39a682d79 and edaa72212).
		return l.errPath(key, "autocast does not go with communication.zero_quantized_weights, which DeepSpeed refuses (\"Cannot enable both torch autocast and zero quantized weights\"): drop one")
	case t.FP8 != "" && t.FP8 != FP8None:
		return l.errPath(key, "autocast does not go with training.fp8 (drop one)")
	}
	return nil
}
