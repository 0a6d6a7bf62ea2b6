package scenarios

// RoPEImpl is how an eager Llama block applies its rotary position
// embedding (training.rope_impl). Each form runs a different chain of
// memory-bound kernels over q and k, so it sets the block's HBM traffic
// (zero/opchain.go derives the bytes of each form from the code it cites);
// under torch.compile (training.compile: blocks) the chain is fused and
// this key has no effect. Unset is complex.
type RoPEImpl string

// Rotary embedding implementations.
const (
	// RoPEComplex upcasts q and k to fp32, views them as complex numbers
	// and multiplies by the complex frequencies (apply_rotary_emb in
	// meta-llama/llama llama/model.py at 8580eb9a896b and in torchtitan
	// torchtitan/models/llama/model.py at 9dec370ad26b). Default.
	RoPEComplex RoPEImpl = "complex"
	// RoPERotation multiplies fp32 q and k by 2×2 rotation matrices,
	// sums and copies the result contiguous (ibm-fms v0.0.3
	// fms/modules/positions.py RotaryEmbedding.adjusted_qk, what
	// fms-fsdp 4ffb9bdfa30e trains with).
	RoPERotation RoPEImpl = "rotation"
	// RoPEFused is one kernel that reads q and k and writes them rotated
	// (a fused RoPE kernel such as flash-attn's apply_rotary_emb,
	// flash_attn/layers/rotary.py at Dao-AILab/flash-attention 0251105a).
	RoPEFused RoPEImpl = "fused"
)

// resolveRoPE checks training.rope_impl. Unset it stays empty (complex), so
// the resolved scenario of a file without the key is unchanged.
func (l *loader) resolveRoPE(s *Scenario) *Error {
	if !l.has("training.rope_impl") {
		return nil
	}
	return oneOf(l, "training.rope_impl", s.Training.RoPEImpl, RoPEComplex, RoPERotation, RoPEFused)
}
