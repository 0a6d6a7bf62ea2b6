package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanWarnsUncalibratedAlgorithms: one rule for the algorithms plan
// searches under a network calibration, whether --algorithms asks for an
// alpha–beta lowering or a --set communication.algorithm pins one (QA22
// L8: the --set gave no warning while --algorithms ring and run did); the
// default, auto, is calibrated and says nothing.
func TestPlanWarnsUncalibratedAlgorithms(t *testing.T) {
	logs := "../../collectives/testdata/nccl-tests/"
	cal := filepath.Join(t.TempDir(), "cal.yaml")
	if _, errOut, code := runCLI("calibrate", logs+"h100_2node_allreduce_default_xe9680_nccltests309.log", logs+"h100_4node_allreduce_default_nccltests309.log", "--gpus-per-node", "8", "--file", cal); code != 0 {
		t.Fatalf("calibrate: exit %d: %s", code, errOut)
	}
	base := []string{"plan", "--set", "communication.calibration=" + cal, "--stages", "3", "--recompute", "full"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "communication.algorithm=ring"}, "zerosim: warning: --set communication.algorithm=ring: an alpha–beta lowering that the network part of " + cal + " does not correct; every row is timed uncalibrated (set communication.algorithm=auto to time the collectives as calibrated)\n"},
		{[]string{"--algorithms", "auto,ring"}, "zerosim: warning: --algorithms ring: alpha–beta lowerings that the network part of " + cal + " does not correct; their rows are ranked uncalibrated against the calibrated auto\n"},
		{nil, ""},
	} {
		out, errOut, code := runCLI(append(append([]string{}, base...), c.args...)...)
		if code != 0 || errOut != c.want || !strings.HasPrefix(out, "# zerosim plan: ") {
			t.Errorf("plan %v: exit %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
}
