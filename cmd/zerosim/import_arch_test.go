package main

import (
	"strings"
	"testing"
)

// TestImportedModelNamesItsArchitecture: a model an importer prints with
// its layer list resolves to the model model.hf_config gives, so run's
// header names the config's class (transformer (LlamaForCausalLM)) either
// way; without model.architecture in the printed scenario the imported
// path said only "transformer".
func TestImportedModelNamesItsArchitecture(t *testing.T) {
	const hf = "../../scenarios/testdata/hf/llama-2-7b/config.json"
	const want = "model:               transformer (LlamaForCausalLM), 6,738,415,616 params (35 layers/units)"
	_, direct, errOut := runMain(t, "", "run", "--set", "model.hf_config="+hf)
	if !strings.Contains(direct, want+"\n") {
		t.Fatalf("run --set model.hf_config: no %q in the header (stderr %s):\n%s", want, errOut, direct)
	}
	for _, c := range []struct {
		args []string
		arch string
	}{
		{[]string{"import", "deepspeed", "../../docs/examples/deepspeed/flagperf-llama2-7b.json", "--hf", hf, "--gpu", "A100-80GB"}, want},
		{[]string{"import", "accelerate", "../../scenarios/testdata/accelerate/accelerate-fsdp.yaml", "--hf", hf, "--gpu", "H100-80GB"}, want},
		{[]string{"import", "torchtitan", "../../scenarios/testdata/torchtitan/qwen3_moe_debug.toml", "--nodes", "1", "--gpu", "H100-80GB"}, "model:               transformer (Qwen3MoeForCausalLM), "},
	} {
		code, scenario, errOut := runMain(t, "", c.args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, errOut)
		}
		code, out, errOut := runMain(t, scenario, "run", "-")
		if code != 0 {
			t.Fatalf("%q | run -: exit %d: %s", c.args, code, errOut)
		}
		if !strings.Contains(out, c.arch) {
			t.Errorf("%q | run -: the header lacks %q:\n%s", c.args, c.arch, head(out, 4))
		}
	}
}

// head is the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
