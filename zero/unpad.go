package zero

import (
	"github.com/zerosim/zerosim/scenarios"
)

// unpadBytes is the HBM traffic of flash-attn's padding wrapper around the
// attention kernel of a block of dimensions d, forward and
// backward, under training.attention_unpad: MosaicGPT's attn_impl: flash
// calls flash_attn.flash_attention.FlashMHA with a key_padding_mask in
// every block (FlashCausalAttention.forward in examples/llm/src/
// mosaic_gpt.py at mosaicml/examples d14a7c94, which builds an all-ones
// mask when the batch has none, "HazyResearch FlashMHA appears to use more
// memory when `key_padding_mask=None`"; llm/src/mosaic_gpt.py at 22d724c8
// passes the batch's attention_mask), and FlashAttention.forward then runs
// (flash_attn/flash_attention.py and flash_attn/bert_padding.py at
// Dao-AILab/flash-attention v0.2.8, 33e0860c; the same at v0.2.2):
//
//   - unpad_input: index_first_axis, a torch.gather of the [t, qkv] rows
//     (reads and writes qkv per token); its backward makes a zeroed
//     [t, qkv] gradient and scatters into it (writes qkv, then reads and
//     writes qkv);
//   - pad_input: index_put_first_axis, a zeroed [t, o] output (writes o)
//     and output[indices] = values (reads and writes o); its backward
//     gathers grad_output[indices] (reads and writes o);
//
// with qkv = (heads + 2·kv_heads)·head_dim and o = heads·head_dim in the
// kernel's 16-bit dtype (it asserts fp16 or bf16), t = micro_batch·seq
// tokens: forward (2·qkv + 3·o)·t·2 B, backward (3·qkv + 2·o)·t·2 B. The
// index tensors (int64, one per token, broadcast across the row) and
// unpad_input's mask reductions are left out, and so is the time of its
// seqlens_in_batch.max().item(), a host synchronisation per block (the
// memory replay takes the sync's effect on FSDP1's deferred frees:
// memory's unpadSync).
func unpadBytes(s *scenarios.Scenario, d FLOPDims) (fwd, bwd int64, err error) {
	if !s.Training.AttentionUnpad || s.Training.Attention != scenarios.AttentionFlash {
		return 0, 0, nil
	}
	if err := d.fill(); err != nil {
		return 0, 0, err
	}
	var c flopCalc
	qkv := c.Mul(c.Add(d.Heads, c.Mul(2, d.KVHeads)), d.HeadDim)
	o := c.Mul(d.Heads, d.HeadDim)
	t := c.Mul(d.Batch, d.Seq, 2)
	fwd = c.Mul(c.Add(c.Mul(2, qkv), c.Mul(3, o)), t)
	bwd = c.Mul(c.Add(c.Mul(3, qkv), c.Mul(2, o)), t)
	return fwd, bwd, c.Err
}
