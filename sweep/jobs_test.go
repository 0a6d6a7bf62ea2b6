package sweep

import (
	"runtime"
	"testing"
)

// TestJobsCapped: the options' Jobs run as many at once as they ask, at
// most MaxJobs, and a Jobs ≤ 0 runs GOMAXPROCS, at most MaxJobs too: a
// GOMAXPROCS above MaxJobs sized Run's reorder window and channels by it.
func TestJobsCapped(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, tc := range []struct{ procs, j, want int }{
		{3, 0, 3},
		{3, -1, 3},
		{3, 7, 7},
		{3, MaxJobs + 1, MaxJobs},
		{MaxJobs + 5, 0, MaxJobs},
		{MaxJobs + 5, 2, 2},
	} {
		runtime.GOMAXPROCS(tc.procs)
		if got := jobs(tc.j); got != tc.want {
			t.Errorf("GOMAXPROCS %d: jobs(%d) = %d, want %d", tc.procs, tc.j, got, tc.want)
		}
		if tc.j <= 0 && DefaultJobs() != tc.want {
			t.Errorf("GOMAXPROCS %d: DefaultJobs() = %d, want %d", tc.procs, DefaultJobs(), tc.want)
		}
	}
}
