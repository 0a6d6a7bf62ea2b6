//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepResumeSortRefused: when the file system refuses the sorted
// file (here a file size limit below the output's size, as a full disk
// refuses it), --resume says so in one line naming --out, exit 2, and
// keeps the file it had, every row in, with no temporary file left; the
// same --resume afterwards sorts it.
func TestSweepResumeSortRefused(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "s.csv")
	args := append([]string{"sweep", "seed002-tiny"}, smallGrids...)
	if _, e, code := sweepCLI(t, append(args, "--out", s)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, e)
	}
	full, _ := os.ReadFile(s)
	// Row 0 moved to the end: complete, out of grid order.
	lines := strings.SplitAfter(string(full), "\n")
	unordered := strings.Join(lines[:2], "") + strings.Join(lines[3:], "") + lines[2]
	if err := os.WriteFile(s, []byte(unordered), 0o644); err != nil {
		t.Fatal(err)
	}
	resume := append(args, "--out", s, "--resume")
	code, out, errOut := fullChild(t, len(full)/2, resume...)
	want := "zerosim: --out " + s + ": cannot write its rows sorted into grid order: file too large (raise the file size limit, ulimit -f, or write elsewhere); every row is kept, out of grid order: run the same sweep with --resume again to sort it\n"
	if code != exitInput || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
	if got, _ := os.ReadFile(s); string(got) != unordered {
		t.Error("the refused sort changed the file")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
	if _, e, code := sweepCLI(t, resume...); code != 0 {
		t.Fatalf("resume again: exit %d: %s", code, e)
	}
	if got, _ := os.ReadFile(s); string(got) != string(full) {
		t.Error("resumed again, the file is not the uninterrupted one")
	}
}
