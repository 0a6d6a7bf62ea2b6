package memory

import (
	"testing"
)

// TestFusedNormActivations counts by hand what a Llama block keeps with
// torchtitan's fused_rmsnorm (training.norm_impl: fused;
// torchtitan/models/norms.py at 157a12c562288b3bccb077003a97f18a4ca657aa,
// TritonFusedRMSNorm.forward: ctx.save_for_backward(x, weight, rstd))
// under every policy, against the eager fp32 RMSNorm. Llama 2 13B as
// torchtitan docs/performance.md at 157a12c56 ran it: h 5120, a = kv_h =
// 40, f 13824, seq 4096, local batch 2 (t = 8192), flash attention.
//
// Fused, no checkpointing: the block input (the attention norm's saved
// x, 2·t·h), its rstd (4·t), its output (q/k/v input, 2·t·h), q, k, v and
// the attention output (4 · 2·t·h), the log-sum-exp (4·a·s·b), the FFN
// norm's input (the residual sum, 2·t·h), rstd (4·t) and output (2·t·h),
// w1's output, silu's, w3's and the product (4 · 2·t·f): 16·t·h + 8·t +
// 8·t·f + 4·a·s·b = 671,088,640 + 65,536 + 905,969,664 + 1,310,720 =
// 1,578,434,560. Eager each norm keeps x.float() 4·t·h, rstd 4·t and the
// normalized bf16 tensor 2·t·h, and the block input nothing: 24·t·h + 8·t
// + 8·t·f + 4·a·s·b = 1,913,978,880, 8·t·h = 335,544,320 more (12.5 GiB
// over 40 blocks).
//
// full keeps the block input and rebuilds the rest (fused 14·t·h + 8·t +
// 8·t·f + 4·a·s·b = 1,494,548,480; eager all 1,913,978,880); selective
// rebuilds only the log-sum-exp; op (torchtitan's save list: mm outputs
// 1, 3, 5, 7 of wq wk wv wo w1 w3 w2 and the attention outputs) keeps the
// block input, wq's, wv's and w2's outputs, the attention output and
// log-sum-exp and w1's output, 10·t·h + 2·t·f + 4·a·s·b = 647,233,536
// under either norm, and rebuilds the norms and their outputs, q, k,
// silu's output, w3's and the product: fused 2·t·h (the FFN norm's input)
// + 8·t + 2·2·t·h + 2·2·t·h + 6·t·f = 10·t·h + 8·t + 6·t·f =
// 1,098,973,184; eager 20·t·h + 8·t + 6·t·f = 1,518,403,584.
func TestFusedNormActivations(t *testing.T) {
	d := BlockDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 5120, Heads: 40, KVHeads: 40, FFN: 13824}
	fused := d
	fused.NormFused = true
	for _, c := range []struct {
		policy            string
		d                 BlockDims
		stored, transient int64
	}{
		{PolicyNone, fused, 1_578_434_560, 0},
		{PolicyNone, d, 1_913_978_880, 0},
		{PolicyFull, fused, 83_886_080, 1_494_548_480},
		{PolicyFull, d, 83_886_080, 1_913_978_880},
		{PolicySelective, fused, 1_577_123_840, 1_310_720},
		{PolicyOp, fused, 647_233_536, 1_098_973_184},
		{PolicyOp, d, 647_233_536, 1_518_403_584},
	} {
		st, tr, err := BlockActivation(c.d, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if st != c.stored || tr != c.transient {
			t.Errorf("%s, fused %v: stored %d, rebuilt %d; want %d, %d", c.policy, c.d.NormFused, st, tr, c.stored, c.transient)
		}
	}
	// The final norm (torchtitan's model.norm is create_norm(norm_type),
	// model.py lines 369-371 at 157a12c56): fused it keeps its 16-bit
	// input and rstd, 2·t·h + 4·t, and the output projection keeps its
	// input, 2·t·h: 167,804,928; eager 4·t·h + 4·t + 2·t·h + 2·t·h =
	// 335,577,088.
	for _, c := range []struct {
		d    BlockDims
		want int64
	}{{fused, 167_804_928}, {d, 335_577_088}} {
		c.d.Vocab = 32000
		model, _, _, err := headParts(c.d)
		if err != nil {
			t.Fatal(err)
		}
		if model != c.want {
			t.Errorf("fused %v: the head keeps %d before the logits, want %d", c.d.NormFused, model, c.want)
		}
	}
	// Not derived: a fused norm in a compiled block (torchtitan refuses
	// it), Gemma's norm layout, a GPT block.
	for _, bad := range []BlockDims{
		{Arch: "llama", Seq: 8, Batch: 1, Hidden: 64, Heads: 4, NormFused: true, Compiled: true},
		{Arch: "llama", Seq: 8, Batch: 1, Hidden: 64, Heads: 4, NormFused: true, Norms: "gemma"},
		{Arch: "gpt", Seq: 8, Batch: 1, Hidden: 64, Heads: 4, NormFused: true},
	} {
		if _, _, err := BlockActivation(bad, PolicyNone); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}
