package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestHFNormFlags checks the flags the importer records for the
// activation model (BlockDims.QKNorm, Norms, AttnSoftcap and
// HFModel.LogitSoftcap) from the modeling code cited at each constant:
// Qwen3, GLM-4.5/4.6 (use_qk_norm) and dots.llm1 per-head RMSNorms,
// OLMo 2/3 whole-width ones, Gemma 3's fp32
// q/k and hidden norms, Gemma 2's fp32 norms with both softcaps
// (Gemma2Config defaults 50.0 and 30.0 when absent, none when null), and
// Gemma3ForCausalLM's final_logit_softcapping (default None).
func TestHFNormFlags(t *testing.T) {
	fromFile := func(path string) *HFModel {
		hm, err := ReadHFConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		return hm
	}
	// Gemma3ForCausalLM reads the top-level keys: the 4B file's
	// text_config as a config of its own.
	gemma3Text := func(set map[string]any) *HFModel {
		data, err := os.ReadFile("testdata/hf-extra/gemma-3-4b-it.json")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		raw := m["text_config"].(map[string]any)
		raw["architectures"] = []any{"Gemma3ForCausalLM"}
		for k, v := range set {
			raw[k] = v
			if v == nil { // nil removes the key
				delete(raw, k)
			}
		}
		out, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		hm, err := ImportHF("c.json", out)
		if err != nil {
			t.Fatal(err)
		}
		return hm
	}
	for _, c := range []struct {
		name            string
		hm              *HFModel
		qk, norms       string
		attnCap, logits bool
	}{
		{"Qwen3-8B", fromFile("testdata/hf/qwen3-8b/config.json"), QKNormRMSHead, "", false, false},
		{"Qwen3-30B-A3B", fromFile("testdata/hf-extra/qwen3-30b-a3b.json"), QKNormRMSHead, "", false, false},
		{"OLMo 2 13B", fromFile("testdata/hf-extra/olmo-2-1124-13b.json"), QKNormRMSFull, "", false, false},
		{"OLMo 3 7B", fromFile("testdata/hf-extra/olmo-3-1025-7b.json"), QKNormRMSFull, "", false, false},
		{"Gemma 3 4B", hfVariant(t, "gemma-3-4b-it", nil), QKNormGemma, NormsGemma, false, false},
		{"Gemma 3 as Gemma3ForCausalLM", gemma3Text(nil), QKNormGemma, NormsGemma, false, false},
		// The key absent: Gemma3TextConfig's default None, no logit
		// softcap (review s20 A F6; the 4B file states null).
		{"Gemma 3 as Gemma3ForCausalLM, final_logit_softcapping absent", gemma3Text(map[string]any{"final_logit_softcapping": nil}), QKNormGemma, NormsGemma, false, false},
		{"Gemma 3 with final_logit_softcapping", gemma3Text(map[string]any{"final_logit_softcapping": 30.0}), QKNormGemma, NormsGemma, false, true},
		{"Gemma 2 9B", fromFile("testdata/hf/gemma-2-9b/config.json"), "", NormsGemma, true, true},
		{"Gemma 2 27B (softcaps absent: defaults)", hfVariant(t, "gemma-2-27b", nil), "", NormsGemma, true, true},
		{"Gemma 2 27B, softcaps null", hfVariant(t, "gemma-2-27b", map[string]any{"attn_logit_softcapping": json.RawMessage("null"),
			"final_logit_softcapping": json.RawMessage("null")}), "", NormsGemma, false, false},
		// Glm4MoeAttention builds q_norm and k_norm under use_qk_norm
		// (GLM-4.6's file sets it; GLM-4.5-Air's leaves Glm4MoeConfig's
		// false); Dots1Attention always.
		{"GLM-4.6", hfVariant(t, "glm-4.6", nil), QKNormRMSHead, "", false, false},
		{"GLM-4.5-Air", hfVariant(t, "glm-4.5-air", nil), "", "", false, false},
		{"dots.llm1", hfVariant(t, "dots-llm1-base", nil), QKNormRMSHead, "", false, false},
		// MiniMaxM2Attention: q_norm, k_norm over the whole widths.
		{"MiniMax-M2", hfVariant(t, "minimax-m2", nil), QKNormRMSFull, "", false, false},
		{"Llama 3.1 8B", fromFile("testdata/hf/llama-3.1-8b/config.json"), "", "", false, false},
	} {
		for _, l := range c.hm.LayerList {
			if !strings.HasPrefix(l.Name, "block.") {
				continue
			}
			if d := l.Dims; d.QKNorm != c.qk || d.Norms != c.norms || d.AttnSoftcap != c.attnCap {
				t.Errorf("%s: %s qk_norm %q norms %q attn_softcap %v, want %q %q %v", c.name, l.Name, d.QKNorm, d.Norms, d.AttnSoftcap, c.qk, c.norms, c.attnCap)
				break
			}
		}
		if c.hm.LogitSoftcap != c.logits {
			t.Errorf("%s: logit_softcap %v, want %v", c.name, c.hm.LogitSoftcap, c.logits)
		}
	}
	// A cap that is not a positive number is refused at its key.
	for _, v := range []string{`"50"`, `0`, `-30.0`} {
		_, err := ImportHF("c.json", []byte(`{"architectures": ["Gemma2ForCausalLM"], "hidden_size": 256, "num_hidden_layers": 2,
			"num_attention_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "final_logit_softcapping": `+v+`}`))
		if err == nil || !strings.Contains(err.Error(), "final_logit_softcapping") || !strings.Contains(err.Error(), "or null for none") {
			t.Errorf("final_logit_softcapping %s: %v, want an error naming the key and the fix", v, err)
		}
	}
}

// TestNormDimsChecks: qk_norm and norms load only with known values and on
// RMSNorm (llama) blocks, refused at their key with the fix.
func TestNormDimsChecks(t *testing.T) {
	for _, c := range []struct{ arch, dims, want string }{
		{"llama", "qk_norm: rms_head, norms: gemma, attn_softcap: true", ""},
		{"gpt", "qk_norm: rms_head", "s.yaml:14:70: qk_norm=rms_head needs RMSNorm (llama) blocks, and this model's are gpt (set model.arch: llama, or delete qk_norm)"},
		{"gpt", "norms: gemma", "s.yaml:14:70: norms=gemma needs RMSNorm (llama) blocks"},
		{"llama", "qk_norm: rmshead", "s.yaml:14:70: qk_norm \"rmshead\" is unknown (did you mean rms_head?)"},
		{"llama", "norms: fp16", "s.yaml:14:70: norms \"fp16\" is unknown"},
		{"llama", "qk_norm: gemma, norms: fp32", ""},
		// memory counts no q/k norm on an MLA or a linear-attention block
		// (review s20 A F2): refused at the key, not loaded and ignored.
		{"llama", "kv_lora_rank: 512, qk_norm: rms_head", "s.yaml:14:89: qk_norm=rms_head is not counted on an MLA block (kv_lora_rank=512: q_a_layernorm and kv_a_layernorm are counted by q_lora_rank and kv_lora_rank); delete qk_norm"},
		{"llama", "kv_lora_rank: 512, norms: fp32", ""},
		{"llama", "hidden: 256, linear_attention: gated_delta_net, linear_key_heads: 2, linear_value_heads: 4, linear_key_head_dim: 64, linear_value_head_dim: 64, linear_conv_kernel: 4, qk_norm: gemma",
			"s.yaml:14:214: qk_norm=gemma is not counted on a linear-attention block (linear_attention=gated_delta_net l2-normalises q and k inside its kernel, counted by linear_attention); delete qk_norm"},
		{"llama", "hidden: 256, linear_attention: gated_delta_net, linear_key_heads: 2, linear_value_heads: 4, linear_key_head_dim: 64, linear_value_head_dim: 64, linear_conv_kernel: 4, norms: fp32", ""},
	} {
		dims := c.dims
		if !strings.HasPrefix(dims, "hidden:") {
			dims = "hidden: 256, heads: 4, " + dims
		}
		y := `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model:
  kind: transformer
  arch: ` + c.arch + `
  hidden: 256, layers: 1, heads: 4, ffn: 1024, vocab: 1000, seq_len: 128, params: 1000000
  layer_list:
    - {name: block.0, params: 1000000, dims: {` + dims + `}}
parallelism: {dp: 8, zero_stage: 3}
`
		y = strings.Replace(y, "  hidden: 256, layers: 1, heads: 4, ffn: 1024, vocab: 1000, seq_len: 128, params: 1000000\n",
			"  hidden: 256\n  layers: 1\n  heads: 4\n  ffn: 1024\n  vocab: 1000\n  seq_len: 128\n  params: 1000000\n", 1)
		_, err := Load("s.yaml", []byte(y), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.arch, c.dims, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s %s: %v, want %q", c.arch, c.dims, err, c.want)
		}
	}
}

// TestNormDimsHFArch: a resolved import (arch: hf) takes qk_norm when its
// class builds RMSNorm (llama) blocks, Qwen3ForCausalLM, and is refused at
// the key when it builds GPT blocks, GPT2LMHeadModel (review s20 A F9,
// M59: checkNormDims' arch-hf arm).
func TestNormDimsHFArch(t *testing.T) {
	const base = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\nmodel:\n" +
		"  kind: transformer\n  hidden: 64\n  heads: 4\n  arch: hf\n  architecture: %s\n  layer_list:\n    - {name: embedding, params: 1000}\n" +
		"    - {name: block.0, params: 5000, dims: {hidden: 64, heads: 4, qk_norm: rms_head}}\n    - {name: lm_head, params: 1000}\n"
	for _, c := range []struct{ arch, want string }{
		{"Qwen3ForCausalLM", ""},
		{"GPT2LMHeadModel", "x.yaml:12:66: qk_norm=rms_head needs RMSNorm (llama) blocks, and this model's are gpt (set model.arch: llama, or delete qk_norm)"},
	} {
		_, err := Load("x.yaml", []byte(fmt.Sprintf(base, c.arch)), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.arch, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: %v, want %q", c.arch, err, c.want)
		}
	}
}
