package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

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
}

// runKinds are the kinds of files -o writes (--only selects some).
var runKinds = []string{"html", "json", "trace", "plots"}

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
max beyond 16 ranks), the communication of each phase (seed accounting,
exact bytes sent, wire bytes per link class), the memory of the scenario's
stage with the replay's peak, the top of the critical path, key findings and
warnings.

--trace FILE.json writes a Chrome trace (open it in https://ui.perfetto.dev):
one process per rank, one thread per stream, memory counters.
-o DIR writes report.html, result.json, trace.json and the plots (PNG and
SVG) into DIR; other files in DIR are left alone. --format json prints
result.json instead of the tables.`,
		Example: `  zerosim run
  zerosim run seed002-tiny --trace step.json
  zerosim run scenario.yaml --set parallelism.zero_stage=3 -o out/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runRun(a, o, file, a.out, a.err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.trace, "trace", "", "write a Chrome trace (Perfetto) of the step to `FILE`")
	f.IntVar(&o.rank, "rank", 0, "rank whose memory timeline is shown (plot, trace counters)")
	f.BoolVar(&o.full, "full", false, "simulate every rank even when the scenario is symmetric")
	f.StringSliceVar(&o.only, "only", nil, "with -o, write only these kinds of files: html, json, trace, plots (default all)")
	return cmd
}

func runRun(a *app, o runOpts, file string, out, errOut io.Writer) error {
	if a.format != "table" && a.format != "json" {
		return inputError{fmt.Errorf("--format %q: run prints table or json", a.format)}
	}
	want := map[string]bool{}
	for _, k := range o.only {
		if !slices.Contains(runKinds, k) {
			return inputError{fmt.Errorf("--only %q: use html, json, trace or plots", k)}
		}
		want[k] = true
	}
	if len(o.only) == 0 {
		for _, k := range runKinds {
			want[k] = true
		}
	} else if a.outDir == "" {
		return inputError{fmt.Errorf("--only needs -o DIR")}
	}
	if a.outDir != "" {
		if err := reports.CheckOutputDir(a.outDir); err != nil {
			return inputError{err}
		}
	}
	if o.trace != "" {
		if fi, err := os.Stat(filepath.Dir(o.trace)); err != nil || !fi.IsDir() {
			return inputError{fmt.Errorf("--trace %s: directory %s does not exist", o.trace, filepath.Dir(o.trace))}
		}
		if fi, err := os.Stat(o.trace); err == nil && fi.IsDir() {
			return inputError{fmt.Errorf("--trace %s: is a directory", o.trace)}
		}
	}
	s, err := a.loadScenario(file)
	if err != nil {
		return err
	}
	if o.rank < 0 || o.rank >= s.N() {
		return inputError{fmt.Errorf("--rank %d: the scenario has ranks 0–%d", o.rank, s.N()-1)}
	}
	res, err := zero.Replay(s, zero.Options{KeepSpans: true, SpanRanks: reports.TraceMaxRanks, MemoryRank: o.rank, Full: o.full})
	if err != nil {
		return inputError{err}
	}
	run, err := reports.NewRun(s, res)
	if err != nil {
		return inputError{err}
	}
	// Render everything before writing anything: an error leaves no file.
	var trace reports.OutputFile
	if o.trace != "" || a.outDir != "" {
		trace, err = reports.Render("trace.json", func(w io.Writer) error { return reports.WriteTrace(w, res, 0) })
		if err != nil {
			return err
		}
	}
	var files []reports.OutputFile
	if a.outDir != "" {
		plots := run.Plots()
		html, err := reports.Render("report.html", func(w io.Writer) error { return reports.WriteRunHTML(w, run, &plots) })
		if err != nil {
			return err
		}
		js, err := reports.Render("result.json", func(w io.Writer) error { return reports.WriteRunJSON(w, run) })
		if err != nil {
			return err
		}
		if want["html"] {
			files = append(files, html)
		}
		if want["json"] {
			files = append(files, js)
		}
		if want["trace"] {
			files = append(files, trace)
		}
		for _, im := range plots.Images() {
			if !want["plots"] {
				break
			}
			png, err := reports.Render(im.Name+".png", im.WritePNG)
			if err != nil {
				return err
			}
			svg, err := reports.Render(im.Name+".svg", im.WriteSVG)
			if err != nil {
				return err
			}
			files = append(files, png, svg)
		}
	}
	if a.format == "json" {
		err = reports.WriteRunJSON(out, run)
	} else {
		err = reports.WriteRunTable(out, run)
	}
	if err != nil {
		return err
	}
	if a.format != "table" {
		for _, w := range res.Warnings {
			fmt.Fprintf(errOut, "zerosim: warning: %s\n", w)
		}
	}
	if o.trace != "" {
		if err := reports.WriteFileAtomic(o.trace, func(w io.Writer) error { _, err := w.Write(trace.Data); return err }); err != nil {
			return err
		}
		fmt.Fprintf(errOut, "zerosim: wrote %s\n", o.trace)
	}
	if a.outDir != "" {
		paths, err := reports.WriteOutputDir(a.outDir, files)
		if err != nil {
			return err
		}
		fmt.Fprintf(errOut, "zerosim: wrote %d files into %s\n", len(paths), a.outDir)
	}
	return nil
}
