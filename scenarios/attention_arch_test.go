package scenarios

import (
	"strings"
	"testing"
)

// TestGptOssNoSDPA: transformers has no SDPA path for gpt-oss
// (GptOssPreTrainedModel._supports_sdpa = False at 6edf5b31), so
// training.attention: sdpa on a GptOssForCausalLM model is refused at the
// key with the fix, from the file, a --set flag or a stack preset; flash
// and eager load, and sdpa on another class (Qwen3-30B-A3B) loads.
func TestGptOssNoSDPA(t *testing.T) {
	const base = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: %s, layers: 4, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n"
	doc := func(cfg, tail string) []byte {
		return []byte(strings.Replace(base, "%s", cfg, 1) + tail)
	}
	// The fix says how flash is timed, as the run's attention line names
	// the kernel (fa2), not that flash is a sink-taking kernel (QA14
	// finding 9).
	const fix = `training.attention=sdpa: GptOssForCausalLM has no SDPA path: GptOssPreTrainedModel sets _supports_sdpa = False (models/gpt_oss/modeling_gpt_oss.py at 6edf5b31), so transformers refuses attn_implementation="sdpa": set training.attention: eager (attn_implementation="eager", transformers' choice when none is given) or flash for a fused kernel that takes the sinks, such as FlexAttention (attn_implementation="flex_attention"); flash is timed at training.attention_kernel's published rate (fa2 unless set, a stand-in: FlashAttention-2 takes no sinks, Dao-AILab/flash-attention#1797), and the sinks' softmax column is not modelled`
	const ttFix = `under stack torchtitan the model is torchtitan's gpt_oss, which attends only through FlexAttention (torchtitan/models/gpt_oss/model/args.py attn_type "flex" at 238fa99), as zerosim import torchtitan writes it: set training.attention: flash and training.attention_kernel: flex (the sinks' softmax column is not modelled)`
	for _, c := range []struct {
		name string
		doc  []byte
		sets []string
		want string // "" loads
	}{
		{"file", doc("gpt-oss-20b.json", "training: {attention: sdpa}\n"), nil, "testdata/hf-extra/s.yaml:5:12: " + fix},
		{"flag", doc("gpt-oss-20b.json", ""), []string{"training.attention=sdpa"}, "testdata/hf-extra/s.yaml: --set training.attention=sdpa: " + fix},
		{"stack", doc("gpt-oss-20b.json", "stack: fms-fsdp\n"), nil, "testdata/hf-extra/s.yaml: stack fms-fsdp (training.attention=sdpa): " + fix},
		// qauser32 L7: under torchtitan the fix is torchtitan's kernel.
		{"stack torchtitan", doc("gpt-oss-20b.json", "stack: torchtitan\n"), nil, "testdata/hf-extra/s.yaml: stack torchtitan (training.attention=sdpa): training.attention=sdpa: GptOssForCausalLM has no SDPA path: " + ttFix},
		{"stack torchtitan, flex", doc("gpt-oss-20b.json", "stack: torchtitan\ntraining: {attention: flash, attention_kernel: flex}\n"), nil, ""},
		{"flash", doc("gpt-oss-20b.json", "training: {attention: flash}\n"), nil, ""},
		{"eager", doc("gpt-oss-20b.json", "training: {attention: eager}\n"), nil, ""},
		{"other class", doc("qwen3-30b-a3b.json", "training: {attention: sdpa}\n"), nil, ""},
	} {
		_, err := Load("testdata/hf-extra/s.yaml", c.doc, c.sets)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || !strings.HasSuffix(err.Error(), fix) && !strings.HasSuffix(err.Error(), ttFix) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: error %v, want one line starting %q", c.name, err, c.want)
		}
	}
}
