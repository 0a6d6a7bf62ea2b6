package main

import (
	"strings"
	"testing"
)

// TestAMDReportsSayAMDWords (QA11 #7): the reports of a run on MI300X name
// the HIP context, RCCL's buffers and choice, rocm-smi and the xGMI wire,
// not CUDA, NCCL, nvidia-smi or NVLink: run's verdict, phase table and
// profiler lines, memory's notes and fit's header. The memory component
// and key nccl_buffers keep their name (a scenario key). The same reports
// on the H100 keep NVIDIA's words (and the goldens in reports/testdata
// their bytes).
func TestAMDReportsSayAMDWords(t *testing.T) {
	amd := []string{"--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI"}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"run", []string{"; with the HIP context and RCCL's buffers 55.15 GiB (28.8 %)", "│ xgmi wire  │ network wire │",
			"(under auto, RCCL's choice at each size)", "wire: xgmi 376.54 GiB (88.9 %)",
			"device 63.27 GiB (rocm-smi: + HIP context, RCCL buffers)"}},
		{"memory", []string{"device 145.34 GiB (+ HIP context, RCCL buffers)"}},
		{"fit", []string{"\n# fits and peaks are the replayed step's, as zerosim run --require-fit judges them (the peak with the HIP context and RCCL's buffers within the GPU); "}},
	} {
		code, out, errOut := runMain(t, "", append([]string{tc.cmd}, amd...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.cmd, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s on MI300X: no %q", tc.cmd, w)
			}
		}
		for _, nv := range []string{"CUDA", "NCCL", "nvidia-smi", "nvlink", "NVLink"} {
			if strings.Contains(out, nv) {
				t.Errorf("%s on MI300X says %q", tc.cmd, nv)
			}
		}
		_, h100, _ := runMain(t, "", tc.cmd)
		for _, nv := range []string{"CUDA context", "NCCL's buffers"} {
			if tc.cmd != "memory" && !strings.Contains(h100, nv) {
				t.Errorf("%s on H100: no %q", tc.cmd, nv)
			}
		}
	}
}
