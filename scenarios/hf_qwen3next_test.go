package scenarios

import (
	"strings"
	"testing"
)

// TestHFQwen3Next holds Qwen3-Next-80B-A3B-Instruct
// (testdata/hf-extra/qwen3-next-80b-a3b-instruct.json: the architecture
// keys of the published config.json, which leaves layer_types unset for
// full_attention_interval 4, mlp_only_layers [] and decoder_sparse_step 1;
// rope_theta 1e7, partial_rotary_factor 0.25, untied) to its published
// counts:
//
//   - 81,324,862,720, the safetensors total of
//     Qwen/Qwen3-Next-80B-A3B-Instruct and -Thinking (a model table of Hub
//     metadata; a parameter counter's
//     "Qwen_Qwen3-Next-80B-A3B-Instruct" fixture). It counts the mtp.*
//     tensors of the multi-token-prediction module, which the import counts
//     only when the stack builds it (model.mtp_layers, hfVariant's
//     "@mtp_layers"): transformers' Qwen3NextForCausalLM builds
//     num_hidden_layers decoder layers and ignores mtp.*
//     (modeling_qwen3_next.py @ 01cdc608).
//   - 79,674,391,296 without the MTP module: the safetensors total of
//     Qwen/Qwen3-Coder-Next, the same architecture keys (rope_theta
//     5e6 aside) with no mtp.* tensors (a Hub API log), and 3,874,929,408
//     active, the published total less the inactive experts' tensors (a
//     parameter counter's Qwen3-Coder-Next test).
//   - The card's "3B activated" (A3B) counts neither the input embedding
//     nor the output head: 3.25B.
func TestHFQwen3Next(t *testing.T) {
	const name, vocab, h, layers, published, main, mainActive = "qwen3-next-80b-a3b-instruct", 151936, 2048, 48, 81_324_862_720, 79_674_391_296, 3_874_929_408
	one := int64(3 * h * 512)
	q, kv := int64(16*256), int64(2*256)
	full := 2*h*q + 2*h*kv + q*h + 2*256
	kw, vw := int64(16*128), int64(32*128)
	gdn := h*(2*kw+2*vw) + h*2*32 + (2*kw+vw)*4 + 2*32 + 128 + vw*h
	moeDense := int64(512*h + 3*h*512 + h)
	mtp := int64(2*h*h+3*h) + full + 2*h + moeDense + 512*one
	gated := BlockDims{Hidden: h, Heads: 16, KVHeads: 2, HeadDim: 256, Experts: 512, TopK: 10, ExpertFFN: 512, SharedExperts: 1, SharedFFN: 512,
		SharedGate: true, Router: RouterSoftmaxTopK, RouterNorm: true, OutputGate: true, QKNorm: QKNormGemma, Norms: NormsFP32}
	// Qwen3NextRMSNorm (fp32 up to (1 + weight)) in every layer's two
	// norms and the attention layers' q_norm and k_norm.
	linear := BlockDims{Hidden: h, Experts: 512, TopK: 10, ExpertFFN: 512, SharedExperts: 1, SharedFFN: 512, SharedGate: true,
		Router: RouterSoftmaxTopK, RouterNorm: true, LinearAttention: LinearGatedDeltaNet, LinearKeyHeads: 16, LinearValueHeads: 32,
		LinearKeyHeadDim: 128, LinearValueHeadDim: 128, LinearConvKernel: 4, Norms: NormsFP32}
	var every4 []any
	for i := range layers {
		if (i+1)%4 == 0 {
			every4 = append(every4, "full_attention")
		} else {
			every4 = append(every4, "linear_attention")
		}
	}
	for _, c := range []struct {
		name          string
		set           map[string]any
		total, active int64
		linear        int64 // Gated DeltaNet blocks
		notes         int
	}{
		{"published, as transformers builds it", nil, main, mainActive, 36, 2},
		{"published, model.mtp_layers 1", map[string]any{"@mtp_layers": 1}, published, mainActive + mtp - 502*one, 36, 2},
		{"num_nextn_predict_layers 0", map[string]any{"num_nextn_predict_layers": 0}, main, mainActive, 36, 1},
		{"layer_types spelled out", map[string]any{"layer_types": every4, "@mtp_layers": 1}, published, mainActive + mtp - 502*one, 36, 2},
		// Every other layer full: 12 linear blocks become gated attention.
		{"full_attention_interval 2", map[string]any{"full_attention_interval": 2, "@mtp_layers": 1}, published + 12*(full-gdn), mainActive + mtp - 502*one + 12*(full-gdn), 24, 2},
		// A dense layer 0 of intermediate_size 5120 instead of the MoE.
		{"mlp_only_layers [0]", map[string]any{"mlp_only_layers": []any{0}, "@mtp_layers": 1}, published - moeDense - 512*one + 3*h*5120,
			mainActive + mtp - 502*one - moeDense - 10*one + 3*h*5120, 36, 2},
		{"attention_bias", map[string]any{"attention_bias": true, "@mtp_layers": 1}, published + 13*(2*q+2*kv+h), mainActive + mtp - 502*one + 13*(2*q+2*kv+h), 36, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			hm := hfVariant(t, name, c.set)
			checkHF(t, hm, c.total, c.active)
			var n int64
			for _, l := range hm.LayerList {
				if l.Dims != nil && l.Dims.LinearAttention == LinearGatedDeltaNet {
					n++
				}
			}
			if n != c.linear || len(hm.Notes) != c.notes || hm.Tied || hm.Dims.OutputGate != true {
				t.Errorf("%d Gated DeltaNet blocks, want %d; notes %q; tied %v", n, c.linear, hm.Notes, hm.Tied)
			}
		})
	}
	if d := hfVariant(t, name, nil); d.Layers != layers || blockDims(d, "block.48") != nil ||
		!strings.HasPrefix(d.Notes[1], "num_nextn_predict_layers=1 (vLLM's default; the published config leaves it out): the multi-token-prediction module (the checkpoint's mtp.*") {
		t.Errorf("as transformers builds it: %d layers, notes %q", d.Layers, d.Notes)
	}
	hm := hfVariant(t, name, map[string]any{"@mtp_layers": 1})
	if a := activeBody(hfVariant(t, name, map[string]any{"num_nextn_predict_layers": 0})); a < 2_500_000_000 || a >= 3_500_000_000 {
		t.Errorf("main model: %d active without embedding and output head, want 3B", a)
	}
	if hm.Layers != layers+1 || len(hm.LayerList) != 1+2*(layers+1)+2 {
		t.Errorf("%d layers, %d units", hm.Layers, len(hm.LayerList))
	}
	for _, c := range []struct {
		unit string
		want BlockDims
	}{{"block.0", linear}, {"block.2", linear}, {"block.3", gated}, {"block.46", linear}, {"block.47", gated}} {
		if d := blockDims(hm, c.unit); d == nil || *d != c.want {
			t.Errorf("%s dims %+v, want %+v", c.unit, d, c.want)
		}
	}
	mtpDims := gated
	mtpDims.MTP = true
	if d := blockDims(hm, "block.48"); d == nil || *d != mtpDims {
		t.Errorf("the MTP block's dims %+v, want %+v", d, mtpDims)
	}
	for i, prefix := range []string{"linear_attention: 36 of the 48 decoder blocks are Gated DeltaNet", "model.mtp_layers=1 (num_nextn_predict_layers=1, vLLM's default"} {
		if !strings.HasPrefix(hm.Notes[i], prefix) {
			t.Errorf("note %d = %q, want %q…", i, hm.Notes[i], prefix)
		}
	}
	// One layer of each kind by hand from modeling_qwen3_next.py, 4
	// experts and dense layers to keep the numbers small: a Gated DeltaNet
	// block with a dense MLP, then a gated-attention block.
	small := hfVariant(t, name, map[string]any{"num_hidden_layers": 2, "full_attention_interval": 2, "num_experts": 0, "num_nextn_predict_layers": 0})
	checkHF(t, small, 2*vocab*h+h+gdn+2*h+3*h*5120+full+2*h+3*h*5120, 0)
}

// TestHFQwen3NextRefusals: what Qwen3NextGatedDeltaNet cannot build and
// malformed hybrid keys are refused with the key named.
func TestHFQwen3NextRefusals(t *testing.T) {
	base := `{"architectures": ["Qwen3NextForCausalLM"], "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_experts": 0, "intermediate_size": 32`
	for _, c := range []struct{ in, want string }{
		{base + `}`, ""},
		{base + `, "linear_num_key_heads": 3}`, "c.json: linear_num_value_heads=32 is not a multiple of linear_num_key_heads=3"},
		{base + `, "layer_types": ["linear_attention", "full_attention"]}`, "c.json: layer_types has 2 entries for num_hidden_layers=4"},
		{base + `, "layer_types": ["linear_attention", "sliding_attention", "linear_attention", "full_attention"]}`, `c.json: layer_types[1] is "sliding_attention" (use "linear_attention" or "full_attention")`},
		{base + `, "full_attention_interval": 0}`, "c.json: full_attention_interval=0 is out of range"},
		{base + `, "intermediate_size": 0}`, "c.json: intermediate_size=0 but layer 0 is dense"},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if c.want == "" {
			if err != nil {
				t.Errorf("ImportHF(%.60s) = %v, want success", c.in, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(noPos(err, c.want), c.want) {
			t.Errorf("ImportHF(%s) = %v, want prefix %q", c.in, err, c.want)
		}
	}
}
