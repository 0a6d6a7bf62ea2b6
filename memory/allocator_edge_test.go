package memory

import "testing"

// TestAllocatorEdgeRules (review s21 B): cases the table in
// allocator_test.go misses, each computed by hand from
// CUDACachingAllocator.cpp's rules.
func TestAllocatorEdgeRules(t *testing.T) {
	const MiB = 1 << 20
	type op = allocOp
	run := func(mode SegmentMode, limit int64, ops []op) *Allocator { return replayOps(t, mode, limit, ops) }
	// T1 should_split under expandable segments: 19.5 MiB maps one 20 MiB
	// page and 0.5 MiB (≥ 512 B) is split off; default segments would hand
	// out the whole 20 MiB block (remaining ≤ kSmallSize).
	if a := run(SegmentsExpandable, 0, []op{{0, 19*MiB + MiB/2}}); a.Allocated != 19*MiB+MiB/2 || a.Reserved != 20*MiB {
		t.Errorf("T1: allocated %d reserved %d, want %d %d", a.Allocated, a.Reserved, 19*MiB+MiB/2, 20*MiB)
	}
	// T2 get_free_block's expandable_size walk: 18, 18, 4, 6 MiB map three
	// pages (60 MiB; free tail [46, 60) next to unmapped space); the first
	// 18 MiB is freed. 12 MiB: the smallest fitting block is the 14 MiB tail,
	// but its expandable size is larger than the 18 MiB hole's, so the hole
	// takes it ([0, 12), 6 MiB left). 16 MiB then fits nowhere mapped and
	// maps a fourth page: 80 MiB. Without the walk 12 MiB would go to the
	// tail and 16 MiB to the hole: 60 MiB.
	if a := run(SegmentsExpandable, 0, []op{{0, 18 * MiB}, {0, 18 * MiB}, {0, 4 * MiB}, {0, 6 * MiB}, {0, -1}, {0, 12 * MiB}, {0, 16 * MiB}}); a.Reserved != 80*MiB {
		t.Errorf("T2: reserved %d, want %d", a.Reserved, 80*MiB)
	}
	// T3 find_expandable_block uses the free block before the unmapped
	// space: 3 MiB maps 20 MiB (17 MiB free tail); 30 MiB maps 20 MiB more
	// joined to the tail (40 MiB), not 40 MiB at the next page boundary.
	if a := run(SegmentsExpandable, 0, []op{{0, 3 * MiB}, {0, 30 * MiB}}); a.Reserved != 40*MiB || a.Allocated != 33*MiB {
		t.Errorf("T3: reserved %d allocated %d, want %d %d", a.Reserved, a.Allocated, 40*MiB, 33*MiB)
	}
	// T4 release_blocks frees only unsplit segments: 12 MiB and 3 MiB (a
	// 20 MiB segment split), the 3 MiB freed, the 12 MiB freed; on stream 1
	// 30 MiB in a 40 MiB limit: both segments are whole again and released:
	// 30 MiB reserved, one retry.
	if a := run(SegmentsDefault, 40*MiB, []op{{0, 12 * MiB}, {0, 3 * MiB}, {0, 1 * MiB}, {0, -1}, {0, -2}, {1, 30 * MiB}}); a.Reserved != 32*MiB || a.Retries != 1 {
		t.Errorf("T4: reserved %d retries %d, want %d 1", a.Reserved, a.Retries, 32*MiB)
	}
	// T5 a split segment is not released: 3 MiB and 2 MiB share a 20 MiB
	// segment; the 3 MiB (first block: no prev, a next) is freed. 30 MiB on
	// stream 1 in a 40 MiB limit: the segment still holds 2 MiB, nothing
	// is released, OOM, and 20 MiB stays reserved.
	a, _ := NewAllocator(SegmentsDefault, 40*MiB)
	h1, _ := a.Malloc(0, 3*MiB)
	a.Malloc(0, 2*MiB)
	a.Free(h1)
	if _, err := a.Malloc(1, 30*MiB); err == nil || a.Reserved != 20*MiB {
		t.Errorf("T5: 30 MiB beside a split 20 MiB segment in 40 MiB: err %v, reserved %d, want OOM and 20 MiB", err, a.Reserved)
	}
	// T6 the small pool: 1 MiB exactly is small (≤ kSmallSize): a 2 MiB
	// segment; 1 MiB + 512 B is large: a 20 MiB segment.
	if a := run(SegmentsDefault, 0, []op{{0, MiB}}); a.Reserved != 2*MiB {
		t.Errorf("T6a: reserved %d, want 2 MiB", a.Reserved)
	}
	if a := run(SegmentsDefault, 0, []op{{0, MiB + 1}}); a.Reserved != 20*MiB {
		t.Errorf("T6b: reserved %d, want 20 MiB", a.Reserved)
	}
	// T7 peaks are maxima: 30 MiB, freed, then 3 MiB on stream 1: reserved
	// 50 MiB now and at peak; allocated peak 30 MiB, now 3 MiB.
	if a := run(SegmentsDefault, 0, []op{{0, 30 * MiB}, {0, -1}, {1, 3 * MiB}}); a.PeakAllocated != 30*MiB || a.Allocated != 3*MiB || a.PeakReserved != 50*MiB {
		t.Errorf("T7: peak allocated %d now %d peak reserved %d", a.PeakAllocated, a.Allocated, a.PeakReserved)
	}
	// T8 expandable OOM: only wholly free pages are unmapped: 12 MiB +
	// 12 MiB on stream 0 (40 MiB mapped), the second freed ([12, 40) free);
	// 30 MiB on stream 1 (two pages) under a 60 MiB limit: 80 MiB fails,
	// page [20, 40) is unmapped, page [0, 20) holds the first 12 MiB:
	// 20 + 40 = 60 MiB after one retry.
	if a := run(SegmentsExpandable, 60*MiB, []op{{0, 12 * MiB}, {0, 12 * MiB}, {0, -2}, {1, 30 * MiB}}); a.Reserved != 60*MiB || a.Retries != 1 {
		t.Errorf("T8: reserved %d retries %d, want %d 1", a.Reserved, a.Retries, 60*MiB)
	}
	// T9 get_allocation_size at kMinLargeAlloc: exactly 10 MiB is not
	// below 10 MiB, so its segment is 10 MiB (rounded to 2 MiB), not 20.
	if a := run(SegmentsDefault, 0, []op{{0, 10 * MiB}}); a.Reserved != 10*MiB {
		t.Errorf("T9: reserved %d, want 10 MiB", a.Reserved)
	}
	// T10 round_size: 1 MiB + 100 B is a 1 MiB + 512 B block: two fill
	// 2 MiB + 1 KiB of one 20 MiB segment.
	if a := run(SegmentsDefault, 0, []op{{0, MiB + 100}, {0, MiB + 100}}); a.Allocated != 2*MiB+1024 || a.Reserved != 20*MiB {
		t.Errorf("T10: allocated %d reserved %d", a.Allocated, a.Reserved)
	}
	// T11 the reserved peak is a maximum: under a 40 MiB limit, 12 MiB on
	// streams 0 and 1 (each freed: 24 MiB cached), then 20 MiB on stream 2:
	// 44 > 40, both cached segments are released, 20 MiB reserved now,
	// 24 MiB at peak.
	if a := run(SegmentsDefault, 40*MiB, []op{{0, 12 * MiB}, {0, -1}, {1, 12 * MiB}, {1, -3}, {2, 20 * MiB}}); a.Reserved != 20*MiB || a.PeakReserved != 24*MiB {
		t.Errorf("T11: reserved %d peak %d, want 20 MiB, 24 MiB", a.Reserved, a.PeakReserved)
	}
	// T12 a limit is reachable: 3 MiB under a 20 MiB limit takes its whole
	// 20 MiB segment.
	if a := run(SegmentsDefault, 20*MiB, []op{{0, 3 * MiB}}); a.Reserved != 20*MiB || a.Retries != 0 {
		t.Errorf("T12: reserved %d retries %d", a.Reserved, a.Retries)
	}
	// T13 map_block maps the pages covering the request: 40 MiB maps two
	// 20 MiB pages, not three.
	if a := run(SegmentsExpandable, 0, []op{{0, 40 * MiB}}); a.Reserved != 40*MiB {
		t.Errorf("T13: reserved %d, want 40 MiB", a.Reserved)
	}
	// T14 best fit takes the lowest address among equal blocks (the walk
	// moves only on a strictly smaller expandable size): 6, 4, 6, 4 MiB fill
	// one page; the two 6 MiB are freed; a new 6 MiB takes [0, 6); freeing
	// the last 4 MiB leaves [10, 20) free beside the unmapped space, where
	// 10 MiB fits: still one page.
	if a := run(SegmentsExpandable, 0, []op{{0, 6 * MiB}, {0, 4 * MiB}, {0, 6 * MiB}, {0, 4 * MiB}, {0, -1}, {0, -3}, {0, 6 * MiB}, {0, -4}, {0, 10 * MiB}}); a.Reserved != 20*MiB {
		t.Errorf("T14: reserved %d, want 20 MiB", a.Reserved)
	}
}

// TestAdamStatesRank0 (review s21 B P1, P2): rank 0 holds ⌈20/3⌉ = 7
// elements of a 20-element FSDP1 flat parameter over 3 ranks (padded to
// 21); FSDP2 chunks each parameter on dim 0, so rank 0 of a 1000×1024
// weight over 3 ranks holds ⌈1000/3⌉ = 334 rows, 342,016 elements, and
// AdamW's exp_avg and exp_avg_sq (zeros_like of the local shard) are
// 1,368,064 B each in fp32, 684,032 B in bf16 (training.master_dtype none).
func TestAdamStatesRank0(t *testing.T) {
	if got := rank0Slices([]unitParam{{10, 10}, {10, 10}}, 3); len(got) != 1 || got[0] != 7 {
		t.Errorf("rank0Slices = %v, want [7]", got)
	}
	for _, c := range []struct{ state, want int64 }{{4, 1368064}, {2, 684032}} {
		a, _ := NewAllocator(SegmentsDefault, 0)
		st := &simState{a: a, fsdp2: true, live: map[simKey]*simTensors{}}
		st.adamStates([]simUnit{{ps: []unitParam{{1000 * 1024, 1000}}, n: 3, state: c.state}})
		if got := st.tensors(key("adam", -1)).sizes; len(got) != 2 || got[0] != c.want || got[1] != c.want {
			t.Errorf("%d-byte states: adam state sizes %v, want [%d %d]", c.state, got, c.want, c.want)
		}
	}
}

// TestOptimizerTemporaries: with fp32 shards the optimizer's temporaries
// follow how the update runs. Llama 2 7B over 8 ranks (P =
// 6,738,415,616, every unit divisible by 8, so a rank's shard is P/8 =
// 842,301,952 elements; the largest unit, a block, 202,383,360/8 =
// 25,297,920): torch.optim's foreach Adam takes one fp32 temporary of the
// whole shard (torch._foreach_sqrt(device_exp_avg_sqs)), 3,369,207,808 B;
// the fused kernel none; Composer's DecoupledAdamW two fp32 copies of the
// largest unit's shard, 202,383,360 B.
func TestOptimizerTemporaries(t *testing.T) {
	for _, tc := range []struct {
		impl string
		want int64
	}{{"foreach", 3_369_207_808}, {"fused", 0}, {"composer", 202_383_360}} {
		r, err := Analyze(loadFSDP(t, "training.optimizer_impl="+tc.impl), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Component(CompStepTemp).Peak; got != tc.want {
			t.Errorf("%s: optimizer temporaries %d B, want %d", tc.impl, got, tc.want)
		}
	}
}

// TestAllocatorStreams: the free sets are indexed by stream, so Malloc
// takes stream ids 0 to allocMaxStreams−1 only, and a block freed on the
// highest stream is reused there and nowhere else (CUDACachingAllocator's
// "Once freed, blocks can be re-allocated on the same stream, but not on
// any other stream").
func TestAllocatorStreams(t *testing.T) {
	a, err := NewAllocator(SegmentsDefault, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []int{-1, allocMaxStreams} {
		if _, err := a.Malloc(st, 1<<20); err == nil || err.Error() != "memory: allocator stream "+itoa(st)+": use 0 to 63" {
			t.Errorf("stream %d: %v", st, err)
		}
	}
	top := allocMaxStreams - 1
	h, err := a.Malloc(top, 30<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Free(h); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Malloc(0, 30<<20); err != nil || a.Reserved != 60<<20 {
		t.Errorf("stream 0 after stream %d's free: reserved %d, %v; want %d", top, a.Reserved, err, 60<<20)
	}
	if _, err := a.Malloc(top, 30<<20); err != nil || a.Reserved != 60<<20 || a.Segments != 2 {
		t.Errorf("stream %d again: reserved %d in %d segments, %v; want its cached block", top, a.Reserved, a.Segments, err)
	}
}
