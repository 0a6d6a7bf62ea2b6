package main

import (
	"strings"
	"testing"
)

// TestOffloadHostWords (QA14 #6): with offload on, run's cluster line
// names cluster.host.cpu only when the user's CPU differs from the GPU's
// system's (offload fills the key with the system's), and the host side
// names the GB200's host link NVLink-C2C (the Grace superchip's, 450 GB/s
// per direction shared by its 2 GPUs: NVIDIA GB200 NVL72 specifications,
// scenarios.graceBlackwell), PCIe on the H100's DGX or when a PCIe preset
// is given.
func TestOffloadHostWords(t *testing.T) {
	gb := []string{"--set", "cluster.gpu=GB200", "--set", "cluster.gpus_per_node=4", "--set", "parallelism.dp=auto"}
	for _, tc := range []struct {
		sets []string
		want []string
	}{
		{nil, []string{"intel host CPU (the GPU's system)", "host side (per rank): PCIe down ", ", PCIe up "}},
		{[]string{"--set", "cluster.host.cpu=amd"}, []string{"amd host CPU (cluster.host.cpu)", "host side (per rank): PCIe down "}},
		{gb, []string{"arm host CPU (the GPU's system)", "host side (per rank): NVLink-C2C down ", ", NVLink-C2C up "}},
		{append(append([]string{}, gb...), "--set", "cluster.host.pcie.preset=PCIe5"), []string{"host side (per rank): PCIe down "}},
	} {
		args := append([]string{"run", "--set", "offload.optimizer=cpu"}, tc.sets...)
		code, out, errOut := runMain(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q", args, w)
			}
		}
	}
}
