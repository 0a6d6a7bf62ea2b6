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

// TestFSDP1DeferredGradient follows one unit's unsharded gradient through
// _post_backward_hook as deferred.go describes it: record_streamed on the
// post-backward stream, it is reusable only once its unit's
// reduce-scatter is done and a reshard's free event recorded after that
// has been waited on. By hand, with max_inflight_allgathers 1 and blocks
// of S (unit 0's gradient and fp32 copy, units 1 and 2's flat
// parameters):
//
//  1. unit 0's gradient freed (deferred: its reduce-scatter runs): S pending;
//  2. unit 1 reshards (free event 1), the next all-gather waits on event 1:
//     unit 1's block returns, the gradient does not (its reduce-scatter is
//     not done, event 1 tells nothing of it): S pending;
//  3. unit 0's reduce-scatter ends: its fp32 copy joins, 2·S pending;
//  4. unit 2 reshards (free event 2), the next all-gather waits on event 2:
//     the gradient, the copy and unit 2's block all return: 0 pending.
//
// Unit 0 on purpose: a gradient's unit index must not be mistaken for
// "done" (rs < 0).
func TestFSDP1DeferredGradient(t *testing.T) {
	const S = 100 << 20
	a, err := NewAllocator(SegmentsDefault, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &scenarios.Scenario{}
	s.Communication.MaxInflightAllGathers = 1
	st := &simState{a: a, s: s, live: map[simKey]*simTensors{}}
	a.syncEvents = func() { st.release(-1) }
	st.alloc("grad", 0, StreamCompute, S)
	st.alloc("rsin", 0, StreamReduce, S)
	st.deferFree("grad", 0, 0, 0)
	if st.def.bytes != S {
		t.Fatalf("step 1: %d B pending, want %d", st.def.bytes, S)
	}
	st.alloc("gathered", 1, StreamGather, S)
	st.reshardFSDP1(1)
	st.unshardFSDP1()
	if st.def.bytes != S {
		t.Errorf("step 2: %d B pending, want %d (the gradient, its reduce-scatter running)", st.def.bytes, S)
	}
	st.reduceDoneFSDP1(0)
	if st.def.bytes != 2*S {
		t.Errorf("step 3: %d B pending, want %d (gradient and fp32 copy)", st.def.bytes, 2*S)
	}
	st.alloc("gathered", 2, StreamGather, S)
	st.reshardFSDP1(2)
	st.unshardFSDP1()
	if st.err != nil {
		t.Fatal(st.err)
	}
	if st.def.bytes != 0 || len(st.def.pending) != 0 || a.Allocated != 0 {
		t.Errorf("step 4: %d B pending in %d frees, %d B allocated; want 0, 0, 0", st.def.bytes, len(st.def.pending), a.Allocated)
	}
}
