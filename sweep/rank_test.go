package sweep

import (
	"slices"
	"testing"
)

// Rows with room for the allocator's reserve rank first, each group
// fastest first (QA34 M2), and the memory-vs-throughput front is by step
// time whatever that order, over the rows with room when there are any
// (qauser32 L4: a row that needs retries, its step time without their
// cost, took the plan's choice off the front): the fastest row, which
// needs retries, is not on it; a slower row with room that needs more
// memory than a faster one is not either. Without a row with room the
// front is over all.
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
	if want := []string{"room-fast", "room-slowest-small"}; !slices.Equal(front, want) {
		t.Errorf("front %v, want %v", front, want)
	}
	retries := []PlanRow{row("retry-fast", 90, 40, false), row("retry-slow", 130, 39, false), row("retry-slower-big", 140, 41, false)}
	markPareto(retries)
	front = nil
	for _, r := range retries {
		if r.Pareto {
			front = append(front, r.Recompute)
		}
	}
	if want := []string{"retry-fast", "retry-slow"}; !slices.Equal(front, want) {
		t.Errorf("no row with room: front %v, want %v", front, want)
	}
}
