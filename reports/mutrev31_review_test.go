package reports

import (
	"testing"

	"github.com/zerosim/zerosim/sweep"
)

// TestFitSettings: the line fit prints above its table names what every
// row holds fixed at the file's settings: the micro-batch, accumulation
// when more than one step, the checkpointing, and expert parallelism for
// an MoE model, its degree from 2 on.
func TestFitSettings(t *testing.T) {
	for _, c := range []struct {
		f    sweep.Fit
		want string
	}{
		{sweep.Fit{MicroBatch: 1, GradAccum: 1, Recompute: "none"}, "micro-batch 1, no activation checkpointing"},
		{sweep.Fit{MicroBatch: 2, GradAccum: 8, Recompute: "full"}, "micro-batch 2 × 8 accumulation steps, full activation checkpointing"},
		{sweep.Fit{MicroBatch: 1, GradAccum: 1, Recompute: "none", EP: 2, MoE: true}, "micro-batch 1, no activation checkpointing, expert parallelism 2"},
		{sweep.Fit{MicroBatch: 1, GradAccum: 1, Recompute: "none", EP: 1, MoE: true}, "micro-batch 1, no activation checkpointing, no expert parallelism"},
	} {
		if got := fitSettings(&c.f); got != c.want {
			t.Errorf("fitSettings(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
}
