package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestComputeSlowsOnlyBesideCollectives: with compute_interference s a
// compute task does its work at 1/(1+s) of its pace while a collective of
// its rank runs and at full pace otherwise, and ends at the next whole
// picosecond (durations round up, as seconds() does). At stage 3 with
// prefetch depth 1, unit u+1's forward all-gather starts with unit u's
// forward (S) and ends at b inside it (a 200 MB gather on 2 A100s,
// ≈ 0.334 ms, beside a 1 ms forward): the forward has done (b − S)/(1+s)
// of its 1 ms by b and ends at b + ⌈1 ms − (b − S)/(1+s)⌉.
func TestComputeSlowsOnlyBesideCollectives(t *testing.T) {
	const slow = 0.189
	s := fourLayers(t, "parallelism.zero_stage=3", "communication.compute_interference=0.189")
	res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	fwd, ag := map[int]Span{}, map[int]Span{}
	for _, sp := range res.Spans[0] {
		switch task := &res.Schedule.Tasks[sp.Task]; {
		case task.Kind == Forward:
			fwd[task.Unit] = sp
		case task.Phase == PhaseForwardAG:
			ag[task.Unit] = sp
		}
	}
	for u := range 3 {
		f, g := fwd[u], ag[u+1]
		if g.Start != f.Start || g.End >= f.End {
			t.Fatalf("unit %d's gather runs %v-%v, not from the start of unit %d's forward (%v-%v) to inside it", u+1, g.Start, g.End, u, f.Start, f.End)
		}
		left := float64(units.Millisecond) - float64(g.End-f.Start)/(1+slow)
		if want := g.End + units.Duration(math.Ceil(left)); f.End != want {
			t.Errorf("unit %d's forward ends at %v (%d ps), want %d ps", u, f.End, f.End, want)
		}
	}
}
