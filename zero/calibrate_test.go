package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCalibrateEfficiency recovers the efficiency a step was replayed at:
// the default example (Llama 2 7B, 16 H100, ZeRO-1) at efficiency 0.55
// gives a step; calibrating on that step finds 0.55 again.
func TestCalibrateEfficiency(t *testing.T) {
	s := example(t, "default", "training.compute_efficiency=0.55")
	r, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = example(t, "default")
	eff, err := CalibrateEfficiency(s, r.StepTime, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(eff-0.55) > 1e-4 {
		t.Errorf("calibrated %.6f, want 0.55", eff)
	}
	if s.Training.ComputeEfficiency != 0.8 {
		t.Errorf("calibration changed the scenario: %g", s.Training.ComputeEfficiency)
	}
	if _, err := CalibrateEfficiency(s, r.StepTime/100, 0); err == nil {
		t.Error("a step 100× too fast calibrated")
	}
}

// TestMFUTarget: training.mfu is the MFU the step reaches, not an
// efficiency: the replay fits the efficiency so that the reported MFU is
// the target.
func TestMFUTarget(t *testing.T) {
	s := example(t, "default")
	s.Training.ComputeEfficiency, s.Training.MFU = 0, 0.45
	if err := scenarios.Resolve(s); err != nil {
		t.Fatal(err)
	}
	r, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Utilization.MFU; math.Abs(got-0.45) > 0.001 {
		t.Errorf("MFU %.4f, want the target 0.45", got)
	}
}
