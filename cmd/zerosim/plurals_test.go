package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountsOfOne: a count of one takes the singular (QA25 L12: "1 points
// missing", "1 points have different rows", "has 1 items", "got 1 files").
func TestCountsOfOne(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, sh := range []string{"0/3", "1/3"} {
		out := p("s" + sh[:1] + ".csv")
		if code, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", "parallelism.k=1,2,4", "--shard", sh, "--out", out); code != 0 {
			t.Fatalf("sweep --shard %s: exit %d: %s", sh, code, errOut)
		}
	}
	// s1.csv again with point 1's row changed, and s0.csv twice.
	data, _ := os.ReadFile(p("s1.csv"))
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = strings.Replace(lines[2], "1,2,", "1,2,9", 1)
	if err := os.WriteFile(p("x1.csv"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := runMain(t, "", "merge", "--points", "3", p("s0.csv"), p("s0.csv"), p("s1.csv"), p("x1.csv"))
	for _, want := range []string{
		"merge: 1 point present more than once with identical rows, kept once: 0",
		"merged 2 rows; 1 point has different rows in different files (kept the first): 1; 1 point missing: 2",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("merge: %q does not say %q", errOut, want)
		}
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"run", "seed002-tiny", "--set", "cluster.gpu_overrides=[{rank: 0, speed: 0.5}]", "--set", "cluster.gpu_overrides[1].speed=2"}, "gpu_overrides has 1 item, so [1] is out of range (use 0 to 0)"},
		{[]string{"compare", "seed002-tiny", "seed002-7b", "--zeropp"}, "--zeropp compares variants of one FILE, without --vary (got 2 files)"},
		{[]string{"compare", "seed002-tiny", "--zeropp", "--vary", "parallelism.k=1,2"}, "--zeropp compares variants of one FILE, without --vary (drop --vary)"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}
