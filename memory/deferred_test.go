package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFSDP1DeferredFrees replays FSDP1's forward over units of one size S
// (100 MiB, a whole number of 2 MiB segments) as _pre_forward_unshard and
// _post_forward_reshard run it with no prefetch: unshard (the rate
// limiter's wait, then the all-gather's allocation on the unshard stream)
// and reshard (the record_stream free and its free event). By hand, with
// max_inflight_allgathers 2: the second unit's all-gather finds the
// first's block still pending (one free event queued, no wait), so it
// takes a second segment; from the third on, the wait on the free event
// two reshards back returns that block first. So 2·S reserved and active
// at the peak, S allocated; with the frees issued at once (FSDP2's
// replay) one segment would do. Short of memory, with room for one
// segment only, the second request retries: release_cached_blocks
// synchronizes the pending free first, so it runs in one segment.
func TestFSDP1DeferredFrees(t *testing.T) {
	const S = 100 << 20
	run := func(limit int64, units int) (*Allocator, *simState) {
		a, err := NewAllocator(SegmentsDefault, limit)
		if err != nil {
			t.Fatal(err)
		}
		s := &scenarios.Scenario{}
		s.Communication.MaxInflightAllGathers = 2
		st := &simState{a: a, s: s, live: map[simKey]*simTensors{}}
		a.syncEvents = func() { st.release(-1) }
		for u := range units {
			st.unshardFSDP1()
			st.alloc("gathered", u, StreamGather, S)
			st.reshardFSDP1(u)
		}
		if st.err != nil {
			t.Fatal(st.err)
		}
		return a, st
	}
	a, st := run(0, 6)
	if a.PeakReserved != 2*S || a.PeakAllocated != 2*S || st.peakAlloc != S {
		t.Errorf("6 units: reserved %d, active %d, allocated %d; want %d, %d, %d", a.PeakReserved, a.PeakAllocated, st.peakAlloc, 2*S, 2*S, S)
	}
	// Two reshards' frees pending, until the step's end.
	if st.def.bytes != 2*S || len(st.def.queue) != 2 {
		t.Errorf("after 6 units: %d B pending, %d free events queued; want %d, 2", st.def.bytes, len(st.def.queue), 2*S)
	}
	st.release(-1)
	if st.def.bytes != 0 || a.Allocated != 0 {
		t.Errorf("after the step's end: %d B pending, %d allocated; want 0, 0", st.def.bytes, a.Allocated)
	}
	a, _ = run(S, 6)
	if a.PeakReserved != S || a.Retries == 0 {
		t.Errorf("room for one segment: reserved %d after %d retries; want %d after some", a.PeakReserved, a.Retries, S)
	}
}
