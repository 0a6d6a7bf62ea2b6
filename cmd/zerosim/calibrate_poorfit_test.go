package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/internal/golden"
)

// TestCalibrateWarnsPoorFit (QA17 M5): the A3 Mega TCPXO log read as the
// default NDR cluster fits intra efficiency 0.484 and +23.22 µs per
// inter hop (the fit's values, read from its output, not derived) and
// still misses by 46.6 % at 16 MiB: the log's 951.6 µs there (the faster
// of its out-of-place and in-place times, as calibrate reads a row)
// against the fitted model's 508.20; calibrate says so and names the link
// preset. With --set cluster.inter.preset=TCPXO, and for the H100 NDR
// logs, it is silent.
func TestCalibrateWarnsPoorFit(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join("..", "..", "collectives", "testdata", "nccl-tests")
	tcpxo := filepath.Join(logs, "h100_2node_allreduce_gcp_a3mega_tcpxo.log")
	f, err := os.Open(tcpxo)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := collectives.ParseLogs("a3mega", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	measured := 0.0
	for _, r := range parsed[0].Rows {
		if r.Size == 16<<20 {
			measured = min(r.Time, r.InTime)
		}
	}
	_, errOut, code := runCLI("calibrate", tcpxo, "--gpus-per-node", "8", "--file", filepath.Join(dir, "a.yaml"))
	m := regexp.MustCompile(`the fit misses by up to ([0-9.]+) % \(16777216 B: ([0-9.]+) µs modelled, ([0-9.]+) measured`).FindStringSubmatch(errOut)
	if code != 0 || m == nil || m[3] != fmt.Sprintf("%.2f", measured) || measured == 0 ||
		!strings.Contains(errOut, "it needs intra efficiency 0.484, intra hop +12.37 µs, inter hop +23.22 µs") || !strings.Contains(errOut, "--set cluster.inter.preset=TCPXO") {
		t.Fatalf("no preset: exit %d, stderr %q; want the log's %.2f µs at 16 MiB", code, errOut, measured)
	}
	if model, _ := strconv.ParseFloat(m[2], 64); m[1] != fmt.Sprintf("%.1f", 100*math.Abs(model/measured-1)) {
		t.Errorf("the miss %s %%, want |%s / %.2f − 1|", m[1], m[2], measured)
	}
	// docs/collectives.md quotes the miss and the fit.
	golden.CheckQuotes(t, "../../docs/collectives.md", "TestCalibrateWarnsPoorFit (zerosim calibrate of the A3 Mega log without its preset)",
		"(the A3 Mega log without its preset: "+m[1]+" % at 16 MiB, intra efficiency 0.484, +23.22 µs per inter hop)")
	for _, args := range [][]string{{tcpxo, "--set", "cluster.inter.preset=TCPXO"},
		{filepath.Join(logs, "h100_2node_allreduce_default_xe9680_nccltests309.log"), filepath.Join(logs, "h100_4node_allreduce_default_nccltests309.log")},
		{filepath.Join(logs, "h100_4node_allreduce_default_nccltests309.log")}} {
		_, errOut, code := runCLI(append(append([]string{"calibrate"}, args...), "--gpus-per-node", "8", "--file", filepath.Join(dir, "b.yaml"))...)
		if code != 0 || strings.Contains(errOut, "misses") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
