package main

import (
	"testing"

	"github.com/zerosim/zerosim/sweep"
)

// TestPointsLabel: a warning's points by index, as runs of consecutive
// indices up to six runs and as a count beyond, then the values of the
// grids of more than one value that all of them share (review s20 A F7:
// M47, six runs → "> 7", and M48, a one-value grid named as shared).
// Grids k=2 (one value), gpu=H100-80GB,MI300X and dp=8,…,56 (seven): point
// i has gpu i/7 and dp 8·(1 + i mod 7), the last grid fastest.
func TestPointsLabel(t *testing.T) {
	var gs []sweep.Grid
	for _, s := range []string{"parallelism.k=2", "cluster.gpu=H100-80GB,MI300X", "parallelism.dp=8,16,24,32,40,48,56"} {
		g, err := sweep.ParseGrid(s)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	sp, err := sweep.NewSpace(gs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		points []int
		want   string
	}{
		{[]int{3}, "point 3 (cluster.gpu=H100-80GB, parallelism.dp=32)"},
		{[]int{0, 1, 2, 3, 4, 5, 6}, "points 0–6 (cluster.gpu=H100-80GB)"},
		{[]int{7, 9, 11, 13}, "points 7, 9, 11, 13 (cluster.gpu=MI300X)"},
		{[]int{1, 8}, "points 1, 8 (parallelism.dp=16)"},
		{[]int{0, 2, 4, 6, 8, 10}, "points 0, 2, 4, 6, 8, 10"},
		{[]int{0, 2, 4, 6, 8, 10, 12}, "7 points"},
	} {
		if got := pointsLabel(sp, c.points); got != c.want {
			t.Errorf("%v: %q, want %q", c.points, got, c.want)
		}
	}
}
