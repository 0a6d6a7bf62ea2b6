package memory

import (
	"errors"
	"testing"
)

// allocOp is one request of a hand-written allocator case.
type allocOp struct {
	stream int
	bytes  int64 // > 0: malloc; < 0: free the -bytes'th malloc (1-based)
}

// replayOps runs ops through a new allocator in mode under limit.
func replayOps(t *testing.T, mode SegmentMode, limit int64, ops []allocOp) *Allocator {
	t.Helper()
	a, err := NewAllocator(mode, limit)
	if err != nil {
		t.Fatal(err)
	}
	var hs []int
	for _, o := range ops {
		if o.bytes < 0 {
			if err := a.Free(hs[-o.bytes-1]); err != nil {
				t.Fatal(err)
			}
			hs = append(hs, 0)
			continue
		}
		h, err := a.Malloc(o.stream, o.bytes)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return a
}

// The cases follow CUDACachingAllocator.cpp's rules by hand (allocator.go
// cites them): MiB below is 1<<20 bytes.
func TestAllocatorRules(t *testing.T) {
	const MiB = 1 << 20
	type op = allocOp
	cases := []struct {
		name            string
		mode            SegmentMode
		limit           int64
		ops             []op
		alloc, reserved int64 // current, after the ops
		peakReserved    int64
		segments        int
		retries         int
	}{
		{"3 MiB takes a 20 MiB segment (kLargeBuffer) and is split", SegmentsDefault, 0,
			[]op{{0, 3 * MiB}}, 3 * MiB, 20 * MiB, 20 * MiB, 1, 0},
		{"11 MiB takes 12 MiB (kRoundLarge); 1 MiB left is not split", SegmentsDefault, 0,
			[]op{{0, 11 * MiB}}, 12 * MiB, 12 * MiB, 12 * MiB, 1, 0},
		{"100 B takes 512 B of a 2 MiB small segment", SegmentsDefault, 0,
			[]op{{0, 100}}, 512, 2 * MiB, 2 * MiB, 1, 0},
		{"a freed 12 MiB block serves 5 MiB by a split", SegmentsDefault, 0,
			[]op{{0, 12 * MiB}, {0, -1}, {0, 5 * MiB}}, 5 * MiB, 12 * MiB, 12 * MiB, 1, 0},
		{"blocks freed on one stream are not reused by another", SegmentsDefault, 0,
			[]op{{0, 12 * MiB}, {0, -1}, {1, 12 * MiB}}, 12 * MiB, 24 * MiB, 24 * MiB, 2, 0},
		{"freed neighbours coalesce: two 3 MiB blocks free, 15 MiB fits the 20 MiB segment", SegmentsDefault, 0,
			[]op{{0, 3 * MiB}, {0, 3 * MiB}, {0, -1}, {0, -2}, {0, 15 * MiB}}, 15 * MiB, 20 * MiB, 20 * MiB, 1, 0},
		{"fragmentation: 12 MiB free beside 12 MiB held cannot serve 14 MiB", SegmentsDefault, 0,
			[]op{{0, 12 * MiB}, {0, 12 * MiB}, {0, -1}, {0, 14 * MiB}}, 26 * MiB, 38 * MiB, 38 * MiB, 3, 0},
		{"out of memory: the cached whole segments are released and the request retried", SegmentsDefault, 40 * MiB,
			[]op{{0, 12 * MiB}, {0, -1}, {1, 12 * MiB}, {1, -3}, {0, 30 * MiB}}, 30 * MiB, 30 * MiB, 30 * MiB, 1, 1},
		{"expandable: 3 MiB maps one 20 MiB page", SegmentsExpandable, 0,
			[]op{{0, 3 * MiB}}, 3 * MiB, 20 * MiB, 20 * MiB, 1, 0},
		{"expandable: 11 MiB maps one 20 MiB page and is split at 512 B", SegmentsExpandable, 0,
			[]op{{0, 11 * MiB}}, 11 * MiB, 20 * MiB, 20 * MiB, 1, 0},
		{"expandable: 30 MiB after 3 MiB grows the segment by one page, joining the free tail", SegmentsExpandable, 0,
			[]op{{0, 3 * MiB}, {0, 30 * MiB}}, 33 * MiB, 40 * MiB, 40 * MiB, 1, 0},
		{"expandable: 14 MiB skips the 12 MiB hole and splits the free tail", SegmentsExpandable, 0,
			[]op{{0, 12 * MiB}, {0, 12 * MiB}, {0, -1}, {0, 14 * MiB}}, 26 * MiB, 40 * MiB, 40 * MiB, 1, 0},
		{"expandable: one segment per stream", SegmentsExpandable, 0,
			[]op{{0, 12 * MiB}, {0, -1}, {1, 12 * MiB}}, 12 * MiB, 40 * MiB, 40 * MiB, 2, 0},
		{"expandable: out of memory unmaps the free pages and retries", SegmentsExpandable, 40 * MiB,
			[]op{{0, 12 * MiB}, {0, -1}, {1, 12 * MiB}, {1, -3}, {0, 30 * MiB}}, 30 * MiB, 40 * MiB, 40 * MiB, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := replayOps(t, c.mode, c.limit, c.ops)
			if a.Allocated != c.alloc || a.Reserved != c.reserved || a.PeakReserved != c.peakReserved || a.Segments != c.segments || a.Retries != c.retries {
				t.Errorf("allocated %d reserved %d peak %d segments %d retries %d, want %d %d %d %d %d",
					a.Allocated, a.Reserved, a.PeakReserved, a.Segments, a.Retries, c.alloc, c.reserved, c.peakReserved, c.segments, c.retries)
			}
		})
	}
}

func TestAllocatorErrors(t *testing.T) {
	if _, err := NewAllocator(SegmentMode(7), 0); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := NewAllocator(SegmentsDefault, -1); err == nil {
		t.Error("negative limit accepted")
	}
	a, _ := NewAllocator(SegmentsDefault, 10<<20)
	if _, err := a.Malloc(0, -1); err == nil {
		t.Error("negative request accepted")
	}
	if _, err := a.Malloc(0, 1<<51); err == nil {
		t.Error("oversized request accepted")
	}
	if _, err := a.Malloc(0, 11<<20); !errors.Is(err, ErrAllocatorOOM) {
		t.Errorf("12 MiB in a 10 MiB limit: %v, want ErrAllocatorOOM", err)
	}
	if err := a.Free(99); err == nil {
		t.Error("free of an unknown handle accepted")
	}
}
