package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// TrainLogSummary is what `zerosim calibrate --train-log` read from a
// training log before its fits.
type TrainLogSummary struct {
	File, Scenario, Format string
	// Logged is the number of step lines read (0: the Hugging Face
	// Trainer's train_runtime summary alone), FirstLogged and LastLogged
	// the steps they number.
	Logged                  int
	FirstLogged, LastLogged int64
	// Warmup lines skipped; Lines used, steps First to Last. Lines 0: no
	// steady state, Note says what the step is.
	Warmup, Lines int
	First, Last   int64
	// The step time over the lines used.
	Median, Q1, Q3, Min, Max units.Duration
	// MedianTPS and Tokens: torchtitan's median tokens per second per GPU
	// and the scenario's tokens per step per GPU (0: Megatron).
	MedianTPS float64
	Tokens    int64
	// MedianSamplesPerSec and Samples: DeepSpeed's median CurrSamplesPerSec
	// and the scenario's global batch (0: the other formats).
	MedianSamplesPerSec float64
	Samples             int64
	// Basis says what each line's step time is (torchtitan: the tokens
	// over tps, said with Tokens; default: Megatron's elapsed time per
	// iteration).
	Basis string
	Note  string
	// Reserved is the max reserved memory the log gives (0: none) and
	// ReservedLine its line; NoMemory says why there is none, NotFitted
	// why the allocator overhead was not fitted to it.
	Reserved     int64
	ReservedLine int
	NoMemory     string
	NotFitted    string
}

// WriteTrainLogSummary prints what calibrate --train-log read.
func WriteTrainLogSummary(w io.Writer, r *TrainLogSummary) error {
	var b strings.Builder
	row := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-21s%s\n", label+":", fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(&b, "# zerosim calibrate --train-log: %s\n", r.Scenario)
	if r.Logged > 0 {
		row("train log", "%s: %s, %d logged steps (%d–%d)", r.File, r.Format, r.Logged, r.FirstLogged, r.LastLogged)
	} else {
		row("train log", "%s: %s, no step lines", r.File, r.Format)
	}
	if r.Lines == 0 {
		row("steady state", "none: %s", r.Note)
		row("logged step", "%v (the run's mean step)", r.Median)
	} else {
		row("steady state", "steps %d–%d (%d lines), after %d of warm-up (the first tenth of the lines, at least one)", r.First, r.Last, r.Lines, r.Warmup)
		how := "elapsed time per iteration"
		if r.Basis != "" {
			how = r.Basis
		}
		if r.MedianTPS > 0 {
			how = fmt.Sprintf("%s tokens per step per GPU over tps, median tps %s", commas(r.Tokens), commas(int64(r.MedianTPS+0.5)))
		}
		if r.MedianSamplesPerSec > 0 {
			how = fmt.Sprintf("%s samples per step, micro_batch × grad_accum × dp, over CurrSamplesPerSec, median %.2f", commas(r.Samples), r.MedianSamplesPerSec)
		}
		row("logged step", "median %v (%s); quartiles %v–%v, range %v–%v", r.Median, how, r.Q1, r.Q3, r.Min, r.Max)
	}
	switch {
	case r.Reserved > 0 && r.NotFitted != "":
		row("max reserved", "%s (%s B) at line %d; the memory part is not fitted: %s", units.Bytes(r.Reserved), commas(r.Reserved), r.ReservedLine, r.NotFitted)
	case r.Reserved > 0:
		row("max reserved", "%s (%s B) at line %d", units.Bytes(r.Reserved), commas(r.Reserved), r.ReservedLine)
	default:
		row("max reserved", "none: %s; the memory part is not fitted", r.NoMemory)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
