package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMergeOutOtherSweep: merge --out replaces an existing file only when
// it is an output of the same sweep in the same format (a merge run
// again); a shard of another format or another sweep is refused, as sweep
// --out refuses an existing file without --resume (QA25 L8: the JSONL
// shard s0.jsonl was replaced by CSV rows).
func TestMergeOutOtherSweep(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, args := range [][]string{
		{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--shard", "0/2", "--out", p("s0.csv")},
		{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--shard", "1/2", "--out", p("s1.csv")},
		{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--shard", "0/2", "--out", p("s0.jsonl"), "--format", "json"},
		{"sweep", "seed002-tiny", "--grid", "training.micro_batch=1,2", "--out", p("other.csv")},
	} {
		if code, _, errOut := runMain(t, "", args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
	}
	for _, tc := range []struct{ out, mention string }{
		{"s0.jsonl", "--out " + p("s0.jsonl") + " is JSON Lines, the inputs are CSV (not overwritten: choose another --out or delete it)"},
		{"other.csv", "--out " + p("other.csv") + " is the output of another sweep (--grid"},
	} {
		before, _ := os.ReadFile(p(tc.out))
		args := []string{"merge", p("s0.csv"), p("s1.csv"), "--out", p(tc.out)}
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
		if after, _ := os.ReadFile(p(tc.out)); string(after) != string(before) {
			t.Errorf("%q replaced %s", args, tc.out)
		}
	}
	// The same merge again replaces its own output.
	for range 2 {
		if code, _, errOut := runMain(t, "", "merge", p("s0.csv"), p("s1.csv"), "--out", p("all.csv")); code != 0 {
			t.Fatalf("merge --out all.csv: exit %d: %s", code, errOut)
		}
	}
}
