package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectiveCalibrationHardware (qa20 M3): collective --calibration
// says in its header that a calibration times the collectives; on the
// hardware it was fitted on the measured curve is used (500 µs, the
// file's row), on another (the NICs at 12.5 instead of 50 GB/s) the header
// says its curves are not used and a warning names both, as run does; an
// alpha–beta --algo warns that the file is not used.
func TestCollectiveCalibrationHardware(t *testing.T) {
	cal := filepath.Join(t.TempDir(), "c.yaml")
	data := "version: 1\nhardware: {arch: Hopper, nvls: true, intra_gbytes_per_s: 450, nic_gbytes_per_s: 50, nics_per_node: 8, inter_latency_us: 0, intra_latency_us: 0}\n" +
		"params: {intra_efficiency: 1, inter_efficiency: 1, intra_hop_latency_us: 0, inter_hop_latency_us: 0, fixed_cost_us: 0}\n" +
		"curves:\n  - {op: allreduce, ranks: 16, nodes: 2, sizes: [1048576, 2097152], times_us: [500, 600]}\n"
	if err := os.WriteFile(cal, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args         []string
		header, warn string
		time         string
	}{
		{nil, "# allreduce (auto: NCCL's cost model calibrated by " + cal + ") over 16 ranks", "", "500.00"},
		{[]string{"--inter-bw", "100Gbps"}, "# allreduce (auto: NCCL's cost model calibrated by " + cal + " of other hardware, its measured curves not used) over",
			"zerosim: warning: --calibration " + cal + ": fitted on Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, this cluster is Hopper, NVLink 450 GB/s, 8 × 12.5 GB/s NICs per node, NVLS: its efficiencies and latencies are applied to this cluster's links, its measured curves are not used (calibrate on this cluster)\n", ""},
		// Another NCCL release alone (final read M9: two identical
		// descriptions, the release unnamed).
		{[]string{"--nccl-version", "2.21"}, "# allreduce (auto: NCCL 2.21's cost model calibrated by " + cal + " of other hardware, its measured curves not used) over",
			"zerosim: warning: --calibration " + cal + ": fitted on Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, NCCL 2.30, this cluster is Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, NCCL 2.21: its efficiencies and latencies are applied to this cluster's links, its measured curves are not used (time under NCCL 2.30 as fitted (communication.nccl_version, collective --nccl-version), or calibrate on logs of this release)\n", ""},
		{[]string{"--algo", "alphabeta-ring"}, "# allreduce (alphabeta-ring: zerosim's alpha–beta lowering) over",
			"zerosim: warning: --calibration " + cal + ": --algo alphabeta-ring runs zerosim's alpha–beta lowering, which the calibration (fitted to NCCL's cost model) does not correct: it is not used (drop --algo, or pin NCCL's with --algo ring or tree, to time as calibrated)\n", ""},
	} {
		out, errOut, code := runCollectiveCLI(t, append(c.args, "--calibration", cal, "--size", "1MiB")...)
		if code != 0 || !strings.HasPrefix(out, c.header) || errOut != c.warn {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want header %q and stderr %q", c.args, code, out, errOut, c.header, c.warn)
		}
		if c.time != "" && !strings.Contains(out, " "+c.time+" ") || c.time == "" && strings.Contains(out, " 500.00 ") {
			t.Errorf("%v: %s: measured 500 µs used %t", c.args, out, c.time != "")
		}
	}
}
