package main

import (
	"strings"
	"testing"
)

// TestRunWarningsOnStderr: in table mode, as with --format json, run
// prints the replay's warnings on stderr as "zerosim: warning: …" and
// not in the report on stdout (QA22 M5: the straggler warning was the
// report's line 107 and stderr was empty, so zerosim run x.yaml >
// report.txt hid it).
func TestRunWarningsOnStderr(t *testing.T) {
	const want = "zerosim: warning: straggler: rank 3 (compute 445.633ms vs the other ranks' median 356.506ms) kept the others waiting 1.157s in total\n"
	for _, format := range []string{"table", "json"} {
		out, stderr, code := runCLI("run", "--set", "cluster.gpu_overrides=[{rank: 3, speed: 0.8}]", "--format", format)
		inTable := format == "table" && strings.Contains(out, "straggler: rank 3") // result.json lists it in warnings[]
		if code != 0 || stderr != want || inTable {
			t.Errorf("--format %s: exit %d, stderr %q, straggler warning in the table %v; want only %q on stderr", format, code, stderr, inTable, want)
		}
	}
}
