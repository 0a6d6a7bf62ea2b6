package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzImport feeds config.json bytes to the importer, seeded with the 12
// shared configs, the others in testdata (DeepSeek-V3, gpt-oss, Gemma 3,
// Llama 4, OLMo 2 and 3, SmolLM3, GLM-4.5/4.6/4.5-Air, Mistral Small 3.1,
// MiniMax-M2, Seed-OSS, dots.llm1, Qwen3-Next, Qwen3.6 and ERNIE 4.5 among them) and small configs of each newer
// architecture: it never panics, every error
// is one line naming the file, a result's layers add up to its total, the
// active count is positive and at most the total, and notes are single
// lines.
func FuzzImport(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/hf/*/config.json")
	extra, _ := filepath.Glob("testdata/hf-extra/*.json")
	for _, p := range append(seeds, extra...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "{}", "[]", "null", `{"architectures": []}`, `{"architectures": [1]}`,
		`{"model_type": "llama", "vocab_size": 1, "hidden_size": 1, "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 1}`,
		`{"model_type": "llama", "vocab_size": 1, "hidden_size": 1, "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 1, "num_key_value_head": 1, "a\nb": 1, "num_experts": 2}`,
		`{"model_type": "deepseek_v2", "vocab_size": 1, "hidden_size": 1048576, "num_hidden_layers": 1024, "num_attention_heads": 1048576, "intermediate_size": 16777216, "n_routed_experts": 4096, "num_experts_per_tok": 4096, "moe_intermediate_size": 16777216}`,
		`{"model_type": "qwen3_moe", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 0, "num_experts": 0}`,
		`{"model_type": "opt", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "ffn_dim": 4, "do_layer_norm_before": false, "layer_norm_elementwise_affine": false, "word_embed_proj_dim": 8}`,
		`{"model_type": "deepseek_v3", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 4, "n_routed_experts": 4, "n_group": 2, "topk_group": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "q_lora_rank": null}`,
		`{"model_type": "qwen2_moe", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 4, "num_experts": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 2, "shared_expert_intermediate_size": 4, "mlp_only_layers": [0]}`,
		`{"model_type": "gpt_oss", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "num_local_experts": 2, "layer_types": ["full_attention", "sliding_attention"]}`,
		`{"model_type": "gemma3", "text_config": {"hidden_size": 8, "num_hidden_layers": 3, "intermediate_size": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "sliding_window_pattern": 2}, "vision_config": {}}`,
		`{"model_type": "llama4", "text_config": {"vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "intermediate_size_mlp": 6, "num_local_experts": 3, "interleave_moe_layer_step": 2, "no_rope_layers": [1, 0, 1], "attention_chunk_size": 2}, "vision_config": {}}`,
		`{"model_type": "llama4_text", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "head_dim": 4, "intermediate_size": 4, "num_local_experts": 2, "moe_layers": [1], "intermediate_size_mlp": 2, "layer_types": ["chunked_attention", "full_attention"], "attention_chunk_size": null}`,
		`{"model_type": "olmo2", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 4, "attention_bias": true}`,
		`{"model_type": "mistral", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 4, "sliding_window": 3}`,
		`{"model_type": "glm4_moe", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "moe_intermediate_size": 2, "n_routed_experts": 4, "n_group": 2, "topk_group": 1, "num_experts_per_tok": 2, "n_shared_experts": 0, "first_k_dense_replace": 2, "num_nextn_predict_layers": 1, "attention_bias": true, "use_qk_norm": true}`,
		`{"model_type": "olmo3", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 4, "sliding_window": 3, "layer_types": ["sliding_attention", "full_attention"]}`,
		`{"model_type": "smollm3", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 4, "no_rope_layers": [1, 0], "use_sliding_window": true, "sliding_window": 3, "tie_word_embeddings": false}`,
		`{"model_type": "mistral3", "text_config": {"vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "sliding_window": 3, "tie_word_embeddings": true}, "vision_config": {}}`,
		`{"model_type": "minimax_m2", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "num_experts": 3, "num_experts_per_tok": 2, "attn_type_list": [1, 1], "use_mtp": true, "num_mtp_modules": 1}`,
		`{"model_type": "dots1", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 4, "first_k_dense_replace": 1, "moe_intermediate_size": 2, "num_local_experts": 4, "n_shared_experts": 2, "num_experts_per_tok": 2, "n_group": 2, "topk_group": 1, "norm_topk_prob": true, "attention_bias": true, "max_window_layers": 1, "sliding_window": 3}`,
		`{"model_type": "seed_oss", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": null, "head_dim": null, "intermediate_size": 4, "attention_out_bias": true, "mlp_bias": true}`,
		`{"model_type": "qwen3_next", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_key_head_dim": 2, "linear_value_head_dim": 3, "linear_conv_kernel_dim": 2, "num_experts": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 2, "shared_expert_intermediate_size": 0, "mlp_only_layers": [1], "decoder_sparse_step": 2, "full_attention_interval": 2, "num_nextn_predict_layers": 2}`,
		`{"model_type": "qwen3_next", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 4, "num_experts": 0, "layer_types": ["full_attention", "linear_attention"], "attention_bias": true, "tie_word_embeddings": true}`,
		`{"model_type": "qwen3_5_moe", "text_config": {"vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_key_head_dim": 2, "linear_value_head_dim": 3, "linear_conv_kernel_dim": 2, "num_experts": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 2, "shared_expert_intermediate_size": 0, "full_attention_interval": 2, "mtp_num_hidden_layers": 2}, "vision_config": {}}`,
		`{"model_type": "qwen3_5_text", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 4, "layer_types": ["full_attention", "linear_attention"], "attention_bias": true, "tie_word_embeddings": true, "mtp_num_hidden_layers": 0}`,
		`{"model_type": "ernie4_5_moe", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 4, "moe_intermediate_size": 2, "moe_num_experts": 3, "moe_k": 2, "moe_num_shared_experts": 1, "moe_layer_start_index": 1, "moe_layer_end_index": 2, "moe_layer_interval": 2, "use_bias": true, "tie_word_embeddings": true, "num_nextn_predict_layers": 1}`,
		`{"model_type": "ernie4_5", "vocab_size": 5, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": null, "head_dim": null, "intermediate_size": 4, "use_bias": true, "tie_word_embeddings": false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hm, err := ImportHF("c.json", data)
		if err != nil {
			// "FILE: …", or "FILE:LINE:COL: …" at a JSON syntax error.
			if !cJSONError.MatchString(err.Error()) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		var sum int64
		for _, l := range hm.LayerList {
			if l.Params <= 0 || l.ActiveParams < 0 || l.ActiveParams > l.Params {
				t.Fatalf("layer %+v", l)
			}
			sum += int64(l.Params)
		}
		if sum != hm.Total || hm.Active <= 0 || hm.Active > hm.Total {
			t.Fatalf("layers add up to %d, total %d, active %d", sum, hm.Total, hm.Active)
		}
		checkUnitShapes(t, hm)
		for _, n := range append(hm.Notes, hm.WindowSummary(), hm.UnreadNote()) {
			if strings.ContainsAny(n, "\n\r") {
				t.Fatalf("note %q is not one line", n)
			}
		}
		if hm.WindowLayers < 0 || hm.WindowLayers > hm.Layers {
			t.Fatalf("%d windowed layers of %d", hm.WindowLayers, hm.Layers)
		}
	})
}

var cJSONError = regexp.MustCompile(`^c\.json(:\d+:\d+)?: `)
