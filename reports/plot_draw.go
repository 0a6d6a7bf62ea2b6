package reports

import (
	"fmt"
	"github.com/zerosim/zerosim/topology"
	"image/color"
	"slices"

	"github.com/zerosim/zerosim/memory"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Drawing the run plots from their data (plot_data.go) with gonum/plot.

var kindColors = map[string]color.Color{
	"forward":        color.RGBA{0x1f, 0x77, 0xb4, 0xff},
	"backward":       color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	"optimizer":      color.RGBA{0x94, 0x67, 0xbd, 0xff},
	"reduce-scatter": color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	"all-gather":     color.RGBA{0x17, 0xbe, 0xcf, 0xff},
	"all-reduce":     color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	"all-to-all":     color.RGBA{0xe3, 0x77, 0xc2, 0xff},
	"quantize":       color.RGBA{0xbc, 0xbd, 0x22, 0xff}, // ZeRO++ kernels
	"pcie gpu→host":  color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, // offload
	"pcie host→gpu":  color.RGBA{0xc7, 0xc7, 0xc7, 0xff},
	"cpu adam":       color.RGBA{0x98, 0xdf, 0x8a, 0xff},
	exposedKind:      color.RGBA{0xd6, 0x27, 0x28, 0xff},
	waitKind:         color.RGBA{0x55, 0x55, 0x55, 0xff},
}

// palette is tab20's dark and light pairs, for components and link classes.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, color.RGBA{0xbc, 0xbd, 0x22, 0xff},
	color.RGBA{0x17, 0xbe, 0xcf, 0xff}, color.RGBA{0xae, 0xc7, 0xe8, 0xff}, color.RGBA{0xff, 0xbb, 0x78, 0xff},
	color.RGBA{0x98, 0xdf, 0x8a, 0xff},
}

// componentColor is the colour of a memory component, fixed by its place in
// the memory model's component order.
func componentColor(name string) color.Color {
	i := slices.Index(memory.Components(), memory.Comp(name))
	if i < 0 {
		i = len(name)
	}
	return palette[i%len(palette)]
}

func classColor(name string) color.Color {
	if name == topology.Inter.String() {
		return color.RGBA{0xd6, 0x27, 0x28, 0xff}
	}
	return color.RGBA{0x1f, 0x77, 0xb4, 0xff}
}

// shape is a filled polygon in data coordinates.
type shape struct {
	xs, ys []float64
	fill   color.Color
}

// shapes is a plot.Plotter of filled polygons, with optional text labels.
type shapes struct {
	polys  []shape
	labels []label
	xr, yr [2]float64
}

type label struct {
	x, y  float64
	text  string
	align draw.XAlignment // draw.XLeft, XCenter or XRight
	// clear are data y values of lines drawn across the plot (a bar
	// chart's GPU memory) that the label must not sit on: one that would
	// strike through it puts it above the line (labelBaseline).
	clear []float64
}

// labelGap is the space between a label and what it sits on, a bar's top
// or a line it clears.
const labelGap = vg.Length(3)

// labelBaseline is where a label of height h goes whose natural baseline
// is base (labelGap above its bar's top): there, unless one of the lines
// (canvas y) crosses the text or runs within labelGap of it, then labelGap
// above the highest such line, as often as that puts it on another (QA
// s31 L8: the stage-3 bar's "72.61 GiB" sat on the GPU-memory line at
// 79.18 GiB, struck through).
func labelBaseline(base, h vg.Length, lines []vg.Length) vg.Length {
	for moved := true; moved; {
		moved = false
		for _, y := range lines {
			if y >= base-labelGap && y <= base+h+labelGap {
				base, moved = y+labelGap+1, true
			}
		}
	}
	return base
}

func rect(x0, x1, y0, y1 float64, c color.Color) shape {
	return shape{xs: []float64{x0, x1, x1, x0}, ys: []float64{y0, y0, y1, y1}, fill: c}
}

func (s *shapes) add(sh shape) {
	for i := range sh.xs {
		if len(s.polys) == 0 && i == 0 {
			s.xr = [2]float64{sh.xs[0], sh.xs[0]}
			s.yr = [2]float64{sh.ys[0], sh.ys[0]}
		}
		s.xr = [2]float64{min(s.xr[0], sh.xs[i]), max(s.xr[1], sh.xs[i])}
		s.yr = [2]float64{min(s.yr[0], sh.ys[i]), max(s.yr[1], sh.ys[i])}
	}
	s.polys = append(s.polys, sh)
}

// Plot implements plot.Plotter.
func (s *shapes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, sh := range s.polys {
		pts := make([]vg.Point, len(sh.xs))
		for i := range sh.xs {
			pts[i] = vg.Point{X: trX(sh.xs[i]), Y: trY(sh.ys[i])}
		}
		c.FillPolygon(sh.fill, c.ClipPolygonXY(pts))
	}
	for _, l := range s.labels {
		sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 10), Handler: p.Title.TextStyle.Handler,
			YAlign: draw.YBottom, XAlign: l.align}
		lines := make([]vg.Length, len(l.clear))
		for i, y := range l.clear {
			lines[i] = trY(y)
		}
		c.FillText(sty, vg.Point{X: trX(l.x), Y: labelBaseline(trY(l.y)+labelGap, sty.Height(l.text), lines)}, l.text)
	}
}

// DataRange implements plot.DataRanger.
func (s *shapes) DataRange() (xmin, xmax, ymin, ymax float64) {
	return s.xr[0], s.xr[1], s.yr[0], s.yr[1]
}

// swatch is a legend thumbnail of one colour.
type swatch struct{ c color.Color }

func (w swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(w.c, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// lineSwatch is a legend thumbnail of a dashed line.
type lineSwatch struct{ c color.Color }

func (w lineSwatch) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: w.c, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}, c.Min.X, y, c.Max.X, y)
}

// styleSwatch is a legend thumbnail of a line in its style.
type styleSwatch struct{ sty draw.LineStyle }

func (w styleSwatch) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(w.sty, c.Min.X, y, c.Max.X, y)
}

// stepLine is a step function drawn as a line: ys[i] from xs[i] to
// xs[i+1], the last to end.
type stepLine struct {
	xs, ys []float64
	end    float64
	sty    draw.LineStyle
}

func (l *stepLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var pts []vg.Point
	for i := range l.xs {
		end := l.end
		if i+1 < len(l.xs) {
			end = l.xs[i+1]
		}
		pts = append(pts, vg.Point{X: trX(l.xs[i]), Y: trY(l.ys[i])}, vg.Point{X: trX(end), Y: trY(l.ys[i])})
	}
	c.StrokeLines(l.sty, c.ClipLinesXY(pts)...)
}

func (l *stepLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(l.xs) == 0 {
		return 0, 0, 0, 0
	}
	return l.xs[0], l.end, slices.Min(l.ys), slices.Max(l.ys)
}

// The memory timeline's reserved and device lines.
var (
	reservedStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5)}
	deviceStyle   = draw.LineStyle{Color: color.RGBA{0x4b, 0x00, 0x82, 0xff}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
)

type legendItem struct {
	name  string
	thumb plot.Thumbnailer
}

// figure is a plot with its legend drawn to its right.
type figure struct {
	p      *plot.Plot
	legend []legendItem
}

// drawFigures draws figures stacked vertically, each with its legend in a
// column of width legendW on the right.
func drawFigures(c vg.CanvasSizer, title string, figs []figure, legendW vg.Length) {
	dc := draw.New(c)
	if title != "" {
		sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 13), Handler: plot.New().Title.TextStyle.Handler,
			XAlign: draw.XCenter, YAlign: draw.YTop}
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - 6}, title)
		dc = draw.Crop(dc, 0, 0, 0, -26)
	}
	h := (dc.Max.Y - dc.Min.Y) / vg.Length(len(figs))
	for i, f := range figs {
		top := dc.Max.Y - vg.Length(h*vg.Length(i))
		cell := draw.Crop(dc, 0, 0, top-h-dc.Min.Y, top-dc.Max.Y)
		f.p.Draw(draw.Crop(cell, 4, -legendW, 4, -4))
		if len(f.legend) > 0 {
			l := plot.NewLegend()
			l.Top, l.Left = true, true
			l.TextStyle.Font.Size = 10
			l.ThumbnailWidth = vg.Points(14)
			l.Padding = vg.Points(3)
			for _, it := range f.legend {
				l.Add(it.name, it.thumb)
			}
			l.Draw(draw.Crop(cell, cell.Max.X-cell.Min.X-legendW+10, 0, 0, -30))
		}
	}
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 12
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker, p.Y.Tick.Marker = readableTicks{}, readableTicks{}
	return p
}

// barsFigure draws a stacked bar chart.
func barsFigure(b *barsChart, title string) figure {
	p := newPlot(title, "", b.YLabel)
	sh := &shapes{}
	scale := float64(max(b.Scale, 1))
	var legend []legendItem
	tops := make([]float64, len(b.Categories))
	for si, s := range b.Series {
		col := componentColor(s.Name)
		if s.Name == topology.Intra.String() || s.Name == topology.Inter.String() {
			col = classColor(s.Name)
		}
		for ci, v := range s.Values {
			if ci >= len(tops) || v == 0 {
				continue
			}
			h := float64(v) / scale
			sh.add(rect(float64(ci)-0.3, float64(ci)+0.3, tops[ci], tops[ci]+h, col))
			tops[ci] += h
		}
		_ = si
		legend = append(legend, legendItem{s.Name, swatch{col}})
	}
	top := 0.0
	for _, t := range tops {
		top = max(top, t)
	}
	if b.TotalLabels {
		for ci, t := range tops {
			var exact int64
			for _, s := range b.Series {
				if ci < len(s.Values) {
					exact += s.Values[ci]
				}
			}
			sh.labels = append(sh.labels, label{x: float64(ci), y: t, text: unitBytes(exact, b.Unit), align: draw.XCenter})
		}
	}
	if b.Capacity > 0 {
		capY := float64(b.Capacity) / scale
		red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
		// A capacity far above the bars would flatten them: leave it off
		// the scale and say so in the legend.
		if top > 0 && capY > 20*top {
			legend = append(legend, legendItem{b.CapacityLabel + " (off scale)", lineSwatch{red}})
		} else {
			top = max(top, capY)
			p.Add(&hline{y: capY, c: red})
			legend = append(legend, legendItem{b.CapacityLabel, lineSwatch{red}})
			for i := range sh.labels {
				sh.labels[i].clear = append(sh.labels[i].clear, capY)
			}
		}
	}
	p.Add(sh)
	p.NominalX(b.Categories...)
	p.X.Min, p.X.Max = -0.5, float64(len(b.Categories))-0.5
	if top == 0 {
		// Nothing to stack (N = 1 moves no bytes): say so instead of
		// drawing an axis of 1e-9.
		top = 1
		sh.labels = append(sh.labels[:0], label{x: float64(len(b.Categories)-1) / 2, y: 0.5, text: "no bytes", align: draw.XCenter})
		p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}}
	}
	p.Y.Min, p.Y.Max = 0, top*1.1
	return figure{p: p, legend: legend}
}

// hline is a dashed horizontal line across the plot.
type hline struct {
	y float64
	c color.Color
}

func (h *hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	c.StrokeLine2(draw.LineStyle{Color: h.c, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}, c.Min.X, y, c.Max.X, y)
}

func (h *hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, 0, h.y, h.y
}

// capSegments draws, over each category i of a nominal x axis, a dashed
// line at ys[i] half wide either side of it (none where ys[i] ≤ 0): each
// bar's own capacity.
type capSegments struct {
	ys   []float64
	half vg.Length
	c    color.Color
}

func (s *capSegments) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	style := draw.LineStyle{Color: s.c, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	for i, y := range s.ys {
		if y > 0 {
			x := trX(float64(i))
			c.StrokeLine2(style, x-s.half, trY(y), x+s.half, trY(y))
		}
	}
}

func (s *capSegments) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(s.ys) == 0 {
		return 0, 0, 0, 0
	}
	return 0, float64(len(s.ys) - 1), slices.Min(s.ys), slices.Max(s.ys)
}

// rowTicks labels the rows of a Gantt chart (row 0 at the top).
func rowTicks(labels []string) plot.Ticker {
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: float64(len(labels)-1-i) + 0.5, Label: l}
	}
	return ticks
}

func ganttFigure(g *ganttChart) figure {
	p := newPlot("", "time ("+g.TimeUnit+")", "")
	sh := &shapes{}
	scale := float64(max(g.TimeScale, 1))
	n := len(g.Rows)
	var labels []string
	for i, row := range g.Rows {
		labels = append(labels, row.Label)
		y0 := float64(n - 1 - i)
		for _, b := range row.Bars {
			lo, hi := 0.1, 0.9
			if b.Kind == exposedKind || b.Kind == waitKind {
				lo, hi = 0.0, 0.22 // a red band under the compute row
			}
			// Keep very short tasks visible (at least 1/1500 of the step).
			end := max(float64(b.End), float64(b.Start)+float64(g.End)/1500)
			sh.add(rect(float64(b.Start)/scale, end/scale, y0+lo, y0+hi, kindColors[b.Kind]))
		}
	}
	p.Add(xGrid(), sh)
	p.Y.Tick.Marker = rowTicks(labels)
	p.Y.Min, p.Y.Max = 0, float64(n)
	p.X.Min, p.X.Max = 0, float64(g.End)/scale
	var legend []legendItem
	for _, k := range g.Kinds {
		legend = append(legend, legendItem{k, swatch{kindColors[k]}})
	}
	return figure{p: p, legend: legend}
}

type xgrid struct{}

// xGrid draws vertical grid lines only.
func xGrid() plot.Plotter { return xgrid{} }

func (xgrid) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{0xd8}, Width: vg.Points(0.5)}
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if t.IsMinor() {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	}
}

func memoryTimelineFigure(m *memoryTimelineChart) figure {
	p := newPlot("", "time ("+m.TimeUnit+")", "memory ("+m.Unit+")")
	sh := &shapes{}
	ts := float64(max(m.TimeScale, 1))
	bs := float64(max(m.Scale, 1))
	n := len(m.Times)
	lower := make([]float64, n)
	var legend []legendItem
	for c, name := range m.Components {
		var xs, ys []float64
		upper := make([]float64, n)
		for i := range n {
			upper[i] = lower[i] + float64(m.Values[c][i])/bs
		}
		// Upper edge left to right as a step function, lower edge back.
		for i := range n {
			end := float64(m.End)
			if i+1 < n {
				end = float64(m.Times[i+1])
			}
			xs = append(xs, float64(m.Times[i])/ts, end/ts)
			ys = append(ys, upper[i], upper[i])
		}
		for i := n - 1; i >= 0; i-- {
			end := float64(m.End)
			if i+1 < n {
				end = float64(m.Times[i+1])
			}
			xs = append(xs, end/ts, float64(m.Times[i])/ts)
			ys = append(ys, lower[i], lower[i])
		}
		col := componentColor(name)
		sh.add(shape{xs: xs, ys: ys, fill: col})
		lower = upper
		legend = append(legend, legendItem{name, swatch{col}})
	}
	// Segments shorter than 1/400 of the step (the optimizer spike of a
	// tiny model) would be invisible: draw them again, widened, on top.
	minW := float64(m.End-m.Start) / 400
	for i := range n {
		end := float64(m.End)
		if i+1 < n {
			end = float64(m.Times[i+1])
		}
		t0 := float64(m.Times[i])
		if end-t0 >= minW || len(m.Components) == 0 {
			continue
		}
		x0 := min(t0, float64(m.End)-minW)
		y := 0.0
		for c, name := range m.Components {
			h := float64(m.Values[c][i]) / bs
			if h > 0 {
				sh.add(rect(x0/ts, (x0+minW)/ts, y, y+h, componentColor(name)))
			}
			y += h
		}
	}
	peakY := float64(m.Peak) / bs
	px := float64(m.PeakTime) / ts
	span := float64(m.End - m.Start)
	sh.add(shape{xs: []float64{px - span/ts/300, px + span/ts/300, px}, ys: []float64{peakY * 1.04, peakY * 1.04, peakY}, fill: color.Black})
	align := draw.XLeft
	if (m.PeakTime-m.Start)*2 > m.End-m.Start {
		align = draw.XRight
	}
	sh.labels = append(sh.labels, label{x: px, y: peakY * 1.04, text: m.PeakLabel, align: align})
	p.Add(sh)
	p.Add(&hline{y: peakY, c: color.Gray{0x60}})
	p.X.Min, p.X.Max = float64(m.Start)/ts, float64(m.End)/ts
	p.Y.Min, p.Y.Max = 0, max(peakY*1.18, 1e-9)
	// The simulated reserve over the allocated stack, and the device's
	// memory over it (the CUDA context and NCCL's buffers added).
	top := peakY
	if len(m.Reserved) > 0 {
		xs := make([]float64, len(m.ReservedTimes))
		res := make([]float64, len(m.Reserved))
		dev := make([]float64, len(m.Reserved))
		for i := range m.Reserved {
			xs[i] = float64(max(m.ReservedTimes[i], m.Start)) / ts
			res[i] = float64(m.Reserved[i]) / bs
			dev[i] = float64(m.Reserved[i]+m.Outside) / bs
		}
		end := float64(m.End) / ts
		line := func(ys []float64, most int64, name, short string, sty draw.LineStyle) {
			if !m.onScale(most) {
				legend = append(legend, legendItem{fmt.Sprintf("%s up to %s (off scale)", short, unitBytes(most, m.Unit)), styleSwatch{sty}})
				return
			}
			p.Add(&stepLine{xs: xs, ys: ys, end: end, sty: sty})
			legend = append(legend, legendItem{name, styleSwatch{sty}})
			top = max(top, slices.Max(ys))
		}
		most := slices.Max(m.Reserved)
		line(res, most, reservedLineName, "reserved", reservedStyle)
		if m.Outside > 0 {
			line(dev, most+m.Outside, m.DeviceLabel, "device", deviceStyle)
		}
		p.Y.Max = max(p.Y.Max, top*1.08)
	}
	if m.Capacity > 0 {
		red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
		capY := float64(m.Capacity) / bs
		// A capacity far above the peak would flatten the timeline: leave
		// it off the scale and say so in the legend.
		if capY > 4*top {
			legend = append(legend, legendItem{m.CapacityLabel + " (off scale)", lineSwatch{red}})
		} else {
			p.Add(&hline{y: capY, c: red})
			p.Y.Max = max(p.Y.Max, capY*1.08)
			legend = append(legend, legendItem{m.CapacityLabel, lineSwatch{red}})
		}
	}
	p.X.Min = float64(m.Start) / ts // after the lines, whose data range holds x = 0
	return figure{p: p, legend: legend}
}

// Plot sizes in points.
const (
	runPlotW  = 900
	runPlotH  = 480
	legendW   = 190
	ganttRowH = 22
)

// plotImage is one rendered plot: its file stem, title and picture.
type plotImage struct {
	Name  string // file stem: memory_stages, comm, timeline, memory_timeline
	Title string
	picture
}

// drawn adapts a drawing that cannot fail to a picture.
func drawn(w, h vg.Length, f func(vg.CanvasSizer)) picture {
	return picture{w: w, h: h, draw: func(c vg.CanvasSizer) error { f(c); return nil }}
}

// images returns the four run plots ready to render.
func (rp *runPlots) images() []plotImage {
	ms, cm, gt, mt := rp.MemoryStages, rp.Comm, rp.Timeline, rp.MemoryTimeline
	ganttH := vg.Length(120 + ganttRowH*len(gt.Rows))
	return []plotImage{
		{Name: "memory_stages", Title: ms.Title, picture: drawn(runPlotW, runPlotH, func(c vg.CanvasSizer) {
			drawFigures(c, ms.Title, []figure{barsFigure(&ms, "")}, legendW)
		})},
		{Name: "comm", Title: cm.Title, picture: drawn(runPlotW, runPlotH*3/2, func(c vg.CanvasSizer) {
			var figs []figure
			for i := range cm.Panels {
				figs = append(figs, barsFigure(&cm.Panels[i], cm.Panels[i].Title))
			}
			drawFigures(c, cm.Title, figs, legendW)
		})},
		{Name: "timeline", Title: gt.Title, picture: drawn(runPlotW*4/3, ganttH, func(c vg.CanvasSizer) {
			drawFigures(c, gt.Title, []figure{ganttFigure(&gt)}, legendW)
		})},
		{Name: "memory_timeline", Title: mt.Title, picture: drawn(runPlotW, runPlotH, func(c vg.CanvasSizer) {
			drawFigures(c, mt.Title, []figure{memoryTimelineFigure(&mt)}, legendW)
		})},
	}
}
