package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// This file counts the HBM traffic of the casts an fp8 recipe runs around
// its GEMMs: every fp8 GEMM operand is a bf16 tensor quantized first (an
// activation in forward, an output gradient in backward, a weight), and
// those kernels are memory-bound, timed as the rest of the memory-bound
// class (bytes / (HBM · DefaultHBMEfficiency)). Hopper's fp8 GEMMs take
// only the TN layout, so a tensor used by two GEMMs along different
// dimensions (an input by the forward and the weight-gradient GEMM, an
// output gradient by the data- and weight-gradient GEMMs, a weight by the
// forward and the data-gradient GEMM) is written twice, row-wise and
// column-wise.

// FP8CastRule is one recipe's cast traffic in bytes per element of each
// kind of quantized tensor.
type FP8CastRule struct {
	// Input is per element of a GEMM input quantized by its own kernel(s);
	// NormInput per element of one a preceding norm kernel quantizes
	// (Transformer Engine's LayerNormLinear: only what that fusion adds is
	// charged); Grad per element of an output gradient.
	Input, NormInput, Grad int64
	// Weight is per weight element each time the weight is cast:
	// WeightPerStep true when the fp8 copies are cached across a step's
	// micro-batches (cast once a step), else every micro-batch's forward.
	Weight        int64
	WeightPerStep bool
	// InputBwd and WeightBwd are what backward adds per element of a
	// GEMM input and of a weight (eager torchao: the saved bf16 input
	// cast again, the fp8 operands copied into _scaled_mm's layouts); 0
	// for recipes whose forward writes every copy backward reads.
	InputBwd, WeightBwd int64
	// PerLinear: every linear module quantizes its own input, so an input
	// read by several (llama's wq, wk, wv; w1, w3) is cast once per
	// module; false when one cast serves all (a fused module, or a compiled
	// graph whose common-subexpression elimination merges identical casts
	// of one tensor).
	PerLinear bool
}

// FP8CastRuleOf is the cast traffic of recipe on a GPU whose fp8 GEMMs take
// other layouts than TN (nonTN: Blackwell's sm_100 and sm_103), under
// stack: megatron (megatron: Transformer Engine's fused modules), with the
// blocks compiled or not. The zero rule for training.fp8 none.
//
// Transformer Engine (NVIDIA/TransformerEngine
// d0067d0da6cb01811b8072a7d304f0e00344ce2b):
//   - delayed scaling (te): Float8Quantizer::quantize (pytorch/csrc/
//     quantizer.cpp :632) runs nvte_quantize_v2, which for a tensor wanted
//     row- and column-wise runs one cast_transpose (common/cast/dispatch/
//     quantize.cuh :67-72) reading bf16 and writing both fp8 copies,
//     recording the amax for the next step's scale in the same kernel:
//     2 + 1 + 1 = 4 B per element; the weight the same, once a step under
//     Megatron (its TE modules pass is_first_microbatch,
//     megatron/core/extensions/transformer_engine.py :947-954 at
//     Megatron-LM 44151194143711368b17797bc7000fd0285d8d51, set at each
//     step's first micro-batch, pipeline_parallel/schedules.py :418-419,
//     and the cached copies serve the other micro-batches), every
//     micro-batch elsewhere (a te.Linear called without it recasts its
//     weight on every forward). Under a fused norm
//     (LayerNormLinear, rmsnorm_fwd in pytorch/csrc/extensions/
//     normalization.cpp :343, Impl::FULLY_FUSED for Float8Quantizer) the
//     norm kernel writes the fp8 row-wise output itself and nvte_rmsnorm_fwd
//     then transposes it (common/normalization/rmsnorm/rmsnorm_api.cpp
//     :100-107, nvte_transpose): 1 + 1 B per element added.
//   - current scaling (te_current): Float8CurrentScalingQuantizer::
//     quantize_impl (quantizer.cpp :980-1029) runs
//     nvte_compute_amax_with_config (reads the tensor, 2 B), the scale, then
//     the same nvte_quantize_v2 (4 B): 6 B per element, weights too (once
//     a step under Megatron, as above). Under a fused norm (Impl::FUSED_NORM_AMAX_FP8,
//     normalization.cpp :351-356) the norm writes its bf16 output and amax,
//     and quantize_with_amax casts it: 2 + 1 + 1 = 4 B added.
//   - where the GEMMs take other layouts (nvte_is_non_tn_fp8_gemm_supported,
//     common/transformer_engine.cpp :1191-1202: compute capability 10.x and
//     ≥ 13), Float8Quantizer and Float8CurrentScalingQuantizer write no
//     transpose (quantizer.cpp :361-375): one byte less per element, and
//     nothing added by the fused norm under delayed scaling.
//   - under stack: megatron the blocks use TE's LayerNormLinear for qkv and
//     fc1 (one quantized input each); other stacks (Accelerate's TE
//     integration) swap each nn.Linear for te.Linear: each quantizes its
//     own input.
//
// torchao float8, tensorwise dynamic scaling, from torchao's own model of
// the kernels torch.compile makes of it (pytorch/ao
// 36027d82d1ad9949597ea16002ff4940374b1b94,
// torchao/testing/training/roofline_utils.py :146-174,
// get_tensor_memory_traffic_ovhd_s): an input or output gradient is an
// amax pass (2 B; fused into the preceding kernel when compiled,
// enable_fusion_modeling) and a cast writing row- and column-major fp8
// (2 + 1 + 1); a weight an amax pass (never fused) and a cast in forward
// and another in backward (2 + 1 each): 8 B per weight element every
// micro-batch (torchao/float8/float8_linear.py :38-194 casts the weight in
// forward and again in backward, from the bf16 copy it saves). Compiled
// blocks cast each distinct input once (AOTAutograd's
// common-subexpression elimination, cse = True in torch/_functorch/
// config.py at pytorch/pytorch d4e83dcec2805dc6648114e5d6b47bf83cd64631);
// eager ones once per linear, kernel by kernel (torchaoEagerRule).
func FP8CastRuleOf(recipe scenarios.FP8Recipe, nonTN, megatron, compiled bool) (FP8CastRule, error) {
	col := int64(1) // the column-wise copy
	if nonTN {
		col = 0
	}
	switch recipe {
	case scenarios.FP8None, "":
		return FP8CastRule{}, nil
	case scenarios.FP8TE:
		return FP8CastRule{Input: 3 + col, NormInput: 2 * col, Grad: 3 + col, Weight: 3 + col, WeightPerStep: megatron, PerLinear: !megatron}, nil
	case scenarios.FP8TECurrent:
		return FP8CastRule{Input: 5 + col, NormInput: 3 + col, Grad: 5 + col, Weight: 5 + col, WeightPerStep: megatron, PerLinear: !megatron}, nil
	case scenarios.FP8TorchAO:
		if !compiled {
			return torchaoEagerRule(), nil
		}
		return FP8CastRule{Input: 4, Grad: 4, Weight: 8}, nil
	}
	return FP8CastRule{}, fmt.Errorf("zero: unknown fp8 recipe %q", recipe)
}

// CastKernel is one memory-bound kernel of an fp8 cast: its name and the
// bytes it reads and writes per element of the tensor cast.
type CastKernel struct {
	Op          string
	Read, Write int64
}

// Bytes is k's traffic per element.
func (k CastKernel) Bytes() int64 { return k.Read + k.Write }

// castBytes is the traffic of the kernels ks per element.
func castBytes(ks []CastKernel) int64 {
	var b int64
	for _, k := range ks {
		b += k.Bytes()
	}
	return b
}

// TorchAOEagerCast is the kernels eager PyTorch runs for torchao's
// tensorwise dynamic cast of a bf16 tensor, hp_tensor_to_float8_dynamic
// (torchao/float8/float8_scaling_utils.py :55-70 at pytorch/ao
// 3eb18e771bc7e830a2e56002407256052d8c5e7d, the last float8 commit before
// torchtitan 2271b6386's runs of 2025-01-31; no fused or Triton path in
// torchao/float8 at that commit): tensor_to_amax's torch.max(torch.abs(x))
// (float8_utils.py :100: abs writes a bf16 tensor, max reduces it to a
// scalar), amax_to_scale's scalar ops (:44-50: to(float64), clamp, the
// reciprocal and product of `max / amax`, to(float32); 8 B each, not
// counted), then _ToFloat8ConstrFunc.forward's tensor.to(torch.float32) *
// scale (float8_tensor.py :153: an fp32 copy, then an fp32 product) and
// to_fp8_saturated's clamp and cast (float8_utils.py :152-153, on the
// fp32 tensor): 33 B per element, where the compiled graph's fused
// kernels move 4 to 6 (FP8CastRuleOf).
var TorchAOEagerCast = []CastKernel{
	{"abs", 2, 2},
	{"max", 2, 0},
	{"to(float32)", 2, 4},
	{"mul(scale)", 4, 4},
	{"clamp", 4, 4},
	{"to(float8_e4m3fn)", 4, 1},
}

// TorchAOLayoutCopy is the copy torchao's preprocess_addmm makes of an fp8
// operand whose layout torch._scaled_mm does not take (a not row-major:
// a.contiguous(); b row-major: b.t().contiguous().t();
// torchao/float8/float8_ops.py :250-253 at 3eb18e771): 1 B read, 1 written.
var TorchAOLayoutCopy = CastKernel{"contiguous", 1, 1}

// torchaoEagerRule is eager torchao float8's traffic per Float8Linear and
// micro-batch, as torchao/float8/float8_linear.py at 3eb18e771 runs it with
// torchtitan's config (torchtitan/float8.py :58-63 at d4c86e3758a8, the
// parent of 2271b6386: tensorwise dynamic scaling for all three operands,
// force_recompute_fp8_weight_in_bwd left False, config.py :235):
//   - forward: Float8Linear.forward casts the weight (_get_weight_scale
//     :325, _cast_weight_to_float8_t :338), matmul_with_hp_or_float8_args
//     the input (:90); the weight, already fp8, is not cast again (:101),
//     and the GEMM's operands are in _scaled_mm's layouts (input row-major,
//     weight.t() column-major): a cast each, per linear (wq, wk and wv
//     each cast their common input).
//   - backward: ctx saved the bf16 input and the fp8 weight (:79). The
//     output gradient is cast for the data gradient (:145) and again, amax
//     and all, for the weight gradient (:210); the input is cast again
//     (:227); the weight is not (:156). preprocess_addmm then copies the
//     fp8 weight (row-major as the data-gradient GEMM's b), the gradient's
//     transpose (the weight-gradient GEMM's a) and the input (its b)
//     (TorchAOLayoutCopy).
//
// With force_recompute_fp8_weight_in_bwd (torchtitan from 473674acf) the
// weight's cast would rerun in backward from the saved scale; no run this
// models sets it. The scalar kernels (5 a cast, and addmm_float8_unwrapped's
// two reciprocals a GEMM, float8_python_api.py :37-38) are not charged:
// zerosim has no per-kernel cost, and at torchao's own 2 µs for a
// one-element kernel on an H100 (torchao/float8/roofline_utils.py :26-28 at
// 3eb18e771) they are 62 µs per linear and micro-batch.
func torchaoEagerRule() FP8CastRule {
	c := castBytes(TorchAOEagerCast)
	cp := TorchAOLayoutCopy.Bytes()
	return FP8CastRule{Input: c, InputBwd: c + cp, Grad: 2*c + cp, Weight: c, WeightBwd: cp, PerLinear: true}
}

// torchaoOpRerun is the traffic per element of one eager torchao cast that
// torchtitan's op policy reruns in a recompute (fp8CastRerun): the cast's
// kernels but abs and max when the policy keeps their outputs (savesAbs:
// memory.OpSavesAbs), all of them otherwise.
func torchaoOpRerun(savesAbs bool) int64 {
	if savesAbs {
		return castBytes(TorchAOEagerCast[2:])
	}
	return castBytes(TorchAOEagerCast)
}

// NonTNFP8 reports whether gpu's fp8 GEMMs take layouts other than TN
// (TransformerEngine's nvte_is_non_tn_fp8_gemm_supported: compute
// capability 10.x — B200, GB200, B300, GB300 — and ≥ 13; not the RTX 5090's
// 12.0 nor Hopper's 9.0): the Blackwell data-centre GPUs (blackwell).
func NonTNFP8(gpu string) bool { return blackwell(gpu) }

// FP8Linear is one fp8 linear layer of a unit: Rows rows of input width K
// and output width N (weight N×K; Weights such matrices, 0 meaning one:
// the local experts of a grouped GEMM, whose rows split among them), Norm
// when a fused norm quantizes its input (LayerNormLinear), Input the tensor
// it reads (linears reading the same tensor share an Input: wq, wk and wv;
// w1 and w3).
type FP8Linear struct {
	Rows, K, N, Weights int64
	Norm                bool
	Input               int
}

// FP8CastBytes is the cast traffic of an fp8 unit made of the linears ls
// under rule r for one micro-batch: forward (the inputs' casts, and the
// weights' unless cached for the step) and backward (the output
// gradients'); perStep is the weights' casts run once a step (0 unless
// r.WeightPerStep).
func FP8CastBytes(r FP8CastRule, ls []FP8Linear) (fwd, bwd, perStep int64, err error) {
	var c flopCalc
	seen := map[int]bool{}
	var weights int64
	for _, l := range ls {
		if l.Rows < 0 || l.K < 0 || l.N < 0 || l.Weights < 0 {
			return 0, 0, 0, fmt.Errorf("zero: fp8 linear of %d×%d rows %d, %d weights: sizes must be ≥ 0", l.N, l.K, l.Rows, l.Weights)
		}
		if r.PerLinear || !seen[l.Input] {
			seen[l.Input] = true
			per := r.Input
			if l.Norm && !r.PerLinear {
				per = r.NormInput
			}
			fwd = c.Add(fwd, c.Mul(per, l.Rows, l.K))
			bwd = c.Add(bwd, c.Mul(r.InputBwd, l.Rows, l.K))
		}
		bwd = c.Add(bwd, c.Mul(r.Grad, l.Rows, l.N))
		w := c.Mul(l.N, l.K, max(l.Weights, 1))
		weights = c.Add(weights, c.Mul(r.Weight, w))
		bwd = c.Add(bwd, c.Mul(r.WeightBwd, w))
	}
	if r.WeightPerStep {
		perStep = weights
	} else {
		fwd = c.Add(fwd, weights)
	}
	if c.Err != nil {
		return 0, 0, 0, fmt.Errorf("zero: fp8 cast bytes overflow: %w", c.Err)
	}
	return fwd, bwd, perStep, nil
}

// blockFP8Linears is the fp8 linears of a softmax-attention block with
// dimensions d (t = seq·batch rows): the q, k and v projections of the
// attention norm's output, the output projection of the attention, and,
// with ffn > 0, the MLP (llama: gate and up of the FFN norm's output, down
// of their product; gpt: fc1 and fc2). Under Megatron's TE modules (fused)
// q, k and v are one LayerNormLinear, as are gate and up (a LayerNormLinear
// when mlpNorm, else a Linear after a separate norm); elsewhere they are
// separate linears of the same input.
func blockFP8Linears(d FLOPDims, ffn int64, fused, mlpNorm bool) []FP8Linear {
	t := d.Seq * d.Batch
	qw, kv := d.Heads*d.HeadDim, d.KVHeads*d.HeadDim
	var ls []FP8Linear
	if fused {
		ls = append(ls, FP8Linear{Rows: t, K: d.Hidden, N: qw + 2*kv, Norm: true, Input: 0})
	} else {
		ls = append(ls, FP8Linear{Rows: t, K: d.Hidden, N: qw, Input: 0}, FP8Linear{Rows: t, K: d.Hidden, N: kv, Input: 0},
			FP8Linear{Rows: t, K: d.Hidden, N: kv, Input: 0})
	}
	ls = append(ls, FP8Linear{Rows: t, K: qw, N: d.Hidden, Input: 1})
	if ffn <= 0 {
		return ls
	}
	gated := d.Arch == "llama"
	switch {
	case gated && fused:
		ls = append(ls, FP8Linear{Rows: t, K: d.Hidden, N: 2 * ffn, Norm: mlpNorm, Input: 2})
	case gated:
		ls = append(ls, FP8Linear{Rows: t, K: d.Hidden, N: ffn, Input: 2}, FP8Linear{Rows: t, K: d.Hidden, N: ffn, Input: 2})
	default:
		ls = append(ls, FP8Linear{Rows: t, K: d.Hidden, N: ffn, Norm: fused && mlpNorm, Input: 2})
	}
	return append(ls, FP8Linear{Rows: t, K: ffn, N: d.Hidden, Input: 3})
}

// expertFP8Linears is the fp8 linears of a unit of routed SwiGLU experts
// for t tokens each routed to k of E experts, ep-way expert parallel:
// t·k rows in all (balanced routing) split over the E/ep local experts,
// gate and up fused (fc1, 2f wide: Megatron's TEGroupedMLP; TE's
// GroupedLinear quantizes the per-expert splits in one pass, the same
// bytes), then the down projection.
func expertFP8Linears(t, k, e, ep, h, f int64) ([]FP8Linear, error) {
	var c flopCalc
	r, f2 := c.Mul(t, k), c.Mul(2, f)
	if c.Err != nil {
		return nil, fmt.Errorf("zero: expert rows overflow: %w", c.Err)
	}
	local := e / max(ep, 1)
	if local <= 0 {
		return nil, nil
	}
	return []FP8Linear{{Rows: r, K: h, N: f2, Weights: local, Input: 0}, {Rows: r, K: f, N: h, Weights: local, Input: 1}}, nil
}
