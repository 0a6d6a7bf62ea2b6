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
	// NormATen is torch.nn.RMSNorm (F.rms_norm) on a PyTorch whose CUDA
	// rms_norm dispatches to aten::_fused_rms_norm, one kernel each way
	// with its own autograd formula: derivatives.yaml's _fused_rms_norm
	// entry backs it with _fused_rms_norm_backward(grad, input,
	// normalized_shape, result1, weight, ...), so autograd keeps the
	// input in its own dtype and result1, the fp32 rstd per row, and
	// neither an fp32 upcast nor the normalized tensor (tools/autograd/
	// derivatives.yaml, and rms_norm_symint in aten/src/ATen/native/
	// layer_norm.cpp at pytorch/pytorch
	// 3de78edb07f16b05fe8af347d4e2d1d495873d85). rms_norm_symint takes
	// the fused kernel unless the input is channels-last or complex or
	// the weight's dtype differs from the input's ("Mismatch dtype ...
	// Can not dispatch to fused implementation": then the composite
	// rms_norm_composite, NormFP32's tensors). It came with pytorch/pytorch
	// PR #153666 ("Fused RMSNorm implementation"), merged in late July
	// 2025 (its follow-up #159317 cites its review of 2025-07-22 and was
	// merged on 2025-07-29), after the release/2.8 branch cut of
	// 2025-06-25 (pytorch/pytorch#156745): torch 2.9.0 (2025-10-15) is
	// the first release with it; 2.8 and earlier run the composite on
	// CUDA. Two stacks run it with matching dtypes. Megatron-core's local
	// block (training.transformer_impl: local), whose Float16Module casts
	// the norm's weight to the input's 16-bit dtype
	// (convert_module_to_dtype_except_fp32_marked, megatron/core/
	// transformer/module.py at NVIDIA/Megatron-LM
	// d98e8a64ddf34856e74b24714e3bedb2f5a39553); under local it is the
	// default. And torchtitan from 3b39d7ab0 (2025-03-19, "Switch RMSNorm
	// implementation to native PyTorch version", pytorch/torchtitan#985:
	// build_norm's "rmsnorm" returns nn.RMSNorm(dim, eps=eps),
	// torchtitan/models/norms.py), whose models build nn.RMSNorm
	// themselves after 5078e92e4 (2025-04-17) removed norm_type: llama3's,
	// llama4's, qwen3's and gpt_oss's attention_norm, ffn_norm and final
	// norm, qwen3's q_norm and k_norm, deepseek_v3's q_norm and kv_norm
	// (torchtitan/models/*/model/model.py at
	// 238fa9953e4aec2a62582121564273d7cbb1e9f1); fully_shard's
	// MixedPrecisionPolicy(param_dtype=bf16) (apply_fsdp, torchtitan/
	// models/llama3/infra/parallelize.py there) casts their weights to
	// the activations' bf16. There it is not the default: the stack
	// preset is torchtitan 9dec370's, before 3b39d7ab0, whose own RMSNorm
	// class is NormFP32's code whatever the PyTorch, and the importer
	// writes it only for a job config its keys date to a torchtitan that
	// needs a PyTorch with the fused kernel (ttAfterVarlen).
	NormATen NormImpl = "aten_fused"
)

// ATenRMSNorm reports whether s's RMSNorms, if its blocks are Llama's,
// are torch.nn.RMSNorm on aten::_fused_rms_norm (NormATen):
// Megatron-core's local block (training.transformer_impl: local) unless
// training.norm_impl is fp32 (PyTorch 2.8 or earlier: the composite), and
// torchtitan's blocks with training.norm_impl aten_fused.
func ATenRMSNorm(s *Scenario) bool {
	if s.Stack == "megatron" {
		return s.Training.TransformerImpl == TransformerLocal && s.Training.NormImpl != NormFP32
	}
	return s.Stack == "torchtitan" && s.Training.NormImpl == NormATen
}

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
	if err := oneOf(l, p, s.Training.NormImpl, NormFP32, NormFused, NormATen); err != nil {
		return err
	}
	if s.Training.NormImpl == NormATen {
		return l.resolveNormATen(s)
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
	if i, name, what := firstLayerWith(m, notDenseLlamaBlock); what != "" {
		return l.errPath(p, fmt.Sprintf("norm_impl=fused is derived for torchtitan's dense Llama blocks, and layer %d (%s) has %s (delete training.norm_impl)", i, name, what))
	}
	return nil
}

// notDenseLlamaBlock says what a block has that a dense Llama block with
// Llama's norms has not ("" when it is one).
func notDenseLlamaBlock(d *BlockDims) string {
	switch {
	case d.QKNorm != "":
		return "qk_norm=" + d.QKNorm
	case d.Norms != "":
		return "norms=" + d.Norms
	case d.KVLoRARank > 0:
		return "multi-head latent attention"
	case d.LinearAttention != "":
		return "linear_attention=" + d.LinearAttention
	case d.Experts > 0:
		return "routed experts"
	}
	return ""
}

// notDenseLlama returns the first layer of m whose block is not a dense
// Llama block with Llama's norms, and what it has instead ("" when every
// layer is one).
func notDenseLlama(m *Model) (int, string) {
	i, _, what := firstLayerWith(m, notDenseLlamaBlock)
	return i, what
}

// resolveNormATen checks norm_impl aten_fused (NormATen): modelled for
// the Llama blocks of Megatron-core's local spec, where it is the default
// anyway, and of torchtitan (NormATen's sources); elsewhere the norms are
// other modules (Transformer Engine's under Megatron's default spec,
// apex's FusedLayerNorm for LayerNorm, hand-written fp32 RMSNorms in
// Hugging Face's, torchtune's and ibm-fms's models) or not derived yet.
func (l *loader) resolveNormATen(s *Scenario) *Error {
	const p = "training.norm_impl"
	m := &s.Model
	t := &s.Training
	llama := m.Kind == KindTransformer && (m.Arch == ArchLlama || m.Arch == ArchHF && HFBlockArch(m.Architecture) == ArchLlama)
	switch {
	case s.Stack == "megatron" && t.TransformerImpl == TransformerLocal:
		if !llama {
			return l.errPath(p, fmt.Sprintf("norm_impl=aten_fused is torch.nn.RMSNorm's fused kernel, and this model's blocks are %s, whose local norm is apex's FusedLayerNorm (delete training.norm_impl)", normBlocks(m)))
		}
		return nil
	case s.Stack != "torchtitan":
		return l.errPath(p, "norm_impl=aten_fused (torch.nn.RMSNorm on aten::_fused_rms_norm, PyTorch 2.9 or later) is derived for Megatron-core's local block and torchtitan's blocks only (set stack: torchtitan, or stack: megatron with training.transformer_impl: local, or delete training.norm_impl)")
	case !llama:
		return l.errPath(p, fmt.Sprintf("norm_impl=aten_fused is torch.nn.RMSNorm's fused kernel, the norm of torchtitan's Llama-style blocks, and this model's blocks are %s (delete training.norm_impl)", normBlocks(m)))
	case t.Autocasts() || t.AutocastOps():
		// rms_norm_symint takes the composite when the weight's dtype is
		// not the input's: under torch.autocast the weight stays fp32
		// (NormATen).
		return l.errPath(p, fmt.Sprintf("norm_impl=aten_fused does not go with training.autocast=%s: the norm's fp32 weight differs from its 16-bit input, and PyTorch runs the composite rms_norm then (delete training.norm_impl)", t.Autocast))
	case t.ParamDType == FP32:
		return l.errPath(p, "norm_impl=aten_fused is derived for 16-bit parameters (FSDP2's param_dtype bf16), and training.param_dtype is fp32 (delete training.norm_impl)")
	}
	if i, name, what := firstLayerWith(m, func(d *BlockDims) string {
		switch {
		case d.Norms != "":
			return "norms=" + d.Norms + ", an fp32 RMSNorm of its own"
		case d.LinearAttention != "":
			return "linear_attention=" + d.LinearAttention
		}
		return ""
	}); what != "" {
		return l.errPath(p, fmt.Sprintf("norm_impl=aten_fused is derived for blocks whose norms are torch.nn.RMSNorm, and layer %d (%s) has %s (delete training.norm_impl)", i, name, what))
	}
	return nil
}

// firstLayerWith is the first layer of m's layer list whose dimensions
// has names (what, non-empty), with its index and name; "" when none.
func firstLayerWith(m *Model, has func(*BlockDims) string) (i int, name, what string) {
	for i, x := range m.LayerList {
		if x.Dims == nil {
			continue
		}
		if what := has(x.Dims); what != "" {
			return i, x.Name, what
		}
	}
	return 0, "", ""
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
