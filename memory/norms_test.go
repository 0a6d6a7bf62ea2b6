package memory

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestNormActivations counts by hand what the query/key norms and Gemma's
// fp32 RMSNorms keep (transformers' modeling code, cited at qkNorms and
// normFP32Affine): every RMSNorm over t·w elements in r rows keeps
// x.float() (4·t·w) and the rstd (4·r), plus the normalized tensor its
// weight multiplies: 2·t·w in bf16 (Qwen3RMSNorm, Olmo2RMSNorm: the Llama
// code), 4·t·w in fp32 (Gemma2RMSNorm, Gemma3RMSNorm: (1 + weight) in
// fp32), nothing (Llama4TextL2Norm). The dimensions are the published
// config.json's (Qwen/Qwen3-32B; google/gemma-3-27b-it's text_config;
// scenarios/testdata/hf-extra gemma-2-27b.json, llama-4-scout-17b-16e.json,
// olmo-2-1124-13b.json). No checkpointing, flash attention, b = 1.
func TestNormActivations(t *testing.T) {
	for _, c := range []struct {
		name string
		d    BlockDims
		want int64
	}{
		// Qwen3-32B, t = 4096: h 5120, a 64, kv_h 8, head_dim 128 (qw
		// 8192, kv 1024), f 25600. The Llama block keeps
		// 2·(6·t·h + 4·t) + 2·(2·t·h) [two norms and their outputs]
		// + 2·t·qw + 2·2·t·kv + 2·t·qw [q, k, v, output] + 4·a·t [lse]
		// + 8·t·f = 335,544,320 + 32,768 + 134,217,728 + 16,777,216
		// + 1,048,576 + 838,860,800 = 1,326,481,408; q_norm and k_norm
		// add 6·t·(qw + kv) + 4·t·(a + kv_h) = 6·4096·9216 + 4·4096·72
		// = 226,492,416 + 1,179,648 = 227,672,064.
		{"Qwen3-32B", BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, FFN: 25600,
			QKNorm: scenarios.QKNormRMSHead}, 1_554_153_472},
		// Gemma 3 27B, t = 8192: h 5376, a 32, kv_h 16, head_dim 128 (qw
		// 4096, kv 2048), f 21504. Four fp32 norms 4·(8·t·h + 4·t), the
		// two pre-norms' outputs 2·2·t·h, q_norm 8·t·qw + 4·t·a, k_norm
		// 8·t·kv + 4·t·kv_h, q, k, v, output 4·t·qw/2 … as above, lse
		// 4·a·t, MLP 8·t·f: 36·t·h + 16·t + 12·t·qw + 12·t·kv +
		// 4·t·(a + kv_h) + 4·a·t + 8·t·f = 1,585,446,912 + 131,072 +
		// 402,653,184 + 201,326,592 + 1,572,864 + 1,048,576 +
		// 1,409,286,144 = 3,601,465,344 (the plain Llama block of these
		// dimensions: 2,316,369,920).
		{"Gemma 3 27B", BlockDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 5376, Heads: 32, KVHeads: 16, HeadDim: 128, FFN: 21504,
			QKNorm: scenarios.QKNormGemma, Norms: scenarios.NormsGemma}, 3_601_465_344},
		// Gemma 2 27B, t = 4096: h 4608, a 32, kv_h 16, head_dim 128
		// (qw 4096, kv 2048), f 36864, no q/k norms: 36·t·h + 16·t +
		// 4·t·qw + 4·t·kv + 4·a·t + 8·t·f = 679,477,248 + 65,536 +
		// 67,108,864 + 33,554,432 + 524,288 + 1,207,959,552 =
		// 1,988,689,920 (Llama's norms: 1,611,169,792).
		{"Gemma 2 27B", BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4608, Heads: 32, KVHeads: 16, HeadDim: 128, FFN: 36864,
			Norms: scenarios.NormsGemma}, 1_988_689_920},
		// OLMo 2 13B, t = 4096: h 5120, a = kv_h = 40, head_dim 128 (qw =
		// kv = 5120), f 13824; its post-norms keep what Llama's pre-norms
		// keep (Olmo2RMSNorm is the Llama code): 16·t·h + 8·t + 4·t·qw +
		// 4·t·kv + 4·a·t + 8·t·f = 335,544,320 + 32,768 + 83,886,080 +
		// 83,886,080 + 655,360 + 452,984,832 = 956,989,440, and q_norm,
		// k_norm over the whole widths 6·t·(qw + kv) + 2·4·t =
		// 251,658,240 + 32,768 = 251,691,008.
		{"OLMo 2 13B", BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 5120, Heads: 40, KVHeads: 40, HeadDim: 128, FFN: 13824,
			QKNorm: scenarios.QKNormRMSFull}, 1_208_680_448},
		// Llama 4 Scout's dense-shaped RoPE block, t = 4096: h 5120, a 40,
		// kv_h 8, head_dim 128 (qw 5120, kv 1024), f 8192: 16·t·h + 8·t +
		// 4·t·qw + 4·t·kv + 4·a·t + 8·t·f = 335,544,320 + 32,768 +
		// 83,886,080 + 16,777,216 + 655,360 + 268,435,456 = 705,331,200,
		// and the L2 norms 4·t·(qw + kv) + 4·t·(a + kv_h) = 100,663,296 +
		// 786,432 = 101,449,728.
		{"Llama 4 Scout", BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, FFN: 8192,
			QKNorm: scenarios.QKNormL2}, 806_780_928},
	} {
		got, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: block keeps %d B, want %d", c.name, got, c.want)
		}
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestNormActivations",
		"Qwen3-32B at t = 4,096: 1,554,153,472 B per block (1,326,481,408 without the q/k norms)",
		"Gemma 3 27B at t = 8,192: 3,601,465,344 B per block (2,316,369,920 as a Llama block)")
	// Compiled, a norm keeps its 16-bit input and rstd (compiledRules):
	// Qwen3-32B's q_norm and k_norm 2·t·(qw + kv) + 4·t·(a + kv_h) =
	// 75,497,472 + 1,179,648 = 76,677,120 more than the compiled block
	// without them.
	d := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, FFN: 25600, Compiled: true}
	without, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	d.QKNorm = scenarios.QKNormRMSHead
	with, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	if with-without != 76_677_120 {
		t.Errorf("compiled Qwen3-32B q/k norms keep %d B, want 76,677,120", with-without)
	}
	// Qwen3-Next-80B-A3B, t = 4096 (h 2048; attention a 16, kv_h 2,
	// head_dim 256: qw 4096, kv 512): its two Qwen3NextRMSNorms keep the
	// fp32 normalized tensor instead of the bf16 one, 2·2·t·h =
	// 33,554,432 B more in every block; an attention block's q_norm and
	// k_norm add 8·t·(qw + kv) + 4·t·(a + kv_h) = 150,994,944 + 294,912:
	// 184,844,288 B in all.
	qn := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 2, NoFFN: true, SharedFFN: 512, SharedGate: true}
	gdn := qn
	gdn.LinearAttention, gdn.LinearKeyHeads, gdn.LinearValueHeads, gdn.LinearKeyHeadDim, gdn.LinearValueHeadDim = scenarios.LinearGatedDeltaNet, 16, 32, 128, 128
	att := qn
	att.HeadDim, att.OutputGate = 256, true
	for _, c := range []struct {
		name string
		d    BlockDims
		qk   string
		want int64
	}{{"Qwen3-Next Gated DeltaNet block", gdn, "", 33_554_432}, {"Qwen3-Next attention block", att, scenarios.QKNormGemma, 184_844_288}} {
		before, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatal(err)
		}
		c.d.Norms, c.d.QKNorm = scenarios.NormsFP32, c.qk
		after, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatal(err)
		}
		if after-before != c.want {
			t.Errorf("%s: the fp32 norms add %d B, want %d", c.name, after-before, c.want)
		}
	}
	// Gemma's final norm keeps its fp32 normalized tensor: Gemma 2 27B at
	// t = 4096, V = 256,000: 8·t·h + 4·t + 2·t·h [projection input] +
	// 4·t·V [log_softmax] = 150,994,944 + 16,384 + 37,748,736 +
	// 4,194,304,000 = 4,383,064,064.
	hd := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4608, Heads: 32, Vocab: 256000, LossFP32: true, Norms: scenarios.NormsGemma}
	hs, _, err := HeadActivation(hd)
	if err != nil {
		t.Fatal(err)
	}
	if hs != 4_383_064_064 {
		t.Errorf("Gemma 2 27B head keeps %d B, want 4,383,064,064", hs)
	}
}

// TestNormActivationsImported checks the importer's flags reach the
// activation model: Gemma 2 27B (scenarios/testdata/hf-extra/
// gemma-2-27b.json) at s = 4096 keeps TestNormActivations' 1,988,689,920
// B per block, and Qwen3-8B (testdata/hf/qwen3-8b: h 4096, a 32, kv_h 8,
// head_dim 128, f 12288) its q/k norms: the Llama block 16·t·h + 8·t +
// 4·t·qw + 4·t·kv + 4·a·t + 8·t·f = 268,435,456 + 32,768 + 67,108,864 +
// 16,777,216 + 524,288 + 402,653,184 = 755,531,776, plus 6·t·(4096 +
// 1024) + 4·t·(32 + 8) = 125,829,120 + 655,360 = 126,484,480.
func TestNormActivationsImported(t *testing.T) {
	for _, c := range []struct {
		cfg  string
		want int64
	}{
		{"hf-extra/gemma-2-27b.json", 1_988_689_920},
		{"hf/qwen3-8b/config.json", 882_016_256},
	} {
		s := loadHF(t, c.cfg, 2, "attention: flash, recompute: none")
		stored, _, err := unitActivations(s)
		if err != nil {
			t.Fatal(err)
		}
		for u, l := range s.Model.LayerList {
			if l.Name == "block.0" && stored[u] != c.want {
				t.Errorf("%s: block.0 keeps %d B, want %d", c.cfg, stored[u], c.want)
			}
		}
	}
}

// TestNormsNeedLlamaBlocks: BlockActivation, exported, refuses qk_norm and
// norms on a GPT-style (LayerNorm) block itself, as the scenario loader
// does at the key (review s20 A F9, M18): it derives them for RMSNorm
// blocks only and would otherwise count nothing for them.
func TestNormsNeedLlamaBlocks(t *testing.T) {
	gpt := BlockDims{Arch: "gpt", Seq: 128, Batch: 1, Hidden: 256, Heads: 4, FFN: 1024, Vocab: 1000}
	qk, norms := gpt, gpt
	qk.QKNorm, norms.Norms = scenarios.QKNormRMSHead, scenarios.NormsGemma
	for _, d := range []BlockDims{qk, norms} {
		if _, _, err := BlockActivation(d, PolicyNone); err == nil || !strings.Contains(err.Error(), `qk_norm and norms are derived for llama blocks (RMSNorm), not "gpt"`) {
			t.Errorf("qk_norm %q norms %q on a gpt block: %v, want the llama-blocks error", d.QKNorm, d.Norms, err)
		}
	}
	if _, _, err := BlockActivation(gpt, PolicyNone); err != nil {
		t.Errorf("plain gpt block: %v", err)
	}
}
