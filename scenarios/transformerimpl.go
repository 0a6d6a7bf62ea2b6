package scenarios

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// TransformerImpl is the module family Megatron-LM builds its blocks from,
// its --transformer-impl: training.transformer_impl, stack: megatron only.
// It sets what a Llama block's norms keep for backward
// (memory/tensors.go, docs/memory-model.md). Unset is transformer_engine.
type TransformerImpl string

// Megatron-LM's --transformer-impl choices (megatron/training/arguments.py
// at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553).
const (
	// TransformerEngine is get_gpt_layer_with_transformer_engine_spec:
	// each block norm fused into the next linear (TE's LayerNormLinear),
	// a TENorm as the final norm. Default.
	TransformerEngine TransformerImpl = "transformer_engine"
	// TransformerLocal is get_gpt_layer_local_spec: Megatron-core's own
	// ColumnParallelLinear/RowParallelLinear and DotProductAttention, and
	// LocalSpecProvider.layer_norm's norms: apex's FusedLayerNorm for
	// LayerNorm, but torch.nn.RMSNorm (WrappedTorchNorm) for RMSNorm
	// ("Matching get_gpt_layer_local_spec", megatron/core/models/
	// backends.py lines 118-127, megatron/core/transformer/torch_norm.py
	// lines 29-75 at d98e8a64).
	TransformerLocal TransformerImpl = "local"
)

// resolveTransformerImpl checks training.transformer_impl. Unset it stays
// empty (transformer_engine), so a file without the key resolves as
// before. It is Megatron-LM's flag: another stack refuses it.
func (l *loader) resolveTransformerImpl(s *Scenario) *Error {
	if !l.has("training.transformer_impl") {
		return nil
	}
	const p = "training.transformer_impl"
	if err := oneOf(l, p, s.Training.TransformerImpl, TransformerEngine, TransformerLocal); err != nil {
		return err
	}
	if s.Stack != "megatron" {
		return l.errPath(p, "transformer_impl is Megatron-LM's --transformer-impl and goes with stack: megatron only (set stack: megatron, or delete training.transformer_impl)")
	}
	if s.Training.TransformerImpl != TransformerLocal {
		return nil
	}
	t := &s.Training
	_, want := localAttention(t.Attention == AttentionFlash)
	if t.AttentionKernel == want {
		if !l.written("training.attention_kernel") {
			// stack megatron's te, resolved by applyStack.
			l.warn(s, p, fmt.Sprintf("transformer_impl: local runs attention_kernel %s, not stack megatron's Transformer Engine attention: %s", want, localAttentionWhy(want)))
		}
		return nil
	}
	return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=%s is not what transformer_impl: local runs: Megatron-core's local spec runs its own DotProductAttention (megatron/core/models/backends.py LocalSpecProvider.core_attention at d98e8a64), or flash-attn 2 under --use-legacy-models --use-flash-attn (use training.attention: eager (local's DotProductAttention) or flash (--use-legacy-models --use-flash-attn), without attention_kernel)", t.AttentionKernel))
}

// localAttention is the attention Megatron-core's local spec runs, the
// rule `zerosim import megatron` (readAttention) and the loader
// (applyStack, resolveTransformerImpl) share: its own DotProductAttention,
// which materialises the scores (LocalSpecProvider.core_attention,
// megatron/core/models/backends.py lines 129-131 at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553), or, with flash, flash-attn 2:
// the legacy models' FlashSelfAttention under Megatron's
// --use-legacy-models --use-flash-attn (core_v0.12.0; Megatron-core's
// models never read --use-flash-attn, Megatron.readAttention cites both).
func localAttention(flash bool) (Attention, AttentionKernel) {
	if flash {
		return AttentionFlash, KernelFA2
	}
	return AttentionEager, KernelEager
}

// localAttentionWhy says where localAttention's kernel comes from.
func localAttentionWhy(k AttentionKernel) string {
	if k == KernelFA2 {
		return "flash-attn 2, as training.attention: flash asks (Megatron's --use-legacy-models --use-flash-attn), in place of local's own DotProductAttention (LocalSpecProvider.core_attention, megatron/core/models/backends.py at d98e8a64)"
	}
	return "Megatron-core's own DotProductAttention, which materialises the scores (LocalSpecProvider.core_attention, megatron/core/models/backends.py at d98e8a64; set training.attention: flash for --use-legacy-models --use-flash-attn's flash-attn 2)"
}

// presetLocalAttention is the attention kernel stack megatron fills in
// under the file's (or --set's) training.transformer_impl local, by
// localAttention: fa2 when training.attention is flash, else eager; ok is
// false without local, where the preset's te stands.
func presetLocalAttention(root *yaml.Node) (k AttentionKernel, ok bool) {
	impl, _ := trainingKey(root, "transformer_impl")
	if impl == nil || impl.Kind != yaml.ScalarNode || impl.Value != string(TransformerLocal) {
		return "", false
	}
	att, _ := trainingKey(root, "attention")
	_, k = localAttention(att != nil && att.Kind == yaml.ScalarNode && att.Value == string(AttentionFlash))
	return k, true
}
