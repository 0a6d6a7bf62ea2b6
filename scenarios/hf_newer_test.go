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
//     table's safetensors total for zai-org/GLM-4.5, find_string
//     358337791296; a parameter calculator's "glm-4.7-mtp" preset gives the
//     same, and 352,797,829,024 without the MTP layer). The MTP layer
//     (model.layers.92) stores its own copies of embed_tokens and
//     shared_head.head, which are the main model's, so the trained
//     parameters are 358,337,791,296 − 2·151,552·5,120.
//   - GLM-4.5-Air's checkpoint 110,468,824,832 (the same table), less the
//     MTP layer's two copies; its main model (glm-4.5-air.json has no
//     num_nextn_predict_layers) is 106,852,245,504 as
//     sum(p.numel() for p in model.named_parameters()) of the transformers
//     model (a fine-tuning run's EXPECTED_LOGICAL_PARAMETERS, find_string
//     106_852_245_504) plus the 45·128 e_score_correction_bias entries,
//     which are buffers, not named parameters, but stored in the checkpoint.
//   - Active: the model card's 32B and 12B, rounded to the billion, count
//     neither the input embedding nor the output head (with them the main
//     models have 33.6B and 13.4B). The card's totals, 355B and 106B, are
//     not one convention the exact counts reproduce (GLM-4.5 with its MTP
//     layer and without embeddings is 355.2B, Air's main model 106.9B), so
//     the exact checkpoint counts are held instead.
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
		notes              int
	}{
		{name: "glm-4.6", hm: hfVariant(t, "glm-4.6", nil), main: hfVariant(t, "glm-4.6", map[string]any{"num_nextn_predict_layers": 0}),
			total: 358_337_791_296 - 2*vocab*5120, mainTotal: 352_797_829_024, cardActive: 32_000_000_000, layers: 93, units: 1 + 93 + 90 + 2,
			firstMoE: "block.3", moeDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, Experts: 160, TopK: 8, ExpertFFN: 1536,
				SharedExperts: 1, SharedFFN: 1536, Router: RouterDeepseekV3, RouterNorm: true},
			denseDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, FFN: 12288}, notes: 1},
		{name: "glm-4.5", hm: hfVariant(t, "glm-4.6", map[string]any{"max_position_embeddings": 131072}),
			main:  hfVariant(t, "glm-4.6", map[string]any{"max_position_embeddings": 131072, "num_nextn_predict_layers": nil}),
			total: 358_337_791_296 - 2*vocab*5120, mainTotal: 352_797_829_024, cardActive: 32_000_000_000, layers: 93, units: 1 + 93 + 90 + 2,
			firstMoE: "block.3", moeDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, Experts: 160, TopK: 8, ExpertFFN: 1536,
				SharedExperts: 1, SharedFFN: 1536, Router: RouterDeepseekV3, RouterNorm: true},
			denseDims: BlockDims{Hidden: 5120, Heads: 96, KVHeads: 8, HeadDim: 128, FFN: 12288}, notes: 1},
		{name: "glm-4.5-air", hm: hfVariant(t, "glm-4.5-air", map[string]any{"num_nextn_predict_layers": 1}), main: hfVariant(t, "glm-4.5-air", nil),
			total: 110_468_824_832 - 2*vocab*4096, mainTotal: 106_852_245_504 + 45*128, cardActive: 12_000_000_000, layers: 47, units: 1 + 47 + 46 + 2,
			firstMoE: "block.1", moeDims: BlockDims{Hidden: 4096, Heads: 96, KVHeads: 8, HeadDim: 128, Experts: 128, TopK: 8, ExpertFFN: 1408,
				SharedExperts: 1, SharedFFN: 1408, Router: RouterDeepseekV3, RouterNorm: true},
			denseDims: BlockDims{Hidden: 4096, Heads: 96, KVHeads: 8, HeadDim: 128, FFN: 10944}, notes: 1},
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
			if len(c.hm.Notes) != c.notes || !strings.HasPrefix(c.hm.Notes[0], "num_nextn_predict_layers=1: the multi-token-prediction block (block."+strconv.FormatInt(c.layers-1, 10)) ||
				len(c.main.Notes) != 0 {
				t.Errorf("notes %q, main model %q", c.hm.Notes, c.main.Notes)
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
// logged num_params and a converter's safetensors element-count check,
// find_string 7298011136); 32B (hidden 5120, 64 layers, 40 heads, 8 KV
// heads, intermediate 27648) 32,233,522,176 (a bits-per-parameter study
// beside the 7B's and SmolLM3's, find_string 32233522176). OLMo 3 is OLMo
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
// 3,075,098,624, the total_parameters of its safetensors index (find_string
// 3075098624: several model registries and an index audit), with the
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
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
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
		{"  hf_config: hf-extra/glm-4.6.json\n  layers: 4\n", 5, 0, []string{"num_nextn_predict_layers=1: the multi-token-prediction block (block.4,"}},
		{"  hf_config: hf-extra/glm-4.5-air.json\n", 46, 106_852_251_264, nil},
	} {
		s, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.model, err)
		}
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
