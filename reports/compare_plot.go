package reports

import (
	"fmt"
	"github.com/zerosim/zerosim/topology"
	"image/color"
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

// plotPanel is one grouped bar chart.
type plotPanel struct {
	Title  string       `json:"title"`
	YLabel string       `json:"y_label"`
	Series []plotSeries `json:"series"`
}

// plotSeries is one bar per category.
type plotSeries struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

const (
	gbUnit = 1e9
	msUnit = 1e9 // picoseconds per millisecond
)

// slowLinkPlot is plot 3: for every K dividing N, the busiest rank's
// slow-link bytes (seed logical, ring wire, hierarchical wire) and the step
// time of both algorithms.
func slowLinkPlot(title string, os []*sweep.Outcome) comparePlot {
	p := comparePlot{Title: title + ": slow-link bytes and step time for every K dividing N"}
	bytesP := plotPanel{Title: "slow-link (network) bytes per step, busiest rank", YLabel: "GB"}
	timeP := plotPanel{Title: "step time", YLabel: "ms"}
	series := func(pp *plotPanel, name string) *plotSeries {
		for i := range pp.Series {
			if pp.Series[i].Name == name {
				return &pp.Series[i]
			}
		}
		pp.Series = append(pp.Series, plotSeries{Name: name})
		return &pp.Series[len(pp.Series)-1]
	}
	for _, o := range os {
		cat := "K=" + strconv.Itoa(o.Result.K)
		algo := string(o.Scenario.Communication.Algorithm)
		if len(p.Categories) == 0 || p.Categories[len(p.Categories)-1] != cat {
			p.Categories = append(p.Categories, cat)
			s := series(&bytesP, "seed 000 logical")
			s.Values = append(s.Values, float64(sweep.SeedSlowLink(o.Result))/gbUnit)
		}
		busy, _ := sweep.BusiestWire(o.Result, topology.Inter)
		s := series(&bytesP, algo+" wire")
		s.Values = append(s.Values, float64(busy)/gbUnit)
		s = series(&timeP, algo)
		s.Values = append(s.Values, float64(o.Result.StepTime)/msUnit)
	}
	p.Panels = []plotPanel{bytesP, timeP}
	return p
}

// generalPlot compares the variants' times and bytes.
func generalPlot(title string, vs []compareVariant) comparePlot {
	p := comparePlot{Title: title}
	timeP := plotPanel{Title: "time per step", YLabel: "ms", Series: []plotSeries{{Name: "step time"}, {Name: "compute"}, {Name: "exposed comm"}}}
	bytesP := plotPanel{Title: "bytes", YLabel: "GB", Series: []plotSeries{{Name: "network wire"}, {Name: "NVLink wire"}, {Name: "peak memory per GPU"}}}
	for _, v := range vs {
		p.Categories = append(p.Categories, v.Label)
		timeP.Series[0].Values = append(timeP.Series[0].Values, float64(v.StepTimePS)/msUnit)
		timeP.Series[1].Values = append(timeP.Series[1].Values, float64(v.ComputePS)/msUnit)
		timeP.Series[2].Values = append(timeP.Series[2].Values, float64(v.ExposedCommPS)/msUnit)
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
		bytesP.Series[0].Values = append(bytesP.Series[0].Values, float64(net)/gbUnit)
		bytesP.Series[1].Values = append(bytesP.Series[1].Values, float64(nv)/gbUnit)
		bytesP.Series[2].Values = append(bytesP.Series[2].Values, float64(v.PeakMemory)/gbUnit)
	}
	p.Panels = []plotPanel{timeP, bytesP}
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
		p.Y.Min = 0
		top := 0.0
		for _, s := range pn.Series {
			for _, v := range s.Values {
				top = max(top, v)
			}
		}
		// Headroom for the legend above the bars.
		p.Y.Max = max(top*1.35, 1e-9)
		p.Legend.Top = true
		n := len(pn.Series)
		w := vg.Points(90 / float64(max(n, 1)))
		for si, s := range pn.Series {
			bc, err := plotter.NewBarChart(plotter.Values(s.Values), w)
			if err != nil {
				return nil, fmt.Errorf("reports: plot %q series %q: %w", pn.Title, s.Name, err)
			}
			bc.LineStyle.Width = 0
			bc.Color = plotColors[si%len(plotColors)]
			bc.Offset = w * vg.Length(float64(si)-float64(n-1)/2)
			p.Add(bc)
			p.Legend.Add(s.Name, bc)
		}
		p.NominalX(cp.Categories...)
		out = append(out, p)
	}
	return out, nil
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

// RenderComparePlots renders compare.png and compare.svg.
func RenderComparePlots(c *Comparison) ([]OutputFile, error) { return c.Plot.files() }

func (cp *comparePlot) files() ([]OutputFile, error) {
	return picture{w: plotW, h: plotH, draw: cp.draw}.files("compare")
}
