package memory

import (
	"errors"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// oneGPU is a scenario of one rank on one GPU, the least the NCCL buffers'
// communicator shapes need (topology.Build).
func oneGPU() *scenarios.Scenario {
	s := &scenarios.Scenario{}
	s.Cluster.Nodes, s.Cluster.GPUsPerNode, s.Parallelism.DP = 1, 1, 1
	return s
}

// TestFitAllocatorOverhead: the fitted overhead reproduces the measurement
// to the 2 MiB segment. Figures by hand, in MiB: the device peak adds the
// default CUDA context, 400,000,000 B, and one ring communicator's NCCL
// buffers, 32 channels × 2 connections × 10 MiB = 640 MiB (two under
// DeepSpeed ZeRO-3), 1,071,088,640 B in all (1,742,177,280 B with two).
func TestFitAllocatorOverhead(t *testing.T) {
	const mib, gib = int64(1 << 20), int64(1 << 30)
	fsdp := oneGPU()
	fsdp.Parallelism.Stage, fsdp.Parallelism.K = 3, 1
	ds := oneGPU()
	ds.Parallelism.Stage, ds.Parallelism.K, ds.Communication.Boundary = 3, 1, scenarios.BoundaryDeepSpeed
	items := oneGPU()
	items.Parallelism.Stage, items.Parallelism.K = 3, 1
	items.Memory.RuntimeContext, items.Memory.NCCLBuffers = 768<<20, 256<<20 // 1 GiB outside the allocator
	for _, c := range []struct {
		name                    string
		s                       *scenarios.Scenario
		peak, pool, measured    int64
		onDevice                bool
		overhead                float64
		reserved, device, pool2 int64
	}{
		// 11264 MiB over 10240: the middle of the segment, 11263/10240 − 1
		// = 0.09990…, to 4 decimals 0.0999 (10240·1.0999 = 11262.98 → 11264).
		{"reserved", fsdp, 10 * gib, 0, 11 * gib, false, 0.0999, 11 * gib, 11*gib + 1_071_088_640, 0},
		// Exactly the allocated peak: overhead 0.
		{"at the floor", fsdp, 10 * gib, 0, 10 * gib, false, 0, 10 * gib, 10*gib + 1_071_088_640, 0},
		// 0.99 MiB over rounds down to the floor; 1 MiB over (a tie)
		// rounds up to 10242 MiB: 10241/10240 − 1 = 0.0000977 → 0.0001.
		{"rounds down", fsdp, 10 * gib, 0, 10*gib + 99*mib/100, false, 0, 10 * gib, 10*gib + 1_071_088_640, 0},
		{"tie rounds up", fsdp, 10 * gib, 0, 10*gib + mib, false, 0.0001, 10*gib + 2*mib, 10*gib + 2*mib + 1_071_088_640, 0},
		// nvidia-smi 12288 MiB less 1021.47 MiB outside = 11266.53 MiB →
		// 11266; 11265/10240 − 1 = 0.10009… → 0.1001 (11265.02 → 11266).
		{"device", fsdp, 10 * gib, 0, 12 * gib, true, 0.1001, 11266 * mib, 11266*mib + 1_071_088_640, 0},
		// A 3 MiB pool holds 4 MiB: 11264 − 4 = 11260 for the rest;
		// 11259/10240 − 1 = 0.09951… → 0.0995 (11258.88 → 11260).
		{"gather pool", ds, 10 * gib, 3 * mib, 11 * gib, false, 0.0995, 11 * gib, 11*gib + 1_742_177_280, 4 * mib},
		// Items given: the allocator holds 11 − 1 GiB; the device adds them.
		{"items", items, 11 * gib, 0, 11 * gib, false, 0.0999, 11 * gib, 12 * gib, 0},
		// 100 GiB: 112649/102400 − 1 = 0.1000879 needs 5 decimals (0.1001
		// gives 112650.24 → 112652): 0.10009 → 112649.22 → 112650.
		{"five decimals", fsdp, 100 * gib, 0, 112650 * mib, false, 0.10009, 112650 * mib, 112650*mib + 1_071_088_640, 0},
	} {
		f, err := FitAllocatorOverhead(c.s, c.peak, c.pool, c.measured, c.onDevice)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if f.Overhead != c.overhead || f.Reserved != c.reserved || f.Device != c.device || f.Pool != c.pool2 {
			t.Errorf("%s: overhead %g, reserved %d, device %d, pool %d; want %g, %d, %d, %d", c.name, f.Overhead, f.Reserved, f.Device, f.Pool, c.overhead, c.reserved, c.device, c.pool2)
		}
		// ProfilerPeaks with the fitted overhead gives the same peaks.
		s := *c.s
		s.Memory.AllocatorOverhead = &f.Overhead
		if r, d, err := ProfilerPeaks(&s, c.peak, c.pool); err != nil || r != f.Reserved || d != f.Device {
			t.Errorf("%s: ProfilerPeaks at %g: %d, %d, %v", c.name, f.Overhead, r, d, err)
		}
	}
}

// TestFitAllocatorOverheadErrors: a measurement below the floor is a
// BelowFloorError naming it; nothing allocated, or an overhead over 10,
// cannot be fitted.
func TestFitAllocatorOverheadErrors(t *testing.T) {
	const mib, gib = int64(1 << 20), int64(1 << 30)
	s := oneGPU()
	s.Parallelism.Stage, s.Parallelism.K = 3, 1
	for _, c := range []struct {
		name            string
		peak, measured  int64
		device          bool
		floor, floorDev int64
	}{
		{"reserved", 10 * gib, 10*gib - mib - 1, false, 10 * gib, 10*gib + 1_071_088_640},
		// The device floor adds the context and NCCL buffers.
		{"device", 10 * gib, 10 * gib, true, 10 * gib, 10*gib + 1_071_088_640},
	} {
		_, err := FitAllocatorOverhead(s, c.peak, 0, c.measured, c.device)
		var b *BelowFloorError
		if !errors.As(err, &b) || b.Fit.Floor != c.floor || b.Fit.Floor+b.Fit.Outside != c.floorDev || b.Measured != c.measured || b.Device != c.device {
			t.Errorf("%s: %v (%+v), want a BelowFloorError with floor %d", c.name, err, b, c.floor)
		}
	}
	items := *s
	items.Memory.RuntimeContext = 1 << 30
	if _, err := FitAllocatorOverhead(&items, gib, 0, 2*gib, false); err == nil {
		t.Error("nothing in the allocator: fitted")
	}
	if f, err := FitAllocatorOverhead(&items, gib, 0, 0, false); err != nil || f.Overhead != 0 || f.Reserved != 0 {
		t.Errorf("nothing in the allocator, measured 0: %+v, %v", f, err)
	}
	if _, err := FitAllocatorOverhead(s, gib, 0, 12*gib, false); err == nil {
		t.Error("11 times the allocated peak: fitted")
	}
	if _, err := FitAllocatorOverhead(s, gib, 0, -1, false); err == nil {
		t.Error("negative measurement: fitted")
	}
}
