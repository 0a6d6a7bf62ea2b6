//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepResumeWriteErrorKeepsFile (review rev24, mutation of
// sweepOutput: a --resume file counted as the sweep's own): a resumed
// sweep whose first new row the file system refuses exits 2 naming the
// file, and leaves the file with the rows an earlier run wrote. Removing
// it, as a new file without a row is removed, would lose them.
func TestSweepResumeWriteErrorKeepsFile(t *testing.T) {
	s := filepath.Join(t.TempDir(), "s.csv")
	args := []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--grid", "communication.bucket_size=1MB,2MB,3MB", "--out", s}
	if code, _, errOut := runMain(t, "", args...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	full, err := os.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	cut := strings.Join(lines[:4], "") // the meta line, the header and two rows
	if err := os.WriteFile(s, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := fullChild(t, len(cut), append(args, "--resume")...)
	if code != exitInput || out != "" || !strings.HasPrefix(errOut, "zerosim: --out "+s+": cannot write it: file too large") {
		t.Errorf("resume on a full file: exit %d, stdout %q, stderr %q; want exit 2 naming %s", code, out, errOut, s)
	}
	if got, err := os.ReadFile(s); err != nil || string(got) != cut {
		t.Errorf("resume on a full file: the rows written before are gone (%v): %q", err, got)
	}
}

// TestSweepEveryPointFailsAlgorithm (review rev24, mutation of sweep.PinError:
// communication.algorithm left out): a sweep whose grid sets
// communication.algorithm to nvls on 2 × 8 H100 (NVLS does not run across
// nodes, so no point's reduce-scatters have an algorithm) is refused
// before the first row, exit 2, one line naming the key; not a file of
// error rows with exit 0.
func TestSweepEveryPointFailsAlgorithm(t *testing.T) {
	code, out, errOut := runMain(t, "", "sweep", "--grid", "communication.algorithm=nvls", "--grid", "communication.bucket_size=25MB,40MB")
	if code != exitInput || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "communication.algorithm: the step's reduce-scatters: nvls cannot run reducescatter over 16 ranks on 2 nodes") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTraceLinkToOutputFile (review rev24, mutation of samePath: the
// same-file check dropped, the absolute paths compared only): --trace
// t.json, a symbolic link to DIR/result.json that an earlier run left,
// names the file -o DIR writes result.json to; the trace would be
// written through the link and then replaced. Refused before anything is
// written, exit 2.
func TestTraceLinkToOutputFile(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A trace (an earlier run --trace out/result.json): a result.json
	// there is refused sooner, as not a trace (checkTarget).
	if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(traceStart), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(base, "t.json")
	if err := os.Symlink(filepath.Join(dir, "result.json"), tr); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir, "--trace", tr)
	want := "zerosim: --trace " + tr + ": -o " + dir + " writes result.json there too, over the trace (give the trace another name, or drop --trace: -o writes trace.json)\n"
	if code != exitInput || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit 2 and %q", code, len(out), errOut, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "result.json")); string(b) != traceStart {
		t.Errorf("result.json was written: %d bytes", len(b))
	}
}

// TestTraceThroughDirLink (rev24 L): -o link --trace real/result.json,
// link a symbolic link to the directory real and neither file there yet,
// names one file twice; refused before anything is written, exit 2.
func TestTraceThroughDirLink(t *testing.T) {
	base := t.TempDir()
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(real, "result.json")
	code, out, errOut := runMain(t, "", "run", "seed002-tiny", "-o", link, "--trace", tr)
	if code != exitInput || out != "" || !strings.HasPrefix(errOut, "zerosim: --trace "+tr+": -o "+link+" writes result.json there too") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
	if entries, _ := os.ReadDir(real); len(entries) != 0 {
		t.Errorf("%d files were written", len(entries))
	}
}

// TestSweepFullDeviceNoResumeAdvice (final read R2): a sweep into
// /dev/full writes no row, so it is not told to continue with --resume.
func TestSweepFullDeviceNoResumeAdvice(t *testing.T) {
	code, out, errOut := runMain(t, "", "sweep", "--grid", "parallelism.k=1,2", "--out", "/dev/full")
	if code != exitInput || out != "" || errOut != "zerosim: --out /dev/full: cannot write it: no space left on device (free some space there, or write elsewhere)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// traceStart is how a trace zerosim wrote begins (reports.IsRunTrace).
const traceStart = "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"scenario\":\"default\"}}\n"
