package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOpPolicyCompiledNormInputs (rev26): compiled, the op policy's kept
// mm output is the norm's kept 16-bit input when a norm reads the mm's
// output directly, and its own tensor when it does not. t = 4,096 tokens,
// flash attention, mms wq 1*, wk 2, wv 3* (flash's v a view of it), wo 4,
// w1 5* (compiled, silu's kept input), w3 6, w2 7*.
//
//   - Gemma 2 2B dims (hidden 2304, 8 heads of 256, 4 kv heads, ffn 9216),
//     Gemma's sandwich norms: w2's output is post_feedforward_layernorm's
//     kept 16-bit input, so it is kept on the list (onList), not beside it
//     and not rebuilt.
//   - Llama 3 8B dims with Llama 4's L2 q/k norm: the norms read q and k
//     after RoPE, not wq's output, which is kept beside the list; the
//     norms' 16-bit inputs are rebuilt. w2's output, read by the residual
//     add only, is dropped by the partitioner.
//
// The rebuilt list is BlockTensors' other tensors: none − onList − views.
func TestOpPolicyCompiledNormInputs(t *testing.T) {
	const tk = 4096
	gemma := BlockDims{Arch: "llama", Norms: scenarios.NormsGemma, Compiled: true, Seq: tk, Batch: 1, Hidden: 2304, Heads: 8, KVHeads: 4, HeadDim: 256,
		FFN: 9216, Attention: AttentionFlash}
	l2 := BlockDims{Arch: "llama", QKNorm: scenarios.QKNormL2, Compiled: true, Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		FFN: 14336, Attention: AttentionFlash}
	const (
		gIn, gQ, gKV, gLSE, gW1 = 2 * tk * 2304, 2 * tk * 2048, 2 * tk * 1024, 4 * 8 * tk, 2 * tk * 9216
		lIn, lQ, lKV, lLSE, lW1 = 2 * tk * 4096, 2 * tk * 4096, 2 * tk * 1024, 4 * 32 * tk, 2 * tk * 14336
	)
	for _, c := range []struct {
		name          string
		d             BlockDims
		keep          []int64
		onList, views int64
	}{
		// in, wq, wv, attention output, lse, w1, w2 (post-ffn norm input).
		{"Gemma 2 compiled", gemma, []int64{gIn, gQ, gKV, gQ, gLSE, gW1, gIn}, gIn + gQ + gLSE + gW1 + gIn, gKV},
		// in, wq, wv, attention output, lse, w1.
		{"L2 q/k norm compiled", l2, []int64{lIn, lQ, lKV, lQ, lLSE, lW1}, lIn + lQ + lLSE + lW1, lKV},
	} {
		checkOpKeep(t, c.name, c.d, c.keep, c.onList, c.views)
	}
}

// TestOpRecomputedMMFLOPsBiasedAndGDN (rev26): the mm work the op policy
// reruns, by hand at t = 4,096 (each mm 2·t·n·k).
//
//   - gpt-oss-20b (hidden 2880, 64 heads of 64, 8 kv heads, 32 experts):
//     every linear has a bias (aten.addmm, never saved), so the fused
//     qkv 2·t·(4096 + 2·512)·2880, the out-projection 2·t·2880·4096 and
//     the router gate 2·t·32·2880 all rerun: 2·t·2880·9248 =
//     218,187,694,080.
//   - Qwen3-Next-80B-A3B's Gated DeltaNet mixer alone (hidden 2048, 16 key
//     and 32 value heads of 128; no FFN): in_proj_qkvz 1*, in_proj_ba 2,
//     out_proj 3*: in_proj_ba reruns, 2·t·(2·32)·2048 = 1,073,741,824.
func TestOpRecomputedMMFLOPsBiasedAndGDN(t *testing.T) {
	const tk = 4096
	oss := BlockDims{Seq: tk, Batch: 1, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, NoFFN: true, RouterExperts: 32,
		QKVBias: true, OBias: true, MLPBias: true, Attention: AttentionFlash}
	gdn := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 2, Attention: AttentionFlash, NoFFN: true,
		LinearAttention: scenarios.LinearGatedDeltaNet, LinearKeyHeads: 16, LinearValueHeads: 32, LinearKeyHeadDim: 128, LinearValueHeadDim: 128}
	for _, c := range []struct {
		name string
		d    BlockDims
		want int64
	}{
		{"gpt-oss-20b", oss, 218_187_694_080},
		{"Qwen3-Next GDN mixer", gdn, 1_073_741_824},
	} {
		got, err := OpRecomputedMMFLOPs(c.d)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: op reruns %d mm FLOPs, want %d", c.name, got, c.want)
		}
	}
}
