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

// TestCalibratedHeadDimNoted: a calibrated attention efficiency fitted at
// head_dim 128 and run on a head_dim-64 model (the default Llama 2 7B with
// 64 heads) is rescaled by FlashAttention-2's published H100 rates, 273 /
// 308 TFLOP/s (zero.CalibratedHeadDimScale), and the header says so:
// 0.40 × 0.8864 = 0.3545.
func TestCalibratedHeadDimNoted(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cal.yaml")
	cal := "version: 1\ncompute: {compute_efficiency: 0.55, method: trace, measured_ms: 1000, gpu: H100-80GB, attention_efficiency: 0.40, attention_kernel: fa2, head_dim: 128}\n"
	if err := os.WriteFile(file, []byte(cal), 0o644); err != nil {
		t.Fatal(err)
	}
	att := headlineValue(exampleRun(t, "default", "communication.calibration="+file, "model.heads=64"), "attention")
	if want := "fa2 at 0.3545 of the dense peak (from calibration " + file + ", fitted at head_dim 128, ×0.8864 at head_dim 64: the kernel's published rates' ratio, on the H100)"; att != want {
		t.Errorf("attention row\n%q, want\n%q", att, want)
	}
	if att := headlineValue(exampleRun(t, "default", "communication.calibration="+file), "attention"); strings.Contains(att, "head_dim") {
		t.Errorf("attention row %q at the fitted head_dim names a rescaling", att)
	}
}
