package main

import (
	"strings"
	"testing"
)

// TestPlanAlgorithmsHelp: --algorithms lists the algorithms plan searches
// in place of auto (as --stages and --k list theirs), so plan --help says
// that, and how to keep auto, instead of saying the lowerings are added
// (qauser30 L1: "--algorithms ring,hierarchical,tree adds ..." dropped
// auto, and the q235 plan's best fell from 2,311 to 2,241 tokens/s).
func TestPlanAlgorithmsHelp(t *testing.T) {
	help, _, code := sweepCLI(t, "plan", "--help")
	if code != 0 {
		t.Fatalf("plan --help: exit %d", code)
	}
	flat := strings.Join(strings.Fields(help), " ")
	for _, want := range []string{
		"--algorithms lists the algorithms searched instead, auto among them only when listed",
		"--algorithms auto,ring,hierarchical,tree adds",
		"in place of the default auto",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("plan --help does not say %q:\n%s", want, help)
		}
	}
	if strings.Contains(flat, "--algorithms ring,hierarchical,tree adds") {
		t.Errorf("plan --help still says a list without auto adds to it:\n%s", help)
	}
}
