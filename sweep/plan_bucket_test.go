package sweep

import (
	"context"
	"testing"
)

// TestPlanReplayedBucket: plan's rows carry the gradient bucket the replay
// used at stages 0–2, the stack's where the candidate sets none
// (torchtitan's DDP: replicate's bucket_cap_mb=100, 100 MiB =
// 104,857,600 B), and none at stage 3, which buckets per unit (FSDP2 has
// no bucket_size; plan.csv and plan.json leave the column empty there).
func TestPlanReplayedBucket(t *testing.T) {
	p, err := PlanSearch(context.Background(), exampleSource(t, "seed002-tiny", "stack=torchtitan"),
		PlanOptions{Recompute: []string{"full"}, Algorithms: []string{"auto"}, Stages: []int{0, 3}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range p.Rows {
		want := int64(0)
		if r.Stage < 3 {
			want = 100 << 20
		}
		seen[r.Stage] = true
		if r.ReplayedBucket != want {
			t.Errorf("stage %d row %v: replayed bucket %d B, want %d", r.Stage, r.Sets(), r.ReplayedBucket, want)
		}
	}
	if !seen[0] || !seen[3] {
		t.Fatalf("rows at stages %v, want 0 and 3", seen)
	}
}
