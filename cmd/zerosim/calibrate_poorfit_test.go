package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateWarnsPoorFit (QA17 M5): the A3 Mega TCPXO log read as the
// default NDR cluster fits intra efficiency 0.484 and +23.22 µs per
// inter hop and still misses by 46.6 % at 16 MiB; calibrate says so and
// names the link preset. With --set cluster.inter.preset=TCPXO, and for
// the H100 NDR logs, it is silent.
func TestCalibrateWarnsPoorFit(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join("..", "..", "collectives", "testdata", "nccl-tests")
	tcpxo := filepath.Join(logs, "h100_2node_allreduce_gcp_a3mega_tcpxo.log")
	_, errOut, code := runCLI("calibrate", tcpxo, "--gpus-per-node", "8", "--file", filepath.Join(dir, "a.yaml"))
	if code != 0 || !strings.Contains(errOut, "the fit misses by up to 46.6 % (16777216 B: ") ||
		!strings.Contains(errOut, "it needs intra efficiency 0.484, intra hop +12.37 µs, inter hop +23.22 µs") || !strings.Contains(errOut, "--set cluster.inter.preset=TCPXO") {
		t.Errorf("no preset: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{{tcpxo, "--set", "cluster.inter.preset=TCPXO"},
		{filepath.Join(logs, "h100_2node_allreduce_default_xe9680_nccltests309.log"), filepath.Join(logs, "h100_4node_allreduce_default_nccltests309.log")},
		{filepath.Join(logs, "h100_4node_allreduce_default_nccltests309.log")}} {
		_, errOut, code := runCLI(append(append([]string{"calibrate"}, args...), "--gpus-per-node", "8", "--file", filepath.Join(dir, "b.yaml"))...)
		if code != 0 || strings.Contains(errOut, "misses") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
