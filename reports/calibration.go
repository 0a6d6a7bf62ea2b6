package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CalibrationParams are the fitted corrections of NCCL's cost model.
// They are the calibration file's params (scenarios.CalParams), printed
// under its keys in JSON.
type CalibrationParams scenarios.CalParams

// CalibrationBand is one size band's |error| of the fitted model,
// in-sample and leave-one-out (NaN when there is no other log).
type CalibrationBand struct {
	Band              string
	Rows              int
	InMedian, InMax   float64
	LOOMedian, LOOMax float64
}

// CalibrationLog is one calibrated log: its curve, the fitted model's
// times and errors per band, and a warning when it is far off nominal.
type CalibrationLog struct {
	Source       string
	Op           string
	Ranks, Nodes int
	// GPUsPerThread is the GPUs one host thread drove in the run
	// (nccl-tests -g), 0 or 1 for one per process.
	GPUsPerThread int
	Sizes         []int64
	Measured      []float64 // µs
	Modelled      []float64 // µs, fitted model
	Bands         []CalibrationBand
	Warning       string
	// Own is the fit on this log alone (nil if it failed).
	Own *CalibrationParams
	// OwnExact: the log has no more sizes than the fit has parameters,
	// so the fit on it alone passes through every row and says nothing;
	// InExact: the same of every log together (the in-sample errors are
	// then printed n/a, not 0.0 %).
	OwnExact, InExact bool
	// Parameters is the number of parameters the fit has: FitParameters,
	// or 2 (the efficiencies) under calibrate --min-size, which holds the
	// latencies at nominal (0 means FitParameters).
	Parameters int
}

// CalibrationReport is what `zerosim calibrate` prints.
type CalibrationReport struct {
	File   string
	Params CalibrationParams
	Logs   []CalibrationLog
	// KeptCompute is the compute part of an existing file, kept (nil:
	// none).
	KeptCompute *scenarios.CalCompute
	// KeptMemory is the memory part of an existing file, kept (nil: none).
	KeptMemory *scenarios.CalMemory
	// Held are the parameters the logs do not identify, left at their
	// nominal values, as indices of scenarios.CalParamNames
	// (collectives.Fit.Held).
	Held []int
	// MinSize is calibrate --min-size as given ("" when every row is
	// fitted): the rows below it are left out and the latencies held at
	// nominal, as rows of large sizes cannot measure them.
	MinSize string
}

// String is the fitted values in one line.
func (p CalibrationParams) String() string {
	n := scenarios.CalParamNames
	return fmt.Sprintf("%s %.3f, %s %.3f, %s %s µs, %s %s µs, %s %s µs",
		n[0].Name, p.IntraEff, n[1].Name, p.InterEff, n[2].Name, signedUS(p.IntraHopUS), n[3].Name, signedUS(p.InterHopUS), n[4].Name, signedUS(p.FixedUS))
}

// signedUS is a fitted latency in µs with its sign and two decimals; a fit
// within 0.005 µs of zero on the negative side printed "-0.00" (a log of
// zerosim's own prediction, which the fit reproduces exactly): it is +0.00.
func signedUS(v float64) string {
	s := fmt.Sprintf("%+.2f", v)
	if s == "-0.00" {
		return "+0.00"
	}
	return s
}

// FitParameters is the number of parameters the network fit has: an
// efficiency and a per-hop latency per link class and a fixed cost
// (collectives.Params).
const FitParameters = 5

func calPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// WriteCalibration prints the fitted values and, per log, the errors per
// size band.
func WriteCalibration(w io.Writer, r *CalibrationReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fitted on every log: %s\n", r.Params)
	if r.MinSize != "" {
		fmt.Fprintf(&b, "fitted from --min-size %s: the rows below it are left out, and the latencies (intra hop, inter hop, fixed) are held at nominal, which rows of large sizes cannot measure; collectives below %s are timed by the fitted model, not by the logs' rows\n", r.MinSize, r.MinSize)
	} else if len(r.Held) > 0 {
		var held []string
		for _, k := range r.Held {
			held = append(held, scenarios.CalParamNames[k].Name)
		}
		fmt.Fprintf(&b, "held at nominal: %s: no logged size measures %s (a 10 %% efficiency or 1 µs latency change moves no logged time by 1 %%); add logs of the sizes and node counts that do (-b 8 -e 4G -f 2, on several nodes)\n",
			strings.Join(held, ", "), map[bool]string{true: "it", false: "them"}[len(r.Held) == 1])
	}
	for _, l := range r.Logs {
		host := ""
		if l.GPUsPerThread > 1 {
			host = fmt.Sprintf(" (one thread drives %d GPUs: modelled with its host launch floor)", l.GPUsPerThread)
		}
		fmt.Fprintf(&b, "\n%s: %s, %s on %s, %s%s\n", l.Source, l.Op, countNoun(l.Ranks, "rank", "ranks"), countNoun(l.Nodes, "node", "nodes"), countNoun(len(l.Sizes), "size", "sizes"), host)
		switch {
		case l.Own != nil && l.OwnExact:
			fmt.Fprintf(&b, "  fitted on this log alone: n/a (%s for %d parameters: any fit passes through them)\n", countNoun(len(l.Sizes), "size", "sizes"), cmp.Or(l.Parameters, FitParameters))
		case l.Own != nil:
			fmt.Fprintf(&b, "  fitted on this log alone: %s\n", *l.Own)
		}
		fmt.Fprintf(&b, "  %-11s %5s %10s %10s %10s %10s\n", "band", "rows", "in median", "in max", "loo median", "loo max")
		for _, bd := range l.Bands {
			in, inMax := calPct(bd.InMedian), calPct(bd.InMax)
			if l.InExact {
				in, inMax = "n/a", "n/a"
			}
			fmt.Fprintf(&b, "  %-11s %5d %10s %10s %10s %10s\n", bd.Band, bd.Rows, in, inMax, calPct(bd.LOOMedian), calPct(bd.LOOMax))
		}
	}
	fmt.Fprintf(&b, "\nwrote %s\n", r.File)
	if c := r.KeptCompute; c != nil {
		fmt.Fprintf(&b, "kept its compute part (compute_efficiency %g, method %s): it was fitted with the previous network model; refit it with zerosim calibrate --%s if the network changed\n", c.Efficiency, c.Method, c.Method)
	}
	if m := r.KeptMemory; m != nil {
		fmt.Fprintf(&b, "kept its memory part (allocator_overhead %g, method %s)\n", m.AllocatorOverhead, m.Method)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// busbw is nccl-tests' bus bandwidth (GB/s) of op (a collectives.Op's
// name, as CalibrationLog.Op holds it) over n ranks.
func busbw(op string, n int, size int64, us float64) float64 {
	o, _ := collectives.ParseOp(op)
	return float64(size) / (us * 1e3) * collectives.BusFactor(o, n)
}

// CalibrationPlot draws measured and modelled busbw against size (log
// scale, sizes in binary units) as stem.png and stem.svg, like every other
// plot.
func CalibrationPlot(stem string, l *CalibrationLog) ([]OutputFile, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s over %d ranks", filepath.Base(l.Source), l.Op, l.Ranks)
	p.X.Label.Text = "size"
	p.Y.Label.Text = "busbw (GB/s)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.Y.Tick.Marker = readableTicks{}
	var meas, mod plotter.XYs
	for i, s := range l.Sizes {
		if s <= 0 {
			continue
		}
		meas = append(meas, plotter.XY{X: float64(s), Y: busbw(l.Op, l.Ranks, s, l.Measured[i])})
		if !math.IsNaN(l.Modelled[i]) {
			mod = append(mod, plotter.XY{X: float64(s), Y: busbw(l.Op, l.Ranks, s, l.Modelled[i])})
		}
	}
	ms, err := plotter.NewScatter(meas)
	if err != nil {
		return nil, err
	}
	ms.GlyphStyle.Shape = draw.CircleGlyph{}
	ml, err := plotter.NewLine(mod)
	if err != nil {
		return nil, err
	}
	ml.Color = color.RGBA{R: 200, A: 255}
	p.Add(ms, ml)
	p.Legend.Add("measured", ms)
	p.Legend.Add("model (fitted)", ml)
	p.Legend.Top, p.Legend.Left = true, true
	return picture{w: 640, h: 400, draw: func(c vg.CanvasSizer) error { p.Draw(draw.New(c)); return nil }}.files(stem)
}

// sizeTicks marks a log axis of bytes at the powers of two in its range,
// labelled in binary units ("64.00 KiB") at most eight times: every
// power, or every second, fourth … when the range spans more (gonum's
// LogTicks wrote "100000" beside "1e+06").
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return readableTicks{}.Ticks(lo, hi)
	}
	first, last := int(math.Ceil(math.Log2(lo)-1e-9)), int(math.Floor(math.Log2(hi)+1e-9))
	if last < first || last > 62 {
		return readableTicks{}.Ticks(lo, hi)
	}
	every := 1
	for (last-first)/every+1 > 8 {
		every *= 2
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Ldexp(1, e)}
		if e%every == 0 {
			t.Label = units.Bytes(int64(1) << e).IEC()
		}
		ticks = append(ticks, t)
	}
	return ticks
}
