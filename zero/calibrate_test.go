package zero

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
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

// TestCalibrateEfficiencyRange: a measurement that an efficiency in
// [MinEfficiency, 1] reproduces calibrates to it, the two ends included
// (the step at efficiency 1 is the fastest there is, at MinEfficiency the
// slowest), and the default tolerance (tol ≤ 0) is 1e-4 of the answer.
// The default example (Llama 2 7B, 16 H100, ZeRO-1) is replayed at the
// efficiency, and the calibration has to find it again.
func TestCalibrateEfficiencyRange(t *testing.T) {
	for _, c := range []struct {
		name     string
		eff, tol float64
	}{
		{"efficiency 1, the fastest step", 1, 1e-3},
		{"the floor", MinEfficiency, 1e-3},
		{"0.55 at the default tolerance", 0.55, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := loadDefault(t)
			s.Training.ComputeEfficiency = c.eff
			r, err := Replay(s, Options{NoCollectives: true})
			if err != nil {
				t.Fatal(err)
			}
			eff, err := CalibrateEfficiency(loadDefault(t), r.StepTime, c.tol)
			if err != nil {
				t.Fatalf("the step at efficiency %g: %v", c.eff, err)
			}
			tol := c.tol
			if tol == 0 {
				tol = 1e-4
			}
			if math.Abs(eff-c.eff) > tol*c.eff {
				t.Errorf("calibrated %.7g, want %g within %g of it", eff, c.eff, tol)
			}
		})
	}
}

// TestMFUTarget: training.mfu is the MFU the step reaches, not an
// efficiency: the replay fits the efficiency so that the reported MFU is
// the target.
// A model without a per-token count (seed000-mlp, 8,192 samples a
// micro-step so that compute sets the step) reaches it too, counted as run
// reports it (3× the forward FLOPs); a target no efficiency reaches names
// the step it needs and the fastest there is.
func TestMFUTarget(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
		mfu  float64
	}{
		{"default", nil, 0.45},
		{"default", []string{"training.grad_accum=3"}, 0.45},
		{"seed000-mlp", []string{"training.micro_batch=8192"}, 0.45},
		{"seed000-mlp", []string{"training.micro_batch=8192", "training.grad_accum=2"}, 0.45},
		// cp 2 without a sequence: each sample counted once (cpCopies),
		// so both cp ranks running it whole reach at most half the peak.
		{"seed000-k4", []string{"training.micro_batch=8192", "cluster.host.cpu=intel"}, 0.3},
	} {
		s := example(t, c.name, c.sets...)
		s.Training.ComputeEfficiency, s.Training.MFU = 0, c.mfu
		if err := scenarios.Resolve(s); err != nil {
			t.Fatal(err)
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Utilization.MFU; math.Abs(got-c.mfu) > 0.001 {
			t.Errorf("%s %v: MFU %.4f, want the target %g", c.name, c.sets, got, c.mfu)
		}
	}
	s := example(t, "seed000-mlp")
	s.Training.ComputeEfficiency, s.Training.MFU = 0, 0.45
	_, err := Replay(s, Options{})
	if err == nil || !strings.Contains(err.Error(), "training.mfu 0.45 cannot be reached: it needs a step of") || !strings.Contains(err.Error(), "use a lower training.mfu") {
		t.Errorf("seed000-mlp at micro-batch 1, MFU 0.45 (communication sets the step): error %v", err)
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

// TestCalibrateComputeEfficiency recovers the efficiency from rank 0's
// compute time alone (what a profiler trace's compute kernels add up to):
// the default example replayed at 0.6 gives a compute time; calibrating on
// it finds 0.6, whatever the exposed communication.
func TestCalibrateComputeEfficiency(t *testing.T) {
	for _, want := range []float64{0.45, 0.6, 0.8} {
		r, err := Replay(example(t, "default", fmt.Sprintf("training.compute_efficiency=%g", want)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		fwd, bwd, opt := ComputeByKind(r)
		if c := RankCompute(r); c < fwd+bwd+opt || c > r.StepTime {
			t.Errorf("%g: rank compute %v outside [nominal %v, step %v]", want, c, fwd+bwd+opt, r.StepTime)
		}
		eff, err := calibrateComputeEfficiency(example(t, "default"), RankCompute(r), 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(eff-want) > 1e-4 {
			t.Errorf("calibrated %.6f on the compute time, want %g", eff, want)
		}
	}
	var u *UnreachableError
	if _, err := calibrateComputeEfficiency(example(t, "default"), units.Millisecond, 0); !errors.As(err, &u) || u.What != "compute time" || u.Measured != units.Millisecond {
		t.Errorf("1ms of compute: %v, want an UnreachableError", err)
	}
}

// TestUtilizationConvention: MFU and HFU count FLOPs alike (6N + 12·L·H·Q·s
// per token, attention over the full s² as llm-foundry and torchtitan
// count it), HFU adding what checkpointing reruns, so HFU/MFU is a ratio
// of FLOP counts. Hand counts for Llama 2 7B at s = 4096 (h 4096, f 11008,
// 32 blocks, 6,738,415,616 parameters, of which the untied input
// embedding's 32,000·4096 = 131,072,000 are no matmul: N = 6,607,343,616):
// model 6·N + 12·32·4096·4096 = 46,086,512,640 per token; a block's forward 2·(4h² + 3hf) + 4·h·s =
// 471,859,200 per token; its attention core 4·h·s = 67,108,864; the op
// policy's wk, wo and w3 2·(h² + h² + hf) = 157,286,400.
func TestUtilizationConvention(t *testing.T) {
	const model = 46086512640.0
	for _, c := range []struct {
		policy string
		re     float64 // recomputed FLOPs per token, all 32 blocks
	}{
		{"none", 0},
		{"selective", 32 * 67108864},
		{"op", 32 * 157286400},
		{"full", 32 * 471859200},
	} {
		r, err := Replay(example(t, "default", "training.recompute="+c.policy), Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := r.Utilization
		if got, want := u.HFU/u.MFU, 1+c.re/model; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: HFU/MFU %.9f, want %.9f", c.policy, got, want)
		}
	}
}

// TestUtilizationWithoutPerTokenCount: a model without transformer
// dimensions (seed000-mlp, residual-mlp-4096: four 4096×4096 matmuls with
// biases per block, one sample a token) has MFU from 3× its forward FLOPs,
// as plan ranks it: by hand, 2 FLOPs per weight per sample forward,
// 6·(1,342,382,080 − biases) per sample for the step, the biases' adds
// under 0.01 % more. Full recompute adds one forward: HFU/MFU = 4/3, and
// gradient accumulation scales the FLOPs, not the rate.
func TestUtilizationWithoutPerTokenCount(t *testing.T) {
	const perSample = 6 * 1342382080.0 // 6·N, within the biases
	for _, c := range []struct {
		sets []string
		hfu  float64 // HFU/MFU
		ga   float64
	}{
		{nil, 1, 1},
		{[]string{"training.recompute=full"}, 4.0 / 3, 1},
		{[]string{"training.grad_accum=4"}, 1, 4},
	} {
		s := example(t, "seed000-mlp", c.sets...)
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := r.Utilization
		if !u.FromForward {
			t.Errorf("%v: FromForward unset", c.sets)
		}
		flops := u.MFU * r.StepTime.Seconds() * float64(s.Cluster.PeakBF16)
		want := perSample * float64(s.Training.MicroBatch) * c.ga
		if math.Abs(flops/want-1) > 1e-4 {
			t.Errorf("%v: MFU counts %.6g FLOPs per GPU and step, want 6·N per sample: %.6g", c.sets, flops, want)
		}
		if got := u.HFU / u.MFU; math.Abs(got-c.hfu) > 1e-9 {
			t.Errorf("%v: HFU/MFU %.9f, want %.9f", c.sets, got, c.hfu)
		}
		// What the kernels execute over the step: the same 6·N per sample
		// (8·N under full recompute, a second forward of 2·N) for every
		// micro-step.
		executed := u.Executed * r.StepTime.Seconds() * float64(s.Cluster.PeakBF16)
		if want := want * c.hfu; math.Abs(executed/want-1) > 1e-4 {
			t.Errorf("%v: executed %.6g FLOPs per GPU and step, want %.6g", c.sets, executed, want)
		}
	}
}

// TestComputeOnlyCalibrationKeepsNCCLModel: a calibration file with only a
// compute part leaves the collectives on NCCL's nominal model.
func TestComputeOnlyCalibrationKeepsNCCLModel(t *testing.T) {
	s := example(t, "default")
	s.Communication.Calibration = "c.yaml"
	s.Communication.CalibrationData = &scenarios.Calibration{Version: 1, Compute: &scenarios.CalCompute{Efficiency: 0.7, Method: scenarios.CalMethodStepTime, MeasuredMS: 400}}
	r, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Timing != "NCCL's cost model" {
		t.Errorf("timing %q, want NCCL's nominal cost model", r.Timing)
	}
}

// TestCalibrateInterBandwidthTol: CalibrateInterBandwidth's default
// tolerance (tol ≤ 0: InterBandwidthTol, 1e-3 in ln(bandwidth)) returns
// the middle of a bracket narrower than the tolerance around the
// crossing, so a step replayed at a tenth of the scenario's own inter-node
// bandwidth is explained by that bandwidth to within tol/2: |ln(bw/B₀)| ≤
// 5e-4, ±0.05 %. GPT-3 1.3B at ZeRO-3 over 2 nodes of 8 A100s, whose
// exposed inter-node collectives make the step fall as the bandwidth rises.
func TestCalibrateInterBandwidthTol(t *testing.T) {
	const doc = `version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: gpt3-1.3b}
parallelism: {dp: 16, zero_stage: 3}
training: {micro_batch: 1}
`
	s, err := scenarios.Load("s.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	own := s.Cluster.Inter.Bandwidth
	b0 := units.Bandwidth(math.Round(float64(own) * 0.1))
	s.Cluster.Inter.Bandwidth = b0
	res, err := Replay(s, Options{NoCollectives: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Cluster.Inter.Bandwidth = own
	bw, ok, err := CalibrateInterBandwidth(s, res.StepTime, 0)
	if err != nil || !ok {
		t.Fatalf("ok %t, %v", ok, err)
	}
	if d := math.Abs(math.Log(float64(bw) / float64(b0))); d > 5e-4+1e-9 {
		t.Errorf("inter-node bandwidth %v for the step at %v: off by %.2g in ln, want ≤ 5e-4", bw, b0, d)
	}
}
