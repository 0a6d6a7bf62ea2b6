package zero

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// uncovered is the time in [lo, hi) that none of later's steps covers,
// picosecond segment by segment between their boundaries.
func uncovered(later []PathStep, lo, hi units.Duration) units.Duration {
	cuts := []units.Duration{lo, hi}
	for _, q := range later {
		for _, c := range []units.Duration{q.Start, q.End} {
			if lo < c && c < hi {
				cuts = append(cuts, c)
			}
		}
	}
	slices.Sort(cuts)
	var t units.Duration
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if !slices.ContainsFunc(later, func(q PathStep) bool { return q.Start <= a && b <= q.End }) {
			t += b - a
		}
	}
	return t
}

// QA s15 finding 4: the critical path's steps overlap where a step was
// released by its predecessor's start (a prefetched all-gather issued when a
// forward starts), so their durations added up to 106–157 % of the step.
// Each step accounts for the time up to the next step's start: the steps'
// shares add up to the step time, to the picosecond. The want is measured
// from the path's own times: the union of the steps' [Start, End) from the
// first start (0) to the step's end is the whole step, and a step's share is
// its interval less everything the later steps cover.
func TestCriticalPathSharesAddUpToTheStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    func() *scenarios.Scenario
	}{
		{"mlp stage 1", func() *scenarios.Scenario { return mlp(1, 1, 256, 4) }},
		{"mlp stage 3 K=2", func() *scenarios.Scenario { return mlp(3, 2, 256, 4) }},
		{"64 ranks stage 3, prefetch", func() *scenarios.Scenario { return cluster(8, 8, 3, 1, 8) }},
		{"16 ranks stage 3, slow rank 3", func() *scenarios.Scenario {
			s := cluster(2, 8, 3, 1, 8)
			s.Cluster.GPUOverrides = []scenarios.GPUOverride{{Rank: 3, Speed: 0.9}}
			return s
		}},
		{"16 ranks stage 2, 5 MB buckets", func() *scenarios.Scenario {
			s := cluster(2, 8, 2, 1, 8)
			s.Communication.BucketSize = 5e6
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Replay(tc.s(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			path := res.CriticalPath
			if len(path) == 0 {
				t.Fatal("no critical path")
			}
			if path[0].Start != 0 || path[len(path)-1].End != res.StepTime {
				t.Fatalf("path runs [%v, %v], step %v", path[0].Start, path[len(path)-1].End, res.StepTime)
			}
			var sum, whole, overlap units.Duration
			for i, p := range path {
				want := uncovered(path[i+1:], p.Start, p.End)
				if p.OnPath != want {
					t.Errorf("step %d (%s, [%v, %v]): on the path %v, want %v", i, res.Schedule.Tasks[p.Task].Kind, p.Start, p.End, p.OnPath, want)
				}
				sum += p.OnPath
				whole += p.End - p.Start
				if i+1 < len(path) && path[i+1].Start < p.End {
					overlap += p.End - path[i+1].Start
				}
			}
			if sum != res.StepTime {
				t.Errorf("the path's shares add up to %v, the step is %v", sum, res.StepTime)
			}
			t.Logf("%d steps; durations add up to %v, overlap %v, step %v", len(path), whole, overlap, res.StepTime)
		})
	}
}
