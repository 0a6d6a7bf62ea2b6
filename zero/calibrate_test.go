package zero

import (
	"math"
	"os"
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

// TestMoEComputeAndMFU: routed-expert units keep their FLOP count (top-k
// active parameters), and MFU counts the active parameters (Mixtral-8x7B:
// 12.9 B of 46.7 B), so it stays below HFU·(1 + attention share) instead of
// counting every expert.
func TestMoEComputeAndMFU(t *testing.T) {
	const file = "../docs/examples/mixtral-8x7b.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	var experts int
	for i, l := range s.Model.LayerList {
		if l.ActiveParams > 0 {
			experts++
			if costs[i].FwdFLOPs != 2*int64(l.ActiveParams)*s.Training.MicroBatch*s.Model.SeqLen || costs[i].Fwd <= 0 {
				t.Errorf("%s: %d FLOPs in %v, want 2·active·tokens", l.Name, costs[i].FwdFLOPs, costs[i].Fwd)
			}
		}
	}
	if experts == 0 {
		t.Fatal("no expert units")
	}
	r, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u := r.Utilization; !(u.MFU > 0 && u.MFU < 1 && u.MFU < 1.5*u.HFU) {
		t.Errorf("MFU %.3f, HFU %.3f: MFU must count active parameters", u.MFU, u.HFU)
	}
}
