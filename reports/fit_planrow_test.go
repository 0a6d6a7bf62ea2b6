package reports

import (
	"testing"

	"github.com/zerosim/zerosim/sweep"
)

// TestPlanBestRow holds planBestRow, which the fit table's plan block and
// the JSON's plan_finds share: at each stage the first row in the plan's
// order (fastest first, Plan.BestPerStage), whatever rows of other stages
// come between, and none for a stage no row fits.
func TestPlanBestRow(t *testing.T) {
	rows := []sweep.PlanRow{
		{Candidate: sweep.Candidate{Stage: 1, K: 1}, StepTime: 10},
		{Candidate: sweep.Candidate{Stage: 3, K: 1}, StepTime: 11},
		{Candidate: sweep.Candidate{Stage: 1, K: 2}, StepTime: 12},
		{Candidate: sweep.Candidate{Stage: 3, K: 2}, StepTime: 13},
	}
	p := &sweep.Plan{Rows: rows}
	for _, st := range []int{1, 3} {
		var want sweep.PlanRow
		for _, r := range rows {
			if r.Stage == st {
				want = r
				break
			}
		}
		got, ok := planBestRow(p, st)
		if !ok || got != want {
			t.Errorf("stage %d: planBestRow = %+v, %t; want %+v", st, got, ok, want)
		}
	}
	if got, ok := planBestRow(p, 2); ok {
		t.Errorf("stage 2 (no row): planBestRow = %+v, true; want none", got)
	}
}
