package main

import (
	"strings"
	"testing"
)

// TestPlanAdviceDropsThePin: plan's "to fit" advice to search a key that a
// --set pinned says to drop the pin, as plan refuses the pin beside the
// search flag (qa19 L2: "search it: --stages 0,1,2,3" was then refused with
// "--set parallelism.zero_stage=0 pins parallelism.zero_stage, and --stages
// searches it"); the advised command runs.
func TestPlanAdviceDropsThePin(t *testing.T) {
	out, _, _ := runCLI("plan", "--set", "parallelism.zero_stage=0")
	flat := strings.Join(strings.Fields(out), " ")
	want := "ZeRO stage 3 (search it: drop --set parallelism.zero_stage=0, add --stages 0,1,2,3)"
	if !strings.Contains(flat, want) {
		t.Fatalf("plan --set parallelism.zero_stage=0 advises:\n%s\nwant %q", out, want)
	}
	if _, errOut, code := runCLI("plan", "--stages", "0,1,2,3"); code == 2 {
		t.Errorf("the advised plan --stages 0,1,2,3: exit 2, %s", errOut)
	}
}
