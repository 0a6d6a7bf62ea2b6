package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newPlanCmd) }

type planOpts struct {
	globalBatch string
	tokens      string
	top         int
	network     bool
	tolerance   float64
	// toleranceGiven: --tolerance was on the command line; topGiven:
	// --top was, and format is --format.
	toleranceGiven, topGiven bool
	format                   string
	stages                   []int
	recompute                []string
	buckets                  []string
	prefetch                 []int
	algorithms               []string
	cp                       []int
	ks                       []int
	microBatches             []int
	deviceFit                bool
	jobs                     int
}

// planLong is plan --help's description.
const planLong = `plan takes the model and the cluster from FILE (an embedded example's name, or
none: the default example) and
searches ZeRO stages 0–3, every K dividing N at stages 1–3 (Megatron's
num_distributed_optimizer_instances at stage 1, HSDP / hybrid shard at
stages 2–3), every micro-batch and gradient accumulation that make the global
batch, the activation checkpointing policies, bucket sizes and ZeRO-3
prefetch depths, under collective algorithm auto (NCCL's choice, what a run
does; --algorithms lists the algorithms searched instead, auto among them
only when listed: --algorithms auto,ring,hierarchical,tree adds zerosim's
alpha–beta lowerings to auto, rows marked ‡ as bounds no NCCL setting
reproduces for reduce-scatter and all-gather); with --cp 1,2,4,8, context parallelism too
(ring attention over cp GPUs, each keeping seq_len/cp of a sequence: the
lever for long sequences), each degree on the same GPUs (dp = GPUs/cp) and
global batch, a degree whose dp does not split it skipped. For a MoE model
it searches the expert-parallel degrees too (ep dividing N and the experts,
K = 1 above 1). A scenario with
stack: NAME is searched only at the stages and K that stack runs (its
stack: line says which; docs/sweeps.md). A --set of a key plan searches
(parallelism.zero_stage, parallelism.k, training.micro_batch,
training.grad_accum, training.recompute, communication.bucket_size,
prefetch_depth or algorithm) pins it: searched at that value alone, said on
the pinned: line; the key's flag beside it is refused. The memory model
first rejects what cannot
fit; the rest are replayed in parallel, those whose replayed peak (the one
zerosim run judges by) exceeds the GPU's memory are dropped, and the others
are ranked by tokens/s per GPU, those whose device peak (the caching
allocator's reserve on top) fits too first, the others (marked †: expect
allocator retries) after them (--require-device-fit: those alone). The
answer is exact over that space: it equals the best row of a zerosim sweep
over the same keys. A replay's time and memory grow with its micro-steps:
a large global batch replays hundreds at small micro-batches (4096
sequences on 16 GPUs: 256 at micro-batch 1), and a step whose compute
alone outlasts what int64 picoseconds hold is refused before any replay.

It prints the configuration to run, the zerosim run command that replays it
(reproduce:), and why it wins (computed from the
numbers: which costs it avoids against the next best), the fastest
configurations with MFU, step time, peak memory and headroom, exposed
communication and network bytes, and the memory-vs-speed front. When nothing
fits it says what to change (the least number of nodes, a GPU with more
memory, and --cp when the activations are a large share of the peak) and
exits 1, as run --require-fit does.

--network adds, for each stage, the least inter-node bandwidth per GPU at
which the step stays within --tolerance % of its compute-bound time (the
question of deepspeedai/DeepSpeed#2928), and the step time against bandwidth.
--tokens 1T adds the time to train and the GPU-hours. -o DIR writes plan.csv,
plan.json, plan.html, the plots (pareto.png/svg, network.png/svg) and
manifest.json, and removes an earlier plan's files there that it does not
write.`

func newPlanCmd(a *app) *cobra.Command {
	o := planOpts{}
	cmd := &cobra.Command{
		Use:         "plan [FILE]",
		Annotations: map[string]string{writesFiles: "yes"},
		Short:       "Find the fastest ZeRO configuration that fits: stage, K, micro-batch, accumulation, checkpointing",
		Long:        planLong,
		Example: `  zerosim plan default
  zerosim plan my.yaml --global-batch 512 --tokens 1T
  zerosim plan my.yaml --global-batch 2097152tokens -o plan/
  zerosim plan default --network --tolerance 5
  zerosim plan default --set model.seq_len=131072 --cp 1,2,4,8`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd)
			defer stop()
			o.toleranceGiven, o.topGiven, o.format = cmd.Flags().Changed("tolerance"), cmd.Flags().Changed("top"), a.format
			return runPlan(ctx, a, o, fileArg(args))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.globalBatch, "global-batch", "", "sequences per optimizer step (`N`, or tokens: 4194304tokens or 4Mitokens, 4 × 2^20, a whole number of sequences per data-parallel rank; M is 10^6); default the scenario's micro_batch·grad_accum·dp")
	f.StringVar(&o.tokens, "tokens", "", "training length in tokens (`COUNT`, e.g. 1T): adds time to train and GPU-hours")
	f.IntVar(&o.top, "top", 10, "configurations listed")
	f.BoolVar(&o.network, "network", false, "also find the inter-node bandwidth each stage needs")
	f.Float64Var(&o.tolerance, "tolerance", 5, "--network: allowed step time above compute-bound, in `%`")
	f.IntSliceVar(&o.stages, "stages", nil, "ZeRO stages searched (default 0,1,2,3)")
	f.StringSliceVar(&o.recompute, "recompute", nil, "checkpointing policies searched: none, selective, full, op (default none,selective,full)")
	f.StringSliceVar(&o.buckets, "bucket-sizes", nil, "bucket sizes searched at stages 0–2 (default the scenario's,25MiB,200MB; none where the stack sets its own: docs/stacks.md)")
	f.IntSliceVar(&o.prefetch, "prefetch", nil, "ZeRO-3 prefetch depths searched (default 1,2)")
	f.StringSliceVar(&o.algorithms, "algorithms", nil, "collective algorithms searched, in place of the default auto (what a run does; list auto to keep it: auto,ring,hierarchical,tree; ring, hierarchical and tree are alpha–beta bounds)")
	f.BoolVar(&o.deviceFit, "require-device-fit", false, "rank only configurations whose device peak (the caching allocator's reserve on top) fits the GPU: no allocator retries expected (without it they rank first, and the others after them)")
	f.IntSliceVar(&o.ks, "k", nil, "K searched, copies of the sharded state (HSDP replicas at stage 3), each dividing N (default every divisor)")
	f.IntSliceVar(&o.microBatches, "micro-batches", nil, "micro-batches searched, each splitting a rank's sequences of the global batch (default every one that does)")
	f.IntSliceVar(&o.cp, "cp", nil, "context-parallel degrees searched, each on the same GPUs (dp = GPUs/cp) and global batch (default the file's cp)")
	f.IntVarP(&o.jobs, "jobs", "j", sweep.DefaultJobs(), "replays run at once")
	return cmd
}

// planGCPercent is the garbage collector's target while plan searches: its
// replays (hundreds with --network) each build and drop a step's task graph,
// a few MB live at a time, which at Go's default GOGC=100 keeps the
// collector busy for much of the CPU (commit c07dced's profile has the
// share). GOGC in the environment wins.
const planGCPercent = 400

// planMemoryLimit is the soft limit on the heap while plan searches: at
// planGCPercent the heap grows to 5× what is live, and at a large global
// batch two replays of 256 micro-steps keep 200–300 MB live, so plan
// q5_13b_measured.yaml --global-batch 4096 (QA s28 M2) reached 1.47 GB of
// RSS; under the limit 1.04 GB, for 5 % more CPU (9.03 s against 8.63 s
// of user time), and small plans, whose heap stays below it, are not
// touched. GOMEMLIMIT in the environment wins, and so does GOGC=off: a
// memory limit collects even with the collector off (runtime/debug's
// SetMemoryLimit), which a user who turned it off did not ask for.
const planMemoryLimit = 1 << 30

// planGC sets the collector's target to planGCPercent unless GOGC is in
// the environment, and the soft memory limit to planMemoryLimit unless
// GOMEMLIMIT is or GOGC turns the collector off, and returns what restores
// both.
func planGC() (restore func()) {
	oldPercent, oldLimit := -2, int64(-1)
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		oldPercent = debug.SetGCPercent(planGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && !gcOff(gogc) {
		oldLimit = debug.SetMemoryLimit(planMemoryLimit)
	}
	return func() {
		if oldPercent != -2 {
			debug.SetGCPercent(oldPercent)
		}
		if oldLimit >= 0 {
			debug.SetMemoryLimit(oldLimit)
		}
	}
}

// gcOff reports whether gogc, GOGC's value, turns the collector off as the
// runtime reads it: "off" or a negative percent (the runtime package's
// doc: "Setting GOGC=off disables the garbage collector entirely";
// readGOGC and setGCPercent in runtime/mgcpacer.go take any negative
// percent for off).
func gcOff(gogc string) bool {
	n, err := strconv.ParseInt(gogc, 10, 32)
	return gogc == "off" || err == nil && n < 0
}

func runPlan(ctx context.Context, a *app, o planOpts, file string) error {
	defer planGC()()
	src, _, err := loadSource(a, file, true)
	if err != nil {
		return err
	}
	opt, pr, err := planOptions(src, o)
	if err != nil {
		return err
	}
	if a.outDir != "" {
		if err := reports.CheckOutputDir(a.outDir); err != nil {
			return inputError{fmt.Errorf("-o: %w", err)}
		}
	}
	opt.Accepted = func(algorithms []string) {
		a.pending = append(a.pending, planCalibrationWarnings(src, algorithms, o.algorithms == nil)...)
		a.flushWarnings()
	}
	bar := newBar(a.err, "plan: memory model", "configurations")
	if bar != nil {
		// The memory model's screen, then the replays: a bar from the
		// start (QA s28 M1: 6 s of nothing on DeepSeek-V3), each with
		// its elapsed time, then its rate and time left, as sweep's
		// (qauser30 M2: minutes of replays under --algorithms).
		opt.Screening = bar.set
		replaying := false
		opt.Progress = func(done, total int) {
			if !replaying {
				replaying = true
				bar.finish()
				bar = newBar(a.err, "plan: replays", "replays")
			}
			bar.set(done, total)
		}
	}
	p, err := sweep.PlanSearch(ctx, src, opt)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		var se *scenarios.Error
		if errors.As(err, &se) {
			// "plan: s.yaml:11:3: …": every other command's scenario
			// errors start with the file, where editors look for it.
			return inputError{err}
		}
		return inputError{fmt.Errorf("plan: %w", err)}
	}
	pr.Plan = p
	if o.network {
		if pr.Network, err = networkSearch(ctx, a, src, o, p); err != nil {
			return err
		}
	}
	return writePlan(a, pr)
}

// networkSearch runs plan --network's search for p's stages, with a bar on
// a terminal as plan's search has (it ran 5-13 s with none: QA22 M6).
func networkSearch(ctx context.Context, a *app, src sweep.Source, o planOpts, p *sweep.Plan) (*sweep.NetworkPlan, error) {
	opt := sweep.NetworkOptions{Tolerance: o.tolerance / 100, Stages: p.SearchedStages, Jobs: o.jobs, Configs: p.BestPerStage(), Closest: p.Closest}
	bar := newBar(a.err, "network", "replays")
	if bar != nil {
		opt.Progress = bar.set
	}
	np, err := sweep.NetworkSearch(ctx, src, opt)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return nil, inputError{fmt.Errorf("plan --network: %w", err)}
	}
	return np, nil
}

// planOptions checks the flags and turns them into the search's options.
func planOptions(src sweep.Source, o planOpts) (sweep.PlanOptions, *reports.PlanReport, error) {
	opt := sweep.PlanOptions{Stages: o.stages, Recompute: o.recompute, BucketSizes: o.buckets, Prefetch: o.prefetch,
		Algorithms: o.algorithms, CP: o.cp, K: o.ks, RequireDeviceFit: o.deviceFit, Jobs: o.jobs}
	if err := checkPlanLists(o, &opt); err != nil {
		return opt, nil, err
	}
	pr := &reports.PlanReport{Top: o.top}
	if err := checkJobs(o.jobs); err != nil {
		return opt, nil, err
	}
	if o.top < 1 {
		return opt, nil, inputError{fmt.Errorf("--top %d: use 1 or more (plan.csv of -o DIR lists every configuration)", o.top)}
	}
	if o.topGiven && o.format != "table" && o.format != "" {
		// It was ignored: JSON and CSV list every configuration.
		return opt, nil, inputError{fmt.Errorf("--top %d applies to the table: --format %s lists every configuration (drop --top)", o.top, o.format)}
	}
	// Written so that NaN fails too.
	if !(o.tolerance > 0 && o.tolerance <= 1000) {
		return opt, nil, inputError{fmt.Errorf("--tolerance %g: use a percentage above 0 and at most 1000, such as 5", o.tolerance)}
	}
	if o.toleranceGiven && !o.network {
		// It was ignored: only the bandwidth search reads it.
		return opt, nil, inputError{fmt.Errorf("--tolerance %g applies to the bandwidth search: add --network, or drop --tolerance", o.tolerance)}
	}
	if err := planBatch(src, o, &opt); err != nil {
		return opt, nil, err
	}
	if o.tokens != "" {
		n, err := sweep.ParseTokens(o.tokens)
		if err != nil {
			return opt, nil, inputError{fmt.Errorf("--tokens: %w", err)}
		}
		pr.Tokens = n
	}
	return opt, pr, nil
}

// checkPlanLists checks the flags that list what plan searches: values in
// range, none twice; --micro-batches goes into opt.
func checkPlanLists(o planOpts, opt *sweep.PlanOptions) error {
	for _, m := range o.microBatches {
		if m < 1 || m > scenarios.MaxMicroBatch {
			return inputError{fmt.Errorf("--micro-batches: %d: use micro-batches from 1 to %d", m, scenarios.MaxMicroBatch)}
		}
		opt.MicroBatches = append(opt.MicroBatches, int64(m))
	}
	for _, k := range o.ks {
		if k < 1 {
			return inputError{fmt.Errorf("--k: %d: use K of 1 or more that divide N = dp·cp, such as 1,2,4", k)}
		}
	}
	for _, l := range []struct {
		flag string
		vals []string
	}{{"stages", itoas(o.stages)}, {"recompute", o.recompute}, {"bucket-sizes", o.buckets}, {"prefetch", itoas(o.prefetch)},
		{"algorithms", o.algorithms}, {"cp", itoas(o.cp)}, {"k", itoas(o.ks)}, {"micro-batches", itoas(o.microBatches)}} {
		for i, v := range l.vals {
			if strings.TrimSpace(v) == "" {
				// "--algorithms ," was told ` is given twice`.
				return inputError{fmt.Errorf("--%s: an empty value in %q (drop the stray comma)", l.flag, strings.Join(l.vals, ","))}
			}
			if slices.Contains(l.vals[:i], v) {
				return inputError{fmt.Errorf("--%s: %s is given twice (list each value once)", l.flag, v)}
			}
		}
	}
	for _, st := range o.stages {
		if st < 0 || st > 3 {
			return inputError{fmt.Errorf("--stages: %d is not a ZeRO stage (use 0, 1, 2 or 3)", st)}
		}
	}
	if err := sweep.CheckPlanValues("cp", itoas(o.cp)); err != nil {
		return inputError{fmt.Errorf("--cp: %w", err)}
	}
	for _, l := range []struct {
		flag string
		vals []string
	}{{"recompute", o.recompute}, {"algorithms", o.algorithms}, {"bucket-sizes", o.buckets}, {"prefetch", itoas(o.prefetch)}} {
		if err := sweep.CheckPlanValues(l.flag, l.vals); err != nil {
			return inputError{fmt.Errorf("--%s: %w", l.flag, err)}
		}
	}
	return nil
}

// planBatch checks --global-batch against the scenario's dp, or with --cp
// against each degree's (dp = GPUs/cp), where one that splits it is enough:
// the search skips the others and says so.
func planBatch(src sweep.Source, o planOpts, opt *sweep.PlanOptions) error {
	if o.globalBatch == "" && o.cp == nil {
		return nil
	}
	s, err := src.LoadUnpinned()
	if err != nil {
		return err
	}
	if o.globalBatch != "" {
		dp := int64(s.Parallelism.DP) // with --cp each degree has its own
		if o.cp != nil {
			dp = 1
		}
		opt.GlobalBatch, err = sweep.ParseGlobalBatchDP(o.globalBatch, s.Model.SeqLen, dp)
		if err == nil && o.cp == nil {
			err = sweep.CheckGlobalBatch(opt.GlobalBatch, int64(s.Parallelism.DP))
		}
		if err != nil {
			return inputError{fmt.Errorf("--global-batch: %w", err)}
		}
	}
	if o.cp != nil {
		if err := sweep.CheckPlanCP(s, opt.GlobalBatch, o.cp); err != nil {
			return inputError{fmt.Errorf("--cp: %w", err)}
		}
	}
	return nil
}

// writePlan prints the plan in the chosen format and writes -o DIR; when
// nothing fits it then fails (exit 1), as run --require-fit does, so that
// "zerosim plan … && sbatch …" stops.
func writePlan(a *app, pr *reports.PlanReport) error {
	if err := writePlanOutputs(a, pr); err != nil {
		return err
	}
	if pr.Plan.Best() == nil {
		return failure{"plan: no configuration fits in GPU memory (the report says what to change)"}
	}
	return nil
}

// writePlanOutputs writes -o DIR, then prints the plan in the chosen
// format: a file system that refuses a file fails the command with nothing
// on stdout (QA19 M4); the "wrote" line follows the plan.
func writePlanOutputs(a *app, pr *reports.PlanReport) error {
	var wrote string
	if a.outDir != "" {
		var err error
		if wrote, err = writePlanDir(a.outDir, pr, a.inputs); err != nil {
			return err
		}
	}
	var err error
	switch a.format {
	case "json":
		err = reports.WritePlanJSON(a.out, pr)
	case "csv":
		err = reports.WritePlanCSV(a.out, pr)
	default:
		err = reports.WritePlanTable(a.out, pr)
	}
	if err == nil && wrote != "" {
		fmt.Fprintf(a.err, "zerosim: %s\n", wrote)
	}
	return err
}

// writePlanDir writes the plan's files into dir and returns the line that
// says so.
func writePlanDir(dir string, pr *reports.PlanReport, inputs []input) (string, error) {
	files, err := reports.PlanFiles(pr)
	if err != nil {
		return "", err
	}
	if err := checkDirTargets(dir, files, inputs); err != nil {
		return "", err
	}
	// Another plan's files that this one does not write (network.png
	// without --network) go once this plan's are written: the directory
	// holds one plan.
	listed := reports.ManifestFiles(dir)
	paths, err := reports.WriteOutputDirMeta(dir, files, reports.PlanManifest(pr))
	if err != nil {
		return "", err
	}
	removed, err := reports.RemoveStale(dir, listed, reports.PlanFileNames, files)
	if err != nil {
		return "", err
	}
	msg := wroteFiles(len(paths), dir)
	if len(removed) > 0 {
		msg += fmt.Sprintf(" (removed an earlier plan's %s)", strings.Join(removed, ", "))
	}
	return msg, nil
}

// newBar returns a progress bar of items on errOut when it is a terminal,
// else nil (quiet when piped).
func newBar(errOut io.Writer, what, items string) *rateBar {
	if !isTerminal(errOut) {
		return nil
	}
	return newRateBar(errOut, what, items, rateAfter, 100*time.Millisecond)
}

// rateBar is a bar of work whose total may grow, drawn as sweep's is
// (newSweepBar): the count and the elapsed time, then from after on the
// rate and the time left too (the library's first rate, taken over the
// first item alone, read "216123 points/s": QA19 L14).
type rateBar struct {
	bar   *progressbar.ProgressBar
	after time.Duration
	rated bool
}

// newRateBar is a rateBar on w, its clock started now, drawn at most
// once per throttle.
func newRateBar(w io.Writer, what, items string, after, throttle time.Duration) *rateBar {
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionSetItsString(items), progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(throttle), progressbar.OptionClearOnFinish())
	bar.StartWithoutRender()
	return &rateBar{bar: bar, after: after}
}

// set draws done of total.
func (r *rateBar) set(done, total int) {
	if total != r.bar.GetMax() {
		r.bar.ChangeMax(total)
	}
	if !r.rated && r.bar.State().SecondsSince >= r.after.Seconds() {
		progressbar.OptionShowIts()(r.bar)
		progressbar.OptionSetPredictTime(true)(r.bar)
		r.rated = true
	}
	_ = r.bar.Set(done)
}

// finish clears the bar.
func (r *rateBar) finish() { _ = r.bar.Finish() }

func itoas(v []int) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.Itoa(x)
	}
	return out
}

// planCalibrationWarnings says when the algorithms plan searches
// (algorithms: --algorithms, or with pinned the one a --set
// communication.algorithm pins) hold zerosim's alpha–beta lowerings
// (ring, hierarchical, tree: not scenarios.Algorithm.NCCLModel), which a
// network calibration does not correct: one rule for both (QA22 L8: the
// --set said nothing); and when the calibration holds a value no hardware
// reaches (collectives.Unphysical), which run, compare and collective warn
// of and plan dropped (qa20 M4). The calibration's other hardware is in
// plan's header.
func planCalibrationWarnings(src sweep.Source, algorithms []string, pinned bool) []string {
	s, err := src.LoadUnpinned()
	if err != nil || s.Communication.CalibrationData == nil || !s.Communication.CalibrationData.HasNetwork() {
		return nil
	}
	ws := zero.UnphysicalCalibrationWarnings(s)
	var ab []string
	for _, al := range algorithms {
		if !scenarios.Algorithm(al).NCCLModel() {
			ab = append(ab, al)
		}
	}
	switch {
	case len(ab) == 0:
		return ws
	case pinned:
		return append(ws, fmt.Sprintf("--set communication.algorithm=%s: an alpha–beta lowering that the network part of %s does not correct; every row is timed uncalibrated (set communication.algorithm=auto to time the collectives as calibrated)",
			ab[0], s.Communication.Calibration))
	}
	return append(ws, fmt.Sprintf("--algorithms %s: alpha–beta lowerings that the network part of %s does not correct; their rows are ranked uncalibrated against the calibrated auto",
		strings.Join(ab, ","), s.Communication.Calibration))
}
