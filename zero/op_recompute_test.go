package zero

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestOpRecomputeFLOPsOneRule: the matmul work torchtitan's op policy
// reruns is the even-numbered mms of the count the memory model keeps the
// odd-numbered ones' outputs by (memory.OpRecomputedMMFLOPs), for the
// per-operation model's blocks (RecomputeFLOPs) and for the blocks left
// to the FLOP count. Hand counts at t = 4,096 tokens, each mm 2·t·n·k:
//
//   - Llama 3 8B (h 4096, 8 kv heads of 128, f 14336): wk, wo, w3,
//     2·t·(h·kv + qw·h + h·f) = 652,835,028,992.
//   - GPT (h 1024, f 4096), the preset's block with a bias on every
//     matrix: qkv, proj, fc1 and fc2 run aten.addmm, neither counted nor
//     kept, all rerun: 2·t·(3·h·h + h·h + 2·h·f) = 103,079,215,104.
//   - GPT without biases: proj and fc2, 2·t·(h·h + f·h) = 42,949,672,960.
//   - GPT with 4 kv heads of 64, no biases: qkv 1*, proj 2, fc1 3*, fc2 4:
//     the same 42,949,672,960 (the kv width only moves qkv).
//   - Qwen2-style (Llama 3 8B with q, k, v biases): [wq wk wv] wo* w1
//     w3* w2, so wq, wk, wv, w1, w2: 2·t·(h·qw + 2·h·kv + 2·h·f) =
//     1,168,231,104,512.
//   - DeepSeek-V3 dense (128 heads, d_qk 192, d_v 128, r_q 1536, r_kv 512,
//     f 18432, h 7168): wq_b 2·t·(128·192)·1536, wkv_b 2·t·(128·256)·512,
//     w1 and w2 2·t·18432·7168 each: 2,611,340,115,968.
//   - DeepSeek-V2-Lite (h 2048, 16 heads, no q_lora, r_kv 512, d_r 64,
//     f 10944; MoE blocks: 64 experts, shared 2·1408): block.0 (dense)
//     wkv_a 2·t·576·2048, wo 2·t·2048·2048, w3 2·t·10944·2048 =
//     227,633,266,688; block.1 (MoE: wq* wkv_a wkv_b* wo (gate) sw1* sw3
//     sw2*, the router gate recomputed and not counted: torchtitan's
//     default per_op_sac_force_recompute_mm_shapes_by_fqns
//     ["moe.router.gate"], torchtitan/config/job_config.py lines 661-663
//     and distributed/activation_checkpoint.py lines 110-113 at
//     238fa9953e4aec2a62582121564273d7cbb1e9f1) wkv_a, wo, the gate
//     2·t·64·2048 and the shared w3 2·t·2816·2048:
//     2·4096·2048·(576 + 2048 + 64 + 2816) = 92,341,796,864. Their
//     backward under op exceeds that under none by exactly these.
func TestOpRecomputeFLOPsOneRule(t *testing.T) {
	const tk = 4096
	for _, c := range []struct {
		name string
		fd   FLOPDims
		md   memory.BlockDims
		want int64
	}{
		{"llama", FLOPDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336},
			memory.BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336}, 652_835_028_992},
		{"gpt", FLOPDims{Arch: "gpt", Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096, QKVBias: true, OBias: true, MLPBias: true},
			memory.BlockDims{Arch: "gpt", Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096, QKVBias: true, OBias: true, MLPBias: true}, 103_079_215_104},
		{"gpt without biases", FLOPDims{Arch: "gpt", Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096},
			memory.BlockDims{Arch: "gpt", Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096}, 42_949_672_960},
		{"gpt GQA without biases", FLOPDims{Arch: "gpt", Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, KVHeads: 4, FFN: 4096},
			memory.BlockDims{Arch: "gpt", Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, KVHeads: 4, FFN: 4096}, 42_949_672_960},
		{"qwen2", FLOPDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, QKVBias: true},
			memory.BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, QKVBias: true}, 1_168_231_104_512},
	} {
		got, err := RecomputeFLOPs(c.fd, recomputeOp)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := memory.OpRecomputedMMFLOPs(c.md)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want || mem != c.want {
			t.Errorf("%s: RecomputeFLOPs %d, memory's mm count %d; want both %d", c.name, got, mem, c.want)
		}
	}
	v3 := memory.BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, ValueHeadDim: 128,
		RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512, FFN: 18432, Attention: memory.AttentionSDPA}
	if got, err := memory.OpRecomputedMMFLOPs(v3); err != nil || got != 2_611_340_115_968 {
		t.Errorf("DeepSeek-V3 dense: %d (%v), want 2,611,340,115,968", got, err)
	}
	rerun := opRerunFLOPs(t, "hf-extra/deepseek-v2-lite.json", "block.0", "block.1")
	for u, want := range map[string]int64{"block.0": 227_633_266_688, "block.1": 92_341_796_864} {
		if rerun[u] != want {
			t.Errorf("DeepSeek-V2-Lite %s: op reruns %d FLOPs, want %d", u, rerun[u], want)
		}
	}
}

// opRerunFLOPs is, per unit named, the backward FLOPs the op policy adds
// over no checkpointing for a 2-layer model of the Hugging Face config at
// seq 4096 on one node of 8 H100s at ZeRO-3, SDPA attention.
func opRerunFLOPs(t *testing.T, hfConfig string, units ...string) map[string]int64 {
	t.Helper()
	rerun := map[string]int64{}
	for _, rc := range []string{"none", "op"} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: " + hfConfig + ", layers: 2, seq_len: 4096}\n" +
			"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: " + rc + ", attention: sdpa}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		costs, err := Costs(s)
		if err != nil {
			t.Fatal(err)
		}
		sign := int64(-1)
		if rc == "op" {
			sign = 1
		}
		for _, u := range units {
			rerun[u] += sign * costs[unitNamed(t, s, u)].BwdFLOPs
		}
	}
	return rerun
}

// TestOpRecomputeBiasesPerLayer: a dense imported block reaches
// RecomputeFLOPs through layerFLOPDims with its own biases. Qwen2.5-72B
// (hidden 8192, 64 heads, 8 kv heads of 128, ffn 29568; q_proj, k_proj,
// v_proj with biases, run as aten.addmm) reruns wq, wk, wv, w1 and w2 at
// t = 4096: 2·t·(h·h + 2·h·1024 + 2·h·f) = 4,655,744,548,864 FLOPs more
// than without checkpointing; as bias-free Llama it would rerun wk, wo,
// w3.
func TestOpRecomputeBiasesPerLayer(t *testing.T) {
	if d := opRerunFLOPs(t, "hf-extra/qwen2.5-72b.json", "block.0")["block.0"]; d != 4_655_744_548_864 {
		t.Errorf("Qwen2.5-72B block.0: op reruns %d FLOPs, want 4,655,744,548,864", d)
	}
}
