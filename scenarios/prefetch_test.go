package scenarios

import "testing"

// TestCommunicationPrefetch holds Communication.Prefetch, the one reading
// of prefetch_depth that memory, zero and sweep share: the key where it
// is set (0 included, PyTorch FSDP's no-prefetch), DefaultPrefetchDepth
// where a scenario built in code leaves it unset.
func TestCommunicationPrefetch(t *testing.T) {
	for _, d := range []int{0, 1, 3} {
		c := Communication{PrefetchDepth: &d}
		if got := c.Prefetch(); got != d {
			t.Errorf("prefetch_depth %d: Prefetch() = %d", d, got)
		}
	}
	if got := (Communication{}).Prefetch(); got != DefaultPrefetchDepth {
		t.Errorf("unset: Prefetch() = %d, want DefaultPrefetchDepth %d", got, DefaultPrefetchDepth)
	}
}
