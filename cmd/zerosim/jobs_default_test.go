package main

import (
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestJobsFollowGOMAXPROCS: -j defaults to runtime.GOMAXPROCS(0), which
// follows a container's CPU limit (Go 1.25, golang/go#73193), not to
// runtime.NumCPU(), the node's CPUs: a pod limited to 4 CPUs on a 64-core
// node ran 64 replays at once (QA25 M5). The --jobs error names the same
// figure.
func TestJobsFollowGOMAXPROCS(t *testing.T) {
	procs := runtime.NumCPU() + 3 // differs from NumCPU on any machine
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	root := newRoot(&app{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	for _, name := range []string{"sweep", "plan", "compare"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Flags().Lookup("jobs").DefValue; got != strconv.Itoa(procs) {
			t.Errorf("%s -j defaults to %s; want GOMAXPROCS %d", name, got, procs)
		}
	}
	_, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", "parallelism.k=1", "-j", "0")
	if want := "(default " + strconv.Itoa(procs) + ": the CPUs this process may use, GOMAXPROCS)"; !strings.Contains(errOut, want) {
		t.Errorf("-j 0: %q; want it to name %q", errOut, want)
	}
}
