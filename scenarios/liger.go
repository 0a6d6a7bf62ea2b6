package scenarios

import "fmt"

// training.liger is Liger Kernel's patch of a Hugging Face Llama-family
// model, as apply_liger_kernel_to_llama, _to_mistral and _to_qwen2
// (src/liger_kernel/transformers/monkey_patch.py at linkedin/Liger-Kernel
// v0.5.6, c3c2d4fa5abe14d1e627f0aea1128116a55bbe6b, lines 158-163, 413-418
// and 807-812) apply it with their defaults: rope, rms_norm and swiglu
// True, cross_entropy False, fused_linear_cross_entropy True. v0.5.6 is
// the release before ms-swift's "update liger kernel" (7b709960f,
// 2025-04-06), the run docs/memory-model.md compares. What each kernel
// keeps for backward (memory/tensors.go, BlockDims.Liger):
//   - LigerRMSNorm (ops/rms_norm.py, casting_mode "llama"): Y and an fp32
//     RSTD per row are written (lines 217-221); ctx.save_for_backward(X, W,
//     RSTD) (line 333): the 16-bit input and the rstd, as torchtitan's
//     fused_rmsnorm (training.norm_impl: fused). Its backward writes dX
//     into dY in place (in_place True, line 266) and an fp32 [SMs, h]
//     partial dW.
//   - LigerSiLUMulFunction (ops/swiglu.py): saves the gate and up
//     projections' outputs a and b (line 108) and recomputes silu(a) in
//     backward (lines 50-54, writing da and db over a and b): no silu(a)
//     tensor; its output c is down_proj's input, kept by that matmul.
//   - LigerRopeFunction (ops/rope.py): rotates q and k in place
//     (rope_forward, lines 115-158) and saves cos and sin (line 226):
//     nothing more than the eager RoPE keeps.
//   - LigerFusedLinearCrossEntropyFunction (ops/fused_linear_cross_entropy.py):
//     the training forward never materialises the logits
//     (transformers/model/qwen2.py lce_forward lines 201-210); the head
//     runs in chunks of next_power_of_2(ceil(BT / ceil(V/H))) tokens
//     (lines 43-45), each chunk's logits written and turned into their
//     gradient in place (lines 77-122), whose products with the weight and
//     the input are accumulated into grad_input (zeros_like(_input), line
//     48) and grad_weight (zeros_like(weight), the weight's dtype, line
//     47; addmm in place, lines 126-135) during the forward;
//     ctx.save_for_backward(grad_input, grad_weight, grad_bias) (lines
//     253-257) keeps them to the backward, which only scales them in
//     place (element_mul_kernel, lines 156-200).
//
// resolveLiger refuses it where the patch or its model does not apply.
func (l *loader) resolveLiger(s *Scenario) *Error {
	if !s.Training.Liger {
		return nil
	}
	const p = "training.liger"
	t, m := &s.Training, &s.Model
	llama := m.Arch == ArchLlama || m.Arch == ArchHF && HFBlockArch(m.Architecture) == ArchLlama
	switch {
	case s.Stack == "torchtitan" || s.Stack == "llm-foundry" || s.Stack == "fms-fsdp" || s.Stack == "megatron":
		return l.errPath(p, fmt.Sprintf("liger patches Hugging Face transformers models, and stack: %s builds its own (delete training.liger, or use stack: deepspeed or none)", s.Stack))
	case m.Kind != KindTransformer || !llama:
		return l.errPath(p, fmt.Sprintf("liger is modelled for Hugging Face Llama, Mistral and Qwen2 blocks, and this model's blocks are %s (delete training.liger)", normBlocks(m)))
	case m.Architecture != "" && m.Architecture != "LlamaForCausalLM" && m.Architecture != "MistralForCausalLM" && m.Architecture != "Qwen2ForCausalLM":
		return l.errPath(p, fmt.Sprintf("liger is modelled for LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM (apply_liger_kernel_to_llama, _mistral, _qwen2 at Liger-Kernel v0.5.6), not %s (delete training.liger)", m.Architecture))
	case m.LogitSoftcap:
		return l.errPath(p, "liger is not modelled with model.logit_softcap (Gemma 2's patch) (delete training.liger)")
	case t.Compile.Blocks() || t.Compile.Loss():
		return l.errPath(p, fmt.Sprintf("liger does not go with training.compile=%s: its Triton kernels replace what torch.compile would fuse, and the mix is not modelled (use compile: none)", t.Compile))
	case t.NormImpl != "" && t.NormImpl != NormFP32:
		return l.errPath(p, fmt.Sprintf("liger brings its own RMSNorm kernel, so training.norm_impl=%s does not apply (delete training.norm_impl)", t.NormImpl))
	case t.CrossEntropy != "" && t.CrossEntropy != CrossEntropyFP32:
		return l.errPath(p, fmt.Sprintf("liger's fused linear cross-entropy is the loss, so training.cross_entropy=%s does not apply (delete training.cross_entropy, or set it to fp32, the Hugging Face loss liger replaces)", t.CrossEntropy))
	case t.RoPEImpl != "" && t.RoPEImpl != RoPEFused:
		return l.errPath(p, fmt.Sprintf("liger brings its own RoPE kernel, so training.rope_impl=%s does not apply (delete training.rope_impl)", t.RoPEImpl))
	case t.LossChunks > 1:
		return l.errPath(p, "liger's fused linear cross-entropy chunks the head itself, so training.loss_chunks does not apply (delete training.loss_chunks)")
	case t.KeptLogitsBytes() > 0:
		return l.errPath(p, "liger's training forward returns no logits, so training.keep_logits does not apply (delete training.keep_logits)")
	case t.Autocasts():
		return l.errPath(p, "liger is modelled over 16-bit parameters, not torch.autocast over an fp32 model (set training.param_dtype: bf16, or delete training.liger)")
	case t.FP8.FP8():
		return l.errPath(p, "liger does not go with training.fp8: it is modelled on 16-bit linear layers (delete one of them)")
	}
	if i, what := notDenseLlama(m); what != "" {
		return l.errPath(p, fmt.Sprintf("liger is modelled for dense Llama-family blocks, and layer %d (%s) has %s (delete training.liger)", i, m.LayerList[i].Name, what))
	}
	return nil
}
