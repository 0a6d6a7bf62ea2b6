package reports

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// readableTicks labels an axis with 4 to 10 round values (1, 2 or 5 × 10^k
// apart) written with no more decimals than the step needs ("10", "0.5"),
// and an unlabelled minor tick between labels. gonum's DefaultTicks labels
// only two or three values on a tall axis, all with two decimals.
type readableTicks struct{}

func (readableTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: formatTick(lo, 0)}}
	}
	step := niceStep((hi - lo) / 6)
	prec := max(0, -int(math.Floor(float64(math.Log10(step))+1e-9)))
	var ticks []plot.Tick
	for v := float64(math.Ceil(lo/step) * step); v <= hi+float64(step*1e-9); v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, prec)})
		if m := v + float64(step/2); m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
}

// niceStep rounds x up to 1, 2 or 5 × 10^k.
func niceStep(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= x*(1-1e-9) {
			return m * e
		}
	}
	return 10 * e
}

func formatTick(v float64, prec int) string {
	if math.Abs(v) < 1e-12 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// labelledLogTicks labels a log axis at powers of ten, and when the axis
// spans less than a decade (so at most one power of ten shows, and
// plot.LogTicks would label nothing or one value) at 1, 2 and 5 × 10^k, or
// failing that at round values in the range: a log axis always has at least
// two labels.
type labelledLogTicks struct{}

func (labelledLogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return readableTicks{}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	labelled := 0
	for _, mults := range [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		ticks, labelled = ticks[:0], 0
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			p := math.Pow(10, e)
			for m := 1.0; m < 10; m++ {
				v := m * p
				if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
					continue
				}
				t := plot.Tick{Value: v}
				if slices.Contains(mults, m) {
					t.Label = strconv.FormatFloat(v, 'g', -1, 64)
					labelled++
				}
				ticks = append(ticks, t)
			}
		}
		if labelled >= 2 {
			return ticks
		}
	}
	// Within one step of 1 × 10^k: round values of the range itself.
	return readableTicks{}.Ticks(lo, hi)
}
