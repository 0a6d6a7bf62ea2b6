package reports

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// atDefault is what run's headline figures add after the value when the
// step was also replayed at the published runs' fits (f not nil): that
// the value is at zerosim's default GEMM efficiency. "" otherwise.
func atDefault(f *sweep.PublishedFits) string {
	if f == nil {
		return ""
	}
	return " at the default " + fmtEff(f.Default)
}

// spread is run's headline figures at the published fits, each "" when
// the step was not replayed there: the step times, tokens/s per GPU (with
// the runs that fitted the range) and utilization.
type spread struct{ step, tokens, util string }

// publishedSpread is the step at the least and the greatest efficiency the
// published runs on its GPU fitted (sweep.AtPublishedFits), as run's
// headline quotes it beside the default's figures: lower bound first.
func publishedSpread(f *sweep.PublishedFits) spread {
	if f == nil {
		return spread{}
	}
	const at = " at the published fits"
	return spread{
		step:   "; " + fitsRange(units.Duration(f.High.StepTime).String(), units.Duration(f.Low.StepTime).String()) + at,
		tokens: "; " + tokensRange(f) + " at " + fitsWho(f) + " (calibrate to narrow it)",
		util:   "; " + fitsUtilization(f) + at,
	}
}

// fitsWho is the published fits and the runs that fitted them ("the
// 0.45–0.62 that 8 published bf16 runs on H100-80GB fitted").
func fitsWho(f *sweep.PublishedFits) string {
	return zero.FittedBy(f.Low.Efficiency, f.High.Efficiency, f.Runs, f.FP8.FP8(), fitsWhere(f))
}

// fitsWhere is where the published runs of f ran: on its GPU
// (zero.OnGPU), or on others, carried to it (zero.OnOtherGPUs).
func fitsWhere(f *sweep.PublishedFits) string {
	if !f.OnGPU {
		return zero.OnOtherGPUs(f.GPU)
	}
	return zero.OnGPU(f.GPU, f.FP8)
}

// fitsUtilization is MFU and HFU at the published fits ("MFU 30.1–38.4 %,
// HFU 32.7–41.8 %"), HFU alone for a model without an MFU count.
func fitsUtilization(f *sweep.PublishedFits) string {
	hfu := "HFU " + percentRange(f.Low.HFU, f.High.HFU) + " %"
	if f.Low.MFU == 0 {
		return hfu
	}
	return "MFU " + percentRange(f.Low.MFU, f.High.MFU) + " %, " + hfu
}

// percentRange is a utilization at the published fits in percent, one
// decimal ("30.1–38.4"), through fitsRange.
func percentRange(lo, hi float64) string {
	return fitsRange(fmt.Sprintf("%.1f", 100*lo), fmt.Sprintf("%.1f", 100*hi))
}

// tokensRange is tokens/s per GPU at the published fits, through
// fitsRange.
func tokensRange(f *sweep.PublishedFits) string {
	return fitsRange(tps(f.Low.TokensPerSecPerGPU), tps(f.High.TokensPerSecPerGPU))
}

// fitsRange is "lo–hi", or lo alone when both read the same; a unit both
// end in is written once ("430–538 ms", "2.202–2.731s"; "980 ms–1.02 s").
func fitsRange(lo, hi string) string {
	if lo == hi {
		return lo
	}
	unit := func(v string) string { return v[len(strings.TrimRight(v, "abcdefghijklmnopqrstuvwxyzµ %")):] }
	if u := unit(lo); u != "" && u == unit(hi) {
		return strings.TrimSuffix(lo, u) + "–" + hi
	}
	return lo + "–" + hi
}

// planAtFits is plan's gives line's figures for its pick at the published
// fits (sweep.Plan.PickAtFits), "" when the pick was not replayed there:
// tokens/s per GPU, MFU and step in the order of the default's figures
// before them, and the runs without their GPU (only runs on the plan's
// GPU are replayed: sweep.AtPublishedFits, and plan's first line names
// it). Terser than run's (fitsWho, "calibrate to narrow it"): the gives
// line keeps to two lines, so that plan keeps to one screen
// (TestPlanOneScreen).
func planAtFits(f *sweep.PublishedFits) string {
	if f == nil {
		return ""
	}
	where := ""
	if !f.OnGPU {
		where = "on other GPUs, carried" // none ran on the plan's GPU
	}
	return fmt.Sprintf("; %s, %s %%, %s at the %s of %s",
		tokensRange(f), percentRange(f.Low.MFU, f.High.MFU),
		fitsRange(planDur(f.High.StepTime), planDur(f.Low.StepTime)), zero.FittedRange(f.Low.Efficiency, f.High.Efficiency),
		strings.TrimSpace(zero.PublishedRuns(f.Runs, f.FP8.FP8(), where)))
}

// publishedFitsJSON is sweep.PublishedFits in run's result.json and
// plan.json (pick_at_published_fits).
type publishedFitsJSON struct {
	Runs int    `json:"runs"`
	GPU  string `json:"gpu"`
	// OnGPU is false when none of the runs ran on GPU: Runs counts every
	// GPU's, each fit carried to GPU (added in session 33, qauser33 M2).
	OnGPU bool         `json:"on_gpu"`
	FP8   bool         `json:"fp8"`
	Low   fitSpeedJSON `json:"low"`
	High  fitSpeedJSON `json:"high"`
}

// fitSpeedJSON is sweep.FitSpeed: tokens/s per GPU with 3 decimals, as
// the step's own.
type fitSpeedJSON struct {
	Efficiency         float64 `json:"compute_efficiency"`
	StepTimePS         int64   `json:"step_time_ps"`
	TokensPerSecPerGPU float64 `json:"tokens_per_s_per_gpu"`
	MFU                float64 `json:"mfu"`
	HFU                float64 `json:"hfu"`
}

func newPublishedFitsJSON(f *sweep.PublishedFits) *publishedFitsJSON {
	if f == nil {
		return nil
	}
	speed := func(s sweep.FitSpeed) fitSpeedJSON {
		return fitSpeedJSON{Efficiency: s.Efficiency, StepTimePS: s.StepTime, TokensPerSecPerGPU: sweep.TokensPerSec(s.TokensPerSecPerGPU), MFU: s.MFU, HFU: s.HFU}
	}
	return &publishedFitsJSON{Runs: f.Runs, GPU: f.GPU, OnGPU: f.OnGPU, FP8: f.FP8.FP8(), Low: speed(f.Low), High: speed(f.High)}
}
