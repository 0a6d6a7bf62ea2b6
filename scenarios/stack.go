package scenarios

import "cmp"

// CrossEntropy is the loss kernel (training.cross_entropy): what the loss
// keeps for backward and what its backward allocates.
type CrossEntropy string

const (
	// CrossEntropyFP32 (the default, unset) is
	// torch.nn.functional.cross_entropy on the logits upcast to fp32
	// (torchtitan, Hugging Face): log_softmax keeps an fp32 copy of the
	// logits and the backward writes two dense fp32 gradients.
	CrossEntropyFP32 CrossEntropy = "fp32"
	// CrossEntropyFused is flash-attn's fused softmax cross-entropy
	// (flash_attn/losses/cross_entropy.py and csrc/xentropy at v0.2.8,
	// 33e0860c): it keeps the 16-bit logits and an fp32 log-sum-exp per
	// token and its backward writes one gradient in the logits' dtype.
	// llm-foundry's MPT uses it by default (loss_fn: fused_crossentropy).
	CrossEntropyFused CrossEntropy = "fused"
	// A 16-bit param_dtype's name (bf16, fp16) is F.cross_entropy on the
	// 16-bit logits as they come, without an upcast (KempnerForge's
	// F.cross_entropy(logits.view(...)) on its bf16 output head,
	// scripts/train.py and kempnerforge/model/embedding.py at 01b461a78f57):
	// cross_entropy_loss_symint runs nll_loss_nd(at::log_softmax(self,
	// class_dim, self.scalar_type())) (aten/src/ATen/native/LossNLL.cpp at
	// pytorch/pytorch 0321fa774888a7c86501b3cb31ed6b4fc1010230), so
	// log_softmax writes and saves 16-bit log-probabilities, 2·t·V, and
	// its backward's two gradients are 16-bit: Training.Loss16.

	// CrossEntropyAutocast is F.cross_entropy on the 16-bit logits inside
	// torch.autocast (training.autocast set; DeepSpeedExamples'
	// bf16_master_weight train.py at 516082c6 computes loss_fn under its
	// own torch.autocast(dtype=bfloat16)). cross_entropy_loss is on no
	// autocast list, so it runs as above: log_softmax(self, class_dim,
	// self.scalar_type()) with its dtype given, which autocast's
	// fp32_set_opt_dtype policy keeps (bf16 log-probabilities, saved by
	// log_softmax, 2·t·V); then nll_loss, on autocast's fp32 list
	// (AT_FORALL_FP32, which autocast_mode.cpp at pytorch/pytorch
	// 008ec6b1840c94ff6d0f685bc10fbf585167c673 registers), runs on an fp32
	// copy of them, which nll_loss_forward saves for its backward
	// (tools/autograd/derivatives.yaml at
	// d327a787782618826890c323f8d7e51f3d28ec13: "self:
	// nll_loss_backward(grad, self, target, ...)"), 4·t·V; its backward
	// writes an fp32 dense gradient, 4·t·V (memory/tensors.go).
	CrossEntropyAutocast CrossEntropy = "autocast"
)

// LossAutocast reports whether the loss is cross-entropy on the 16-bit
// logits inside torch.autocast (training.cross_entropy: autocast).
func (t *Training) LossAutocast() bool {
	return t.CrossEntropy == CrossEntropyAutocast
}

// Loss16 reports whether the loss is cross-entropy on the 16-bit logits
// without an upcast (training.cross_entropy: param_dtype's name).
func (t *Training) Loss16() bool {
	return t.ParamDType != FP32 && t.ParamDType != "" && t.CrossEntropy == CrossEntropy(t.ParamDType)
}

// KeepLogits is training.keep_logits: whether the training loop keeps the
// logits the model returns referenced through backward, and in which
// dtype the model returns them.
type KeepLogits string

const (
	// KeepLogitsNone (the default, unset) frees the logits before
	// backward: torchtitan's train.py deletes pred before loss.backward()
	// since e29b6b4d418a (2024-06-12, "del logits=(bs, seq_len, vocab_size) to
	// save 3.9G memory"; at 9dec370ad26b too), and Hugging Face's loss keeps
	// only what autograd saves.
	KeepLogitsNone KeepLogits = "none"
	// KeepLogitsFP32: the model returns its logits upcast to fp32 and the
	// loop holds them in a local variable until the next step's forward
	// rebinds it: torchtitan at 83c879f18763 (torchtrain/models/llama/model.py
	// line 501: output = self.output(h).float(); train.py line 277: pred =
	// model(input_ids), lines 284-287: cross_entropy(pred.flatten(0, 1),
	// ...) and backward with no del), 4·t·V bytes (memory/tensors.go,
	// KeptLogits). The other allowed value is param_dtype's name (bf16,
	// fp16): the model returns its 16-bit logits, 2·t·V.
	KeepLogitsFP32 KeepLogits = "fp32"
)

// HFUseCache is training.hf_use_cache: whether a Hugging Face causal LM
// run under torch's checkpoint wrapper returns a KV cache from its
// training forward, and how long the training loop keeps it.
//
// transformers' LlamaModel.forward takes use_cache from config.use_cache
// (LlamaConfig's default use_cache=True) and turns it off only under its
// own gradient checkpointing: "if self.gradient_checkpointing and
// self.training and use_cache: ... use_cache = False"; otherwise every
// decoder layer returns its post-RoPE key and value states as its
// present key/value and the model returns them all in
// CausalLMOutputWithPast.past_key_values
// (src/transformers/models/llama/modeling_llama.py at huggingface/transformers
// 002272831fba584eb30dca9729c1be456836960a; ATorch's flash-attention
// replacement does the same: "past_key_value = (key_states,
// value_states) if use_cache else None", atorch/modules/transformer/layers.py
// LlamaAttentionFA.forward at intelligent-machine-learning/dlrover
// 70df7d5a2b4c38899a11385189234dd8a8f26869). torch's checkpoint wrapper
// (Accelerate's fsdp_activation_checkpointing: accelerator.py prepare_model
// and utils/fsdp_utils.py fsdp2_apply_ac at huggingface/accelerate
// 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83; ATorch's ("checkpoint", ...)
// strategy, atorch/auto/opt_lib/checkpoint_optimization.py at 70df7d5a2)
// frees what the layer saves for backward but not what it returns, so the
// cache is memory of its own (memory.KVCache).
type HFUseCache string

const (
	// HFUseCacheNone (the default, unset): no KV cache in training (HF's
	// gradient checkpointing, use_cache=False, or a model without one).
	HFUseCacheNone HFUseCache = "none"
	// HFUseCacheForward: the cache lives from each layer's forward until
	// the loss has been taken inside the model's forward and the loop
	// drops the outputs before backward (a loop that keeps only the loss).
	HFUseCacheForward HFUseCache = "forward"
	// HFUseCacheKept: the loop holds the outputs until the next forward
	// returns and rebinds them: dlrover's atorch/examples/llama2/fsdp_llama2.py
	// at 70df7d5a2 ("outputs = model(**batch); loss = loss_func(None,
	// outputs); loss.backward(); optimizer.step()", lines 243-246), so the
	// previous step's cache is at rest and beside the new one until the
	// model returns.
	HFUseCacheKept HFUseCache = "kept"
)

// KVCacheAtRest is whether the previous step's KV cache is alive at rest
// (training.hf_use_cache: kept).
func (t *Training) KVCacheAtRest() bool { return t.HFUseCache == HFUseCacheKept }

// OutputsHeldPastLoss is whether the previous step's outputs the loop holds
// (the kept logits, training.keep_logits, and the KV cache) are still alive
// while the new loss runs: a Hugging Face causal LM takes its loss inside
// forward and the loop's outputs = model(**batch) rebinds the name only
// once forward has returned with the loss (training.hf_use_cache: kept).
// LlamaForCausalLM.forward computes logits = self.lm_head(hidden_states);
// logits = logits.float(); loss = loss_fct(shift_logits, shift_labels)
// before it returns CausalLMOutputWithPast(loss=loss, logits=logits,
// past_key_values=...) (src/transformers/models/llama/modeling_llama.py at
// huggingface/transformers 002272831fba584eb30dca9729c1be456836960a;
// dlrover pins transformers==4.31.0, atorch/atorch/requirements.txt,
// which was not read: the Llama 2 era copies with pretraining_tp that
// the code index holds have the same lines), and dlrover's loop is
// outputs = model(**batch); loss = loss_func(None, outputs)
// (atorch/examples/llama2/fsdp_llama2.py lines 243-247 at
// 70df7d5a2b4c38899a11385189234dd8a8f26869; ATorch's amp_native wraps
// loss_func in autocast only, amp_optimization.py). While the loss runs,
// forward's own shift_logits copy is alive too (memory.HFShiftLogits). A
// loop whose loss runs outside the model (torchtitan's train.py; Composer's
// _train_microbatch, self.state.outputs = self.state.model(batch) and
// then self._original_model.loss(self.state.outputs, self.state.batch))
// frees the previous step's logits before its loss instead.
func (t *Training) OutputsHeldPastLoss() bool { return t.KVCacheAtRest() }

// HFLossInsideForward is whether the loss runs inside a Hugging Face
// causal LM's forward (training.hf_use_cache forward or kept: the only
// setting that says the model is Hugging Face's and is called with its
// labels). LlamaForCausalLM.forward then upcasts the logits
// (logits = logits.float()) and copies shift_logits before its
// CrossEntropyLoss whenever labels is passed, whatever use_cache is
// (src/transformers/models/llama/modeling_llama.py at
// huggingface/transformers 002272831fba584eb30dca9729c1be456836960a;
// memory.HFShiftLogits).
func (t *Training) HFLossInsideForward() bool { return t.KVCached() }

// KVCached is whether the forward builds a KV cache (training.hf_use_cache
// forward or kept).
func (t *Training) KVCached() bool {
	return t.HFUseCache == HFUseCacheForward || t.HFUseCache == HFUseCacheKept
}

// LogitsDType is the dtype the model returns its logits in: param_dtype,
// or under training.autocast over fp32 parameters autocast's dtype (the
// output projection's F.linear is on autocast's lower-precision list,
// scenarios/autocast.go).
func (t *Training) LogitsDType() DType {
	if t.ParamDType == FP32 && (t.Autocast == BF16 || t.Autocast == FP16) {
		return t.Autocast
	}
	return t.ParamDType
}

// KeptLogitsBytes is the element size of the logits the training loop
// keeps (training.keep_logits): 0 for none, 4 for fp32, 2 for param_dtype.
func (t *Training) KeptLogitsBytes() int64 {
	switch t.KeepLogits {
	case "", KeepLogitsNone:
		return 0
	case KeepLogitsFP32:
		return 4
	}
	return 2
}

// OptimizerImpl is training.optimizer_impl: how the optimizer's update runs
// on the GPU, which sets its HBM traffic per shard element
// (zero.OptimizerBytesPerElem cites each count).
type OptimizerImpl string

const (
	// OptimizerSeed (the default, unset) is seed 000's accounting of an
	// fp32 Adam step beside 16-bit gradients and parameters (DeepSpeed's
	// order: cast the gradient shard, update, write the 16-bit shard).
	OptimizerSeed OptimizerImpl = "seed"
	// OptimizerFused is torch.optim.AdamW(fused=True): one kernel per
	// tensor list, torch._fused_adamw_.
	OptimizerFused OptimizerImpl = "fused"
	// OptimizerForeach is torch.optim.AdamW's default on CUDA since
	// PyTorch 2.0 (foreach chosen by _default_to_fused_or_foreach,
	// torch/optim/adamw.py at pytorch/pytorch 002d2f0b):
	// _multi_tensor_adamw, one torch._foreach_* kernel per step of the
	// update.
	OptimizerForeach OptimizerImpl = "foreach"
	// OptimizerComposer is Composer's DecoupledAdamW
	// (composer/optim/decoupled_weight_decay.py at mosaicml/composer
	// 784f50be7fa8617ed562704c0207316ca2284e71, as zero/compute.go counts
	// its traffic), llm-foundry's
	// decoupled_adamw: a Python loop over the parameters, one in-place op
	// per step of the update.
	OptimizerComposer OptimizerImpl = "composer"
)

// GradClip is training.grad_clip: gradient clipping once per optimizer
// step.
type GradClip string

const (
	// GradClipNone (unset) clips nothing.
	GradClipNone GradClip = "none"
	// GradClipNorm clips by the global gradient norm
	// (torch.nn.utils.clip_grad_norm_, FSDP's clip_grad_norm_): one read
	// of every gradient element for the norm, one read and write to scale.
	GradClipNorm GradClip = "norm"
)

// DefaultMaxGradNorm is training.max_grad_norm when unset: 1.0, the
// default of every stack zerosim models: the Hugging Face Trainer's
// TrainingArguments.max_grad_norm (src/transformers/training_args.py at
// huggingface/transformers 00349ae87eddc872ffa21a8a54f264375a0056a8),
// DeepSpeed's gradient_clipping since v0.19.3 (deepspeed.go's clipping),
// Megatron-LM's --clip-grad (megatron/training/arguments.py at d580efc6,
// as the megatron stack preset cites), torchtitan's training.max_norm
// (torchtitan/config/job_config.py line 264 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1).
const DefaultMaxGradNorm = 1.0

// ShardFP32 is training.shard_dtype: fp32, the rank's parameter shard kept
// in fp32 as the optimizer's own parameter (PyTorch FSDP under a
// mixed-precision policy), see memory/timeline.go.
const ShardFP32 DType = FP32

// ReduceDType is training.reduce_dtype: the dtype gradients are reduced in
// (and, at stages 0–2, accumulated in: the gradient buffer is the
// reduction's buffer).
type ReduceDType string

const (
	// ReduceParamDType (the default, unset) reduces and keeps the
	// gradients in param_dtype.
	ReduceParamDType ReduceDType = "param_dtype"
	// ReduceFP32 reduces 16-bit gradients in fp32. Megatron-LM with bf16
	// does so by default: validate_args sets
	// accumulate_allreduce_grads_in_fp32 unless --grad-reduce-in-bf16
	// ("bfloat16 requires gradient accumulation and all-reduce to be done
	// in fp32", megatron/training/arguments.py at NVIDIA/Megatron-LM
	// d98e8a64ddf34856e74b24714e3bedb2f5a39553 and at core_v0.12.0,
	// d580efc68a9f0dbf1945f834f6f6200cd01d3343; unconditionally at
	// core_v0.8.0, baf94af3), training.py passes it as
	// DistributedDataParallelConfig.grad_reduce_in_fp32, and the contiguous
	// grad buffer (param.main_grad) is then fp32 (grad_dtype = torch.float
	// if grad_reduce_in_fp32 else param.dtype: distributed_data_parallel.py
	// at core_v0.8.0 and core_v0.12.0, param_and_grad_buffer.py
	// group_params_for_buffers at d98e8a64). torchtitan's FSDP2 runs
	// MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): each
	// unit's bf16 gradients are copied into an fp32 reduce-scatter input
	// (memory/timeline.go cites foreach_reduce).
	ReduceFP32 ReduceDType = "fp32"
)

// FP32Reduce reports whether 16-bit gradients are reduced in fp32
// (training.reduce_dtype: fp32 with a 16-bit param_dtype; with fp32 params
// the key changes nothing).
func (t *Training) FP32Reduce() bool {
	return t.ReduceDType == ReduceFP32 && t.ParamDType != FP32
}

// resolveStack validates the keys that name what a training stack keeps
// or runs (training.cross_entropy, training.shard_dtype,
// training.reduce_dtype, training.optimizer_impl, training.grad_clip,
// training.keep_logits).
// Unset they stay empty, meaning the defaults (fp32 cross-entropy; a
// 16-bit shard beside an fp32 master copy; gradients reduced in
// param_dtype; seed 000's optimizer traffic; no clipping; the logits
// freed before backward), so that
// scenarios that do not give them resolve as before.
func (l *loader) resolveStack(s *Scenario) *Error {
	t := &s.Training
	if l.has("training.cross_entropy") {
		allowed := []CrossEntropy{CrossEntropyFP32, CrossEntropyFused}
		if t.ParamDType != FP32 {
			allowed = append(allowed, CrossEntropy(t.ParamDType))
		}
		if t.autocastSet() {
			allowed = append(allowed, CrossEntropyAutocast)
		} else if t.LossAutocast() {
			use := "fp32"
			if t.ParamDType != FP32 {
				use = string(t.ParamDType) + " or fp32"
			}
			return l.errPath("training.cross_entropy", "cross_entropy=autocast is the loss inside torch.autocast, but training.autocast is unset (set autocast, or use cross_entropy: "+use+")")
		}
		if err := oneOf(l, "training.cross_entropy", t.CrossEntropy, allowed...); err != nil {
			err.Alone = false // the names follow training.param_dtype
			return err
		}
	}
	if l.has("training.optimizer_impl") {
		if err := oneOf(l, "training.optimizer_impl", t.OptimizerImpl, OptimizerSeed, OptimizerFused, OptimizerForeach, OptimizerComposer); err != nil {
			return err
		}
	}
	if l.has("training.grad_clip") {
		if err := oneOf(l, "training.grad_clip", t.GradClip, GradClipNone, GradClipNorm); err != nil {
			return err
		}
	}
	if l.has("training.shard_dtype") {
		if err := oneOf(l, "training.shard_dtype", t.ShardDType, t.ParamDType, ShardFP32); err != nil {
			err.Alone = false // the names follow training.param_dtype
			return err
		}
	}
	if l.has("training.keep_logits") {
		allowed := []KeepLogits{KeepLogitsNone}
		if d := t.LogitsDType(); d != FP32 {
			allowed = append(allowed, KeepLogits(d))
		}
		allowed = append(allowed, KeepLogitsFP32)
		if err := oneOf(l, "training.keep_logits", t.KeepLogits, allowed...); err != nil {
			err.Alone = false // the names follow training.param_dtype
			return err
		}
		// zerosim's compiled and fused losses save the 16-bit logits the
		// model returns (memory/tensors.go, HeadActivation): fp32 logits
		// would change what they keep. The fix keeps the logits in the
		// dtype the model returns them (under autocast over fp32
		// parameters, autocast's), or none when that is fp32.
		keep := KeepLogitsNone
		if d := t.LogitsDType(); d != FP32 {
			keep = KeepLogits(d)
		}
		if t.KeepLogits == KeepLogitsFP32 && t.Compile.Loss() {
			return l.errPath("training.keep_logits", "keep_logits=fp32 does not go with training.compile="+string(t.Compile)+
				": the compiled loss is modelled on the 16-bit logits the model returns (use keep_logits: "+string(keep)+", or an eager loss)")
		}
		if t.KeepLogits == KeepLogitsFP32 && (t.Loss16() || t.LossAutocast()) {
			return l.errPath("training.keep_logits", "keep_logits=fp32 does not go with training.cross_entropy="+string(t.CrossEntropy)+": a loss on fp32 logits is the fp32 one (use keep_logits: "+string(keep)+", or cross_entropy: fp32)")
		}
		if t.KeepLogits == KeepLogitsFP32 && t.CrossEntropy == CrossEntropyFused {
			return l.errPath("training.keep_logits", "keep_logits=fp32 does not go with training.cross_entropy=fused: the fused loss is modelled on the 16-bit logits the model returns (use keep_logits: "+string(keep)+", or cross_entropy: fp32)")
		}
	}
	if l.has("training.hf_use_cache") {
		if err := oneOf(l, "training.hf_use_cache", t.HFUseCache, HFUseCacheNone, HFUseCacheForward, HFUseCacheKept); err != nil {
			return err
		}
		// Only a checkpointed block frees the key and value states it
		// saves for attention: without checkpointing the cache is that
		// very storage, and a selective policy keeps some of it.
		if t.KVCached() && t.Recompute != RecomputeFull {
			return l.errPath("training.hf_use_cache", "hf_use_cache="+string(t.HFUseCache)+" is modelled for blocks checkpointed whole by torch's checkpoint wrapper (training.recompute: full; got "+
				string(cmp.Or(t.Recompute, RecomputeNone))+"): without it the cache shares the attention's saved keys and values (set recompute: full, or hf_use_cache: none)")
		}
	}
	if l.has("training.reduce_dtype") {
		if err := oneOf(l, "training.reduce_dtype", t.ReduceDType, ReduceParamDType, ReduceFP32); err != nil {
			return err
		}
		if t.FP32Reduce() && s.Communication.ZeroQuantizedGradients {
			// qgZ reduces int4-quantized gradients (zeropp.go).
			return l.errPath("training.reduce_dtype", "reduce_dtype fp32 and communication.zero_quantized_gradients exclude each other: qgZ reduces quantized gradients (drop one)")
		}
	}
	return nil
}

// FP32Shard reports whether the rank's ZeRO-3 parameter shard is fp32 and
// is the optimizer's parameter (training.shard_dtype: fp32 with 16-bit
// params), so there is no separate master copy.
func (t *Training) FP32Shard() bool {
	return t.ShardDType == ShardFP32 && t.ParamDType != FP32
}
