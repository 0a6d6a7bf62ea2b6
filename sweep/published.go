package sweep

import (
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
	"golang.org/x/sync/errgroup"
)

// PublishedFits is a step replayed again at the least and the greatest
// compute efficiency that the published runs on its GPU fitted
// (zero.PublishedRange, docs/validation.md's fits): the speed to expect of
// a run nobody has calibrated. The default efficiency, cuBLAS's standalone
// GEMM rate on the GPU (scenarios.DefaultComputeEfficiencyOf), stays the model's; the published
// runs, whose fits fold in everything the model leaves out, bound what a
// real step on that GPU reached (QA34 M1: Llama 3.1 8B on 8 H100 at the
// default read 8,621 tokens/s per GPU where torchtitan's performance.md
// measured 5,762).
type PublishedFits struct {
	// Runs is the number of published runs on GPU with the scenario's fp8
	// setting (FP8), or, when none ran on GPU (OnGPU false), on every
	// GPU, each fit carried to GPU (zero.PublishedRange).
	Runs  int
	GPU   string
	FP8   scenarios.FP8Recipe
	OnGPU bool
	// Default is the scenario's own efficiency, zerosim's default for the
	// GPU, that the headline's figures are at.
	Default float64
	// Low is the step at the least efficiency fitted, High at the
	// greatest (the same step when one run was fitted).
	Low, High FitSpeed
}

// FitSpeed is one replay at a published efficiency: its step time (ps),
// tokens/s per GPU and utilization as zerosim run reports them.
type FitSpeed struct {
	Efficiency         float64
	StepTime           int64
	TokensPerSecPerGPU float64
	MFU, HFU           float64
}

// UncalibratedDefault reports whether s's GEMM efficiency is zerosim's
// default: no training.compute_efficiency, no calibration, no training.mfu.
func UncalibratedDefault(s *scenarios.Scenario) bool {
	t := &s.Training
	return t.ComputeEfficiencyDefault && t.ComputeEfficiencyFrom == "" && t.MFU <= 0
}

// AtPublishedFits replays s at the least and the greatest efficiency the
// published runs on its GPU fitted, when s runs at zerosim's default
// (UncalibratedDefault); on a GPU preset none ran on, at every GPU's
// fits carried to it (zero.PublishedRange, as README.md promises: qauser33
// M2, B200 had a range on its efficiency line and none on its step). nil
// otherwise: a calibrated or set efficiency, no published run of the
// fp8 family, or an unnamed GPU (no preset), to which no fit is
// carried (zero.OnOtherGPUs). res, if
// not nil, is s's own replay, whose memory model the two replays take
// (the efficiency changes no allocation). Two replays at most, at once.
func AtPublishedFits(s *scenarios.Scenario, res *zero.Result) (*PublishedFits, error) {
	if !UncalibratedDefault(s) {
		return nil, nil
	}
	fp8 := s.Training.FP8
	lo, hi, n, onGPU := zero.PublishedRange(s.Cluster.GPU, fp8)
	if n == 0 || !onGPU && s.Cluster.GPU == "" {
		return nil, nil
	}
	out := &PublishedFits{Runs: n, GPU: s.Cluster.GPU, FP8: fp8, OnGPU: onGPU, Default: s.Training.ComputeEfficiency}
	effs := []float64{lo, hi}
	if lo == hi {
		effs = effs[:1]
	}
	speeds := make([]FitSpeed, len(effs))
	var g errgroup.Group
	for i, eff := range effs {
		g.Go(func() (err error) {
			speeds[i], err = speedAt(s, res, eff)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out.Low, out.High = speeds[0], speeds[len(speeds)-1]
	return out, nil
}

// speedAt replays s with training.compute_efficiency eff (as
// docs/validation.md's fits replay it: the GEMM efficiency alone set).
func speedAt(s *scenarios.Scenario, res *zero.Result, eff float64) (FitSpeed, error) {
	c := *s
	c.Training.ComputeEfficiency, c.Training.ComputeEfficiencyDefault = eff, false
	opt := zero.Options{NoCollectives: true}
	if res != nil {
		opt.Memory = res.MemoryModel
	}
	r, err := zero.Replay(&c, opt)
	if err != nil {
		return FitSpeed{}, err
	}
	return FitSpeed{Efficiency: eff, StepTime: int64(r.StepTime), TokensPerSecPerGPU: r.TokensPerSecPerGPU(),
		MFU: r.Utilization.MFU, HFU: r.Utilization.HFU}, nil
}

// pickAtFits is AtPublishedFits of a plan's winner c, loaded over src.
func pickAtFits(src Source, c Candidate) (*PublishedFits, error) {
	s, err := src.Load(c.Sets()...)
	if err != nil {
		return nil, err
	}
	return AtPublishedFits(s, nil)
}
