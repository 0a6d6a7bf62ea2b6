package memory

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

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
	for _, c := range []struct {
		attention string
		moved     int64
	}{{AttentionFlash, 2*4096*16*192 + 4*16*4096}, {AttentionSDPA, 2*4096*16*128 + 4*16*4096}} {
		if c.moved != map[string]int64{AttentionFlash: 25_427_968, AttentionSDPA: 17_039_360}[c.attention] {
			t.Fatalf("hand sum %d", c.moved)
		}
		d := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 192, ValueHeadDim: 128,
			RopeHeadDim: 64, KVLoRARank: 512, FFN: 10944, Attention: c.attention}
		checkOpRecomputeMoves(t, c.attention, d, c.moved)
	}
}

// TestOpRecomputeAttentionScenario: training.op_recompute_attention
// reaches the blocks' activations through the scenario (baseDims). By
// hand for Llama blocks of hidden 64, 4 heads, at seq 16 and micro-batch
// 1 (t = 16): 2·t·h + 4·a·s·b = 2·16·64 + 4·4·16 = 2,048 + 256 = 2,304
// bytes per block move from Activation to Recompute; the embedding, final
// norm and lm_head do not move.
func TestOpRecomputeAttentionScenario(t *testing.T) {
	const moved = 2*16*64 + 4*4*16
	var units [2][]UnitInfo
	for i, extra := range []string{"", ", op_recompute_attention: true"} {
		y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: H100-80GB}\n" +
			"model: {kind: transformer, arch: llama, hidden: 64, layers: 2, heads: 4, kv_heads: 4, ffn: 128, vocab: 1000, seq_len: 16}\n" +
			"parallelism: {dp: 4, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op, attention: flash, attention_kernel: cudnn" + extra + "}\n"
		s, err := scenarios.Load("op.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		units[i] = r.Units
	}
	for u := range units[0] {
		want := int64(0)
		if strings.HasPrefix(units[0][u].Name, "block.") {
			want = moved
		}
		if dk, dr := units[0][u].Activation-units[1][u].Activation, units[1][u].Recompute-units[0][u].Recompute; dk != want || dr != want {
			t.Errorf("%s: %d fewer bytes kept, %d more rebuilt; want %d and %d", units[0][u].Name, dk, dr, want, want)
		}
	}
}
