package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/units"
)

// This file counts FLOPs per operation class from explicit dimensions (pure
// functions; Costs applies them to a scenario's layers). Notation as in
// memory/tensors.go: t = s·b tokens, h hidden, a heads, d = h/a head
// width, kv = kv_heads·d, f FFN width, V vocabulary. A multiply-add is 2
// FLOPs.

// FLOPDims are the dimensions the FLOP count needs.
type FLOPDims struct {
	Arch       string // "gpt" or "llama"
	Seq, Batch int64
	// KVSeq is the key length each query row attends over: the whole
	// sequence under context parallelism (ring attention: a rank's s/cp
	// queries against all s keys, Liu et al. 2023, arXiv 2310.01889), Seq
	// when 0.
	KVSeq                  int64
	Hidden, Heads, KVHeads int64
	HeadDim, FFN, Vocab    int64
	// Causal is set when the attention kernel skips the masked upper
	// triangle (FlashAttention and SDPA's fused kernels with is_causal),
	// which halves the score and value matmuls; eager attention computes
	// every score and masks afterwards.
	Causal bool
	// KeepsProbs is set when the kernel saves the softmax probabilities
	// for backward instead of recomputing the scores (eager, math
	// attention): AttentionBackwardFLOPs charges it 2×, not 2.5×.
	KeepsProbs bool
	// Window and Chunk restrict a causal kernel to a sliding window of
	// Window keys per query or to causal attention within chunks of
	// Chunk tokens (AttentionFLOPs); 0: none. Set only where the kernel
	// skips the key blocks the mask removes (blockMask).
	Window, Chunk int64
	// Document is model.document_len under a kernel that confines each
	// query to its own packed document (documentMask); 0: one causal
	// sequence. FlexBlock is the tile FlexAttention's BlockMask skips
	// or computes whole (documentMask), 0 for kernels that compute each
	// document exactly (PackedAttentionFLOPs).
	Document, FlexBlock int64
	// QKVBias, OBias and MLPBias mark the block's biased linears
	// (memory.BlockDims): under the op policy they run aten.addmm, which
	// it neither counts nor keeps (RecomputeFLOPs).
	QKVBias, OBias, MLPBias bool
	// OpForce and OpForceGiven are training.op_force_recompute
	// (memory.BlockDims.OpForce): the mms the op policy recomputes
	// without counting them (RecomputeFLOPs).
	OpForce      string
	OpForceGiven bool
	// OpRecomputeAttention is training.op_recompute_attention
	// (memory.BlockDims.OpRecomputeAttention): under the op policy the
	// block's backward reruns the attention's forward, at the attention
	// kernel's rate (PlanCompute).
	OpRecomputeAttention bool
}

// BlockFLOPs is one block's forward FLOPs by operation class.
type BlockFLOPs struct {
	// GEMM is the weight matmuls: 2·t·(h·qw + 2·h·kv + qw·h) for the
	// attention projections plus 2·t·2·h·f (gpt) or 2·t·3·h·f (llama,
	// SwiGLU's w1, w3, w2).
	GEMM int64
	// Attention is QKᵀ and P·V: 2 × 2·b·a·s²·d, halved when causal.
	Attention int64
}

// Total is GEMM + Attention.
func (f BlockFLOPs) Total() int64 { return f.GEMM + f.Attention }

func (d *FLOPDims) fill() error {
	if d.Seq <= 0 || d.Batch <= 0 || d.Hidden <= 0 || d.Heads <= 0 {
		return fmt.Errorf("zero: FLOPs need seq_len, micro_batch, hidden, heads > 0 (got %d, %d, %d, %d)", d.Seq, d.Batch, d.Hidden, d.Heads)
	}
	if d.KVHeads <= 0 {
		d.KVHeads = d.Heads
	}
	if d.HeadDim <= 0 {
		d.HeadDim = d.Hidden / d.Heads
	}
	if d.FFN <= 0 {
		d.FFN = 4 * d.Hidden
	}
	return nil
}

// BlockForwardFLOPs counts one transformer block's forward pass.
func BlockForwardFLOPs(d FLOPDims) (BlockFLOPs, error) {
	if err := d.fill(); err != nil {
		return BlockFLOPs{}, err
	}
	var c flopCalc
	t := c.Mul(d.Seq, d.Batch)
	qw := c.Mul(d.Heads, d.HeadDim)
	kv := c.Mul(d.KVHeads, d.HeadDim)
	proj := c.Add(c.Mul(d.Hidden, qw), c.Mul(2, d.Hidden, kv), c.Mul(qw, d.Hidden))
	mats := int64(2)
	if d.Arch == "llama" {
		mats = 3
	}
	mlp := c.Mul(mats, d.Hidden, d.FFN)
	f := BlockFLOPs{GEMM: c.Mul(2, t, c.Add(proj, mlp))}
	var err error
	if c.Err != nil {
		return BlockFLOPs{}, fmt.Errorf("zero: block matmul FLOPs overflow: %w", c.Err)
	}
	kvSeq := d.Seq
	if d.KVSeq > 0 {
		kvSeq = d.KVSeq
	}
	if d.Causal && d.Document > 0 && d.Document < d.Seq && d.Seq == kvSeq {
		f.Attention, err = PackedAttentionFLOPs(d.Batch, d.Heads, d.Seq, d.HeadDim, d.HeadDim, d.Window, d.Chunk, d.Document, d.FlexBlock)
	} else {
		f.Attention, err = AttentionFLOPs(d.Batch, d.Heads, d.Seq, kvSeq, d.HeadDim, d.HeadDim, d.Causal, d.Window, d.Chunk)
	}
	if err != nil {
		return BlockFLOPs{}, err
	}
	if _, err := units.Add(f.GEMM, f.Attention); err != nil {
		return BlockFLOPs{}, fmt.Errorf("zero: block FLOPs overflow: %w", err)
	}
	return f, nil
}

// AttentionFLOPs is the forward FLOPs of the core attention, the one rule
// every block's count uses (BlockForwardFLOPs for the per-operation model,
// Costs for MoE and multi-head latent attention blocks): QKᵀ at the q·k
// width and P·V at the value width the kernel computes,
// 2·b·a·s·s_kv·(d_qk + d_v), halved when causal, i.e. when the kernel
// skips the masked key blocks (flash and sdpa, causalKernel). FlashAttention-2
// does: compute_attn_1rowblock in csrc/flash_attn/src/flash_fwd_kernel.h
// (Dao-AILab/flash-attention @ 0142ff05acc56c45755638857e77e35f1c350098)
// bounds each query block's key blocks by n_block_max = ceil((m_block +
// 1)·kBlockM / kBlockN) when Is_causal, so it visits the diagonal and the
// blocks left of it only. Eager attention multiplies all s×s_kv scores and
// masks them afterwards.
//
// A causal kernel restricted further (window or chunk > 0, s = s_kv) visits
// only the key blocks the mask keeps: FlashAttention-2's local attention
// starts each query block's keys at n_block_min = (m_block·kBlockM +
// s_kv − s − window_size_left) / kBlockN (the same function), which
// transformers' flash path asks for with window_size = sliding_window
// (_flash_attention_forward in src/transformers/modeling_flash_attention_utils.py
// @ 7713be1e51fbf31eb2c5eb27624369e08af29243), and FlexAttention skips
// the blocks its BlockMask leaves empty, as torchtitan builds it for
// sliding windows and fixed blocks (get_sliding_window_mask_mod,
// get_fixed_block_mask_mod in torchtitan/models/common/attention.py @
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a). The pairs are counted as the
// causal half is, continuously: s·w − w²/2 for a window of w < s keys, and
// (n·c² + r²)/2 for n chunks of c tokens and r left over; both are the
// causal s²/2 at w = s and c = s, and both are MaxText's counts
// (calculate_mixed_attention_model_tflops_training_per_device and
// _calculate_chunked_attention_flops_per_layer in
// src/maxtext/utils/maxtext_utils.py, AI-Hypercomputer/maxtext @
// e591f30cbbf217ed67ef71263ec0538239f9c3b8). The mask's exact count is
// w·s − w(w−1)/2, w/2 per query row more; the kernel rounds to whole
// blocks on top, as it does on the causal diagonal, which this count
// leaves out as well.
func AttentionFLOPs(batch, heads, seq, kvSeq, qkDim, vDim int64, causal bool, window, chunk int64) (int64, error) {
	var c flopCalc
	if causal && seq == kvSeq && (window > 0 && window < seq || chunk > 0 && chunk < seq) {
		// 2·pairs: w·(2s − w) for the window, n·c² + r² for the chunks.
		v := c.Mul(batch, heads, localPairs2(&c, seq, window, chunk), c.Add(qkDim, vDim))
		if c.Err != nil {
			return 0, fmt.Errorf("zero: attention FLOPs overflow (b·a·2·pairs·(d_qk+d_v) for micro_batch %d, heads %d, seq_len %d): %w", batch, heads, seq, c.Err)
		}
		return v, nil
	}
	v := c.Mul(2, batch, heads, seq, kvSeq, c.Add(qkDim, vDim))
	if c.Err != nil {
		return 0, fmt.Errorf("zero: attention FLOPs overflow (2·b·a·s·s_kv·(d_qk+d_v) for micro_batch %d, heads %d, seq_len %d): %w", batch, heads, kvSeq, c.Err)
	}
	if causal {
		v /= 2
	}
	return v, nil
}

// GatedDeltaNetCoreFLOPs is the forward FLOPs of a Gated DeltaNet's
// chunked delta rule (Qwen3-Next's linear attention, fla's
// chunk_gated_delta_rule) over tokens tokens: 8·t·H_v·d_k·d_v, MaxText's
// count (calculate_gated_delta_net_flops_per_device in
// src/maxtext/utils/maxtext_utils.py, AI-Hypercomputer/maxtext @
// e591f30cbbf217ed67ef71263ec0538239f9c3b8, after Megatron-LM's): four
// O(d_k·d_v) products per token and value head in the recurrent update
// (KKᵀ, VKᵀ, S(α(I − βKKᵀ)) and SQ), two FLOPs per multiply-add. It
// grows with the tokens, not with their square: no softmax attention.
// The block's projections and its depthwise convolution are weight
// FLOPs, 2·t per parameter of in_proj_qkvz, in_proj_ba, conv1d and
// out_proj, which is MaxText's "weights part" to the term (its
// 2·t·E·(2K + 2V + 2H_v) + 2·t·E·V + 2·t·K_conv·(2K + V)); Costs counts
// them from the block's parameters.
func GatedDeltaNetCoreFLOPs(tokens, valueHeads, keyHeadDim, valueHeadDim int64) (int64, error) {
	var c flopCalc
	v := c.Mul(8, tokens, valueHeads, keyHeadDim, valueHeadDim)
	if c.Err != nil {
		return 0, fmt.Errorf("zero: Gated DeltaNet FLOPs overflow (8·t·H_v·d_k·d_v for %d tokens, %d value heads): %w", tokens, valueHeads, c.Err)
	}
	return v, nil
}

// AttentionBackwardFLOPs is the FLOPs the attention's backward executes
// after a forward of fwd FLOPs, rounded down: the forward runs two matmuls
// (S = QKᵀ, O = P·V) and the backward, by kernel (attentionBackwardRatio):
//
//   - flash and sdpa (keepsProbs false): 2.5×. FlashAttention-2's backward
//     keeps only the row log-sum-exp and recomputes the scores, five
//     matmuls (S = QKᵀ, dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q) to
//     the forward's two (Dao 2023, §3.1 and Algorithm 2;
//     csrc/flash_attn/src/flash_bwd_kernel.h compute_dq_dk_dv_1colblock,
//     Dao-AILab/flash-attention @ 22786a1afd308e808621915769b67d8b2162bd05).
//     training.attention: sdpa is SDPA's flash backend (attention_kernel
//     fa2 by default; torchtitan 9dec370ad26b selects sdpa_kernel([FLASH_ATTENTION,
//     EFFICIENT_ATTENTION]), see ringattn.go), whose backward is that kernel's;
//     the memory-efficient backend recomputes the scores as well.
//   - eager (keepsProbs true): 2×. Math attention
//     (_scaled_dot_product_attention_math in
//     aten/src/ATen/native/transformers/attention.cpp, pytorch/pytorch @
//     bc8cb28010a6b27e1817d38e1c1e0ac59b34477e, and transformers'
//     eager_attention_forward) is matmul, softmax, matmul under autograd:
//     softmax saves its output P (derivatives.yaml _softmax:
//     _softmax_backward_data(grad, result, ...)) and each matmul's backward
//     is two matmuls (mm: grad·mat2ᵀ and selfᵀ·grad), so dV = Pᵀ·dO, dP =
//     dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q: four matmuls to two, no QKᵀ rerun.
func AttentionBackwardFLOPs(fwd int64, keepsProbs bool) (int64, error) {
	num, den := attentionBackwardRatio(keepsProbs)
	var c flopCalc
	v := c.MulDivFloor(fwd, num, den)
	if c.Err != nil {
		return 0, fmt.Errorf("zero: attention backward FLOPs overflow: %w", c.Err)
	}
	return v, nil
}

// attentionBackwardRatio is the attention backward's FLOPs over its
// forward's, num/den (AttentionBackwardFLOPs gives the reasons): 5/2 for
// kernels that recompute the scores, 2/1 for eager attention, which keeps
// the probabilities. Every path that charges attention backward (the FLOP
// count, blockClasses' times, the ring's rounds) takes it from here.
func attentionBackwardRatio(keepsProbs bool) (num, den int64) {
	if keepsProbs {
		return 2, 1
	}
	return 5, 2
}

// attentionBackwardFactor is attentionBackwardRatio as a float64 (5/2 =
// 2.5 and 2/1 = 2 are exact).
func attentionBackwardFactor(keepsProbs bool) float64 {
	num, den := attentionBackwardRatio(keepsProbs)
	return float64(num) / float64(den)
}

// HeadForwardFLOPs counts the output projection once: 2·t·h·V. (The
// embedding is a lookup: no FLOPs; a tied output layer is still one
// matmul.)
func HeadForwardFLOPs(d FLOPDims) (int64, error) {
	if err := d.fill(); err != nil {
		return 0, err
	}
	var c flopCalc
	v := c.Mul(2, d.Seq, d.Batch, d.Hidden, d.Vocab)
	if c.Err != nil {
		return 0, fmt.Errorf("zero: head FLOPs overflow: %w", c.Err)
	}
	return v, nil
}

// ModelFLOPsPerToken is the training FLOPs per token in PaLM's convention
// (Chowdhery et al. 2022, arXiv 2204.02311, appendix B: 6·N + 12·L·H·Q·T,
// H heads of width Q),
// the attention term counted as if not causal, whatever the kernel does.
// attnWidth is Σ over the softmax-attention blocks of heads·(q·k head width
// + value head width), torchtitan's n_layers·n_heads·head_dims
// (get_dense_model_nparams_and_flops and get_moe_model_nparams_and_flops in
// torchtitan/models/utils.py at b5bcd76c66d0acb1a08b176d9639425bc55e0b2a:
// 6·N + 6·L·H·head_dims·T, head_dims "the sum of qk and v head dimensions",
// only blocks that have attention): 2·hidden for a block whose heads span
// the hidden size, which gives PaLM's 12·L·H·Q·s. matmulParams is N, the
// parameters a token's matmuls go through (matmulParams). MFU = tokens/s ·
// this / peak.
func ModelFLOPsPerToken(matmulParams, attnWidth, seq int64) (int64, error) {
	var c flopCalc
	v := c.Add(c.Mul(6, matmulParams), c.Mul(6, attnWidth, seq))
	if c.Err != nil {
		return 0, fmt.Errorf("zero: model FLOPs overflow: %w", c.Err)
	}
	return v, nil
}

// Recompute policies as the FLOP count sees them.
const (
	recomputeNone      = "none"
	recomputeSelective = "selective"
	recomputeOp        = "op"
	recomputeFull      = "full"
)

// RecomputeFLOPs is the extra forward work one block's backward does under
// a checkpointing policy: full reruns the forward; selective
// (Korthikanti) reruns the core attention; op (torchtitan's policy) reruns
// the matmuls memory.OpRecomputedMMFLOPs counts, the one rule the memory
// model keeps the others' outputs by (llama: wk, wo, w3 = 2·t·(h·kv + qw·h
// + h·f); a gpt block's four biased linears, addmm, all of them) and
// nothing of the attention, whose outputs it keeps (but under
// OpRecomputeAttention, whose rerun attention forward PlanCompute charges
// at the attention kernel's rate).
func RecomputeFLOPs(d FLOPDims, policy string) (int64, error) {
	f, err := BlockForwardFLOPs(d)
	if err != nil {
		return 0, err
	}
	if err := d.fill(); err != nil {
		return 0, err
	}
	var c flopCalc
	var v int64
	switch policy {
	case "", recomputeNone:
	case recomputeFull:
		v = f.Total()
	case recomputeSelective:
		v = f.Attention
	case recomputeOp:
		if v, err = memory.OpRecomputedMMFLOPs(d.opBlockDims()); err != nil {
			return 0, fmt.Errorf("zero: %w", err)
		}
	default:
		return 0, fmt.Errorf("zero: training.recompute %q: use none, selective, op or full", policy)
	}
	if c.Err != nil {
		return 0, fmt.Errorf("zero: recompute FLOPs overflow: %w", c.Err)
	}
	return v, nil
}

// opBlockDims is d as the memory model's op policy counts a block's mms
// (after fill).
func (d FLOPDims) opBlockDims() memory.BlockDims {
	return memory.BlockDims{Arch: d.Arch, Seq: d.Seq, Batch: d.Batch, Hidden: d.Hidden, Heads: d.Heads, KVHeads: d.KVHeads,
		HeadDim: d.HeadDim, FFN: d.FFN, QKVBias: d.QKVBias, OBias: d.OBias, MLPBias: d.MLPBias, OpForce: d.OpForce, OpForceGiven: d.OpForceGiven}
}

// flopCalc is units.Calc: checked int64 arithmetic that keeps the first overflow.
type flopCalc = units.Calc
