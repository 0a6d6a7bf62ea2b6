package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportLLMFoundryCLI: llm-foundry's mpt-7b.yaml imported for 16 nodes
// of H100s runs as printed ("import > s.yaml && run s.yaml"), with MPT-7B's
// 6,658,859,008 parameters (llm-foundry's NumParams column) and the file's
// 8 × 2,048-token micro-batch on dp 128 (global batch 1024: one micro-step);
// "auto" without --micro-batch and a tp_config are one line on stderr
// naming file:line:column, exit code 2.
func TestImportLLMFoundryCLI(t *testing.T) {
	const dir = "../../scenarios/testdata/llmfoundry/"
	out, stderr, code := runValidateCLI(t, nil, "import", "llm-foundry", dir+"mpt-7b.yaml", "--nodes", "16", "--gpu", "H100-80GB")
	if code != 0 || stderr != "" || !strings.HasPrefix(out, "# Imported by zerosim import llm-foundry from "+dir+"mpt-7b.yaml\n") {
		t.Fatalf("import: code %d: %s\n%s", code, stderr, out)
	}
	s := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(s, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	run, stderr, code := runValidateCLI(t, nil, "run", s)
	for _, want := range []string{"model:               transformer, 6,658,859,008 params",
		"cluster:             16 nodes × 8 H100-80GB", "ZeRO stage:          3\n",
		"(2,097,152 tokens per step: micro-batch 8 × 1 accumulation × dp 128 × 2,048 tokens)"} {
		if code != 0 || !strings.Contains(run, want) {
			t.Errorf("run: code %d, no %q: %s\n%s", code, want, stderr, run)
		}
	}
	tmp := t.TempDir()
	src, err := os.ReadFile(dir + "mpt-7b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	auto := filepath.Join(tmp, "auto.yaml")
	tp := filepath.Join(tmp, "tp.yaml")
	for name, data := range map[string]string{
		auto: strings.Replace(string(src), "device_train_microbatch_size: 8", "device_train_microbatch_size: auto", 1),
		tp:   strings.Replace(string(src), "# FSDP\n", "tp_config:\n  tensor_parallel_degree: 2\n", 1),
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{auto}, "zerosim: " + auto + ":86:31: device_train_microbatch_size is \"auto\""},
		{[]string{tp}, "zerosim: " + tp + ":91:3: tp_config (tensor parallelism) is not modelled"},
		{[]string{dir + "mpt-7b.yaml", "--gpu", "X100"}, "zerosim: --gpu \"X100\" is not a GPU preset"},
	} {
		_, stderr, code = runValidateCLI(t, nil, append([]string{"import", "llm-foundry"}, c.args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("%s: code %d, %q; want %q…", c.args, code, stderr, c.want)
		}
	}
	out, _, code = runValidateCLI(t, nil, "import", "llm-foundry", auto, "--micro-batch", "4", "--nodes", "16", "--gpu", "H100-80GB")
	if code != 0 || !strings.Contains(out, "  micro_batch: 4  # --micro-batch, for device_train_microbatch_size auto\n  grad_accum: 2  #") {
		t.Errorf("--micro-batch 4: code %d\n%s", code, out)
	}
}

// TestImportLLMFoundryHFPathLoadsAnywhere (QA19 L13): import llm-foundry
// --hf with a path relative to the working directory wrote it as given, so
// the scenario saved elsewhere failed ("a relative path is read from the
// scenario's directory"). The path is written absolute: the scenario saved
// in another directory loads, with the config's 8,030,261,248 parameters.
func TestImportLLMFoundryHFPathLoadsAnywhere(t *testing.T) {
	hf := filepath.Join("..", "..", "scenarios", "testdata", "hf", "llama-3.1-8b", "config.json")
	code, out, errOut := runMain(t, "", "import", "llm-foundry", filepath.Join("..", "..", "scenarios", "testdata", "llmfoundry", "hf-llama-3.1-8B.yaml"),
		"--hf", hf, "--nodes", "1", "--gpu", "H100-80GB")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	abs, _ := filepath.Abs(hf)
	if !strings.Contains(out, "hf_config: "+strconv.Quote(abs)) {
		t.Errorf("the scenario does not name %s:\n%s", abs, out)
	}
	saved := filepath.Join(t.TempDir(), "sub", "o.yaml")
	if err := os.MkdirAll(filepath.Dir(saved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(saved, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runMain(t, "", "memory", saved, "--format", "json")
	if code != 0 || !strings.Contains(out, `"params": 8030261248`) {
		t.Errorf("memory %s: exit %d, %s; want the 8,030,261,248 parameters of the config", saved, code, errOut)
	}
}
