package main

import (
	"encoding/json"
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

// TestRunJSONCarriesDeviceWarning (QA14 #8): at seq_len 7168 on the
// default 2 × 8 H100 the step's device need with the allocator's reserve
// exceeds the GPU (device_fits false); run's table warns, and its JSON
// mode carries the same text in warnings and on stderr, as memory's JSON
// mode prints it on stderr.
func TestRunJSONCarriesDeviceWarning(t *testing.T) {
	const w = "the device needs 73.40 GiB of 79.65 GiB (the allocated peak with the CUDA context and NCCL's buffers), 84.27 GiB with the caching allocator's usual reserve: expect allocator retries"
	_, table, _ := runMain(t, "", "run", "--set", "model.seq_len=7168")
	if !strings.Contains(table, "warning: "+w) {
		t.Fatalf("run's table: no warning %q", w)
	}
	code, out, errOut := runMain(t, "", "run", "--set", "model.seq_len=7168", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var j struct {
		Warnings   []string `json:"warnings"`
		DeviceFits bool     `json:"device_fits"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.DeviceFits || len(j.Warnings) != 1 || !strings.HasPrefix(j.Warnings[0], w) {
		t.Errorf("device_fits %v, warnings %q; want false and %q", j.DeviceFits, j.Warnings, w)
	}
	if !strings.HasPrefix(errOut, "zerosim: warning: "+w) {
		t.Errorf("stderr %q", errOut)
	}
	_, _, memErr := runMain(t, "", "memory", "--set", "model.seq_len=7168", "--format", "json")
	if !strings.Contains(memErr, w) {
		t.Errorf("memory's stderr %q", memErr)
	}
}
