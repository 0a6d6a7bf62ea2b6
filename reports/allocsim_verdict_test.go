package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

// Where the reserve is simulated (PyTorch FSDP at stage 3), the simulated
// caching allocator runs within the GPU less the CUDA context and NCCL's
// buffers (the world communicator's 16 channels × 2 connections × 10 MiB
// = 320 MiB, collectives.BufferChannels, and the 400 MB context). The
// default example under FSDP1: on a 36.25 GiB GPU it fits, the
// allocator releasing its cache in the first steps only (device_fits true);
// on 36 GiB it releases it every step (device_fits false, the device peak
// within the GPU); on 32 GiB a request finds no room even after the
// release, so it does not fit, and every report says so: run's verdict and
// JSON, sweep's row and compare's verdict. (The sizes moved from 34.75,
// 33.4375 and 32.9375 GiB when FSDP1's root flat parameter began to hold
// its view gradients and parameters to the embedding's backward,
// memory/rootflat.go: the three regimes are the test's subject, not the
// sizes.)
func TestSimulatedAllocatorVerdicts(t *testing.T) {
	data, _ := scenarios.Example("default")
	for _, tc := range []struct {
		gpu              string
		fits, deviceFits bool
		says             string
	}{
		{"36.25GiB", true, true, "none in the last, to stay within"},
		{"36GiB", true, false, "2 times in the last, to stay within"},
		{"32GiB", false, false, "runs out of memory (fragmentation)"},
	} {
		sets := []string{"parallelism.zero_stage=3", "communication.boundary=fsdp1", "cluster.gpu_memory=" + tc.gpu}
		run := exampleRun(t, "default", sets...)
		if run.Result.MemoryModel.AllocSim == nil {
			t.Fatalf("%s: not simulated", tc.gpu)
		}
		capacity := int64(run.Scenario.Cluster.GPUMemory)
		v := run.Fit()
		if v.Fits != tc.fits || run.Result.DevicePeak > capacity {
			t.Errorf("%s: fits %v (%s), device %d of %d; want fits %v within the GPU", tc.gpu, v.Fits, v, run.Result.DevicePeak, capacity, tc.fits)
		}
		if !tc.fits && !strings.Contains(v.String(), tc.says) {
			t.Errorf("%s: verdict %q does not say %q", tc.gpu, v, tc.says)
		}
		if !slices.ContainsFunc(run.Warnings(), func(w string) bool { return strings.Contains(w, tc.says) }) {
			t.Errorf("%s: warnings %q do not say %q", tc.gpu, run.Warnings(), tc.says)
		}
		j := run.toJSON()
		if j.Fits != tc.fits || j.DeviceFits != tc.deviceFits {
			t.Errorf("%s: JSON fits %v device_fits %v, want %v %v", tc.gpu, j.Fits, j.DeviceFits, tc.fits, tc.deviceFits)
		}
		row, err := sweep.Measure(run.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		if row.Fits != tc.fits || row.DeviceFits != tc.deviceFits || row.DevicePeak != run.Result.DevicePeak {
			t.Errorf("%s: sweep row fits %v device_fits %v device %d; run %v %v %d", tc.gpu, row.Fits, row.DeviceFits, row.DevicePeak, tc.fits, tc.deviceFits, run.Result.DevicePeak)
		}
		runs, err := sweep.Compare(sweep.Vary(sweep.Source{File: "default.yaml", Data: data, Sets: sets[:2]}, "cluster.gpu_memory", []string{tc.gpu, "80GiB"}), sweep.CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := NewComparison("default", runs, false); c.Variants[0].Fits != tc.fits || !strings.Contains(c.Verdict, tc.says) {
			t.Errorf("%s: compare fits %v, verdict %q; want %v and %q", tc.gpu, c.Variants[0].Fits, c.Verdict, tc.fits, tc.says)
		}
	}
}
