package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFileWarningEveryPoint: the file's load warning is printed as it is only
// when every point (every variant) gives it. One about a key the grid or
// --vary sets at every point was printed though no point gave it, and
// when some did, a second time with their points (QA25 M2).
func TestFileWarningEveryPoint(t *testing.T) {
	data, _ := scenarios.Example("seed002-tiny")
	stage1 := strings.Replace(string(data), "zero_stage: 3", "zero_stage: 1", 1)
	if stage1 == string(data) {
		t.Fatal("seed002-tiny has no zero_stage: 3")
	}
	file := filepath.Join(t.TempDir(), "s1.yaml")
	if err := os.WriteFile(file, []byte(stage1), 0o644); err != nil {
		t.Fatal(err)
	}
	const warn = "stack torchtitan does not run ZeRO stage 1"
	tt := []string{"--set", "stack=torchtitan"}
	// The file alone gives it, at its line.
	if _, _, errOut := runMain(t, "", append([]string{"run", file}, tt...)...); !strings.Contains(errOut, "s1.yaml:14:") || !strings.Contains(errOut, warn) {
		t.Fatalf("run: the file's warning is missing: %q", errOut)
	}
	for _, tc := range []struct {
		args []string
		want string // "" when no point gives it
	}{
		{[]string{"sweep", file, "--grid", "parallelism.zero_stage=2,3"}, ""},
		{[]string{"compare", file, "--vary", "parallelism.zero_stage=2,3"}, ""},
		{[]string{"sweep", file, "--grid", "parallelism.zero_stage=1,3"}, "zerosim: warning: point 0 (parallelism.zero_stage=1): "},
		{[]string{"compare", file, "--vary", "parallelism.zero_stage=1,3"}, "zerosim: warning: parallelism.zero_stage=1: "},
	} {
		code, _, errOut := runMain(t, "", append(tc.args, tt...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errOut)
		}
		n := strings.Count(errOut, warn)
		switch {
		case tc.want == "" && n > 0:
			t.Errorf("%q: no point gives the warning, yet: %q", tc.args, errOut)
		case tc.want != "" && (n != 1 || !strings.Contains(errOut, tc.want+file+": --")):
			t.Errorf("%q: want the warning once, as %q…: %q", tc.args, tc.want, errOut)
		}
	}
}

// TestSweepFileWarningNotByFirstPoint: a file warning that only the first
// point gives is printed with that point, after the rows, whatever the
// grid's order; one every point gives comes without points (the first
// point stood for all, so the output depended on the order of the grid's
// values).
func TestSweepFileWarningNotByFirstPoint(t *testing.T) {
	data, _ := scenarios.Example("default")
	a100 := strings.Replace(string(data), "gpu: H100-80GB", "gpu: A100-80GB", 1)
	if a100 == string(data) {
		t.Fatal("default has no gpu: H100-80GB")
	}
	file := filepath.Join(t.TempDir(), "a100.yaml")
	if err := os.WriteFile(file, []byte(a100), 0o644); err != nil {
		t.Fatal(err)
	}
	const warn = "intra preset NVLink4 (450.00 GB/s per direction) is not the A100-80GB's interconnect"
	for _, tc := range []struct {
		grid, want string
	}{
		{"cluster.gpu=A100-80GB,H100-80GB", "zerosim: warning: point 0 (cluster.gpu=A100-80GB): " + file + ":"},
		{"cluster.gpu=H100-80GB,A100-80GB", "zerosim: warning: point 1 (cluster.gpu=A100-80GB): " + file + ":"},
		{"parallelism.k=1,2", "zerosim: warning: " + file + ":"},
	} {
		code, out, errOut := runMain(t, "", "sweep", file, "--grid", tc.grid)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.grid, code, errOut)
		}
		if strings.Count(errOut, warn) != 1 || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("--grid %s: want the warning once, as %q…: %q", tc.grid, tc.want, errOut)
		}
		if strings.Count(out, "\n") != 4 { // meta, header, two rows
			t.Errorf("--grid %s: stdout %q", tc.grid, out)
		}
	}
}
