package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

func init() { commands = append(commands, newSweepCmd) }

type sweepOpts struct {
	grids  []string
	jobs   int
	out    string
	resume bool
	shard  string
	count  bool
	// inputs are the files the command line reads (app.inputs), which
	// --out may not replace (checkTarget).
	inputs []input
}

func newSweepCmd(a *app) *cobra.Command {
	o := sweepOpts{}
	cmd := &cobra.Command{
		Use:   "sweep [FILE] --grid key=v1,v2,… [--grid …]",
		Short: "Replay every point of a parameter grid and stream one row per point (CSV or JSON Lines)",
		Long: `sweep replays the cartesian product of the --grid values on a scenario
(FILE, the name of an embedded example, or without FILE the default example). Each point is the scenario with
its values applied as --set overrides; its row holds the point index, the
values, step time and the busiest rank's exposed communication (ps), the wire
bytes over the network and within nodes (nvlink_bytes on every vendor: xGMI
on AMD), the per-rank peak memory (allocated, as run judges "fits" and plan
ranks) and the device peak (what nvidia-smi or rocm-smi sees),
the tokens per second per GPU and the MFU (run's and plan's), whether the
allocated peak fits the GPU (fits) and whether the device peak does too
(device_fits: false where run warns of retries or out-of-memory), and the
error of a point whose input is invalid (an invalid point is a row, not a
failure).

Points are numbered in a fixed order: grids in flag order, values in the
order given, the last grid varying fastest. Rows come out in that order
whatever -j is. --shard i/n runs only the points whose index % n == i, so
a sweep spreads over a Slurm job array or a Kubernetes Indexed Job;
zerosim merge joins the shard files back into one. --resume continues an
interrupted --out file. --count prints the number of points and exits.

To sweep the cluster's size, let dp follow it: --set parallelism.dp=auto
(dp = the cluster's GPUs over cp) with --grid cluster.nodes=….

The format is CSV (default) or JSON Lines with --format json. A progress bar
with ETA is drawn on stderr only when stderr is a terminal.`,
		Example: `  zerosim sweep seed000-k4 --grid parallelism.k=1,2,4,8 --grid communication.algorithm=ring,hierarchical
  zerosim sweep scenario.yaml --set parallelism.dp=auto --grid cluster.nodes=2,4,8,16
  zerosim sweep scenario.yaml --grid parallelism.zero_stage=0,1,2,3 --grid communication.bucket_size=25MB,100MB --out sweep.csv
  zerosim sweep scenario.yaml --grid … --shard 2/8 --out shard-2.csv
  zerosim sweep scenario.yaml --grid … --out sweep.csv --resume`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range []string{"out", "resume", "shard"} {
				// --count runs nothing: these were ignored (no file written).
				if o.count && cmd.Flags().Changed(f) {
					return inputError{fmt.Errorf("--count prints the number of points of the whole grid and runs nothing: drop --%s", f)}
				}
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			stopsGracefully.Store(true)
			defer stopsGracefully.Store(false)
			o.inputs = a.inputs
			return runSweep(ctx, a, o, fileArg(args), a.out, a.err)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.grids, "grid", nil, "swept `key.path=v1,v2,…` (repeatable; the last grid varies fastest)")
	f.IntVarP(&o.jobs, "jobs", "j", sweep.DefaultJobs(), "points replayed at once")
	f.StringVar(&o.out, "out", "", "write rows to `FILE` instead of stdout")
	f.BoolVar(&o.resume, "resume", false, "continue an interrupted --out file: skip the points it holds, append the rest")
	f.StringVar(&o.shard, "shard", "0/1", "run only the points with index % n == i (`i/n`)")
	f.BoolVar(&o.count, "count", false, "print the number of points and exit")
	return cmd
}

// loadSource reads FILE (see scenarios.ReadInput) with the global --set
// overrides; the bytes are kept so every point or variant loads them again
// with its own overrides. Those loads keep their warnings to themselves, so
// it loads the file once with the global overrides and holds the
// scenario's warnings (a gpu_memory in GB that flips fit's and plan's
// verdicts, a link the GPU does not have) for the command to print once
// its input checks pass (app.flushWarnings), as loadScenario prints them
// for run and memory. searched leaves out the loader's warning that the
// stack does not run the file's stage and K, for a command that searches
// both (plan, fit). A file that does not load by itself (a --grid or --vary
// value completes it) is left to those loads and their errors: the
// scenario returned is nil. keys are the keys every point or variant sets
// (sweep's --grid, compare's --vary): the file's warning that
// model.seq_len is not given is left out when they set it, as no point
// trains at the default (QA14 finding 4).
func loadSource(a *app, arg string, searched bool, keys ...string) (sweep.Source, *scenarios.Scenario, error) {
	in, err := scenarios.ReadInput(arg, a.in)
	if err != nil {
		return sweep.Source{}, nil, err
	}
	src := sweep.Source{File: in.File, Data: in.Data, Sets: a.sets}
	s, err := src.Load()
	if err != nil {
		return src, nil, nil
	}
	seqLenSet := slices.Contains(keys, "model.seq_len")
	for _, w := range s.Warnings {
		switch {
		case searched && w == s.LayoutWarning:
		case seqLenSet && w == s.SeqLenNote():
		default:
			a.pending = append(a.pending, w)
		}
	}
	return src, s, nil
}

func sweepFormat(format string) sweep.Format {
	if format == "json" {
		return sweep.JSONL
	}
	return sweep.CSV
}

// parseSweepFlags checks sweep's flags: the grids' space and the shard. A
// misspelled key would make every point an error row: it refuses the sweep
// instead.
func parseSweepFlags(o sweepOpts, sets []string) (*sweep.Space, sweep.Shard, error) {
	var grids []sweep.Grid
	for _, g := range o.grids {
		gr, err := sweep.ParseGrid(g)
		if err != nil {
			return nil, sweep.Shard{}, inputError{fmt.Errorf("--grid: %w", err)}
		}
		grids = append(grids, gr)
	}
	sp, err := sweep.NewSpace(grids)
	if err != nil {
		return nil, sweep.Shard{}, inputError{fmt.Errorf("--grid: %w", err)}
	}
	sh, err := sweep.ParseShard(o.shard)
	if err != nil {
		return nil, sweep.Shard{}, inputError{fmt.Errorf("--shard: %w", err)}
	}
	if err := checkJobs(o.jobs); err != nil {
		return nil, sweep.Shard{}, err
	}
	if o.out == "-" {
		return nil, sweep.Shard{}, inputError{errors.New(`--out -: "-" would be a file named "-" (leave --out out to write to standard output)`)}
	}
	if o.resume && o.out == "" {
		return nil, sweep.Shard{}, inputError{errors.New("--resume needs --out FILE (the file to continue)")}
	}
	for _, g := range sp.Grids {
		if err := scenarios.CheckKeyPath(g.Key); err != nil {
			return nil, sweep.Shard{}, inputError{fmt.Errorf("--grid: %w", err)}
		}
		// A value that cannot be of the key's type ("k=1,x",
		// "bucket_size=25,100MB") made every point with it an error row,
		// exit 0.
		for _, v := range g.Values {
			set := g.Key + "=" + v
			if err := scenarios.CheckSetType(set); err != nil {
				msg := strings.TrimPrefix(err.Error(), "--set "+set+": ")
				return nil, sweep.Shard{}, inputError{fmt.Errorf("--grid %s=%s: %s", g.Key, strings.Join(g.Values, ","), msg)}
			}
		}
	}
	for _, s := range sets {
		if err := scenarios.CheckSet(s); err != nil {
			return nil, sweep.Shard{}, inputError{err}
		}
		if err := scenarios.CheckSetType(s); err != nil {
			// Every row was an error row, exit 0.
			return nil, sweep.Shard{}, inputError{fmt.Errorf("--set %s: %w", s, err)}
		}
	}
	if err := checkSetsUnderGrids(sets, sp); err != nil {
		return nil, sweep.Shard{}, err
	}
	return sp, sh, nil
}

// checkGridValues refuses a --set or --grid value that is wrong by itself,
// whatever the other keys hold (zero_stage=7, micro_batch=0, an unknown
// preset name, a file that is not there: scenarios.Error.Alone), before
// any point runs: each made a column of error rows, exit 0. A value that
// only does not fit the rest of its point (a k that does not divide that
// point's dp, a dp that does not fill the cluster) stays an error row: the
// other grids may make it fit, and which points do is the sweep's answer.
// A --set is loaded on the file alone, so that another --set's error
// found first does not hide it.
func checkGridValues(src sweep.Source, sp *sweep.Space) error {
	file := sweep.Source{File: src.File, Data: src.Data}
	for _, set := range src.Sets {
		_, err := file.Load(set)
		if _, ok := scenarios.AloneError(err, set); ok {
			return inputError{err}
		}
	}
	for _, g := range sp.Grids {
		for _, v := range g.Values {
			set := g.Key + "=" + v
			_, err := src.Load(set)
			if msg, ok := scenarios.AloneError(err, set); ok {
				return inputError{fmt.Errorf("--grid %s=%s: %s", g.Key, strings.Join(g.Values, ","), msg)}
			}
		}
	}
	return nil
}

// checkSweepInput refuses, before the first row, a scenario or grid value
// that would make every point (or every point with that value) an error
// row: the file's YAML syntax, a grid value wrong by itself
// (checkGridValues), an error every point gives (checkEveryPoint). It
// returns the first point's scenario (nil when it does not load).
func checkSweepInput(src sweep.Source, sp *sweep.Space) (*scenarios.Scenario, error) {
	if err := scenarios.CheckSyntax(src.File, src.Data); err != nil {
		return nil, err
	}
	if err := checkGridValues(src, sp); err != nil {
		return nil, err
	}
	return checkEveryPoint(src, sp)
}

// checkEveryPoint refuses a scenario that no point can load: one with an
// unknown key or a value wrong by itself outside the grids' keys
// (scenarios.EveryPointError), found by loading the first point, or whose
// NCCL pins leave every point's step a collective without an algorithm
// (sweep.PinError), found by loading the others until one loads. Each made
// every row an error row, exit 0 (a job array of such shards "succeeded").
// It returns the first point's scenario, nil when it does not load.
func checkEveryPoint(src sweep.Source, sp *sweep.Space) (*scenarios.Scenario, error) {
	s, err := src.Load(sp.Point(0).Sets(sp)...)
	if scenarios.EveryPointError(err, sp.Keys()) {
		return nil, inputError{err}
	}
	if err != nil && sweep.PinError(err) {
		for i := 1; i < sp.Len(); i++ {
			if _, perr := src.Load(sp.Point(i).Sets(sp)...); perr == nil {
				return nil, nil // the points that fail are error rows
			}
		}
		// The override is the user's --grid (rev24: it read --set).
		return nil, inputError{errors.New(sweep.AsGrid(err.Error(), sp.Point(0).Sets(sp)))}
	}
	if err != nil {
		return nil, nil // a point's error, its row's
	}
	return s, nil
}

// sweepProgress is a progress bar over n points on errOut when it is a
// terminal, nil otherwise (quiet when piped).
func sweepProgress(errOut io.Writer, n int) *progressbar.ProgressBar {
	if !isTerminal(errOut) {
		return nil
	}
	return newSweepBar(errOut, n)
}

// rateAfter is how long a sweep runs before its bar shows a rate and an
// ETA: the library's first rate divided the first point by the time since
// the bar's first render, that point's own end ("(1/8, 216123 points/s)"
// for points of about 100 ms, QA19 L14).
const rateAfter = time.Second

// newSweepBar is the bar on w, its clock started now (the sweep's start);
// the count and the elapsed time until rateAfter, then also the rate and
// the time left (sweepEmitter.emit).
func newSweepBar(w io.Writer, n int) *progressbar.ProgressBar {
	bar := progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("sweep"),
		progressbar.OptionShowCount(), progressbar.OptionSetItsString("points"), progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	bar.StartWithoutRender()
	return bar
}

// sweepEmitter writes the rows in order, counts them and the invalid ones,
// advances the progress bar (if any) and gathers the points' load warnings
// not shown yet (shown: the file's and --set's, which loadSource held).
type sweepEmitter struct {
	enc           *sweep.Encoder
	bar           *progressbar.ProgressBar
	sp            *sweep.Space
	rows, invalid int
	shown         map[string]int // warning text → its index in warnings
	warnings      []pointWarning
	// file: the file's own load warnings (loadSource), printed without
	// points when every row's point gave them, as run prints them.
	file  []string
	rated bool // the bar shows the rate and the time left
	// clear: the rows go to the terminal the bar is drawn on (standard
	// output a terminal too), so each row is written where the bar was,
	// the bar erased first and drawn again below the row by the Add that
	// follows (QA25 M3: rows were glued to the bar's line on screen).
	clear bool
}

// pointWarning is one distinct load warning and the points that gave it.
type pointWarning struct {
	text   string
	points []int
}

func (e *sweepEmitter) emit(r sweep.Row) error {
	if e.clear && e.bar != nil {
		_ = e.bar.Clear() // "\r", spaces over the bar, "\r" (progressbar v3.19.1)
	}
	if err := e.enc.Write(r); err != nil {
		return err
	}
	e.rows++
	if r.Err != "" {
		e.invalid++
	}
	for _, w := range r.Warnings {
		i, ok := e.shown[w]
		if !ok {
			i = len(e.warnings)
			e.shown[w] = i
			e.warnings = append(e.warnings, pointWarning{text: w})
		}
		e.warnings[i].points = append(e.warnings[i].points, r.Index)
	}
	if e.bar != nil {
		if !e.rated && e.bar.State().SecondsSince >= rateAfter.Seconds() {
			// Emit runs on one goroutine, the bar's only user.
			progressbar.OptionShowIts()(e.bar)
			progressbar.OptionSetPredictTime(true)(e.bar)
			e.rated = true
		}
		_ = e.bar.Add(1)
	}
	return nil
}

// finish clears the progress bar and prints each point warning once, with
// the points it came from (pointsLabel), in the order the rows first gave
// them: on stderr, never in the rows, as run prints its scenario's. A
// warning of the file itself that every row's point gave is printed
// without points.
func (e *sweepEmitter) finish(errOut io.Writer) {
	if e.bar != nil {
		_ = e.bar.Finish()
	}
	for _, w := range e.warnings {
		if len(w.points) == e.rows && slices.Contains(e.file, w.text) {
			// Every point gave the file's warning: the scenario's.
			fmt.Fprintf(errOut, "zerosim: warning: %s\n", w.text)
			continue
		}
		fmt.Fprintf(errOut, "zerosim: warning: %s: %s\n", pointsLabel(e.sp, w.points), w.text)
	}
}

// pointsLabel names a warning's points by their index column: "point 3",
// "points 0–3, 8", or "24 points" beyond six runs of consecutive indices,
// followed by the grid values they all share among the grids of more
// than one value ("(cluster.gpu=MI300X)"), the likely cause.
func pointsLabel(sp *sweep.Space, points []int) string {
	var runs []string
	for i := 0; i < len(points); {
		j := i
		for j+1 < len(points) && points[j+1] == points[j]+1 {
			j++
		}
		if j == i {
			runs = append(runs, fmt.Sprint(points[i]))
		} else {
			runs = append(runs, fmt.Sprintf("%d–%d", points[i], points[j]))
		}
		i = j + 1
	}
	label := "points " + strings.Join(runs, ", ")
	switch {
	case len(points) == 1:
		label = "point " + runs[0]
	case len(runs) > 6:
		label = fmt.Sprintf("%d points", len(points))
	}
	var common []string
	for g, grid := range sp.Grids {
		v := sp.Point(points[0]).Values[g]
		same := len(grid.Values) > 1
		for _, p := range points[1:] {
			same = same && sp.Point(p).Values[g] == v
		}
		if same {
			common = append(common, grid.Key+"="+v)
		}
	}
	if len(common) > 0 {
		label += " (" + strings.Join(common, ", ") + ")"
	}
	return label
}

func runSweep(ctx context.Context, a *app, o sweepOpts, file string, out, errOut io.Writer) error {
	sp, sh, err := parseSweepFlags(o, a.sets)
	if err != nil {
		return err
	}
	held := len(a.pending)
	src, base, err := loadSource(a, file, false, sp.Keys()...)
	if err != nil {
		return err
	}
	// The file's warnings come with the points that give them, after
	// the rows (sweepEmitter.finish): the first point did not stand for
	// the others, and the output depended on the grid's order.
	fileWarnings := slices.Clone(a.pending[held:])
	a.pending = a.pending[:held]
	first, err := checkSweepInput(src, sp)
	if err != nil {
		return err
	}
	if o.count { // after the checks: a job array it sized failed in every task
		fmt.Fprintln(out, sp.Len())
		return nil
	}
	meta := sweep.NewMeta(src, sp, cmp.Or(base, first)) // sweep.Resolve's, not loaded again
	meta.Zerosim = reports.ReadBuild().Sweep()          // --resume and merge refuse another build's rows (QA25 M6)
	f := sweepFormat(a.format)
	w, outFile, p, err := sweepOutput(o, f, meta, sp, sh, out)
	if err != nil {
		return err
	}
	defer outFile.close()
	var done func(int) bool
	header, todo := true, sh.Count(sp.Len())
	if p != nil {
		done, header = p.IsDone, !p.HasHeader
		todo -= len(p.Done)
	}
	em := &sweepEmitter{sp: sp, shown: map[string]int{}, file: fileWarnings}
	a.flushWarnings()
	enc := sweep.NewEncoder(w, f, sp.Keys())
	if header {
		if err := enc.WriteHeader(meta); err != nil {
			return outFile.failed(err, 0)
		}
	}
	em.enc, em.bar, em.clear = enc, sweepProgress(errOut, todo), o.out == "" && isTerminal(out)
	ev := &sweep.Evaluator{Src: src, Space: sp}
	err = sweep.Run(ctx, sweep.RunConfig{Indices: sh.Indices(sp.Len(), done), Jobs: o.jobs, Eval: ev.Eval, Emit: em.emit})
	em.finish(errOut)
	if err != nil {
		return sweepStopped(ctx, outFile.failed(err, em.rows), em.rows, todo, o.out)
	}
	if err := sortResumed(o.out, p); err != nil {
		return err
	}
	if em.bar != nil || em.invalid > 0 { // invalid points even on a pipe (qa21 LOW 5)
		fmt.Fprintf(errOut, "zerosim: sweep: %s (shard %s), %d invalid\n", nOf(em.rows, "point", "points"), sh, em.invalid)
	}
	return nil
}

// sweepFile is the --out file; it keeps the first error the file gave, so
// a full disk is told as the file's (exit 2, the path and the fix) and not
// as sweep's "writing the header: write s.csv: no space left on device"
// with exit 1 (QA19 M4).
type sweepFile struct {
	reports.ErrWriter // over f: the first error it gave
	f                 *os.File
	path              string
	// created: the file is this sweep's own (not --resume's, not a
	// device), removed when a failure leaves it without a row.
	created bool
}

// sweepOutput is where the rows go: standard output, or the --out file
// (openSweepOut) with the points it already holds under --resume.
func sweepOutput(o sweepOpts, f sweep.Format, m sweep.Meta, sp *sweep.Space, sh sweep.Shard, out io.Writer) (io.Writer, *sweepFile, *sweep.Partial, error) {
	if o.out == "" {
		return out, nil, nil, nil
	}
	fh, p, err := openSweepOut(o, f, m, sp, sh)
	if err != nil {
		return nil, nil, nil, err
	}
	fi, err := fh.Stat()
	sf := &sweepFile{ErrWriter: reports.ErrWriter{W: fh}, f: fh, path: o.out, created: !o.resume && err == nil && fi.Mode().IsRegular()}
	return sf, sf, p, nil
}

func (s *sweepFile) close() {
	if s != nil {
		s.f.Close()
	}
}

// failed is err, the sweep's error after rows rows were written, as the
// file's write error when the file gave one: a file of this sweep without
// a row is removed; rows written are kept, for --resume.
func (s *sweepFile) failed(err error, rows int) error {
	if s == nil || s.Err == nil {
		return err
	}
	we := &reports.WriteError{Path: s.path, Err: s.Err}
	if rows == 0 && s.created {
		s.f.Close()
		os.Remove(s.path)
		return we
	}
	if rows == 0 {
		// A device (/dev/full) or a file of earlier rows (--resume):
		// none of this sweep's was written (final read R2).
		return we
	}
	return inputError{fmt.Errorf("%s; the rows written are kept: continue with --resume --out %s", writeFailure(we), s.path)}
}

// openSweepOut opens the --out file: a new file, or with --resume the
// existing one truncated after its last complete line, positioned at its
// end, with the points it already holds.
func openSweepOut(o sweepOpts, f sweep.Format, m sweep.Meta, sp *sweep.Space, sh sweep.Shard) (*os.File, *sweep.Partial, error) {
	if fi, err := os.Stat(o.out); err == nil && fi.IsDir() {
		return nil, nil, inputError{fmt.Errorf("--out %s is a directory (give a file name, e.g. %s)", o.out, filepath.Join(o.out, "sweep.csv"))}
	}
	if err := checkOutputFile(o.out); err != nil {
		// "--out: open DIR/s.csv: permission denied" before.
		return nil, nil, inputError{fmt.Errorf("--out %s: %w", o.out, err)}
	}
	if err := checkTarget("sweep", "out", o.out, sweepKind, o.inputs); err != nil {
		return nil, nil, err
	}
	if !o.resume {
		if fi, err := os.Stat(o.out); err == nil && !fi.Mode().IsRegular() {
			// A device or a FIFO (/dev/null, a pipe): written as it is,
			// nothing there to overwrite or resume.
			fh, err := os.OpenFile(o.out, os.O_WRONLY, 0)
			if err != nil {
				return nil, nil, inputError{fmt.Errorf("--out: %w", err)}
			}
			return fh, nil, nil
		}
		// 0o666: the umask decides, as for any file a command creates.
		fh, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			return nil, nil, inputError{fmt.Errorf("--out %s exists (continue it with --resume, or delete it)", o.out)}
		}
		if err != nil {
			return nil, nil, inputError{fmt.Errorf("--out: %w", err)}
		}
		return fh, nil, nil
	}
	// Never through a symlink, never onto something that is not a file.
	fh, err := os.OpenFile(o.out, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o666)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, inputError{fmt.Errorf("--resume --out %s is a symbolic link (give the file itself)", o.out)}
	}
	if err != nil {
		return nil, nil, inputError{fmt.Errorf("--out: %w", err)}
	}
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, nil, inputError{fmt.Errorf("--resume --out %s is not a regular file", o.out)}
	}
	p, err := sweep.ScanPartial(fh, f, m, sp, sh)
	if err == nil {
		if err = fh.Truncate(p.Keep); err == nil {
			_, err = fh.Seek(p.Keep, io.SeekStart)
		}
	}
	if err != nil {
		fh.Close()
		return nil, nil, inputError{fmt.Errorf("--resume %s: %w", o.out, err)}
	}
	return fh, p, nil
}

// sortResumed rewrites the --out file out, complete after --resume, into
// grid order when the rows it held were not (sweep.Partial.NeedsSort: a
// row missing before its last one, which the resume appended at the end,
// QA25 L14): the file sorted by point index (sweep.Merge of it alone),
// written atomically, so it is the file an uninterrupted run writes.
func sortResumed(out string, p *sweep.Partial) error {
	if p == nil || !p.NeedsSort {
		return nil
	}
	fh, err := os.Open(out)
	if err != nil {
		return readError("--resume "+out, err)
	}
	defer fh.Close()
	err = reports.WriteFileAtomic(out, func(w io.Writer) error {
		_, err := sweep.Merge(w, []sweep.Input{{Name: out, R: fh}}, 0)
		return err
	})
	if we := (*reports.WriteError)(nil); errors.As(err, &we) {
		return inputError{fmt.Errorf("--out %s: %s; every row is kept, out of grid order: run the same sweep with --resume again to sort it", out, writeFailureAs(we, "its rows sorted into grid order"))}
	}
	if err != nil {
		return inputError{fmt.Errorf("--resume %s: sorting the rows into grid order: %s", out, plain(err))}
	}
	return nil
}

// checkSetsUnderGrids refuses a --set of a key a --grid sets at every
// point, or of a key inside it: the grid's value replaces it, so the --set
// only changed the meta line, and the rows then did not merge with the
// same sweep run without it (QA25 L13).
func checkSetsUnderGrids(sets []string, sp *sweep.Space) error {
	for _, s := range sets {
		key, _, _ := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		for _, g := range sp.Grids {
			if scenarios.UnderKey(key, g.Key) {
				return inputError{fmt.Errorf("--set %s: --grid %s=%s sets that key at every point (drop the --set, or put its value in the grid)", s, g.Key, strings.Join(g.Values, ","))}
			}
		}
	}
	return nil
}

// givenByAll keeps of the file's load warnings held those that each of
// the scenarios (the points or variants, as loaded) gives too: one about
// a key a --grid or --vary sets at every point was printed though no point
// gave it, and again with the points that did (QA25 M2). Those left out
// come after the rows with the points that give them. A nil scenario (a
// point that does not load) cannot tell: everything is kept.
func givenByAll(held []string, scs ...*scenarios.Scenario) []string {
	var keep []string
	for _, w := range held {
		all := true
		for _, s := range scs {
			all = all && (s == nil || slices.Contains(s.Warnings, w))
		}
		if all || slices.Contains(scs, nil) {
			keep = append(keep, w)
		}
	}
	return keep
}

// sweepStopped is the error of a sweep that stopped before its last row:
// a signal's (ctx canceled) says where it stopped and how to go on; to
// standard output it said "context canceled" (QA25 L1).
func sweepStopped(ctx context.Context, err error, rows, todo int, out string) error {
	switch {
	case ctx.Err() == nil:
		return err
	case out != "":
		return failure{fmt.Sprintf("sweep interrupted after %d of %d points; continue with --resume --out %s", rows, todo, out)}
	}
	return failure{fmt.Sprintf("sweep interrupted after %d of %d points (the rows on standard output are whole; rerun with --out FILE to resume one)", rows, todo)}
}
