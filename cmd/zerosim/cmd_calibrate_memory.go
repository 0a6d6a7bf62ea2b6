package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// parseMeasuredPeak reads --reserved or --device: a size, rounded to the
// byte (a figure printed to 0.1 GiB is not a whole number of bytes).
func parseMeasuredPeak(flag, v string) (int64, error) {
	what := "the measured torch.cuda.max_memory_reserved of one step"
	if flag == "device" {
		what = "the device memory nvidia-smi showed during one step"
	}
	if f, ok := units.Decimal(strings.TrimSpace(v)); ok && strings.TrimSpace(v) != "0" {
		use := fmt.Sprintf("%sGiB or %sGB", v, v)
		if f >= 1<<20 && f < 1<<62 && f == math.Trunc(f) {
			// A number of bytes, as torch.cuda.max_memory_reserved() returns it.
			use = fmt.Sprintf("%sB (%s)", v, units.Bytes(int64(f)).IEC())
		}
		return 0, inputError{fmt.Errorf("--%s %s: a size needs a unit: use %s (%s)", flag, v, use, what)}
	}
	b, err := units.ParseBytesNearest(v)
	if err != nil {
		return 0, inputError{fmt.Errorf("--%s %q %s: use %s with its unit, e.g. --%s 82.4GiB", flag, v, measureWhy(v, err, "size"), what, flag)}
	}
	if b <= 0 {
		return 0, inputError{fmt.Errorf("--%s %q: want a size > 0, e.g. --%s 82.4GiB", flag, v, flag)}
	}
	return int64(b), nil
}

// runCalibrateMemory fits memory.allocator_overhead of the scenario arg to
// --reserved (the caching allocator's reserved peak) or --device (what
// nvidia-smi shows), and writes the calibration file's memory part.
func runCalibrateMemory(a *app, o *calibrateOpts, cmd *cobra.Command, arg string, w io.Writer) error {
	if err := computeFlags(a, o, cmd); err != nil {
		return err
	}
	flag, device := "reserved", o.device != ""
	if device {
		flag = "device"
	}
	measured, err := parseMeasuredPeak(flag, computeValue(o))
	if err != nil {
		return err
	}
	old, s, withNetwork, err := calibrationInputs(a, o, arg)
	if err != nil {
		return err
	}
	if msg := peakAboveGPU(flag, measured, s); msg != "" {
		return inputError{fmt.Errorf("--%s %s: %s", flag, computeValue(o), msg)}
	}
	// The peak zerosim run reports: the replay's busiest rank
	// (zero.Result.ReservedPeak), with the memory model's gather pool.
	r, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		return a.replayError(err)
	}
	fit, err := memory.FitAllocatorOverhead(s, slices.Max(r.PeakMemory), r.MemoryModel.GatherPool, measured, device)
	if err != nil {
		return inputError{fmt.Errorf("--%s %s: %v", flag, computeValue(o), unfittable(err, s, flag))}
	}
	if w := overheadWarning(fit.Overhead, device); w != "" {
		a.warnf("%s", w)
	}
	method := scenarios.CalMethodReserved
	if device {
		method = scenarios.CalMethodDevice
	}
	cm := &scenarios.CalMemory{AllocatorOverhead: fit.Overhead, Method: method, MeasuredBytes: measured, Scenario: s.Name, GPU: s.Cluster.GPU, CalModel: scenarios.CalModelOf(&s.Model), CalSetup: scenarios.CalSetupOf(s)}
	if err := writeCalibrationPart(o.file, old, func(c *scenarios.Calibration) { c.Memory = cm }); err != nil {
		return err
	}
	before := memory.AllocatorOverheadOf(s)
	rep := &reports.MemoryCalibration{File: o.file, Scenario: s.Name, Method: method, Measured: measured,
		Allocated: fit.Allocated, Pool: fit.Pool, PoolName: s.GatherPoolName(), Outside: fit.Outside,
		Before:      reports.MemoryPoint{Overhead: before, Reserved: r.ReservedPeak, Device: r.DevicePeak, Simulated: r.MemoryModel.AllocSim != nil},
		After:       reports.MemoryPoint{Overhead: fit.Overhead, Reserved: fit.Reserved, Device: fit.Device},
		KeptNetwork: old != nil && old.HasNetwork(), WithNetwork: withNetwork, KeptCompute: old != nil && old.Compute != nil}
	if a.format == "json" {
		return reports.WriteCalibrationJSON(w, &reports.CalibrationSummary{File: o.file, Memory: rep})
	}
	return reports.WriteMemoryCalibration(w, rep)
}

// overheadWarning says when a fitted allocator overhead lies above what
// published runs' reserved peaks put on their allocated peaks
// (scenarios.PublishedAllocatorOverheadMax): the measurement may be of
// another run (QA s28 L11: 0.527 fitted without a word). "" otherwise.
func overheadWarning(overhead float64, device bool) string {
	if overhead <= scenarios.PublishedAllocatorOverheadMax {
		return ""
	}
	what := "this run's max_memory_reserved (torch.cuda.max_memory_reserved of one step of this scenario's run: model, micro_batch, recompute)"
	if device {
		what = "this run's device memory (nvidia-smi during one step of this scenario's run: model, micro_batch, recompute; memory.runtime_context and memory.nccl_buffers)"
	}
	return fmt.Sprintf("the fitted allocator overhead %.4g is above the 0.04–%.2f of published runs (reserved/allocated 1.04–%.2f: docs/memory-model.md): check that it is %s",
		overhead, scenarios.PublishedAllocatorOverheadMax, 1+scenarios.PublishedAllocatorOverheadMax, what)
}

// peakAboveGPU says why a measured reserved (flag "reserved") or device
// peak above the scenario's GPU memory cannot have been measured on its
// GPU: torch.cuda.max_memory_reserved counts memory the caching allocator
// obtained with cudaMalloc, and nvidia-smi's used memory is part of the
// device's total, so neither exceeds the device. Fitting one gave
// overheads of several hundred percent (QA2 finding 2: 200 GiB on an
// 80 GiB GPU fitted 6.68). "" when measured fits, or the GPU's memory is
// unknown.
func peakAboveGPU(flag string, measured int64, s *scenarios.Scenario) string {
	capacity := int64(s.Cluster.GPUMemory)
	if capacity <= 0 || measured <= capacity {
		return ""
	}
	return fmt.Sprintf("above the %s GPU memory of %s's %s (cluster.gpu_memory), so not measured on its GPU: give the %s peak of one step of this run, or set cluster.gpu and cluster.gpu_memory to the GPU it ran on",
		units.Bytes(capacity), s.Name, s.Cluster.GPU, flag)
}

// unfittable rewords the fit's failure for a measurement below what the
// allocator holds at overhead 0.
func unfittable(err error, s *scenarios.Scenario, flag string) string {
	var b *memory.BelowFloorError
	if !errors.As(err, &b) {
		return plain(err)
	}
	size := func(n int64) string { return units.Bytes(n).String() }
	f := b.Fit
	least, parts := f.Floor, "the allocated peak "+size(f.Allocated)+" in 2 MiB segments"
	if f.Pool > 0 {
		parts += fmt.Sprintf(" + %s %s", s.GatherPoolName(), size(f.Pool))
	}
	fix := "check that it is torch.cuda.max_memory_reserved of one step of this scenario's run (model, micro_batch, recompute), or give what nvidia-smi shows with --device"
	if b.Device {
		least = f.Floor + f.Outside
		parts += fmt.Sprintf(" + CUDA context and NCCL buffers %s", size(f.Outside))
		fix = "check that it is the device memory of one step of this scenario's run (model, micro_batch, recompute; memory.runtime_context and memory.nccl_buffers), or give torch.cuda.max_memory_reserved with --reserved"
	}
	if f.Pool > 0 {
		fix += ", or set memory.host_lead below 1 (the gather pool assumes the host finished the forward before the GPU left its first units)"
	}
	return fmt.Sprintf("below %s, the least %s peak of %s (%s, at allocator overhead 0): the fitted overhead would be negative; %s",
		size(least), flag, s.Name, parts, fix)
}
