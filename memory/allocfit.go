package memory

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
)

// This file inverts ProfilerPeaks: memory.allocator_overhead from one
// measured peak (zerosim calibrate --reserved, --device).

// AllocatorFit is memory.allocator_overhead fitted to a measured peak
// (FitAllocatorOverhead).
type AllocatorFit struct {
	// Overhead is the fitted memory.allocator_overhead, rounded to the
	// fewest decimals (at least 4) that still reproduce the segment.
	Overhead float64
	// Reserved and Device are ProfilerPeaks' peaks at Overhead: Reserved
	// is the measurement rounded to the nearest 2 MiB segment (with
	// --device: the measurement less Outside, so rounded), Device is
	// Reserved + Outside.
	Reserved, Device int64
	// Allocated is what the caching allocator holds of the allocated
	// peak (the peak less memory.runtime_context and memory.nccl_buffers),
	// Pool DeepSpeed ZeRO-3's gather pool in whole segments (GatherPool),
	// Outside the CUDA context and NCCL buffers the device peak adds.
	Allocated, Pool, Outside int64
	// Floor is the least reserved peak ProfilerPeaks gives (overhead 0:
	// Allocated and Pool in whole segments); the least device peak is
	// Floor + Outside.
	Floor int64
}

// BelowFloorError is FitAllocatorOverhead's error for a measurement below
// what the allocator holds at overhead 0: the fitted overhead would be
// negative.
type BelowFloorError struct {
	Measured int64
	Fit      AllocatorFit // Overhead and the peaks unset
	Device   bool
}

func (e *BelowFloorError) Error() string {
	what, floor := "reserved", e.Fit.Floor
	if e.Device {
		what, floor = "device", e.Fit.Floor+e.Fit.Outside
	}
	return fmt.Sprintf("memory: measured %s peak %d B is below %d B, the least the model's allocated peak gives at allocator overhead 0", what, e.Measured, floor)
}

// FitAllocatorOverhead returns the memory.allocator_overhead with which
// ProfilerPeaks(s, peak, pool) gives measured as its reserved peak (device
// false: torch.cuda.max_memory_reserved) or its device peak (device true:
// nvidia-smi), to the allocator's 2 MiB segment.
//
// ProfilerPeaks' reserved peak is Reserved(A, o) + P, with A the
// allocator's share of the peak and P the gather pool in whole segments,
// and Reserved(A, o) = ⌈⌈A·(1+o)⌉⌉₂ₘᵢB: so with R the measurement (less
// the memory outside the allocator, for device) rounded to the nearest
// segment, any o with R−P−2 MiB < A·(1+o) ≤ R−P reproduces R: a closed
// form, no search. The fit takes the middle of that interval, A·(1+o) =
// R−P−1 MiB (or o = 0 when that is below A), and keeps the fewest decimals
// of o, from 4, that still give R (5 suffice for any A under 200 GB). A
// measurement that rounds below Floor (o would be negative) is a
// *BelowFloorError.
func FitAllocatorOverhead(s *scenarios.Scenario, peak, pool, measured int64, device bool) (AllocatorFit, error) {
	if measured < 0 || peak < 0 {
		return AllocatorFit{}, fmt.Errorf("memory: allocator fit needs a measured peak and an allocated peak ≥ 0 (got %d, %d)", measured, peak)
	}
	at := func(o float64) (reserved, device int64, err error) {
		c := *s
		c.Memory.AllocatorOverhead = &o
		return ProfilerPeaks(&c, peak, pool)
	}
	floor, floorDevice, err := at(0)
	if err != nil {
		return AllocatorFit{}, err
	}
	f := AllocatorFit{Allocated: allocatorBytes(s, peak), Outside: floorDevice - floor, Floor: floor}
	if f.Pool, err = Reserved(f.Allocated, 0); err != nil {
		return AllocatorFit{}, err
	}
	f.Pool = floor - f.Pool
	target := measured
	if device {
		target -= f.Outside
	}
	r := max(target, 0) / segment * segment
	if max(target, 0)-r >= segment/2 {
		r += segment
	}
	if r < floor {
		return AllocatorFit{}, &BelowFloorError{Measured: measured, Fit: f, Device: device}
	}
	rest := r - f.Pool // Reserved(A, o) must give it
	switch {
	case f.Allocated == 0 && rest == 0:
		f.Reserved, f.Device = floor, floorDevice
		return f, nil
	case f.Allocated == 0:
		return AllocatorFit{}, fmt.Errorf("memory: the model allocates nothing in the caching allocator (its peak is memory.runtime_context and memory.nccl_buffers), so no allocator overhead reaches %d B", measured)
	}
	o := max(float64(rest-segment/2)/float64(f.Allocated)-1, 0)
	if o > scenarios.MaxAllocatorOverhead {
		return AllocatorFit{}, fmt.Errorf("memory: the fitted allocator overhead %.4g is over %g, memory.allocator_overhead's largest: the measured peak is %.4g times what the model allocates (check that the measurement is of this scenario's run: its model, micro_batch and recompute)", o, scenarios.MaxAllocatorOverhead, float64(rest)/float64(f.Allocated))
	}
	for d := 4; d <= 17; d++ {
		p := math.Pow(10, float64(d))
		v := math.Round(o*p) / p
		if d == 17 {
			v = o
		}
		if got, err := Reserved(f.Allocated, v); err == nil && got == rest {
			f.Overhead = v
			if f.Reserved, f.Device, err = at(v); err != nil {
				return AllocatorFit{}, err
			}
			return f, nil
		}
	}
	return AllocatorFit{}, fmt.Errorf("memory: no allocator overhead reproduces %d B to the segment from an allocated %d B (float64 precision)", r, f.Allocated)
}
