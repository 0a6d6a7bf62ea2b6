package zero

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestMegatronTemplatesImported holds the Megatron-LM functional tests'
// validation templates (testdata/validation/megatron-gpt3-functional-h100*.yaml)
// to what their README says they are: zerosim import megatron of each
// test's MODEL_ARGS (testdata/validation/megatron-args, copied from
// NVIDIA/Megatron-LM's model_config.yaml at d98e8a64) with --nodes 1
// --gpus-per-node 8 --tokenizer-vocab-size 50257 (the GPT-2 BPE
// vocab.json) on H100-80GB, line for line but for the name and the
// comments. The row of ..._uniform_full_recompute runs the first template
// with zero_stage 0 and recompute full, which the README says give its own
// import's step: the same allocated peak, to the byte.
func TestMegatronTemplatesImported(t *testing.T) {
	const dir = "../testdata/validation"
	opt := scenarios.MegatronOptions{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", TokenizerVocab: 50257}
	imported := func(test string) []byte {
		t.Helper()
		file := filepath.Join(dir, "megatron-args", test+".args")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := scenarios.ImportMegatron(file, data, opt)
		if err != nil {
			t.Fatalf("%s: %v", test, err)
		}
		return m.Scenario()
	}
	// body is a scenario's lines without comments and the name.
	body := func(y []byte) []string {
		var out []string
		for _, l := range strings.Split(string(y), "\n") {
			if i := strings.Index(l, "#"); i >= 0 {
				l = l[:i]
			}
			l = strings.TrimRight(l, " ")
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "name:") {
				continue
			}
			out = append(out, l)
		}
		return out
	}
	for _, c := range []struct{ test, template string }{
		{"gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer", "megatron-gpt3-functional-h100"},
		{"gpt3_mcore_te_tp1_pp1_dist_optimizer_no_mmap_bin_files", "megatron-gpt3-functional-h100-unfused"},
		{"gpt3_mcore_tp1_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather", "megatron-gpt3-functional-h100-fp16-local"},
	} {
		tmpl, err := os.ReadFile(filepath.Join(dir, c.template+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		got, want := body(imported(c.test)), body(tmpl)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			for i := range max(len(got), len(want)) {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("%s.yaml line %d of its body: %q, the import of %s writes %q", c.template, i+1, w, c.test, g)
					break
				}
			}
		}
	}

	peak := func(name string, data []byte, sets ...string) int64 {
		t.Helper()
		s, err := scenarios.Load(name, data, sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := memory.Analyze(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Peak
	}
	tmpl, err := os.ReadFile(filepath.Join(dir, "megatron-gpt3-functional-h100.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	row := peak("megatron-gpt3-functional-h100.yaml", tmpl, "parallelism.zero_stage=0", "training.recompute=full")
	own := peak("full_recompute.yaml", imported("gpt3_mcore_te_tp1_pp1_resume_torch_dist_uniform_full_recompute"))
	if row != own {
		t.Errorf("full-recompute row: the template with zero_stage 0, recompute full peaks at %d B, the test's own import at %d B", row, own)
	}
}
