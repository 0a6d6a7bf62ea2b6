package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// readTrainLog reads and parses --train-log (a file, or "-" for standard
// input).
func readTrainLog(a *app, path string) (*scenarios.TrainLog, error) {
	name, data, err := path, []byte(nil), error(nil)
	if path == "-" {
		name = "<stdin>"
		data, err = readBounded(a.in, scenarios.MaxTrainLogBytes)
	} else {
		data, err = readFileBounded(path, scenarios.MaxTrainLogBytes)
	}
	if errors.Is(err, errTooLarge) {
		return nil, inputError{fmt.Errorf("--train-log %s: larger than %d MiB: give the log of one run (its step lines suffice: grep 'step:' or 'iteration', the progress bar's lines, Composer's blocks, 'SamplesPerSec' for DeepSpeed's, or 'train_step_timing' for NeMo's)", name, scenarios.MaxTrainLogBytes>>20)}
	}
	if err != nil {
		return nil, readError("--train-log "+name, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		// It said "no training step found: want torchtitan's metrics
		// lines (…)", 800 characters about formats, for nothing read.
		return nil, inputError{fmt.Errorf("--train-log %s: empty (give the training log of the measured run)", name)}
	}
	l, err := scenarios.ParseTrainLog(name, data)
	if err != nil {
		return nil, inputError{err}
	}
	return l, nil
}

// runCalibrateTrainLog fits the compute efficiency of the scenario arg to
// the steady-state step of --train-log and, when the log prints torch's max
// reserved memory, its allocator overhead to that, and writes the
// calibration file's compute and memory parts. Nothing is written unless
// the step-time fit succeeds; a max reserved memory that cannot be fitted
// leaves the memory part unfitted (the summary and a warning say why).
func runCalibrateTrainLog(a *app, o *calibrateOpts, cmd *cobra.Command, arg string, w io.Writer) error {
	if err := computeFlags(a, o, cmd); err != nil {
		return err
	}
	if o.trainLog == "-" && arg == "-" {
		return inputError{errors.New(`--train-log - and the scenario -: standard input can be read once (save the scenario to a file and give its name)`)}
	}
	log, err := readTrainLog(a, o.trainLog)
	if err != nil {
		return err
	}
	old, s, withNetwork, err := calibrationInputs(a, o, arg)
	if err != nil {
		return err
	}
	if err := log.CheckRun(s); err != nil {
		return inputError{err}
	}
	work := trainLogWork(s)
	ss, err := log.Steady(work)
	if err != nil {
		if log.Unread > 0 {
			err = fmt.Errorf("%w; %s of the log's format were not read, the first at %s: %s", err, unreadCount(log.Unread), log.UnreadAt, log.UnreadWhy)
		}
		return inputError{err}
	}
	sum := trainLogSummary(log, ss, s.Name, work)
	eff, before, after, err := fitCompute(o, s, ss.Median)
	if err != nil {
		return err
	}
	cm, memRep, err := fitTrainLogMemoryOrSay(a, o, s, old, withNetwork, log, ss, sum)
	if err != nil {
		return err
	}
	cc := calCompute(o, s, scenarios.CalMethodStepTime, ss.Median, eff, nil, nil)
	cc.Source = log.File
	carry, err := writeTrainLogParts(a, o, s, old, withNetwork, cc, cm)
	if err != nil {
		return err
	}
	if log.Unread > 0 {
		// L2: a broken or cut step line vanished without a word.
		a.warnf("%s: %s: %s of the log's format not read (this is the first); the steady state is of the %d read",
			log.UnreadAt, log.UnreadWhy, unreadCount(log.Unread), len(log.Steps))
	}
	rep := &reports.ComputeCalibration{File: o.file, Scenario: s.Name, Setup: s, Method: scenarios.CalMethodStepTime, Measured: ss.Median, Before: before, After: after,
		KeptNetwork: old != nil && old.HasNetwork(), WithNetwork: withNetwork, KeptMemory: cm == nil && old != nil && old.Memory != nil, NoHeader: true, Carried: carry.notes}
	return writeTrainLogReport(a, w, o.file, sum, rep, memRep)
}

// writeTrainLogReport prints what calibrate --train-log read and fitted:
// the summary, the compute and (when fitted) the memory calibration, as
// tables or as one JSON document.
func writeTrainLogReport(a *app, w io.Writer, file string, sum *reports.TrainLogSummary, rep *reports.ComputeCalibration, memRep *reports.MemoryCalibration) error {
	if a.format == "json" {
		return reports.WriteCalibrationJSON(w, &reports.CalibrationSummary{File: file, TrainLog: sum, Compute: rep, Memory: memRep})
	}
	if err := reports.WriteTrainLogSummary(w, sum); err != nil {
		return err
	}
	if err := reports.WriteComputeCalibration(w, rep); err != nil {
		return err
	}
	if memRep != nil {
		return reports.WriteMemoryCalibration(w, memRep)
	}
	return nil
}

// unreadCount is n recognised lines, in words.
func unreadCount(n int) string {
	if n == 1 {
		return "1 step line"
	}
	return fmt.Sprintf("%d step lines", n)
}

// trainLogWork is what one optimizer step of s trains. torchtitan's tps
// counts a data-parallel rank's tokens (every micro-batch's labels, before
// context parallelism shards them) per GPU of its model-parallel group;
// DeepSpeed's samples per second the global batch, train_batch_size =
// micro batch × gradient accumulation × data-parallel size
// (deepspeed/runtime/config.py at edaa7221267243c7be7fb49c5d5f5c4fb97b4641,
// whose world size excludes sequence parallelism).
func trainLogWork(s *scenarios.Scenario) scenarios.StepWork {
	tr := s.Training
	return scenarios.StepWork{
		Tokens:    float64(tr.MicroBatch) * float64(tr.GradAccum) * float64(s.Model.SeqLen) / float64(max(1, s.Parallelism.CP)),
		Samples:   float64(tr.MicroBatch) * float64(tr.GradAccum) * float64(s.Parallelism.DP),
		GradAccum: max(1, tr.GradAccum),
	}
}

// noMemory says why a log gives no max reserved memory.
func noMemory(l *scenarios.TrainLog, ss *scenarios.SteadyState) string {
	if ss.Reserved > 0 {
		return ""
	}
	switch l.Format {
	case scenarios.TrainLogMegatron:
		return `the log has no report_memory line ("memory (MB) | … | max reserved: …")`
	case scenarios.TrainLogHFTrainer:
		return "the Hugging Face Trainer prints no memory by default (its memory metrics, skip_memory_metrics=False, are allocated deltas, not torch's max reserved)"
	case scenarios.TrainLogDeepSpeed:
		peak := ""
		if l.MaxAllocated > 0 {
			peak = fmt.Sprintf(", at most %s at line %d", units.Bytes(l.MaxAllocated), l.MaxAllocatedLine)
		}
		return fmt.Sprintf("DeepSpeed's lines print MemAllocated and MaxMemAllocated (torch's allocated memory%s), not the max reserved the allocator overhead is fitted to (calibrate --reserved takes torch.cuda.max_memory_reserved())", peak)
	case scenarios.TrainLogComposer:
		for _, s := range l.Steps {
			if s.Memory {
				return "the blocks print memory/peak_reserved_mem 0 (the device gave no CUDA memory statistics)"
			}
		}
		return "the blocks print no memory/peak_reserved_mem (add composer's MemoryMonitor callback)"
	case scenarios.TrainLogNeMo:
		return "NeMo prints max_memory_reserved only with NEMO_LOG_MEMORY_USAGE=1 (MegatronStrategy.training_step)"
	}
	for _, s := range l.Steps {
		if s.Memory {
			return "the log prints memory 0.00GiB (the device gave no CUDA memory statistics)"
		}
	}
	return "the step lines print no memory"
}

// trainLogSummary is what calibrate --train-log prints of the log read.
func trainLogSummary(log *scenarios.TrainLog, ss *scenarios.SteadyState, scenario string, work scenarios.StepWork) *reports.TrainLogSummary {
	sum := &reports.TrainLogSummary{File: log.File, Scenario: scenario, Format: log.Format, Logged: len(log.Steps),
		Warmup: ss.Warmup, Lines: ss.Lines, First: ss.First, Last: ss.Last,
		Median: ss.Median, Q1: ss.Q1, Q3: ss.Q3, Min: ss.Min, Max: ss.Max, MedianTPS: ss.MedianTPS, MedianSamplesPerSec: ss.MedianSamplesPerSec,
		Reserved: ss.Reserved, ReservedLine: ss.ReservedLine, NoMemory: noMemory(log, ss), Note: ss.Note}
	if n := len(log.Steps); n > 0 {
		sum.FirstLogged, sum.LastLogged = log.Steps[0].Step, log.Steps[n-1].Step
	}
	switch log.Format {
	case scenarios.TrainLogTorchtitan:
		sum.Tokens = int64(work.Tokens + 0.5)
	case scenarios.TrainLogDeepSpeed:
		sum.Samples = int64(work.Samples + 0.5)
	case scenarios.TrainLogHFTrainer:
		sum.Basis = "the progress bar's s/it, or 1 / it/s"
	case scenarios.TrainLogComposer:
		sum.Basis = "1 / Train throughput/batches_per_sec, SpeedMonitor's rolling mean"
	case scenarios.TrainLogNeMo:
		sum.Basis = "TimingCallback's train_step_timing in s on rank 0; ProgressPrinter's, the mean over progress_interval steps"
	}
	return sum
}

// fitTrainLogMemoryOrSay is fitTrainLogMemory, but a peak below what the
// memory model allocates leaves the memory part unfitted rather than
// failing: the step-time fit stands on its own and is written, and sum and
// a warning say why the memory part is not. A peak above the GPU's memory
// was not measured on the scenario's GPU, so the log is of another run:
// refused, nothing written.
func fitTrainLogMemoryOrSay(a *app, o *calibrateOpts, s *scenarios.Scenario, old *scenarios.Calibration, withNetwork bool,
	log *scenarios.TrainLog, ss *scenarios.SteadyState, sum *reports.TrainLogSummary) (*scenarios.CalMemory, *reports.MemoryCalibration, error) {
	cm, rep, err := fitTrainLogMemory(a, o, s, old, withNetwork, log, ss)
	var un memoryUnfitted
	if !errors.As(err, &un) {
		return cm, rep, err
	}
	a.warnf("the memory part is not fitted (the compute part is written): %s:%d: max reserved %s: %s",
		log.File, ss.ReservedLine, units.Bytes(ss.Reserved), un.reason)
	sum.NotFitted = un.reason // the summary's row names the line and the peak already
	return nil, nil, nil
}

// memoryUnfitted is fitTrainLogMemory's failure to fit a peak the memory
// model cannot reproduce (below what it allocates): the reason, without
// the line and the peak.
type memoryUnfitted struct{ reason string }

func (m memoryUnfitted) Error() string { return m.reason }

// fitTrainLogMemory fits s's allocator overhead to the log's max reserved
// memory, as calibrate --reserved does; nil, nil when the log gives none.
func fitTrainLogMemory(a *app, o *calibrateOpts, s *scenarios.Scenario, old *scenarios.Calibration, withNetwork bool,
	log *scenarios.TrainLog, ss *scenarios.SteadyState) (*scenarios.CalMemory, *reports.MemoryCalibration, error) {
	if ss.Reserved <= 0 {
		return nil, nil, nil
	}
	if msg := peakAboveGPU("reserved", ss.Reserved, s); msg != "" {
		return nil, nil, inputError{fmt.Errorf("%s:%d: max reserved %s: %s", log.File, ss.ReservedLine, units.Bytes(ss.Reserved), msg)}
	}
	r, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		return nil, nil, a.replayError(err)
	}
	fit, err := memory.FitAllocatorOverhead(s, slices.Max(r.PeakMemory), r.MemoryModel.GatherPool, ss.Reserved, false)
	if err != nil {
		return nil, nil, memoryUnfitted{fmt.Sprint(unfittable(err, s, "reserved"))}
	}
	if w := overheadWarning(fit.Overhead, false); w != "" {
		a.warnf("%s:%d: %s", log.File, ss.ReservedLine, w)
	}
	cm := &scenarios.CalMemory{AllocatorOverhead: fit.Overhead, Method: scenarios.CalMethodReserved, MeasuredBytes: ss.Reserved, Scenario: s.Name, GPU: s.Cluster.GPU, CalModel: scenarios.CalModelOf(&s.Model), CalSetup: scenarios.CalSetupOf(s)}
	rep := &reports.MemoryCalibration{File: o.file, Scenario: s.Name, Method: scenarios.CalMethodReserved, Measured: ss.Reserved,
		Allocated: fit.Allocated, Pool: fit.Pool, PoolName: s.GatherPoolName(), Outside: fit.Outside,
		Before:      reports.MemoryPoint{Overhead: memory.AllocatorOverheadOf(s), Reserved: r.ReservedPeak, Device: r.DevicePeak, Simulated: r.MemoryModel.AllocSim != nil},
		After:       reports.MemoryPoint{Overhead: fit.Overhead, Reserved: fit.Reserved, Device: fit.Device},
		KeptNetwork: old != nil && old.HasNetwork(), WithNetwork: withNetwork, KeptCompute: true, NoHeader: true}
	return cm, rep, nil
}

// writeTrainLogParts writes the compute part cc and the memory part cm
// (nil: not fitted) with what the fit ran with (carriedParts), then warns
// of what the file lacks and of an efficiency far below the published.
func writeTrainLogParts(a *app, o *calibrateOpts, s *scenarios.Scenario, old *scenarios.Calibration, withNetwork bool,
	cc *scenarios.CalCompute, cm *scenarios.CalMemory) (carried, error) {
	carry := carriedParts(o, s, old, withNetwork, cc)
	if err := writeCalibrationPart(o.file, old, func(c *scenarios.Calibration) {
		c.Compute = cc
		carry.apply(c)
		if cm != nil {
			c.Memory = cm
		}
	}); err != nil {
		return carry, err
	}
	if carry.warning != "" {
		a.warnf("%s", carry.warning)
	}
	for _, lw := range fitWarnings(s, cc) {
		a.warnf("%s: %s", cc.Source, lw)
	}
	return carry, nil
}
