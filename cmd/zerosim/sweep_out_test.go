package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepOutDevice: --out onto a device (/dev/null) or a FIFO writes
// there, as any command's output to a device (reports.WriteFileAtomic
// writes those in place); it is refused only as a file to overwrite or,
// with --resume, as not a regular file (qa16 L8).
func TestSweepOutDevice(t *testing.T) {
	grid := []string{"--grid", "parallelism.zero_stage=1,2"}
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--out", os.DevNull}, grid...)...); code != 0 || e != "" {
		t.Errorf("--out %s: exit %d: %s", os.DevNull, code, e)
	}
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--out", os.DevNull, "--resume"}, grid...)...); code != 2 || !strings.Contains(e, "is not a regular file") {
		t.Errorf("--resume --out %s: exit %d: %s", os.DevNull, code, e)
	}
	file := filepath.Join(t.TempDir(), "s.csv")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--out", file}, grid...)...); code != 2 || !strings.Contains(e, "exists and is not a zerosim sweep output (not overwritten: choose another --out or delete it)") {
		t.Errorf("--out onto a file: exit %d: %s", code, e)
	}
}
