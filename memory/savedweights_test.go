package memory

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// savedWeightsYAML is DeepSpeedExamples' training/bf16_master_weight model
// (testdata/validation/dsx-bf16-master-weight-6.86b.yaml) cut to 8 blocks:
// post-LN nn.MultiheadAttention (in_proj 3h×h and out_proj h×h, biased)
// and a biased GELU MLP (4h×h, h×4h), h = 4096, learned positions, an
// untied biased output; DeepSpeed ZeRO-3 bf16 on 4 GPUs, batch 1 × 512,
// built outside deepspeed.zero.Init.
const savedWeightsYAML = `version: 1
stack: deepspeed
cluster:
  nodes: 1
  gpus_per_node: 4
  gpu: H100-80GB
model:
  kind: transformer
  arch: gpt
  hidden: 4096
  layers: 8
  heads: 32
  vocab: 50000
  seq_len: 512
  layer_list:
    - {name: embedding, params: 206897152}
    - {name: block.0, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.1, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.2, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.3, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.4, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.5, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.6, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: block.7, params: 201379840, dims: {hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, ffn: 16384, qkv_bias: true, o_bias: true, mlp_bias: true}}
    - {name: lm_head, params: 204850000}
parallelism:
  dp: 4
  zero_stage: 3
communication:
  memory_efficient_linear: false
training:
  micro_batch: 1
  param_dtype: bf16
  optimizer: adamw
  attention: eager
`

func savedWeightsReport(t *testing.T, set ...string) *Report {
	t.Helper()
	s, err := scenarios.Load("saved.yaml", []byte(savedWeightsYAML), set)
	if err != nil {
		t.Fatal(err)
	}
	return mustAnalyze(t, s, Options{})
}

// TestSavedGatheredWeights checks the weights autograd keeps through
// weight.t() views when DeepSpeed's memory-efficient linear is not
// installed: every block DeepSpeed releases in forward keeps its four
// nn.Linear weights, 12·h² bf16 elements, from its forward to its
// backward. stage3_max_reuse_distance 1e9 keeps the units whose later
// parameters, forward and backward, stay under 1e9 (lm_head: 0; block.7:
// 2·204,850,000; block.6: 2·406,229,840): blocks 0–5 are released.
func TestSavedGatheredWeights(t *testing.T) {
	const h = 4096
	perBlock := int64(12 * h * h * 2) // in_proj 3h², out_proj h², MLP 8h², bf16
	want := 6 * perBlock
	off := savedWeightsReport(t)
	c := off.Component(CompSavedWeights)
	if c.AtRest != 0 || c.Peak != want {
		t.Errorf("saved gathered weights: at rest %d, peak %d; want 0 and %d (6 released blocks × 12·4096² × 2 B)", c.AtRest, c.Peak, want)
	}
	for u, x := range off.Units {
		w := int64(0)
		if strings.HasPrefix(x.Name, "block.") && u <= 6 { // block.0 is unit 1
			w = perBlock
		}
		if x.SavedWeights != w {
			t.Errorf("unit %s: SavedWeights %d, want %d", x.Name, x.SavedWeights, w)
		}
	}
	// The forward ends holding every released block's weights: its peak
	// rises by all of them over the same run with the wrapper installed.
	on := savedWeightsReport(t, "communication.memory_efficient_linear=true")
	if got := on.Component(CompSavedWeights); got.Peak != 0 {
		t.Errorf("memory_efficient_linear true: saved gathered weights peak %d, want 0", got.Peak)
	}
	// The saved weights stay allocated: DeepSpeed's gather pool (the
	// released blocks the allocator caches) holds none of them.
	if d := on.GatherPool - off.GatherPool; d != want {
		t.Errorf("gather pool falls by %d, want %d", d, want)
	}
	fwd := func(r *Report) int64 {
		for _, p := range r.PhasePeaks {
			if p.Phase == PhaseForward {
				return p.Bytes
			}
		}
		t.Fatal("no forward peak")
		return 0
	}
	if d := fwd(off) - fwd(on); d != want {
		t.Errorf("forward peak rises by %d, want %d", d, want)
	}
	// Checkpointed blocks save nothing in forward (train.py's
	// checkpoint(layer, x, use_reentrant=False)).
	if got := savedWeightsReport(t, "training.recompute=full").Component(CompSavedWeights); got.Peak != 0 {
		t.Errorf("recompute full: saved gathered weights peak %d, want 0", got.Peak)
	}
}

// TestMemoryEfficientLinearRefused checks that the key is refused outside
// DeepSpeed's ZeRO-3.
func TestMemoryEfficientLinearRefused(t *testing.T) {
	for _, set := range [][]string{
		{"parallelism.zero_stage=2"},
		{"communication.boundary=fsdp2"},
	} {
		_, err := scenarios.Load("saved.yaml", []byte(savedWeightsYAML), set)
		if err == nil || !strings.Contains(err.Error(), "memory_efficient_linear is DeepSpeed ZeRO-3's") {
			t.Errorf("%v: err %v, want memory_efficient_linear refused", set, err)
		}
	}
}

// TestSavedGatheredWeightsGPT2Conv1D: GPT-2's blocks are Conv1D, whose
// forward hands addmm the weight itself, a leaf (transformers
// pytorch_utils.py Conv1D.forward at 04ae7571: torch.addmm(self.bias,
// x.view(-1, x.size(-1)), self.weight)), so DeepSpeed's swap frees it:
// the same model named GPT2LMHeadModel keeps nothing, while any other
// architecture name keeps its blocks' 12·h² bf16 elements.
func TestSavedGatheredWeightsGPT2Conv1D(t *testing.T) {
	const perBlock = int64(12 * 4096 * 4096 * 2)
	for _, c := range []struct {
		arch string
		want int64
	}{
		{"GPT2LMHeadModel", 0},
		{"OPTForCausalLM", 6 * perBlock}, // nn.Linear blocks
	} {
		r := savedWeightsReport(t, "model.architecture="+c.arch)
		if got := r.Component(CompSavedWeights).Peak; got != c.want {
			t.Errorf("architecture %s: saved gathered weights peak %d, want %d", c.arch, got, c.want)
		}
	}
}
