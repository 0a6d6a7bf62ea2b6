package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryStackStages (qauser32 L2, L10): zerosim memory of a torchtitan
// scenario at ZeRO-3 shows its stage 0 as the loader reads the file there,
// torchtitan's DDP (fp32 parameters under bf16 autocast, no master), and
// no figures for stage 1, which torchtitan does not run.
func TestMemoryStackStages(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tt.yaml")
	yaml := "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b, layers: 2, seq_len: 1024}\nparallelism: {dp: 2, zero_stage: 3}\nstack: torchtitan\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stage string
		want  []string
	}{
		{"0", []string{"full fp32 params", "autocast weight casts"}},
		{"1", []string{"n/a: zero_stage 1: stack torchtitan does not run ZeRO stage 1"}},
	} {
		out, errOut, code := sweepCLI(t, "memory", "--stage", tc.stage, file)
		if code != 0 {
			t.Fatalf("--stage %s: exit %d: %s", tc.stage, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("--stage %s: no %q in:\n%s", tc.stage, w, out)
			}
		}
	}
}
