package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// TestGanttRanks: the timeline draws the first ranks plus the straggler
// and the rank with the most waiting and exposed communication, labelled,
// and its title counts the step's ranks, not the ranks kept (QA3 s16
// finding 9 and 11c: with rank 11 of 16 at speed 0.8 the plot showed
// ranks 0–7 waiting and not rank 11; gpt3-175b-16k's title said "first 8
// of 64 ranks" for 16,384). A straggler beyond the ranks whose spans are
// kept (SpanRanks) is drawn from NotableSpans.
func TestGanttRanks(t *testing.T) {
	slow := []string{"cluster.gpu_overrides=[{rank: 11, speed: 0.8}]"}
	for _, tc := range []struct {
		name      string
		example   string
		sets      []string
		spanRanks int
		ranks     []int    // drawn, in order
		title     string   // the title's tail
		labels    []string // rows that must be there
	}{
		{"default", "default", nil, 64, []int{0, 1, 2, 3, 4, 5, 6, 7}, ", first 8 of 16 ranks", nil},
		{"straggler 11", "default", slow, 64, []int{0, 1, 2, 3, 4, 5, 6, 11},
			", first 7 of 16 ranks, rank 0 most waiting/exposed, rank 11 the straggler",
			[]string{"rank 11 compute (the straggler)", "rank 0 compute (most waiting/exposed)"}},
		{"straggler beyond the kept spans", "default", slow, 4, []int{0, 1, 2, 3, 11},
			", first 4 of 16 ranks, rank 0 most waiting/exposed, rank 11 the straggler", []string{"rank 11 compute (the straggler)"}},
		{"16,384 ranks", "gpt3-175b-16k", nil, 64, []int{0, 1, 2, 3, 4, 5, 6, 7}, ", first 8 of 16,384 ranks", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, ok := scenarios.Example(tc.example)
			if !ok {
				t.Fatalf("no example %q", tc.example)
			}
			run := optsRun(t, zero.Options{KeepSpans: true, SpanRanks: tc.spanRanks, SpanNotable: true}, tc.example+".yaml", data, tc.sets...)
			var got []int
			for _, g := range ganttRanks(run.Result) {
				got = append(got, g.rank)
			}
			if !slices.Equal(got, tc.ranks) {
				t.Errorf("ranks drawn %v, want %v", got, tc.ranks)
			}
			p := run.ganttPlot()
			if !strings.HasSuffix(p.Title, tc.title) {
				t.Errorf("title %q, want it to end %q", p.Title, tc.title)
			}
			for _, l := range tc.labels {
				if !slices.ContainsFunc(p.Rows, func(r ganttRow) bool { return r.Label == l }) {
					t.Errorf("no row %q", l)
				}
			}
		})
	}
}
