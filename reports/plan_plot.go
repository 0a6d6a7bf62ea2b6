package reports

import (
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bw formats a bandwidth per GPU in GB/s and Gb/s.
func bw(perGPU float64) string {
	return fmt.Sprintf("%.2f GB/s (%.0f Gb/s)", perGPU/1e9, perGPU*8/1e9)
}

// networkTable is plan --network's answer.
func networkTable(np *sweep.NetworkPlan) *table {
	t := &table{Title: fmt.Sprintf("inter-node bandwidth per GPU each ZeRO stage needs to stay within %g %% of its compute-bound step", 100*np.Tolerance),
		Header: []string{"ZeRO", "configuration", "compute-bound", "least bandwidth per GPU", "step there", "step now"},
		left:   []int{0, 1}}
	for _, sb := range np.Stages {
		need, there := "not reachable", "-"
		if sb.NICBandwidth > 0 {
			need, there = bw(sb.PerGPU), planDur(sb.Step)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(sb.Stage), shortConfig(sb), planDur(sb.ComputeBound), need, there, planDur(sb.NominalStep)})
		if note := networkNote(sb, np.Tolerance); note != "" {
			t.Notes = append(t.Notes, labelled(fmt.Sprintf("stage %d: ", sb.Stage), note))
		}
	}
	t.Notes = append(t.Notes, wrap(fmt.Sprintf("configuration: the stage's fastest that fits (K, or ep where expert parallelism runs (K 1 there), micro×GA, checkpointing, and the bucket size, prefetch depth "+
		"or algorithm where they differ from the file's; when none fits, the one nearest to fitting at the same global batch); compute-bound: "+
		"its forward, backward and optimizer time, the step no network can beat; step now: at this cluster's %s per GPU.", bw(np.NominalPerGPU)), 118, ""))
	if len(np.Degraded) > 0 {
		t.Notes = append(t.Notes, wrap(fmt.Sprintf("cluster.link_overrides: the %s keep%s that bandwidth at every bandwidth swept, "+
			"\"step now\" included; cluster.inter.bandwidth sets the other links.", linkBandwidths(np.Degraded), oneOrMany(len(np.Degraded), "s", "")), 118, ""))
	}
	t.Notes = append(t.Notes, wrap("Below that bandwidth the step is network-bound: this answers deepspeedai/DeepSpeed#2928 "+
		"(\"what internode bandwidth is required to choose DeepSpeed over TP+PP\") for this model and cluster.", 118, ""))
	return t
}

// networkNote says, for a stage no bandwidth brings within the tolerance
// of its compute, what keeps its step above compute at 25 TB/s per NIC,
// each part in % of compute with its cause, and the bandwidth beyond
// which the network stops mattering; "" for a stage with an answer.
func networkNote(sb sweep.StageBandwidth, tol float64) string {
	bound := ""
	if sb.FullSpeedCompute > 0 && sb.ComputeBound != sb.FullSpeedCompute {
		// The bound is the slowest GPU's compute, not the full-speed one.
		bound = fmt.Sprintf("compute-bound is rank %d's compute at its cluster.gpu_overrides speed (%s; %s at full speed).",
			sb.ComputeRank, planDur(sb.ComputeBound), planDur(sb.FullSpeedCompute))
	}
	a := sb.Above
	if a == nil || sb.ComputeBound <= 0 {
		return bound
	}
	if bound != "" {
		bound += " "
	}
	of := func(ps int64) float64 { return 100 * float64(ps) / float64(sb.ComputeBound) }
	var parts []string
	if a.Links > 0 {
		parts = append(parts, fmt.Sprintf("%.1f %% is the %s (cluster.link_overrides), which no value of cluster.inter.bandwidth lifts "+
			"(without the override%s the step at 25 TB/s is %s)", of(a.Links), linkBandwidths(a.Degraded), oneOrMany(len(a.Degraded), "", "s"), planDur(a.Free)))
	}
	if a.Slowed > 0 {
		parts = append(parts, fmt.Sprintf("%.1f %% is compute slowed by the collectives beside it (communication.compute_interference %g), "+
			"not communication, so more bandwidth does not remove it", of(a.Slowed), a.Interference))
	}
	if a.Exposed > 0 {
		parts = append(parts, fmt.Sprintf("%.1f %% communication the compute does not hide (inside the node over NVLink, and latency)", of(a.Exposed)))
	}
	if a.Waiting > 0 {
		parts = append(parts, fmt.Sprintf("%.1f %% waiting for other ranks", of(a.Waiting)))
	}
	even := "even"
	if bound != "" {
		even = "Even"
	}
	s := bound + fmt.Sprintf(even+" at 25 TB/s per NIC the step (%s) is %.1f %% above compute: %s.", planDur(a.Step), of(a.Step-sb.ComputeBound), strings.Join(parts, "; "))
	if a.PlateauNIC > 0 {
		s += fmt.Sprintf(" The step is within %g %% of its 25 TB/s step from %s per GPU up (%s there); below that the network is what it waits on.",
			100*tol, bw(a.PlateauPerGPU), planDur(a.PlateauStep))
	}
	return s
}

// linkBandwidths names degraded links with their slower figures: "inter
// link at node 1 at 1.00 GB/s", "… with latency 500µs", "links at node 1
// (inter, 1.00 GB/s) and …".
func linkBandwidths(d []scenarios.DegradedLink) string {
	return joinLinks(d, func(x scenarios.DegradedLink) string {
		if !x.SlowBandwidth() {
			return " with " + x.Figures()
		}
		return " at " + x.Figures()
	}, func(x scenarios.DegradedLink) string {
		return fmt.Sprintf("%s (%s, %s)", x.Where(), x.Class, x.Figures())
	})
}

// shortConfig is a stage's configuration in a cell: the plan's fastest that
// fits, its closest to fitting when none does, or the scenario's own.
func shortConfig(sb sweep.StageBandwidth) string {
	if sb.Config == nil {
		return fmt.Sprintf("the file's, K %d", sb.K)
	}
	c := sb.Config
	cp := ""
	if c.CP > 0 {
		cp = fmt.Sprintf("cp %d, ", c.CP)
	}
	none := ""
	if sb.NoFit {
		none = " (does not fit)"
	}
	// Every other setting it changes from the file, so that the run it
	// implies reproduces its step.
	var other string
	for _, set := range sb.Changed {
		key, val, _ := strings.Cut(set, "=")
		if f, ok := otherSetting[key]; ok {
			if key == "communication.algorithm" {
				val = algoLabel(val)
			}
			other += ", " + fmt.Sprintf(f, val)
		}
	}
	// Expert parallelism as the plan table's K column writes it
	// (kName: "ep 8", K 1 there), and ep 1 where the file's ep is not
	// (QA s31 L1: Mixtral's stages 0–2 read "K 1" at ep 8, a run that
	// does not fit).
	k := fmt.Sprintf("K %d", c.K)
	switch {
	case c.EP > 1:
		k = fmt.Sprintf("ep %d", c.EP)
	case slices.Contains(sb.Changed, sweep.PlanEPKey+"=1"):
		k += ", ep 1"
	}
	return fmt.Sprintf("%s%s, %d×%d, %s%s%s", cp, k, c.MicroBatch, c.GradAccum, c.Recompute, other, none)
}

// otherSetting spells the plan keys a configuration cell shows only when
// they differ from the file ("200MB buckets", "prefetch 1",
// "alphabeta-ring": algoLabel).
var otherSetting = map[string]string{
	"communication.bucket_size":    "%s buckets",
	"communication.prefetch_depth": "prefetch %s",
	"communication.algorithm":      "%s",
}

func writeNetworkTable(w io.Writer, np *sweep.NetworkPlan) error {
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return networkTable(np).render(w)
}

// paretoImage plots every configuration that fits: peak memory against
// tokens/s per GPU, one colour per stage, the front as a line.
func paretoImage(p *sweep.Plan) plotImage {
	title := fmt.Sprintf("%s on %d × %d %s: every configuration that fits", EscapeControl(p.Model), p.Nodes, p.GPUsPerNode, gpuName(p))
	return plotImage{Name: "pareto", Title: title, picture: drawn(runPlotW, runPlotH, func(c vg.CanvasSizer) {
		// The title above the plot and the legend in a column to its
		// right (drawFigures, as the run's plots): gonum's title at the
		// canvas's top edge was clipped, and its legend inside the axes
		// covered the points in its corner.
		pl := newPlot("", "allocated peak per GPU (GiB)", "tokens/s per GPU")
		byStage := map[int]plotter.XYs{}
		var front plotter.XYs
		at := func(r sweep.PlanRow) plotter.XY {
			return plotter.XY{X: float64(r.PeakMemory) / (1 << 30), Y: r.TokensPerSecPerGPU}
		}
		for i := len(p.Rows) - 1; i >= 0; i-- {
			byStage[p.Rows[i].Stage] = append(byStage[p.Rows[i].Stage], at(p.Rows[i]))
		}
		for _, i := range paretoFront(p) {
			front = append(front, at(p.Rows[i]))
		}
		var legend []legendItem
		for st := 0; st <= 3; st++ {
			if len(byStage[st]) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(byStage[st])
			if err != nil {
				continue
			}
			sc.GlyphStyle.Color = plotColors[st%len(plotColors)]
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			pl.Add(sc)
			legend = append(legend, legendItem{"ZeRO " + strconv.Itoa(st), sc})
		}
		if ln, err := plotter.NewLine(front); err == nil && len(front) > 1 {
			ln.LineStyle.Width = vg.Points(1.5)
			pl.Add(ln)
			legend = append(legend, legendItem{"front", ln})
		}
		padAxes(pl, 0.03)
		drawFigures(c, title, []figure{{p: pl, legend: legend}}, legendW)
	})}
}

// padAxes widens both axes by frac of their span on each side, so points
// on the data's edge are drawn whole.
func padAxes(pl *plot.Plot, frac float64) {
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		d := (a.Max - a.Min) * frac
		if d == 0 {
			d = max(a.Max*frac, 1e-9)
		}
		a.Min, a.Max = a.Min-d, a.Max+d
	}
}

// networkImage plots each stage's step time against inter-node bandwidth
// per GPU (log scale): a stage whose configuration does not fit the GPU
// (StageBandwidth.NoFit) dashed and named so in the legend, as the table
// says, and this cluster's bandwidth as a vertical line (qa21 LOW 2).
func networkImage(np *sweep.NetworkPlan) plotImage {
	title := "step time against inter-node bandwidth per GPU"
	return plotImage{Name: "network", Title: title, picture: drawn(runPlotW, runPlotH, func(c vg.CanvasSizer) {
		pl := newPlot("", "inter-node bandwidth per GPU (GB/s, log scale)", "step time (s)")
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = labelledLogTicks{} // labels an axis spanning less than a decade too
		var legend []legendItem
		for i, sb := range np.Stages {
			var xy plotter.XYs
			for _, pt := range sb.Curve {
				if pt.Step > 0 && pt.PerGPU > 0 {
					xy = append(xy, plotter.XY{X: pt.PerGPU / 1e9, Y: float64(pt.Step) / 1e12})
				}
			}
			ln, err := plotter.NewLine(xy)
			if err != nil || len(xy) == 0 {
				continue
			}
			ln.LineStyle.Color = plotColors[i%len(plotColors)]
			ln.LineStyle.Width = vg.Points(1.5)
			name := "ZeRO " + strconv.Itoa(sb.Stage)
			if sb.NoFit {
				ln.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				name += " (does not fit)"
			}
			pl.Add(ln)
			legend = append(legend, legendItem{name, ln})
		}
		if x := np.NominalPerGPU / 1e9; x > 0 {
			v := &vline{x: x, sty: draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}}
			pl.Add(v)
			legend = append(legend, legendItem{"this cluster: " + strconv.FormatFloat(x, 'g', 4, 64) + " GB/s per GPU", styleSwatch{v.sty}})
		}
		// Title above, legend to the right, as the Pareto plot.
		drawFigures(c, title, []figure{{p: pl, legend: legend}}, legendW)
	})}
}

// vline is a vertical line across the plot at x.
type vline struct {
	x   float64
	sty draw.LineStyle
}

func (v *vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(v.sty, x, c.Min.Y, x, c.Max.Y)
}

func (v *vline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1) // no y extent: the curves set it
}

// PlanImages are the plan's plots: the Pareto plot when anything fits, and
// the bandwidth curves with --network.
func PlanImages(pr *PlanReport) []plotImage {
	var out []plotImage
	if len(pr.Plan.Rows) > 0 {
		out = append(out, paretoImage(pr.Plan))
	}
	if pr.Network != nil {
		out = append(out, networkImage(pr.Network))
	}
	return out
}

var planHTML = template.Must(template.New("plan").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l{text-align:left}pre{white-space:pre-wrap}.note{color:#444;font-size:90%}</style>
</head><body>
<h1>{{.Title}}</h1>
<pre>{{.Summary}}</pre>
{{range .Tables}}<h2>{{.Title}}</h2>{{template "table" .}}{{end}}
{{range .Figures}}<figure>{{.SVG}}<figcaption>{{.Title}}</figcaption></figure>{{end}}
</body></html>
` + htmlTableTemplate))

// WritePlanHTML writes plan.html: one self-contained page with the answer,
// the ranked table, the front and the plots.
func WritePlanHTML(w io.Writer, pr *PlanReport) error {
	var sum strings.Builder
	if err := writePlanSummary(&sum, pr); err != nil {
		return err
	}
	d := struct {
		Title   string
		Summary string
		Tables  []htmlTable
		Figures []htmlFigure
	}{Title: "zerosim plan: " + EscapeControl(pr.Plan.Scenario), Summary: sum.String()}
	if len(pr.Plan.Rows) > 0 {
		t := pr.planTable()
		t.Notes = append(pr.planLegend(), "memory vs speed: "+paretoText(pr.Plan))
		d.Tables = append(d.Tables, toHTMLTable(t))
	}
	if pr.Network != nil {
		d.Tables = append(d.Tables, toHTMLTable(networkTable(pr.Network)))
	}
	for _, im := range PlanImages(pr) {
		svg, err := im.inlineSVG()
		if err != nil {
			return err
		}
		// Our own renderer's SVG (text XML-escaped by vgsvg), not input.
		d.Figures = append(d.Figures, htmlFigure{Title: im.Title, SVG: template.HTML(svg)})
	}
	return planHTML.Execute(w, d)
}

// PlanManifest is what plan -o DIR's manifest says made the files: the
// version, the scenario, its --set overrides, the lists searched and the
// command that replays the winner (plan.json carries the same).
func PlanManifest(pr *PlanReport) *ManifestMeta {
	o := newPlanJSON(pr.Plan, nil)
	m := &ManifestMeta{Zerosim: o.Zerosim, Scenario: o.Scenario, SHA256: o.ScenarioSHA256, Sets: o.Sets, Reproduce: o.Reproduce,
		Searched: map[string]any{"stages": pr.Plan.SearchedStages, "k": o.SearchedK, "micro_batches": o.SearchedMicroBatches,
			"recompute": pr.Plan.SearchedRecompute, "bucket_sizes_bytes": o.SearchedBuckets, "prefetch_depths": o.SearchedPrefetch,
			"algorithms": o.SearchedAlgorithms}}
	if pr.Plan.SearchedCP != nil {
		m.Searched["cp"] = pr.Plan.SearchedCP
	}
	if pr.Plan.SearchedEP != nil {
		m.Searched["ep"] = pr.Plan.SearchedEP // qa21 LOW 7
	}
	if o.Pinned != nil {
		m.Searched["pinned"] = o.Pinned
	}
	return m
}

// PlanFileNames are every file plan -o DIR can write (PlanFiles): those a
// plan does not write (the network plots without --network, the plots
// when nothing fits) are another run's, which plan removes after writing
// its own (RemoveStale), so the directory holds one plan.
var PlanFileNames = []string{"plan.csv", "plan.json", "plan.html", "pareto.png", "pareto.svg", "network.png", "network.svg"}

// RemoveStale removes from dir each file the earlier manifest listed
// (listed: ManifestFiles, read before the new files were written) that is
// one of known and that files does not write, returning the names
// removed: only files an earlier run of the command wrote, and only once
// the new ones are in place.
func RemoveStale(dir string, listed, known []string, files []OutputFile) ([]string, error) {
	var removed []string
	for _, n := range listed {
		if !slices.Contains(known, n) || slices.ContainsFunc(files, func(f OutputFile) bool { return f.Name == n }) {
			continue
		}
		p := filepath.Join(dir, n)
		err := os.Remove(p)
		switch {
		case err == nil:
			removed = append(removed, n)
		case !errors.Is(err, fs.ErrNotExist):
			return removed, &WriteError{Path: p, Err: err}
		}
	}
	return removed, nil
}

// PlanFiles renders every file of plan -o DIR in memory: plan.csv,
// plan.json, plan.html and the plots as PNG and SVG.
func PlanFiles(pr *PlanReport) ([]OutputFile, error) {
	var files []OutputFile
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"plan.csv", func(w io.Writer) error { return WritePlanCSV(w, pr) }},
		{"plan.json", func(w io.Writer) error { return WritePlanJSON(w, pr) }},
		{"plan.html", func(w io.Writer) error { return WritePlanHTML(w, pr) }},
	} {
		of, err := render(f.name, f.write)
		if err != nil {
			return nil, err
		}
		files = append(files, of)
	}
	for _, im := range PlanImages(pr) {
		fs, err := im.files(im.Name)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	return files, nil
}
