package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPinsRefusedAtLoad (final read R2 F1): a file whose nccl_algo leaves
// the step's reduce-scatters no algorithm on its 2 × 8 H100 (PAT runs
// over one GPU per node) said "ok" in validate, then run exited 2 from the
// replay naming no position. validate, run, plan and sweep (over a grid
// that does not touch the pins) now refuse it at the key, with the fix:
// exit 2, one line, nothing on stdout. A sweep whose grid gives some
// points an algorithm keeps those rows: the Ring point's step is the
// replay's, to the picosecond.
func TestPinsRefusedAtLoad(t *testing.T) {
	def, err := os.ReadFile("../../scenarios/examples/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pat.yaml")
	text := string(def) + "  nccl_algo: PAT\n"
	line := strings.Count(text, "\n")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "zerosim: " + file + ":" + strconv.Itoa(line) + ":3: communication.nccl_algo: the step's reduce-scatters: no algorithm/protocol available for reducescatter over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to PAT. (PAT runs all-gather and reduce-scatter over one GPU per node, Simple only): add Ring (nccl_algo: Ring,PAT), or drop nccl_algo\n"
	for _, args := range [][]string{
		{"validate", file}, {"run", file}, {"plan", file, "--global-batch", "64"},
		{"sweep", file, "--grid", "communication.bucket_size=25MB,40MB"},
	} {
		code, out, errOut := runMain(t, "", args...)
		if code != 2 || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%s\nwant\n%s", args, code, out, errOut, want)
		}
	}
	code, out, errOut := runMain(t, "", "sweep", file, "--grid", "communication.nccl_algo=PAT,Ring")
	if rows := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(rows) != 4 || !strings.Contains(rows[2], `"`+file+`: --grid communication.nccl_algo=PAT: communication.nccl_algo: the step's reduce-scatters`) ||
		!strings.HasPrefix(rows[3], "1,Ring,"+strconv.FormatInt(int64(replayDefault(t, "communication.nccl_algo=Ring").StepTime), 10)+",") {
		t.Errorf("sweep over nccl_algo: exit %d, stderr %s\n%s", code, errOut, out)
	}
}
