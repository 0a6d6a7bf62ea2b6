package scenarios

import (
	"strings"
	"testing"
)

// TestLocalAttention holds the attention stack megatron runs under
// training.transformer_impl: local (localAttention, the rule `zerosim
// import megatron` writes): Megatron-core's local spec runs its own
// DotProductAttention (LocalSpecProvider.core_attention,
// megatron/core/models/backends.py at d98e8a64), never Transformer
// Engine's. The preset's te resolves to eager with a load note, or to
// flash-attn 2 when the scenario says attention: flash; a te the file or a
// --set gives beside local is refused at its key.
func TestLocalAttention(t *testing.T) {
	const doc = "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.2-1b, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 1}\ntraining:\n  micro_batch: 2\n"
	for _, c := range []struct {
		name, keys string
		set        []string
		att        Attention
		kernel     AttentionKernel
		note, err  string // "" none; else a substring of the one note, or the error
	}{
		{"transformer_engine: preset te", "", nil, AttentionFlash, KernelTE, "", ""},
		{"local: preset te becomes eager", "  transformer_impl: local\n", nil, AttentionEager, KernelEager,
			"m.yaml:8:3: transformer_impl: local runs attention_kernel eager, not stack megatron's Transformer Engine attention: Megatron-core's own DotProductAttention", ""},
		{"local, attention eager: eager", "  transformer_impl: local\n  attention: eager\n", nil, AttentionEager, KernelEager, "DotProductAttention", ""},
		{"local, attention flash: fa2 kept flash", "  transformer_impl: local\n  attention: flash\n", nil, AttentionFlash, KernelFA2, "runs attention_kernel fa2", ""},
		{"local, --set attention=flash", "  transformer_impl: local\n", []string{"training.attention=flash"}, AttentionFlash, KernelFA2, "--use-legacy-models --use-flash-attn", ""},
		{"local, attention_kernel fa2 given", "  transformer_impl: local\n  attention_kernel: fa2\n", nil, AttentionFlash, KernelFA2, "", ""},
		{"local, attention_kernel te refused", "  transformer_impl: local\n  attention_kernel: te\n", nil, "", "", "",
			"m.yaml:9:3: attention_kernel=te is not what transformer_impl: local runs"},
		{"local, --set attention_kernel=te refused", "  transformer_impl: local\n", []string{"training.attention_kernel=te"}, "", "", "",
			"m.yaml: --set training.attention_kernel=te: attention_kernel=te is not what transformer_impl: local runs"},
		{"local, attention_kernel cudnn (TE's fused) refused", "  transformer_impl: local\n  attention_kernel: cudnn\n", nil, "", "", "",
			"m.yaml:9:3: attention_kernel=cudnn is not what"},
		{"local, attention sdpa refused", "  transformer_impl: local\n  attention: sdpa\n", nil, "", "", "",
			"m.yaml:9:3: training.attention=sdpa is not what transformer_impl: local runs: its kernels are Megatron-core's own DotProductAttention (eager) or flash-attn 2 (fa2, --use-legacy-models --use-flash-attn)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load("m.yaml", []byte(doc+c.keys), c.set)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) ||
					!strings.Contains(err.Error(), "(use training.attention: eager (local's DotProductAttention) or flash (--use-legacy-models --use-flash-attn)") ||
					strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line starting %q with the fix", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Training.Attention != c.att || s.Training.AttentionKernel != c.kernel {
				t.Errorf("attention %s, kernel %s; want %s, %s", s.Training.Attention, s.Training.AttentionKernel, c.att, c.kernel)
			}
			checkOneNote(t, s.Warnings, "transformer_impl: local runs", c.note, "backends.py")
		})
	}
}

// checkOneNote holds the notes about a subject (those containing about):
// none when note is "", else exactly one, containing note and every also.
func checkOneNote(t *testing.T, notes []string, about, note string, also ...string) {
	t.Helper()
	var got []string
	for _, n := range notes {
		if strings.Contains(n, about) {
			got = append(got, n)
		}
	}
	if note == "" {
		if len(got) > 0 {
			t.Errorf("notes %q, want none about %q", got, about)
		}
		return
	}
	if len(got) != 1 || !strings.Contains(got[0], note) {
		t.Errorf("notes %q about %q, want one with %q", got, about, note)
		return
	}
	for _, a := range also {
		if !strings.Contains(got[0], a) {
			t.Errorf("note %q, want it to hold %q too", got[0], a)
		}
	}
}
