package sweep

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestSweepKNoEffectNote: a sweep point at ZeRO stage 0 with K above 1
// replays the same step as its K=1 twin (stage 0 shards nothing), so its
// row carries KNoEffectNote, as run's "K: 2 (no effect: stage 0 shards
// nothing)" says (qauser30 L2: those rows repeated the K=1 rows without a
// word); K above 1 at stage 1 and K=1 at stage 0 do not.
func TestSweepKNoEffectNote(t *testing.T) {
	data, ok := scenarios.Example("seed002-tiny")
	if !ok {
		t.Fatal("no seed002-tiny")
	}
	src := Source{File: "t.yaml", Data: data, Sets: []string{"cluster.nodes=2", "parallelism.dp=4"}}
	var grids []Grid
	for _, g := range []string{"parallelism.zero_stage=0,1", "parallelism.k=1,2"} {
		gr, err := ParseGrid(g)
		if err != nil {
			t.Fatal(err)
		}
		grids = append(grids, gr)
	}
	sp, err := NewSpace(grids)
	if err != nil {
		t.Fatal(err)
	}
	ev := &Evaluator{Src: src, Space: sp}
	rows := map[[2]string]Row{}
	for i := range sp.Len() {
		r := ev.Eval(i)
		if r.Err != "" {
			t.Fatalf("point %d: %s", i, r.Err)
		}
		rows[[2]string{r.Values[0], r.Values[1]}] = r
	}
	for pt, want := range map[[2]string]bool{{"0", "1"}: false, {"0", "2"}: true, {"1", "1"}: false, {"1", "2"}: false} {
		if got := slices.Contains(rows[pt].Warnings, KNoEffectNote); got != want {
			t.Errorf("stage %s, K %s: note %v, want %v (%q)", pt[0], pt[1], got, want, rows[pt].Warnings)
		}
	}
	a, b := rows[[2]string{"0", "1"}], rows[[2]string{"0", "2"}]
	if a.StepTime != b.StepTime || a.PeakMemory != b.PeakMemory || a.NetworkBytes != b.NetworkBytes {
		t.Errorf("stage 0: K=2's row %+v differs from K=1's %+v, which the note says it repeats", b, a)
	}
}
