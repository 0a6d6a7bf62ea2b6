package reports

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strconv"

	"github.com/zerosim/zerosim/units"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ScalingPoint is one measured simulation: how long the simulator took and
// how much memory it used to replay one step of a scenario with Ranks ranks.
type ScalingPoint struct {
	Ranks int `json:"ranks"`
	// Seconds is the wall time of the replay on this machine.
	Seconds float64 `json:"seconds"`
	// AllocBytes is the heap allocated during the replay; PeakHeapBytes the
	// largest live heap sampled during it.
	AllocBytes    int64 `json:"alloc_bytes"`
	PeakHeapBytes int64 `json:"peak_heap_bytes"`
	Events        int64 `json:"events"`
	Collectives   int   `json:"collectives"`
	// StepPs is the simulated step time.
	StepPs int64 `json:"step_ps"`
}

// WriteScalingTable prints the points as a table.
func WriteScalingTable(w io.Writer, pts []ScalingPoint) error {
	t := newTable(w, 7)
	t.Header("ranks", "wall time", "events", "events/s", "allocated", "peak heap", "simulated step")
	for _, p := range pts {
		rate := 0.0
		if p.Seconds > 0 {
			rate = float64(p.Events) / p.Seconds
		}
		if err := t.Append(strconv.Itoa(p.Ranks), fmt.Sprintf("%.3f s", p.Seconds), strconv.FormatInt(p.Events, 10),
			fmt.Sprintf("%.2f M", rate/1e6), fmt.Sprintf("%.1f MiB", float64(p.AllocBytes)/(1<<20)),
			fmt.Sprintf("%.1f MiB", float64(p.PeakHeapBytes)/(1<<20)), units.Duration(p.StepPs).String()); err != nil {
			return err
		}
	}
	return t.Render()
}

// scalingPlots draws wall time and memory against ranks, both log–log.
func scalingPlots(title string, pts []ScalingPoint) ([2]*plot.Plot, error) {
	var out [2]*plot.Plot
	tm, alloc, heap := make(plotter.XYs, len(pts)), make(plotter.XYs, len(pts)), make(plotter.XYs, len(pts))
	for i, p := range pts {
		tm[i] = plotter.XY{X: float64(p.Ranks), Y: p.Seconds}
		alloc[i] = plotter.XY{X: float64(p.Ranks), Y: float64(p.AllocBytes) / (1 << 20)}
		heap[i] = plotter.XY{X: float64(p.Ranks), Y: float64(p.PeakHeapBytes) / (1 << 20)}
	}
	for i, panel := range []struct {
		title, y string
		series   []plotter.XYs
		names    []string
	}{
		{title + ": wall time per simulated step", "wall time (s, log)", []plotter.XYs{tm}, []string{"full simulation (every rank)"}},
		{"memory per simulated step", "MiB (log)", []plotter.XYs{alloc, heap}, []string{"allocated", "peak live heap"}},
	} {
		p := plot.New()
		p.Title.Text = panel.title
		p.Title.Padding = vg.Points(8)
		p.X.Label.Text = "ranks simulated (log)"
		p.Y.Label.Text = panel.y
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = true, true
		colors := []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}}
		for j, xy := range panel.series {
			l, s, err := plotter.NewLinePoints(xy)
			if err != nil {
				return out, fmt.Errorf("reports: scaling plot: %w", err)
			}
			l.Color, s.Color = colors[j], colors[j]
			s.Shape = draw.CircleGlyph{}
			p.Add(l, s)
			p.Legend.Add(panel.names[j], l, s)
		}
		out[i] = p
	}
	return out, nil
}

// WriteScalingPlots writes scaling.png and scaling.svg into dir atomically
// and returns their paths.
func WriteScalingPlots(dir, title string, pts []ScalingPoint) ([]string, error) {
	ps, err := scalingPlots(title, pts)
	if err != nil {
		return nil, err
	}
	const w, h = 7 * vg.Inch, 8 * vg.Inch
	drawAll := func(c draw.Canvas) {
		top, bottom := c, c
		top.Min.Y = c.Min.Y + (c.Max.Y-c.Min.Y)/2
		bottom.Max.Y = top.Min.Y
		ps[0].Draw(top)
		ps[1].Draw(bottom)
	}
	png, svg := filepath.Join(dir, "scaling.png"), filepath.Join(dir, "scaling.svg")
	err = WriteFileAtomic(png, func(wr io.Writer) error {
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
		drawAll(draw.New(c))
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(wr)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = WriteFileAtomic(svg, func(wr io.Writer) error {
		c := vgsvg.New(w, h)
		drawAll(draw.New(c))
		_, err := c.WriteTo(wr)
		return err
	})
	if err != nil {
		return nil, err
	}
	return []string{png, svg}, nil
}
