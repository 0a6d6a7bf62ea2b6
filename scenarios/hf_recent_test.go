package scenarios

import (
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// hfVariant is testdata/hf-extra/name.json with keys replaced (nil
// deletes; a key "text_config.k" replaces inside text_config).
func hfVariant(t *testing.T, name string, set map[string]any) *HFModel {
	t.Helper()
	raw, err := os.ReadFile("testdata/hf-extra/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		dst := m
		if sub, ok := strings.CutPrefix(k, "text_config."); ok {
			dst, k = m["text_config"].(map[string]any), sub
		}
		if v == nil {
			delete(dst, k)
		} else {
			dst[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	hm, err := ImportHF(name+".json", b)
	if err != nil {
		t.Fatal(err)
	}
	return hm
}

// embedding is the input-embedding unit's parameters.
func embedding(hm *HFModel) int64 { return int64(hm.LayerList[0].Params) }

// TestHFDeepseekV3 holds DeepSeek-V3 (testdata/hf-extra/deepseek-v3.json,
// deepseek-ai/DeepSeek-V3's config.json) to its published counts.
//
//   - Main model (num_hidden_layers 61, no MTP): 671,026,419,200, an exact
//     count of the checkpoint's main-model tensors (find_string 671026419200:
//     a checkpoint-header audit's "mainParameterElements", a fine-tuning
//     service's paramCount for DeepSeek-V3/R1; DeepSeek: "671B total").
//     It holds the 58·256 e_score_correction_bias entries.
//   - Active: README_WEIGHTS.md "36.6B activated (including 0.9B for the
//     output Head)", i.e. without the input embedding, rounded to 0.1B.
//   - With the MTP module: the Hub's safetensors metadata of
//     deepseek-ai/DeepSeek-V3 (find_string 684531386000) is BF16
//     3,918,786,560 + F8_E4M3 680,571,043,840 + F32 41,555,600. Every
//     weight is BF16 or FP8; F32 is the FP8 weights' 128×128 block scales
//     (41,540,496 from the shapes) and the 59·256 = 15,104 router biases.
//     The MTP layer stores its own copies of embed_tokens and
//     shared_head.head, which are the main model's (README_WEIGHTS.md), so
//     the trained parameters are BF16 + F8 + 15,104 − 2·129,280·7,168 =
//     682,636,487,424: main + the 11,610,068,224 "11.5B unique parameters".
func TestHFDeepseekV3(t *testing.T) {
	main := hfVariant(t, "deepseek-v3", map[string]any{"num_nextn_predict_layers": 0})
	if main.Total != 671_026_419_200 {
		t.Errorf("main model: %d, want 671,026,419,200 (off by %d)", main.Total, main.Total-671_026_419_200)
	}
	if a := main.Active - embedding(main); a < 36_550_000_000 || a >= 36_650_000_000 {
		t.Errorf("main model: %d active without the input embedding, want 36.6B", a)
	}
	hm, err := ReadHFConfig("testdata/hf-extra/deepseek-v3.json")
	if err != nil {
		t.Fatal(err)
	}
	const bf16, f8, bias, vocab, hidden = 3_918_786_560, 680_571_043_840, 59 * 256, 129_280, 7_168
	checkHF(t, hm, bf16+f8+bias-2*vocab*hidden, -1)
	if mtp := hm.Total - main.Total; mtp < 11_450_000_000 || mtp >= 11_650_000_000 {
		t.Errorf("MTP module: %d, want DeepSeek's 11.5B unique (11.6B with eh_proj's 0.1B)", mtp)
	}
	// 61 + 1 blocks: 3 dense, 59 MoE units after their blocks, the last
	// being the MTP module (model.layers.61).
	if hm.Layers != 62 || len(hm.LayerList) != 1+62+59+2 || hm.LayerList[len(hm.LayerList)-4].Name != "block.61" {
		t.Errorf("layers %d, %d units", hm.Layers, len(hm.LayerList))
	}
	if len(hm.Notes) != 3 || !strings.Contains(hm.Notes[0], "num_nextn_predict_layers=1") || !strings.Contains(hm.Notes[1], "topk_group=4") ||
		!strings.Contains(hm.Notes[2], "quantization_config (fp8)") {
		t.Errorf("notes %q", hm.Notes)
	}
}

// TestHFGptOss holds gpt-oss-20b (testdata/hf-extra/gpt-oss-20b.json) and
// gpt-oss-120b (the same file with the 120b's num_hidden_layers 36 and
// num_local_experts 128, model card arXiv:2508.10925 Table 1) to the
// exact counts llama.cpp's GGUF general.parameter_count gives for the
// bf16 models (find_string 20914757184, 116829156672), which the model
// card rounds to 20.91B and 116.83B; the card's active counts, 3.61B and
// 5.13B, leave out the input embedding (0.58B).
func TestHFGptOss(t *testing.T) {
	types := make([]any, 36)
	for i := range types {
		types[i] = map[bool]string{true: "sliding_attention", false: "full_attention"}[i%2 == 0]
	}
	for _, c := range []struct {
		name          string
		hm            *HFModel
		total, active int64
	}{
		{"20b", hfVariant(t, "gpt-oss-20b", nil), 20_914_757_184, 3_610_000_000},
		{"120b", hfVariant(t, "gpt-oss-20b", map[string]any{"num_hidden_layers": 36, "num_local_experts": 128, "layer_types": types}), 116_829_156_672, 5_130_000_000},
	} {
		checkHF(t, c.hm, c.total, -1)
		if a := c.hm.Active - embedding(c.hm); a < c.active-5_000_000 || a >= c.active+5_000_000 {
			t.Errorf("%s: %d active without the input embedding, want %.2fB", c.name, a, float64(c.active)/1e9)
		}
		if c.hm.WindowLayers != c.hm.Layers/2 || c.hm.SlidingWindow != 128 {
			t.Errorf("%s: %d windowed layers of %d, window %d", c.name, c.hm.WindowLayers, c.hm.Layers, c.hm.SlidingWindow)
		}
	}
}

// TestHFGemma3 holds Gemma 3's text decoder to Keras Hub's text-only
// preset counts (keras_hub/src/models/gemma3/gemma3_presets.py
// @ 00d9f10a8e74d4f552ed50170b7dcadb65d3bd52: gemma3_4b_text 3,880,099,328,
// gemma3_27b_text 27,009,002,240) plus 64·hidden: the Hugging Face
// checkpoints' text_config has vocab_size 262,208, Keras 262,144, and the
// multimodal totals differ by exactly those rows (HF gemma-3-4b-it
// 4,300,079,472, find_string 4300079472, against Keras gemma3_4b
// 4,299,915,632). testdata/hf-extra/gemma-3-4b-it.json is the
// Gemma3ForConditionalGeneration config; the same text_config as a
// Gemma3ForCausalLM, and with the 27B's dimensions (google/gemma-3-27b-it
// text_config), give the same counts.
func TestHFGemma3(t *testing.T) {
	raw, err := os.ReadFile("testdata/hf-extra/gemma-3-4b-it.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	text := m["text_config"].(map[string]any)
	text["architectures"] = []any{"Gemma3ForCausalLM"}
	causal, _ := json.Marshal(text)
	causalLM, err := ImportHF("c.json", causal)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		hm    *HFModel
		total int64
	}{
		{"4b-it", hfVariant(t, "gemma-3-4b-it", nil), 3_880_099_328 + 64*2560},
		{"4b as Gemma3ForCausalLM", causalLM, 3_880_099_328 + 64*2560},
		{"27b", hfVariant(t, "gemma-3-4b-it", map[string]any{"text_config.hidden_size": 5376, "text_config.intermediate_size": 21504,
			"text_config.num_attention_heads": 32, "text_config.num_key_value_heads": 16, "text_config.num_hidden_layers": 62,
			"text_config.head_dim": 128}), 27_009_002_240 + 64*5376},
	} {
		checkHF(t, c.hm, c.total, 0)
		// 5 sliding layers for every full one: layer i is full when
		// (i+1) % 6 == 0.
		if !c.hm.Tied || c.hm.SlidingWindow != 1024 || c.hm.WindowLayers != c.hm.Layers-c.hm.Layers/6 {
			t.Errorf("%s: tied %v, window %d over %d of %d layers", c.name, c.hm.Tied, c.hm.SlidingWindow, c.hm.WindowLayers, c.hm.Layers)
		}
	}
	if len(causalLM.Notes) != 0 {
		t.Errorf("Gemma3ForCausalLM notes %q", causalLM.Notes)
	}
}

// TestHFRecentScenario: a scenario naming these configs (or a preset built
// from one, Gemma 2's even layers slide over 4096 tokens) warns with the
// import's notes, and about sliding windows only when seq_len exceeds the
// window; model.layers shortens layer_types and text_config.
func TestHFRecentScenario(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel:\n"
	for _, c := range []struct {
		model  string
		layers int64
		warn   []string
	}{
		{"  hf_config: hf-extra/gemma-3-4b-it.json\n  seq_len: 1024\n", 34, []string{"vision_config: the SigLIP vision tower"}},
		{"  hf_config: hf-extra/gemma-3-4b-it.json\n  seq_len: 1025\n", 34, []string{"vision_config", "29 of the 34 decoder blocks attend over a sliding window of 1024 tokens (sliding_window), but zerosim models full causal attention over seq_len 1025"}},
		{"  hf_config: hf-extra/gemma-3-4b-it.json\n  layers: 2\n", 2, []string{"vision_config", "2 of the 2 decoder blocks attend over a sliding window of 1024"}},
		{"  hf_config: hf-extra/gpt-oss-20b.json\n  layers: 3\n", 3, []string{"quantization_config (mxfp4)", "2 of the 3 decoder blocks attend over a sliding window of 128 tokens (sliding_window), but zerosim models full causal attention over seq_len 4096"}},
		{"  preset: gemma2-9b\n  seq_len: 4096\n", 42, nil},
		{"  preset: gemma2-9b\n  seq_len: 8192\n", 42, []string{"21 of the 42 decoder blocks attend over a sliding window of 4096 tokens (sliding_window), but zerosim models full causal attention over seq_len 8192"}},
		{"  hf_config: hf-extra/deepseek-v3.json\n  layers: 4\n", 5, []string{"num_nextn_predict_layers=1: the multi-token-prediction block (block.4,", "n_group=8", "quantization_config (fp8)"}},
	} {
		s, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.model, err)
		}
		if s.Model.Layers != c.layers || len(s.Warnings) != len(c.warn) {
			t.Errorf("%q: %d layers, warnings %q", c.model, s.Model.Layers, s.Warnings)
			continue
		}
		for i, w := range c.warn {
			if !strings.HasPrefix(s.Warnings[i], "testdata/x.yaml:5:3: ") || !strings.Contains(s.Warnings[i], w) {
				t.Errorf("%q: warning %d = %q, want %q", c.model, i, s.Warnings[i], w)
			}
		}
	}
}

// TestHFRecentErrors: the new keys' mistakes are one line naming the key.
func TestHFRecentErrors(t *testing.T) {
	oss := `{"architectures": ["GptOssForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 32, "num_local_experts": 4`
	ds := `{"architectures": ["DeepseekV3ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32`
	for _, c := range []struct{ in, want string }{
		{oss + `, "layer_types": ["sliding_attention"]}`, "c.json: layer_types has 1 entries for num_hidden_layers=2 (give one per layer)"},
		{oss + `, "layer_types": ["sliding_attention", "local"]}`, `c.json: layer_types[1] is "local" (use "sliding_attention" or "full_attention")`},
		{oss + `, "num_experts_per_tok": 5}`, "c.json: num_experts_per_tok=5 is out of range (use 1 to 4)"},
		{oss + `}`, ""},
		{ds + `, "n_routed_experts": 12, "n_group": 5}`, "c.json: n_group=5 does not divide n_routed_experts=12 (use a divisor of 12)"},
		{ds + `, "n_routed_experts": 16, "n_group": 8, "topk_group": 1, "num_experts_per_tok": 3}`, "c.json: num_experts_per_tok=3 exceeds the 2 experts of topk_group=1 groups"},
		{ds + `, "n_routed_experts": 16, "num_nextn_predict_layers": -1}`, "c.json: num_nextn_predict_layers=-1 is out of range"},
		{`{"architectures": ["Gemma3ForConditionalGeneration"], "text_config": null}`, "c.json: text_config is null (Gemma3ForConditionalGeneration needs the text decoder's text_config object)"},
		{`{"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {"hidden_size": 64, "num_hidden_layers": 2}}`, "c.json: text_config.intermediate_size is missing (add it to config.json)"},
		{`{"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {"hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 8, "num_key_value_heads": 3}}`, "c.json: text_config.num_key_value_heads=3 does not divide num_attention_heads=8"},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if c.want == "" {
			if err != nil {
				t.Errorf("ImportHF(%.70s) = %v, want success", c.in, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("ImportHF(%.70s) = %v, want prefix %q", c.in, err, c.want)
		}
	}
}

// TestHFSupportedListed: README's and docs/scenario-format.md's model key
// reference list every supported architecture, and no other.
func TestHFSupportedListed(t *testing.T) {
	want := strings.Join(hfArchitectureNames(), ",")
	for _, f := range []string{"../README.md", "../docs/scenario-format.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, list, ok := strings.Cut(string(b), "lm_head` unless tied. Supported: ")
		list, _, ok2 := strings.Cut(list, ";")
		if !ok || !ok2 {
			t.Fatalf("%s: no Supported: list", f)
		}
		var names []string
		for _, n := range strings.Split(list, ",") {
			names = append(names, strings.Fields(n)[0])
		}
		sort.Strings(names)
		if got := strings.Join(names, ","); got != want {
			t.Errorf("%s lists %s,\nthe importer supports %s", f, got, want)
		}
	}
}

// TestHFQwen2Moe holds Qwen1.5-MoE-A2.7B (testdata/hf-extra/
// qwen1.5-moe-a2.7b.json) to Keras Hub's qwen1.5_moe_2.7b_en preset count,
// 14,315,784,192 (find_string 14315784192; a served-model banner gives the
// same), and to Qwen's "2.7B activated" (rounded to 0.1B). A transformers
// instance of the same config cut to 3 layers, 4 experts and a 1,519-token
// vocabulary, measured with torchinfo next to the config (find_string hit
// 11134031260), has 264,235,008 parameters, 86,003,712 a layer.
func TestHFQwen2Moe(t *testing.T) {
	hm := hfVariant(t, "qwen1.5-moe-a2.7b", nil)
	checkHF(t, hm, 14_315_784_192, -1)
	if hm.Active < 2_650_000_000 || hm.Active >= 2_750_000_000 {
		t.Errorf("active %d, want 2.7B", hm.Active)
	}
	tiny := hfVariant(t, "qwen1.5-moe-a2.7b", map[string]any{"vocab_size": 1519, "num_hidden_layers": 3, "num_experts": 4})
	checkHF(t, tiny, 264_235_008, 0) // top-4 of 4 experts: all active
	if b := int64(tiny.LayerList[1].Params + tiny.LayerList[2].Params); b != 86_003_712 {
		t.Errorf("tiny: a layer holds %d, want 86,003,712", b)
	}
	if _, err := ImportHF("c.json", []byte(`{"architectures": ["Qwen2MoeForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32, "use_sliding_window": true}`)); err == nil ||
		!strings.HasPrefix(err.Error(), "c.json: use_sliding_window=true: zerosim has no sliding-window attention model") {
		t.Errorf("use_sliding_window: %v", err)
	}
}

// TestHFSharedExpertAndMLADims holds the dimensions the importer records
// for the activation and FLOP models: the shared expert MLP's width
// (DeepSeek: DeepseekV3MoE's shared_experts =
// DeepseekV3MLP(moe_intermediate_size·n_shared_experts),
// modeling_deepseek_v3.py @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3, and
// DeepseekV2MoE's alike at 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d;
// Qwen2-MoE: shared_expert_intermediate_size plus the sigmoid gate,
// modeling_qwen2_moe.py @ 1c351314a42ac9aef3510fc536c18130d52be2ef) on MoE
// blocks only, and MLA's value width and low ranks from config.json.
func TestHFSharedExpertAndMLADims(t *testing.T) {
	for _, c := range []struct {
		name  string
		block int
		want  BlockDims
	}{
		{"deepseek-v3", 0, BlockDims{Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, FFN: 18432,
			ValueHeadDim: 128, RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512}},
		{"deepseek-v3", 3, BlockDims{Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, Experts: 256, TopK: 8, ExpertFFN: 2048,
			SharedExperts: 1, SharedFFN: 2048, ValueHeadDim: 128, RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512}},
		// q_lora_rank null: a full q_proj, no q_a tensors; 2 shared × 1408.
		{"deepseek-v2-lite", 1, BlockDims{Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 192, Experts: 64, TopK: 6, ExpertFFN: 1408,
			SharedExperts: 2, SharedFFN: 2816, ValueHeadDim: 128, RopeHeadDim: 64, KVLoRARank: 512}},
		{"qwen1.5-moe-a2.7b", 0, BlockDims{Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, Experts: 60, TopK: 4, ExpertFFN: 1408,
			SharedExperts: 1, SharedFFN: 5632, SharedGate: true}},
		{"mixtral-8x22b", 0, BlockDims{Hidden: 6144, Heads: 48, KVHeads: 8, HeadDim: 128, Experts: 8, TopK: 2, ExpertFFN: 16384}},
	} {
		hm := hfVariant(t, c.name, nil)
		var got *BlockDims
		for _, l := range hm.LayerList {
			if l.Name == "block."+strconv.Itoa(c.block) {
				got = l.Dims
			}
		}
		if got == nil || *got != c.want {
			t.Errorf("%s block.%d dims = %+v, want %+v", c.name, c.block, got, c.want)
		}
	}
}
