package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImportLLMFoundry feeds YAML bytes to the llm-foundry importer,
// seeded with llm-foundry's own training YAMLs (testdata/llmfoundry) and
// small files for each mapping: it never panics, every error is one line
// naming the file, and a scenario with the cluster given loads with the
// header's parameter count; one with placeholders is rendered too.
func FuzzImportLLMFoundry(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/llmfoundry/*.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "{", "a: [", "- 1\n", "max_seq_len: 1\n",
		"variables: {s: 4}\nmax_seq_len: ${variables.s}\nglobal_train_batch_size: 32\ndevice_train_microbatch_size: 1\nmodel: {name: mpt_causal_lm, d_model: 8, n_heads: 2, n_layers: 1, max_seq_len: 4, vocab_size: 16, no_bias: true, attn_config: {attn_type: grouped_query_attention, kv_n_heads: 1, rope: true}, ffn_config: {ffn_type: mptglu}, tie_word_embeddings: false, norm_type: low_precision_rmsnorm}\noptimizer: {name: decoupled_adamw, betas: [0.9, 0.99]}\nfsdp_config: {sharding_strategy: HYBRID_SHARD, data_parallel_replicate_degree: 2, mixed_precision: {param_dtype: bf16, reduce_dtype: fp32}, activation_checkpointing: true, backward_prefetch: NONE, limit_all_gathers: false}\nalgorithms: {gradient_clipping: {clipping_type: adaptive}}\n",
		"max_seq_len: &a ${max_seq_len}\nmodel: *a\n",
		"x: &x [*x]\n",
		"max_seq_len: ${a.b}\na:\n  b: ${c}\nc: \"7${a.b}\"\n",
		"max_seq_len: 8\nglobal_train_batch_size: 128\ndevice_train_microbatch_size: 3\nprecision: fp32\nmodel: {name: mpt_causal_lm, d_model: 16, n_heads: 4, n_layers: 2, expansion_ratio: 2.5, attn_config: {attn_impl: torch}, loss_fn: torch_crossentropy}\noptimizer: {name: decoupled_adamw}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if lf, err := ImportLLMFoundry("t.yaml", data, LLMFoundryOptions{}); err == nil {
			_ = lf.Scenario()
		}
		lf, err := ImportLLMFoundry("t.yaml", data, LLMFoundryOptions{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "t.yaml") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		out := lf.Scenario()
		for _, n := range lf.Notes {
			if strings.ContainsAny(n, "\n\r") {
				t.Fatalf("note %q is not one line", n)
			}
		}
		if lf.ModelName != "mpt_causal_lm" {
			return // hf_causal_lm without --hf keeps its SET_HF_CONFIG placeholder
		}
		s, err := Load("s.yaml", out, nil)
		if err != nil {
			t.Fatalf("the imported scenario does not load: %v\n%s", err, out)
		}
		if int64(s.Model.Params) != lf.Params {
			t.Fatalf("%d parameters, header %d", s.Model.Params, lf.Params)
		}
	})
}
