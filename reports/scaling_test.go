package reports

import (
	"bytes"
	"image/png"
	"os"
	"strings"
	"testing"
)

// The scaling plots are a valid PNG and an SVG carrying both titles and
// every series name.
func TestScalingPlots(t *testing.T) {
	pts := []ScalingPoint{{Ranks: 8, Seconds: 0.002, AllocBytes: 1 << 20, PeakHeapBytes: 1 << 19, Events: 2000},
		{Ranks: 64, Seconds: 0.02, AllocBytes: 8 << 20, PeakHeapBytes: 4 << 20, Events: 16000}}
	dir := t.TempDir()
	files, err := WriteScalingPlots(dir, "gpt3", pts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(b)); err != nil {
		t.Errorf("scaling.png: %v", err)
	}
	svg, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpt3: wall time per simulated step", "memory per simulated step", "full simulation (every rank)", "allocated", "peak live heap"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("scaling.svg lacks %q", want)
		}
	}
	var tab bytes.Buffer
	if err := WriteScalingTable(&tab, pts); err != nil {
		t.Fatal(err)
	}
	// 2000 events in 2 ms and 16000 in 20 ms: 1.00 M/s and 0.80 M/s.
	for _, want := range []string{"1.00 M", "0.80 M", "1.0 MiB", "8.0 MiB"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
}
