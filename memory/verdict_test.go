package memory

import "testing"

// TestVerdictOf: the one fit verdict counts the steady state's retries
// (the last step's), not the warm-up's. StepRetries holds the retries up
// to the end of each step: {2, 2, 2, 2} released the cache twice in the
// first step and never after; {3, 5, 7, 9} twice every step.
func TestVerdictOf(t *testing.T) {
	const gib = int64(1) << 30
	warm := &AllocSim{Steps: 4, Retries: 2, StepRetries: []int{2, 2, 2, 2}, Limit: 34 * gib}
	steady := &AllocSim{Steps: 4, Retries: 9, StepRetries: []int{3, 5, 7, 9}, Limit: 34 * gib}
	oneStep := &AllocSim{Steps: 1, Retries: 1, StepRetries: []int{1}, Limit: 34 * gib}
	oom := &AllocSim{Steps: 1, OOM: &OOMError{}, Limit: 34 * gib}
	for _, tc := range []struct {
		name     string
		fits     bool
		device   int64
		capacity int64
		sim      *AllocSim
		want     Verdict
	}{
		{"fraction reserve, room", true, 30 * gib, 35 * gib, nil, FitsWithRoom},
		{"fraction reserve over the GPU", true, 36 * gib, 35 * gib, nil, FitsWithRetries},
		{"warm-up retries only", true, 35 * gib, 35 * gib, warm, FitsWithRoom},
		{"retries every step", true, 35 * gib, 35 * gib, steady, FitsWithRetries},
		{"one step replayed, its retries", true, 30 * gib, 35 * gib, oneStep, FitsWithRetries},
		{"allocator ran out", true, 30 * gib, 35 * gib, oom, DoesNotFit},
		{"peak over", false, 30 * gib, 35 * gib, nil, DoesNotFit},
		{"GPU memory unknown", true, 30 * gib, 0, nil, DoesNotFit},
	} {
		if got := VerdictOf(tc.fits, tc.device, tc.capacity, tc.sim); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if warm.LastStepRetries() != 0 || steady.LastStepRetries() != 2 || (*AllocSim)(nil).LastStepRetries() != 0 {
		t.Errorf("last step's retries: warm-up %d, steady %d; want 0 and 2", warm.LastStepRetries(), steady.LastStepRetries())
	}
}
