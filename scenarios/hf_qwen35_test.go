package scenarios

import (
	"strings"
	"testing"
)

// qwen35Vision counts the vision tower of Qwen3_5(Moe)ForConditionalGeneration
// that the import leaves out, by hand from the module tree (Qwen3.6-27B's
// printed tree and tensor list, totalling 27,781,427,952, give the same
// shapes): patch_embed Conv3d(3, 1152, kernel (2, 16, 16)) with bias,
// pos_embed Embedding(2304, 1152), 27 blocks of two LayerNorms, qkv
// Linear(1152, 3456), proj Linear(1152, 1152), linear_fc1 Linear(1152,
// 4304), linear_fc2 back, all with biases, and the merger: LayerNorm(1152),
// linear_fc1 Linear(4608, 4608) and linear_fc2 Linear(4608, out), with
// biases (vision_config of both published files; out is the text width).
func qwen35Vision(out int64) int64 {
	const h, i, m = 1152, 4304, 4 * 1152
	block := int64(4*h + h*3*h + 3*h + h*h + h + h*i + i + i*h + h)
	return 3*2*16*16*h + h + 2304*h + 27*block + 2*h + m*m + m + m*out + out
}

// TestHFQwen35 holds Qwen3.6-35B-A3B and Qwen3.6-27B
// (testdata/hf-extra/qwen3.6-35b-a3b.json and qwen3.6-27b.json) to their
// checkpoints' published totals less the vision tower, counted by hand
// (qwen35Vision: 446,571,248 parameters at the 2,048 text width, 460,730,096
// at 5,120):
//
//   - 35,951,822,704, the safetensors total of Qwen/Qwen3.6-35B-A3B
//     @ 995ad96e (a model-facts record; the index's total_size
//     71,903,645,408 bytes of bf16) and of Qwen/Qwen3.5-35B-A3B (same table),
//     and 35,107,181,936 for a fine-tune that dropped the mtp.* tensors: the
//     MTP module is 844,640,768. A component table gives the language model
//     without tower and MTP as 34,660,610,688.
//   - 27,781,427,952, the total of Qwen/Qwen3.6-27B's 1,199 tensors in a
//     model-info report that lists them (mtp.* included).
//   - The card's "3B activated" (A3B) is the decoder's 2.44B active
//     parameters and one vocab × hidden matrix: 2.95B.
//
// The expected figures are written out from the module tree (Qwen3.6's
// printed Qwen3_5MoeModel and Qwen3_5Model), not from the importer.
func TestHFQwen35(t *testing.T) {
	const moeName, denseName, vocab = "qwen3.6-35b-a3b", "qwen3.6-27b", 248320
	const moePublished, moeNoMTP, moeMain, densePublished = 35_951_822_704, 35_107_181_936, 34_660_610_688, 27_781_427_952
	// Qwen3.6-35B-A3B: h 2048, 16 heads of 256 (kv 2), Gated DeltaNet 16
	// key and 32 value heads of 128, kernel 4, 256 experts of 512, top 8,
	// one shared expert of 512.
	const h = 2048
	one := int64(3 * h * 512)
	q, kv := int64(16*256), int64(2*256)
	full := 2*h*q + 2*h*kv + q*h + 2*256 // q_proj with its gate, k, v, o, q_norm, k_norm
	kw, vw := int64(16*128), int64(32*128)
	// in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, conv1d, dt_bias, A_log,
	// norm, out_proj.
	gdn := h*(2*kw+vw) + h*vw + 2*h*32 + (2*kw+vw)*4 + 2*32 + 128 + vw*h
	moeDense := int64(256*h + 3*h*512 + h) // router, shared expert, its gate
	mtp := int64(2*h*h+3*h) + full + 2*h + moeDense + 256*one
	moeTotal := moePublished - qwen35Vision(2048)
	moeActive := moeTotal - 41*248*one
	if mtp != moePublished-moeNoMTP || moeNoMTP-qwen35Vision(2048) != moeMain {
		t.Fatalf("the published counts disagree with the hand count: MTP %d, main %d", mtp, moeNoMTP-qwen35Vision(2048))
	}
	if hand := 2*vocab*h + h + 30*(gdn+2*h+moeDense+256*one) + 10*(full+2*h+moeDense+256*one); hand != moeMain {
		t.Fatalf("hand count of the language model %d, published %d", hand, moeMain)
	}
	// Qwen3.6-27B: h 5120, 24 heads of 256 (kv 4), 16 key and 48 value
	// heads of 128, dense MLP 17408.
	const dh = 5120
	dq, dkv := int64(24*256), int64(4*256)
	dfull := 2*dh*dq + 2*dh*dkv + dq*dh + 2*256
	dkw, dvw := int64(16*128), int64(48*128)
	dgdn := dh*(2*dkw+dvw) + dh*dvw + 2*dh*48 + (2*dkw+dvw)*4 + 2*48 + 128 + dvw*dh
	dmlp := int64(3 * dh * 17408)
	denseTotal := densePublished - qwen35Vision(5120)
	if hand := 2*vocab*dh + dh + 48*(dgdn+2*dh+dmlp) + 16*(dfull+2*dh+dmlp) + 2*dh*dh + 3*dh + dfull + 2*dh + dmlp; hand != denseTotal {
		t.Fatalf("hand count of Qwen3.6-27B %d, published less the tower %d", hand, denseTotal)
	}

	// The published checkpoints' totals count the mtp.* module, which
	// transformers' Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM do not
	// build (modular_qwen3_5.py @ 8940358a, modular_qwen3_5_moe.py
	// @ e36255cb: _keys_to_ignore_on_load_unexpected): the import counts
	// it only when the stack builds it (model.mtp_layers, hfVariant's
	// "@mtp_layers").
	denseMain := denseTotal - (2*dh*dh + 3*dh + dfull + 2*dh + dmlp)
	mtpOn := func(set map[string]any) map[string]any {
		out := map[string]any{"@mtp_layers": 1}
		for k, v := range set {
			out[k] = v
		}
		return out
	}
	flat := func(name, arch string) map[string]any {
		// The text_config keys at the top level, under a ForCausalLM class.
		set := map[string]any{"architectures": []any{arch}, "text_config": nil, "vision_config": nil}
		for k, v := range map[string]map[string]any{moeName: {"hidden_size": h, "num_hidden_layers": 40, "num_attention_heads": 16, "num_key_value_heads": 2,
			"linear_num_value_heads": 32, "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
			"vocab_size": vocab, "mtp_num_hidden_layers": 1},
			denseName: {"hidden_size": dh, "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "linear_num_value_heads": 48,
				"intermediate_size": 17408, "vocab_size": vocab, "mtp_num_hidden_layers": 1}}[name] {
			set[k] = v
		}
		return set
	}
	for _, c := range []struct {
		name, file    string
		set           map[string]any
		total, active int64
		linear        int64 // Gated DeltaNet blocks
		notes         int
	}{
		{"35B-A3B published, as transformers builds it", moeName, nil, moeMain, moeActive - mtp + 248*one, 30, 3},
		{"35B-A3B published, model.mtp_layers 1", moeName, mtpOn(nil), moeTotal, moeActive, 30, 3},
		{"35B-A3B mtp_num_hidden_layers 0", moeName, map[string]any{"text_config.mtp_num_hidden_layers": 0}, moeMain, moeActive - mtp + 248*one, 30, 2},
		{"35B-A3B layer_types from full_attention_interval", moeName, mtpOn(map[string]any{"text_config.layer_types": nil}), moeTotal, moeActive, 30, 3},
		// Qwen3_5MoeTextConfig's defaults are this checkpoint's values.
		{"35B-A3B class defaults", moeName, mtpOn(map[string]any{"text_config.vocab_size": nil, "text_config.num_attention_heads": nil,
			"text_config.num_key_value_heads": nil, "text_config.head_dim": nil, "text_config.num_experts": nil, "text_config.num_experts_per_tok": nil,
			"text_config.moe_intermediate_size": nil, "text_config.shared_expert_intermediate_size": nil, "text_config.linear_num_value_heads": nil,
			"text_config.mtp_num_hidden_layers": nil}), moeTotal, moeActive, 30, 3},
		// Keys Qwen3_5MoeTextConfig deletes change nothing.
		{"35B-A3B Qwen3-Next's sparse keys ignored", moeName, mtpOn(map[string]any{"text_config.decoder_sparse_step": 2, "text_config.mlp_only_layers": []any{0},
			"text_config.norm_topk_prob": false, "text_config.intermediate_size": 5120}), moeTotal, moeActive, 30, 3},
		{"35B-A3B as Qwen3_5MoeForCausalLM", moeName, mtpOn(flat(moeName, "Qwen3_5MoeForCausalLM")), moeTotal, moeActive, 30, 2},
		{"27B published, as transformers builds it", denseName, nil, denseMain, denseMain, 48, 3},
		{"27B published, model.mtp_layers 1", denseName, mtpOn(nil), denseTotal, denseTotal, 48, 3},
		{"27B mtp_num_hidden_layers 0", denseName, map[string]any{"text_config.mtp_num_hidden_layers": 0}, denseMain, denseMain, 48, 2},
		// Qwen3_5TextConfig's intermediate_size 12288 in all 65 layers.
		{"27B intermediate_size default", denseName, mtpOn(map[string]any{"text_config.intermediate_size": nil}), denseTotal - 65*3*dh*(17408-12288),
			denseTotal - 65*3*dh*(17408-12288), 48, 3},
		// Qwen3_5TextConfig reads no expert keys.
		{"27B experts ignored", denseName, mtpOn(map[string]any{"text_config.num_experts": 8, "text_config.num_experts_per_tok": 2}), denseTotal, denseTotal, 48, 3},
		{"27B as Qwen3_5ForCausalLM", denseName, mtpOn(flat(denseName, "Qwen3_5ForCausalLM")), denseTotal, denseTotal, 48, 2},
		{"27B tied", denseName, mtpOn(map[string]any{"text_config.tie_word_embeddings": true}), denseTotal - vocab*dh, denseTotal - vocab*dh, 48, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			hm := hfVariant(t, c.file, c.set)
			checkHF(t, hm, c.total, c.active)
			var n int64
			for _, l := range hm.LayerList {
				if l.Dims != nil && l.Dims.LinearAttention == LinearGatedDeltaNet {
					n++
				}
			}
			if n != c.linear || len(hm.Notes) != c.notes || !hm.Dims.OutputGate {
				t.Errorf("%d Gated DeltaNet blocks, want %d; notes %q", n, c.linear, hm.Notes)
			}
		})
	}

	moe := hfVariant(t, moeName, mtpOn(nil))
	// The card's "3B activated": the decoder's 2.44B active and one
	// vocab × hidden matrix (the output head) make 2.95B.
	if a := activeBody(hfVariant(t, moeName, map[string]any{"text_config.mtp_num_hidden_layers": 0})) + vocab*h; a < 2_500_000_000 || a >= 3_500_000_000 {
		t.Errorf("main model: %d active with the output head, without the input embedding, want 3B", a)
	}
	gated := BlockDims{Hidden: h, Heads: 16, KVHeads: 2, HeadDim: 256, Experts: 256, TopK: 8, ExpertFFN: 512, SharedExperts: 1, SharedFFN: 512,
		SharedGate: true, Router: RouterSoftmaxTopK, RouterNorm: true, OutputGate: true, QKNorm: QKNormGemma, Norms: NormsFP32}
	// Qwen3NextRMSNorm (fp32 up to (1 + weight)) in every layer's two
	// norms and the attention layers' q_norm and k_norm.
	linear := BlockDims{Hidden: h, Experts: 256, TopK: 8, ExpertFFN: 512, SharedExperts: 1, SharedFFN: 512, SharedGate: true,
		Router: RouterSoftmaxTopK, RouterNorm: true, LinearAttention: LinearGatedDeltaNet, LinearKeyHeads: 16, LinearValueHeads: 32,
		LinearKeyHeadDim: 128, LinearValueHeadDim: 128, LinearConvKernel: 4, Norms: NormsFP32}
	mtpDims := gated
	mtpDims.MTP = true
	dense := hfVariant(t, denseName, mtpOn(nil))
	dgated := BlockDims{Hidden: dh, Heads: 24, KVHeads: 4, HeadDim: 256, FFN: 17408, OutputGate: true, QKNorm: QKNormGemma, Norms: NormsFP32}
	dlinear := BlockDims{Hidden: dh, FFN: 17408, LinearAttention: LinearGatedDeltaNet, LinearKeyHeads: 16, LinearValueHeads: 48,
		LinearKeyHeadDim: 128, LinearValueHeadDim: 128, LinearConvKernel: 4, Norms: NormsFP32}
	dmtp := dgated
	dmtp.MTP = true
	for _, c := range []struct {
		hm   *HFModel
		unit string
		want BlockDims
	}{{moe, "block.0", linear}, {moe, "block.3", gated}, {moe, "block.38", linear}, {moe, "block.39", gated}, {moe, "block.40", mtpDims},
		{dense, "block.0", dlinear}, {dense, "block.63", dgated}, {dense, "block.64", dmtp}} {
		if d := blockDims(c.hm, c.unit); d == nil || *d != c.want {
			t.Errorf("%s %s dims %+v, want %+v", c.hm.Architecture, c.unit, d, c.want)
		}
	}
	if moe.Layers != 41 || dense.Layers != 65 || moe.MaxPositions != 262144 || moe.Vocab != vocab {
		t.Errorf("layers %d and %d, max positions %d, vocab %d", moe.Layers, dense.Layers, moe.MaxPositions, moe.Vocab)
	}
	for i, prefix := range []string{"linear_attention: 30 of the 40 decoder blocks are Gated DeltaNet", "model.mtp_layers=1 (text_config.mtp_num_hidden_layers=1): the multi-token-prediction block (block.40) is counted",
		"vision_config: the vision tower of Qwen3_5MoeForConditionalGeneration"} {
		if !strings.HasPrefix(moe.Notes[i], prefix) {
			t.Errorf("note %d = %q, want %q…", i, moe.Notes[i], prefix)
		}
	}
	if d := hfVariant(t, moeName, nil); d.Layers != 40 || blockDims(d, "block.40") != nil ||
		!strings.HasPrefix(d.Notes[1], "text_config.mtp_num_hidden_layers=1: the multi-token-prediction module (the checkpoint's mtp.*") ||
		!strings.Contains(d.Notes[1], "transformers' Qwen3_5MoeForCausalLM builds only the decoder layers") {
		t.Errorf("as transformers builds it: %d layers, notes %q", d.Layers, d.Notes)
	}
	// One layer of each kind by hand, small: a Gated DeltaNet block, then
	// a gated-attention block, dense MLP of 12288 (the default), no MTP.
	small := hfVariant(t, denseName, map[string]any{"text_config.num_hidden_layers": 2, "text_config.layer_types": nil, "text_config.full_attention_interval": 2,
		"text_config.intermediate_size": nil, "text_config.mtp_num_hidden_layers": 0})
	checkHF(t, small, 2*vocab*dh+dh+dgdn+2*dh+3*dh*12288+dfull+2*dh+3*dh*12288, 0)
}

// TestHFQwen35Refusals: what Qwen3_5GatedDeltaNet and the wrappers cannot
// build is refused with the key named.
func TestHFQwen35Refusals(t *testing.T) {
	const text = `"vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 32`
	for _, c := range []struct{ in, want string }{
		{`{"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": {` + text + `}}`, ""},
		{`{"model_type": "qwen3_5_text", ` + text + `}`, ""},
		{`{"model_type": "qwen3_5_moe", "text_config": {` + text + `, "num_experts": 4}}`, ""},
		{`{"architectures": ["Qwen3_5ForConditionalGeneration"], ` + text + `}`, "c.json: text_config is missing (Qwen3_5ForConditionalGeneration needs"},
		{`{"architectures": ["Qwen3_5MoeForConditionalGeneration"], "text_config": [1]}`, "c.json: text_config is a list (Qwen3_5MoeForConditionalGeneration needs"},
		{`{"model_type": "qwen3_5", "text_config": {` + text + `, "linear_num_key_heads": 3}}`,
			"c.json: text_config.linear_num_value_heads=32 is not a multiple of text_config.linear_num_key_heads=3 (Qwen3_5GatedDeltaNet repeats each key head"},
		{`{"model_type": "qwen3_5_moe", "text_config": {` + text + `, "num_experts": 0}}`, "c.json: text_config.num_experts=0 is out of range (use 1 to"},
		{`{"model_type": "qwen3_5", "text_config": {` + text + `, "intermediate_size": 0}}`, "c.json: text_config.intermediate_size=0 but layer 0 is dense"},
		{`{"model_type": "qwen3_5", "text_config": {"vocab_size": 10, "num_hidden_layers": 4}}`, "c.json: text_config.hidden_size is missing"},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if c.want == "" {
			if err != nil {
				t.Errorf("ImportHF(%.70s) = %v, want success", c.in, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(noPos(err, c.want), c.want) {
			t.Errorf("ImportHF(%s) = %v, want prefix %q", c.in, err, c.want)
		}
	}
}
