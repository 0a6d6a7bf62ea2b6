package memory

import (
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestDefaultMemoryByHand holds the default example's memory peak to
// byhand.DefaultPeak, to the byte, and its reserved peak to the caching
// allocator's default reserve worked by hand: the peak × 1.15
// (scenarios.DefaultAllocatorOverhead), rounded up to the 2 MiB segment
// (memory.Reserved's rule). The README's run block quotes both.
func TestDefaultMemoryByHand(t *testing.T) {
	data, _ := scenarios.Example("default")
	s, err := scenarios.Load("default", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	peak := byhand.DefaultPeak()
	const seg = 2 << 20
	reserved := (int64(math.Ceil(float64(peak)*1.15)) + seg - 1) / seg * seg
	if r.Peak != peak || r.Units[r.PeakUnit].Name != "lm_head" || r.PeakPhase != PhaseBackward {
		t.Errorf("peak %d B at %s %s; by hand %d B in the lm_head's backward (%+d)", r.Peak, r.PeakPhase, r.Units[r.PeakUnit].Name, peak, r.Peak-peak)
	}
	if r.Reserved != reserved {
		t.Errorf("reserved %d B; by hand %d B", r.Reserved, reserved)
	}
	gib := func(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }
	golden.CheckQuotes(t, "../README.md", "TestDefaultMemoryByHand (by hand)",
		"memory model's peak "+gib(peak)+" ("+commas(peak)+" B) in backward, unit 34 \"lm_head\"",
		"busiest rank as a profiler sees it: reserved "+gib(reserved)+" (caching allocator)")
}
