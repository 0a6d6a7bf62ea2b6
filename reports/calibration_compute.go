package reports

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// ComputeCalibration is what `zerosim calibrate --step-time` and `--trace`
// print: the measurement, the fitted efficiency and the scenario before
// and after.
type ComputeCalibration struct {
	File, Scenario string
	// Method is "step-time" or "trace"; Measured the step time or the
	// compute kernel time per step.
	Method   string
	Measured units.Duration
	// TokensPerSec, when not zero, is calibrate --tokens-per-sec's measured
	// throughput (tokens/s per GPU), which gave Measured as TokensPerStep
	// (the scenario's tokens per GPU per step) over it.
	TokensPerSec, TokensPerStep float64
	// Trace is the profiler trace read (method trace).
	Trace       *TraceSummary
	Before      ComputePoint
	After       ComputePoint
	KeptNetwork bool // the file's network part was kept
	WithNetwork bool // the fit ran with the file's network part
	KeptMemory  bool // the file's memory part was kept
	// Carried are the parts of the scenario's own calibration the fit ran
	// with that the file takes over ("the network part of c.yaml, which
	// the fit ran with").
	Carried []string
	// Classes is the per-class fit of a trace (method trace).
	Classes *ClassCalibration
	// NoHeader leaves out the "# zerosim calibrate" line (calibrate
	// --train-log prints one of its own before).
	NoHeader bool
	// Setup is the scenario the points were replayed under (nil: not
	// given): under an fp8 recipe its peaks give the utilization line the
	// note run's gives (fp8Utilization), MFU over the bf16 peak passing
	// 100 % at the default efficiency.
	Setup *scenarios.Scenario
}

// ClassCalibration is calibrate --trace's fit per operation class: the
// trace's kernel time of each class, the scenario's time of that class
// (nominal × the overlap slowdown) before and after the fit, and the
// efficiencies.
type ClassCalibration struct {
	Measured, Before, After         [3]units.Duration // GEMM, attention, other
	Kernels                         [3]int
	GEMMBefore, GEMMAfter           float64
	AttentionBefore, AttentionAfter float64
	AttentionFitted                 bool
	AttentionNote                   string
	// KernelNote, when not empty, says that the trace's attention kernels
	// are another family than the scenario's training.attention_kernel.
	KernelNote string
	// Layers is the trace's per-block breakdown (nil: none); Block its
	// module class, Modules whether the trace had module annotations.
	Modules                          bool
	Block                            string
	Layers                           []LayerTime
	UnattributedFwd, UnattributedBwd units.Duration
}

// LayerTime is one block's kernel time in the trace.
type LayerTime struct {
	Name              string
	Forward, Backward units.Duration
}

// TraceSummary is the step a profiler trace gave.
type TraceSummary struct {
	File, Step                   string
	Steps, Kernels               int
	Passes                       bool
	Forward, Backward, Optimizer units.Duration
	NCCL                         units.Duration
}

// ComputePoint is the scenario replayed at one efficiency.
type ComputePoint struct {
	Efficiency float64
	Step       units.Duration
	// Compute is rank 0's compute time (zero.RankCompute); Forward,
	// Backward and Optimizer its nominal parts (zero.ComputeByKind).
	Compute                      units.Duration
	Forward, Backward, Optimizer units.Duration
	Utilization                  zero.Utilization
}

// WriteComputeCalibration prints a compute calibration.
func WriteComputeCalibration(w io.Writer, r *ComputeCalibration) error {
	var b strings.Builder
	row := func(label, format string, args ...any) {
		sep := ""
		if len(label) >= 20 {
			sep = " "
		}
		fmt.Fprintf(&b, "%-21s%s%s\n", label+":", sep, fmt.Sprintf(format, args...))
	}
	if !r.NoHeader {
		flag := r.Method
		if r.TokensPerSec > 0 {
			flag = "tokens-per-sec"
		}
		fmt.Fprintf(&b, "# zerosim calibrate --%s: %s\n", flag, r.Scenario)
	}
	metric := "step time"
	if t := r.Trace; t != nil {
		metric = "compute time"
		which := t.Step
		if t.Steps > 1 {
			which += fmt.Sprintf(" (the median of %d steps)", t.Steps)
		}
		row("trace", "%s: %s, %d compute kernels", t.File, which, t.Kernels)
		passes := ""
		if t.Passes {
			passes = fmt.Sprintf(" (forward %v, backward %v, optimizer %v)", t.Forward, t.Backward, t.Optimizer)
		}
		row("measured", "compute kernels %v%s; NCCL kernels %v, not fitted", r.Measured, passes, t.NCCL)
	} else if r.TokensPerSec > 0 {
		row("measured", "%s tok/s per GPU: step %v, %s tokens per GPU per step over it", trimFloat(r.TokensPerSec), r.Measured, trimFloat(r.TokensPerStep))
	} else {
		row("measured", "step %v", r.Measured)
	}
	was := fmt.Sprintf("was %.4f", r.Before.Efficiency)
	if r.Before.Efficiency == 0 {
		was = "was fitted to training.mfu"
	}
	row("compute efficiency", "%.4f fitted (%s): the fraction of the dense peak large GEMMs reach", r.After.Efficiency, was)
	if c := r.Classes; c != nil {
		if c.AttentionFitted {
			row("attention efficiency", "%.4f fitted (was %.4f): the fraction of the dense peak the attention kernel reaches", c.AttentionAfter, c.AttentionBefore)
		} else {
			row("attention efficiency", "%.4f (was %.4f), not fitted: %s", c.AttentionAfter, c.AttentionBefore, c.AttentionNote)
		}
		if c.KernelNote != "" {
			row("attention kernel", "%s", c.KernelNote)
		}
		names := [3]string{"GEMM", "attention", "other"}
		for i := range 3 {
			fitted := "fitted"
			if i == 2 || (i == 1 && !c.AttentionFitted) {
				fitted = "not fitted"
			}
			row("  "+names[i], "trace %v (%d kernels); model %v before, %v after (%s)", c.Measured[i], c.Kernels[i], c.Before[i], c.After[i], fitted)
		}
		writeLayers(row, c)
	}
	if r.Trace != nil {
		row(metric, "%v before, %v after (rank 0's compute stream, slowed where collectives overlap it)", r.Before.Compute, r.After.Compute)
		if r.Trace.Passes {
			row("by pass after", "forward %v, backward %v, optimizer %v (nominal, without the overlap slowdown)", r.After.Forward, r.After.Backward, r.After.Optimizer)
		}
	}
	row("step time", "%v before, %v after", r.Before.Step, afterStep(r))
	row("utilization", "before %s; after %s%s", utilizationShort(r.Before.Utilization), utilizationShort(r.After.Utilization), fp8CalibrationNote(r))
	kept := ""
	if r.KeptNetwork {
		kept = "; its network part kept"
		if r.WithNetwork {
			kept += ", and the fit ran with it"
		}
	}
	if r.KeptMemory {
		kept += "; its memory part kept"
	}
	for _, c := range r.Carried {
		kept += "; " + c
	}
	row("wrote", "%s (compute part%s); scenarios use it as communication.calibration", r.File, kept)
	_, err := io.WriteString(w, b.String())
	return err
}

// fp8CalibrationNote is run's fp8 note (fp8Utilization) for calibrate's
// two points: under an fp8 recipe MFU and HFU are over the bf16 peak, and
// over peak_fp8 before and after. "" otherwise.
func fp8CalibrationNote(r *ComputeCalibration) string {
	ratio, ok := fp8PeakRatio(r.Setup)
	b, a := r.Before.Utilization, r.After.Utilization
	if !ok || b.MFU == 0 || a.MFU == 0 {
		return ""
	}
	return fmt.Sprintf("; %s; over peak_fp8 they are before %.1f %% and %.1f %%, after %.1f %% and %.1f %%", fp8UtilizationWhy,
		100*b.MFU*ratio, 100*b.HFU*ratio, 100*a.MFU*ratio, 100*a.HFU*ratio)
}

// utilizationShort is MFU and HFU without the convention note.
func utilizationShort(u zero.Utilization) string {
	if u.MFU == 0 {
		return fmt.Sprintf("HFU %.1f %%", 100*u.HFU)
	}
	return fmt.Sprintf("MFU %.1f %%, HFU %.1f %%", 100*u.MFU, 100*u.HFU)
}

// writeLayers prints the trace's per-block breakdown, or why there is
// none.
func writeLayers(row func(label, format string, args ...any), c *ClassCalibration) {
	switch {
	case !c.Modules:
		row("per block", "none: the trace has no nn.Module annotations (record with torch.profiler.profile(with_stack=True))")
		return
	case c.Block == "" || len(c.Layers) == 0:
		row("per block", "none: the trace's nn.Module annotations have no repeated block class")
		return
	}
	row("per block", "%d × %s, kernel time of the step (backward includes recompute)", len(c.Layers), c.Block)
	for _, l := range c.Layers {
		row("  "+l.Name, "forward %v, backward %v", l.Forward, l.Backward)
	}
	row("  outside blocks", "forward %v, backward %v (embedding, head, loss; optimizer excluded)", c.UnattributedFwd, c.UnattributedBwd)
}

// trimFloat prints x with thousands separators and no trailing zeros
// (3760 → 3,760; 1234.5 → 1,234.5).
func trimFloat(x float64) string {
	// Format x whole (shortest round-trip digits) and split at the point:
	// formatting math.Modf's fraction alone prints its binary error
	// (3760.1 → .09999999999990905).
	i, frac, _ := strings.Cut(strconv.FormatFloat(math.Abs(x), 'f', -1, 64), ".")
	n, err := strconv.ParseInt(i, 10, 64)
	if err != nil {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	s := commas(n)
	if math.Signbit(x) && x != 0 {
		s = "-" + s
	}
	if frac != "" {
		s += "." + frac
	}
	return s
}

// afterStep is the step after a step-time fit as the report prints it: the
// measured step's own text when the fit is within a microsecond of it, so
// that two nearly equal times on either side of a rounding boundary do not
// print apart (qa20 L7: "measured: step 6.108s" and "6.107s after" for
// 6,107.5 ms against 6,107.4995 ms).
func afterStep(r *ComputeCalibration) units.Duration {
	if d := r.After.Step - r.Measured; r.Trace == nil && d < units.Microsecond && d > -units.Microsecond {
		return r.Measured
	}
	return r.After.Step
}
