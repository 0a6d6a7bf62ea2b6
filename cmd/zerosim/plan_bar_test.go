package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlanBarRate: plan's bars (the memory model's screen, the replays,
// --network's) draw as sweep's does: the count of what they count and
// the elapsed time, then, once they have run rateAfter, the rate and the
// time left too (qauser30 M2: a plan of minutes showed a bare count).
// Piped, plan shows none (newBar: nil).
func TestPlanBarRate(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		rated bool
	}{{time.Hour, false}, {0, true}} {
		var buf bytes.Buffer
		b := newRateBar(&buf, "plan: replays", "replays", c.after, 0)
		b.set(3, 12)
		out := b.bar.String()
		if !strings.Contains(out, "plan: replays") || !strings.Contains(out, "(3/12") {
			t.Errorf("after %v: %q, want the description and the count 3/12", c.after, out)
		}
		if got := strings.Contains(out, "replays/s"); got != c.rated {
			t.Errorf("after %v: %q: rate shown %v, want %v", c.after, out, got, c.rated)
		}
		b.finish()
	}
	if newBar(&bytes.Buffer{}, "plan: replays", "replays") != nil {
		t.Error("a bar on a pipe")
	}
}
