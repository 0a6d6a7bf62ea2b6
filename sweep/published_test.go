package sweep

import (
	"strconv"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// defaultSource is the embedded default example (8 H100-80GB, zerosim's
// default GEMM efficiency) with sets.
func defaultSource(t *testing.T, sets ...string) Source {
	t.Helper()
	data, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	return Source{File: "default.yaml", Data: data, Sets: sets}
}

func replayed(t *testing.T, src Source, sets ...string) (*scenarios.Scenario, *zero.Result) {
	t.Helper()
	s, err := src.Load(sets...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

// An uncalibrated step on the H100 is replayed at the least and the
// greatest efficiency docs/validation.md fitted to the 13 published bf16
// runs there (0.3617, torchao float8nocompile's eager bf16 row, and
// 0.6983, torchtitan's Qwen3-32B), each
// the step a scenario setting that efficiency replays, slower than the
// default 0.8's (QA34 M1); a set or MFU-fitted efficiency gets none, and
// a GPU preset without a published run gets every GPU's, carried.
func TestAtPublishedFits(t *testing.T) {
	src := defaultSource(t)
	s, res := replayed(t, src)
	f, err := AtPublishedFits(s, res)
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Fatal("the default example (H100-80GB, default efficiency) was not replayed at the published fits")
	}
	if f.Runs != 13 || f.GPU != "H100-80GB" || f.FP8.FP8() || f.Low.Efficiency != 0.3617 || f.High.Efficiency != 0.6983 {
		t.Errorf("fits: %d runs on %s fp8 %v at %v–%v, want 13 bf16 runs on H100-80GB at 0.3617–0.6983", f.Runs, f.GPU, f.FP8, f.Low.Efficiency, f.High.Efficiency)
	}
	if !(f.Low.StepTime > f.High.StepTime && f.High.StepTime > int64(res.StepTime)) {
		t.Errorf("step times: %d ps at the least fit, %d at the greatest, %d at the default: want them slower in that order", f.Low.StepTime, f.High.StepTime, res.StepTime)
	}
	for _, at := range []FitSpeed{f.Low, f.High} {
		_, r := replayed(t, src, "training.compute_efficiency="+strconv.FormatFloat(at.Efficiency, 'g', -1, 64))
		if at.StepTime != int64(r.StepTime) || at.TokensPerSecPerGPU != r.TokensPerSecPerGPU() || at.MFU != r.Utilization.MFU || at.HFU != r.Utilization.HFU {
			t.Errorf("at %v: %+v, want the step a scenario with that compute_efficiency replays: %d ps, %v tokens/s, MFU %v, HFU %v",
				at.Efficiency, at, r.StepTime, r.TokensPerSecPerGPU(), r.Utilization.MFU, r.Utilization.HFU)
		}
	}
	// A GPU preset none ran on is replayed at every GPU's fits carried to
	// it, as README.md says run does (qauser33 M2: B200's efficiency line
	// gave 0.35–0.82 and its step line no range).
	for _, gpu := range []string{"L40S", "B200"} {
		s, res := replayed(t, src, "cluster.gpu="+gpu)
		f, err := AtPublishedFits(s, res)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi, n, onGPU := zero.PublishedRange(gpu, scenarios.FP8None)
		if onGPU {
			t.Fatalf("a published bf16 run on %s: pick a GPU none ran on", gpu)
		}
		if f == nil {
			t.Errorf("%s: not replayed at the carried published fits", gpu)
			continue
		}
		if f.OnGPU || f.Runs != n || n < 20 || f.GPU != gpu || f.Low.Efficiency != lo || f.High.Efficiency != hi {
			t.Errorf("%s: %d runs (on the GPU: %v) at %v–%v, want every GPU's %d bf16 runs carried: %v–%v", gpu, f.Runs, f.OnGPU, f.Low.Efficiency, f.High.Efficiency, n, lo, hi)
		}
		if !(f.Low.StepTime > f.High.StepTime) {
			t.Errorf("%s: %d ps at the least fit, %d at the greatest: want the least slower", gpu, f.Low.StepTime, f.High.StepTime)
		}
	}
	for _, sets := range [][]string{
		{"training.compute_efficiency=0.8"}, // set, even to the default's value
		{"training.mfu=0.4"},
	} {
		s, res := replayed(t, src, sets...)
		if f, err := AtPublishedFits(s, res); err != nil || f != nil {
			t.Errorf("%v: %+v, %v; want none", sets, f, err)
		}
	}
}
