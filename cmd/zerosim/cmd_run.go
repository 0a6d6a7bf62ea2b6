package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zerosim/zerosim/sweep"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newRunCmd) }

type runOpts struct {
	trace string
	rank  int
	full  bool
	only  []string
	// requireFit makes a step that does not fit the GPU exit 1.
	requireFit bool
	// allRanks lists every rank in result.json on the symmetric fast path.
	allRanks bool
}

func newRunCmd(a *app) *cobra.Command {
	o := runOpts{}
	cmd := &cobra.Command{
		Annotations: map[string]string{writesFiles: "yes"},
		Use:         "run [FILE]",
		Short:       "Replay one training step: step time, exposed communication, bytes per link, memory",
		Long: `run loads a scenario (FILE, "-" for standard input, the name of an embedded
example, or the default example without FILE), replays one training step on
every rank and prints: the headline, the step time split into compute,
exposed communication, waiting for peers and idle per rank (min / median /
max beyond 16 ranks), the communication of each phase (the algorithm it
ran, seed accounting, exact bytes sent, wire bytes per link class), the
memory of the scenario's
stage with the replay's peak, the top of the critical path and key findings;
warnings go to standard error. Messages name an embedded example NAME.yaml
and mark its positions "built-in example": zerosim scenarios show NAME
prints the text they point into (the default example is default).

--trace FILE.json writes a Chrome trace (open it in https://ui.perfetto.dev):
one process per rank for the first 64 ranks (the trace's cap) and the
straggler or the rank that waits or is exposed the most beyond them
(otherData ranks_shown says how many), one thread per stream, memory counters. A slice's args
name its task, phase, unit and bucket; a collective's also its bytes,
group, queued_us (from the rank reaching it to its start: waiting for the
group and for the collectives before it on its communicator, while the
rank's other streams may run) and waiting_for_peers_us (its share of the
report's waiting: summed over a rank's slices, the waiting column).
In that split compute is the compute stream's kernels; exposed
communication is a collective, or a ZeRO++ quantize kernel on a
communication stream, running while the compute stream is idle; waiting
is a reached collective not yet started while nothing of the rank runs.
-o DIR writes report.html, result.json, trace.json and the plots (PNG and
SVG) into DIR, then manifest.json (names, sizes, SHA-256); other files in
DIR are left alone. The timeline plot draws the first 8 ranks, or fewer
beside the straggler and the rank that waits or is exposed the most,
labelled. --format json prints result.json instead of the tables. --require-fit exits 1 after the report
when the headline's "fits in GPU memory" is NO (for scripts): the replayed
peak, or it with the CUDA context and NCCL's buffers, above the GPU's usable
memory, or the simulated caching allocator out of memory. A step that fits
but leaves no room for the allocator's reserve ("yes, but … expect allocator
retries", the room fit's "leave room" asks for) passes.`,
		Example: `  zerosim run
  zerosim run seed002-tiny --trace trace.json
  zerosim run scenario.yaml --set parallelism.zero_stage=3 -o out/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(a, o, fileArg(args), a.out, a.err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.trace, "trace", "", "write a Chrome trace (Perfetto) of the step to `FILE`")
	f.IntVar(&o.rank, "rank", 0, "rank whose memory timeline is shown (plot, trace counters)")
	f.BoolVar(&o.full, "full", false, "simulate every rank even when the scenario is symmetric")
	f.BoolVar(&o.allRanks, "all-ranks", false, "on the symmetric fast path, list every rank in result.json (default: identical ranks once, with the ranks they stand for)")
	f.BoolVar(&o.requireFit, "require-fit", false, "exit 1 (after the report) when the headline's fits in GPU memory is NO (peak with the CUDA context and NCCL's buffers above the usable memory; allocator retries pass)")
	f.StringSliceVar(&o.only, "only", nil, "with -o, write only these kinds of files: html, json, trace, plots (default all)")
	return cmd
}

// runRun replays the scenario, renders everything asked for before writing
// anything (an error leaves no file), prints the report and writes the files.
func runRun(a *app, o runOpts, file string, out, errOut io.Writer) error {
	want, err := checkRunFlags(a, o)
	if err != nil {
		return err
	}
	s, err := a.loadScenario(file)
	if err != nil {
		return err
	}
	if o.rank < 0 || o.rank >= s.N() {
		return inputError{fmt.Errorf("--rank %d: the scenario has ranks 0–%d", o.rank, s.N()-1)}
	}
	progress, done := replayProgress(errOut, "replay")
	res, err := zero.Replay(s, zero.Options{KeepSpans: true, SpanRanks: reports.TraceMaxRanks, SpanNotable: true, MaxCollectives: reports.MaxListedCollectives, MemoryRank: o.rank, Full: o.full, Progress: progress})
	done()
	if err != nil {
		return a.replayError(err)
	}
	run, err := reports.NewRun(s, res, a.atStage)
	if err != nil {
		return inputError{err}
	}
	run.AllRanks, run.Style, run.File = o.allRanks, a.style(), a.file
	if run.AtFits, err = sweep.AtPublishedFits(s, res); err != nil {
		return a.replayError(err)
	}
	if res.LatencyBound() {
		// The finding names what a larger bucket and a larger K give.
		run.Levers = sweep.LatencyLevers(sweep.Source{File: a.input.File, Data: a.input.Data, Sets: a.sets}, s)
	}
	if len(res.Degraded) > 0 {
		// The findings weigh the step against the same without the
		// degraded links: one more replay.
		if w, ok := sweep.WithoutLinkOverrides(sweep.Source{File: a.input.File, Data: a.input.Data, Sets: a.sets}); ok {
			run.WithoutLinks = &w
		}
	}
	trace, files, err := renderRunOutputs(run, want, o.trace, a.outDir)
	if err != nil {
		return err
	}
	// The files first: a file system that refuses one fails the command
	// with nothing on stdout (QA19 M4); the "wrote" lines follow the
	// report, as before.
	var wrote bytes.Buffer
	if err := writeRunFiles(a.outDir, o.trace, trace, files, a.inputs, &wrote); err != nil {
		return err
	}
	if err := printRun(a.format, out, errOut, run); err != nil {
		return err
	}
	_, _ = wrote.WriteTo(errOut)
	if v := run.Fit(); o.requireFit && !v.Fits {
		return failure{"--require-fit: the step does not fit in GPU memory (" + v.String() + ")"}
	}
	return nil
}

// renderRunOutputs renders the --trace file and -o's files, before
// anything is written or printed, and refuses a --trace path that is one
// of -o's files (QA19 L10: -o tdir --trace tdir/result.json wrote the
// trace, said so, and replaced it with result.json). --trace DIR/trace.json
// is let through: -o writes the same bytes there.
func renderRunOutputs(run *reports.Run, want map[string]bool, tracePath, dir string) (*reports.OutputFile, []reports.OutputFile, error) {
	var trace *reports.OutputFile
	if tracePath != "" {
		t, err := reports.RenderRunTrace(run)
		if err != nil {
			return nil, nil, err
		}
		trace = &t
	}
	if dir == "" {
		return trace, nil, nil
	}
	files, err := reports.RenderRunFiles(run, want, trace)
	if err != nil {
		return nil, nil, err
	}
	if tracePath == "" {
		return trace, files, nil
	}
	for _, name := range append(fileNames(files), reports.ManifestName) {
		if name != trace.Name && samePath(tracePath, filepath.Join(dir, name)) {
			return nil, nil, inputError{fmt.Errorf("--trace %s: -o %s writes %s there too, over the trace (give the trace another name, or drop --trace: -o writes %s)",
				tracePath, dir, name, trace.Name)}
		}
	}
	return trace, files, nil
}

// fileNames are the names of files.
func fileNames(files []reports.OutputFile) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names
}

// samePath reports whether a and b name one file: the same absolute path,
// the same path once the directories they are in are resolved (a link to
// a directory: rev24, -o link --trace real/result.json, before either file
// exists), or, when both exist, the same file (a symbolic link, a hard
// link).
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == ab {
		return true
	}
	if ra, rb := resolvedDir(a), resolvedDir(b); ra != "" && ra == rb {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// resolvedDir is path with the directory it is in resolved (its symbolic
// links followed), "" when that directory cannot be resolved.
func resolvedDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return ""
	}
	return filepath.Join(dir, filepath.Base(abs))
}

// checkRunFlags checks run's flags before anything runs and returns the
// kinds of files -o writes.
func checkRunFlags(a *app, o runOpts) (map[string]bool, error) {
	if a.format != "table" && a.format != "json" {
		return nil, inputError{fmt.Errorf("--format %q: run prints table or json", a.format)}
	}
	want, err := reports.ParseRunKinds(o.only)
	if err != nil {
		return nil, inputError{err}
	}
	if len(o.only) > 0 && a.outDir == "" {
		return nil, inputError{fmt.Errorf("--only needs -o DIR")}
	}
	// It shapes result.json only; the tables were printed as without it.
	if o.allRanks && a.format != "json" && a.outDir == "" {
		return nil, inputError{fmt.Errorf("--all-ranks lists every rank in result.json: add --format json or -o DIR")}
	}
	// -o DIR and --trace FILE were checked before the command ran
	// (app.checkOutputs).
	return want, nil
}

// printRun prints the tables or result.json, then the replay's warnings
// on stderr, as every command prints its warnings: in table mode they
// were the report's last lines on stdout, out of sight of zerosim run
// x.yaml > report.txt (QA22 M5). The table's memory section keeps the
// memory model's inline, as zerosim memory's does; result.json lists
// them all.
func printRun(format string, out, errOut io.Writer, run *reports.Run) error {
	warnings := run.Result.Warnings
	if format == "table" {
		if err := reports.WriteRunTable(out, run); err != nil {
			return err
		}
	} else {
		if err := reports.WriteRunJSON(out, run); err != nil {
			return err
		}
		warnings = run.Warnings()
	}
	for _, w := range warnings {
		fmt.Fprintf(errOut, "zerosim: warning: %s\n", w)
	}
	return nil
}

// writeRunFiles writes the --trace file and the -o files, each atomically.
func writeRunFiles(dir, tracePath string, trace *reports.OutputFile, files []reports.OutputFile, inputs []input, errOut io.Writer) error {
	// -o's files first: a directory that cannot be written then leaves
	// no --trace file behind (final read B: the trace was written, then
	// -o failed, exit 1).
	if dir != "" {
		if err := writeOutputDir(errOut, dir, files, inputs); err != nil {
			return err
		}
	}
	if tracePath != "" {
		if err := reports.WriteFileAtomic(tracePath, func(w io.Writer) error { _, err := w.Write(trace.Data); return err }); err != nil {
			return err
		}
		fmt.Fprintf(errOut, "zerosim: wrote %s\n", tracePath)
	}
	return nil
}

// writeOutputDir writes -o's files (reports.WriteOutputDir: each
// atomically, the manifest last) and says so in one line, as every
// command with -o does. A file of inputs among them is refused first
// (checkDirTargets).
func writeOutputDir(errOut io.Writer, dir string, files []reports.OutputFile, inputs []input) error {
	if err := checkDirTargets(dir, files, inputs); err != nil {
		return err
	}
	paths, err := reports.WriteOutputDir(dir, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "zerosim: %s\n", wroteFiles(len(paths), dir))
	return nil
}

// wroteFiles says what -o wrote: the files asked for and the manifest
// ("wrote 1 file and manifest.json into oh", not "1 files").
func wroteFiles(n int, dir string) string {
	noun := "files"
	if n == 1 {
		noun = "file"
	}
	return fmt.Sprintf("wrote %d %s and %s into %s", n, noun, reports.ManifestName, dir)
}
