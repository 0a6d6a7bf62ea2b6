package scenarios

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
	return nil
}
