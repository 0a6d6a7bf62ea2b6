package scenarios

import (
	"strconv"
	"strings"
	"testing"
)

// blockDims is the dims of unit name in hm's layer list (nil when absent).
func blockDims(hm *HFModel, name string) *BlockDims {
	for _, l := range hm.LayerList {
		if l.Name == name {
			return l.Dims
		}
	}
	return nil
}

// activeBody is the active count without the input embedding and the
// output head (the unit model cards quote active parameters in).
func activeBody(hm *HFModel) int64 {
	a := hm.Active - embedding(hm)
	if last := hm.LayerList[len(hm.LayerList)-1]; last.Name == "lm_head" {
		a -= int64(last.Params)
	}
	return a
}

// TestHFGlm4Moe holds GLM-4.6 (testdata/hf-extra/glm-4.6.json), GLM-4.5
// (the same file with GLM-4.5's max_position_embeddings 131072, its only
// other architecture key) and GLM-4.5-Air (glm-4.5-air.json) to exact
// published counts:
//
//   - GLM-4.5's checkpoint holds 358,337,791,296 parameters (a model
//     table's safetensors total for zai-org/GLM-4.5; a parameter
//     calculator's "glm-4.7-mtp" preset gives the
//     same, and 352,797,829,024 without the MTP layer). The MTP layer
//     (model.layers.92) stores its own copies of embed_tokens and
//     shared_head.head, which are the main model's, so the trained
//     parameters are 358,337,791,296 − 2·151,552·5,120.
//   - GLM-4.5-Air's checkpoint 110,468,824,832 (the same table), less the
//     MTP layer's two copies; its main model (glm-4.5-air.json has no
//     num_nextn_predict_layers) is 106,852,245,504 as
//     sum(p.numel() for p in model.named_parameters()) of the transformers
//     model (a fine-tuning run's EXPECTED_LOGICAL_PARAMETERS) plus the 45·128
//     e_score_correction_bias entries, which are buffers, not named
//     parameters, but stored in the checkpoint.
//   - Active: the model card's 32B and 12B, rounded to the billion, count
//     neither the input embedding nor the output head (with them the main
//     models have 33.6B and 13.4B). The card's totals, 355B and 106B, are
//     not one convention the exact counts reproduce (GLM-4.5 with its MTP
//     layer and without embeddings is 355.2B, Air's main model 106.9B), so
//     the exact checkpoint counts are held instead.
//
// transformers' Glm4MoeModel builds range(num_hidden_layers) layers and
// ignores model.layers.92.* (modeling_glm4_moe.py @ 000c33fd), so each
// config as published imports as the main model; with model.mtp_layers 1
// (hfVariant's "@mtp_layers") it imports the checkpoint's total.
func TestHFGlm4Moe(t *testing.T) {
	const vocab = 151_552
	for _, c := range []struct {
		name               string
		hm, main           *HFModel
		total, mainTotal   int64
		cardActive         int64
		layers, units, mtp int64
		firstMoE           string
		moeDims, denseDims BlockDims
		notes, mainNotes   int
	}{
		{name: "glm-4.6", hm: hfVariant(t, "glm-4.6", map[string]any{"@mtp_layers": 1}), main: hfVariant(t, "glm-4.6", nil),
			total: 358_337_791_296 - 2*vocab*5120, mainTotal: 352_797_829_024, cardActive: 32_000_000_000, layers: 93, units: 1 + 93 + 90 + 2,
			firstMoE: "block.3", moeDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, Experts: 160, TopK: 8, ExpertFFN: 1536,
				SharedExperts: 1, SharedFFN: 1536, Router: RouterDeepseekV3, RouterNorm: true, QKNorm: QKNormRMSHead, QKVBias: true},
			denseDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, FFN: 12288, QKNorm: QKNormRMSHead, QKVBias: true}, notes: 1, mainNotes: 1},
		{name: "glm-4.5", hm: hfVariant(t, "glm-4.6", map[string]any{"max_position_embeddings": 131072, "@mtp_layers": 1}),
			main:  hfVariant(t, "glm-4.6", map[string]any{"max_position_embeddings": 131072, "num_nextn_predict_layers": nil}),
			total: 358_337_791_296 - 2*vocab*5120, mainTotal: 352_797_829_024, cardActive: 32_000_000_000, layers: 93, units: 1 + 93 + 90 + 2,
			firstMoE: "block.3", moeDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, Experts: 160, TopK: 8, ExpertFFN: 1536,
				SharedExperts: 1, SharedFFN: 1536, Router: RouterDeepseekV3, RouterNorm: true, QKNorm: QKNormRMSHead, QKVBias: true},
			denseDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, FFN: 12288, QKNorm: QKNormRMSHead, QKVBias: true}, notes: 1},
		{name: "glm-4.5-air", hm: hfVariant(t, "glm-4.5-air", map[string]any{"num_nextn_predict_layers": 1, "@mtp_layers": 1}), main: hfVariant(t, "glm-4.5-air", nil),
			total: 110_468_824_832 - 2*vocab*4096, mainTotal: 106_852_245_504 + 45*128, cardActive: 12_000_000_000, layers: 47, units: 1 + 47 + 46 + 2,
			firstMoE: "block.1", moeDims: BlockDims{Hidden: 4096, Heads: 96, KVHeads: 8, HeadDim: 128, Experts: 128, TopK: 8, ExpertFFN: 1408,
				SharedExperts: 1, SharedFFN: 1408, Router: RouterDeepseekV3, RouterNorm: true, QKVBias: true},
			denseDims: BlockDims{Hidden: 4096, Heads: 96, KVHeads: 8, HeadDim: 128, FFN: 10944, QKVBias: true}, notes: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkHF(t, c.hm, c.total, -1)
			checkHF(t, c.main, c.mainTotal, -1)
			if a := activeBody(c.main); a < c.cardActive-500_000_000 || a >= c.cardActive+500_000_000 {
				t.Errorf("main model: %d active without embedding and output head, want %dB", a, c.cardActive/1_000_000_000)
			}
			if c.hm.Layers != c.layers || int64(len(c.hm.LayerList)) != c.units || c.hm.Tied {
				t.Errorf("%d layers, %d units, tied %v", c.hm.Layers, len(c.hm.LayerList), c.hm.Tied)
			}
			if d := blockDims(c.hm, c.firstMoE); d == nil || *d != c.moeDims {
				t.Errorf("%s dims %+v, want %+v", c.firstMoE, d, c.moeDims)
			}
			if d := blockDims(c.hm, "block.0"); d == nil || *d != c.denseDims {
				t.Errorf("block.0 dims %+v, want %+v", d, c.denseDims)
			}
			last := blockDims(c.hm, "block."+strconv.FormatInt(c.layers-1, 10))
			if last == nil || !last.MTP || c.hm.Dims.MTP {
				t.Errorf("the MTP block is not marked: %+v", last)
			}
			if len(c.hm.Notes) != c.notes || !strings.HasPrefix(c.hm.Notes[0], "model.mtp_layers=1 (num_nextn_predict_layers=1): the multi-token-prediction block (block."+strconv.FormatInt(c.layers-1, 10)) ||
				len(c.main.Notes) != c.mainNotes || c.mainNotes > 0 && !strings.HasPrefix(c.main.Notes[0], "num_nextn_predict_layers=1: the multi-token-prediction module (the checkpoint's model.layers.92.*) is not counted") {
				t.Errorf("notes %q, main model %q", c.hm.Notes, c.main.Notes)
			}
			if c.main.Layers != c.layers-1 || blockDims(c.main, "block."+strconv.FormatInt(c.layers-1, 10)) != nil {
				t.Errorf("main model: %d layers", c.main.Layers)
			}
		})
	}
	// GLM-4.5-Air's module tree at one layer, counted by hand from
	// modeling_glm4_moe.py: q/k/v with biases, o_proj without (a dense
	// layer 0 of intermediate_size 10944), no q/k norms.
	h, q, kv := int64(4096), int64(96*128), int64(8*128)
	attn := h*q + q + 2*(h*kv+kv) + q*h
	air := hfVariant(t, "glm-4.5-air", map[string]any{"num_hidden_layers": 1})
	checkHF(t, air, 2*vocab*h+h+attn+2*h+3*h*10944, 0)
	// use_qk_norm adds q_norm and k_norm of head_dim (per head) to every
	// layer; attention_bias false drops the q/k/v biases.
	qk := hfVariant(t, "glm-4.5-air", map[string]any{"num_hidden_layers": 1, "use_qk_norm": true, "attention_bias": false})
	checkHF(t, qk, air.Total+2*128-q-2*kv, 0)
	// Node-limited routing (GLM-4.7-Flash-like n_group 8, topk_group 4) is
	// noted, as DeepSeek-V3's.
	grouped := hfVariant(t, "glm-4.5-air", map[string]any{"n_group": 8, "topk_group": 4})
	if len(grouped.Notes) != 1 || !strings.HasPrefix(grouped.Notes[0], "n_group=8, topk_group=4: each token's experts lie in 4 of 8 expert groups") {
		t.Errorf("grouped notes %q", grouped.Notes)
	}
}

// TestHFOlmo3 holds OLMo 3 to its published totals: 7B
// (testdata/hf-extra/olmo-3-1025-7b.json) 7,298,011,136 (a training run's
// logged num_params and a converter's safetensors element-count check);
// 32B (hidden 5120, 64 layers, 40 heads, 8 KV
// heads, intermediate 27648) 32,233,522,176 (a bits-per-parameter study
// beside the 7B's and SmolLM3's). OLMo 3 is OLMo
// 2's module tree: the OLMo 2 7B config with OLMo 3's 100,278-token
// vocabulary counts the same. Three of every four layers slide over 4096
// tokens (layer_types; the default when absent); sliding_window null means
// none.
func TestHFOlmo3(t *testing.T) {
	for _, c := range []struct {
		name           string
		hm             *HFModel
		total          int64
		window, layers int64
	}{
		{"7b", hfVariant(t, "olmo-3-1025-7b", nil), 7_298_011_136, 4096, 24},
		{"7b, layer_types absent", hfVariant(t, "olmo-3-1025-7b", map[string]any{"layer_types": nil}), 7_298_011_136, 4096, 24},
		{"32b", hfVariant(t, "olmo-3-1025-7b", map[string]any{"hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 40,
			"num_key_value_heads": 8, "intermediate_size": 27648, "layer_types": nil}), 32_233_522_176, 4096, 48},
		{"olmo 2 7b with olmo 3's vocabulary", hfVariant(t, "olmo-2-1124-13b", map[string]any{"hidden_size": 4096, "num_hidden_layers": 32,
			"num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 100278}), 7_298_011_136, 0, 0},
	} {
		checkHF(t, c.hm, c.total, 0)
		if c.hm.Tied || len(c.hm.Notes) != 0 || c.hm.SlidingWindow != c.window || c.hm.WindowLayers != c.layers || c.hm.Chunked {
			t.Errorf("%s: tied %v, notes %q, window %d over %d layers", c.name, c.hm.Tied, c.hm.Notes, c.hm.SlidingWindow, c.hm.WindowLayers)
		}
	}
	none := hfVariant(t, "olmo-3-1025-7b", map[string]any{"sliding_window": jsonNull{}})
	if none.SlidingWindow != 0 || none.WindowLayers != 0 || none.WindowSummary() != "" {
		t.Errorf("sliding_window null: window %d over %d layers", none.SlidingWindow, none.WindowLayers)
	}
}

// jsonNull marshals as JSON null (hfVariant deletes a nil value).
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// TestHFSmolLM3 holds SmolLM3-3B (testdata/hf-extra/smollm3-3b.json) to
// 3,075,098,624, the total_parameters of its safetensors index (several
// model registries and an index audit give it), with the
// output layer tied. Its 9 NoPE layers (every fourth) change no parameter
// and are noted; a sliding window applies only with use_sliding_window and
// then to the NoPE layers unless layer_types says otherwise.
func TestHFSmolLM3(t *testing.T) {
	full := func(i int) string {
		if i%2 == 0 {
			return "sliding_attention"
		}
		return "full_attention"
	}
	types := make([]any, 36)
	for i := range types {
		types[i] = full(i)
	}
	for _, c := range []struct {
		name           string
		set            map[string]any
		window, layers int64
	}{
		{"published", nil, 0, 0},
		{"no_rope_layers absent", map[string]any{"no_rope_layers": nil}, 0, 0},
		{"use_sliding_window", map[string]any{"use_sliding_window": true, "sliding_window": 4096}, 4096, 9},
		{"use_sliding_window, layer_types", map[string]any{"use_sliding_window": true, "sliding_window": 4096, "layer_types": types}, 4096, 18},
		{"use_sliding_window without a window", map[string]any{"use_sliding_window": true}, 0, 0},
		{"sliding_window alone", map[string]any{"sliding_window": 4096}, 0, 0},
	} {
		hm := hfVariant(t, "smollm3-3b", c.set)
		checkHF(t, hm, 3_075_098_624, 0)
		if !hm.Tied || hm.SlidingWindow != c.window || hm.WindowLayers != c.layers {
			t.Errorf("%s: tied %v, window %d over %d layers", c.name, hm.Tied, hm.SlidingWindow, hm.WindowLayers)
		}
		if len(hm.Notes) != 1 || !strings.HasPrefix(hm.Notes[0], "no_rope_layers: 9 of the 36 decoder blocks skip the rotary embedding (NoPE)") {
			t.Errorf("%s: notes %q", c.name, hm.Notes)
		}
	}
	// Llama's tree: attention_bias puts biases on q, k, v and o, mlp_bias
	// on gate, up and down; tie_word_embeddings false adds lm_head.
	biased := hfVariant(t, "smollm3-3b", map[string]any{"attention_bias": true, "mlp_bias": true, "tie_word_embeddings": false})
	checkHF(t, biased, 3_075_098_624+36*(2048+2*512+2048+2*11008+2048)+128256*2048, 0)
	rope := hfVariant(t, "smollm3-3b", map[string]any{"no_rope_layers": []any{}, "no_rope_layer_interval": 36})
	if len(rope.Notes) != 1 || !strings.HasPrefix(rope.Notes[0], "no_rope_layers: 1 of the 36") {
		t.Errorf("interval 36: notes %q", rope.Notes)
	}
}

// TestHFNewerErrors: the new architectures' mistakes are one line naming
// the key.
func TestHFNewerErrors(t *testing.T) {
	glm := `{"architectures": ["Glm4MoeForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 32`
	olmo := `{"architectures": ["Olmo3ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 32`
	smol := `{"architectures": ["SmolLM3ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 32`
	for _, c := range []struct{ in, want string }{
		{glm + `}`, ""},
		{glm + `, "n_routed_experts": 12, "n_group": 5}`, "c.json: n_group=5 does not divide n_routed_experts=12 (use a divisor of 12)"},
		{glm + `, "n_routed_experts": 16, "n_group": 8, "topk_group": 1, "num_experts_per_tok": 3}`, "c.json: num_experts_per_tok=3 exceeds the 2 experts of topk_group=1 groups"},
		{glm + `, "n_routed_experts": 4, "num_experts_per_tok": 5}`, "c.json: num_experts_per_tok=5 is out of range (use 1 to 4)"},
		{glm + `, "num_key_value_heads": 3}`, "c.json: num_key_value_heads=3 does not divide num_attention_heads=8"},
		{glm + `, "use_qk_norm": "yes"}`, `c.json: use_qk_norm is "yes", not a boolean (use true or false)`},
		{glm + `, "num_nextn_predict_layers": -1}`, "c.json: num_nextn_predict_layers=-1 is out of range"},
		{`{"architectures": ["Glm4MoeForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8}`, "c.json: intermediate_size is missing (add it to config.json)"},
		{olmo + `}`, ""},
		{olmo + `, "layer_types": ["sliding_attention"]}`, "c.json: layer_types has 1 entries for num_hidden_layers=2 (give one per layer)"},
		{olmo + `, "sliding_window": 0}`, "c.json: sliding_window=0 is out of range"},
		{smol + `}`, ""},
		{smol + `, "no_rope_layers": [1]}`, "c.json: no_rope_layers has 1 entries for num_hidden_layers=2 (give one per layer)"},
		{smol + `, "no_rope_layers": [1, 2]}`, "c.json: no_rope_layers[1] is 2 (use 1 for a RoPE layer or 0 for a NoPE layer)"},
		{smol + `, "use_sliding_window": true, "sliding_window": 8, "layer_types": ["full_attention", "local"]}`, `c.json: layer_types[1] is "local" (use "sliding_attention" or "full_attention")`},
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

// TestHFNewerScenario: a scenario naming these configs warns with the
// import's notes (GLM's MTP block, SmolLM3's NoPE blocks), and about OLMo
// 3's sliding windows only above 4096 tokens; model.layers shortens
// layer_types and keeps GLM's dense-first layers and MTP block.
func TestHFNewerScenario(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel:\n"
	for _, c := range []struct {
		model  string
		layers int64
		params int64
		warn   []string
	}{
		{"  hf_config: hf-extra/olmo-3-1025-7b.json\n  seq_len: 4096\n", 32, 7_298_011_136, nil},
		// The windows are counted (TestWindowWarnings): no warning.
		{"  hf_config: hf-extra/olmo-3-1025-7b.json\n  seq_len: 8192\n", 32, 7_298_011_136, nil},
		{"  hf_config: hf-extra/olmo-3-1025-7b.json\n  layers: 2\n  seq_len: 8192\n", 2, 0, nil},
		{"  hf_config: hf-extra/smollm3-3b.json\n", 36, 3_075_098_624, []string{"no_rope_layers: 9 of the 36 decoder blocks skip the rotary embedding"}},
		{"  hf_config: hf-extra/glm-4.6.json\n  layers: 4\n", 4, 0, []string{"num_nextn_predict_layers=1: the multi-token-prediction module (the checkpoint's model.layers.4.*) is not counted"}},
		{"  hf_config: hf-extra/glm-4.6.json\n  layers: 4\n  mtp_layers: 1\n", 5, 0, []string{"model.mtp_layers=1 (num_nextn_predict_layers=1): the multi-token-prediction block (block.4)"}},
		{"  hf_config: hf-extra/glm-4.6.json\n  mtp_layers: 1\n", 93, 358_337_791_296 - 2*151_552*5120, []string{"model.mtp_layers=1"}},
		{"  hf_config: hf-extra/glm-4.5-air.json\n", 46, 106_852_251_264, nil},
	} {
		s, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.model, err)
		}
		s.Warnings = withoutSeqLenNote(t, c.model, s.Warnings)
		if s.Model.Layers != c.layers || len(s.Warnings) != len(c.warn) || c.params > 0 && int64(s.Model.Params) != c.params {
			t.Errorf("%q: %d layers, %d parameters, warnings %q", c.model, s.Model.Layers, s.Model.Params, s.Warnings)
			continue
		}
		for i, w := range c.warn {
			if !strings.HasPrefix(s.Warnings[i], "testdata/x.yaml:5:3: ") || !strings.Contains(s.Warnings[i], w) {
				t.Errorf("%q: warning %d = %q, want %q", c.model, i, s.Warnings[i], w)
			}
		}
	}
}

// TestHFMistral3 holds Mistral Small 3.1
// (testdata/hf-extra/mistral-small-3.1-24b-instruct-2503.json) to
// published counts:
//
//   - The text decoder imported: 23,572,403,200, the parameter count of the
//     same decoder published as Mistral-Small-24B-2501, Magistral Small
//     2506/2507 and Devstral Small 1.1 (KerasHub preset metadata "params"
//     and llama.cpp's general.parameter_count of the mistral3 text model).
//   - The whole checkpoint: 24,011,361,280 (KerasHub's
//     mistral_small_3.1_24b presets and model registries for Mistral Small
//     3.2), which is the decoder plus the Pixtral
//     vision tower and projector the import leaves out, counted here by
//     hand from modeling_pixtral.py @ 0233e509531ace915c8241b4c16c8032a583279c
//     (patch_conv Conv2d(3, 1024, 14, bias=False), ln_pre, 24 layers of
//     attention_norm, q/k/v/o Linear(1024, 1024, bias=False), SwiGLU MLP of
//     4096 without biases, ffn_norm) and modeling_mistral3.py (projector
//     norm, patch_merger Linear(4·1024, 1024), linear_1 Linear(1024, 5120)
//     and linear_2 Linear(5120, 5120), multimodal_projector_bias false).
func TestHFMistral3(t *testing.T) {
	const decoder = 23_572_403_200
	vh, vffn := int64(1024), int64(4096)
	vision := 3*14*14*vh + vh + 24*(2*vh+4*vh*vh+3*vh*vffn)
	projector := vh + 4*vh*vh + vh*5120 + 5120*5120
	block := BlockDims{Hidden: 5120, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 32768}
	windowed := block
	windowed.Window = 4096
	for _, c := range []struct {
		name           string
		set            map[string]any
		total          int64
		tied           bool
		window, layers int64
		dims           BlockDims
		notes          int
	}{
		{"published", nil, decoder, false, 0, 0, block, 1},
		// MistralConfig's default window applies when text_config has no
		// sliding_window key.
		{"sliding_window absent", map[string]any{"text_config.sliding_window": nil}, decoder, false, 4096, 40, windowed, 1},
		{"text_config tied", map[string]any{"text_config.tie_word_embeddings": true}, decoder - 131072*5120, true, 0, 0, block, 1},
		// The top-level flag is not the one transformers ties on.
		{"top-level tie_word_embeddings", map[string]any{"tie_word_embeddings": true}, decoder, false, 0, 0, block, 1},
		{"no vision_config", map[string]any{"vision_config": nil}, decoder, false, 0, 0, block, 0},
		{"text_config.model_type absent", map[string]any{"text_config.model_type": nil}, decoder, false, 0, 0, block, 1},
	} {
		hm := hfVariant(t, "mistral-small-3.1-24b-instruct-2503", c.set)
		checkHF(t, hm, c.total, 0)
		if hm.Tied != c.tied || hm.SlidingWindow != c.window || hm.WindowLayers != c.layers || hm.Layers != 40 || len(hm.LayerList) != 1+40+2-btoi(c.tied) {
			t.Errorf("%s: tied %v, window %d over %d layers, %d layers, %d units", c.name, hm.Tied, hm.SlidingWindow, hm.WindowLayers, hm.Layers, len(hm.LayerList))
		}
		if d := blockDims(hm, "block.39"); d == nil || *d != c.dims {
			t.Errorf("%s: block.39 dims %+v, want %+v", c.name, d, c.dims)
		}
		if len(hm.Notes) != c.notes || c.notes > 0 && !strings.HasPrefix(hm.Notes[0], "vision_config: the Pixtral vision tower") {
			t.Errorf("%s: notes %q", c.name, hm.Notes)
		}
		if hm.Architecture != "Mistral3ForConditionalGeneration" || hm.ModelType != "mistral3" {
			t.Errorf("%s: %s (%s)", c.name, hm.Architecture, hm.ModelType)
		}
	}
	hm := hfVariant(t, "mistral-small-3.1-24b-instruct-2503", nil)
	if got := hm.Total + vision + projector; got != 24_011_361_280 {
		t.Errorf("decoder %d + vision tower %d + projector %d = %d, want the checkpoint's 24,011,361,280", hm.Total, vision, projector, got)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestHFMiniMaxM2 holds MiniMax-M2 (testdata/hf-extra/minimax-m2.json) to
// its published counts:
//
//   - The checkpoint's safetensors total from the Hub API, 228,703,644,928
//     (a parameter counter's ground-truth test quotes it), counts the F32
//     weight_scale_inv tensors of its fp8 Linears, one per 128×128 block
//     (quantization_config weight_block_size; gate, e_score_correction_bias
//     and lm_head are not converted): per layer 256 experts × (w1, w3 [1536,
//     3072] and w2 [3072, 1536], 12·24 blocks each) and q/o [6144, 3072]
//     (48·24), k/v [1024, 3072] (8·24). Without them the parameters are
//     228,689,764,864, the 62·256 router biases included.
//   - Active: the model card's "10 billion active parameters" without the
//     input embedding and the output head (9.80B), as GLM's and
//     DeepSeek's cards count it; exactly the total less 248 of the 256
//     experts in each of the 62 layers.
func TestHFMiniMaxM2(t *testing.T) {
	const published, layers, experts, topK, h, ffn = 228_703_644_928, 62, 256, 8, 3072, 1536
	blocks := func(rows, cols int64) int64 { return (rows / 128) * (cols / 128) }
	scales := int64(layers) * (experts*3*blocks(ffn, h) + 2*blocks(48*128, h) + 2*blocks(8*128, h))
	total := published - scales
	one := int64(3 * h * ffn)
	hm := hfVariant(t, "minimax-m2", nil)
	checkHF(t, hm, total, total-layers*(experts-topK)*one)
	if total != 228_689_764_864 {
		t.Errorf("published total less the fp8 scales is %d", total)
	}
	if a := activeBody(hm); a < 9_500_000_000 || a >= 10_500_000_000 {
		t.Errorf("%d active without embedding and output head, want 10B", a)
	}
	// q_norm and k_norm over the whole projections (memory's qkNorms).
	want := BlockDims{Hidden: h, Heads: 48, KVHeads: 8, HeadDim: 128, Experts: experts, TopK: topK, ExpertFFN: ffn, QKNorm: QKNormRMSFull}
	if d := blockDims(hm, "block.61"); d == nil || *d != want {
		t.Errorf("block.61 dims %+v, want %+v", d, want)
	}
	if e := hm.LayerList[2]; e.Name != "experts.0" || int64(e.Params) != experts*one || int64(e.ActiveParams) != topK*one || e.Group != GroupExpert {
		t.Errorf("experts.0 = %+v", e)
	}
	if hm.Layers != layers || len(hm.LayerList) != 1+2*layers+2 || hm.Tied || hm.SlidingWindow != 0 || hm.Dims.Router != "" {
		t.Errorf("%d layers, %d units, tied %v, window %d, router %q", hm.Layers, len(hm.LayerList), hm.Tied, hm.SlidingWindow, hm.Dims.Router)
	}
	for i, prefix := range []string{"MiniMaxM2TopKRouter (bf16 gate, fp32 sigmoid, bias for the choice only, top-8 renormalised) is not a router",
		"use_mtp, num_mtp_modules=3: MiniMax's multi-token-prediction modules are in neither", "quantization_config (fp8) describes"} {
		if len(hm.Notes) != 3 || !strings.HasPrefix(hm.Notes[i], prefix) {
			t.Errorf("notes %q, want %d: %q…", hm.Notes, i, prefix)
		}
	}
	// One layer by hand from modeling_minimax_m2.py: q/k/v/o without
	// biases, q_norm over 48·128 and k_norm over 8·128, two RMSNorms, the
	// gate weight and e_score_correction_bias, 256 experts.
	vocab, q, kv := int64(200064), int64(48*128), int64(8*128)
	small := hfVariant(t, "minimax-m2", map[string]any{"num_hidden_layers": 1, "use_mtp": false, "quantization_config": nil, "attn_type_list": nil,
		"num_local_experts": nil, "num_experts": 16, "num_experts_per_tok": 2})
	attn := 2*h*q + 2*h*kv + q + kv
	checkHF(t, small, 2*vocab*h+h+attn+2*h+16*h+16+16*one, 2*vocab*h+h+attn+2*h+16*h+16+2*one)
	if len(small.Notes) != 1 {
		t.Errorf("without MTP and quantization: notes %q", small.Notes)
	}
}

// TestHFSeedOss holds Seed-OSS-36B (testdata/hf-extra/seed-oss-36b.json)
// to 36,151,104,512, the total its safetensors index gives for the Base
// and Instruct checkpoints (a config snapshot table), and checks each bias
// flag and SeedOssConfig default against the module tree counted by hand.
func TestHFSeedOss(t *testing.T) {
	const total, layers, h, ffn, vocab = 36_151_104_512, 64, 5120, 27648, 155136
	q, kv := int64(80*128), int64(8*128)
	for _, c := range []struct {
		name    string
		set     map[string]any
		total   int64
		kv, hd  int64
		tiedOff bool
	}{
		{"published", nil, total, 8, 128, false},
		{"attention_bias absent (default true)", map[string]any{"attention_bias": nil}, total, 8, 128, false},
		{"attention_bias false", map[string]any{"attention_bias": false}, total - layers*(q+2*kv), 8, 128, false},
		{"attention_out_bias true", map[string]any{"attention_out_bias": true}, total + layers*h, 8, 128, false},
		{"mlp_bias true", map[string]any{"mlp_bias": true}, total + layers*(2*ffn+h), 8, 128, false},
		{"tie_word_embeddings true", map[string]any{"tie_word_embeddings": true}, total - vocab*h, 8, 128, true},
		// head_dim null: hidden/heads = 64 (q 5120, kv 512).
		{"head_dim null", map[string]any{"head_dim": jsonNull{}}, total - layers*(2*h*(q-5120)+(q-5120)+2*(h*(kv-512)+(kv-512))), 8, 64, false},
		{"head_dim absent (default 128)", map[string]any{"head_dim": nil}, total, 8, 128, false},
		// num_key_value_heads null: as many as the query heads.
		{"num_key_value_heads null", map[string]any{"num_key_value_heads": jsonNull{}}, total + layers*2*(h*(q-kv)+(q-kv)), 80, 128, false},
	} {
		hm := hfVariant(t, "seed-oss-36b", c.set)
		checkHF(t, hm, c.total, 0)
		want := BlockDims{Hidden: h, Heads: 80, KVHeads: c.kv, HeadDim: c.hd, FFN: ffn, QKVBias: c.name != "attention_bias false",
			OBias: c.name == "attention_out_bias true", MLPBias: c.name == "mlp_bias true"}
		if d := blockDims(hm, "block.0"); d == nil || *d != want {
			t.Errorf("%s: block.0 dims %+v, want %+v", c.name, d, want)
		}
		if hm.Tied != c.tiedOff || len(hm.Notes) != 0 || hm.Layers != layers || hm.SlidingWindow != 0 {
			t.Errorf("%s: tied %v, notes %q, %d layers", c.name, hm.Tied, hm.Notes, hm.Layers)
		}
	}
	// One layer by hand: q/k/v with biases, o without, two RMSNorms,
	// SwiGLU without biases, final norm, untied head.
	one := hfVariant(t, "seed-oss-36b", map[string]any{"num_hidden_layers": 1})
	checkHF(t, one, 2*vocab*h+h+(h*q+q)+2*(h*kv+kv)+q*h+2*h+3*h*ffn, 0)
}

// TestHFLatestErrors: the mistakes in these architectures' configs are one
// line naming the key.
func TestHFLatestErrors(t *testing.T) {
	mm := `{"architectures": ["MiniMaxM2ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 32, "num_local_experts": 4, "num_experts_per_tok": 2`
	ms := `{"architectures": ["Mistral3ForConditionalGeneration"], "vision_config": {}`
	text := `"text_config": {"vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 32`
	dots := `{"architectures": ["Dots1ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 32`
	seed := `{"architectures": ["SeedOssForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 32`
	for _, c := range []struct{ in, want string }{
		{mm + `}`, ""},
		{mm + `, "attn_type_list": [1, 1]}`, ""},
		{mm + `, "attn_type_list": [1, 0]}`, "c.json: attn_type_list[1] is 0: only 1 (softmax attention) is supported; 0 is MiniMax-M1's linear (lightning) attention"},
		{mm + `, "attn_type_list": 1}`, "c.json: attn_type_list is 1, not a list"},
		{mm + `, "shared_intermediate_size": 16}`, "c.json: shared_intermediate_size=16: MiniMaxM2ForCausalLM builds no shared expert"},
		{mm + `, "num_experts_per_tok": 5}`, "c.json: num_experts_per_tok=5 is out of range (use 1 to 4)"},
		{mm + `, "num_key_value_heads": 3}`, "c.json: num_key_value_heads=3 does not divide num_attention_heads=8"},
		{mm + `, "use_mtp": "yes"}`, `c.json: use_mtp is "yes", not a boolean`},
		{`{"architectures": ["MiniMaxM2ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8}`, "c.json: intermediate_size is missing (add it to config.json)"},
		{ms + `, ` + text + `}}`, ""},
		{ms + `}`, "c.json: text_config is missing (Mistral3ForConditionalGeneration needs the text decoder's text_config object)"},
		{ms + `, "text_config": 3}`, "c.json: text_config is 3 (Mistral3ForConditionalGeneration needs"},
		{ms + `, ` + text + `, "model_type": "ministral3"}}`, `c.json: text_config.model_type is "ministral3": zerosim imports Mistral3ForConditionalGeneration with a "mistral" text decoder`},
		{ms + `, ` + text + `, "sliding_window": 0}}`, "c.json: text_config.sliding_window=0 is out of range"},
		{ms + `, "text_config": {"vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8}}`, "c.json: text_config.intermediate_size is missing"},
		{dots + `, "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2}`, ""},
		{dots + `, "first_k_dense_replace": 2}`, ""},
		{dots + `}`, "c.json: n_routed_experts is missing (add it to config.json)"},
		{dots + `, "n_routed_experts": 4, "num_experts_per_tok": 2}`, "c.json: n_shared_experts is missing"},
		{dots + `, "n_routed_experts": 4, "n_shared_experts": 1}`, "c.json: num_experts_per_tok is missing"},
		{dots + `, "n_routed_experts": 6, "n_shared_experts": 1, "num_experts_per_tok": 2, "n_group": 4}`, "c.json: n_group=4 does not divide n_routed_experts=6"},
		{dots + `, "first_k_dense_replace": 2, "layer_types": ["sliding_attention"]}`, "c.json: layer_types has 1 entries for num_hidden_layers=2"},
		{dots + `, "first_k_dense_replace": 2, "num_key_value_heads": 3}`, "c.json: num_key_value_heads=3 does not divide num_attention_heads=8"},
		{seed + `}`, ""},
		{seed + `, "attention_out_bias": 1}`, "c.json: attention_out_bias is 1, not a boolean"},
		{seed + `, "num_key_value_heads": 3}`, "c.json: num_key_value_heads=3 does not divide num_attention_heads=8"},
		{`{"architectures": ["SeedOssForCausalLM"], "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": null, "intermediate_size": 32}`,
			"c.json: hidden_size=4 is smaller than num_attention_heads=8"},
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

// TestHFLatestScenario: a scenario naming these configs loads with the
// import's notes as warnings, and model.layers shortens each (the
// Mistral 3 text_config's num_hidden_layers too).
func TestHFLatestScenario(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel:\n"
	for _, c := range []struct {
		model  string
		layers int64
		params int64
		warn   []string
	}{
		{"  hf_config: hf-extra/mistral-small-3.1-24b-instruct-2503.json\n", 40, 23_572_403_200, []string{"vision_config: the Pixtral vision tower"}},
		{"  hf_config: hf-extra/mistral-small-3.1-24b-instruct-2503.json\n  layers: 2\n", 2, 2*671_088_640 + 5120 + 2*555_755_520, []string{"vision_config: the Pixtral vision tower"}},
		{"  hf_config: hf-extra/seed-oss-36b.json\n", 64, 36_151_104_512, nil},
		{"  hf_config: hf-extra/dots-llm1-base.json\n  layers: 4\n", 4, 0, nil},
		{"  hf_config: hf-extra/minimax-m2.json\n", 62, 228_689_764_864, []string{"MiniMaxM2TopKRouter", "use_mtp, num_mtp_modules=3", "quantization_config (fp8)"}},
		{"  hf_config: hf-extra/minimax-m2.json\n  layers: 3\n", 3, 0, []string{"MiniMaxM2TopKRouter", "use_mtp, num_mtp_modules=3", "quantization_config (fp8)"}},
		// 48 decoder layers, and the MTP module when the stack builds it
		// (TestHFQwen3Next's published counts).
		{"  hf_config: hf-extra/qwen3-next-80b-a3b-instruct.json\n", 48, 79_674_391_296, []string{"linear_attention: 36 of the 48", "num_nextn_predict_layers=1 (vLLM's default; the published config leaves it out): the multi-token-prediction module (the checkpoint's mtp.*"}},
		{"  hf_config: hf-extra/qwen3-next-80b-a3b-instruct.json\n  mtp_layers: 1\n", 49, 81_324_862_720, []string{"linear_attention: 36 of the 48", "model.mtp_layers=1 (num_nextn_predict_layers=1, vLLM's default"}},
		{"  hf_config: hf-extra/qwen3-next-80b-a3b-instruct.json\n  layers: 4\n", 4, 0, []string{"linear_attention: 3 of the 4", "num_nextn_predict_layers=1"}},
		{"  hf_config: hf-extra/qwen3-next-80b-a3b-instruct.json\n  layers: 4\n  mtp_layers: 2\n", 6, 0, []string{"linear_attention: 3 of the 4", "model.mtp_layers=2 (num_nextn_predict_layers=1, vLLM's default; the published config leaves it out): the multi-token-prediction blocks (block.4 to block.5)"}},
	} {
		s, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.model, err)
		}
		s.Warnings = withoutSeqLenNote(t, c.model, s.Warnings)
		if s.Model.Layers != c.layers || len(s.Warnings) != len(c.warn) || c.params > 0 && int64(s.Model.Params) != c.params {
			t.Errorf("%q: %d layers, %d parameters, warnings %q", c.model, s.Model.Layers, s.Model.Params, s.Warnings)
			continue
		}
		for i, w := range c.warn {
			if !strings.HasPrefix(s.Warnings[i], "testdata/x.yaml:5:3: ") || !strings.Contains(s.Warnings[i], w) {
				t.Errorf("%q: warning %d = %q, want %q", c.model, i, s.Warnings[i], w)
			}
		}
	}
}

// TestHFDots1 holds dots.llm1 (testdata/hf-extra/dots-llm1-base.json) to
// 142,774,381,696, the BF16 parameters of rednote-hilab/dots.llm1.base's
// Hub safetensors metadata (as a dots1 audit's checkpoint sweep quotes
// it), which holds the 61·128 e_score_correction_bias entries, and
// to the card's "14B activated" (14.02B with the embedding and output
// head, as rednote counts it: 142B total is the same convention).
func TestHFDots1(t *testing.T) {
	const total, h, vocab, experts, layers = 142_774_381_696, 4096, 152064, 128, 62
	one := int64(3 * h * 1408)
	moe := BlockDims{Hidden: h, Heads: 32, KVHeads: 32, HeadDim: 128, Experts: experts, TopK: 6, ExpertFFN: 1408, SharedExperts: 2, SharedFFN: 2816,
		Router: RouterDeepseekV3, RouterNorm: true, QKNorm: QKNormRMSHead}
	// Dots1Attention's q_norm and k_norm, per head (memory's qkNorms).
	dense := BlockDims{Hidden: h, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 10944, QKNorm: QKNormRMSHead}
	for _, c := range []struct {
		name           string
		set            map[string]any
		total          int64
		window, layers int64
		notes          int
	}{
		{"published", nil, total, 0, 0, 0},
		// The instruct config adds n_group and topk_group 1 (the FP8 one
		// too): one group, nothing changes.
		{"n_group 1", map[string]any{"n_group": 1, "topk_group": 1}, total, 0, 0, 0},
		{"num_local_experts alias", map[string]any{"n_routed_experts": nil, "num_local_experts": 128}, total, 0, 0, 0},
		// attention_bias puts biases on q, k, v and o.
		{"attention_bias", map[string]any{"attention_bias": true}, total + layers*4*h, 0, 0, 0},
		// Dots1Config's sliding_window 4096 with layer_types from
		// max_window_layers on.
		{"sliding from layer 31", map[string]any{"sliding_window": nil, "max_window_layers": 31}, total, 4096, 31, 0},
		{"sliding_window without a window layer", map[string]any{"sliding_window": nil}, total, 0, 0, 0},
		{"node-limited routing", map[string]any{"n_group": 8, "topk_group": 4}, total, 0, 0, 1},
	} {
		hm := hfVariant(t, "dots-llm1-base", c.set)
		checkHF(t, hm, c.total, c.total-61*(experts-6)*one)
		if a := hm.Active; a < 13_500_000_000 || a >= 14_500_000_000 {
			t.Errorf("%s: %d active, want 14B", c.name, a)
		}
		wantDense, want := dense, moe
		if c.name == "attention_bias" {
			wantDense.QKVBias, wantDense.OBias, want.QKVBias, want.OBias = true, true, true, true
		}
		if d := blockDims(hm, "block.0"); d == nil || *d != wantDense {
			t.Errorf("%s: block.0 dims %+v, want %+v", c.name, d, wantDense)
		}
		if c.layers > 0 {
			want.Window = c.window
		}
		if d := blockDims(hm, "block.61"); d == nil || *d != want {
			t.Errorf("%s: block.61 dims %+v, want %+v", c.name, d, want)
		}
		if hm.Layers != layers || len(hm.LayerList) != 1+62+61+2 || hm.Tied || hm.SlidingWindow != c.window || hm.WindowLayers != c.layers || len(hm.Notes) != c.notes {
			t.Errorf("%s: %d layers, %d units, tied %v, window %d over %d layers, notes %q", c.name, hm.Layers, len(hm.LayerList), hm.Tied,
				hm.SlidingWindow, hm.WindowLayers, hm.Notes)
		}
	}
	// Two layers by hand from modeling_dots1.py: MHA without biases,
	// q_norm and k_norm of head_dim, a dense layer 0 and a MoE layer 1
	// (gate, e_score_correction_bias, two shared experts' MLP, 128
	// experts), final norm, untied head.
	two := hfVariant(t, "dots-llm1-base", map[string]any{"num_hidden_layers": 2})
	attn := int64(4*h*h + 2*128 + 2*h)
	checkHF(t, two, 2*vocab*h+h+attn+3*h*10944+attn+experts*h+experts+3*h*2816+experts*one, 2*vocab*h+h+attn+3*h*10944+attn+experts*h+experts+3*h*2816+6*one)
	// Every layer dense (first_k_dense_replace ≥ layers) needs no expert keys.
	allDense := hfVariant(t, "dots-llm1-base", map[string]any{"num_hidden_layers": 2, "first_k_dense_replace": 2, "n_routed_experts": nil,
		"n_shared_experts": nil, "num_experts_per_tok": nil})
	checkHF(t, allDense, 2*vocab*h+h+2*(attn+3*h*10944), 0)
}
