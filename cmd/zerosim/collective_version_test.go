package main

import (
	"strings"
	"testing"
)

// TestCollectiveNCCLVersion: --nccl-version (communication.nccl_version)
// names the NCCL release whose tuner times the collective, in the header;
// 2.21's NVLS tree over 2 × 8 H100 takes 25 µs NVLink + 2 × 14 µs network =
// 53 µs for 8 bytes (NVIDIA/nccl src/graph/tuning.cc at v2.21.5-1), the
// default 2.30's 25 + 2 × 20.9 = 66.8 µs. A version zerosim has no tuner of,
// or a release whose tuner changed between patch levels given without
// one, is one line naming the flag, exit 2.
func TestCollectiveNCCLVersion(t *testing.T) {
	args := []string{"--nodes", "2", "--gpus-per-node", "8", "--algo", "nvlstree", "--size", "8B", "--format", "nccl-tests"}
	for _, c := range []struct {
		flags  []string
		tuner  string
		timeUS string
	}{
		{[]string{"--nccl-version", "2.21.5"}, "NCCL 2.21's cost model", "53.00"},
		{[]string{"--set", "communication.nccl_version=2.21"}, "NCCL 2.21's cost model", "53.00"},
		{nil, "NCCL's cost model", "66.80"},
	} {
		out, errOut, code := runCollectiveCLI(t, append(append([]string{}, c.flags...), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.flags, code, errOut)
		}
		if !strings.Contains(out, c.tuner) || !strings.Contains(out, " "+c.timeUS+" ") {
			t.Errorf("%v: want %q and %s µs in\n%s", c.flags, c.tuner, c.timeUS, out)
		}
	}
	for _, c := range []struct{ v, want string }{
		{"2.17", "zerosim: --nccl-version: NCCL version \"2.17\": zerosim has the tuner of NCCL 2.19 to 2.30"},
		{"2.28", "zerosim: --nccl-version: NCCL version \"2.28\": NCCL 2.28 changed its tuner between patch releases (2.28.3, 2.28.7, 2.28.9): give the patch level"},
	} {
		out, errOut, code := runCollectiveCLI(t, append([]string{"--nccl-version", c.v}, args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("--nccl-version %s: exit %d, stdout %q, stderr %q; want exit 2 and one line %q…", c.v, code, out, errOut, c.want)
		}
	}
}

// TestCollectiveNCCLVersionOnAMD: an AMD GPU runs RCCL, not NCCL, and
// zerosim models one RCCL, not its releases: --nccl-version (or the key by
// --set) there is one line naming it with the fix, exit 2, nothing on
// stdout, where it used to time the 2 × 8 MI300X 4 MiB all-reduce at
// 677 µs under 2.21 against 321 µs, with a header naming only RCCL.
func TestCollectiveNCCLVersionOnAMD(t *testing.T) {
	amd := []string{"--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI", "--size", "4MiB"}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--nccl-version", "2.21"}, "zerosim: --nccl-version: nccl_version sets NCCL's tuner, but this gfx942 cluster runs RCCL, whose releases zerosim does not model (one RCCL cost model): drop --nccl-version\n"},
		{[]string{"--set", "communication.nccl_version=2.21"}, "zerosim: default.yaml: --set communication.nccl_version=2.21: nccl_version sets NCCL's tuner, but this gfx942 cluster runs RCCL, whose releases zerosim does not model (one RCCL cost model): drop nccl_version\n"},
	} {
		out, errOut, code := runCollectiveCLI(t, append(append([]string{}, c.flags...), amd...)...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.flags, code, out, errOut, c.want)
		}
	}
	// Without it the cluster times RCCL's pick (321 µs, the header names RCCL).
	out, errOut, code := runCollectiveCLI(t, append([]string{"--format", "nccl-tests"}, amd...)...)
	if code != 0 || !strings.Contains(out, "RCCL's cost model, gfx942") {
		t.Errorf("MI300X without --nccl-version: exit %d: %s\n%s", code, errOut, out)
	}
}
