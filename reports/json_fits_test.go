package reports

import "testing"

// TestResultJSONFits: result.json carries the run's verdict, as sweep rows,
// compare variants and plan rows do (QA3 s16 finding 11s: a script had to
// recompute memory.peak_bytes ≤ memory_model.gpu_memory to get what
// --require-fit decides): fits is the highest rank peak and what the device
// needs there (+ CUDA context and NCCL's buffers, zero.Result.DeviceNeed)
// against the GPU's memory, device_fits the device peak's (+ the
// allocator's reserve). Default: peak 58,143,247,360 B, need
// 58,879,083,520 B, device 67,601,138,688 B (TestFitCountsDeviceNeed).
func TestResultJSONFits(t *testing.T) {
	for _, tc := range []struct {
		name             string
		sets             []string
		fits, deviceFits bool
	}{
		{"default, 80 GiB", nil, true, true},
		{"64 GB: allocated fits, device does not", []string{"cluster.gpu_memory=64GB"}, true, false},
		{"58.8 GB: allocated fits, its need does not", []string{"cluster.gpu_memory=58.8GB"}, false, false},
		{"58 GB", []string{"cluster.gpu_memory=58GB"}, false, false},
		{"stage 0", []string{"parallelism.zero_stage=0"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := exampleRun(t, "default", tc.sets...)
			j := run.toJSON()
			if j.Fits != tc.fits || j.DeviceFits != tc.deviceFits {
				t.Errorf("fits %v, device_fits %v; want %v, %v", j.Fits, j.DeviceFits, tc.fits, tc.deviceFits)
			}
			var peak int64
			for _, rk := range j.Ranks {
				peak = max(peak, rk.PeakMemory)
			}
			capacity := int64(run.Scenario.Cluster.GPUMemory)
			if need := run.Result.DeviceNeed; j.Fits != (peak <= capacity && need <= capacity) || j.Fits != run.Fit().Fits {
				t.Errorf("fits %v against the ranks' peak %d and need %d of %d and run's verdict %v", j.Fits, peak, need, capacity, run.Fit().Fits)
			}
			if j.DeviceFits != (j.DevicePeakBytes <= capacity) {
				t.Errorf("device_fits %v against %d of %d", j.DeviceFits, j.DevicePeakBytes, capacity)
			}
		})
	}
}
