package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOutputTargetsRefuseFlagInputs (rev26): the inputs checkTarget
// protects include the files named by flags whose value is a FILE the
// command reads (inputFiles), not only its arguments: calibrate --file over
// its own --scenario or --train-log is refused as a file it reads, before
// the kind check, and the file is left as it was.
func TestOutputTargetsRefuseFlagInputs(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s9.yaml")
	data, _ := scenarios.Example("seed002-tiny")
	if err := os.WriteFile(scen, data, 0o644); err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(dir, "train.log")
	logData := []byte("step: 1  loss: 2.0\n")
	if err := os.WriteFile(logf, logData, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--step-time", "1s", "seed002-tiny", "--scenario", scen, "--file", scen},
			"--file " + scen + ": zerosim calibrate reads that file (its --scenario " + scen + "); writing there would destroy it (choose another --file)"},
		{[]string{"calibrate", "seed002-tiny", "--train-log", logf, "--file", logf},
			"--file " + logf + ": zerosim calibrate reads that file (its --train-log " + logf + ")"},
	} {
		out, e, code := runCLI(c.args...)
		if code != 2 || out != "" || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "zerosim: "+c.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, nothing on stdout and %q", c.args, code, len(out), e, c.want)
		}
	}
	for _, f := range []struct {
		path string
		want []byte
	}{{scen, data}, {logf, logData}} {
		if got, _ := os.ReadFile(f.path); string(got) != string(f.want) {
			t.Errorf("%s was changed", f.path)
		}
	}
}
