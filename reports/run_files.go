package reports

import (
	"fmt"
	"io"
	"slices"

	"github.com/zerosim/zerosim/scenarios"
)

// runKinds are the kinds of files `zerosim run -o DIR` writes, in the order
// they are written: report.html, result.json, trace.json and the plots (PNG
// and SVG of each).
var runKinds = []string{"html", "json", "trace", "plots"}

// ParseRunKinds checks the kinds named by --only; none means all.
func ParseRunKinds(only []string) (map[string]bool, error) {
	want := map[string]bool{}
	for _, k := range only {
		if !slices.Contains(runKinds, k) {
			return nil, fmt.Errorf("--only %q: use %s", k, scenarios.ListOr(runKinds))
		}
		want[k] = true
	}
	if len(only) == 0 {
		for _, k := range runKinds {
			want[k] = true
		}
	}
	return want, nil
}

// RenderRunTrace renders the run's Chrome trace (trace.json).
func RenderRunTrace(run *Run) (OutputFile, error) {
	// About 250 bytes a slice: gpt3-175b-16k's ZeRO-1 trace is 282 MB of
	// 1.13 M slices, most of them collectives with their args.
	n := 0
	for _, spans := range run.Result.Spans[:min(len(run.Result.Spans), TraceMaxRanks)] {
		n += len(spans)
	}
	return renderSized("trace.json", n*256+1<<20, func(w io.Writer) error { return writeTrace(w, run.Result, 0) })
}

// RenderRunFiles renders the files of the kinds in want, and only those
// (the plots are drawn only for the HTML page or the images). trace, when
// already rendered for --trace, is reused.
func RenderRunFiles(run *Run, want map[string]bool, trace *OutputFile) ([]OutputFile, error) {
	var plots *runPlots
	if want["html"] || want["plots"] {
		p := run.plots()
		plots = &p
	}
	var files []OutputFile
	add := func(name string, write func(io.Writer) error) error {
		f, err := render(name, write)
		if err == nil {
			files = append(files, f)
		}
		return err
	}
	if want["html"] {
		if err := add("report.html", func(w io.Writer) error { return writeRunHTML(w, run, plots) }); err != nil {
			return nil, err
		}
	}
	if want["json"] {
		if err := add("result.json", func(w io.Writer) error { return WriteRunJSON(w, run) }); err != nil {
			return nil, err
		}
	}
	if want["trace"] {
		if trace == nil {
			t, err := RenderRunTrace(run)
			if err != nil {
				return nil, err
			}
			trace = &t
		}
		files = append(files, *trace)
	}
	if want["plots"] {
		for _, im := range plots.images() {
			fs, err := im.files(im.Name)
			if err != nil {
				return nil, err
			}
			files = append(files, fs...)
		}
	}
	return files, nil
}
