package reports

import (
	"strings"
	"testing"

	goldenfile "github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// fitsExample is a step at two published fits, figures chosen so that each
// reads differently: tokens/s, MFU, HFU and step time at each end.
var fitsExample = sweep.PublishedFits{Runs: 8, GPU: "H100-80GB", OnGPU: true, Default: 0.8,
	Low:  sweep.FitSpeed{Efficiency: 0.4466, StepTime: int64(2731 * units.Millisecond), TokensPerSecPerGPU: 5999.4, MFU: 0.3514, HFU: 0.3821},
	High: sweep.FitSpeed{Efficiency: 0.6216, StepTime: int64(2202 * units.Millisecond), TokensPerSecPerGPU: 7441.6, MFU: 0.4358, HFU: 0.4739}}

// run's headline at zerosim's default efficiency says which figures are
// the default's and gives each at the published runs' fits, slowest end
// first (QA34 M1: the headline a planner copies was the default's alone,
// 40–50 % above the published runs); without them the lines are as before.
func TestRunHeadlineAtPublishedFits(t *testing.T) {
	run := exampleRun(t, "default")
	before := map[string]string{}
	for _, k := range []string{"step time", "tokens/s per GPU", "utilization"} {
		before[k] = headlineValue(run, k)
		if strings.Contains(before[k], "published") || strings.Contains(before[k], "at the default") {
			t.Errorf("%s without AtFits: %q names the published fits", k, before[k])
		}
	}
	f := fitsExample
	run.AtFits = &f
	for _, c := range []struct{ key, head, tail string }{
		{"step time", " at the default 0.8 (", "; 2.202–2.731s at the published fits"},
		{"tokens/s per GPU", " at the default 0.8 (", "; 5,999–7,442 at the 0.45–0.62 that 8 published bf16 runs on H100-80GB fitted (calibrate to narrow it)"},
		{"utilization", " at the default 0.8 (", "; MFU 35.1–43.6 %, HFU 38.2–47.4 % at the published fits"},
	} {
		got := headlineValue(run, c.key)
		value, _, _ := strings.Cut(before[c.key], " (")
		if !strings.HasPrefix(got, value+c.head) || !strings.Contains(got, c.tail) {
			t.Errorf("%s: %q, want %q then %q", c.key, got, value+c.head, c.tail)
		}
	}
	one := fitsExample
	one.Runs, one.High = 1, one.Low
	run.AtFits = &one
	if got, want := headlineValue(run, "tokens/s per GPU"), "; 5,999 at the 0.45 that the one published bf16 run on H100-80GB fitted"; !strings.Contains(got, want) {
		t.Errorf("one run: %q, want %q", got, want)
	}
	// On a GPU none ran on, the fits are every GPU's carried to it, and
	// the lines say so (qauser33 M2).
	carried := fitsExample
	carried.GPU, carried.OnGPU = "B200", false
	run.AtFits = &carried
	if got, want := headlineValue(run, "tokens/s per GPU"), "; 5,999–7,442 at the 0.45–0.62 that 8 published bf16 runs on other GPUs (carried to B200) fitted (calibrate to narrow it)"; !strings.Contains(got, want) {
		t.Errorf("carried: %q, want %q", got, want)
	}
}

// plan's gives line quotes its pick at the published fits after the
// default's figures.
func TestPlanAtFits(t *testing.T) {
	f := fitsExample
	want := "; 5,999–7,442, 35.1–43.6 %, 2.20–2.73 s at the 0.45–0.62 of 8 published bf16 runs"
	if got := planAtFits(&f); got != want {
		t.Errorf("planAtFits:\n got %q\nwant %q", got, want)
	}
	f.GPU, f.OnGPU = "B200", false
	if got, want := planAtFits(&f), want+" on other GPUs, carried"; got != want {
		t.Errorf("planAtFits carried:\n got %q\nwant %q", got, want)
	}
	if got := planAtFits(nil) + atDefault(nil); got != "" {
		t.Errorf("without fits: %q, want nothing", got)
	}
}

// A unit both ends share is written once; different units stay.
func TestFitsRange(t *testing.T) {
	for _, c := range [][3]string{
		{"430 ms", "538 ms", "430–538 ms"},
		{"980 ms", "1.02 s", "980 ms–1.02 s"},
		{"418.9ms", "1.2s", "418.9ms–1.2s"},
		{"5,999", "7,442", "5,999–7,442"},
		{"0.46", "0.46", "0.46"},
	} {
		if got := fitsRange(c[0], c[1]); got != c[2] {
			t.Errorf("fitsRange(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// docs/compute-model.md quotes the headline's range on the default
// example (an H100) in its prose, from zero.PublishedRange, which
// TestValidation rewrites when a published run's fit moves (the line
// before it is TestEfficiencyLineDoc's).
func TestComputeModelDocQuotesPublishedFits(t *testing.T) {
	gpu := exampleRun(t, "default").Scenario.Cluster.GPU
	lo, hi, n, onGPU := zero.PublishedRange(gpu, scenarios.FP8None)
	if !onGPU {
		t.Fatalf("no published bf16 run on %s", gpu)
	}
	f := sweep.PublishedFits{Runs: n, GPU: gpu, OnGPU: true, Low: sweep.FitSpeed{Efficiency: lo}, High: sweep.FitSpeed{Efficiency: hi}}
	goldenfile.CheckQuotes(t, "../docs/compute-model.md", "fitsWho of the default example (zerosim run)",
		"at "+fitsWho(&f)+" (calibrate to narrow it)")
}

// plan's train line gives the time at the pick's published fits beside
// the default's, as its gives line gives the step: 1 T tokens in steps of
// 2^20 are 953,675 steps, 24.3 days at 2.202 s and 30.1 at 2.731 s.
func TestPlanTrainAtFits(t *testing.T) {
	f := fitsExample
	p := &sweep.Plan{TokensPerStep: 1 << 20, PickAtFits: &f}
	if got, want := trainAtFits(1e12, p), "; 24.3–30.1 days at the published fits"; got != want {
		t.Errorf("trainAtFits = %q, want %q", got, want)
	}
	p.PickAtFits = nil
	if got := trainAtFits(1e12, p); got != "" {
		t.Errorf("without fits: %q", got)
	}
}
