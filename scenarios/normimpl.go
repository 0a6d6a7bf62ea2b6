package scenarios

import "fmt"

// NormImpl is how an eager Llama block runs its hidden-size RMSNorms (the
// attention and FFN norms of every block and the final norm):
// training.norm_impl. It sets what autograd keeps of each norm
// (memory/tensors.go) and its HBM traffic (zero/opchain.go). Unset is fp32.
type NormImpl string

// RMSNorm implementations.
const (
	// NormFP32 is the eager RMSNorm in fp32 of Meta's reference model
	// (meta-llama/llama llama/model.py at 8580eb9a896b) and torchtitan's
	// norm_type "rmsnorm" (torchtitan/models/norms.py RMSNorm at 9dec370):
	// x.float(), pow, mean, rsqrt, type_as, weight multiply, each its own
	// kernel. Default.
	NormFP32 NormImpl = "fp32"
	// NormFused is torchtitan's norm_type "fused_rmsnorm": FusedRMSNorm,
	// one Triton kernel each way (torchtitan/models/norms.py at
	// 157a12c562288b3bccb077003a97f18a4ca657aa, TritonFusedRMSNorm:
	// _rms_norm_fwd_kernel reads x and writes y and the fp32 rstd per row;
	// forward saves only (x, weight, rstd), ctx.save_for_backward;
	// _rms_norm_bwd_kernel_sm reads x, dy and rstd and writes dx). Added
	// by 34711655b (2024-04-05, "Add FusedRMSNorm (Triton kernel, +15%
	// eager)"), the norm_type of train_configs/llama3_8b.toml until
	// 5e84866e3 (2024-05-02) and of llama2_7b.toml and llama2_13b.toml
	// until 3ff7fbb27 (2024-07-10), removed by 37c4b8181 (2025-02-06).
	NormFused NormImpl = "fused"
)

// resolveNormImpl checks training.norm_impl. Unset it stays empty (fp32),
// so the resolved scenario of a file without the key is unchanged. fused
// is torchtitan's kernel for its Llama blocks: it needs RMSNorm (llama)
// blocks of the dense kind torchtitan built then (no q/k norms, no other
// norm layout, no MLA, linear attention or routed experts), eager blocks
// (torchtitan refuses it under torch.compile: torchtitan/parallelisms/
// parallelize_llama.py lines 71-76 at
// 9dec370ad26b5f8e9a7333a0e36165018262644b, "fused_rmsnorm is not
// compatible with torch.compile yet"), and a stack other than megatron
// (whose Transformer Engine norms are their own fused kernels).
func (l *loader) resolveNormImpl(s *Scenario) *Error {
	if !l.has("training.norm_impl") {
		return nil
	}
	const p = "training.norm_impl"
	if err := oneOf(l, p, s.Training.NormImpl, NormFP32, NormFused); err != nil {
		return err
	}
	if s.Training.NormImpl != NormFused {
		return nil
	}
	m := &s.Model
	llama := m.Arch == ArchLlama || m.Arch == ArchHF && HFBlockArch(m.Architecture) == ArchLlama
	switch {
	case m.Kind != KindTransformer || !llama:
		// Not "set model.arch: llama": that makes another model (a
		// gpt3-1.3b preset becomes 1.8B parameters).
		return l.errPath(p, fmt.Sprintf("norm_impl=fused is torchtitan's fused RMSNorm, the kernel of its Llama blocks' RMSNorm only, and this model's blocks are %s (delete training.norm_impl)", normBlocks(m)))
	case s.Training.Compile.Blocks():
		return l.errPath(p, fmt.Sprintf("norm_impl=fused does not go with training.compile=%s: torchtitan refuses fused_rmsnorm under torch.compile (use norm_impl: fp32, or compile: none or loss)", s.Training.Compile))
	case s.Stack == "megatron":
		return l.errPath(p, "norm_impl=fused does not go with stack: megatron, whose Transformer Engine norms are fused kernels of their own (delete training.norm_impl)")
	}
	for i, x := range m.LayerList {
		d := x.Dims
		if d == nil {
			continue
		}
		what := ""
		switch {
		case d.QKNorm != "":
			what = "qk_norm=" + d.QKNorm
		case d.Norms != "":
			what = "norms=" + d.Norms
		case d.KVLoRARank > 0:
			what = "multi-head latent attention"
		case d.LinearAttention != "":
			what = "linear_attention=" + d.LinearAttention
		case d.Experts > 0:
			what = "routed experts"
		}
		if what != "" {
			return l.errPath(p, fmt.Sprintf("norm_impl=fused is derived for torchtitan's dense Llama blocks, and layer %d (%s) has %s (delete training.norm_impl)", i, x.Name, what))
		}
	}
	return nil
}

// normBlocks names a model's blocks for norm_impl's refusal.
func normBlocks(m *Model) string {
	switch {
	case m.Kind != KindTransformer:
		return "model.kind " + m.Kind + "'s, not Llama's"
	case m.Arch == ArchHF:
		return m.Architecture + "'s (model.hf_config), not Llama's"
	}
	return "GPT's, with LayerNorm (model.arch " + m.Arch + ")"
}
