package scenarios

import (
	"strings"
	"testing"
)

// TestHFErnie45Moe holds ERNIE-4.5-21B-A3B (testdata/hf-extra/
// ernie-4.5-21b-a3b-pt.json) and ERNIE-4.5-300B-A47B
// (ernie-4.5-300b-a47b-pt.json) to their counts:
//
//   - 21,825,437,888, the Hub API's safetensors total of
//     baidu/ERNIE-4.5-21B-A3B-Thinking (BF16 21,821,012,480 + F32
//     4,425,408; the API response saved in
//     github.com/daniel-p-green/alain-ai-learning-platform/blob/522537bc54b2efa439c7755a8c5dedd6f8b001da/out/research-baidu-ernie-4-5-21b-a3b-thinking/sources/huggingface/model.json),
//     the checkpoint of the same architecture keys without the
//     num_nextn_predict_layers the -PT config adds (a transformers audit's
//     config sweep). Its F32 part is exactly
//     the 27 MoE layers' fp32 gate weights (64·2560) and
//     e_score_correction_bias (64): the bias is counted as the checkpoint
//     stores it. The -PT checkpoint also stores the MTP module transformers
//     drops; no total of it was found, and it is noted, not counted.
//   - Active: the card's "A3B" is 3.09B without the (tied) embedding: the
//     total less 58 of the 64 experts in each of the 27 MoE layers.
//   - 300B-A47B: no published exact total was found (the card says 300B
//     total, 47B activated); the import is held to the module tree counted
//     here by hand, 299,484,163,264 (299.5B), with 47.93B active counting the
//     embedding and the untied head as the card's 300B does.
func TestHFErnie45Moe(t *testing.T) {
	const total, h, vocab, layers, experts, topK, ffn, eff = 21_825_437_888, 2560, 103424, 28, 64, 6, 12288, 1536
	const moeLayers = layers - 1
	one := int64(3 * h * eff)
	shared := int64(3 * h * 2 * eff)
	attn := int64(2*h*20*128 + 2*h*4*128 + 2*h)
	dense := attn + 3*h*ffn
	moe := attn + experts*h + experts + shared + experts*one
	if f32 := int64(moeLayers * (experts*h + experts)); f32 != 4_425_408 {
		t.Errorf("27 gates and biases = %d, want the checkpoint's F32 4,425,408", f32)
	}
	if got := int64(vocab*h+h) + dense + moeLayers*moe; got != total || 21_821_012_480+4_425_408 != total {
		t.Errorf("hand count %d, want %d", got, total)
	}
	moeDims := BlockDims{Hidden: h, Heads: 20, KVHeads: 4, HeadDim: 128, Experts: experts, TopK: topK, ExpertFFN: eff, SharedExperts: 2, SharedFFN: 2 * eff}
	denseDims := BlockDims{Hidden: h, Heads: 20, KVHeads: 4, HeadDim: 128, FFN: ffn}
	for _, c := range []struct {
		name   string
		set    map[string]any
		total  int64
		moe    int64 // MoE layers
		notes  int
		last   BlockDims
		hasMTP bool
	}{
		{"published -PT config", nil, total, moeLayers, 2, moeDims, true},
		// The Thinking checkpoint's config: no MTP key, the default end index.
		{"Thinking (no MTP, moe_layer_end_index absent)", map[string]any{"num_nextn_predict_layers": nil, "moe_layer_end_index": nil}, total, moeLayers, 1, moeDims, false},
		{"moe_layer_end_index -1", map[string]any{"moe_layer_end_index": -1}, total, moeLayers, 2, moeDims, true},
		{"num_experts alias", map[string]any{"moe_num_experts": nil, "num_experts": 64, "moe_k": nil, "num_experts_per_tok": 6}, total, moeLayers, 2, moeDims, true},
		// Layers 14…27 dense.
		{"moe_layer_end_index 13", map[string]any{"moe_layer_end_index": 13}, total + 14*(dense-moe), 13, 2, denseDims, true},
		// (i+1) % 2 == 0: layers 1, 3, …, 27 MoE, the 14 even ones dense.
		{"moe_layer_interval 2", map[string]any{"moe_layer_interval": 2}, total + 13*(dense-moe), 14, 2, moeDims, true},
		{"moe_layer_start_index 28: all dense", map[string]any{"moe_layer_start_index": 28}, total + moeLayers*(dense-moe), 0, 1, denseDims, true},
		{"no shared experts", map[string]any{"moe_num_shared_experts": 0}, total - moeLayers*shared, moeLayers, 2,
			BlockDims{Hidden: h, Heads: 20, KVHeads: 4, HeadDim: 128, Experts: experts, TopK: topK, ExpertFFN: eff}, true},
		{"untied", map[string]any{"tie_word_embeddings": false}, total + vocab*h, moeLayers, 2, moeDims, true},
		// use_bias: q, k, v, o; every MLP's gate/up/down (dense, 64
		// experts, shared); lm_head's bias though its weight is tied.
		{"use_bias", map[string]any{"use_bias": true}, total + layers*(2560+2*512+2560) + (2*ffn + h) + moeLayers*(experts*(2*eff+h)+(2*2*eff+h)) + vocab,
			moeLayers, 2, moeDims, true},
		// head_dim wins over hidden/heads: q 20·256, k and v 4·256.
		{"head_dim 256", map[string]any{"head_dim": 256}, total + layers*(2*h*20*128+2*h*4*128), moeLayers, 2,
			BlockDims{Hidden: h, Heads: 20, KVHeads: 4, HeadDim: 256, Experts: experts, TopK: topK, ExpertFFN: eff, SharedExperts: 2, SharedFFN: 2 * eff}, true},
	} {
		hm := hfVariant(t, "ernie-4.5-21b-a3b-pt", c.set)
		if hm.Total != c.total {
			t.Errorf("%s: total %d, want %d (off by %d)", c.name, hm.Total, c.total, hm.Total-c.total)
		}
		o := one
		if c.name == "use_bias" {
			o += 2*eff + h
		}
		if want := hm.Total - c.moe*(experts-topK)*o; hm.Active != want {
			t.Errorf("%s: active %d, want %d", c.name, hm.Active, want)
		}
		wantDense, wantLast := denseDims, c.last
		if c.name == "use_bias" { // the biases the dims carry for UnitShapes
			wantDense.QKVBias, wantDense.OBias, wantDense.MLPBias = true, true, true
			wantLast.QKVBias, wantLast.OBias, wantLast.MLPBias = true, true, true
		}
		if d := blockDims(hm, "block.0"); d == nil || *d != wantDense && c.name != "head_dim 256" {
			t.Errorf("%s: block.0 dims %+v, want %+v", c.name, d, wantDense)
		}
		if d := blockDims(hm, "block.27"); d == nil || *d != wantLast {
			t.Errorf("%s: block.27 dims %+v, want %+v", c.name, d, wantLast)
		}
		var units int64
		for _, l := range hm.LayerList {
			if strings.HasPrefix(l.Name, "experts.") {
				units++
			}
		}
		if units != c.moe || hm.Layers != layers || hm.Tied == (c.name == "untied") || len(hm.Notes) != c.notes || hm.Dims.Router != "" {
			t.Errorf("%s: %d expert units, %d layers, tied %v, notes %q, router %q", c.name, units, hm.Layers, hm.Tied, hm.Notes, hm.Dims.Router)
		}
		mtp := false
		for _, n := range hm.Notes {
			mtp = mtp || strings.HasPrefix(n, "num_nextn_predict_layers=1: ERNIE's multi-token-prediction module")
		}
		if mtp != c.hasMTP || c.moe > 0 && !strings.HasPrefix(hm.Notes[0], "the router of Ernie4_5_MoeSparseMoeBlock (fp32 gate on an fp32 copy of the input, fp32 softmax, e_score_correction_bias for the choice only, top-6 renormalised) is not a router") {
			t.Errorf("%s: notes %q", c.name, hm.Notes)
		}
	}
	hm := hfVariant(t, "ernie-4.5-21b-a3b-pt", nil)
	if a := activeBody(hm); a < 2_500_000_000 || a >= 3_500_000_000 {
		t.Errorf("%d active without the embedding, want A3B", a)
	}
	if e := hm.LayerList[3]; e.Name != "experts.1" || int64(e.Params) != experts*one || int64(e.ActiveParams) != topK*one || e.Group != GroupExpert {
		t.Errorf("experts.1 = %+v", e)
	}

	// 300B-A47B: 3 dense layers, 51 MoE layers of 64 experts (top-8), no
	// shared experts, untied head.
	const bh, bvocab, bffn, beff = 8192, 103424, 28672, 3584
	battn := int64(2*bh*64*128 + 2*bh*8*128 + 2*bh)
	bone := int64(3 * bh * beff)
	btotal := int64(2*bvocab*bh+bh) + 3*(battn+3*bh*bffn) + 51*(battn+64*bh+64+64*bone)
	big := hfVariant(t, "ernie-4.5-300b-a47b-pt", nil)
	checkHF(t, big, btotal, btotal-51*(64-8)*bone)
	if btotal != 299_484_163_264 {
		t.Errorf("300B hand count %d", btotal)
	}
	if a := big.Active; a < 47_000_000_000 || a >= 48_000_000_000 {
		t.Errorf("300B: %d active with embedding and head, want A47B", a)
	}
	bmoe := BlockDims{Hidden: bh, Heads: 64, KVHeads: 8, HeadDim: 128, Experts: 64, TopK: 8, ExpertFFN: beff}
	if d := blockDims(big, "block.3"); d == nil || *d != bmoe {
		t.Errorf("300B block.3 dims %+v, want %+v", d, bmoe)
	}
	if d := blockDims(big, "block.2"); d == nil || d.FFN != bffn || d.Experts != 0 {
		t.Errorf("300B block.2 dims %+v, want dense", d)
	}
	if big.Tied || len(big.LayerList) != 1+54+51+2 || big.LayerList[len(big.LayerList)-1].Name != "lm_head" || len(big.Notes) != 2 {
		t.Errorf("300B: tied %v, %d units, notes %q", big.Tied, len(big.LayerList), big.Notes)
	}

	// Two layers by hand from modeling_ernie4_5_moe.py with use_bias and
	// 4 experts (top-2), 1 shared: layer 0 dense, layer 1 MoE.
	two := hfVariant(t, "ernie-4.5-21b-a3b-pt", map[string]any{"num_hidden_layers": 2, "moe_layer_end_index": nil, "moe_num_experts": 4,
		"moe_k": 2, "moe_num_shared_experts": 1, "use_bias": true, "tie_word_embeddings": false})
	battn2 := int64(h*2560+2560) + 2*int64(h*512+512) + int64(2560*h+h) + 2*h
	mlp := func(f int64) int64 { return 2*(h*f+f) + f*h + h }
	router := int64(4*h + 4)
	checkHF(t, two, 2*vocab*h+vocab+h+battn2+mlp(ffn)+battn2+router+mlp(eff)+4*mlp(eff), 2*vocab*h+vocab+h+battn2+mlp(ffn)+battn2+router+mlp(eff)+2*mlp(eff))
}

// TestHFErnie45 holds ERNIE-4.5-0.3B (testdata/hf-extra/ernie-4.5-0.3b-pt.json,
// Baidu's first config.json, class Ernie4_5_ForCausalLM) to 360,748,032,
// the parameters an evaluation log prints for the loaded 18-layer,
// 1024-wide ERNIE (the Hub shows 0.36B), with the output layer tied; each
// Ernie4_5Config default and flag is checked against the module tree counted
// by hand.
func TestHFErnie45(t *testing.T) {
	const total, h, ffn, vocab, layers = 360_748_032, 1024, 3072, 103424, 18
	q, kv := int64(16*128), int64(2*128)
	for _, c := range []struct {
		name   string
		set    map[string]any
		total  int64
		kv, hd int64
		tied   bool
	}{
		{"published", nil, total, 2, 128, true},
		{"transformers' class name", map[string]any{"architectures": []any{"Ernie4_5ForCausalLM"}}, total, 2, 128, true},
		{"head_dim absent (default 128)", map[string]any{"head_dim": nil}, total, 2, 128, true},
		// head_dim null: hidden/heads = 64 (q 1024, kv 128).
		{"head_dim null", map[string]any{"head_dim": jsonNull{}}, total - layers*(2*h*(q-1024)+2*h*(kv-128)), 2, 64, true},
		{"num_key_value_heads absent (default 2)", map[string]any{"num_key_value_heads": nil}, total, 2, 128, true},
		{"num_key_value_heads null", map[string]any{"num_key_value_heads": jsonNull{}}, total + layers*2*h*(q-kv), 16, 128, true},
		{"use_bias", map[string]any{"use_bias": true}, total + layers*(q+2*kv+h+2*ffn+h), 2, 128, true},
		{"untied", map[string]any{"tie_word_embeddings": false}, total + vocab*h, 2, 128, false},
		{"tie_word_embeddings absent (default true)", map[string]any{"tie_word_embeddings": nil}, total, 2, 128, true},
	} {
		hm := hfVariant(t, "ernie-4.5-0.3b-pt", c.set)
		checkHF(t, hm, c.total, 0)
		want := BlockDims{Hidden: h, Heads: 16, KVHeads: c.kv, HeadDim: c.hd, FFN: ffn}
		want.QKVBias, want.OBias, want.MLPBias = c.name == "use_bias", c.name == "use_bias", c.name == "use_bias"
		if d := blockDims(hm, "block.17"); d == nil || *d != want {
			t.Errorf("%s: block.17 dims %+v, want %+v", c.name, d, want)
		}
		if hm.Tied != c.tied || len(hm.Notes) != 0 || hm.Layers != layers {
			t.Errorf("%s: tied %v, notes %q, %d layers", c.name, hm.Tied, hm.Notes, hm.Layers)
		}
	}
	one := hfVariant(t, "ernie-4.5-0.3b-pt", map[string]any{"num_hidden_layers": 1})
	checkHF(t, one, vocab*h+h+2*h*q+2*h*kv+2*h+3*h*ffn, 0)
}

// TestHFErnie45Errors: the mistakes in an ERNIE config are one line naming
// the key.
func TestHFErnie45Errors(t *testing.T) {
	moe := `{"architectures": ["Ernie4_5_MoeForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 8`
	dense := `{"architectures": ["Ernie4_5ForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2`
	for _, c := range []struct{ in, want string }{
		{moe + `}`, ""},
		{moe + `, "moe_layer_start_index": 5}`, ""},
		{moe + `, "moe_layer_interval": 0}`, "c.json: moe_layer_interval=0 is out of range (use 1 to"},
		{moe + `, "moe_num_experts": [64, 64]}`, "c.json: moe_num_experts is a list, not a whole number"},
		{moe + `, "moe_k": 65}`, "c.json: moe_k=65 is out of range (use 1 to 64)"},
		{moe + `, "moe_layer_end_index": -2}`, "c.json: moe_layer_end_index=-2 is out of range"},
		{moe + `, "use_bias": 0}`, "c.json: use_bias is 0, not a boolean"},
		{moe + `, "num_key_value_heads": 3}`, "c.json: num_key_value_heads=3 does not divide num_attention_heads=8"},
		{dense + `}`, ""},
		{dense + `, "head_dim": 0}`, "c.json: head_dim=0 is out of range"},
		{`{"architectures": ["Ernie4_5ForCausalLM"], "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": null}`,
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

// TestHFErnie45Scenario: a scenario naming the ERNIE configs loads with
// the import's notes as warnings, and model.layers shortens it.
func TestHFErnie45Scenario(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel:\n"
	for _, c := range []struct {
		model  string
		layers int64
		params int64
		warn   []string
	}{
		{"  hf_config: hf-extra/ernie-4.5-21b-a3b-pt.json\n", 28, 21_825_437_888, []string{"the router of Ernie4_5_MoeSparseMoeBlock", "num_nextn_predict_layers=1"}},
		// Layer 0 dense, layer 1 MoE; moe_layer_end_index 27 is past the end.
		{"  hf_config: hf-extra/ernie-4.5-21b-a3b-pt.json\n  layers: 2\n", 2, 103424*2560 + 2560 + 110_105_600 + 39_490_624 + 754_974_720,
			[]string{"the router of Ernie4_5_MoeSparseMoeBlock", "num_nextn_predict_layers=1"}},
		{"  hf_config: hf-extra/ernie-4.5-0.3b-pt.json\n", 18, 360_748_032, nil},
	} {
		s, err := Load("testdata/x.yaml", []byte(base+c.model), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.model, err)
		}
		s.Warnings = withoutSeqLenNote(t, c.model, s.Warnings)
		if s.Model.Layers != c.layers || len(s.Warnings) != len(c.warn) || int64(s.Model.Params) != c.params {
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
