package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// This file derives the HBM traffic of an eager Llama block's memory-bound
// kernels op by op, as PyTorch runs them: every kernel reads its inputs and
// writes its output in their dtypes, and nothing stays in cache between
// kernels (a micro-batch's t×h fp32 tensor, 134 MB for 8,192 tokens of a
// 4,096-wide model, is larger than the 40-50 MB L2 of an A100 or H100).
// The forward chains are read from the model code each stack runs; the
// backward ones from autograd's formulas for those ops (pytorch/pytorch
// d5913d4b15d73b0e89d873a9e786cf46da3f5644,
// torch/csrc/autograd/FunctionsManual.cpp: pow_backward is
// grad * (exponent * self.pow(exponent - 1)), three kernels, self.pow(1)
// being a copy; sum_backward is grad.expand, a view, so mean's backward is
// one division writing the full tensor; mul_tensor_backward is
// grad * other, and a broadcast operand's gradient is then summed to its
// shape; tools/autograd/derivatives.yaml: silu's is one silu_backward
// kernel, _to_copy's a cast back, add's passes the gradient on, and a
// tensor read by several ops has its gradients added by the engine). Terms
// per row rather than per element (the norm's mean and rsqrt, RoPE's
// frequency table, the norm weight's h elements) are under 1 % of a chain
// and left out. GEMMs and the attention kernel are not here: their bytes
// are GEMMSeconds' and the attention efficiency's.

// denseParts is what a dense Llama block runs besides its norms and
// residual adds (llamaParts): its SwiGLU, RoPE on the q and k widths and
// softmax attention, of d filled (FLOPDims.fill).
func denseParts(d FLOPDims) (llamaParts, error) {
	var c flopCalc
	qk := c.Add(c.Mul(d.Heads, d.HeadDim), c.Mul(d.KVHeads, d.HeadDim)) // q and k widths
	if c.Err != nil {
		return llamaParts{}, fmt.Errorf("zero: elementwise bytes overflow: %w", c.Err)
	}
	return llamaParts{FFN: d.FFN, RoPE: qk, Attention: true}, nil
}

// llamaParts is what an eager Llama-style block runs besides its two
// RMSNorms and two residual adds (and the gradient additions of the
// tensors several ops read): FFN the SwiGLU width (0: none, a MoE block's
// attention half with no shared expert), RoPE the q and k width rotated per
// token (0: none), QKNorm the q and k width RMS-normalised per token
// (Qwen3's q_norm and k_norm; 0: none), Attention a softmax attention of
// d's heads (ibm-fms's output copy under the rotation RoPE, the KV copies
// of kvExpanded). FusedNorm: the two RMSNorms are torchtitan's
// fused_rmsnorm (training.norm_impl: fused), one kernel each way
// (fusedNormFwd, fusedNormBwd), not the eager fp32 chain. ATenNorm: every
// RMSNorm of the block, q_norm and k_norm too, is torch.nn.RMSNorm on
// aten::_fused_rms_norm (training.norm_impl: aten_fused, torchtitan's
// blocks: scenarios.NormATen), one kernel each way that reads x and
// writes y and the fp32 rstd per row, and reads dy, x and rstd and writes
// dx (rms_norm_symint, aten/src/ATen/native/layer_norm.cpp at
// pytorch/pytorch 3de78edb07f16b05fe8af347d4e2d1d495873d85; the bytes of
// megatronChain's local block on it): fusedNormFwd and fusedNormBwd.
// FusedSwiGLU:
// the SwiGLU is one kernel each way (Liger's LigerSiLUMulFunction:
// fusedSwiGLUFwd, fusedSwiGLUBwd), not silu then mul.
type llamaParts struct {
	FFN, RoPE, QKNorm int64
	Attention         bool
	FusedNorm         bool
	ATenNorm          bool
	FusedSwiGLU       bool
}

// llamaChain is one eager Llama-style block's memory-bound HBM traffic
// in bytes, forward and backward (without recompute: PlanCompute reruns
// the forward's share), for the parts p of a block with
// dimensions d (filled).
func llamaChain(d FLOPDims, p llamaParts, rope scenarios.RoPEImpl, kvExpanded, dropout bool) (fwd, bwd int64, err error) {
	var c flopCalc
	t := c.Mul(d.Seq, d.Batch)
	h, f, qk := d.Hidden, p.FFN, p.RoPE
	rf, rb, err := ropeBytes(rope)
	if err != nil {
		return 0, 0, err
	}
	nf, nb := int64(rmsNormFwd), int64(rmsNormBwd)
	if p.FusedNorm || p.ATenNorm {
		nf, nb = fusedNormFwd, fusedNormBwd
	}
	sf, sb := int64(swigluFwd), int64(swigluBwd)
	if p.FusedSwiGLU {
		sf, sb = fusedSwiGLUFwd, fusedSwiGLUBwd
	}
	// Per token: two RMSNorms, RoPE on q and k, two residual adds, SwiGLU.
	perF := c.Add(c.Mul(2, nf, h), c.Mul(rf, qk), c.Mul(2, residualAdd, h), c.Mul(sf, f))
	// Backward adds the gradients of the tensors several ops read: the
	// block input and the attention residual sum (each read by a norm and
	// a residual add: residualAdd each, counted above as the adds'
	// backward), the attention norm's output (read by wq, wk and wv: two
	// additions) and the FFN norm's output (w1 and w3: one; a MoE block's
	// router and dispatch: one); each addition reads two bf16 gradients
	// and writes one, 6 B per element.
	perB := c.Add(c.Mul(2, nb, h), c.Mul(rb, qk), c.Mul(2, residualAdd, h), c.Mul(3, 6, h), c.Mul(sb, f))
	if p.QKNorm > 0 {
		// q_norm and k_norm (Qwen3Attention: RMSNorm over each head's
		// head_dim before RoPE), the same eager RMSNorm chain, or
		// aten::_fused_rms_norm's kernels (ATenNorm; torchtitan's fused
		// Triton norm was never theirs).
		qf, qb := int64(rmsNormFwd), int64(rmsNormBwd)
		if p.ATenNorm {
			qf, qb = fusedNormFwd, fusedNormBwd
		}
		perF, perB = c.Add(perF, c.Mul(qf, p.QKNorm)), c.Add(perB, c.Mul(qb, p.QKNorm))
	}
	if p.Attention && rope == scenarios.RoPERotation {
		// The rotation form leaves q contiguous in (b, h, s, d), and the
		// flash kernel allocates its output like q (mha_fwd: out =
		// empty_like(q_padded), csrc/flash_attn/flash_api.cpp at
		// Dao-AILab/flash-attention 0251105a, which SDPA's flash backend
		// vendors), so ibm-fms's attn.transpose(2, 1).contiguous()
		// (fms/modules/attention.py at v0.0.3) copies the output to
		// (b, s, h·d): 2+2 per element. (Under the complex form q stays
		// (b, s, h, d) and that contiguous() is free.)
		perF = c.Add(perF, c.Mul(4, d.Heads, d.HeadDim))
	}
	if p.Attention && kvExpanded && d.KVHeads != d.Heads {
		// k and v each read (2 B per KV element) and written out per query
		// head (2 B per query element); backward sums the copies back.
		x := c.Mul(2, c.Add(c.Mul(2, d.Heads, d.HeadDim), c.Mul(2, d.KVHeads, d.HeadDim)))
		perF, perB = c.Add(perF, x), c.Add(perB, x)
	}
	if dropout {
		// nn.Dropout on the attention and FFN outputs before each residual
		// add (ibm-fms v0.0.3 fms/models/llama.py LLaMABlock.forward) and on
		// the SwiGLU product before w2 (fms/modules/feedforward.py
		// GatedLinearUnit.forward, given the block's p_dropout):
		// native_dropout reads 2 B, writes 2 B and a 1 B mask; its backward
		// reads the gradient and the mask and writes 2 B.
		x := c.Mul(5, c.Add(c.Mul(2, h), f))
		perF, perB = c.Add(perF, x), c.Add(perB, x)
	}
	fwd, bwd = c.Mul(t, perF), c.Mul(t, perB)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: elementwise bytes overflow: %w", c.Err)
	}
	return fwd, bwd, nil
}

// megatronChain is the memory-bound HBM traffic of a Llama-style block as
// Megatron-LM 44151194143711368b17797bc7000fd0285d8d51 runs it with
// Transformer Engine (get_gpt_layer_with_transformer_engine_spec,
// megatron/core/models/gpt/gpt_layer_specs.py :138-159), for the parts p of
// a block with dimensions d (filled), moe when routed experts read the MLP
// norm's output beside the router:
//   - the attention norm is fused into linear_qkv (TE's LayerNormLinear)
//     and, in a dense block, the MLP norm into linear_fc1; a MoE block's
//     pre_mlp_layernorm is a TENorm. Either is one TE rmsnorm kernel
//     (rmsnorm_fwd, transformer_engine/pytorch/csrc/extensions/
//     normalization.cpp at TransformerEngine
//     d0067d0da6cb01811b8072a7d304f0e00344ce2b): reads x and writes y, 2 + 2 B
//     per element (teNormFwd; the fp32 rstd is per row); its backward reads
//     dy and x and writes dx, 6 B (teNormBwd). q_layernorm and k_layernorm
//     (qk_layernorm, Qwen3) are TENorms over q and k: the same bytes.
//   - RoPE is fused (apply_rope_fusion: Megatron-LM's --no-rope-fusion
//     defaults it on, megatron/training/arguments.py :2549; Megatron-Bridge
//     21d102f5e's performance overrides set it, scripts/performance/utils/
//     overrides.py :66-67): TE's fused_apply_rotary_pos_emb reads and
//     writes q and k once each way, as RoPEFused.
//   - the attention kernel takes the KV heads as they are (TE's
//     DotProductAttention handles GQA): no KV copies.
//   - self_attn_bda and mlp_bda are get_bias_dropout_add under
//     bias_dropout_fusion (on unless --no-bias-dropout-fusion, which
//     zerosim does not model): bias_dropout_add_fused_train, whose
//     bias add, dropout and residual add are one compiled function
//     (@jit_fuser, megatron/core/fusions/fused_bias_dropout.py lines 9-52
//     at NVIDIA/Megatron-LM baf94af3c667248865f23df73b9fb8e2395e6fd0,
//     core_v0.8.0; jit_fuser is torch.compile from PyTorch 2.2,
//     megatron/core/jit.py lines 8-11 there): one kernel reading the
//     branch output and the residual and writing the sum, 6 B per element
//     (residualAdd), and under dropout the 1 B mask the backward reads
//     (random ops are not recomputed by the compiled backward, so the
//     mask is saved); its backward hands the gradient to the residual,
//     where it is added to the norm's: 6 B (residualAdd), and under
//     dropout the dropout's backward reads the gradient and the mask and
//     writes the branch's gradient, 2 + 1 + 2 B.
//   - the SwiGLU is bias_swiglu_impl under bias_activation_fusion
//     (megatron/core/fusions/fused_bias_swiglu.py), one fused kernel reading
//     the gate and up halves and writing the product: 4 + 2 B per element of
//     f (fusedSwiGLUFwd); its backward reads the gradient and both halves
//     and writes their gradients, 2 + 4 + 4 (fusedSwiGLUBwd).
//   - linear_qkv and linear_fc1 each read their norm's output once, so
//     no gradient additions there; in a MoE block the router and the token
//     dispatcher both read the MLP norm's output: one addition, 6 B.
//
// A GPT block (gpt: LayerNorm, GELU MLP, a bias on every linear, learned
// positions) is built from the same spec: Megatron-core at core_v0.8.0
// (baf94af3, the Megatron-core of NeMo 24.07) has one
// get_gpt_layer_with_transformer_engine_spec for both (gpt_layer_specs.py
// line 46: linear_qkv=TELayerNormColumnParallelLinear line 59,
// self_attn_bda and mlp_bda=get_bias_dropout_add lines 68 and 71,
// linear_fc1=TELayerNormColumnParallelLinear line 119), so its chain is
// the one above but for:
//   - the norms: TE's layernorm_fwd reads x and writes y (the fp32 mean
//     and rsigma are per row), its backward reads dy and x and writes dx:
//     the RMSNorm's 4 and 6 B (teNormFwd, teNormBwd). The local spec's
//     LNImpl (get_gpt_layer_local_spec, lines 77-107 there), apex's
//     FusedLayerNorm or torch's LayerNorm (lines 29-42), is one kernel each
//     way too: the same bytes.
//   - no RoPE: the positions are the learned embedding's, counted with it
//     (embeddingBytes, positionBytes).
//   - the MLP's activation: bias_gelu_impl under bias_activation_fusion
//     (megatron/core/transformer/mlp.py lines 100-106 there; the local
//     spec's MLP is the same module), GeLUFunction
//     (megatron/core/fusions/fused_bias_gelu.py lines 16-50): forward one
//     compiled kernel, bias_gelu, reading fc1's output and writing the
//     activation, 2 + 2 B per element of f (biasGELUFwd); backward
//     bias_gelu_back reads the gradient and fc1's output and writes tmp,
//     2 + 2 + 2, and returns tmp as the bias's gradient too, which the
//     autograd engine sums to the bias's shape (validate_outputs'
//     at::sum_to, torch/csrc/autograd/engine.cpp at pytorch/pytorch
//     e1253a956f6866469eafd88cc3bfb4627f4b1efc), reading tmp once more: 8
//     (biasGELUBwd).
//   - the biases of linear_proj and linear_fc2 (skip_bias_add, handed to
//     the bias-dropout-add): added inside its one kernel forward (a row
//     of h, under 1 %), and in backward their gradients are the column
//     sums of the branch's gradient, read once: 2 B per element each.
//     linear_qkv's bias is added in TE's GEMM epilogue and its gradient
//     comes out of TE's cast or GEMM: no bytes here.
//
// Left out: the split of the fused qkv output into q, k and v, whose
// backward concatenates their gradients.
//
// Megatron-core's own block (training.transformer_impl: local,
// get_gpt_layer_local_spec at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553) runs the same chain but for
// its RMSNorms, the block's and q_layernorm/k_layernorm: torch.nn.RMSNorm
// (WrappedTorchNorm, LocalSpecProvider.layer_norm in
// megatron/core/models/backends.py lines 118-127 at d98e8a64). On
// PyTorch 2.9 or later (training.norm_impl aten_fused, local's default)
// that is aten::_fused_rms_norm, one kernel each way that reads x and
// writes y and the fp32 rstd per row, and reads dy, x and rstd and
// writes dx (rms_norm_symint, aten/src/ATen/native/layer_norm.cpp at
// pytorch/pytorch 3de78edb07f16b05fe8af347d4e2d1d495873d85): TE's 4 and
// 6 B. Before 2.9 (norm_impl fp32, composite true) it is the composite
// rms_norm (rms_norm_composite there: the input upcast to fp32, pow,
// mean, rsqrt and multiplies as separate kernels), timed as the eager
// chain's rmsNormFwd and rmsNormBwd. Its MLP, bias_swiglu_impl and the
// bias-dropout-adds are the same modules as the TE block's. Its
// attention (and TE's unfused one) is eager: blockTraffic adds the
// scores' traffic.
func megatronChain(d FLOPDims, p llamaParts, moe, dropout, composite, gpt bool) (fwd, bwd int64, err error) {
	var c flopCalc
	t := c.Mul(d.Seq, d.Batch)
	h, f := d.Hidden, p.FFN
	normF, normB := int64(teNormFwd), int64(teNormBwd)
	if composite {
		normF, normB = rmsNormFwd, rmsNormBwd
	}
	actF, actB := int64(fusedSwiGLUFwd), int64(fusedSwiGLUBwd)
	if gpt {
		actF, actB = biasGELUFwd, biasGELUBwd
	}
	perF := c.Add(c.Mul(2, normF, h), c.Mul(4, p.RoPE), c.Mul(normF, p.QKNorm), c.Mul(2, residualAdd, h), c.Mul(actF, f))
	perB := c.Add(c.Mul(2, normB, h), c.Mul(4, p.RoPE), c.Mul(normB, p.QKNorm), c.Mul(2, residualAdd, h), c.Mul(actB, f))
	if moe {
		perB = c.Add(perB, c.Mul(6, h))
	}
	if gpt {
		// linear_proj's and linear_fc2's bias gradients.
		perB = c.Add(perB, c.Mul(2, 2, h))
	}
	if dropout {
		// The two bias-dropout-adds' masks, and their dropout backward.
		perF = c.Add(perF, c.Mul(2, 1, h))
		perB = c.Add(perB, c.Mul(2, 5, h))
	}
	fwd, bwd = c.Mul(t, perF), c.Mul(t, perB)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: elementwise bytes overflow: %w", c.Err)
	}
	return fwd, bwd, nil
}

// localComposite: s is Megatron-core's local block with torch.nn.RMSNorm
// on the composite rms_norm (training.norm_impl fp32: PyTorch 2.8 or
// earlier; megatronChain).
func localComposite(s *scenarios.Scenario) bool {
	return s.Stack == "megatron" && s.Training.TransformerImpl == scenarios.TransformerLocal && !scenarios.ATenRMSNorm(s)
}

// Bytes per element of Megatron's fused kernels (megatronChain).
const (
	teNormFwd      = 4
	teNormBwd      = 6
	fusedSwiGLUFwd = 6
	fusedSwiGLUBwd = 10
	biasGELUFwd    = 4
	biasGELUBwd    = 8
)

// Bytes per element of the eager chains (x is bf16, fp32 where upcast).
const (
	// rmsNormFwd: RMSNorm in fp32 as meta-llama/llama llama/model.py at
	// 8580eb9a896b, torchtitan torchtitan/models/norms.py RMSNorm at 9dec370ad26b
	// (norm_type "rmsnorm" in train_configs/llama3_8b.toml) and ibm-fms
	// v0.0.3 fms/modules/layernorm.py LayerNormParameterized
	// (use_high_precision_pow=True in fms/models/llama.py LLaMABlock)
	// write it: x.float() 2+4, pow(2) 4+4, mean 4, mul by rsqrt 4+4,
	// type_as 4+2, weight * 2+2 = 36.
	rmsNormFwd = 36
	// rmsNormBwd: weight * y: grad·weight 2+2, grad·y 2+2+2 and its sum
	// over tokens 2 (the weight's gradient) = 12; type_as back to
	// fp32 2+4; x·rstd: grad·rstd 4+4, grad·x 4+4+4 and its sum over h 4;
	// mean: the division writing the expanded gradient 4; pow: pow(1) 4+4,
	// 2· 4+4, grad· 4+4+4; the two gradients of x.float() added 4+4+4;
	// x.float()'s cast back 4+2. 12+6+24+4+28+12+6 = 92.
	rmsNormBwd = 92
	// fusedNormFwd: torchtitan's fused_rmsnorm (training.norm_impl: fused),
	// torchtitan/models/norms.py at 157a12c562288b3bccb077003a97f18a4ca657aa:
	// _rms_norm_fwd_kernel loads each row of x once (bf16, 2 B), computes
	// the fp32 statistics in registers and stores y (bf16, 2 B; y =
	// torch.empty_like(x)) and one fp32 rstd per row = 4.
	fusedNormFwd = 4
	// fusedNormBwd: _rms_norm_bwd_kernel_sm loads x and dy (2+2 B) and the
	// row's rstd and stores dx (2 B; torch.empty_like(x)) = 6. Its weight
	// gradient is one fp32 partial row per SM (_dw, sm_count × h) summed by
	// _dw.sum(0): 8·sm·h bytes a norm, a per-norm term of 864·h on 108 SMs
	// against 6·t·h, left out like the per-row terms (1.8 % of the norm's
	// backward at 8,192 tokens).
	fusedNormBwd = 6
	// residualAdd: x + residual reads two bf16 tensors and writes one;
	// in backward the engine adds the residual's gradient to the norm's.
	residualAdd = 6
	// swigluFwd: silu(w1(x)) 2+2, · w3(x) 2+2+2 = 10 (torchtitan
	// FeedForward.forward, ibm-fms v0.0.3 fms/modules/feedforward.py
	// GatedLinearUnit.forward, which runs a(wg(x)) * w1(x)).
	swigluFwd = 10
	// swigluBwd: the product's two gradients 2+2+2 each, silu_backward
	// 2+2+2 = 18.
	swigluBwd = 18
)

// ropeBytes is RoPE's traffic per element of q and k, forward and backward.
func ropeBytes(r scenarios.RoPEImpl) (fwd, bwd int64, err error) {
	switch r {
	case "", scenarios.RoPEComplex:
		// apply_rotary_emb (torchtitan/models/llama/model.py at 9dec370;
		// meta-llama/llama llama/model.py at 8580eb9): x.float() 2+4, the
		// complex multiply 4+4, type_as 4+2 = 20; view_as_complex,
		// view_as_real and flatten are views. Backward: the cast 2+4,
		// grad·conj(freqs) 4+4, the cast back 4+2 = 20. q and k stay in
		// the (b, s, h, d) layout SDPA's flash kernel takes (its
		// transpose(1, 2) is a view), so no copy.
		return 20, 20, nil
	case scenarios.RoPERotation:
		// RotaryEmbedding.adjusted_qk (ibm-fms v0.0.3
		// fms/modules/positions.py, 47bc1850): q.float() 2+4, the
		// broadcast multiply by the 2×2 rotation matrices writes two fp32
		// values per element 4+8, sum(5) 8+4, type_as 4+2, and
		// .contiguous() copies the (b, s, h, d)-ordered result to
		// (b, h, s, d) 2+2 = 40. Backward: the cast 2+4, the gradient
		// times the matrices 4+8 summed back 8+4, the cast back 4+2, and
		// the copy back to the Linear's (b, s, h·d) layout 2+2 = 40.
		return 40, 40, nil
	case scenarios.RoPEFused:
		// One kernel reading q or k and writing it rotated, each way:
		// flash-attn's ApplyRotaryEmb (flash_attn/layers/rotary.py at
		// Dao-AILab/flash-attention 0251105a) runs the Triton kernel
		// apply_rotary once in forward and once, conjugated, on the
		// gradient in backward; cos and sin are per position.
		return 4, 4, nil
	}
	return 0, 0, fmt.Errorf("zero: unknown rope_impl %q", r)
}

// ExpertElementwiseBytes is the HBM traffic of the memory-bound kernels
// around a unit of routed SwiGLU experts' grouped GEMMs, forward and
// backward, for t tokens of a rank each routed to k experts (r = t·k rows
// under balanced routing), hidden h and expert intermediate size f, as
// Megatron-LM runs them at NVIDIA/Megatron-LM
// 44151194143711368b17797bc7000fd0285d8d51 (the commit
// NVIDIA-NeMo/Megatron-Bridge pins at 21d102f5e):
//
//   - the permute that orders the rows by expert (moe_utils.py `permute`
//     :302 with moe_permute_fusion, TE's fused_permute, from
//     token_dispatcher.py :645; under the flex dispatcher HybridEP's
//     dispatch_with_permute, fused_a2a.py :474) reads each row's token and
//     writes the row: 2h + 2h per row; its backward sums each token's rows
//     back: reads 2h per row, writes 2h per token;
//   - the weighted SwiGLU (experts.py :655 `weighted_bias_swiglu_impl`
//     under bias_activation_fusion, one jit-fused kernel,
//     megatron/core/fusions/fused_bias_swiglu.py `weighted_swiglu`) reads
//     the bf16 gate and up outputs (4f) and the fp32 routing weight (4) and
//     writes the bf16 product (2f); its backward (`weighted_swiglu_back`)
//     reads the gradient (2f), the gate and up outputs (4f) and the weight
//     (4) and writes their gradients (4f) and the weight's (4);
//   - the unpermute that sums each token's rows (moe_utils.py `unpermute`
//     :435 without probs, token_dispatcher.py :864; HybridEP's
//     combine_with_unpermute) reads 2h per row and writes 2h per token; its
//     backward gathers the token's gradient into each row: 2h + 2h per row.
//
// Forward r·(6h + 6f + 4) + 2h·t, backward r·(6h + 10f + 8) + 2h·t.
// Qwen3-30B-A3B at t = 4,096 (k = 8, h = 2,048, f = 768): 570,556,416 B
// forward, 671,350,784 B backward. The rows a deduplicating dispatcher
// receives are fewer than r (one copy per destination GPU): its permute
// reads at most this. An fp8 recipe's casts around the grouped GEMMs are
// counted apart (expertFP8Linears, expertElementwiseSeconds).
func ExpertElementwiseBytes(t, k, h, f int64) (fwd, bwd int64, err error) {
	if t < 0 || k < 0 || h < 0 || f < 0 {
		return 0, 0, fmt.Errorf("zero: expert elementwise bytes of t=%d, k=%d, h=%d, f=%d: sizes must be ≥ 0", t, k, h, f)
	}
	var c flopCalc
	r := c.Mul(t, k)
	tok := c.Mul(2, h, t)
	fwd = c.Add(c.Mul(r, c.Add(c.Mul(6, h), c.Mul(6, f), 4)), tok)
	bwd = c.Add(c.Mul(r, c.Add(c.Mul(6, h), c.Mul(10, f), 8)), tok)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: expert elementwise bytes overflow: %w", c.Err)
	}
	return fwd, bwd, nil
}

// finalNormBytes is the memory-bound HBM traffic of the final norm of s
// (the norm after the last block, before the LM head) over t tokens of
// width h, forward and backward: the same norm as the blocks' (one of
// their two), by the same rules (blockTraffic):
//   - an eager Llama-style model (stacks other than megatron) runs it as
//     the eager RMSNorm chain in fp32 (rmsNormFwd, rmsNormBwd: 36 and 92 B
//     per element); training.compile: blocks compiles the blocks only
//     (torchtitan's apply_compile wraps each of model.layers in
//     torch.compile(transformer_block, fullgraph=True), not model.norm:
//     torchtitan/parallelisms/parallelize_llama.py lines 293-299 at
//     582fe7d1f52ef96987a9d5265b3e2bbefc92d583), so the final norm stays
//     eager;
//   - Megatron's final_layernorm is a TENorm: TransformerBlock builds it
//     from its spec's layer_norm (megatron/core/transformer/
//     transformer_block.py lines 372-376 at Megatron-LM
//     44151194143711368b17797bc7000fd0285d8d51), which
//     get_gpt_decoder_block_spec sets to TENorm under Transformer Engine
//     (megatron/core/models/gpt/gpt_layer_specs.py lines 700-708 there):
//     one TE norm kernel, teNormFwd and teNormBwd (4 and 6 B, megatronChain);
//   - a GPT model's LayerNorm is one kernel that reads x and writes y
//     (native_layer_norm's vectorized_layer_norm_kernel, pytorch
//     aten/src/ATen/native/cuda/layer_norm_kernel.cu at
//     bad757be610b43809dc32b7b50d1800d0cfb6750: X in, Y and the fp32
//     per-row mean and rstd out), whose backward reads dy and x and
//     writes dx (the per-row statistics and the γ, β gradients' partial
//     sums are under 1 % at h ≥ 1024): the same 4 and 6 B.
func finalNormBytes(s *scenarios.Scenario, d FLOPDims) (fwd, bwd int64, err error) {
	f, b := int64(teNormFwd), int64(teNormBwd)
	switch {
	case d.Arch == "llama" && (s.Training.NormImpl == scenarios.NormFused || s.Training.Liger):
		// torchtitan's model.norm is create_norm(norm_type, ...) like the
		// blocks' (torchtitan/models/llama/model.py lines 369-371 at
		// 157a12c562288b3bccb077003a97f18a4ca657aa): the fused kernel.
		f, b = fusedNormFwd, fusedNormBwd
	case d.Arch == "llama" && s.Stack == "torchtitan" && scenarios.ATenRMSNorm(s):
		// torchtitan's model.norm is nn.RMSNorm like the blocks'
		// (torchtitan/models/llama3/model/model.py line 457 at
		// 238fa9953e4aec2a62582121564273d7cbb1e9f1), eager under
		// compile too: aten::_fused_rms_norm (llamaParts.ATenNorm).
		f, b = fusedNormFwd, fusedNormBwd
	case d.Arch == "llama" && (s.Stack != "megatron" || localComposite(s)):
		// Megatron's local block's final norm is torch.nn.RMSNorm
		// (megatronChain): before PyTorch 2.9 the composite chain.
		f, b = rmsNormFwd, rmsNormBwd
	}
	var c flopCalc
	th := c.Mul(d.Seq, d.Batch, d.Hidden)
	fwd, bwd = c.Mul(f, th), c.Mul(b, th)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: final norm bytes overflow: %w", c.Err)
	}
	return fwd, bwd, nil
}

// embeddingBytes is the memory-bound HBM traffic of the input embedding
// over t = seq·batch tokens of width h with a vocabulary of v rows, bf16, forward and
// backward. Forward, the lookup (index_select) reads a row and writes it:
// 4 B per element. Backward, PyTorch's embedding_dense_backward on CUDA
// runs embedding_backward_cuda_kernel
// (aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu at pytorch/pytorch
// d2999467419397b58400a37e097e56afe291e383): at::zeros of the v×h
// gradient (2 B an element written), compute_grad_weight reading the
// output gradient's rows (2 B) into fp32 partial sums of up to 10 rows
// (NROWS_PER_THREAD) per distinct token (4 B written), and sum_and_scatter
// reading them (4 B) and writing each distinct token's row (2 B). zerosim
// counts every token of the micro-batch as distinct (at most v of them):
// an upper bound on the partial sums, which a real batch's repeats cut.
// The index sort is per token, not per element, and left out.
//
// A model with learned positions (pos rows of wpe:
// scenarios.Model.LearnedPositionRows) adds positionBytes.
func embeddingBytes(seq, batch, h, v, pos int64, broadcast bool) (fwd, bwd int64, err error) {
	var c flopCalc
	t := c.Mul(seq, batch)
	rows := min(t, v)
	fwd = c.Mul(4, t, h)
	bwd = c.Add(c.Mul(2, v, h), c.Mul(2, t, h), c.Mul(4+4+2, rows, h))
	if pos > 0 {
		pf, pb := positionBytes(&c, seq, batch, h, pos, broadcast)
		fwd, bwd = c.Add(fwd, pf), c.Add(bwd, pb)
	}
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: embedding bytes overflow: %w", c.Err)
	}
	return fwd, bwd, nil
}

// positionBytes is the HBM traffic of a learned position embedding of pos
// rows (wpe) over s = seq positions and b = batch sequences of width h,
// bf16: a second embedding lookup, its add to the token embedding (an
// elementwise op: it reads both operands and writes its output), and the
// lookup's own embedding_backward_cuda_kernel (embeddingBytes' kernels:
// at::zeros of the pos×h gradient, 2 B; the output gradient's rows read,
// 2 B; an fp32 partial sum per NROWS_PER_THREAD = 10 rows of one index,
// written and read, 4 + 4 B; each distinct position's row written, 2 B).
// The positions are s distinct indices, each used once per sequence.
// The add's backward hands its gradient to both operands as it is
// (AddBackward0, alpha 1). Two forms:
//
//   - one index per token (broadcast false), t = s·b: llm-foundry's MPT
//     (llmfoundry/models/mpt/modeling_mpt.py at mosaicml/llm-foundry
//     061f2c7ce64e655100286584a7629e2a09f827ba lines 387-402: pos, (1, S),
//     becomes (b, S) when it is adjusted by the attention mask, which
//     ComposerMPTCausalLM.forward passes from the batch (line 756) and the
//     text loader's DataCollatorForLanguageModeling puts in it,
//     llmfoundry/data/text_data.py line 272; then pos_emb = self.wpe(pos); x = tok_emb + pos_emb),
//     Megatron's LanguageModelEmbedding (megatron/core/models/common/
//     embeddings/language_model_embedding.py at NVIDIA/Megatron-LM
//     d580efc68a9f0dbf1945f834f6f6200cd01d3343 lines 107-109, with
//     get_ltor_masks_and_position_ids' (b, s) position_ids,
//     megatron/training/utils.py lines 339-341) and OPT's
//     OPTLearnedPositionalEmbedding (transformers'
//     models/opt/modeling_opt.py @ ab910744d640b0ed37e2056eb94de31fd4a6979c:
//     positions from torch.cumsum(attention_mask, dim=1), (b, s)). Forward: the lookup 4·t·h, the add 6·t·h. Backward: 2·pos·h +
//     2·t·h + 8·s·⌈b/10⌉·h + 2·s·h.
//   - one index per position, broadcast over the batch (broadcast true):
//     transformers' GPT2Model (models/gpt2/modeling_gpt2.py
//     @ c44b2d9976e8eafbdcb89cb2710141b2bc9b138f: position_ids =
//     torch.arange(past_length, input_shape[-1] + past_length).unsqueeze(0),
//     (1, s); hidden_states = inputs_embeds + position_embeds). Forward: the lookup 4·s·h, the add reads 2·t·h and 2·s·h
//     and writes 2·t·h. Backward: with b > 1 the add's gradient to the
//     (1, s, h) operand is summed over the batch (sum_to_size: 2·t·h read,
//     2·s·h written), then 2·pos·h + 2·s·h + 8·s·h + 2·s·h.
func positionBytes(c *flopCalc, seq, batch, h, pos int64, broadcast bool) (fwd, bwd int64) {
	t := c.Mul(seq, batch)
	distinct := min(seq, pos)
	if broadcast {
		fwd = c.Add(c.Mul(4, seq, h), c.Mul(4, t, h), c.Mul(2, seq, h))
		bwd = c.Add(c.Mul(2, pos, h), c.Mul(2, seq, h), c.Mul(8, distinct, h), c.Mul(2, distinct, h))
		if batch > 1 {
			bwd = c.Add(bwd, c.Mul(2, t, h), c.Mul(2, seq, h))
		}
		return fwd, bwd
	}
	partials := c.Mul(distinct, (batch+9)/10)
	fwd = c.Add(c.Mul(4, t, h), c.Mul(6, t, h))
	bwd = c.Add(c.Mul(2, pos, h), c.Mul(2, t, h), c.Mul(8, partials, h), c.Mul(2, distinct, h))
	return fwd, bwd
}
