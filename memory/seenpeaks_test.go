package memory_test

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
)

// TestSeenPeaks: a reserve the GPU cannot hold is shown at the GPU when
// the allocated peak fits (PyTorch's caching allocator releases its cache
// and retries: CUDACachingAllocator.cpp malloc at eb42ad6e), in whole 2 MiB
// segments beside the memory outside the allocator; a step whose need
// exceeds the GPU keeps its demand (an out-of-memory). The cases are
// qamem33 M1's ms-swift 3.0 Qwen2-7B on one A100-80GB, by hand: usable
// 79.18 GiB = 85,017,837,568 B (scenarios' A100-80GB preset), outside the
// allocator 1 GiB (illustrative), reserve demand 81.57 GiB.
func TestSeenPeaks(t *testing.T) {
	const (
		gib      = int64(1) << 30
		mib      = int64(1) << 20
		capacity = int64(85_017_837_568)
		outside  = gib
	)
	demand := 81*gib + 570*mib // 81.57 GiB
	for _, c := range []struct {
		name             string
		reserved, need   int64
		wantRes, wantDev int64
		wantCapped       bool
	}{
		// (85,017,837,568 − 1,073,741,824) / 2,097,152 = 40,027.66: 40,027 segments.
		{"reserve over the GPU, need fits", demand, 72 * gib, 40_027 * 2 * mib, 40_027*2*mib + outside, true},
		{"reserve within the GPU", 70 * gib, 60 * gib, 70 * gib, 70*gib + outside, false},
		{"need over the GPU: out of memory, demand as it is", demand, 80 * gib, demand, demand + outside, false},
		// Need just under the cap: never below the allocated part.
		{"need above the whole segments", demand, capacity - mib, capacity - mib - outside, capacity - mib, true},
	} {
		res, dev, capped := memory.SeenPeaks(c.reserved, c.reserved+outside, c.need, capacity)
		if res != c.wantRes || dev != c.wantDev || capped != c.wantCapped {
			t.Errorf("%s: reserved %d device %d capped %v, want %d %d %v", c.name, res, dev, capped, c.wantRes, c.wantDev, c.wantCapped)
		}
		if c.wantCapped && dev > capacity {
			t.Errorf("%s: device %d over the GPU's %d", c.name, dev, capacity)
		}
	}
	if r, d, capped := memory.SeenPeaks(demand, demand+outside, 72*gib, 0); r != demand || d != demand+outside || capped {
		t.Errorf("unknown capacity: %d %d %v, want the demand", r, d, capped)
	}
}
