package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// Every output file flag follows one rule (checkTarget, checkDirTargets):
// a target that is one of the command's inputs, by any path, or an
// existing file of another kind than the flag writes is refused with one
// line and exit 2, before anything is simulated or printed, and the file
// is left as it was. Before (QA22 H1): run s9.yaml --trace s9.yaml
// replaced the scenario with a trace, printed the report and "wrote
// s9.yaml", exit 0; merge a.csv --out a.csv, and --trace, --out or --file
// naming a README, did the same.
func TestOutputTargetsRefuseInputsAndOtherKinds(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s9.yaml")
	data, _ := scenarios.Example("seed002-tiny")
	if err := os.WriteFile(scen, data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(scen, link); err != nil {
		t.Fatal(err)
	}
	// A file read through a flag (calibrate's --scenario, --train-log)
	// is an input too, refused before the kind check.
	logf := filepath.Join(dir, "train.log")
	logData := []byte("step: 1  loss: 2.0\n")
	if err := os.WriteFile(logf, logData, 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(notes, []byte("# my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := filepath.Join(dir, "rows.csv")
	if _, e, code := runCLI("sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", rows); code != 0 {
		t.Fatalf("sweep --out: exit %d: %s", code, e)
	}
	odir := filepath.Join(dir, "od")
	inDir := filepath.Join(odir, "result.json")
	if err := os.MkdirAll(odir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inDir, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", scen, "--trace", scen}, "--trace " + scen + ": zerosim run reads that file (its argument " + scen + "); writing there would destroy it (choose another --trace)"},
		{[]string{"run", scen, "--trace", link}, "--trace " + link + ": zerosim run reads that file (its argument " + scen + ")"},
		{[]string{"run", "seed002-tiny", "--trace", notes}, "--trace " + notes + " exists and is not a zerosim trace (not overwritten: choose another --trace or delete it)"},
		{[]string{"sweep", scen, "--grid", "parallelism.k=1,2", "--out", scen}, "--out " + scen + ": zerosim sweep reads that file (its argument " + scen + ")"},
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--resume", "--out", notes}, "--out " + notes + " exists and is not a zerosim sweep output (not overwritten: choose another --out or delete it)"},
		{[]string{"merge", rows, "--out", rows}, "--out " + rows + ": zerosim merge reads that file (its argument " + rows + ")"},
		{[]string{"merge", rows, "--out", notes}, "--out " + notes + " exists and is not a zerosim sweep output"},
		{[]string{"calibrate", "--step-time", "1s", scen, "--file", scen}, "--file " + scen + ": zerosim calibrate reads that file (its argument " + scen + ")"},
		{[]string{"calibrate", "--step-time", "1s", "seed002-tiny", "--file", notes}, "--file " + notes + " exists and is not a calibration file (not overwritten: choose another --file or delete it): "},
		{[]string{"calibrate", "--step-time", "1s", "seed002-tiny", "--scenario", scen, "--file", scen},
			"--file " + scen + ": zerosim calibrate reads that file (its --scenario " + scen + "); writing there would destroy it (choose another --file)"},
		{[]string{"calibrate", "seed002-tiny", "--train-log", logf, "--file", logf},
			"--file " + logf + ": zerosim calibrate reads that file (its --train-log " + logf + ")"},
		{[]string{"run", inDir, "-o", odir}, "-o " + odir + ": writes result.json there, a file this command reads (its argument " + inDir + ")"},
	} {
		out, e, code := runCLI(c.args...)
		if code != 2 || out != "" || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "zerosim: "+c.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, nothing on stdout and %q", c.args, code, len(out), e, c.want)
		}
	}
	for _, f := range []struct {
		path string
		want []byte
	}{{scen, data}, {logf, logData}, {notes, []byte("# my notes\n")}, {inDir, data}} {
		if got, _ := os.ReadFile(f.path); string(got) != string(f.want) {
			t.Errorf("%s was changed", f.path)
		}
	}
	// A file of the flag's own kind is replaced, as before.
	trace := filepath.Join(dir, "t.json")
	for i := range 2 {
		if _, e, code := runCLI("run", "seed002-tiny", "--trace", trace); code != 0 {
			t.Fatalf("run --trace (time %d): exit %d: %s", i+1, code, e)
		}
	}
	merged := filepath.Join(dir, "merged.csv")
	for i := range 2 {
		if _, e, code := runCLI("merge", rows, "--out", merged); code != 0 {
			t.Fatalf("merge --out (time %d): exit %d: %s", i+1, code, e)
		}
	}
}
