package main

import "testing"

// TestRepeatedFlagRefused: a flag of one value given twice with two
// values is refused, naming both; the last one silently won (QA25 L5: run
// -o a1 -o b1 wrote only b1). The same value twice, or a list flag, is
// fine.
func TestRepeatedFlagRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"run", "seed002-tiny", "-o", dir + "/a1", "-o", dir + "/b1"}, `zerosim: run: -o (--output) given twice ("` + dir + `/a1", then "` + dir + `/b1"): give it once (see zerosim run --help)`},
		{[]string{"run", "seed002-tiny", "--format", "json", "--format", "table"}, `--format given twice ("json", then "table"): give it once`},
		{[]string{"run", "seed002-tiny", "--trace", dir + "/x1.json", "--trace=" + dir + "/x2.json"}, `--trace given twice`},
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--out", dir + "/q1.csv", "--out", dir + "/q2.csv"}, `--out given twice`},
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "-j", "1", "-j2"}, `-j (--jobs) given twice ("1", then "2")`},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
	for _, args := range [][]string{
		{"run", "seed002-tiny", "--format", "json", "--format", "json"},
		{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--grid", "training.micro_batch=1", "--set", "training.steps=2", "--set", "training.grad_accum=1"},
	} {
		if code, _, errOut := runMain(t, "", args...); code != 0 {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
}

// TestPlanListEmptyValue: a list flag with an empty value between commas
// is refused as such, not as a value "given twice".
func TestPlanListEmptyValue(t *testing.T) {
	args := []string{"plan", "seed002-tiny", "--algorithms", "ring,,tree"}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, `--algorithms: an empty value in "ring,,tree" (drop the stray comma)`)
}
