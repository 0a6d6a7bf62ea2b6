package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateWarnsOfACutLog: head -20 of the XE9680 log (header on
// line 5, 14 rows to 64 KiB, no "# Avg bus bandwidth" line) was fitted
// and written with exit 0 and no word (qa22 L10). nccl-tests prints that line when a run
// completes, so calibrate still fits the rows it has and warns, naming the
// run and its last row.
func TestCalibrateWarnsOfACutLog(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "collectives", "testdata", "nccl-tests", "h100_2node_allreduce_default_xe9680_nccltests309.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.log")
	if err := os.WriteFile(cut, []byte(strings.Join(strings.SplitAfter(string(b), "\n")[:20], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI("calibrate", cut, "--gpus-per-node", "8", "--nodes", "2", "--file", filepath.Join(dir, "c.yaml"))
	want := "zerosim: warning: " + cut + ":5: the run has no \"# Avg bus bandwidth\" line after its last row (line 20, 65536 B), which nccl-tests prints once a run completes: the log was cut or the run stopped; its 14 rows are fitted (calibrate with the whole log)\n"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want exit 0 and %q", code, errOut, want)
	}
}
