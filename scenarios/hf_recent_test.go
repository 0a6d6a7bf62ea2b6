package scenarios

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// hfVariant is testdata/hf-extra/name.json with keys replaced (nil
// deletes; a key "text_config.k" replaces inside text_config).
//
// The key "@mtp_layers" is not written into the file: it builds that many
// multi-token-prediction modules, as model.mtp_layers does.
func hfVariant(t *testing.T, name string, set map[string]any) *HFModel {
	t.Helper()
	mtp := int64(-1)
	if v, ok := set["@mtp_layers"]; ok {
		mtp = int64(v.(int))
		set = maps.Clone(set)
		delete(set, "@mtp_layers")
	}
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
	pm, err := parseHF(name+".json", b)
	if err != nil {
		t.Fatal(err)
	}
	hm, err := importHF(name+".json", b, pm, 0, mtp)
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
//     count of the checkpoint's main-model tensors (a checkpoint-header
//     audit's "mainParameterElements", a fine-tuning
//     service's paramCount for DeepSeek-V3/R1; DeepSeek: "671B total").
//     It holds the 58·256 e_score_correction_bias entries.
//   - Active: README_WEIGHTS.md "36.6B activated (including 0.9B for the
//     output Head)", i.e. without the input embedding, rounded to 0.1B.
//   - With the MTP module: the Hub's safetensors metadata of
//     deepseek-ai/DeepSeek-V3 (684,531,386,000 in all) is BF16
//     3,918,786,560 + F8_E4M3 680,571,043,840 + F32 41,555,600. Every
//     weight is BF16 or FP8; F32 is the FP8 weights' 128×128 block scales
//     (41,540,496 from the shapes) and the 59·256 = 15,104 router biases.
//     The MTP layer stores its own copies of embed_tokens and
//     shared_head.head, which are the main model's (README_WEIGHTS.md), so
//     the trained parameters are BF16 + F8 + 15,104 − 2·129,280·7,168 =
//     682,636,487,424: main + the 11,610,068,224 "11.5B unique parameters".
//
// transformers' DeepseekV3Model builds range(num_hidden_layers) layers and
// ignores model.layers.61.* (modeling_deepseek_v3.py @ f5a9ec51), so the
// config as published imports as the main model; model.mtp_layers 1 (a
// stack that trains the MTP module) imports the checkpoint's total.
func TestHFDeepseekV3(t *testing.T) {
	for _, main := range []*HFModel{hfVariant(t, "deepseek-v3", nil), hfVariant(t, "deepseek-v3", map[string]any{"num_nextn_predict_layers": 0})} {
		if main.Total != 671_026_419_200 {
			t.Errorf("main model: %d, want 671,026,419,200 (off by %d)", main.Total, main.Total-671_026_419_200)
		}
		if a := main.Active - embedding(main); a < 36_550_000_000 || a >= 36_650_000_000 {
			t.Errorf("main model: %d active without the input embedding, want 36.6B", a)
		}
		if main.Layers != 61 || len(main.LayerList) != 1+61+58+2 {
			t.Errorf("main model: %d layers, %d units", main.Layers, len(main.LayerList))
		}
	}
	main := hfVariant(t, "deepseek-v3", nil)
	if len(main.Notes) != 3 || !strings.HasPrefix(main.Notes[0], "num_nextn_predict_layers=1: the multi-token-prediction module (the checkpoint's model.layers.61.*) is not counted") ||
		!strings.Contains(main.Notes[0], "set model.mtp_layers: 1 beside model.hf_config") {
		t.Errorf("main model's notes %q", main.Notes)
	}
	hm := hfVariant(t, "deepseek-v3", map[string]any{"@mtp_layers": 1})
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
	if len(hm.Notes) != 3 || !strings.HasPrefix(hm.Notes[0], "model.mtp_layers=1 (num_nextn_predict_layers=1): the multi-token-prediction block (block.61) is counted") || !strings.Contains(hm.Notes[1], "topk_group=4") ||
		!strings.Contains(hm.Notes[2], "quantization_config (fp8)") {
		t.Errorf("notes %q", hm.Notes)
	}
}

// TestHFGptOss holds gpt-oss-20b (testdata/hf-extra/gpt-oss-20b.json) and
// gpt-oss-120b (the same file with the 120b's num_hidden_layers 36 and
// num_local_experts 128, model card arXiv:2508.10925 Table 1) to the
// exact counts llama.cpp's GGUF general.parameter_count gives for the
// bf16 models (20,914,757,184 and 116,829,156,672), which the model
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

// TestHFGptOssExpertsPerToken: GptOssConfig reads num_experts_per_tok
// (default 4) and nothing else for the experts each token runs:
// experts_per_token, which gpt-oss-20b's config.json also gives, is no
// alias of it (configuration_gpt_oss.py at 828a27fd: __init__'s
// num_experts_per_tok=4, other keys kept as unused attributes; at
// 02b8f42b the attribute_map maps num_experts alone). A file with
// experts_per_token = 2 alone builds 4 experts per token, gpt-oss-20b's
// active count, and lists the key as not read; before, it built 2.
func TestHFGptOssExpertsPerToken(t *testing.T) {
	base := hfVariant(t, "gpt-oss-20b", nil)
	for _, c := range []struct {
		name string
		set  map[string]any
		topK int64
	}{
		{"experts_per_token alone", map[string]any{"num_experts_per_tok": nil, "experts_per_token": 2}, 4},
		{"num_experts_per_tok", map[string]any{"num_experts_per_tok": 2, "experts_per_token": 4}, 2},
	} {
		hm := hfVariant(t, "gpt-oss-20b", c.set)
		if hm.Dims.TopK != c.topK || (c.topK == 4) != (hm.Active == base.Active) || hm.Total != base.Total {
			t.Errorf("%s: %d experts per token, %d active of %d; want %d (gpt-oss-20b: %d of %d)", c.name, hm.Dims.TopK, hm.Active, hm.Total, c.topK, base.Active, base.Total)
		}
		if !slices.Contains(hm.Unread, "experts_per_token") {
			t.Errorf("%s: keys not read %q lack experts_per_token", c.name, hm.Unread)
		}
	}
}

// TestHFGemma3 holds Gemma 3's text decoder to Keras Hub's text-only
// preset counts (keras_hub/src/models/gemma3/gemma3_presets.py
// @ 00d9f10a8e74d4f552ed50170b7dcadb65d3bd52: gemma3_4b_text 3,880,099,328,
// gemma3_27b_text 27,009,002,240) plus 64·hidden: the Hugging Face
// checkpoints' text_config has vocab_size 262,208, Keras 262,144, and the
// multimodal totals differ by exactly those rows (HF gemma-3-4b-it
// 4,300,079,472 against Keras gemma3_4b
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
// from one, Gemma 2's even layers and all of Mistral 7B's slide over 4096
// tokens) warns with the import's notes; its windowed blocks carry the
// window (or Llama 4's attention chunk) in their dims, which the default
// flash kernel counts without a warning, but for Llama 4's chunks past
// seq_len 8192, which transformers' flash_attention_2 refuses
// (TestWindowWarnings has the kernels that warn); model.layers shortens layer_types, moe_layers and
// text_config.
func TestHFRecentScenario(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel:\n"
	for _, c := range []struct {
		model  string
		layers int64
		warn   []string
		// windowed blocks and their window (chunk when chunked).
		windowed, window int64
		chunked          bool
	}{
		{"  hf_config: hf-extra/gemma-3-4b-it.json\n  seq_len: 1024\n", 34, []string{"vision_config: the SigLIP vision tower"}, 29, 1024, false},
		{"  hf_config: hf-extra/gemma-3-4b-it.json\n  seq_len: 1025\n", 34, []string{"vision_config"}, 29, 1024, false},
		{"  hf_config: hf-extra/gemma-3-4b-it.json\n  layers: 2\n", 2, []string{"vision_config"}, 2, 1024, false},
		{"  hf_config: hf-extra/gpt-oss-20b.json\n  layers: 3\n", 3, []string{"quantization_config (mxfp4)"}, 2, 128, false},
		{"  preset: gemma2-9b\n  seq_len: 4096\n", 42, nil, 21, 4096, false},
		{"  hf_config: hf-extra/deepseek-v3.json\n  layers: 4\n", 4, []string{"num_nextn_predict_layers=1: the multi-token-prediction module (the checkpoint's model.layers.4.*) is not counted", "n_group=8", "quantization_config (fp8)"}, 0, 0, false},
		{"  hf_config: hf-extra/deepseek-v3.json\n  layers: 4\n  mtp_layers: 1\n", 5, []string{"model.mtp_layers=1 (num_nextn_predict_layers=1): the multi-token-prediction block (block.4)", "n_group=8", "quantization_config (fp8)"}, 0, 0, false},
		{"  preset: mistral-7b\n  seq_len: 8192\n", 32, nil, 32, 4096, false},
		{"  hf_config: hf-extra/llama-4-scout-17b-16e.json\n  seq_len: 8193\n", 48, []string{"vision_config: the vision model", "36 blocks attend within chunks of 8192 tokens: transformers' flash_attention_2 refuses"}, 36, 8192, true},
		{"  hf_config: hf-extra/llama-4-scout-17b-16e.json\n  seq_len: 8192\n", 48, []string{"vision_config: the vision model"}, 36, 8192, true},
		// model.layers drops moe_layers past the new depth.
		{"  hf_config: hf-extra/llama-4-scout-17b-16e.json\n  layers: 4\n  seq_len: 16384\n", 4, []string{"vision_config", "3 blocks attend within chunks"}, 3, 8192, true},
		{"  hf_config: hf-extra/olmo-2-1124-13b.json\n", 40, nil, 0, 0, false},
		// model.layers above the file's (zerosim fit's largest model)
		// continues layer_types and no_rope_layers with their period:
		// gpt-oss's 24 alternate sliding (i even) and full, so 36 layers
		// hold 18 windows; Scout's no_rope_layers is [1, 1, 1, 0] × 12 and
		// its chunked layers are the RoPE ones, 48 of 64; OLMo 3's 32 are
		// three sliding to one full, 30 of 40.
		{"  hf_config: hf-extra/gpt-oss-20b.json\n  layers: 36\n", 36, []string{"quantization_config (mxfp4)"}, 18, 128, false},
		{"  hf_config: hf-extra/llama-4-scout-17b-16e.json\n  layers: 64\n  seq_len: 16384\n", 64, []string{"vision_config", "48 blocks attend within chunks"}, 48, 8192, true},
		{"  hf_config: hf-extra/olmo-3-1025-7b.json\n  layers: 40\n  seq_len: 8192\n", 40, nil, 30, 4096, false},
	} {
		s, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.model, err)
		}
		s.Warnings = withoutSeqLenNote(t, c.model, s.Warnings)
		if s.Model.Layers != c.layers || len(s.Warnings) != len(c.warn) {
			t.Errorf("%q: %d layers, warnings %q", c.model, s.Model.Layers, s.Warnings)
			continue
		}
		var windowed int64
		for _, l := range s.Model.LayerList {
			if x := l.Dims; x != nil && x.Window+x.AttentionChunk > 0 {
				windowed++
				if got := map[bool]int64{false: x.Window, true: x.AttentionChunk}[c.chunked]; got != c.window || x.Window > 0 && x.AttentionChunk > 0 {
					t.Errorf("%q: %s window %d, chunk %d; want %d (chunked %v)", c.model, l.Name, x.Window, x.AttentionChunk, c.window, c.chunked)
				}
			}
		}
		if windowed != c.windowed {
			t.Errorf("%q: %d windowed blocks, want %d", c.model, windowed, c.windowed)
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
	l4 := `{"architectures": ["Llama4ForConditionalGeneration"], "text_config": {"vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32`
	ds := `{"architectures": ["DeepseekV3ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32`
	for _, c := range []struct{ in, want string }{
		{oss + `, "layer_types": ["sliding_attention"]}`, "c.json: layer_types has 1 entries for num_hidden_layers=2 (give one per layer)"},
		{oss + `, "layer_types": ["sliding_attention", "local"]}`, `c.json: layer_types[1] is "local" (use "sliding_attention" or "full_attention")`},
		{oss + `, "num_experts_per_tok": 5}`, "c.json: num_experts_per_tok=5 is out of range (use 1 to 4)"},
		{oss + `}`, ""},
		{ds + `, "n_routed_experts": 12, "n_group": 5}`, "c.json: n_group=5 does not divide n_routed_experts=12 (use a divisor of 12)"},
		{ds + `, "n_routed_experts": 16, "n_group": 8, "topk_group": 1, "num_experts_per_tok": 3}`, "c.json: num_experts_per_tok=3 exceeds the 2 experts of topk_group=1 groups"},
		{ds + `, "n_routed_experts": 16, "num_nextn_predict_layers": -1}`, "c.json: num_nextn_predict_layers=-1 is out of range"},
		{l4 + `, "moe_layers": [0, 2]}}`, "c.json: text_config.moe_layers[1] is 2 (use a layer index from 0 to 1)"},
		{l4 + `, "no_rope_layers": [1]}}`, "c.json: text_config.no_rope_layers has 1 entries for num_hidden_layers=2 (give one per layer)"},
		{l4 + `, "no_rope_layers": [1, 2]}}`, "c.json: text_config.no_rope_layers[1] is 2 (use 1 for a RoPE layer or 0 for a NoPE layer)"},
		{l4 + `, "layer_types": ["chunked_attention", "sliding_attention"]}}`, `c.json: text_config.layer_types[1] is "sliding_attention" (use "chunked_attention" or "full_attention")`},
		{l4 + `, "interleave_moe_layer_step": 2}}`, "c.json: text_config.intermediate_size_mlp is missing (add it to config.json)"},
		{l4 + `}}`, ""},
		{`{"architectures": ["Llama4ForConditionalGeneration"]}`, "c.json: text_config is missing"},
		{`{"architectures": ["MistralForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32, "sliding_window": 0}`, "c.json: sliding_window=0 is out of range"},
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
		if err == nil || !strings.HasPrefix(noPos(err, c.want), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
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
// 14,315,784,192 (a served-model banner gives the same), and to Qwen's "2.7B
// activated" (rounded to 0.1B). A transformers instance of the same config
// cut to 3 layers, 4 experts and a 1,519-token vocabulary, measured with
// torchinfo next to the config (the same third-party copy
// testdata/hf/README.md names for it), has 264,235,008 parameters, 86,003,712
// a layer.
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
	// use_sliding_window (Qwen2Config @ caa31776): the layers from
	// max_window_layers (default 28) on slide over sliding_window (default
	// 4096); without it, or with sliding_window null, none does, whatever
	// layer_types says.
	for _, arch := range []string{"Qwen2MoeForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM"} {
		cfg := `{"architectures": ["` + arch + `"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 32, "num_attention_heads": 4, "intermediate_size": 32%s}`
		for _, c := range []struct {
			keys                  string
			windowed, size, first int64
		}{
			{`, "use_sliding_window": true`, 4, 4096, 28},
			{`, "use_sliding_window": true, "max_window_layers": 30, "sliding_window": 1024`, 2, 1024, 30},
			{`, "use_sliding_window": true, "sliding_window": null`, 0, 0, 0},
			{`, "use_sliding_window": false, "sliding_window": 1024, "layer_types": ["sliding_attention"` + strings.Repeat(`, "full_attention"`, 31) + `]`, 0, 0, 0},
			{``, 0, 0, 0},
		} {
			hm, err := ImportHF("c.json", []byte(fmt.Sprintf(cfg, c.keys)))
			if err != nil {
				t.Fatalf("%s %s: %v", arch, c.keys, err)
			}
			var n int64
			for _, l := range hm.LayerList {
				if x := l.Dims; x != nil && x.Window > 0 {
					n++
					var i int64
					if _, err := fmt.Sscanf(l.Name, "block.%d", &i); err != nil || x.Window != c.size || i < c.first {
						t.Errorf("%s %s: %s window %d, want %d from block.%d on", arch, c.keys, l.Name, x.Window, c.size, c.first)
					}
				}
			}
			if n != c.windowed || hm.WindowLayers != c.windowed {
				t.Errorf("%s %s: %d windowed blocks (%d counted), want %d", arch, c.keys, n, hm.WindowLayers, c.windowed)
			}
		}
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
// blocks only, MLA's value width and low ranks from config.json, and the
// router the activation model counts (memory.RouterTensors) with its
// renormalisation: Mixtral's always (MixtralSparseMoeBlock, modeling_mixtral.py
// @ af3efdd71ee5b568dfdb71bb41d316df830147af), norm_topk_prob for
// DeepSeek-V3 (true in its config.json) and Qwen2-MoE (false in
// Qwen1.5-MoE's); DeepSeek-V2 by topk_method (greedy in V2-Lite's
// config.json, group_limited_greedy in V2's; DeepseekV2MoEGate at
// 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d, which never divides).
func TestHFSharedExpertAndMLADims(t *testing.T) {
	for _, c := range []struct {
		name  string
		block int
		want  BlockDims
	}{
		{"deepseek-v3", 0, BlockDims{Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, FFN: 18432,
			ValueHeadDim: 128, RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512}},
		{"deepseek-v3", 3, BlockDims{Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, Experts: 256, TopK: 8, ExpertFFN: 2048,
			SharedExperts: 1, SharedFFN: 2048, ValueHeadDim: 128, RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512,
			Router: RouterDeepseekV3, RouterNorm: true}},
		// q_lora_rank null: a full q_proj, no q_a tensors; 2 shared × 1408.
		{"deepseek-v2-lite", 1, BlockDims{Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 192, Experts: 64, TopK: 6, ExpertFFN: 1408,
			SharedExperts: 2, SharedFFN: 2816, ValueHeadDim: 128, RopeHeadDim: 64, KVLoRARank: 512, Router: RouterDeepseekV2}},
		{"deepseek-v2", 1, BlockDims{Hidden: 5120, Heads: 128, KVHeads: 128, HeadDim: 192, Experts: 160, TopK: 6, ExpertFFN: 1536,
			SharedExperts: 2, SharedFFN: 3072, ValueHeadDim: 128, RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512, Router: RouterDeepseekV2Group}},
		{"qwen1.5-moe-a2.7b", 0, BlockDims{Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, Experts: 60, TopK: 4, ExpertFFN: 1408,
			SharedExperts: 1, SharedFFN: 5632, SharedGate: true, Router: RouterSoftmaxTopK, QKVBias: true}},
		{"mixtral-8x22b", 0, BlockDims{Hidden: 6144, Heads: 48, KVHeads: 8, HeadDim: 128, Experts: 8, TopK: 2, ExpertFFN: 16384,
			Router: RouterSoftmaxTopK, RouterNorm: true}},
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

// llama4Vision counts Llama4ForConditionalGeneration's vision_model and
// multi_modal_projector from vision_config as modeling_llama4.py
// @ 63210d0e3b74c2119b7998ff65bc6a2729283626 builds them (the part the
// importer leaves out): patch_embedding Linear(channels·patch², h) without
// bias, class_embedding h, positional_embedding_vlm ((image/patch)²+1)·h,
// layernorm_pre and _post LayerNorm(h), per encoder layer q/k/v/o
// Linear(h, h) with biases, fc1 Linear(h, ffn) and fc2 Linear(ffn, h) with
// biases, two LayerNorm(h); vision_adapter fc1 Linear(ffn,
// projector_input_dim) and fc2 Linear(projector_output_dim,
// projector_output_dim) without biases; linear_1 Linear(vision_output_dim,
// text hidden) without bias.
func llama4Vision(t *testing.T, name string, textHidden int64) int64 {
	t.Helper()
	raw, err := os.ReadFile("testdata/hf-extra/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		V struct {
			H         int64 `json:"hidden_size"`
			FFN       int64 `json:"intermediate_size"`
			Layers    int64 `json:"num_hidden_layers"`
			Patch     int64 `json:"patch_size"`
			Image     int64 `json:"image_size"`
			Channels  int64 `json:"num_channels"`
			ProjIn    int64 `json:"projector_input_dim"`
			ProjOut   int64 `json:"projector_output_dim"`
			VisionOut int64 `json:"vision_output_dim"`
		} `json:"vision_config"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	v := m.V
	grid := v.Image / v.Patch
	layer := 4*(v.H*v.H+v.H) + (v.H*v.FFN + v.FFN) + (v.FFN*v.H + v.H) + 2*2*v.H
	return v.Channels*v.Patch*v.Patch*v.H + v.H + (grid*grid+1)*v.H + 2*2*v.H + v.Layers*layer +
		v.FFN*v.ProjIn + v.ProjOut*v.ProjOut + v.VisionOut*textHidden
}

// TestHFLlama4 holds Llama 4's text decoder to the Hub's counts of the
// multimodal checkpoints minus their vision part (llama4Vision, 871,932,416
// for both): Llama-4-Scout-17B-16E-Instruct 108,641,793,536 (the Hub's
// safetensors parameter total as listed with its license) and
// Llama-4-Maverick-17B-128E-Instruct 401,583,781,376 (a serving provider's
// parameter_count; a checkpoint reconciliation gives decoder
// 400,711,848,960 + vision and projector 871,932,416). Meta's model card rounds them to 109B
// and 400B, and both to 17B active: the test holds the active count
// (embedding and lm_head included) to 17B rounded to the nearest billion.
// testdata/hf-extra/llama-4-scout-17b-16e.json is Scout's config; Maverick is
// the same file with Maverick's interleave_moe_layer_step 2,
// num_local_experts 128 and moe_layers taken from the step (the Hub file
// lists the odd layers).
func TestHFLlama4(t *testing.T) {
	raw, err := os.ReadFile("testdata/hf-extra/llama-4-scout-17b-16e.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	text := m["text_config"].(map[string]any)
	text["architectures"] = []any{"Llama4ForCausalLM"}
	causal, _ := json.Marshal(text)
	causalLM, err := ImportHF("c.json", causal)
	if err != nil {
		t.Fatal(err)
	}
	vision := llama4Vision(t, "llama-4-scout-17b-16e", 5120)
	if vision != 871_932_416 {
		t.Errorf("vision part %d, want 871,932,416", vision)
	}
	maverick := hfVariant(t, "llama-4-scout-17b-16e", map[string]any{"text_config.interleave_moe_layer_step": 2,
		"text_config.num_local_experts": 128, "text_config.moe_layers": nil, "text_config.max_position_embeddings": 1048576,
		// Maverick's config.json sets use_qk_norm false (no
		// Llama4TextL2Norm); Scout's true.
		"text_config.use_qk_norm": false})
	for _, c := range []struct {
		name               string
		hm                 *HFModel
		published          int64
		moeLayers, experts int64
		firstFFN, firstMoE int
		qkNorm             string
	}{
		{"scout", hfVariant(t, "llama-4-scout-17b-16e", nil), 108_641_793_536, 48, 16, 0, 1, QKNormL2},
		{"scout as Llama4ForCausalLM", causalLM, 108_641_793_536, 48, 16, 0, 1, QKNormL2},
		{"maverick", maverick, 401_583_781_376, 24, 128, 16384, 2, ""},
	} {
		checkHF(t, c.hm, c.published-vision, -1)
		if c.hm.Active < 16_500_000_000 || c.hm.Active >= 17_500_000_000 {
			t.Errorf("%s: %d active, want 17B", c.name, c.hm.Active)
		}
		var moe int64
		for _, l := range c.hm.LayerList {
			if strings.HasPrefix(l.Name, "experts.") {
				moe++
			}
		}
		// Chunked attention on the RoPE layers: 3 of every 4.
		if moe != c.moeLayers || c.hm.Layers != 48 || !c.hm.Chunked || c.hm.SlidingWindow != 8192 || c.hm.WindowLayers != 36 {
			t.Errorf("%s: %d MoE layers of %d, chunk %d over %d (chunked %v)", c.name, moe, c.hm.Layers, c.hm.SlidingWindow, c.hm.WindowLayers, c.hm.Chunked)
		}
		// block.0 is dense in Maverick (moe_layers 1, 3, …), MoE in Scout.
		if d := c.hm.LayerList[1].Dims; d.FFN != int64(c.firstFFN) {
			t.Errorf("%s: block.0 ffn %d, want %d", c.name, d.FFN, c.firstFFN)
		}
		// Router: Llama4Router (modeling_llama4.py @ 63210d0e, memory.RouterTensors).
		// It is a RoPE layer: chunked attention (no_rope_layers), and
		// Llama4TextL2Norm on q and k under use_qk_norm.
		want := BlockDims{Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Experts: c.experts, TopK: 1, ExpertFFN: 8192, SharedExperts: 1, SharedFFN: 8192,
			Router: RouterLlama4, AttentionChunk: 8192, QKNorm: c.qkNorm}
		if d := c.hm.LayerList[c.firstMoE].Dims; d == nil || *d != want {
			t.Errorf("%s: first MoE block dims %+v, want %+v", c.name, d, want)
		}
		// The NoPE layers (every fourth) build no qk_norm.
		for _, l := range c.hm.LayerList {
			if l.Dims != nil && l.Dims.Heads > 0 && (l.Dims.AttentionChunk == 0) != (l.Dims.QKNorm == "") && c.qkNorm != "" {
				t.Errorf("%s: %s chunk %d with qk_norm %q: a NoPE layer has none, a RoPE layer l2", c.name, l.Name, l.Dims.AttentionChunk, l.Dims.QKNorm)
			}
		}
	}
	if len(causalLM.Notes) != 0 || len(maverick.Notes) != 1 || !strings.HasPrefix(maverick.Notes[0], "vision_config: the vision model") {
		t.Errorf("notes %q, %q", causalLM.Notes, maverick.Notes)
	}
	// attention_chunk_size null: no chunks; no_rope_layers empty: NoPE
	// every no_rope_layer_interval layers.
	none := hfVariant(t, "llama-4-scout-17b-16e", map[string]any{"text_config.attention_chunk_size": json.RawMessage("null")})
	// Six layers, interval 4: layer 3 (index (i+1) % 4 == 0) is the NoPE,
	// full-attention one.
	six := hfVariant(t, "llama-4-scout-17b-16e", map[string]any{"text_config.no_rope_layers": []any{}, "text_config.num_hidden_layers": 6,
		"text_config.moe_layers": nil})
	if none.SlidingWindow != 0 || none.WindowLayers != 0 || none.WindowSummary() != "" || six.WindowLayers != 5 {
		t.Errorf("null chunk: %d over %d; 6 layers: %d chunked", none.SlidingWindow, none.WindowLayers, six.WindowLayers)
	}
}

// TestHFOlmo2 holds OLMo 2 to the published totals: 13B
// (testdata/hf-extra/olmo-2-1124-13b.json, allenai/OLMo-2-1124-13B) is its
// safetensors index's total_size 54,864,793,600 bytes over 4 (the
// checkpoint is float32, torch_dtype in the config), 13,716,198,400; 7B
// (allenai/OLMo-2-1124-7B: hidden 4096, 32 layers and heads, intermediate
// 11008) the Hub's safetensors total 7,298,617,344 (F32, with the
// revision 7df9a825); 32B (allenai/OLMo-2-0325-32B:
// hidden 5120, 64 layers, 40 heads, 8 KV heads, intermediate 27648)
// 32,234,279,936 as a compute table lists it beside the 7B's. The 32B's
// grouped k_proj makes k_norm 1,024 wide, not 5,120: a per-head or q-width
// k_norm misses it.
func TestHFOlmo2(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   map[string]any
		total int64
	}{
		{"13b", nil, 13_716_198_400},
		{"7b", map[string]any{"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008}, 7_298_617_344},
		{"32b", map[string]any{"num_hidden_layers": 64, "num_key_value_heads": 8, "intermediate_size": 27648}, 32_234_279_936},
	} {
		hm := hfVariant(t, "olmo-2-1124-13b", c.set)
		checkHF(t, hm, c.total, 0)
		if hm.Tied || len(hm.Notes) != 0 || hm.WindowSummary() != "" {
			t.Errorf("%s: tied %v, notes %q", c.name, hm.Tied, hm.Notes)
		}
	}
}

// TestHFSlidingWindows: Mistral's, Mixtral's and Phi-3's sliding_window
// applies to every layer (modeling_mistral.py @ 93e0020c, the attention
// gets sliding_window=getattr(config, "sliding_window", None);
// modeling_mixtral.py @ af3efdd7 and modeling_phi3.py @ 43c2b481 alike),
// and is noted as Gemma's are; null means none, and an absent key is the
// config class default (MistralConfig 4096, Mixtral and Phi-3 none).
func TestHFSlidingWindows(t *testing.T) {
	read := func(p string, set map[string]any) *HFModel {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range set {
			if v == "absent" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		hm, err := ImportHF(p, b)
		if err != nil {
			t.Fatal(err)
		}
		return hm
	}
	for _, c := range []struct {
		file           string
		set            map[string]any
		window, layers int64
	}{
		{"testdata/hf/mistral-7b-v0.1/config.json", nil, 4096, 32},
		{"testdata/hf/mistral-7b-v0.1/config.json", map[string]any{"sliding_window": nil}, 0, 0},
		{"testdata/hf/mistral-7b-v0.1/config.json", map[string]any{"sliding_window": "absent"}, 4096, 32},
		{"testdata/hf/phi-3.5-mini-instruct/config.json", nil, 262144, 32},
		{"testdata/hf/phi-3.5-mini-instruct/config.json", map[string]any{"sliding_window": 2047}, 2047, 32},
		{"testdata/hf-extra/phi-3-medium.json", nil, 0, 0},
		{"testdata/hf/mixtral-8x7b/config.json", nil, 0, 0},
		{"testdata/hf/mixtral-8x7b/config.json", map[string]any{"sliding_window": 4096}, 4096, 32},
		{"testdata/hf/llama-3.1-8b/config.json", map[string]any{"sliding_window": 4096}, 0, 0},
	} {
		hm := read(c.file, c.set)
		if hm.SlidingWindow != c.window || hm.WindowLayers != c.layers || hm.Chunked {
			t.Errorf("%s %v: window %d over %d layers, want %d over %d", c.file, c.set, hm.SlidingWindow, hm.WindowLayers, c.window, c.layers)
		}
		if (c.window > 0) != strings.Contains(hm.WindowSummary(), "sliding window") {
			t.Errorf("%s %v: summary %q", c.file, c.set, hm.WindowSummary())
		}
	}
}

// TestFitPeriodic: a per-layer list cut or continued with its shortest
// period; hand-written expectations (Gemma 3's pattern of 6 over 34 layers
// continues at layer 35 as transformers' (i+1) % 6 rule does).
func TestFitPeriodic(t *testing.T) {
	s, f := "sliding_attention", "full_attention"
	gemma := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[bool]string{true: s, false: f}[(i+1)%6 != 0]
		}
		return out
	}
	for _, c := range []struct {
		in   []any
		n    int64
		want []any
	}{
		{[]any{s, f, s, f}, 2, []any{s, f}},
		{[]any{s, f, s, f}, 7, []any{s, f, s, f, s, f, s}},
		{gemma(34), 40, gemma(40)},
		{[]any{json.Number("1"), json.Number("1"), json.Number("1"), json.Number("0")}, 6, []any{json.Number("1"), json.Number("1"), json.Number("1"), json.Number("0"), json.Number("1"), json.Number("1")}},
		// no shorter period: the list repeats whole.
		{[]any{s, s, f}, 5, []any{s, s, f, s, s}},
		// a non-scalar entry equals nothing: repeated whole, the importer names it.
		{[]any{map[string]any{}, map[string]any{}}, 3, []any{map[string]any{}, map[string]any{}, map[string]any{}}},
	} {
		if got := fitPeriodic(c.in, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("fitPeriodic(%v, %d) = %v, want %v", c.in, c.n, got, c.want)
		}
	}
}

// TestLayersOverrideKeepsListErrors: model.layers continues a per-layer
// list only when the file gave one entry per layer; a list the file gets
// wrong is still named at any depth.
func TestLayersOverrideKeepsListErrors(t *testing.T) {
	oss := `{"architectures": ["GptOssForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 32, "num_local_experts": 4, "layer_types": ["sliding_attention"]}`
	for _, c := range []struct {
		layers int64
		want   string
	}{
		{0, "c.json: layer_types has 1 entries for num_hidden_layers=2 (give one per layer)"},
		{4, "c.json: layer_types has 1 entries for num_hidden_layers=4 (give one per layer)"},
	} {
		m, err := parseHF("c.json", []byte(oss))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := importHF("c.json", []byte(oss), m, c.layers, -1); err == nil || noPos(err, c.want) != c.want {
			t.Errorf("layers %d: error %v, want %q", c.layers, err, c.want)
		}
	}
}

// TestMTPLayersKey (QA8 F1): model.mtp_layers builds the
// multi-token-prediction modules of an hf_config that has them, and is
// refused, naming the key, anywhere else.
func TestMTPLayersKey(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel:\n"
	for _, c := range []struct{ model, want string }{
		{"  preset: llama3.1-8b\n  mtp_layers: 1\n", "testdata/x.yaml:6:3: mtp_layers builds the multi-token-prediction modules of a model.hf_config"},
		{"  hf_config: hf-extra/olmo-2-1124-13b.json\n  mtp_layers: 1\n", "testdata/x.yaml:6:3: mtp_layers=1: hf-extra/olmo-2-1124-13b.json: Olmo2ForCausalLM has no multi-token-prediction module zerosim builds"},
		{"  hf_config: hf-extra/deepseek-v3.json\n  mtp_layers: -1\n", "testdata/x.yaml:6:3: mtp_layers=-1 is out of range"},
	} {
		_, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q…", c.model, err, c.want)
		}
	}
	// mtp_layers 0 on a model without the module changes nothing.
	s, err := Load("testdata/x.yaml", []byte(base+"  hf_config: hf-extra/olmo-2-1124-13b.json\n  mtp_layers: 0\n"), nil)
	if err != nil || s.Model.Layers != 40 {
		t.Errorf("mtp_layers 0: %v", err)
	}
	// Two modules of DeepSeek-V3's: 61 + 2 blocks, each module the
	// 11,610,068,224 of TestHFDeepseekV3's published counts.
	s, err = Load("testdata/x.yaml", []byte(base+"  hf_config: hf-extra/deepseek-v3.json\n  mtp_layers: 2\n"), nil)
	if err != nil || s.Model.Layers != 63 || int64(s.Model.Params) != 671_026_419_200+2*11_610_068_224 || s.Model.MTPModules() != 2 {
		t.Errorf("mtp_layers 2: %v, %d layers, %d parameters", err, s.Model.Layers, s.Model.Params)
	}
}

// TestHFProseListed: the prose list of README's "zerosim import hf"
// section names every supported family (qa21 LOW 10: it left out
// Qwen3-Next, Qwen3.5/3.6 and ERNIE 4.5, which the reference table lists).
// Every class maps to the name the prose uses; a new class needs one.
func TestHFProseListed(t *testing.T) {
	prose := map[string]string{
		"LlamaForCausalLM": "Llama 2/3.x", "MistralForCausalLM": "Mistral", "MixtralForCausalLM": "Mixtral",
		"Qwen2ForCausalLM": "Qwen2/2.5", "Qwen3ForCausalLM": "Qwen3 (dense and MoE)", "Qwen3MoeForCausalLM": "Qwen3 (dense and MoE)",
		"Qwen2MoeForCausalLM": "Qwen1.5/2-MoE", "Gemma2ForCausalLM": "Gemma 2", "Phi3ForCausalLM": "Phi-3",
		"GPTNeoXForCausalLM": "GPT-NeoX", "GPT2LMHeadModel": "GPT-2", "OPTForCausalLM": "OPT", "FalconForCausalLM": "Falcon",
		"DeepseekV2ForCausalLM": "DeepSeek-V2", "DeepseekV3ForCausalLM": "DeepSeek-V3/R1", "GptOssForCausalLM": "gpt-oss",
		"Gemma3ForCausalLM": "Gemma 3", "Gemma3ForConditionalGeneration": "Gemma 3",
		"Llama4ForCausalLM": "Llama 4", "Llama4ForConditionalGeneration": "Llama 4",
		"Olmo2ForCausalLM": "OLMo 2", "Olmo3ForCausalLM": "OLMo 3", "SmolLM3ForCausalLM": "SmolLM3",
		"Glm4MoeForCausalLM": "GLM-4.5/4.6/4.5-Air", "Mistral3ForConditionalGeneration": "Mistral Small 3.1/3.2",
		"MiniMaxM2ForCausalLM": "MiniMax-M2", "SeedOssForCausalLM": "Seed-OSS", "Dots1ForCausalLM": "dots.llm1",
		"Qwen3NextForCausalLM": "Qwen3-Next", "Qwen3_5ForConditionalGeneration": "Qwen3.5/3.6",
		"Qwen3_5MoeForConditionalGeneration": "Qwen3.5/3.6", "Qwen3_5ForCausalLM": "Qwen3.5/3.6", "Qwen3_5MoeForCausalLM": "Qwen3.5/3.6",
		"Ernie4_5_MoeForCausalLM": "ERNIE 4.5", "Ernie4_5ForCausalLM": "ERNIE 4.5", "Ernie4_5_ForCausalLM": "ERNIE 4.5",
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(b), "it stands for: the exact layer list")
	sec, _, _ = strings.Cut(sec, "are read the way transformers reads them")
	sec = strings.Join(strings.Fields(sec), " ")
	for _, c := range hfArchitectureNames() {
		name, ok := prose[c]
		if !ok {
			t.Errorf("%s: no prose name in this test", c)
			continue
		}
		if !strings.Contains(sec, name) {
			t.Errorf("%s: README's import hf list does not name %q", c, name)
		}
	}
}
