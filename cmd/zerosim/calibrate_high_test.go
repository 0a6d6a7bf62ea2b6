package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateHighFitWarns (qa20 M1): a fit above what the GPU plausibly
// reaches is written with a warning, the mirror of the low one: a step
// fitted above the 0.36–0.70 that the 12 published bf16 runs on H100-80GB
// fitted, a trace's GEMMs above cuBLAS's standalone 0.80, a trace's fa2
// attention above 1.5 × its published 0.35 on H100 (0.525).
func TestCalibrateHighFitWarns(t *testing.T) {
	dir := t.TempDir()
	stepAt := func(eff float64) string {
		return replayDefault(t, fmt.Sprintf("training.compute_efficiency=%g", eff)).StepTime.String()
	}
	trace := func(g, a float64) string {
		path := filepath.Join(dir, fmt.Sprintf("t%g-%g.json", g, a))
		classTrace(t, path, g, a)
		return path
	}
	const (
		stepHigh  = "is above the 0.36–0.70 that 12 published bf16 runs on H100-80GB fitted (docs/validation.md): the measured step is likely of a smaller run than default"
		gemmHigh  = "is above the 0.80 of the dense peak cuBLAS's GEMMs reach with nothing beside them"
		attnHigh  = "the fitted attention efficiency 0.7000 is above 0.52, 1.5× the 0.35 that fa2 reaches on H100-80GB"
		anyAbove  = " is above "
		noWarning = ""
	)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--step-time", stepAt(0.55)}, noWarning},
		{[]string{"--step-time", stepAt(0.7)}, stepHigh},
		{[]string{"--trace", trace(0.6, 0.35)}, noWarning},
		{[]string{"--trace", trace(0.9, 0.35)}, gemmHigh},
		{[]string{"--trace", trace(0.6, 0.7)}, attnHigh},
	} {
		args := append(append([]string{"calibrate"}, c.args...), "default", "--file", filepath.Join(dir, "cal.yaml"))
		_, errOut, code := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		if c.want == noWarning && strings.Contains(errOut, anyAbove) || c.want != noWarning && !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, errOut, c.want)
		}
	}
}
