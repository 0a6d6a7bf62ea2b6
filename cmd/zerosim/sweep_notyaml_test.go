package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestSweepUnusableValuesChecked: a --set or --grid value that is not
// YAML at all, and a model.hf_config or communication.calibration file that
// is there but unusable (a directory without config.json, no architectures,
// not JSON, a scenario given as a calibration), is wrong whatever the other
// keys hold. Each made every point (or every point with that value) an
// error row with exit 0; each now stops the sweep before its first row.
func TestSweepUnusableValuesChecked(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	empty := write("empty.json", "{}\n")
	junk := write("junk.sh", "echo hi\n")
	scen, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	victim := write("victim.yaml", string(scen))
	grid := []string{"--grid", "parallelism.k=1,2"}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--set", "parallelism.zero_stage=*x"}, "--set parallelism.zero_stage=*x: the value is not valid YAML: unknown anchor 'x' referenced (quote it or fix it)"},
		{[]string{"--set", "parallelism.zero_stage=@x"}, "the value is not valid YAML"},
		{[]string{"--set", "parallelism.zero_stage=`x"}, "the value is not valid YAML"},
		{[]string{"--set", "parallelism.zero_stage=%x"}, "the value is not valid YAML"},
		{[]string{"--set", `parallelism.zero_stage="a`}, "the value is not valid YAML"},
		{[]string{"--set", "parallelism.zero_stage=a: b: c"}, "the value is not valid YAML"},
		{[]string{"--set", "model=[*a]"}, "the value is not valid YAML"},
		{[]string{"--set", "model=&a [*a]"}, "the value has unusable aliases (write the value out)"},
		{[]string{"--grid", "parallelism.k=1,..."}, "zerosim: --grid parallelism.k=1,...: the value is not valid YAML: did not find expected node content"},
		{[]string{"--grid", "training.recompute=..."}, "zerosim: --grid training.recompute=...: the value is not valid YAML"},
		{[]string{"--set", "model.hf_config=" + dir}, "config.json: cannot read the file"},
		{[]string{"--set", "model.hf_config=" + empty}, "architectures is missing"},
		{[]string{"--set", "model.hf_config=" + junk}, "not valid JSON"},
		{[]string{"--grid", "model.hf_config=" + empty + "," + junk}, "architectures is missing"},
		{[]string{"--set", "communication.calibration=" + victim}, `unknown key "name"`},
	} {
		sweepRefuses(t, dir, tc.args, grid, tc.mention)
	}
}

// TestSweepHFLayersStillPerPoint: a config.json without num_hidden_layers
// is not refused when a --grid gives model.layers: the error depends on
// that key, so the points that give it run.
func TestSweepHFLayersStillPerPoint(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nolayers.json")
	cfg := `{"architectures":["LlamaForCausalLM"],"hidden_size":64,"num_attention_heads":4,"intermediate_size":128,"vocab_size":1000,"max_position_embeddings":128}`
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "", "sweep", "default", "--set", "model.hf_config="+p, "--grid", "model.layers=2,4")
	if code != 0 || errOut == "" || out == "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestSweepCountChecksFirst: --count runs the checks a sweep runs before
// its first row; it printed 2 for a --set every task of the job array it
// sized then refused (exit 2 in each).
func TestSweepCountChecksFirst(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--set", "cluster.gpu=H100"}, `gpu "H100" is unknown`},
		{[]string{"--grid", "parallelism.zero_stage=1,7"}, "zero_stage=7 is out of range"},
		{[]string{"--set", "parallelism.zero_stage=*x"}, "the value is not valid YAML"},
	} {
		args := append([]string{"sweep", "default", "--grid", "parallelism.k=1,2", "--count"}, tc.args...)
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
	}
	code, out, errOut := runMain(t, "", "sweep", "default", "--grid", "parallelism.k=1,2", "--grid", "parallelism.zero_stage=1,3", "--count")
	if code != 0 || out != "4\n" || errOut != "" {
		t.Errorf("--count: exit %d, stdout %q, stderr %q; want 4", code, out, errOut)
	}
}
