package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepPlanCalibrationWarnings (qa20 M4): sweep prints the replay's
// warnings on the network calibration once per distinct message with the
// points that gave it (a row priced without the measured curves, a value
// no hardware reaches), and plan prints the latter; both were silent. The
// file was fitted on 8 × 50 GB/s NICs per node, the default example's.
func TestSweepPlanCalibrationWarnings(t *testing.T) {
	dir := t.TempDir()
	const data = "version: 1\nhardware: {arch: Hopper, nvls: true, intra_gbytes_per_s: 450, nic_gbytes_per_s: 50, nics_per_node: 8, inter_latency_us: 0, intra_latency_us: 0}\n" +
		"params: {intra_efficiency: 1, inter_efficiency: EFF, intra_hop_latency_us: 0, inter_hop_latency_us: 0, fixed_cost_us: 0}\n" +
		"curves:\n  - {op: allreduce, ranks: 16, nodes: 2, sizes: [1048576, 2097152], times_us: [500, 600]}\n"
	cal := func(eff string) string {
		path := filepath.Join(dir, "c"+eff+".yaml")
		if err := os.WriteFile(path, []byte(strings.Replace(data, "EFF", eff, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, fast := cal("1"), cal("5")
	_, errOut, code := runCLI("sweep", "default", "--set", "communication.calibration="+good, "--grid", "cluster.inter.bandwidth=100Gbps,400Gbps", "--out", os.DevNull)
	want := "zerosim: warning: point 0 (cluster.inter.bandwidth=100Gbps): the network part of " + good + " was fitted on Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, this cluster is Hopper, NVLink 450 GB/s, 8 × 12.5 GB/s NICs per node, NVLS: its efficiencies and latencies are applied to this cluster's links, its measured curves are not used (calibrate on this cluster)\n"
	if code != 0 || errOut != want {
		t.Errorf("sweep over the NICs: exit %d, stderr %q, want %q", code, errOut, want)
	}
	unphysical := fast + ": params.inter_efficiency: inter efficiency 5.000 (480 % of a NIC's line rate): no hardware is that fast; collectives it times are too fast (recalibrate, or fix the value)\n"
	_, errOut, code = runCLI("sweep", "default", "--set", "communication.calibration="+fast, "--grid", "parallelism.k=1,2", "--out", os.DevNull)
	if code != 0 || errOut != "zerosim: warning: points 0–1: "+unphysical {
		t.Errorf("sweep with inter_efficiency 5: exit %d, stderr %q, want it once for points 0–1", code, errOut)
	}
	_, errOut, code = runCLI("plan", "default", "--set", "communication.calibration="+fast)
	if code != 0 || strings.Count(errOut, "no hardware is that fast") != 1 || !strings.Contains(errOut, "zerosim: warning: "+unphysical) {
		t.Errorf("plan with inter_efficiency 5: exit %d, stderr %q, want the warning once", code, errOut)
	}
}
