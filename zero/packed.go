package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// This file counts attention over packed sequences whose attention is
// confined to each document (model.document_len): NeMo's packed SFT,
// torchtune's packed datasets, torchtitan's block-causal document mask,
// transformers' padding_free.

// DefaultFlexBlock is FlexAttention's BlockMask tile, 128 query rows by
// 128 keys: _DEFAULT_SPARSE_BLOCK_SIZE = 128 in
// torch/nn/attention/flex_attention.py (pytorch/pytorch @
// 0140b62d8bab203e4699faeba802b5204fa51d26), the BLOCK_SIZE
// create_block_mask and BlockMask.from_kv_blocks default to, and the
// block_size of torchtitan's FlexAttention.Config (FlexAttention in
// torchtitan/models/common/attention.py @
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a; its "flex_flash" backend
// asks for (256, 128), which zerosim does not tell apart). "A
// KV_BLOCK_SIZE x Q_BLOCK_SIZE block is considered sparse only if every
// element within that block is sparse" (BlockMask's docstring, same
// file): the kernel skips the empty tiles and computes every other tile
// whole, masking inside it.
const DefaultFlexBlock = 128

// documentMask is model.document_len and the tile the kernel rounds to,
// for FLOPDims.Document and FlexBlock: (0, 0) when the scenario packs no
// documents, or when its kernel computes every score whatever the mask
// (training.attention eager: the document mask, like the causal one, is
// applied to scores already computed). Load refuses document_len under
// training.attention sdpa (a materialised s×s mask) and with context
// parallelism (scenarios' resolveDocumentLen says why). Under flash:
//
//   - attention_kernel flex (FlexAttention with a document mask_mod, as
//     torchtitan's get_document_mask_mod and torchtune's
//     packed_block_causal_mask build it) visits the BlockMask's non-empty
//     DefaultFlexBlock tiles (PackedAttentionFLOPs).
//   - every other kernel runs each document as a sequence of its own:
//     FlashAttention-2's varlen path (flash_attn_varlen_func, which
//     transformers' padding_free and torchtitan's VarlenAttention call)
//     sizes each batch entry by its cu_seqlens (BlockInfo's
//     actual_seqlen_q = cu_seqlens_q[bidb + 1] − cu_seqlens_q[bidb] in
//     csrc/flash_attn/src/block_info.h, Dao-AILab/flash-attention @
//     36a92a1abd8ccb200380cc87a82c4aa5a9584094), and Transformer
//     Engine's THD format does the same from the cu_seqlens NeMo passes
//     it (get_packed_seq_params in nemo/collections/llm/gpt/model/base.py,
//     NVIDIA/NeMo @ 8cfedd7203462cb251a914e700e5605444277561:
//     PackedSeqParams(cu_seqlens_q=cu_seqlens, …, qkv_format="thd")).
func documentMask(s *scenarios.Scenario) (doc, block int64) {
	d := s.Model.DocumentLen
	if d <= 0 || d >= s.Model.SeqLen || s.Training.Attention != scenarios.AttentionFlash {
		return 0, 0
	}
	if s.Training.AttentionKernel == scenarios.KernelFlex {
		return d, DefaultFlexBlock
	}
	return d, 0
}

// PackedAttentionFLOPs is the forward FLOPs of causal attention over a
// sequence of seq tokens packed with documents of doc tokens (doc < seq:
// seq/doc whole documents and the remainder one shorter document), each
// query attending to the keys of its own document only, within a window
// or chunk (> 0) when the block has one (the chunks restart at each
// document: positions restart there). The pairs are counted as
// AttentionFLOPs counts the causal half, continuously: L²/2 for a
// document of L tokens, s·d/2 for the sequence when d divides s (against
// s²/2 unpacked), L·w − w²/2 with a window w < L, (n·c² + r²)/2 with
// chunks; FLOPs b·a·2·pairs·(d_qk + d_v).
//
// block > 0 (FlexAttention, DefaultFlexBlock) counts whole tiles
// instead: a query tile computes every key tile one of its rows reaches,
// so the unpacked count (AttentionFLOPs': s²/2, or the window's or
// chunks') is scaled by the tiles the mask touches with the documents
// over the tiles it touches without them; at doc = seq the ratio is 1,
// the unpacked count, and with documents shorter than a tile it stays
// above the exact count, as the kernel does. Each row's keys run from the start of its document (or
// window, or chunk) to the row itself, a start that never decreases down
// the rows, so a tile of rows [a, b] reaches key tiles ⌊lo(a)/B⌋ … ⌊b/B⌋.
func PackedAttentionFLOPs(batch, heads, seq, qkDim, vDim, window, chunk, doc, block int64) (int64, error) {
	if seq <= 0 || doc <= 0 || doc > seq || batch <= 0 || heads <= 0 {
		return 0, fmt.Errorf("zero: packed attention needs seq_len, document_len ≤ seq_len, micro_batch and heads > 0 (got %d, %d, %d, %d)", seq, doc, batch, heads)
	}
	var c flopCalc
	var pairs2 int64
	if block > 0 {
		packed := func(q int64) int64 { return maskStart(q, window, chunk, doc) }
		unpacked := func(q int64) int64 { return maskStart(q, window, chunk, seq) }
		pairs2 = localPairs2(&c, seq, window, chunk)
		if c.Err == nil {
			pairs2 = c.MulDivFloor(pairs2, tilesTouched(seq, block, packed), tilesTouched(seq, block, unpacked))
		}
	} else {
		n, r := seq/doc, seq%doc
		pairs2 = c.Add(c.Mul(n, localPairs2(&c, doc, window, chunk)), localPairs2(&c, r, window, chunk))
	}
	v := c.Mul(batch, heads, pairs2, c.Add(qkDim, vDim))
	if c.Err != nil {
		return 0, fmt.Errorf("zero: packed attention FLOPs overflow (b·a·2·pairs·(d_qk+d_v) for micro_batch %d, heads %d, seq_len %d, document_len %d): %w", batch, heads, seq, doc, c.Err)
	}
	return v, nil
}

// localPairs2 is twice the causal pairs of a sequence of n tokens under a
// window or chunk (AttentionFLOPs' continuous count): n², w·(2n − w) for
// a window w < n, k·c² + r² for k chunks of c and r left over.
func localPairs2(c *flopCalc, n, window, chunk int64) int64 {
	switch {
	case n <= 0:
		return 0
	case window > 0 && window < n:
		return c.Mul(window, c.Add(c.Mul(2, n), -window))
	case chunk > 0 && chunk < n:
		k, r := n/chunk, n%chunk
		return c.Add(c.Mul(k, chunk, chunk), c.Mul(r, r))
	}
	return c.Mul(n, n)
}

// maskStart is the first key row q attends to: the start of its document
// of doc tokens, or later, the start of its window or chunk.
func maskStart(q, window, chunk, doc int64) int64 {
	lo := q / doc * doc
	if window > 0 {
		lo = max(lo, q-window+1)
	}
	if chunk > 0 {
		lo = max(lo, lo+(q-lo)/chunk*chunk)
	}
	return lo
}

// tilesTouched counts the block×block tiles of a seq×seq score matrix
// that hold at least one kept score, when row q keeps keys lo(q) … q and
// lo never decreases: query tile i (rows a = i·B … b) reaches key tiles
// ⌊lo(a)/B⌋ … ⌊b/B⌋.
func tilesTouched(seq, block int64, lo func(int64) int64) int64 {
	var n int64
	for a := int64(0); a < seq; a += block {
		b := min(a+block, seq) - 1
		n += b/block - lo(a)/block + 1
	}
	return n
}
