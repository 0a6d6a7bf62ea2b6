package zero

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// sweepSplit splits [0, step) of one rank's spans, by walking the
// elementary segments between every span boundary (quadratic, for small
// schedules) instead of analysis.go's interval algebra, into compute (a
// compute-stream task runs), exposed communication (else a collective or
// a ZeRO++ kernel on a communication stream runs), waiting (else the rank
// has reached a collective that has not started) and idle (nothing of
// these). Host (offload) tasks are not the GPU's.
func sweepSplit(sc *Schedule, spans []Span, step units.Duration) (comp, exposed, wait, idle units.Duration) {
	cuts := []units.Duration{0, step}
	for _, sp := range spans {
		cuts = append(cuts, sp.Arrive, sp.Start, sp.End)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for i := 0; i+1 < len(cuts) && cuts[i+1] <= step; i++ {
		lo, hi := cuts[i], cuts[i+1]
		var c, x, w bool
		for _, sp := range spans {
			task := &sc.Tasks[sp.Task]
			if task.Kind.IsHost() {
				continue
			}
			runs := sp.Start <= lo && hi <= sp.End
			switch {
			case runs && task.Stream == Compute && !task.Kind.IsComm():
				c = true
			case runs:
				x = true
			case task.Kind.IsComm() && sp.Arrive <= lo && hi <= sp.Start:
				w = true
			}
		}
		switch d := hi - lo; {
		case c:
			comp += d
		case x:
			exposed += d
		case w:
			wait += d
		default:
			idle += d
		}
	}
	return comp, exposed, wait, idle
}

// TestRankTimeSplit: a rank's step splits into compute, exposed
// communication, waiting for peers and idle time (RankStats), which add up
// to the step; Exposure gives the exposed and waiting intervals of the
// same split. Where a slow rank keeps the others waiting, each part is
// the one sweepSplit measures from the rank's spans.
func TestRankTimeSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    func() *scenarios.Scenario
	}{
		{"mlp ZeRO-1, rank 5 at half speed", func() *scenarios.Scenario {
			s := mlp(1, 1, 256, 4)
			s.Cluster.GPUOverrides = []scenarios.GPUOverride{{Rank: 5, Speed: 0.5}}
			return s
		}},
		{"mlp ZeRO-3 K=2, rank 2 at 0.7", func() *scenarios.Scenario {
			s := mlp(3, 2, 256, 4)
			s.Cluster.GPUOverrides = []scenarios.GPUOverride{{Rank: 2, Speed: 0.7}}
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Replay(tc.s(), Options{KeepSpans: true})
			if err != nil {
				t.Fatal(err)
			}
			var waited, exposed bool
			length := func(iv []Interval) (d units.Duration) {
				for _, x := range iv {
					d += x.Hi - x.Lo
				}
				return d
			}
			for r, st := range res.Ranks {
				comp, x, w, idle := sweepSplit(res.Schedule, res.Spans[r], res.StepTime)
				if st.Compute != comp || st.ExposedComm != x || st.Wait != w || st.Idle != idle {
					t.Errorf("rank %d: compute %v, exposed %v, wait %v, idle %v; the spans' %v, %v, %v, %v", r, st.Compute, st.ExposedComm, st.Wait, st.Idle, comp, x, w, idle)
				}
				if sum := comp + x + w + idle; sum != res.StepTime {
					t.Fatalf("rank %d: the spans' split adds up to %v, step %v", r, sum, res.StepTime)
				}
				ex, wt := Exposure(res.Schedule, res.Spans[r])
				if length(ex) != x || length(wt) != w {
					t.Errorf("rank %d: Exposure gives %v exposed, %v waiting; the spans' %v, %v", r, length(ex), length(wt), x, w)
				}
				waited, exposed = waited || w > 0, exposed || x > 0
			}
			if !waited || !exposed {
				t.Errorf("waiting %v, exposed communication %v: want both somewhere, or the case tests nothing", waited, exposed)
			}
		})
	}
}
