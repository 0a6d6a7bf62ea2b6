package sweep

import (
	"fmt"
	"slices"
	"testing"
)

// TestPlanStage3SearchesNoBucket: stage 3 reduces per unit (FSDP's flat
// parameter, DeepSpeed's partitions), so plan never varies a stage-3
// candidate's bucket size (setsBucket: a stage < 3): with stages 2 and 3
// and --bucket-sizes 25MB,200MB the stage-2 candidates set each size and
// the stage-3 ones none; with stage 3 alone the exhaustive sweep's grids
// have no bucket key and the plan lists no size searched.
func TestPlanStage3SearchesNoBucket(t *testing.T) {
	src := exampleSource(t, "seed002-tiny")
	opt := PlanOptions{Recompute: []string{"full"}, Algorithms: []string{"auto"}, Stages: []int{2, 3}, BucketSizes: []string{"25MB", "200MB"}}
	sp, err := newPlanSpace(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range sp.candidates() {
		if k := fmt.Sprintf("%d:%q", c.Stage, c.BucketSize); !slices.Contains(got, k) {
			got = append(got, k)
		}
	}
	slices.Sort(got)
	if want := []string{`2:"200MB"`, `2:"25MB"`, `3:""`}; !slices.Equal(got, want) {
		t.Errorf("candidates' stage:bucket size %s, want %s", got, want)
	}
	opt = PlanOptions{Recompute: []string{"full"}, Algorithms: []string{"auto"}, Stages: []int{3}}
	grids, err := PlanGrids(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(grids, func(g Grid) bool { return g.Key == planBucketKey }) {
		t.Errorf("stage 3 alone: the exhaustive sweep varies %s", planBucketKey)
	}
	if sp, err = newPlanSpace(src, opt); err != nil {
		t.Fatal(err)
	}
	if sp.searchesBuckets() {
		t.Error("stage 3 alone: searchesBuckets")
	}
	// The same options at stage 2 vary the bucket key and search buckets,
	// so the two checks above can see it.
	opt = PlanOptions{Recompute: []string{"full"}, Algorithms: []string{"auto"}, Stages: []int{2}, BucketSizes: []string{"25MB", "200MB"}}
	if grids, err = PlanGrids(src, opt); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(grids, func(g Grid) bool { return g.Key == planBucketKey }) {
		t.Errorf("stage 2 alone: the exhaustive sweep does not vary %s", planBucketKey)
	}
	if sp, err = newPlanSpace(src, opt); err != nil {
		t.Fatal(err)
	}
	if !sp.searchesBuckets() {
		t.Error("stage 2 alone: not searchesBuckets")
	}
}
