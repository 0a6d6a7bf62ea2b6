package reports

import (
	"fmt"
	"github.com/zerosim/zerosim/topology"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/zerosim/zerosim/sweep"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// comparePlot is the data of the comparison plot: panels stacked
// vertically, each a grouped bar chart over the same categories. It is the
// golden artefact of the plot (the image is drawn from it).
type comparePlot struct {
	Title      string      `json:"title"`
	Categories []string    `json:"categories"`
	Panels     []plotPanel `json:"panels"`
}

// plotPanel is one grouped bar chart, with an optional capacity line and
// a fit marker over each category.
type plotPanel struct {
	Title  string       `json:"title"`
	YLabel string       `json:"y_label"`
	Series []plotSeries `json:"series"`
	// Capacity, in the panel's unit, draws a dashed line (the GPU's
	// memory); Fits marks each category "fits" or "does not fit".
	Capacity      float64 `json:"capacity,omitempty"`
	CapacityLabel string  `json:"capacity_label,omitempty"`
	// Capacities, when the variants' GPUs differ in memory, is each
	// category's own (Capacity is then 0): drawn as a dashed segment over
	// its bars, so that a 40 GiB bar on a 140 GiB GPU does not read as
	// half full against another GPU's 80 GiB line (QA s28 M3).
	Capacities []float64 `json:"capacities,omitempty"`
	Fits       []bool    `json:"fits,omitempty"`
	// Retries marks, beside Fits, a category that fits without room for
	// the caching allocator's reserve: labelled "fits†" (fitCell), as
	// run says "yes, but … expect allocator retries".
	Retries []bool `json:"retries,omitempty"`
}

// plotSeries is one bar per category.
type plotSeries struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
	// NotRun marks the categories the series has no run for (its value is
	// 0 there): drawn as a "not run" label in place of a bar, so an empty
	// slot is not read as no traffic. Absent when every category ran.
	NotRun []bool `json:"not_run,omitempty"`
}

// notRunLabel stands in the slot of a bar that has no run.
const notRunLabel = "not run"

// Bytes are plotted in GiB, as every other plot and the tables beside
// them give them (the slow-link panel was in decimal GB: K=1's seed bar
// read ≈27 where the table says 25.10 GiB).
const (
	gibUnit = 1 << 30
	msUnit  = 1e9 // picoseconds per millisecond
)

// slowLinkPlot is plot 3: for every K dividing N, the busiest rank's
// slow-link bytes (seed logical, ring wire, hierarchical wire) and the step
// time of both algorithms. Every K is drawn, the ones not asked for too
// (the trade-off over all of them), so the step-time panel marks each K
// "fits" or "does not fit" in GPU memory, run's verdict (zero.Result.Fits)
// for every algorithm of that K, and the JSON plot carries the flags.
func slowLinkPlot(title string, os []*sweep.Outcome) comparePlot {
	p := comparePlot{Title: title + ": slow-link bytes and step time for every K dividing N"}
	bytesP := plotPanel{Title: "slow-link (network) bytes per step, busiest rank", YLabel: "bytes per step (GiB)"}
	timeP := plotPanel{Title: "step time", YLabel: "step time (ms)"}
	// Each algorithm's series is made before the seed's, so a series has
	// the same colour in both panels (plotColors by position); a K an
	// algorithm could not run (sweep.Runs.Skipped) is a 0 in its series,
	// which keeps every bar over its own K, marked NotRun (markNotRun).
	var algos []string
	var ran [][]bool // [category][algorithm]
	for _, o := range os {
		if a := string(o.Scenario.Communication.Algorithm); !slices.Contains(algos, a) {
			algos = append(algos, a)
		}
	}
	for _, a := range algos {
		bytesP.Series = append(bytesP.Series, plotSeries{Name: algoLabel(a) + " wire"})
		timeP.Series = append(timeP.Series, plotSeries{Name: algoLabel(a)})
	}
	bytesP.Series = append(bytesP.Series, plotSeries{Name: "seed 000 logical"})
	seed := len(algos)
	for _, o := range os {
		cat := "K=" + strconv.Itoa(o.Result.K)
		capacity := int64(o.Scenario.Cluster.GPUMemory)
		fits := o.Result.Fits(capacity)
		retries := fits && !o.Result.DeviceFits(capacity)
		if len(p.Categories) == 0 || p.Categories[len(p.Categories)-1] != cat {
			p.Categories = append(p.Categories, cat)
			for i := range bytesP.Series {
				bytesP.Series[i].Values = append(bytesP.Series[i].Values, 0)
			}
			for i := range timeP.Series {
				timeP.Series[i].Values = append(timeP.Series[i].Values, 0)
			}
			bytesP.Series[seed].Values[len(p.Categories)-1] = float64(sweep.SeedSlowLink(o.Result)) / gibUnit
			timeP.Fits = append(timeP.Fits, fits)
			timeP.Retries = append(timeP.Retries, retries)
			ran = append(ran, make([]bool, len(algos)))
		} else {
			timeP.Fits[len(timeP.Fits)-1] = timeP.Fits[len(timeP.Fits)-1] && fits
			timeP.Retries[len(timeP.Retries)-1] = timeP.Retries[len(timeP.Retries)-1] || retries
		}
		a, k := slices.Index(algos, string(o.Scenario.Communication.Algorithm)), len(p.Categories)-1
		busy, _ := sweep.BusiestWire(o.Result, topology.Inter)
		bytesP.Series[a].Values[k] = float64(busy) / gibUnit
		timeP.Series[a].Values[k] = float64(o.Result.StepTime) / msUnit
		ran[k][a] = true
	}
	markNotRun(bytesP.Series[:seed], ran)
	markNotRun(timeP.Series, ran)
	p.Panels = []plotPanel{bytesP, timeP}
	return p
}

// markNotRun sets each algorithm series' NotRun where ran[category][series]
// is false, leaving it nil for a series that ran everywhere.
func markNotRun(series []plotSeries, ran [][]bool) {
	for a := range series {
		for k := range ran {
			if !ran[k][a] {
				if series[a].NotRun == nil {
					series[a].NotRun = make([]bool, len(ran))
				}
				series[a].NotRun[k] = true
			}
		}
	}
}

// generalPlot compares the variants' times, wire bytes and memory, each on
// its own panel: wire bytes (thousands of GiB at scale) and memory (tens of
// GiB) on one axis would flatten the memory bars. The memory panel carries
// the GPU's capacity and whether each variant fits.
//
// When the variants' steps train different tokens (another batch,
// accumulation, sequence or GPU count), the time panel gives each time
// per token of the step, step time / tokens per step, as the verdict
// compares tokens per second: raw steps of 65,536 and 131,072 tokens read
// 2.8× apart where the throughput is 1.4× (QA s28 M3). When their GPUs
// differ in memory, each variant's bar carries its own GPU's capacity.
func generalPlot(title string, vs []compareVariant) comparePlot {
	p := comparePlot{Title: title}
	timeP := plotPanel{Title: "time per step", YLabel: "time per step (ms)", Series: []plotSeries{{Name: "step time"}, {Name: "compute"}, {Name: "exposed comm"}}}
	perToken := slices.ContainsFunc(vs, func(v compareVariant) bool { return v.Tokens != vs[0].Tokens }) &&
		!slices.ContainsFunc(vs, func(v compareVariant) bool { return v.Tokens <= 0 })
	timeUnit := func(v *compareVariant) float64 { return msUnit }
	if perToken {
		timeP.Title = "time per token (the variants' steps train different tokens)"
		timeP.YLabel = "time per token, step time / tokens per step (µs)"
		timeUnit = func(v *compareVariant) float64 { return 1e6 * float64(v.Tokens) }
	}
	ownGPU := slices.ContainsFunc(vs, func(v compareVariant) bool { return v.GPUMemory != vs[0].GPUMemory })
	// The link's name as the table rows give it (classLabel): NVLink's or
	// xGMI's when every variant runs on one vendor's GPUs, "intra-node"
	// when they mix.
	intra := "NVLink wire"
	switch classLabel(vs, topology.Intra.String()) {
	case AMD.ClassName(topology.Intra):
		intra = "xGMI wire"
	case "intra-node":
		intra = "intra-node wire"
	}
	wireP := plotPanel{Title: "wire bytes per step, all ranks", YLabel: "bytes per step (GiB)", Series: []plotSeries{{Name: "network wire"}, {Name: intra}}}
	memP := plotPanel{Title: "peak memory per GPU", YLabel: "peak per GPU (GiB)", Series: []plotSeries{{Name: "peak memory per GPU"}}}
	for i := range vs {
		v := &vs[i]
		p.Categories = append(p.Categories, v.Label)
		unit := timeUnit(v)
		timeP.Series[0].Values = append(timeP.Series[0].Values, float64(v.StepTimePS)/unit)
		timeP.Series[1].Values = append(timeP.Series[1].Values, float64(v.BusiestComputePS)/unit)
		timeP.Series[2].Values = append(timeP.Series[2].Values, float64(v.ExposedCommPS)/unit)
		var net, nv int64
		for _, ph := range v.Phases {
			for _, c := range ph.Classes {
				switch c.Class {
				case topology.Inter.String():
					net += c.Total
				case topology.Intra.String():
					nv += c.Total
				}
			}
		}
		wireP.Series[0].Values = append(wireP.Series[0].Values, float64(net)/gibUnit)
		wireP.Series[1].Values = append(wireP.Series[1].Values, float64(nv)/gibUnit)
		memP.Series[0].Values = append(memP.Series[0].Values, float64(v.PeakMemory)/gibUnit)
		memP.Fits = append(memP.Fits, v.Fits)
		memP.Retries = append(memP.Retries, v.Fits && !v.DeviceFits)
		switch {
		case ownGPU:
			memP.Capacities = append(memP.Capacities, float64(v.GPUMemory)/gibUnit)
			memP.CapacityLabel = "GPU memory, each variant's own"
		case v.GPUMemory > 0:
			memP.Capacity, memP.CapacityLabel = float64(v.GPUMemory)/gibUnit, "GPU memory "+iec(v.GPUMemory)
		}
	}
	p.Panels = []plotPanel{timeP, wireP, memP}
	return p
}

var plotColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

func (cp *comparePlot) plots() ([]*plot.Plot, error) {
	var out []*plot.Plot
	for i, pn := range cp.Panels {
		p := plot.New()
		p.Title.Text = pn.Title
		if i == 0 {
			p.Title.Text = cp.Title + "\n" + pn.Title
		}
		p.Y.Label.Text = pn.YLabel
		p.Y.Tick.Marker = readableTicks{}
		p.Y.Min = 0
		top := 0.0
		for _, s := range pn.Series {
			for _, v := range s.Values {
				top = max(top, v)
			}
		}
		if pn.Capacity > 0 {
			top = max(top, pn.Capacity)
		}
		for _, c := range pn.Capacities {
			top = max(top, c)
		}
		// Headroom for the legend above the bars.
		p.Y.Max = max(top*1.35, 1e-9)
		p.Legend.Top = true
		n := len(pn.Series)
		w := barWidth(len(cp.Categories), n)
		for si, s := range pn.Series {
			bc, err := plotter.NewBarChart(plotter.Values(s.Values), w)
			if err != nil {
				return nil, fmt.Errorf("reports: plot %q series %q: %w", pn.Title, s.Name, err)
			}
			bc.LineStyle.Width = 0
			bc.Color = plotColors[si%len(plotColors)]
			bc.Offset = w * vg.Length(float64(si)-float64(float64(n-1)/2))
			p.Add(bc)
			p.Legend.Add(s.Name, bc)
			if l, err := notRunMarks(s, bc.Offset); err != nil {
				return nil, fmt.Errorf("reports: plot %q series %q: %w", pn.Title, s.Name, err)
			} else if l != nil {
				p.Add(l)
			}
		}
		if pn.Capacity > 0 {
			red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
			p.Add(&hline{y: pn.Capacity, c: red})
			p.Legend.Add(pn.CapacityLabel, lineSwatch{red})
		}
		if len(pn.Capacities) > 0 {
			red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
			// Over the category's bars and a little beyond.
			p.Add(&capSegments{ys: pn.Capacities, half: vg.Length(float64(w*vg.Length(n)/2)) + 4, c: red})
			p.Legend.Add(pn.CapacityLabel, lineSwatch{red})
		}
		if len(pn.Fits) > 0 {
			marks, err := fitMarks(pn)
			if err != nil {
				return nil, err
			}
			p.Add(marks)
		}
		p.NominalX(cp.Categories...)
		out = append(out, p)
	}
	return out, nil
}

// barWidth is the width of one bar of n series over cats categories: a
// group of 90 points, narrower when the categories are more than the
// plot's width holds (plotDataW of its plotW points), so
// a group keeps a fifth of its slot free and never covers the next
// category's (every K of 24 GPUs, 8 categories of 4 bars, overlapped).
func barWidth(cats, n int) vg.Length {
	group := min(90, 0.8*plotDataW/float64(max(cats, 1)))
	return vg.Points(group / float64(max(n, 1)))
}

// notRunMarks writes "not run" upright from the axis in the slot of each
// bar of s that has no run (NotRun), offset as its bars are; nil when
// every bar ran.
func notRunMarks(s plotSeries, offset vg.Length) (*plotter.Labels, error) {
	var xys plotter.XYs
	var text []string
	for i, nr := range s.NotRun {
		if nr {
			xys = append(xys, plotter.XY{X: float64(i), Y: 0})
			text = append(text, notRunLabel)
		}
	}
	if len(xys) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: text})
	if err != nil {
		return nil, err
	}
	l.Offset = vg.Point{X: offset, Y: vg.Millimeter}
	for i := range l.TextStyle {
		l.TextStyle[i].Rotation = math.Pi / 2
		l.TextStyle[i].XAlign = draw.XLeft
		l.TextStyle[i].YAlign = draw.YCenter
		l.TextStyle[i].Color = color.Gray{Y: 0x60}
	}
	return l, nil
}

// fitMarks labels each category of a memory panel "fits" or "does not
// fit" above its tallest bar.
func fitMarks(pn plotPanel) (*plotter.Labels, error) {
	xys := make(plotter.XYs, len(pn.Fits))
	text := make([]string, len(pn.Fits))
	for i, ok := range pn.Fits {
		y := 0.0
		for _, s := range pn.Series {
			if i < len(s.Values) {
				y = max(y, s.Values[i])
			}
		}
		xys[i] = plotter.XY{X: float64(i), Y: y}
		text[i] = "fits"
		switch {
		case !ok:
			text[i] = "does not fit"
		case i < len(pn.Retries) && pn.Retries[i]:
			text[i] = "fits (allocator retries)"
		}
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: text})
	if err != nil {
		return nil, fmt.Errorf("reports: fit markers: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].YAlign = draw.YBottom
		if !pn.Fits[i] {
			l.TextStyle[i].Color = color.RGBA{0xd6, 0x27, 0x28, 0xff}
		}
	}
	return l, nil
}

// draw renders the panels stacked on c.
func (cp *comparePlot) draw(c vg.CanvasSizer) error {
	ps, err := cp.plots()
	if err != nil {
		return err
	}
	grid := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		grid[i] = []*plot.Plot{p}
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 2 * vg.Millimeter}
	for i, cs := range plot.Align(grid, tiles, dc) {
		ps[i].Draw(cs[0])
	}
	return nil
}

// Plot size in points.
const plotW, plotH = 640, 720

// plotDataW is about how much of plotW the data area takes, the rest the
// y axis's label, ticks and padding.
const plotDataW = plotW - 70

// RenderComparePlots renders compare.png and compare.svg.
func RenderComparePlots(c *Comparison) ([]OutputFile, error) { return c.Plot.files() }

func (cp *comparePlot) files() ([]OutputFile, error) {
	return picture{w: plotW, h: vg.Length(max(plotH, 300*len(cp.Panels))), draw: cp.draw}.files("compare")
}
