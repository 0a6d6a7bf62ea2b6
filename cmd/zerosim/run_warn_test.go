package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/units"
)

// TestRunWarningsOnStderr: in table mode, as with --format json, run
// prints the replay's warnings on stderr as "zerosim: warning: …" and
// not in the report on stdout (QA22 M5: the straggler warning was the
// report's line 107 and stderr was empty, so zerosim run x.yaml >
// report.txt hid it). The computes are worked by hand (byhand.Default's
// full speed, rank 3's at speed 0.8), to the millisecond's third decimal
// the warning prints; the waiting the replay's (Straggler.Caused).
func TestRunWarningsOnStderr(t *testing.T) {
	full := units.Duration(math.Round(byhand.Default().FullSpeed(true) * 1e12))
	slow := units.Duration(math.Round(byhand.Default().FullSpeed(true) / 0.8 * 1e12))
	ms := func(d units.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/1e9) }
	st := replayDefault(t, "cluster.gpu_overrides=[{rank: 3, speed: 0.8}]").Straggler
	if st == nil || st.Rank != 3 || ms(st.Compute) != ms(slow) || ms(st.MedianCompute) != ms(full) {
		t.Fatalf("straggler %+v; by hand rank 3 at %s, the others at %s", st, ms(slow), ms(full))
	}
	want := "zerosim: warning: straggler: rank 3 (compute " + ms(slow) + " vs the other ranks' median " + ms(full) + ") kept the others waiting " + st.Caused.String() + " in total\n"
	for _, format := range []string{"table", "json"} {
		out, stderr, code := runCLI("run", "--set", "cluster.gpu_overrides=[{rank: 3, speed: 0.8}]", "--format", format)
		inTable := format == "table" && strings.Contains(out, "straggler: rank 3") // result.json lists it in warnings[]
		if code != 0 || stderr != want || inTable {
			t.Errorf("--format %s: exit %d, stderr %q, straggler warning in the table %v; want only %q on stderr", format, code, stderr, inTable, want)
		}
	}
}
