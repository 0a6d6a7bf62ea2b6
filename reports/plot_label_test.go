package reports

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestLabelBaseline: QA s31 L8. memory_stages.png's stage-3 bar peaked at
// 72.61 GiB, just under the 79.18 GiB GPU-memory line, and its label sat
// on the line, struck through. A label whose text the line crosses, or
// runs within labelGap of, goes labelGap above the line; one clear of it
// stays on its bar.
func TestLabelBaseline(t *testing.T) {
	const h = vg.Length(10)
	for _, c := range []struct {
		name  string
		base  vg.Length
		lines []vg.Length
		want  vg.Length
	}{
		{"no line", 100, nil, 100},
		{"line through the text", 100, []vg.Length{105}, 105 + labelGap + 1},
		{"line at the baseline", 100, []vg.Length{100}, 100 + labelGap + 1},
		{"line just over the text", 100, []vg.Length{100 + h + labelGap}, 100 + h + 2*labelGap + 1},
		{"line well above", 100, []vg.Length{100 + h + labelGap + 1}, 100},
		{"line below the bar's top", 100, []vg.Length{90}, 100},
		// Moved above one line onto another: above that one too.
		{"two lines", 100, []vg.Length{105, 112}, 112 + labelGap + 1},
	} {
		if got := labelBaseline(c.base, h, c.lines); got != c.want {
			t.Errorf("%s: baseline %v, want %v", c.name, got, c.want)
		}
	}
}
