package zero

import (
	"errors"
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// This file fits the efficiency of each operation class to the kernel time
// of that class in a profiler trace (zerosim calibrate --trace): the GEMM
// efficiency (training.compute_efficiency) to the GEMM kernels, the
// attention efficiency (training.attention_efficiency) to the attention
// kernels. The other kernels (elementwise, norms, the optimizer) are
// memory-bound in the model and not fitted.

// StepClasses is one rank's compute in one step by class, in seconds:
// forward and backward of every unit over the grad_accum micro-steps (the
// optimizer is in Optimizer, not in Other; ComputeClasses leaves it 0,
// ModelledClasses fills it).
type StepClasses struct {
	ClassSeconds
	Optimizer float64
	// Separate reports whether the scenario's attention runs at an
	// efficiency of its own: a transformer under the per-operation model
	// (PlanCompute) with a fused attention kernel. Otherwise (eager
	// attention, whose matmuls run at the GEMM efficiency; units under the
	// FLOP count) attention's time is in GEMM.
	Separate bool
}

// ComputeClasses returns s's nominal compute per rank and step by class, in
// the durations the schedule runs (each unit's forward and backward as
// Costs gives them, split in the proportions of PlanCompute's classes).
// Units the per-operation model leaves to the FLOP count run at the GEMM
// efficiency (GEMM); per-layer times the scenario gives are fixed (Other).
func ComputeClasses(s *scenarios.Scenario) (StepClasses, error) {
	if s.Training.MFU > 0 {
		c := *s
		if err := fitMFU(&c); err != nil {
			return StepClasses{}, err
		}
		s = &c
	}
	costs, plan, err := costsAndPlan(s, nil, Options{})
	if err != nil {
		return StepClasses{}, err
	}
	var out StepClasses
	// Attention is timed apart in transformer models only: a model
	// without their dims has a plan only for FSDP's copies (fsdpCopies).
	_, transformer := flopDims(s)
	out.Separate = transformer && s.Training.AttentionKernel != scenarios.KernelEager
	split := func(d units.Duration, by ClassSeconds, explicit bool, planned bool) ClassSeconds {
		secs := d.Seconds()
		switch {
		case explicit:
			return ClassSeconds{Other: secs}
		case !planned || by.Total() <= 0:
			return ClassSeconds{GEMM: secs}
		}
		return by.scale(secs / by.Total())
	}
	for i, l := range s.Model.LayerList {
		c := costs[i]
		// Units of the per-operation model, and units under the FLOP count
		// (MoE, MLA, explicit fwd_flops), whose attention and FSDP copies
		// Costs times apart (plan's FwdBy).
		planned := plan != nil
		var fb, bb ClassSeconds
		if planned {
			fb, bb = plan[i].FwdBy, plan[i].BwdBy
		}
		out.ClassSeconds = out.add(split(c.Fwd, fb, l.Fwd != 0, planned)).add(split(c.Bwd, bb, l.Bwd != 0, planned))
	}
	out.ClassSeconds = out.scale(float64(max(s.Training.GradAccum, 1)))
	if !out.Separate {
		out.GEMM += out.Attention
		out.Attention = 0
	}
	return out, nil
}

// ClassMeasurement is the kernel time of one step of a profiler trace by
// class (calibrate --trace): GEMM, attention and the rest.
type ClassMeasurement struct {
	GEMM, Attention, Other units.Duration
}

// ClassFit is the result of CalibrateClassEfficiencies.
type ClassFit struct {
	// GEMM is the fitted training.compute_efficiency.
	GEMM float64
	// Attention is the fitted attention efficiency, 0 when not fitted
	// (AttentionNote says why).
	Attention     float64
	AttentionNote string
	// Slowdown is rank 0's compute time over its nominal compute at the
	// fitted efficiencies: the overlap slowdown the model applies, which the
	// trace's kernels carry too (each class is compared at nominal ×
	// Slowdown).
	Slowdown float64
}

// CalibrateClassEfficiencies fits the GEMM efficiency to m.GEMM and the
// attention efficiency to m.Attention, each against s's own time of that
// class per rank and step (ComputeClasses) times the overlap slowdown of
// a replay (RankCompute over the nominal compute, the same correction
// calibrateComputeEfficiency makes with the whole compute time). The
// attention class is linear in 1/efficiency (FLOPs over peak·efficiency,
// its recompute share included), so its efficiency is a closed form; the
// GEMM class is not (each GEMM is the larger of its FLOP time, scaled by
// wave quantization, and its bytes on HBM), but it falls monotonically, so
// a bisection finds it to within tol (gonum has no scalar root finder).
// The slowdown depends on both efficiencies a little: the fit repeats
// until it settles (a few replays). When the scenario's attention is not
// separate (StepClasses.Separate) or the trace has no attention kernels,
// the GEMM efficiency is fitted alone, to the GEMM and attention kernels
// together in the first case, and the attention efficiency is left as it
// was. s is left as it was.
func CalibrateClassEfficiencies(s *scenarios.Scenario, m ClassMeasurement, tol float64) (ClassFit, error) {
	if m.GEMM <= 0 {
		return ClassFit{}, fmt.Errorf("zero: calibrate: the trace has no GEMM kernels to fit the GEMM efficiency to")
	}
	if tol <= 0 {
		tol = 1e-6
	}
	saved := s.Training
	defer func() { s.Training = saved }()
	if s.Training.MFU > 0 {
		if err := fitMFU(s); err != nil {
			return ClassFit{}, err
		}
	}
	base, err := ComputeClasses(s)
	if err != nil {
		return ClassFit{}, err
	}
	var fit ClassFit
	separate := base.Separate && base.Attention > 0
	gemmTarget := m.GEMM
	switch {
	case !separate:
		gemmTarget += m.Attention
		fit.AttentionNote = "the scenario runs attention at the GEMM efficiency (eager attention's matmuls, or units under the FLOP count)"
		if m.Attention > 0 {
			fit.AttentionNote += "; the trace's attention kernels are fitted with the GEMMs"
		}
	case m.Attention <= 0:
		separate = false
		fit.AttentionNote = "the trace has no attention kernels (by name)"
	}
	slowdown, err := overlapSlowdown(s)
	if err != nil {
		return ClassFit{}, err
	}
	for range 8 {
		g, err := fitGEMM(s, gemmTarget.Seconds()/slowdown, tol)
		var u *UnreachableError
		if errors.As(err, &u) {
			u.Best, u.Measured = durationOf(u.Best.Seconds()*slowdown), gemmTarget
		}
		if err != nil {
			return ClassFit{}, err
		}
		s.Training.ComputeEfficiency = g
		fit.GEMM = g
		if separate {
			// Attention time is A1/a with A1 its time at efficiency 1.
			s.Training.AttentionEfficiency, s.Training.AttentionEfficiencyHeadDim = 1, 0
			at1, err := ComputeClasses(s)
			if err != nil {
				return ClassFit{}, err
			}
			a := at1.Attention * slowdown / m.Attention.Seconds()
			if !(a > 0 && a <= 1) {
				return ClassFit{}, &UnreachableError{What: "attention kernel time", Best: durationOf(at1.Attention * slowdown), Measured: m.Attention}
			}
			if a < MinEfficiency {
				return ClassFit{}, &UnreachableError{What: "attention kernel time", Best: durationOf(at1.Attention * slowdown / MinEfficiency), Measured: m.Attention, Floor: true}
			}
			s.Training.AttentionEfficiency, s.Training.AttentionEfficiencyHeadDim = a, 0
			fit.Attention = a
		}
		next, err := overlapSlowdown(s)
		if err != nil {
			return ClassFit{}, err
		}
		settled := math.Abs(next-slowdown) <= tol*slowdown
		slowdown = next
		if settled {
			break
		}
	}
	fit.Slowdown = slowdown
	return fit, nil
}

// fitGEMM bisects the GEMM efficiency in (0, 1] until s's nominal GEMM
// class time is target seconds.
func fitGEMM(s *scenarios.Scenario, target float64, tol float64) (float64, error) {
	at := func(g float64) (float64, error) {
		s.Training.ComputeEfficiency = g
		c, err := ComputeClasses(s)
		if err != nil {
			return 0, fmt.Errorf("zero: calibrate at GEMM efficiency %.4g: %w", g, err)
		}
		return c.GEMM, nil
	}
	return bisectEfficiency(target, tol, at, func(best float64, floor bool) error {
		return &UnreachableError{What: "GEMM kernel time", Best: durationOf(best), Measured: durationOf(target), Floor: floor}
	})
}

// overlapSlowdown is rank 0's compute time over its nominal compute in a
// replay of s (≥ 1 where collectives overlap compute).
func overlapSlowdown(s *scenarios.Scenario) (float64, error) {
	r, err := Replay(s, Options{NoCollectives: true})
	if err != nil {
		return 0, fmt.Errorf("zero: calibrate: %w", err)
	}
	return slowdownOf(r), nil
}

// slowdownOf is rank 0's compute time over its nominal compute in r.
func slowdownOf(r *Result) float64 {
	f, b, o := ComputeByKind(r)
	if n := f + b + o; n > 0 {
		return float64(RankCompute(r)) / float64(n)
	}
	return 1
}

// durationOf converts seconds to a duration, saturating.
func durationOf(secs float64) units.Duration {
	d, err := seconds(secs)
	if err != nil {
		return units.Duration(math.MaxInt64)
	}
	return d
}

// ModelledClasses is s's compute per rank and step by class
// (ComputeClasses) and the overlap slowdown of a replay, by which each
// class compares with a trace's kernel time.
func ModelledClasses(s *scenarios.Scenario) (StepClasses, float64, error) {
	c, err := ComputeClasses(s)
	if err != nil {
		return c, 0, err
	}
	r, err := Replay(s, Options{NoCollectives: true})
	if err != nil {
		return c, 0, err
	}
	_, _, opt := ComputeByKind(r)
	c.Optimizer = opt.Seconds()
	return c, slowdownOf(r), nil
}

// AttentionEfficiencyOf is the attention efficiency s runs at: its
// training.attention_efficiency, else the default of its kernel and GPU
// at its head_dim and, for FlashAttention-1, its sequence length
// (SeqLenScale), capped at the GPU's GEMM default. A calibration's rate
// fitted at another head_dim (Training.AttentionEfficiencyHeadDim) is
// rescaled to the model's by CalibratedHeadDimScale, at most 1.
func AttentionEfficiencyOf(s *scenarios.Scenario) float64 {
	if a := s.Training.AttentionEfficiency; a > 0 {
		return min(a*CalibratedHeadDimScale(s)*CalibratedAttentionCarry(s), 1)
	}
	gpu, k, hd := s.Cluster.GPU, s.Training.AttentionKernel, ModelHeadDim(s)
	if RunsAs(gpu, k) == scenarios.KernelEager {
		return efficiency(s)
	}
	rate, ceiling, _ := AttentionRateCapped(gpu, k, hd)
	return min(rate*SeqLenScale(gpu, k, hd, AttentionSeqLen(s)), ceiling)
}

// CalibratedAttentionCarry is the factor a calibrated attention efficiency
// fitted on another GPU (Training.AttentionEfficiencyGPU) takes on s's:
// the kernel's default rate on s's GPU over its default on the fitting
// one (AttentionCarry), the rule a compute efficiency carries by
// (scenarios.ComputeEfficiencyCarry). 1 for a rate of the scenario's own,
// a file that does not say its GPU, or the same GPU.
func CalibratedAttentionCarry(s *scenarios.Scenario) float64 {
	t := &s.Training
	if t.AttentionEfficiencyFrom == "" {
		return 1
	}
	return AttentionCarry(t.AttentionEfficiencyGPU, s.Cluster.GPU, t.AttentionKernel)
}

// AttentionCarry is the factor an attention efficiency of kernel fitted on
// GPU from takes on GPU to: the kernel's default rate on to over its
// default on from, each at head_dim 128 (AttentionEfficiency, with the
// GPUs' own GEMM ceilings), so that a fit keeps its shortfall from the
// published rate and the new GPU runs the kernel's published rate on it
// that much below (zero/testdata/attention: cuDNN's 0.557 of the GB200's
// peak beside the GB300's 0.614). 1 when either GPU is unnamed, both are
// one, or the kernel runs eager (its matmuls run at the GEMM efficiency,
// carried already).
func AttentionCarry(from, to string, kernel scenarios.AttentionKernel) float64 {
	if from == "" || to == "" || from == to || RunsAs(from, kernel) == scenarios.KernelEager || RunsAs(to, kernel) == scenarios.KernelEager {
		return 1
	}
	a := AttentionEfficiency(from, kernel, GEMMCeiling(from))
	b := AttentionEfficiency(to, kernel, GEMMCeiling(to))
	if a <= 0 || b <= 0 {
		return 1
	}
	return b / a
}

// CalibratedHeadDimScale is the factor a calibrated attention efficiency
// fitted at head_dim Training.AttentionEfficiencyHeadDim takes on s's
// model: the kernel's published rate at the model's head_dim over its rate
// at the fitted one (HeadDimScale at each, on s's GPU and kernel), as the
// default rates are scaled from 128. 1 for a rate of the scenario's own, a
// file that does not say its head_dim, the same head_dim, or a kernel with
// no published head_dim figure.
func CalibratedHeadDimScale(s *scenarios.Scenario) float64 {
	t := &s.Training
	fitted, now := t.AttentionEfficiencyHeadDim, ModelHeadDim(s)
	if t.AttentionEfficiencyFrom == "" || fitted <= 0 || now <= 0 || fitted == now {
		return 1
	}
	gpu, k := s.Cluster.GPU, t.AttentionKernel
	return HeadDimScale(gpu, k, now) / HeadDimScale(gpu, k, fitted)
}
