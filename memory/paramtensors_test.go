package memory

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// loadTensorModel loads a one-node scenario of the given model and
// communication lines (YAML flow mappings' contents).
func loadTensorModel(t *testing.T, model, comm string, sets ...string) *scenarios.Scenario {
	t.Helper()
	y := fmt.Sprintf(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {%s}
parallelism: {dp: 8, zero_stage: 1}
training: {micro_batch: 1}
communication: {%s}
`, model, comm)
	s, err := scenarios.Load("t.yaml", []byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A tiny Llama (h 64, 4 heads, 2 kv heads, ffn 128, vocab 256) and GPT (h
// 64, 4 heads, ffn 256, vocab 256, 128 positions): kv = 2·64/4 = 32.
const (
	tinyLlama = "kind: transformer, arch: llama, hidden: 64, layers: 2, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq_len: 128"
	tinyGPT   = "kind: transformer, arch: gpt, hidden: 64, layers: 2, heads: 4, ffn: 256, vocab: 256, seq_len: 128"
)

// TestUnitTensors pins each stack's tensors of a block, from the
// architecture formulas: Llama's q, o Linear(64, 64) = 4,096, k, v
// Linear(64, 32) = 2,048, gate, up, down 64·128 = 8,192, norms 64;
// Megatron fuses linear_qkv Linear(64, 64+2·32) = 8,192 and linear_fc1
// Linear(64, 2·128) = 16,384 and keeps each norm in the Linear after it.
// GPT-2's c_attn is Conv1D(64, 3·64) = 12,288 + bias 192, c_fc and
// c_proj 64·256 = 16,384 + biases. Both sum to buildLayers' block.
func TestUnitTensors(t *testing.T) {
	for _, tc := range []struct {
		model string
		unit  int
		style tensorStyle
		want  string
	}{
		{tinyLlama, 1, styleSeparate, "q_proj.weight 4096, k_proj.weight 2048, v_proj.weight 2048, o_proj.weight 4096, gate_proj.weight 8192, down_proj.weight 8192, up_proj.weight 8192, input_layernorm.weight 64, post_attention_layernorm.weight 64"},
		{tinyLlama, 1, styleMegatron, "self_attention.linear_proj.weight 4096, self_attention.linear_qkv.layer_norm_weight 64, self_attention.linear_qkv.weight 8192, mlp.linear_fc1.layer_norm_weight 64, mlp.linear_fc1.weight 16384, mlp.linear_fc2.weight 8192"},
		{tinyLlama, 0, styleMegatron, "word_embeddings.weight 16384"},
		{tinyLlama, 0, styleSeparate, "embed_tokens.weight 16384"},
		{tinyLlama, 3, styleMegatron, "final_layernorm.weight 64"},
		{tinyLlama, 4, styleMegatron, "output_layer.weight 16384"},
		{tinyGPT, 1, styleSeparate, "ln_1.weight 64, ln_1.bias 64, attn.c_attn.weight 12288, attn.c_attn.bias 192, attn.c_proj.weight 4096, attn.c_proj.bias 64, ln_2.weight 64, ln_2.bias 64, mlp.c_fc.weight 16384, mlp.c_fc.bias 256, mlp.c_proj.weight 16384, mlp.c_proj.bias 64"},
		{tinyGPT, 1, styleMegatron, "self_attention.linear_proj.weight 4096, self_attention.linear_proj.bias 64, self_attention.linear_qkv.layer_norm_weight 64, self_attention.linear_qkv.layer_norm_bias 64, self_attention.linear_qkv.weight 12288, self_attention.linear_qkv.bias 192, mlp.linear_fc1.layer_norm_weight 64, mlp.linear_fc1.layer_norm_bias 64, mlp.linear_fc1.weight 16384, mlp.linear_fc1.bias 256, mlp.linear_fc2.weight 16384, mlp.linear_fc2.bias 64"},
		{tinyGPT, 0, styleMegatron, "word_embeddings.weight 16384, position_embeddings.weight 8192"},
		{tinyGPT, 3, styleSeparate, "ln_f.weight 64, ln_f.bias 64"},
	} {
		s := loadTensorModel(t, tc.model, "")
		var got []string
		for _, p := range unitTensors(&s.Model, tc.unit, tc.style) {
			got = append(got, fmt.Sprintf("%s %d", p.fqn(), p.numel))
		}
		if g := strings.Join(got, ", "); g != tc.want {
			t.Errorf("%s unit %d style %d:\n got %s\nwant %s", s.Model.LayerList[tc.unit].Name, tc.unit, tc.style, g, tc.want)
		}
	}
	// A unit sized otherwise (an import's block with biases the dims do
	// not give) is one parameter.
	s := loadTensorModel(t, tinyLlama, "")
	s.Model.LayerList[1].Params++
	if ts := unitTensors(&s.Model, 1, styleMegatron); ts != nil {
		t.Errorf("a block of one more parameter: %v, want none", ts)
	}
}

// TestMegatronTensorBuckets lays out the tiny Llama's buffer under
// Megatron's rules by hand. Forward order: embedding 16,384 (param 0);
// per block linear_proj 4,096, qkv norm 64, linear_qkv 8,192, fc1 norm 64,
// linear_fc1 16,384, linear_fc2 8,192 (params 1–6 and 7–12); final norm 64
// (13); output_layer 16,384 (14). Buckets of 40,000 B of bf16 gradients
// are 20,000 elements; Megatron visits the tensors backwards and closes a
// bucket once it spans ≥ 20,000:
//
//	stage 1 (starts aligned to 64, bucket ends to lcm(8, 128) = 128):
//	  output 0–16,384, norm –16,448, fc2 (block 1) –24,640 ≥ 20,000:
//	    bucket 0 = [0, 24,704) (24,640 padded to 128), params 12–14;
//	  fc1 24,704–41,088, norm –41,152, qkv –49,344 (span 24,640):
//	    bucket 1 = [24,704, 49,408), params 9–11;
//	  norm 49,408–49,472, proj –53,568, fc2 (block 0) –61,760, fc1
//	    –78,144 (span 28,736): bucket 2 = [49,408, 78,208), params 5–8;
//	  norm 78,208–78,272, qkv –86,464, norm –86,528, proj –90,624,
//	    embedding –107,008 (span 28,800, a multiple of 128): bucket 3,
//	    params 0–4.
//	stage 0 (plain DDP: no alignment): the same tensors close the same
//	  buckets, of exactly their elements: 24,640, 24,640, 28,736, 28,800.
//	stage 3: one FSDP flat parameter per unit, as before: 5 buckets.
//
// With one parameter per block (the layout before tensors) stage 1 had 3
// buckets: output + norm + block 1, block 0, embedding.
func TestMegatronTensorBuckets(t *testing.T) {
	type bk struct{ start, size, numel, first, last int64 }
	for _, tc := range []struct {
		name  string
		stage int
		want  []bk
	}{
		{"stage1", 1, []bk{{0, 24704, 24640, 12, 14}, {24704, 24704, 24640, 9, 11}, {49408, 28800, 28736, 5, 8}, {78208, 28800, 28800, 0, 4}}},
		{"stage0", 0, []bk{{0, 24640, 24640, 12, 14}, {24640, 24640, 24640, 9, 11}, {49280, 28736, 28736, 5, 8}, {78016, 28800, 28800, 0, 4}}},
		{"stage3", 3, []bk{{0, 16384, 16384, 4, 4}, {16384, 128, 64, 3, 3}, {16512, 36992, 36992, 2, 2}, {53504, 36992, 36992, 1, 1}, {90496, 16384, 16384, 0, 0}}},
	} {
		s := loadTensorModel(t, tinyLlama, "padding: megatron, bucket_size: 40000B", fmt.Sprintf("parallelism.zero_stage=%d", tc.stage))
		gs, err := BufferLayouts(s)
		if err != nil {
			t.Fatal(err)
		}
		var got []bk
		for _, b := range gs[0].Layout.Buckets {
			got = append(got, bk{b.Start, b.Size, b.Numel, int64(b.FirstParam), int64(b.LastParam)})
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: buckets\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}

// TestMegatronTensorBucketCounts counts the buckets of published models
// by hand under Megatron's defaults. Llama 3 70B (hidden 8192, ffn 28672,
// 64 heads, 8 kv heads, vocab 128,256) at dp 256: buckets of
// max(40M, 1M·256) = 256,000,000 parameters; output_layer (1,050,673,152)
// closes bucket 0 alone; the final norm, block 79's linear_fc2
// (234,881,024) and linear_fc1 (469,762,048) bucket 1; then for every
// block b from 78 down to 0 the previous block's fc1 norm, linear_qkv
// (83,886,080), qkv norm and linear_proj (67,108,864) with block b's
// linear_fc2 (386 M) close one bucket and block b's linear_fc1 another;
// block 0's remainder and the embedding the last: 1 + 1 + 2·79 + 1 = 161
// (82 with one parameter per block). Llama 2 7B (hidden 4096, ffn 11008,
// vocab 32,000) at the default 40 MB (20 M bf16 gradients): lm_head
// (131 M) alone, then per block linear_fc2 (45.1 M, after the previous
// block's qkv norm and linear_proj of 16.8 M), linear_fc1 (90.2 M) and
// linear_qkv (50.3 M) one bucket each, the embedding the last: 1 + 3·32 +
// 1 = 98 (34 before).
func TestMegatronTensorBucketCounts(t *testing.T) {
	for _, tc := range []struct {
		name, model, comm string
		dp, want          int
	}{
		{"llama3-70b-dp256", "kind: transformer, arch: llama, hidden: 8192, layers: 80, heads: 64, kv_heads: 8, ffn: 28672, vocab: 128256, seq_len: 8192",
			"padding: megatron, bucket_size: 512MB", 256, 161},
		{"llama2-7b-default", "preset: llama2-7b", "padding: megatron", 8, 98},
	} {
		s := loadTensorModel(t, tc.model, tc.comm, fmt.Sprintf("parallelism.dp=%d", tc.dp), fmt.Sprintf("cluster.nodes=%d", tc.dp/8))
		gs, err := BufferLayouts(s)
		if err != nil {
			t.Fatal(err)
		}
		if n := gs[0].Buckets; n != tc.want {
			t.Errorf("%s: %d buckets, want %d", tc.name, n, tc.want)
		}
	}
}
