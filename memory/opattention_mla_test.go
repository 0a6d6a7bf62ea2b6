package memory

import "testing"

// TestOpRecomputeAttentionMLA: under op_recompute_attention the op policy
// keeps neither the fused kernel's output nor its log-sum-exp in a block
// of multi-head latent attention either (mlaAttention). By hand for
// DeepSeek-V2-Lite's block at seq 4096, micro-batch 1 (t = 4096, a = 16
// heads, d_qk = 128 + 64 = 192, d_v = 128):
//
//	flash: output padded to d_qk 2·t·a·d_qk = 2·4096·16·192 = 25,165,824
//	sdpa:  output (o_proj input) 2·t·a·d_v  = 2·4096·16·128 = 16,777,216
//	both:  log-sum-exp           4·a·s·b    = 4·16·4096·1   =    262,144
//
// so 25,427,968 bytes (flash) and 17,039,360 (sdpa) move from what the
// block keeps to what its backward rebuilds; nothing moves under the
// other policies.
func TestOpRecomputeAttentionMLA(t *testing.T) {
	sum := func(xs []int64) (v int64) {
		for _, x := range xs {
			v += x
		}
		return v
	}
	for _, c := range []struct {
		attention string
		moved     int64
	}{{AttentionFlash, 2*4096*16*192 + 4*16*4096}, {AttentionSDPA, 2*4096*16*128 + 4*16*4096}} {
		if c.moved != map[string]int64{AttentionFlash: 25_427_968, AttentionSDPA: 17_039_360}[c.attention] {
			t.Fatalf("hand sum %d", c.moved)
		}
		d := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 192, ValueHeadDim: 128,
			RopeHeadDim: 64, KVLoRARank: 512, FFN: 10944, Attention: c.attention}
		for _, policy := range []string{PolicyNone, PolicySelective, PolicyOp, PolicyFull} {
			keep, rebuild, err := BlockActivationTensors(d, policy)
			if err != nil {
				t.Fatal(err)
			}
			d2 := d
			d2.OpRecomputeAttention = true
			keep2, rebuild2, err := BlockActivationTensors(d2, policy)
			if err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			if policy == PolicyOp {
				want = c.moved
			}
			if dk, dr := sum(keep)-sum(keep2), sum(rebuild2)-sum(rebuild); dk != want || dr != want {
				t.Errorf("%s %s: op_recompute_attention keeps %d fewer bytes and rebuilds %d more, want %d and %d", c.attention, policy, dk, dr, want, want)
			}
		}
	}
}
