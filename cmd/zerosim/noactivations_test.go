package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBareParamsSaysWhatItLeavesOut: a bare model.params counts no
// activations, attention or logits (qauser s28 H1: run, plan and validate
// said nothing, and plan recommended micro-batch 4 without checkpointing
// for a 13B that keeps at least 29.4 GiB of activations per 4,096-token
// sequence: scenarios.warnNoActivations derives it for Llama 2 13B).
// run, sweep, compare, fit, memory and validate warn once on stderr,
// naming the key and the fix; plan refuses with one line and exit 2; the
// seeds' model-state tables (memory and fit under --convention seed002,
// the published estimators) and verify's numerics print no warning.
func TestBareParamsSaysWhatItLeavesOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	data := "version: 1\nname: x\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {params: 13B, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 3}\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	warning := "zerosim: warning: " + file + ":4:9: model.params alone has no transformer dimensions: activations, attention and the output logits are not counted, so memory and step time are lower bounds (give model.preset, model.hf_config, or kind: transformer with hidden, layers and heads; docs/scenario-format.md)\n"
	for _, args := range [][]string{
		{"run", file},
		{"validate", file},
		{"memory", file, "--stage", "3"},
		{"sweep", file, "--grid", "training.micro_batch=1,2"},
		{"compare", file, "--vary", "parallelism.zero_stage=2,3"},
	} {
		out, errOut, code := runCLI(args...)
		if code != 0 || errOut != warning || out == "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and\n%q", args, code, errOut, warning)
		}
	}
	out, errOut, code := runCLI("plan", file, "--global-batch", "64")
	want := "zerosim: " + file + ":4:9: plan needs the model's shape: model.params alone has no transformer dimensions, so no activations are counted and every micro-batch would fit without checkpointing (give model.preset, model.hf_config, or kind: transformer with hidden, layers and heads; zerosim run and fit give this model's states)\n"
	if code != 2 || out != "" || errOut != want {
		t.Errorf("plan: exit %d, stdout %q, stderr %q; want 2, nothing and\n%q", code, out, errOut, want)
	}
	seed := exampleFile(t, "seed002-7b")
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"fit", seed}, true},
		{[]string{"fit", seed, "--convention", "seed002"}, false},
		{[]string{"memory", seed}, true},
		{[]string{"memory", seed, "--convention", "seed002"}, false},
		{[]string{"memory", seed, "--estimator", "deepspeed"}, false},
		{[]string{"verify", seed}, false},
	} {
		_, errOut, code := runCLI(tc.args...)
		if code != 0 || strings.Contains(errOut, "model.params alone") != tc.warn || !tc.warn && errOut != "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and the warning: %v", tc.args, code, errOut, tc.warn)
		}
	}
}

// TestBareCountOverflowNamesIt: a bare count whose step overflows int64
// names model.params beside micro_batch and seq_len, at the key that gave
// it (qauser s28 L2: "micro_batch 1 × seq_len 0 … lower
// training.micro_batch or model.seq_len" for params: 2^63−1, now refused
// at load by its range).
func TestBareCountOverflowNamesIt(t *testing.T) {
	seed := exampleFile(t, "seed002-7b")
	_, errOut, code := runCLI("run", seed, "--set", "model.params=1e15", "--set", "model.seq_len=4096")
	want := "zerosim: " + seed + ": --set model.params=1e15: params 1000000000000000 × micro_batch 1 × seq_len 4096: FLOPs per micro-step overflow: value does not fit in 64 bits (the step's FLOPs or bytes do not fit in int64 at this size: lower model.params, training.micro_batch or model.seq_len)\n"
	if code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 2 and\n%q", code, errOut, want)
	}
	_, errOut, code = runCLI("run", seed, "--set", "model.params=9223372036854775807")
	want = "zerosim: " + seed + ": --set model.params=9223372036854775807: params=9223372036854775807 is out of range (use 1 to 20000T)\n"
	if code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 2 and\n%q", code, errOut, want)
	}
}
