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

// TestUnitTensors pins each stack's tensors of a unit, from the
// architecture formulas. The tiny Llama: q, o Linear(64, 64) = 4,096, k,
// v Linear(64, 32) = 2,048, gate, up, down 64·128 = 8,192, norms 64;
// Megatron fuses linear_qkv Linear(64, 64+2·32) = 8,192 and linear_fc1
// Linear(64, 2·128) = 16,384 and keeps each norm in the Linear after it.
// The tiny GPT under Megatron: linear_qkv Linear(64, 3·64) = 12,288 + bias
// 192, linear_fc1 and linear_fc2 64·256 = 16,384 + biases, LayerNorms of
// weight and bias. Both sum to buildLayers' block. transformers' tensors
// are scenarios.UnitShapes', named by index.
func TestUnitTensors(t *testing.T) {
	for _, tc := range []struct {
		model string
		unit  int
		style tensorStyle
		want  string
	}{
		{tinyLlama, 1, styleSeparate, "0 64, 1 64, 2 4096, 3 2048, 4 2048, 5 4096, 6 8192, 7 8192, 8 8192"},
		{tinyLlama, 1, styleMegatron, "self_attention.linear_proj.weight 4096, self_attention.linear_qkv.layer_norm_weight 64, self_attention.linear_qkv.weight 8192, mlp.linear_fc1.layer_norm_weight 64, mlp.linear_fc1.weight 16384, mlp.linear_fc2.weight 8192"},
		{tinyLlama, 0, styleMegatron, "word_embeddings.weight 16384"},
		{tinyLlama, 3, styleMegatron, "final_layernorm.weight 64"},
		{tinyLlama, 4, styleMegatron, "output_layer.weight 16384"},
		{tinyGPT, 1, styleMegatron, "self_attention.linear_proj.weight 4096, self_attention.linear_proj.bias 64, self_attention.linear_qkv.layer_norm_weight 64, self_attention.linear_qkv.layer_norm_bias 64, self_attention.linear_qkv.weight 12288, self_attention.linear_qkv.bias 192, mlp.linear_fc1.layer_norm_weight 64, mlp.linear_fc1.layer_norm_bias 64, mlp.linear_fc1.weight 16384, mlp.linear_fc1.bias 256, mlp.linear_fc2.weight 16384, mlp.linear_fc2.bias 64"},
		{tinyGPT, 0, styleMegatron, "word_embeddings.weight 16384, position_embeddings.weight 8192"},
		{tinyGPT, 3, styleMegatron, "final_layernorm.weight 64, final_layernorm.bias 64"},
		// An imported block with dims: Llama 3.1 8B (hidden 4096, 32
		// heads, 8 kv heads of 128, ffn 14336) holds TestLlamaBlockParams'
		// 218,112,000 per layer; Qwen2.5 7B (hidden 3584, 28 heads, 4 kv
		// heads of 128, ffn 18944) has q, k and v biases: linear_qkv
		// Linear(3584, 3584 + 2·512) = 16,515,072 + bias 4,608.
		{"preset: llama3.1-8b, layers: 1", 1, styleMegatron, "self_attention.linear_proj.weight 16777216, self_attention.linear_qkv.layer_norm_weight 4096, self_attention.linear_qkv.weight 25165824, mlp.linear_fc1.layer_norm_weight 4096, mlp.linear_fc1.weight 117440512, mlp.linear_fc2.weight 58720256"},
		{"preset: qwen2.5-7b, layers: 1", 1, styleMegatron, "self_attention.linear_proj.weight 12845056, self_attention.linear_qkv.layer_norm_weight 3584, self_attention.linear_qkv.weight 16515072, self_attention.linear_qkv.bias 4608, mlp.linear_fc1.layer_norm_weight 3584, mlp.linear_fc1.weight 135790592, mlp.linear_fc2.weight 67895296"},
	} {
		s := loadTensorModel(t, tc.model, "")
		var got []string
		for _, p := range unitTensors(&s.Model, tc.unit, tc.style) {
			got = append(got, fmt.Sprintf("%s %d", p.tensorName(), p.numel))
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

// TestExpertTensors lays out Mixtral 8x7B's routed experts (hidden 4096,
// 8 experts of ffn 14336; mistralai/Mixtral-8x7B-v0.1 config.json) at ep 4:
// a rank holds 2 whole experts, each transformers' gate, up and down
// Linear(4096, 14336) of 58,720,256 (scenarios.UnitShapes), or
// Megatron's SequentialMLP linear_fc1 Linear(4096, 2·14336) of 117,440,512
// and linear_fc2 of 58,720,256. The block beside them is, under Megatron,
// linear_proj 4096² = 16,777,216, the qkv norm 4096, linear_qkv
// 4096·(4096 + 2·8·128) = 25,165,824, pre_mlp_layernorm 4096 and the
// router Linear(4096, 8) = 32,768.
func TestExpertTensors(t *testing.T) {
	for _, tc := range []struct {
		comm  string
		group string
		want  string
	}{
		{"padding: megatron", "expert", "experts.0.local_experts.0.linear_fc1.weight 117440512, experts.0.local_experts.0.linear_fc2.weight 58720256, experts.0.local_experts.1.linear_fc1.weight 117440512, experts.0.local_experts.1.linear_fc2.weight 58720256"},
		{"padding: toy", "expert", "experts.0.0 58720256, experts.0.1 58720256, experts.0.2 58720256, experts.0.3 58720256, experts.0.4 58720256, experts.0.5 58720256"},
		{"padding: megatron", "dense", "block.0.self_attention.linear_proj.weight 16777216, block.0.self_attention.linear_qkv.layer_norm_weight 4096, block.0.self_attention.linear_qkv.weight 25165824, block.0.pre_mlp_layernorm.weight 4096, block.0.mlp.router.weight 32768"},
	} {
		s := loadTensorModel(t, "preset: mixtral-8x7b, layers: 1", tc.comm, "parallelism.ep=4")
		gs, err := BufferLayouts(s)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range gs {
			for _, p := range g.Layout.Params {
				if g.Name == tc.group && strings.HasPrefix(p.Name, "experts.0") == (tc.group == "expert") && (tc.group == "expert" || strings.HasPrefix(p.Name, "block.0")) {
					got = append(got, fmt.Sprintf("%s %d", p.Name, p.Numel))
				}
			}
		}
		if g := strings.Join(got, ", "); g != tc.want {
			t.Errorf("%s, group %s:\n got %s\nwant %s", tc.comm, tc.group, g, tc.want)
		}
	}
}

// TestListedTensorsKept: a layer list's own tensors are laid out as
// listed, at every stage. Unit a lists w and v of 32×64 = 2,048 each;
// unit b (64) lists none. Buckets of 4,000 B are 2,000 bf16 elements, so
// under Megatron's rules at stage 1 b, then a.v (span 2,112) close bucket
// 0 = [0, 2,176) (2,112 padded to 128), a.w bucket 1 = [2,176, 4,224); at
// stage 3 a is one bucket of its two tensors.
func TestListedTensorsKept(t *testing.T) {
	model := "layer_list: [{name: a, params: 4096, tensors: [{name: w, shape: [32, 64]}, {name: v, shape: [32, 64]}]}, {name: b, params: 64}]"
	for _, tc := range []struct {
		stage   int
		buckets []Bucket
	}{
		{1, []Bucket{{0, 2176, 2112, 1, 2}, {2176, 2048, 2048, 0, 0}}},
		{3, []Bucket{{0, 128, 64, 2, 2}, {128, 4096, 4096, 0, 1}}},
	} {
		s := loadTensorModel(t, model, "padding: megatron, bucket_size: 4000B", fmt.Sprintf("parallelism.zero_stage=%d", tc.stage))
		gs, err := BufferLayouts(s)
		if err != nil {
			t.Fatal(err)
		}
		l := gs[0].Layout
		var names []string
		for _, p := range l.Params {
			names = append(names, p.Name)
		}
		if n := strings.Join(names, " "); n != "a.w a.v b" || !slices.Equal(l.Buckets, tc.buckets) {
			t.Errorf("stage %d: params %s, buckets %v; want a.w a.v b, %v", tc.stage, n, l.Buckets, tc.buckets)
		}
	}
}
