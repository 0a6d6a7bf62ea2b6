package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// calibrateArgs checks calibrate's arguments against its form: nccl-tests
// logs, or one scenario with one measurement (--step-time, --trace,
// --reserved or --device).
func calibrateArgs(o *calibrateOpts, args []string) error {
	given := measurements(o)
	measured := len(given) > 0
	switch {
	case len(given) > 1:
		return inputError{fmt.Errorf("--%s and --%s: give one measurement (the step time, a throughput, a profiler trace of one step, the reserved or the device memory peak, a training log); each run writes its part into --file", given[0].flag, given[1].flag)}
	case measured && len(args) == 0:
		return inputError{fmt.Errorf("--%s needs the scenario of the measured run: zerosim calibrate --%s %s scenario.yaml", computeFlag(o), computeFlag(o), computeValue(o))}
	case measured && len(args) > 1:
		return inputError{fmt.Errorf("--%s takes one scenario, got %d arguments: calibrate nccl-tests logs in a run of their own (zerosim calibrate LOG...; both write into --file)", computeFlag(o), len(args))}
	case !measured && len(args) == 1 && (strings.HasSuffix(args[0], ".yaml") || strings.HasSuffix(args[0], ".yml")):
		// A scenario without its measurement was read as an nccl-tests
		// log ("no nccl-tests rows", qatput33 U1).
		return inputError{fmt.Errorf("%s: a scenario needs its measurement: zerosim calibrate --tokens-per-sec 3760 %s (tokens/s per GPU), or --step-time 2.84s, --trace step.json, --reserved 82.4GiB, --device 83.5GiB, --train-log FILE; nccl-tests logs are calibrated alone (zerosim calibrate LOG... --scenario %s)", args[0], args[0], args[0])}
	case !measured && len(args) == 0:
		return inputError{errors.New("calibrate needs nccl-tests logs (zerosim calibrate LOG...) or a measurement of a scenario (zerosim calibrate --step-time 2.84s scenario.yaml, or --tokens-per-sec 3760, --trace step.json, --reserved 82.4GiB, --device 83.5GiB)")}
	}
	return nil
}

// measurement flags given, in the order --step-time, --tokens-per-sec,
// --trace, --reserved, --device, --train-log.
type measurementFlag struct{ flag, value string }

func measurements(o *calibrateOpts) []measurementFlag {
	var m []measurementFlag
	for _, f := range []measurementFlag{{"step-time", o.stepTime}, {"tokens-per-sec", o.tokensPerSec}, {"trace", o.trace}, {"reserved", o.reserved}, {"device", o.device}, {"train-log", o.trainLog}} {
		if f.value != "" {
			m = append(m, f)
		}
	}
	return m
}

// computeFlag names the measurement flag given (the first, and
// --step-time when none); computeValue its value.
func computeFlag(o *calibrateOpts) string {
	if m := measurements(o); len(m) > 0 {
		return m[0].flag
	}
	return "step-time"
}

func computeValue(o *calibrateOpts) string {
	if m := measurements(o); len(m) > 0 {
		return m[0].value
	}
	return ""
}

// readCalibrationFile reads an existing --file to keep its other part; nil
// when there is none. A file that is not a calibration is an error, not
// overwritten.
func readCalibrationFile(path string) (*scenarios.Calibration, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A device or a FIFO, written in place, holds no calibration to
		// keep: /dev/full was read as one "larger than 16 MiB" (QA25 L16).
		return nil, nil
	}
	data, err := readFileBounded(path, scenarios.MaxCalibrationBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, errTooLarge) {
		// Refused before, by checkTarget; the same line if it grew since.
		return nil, notKind("file", path, calKind, isCalibration(path))
	}
	if err != nil {
		return nil, readError("--file "+path, err)
	}
	c, err := scenarios.ParseCalibration(path, data)
	if err != nil {
		return nil, notKind("file", path, calKind, isCalibration(path))
	}
	return c, nil
}

// maxTraceFile bounds a profiler trace read by calibrate --trace: one step
// of a large model is tens of MiB.
const maxTraceFile = 512 << 20

// readTrace reads and parses a profiler trace.
func readTrace(path string) (*scenarios.TraceKernels, error) {
	if err := noStdin("--trace", path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, readError("--trace "+path, err)
	}
	data, err := readBounded(f, maxTraceFile)
	f.Close()
	if err == nil && bytes.HasPrefix(data, []byte("\x1f\x8b")) {
		data, err = gunzipBounded(path, data, maxTraceFile)
		if err != nil && !errors.Is(err, errTooLarge) {
			return nil, err
		}
	}
	if errors.Is(err, errTooLarge) {
		return nil, inputError{fmt.Errorf("%s: larger than %d MiB: record one step (torch.profiler.schedule(wait=1, warmup=1, active=1))", path, maxTraceFile>>20)}
	}
	if err != nil {
		return nil, readError("--trace "+path, err)
	}
	k, err := scenarios.ParseProfilerTrace(path, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if err != nil {
		return nil, inputError{err}
	}
	return k, nil
}

// gunzipBounded decompresses a gzip file's data (torch.profiler's
// tensorboard_trace_handler(use_gzip=True) writes its traces as
// .pt.trace.json.gz) up to limit bytes; a longer stream is errTooLarge, a
// corrupt one an input error naming the file.
func gunzipBounded(path string, data []byte, limit int64) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err == nil {
		data, err = readBounded(z, limit)
	}
	if err != nil && !errors.Is(err, errTooLarge) {
		return nil, inputError{fmt.Errorf("%s: a gzip file that does not decompress (%v): gunzip it and give the JSON, or record the trace again", path, err)}
	}
	return data, err
}

// parseStepTime reads --step-time.
func parseStepTime(v string) (units.Duration, error) {
	// Rounded to zerosim's picosecond: a mean step time printed to 15
	// digits ("3.89006944856651s") was refused as "not a duration"
	// (qatput30 finding 7a).
	d, err := units.ParseDurationNearest(v)
	if _, isNumber := units.Decimal(strings.TrimSpace(v)); isNumber && err != nil {
		return 0, inputError{fmt.Errorf("--step-time %s: a duration needs a unit: use %ss or %sms (the measured time of one optimizer step)", v, v, v)}
	}
	if s, ok := minutesAsSeconds(v); ok && err != nil {
		if _, e := units.ParseDuration(s); e != nil {
			// 100000h is 360000000s, which does not fit either (QA19 L4:
			// the advice was refused when followed).
			return 0, inputError{fmt.Errorf("--step-time %q: durations are in ps, ns, us, ms or s, and %s is more than the largest, %ds: use the measured time of one optimizer step, e.g. --step-time 2.84s", v, s, int64(math.MaxInt64)/int64(units.Second))}
		}
		return 0, inputError{fmt.Errorf("--step-time %q: durations are in ps, ns, us, ms or s: write --step-time %s", v, s)}
	}
	if err != nil {
		return 0, inputError{fmt.Errorf("--step-time %q %s: use the measured time of one optimizer step with its unit, e.g. --step-time 2.84s or 950ms (units: ps, ns, us, ms, s)", v, measureWhy(v, err, "duration"))}
	}
	if d <= 0 {
		return 0, inputError{fmt.Errorf("--step-time %q: want a time > 0, e.g. --step-time 2.84s", v)}
	}
	return d, nil
}

// parseTokensPerSec reads --tokens-per-sec: a measured throughput in
// tokens/s per GPU, a finite number > 0 (a thousands separator is not
// taken: 3,760 is refused with the number to write).
func parseTokensPerSec(v string) (float64, error) {
	t := strings.TrimSpace(v)
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		if c := strings.ReplaceAll(t, ",", ""); c != t {
			if _, e := strconv.ParseFloat(c, 64); e == nil {
				return 0, inputError{fmt.Errorf("--tokens-per-sec %q: write the number without separators: --tokens-per-sec %s", v, c)}
			}
		}
		return 0, inputError{fmt.Errorf("--tokens-per-sec %q: want the measured tokens/s per GPU, a number, e.g. --tokens-per-sec 3760", v)}
	}
	if x <= 0 {
		return 0, inputError{fmt.Errorf("--tokens-per-sec %q: want a throughput > 0, e.g. --tokens-per-sec 3760", v)}
	}
	return x, nil
}

// tokensPerSec is --tokens-per-sec's throughput (0 when not given; it
// was checked by measurement); tokensPerStep the scenario's tokens per GPU
// per step it divided (0 then too).
func tokensPerSec(o *calibrateOpts) float64 {
	if o.tokensPerSec == "" {
		return 0
	}
	x, _ := parseTokensPerSec(o.tokensPerSec)
	return x
}

func tokensPerStep(o *calibrateOpts, s *scenarios.Scenario) float64 {
	if o.tokensPerSec == "" {
		return 0
	}
	return trainLogWork(s).Tokens
}

// tokensStep is the measured step: --tokens-per-sec's on s when given
// (stepFromTokens), measured (--step-time's, --trace's) otherwise.
func tokensStep(o *calibrateOpts, s *scenarios.Scenario, measured units.Duration) (units.Duration, error) {
	if o.tokensPerSec == "" {
		return measured, nil
	}
	return stepFromTokens(o.tokensPerSec, s)
}

// stepFromTokens is the step --tokens-per-sec v gives on s: s's tokens per
// GPU per step (trainLogWork: micro_batch × grad_accum × seq_len / cp, the
// count zerosim run's tokens/s per GPU divides its step into) over v,
// rounded to the picosecond.
func stepFromTokens(v string, s *scenarios.Scenario) (units.Duration, error) {
	tps, err := parseTokensPerSec(v)
	if err != nil {
		return 0, err
	}
	tokens := trainLogWork(s).Tokens
	if tokens <= 0 {
		return 0, inputError{fmt.Errorf("--tokens-per-sec %s: scenario %s trains no tokens per step (a model without seq_len): use --step-time", v, s.Name)}
	}
	ps := math.Round(tokens / tps * float64(units.Second))
	if ps < 1 || ps >= math.MaxInt64 {
		return 0, inputError{fmt.Errorf("--tokens-per-sec %s: %g tokens per GPU per step at that rate is a step of %g s, outside 1 ps to %d s: check the throughput's unit (tokens/s per GPU)", v, tokens, ps/float64(units.Second), int64(math.MaxInt64)/int64(units.Second))}
	}
	return units.Duration(ps), nil
}

// runCalibrateCompute fits the compute efficiency of the scenario arg to
// --step-time, or the GEMM and attention efficiencies to --trace's kernels
// of each class, and writes the calibration file's compute part.
func runCalibrateCompute(a *app, o *calibrateOpts, cmd *cobra.Command, arg string, w io.Writer) error {
	if err := computeFlags(a, o, cmd); err != nil {
		return err
	}
	measured, trace, err := measurement(o)
	if err != nil {
		return err
	}
	old, s, withNetwork, err := calibrationInputs(a, o, arg)
	if err != nil {
		return err
	}
	if measured, err = tokensStep(o, s, measured); err != nil {
		return err
	}
	method := scenarios.CalMethodStepTime
	if trace != nil {
		method = scenarios.CalMethodTrace
	}
	var (
		eff           float64
		before, after reports.ComputePoint
		classes       *reports.ClassCalibration
	)
	if trace != nil {
		if err := checkTrace(trace, s); err != nil {
			return err
		}
		eff, before, after, classes, err = fitTrace(o, s, trace)
	} else {
		eff, before, after, err = fitCompute(o, s, measured)
	}
	if err != nil {
		return err
	}
	cc := calCompute(o, s, method, measured, eff, trace, classes)
	carry := carriedParts(o, s, old, withNetwork, cc)
	if err := writeCalibrationPart(o.file, old, func(c *scenarios.Calibration) { c.Compute = cc; carry.apply(c) }); err != nil {
		return err
	}
	if carry.warning != "" {
		a.warnf("%s", carry.warning)
	}
	if trace != nil && trace.Devices > 1 {
		a.warnf("%s: kernels of %d GPUs (pids): only the first's (pid %s) are summed, one rank's step", o.trace, trace.Devices, trace.Device)
	}
	for _, w := range fitWarnings(s, cc) {
		a.warnf("%s: %s", measuredFlag(o, trace != nil, measured), w)
	}
	rep := &reports.ComputeCalibration{File: o.file, Scenario: s.Name, Setup: s, Method: method, Measured: measured, Before: before, After: after, TokensPerSec: tokensPerSec(o), TokensPerStep: tokensPerStep(o, s),
		KeptNetwork: old != nil && old.HasNetwork(), WithNetwork: withNetwork, KeptMemory: old != nil && old.Memory != nil, Classes: classes, Carried: carry.notes}
	if trace != nil {
		rep.Trace = &reports.TraceSummary{File: o.trace, Step: trace.Step, Steps: trace.Steps, Kernels: trace.Kernels, Passes: trace.Passes,
			Forward: trace.Forward, Backward: trace.Backward, Optimizer: trace.Optimizer, NCCL: trace.NCCL}
	}
	if a.format == "json" {
		return reports.WriteCalibrationJSON(w, &reports.CalibrationSummary{File: o.file, Compute: rep})
	}
	return reports.WriteComputeCalibration(w, rep)
}

// calibrationInputs reads what a fit to one measured step starts from:
// the existing --file (nil when there is none), the scenario of the
// measured run arg and, through withFileNetwork, whether the fit runs with
// the file's network part (it describes the measured cluster, so the file
// then reproduces the measurement, unless the scenario names a calibration
// of its own).
func calibrationInputs(a *app, o *calibrateOpts, arg string) (old *scenarios.Calibration, s *scenarios.Scenario, withNetwork bool, err error) {
	if old, err = readCalibrationFile(o.file); err != nil {
		return nil, nil, false, err
	}
	if s, err = a.loadScenario(arg); err != nil {
		return nil, nil, false, err
	}
	return old, s, withFileNetwork(o, s, old), nil
}

// withFileNetwork gives s, when it names no calibration of its own, the
// network part of the existing --file old: it describes the measured
// cluster, and the fit runs with it so that the file reproduces the
// measurement. It reports whether it did.
func withFileNetwork(o *calibrateOpts, s *scenarios.Scenario, old *scenarios.Calibration) bool {
	if s.Communication.CalibrationData != nil || old == nil || !old.HasNetwork() {
		return false
	}
	net := *old
	net.Compute, net.Memory = nil, nil
	s.Communication.Calibration, s.Communication.CalibrationData = o.file, &net
	return true
}

// calCompute is the calibration file's compute part for a fit of s.
func calCompute(o *calibrateOpts, s *scenarios.Scenario, method string, measured units.Duration, eff float64,
	trace *scenarios.TraceKernels, classes *reports.ClassCalibration) *scenarios.CalCompute {
	ms := func(d units.Duration) float64 { return float64(d) / float64(units.Millisecond) }
	cc := &scenarios.CalCompute{Efficiency: eff, Method: method, MeasuredMS: ms(measured),
		Scenario: s.Name, GPU: s.Cluster.GPU, PeakTFLOPS: math.Round(float64(s.Cluster.PeakBF16)/1e9) / 1e3, CalModel: scenarios.CalModelOf(&s.Model),
		CalSetup: scenarios.CalSetupOf(s)}
	if method == scenarios.CalMethodStepTime {
		// The step holds attention at this kernel's rate (qa20 M2), and
		// torch.compile's speed-up as the run had it.
		cc.AttentionKernel = string(s.Training.AttentionKernel)
		cc.Compile = scenarios.CompileName(s.Training.Compile)
	}
	if trace != nil {
		cc.Source = o.trace
		cc.GEMMMS, cc.AttentionMS, cc.OtherMS = ms(trace.GEMM), ms(trace.Attention), ms(trace.Other)
		if classes.AttentionFitted {
			cc.AttentionEfficiency, cc.AttentionKernel = classes.AttentionAfter, string(s.Training.AttentionKernel)
			cc.HeadDim = zero.ModelHeadDim(s)
		}
	}
	return cc
}

// computeFlags rejects the flags of the nccl-tests form.
func computeFlags(a *app, o *calibrateOpts, cmd *cobra.Command) error {
	for _, name := range []string{"scenario", "nodes", "gpus-per-node", "other-gpu", "min-size"} {
		if cmd.Flags().Changed(name) {
			return inputError{fmt.Errorf("--%s describes nccl-tests logs; with --%s the scenario is the argument: zerosim calibrate --%s %s scenario.yaml", name, computeFlag(o), computeFlag(o), computeValue(o))}
		}
	}
	if a.outDir != "" {
		return inputError{fmt.Errorf("-o draws the fits of nccl-tests logs; --%s writes only --file", computeFlag(o))}
	}
	return nil
}

// fitCompute fits s's efficiency to the measured step and replays s before
// and after the fit.
func fitCompute(o *calibrateOpts, s *scenarios.Scenario, measured units.Duration) (float64, reports.ComputePoint, reports.ComputePoint, error) {
	var before, after reports.ComputePoint
	before, err := computePoint(s)
	if err != nil {
		return 0, before, after, inputError{errors.New(plain(err))}
	}
	eff, err := zero.CalibrateEfficiency(s, measured, 1e-7)
	if err != nil {
		return 0, before, after, inputError{fmt.Errorf("--%s %s: %v", computeFlag(o), computeValue(o), unreachable(err, s, false))}
	}
	eff = math.Round(eff*1e6) / 1e6
	fitted := *s
	fitted.Training.ComputeEfficiency, fitted.Training.MFU = eff, 0
	if after, err = computePoint(&fitted); err != nil {
		return 0, before, after, inputError{err}
	}
	return eff, before, after, nil
}

// fitTrace fits s's GEMM and attention efficiencies to the trace's kernel
// time of each class (zero.CalibrateClassEfficiencies) and replays s before
// and after.
func fitTrace(o *calibrateOpts, s *scenarios.Scenario, tk *scenarios.TraceKernels) (float64, reports.ComputePoint, reports.ComputePoint, *reports.ClassCalibration, error) {
	var before, after reports.ComputePoint
	before, err := computePoint(s)
	if err != nil {
		return 0, before, after, nil, inputError{err}
	}
	cl := &reports.ClassCalibration{Measured: [3]units.Duration{tk.GEMM, tk.Attention, tk.Other},
		Kernels: [3]int{tk.GEMMKernels, tk.AttentionKernels, tk.OtherKernels}, Modules: tk.Modules, Block: tk.Block,
		UnattributedFwd: tk.UnattributedFwd, UnattributedBwd: tk.UnattributedBwd}
	for _, l := range tk.Layers {
		cl.Layers = append(cl.Layers, reports.LayerTime{Name: l.Name, Forward: l.Forward, Backward: l.Backward})
	}
	modelled := func(s *scenarios.Scenario) ([3]units.Duration, error) {
		c, k, err := zero.ModelledClasses(s)
		if err != nil {
			return [3]units.Duration{}, err
		}
		d := func(secs float64) units.Duration { return units.Duration(math.Round(secs * k * float64(units.Second))) }
		return [3]units.Duration{d(c.GEMM), d(c.Attention), d(c.Other + c.Optimizer)}, nil
	}
	if cl.Before, err = modelled(s); err != nil {
		return 0, before, after, nil, inputError{err}
	}
	cl.GEMMBefore, cl.AttentionBefore = before.Efficiency, zero.AttentionEfficiencyOf(s)
	if f, k := tk.AttentionFamily, zero.RunsAs(s.Cluster.GPU, s.Training.AttentionKernel); f != "" && k != scenarios.KernelEager && f != k {
		cl.KernelNote = fmt.Sprintf("the trace's attention runs %s's kernels (%v of its %v of attention kernels), the scenario %s: the efficiency fitted is %s's; set training.attention_kernel: %s so that the calibration names the kernel it was fitted to",
			f, tk.AttentionFamilyTime, tk.Attention, k, f, f)
	}
	if tk.GEMM <= 0 {
		return 0, before, after, nil, inputError{fmt.Errorf("--trace %s: none of the step's %d compute kernels is a GEMM by its name (cuBLAS, cuBLASLt, CUTLASS): cannot fit the GEMM efficiency (is the trace of a training step with CUDA activity?)", o.trace, tk.Kernels)}
	}
	fit, err := zero.CalibrateClassEfficiencies(s, zero.ClassMeasurement{GEMM: tk.GEMM, Attention: tk.Attention, Other: tk.Other}, 1e-7)
	if err != nil {
		return 0, before, after, nil, inputError{fmt.Errorf("--trace %s: %v", o.trace, unreachable(err, s, true))}
	}
	eff := math.Round(fit.GEMM*1e6) / 1e6
	fitted := *s
	fitted.Training.ComputeEfficiency, fitted.Training.MFU = eff, 0
	cl.GEMMAfter, cl.AttentionNote = eff, fit.AttentionNote
	if fit.Attention > 0 {
		cl.AttentionFitted = true
		cl.AttentionAfter = math.Round(fit.Attention*1e6) / 1e6
		fitted.Training.AttentionEfficiency, fitted.Training.AttentionEfficiencyHeadDim = cl.AttentionAfter, 0
	} else {
		cl.AttentionAfter = zero.AttentionEfficiencyOf(&fitted)
	}
	if after, err = computePoint(&fitted); err != nil {
		return 0, before, after, nil, inputError{err}
	}
	if cl.After, err = modelled(&fitted); err != nil {
		return 0, before, after, nil, inputError{err}
	}
	return eff, before, after, cl, nil
}

// measurement is --step-time, or --trace's compute kernel time and the
// trace.
func measurement(o *calibrateOpts) (units.Duration, *scenarios.TraceKernels, error) {
	if o.tokensPerSec != "" {
		// Checked now, converted once the scenario is read.
		_, err := parseTokensPerSec(o.tokensPerSec)
		return 0, nil, err
	}
	if o.stepTime != "" {
		d, err := parseStepTime(o.stepTime)
		return d, nil, err
	}
	k, err := readTrace(o.trace)
	if err != nil {
		return 0, nil, err
	}
	return k.Compute, k, nil
}

// writeCalibrationPart writes file atomically: old (nil: none) with the
// part set replaces.
func writeCalibrationPart(file string, old *scenarios.Calibration, set func(*scenarios.Calibration)) error {
	cal := &scenarios.Calibration{Version: 1}
	if old != nil {
		c := *old
		cal = &c
	}
	set(cal)
	data, err := scenarios.MarshalCalibration(cal)
	if err == nil {
		_, err = scenarios.ParseCalibration(file, data) // what scenarios will read
	}
	if err != nil {
		return err
	}
	return reports.WriteFileAtomic(file, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// unreachable rewords the fit's failure when even an efficiency of 1 is
// too slow.
func unreachable(err error, s *scenarios.Scenario, trace bool) string {
	var u *zero.UnreachableError
	if !errors.As(err, &u) {
		return plain(err)
	}
	if u.Floor {
		// No efficiency in the search's range reproduces the measurement:
		// the scenario at its floor is still faster than measured.
		what := "the measured " + u.Measured.String()
		if trace {
			what = "the trace " + u.Measured.String()
		}
		return fmt.Sprintf("cannot be reached at efficiency ≥ %g: even at %g the %s of %s takes %v, less than %s; the measurement is likely of another workload: check the scenario's model, batch (micro_batch, grad_accum, seq_len) and GPUs against the measured run's",
			zero.MinEfficiency, zero.MinEfficiency, u.What, s.Name, u.Best, what)
	}
	fix := "check that it is the time of one optimizer step (every micro-step) and the scenario's " + gemmPeakKey(s) + ", links and model"
	if trace {
		fix = "check that the trace is of this scenario's run, and the scenario's " + gemmPeakKey(s) + " and model"
	}
	if trace {
		return fmt.Sprintf("cannot be reached at efficiency ≤ 1: even at 1 the %s of %s takes %v, the trace %v; %s", u.What, s.Name, u.Best, u.Measured, fix)
	}
	return fmt.Sprintf("cannot be reached at compute efficiency ≤ 1: even at 1 the %s of %s takes %v; %s", u.What, s.Name, u.Best, fix)
}

// computePoint replays s and collects what calibrate prints of it.
func computePoint(s *scenarios.Scenario) (reports.ComputePoint, error) {
	r, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		return reports.ComputePoint{}, err
	}
	p := reports.ComputePoint{Efficiency: s.Training.ComputeEfficiency, Step: r.StepTime, Compute: zero.RankCompute(r), Utilization: r.Utilization}
	p.Forward, p.Backward, p.Optimizer = zero.ComputeByKind(r)
	return p, nil
}

// measureWhy says why a measured figure given to calibrate did not parse as
// a size or a duration (what): negative, too large for int64, or not one
// at all. Before, "-1GiB" and "9999999999999999999GiB" were both "is not a
// size", which they are.
func measureWhy(v string, err error, what string) string {
	switch {
	case errors.Is(err, units.ErrOverflow):
		return "is too large (it does not fit in 64 bits)"
	case strings.HasPrefix(strings.TrimSpace(v), "-"):
		return "is negative"
	}
	if i := strings.Index(err.Error(), "(did you mean "); i >= 0 {
		// units' "(did you mean 2.84s? units are case-sensitive)".
		return "is not a " + what + " " + err.Error()[i:]
	}
	return "is not a " + what
}

// minutesAsSeconds reads a step time given in minutes or hours ("2m",
// "1.5min", "1h"), which units.ParseDuration does not take, and returns it
// in seconds ("120s") for the message.
func minutesAsSeconds(v string) (string, bool) {
	v = strings.TrimSpace(v)
	for _, u := range []struct {
		suffix string
		sec    float64
	}{{"min", 60}, {"m", 60}, {"h", 3600}} {
		num, ok := strings.CutSuffix(v, u.suffix)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f <= 0 || f > 1e6 {
			return "", false
		}
		return strconv.FormatFloat(f*u.sec, 'f', -1, 64) + "s", true
	}
	return "", false
}

// measuredFlag is the flag that gave the measurement a fit is made to:
// --trace FILE or --step-time D.
func measuredFlag(o *calibrateOpts, trace bool, measured units.Duration) string {
	if trace {
		return "--trace " + o.trace
	}
	if o.tokensPerSec != "" {
		return fmt.Sprintf("--tokens-per-sec %s (a %v step)", o.tokensPerSec, measured)
	}
	return fmt.Sprintf("--step-time %v", measured)
}

// lowEfficiency says when a compute efficiency fitted to a whole step is
// below half the least that the published runs on s's GPU fitted (the
// range run quotes, zero.PublishedRange): such a step is likely of a
// larger run than the scenario's (more sequences or tokens per step,
// another model) or of more than one optimizer step. "" otherwise.
func lowEfficiency(s *scenarios.Scenario, eff float64) string {
	fp8 := s.Training.FP8
	lo, hi, n, onGPU := zero.PublishedRange(s.Cluster.GPU, fp8)
	if n == 0 || !onGPU || eff >= lo/2 {
		return ""
	}
	return fmt.Sprintf("the fitted compute efficiency %.4f is below half %s (docs/validation.md): the measured step is likely of a larger run than %s (model, micro_batch × grad_accum × dp, seq_len) or of more than one optimizer step; check them against the measured run",
		eff, zero.FittedBy(lo, hi, n, fp8.FP8(), zero.OnGPU(s.Cluster.GPU, fp8)), s.Name)
}

// fitWarnings are the warnings on a compute part's fitted efficiencies:
// too low (lowEfficiency) or too high for the GPU (highEfficiency, and
// for a trace's attention highAttention).
func fitWarnings(s *scenarios.Scenario, cc *scenarios.CalCompute) []string {
	var ws []string
	low, high := lowEfficiency(s, cc.Efficiency), highEfficiency(s, cc.Efficiency, cc.Method == scenarios.CalMethodTrace)
	outside := ""
	if low == "" && high == "" && cc.Method != scenarios.CalMethodTrace {
		outside = outsidePublished(s, cc.Efficiency)
	}
	net := ""
	// Below the published range (not below half of it, lowEfficiency's
	// "a larger run"), the network is a likely cause: say what it would
	// take (qatput29 finding 3).
	if cc.Method != scenarios.CalMethodTrace && strings.Contains(outside, " is below ") {
		net = exposedShare(s, cc)
	}
	for _, w := range []string{notFitting(s), low, high, outside, net, highAttention(s, cc.AttentionEfficiency)} {
		if w != "" {
			ws = append(ws, w)
		}
	}
	return ws
}

// networkBound is the share of the measured step above which the low-fit
// warning says the network may be what it reflects: a quarter,
// zero.ExposedShareDenom, the exposure zero.Result.LatencyBound's finding
// takes; zerosim's threshold, not measured.
const networkBound = 1.0 / zero.ExposedShareDenom

// exposedShare says, beside a low fitted efficiency (qatput29 finding 3),
// how much of the measured step the replay at the fitted efficiency
// leaves as exposed communication (the most any rank waits on
// collectives), that the network may be what the measured step reflects
// when that is a quarter or more, and the inter-node bandwidth per GPU at
// which the scenario at its own efficiency replays in the measured step
// (zero.CalibrateInterBandwidth), when one between a thousandth of the
// scenario's and its own does: a network the scenario overstates gives a
// low efficiency with little exposed communication in the replay, since
// the fit slows the compute that hides it. "" when the replay fails.
func exposedShare(s *scenarios.Scenario, cc *scenarios.CalCompute) string {
	measured := units.Duration(math.Round(cc.MeasuredMS * 1e9))
	if measured <= 0 {
		return ""
	}
	fitted := *s
	fitted.Training.ComputeEfficiency, fitted.Training.MFU = cc.Efficiency, 0
	r, err := zero.Replay(&fitted, zero.Options{NoCollectives: true})
	if err != nil || len(r.Ranks) == 0 {
		return ""
	}
	var exposed units.Duration
	for _, st := range r.Ranks {
		exposed = max(exposed, st.ExposedComm)
	}
	share := float64(exposed) / float64(measured)
	w := fmt.Sprintf("at the fitted %.4f the replay leaves %v of the measured %v as exposed communication (%.1f %%)", cc.Efficiency, exposed, measured, 100*share)
	if share >= networkBound {
		w += ": the network, not the GPU, may be what the measured step reflects"
	}
	if c := s.Communication.CalibrationData; (c == nil || !c.HasNetwork()) && s.Training.MFU == 0 && s.Training.ComputeEfficiency > 0 {
		own := *s
		if bw, ok, err := zero.CalibrateInterBandwidth(&own, measured, zero.InterBandwidthTol); err == nil && ok {
			c := &s.Cluster
			nics := c.GPUsPerNode
			if c.NICs == "per_node" && c.NICsPerNode > 0 {
				nics = c.NICsPerNode
			}
			perGPU := func(b units.Bandwidth) units.Bandwidth {
				return b * units.Bandwidth(nics) / units.Bandwidth(c.GPUsPerNode)
			}
			w += fmt.Sprintf("; at the scenario's efficiency %g the step takes the measured %v with %v of inter-node bandwidth per GPU, not the scenario's %v: if the measured cluster's network is that slow, describe it (cluster.inter, or a calibration from its nccl-tests logs) and fit again",
				s.Training.ComputeEfficiency, measured, perGPU(bw), perGPU(c.Inter.Bandwidth))
		}
	}
	return w
}

// outsidePublished says when a compute efficiency fitted to a whole step
// (--step-time, --train-log) lies outside the range the published runs
// fitted, in the words run's headline sets a typed one beside them
// (reports.PublishedFit, the one source of both; QA33 MED-3: B200 and
// MI300X steps fitted 0.26 and 0.24 against the 0.45–0.85 of 22 runs on
// other GPUs, without a word). The fit then charges the GEMMs for time
// the scenario does not describe, and that time scales with every what-if
// that moves the GEMMs. "" within the range, or when lowEfficiency or
// highEfficiency already says why (they run first).
func outsidePublished(s *scenarios.Scenario, eff float64) string {
	text, side := reports.PublishedFit(eff, s.Training.FP8, s.Cluster.GPU)
	switch {
	case text == "" || side == 0:
		return ""
	case side < 0:
		return fmt.Sprintf("the fitted compute efficiency %.4f is below %s: the fit charges the GEMMs for time the scenario does not describe (an attention kernel slower than training.attention_kernel's rate, a power cap below %s, a slower network or host), and that time then scales with every what-if that moves the GEMMs (training.fp8, another cluster.gpu, the model's size): describe those parts of the step before trusting such what-ifs",
			eff, text, gemmPeakKey(s))
	}
	return fmt.Sprintf("the fitted compute efficiency %.4f is above %s: the fit credits the GEMMs with time the scenario charges elsewhere (an attention kernel faster than training.attention_kernel's rate, a faster network or overlap than the scenario's), and that credit then scales with every what-if that moves the GEMMs (training.fp8, another cluster.gpu, the model's size): describe those parts of the step before trusting such what-ifs",
		eff, text)
}

// gemmPeakKey is the scenario key of the peak the fitted efficiency is a
// fraction of: cluster.peak_fp8 under training.fp8 (the GEMMs run at
// peak_fp8 · compute_efficiency · fp8_gemm_ratio: scenarios.Cluster),
// cluster.peak_bf16 otherwise.
func gemmPeakKey(s *scenarios.Scenario) string {
	if s.Training.FP8 != scenarios.FP8None {
		return "cluster.peak_fp8"
	}
	return "cluster.peak_bf16"
}

// notFitting says when s does not fit in GPU memory by the memory model
// (memory's and run's verdict): no measured step or trace came from it, so
// a fit to one puts whatever differs from the measured run (stage,
// recompute, micro_batch) into the efficiency (qa21 LOW 6). "" otherwise.
func notFitting(s *scenarios.Scenario) string {
	r, err := memory.Analyze(s, memory.Options{})
	if err != nil || r.Fits || r.GPUMemory <= 0 {
		return ""
	}
	what := fmt.Sprintf("peak %s per GPU", units.Bytes(r.Peak).IEC())
	if r.Peak <= r.GPUMemory {
		what = fmt.Sprintf("the device needs %s per GPU with the CUDA context and NCCL's buffers", units.Bytes(r.Need).IEC())
	}
	return fmt.Sprintf("the scenario does not fit in GPU memory (%s, more than the %s's %s): the measured step cannot be of this configuration, and the fitted efficiency absorbs whatever differs; check parallelism.zero_stage, training.recompute, micro_batch and dp against the measured run",
		what, s.Cluster.GPU, units.Bytes(r.GPUMemory).IEC())
}

// highEfficiency says when a fitted compute efficiency is above what the
// GPU plausibly reaches (zero.EfficiencyCeiling: the published runs' range
// for a step, cuBLAS's reach for a trace's GEMMs), the mirror of
// lowEfficiency (qa20 M1). "" otherwise.
func highEfficiency(s *scenarios.Scenario, eff float64, kernels bool) string {
	ceiling, what, ok := zero.EfficiencyCeiling(s.Cluster.GPU, s.Training.FP8, kernels)
	if !ok || eff <= ceiling {
		return ""
	}
	if kernels {
		return fmt.Sprintf("the fitted compute efficiency %.4f is above %s: the trace's GEMM kernels likely ran at another precision or size than the scenario's (training.fp8, model, micro_batch, seq_len), or %s is below the GPU's; check them against the traced run", eff, what, gemmPeakKey(s))
	}
	return fmt.Sprintf("the fitted compute efficiency %.4f is above %s: the measured step is likely of a smaller run than %s (model, micro_batch × grad_accum × dp, seq_len) or of one micro-step rather than an optimizer step, or %s is below the GPU's; check them against the measured run",
		eff, what, s.Name, gemmPeakKey(s))
}

// highAttention says when a fitted attention efficiency (0: not fitted) is
// above zero.AttentionCeiling for the scenario's kernel on its GPU. ""
// otherwise.
func highAttention(s *scenarios.Scenario, att float64) string {
	ceiling, rate, ok := zero.AttentionCeiling(s.Cluster.GPU, s.Training.AttentionKernel)
	if att <= 0 || !ok || att <= ceiling {
		return ""
	}
	return fmt.Sprintf("the fitted attention efficiency %.4f is above %.2f, %g× the %.3g that %s reaches on %s (docs/compute-model.md): the trace's attention likely ran another kernel or shorter sequences than the scenario's (training.attention_kernel, model.seq_len), or the trace's durations are not the run's; check them against the traced run",
		att, ceiling, zero.AttentionCeilingFactor, rate, s.Training.AttentionKernel, s.Cluster.GPU)
}

// carried is what a compute fit's new file takes over from the scenario's
// own calibration, which the fit ran with (QA6 F5: a --step-time fit on
// a scenario whose calibration held an attention efficiency or a network
// part printed an "after" that the new file, without them, did not
// reproduce).
type carried struct {
	network *scenarios.Calibration // the network part to write (nil: none)
	notes   []string               // what the report says was carried
	warning string                 // what the new file lacks ("" = nothing)
}

func (c carried) apply(f *scenarios.Calibration) {
	if n := c.network; n != nil {
		f.Hardware, f.Params, f.Curves = n.Hardware, n.Params, n.Curves
	}
}

// carriedParts carries into the new compute part cc (method step-time)
// the attention efficiency the scenario took from its calibration, and
// into the file the scenario's network part when the fit ran with it and
// the file (old) has none; when old has another network part, it warns
// that the file will not reproduce the fit.
func carriedParts(o *calibrateOpts, s *scenarios.Scenario, old *scenarios.Calibration, withNetwork bool, cc *scenarios.CalCompute) carried {
	var c carried
	cd := s.Communication.CalibrationData
	if cd == nil || withNetwork {
		return c
	}
	name := s.Communication.Calibration
	if sc := cd.Compute; sc != nil && cc.Method == scenarios.CalMethodStepTime && sc.AttentionEfficiency > 0 &&
		s.Training.AttentionEfficiency == sc.AttentionEfficiency && cc.AttentionEfficiency == 0 {
		cc.AttentionEfficiency, cc.AttentionKernel, cc.HeadDim = sc.AttentionEfficiency, sc.AttentionKernel, sc.HeadDim
		c.notes = append(c.notes, fmt.Sprintf("attention_efficiency %s from %s, which the fit ran with", strconv.FormatFloat(sc.AttentionEfficiency, 'g', -1, 64), name))
	}
	if !cd.HasNetwork() {
		return c
	}
	switch {
	case old == nil || !old.HasNetwork():
		net := *cd
		net.Compute, net.Memory = nil, nil
		c.network = &net
		c.notes = append(c.notes, "the network part of "+name+", which the fit ran with")
	case !sameNetwork(old, cd):
		c.warning = fmt.Sprintf("the fit ran with the network part of %s (the scenario's communication.calibration), %s keeps its own: a scenario naming %s will not reproduce the step after; calibrate into %s, or remove the scenario's calibration to fit with %s's",
			name, o.file, o.file, name, o.file)
	}
	return c
}

// sameNetwork reports whether a and b have the same network part.
func sameNetwork(a, b *scenarios.Calibration) bool {
	return reflect.DeepEqual(a.Hardware, b.Hardware) && a.Params == b.Params && reflect.DeepEqual(a.Curves, b.Curves)
}

// checkTrace refuses a trace of another GPU or another number of ranks
// than the scenario's, as --train-log does (QA6 F9: an A100 trace of 64
// ranks fitted 0.5946 for 16 H100s): the device name of its
// deviceProperties and its distributedInfo.world_size.
func checkTrace(tk *scenarios.TraceKernels, s *scenarios.Scenario) error {
	if tk.DeviceName != "" && s.Cluster.GPU != "" {
		if gpu, ok := scenarios.GPUOfDevice(tk.DeviceName); ok && gpu != s.Cluster.GPU {
			return inputError{fmt.Errorf("%s: the trace ran on %s (%s), the scenario's cluster is %s: the trace is of another GPU; give the scenario of its cluster (--set cluster.gpu=%s and its links)",
				tk.DeviceAt, tk.DeviceName, gpu, s.Cluster.GPU, gpu)}
		}
	}
	if gpus := int64(s.Cluster.Nodes) * int64(s.Cluster.GPUsPerNode); tk.WorldSize > 0 && gpus > 0 && tk.WorldSize != gpus {
		fix := fmt.Sprintf("give the scenario of a cluster of %d GPUs", tk.WorldSize)
		if gpn := int64(s.Cluster.GPUsPerNode); tk.WorldSize%gpn == 0 {
			fix = fmt.Sprintf("--set cluster.nodes=%d", tk.WorldSize/gpn)
		}
		return inputError{fmt.Errorf("%s: the trace's world_size is %d GPUs, the scenario's %d (cluster.nodes %d × gpus_per_node %d): the trace is of another run; %s",
			tk.WorldSizeAt, tk.WorldSize, gpus, s.Cluster.Nodes, s.Cluster.GPUsPerNode, fix)}
	}
	return nil
}
