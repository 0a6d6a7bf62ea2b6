//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFailureNamesFlag: a file the file system refuses is named with
// the flag that gave it (QA25 L16: "cannot write /dev/full: …" named no
// flag, and calibrate --file /dev/full read the device as a calibration
// file "larger than 16 MiB").
func TestWriteFailureNamesFlag(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"run", "seed002-tiny", "--trace", "/dev/full"}, "zerosim: --trace /dev/full: cannot write it: no space left on device (free some space there, or write elsewhere)"},
		{[]string{"calibrate", "default", "--step-time", "0.5s", "--file", "/dev/full"}, "zerosim: --file /dev/full: cannot write it: no space left on device"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestMergeWriteFailureNamesOut: merge --out on a full device named
// neither the flag nor a fix ("merge: writing /dev/full: write /dev/full:
// no space left on device"), where run's and sweep's --out do.
func TestMergeWriteFailureNamesOut(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	shard := filepath.Join(t.TempDir(), "m.csv")
	if code, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", shard); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	args := []string{"merge", shard, "--out", "/dev/full"}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, "zerosim: --out /dev/full: cannot write it: no space left on device (free some space there, or write elsewhere)")
}
