package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepNamesAndFilesChecked: an unknown preset name, a file that
// cannot be read or a YAML null, in --set or in one --grid value, is wrong
// whatever the other keys hold; each made every point (or every point with
// that value) an error row with exit 0 (QA25 H2). They stop the sweep
// before its first row, as compare --vary and plan --set stop.
func TestSweepNamesAndFilesChecked(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"--grid", "parallelism.zero_stage=1,3"}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--set", "cluster.gpu=H100"}, `zerosim: default.yaml: --set cluster.gpu=H100: gpu "H100" is unknown (did you mean H100-80GB?)`},
		{[]string{"--set", "model.preset=llama9"}, `--set model.preset=llama9: preset "llama9" is unknown (use gpt3-125m`},
		{[]string{"--set", "communication.calibration=/nonexist/cal.yaml"}, "--set communication.calibration=/nonexist/cal.yaml: cannot read /nonexist/cal.yaml"},
		{[]string{"--set", "model.hf_config=/nonexist/config.json"}, "--set model.hf_config=/nonexist/config.json: hf_config: /nonexist/config.json: cannot read the file"},
		{[]string{"--set", "parallelism.dp=null"}, `--set parallelism.dp=null: null is not a value (give parallelism.dp=VALUE; parallelism.dp=auto makes dp the cluster's GPUs over cp)`},
		{[]string{"--set", "stack=foo"}, `stack "foo" is unknown`},
		{[]string{"--grid", "cluster.gpu=H100,B200"}, `zerosim: --grid cluster.gpu=H100,B200: gpu "H100" is unknown (did you mean H100-80GB?)`},
		{[]string{"--grid", "model.preset=llama2-7b,llama9"}, `zerosim: --grid model.preset=llama2-7b,llama9: preset "llama9" is unknown`},
		{[]string{"--grid", "stack=foo,deepspeed"}, `zerosim: --grid stack=foo,deepspeed: stack "foo" is unknown`},
		{[]string{"--grid", "cluster.intra.preset=NVLink4,nvl9"}, `zerosim: --grid cluster.intra.preset=NVLink4,nvl9: preset "nvl9" is unknown`},
		{[]string{"--grid", "parallelism.dp=16,~"}, "zerosim: --grid parallelism.dp=16,~: null is not a value (give parallelism.dp=VALUE; parallelism.dp=auto"},
		{[]string{"--grid", "parallelism.k=1,null"}, "zerosim: --grid parallelism.k=1,null: null is not a value (give parallelism.k=VALUE)"},
	} {
		sweepRefuses(t, dir, tc.args, grid, tc.mention)
	}
	// The same null through run names it as null, not as a missing value.
	code, out, errOut := runMain(t, "", "run", "default", "--set", "parallelism.dp=null")
	oneLine(t, []string{"run"}, code, out, errOut, "null is not a value")
	if strings.Contains(errOut, "no value after") {
		t.Errorf("run --set parallelism.dp=null: %q", errOut)
	}
}

// sweepRefuses runs `sweep default --out DIR/s.csv args` (with grid after a
// --set, which needs a point to vary) and checks the sweep stops before
// its first row: one line naming mention, exit 2, no output file.
func sweepRefuses(t *testing.T, dir string, args, grid []string, mention string) {
	t.Helper()
	outFile := filepath.Join(dir, "s.csv")
	all := append([]string{"sweep", "default", "--out", outFile}, args...)
	if args[0] == "--set" {
		all = append(all, grid...)
	}
	code, out, errOut := runMain(t, "", all...)
	oneLine(t, all, code, out, errOut, mention)
	if _, err := os.Stat(outFile); err == nil {
		t.Errorf("%q: left %s", all, outFile)
	}
}
