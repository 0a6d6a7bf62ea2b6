package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/zerosim/zerosim/units"
)

// This file reads a training run's stdout log: the step throughput (or
// time) and the memory the trainer reports, for calibrate --train-log. Two
// formats, each as its source prints it:
//
//   - torchtitan's metrics line (pytorch/torchtitan
//     torchtitan/components/metrics.py at
//     b5bcd76c66d0acb1a08b176d9639425bc55e0b2a, MetricsProcessor.log; the
//     same at 1ab4353189b0f9bf0640a7d6bd49d55f3e951a53):
//     "step: 10  loss:  9.8  grad_norm: 1.2  memory: 38.45GiB(40.47%)
//     tps: 7,890  tflops: 456.9  mfu: 46.19%", with ANSI colour codes
//     unless disabled. memory is device_info["reserved_bytes.all.peak"] in
//     GiB (2^30 B; torch.cuda.max_memory_reserved), its peak reset after
//     every logged line (reset_peak_stats), so each line holds the peak of
//     its interval. tps = ntokens_since_last_log / (time_delta ·
//     non_data_parallel_size): the labels of every micro-batch a
//     data-parallel rank read since the last line (torchtitan/trainer.py,
//     labels.numel() before context parallelism shards them) per second per
//     GPU of its model-parallel group; the interval is metrics.log_freq
//     steps, so tokens per step per GPU over tps is the mean step of the
//     interval. torchtitan before 2025 printed "wps:" for the same figure
//     (train.py at c48ae39f4f2711b945cbae6fd5ffe662fe523ccc, divided by
//     model_parallel_size). "validate step:" lines (log_validation) are not
//     training steps and are skipped.
//   - Megatron-LM's iteration line (NVIDIA/Megatron-LM
//     megatron/training/training.py at
//     d98e8a64ddf34856e74b24714e3bedb2f5a39553, training_log): " iteration
//     100/ 500000 | consumed samples: … | elapsed time per iteration (ms):
//     1234.5 | …", the mean time of the iterations since the last line
//     (log_interval of them; the first iteration has a line of its own);
//     one iteration is one optimizer step. Its memory is report_memory's
//     line (megatron/training/utils/common_utils.py at
//     543628902932815fc3ea29e74e7a526c03ce99d6): "[Rank 0] (after 10
//     iterations) memory (MB) | allocated: … | max allocated: … | reserved:
//     … | max reserved: …", MB being 2^20 B, max reserved
//     torch.cuda.max_memory_reserved since the start (never reset); it is
//     printed by the first rank of each data-parallel group after the first
//     logged iterations, so the largest over the lines is the busiest rank.
//
// Lines of several ranks of one step (torchrun's "[rankN]:" prefixes, or
// the same line repeated) count once: the first line's throughput and the
// largest memory.

// Train log formats.
const (
	TrainLogTorchtitan = "torchtitan"
	TrainLogMegatron   = "megatron"
)

// TrainLogStep is one logged step of a training log.
type TrainLogStep struct {
	// Line is the step's first line in the file (1-based).
	Line int
	// Step is the step (iteration) number the line prints.
	Step int64
	// TPS is torchtitan's tokens per second per GPU (0 for Megatron).
	TPS float64
	// TimeMS is Megatron's elapsed time per iteration in ms (0 for
	// torchtitan).
	TimeMS float64
	// Reserved is torchtitan's max reserved memory of the line's interval,
	// bytes (0: none printed, or 0.00GiB); Memory says whether the line
	// prints it.
	Reserved int64
	Memory   bool
}

// TrainLog is what ParseTrainLog read.
type TrainLog struct {
	File   string
	Format string // TrainLogTorchtitan or TrainLogMegatron
	Steps  []TrainLogStep
	// MaxReserved is Megatron's largest report_memory "max reserved", bytes
	// (0: none), and MaxReservedLine its line.
	MaxReserved     int64
	MaxReservedLine int
}

// MaxTrainLogBytes bounds a training log read by calibrate --train-log.
const MaxTrainLogBytes = 256 << 20

var (
	ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	titanLine  = regexp.MustCompile(`(?:^|[^A-Za-z_])step:\s*(\d{1,18})\s+loss:`)
	titanTPS   = regexp.MustCompile(`\s(?:tps|wps):\s*([0-9][0-9,]{0,30})(?:\s|$)`)
	titanMem   = regexp.MustCompile(`\smemory:\s*([0-9]{1,9}(?:\.[0-9]{1,9})?)GiB`)
	megaLine   = regexp.MustCompile(`(?:^|\s)iteration\s+(\d{1,18})/\s*\d{1,18}\s*\|`)
	megaTime   = regexp.MustCompile(`\|\s*elapsed time per iteration \(ms\):\s*([0-9]{1,15}(?:\.[0-9]{1,9})?)\s*\|`)
	megaMem    = regexp.MustCompile(`memory \(MB\) \|.*\| max reserved:\s*([0-9]{1,15}(?:\.[0-9]{1,9})?)`)
)

// ParseTrainLog reads a torchtitan or Megatron-LM training log. Its errors
// are one line naming the file (and the line) and the fix.
func ParseTrainLog(name string, data []byte) (*TrainLog, error) {
	name = strconv.Quote(name)
	name = name[1 : len(name)-1]
	l := &TrainLog{File: name}
	seen := map[int64]int{} // step → index in l.Steps
	var titanN, megaN, firstTitan, firstMega int
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimRight(ansiEscape.ReplaceAllString(string(raw), ""), "\r")
		at := n + 1
		if strings.Contains(line, "memory (MB) |") {
			if m := megaMem.FindStringSubmatch(line); m != nil {
				mb, err := strconv.ParseFloat(m[1], 64)
				if err != nil || mb < 0 || mb > 1e12 {
					return nil, fmt.Errorf("%s:%d: max reserved %q MB is not a size: is the file a Megatron-LM log?", name, at, m[1])
				}
				if b := int64(math.Round(mb * (1 << 20))); b > l.MaxReserved {
					l.MaxReserved, l.MaxReservedLine = b, at
				}
			}
			continue
		}
		var st TrainLogStep
		if m := titanLine.FindStringSubmatchIndex(line); m != nil && !validateStep(line, m[0]) {
			step, err := strconv.ParseInt(line[m[2]:m[3]], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: step %q is out of range: is the file a torchtitan log?", name, at, line[m[2]:m[3]])
			}
			rest := line[m[1]:]
			t := titanTPS.FindStringSubmatch(rest)
			if t == nil {
				continue // a step line without throughput: not the metrics line
			}
			tps, err := strconv.ParseFloat(strings.ReplaceAll(t[1], ",", ""), 64)
			if err != nil || tps > 1e15 {
				return nil, fmt.Errorf("%s:%d: tps %q is not a number: is the file a torchtitan log?", name, at, t[1])
			}
			st = TrainLogStep{Line: at, Step: step, TPS: tps}
			if mm := titanMem.FindStringSubmatch(rest); mm != nil {
				gib, err := strconv.ParseFloat(mm[1], 64)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: memory %qGiB is not a size: is the file a torchtitan log?", name, at, mm[1])
				}
				st.Reserved, st.Memory = int64(math.Round(gib*(1<<30))), true
			}
			if titanN == 0 {
				firstTitan = at
			}
			titanN++
		} else if m := megaLine.FindStringSubmatch(line); m != nil {
			t := megaTime.FindStringSubmatch(line)
			if t == nil {
				continue
			}
			step, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: iteration %q is out of range: is the file a Megatron-LM log?", name, at, m[1])
			}
			ms, err := strconv.ParseFloat(t[1], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: elapsed time per iteration %q ms is not a number: is the file a Megatron-LM log?", name, at, t[1])
			}
			st = TrainLogStep{Line: at, Step: step, TimeMS: ms}
			if megaN == 0 {
				firstMega = at
			}
			megaN++
		} else {
			continue
		}
		if titanN > 0 && megaN > 0 {
			this, other := "torchtitan step", "Megatron-LM iteration"
			if firstMega == at {
				this, other = other, this
			}
			return nil, fmt.Errorf("%s:%d: a %s line in a log of %s lines (line %d): give the log of one run", name, at, this, other, min(firstTitan, firstMega))
		}
		if i, ok := seen[st.Step]; ok {
			// Another rank's line of a step already read (or a repeat):
			// the largest memory counts.
			l.Steps[i].Reserved = max(l.Steps[i].Reserved, st.Reserved)
			continue
		}
		if k := len(l.Steps); k > 0 && st.Step < l.Steps[k-1].Step {
			return nil, fmt.Errorf("%s:%d: step %d after step %d (line %d): the log holds more than one run (a restart?); give the lines of one run", name, at, st.Step, l.Steps[k-1].Step, l.Steps[k-1].Line)
		}
		seen[st.Step] = len(l.Steps)
		l.Steps = append(l.Steps, st)
	}
	switch {
	case titanN > 0:
		l.Format = TrainLogTorchtitan
	case megaN > 0:
		l.Format = TrainLogMegatron
	default:
		return nil, fmt.Errorf("%s: no training step found: want torchtitan's metrics lines (\"step: 10  loss: …  memory: …GiB(…%%)  tps: …\") or Megatron-LM's (\"iteration 10/ 500000 | … | elapsed time per iteration (ms): … |\"); give the trainer's stdout", name)
	}
	return l, nil
}

// Steady-state rule: the first ⌈n/10⌉ logged lines (at least one) are
// warm-up and skipped: the first holds the first step (compilation, the
// caching allocator's first segments, NCCL's communicators; Megatron logs
// the first iteration on its own line "to document initialization
// overhead"), and a tenth more absorbs the learning-rate warm-up's first
// steps and clock ramps. The rule is fixed, not fitted to a log.
// MinSteadySteps lines must remain.
const MinSteadySteps = 3

// WarmupSteps is the number of leading logged lines a log of n lines
// skips.
func WarmupSteps(n int) int { return max(1, (n+9)/10) }

// SteadyState is the steady-state step time of a training log.
type SteadyState struct {
	// Warmup lines skipped, then the steps used: Lines of them, steps
	// First to Last as the log numbers them.
	Warmup, Lines int
	First, Last   int64
	// Median, the quartiles and the range of the step time over the lines
	// used (each line's mean step over its interval).
	Median, Q1, Q3, Min, Max units.Duration
	// MedianTPS is torchtitan's median tokens per second per GPU (0 for
	// Megatron).
	MedianTPS float64
	// Reserved is the largest max reserved memory the used lines print
	// (torchtitan) or the log's report_memory (Megatron), bytes; 0: none.
	Reserved     int64
	ReservedLine int
}

// Steady is l's steady-state step time. tokens is the tokens a GPU's
// data-parallel rank trains per step over its model-parallel degree
// (micro_batch × grad_accum × seq_len / cp): torchtitan's step time is
// tokens / tps (unused for Megatron, which prints the time).
func (l *TrainLog) Steady(tokens float64) (*SteadyState, error) {
	n := len(l.Steps)
	w := WarmupSteps(n)
	if n-w < MinSteadySteps {
		return nil, fmt.Errorf("%s: %d logged steps, %d after skipping %d of warm-up: need at least %d (%d logged lines): log more steps (torchtitan metrics.log_freq, Megatron --log-interval) or run longer",
			l.File, n, max(0, n-w), w, MinSteadySteps, MinSteadySteps+WarmupSteps(MinSteadySteps+1))
	}
	used := l.Steps[w:]
	secs := make([]float64, len(used))
	var tps []float64
	for i, s := range used {
		switch l.Format {
		case TrainLogTorchtitan:
			if !(s.TPS > 0) {
				return nil, fmt.Errorf("%s:%d: tps 0 at step %d: the step has no throughput to time; give a log of a run that trained", l.File, s.Line, s.Step)
			}
			secs[i] = tokens / s.TPS
			tps = append(tps, s.TPS)
		default:
			if !(s.TimeMS > 0) {
				return nil, fmt.Errorf("%s:%d: elapsed time per iteration 0 ms at iteration %d: give a log of a run that trained", l.File, s.Line, s.Step)
			}
			secs[i] = s.TimeMS / 1e3
		}
		if !(secs[i] > 0 && secs[i] < 1e6) {
			return nil, fmt.Errorf("%s:%d: a step of %g s at step %d is out of range: check the scenario's micro_batch, grad_accum and seq_len against the run", l.File, s.Line, secs[i], s.Step)
		}
	}
	slices.Sort(secs)
	d := func(s float64) units.Duration { return units.Duration(math.Round(s * float64(units.Second))) }
	q := func(p float64) units.Duration { return d(stat.Quantile(p, stat.LinInterp, secs, nil)) }
	ss := &SteadyState{Warmup: w, Lines: len(used), First: used[0].Step, Last: used[len(used)-1].Step,
		Median: d(median(secs)), Q1: q(0.25), Q3: q(0.75), Min: d(secs[0]), Max: d(secs[len(secs)-1])}
	if tps != nil {
		slices.Sort(tps)
		ss.MedianTPS = median(tps)
	}
	if l.Format == TrainLogTorchtitan {
		for _, s := range used {
			if s.Reserved > ss.Reserved {
				ss.Reserved, ss.ReservedLine = s.Reserved, s.Line
			}
		}
	} else {
		ss.Reserved, ss.ReservedLine = l.MaxReserved, l.MaxReservedLine
	}
	return ss, nil
}

// validateStep tells whether the step line matched at i is torchtitan's
// "validate step:" (log_validation), not a training step.
func validateStep(line string, i int) bool {
	k := i + strings.Index(line[i:], "step:")
	return strings.HasSuffix(strings.TrimRight(line[:k], " \t"), "validate")
}

// median of sorted xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
