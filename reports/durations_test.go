package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
)

// TestDurs (QA24 L5): times printed side by side share one precision, 3
// decimals in each one's unit, more only where two different times would
// print alike. compare printed a 16.9998 s step as "17s" beside "17.91s"
// (units.Duration drops trailing zeros); 16.9998 s is 17.000 s at 3
// decimals. One picosecond apart at a second needs all 12 decimals.
func TestDurs(t *testing.T) {
	s, ms, us := int64(units.Second), int64(units.Millisecond), int64(units.Microsecond)
	for _, tc := range []struct {
		in   []int64
		want []string
	}{
		{[]int64{16_999_800 * ms / 1000, 17_910 * ms}, []string{"17.000s", "17.910s"}},
		{[]int64{110_910 * ms / 1000, 843_652 * ms / 1000}, []string{"110.910ms", "843.652ms"}},
		{[]int64{433_636_500 * us, 433_643_700 * us}, []string{"433.637s", "433.644s"}},
		// 433.6365 s and 433.6366 s: 433.637 twice at 3 decimals.
		{[]int64{4_336_365 * s / 10_000, 4_336_366 * s / 10_000, 2 * s}, []string{"433.6365s", "433.6366s", "2.0000s"}},
		{[]int64{s, s + 1}, []string{"1.000000000000s", "1.000000000001s"}},
		{[]int64{s, s}, []string{"1.000s", "1.000s"}},
	} {
		if got := durs(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("durs(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPlanReasonFiguresDiffer (QA24 L5): plan's why line printed "7.2 ms
// less compute at full speed (433.64 s vs 433.64 s)" (Llama 3.1 405B on 128 MI300X,
// global batch 2048): the two totals now carry the decimals that tell them
// apart, 433.6365 s and 433.6437 s at 3 decimals, the difference as before.
func TestPlanReasonFiguresDiffer(t *testing.T) {
	us := int64(units.Microsecond)
	c := func(k int) sweep.Candidate {
		return sweep.Candidate{Stage: 3, K: k, MicroBatch: 1, GradAccum: 16, Recompute: "full", Prefetch: 1, Algorithm: "auto"}
	}
	w := sweep.PlanRow{Candidate: c(1), StepTime: 450_000_000 * us, Compute: 433_636_500 * us, ExposedComm: 908_000 * us}
	r := sweep.PlanRow{Candidate: c(2), StepTime: 460_000_000 * us, Compute: 433_643_700 * us, ExposedComm: 1_870_000 * us}
	got := PlanReason(&sweep.Plan{N: 128, Rows: []sweep.PlanRow{w, r}})
	for _, want := range []string{"7.2 ms less compute at full speed (433.637 s vs 433.644 s", "962 ms less exposed communication (908 ms vs 1.87 s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("PlanReason: %q\nwant %q", got, want)
		}
	}
}
