package sweep

import (
	"slices"
	"testing"
)

// Rows with room for the allocator's reserve rank first, each group
// fastest first (QA34 M2), and the memory-vs-throughput front is by step
// time whatever that order: the fastest row, which needs retries, is on
// it; a slower row with room that needs more memory than a faster one is
// not.
func TestRankRowsAndFront(t *testing.T) {
	row := func(name string, step, peak int64, room bool) PlanRow {
		return PlanRow{Candidate: Candidate{Recompute: name}, StepTime: step, PeakMemory: peak, DeviceFit: room}
	}
	rows := []PlanRow{
		row("retry-fast", 90, 40, false),
		row("room-slow-big", 120, 35, true),
		row("room-fast", 100, 30, true),
		row("retry-slow", 130, 39, false),
		row("room-slowest-small", 150, 10, true),
	}
	slices.SortStableFunc(rows, rankRows)
	markPareto(rows)
	var order, front []string
	for _, r := range rows {
		order = append(order, r.Recompute)
		if r.Pareto {
			front = append(front, r.Recompute)
		}
	}
	if want := []string{"room-fast", "room-slow-big", "room-slowest-small", "retry-fast", "retry-slow"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if want := []string{"room-fast", "room-slowest-small", "retry-fast"}; !slices.Equal(front, want) {
		t.Errorf("front %v, want %v", front, want)
	}
}
