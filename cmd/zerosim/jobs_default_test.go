package main

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/sweep"
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
	if want := "(default " + strconv.Itoa(procs) + ": the CPUs this process may use, GOMAXPROCS, at most 1024)"; !strings.Contains(errOut, want) {
		t.Errorf("-j 0: %q; want it to name %q", errOut, want)
	}
}

// TestJobsDefaultCapped: a GOMAXPROCS above sweep.MaxJobs (the GOMAXPROCS
// variable set high, a host of more CPUs) made every sweep, plan and
// compare refuse "--jobs 1029: use 1 to 1024", a flag the user did not
// give; the default is capped at MaxJobs.
func TestJobsDefaultCapped(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(sweep.MaxJobs + 5))
	code, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--out", os.DevNull)
	if code != 0 || errOut != "" {
		t.Errorf("sweep without -j under GOMAXPROCS %d: exit %d, stderr %q", sweep.MaxJobs+5, code, errOut)
	}
	if got := sweep.DefaultJobs(); got != sweep.MaxJobs {
		t.Errorf("sweep.DefaultJobs() = %d; want %d", got, sweep.MaxJobs)
	}
}
