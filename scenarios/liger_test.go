package scenarios

import (
	"strings"
	"testing"
)

// TestLiger: training.liger loads on the Hugging Face Llama-family models
// Liger's apply_liger_kernel_to_llama, _mistral and _qwen2 patch, and is
// refused, with one line naming the key and the fix, where it does not
// apply or is not modelled.
func TestLiger(t *testing.T) {
	const base = `version: 1
cluster:
  nodes: 1
  gpus_per_node: 4
  gpu: A100-80GB
model:
  preset: PRESET
parallelism:
  dp: 4
  zero_stage: 3
training:
  param_dtype: bf16
  liger: true
`
	load := func(preset string, sets ...string) (*Scenario, error) {
		return Load("s.yaml", []byte(strings.Replace(base, "PRESET", preset, 1)), sets)
	}
	for _, preset := range []string{"qwen2.5-7b", "mistral-7b", "llama2-7b"} {
		for _, sets := range [][]string{nil, {"stack=deepspeed"}, {"training.cross_entropy=fp32"}} {
			s, err := load(preset, sets...)
			if err != nil {
				t.Errorf("%s %v: %v", preset, sets, err)
				continue
			}
			if !s.Training.Liger {
				t.Errorf("%s %v: liger not set", preset, sets)
			}
		}
	}
	for _, c := range []struct {
		preset string
		sets   []string
		want   string
	}{
		{"qwen2.5-7b", []string{"stack=torchtitan"}, "liger patches Hugging Face transformers models, and stack: torchtitan builds its own"},
		{"qwen2.5-7b", []string{"stack=megatron"}, "stack: megatron builds its own"},
		{"gpt3-125m", nil, "liger is modelled for Hugging Face Llama, Mistral and Qwen2 blocks, and this model's blocks are GPT's"},
		{"qwen3-8b", nil, "not Qwen3ForCausalLM"},
		{"mixtral-8x7b", nil, "not MixtralForCausalLM"},
		{"gemma2-9b", nil, "not Gemma2ForCausalLM"},
		{"qwen2.5-7b", []string{"training.compile=blocks"}, "liger does not go with training.compile=blocks"},
		{"qwen2.5-7b", []string{"training.norm_impl=fused"}, "so training.norm_impl=fused does not apply"},
		{"qwen2.5-7b", []string{"training.cross_entropy=fused"}, "so training.cross_entropy=fused does not apply"},
		{"qwen2.5-7b", []string{"training.rope_impl=rotation"}, "so training.rope_impl=rotation does not apply"},
		{"qwen2.5-7b", []string{"training.keep_logits=fp32"}, "returns no logits, so training.keep_logits does not apply"},
		{"qwen2.5-7b", []string{"training.param_dtype=fp32", "training.autocast=bf16", "communication.boundary=fsdp2"}, "not torch.autocast over an fp32 model"},
	} {
		_, err := load(c.preset, c.sets...)
		if err == nil {
			t.Errorf("%s %v: no error", c.preset, c.sets)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "liger") || strings.Contains(msg, "\n") {
			t.Errorf("%s %v: %q, want one line with %q", c.preset, c.sets, msg, c.want)
		}
	}
}

// TestImportAccelerateLigerDDP: --liger under distributed_type MULTI_GPU
// (DDP's autocast over fp32 parameters) is refused with one line.
func TestImportAccelerateLigerDDP(t *testing.T) {
	_, err := ImportAccelerate("a.yaml", []byte("distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n"), AccelerateOptions{Liger: true})
	if err == nil || !strings.Contains(err.Error(), "--liger under distributed_type MULTI_GPU") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
	a, err := ImportAccelerate("a.yaml", []byte("distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"), AccelerateOptions{Liger: true})
	if err != nil || a.Setting("training.liger") != "true" {
		t.Errorf("FSDP2 --liger: %v", err)
	}
}
