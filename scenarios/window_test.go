package scenarios

import (
	"strings"
	"testing"
)

// TestWindowWarnings: a scenario whose blocks attend over a sliding window
// (Mistral 7B: all 32 layers over 4096 tokens, MistralConfig's default)
// or within chunks (Llama 4 Scout: the RoPE layers, 8192 tokens) warns
// only where zerosim leaves something out: under context parallelism
// (ring attention counted over all keys) when the window is shorter than
// seq_len, and under sdpa (every score and the materialised mask, both
// counted, named as the cost flash avoids) from seq_len = window on, where
// transformers stops skipping the mask (_ignore_causal_mask_sdpa:
// kv_length < the window). flash and eager count the window as their
// kernels compute it: no warning.
func TestWindowWarnings(t *testing.T) {
	for _, c := range []struct {
		model, par, attention string
		warn                  string
	}{
		{"preset: mistral-7b, seq_len: 8192", "dp: 16", "flash", ""},
		{"preset: mistral-7b, seq_len: 8192", "dp: 16", "eager", ""},
		{"preset: mistral-7b, seq_len: 4095", "dp: 16", "sdpa", ""},
		{"preset: mistral-7b, seq_len: 4096", "dp: 16", "sdpa", "32 blocks attend over a sliding window of 4096 tokens: under sdpa transformers passes SDPA the mask, so its memory-efficient kernel computes every score, and each block keeps a 16-bit copy of the micro_batch·seq_len² mask for backward (both counted"},
		{"preset: mistral-7b, seq_len: 4096", "dp: 8, cp: 2", "flash", ""},
		{"preset: mistral-7b, seq_len: 8192", "dp: 8, cp: 2", "flash", "32 blocks attend over a sliding window of 4096 tokens, but ring attention under context parallelism is counted over all keys"},
		{"hf_config: hf-extra/llama-4-scout-17b-16e.json, layers: 4, seq_len: 16384", "dp: 16", "sdpa", "3 blocks attend within chunks of 8192 tokens: under sdpa"},
		// transformers' flash_attention_2 refuses chunked attention past
		// one chunk (create_chunked_causal_mask, masking_utils.py @
		// 2ccc6cae): a Hugging Face config's chunks under flash are
		// counted as FlexAttention runs them, and the warning says so; at
		// seq_len = chunk it runs.
		{"hf_config: hf-extra/llama-4-scout-17b-16e.json, layers: 4, seq_len: 16384", "dp: 16", "flash", "3 blocks attend within chunks of 8192 tokens: transformers' flash_attention_2 refuses"},
		{"hf_config: hf-extra/llama-4-scout-17b-16e.json, layers: 4, seq_len: 8192", "dp: 16", "flash", ""},
	} {
		y := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {" + c.model + "}\n" +
			"parallelism: {" + c.par + ", zero_stage: 3}\ntraining: {micro_batch: 1, attention: " + c.attention + "}\n"
		s, err := Load("testdata/x.yaml", []byte(y), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "blocks attend") {
				got = append(got, w)
			}
		}
		switch {
		case c.warn == "" && len(got) > 0:
			t.Errorf("%s, %s, %s: warned %q", c.model, c.par, c.attention, got)
		case c.warn != "" && (len(got) != 1 || !strings.HasPrefix(got[0], "testdata/x.yaml:3:") || !strings.Contains(got[0], c.warn)):
			t.Errorf("%s, %s, %s: warnings %q, want one at the model line with %q", c.model, c.par, c.attention, got, c.warn)
		}
	}
}

// TestWindowWarningMixed: a layer list with one windowed and one chunked
// block names each, at the layer list's line.
func TestWindowWarningMixed(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n" +
		"  layers: 2\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n" +
		"  - {name: block.0, params: 40960, dims: {hidden: 64, heads: 4, head_dim: 16, window: 16}}\n" +
		"  - {name: block.1, params: 40960, dims: {hidden: 64, heads: 4, head_dim: 16, attention_chunk: 24}}\n" +
		"  - {name: lm_head, params: 16384}\nparallelism: {dp: 2, zero_stage: 3}\ntraining: {micro_batch: 2, attention: sdpa}\n"
	s, err := Load("testdata/x.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "testdata/x.yaml:12:3: 1 block attends over a sliding window of 16 tokens, 1 block attends within chunks of 24 tokens: under sdpa"
	if len(s.Warnings) != 1 || !strings.HasPrefix(s.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", s.Warnings, want)
	}
}

// TestLayerDimsErrors: a layer list's dims are checked like the import
// reads them, each error naming the key's line and column.
func TestLayerDimsErrors(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\n" +
		"model:\n  kind: transformer\n  arch: llama\n  hidden: 4096\n  layers: 1\n  heads: 32\n  ffn: 11008\n  vocab: 32000\n  seq_len: 4096\n" +
		"  layer_list:\n    - {name: embedding, params: 131072000}\n    - {name: block.0, params: 202383360, dims: {%s}}\n"
	for _, c := range []struct{ dims, want string }{
		{"heads: -3", "testdata/x.yaml:15:49: heads=-3 is out of range (use 0 to 1048576)"},
		{"head_dim: 40000", "testdata/x.yaml:15:49: head_dim=40000 is out of range (use 0 to 16384)"},
		{"heads: 32, kv_heads: 64", "kv_heads=64 is more than heads=32 (use at most 32)"},
		{"experts: 8, top_k: 9", "top_k=9 is more than experts=8 (use at most 8)"},
		{"window: 4096, attention_chunk: 8192", "a block has a sliding window or an attention chunk, not both"},
		{"window: 16777217", "window=16777217 is out of range (use 0 to 16777216)"},
		{"router: foo", "router \"foo\" is unknown"},
		{"hidden: 4096, linear_attention: mamba", "linear_attention \"mamba\" is unknown"},
		{"hidden: 4096, linear_key_heads: 16", "linear_key_heads=16 without linear_attention"},
		{"linear_attention: gated_delta_net, linear_key_heads: 16, linear_value_heads: 32, linear_key_head_dim: 128, linear_value_head_dim: 128",
			"linear_conv_kernel is missing or 0 (a gated_delta_net block needs every linear_* width > 0)"},
		{"linear_attention: gated_delta_net, linear_key_heads: 16, linear_value_heads: 24, linear_key_head_dim: 128, linear_value_head_dim: 128, linear_conv_kernel: 4",
			"linear_value_heads=24 is not a multiple of linear_key_heads=16"},
		{"heads: 32, linear_attention: gated_delta_net, linear_key_heads: 16, linear_value_heads: 32, linear_key_head_dim: 128, linear_value_head_dim: 128, linear_conv_kernel: 4",
			"heads=32 beside linear_attention"},
		{"linear_attention: gated_delta_net, linear_key_heads: 16, linear_value_heads: 32, linear_key_head_dim: 128, linear_value_head_dim: 128, linear_conv_kernel: 40000",
			"linear_conv_kernel=40000 is out of range (use 0 to 16384)"},
	} {
		_, err := Load("testdata/x.yaml", []byte(strings.Replace(base, "%s", c.dims, 1)), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "testdata/x.yaml:15:") {
			t.Errorf("dims {%s}: %v, want %q", c.dims, err, c.want)
		}
	}
}
