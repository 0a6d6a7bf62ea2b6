package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func init() { commands = append(commands, newCalibrateCmd) }

type calibrateOpts struct {
	scenario           string
	file               string
	nodes, gpusPerNode int
	// stepTime and trace select the compute calibration
	// (cmd_calibrate_compute.go), reserved and device the memory one
	// (cmd_calibrate_memory.go).
	stepTime, trace string
	// tokensPerSec is --tokens-per-sec: a measured throughput, tokens/s
	// per GPU, which the compute fit turns into --step-time's step
	// (stepFromTokens).
	tokensPerSec     string
	reserved, device string
	// trainLog selects both fits from a training run's log
	// (cmd_calibrate_trainlog.go).
	trainLog string
	// otherGPU fits nccl-tests logs whose devices block names another GPU
	// than the scenario's cluster (refused without it: qa22 L9).
	otherGPU bool
	// minSize, when given, keeps only the logs' rows of that size and
	// above (--min-size): the fit, the measured curves written and the
	// errors printed are of those rows.
	minSize string
}

// calibrateLong is calibrate's help.
const calibrateLong = `calibrate writes a calibration file (--file) that scenarios use as
communication.calibration. It has four forms.

With nccl-tests logs (the stdout of all_reduce_perf, all_gather_perf,
reduce_scatter_perf; several runs per file) it fits NCCL's cost model
(bandwidth efficiency and latency per hop of each link class, fixed cost per
collective) starting from the nominal hardware of --scenario's cluster, and
writes the fitted values and the measured curves: the file's network part.
A parameter no logged size measures (a 10 % or 1 µs change of it moves no
logged time by 1 %: the latencies on logs of large sizes only, the network
on one node) stays nominal, and it says which.
Per log it prints the fitted model's error in-sample and leave-one-out per
size band. With -o DIR it draws measured against modelled busbw per log.

With --step-time (the measured time of one optimizer step), --tokens-per-sec
(the measured tokens/s per GPU, what published throughput tables give) or
--trace (a torch.profiler Chrome trace of one step, export_chrome_trace) the
argument is the scenario of the measured run. --step-time fits its compute
efficiency (training.compute_efficiency, the fraction of the dense peak large
GEMMs reach) so that the simulated step equals the measured one.
--tokens-per-sec T fits it to the step of the scenario's tokens per GPU per
step (micro_batch × grad_accum × seq_len / cp, the count zerosim run's
tokens/s per GPU divides by the step) at T: 2 × 4096 tokens at 3760 tok/s is a
2.178723s step; it prints that step. --trace classes
the trace's compute kernels by name (GEMM, attention, other; NCCL kernels
excluded, so exposed communication does not enter the fit) and fits the
GEMM efficiency to the GEMM kernels and the attention efficiency
(training.attention_efficiency) to the attention kernels, each against the
scenario's own time of that class; with module annotations (with_stack=True)
it prints the kernel time per transformer block. It writes the file's
compute part; a scenario naming the file takes each efficiency unless it
sets that key (or training.mfu) itself (then it warns). A whole-step fit
below the published range warns with how much of the measured step the
fitted replay leaves as exposed communication (a quarter or more: the
network may be what the step reflects) and the inter-node bandwidth per
GPU at which the scenario at its own efficiency takes the measured step:
an overstated network, not slow GEMMs, is the usual cause.

With --reserved (the measured torch.cuda.max_memory_reserved of one step,
what torchtitan prints as memory) or --device (what nvidia-smi showed), the
argument is the scenario of the measured run. It fits
memory.allocator_overhead so that the scenario's reserved (or device) peak,
as zerosim run reports it for the busiest rank, equals the measurement to
the caching allocator's 2 MiB segment, and writes the file's memory part; a
scenario naming the file takes the overhead unless it sets
memory.allocator_overhead itself (then it warns).

With --train-log (a training run's stdout and stderr, "-" for standard
input: the metrics lines of torchtitan, the iteration lines of Megatron-LM
or Megatron-Bridge, the Hugging Face Trainer's progress bar, Composer's
console blocks, DeepSpeed's throughput lines, or NeMo 2.0's ProgressPrinter
lines or progress bar with TimingCallback's train_step_timing) the argument
is the scenario of the logged run. It skips the first tenth of the logged
steps (at least one) as warm-up, takes the median step time of the rest
(torchtitan: the scenario's micro_batch × grad_accum × seq_len / cp tokens
per GPU over tps; DeepSpeed: its micro_batch × grad_accum × dp samples over
CurrSamplesPerSec, micro_step / global_step held to grad_accum; NeMo:
"train_step_timing in s", one optimizer step on rank 0), prints which
steps, the median and the spread, and fits the compute efficiency to that
step as --step-time does; when the log prints torch's max reserved memory
(torchtitan's memory, the largest over the steps used; Megatron's
report_memory max reserved; Composer's peak_reserved_mem; NeMo's
max_memory_reserved, printed with NEMO_LOG_MEMORY_USAGE=1) it fits the
allocator overhead to it as --reserved does (DeepSpeed's memory is
allocated, not reserved: not fitted). It needs 4 logged steps. A step
line of the log's format whose figure cannot be read (a broken number, a
line cut off) is skipped with a warning naming the first one.

Each form keeps the other parts of an existing --file. With --format json
each prints its summary as JSON (times in ps, sizes in bytes, the fitted
parameters under the file's keys), warnings still on stderr.`

func newCalibrateCmd(a *app) *cobra.Command {
	o := &calibrateOpts{}
	cmd := &cobra.Command{
		Use:   "calibrate LOG... | calibrate --step-time DURATION SCENARIO | calibrate --tokens-per-sec T SCENARIO | calibrate --trace FILE SCENARIO | calibrate --reserved SIZE SCENARIO | calibrate --device SIZE SCENARIO | calibrate --train-log FILE SCENARIO",
		Short: "Fit NCCL's cost model to nccl-tests logs, the compute efficiency to a measured step, or the allocator overhead to a measured peak, and write a calibration file",
		Long:  calibrateLong,
		Example: `  zerosim calibrate ar_2node.log ar_4node.log --scenario my-cluster.yaml --file calibration.yaml
  zerosim calibrate run.log --nodes 2 --gpus-per-node 8 -o plots
  zerosim calibrate --step-time 2.84s scenario.yaml --file calibration.yaml
  zerosim calibrate --tokens-per-sec 3760 scenario.yaml --file calibration.yaml
  zerosim calibrate --trace step.json scenario.yaml --file calibration.yaml
  zerosim calibrate --reserved 74.5GiB scenario.yaml --file calibration.yaml
  zerosim calibrate --train-log train.log scenario.yaml --file calibration.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			for _, f := range []struct {
				name, what string
				v          int
			}{{"nodes", "nodes", o.nodes}, {"gpus-per-node", "GPUs per node", o.gpusPerNode}} {
				// 0 or less fell back to the log's own shape (or to the
				// other flag) as if not given.
				if cmd.Flags().Changed(f.name) && (f.v < 1 || f.v > 1<<20) {
					return inputError{fmt.Errorf("--%s %d: use the %s of the logged runs (1 or more)", f.name, f.v, f.what)}
				}
			}
			return calibrateArgs(o, args)
		},
		Annotations: map[string]string{writesFiles: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.trainLog != "" {
				return runCalibrateTrainLog(a, o, cmd, args[0], a.out)
			}
			if o.reserved != "" || o.device != "" {
				return runCalibrateMemory(a, o, cmd, args[0], a.out)
			}
			if o.stepTime != "" || o.tokensPerSec != "" || o.trace != "" {
				return runCalibrateCompute(a, o, cmd, args[0], a.out)
			}
			return runCalibrate(a, o, args, a.out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "scenario `FILE` whose cluster gives the nominal hardware of the logs (default: the default example)")
	f.StringVar(&o.file, "file", "calibration.yaml", "calibration `FILE` to write (an existing one keeps its other part)")
	f.IntVar(&o.nodes, "nodes", 0, "nodes of the logged runs (needed when a log has no \"# Using devices\" block; wins over its hosts)")
	f.StringVar(&o.minSize, "min-size", "", "fit only the logs' rows of `SIZE` and above, e.g. 16MiB: for a network whose small collectives cost more than a latency plus a bandwidth (one behind a plugin such as aws-ofi-nccl); smaller collectives are then timed by the fitted model")
	f.BoolVar(&o.otherGPU, "other-gpu", false, "fit nccl-tests logs that ran on another GPU than the scenario's cluster (refused without it)")
	f.IntVar(&o.gpusPerNode, "gpus-per-node", 0, "GPUs per node of the logged runs (with --nodes, or alone; wins over the log's hosts)")
	f.StringVar(&o.stepTime, "step-time", "", "measured `DURATION` of one optimizer step, e.g. 2.84s (rounded to the nearest picosecond): fit the compute efficiency of the scenario given as argument")
	f.StringVar(&o.tokensPerSec, "tokens-per-sec", "", "measured throughput `T`, tokens/s per GPU (what published tables give), e.g. 3760: fit the compute efficiency, as --step-time does, to the step of the scenario's tokens per GPU per step (micro_batch × grad_accum × seq_len / cp) at T")
	f.StringVar(&o.trace, "trace", "", "torch.profiler Chrome trace `FILE` of one step (JSON, or gzipped .json.gz): fit the GEMM and attention efficiencies to its kernels of each class")
	f.StringVar(&o.reserved, "reserved", "", "measured reserved peak `SIZE` of one step (torch.cuda.max_memory_reserved), e.g. 82.4GiB: fit the allocator overhead of the scenario given as argument")
	f.StringVar(&o.trainLog, "train-log", "", "training log `FILE` (torchtitan, Megatron-LM, Hugging Face Trainer, Composer, DeepSpeed or NeMo output; - for standard input): fit the compute efficiency to its steady-state step and the allocator overhead to its max reserved memory")
	f.StringVar(&o.device, "device", "", "measured device memory `SIZE` of one step (nvidia-smi), e.g. 83.5GiB: fit the allocator overhead of the scenario given as argument")
	return cmd
}

// maxLogFile bounds one log read by calibrate.
const maxLogFile = 64 << 20

// readLogs parses every file; the first bad one is the error.
func readLogs(o *calibrateOpts, files []string) ([]collectives.Log, error) {
	var all []collectives.Log
	for _, name := range files {
		if err := noStdin("calibrate LOG", name); err != nil {
			return nil, err
		}
		data, err := readFileBounded(name, maxLogFile)
		if errors.Is(err, errTooLarge) {
			return nil, inputError{fmt.Errorf("%s: larger than %d MiB: not an nccl-tests log", name, maxLogFile>>20)}
		}
		if err != nil {
			return nil, readError(name, err)
		}
		// Calibrate fits the collectives NCCL's tuner models, not
		// all-to-all (grouped sends), which the parser refuses at its
		// run's test line, in file order with each earlier run's shape
		// check (a sendrecv_perf run after an alltoall_perf one names the
		// alltoall line, gaps29 s29).
		logs, err := collectives.ParseLogsWith(name, bytes.NewReader(data), collectives.ParseOptions{
			Ops:   []collectives.Op{collectives.AllReduce, collectives.AllGather, collectives.ReduceScatter},
			Uses:  "calibrate fits all_reduce_perf, all_gather_perf and reduce_scatter_perf",
			Check: func(l *collectives.Log) error { return l.Shape(o.nodes, o.gpusPerNode) },
		})
		if err != nil {
			return nil, inputError{err}
		}
		all = append(all, logs...)
	}
	return all, nil
}

// sizeBands are the bands calibrate reports errors in.
var sizeBands = []struct {
	name   string
	lo, hi units.Bytes
}{
	{"<1MiB", 0, units.MiB - 1}, {"1-32MiB", units.MiB, 32*units.MiB - 1}, {"32MiB-1GiB", 32 * units.MiB, units.GiB}, {">1GiB", units.GiB + 1, math.MaxInt64},
}

func runCalibrate(a *app, o *calibrateOpts, files []string, w io.Writer) error {
	old, err := readCalibrationFile(o.file)
	if err != nil {
		return err
	}
	s, err := a.loadScenarioNoStep(o.scenario)
	if err != nil {
		return err
	}
	logs, err := readLogs(o, files)
	if err != nil {
		return err
	}
	if err := sameGPU(o, logs, s.Cluster.GPU); err != nil {
		return err
	}
	hw := collectives.HardwareOf(s)
	curves, nicWarnings := logCurves(logs, s, hw)
	if curves, logs, err = fromMinSize(o.minSize, curves, logs); err != nil {
		return err
	}
	fit, err := networkFit(o.minSize)(hw, curves, 0, math.MaxInt64)
	if err != nil {
		return inputError{err}
	}
	warnings, err := physicalFit(o, s, hw, fit, curves, files)
	if err != nil {
		return err
	}
	warnings = append(nicWarnings, warnings...)
	if wn := poorFit(hw, fit, curves, s.Cluster.Inter.Preset, o.minSize); wn != "" {
		warnings = append(warnings, wn)
	}
	rep := &reports.CalibrationReport{File: o.file, Params: fitParams(fit.Params), Logs: calibrationLogs(hw, fit, networkFit(o.minSize), curves, logs, s.Cluster.GPU, o.minSize), Held: fit.Held, MinSize: o.minSize}
	if old != nil {
		rep.KeptCompute, rep.KeptMemory = old.Compute, old.Memory
	}
	cal := &collectives.Calibration{HW: hw, Params: fit.Params, Curves: curves}
	file := cal.File()
	if old != nil {
		file.Compute, file.Memory = old.Compute, old.Memory // the other parts stay
	}
	data, err := scenarios.MarshalCalibration(file)
	if err != nil {
		return err
	}
	if a.outDir != "" {
		if err := writeCalibrationPlots(a.err, a.outDir, rep, a.inputs); err != nil {
			return err
		}
	}
	if err := reports.WriteFileAtomic(o.file, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return err
	}
	warnCalibration(a, warnings, rep.Logs)
	if a.format == "json" {
		return reports.WriteCalibrationJSON(w, &reports.CalibrationSummary{File: o.file, Network: rep})
	}
	return reports.WriteCalibration(w, rep)
}

// logCurves is each log's measured curve, its shape that of the ranks on
// the scenario's nodes: under shared NICs a log of part of each node
// crosses the NICs of the GPUs its devices block names
// (collectives.Log.NICShape), and is fitted and replayed at that count;
// a warning for each such log that does not name them.
func logCurves(logs []collectives.Log, s *scenarios.Scenario, hw collectives.Hardware) ([]collectives.Curve, []string) {
	gpn, shared := s.Cluster.GPUsPerNode, 0
	if hw.NICsPerNode < gpn {
		shared = hw.NICsPerNode
	}
	curves := make([]collectives.Curve, len(logs))
	var w []string
	for i := range logs {
		l := &logs[i]
		curves[i] = collectives.CurveOf(l)
		if l.Unfinished {
			last := l.Rows[len(l.Rows)-1]
			w = append(w, fmt.Sprintf("%s:%d: the run has no \"# Avg bus bandwidth\" line after its last row (line %d, %d B), which nccl-tests prints once a run completes: the log was cut or the run stopped; its %d rows are fitted (calibrate with the whole log)",
				l.File, l.Line, last.Line, int64(last.Size), len(l.Rows)))
		}
		sh, ok := l.NICShape(gpn, shared)
		curves[i].Shape = sh
		if !ok {
			ppn := l.Ranks / max(l.Nodes, 1)
			w = append(w, fmt.Sprintf("%s:%d: a run of %d ranks a node on nodes of %d GPUs sharing %d NICs, and its \"# Using devices\" block does not say which GPUs (none, or a device number repeated on a host or not below %d): fitted as crossing %d NICs a node, as NCCL does only when its GPUs are spread over them (calibrate with the run's devices block, or a run on whole nodes)",
				l.File, l.Line, ppn, gpn, shared, gpn, min(shared, ppn)))
		}
	}
	return curves, w
}

// warnCalibration prints a network fit's warnings on stderr, and each
// log's (another GPU in its "# Using devices", a log far off nominal)
// naming the log (qa20 L9: these were only in the stdout summary, or
// under --format json its per-log warning field, which stays).
func warnCalibration(a *app, warnings []string, logs []reports.CalibrationLog) {
	for _, wn := range warnings {
		a.warnf("%s", wn)
	}
	for _, l := range logs {
		if l.Warning != "" {
			a.warnf("%s: %s", l.Source, l.Warning)
		}
	}
}

// physicalFit refuses a fit whose efficiencies no link of hw can reach
// (QA6 F2: H100 logs read against an A100 scenario fitted inter
// efficiency 37.4), and returns the warnings for fitted values the logs
// did not constrain (QA6 F6): an impossible intra efficiency from
// multi-node logs only, a latency below what any hardware has.
func physicalFit(o *calibrateOpts, s *scenarios.Scenario, hw collectives.Hardware, fit *collectives.Fit, curves []collectives.Curve, files []string) ([]string, error) {
	logs := strings.Join(files, ", ")
	intraBad, interBad := collectives.Impossible(hw, fit.Params)
	oneNode := false
	for _, c := range curves {
		oneNode = oneNode || c.Shape.Nodes == 1
	}
	if interBad != "" || intraBad != "" && oneNode {
		bad := interBad
		if intraBad != "" {
			bad = strings.TrimSuffix(intraBad+" and "+interBad, " and ")
		}
		if from, p, ok := largeSizesFit(hw, curves, s.Cluster.Inter.Preset); ok && o.minSize == "" {
			// The large sizes alone fit this cluster (QA30 MED-2: CSCS
			// Alps' GH200 over Slingshot, 2 × 1 GPUs, 200 Gb/s: 340 µs
			// at 1 MiB and 356 at 2 MiB, ~86 µs of fixed cost at 128 MiB,
			// fits inter efficiency 1.119 whole and 0.939 from 16 MiB):
			// the small ones are what no latency plus bandwidth explains.
			return nil, inputError{fmt.Errorf("%s: the fit needs %s, faster than %s's %s can go: the small sizes are not explained by a latency plus a bandwidth on this cluster (a network behind a plugin, such as aws-ofi-nccl, can cost more per collective than NCCL's latency model), while the sizes from %s fit at intra efficiency %.3f, inter efficiency %.3f with the latencies at nominal; fit those only with --min-size %s (the smaller rows are then left out, and collectives below %s timed by the fit), or give --scenario the cluster the logs ran on, if it is another",
				logs, bad, scenarioName(o.scenario, s), hw.Describe(), sizeFlag(from), p.IntraEff, p.InterEff, sizeFlag(from), sizeFlag(from))}
		}
		other := "the logs are of another cluster; give --scenario the cluster they ran on"
		if len(files) == 1 {
			other = "the log is of another cluster; give --scenario the cluster it ran on"
		}
		return nil, inputError{fmt.Errorf("%s: the fit needs %s, faster than %s's %s can go: %s", logs, bad, scenarioName(o.scenario, s), hw.Describe(), other)}
	}
	var w []string
	if intraBad != "" {
		// Multi-node logs constrain the intra-node links weakly (the
		// network bounds their times): the p4d EFA log, on its own A100
		// hardware, fits intra efficiency 3.3. Said, not refused.
		w = append(w, fmt.Sprintf("%s: the fit's %s is not measured by these multi-node logs: collectives inside one node would be timed faster than NVLink; add a 1-node log", logs, intraBad))
	}
	for _, b := range collectives.Unphysical(hw, fit.Params) {
		if !strings.Contains(b, "_efficiency: ") {
			w = append(w, fmt.Sprintf("%s: the fit's %s: the logs do not constrain it, and collectives that use it would be timed too fast (add logs of the sizes and node counts that measure it)", logs, b))
		}
	}
	return w, nil
}

// Fit-quality bounds (QA17 M5): the published logs of clusters zerosim
// describes fit with at most 24.4 % error at a size and 8.1 % median, an
// efficiency of at least 0.77 and at most +2.14 µs per hop (the 2- and
// 4-node H100 NDR logs, each alone and together; the A3 Mega TCPXO log
// with its link preset: 13.7 %, 1.022, +0.61 µs). The A3 Mega log read as
// an InfiniBand cluster (no preset) fits intra efficiency 0.484, +12.37
// and +23.22 µs per hop, and still misses by up to 46.6 %.
const (
	poorFitMax    = 0.30 // worst relative error at one size
	poorFitMedian = 0.10 // median relative error over every row
	poorFitEff    = 0.70 // least plausible efficiency
	poorFitHopUS  = 5.0  // most plausible latency added per hop, µs
)

// poorFit says when the fitted model still misses the logs, or needs
// implausible corrections to meet them: the logs are then of a cluster
// the scenario does not describe, most often a network whose plugin NCCL
// tunes by other latencies and protocols (a link preset). "" when the fit
// is good. The errors are the fit's own (Fit.Errors: one per row FitModel
// fitted, every row with a measured time, calibrate fitting every size).
func poorFit(hw collectives.Hardware, fit *collectives.Fit, curves []collectives.Curve, preset, minSize string) string {
	var errs []float64
	worst, at, src := 0.0, int64(0), ""
	var model, measured float64
	for i, c := range curves {
		k := 0
		for j, us := range c.TimesUS {
			if us <= 0 || i >= len(fit.Errors) || k >= len(fit.Errors[i]) {
				continue // no measurement: a row FitModel skipped
			}
			e := fit.Errors[i][k]
			k++
			errs = append(errs, e)
			if math.Abs(e) > math.Abs(worst) {
				worst, at, src, model, measured = e, c.Sizes[j], c.Source, us*(1+e), us
			}
		}
	}
	median, _ := collectives.Summary(errs)
	if src == "" && len(curves) > 0 {
		src = curves[0].Source
	}
	odd := oddCorrections(fit.Params)
	misses := math.Abs(worst) > poorFitMax || median > poorFitMedian
	if len(errs) < 4 && !misses {
		// Fewer sizes than the four corrections fitted: they are not
		// determined, so odd values say nothing of the cluster (QA18 L6:
		// a one-size log warned "misses by up to 0.0 %").
		odd = nil
	}
	if !misses && len(odd) == 0 {
		return ""
	}
	needs := ""
	if len(odd) > 0 {
		needs = "; it needs " + strings.Join(odd, ", ")
	}
	if !misses {
		return fmt.Sprintf("%s: the fit meets the logs (within %.1f %%) only by implausible corrections (%s): "+
			"the logs are likely of a cluster this scenario does not describe (%s); %s",
			src, 100*math.Abs(worst), strings.Join(odd, ", "), hw.Describe(), presetAdvice(preset, minSize))
	}
	return fmt.Sprintf("%s: the fit misses by up to %.1f %% (%d B: %.2f µs modelled, %.2f measured; median %.1f %% over every size)%s: "+
		"the logs are likely of a cluster this scenario does not describe (%s); %s",
		src, 100*math.Abs(worst), at, model, measured, 100*median, needs, hw.Describe(), presetAdvice(preset, minSize))
}

// pluginPresets are the link presets poorFit suggests, with the network
// each stands for.
var pluginPresets = []struct{ name, network string }{
	{"TCPXO", "GCP A3 Mega"}, {"EFA-p4d", "AWS"}, {"EFA-p5", "AWS"}, {"RoCE400", "RoCE"},
}

// presetAdvice is poorFit's advice for a scenario whose inter link is
// preset: the link presets of networks that tune NCCL otherwise, without
// the one it already gives (QA30: "give ... RoCE400" to a RoCE400
// scenario), and, when it gives one of them, what else explains a poor
// fit on that network.
func presetAdvice(preset, minSize string) string {
	var others []string
	for _, p := range pluginPresets {
		if !strings.EqualFold(p.name, preset) {
			others = append(others, fmt.Sprintf("%s (%s)", p.name, p.network))
		}
	}
	list := scenarios.ListOr(others)
	if len(others) == len(pluginPresets) {
		return "a network plugin tunes NCCL by its own latencies and protocols: give the link preset of the network measured, e.g. --set cluster.inter.preset=" + list + ", and calibrate again"
	}
	large := "fit the large sizes only with --min-size, e.g. 16MiB"
	if minSize != "" {
		large = "the rows from --min-size " + minSize + " still are not: give a larger --min-size"
	}
	return fmt.Sprintf("the scenario's link preset is already %s: if the logs are of that network, its small sizes cost what no latency plus bandwidth explains (%s); if they are of another, give its preset, e.g. --set cluster.inter.preset=%s, and calibrate again", preset, large, list)
}

// oddCorrections names the fitted corrections past poorFit's bounds: an
// efficiency below poorFitEff, more than poorFitHopUS per hop.
func oddCorrections(p collectives.Params) []string {
	var odd []string
	if p.IntraEff < poorFitEff {
		odd = append(odd, fmt.Sprintf("intra efficiency %.3f", p.IntraEff))
	}
	if p.InterEff < poorFitEff {
		odd = append(odd, fmt.Sprintf("inter efficiency %.3f", p.InterEff))
	}
	if p.IntraHop > poorFitHopUS {
		odd = append(odd, fmt.Sprintf("intra hop %+.2f µs", p.IntraHop))
	}
	if p.InterHop > poorFitHopUS {
		odd = append(odd, fmt.Sprintf("inter hop %+.2f µs", p.InterHop))
	}
	return odd
}

// calibrationLogs is the report of every log: its errors and warnings.
func calibrationLogs(hw collectives.Hardware, fit *collectives.Fit, fitFn fitFunc, curves []collectives.Curve, logs []collectives.Log, gpu, minSize string) []reports.CalibrationLog {
	rows := 0
	for _, c := range curves {
		rows += len(c.Sizes)
	}
	// Under --min-size the fit has the two efficiencies only
	// (collectives.FitBandwidth).
	params, more := reports.FitParameters, "run nccl-tests over sizes from 8 B to 4 GiB (-b 8 -e 4G -f 2)"
	if minSize != "" {
		params, more = 2, "lower --min-size "+minSize+" to fit more of the log's sizes"
	}
	var out []reports.CalibrationLog
	for i := range logs {
		l := calibrationLog(hw, fit, fitFn, curves, i)
		l.Parameters = params
		l.InExact = rows <= params
		if w := shadowed(curves, i); w != "" {
			l.Warning = strings.TrimPrefix(l.Warning+"; "+w, "; ")
		}
		if n := len(curves[i].Sizes); n <= params {
			// QA6 F11: one row fitted 5 parameters and printed 0.0 %.
			l.OwnExact = true
			l.Warning = strings.TrimPrefix(l.Warning+fmt.Sprintf("; %s for the fit's %d parameters: its fitted values are not measured; %s", map[bool]string{true: "1 size", false: fmt.Sprintf("%d sizes", n)}[n == 1], params, more), "; ")
		}
		if w := deviceMismatch(&logs[i], gpu); w != "" {
			l.Warning = strings.TrimSuffix(w+"; "+l.Warning, "; ")
		}
		out = append(out, l)
	}
	return out
}

// writeCalibrationPlots draws one plot per log (PNG and SVG) into dir,
// with its manifest (reports.WriteOutputDir).
func writeCalibrationPlots(errOut io.Writer, dir string, rep *reports.CalibrationReport, inputs []input) error {
	if err := reports.CheckOutputDir(dir); err != nil {
		return inputError{fmt.Errorf("-o: %w", err)}
	}
	var files []reports.OutputFile
	for i, l := range rep.Logs {
		base := filepath.Base(l.Source)
		if k := strings.LastIndexByte(base, ':'); k > 0 {
			base = base[:k]
		}
		fs, err := reports.CalibrationPlot(fmt.Sprintf("calibrate-%d-%s", i+1, strings.TrimSuffix(base, filepath.Ext(base))), &rep.Logs[i])
		if err != nil {
			return err
		}
		files = append(files, fs...)
	}
	return writeOutputDir(errOut, dir, files, inputs)
}

func fitParams(p collectives.Params) reports.CalibrationParams {
	return reports.CalibrationParams(p.File())
}

// fitFunc is a network fit: collectives.FitModel, or FitBandwidth under
// --min-size.
type fitFunc func(collectives.Hardware, []collectives.Curve, units.Bytes, units.Bytes) (*collectives.Fit, error)

// networkFit is calibrate's fit: under --min-size the rows are of large
// sizes only, which measure bandwidths, not latencies, so those stay
// nominal (FitBandwidth).
func networkFit(minSize string) fitFunc {
	if minSize != "" {
		return collectives.FitBandwidth
	}
	return collectives.FitModel
}

// calibrationLog is log i's errors: in-sample with the fit, leave-one-out
// with a fit on the other logs, and the nominal model's.
func calibrationLog(hw collectives.Hardware, fit *collectives.Fit, fitFn fitFunc, curves []collectives.Curve, i int) reports.CalibrationLog {
	c := curves[i]
	l := reports.CalibrationLog{Source: c.Source, Op: c.Op.String(), Ranks: c.Shape.Ranks, Nodes: c.Shape.Nodes, Sizes: c.Sizes, Measured: c.TimesUS,
		GPUsPerThread: c.GPUsPerThread}
	if own, err := fitFn(hw, curves[i:i+1], 0, math.MaxInt64); err == nil {
		p := fitParams(own.Params)
		l.Own = &p
	}
	fitted := &collectives.Model{HW: hw, Params: fit.Params}
	l.Modelled = predict(fitted, c)
	nominal := predict(collectives.NewModel(hw), c)
	var loo []float64
	if len(curves) > 1 {
		others := append(append([]collectives.Curve(nil), curves[:i]...), curves[i+1:]...)
		if f, err := fitFn(hw, others, 0, math.MaxInt64); err == nil {
			loo = predict(&collectives.Model{HW: hw, Params: f.Params}, c)
		}
	}
	for _, b := range sizeBands {
		band := reports.CalibrationBand{Band: b.name}
		var in, out []float64
		for j, s := range c.Sizes {
			if units.Bytes(s) < b.lo || units.Bytes(s) > b.hi {
				continue
			}
			in = append(in, (l.Modelled[j]-c.TimesUS[j])/c.TimesUS[j])
			if loo != nil {
				out = append(out, (loo[j]-c.TimesUS[j])/c.TimesUS[j])
			}
		}
		if len(in) == 0 {
			continue
		}
		band.Rows = len(in)
		band.InMedian, band.InMax = collectives.Summary(in)
		band.LOOMedian, band.LOOMax = math.NaN(), math.NaN()
		if out != nil {
			band.LOOMedian, band.LOOMax = collectives.Summary(out)
		}
		l.Bands = append(l.Bands, band)
	}
	last := len(c.Sizes) - 1
	switch r := c.TimesUS[last] / nominal[last]; {
	case r > 2:
		l.Warning = fmt.Sprintf("%.1f× the nominal hardware's time at %d B: degraded fabric? check links", r, c.Sizes[last])
	case r < 0.5:
		l.Warning = fmt.Sprintf("%.2g× the nominal hardware's time at %d B: faster than this hardware can go: the log is of another cluster; check --scenario", r, c.Sizes[last])
	}
	return l
}

// deviceMismatch says when a log ran on another GPU than the scenario's
// cluster: the fit then calibrates that cluster's links with another's
// times. "" when they agree or either is unknown.
func deviceMismatch(l *collectives.Log, gpu string) string {
	ran, ok := scenarios.GPUOfDevice(l.Device)
	if !ok || gpu == "" || ran == gpu {
		return ""
	}
	return fmt.Sprintf("the log ran on %s (%s), the scenario's cluster is %s: fit it with a scenario of that cluster (--scenario FILE, or --set cluster.gpu=%s and its links)",
		reports.EscapeControl(l.Device), ran, gpu, ran)
}

// sameGPU refuses, unless --other-gpu, a log that ran on another GPU than
// the scenario's cluster (deviceMismatch), at its devices block: its times
// would calibrate this cluster's links with another's, as physicalFit
// refuses a fit no link of the cluster can reach (qa22 L9: the file was
// written after four warnings, exit 0).
func sameGPU(o *calibrateOpts, logs []collectives.Log, gpu string) error {
	if o.otherGPU {
		return nil
	}
	for i := range logs {
		if w := deviceMismatch(&logs[i], gpu); w != "" {
			return inputError{fmt.Errorf("%s:%d:1: %s, or add --other-gpu to fit these links to that GPU's times", logs[i].File, logs[i].DevicesLine, w)}
		}
	}
	return nil
}

// predict is m's time per size of c (µs), NaN where it cannot run.
func predict(m *collectives.Model, c collectives.Curve) []float64 {
	m.GPUsPerThread = c.GPUsPerThread // the run's host launch floor
	out := make([]float64, len(c.Sizes))
	for j, s := range c.Sizes {
		ch, err := m.Time(c.Op, c.Shape, collectives.Auto, units.Bytes(s))
		out[j] = math.NaN()
		if err == nil {
			out[j] = float64(ch.Time) / 1e6
		}
	}
	return out
}

// readFileBounded is readBounded of the file at path; its errors are
// os.Open's, the read's, or errTooLarge.
func readFileBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A regular file's size is known: one over the limit is refused before
	// a byte is read (qa20 L8: a 300 MiB --train-log was read, 605 MB
	// resident, before "larger than 256 MiB").
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, errTooLarge
	}
	return readBounded(f, limit)
}

// errTooLarge is readBounded's error for an input over its limit.
var errTooLarge = errors.New("input too large")

// readBounded reads all of r up to limit bytes; a longer input is
// errTooLarge, so a wrong file (a core dump, a video) is refused before it
// fills memory.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// scenarioName is how a calibrate message names --scenario: the flag's
// file, else the default example's name.
func scenarioName(flag string, s *scenarios.Scenario) string {
	if flag != "" {
		return flag
	}
	return s.Name
}

// shadowed says when curve i's op and shape were measured by an earlier
// curve over overlapping sizes: the replay interpolates the first curve
// that covers a size (collectives.Model.Time), so i is used only outside
// the earlier one's range (QA6 F12: two logs in one order gave an 8 B
// all-reduce 3.09 µs, in the other 24.70 µs). Both enter the fit.
func shadowed(curves []collectives.Curve, i int) string {
	c := curves[i]
	for j := range i {
		p := curves[j]
		if p.Op != c.Op || p.Shape != c.Shape || max(p.GPUsPerThread, 1) != max(c.GPUsPerThread, 1) {
			continue
		}
		lo, hi := max(p.Sizes[0], c.Sizes[0]), min(p.Sizes[len(p.Sizes)-1], c.Sizes[len(c.Sizes)-1])
		if lo > hi {
			continue
		}
		return fmt.Sprintf("%s measured %s on %d ranks of %d nodes too: from %d B to %d B the replay uses its times (the first given), not this log's; both enter the fit (give one log per op and shape, or the one to replay first)",
			p.Source, c.Op, c.Shape.Ranks, c.Shape.Nodes, lo, hi)
	}
	return ""
}

// fromMinSize keeps the rows of size minSize and above of every curve
// ("" keeps them all); a log with no row left is an error naming it and
// its largest size.
func fromMinSize(minSize string, curves []collectives.Curve, logs []collectives.Log) ([]collectives.Curve, []collectives.Log, error) {
	if minSize == "" {
		return curves, logs, nil
	}
	lo, err := units.ParseBytes(minSize)
	if err != nil {
		return nil, nil, inputError{fmt.Errorf("--min-size: %w", err)}
	}
	if lo <= 0 {
		return nil, nil, inputError{fmt.Errorf("--min-size %s: give a size above 0, e.g. 16MiB (or drop --min-size to fit every row)", minSize)}
	}
	for i := range curves {
		c := &curves[i]
		k := 0
		for k < len(c.Sizes) && c.Sizes[k] < int64(lo) {
			k++
		}
		if k == len(c.Sizes) {
			return nil, nil, inputError{fmt.Errorf("--min-size %s: %s has no row of that size or above (its largest is %s): give a smaller --min-size, or leave that log out", minSize, c.Source, sizeFlag(units.Bytes(c.Sizes[len(c.Sizes)-1])))}
		}
		c.Sizes, c.TimesUS = c.Sizes[k:], c.TimesUS[k:]
	}
	return curves, logs, nil
}

// largeSizesFit is, for curves whose whole fit no link can reach, the
// smallest of their sizes from which the rows alone (at least two) fit
// plausibly on hw as calibrate --min-size fits them (FitBandwidth), and
// that fit's parameters; ok false when none does (the logs are then of
// another cluster). Plausibly is what calibrate itself then accepts: no
// efficiency above 1, and no poorFit warning, so that the size it
// suggests is not one whose fit then warns (the Alps GH200 log: 4 MiB
// fitted inter efficiency 0.802 and then missed by 42.8 %).
func largeSizesFit(hw collectives.Hardware, curves []collectives.Curve, preset string) (from units.Bytes, p collectives.Params, ok bool) {
	var sizes []int64
	for _, c := range curves {
		sizes = append(sizes, c.Sizes...)
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	for i := 1; i+1 < len(sizes); i++ {
		var large []collectives.Curve
		for _, c := range curves {
			if k := sort.Search(len(c.Sizes), func(k int) bool { return c.Sizes[k] >= sizes[i] }); k < len(c.Sizes) {
				c.Sizes, c.TimesUS = c.Sizes[k:], c.TimesUS[k:]
				large = append(large, c)
			}
		}
		fit, err := collectives.FitBandwidth(hw, large, 0, math.MaxInt64)
		if err != nil {
			continue
		}
		// Plausible, not only possible: no faster than NCCL's nominal
		// link (efficiency 1), and a fit poorFit would not warn of.
		if q := fit.Params; q.IntraEff <= 1 && q.InterEff <= 1 && len(collectives.Unphysical(hw, q)) == 0 && poorFit(hw, fit, large, preset, sizeFlag(units.Bytes(sizes[i]))) == "" {
			return units.Bytes(sizes[i]), q, true
		}
	}
	return 0, collectives.Params{}, false
}

// sizeFlag is b as a size flag takes it: 16MiB, 512KiB, 1GiB, else bytes.
func sizeFlag(b units.Bytes) string {
	for _, u := range []struct {
		name string
		n    units.Bytes
	}{{"GiB", units.GiB}, {"MiB", units.MiB}, {"KiB", units.KiB}} {
		if b >= u.n && b%u.n == 0 {
			return fmt.Sprintf("%d%s", b/u.n, u.name)
		}
	}
	return fmt.Sprintf("%dB", int64(b))
}
