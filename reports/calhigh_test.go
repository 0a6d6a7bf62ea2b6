package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibratedHighNoted (qa20 M1, L3): run's header names the calibration
// that set the attention efficiency, and notes a calibrated compute or
// attention efficiency above what the GPU plausibly reaches, as it notes a
// typed one: the default example runs fa2 on H100-80GB, whose published
// rate is 0.35 (ceiling 1.5 × 0.35 = 0.525), and 13 published bf16 runs on
// H100-80GB fitted 0.36–0.70. A calibrated one says to check the
// calibration's measurement, not to expect a slower step: the user measured
// it (QA s28 L5).
func TestCalibratedHighNoted(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name             string
		eff, att         string
		effNote, attNote bool
	}{
		{"plausible", "0.55", "0.40", false, false},
		{"high", "0.90", "0.70", true, true},
	} {
		file := filepath.Join(dir, c.name+".yaml")
		cal := "version: 1\ncompute: {compute_efficiency: " + c.eff + ", method: step-time, measured_ms: 1000, gpu: H100-80GB, attention_efficiency: " + c.att + ", attention_kernel: fa2}\n"
		if err := os.WriteFile(file, []byte(cal), 0o644); err != nil {
			t.Fatal(err)
		}
		run := exampleRun(t, "default", "communication.calibration="+file)
		att := headlineValue(run, "attention")
		if want := "fa2 at " + c.att[:3] + " of the dense peak (from calibration " + file; !strings.HasPrefix(att, want) {
			t.Errorf("%s: attention row %q, want it to start %q", c.name, att, want)
		}
		if got := strings.Contains(att, "; above 0.52, 1.5× the kernel's published 0.35 on H100-80GB: check the calibration's trace)"); got != c.attNote {
			t.Errorf("%s: attention row %q: note %t, want %t", c.name, att, got, c.attNote)
		}
		eff := headlineValue(run, "compute efficiency")
		if strings.Contains(eff, "expect a slower step") {
			t.Errorf("%s: compute efficiency row %q expects a slower step of a calibrated efficiency", c.name, eff)
		}
		if got := strings.HasSuffix(eff, "; above the 0.36–0.70 that 13 published bf16 runs on H100-80GB fitted (docs/validation.md): check the calibration's measurement (a smaller run, or one micro-step?)"); got != c.effNote {
			t.Errorf("%s: compute efficiency row %q: note %t, want %t", c.name, eff, got, c.effNote)
		}
	}
}
