package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestEagerSoftmaxFP32 counts by hand what eager attention keeps when the
// softmax runs in fp32 (transformers' eager_attention_forward:
// softmax(…, dtype=torch.float32).to(query.dtype); eagerScores): the fp32
// probabilities _softmax saves (4·a·s²·b) and the 16-bit copy
// matmul(p, v) saves (2·a·s²·b), with Gemma 2's tanh output (2·a·s²·b)
// before them. No checkpointing, b = 1; repeat_kv widens k and v to qw.
func TestEagerSoftmaxFP32(t *testing.T) {
	for _, c := range []struct {
		name string
		d    BlockDims
		want int64
	}{
		// Llama 3.1 8B, t = s = 2048: h 4096, a 32, kv_h 8, f 14336. Two
		// norms 2·(6·t·h + 4·t) = 100,679,680, their outputs 4·t·h =
		// 33,554,432, q 2·t·h = 16,777,216, k and v repeated 2·2·t·h =
		// 33,554,432, softmax fp32 4·a·s² = 536,870,912 and its bf16 copy
		// 2·a·s² = 268,435,456, the output transposed into o_proj's input
		// 2·t·h = 16,777,216, MLP 8·t·f = 234,881,024: 1,241,530,368
		// (704,659,456 with one 16-bit softmax output).
		{"Llama 3.1 8B (transformers)", BlockDims{Arch: "llama", Seq: 2048, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336,
			Attention: AttentionEager, SoftmaxFP32: true}, 1_241_530_368},
		// The same block with Megatron's fused 16-bit softmax
		// (Korthikanti's 2·a·s²·b): 704,659,456.
		{"Llama 3.1 8B (16-bit softmax)", BlockDims{Arch: "llama", Seq: 2048, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336,
			Attention: AttentionEager}, 704_659_456},
		// Gemma 2 27B, t = 4096: h 4608, a 32, kv_h 16, head_dim 128 (qw
		// 4096), f 36864, four fp32 norms, attn_logit_softcapping: 36·t·h
		// + 16·t [norms and pre-norm outputs] + 4·2·t·qw [q, k, v,
		// output] + (2 + 4 + 2)·a·s² [tanh, softmax fp32, copy] + 8·t·f
		// = 679,477,248 + 65,536 + 134,217,728 + 4,294,967,296 +
		// 1,207,959,552 = 6,316,687,360.
		{"Gemma 2 27B", BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4608, Heads: 32, KVHeads: 16, HeadDim: 128, FFN: 36864,
			Attention: AttentionEager, SoftmaxFP32: true, Norms: scenarios.NormsGemma, AttnSoftcap: true}, 6_316_687_360},
		// Qwen3-32B, t = 4096 (a 64, qw 8192, f 25600): 16·t·h + 8·t
		// [norms, outputs] + 227,672,064 [q/k norms] + 4·2·t·qw + 6·a·s²
		// + 8·t·f = 335,544,320 + 32,768 + 227,672,064 + 268,435,456 +
		// 6,442,450,944 + 838,860,800 = 8,112,996,352.
		{"Qwen3-32B", BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, FFN: 25600,
			Attention: AttentionEager, SoftmaxFP32: true, QKNorm: scenarios.QKNormRMSHead}, 8_112_996_352},
		// Gemma 3 27B, t = 8192 (a 32, kv_h 16, qw 4096, kv 2048, f
		// 21504; no attention softcap): 36·t·h + 16·t + 8·t·(qw + kv) +
		// 4·t·(a + kv_h) [q/k norms] + 4·2·t·qw + 6·a·s² + 8·t·f =
		// 1,585,446,912 + 131,072 + 402,653,184 + 1,572,864 +
		// 268,435,456 + 12,884,901,888 + 1,409,286,144 = 16,552,427,520.
		{"Gemma 3 27B", BlockDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 5376, Heads: 32, KVHeads: 16, HeadDim: 128, FFN: 21504,
			Attention: AttentionEager, SoftmaxFP32: true, QKNorm: scenarios.QKNormGemma, Norms: scenarios.NormsGemma}, 16_552_427_520},
	} {
		got, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: block keeps %d B, want %d", c.name, got, c.want)
		}
		// Selective recomputation rebuilds every s² tensor.
		sel, _, err := BlockActivation(c.d, PolicySelective)
		if err != nil {
			t.Fatal(err)
		}
		softcap := int64(0)
		if c.d.AttnSoftcap {
			softcap = 2
		}
		s2 := c.d.Heads * c.d.Seq * c.d.Seq
		if c.d.SoftmaxFP32 {
			s2 *= 6 + softcap
		} else {
			s2 *= 2
		}
		if got-sel != s2 {
			t.Errorf("%s: selective rebuilds %d B of core attention, want %d", c.name, got-sel, s2)
		}
	}
	// With dropout the 16-bit copy feeds only the dropout, which keeps
	// its mask (a·s²) and output (2·a·s²): 7·a·s² instead of 6, plus the
	// two residual masks t·h each: 134,217,728 + 16,777,216 more.
	d := BlockDims{Arch: "llama", Seq: 2048, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Attention: AttentionEager, SoftmaxFP32: true}
	without, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	d.Dropout = true
	with, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	if with-without != 150_994_944 {
		t.Errorf("dropout adds %d B, want 150,994,944", with-without)
	}
}

// TestEagerSoftmaxByModel checks which models get the fp32 softmax: an
// imported Llama 3.1 8B (testdata/hf/llama-3.1-8b, transformers' eager
// code) keeps TestEagerSoftmaxFP32's 1,241,530,368 B per block at s =
// 2048; the same dimensions as model.arch llama without a Hugging Face
// class (Megatron's DotProductAttention and its fused 16-bit softmax,
// Korthikanti) keep 704,659,456; GPT-2 and gpt-oss keep their 16-bit
// softmax (scenarios.HFEagerSoftmaxFP32).
func TestEagerSoftmaxByModel(t *testing.T) {
	load := func(model string) *scenarios.Scenario {
		y := fmt.Sprintf(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {%s, seq_len: 2048}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 1, attention: eager, recompute: none}
`, model)
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		model string
		want  int64
	}{
		{"hf_config: hf/llama-3.1-8b/config.json, layers: 2", 1_241_530_368},
		{"kind: transformer, arch: llama, hidden: 4096, layers: 2, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256", 704_659_456},
	} {
		s := load(c.model)
		stored, _, err := unitActivations(s)
		if err != nil {
			t.Fatal(err)
		}
		if u := 1; s.Model.LayerList[u].Name != "block.0" || stored[u] != c.want {
			t.Errorf("%s: %s keeps %d B, want %d", c.model, s.Model.LayerList[u].Name, stored[u], c.want)
		}
	}
	for arch, want := range map[string]bool{"LlamaForCausalLM": true, "Gemma2ForCausalLM": true, "DeepseekV3ForCausalLM": true,
		"GPT2LMHeadModel": false, "GptOssForCausalLM": false, "FalconForCausalLM": false, "": false} {
		if got := scenarios.HFEagerSoftmaxFP32(arch); got != want {
			t.Errorf("HFEagerSoftmaxFP32(%q) = %v, want %v", arch, got, want)
		}
	}
}
