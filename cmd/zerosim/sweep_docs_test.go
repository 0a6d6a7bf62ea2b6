package main

import (
	"os"
	"strings"
	"testing"
)

// TestSweepsDoc runs every ```console block of docs/sweeps.md ("$ zerosim
// …" then its stdout) and compares the output, so the page cannot drift
// from the code.
func TestSweepsDoc(t *testing.T) {
	data, err := os.ReadFile("../../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```console\n")[1:]
	if len(blocks) < 3 {
		t.Fatalf("%d console blocks, want the compare, sweep and fit examples", len(blocks))
	}
	for _, b := range blocks {
		b = b[:strings.Index(b, "```")]
		cmdLine, want, _ := strings.Cut(b, "\n")
		args := strings.Fields(strings.TrimPrefix(cmdLine, "$ zerosim "))
		out, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", cmdLine, code, errOut)
			continue
		}
		if out != want {
			t.Errorf("%s: output differs from docs/sweeps.md:\n%s", cmdLine, out)
		}
	}
}
