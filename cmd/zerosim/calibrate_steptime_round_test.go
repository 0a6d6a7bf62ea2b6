package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateStepTimeRounds: a measured step printed finer than
// zerosim's picosecond clock (a mean over logged steps to 15 significant
// digits, qatput30 finding 7a: "3.89006944856651s" was refused as "is not
// a duration") is rounded to the nearest picosecond, as --help says, and
// calibrates as that picosecond does.
func TestCalibrateStepTimeRounds(t *testing.T) {
	// calibrate writes its file (default ./calibration.yaml) and keeps an
	// existing one's other part: each case writes its own in a temp dir.
	dir := t.TempDir()
	for i, c := range []struct {
		arg  string
		want int64
	}{
		{"3.89006944856651s", 3_890_069_448_567},
		{"3.8900694485665s", 3_890_069_448_567},
		{"3.890069448566s", 3_890_069_448_566},
		{"1.0000000000004s", 1_000_000_000_000},
	} {
		out, eo, code := runCLI("calibrate", "--step-time", c.arg, "default", "--format", "json", "--file", filepath.Join(dir, fmt.Sprintf("cal%d.yaml", i)))
		var s struct {
			Compute struct {
				MeasuredPS int64 `json:"measured_ps"`
			} `json:"compute"`
		}
		if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil || s.Compute.MeasuredPS != c.want {
			t.Errorf("--step-time %s: exit %d, %v, measured %d ps, want %d; stderr %q", c.arg, code, err, s.Compute.MeasuredPS, c.want, eo)
		}
	}
	help, _, _ := runCLI("calibrate", "--help")
	if !strings.Contains(help, "(rounded to the nearest picosecond)") {
		t.Errorf("calibrate --help does not say --step-time is rounded:\n%s", help)
	}
}
