package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCalibrateSharedNICsPartNode (rev23 LOW-6): a log of 4 of each 8-GPU
// node's GPUs (devices 0–3, which share 2 of the node's 4 NICs), written
// by `collective --group` on that cluster from the nominal model, is
// fitted at the 2 NICs its devices block names: the nominal model back
// (inter efficiency 1.000, as TestNCCLTestsRoundTrip's whole nodes), and
// the curve records min_nics: 2. Fitted at min(4 NICs, 4 ranks) = 4 NICs,
// as before, it took inter efficiency 0.519 and intra 0.499 and warned of
// an implausible fit. The same log without its devices block warns that
// its NICs are unknown and keeps the rule's 4.
func TestCalibrateSharedNICsPartNode(t *testing.T) {
	shared := []string{"--set", "cluster.nics=per_node", "--set", "cluster.nics_per_node=4"}
	log, errOut, code := runCollectiveCLI(t, append([]string{"--group", "0,1,2,3,8,9,10,11", "--size", "1MiB:4GiB", "--format", "nccl-tests"}, shared...)...)
	if code != 0 {
		t.Fatalf("collective: exit %d: %s", code, errOut)
	}
	var noDevs []string
	for _, l := range strings.SplitAfter(log, "\n") {
		if !strings.Contains(l, "Using devices") && !strings.HasPrefix(l, "#  Rank ") {
			noDevs = append(noDevs, l)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, log string
		flags     []string
		fit       string
		minNICs   bool
		warn      string
	}{
		{"devices", log, nil, "fitted on every log: intra efficiency 1.000, inter efficiency 1.000", true, ""},
		{"no devices", strings.Join(noDevs, ""), []string{"--nodes", "2", "--gpus-per-node", "4"}, "inter efficiency 0.519",
			false, "a run of 4 ranks a node on nodes of 8 GPUs sharing 4 NICs, and its \"# Using devices\" block does not say which GPUs"},
	} {
		file, cal := filepath.Join(dir, c.name+".log"), filepath.Join(dir, c.name+".yaml")
		if err := os.WriteFile(file, []byte(c.log), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI(append(append([]string{"calibrate", file, "--file", cal}, c.flags...), shared...)...)
		if code != 0 || !strings.Contains(out, c.fit) {
			t.Errorf("%s: exit %d, %s\n%s; want %q", c.name, code, errOut, out, c.fit)
		}
		if (c.warn == "") != !strings.Contains(errOut, "does not say which GPUs") || c.warn != "" && !strings.Contains(errOut, c.warn) {
			t.Errorf("%s: stderr %q; want warning %q", c.name, errOut, c.warn)
		}
		data, _ := os.ReadFile(cal)
		if got := regexp.MustCompile(`min_nics: 2\n`).Match(data); got != c.minNICs {
			t.Errorf("%s: min_nics: 2 in the file %v, want %v:\n%s", c.name, got, c.minNICs, data)
		}
	}
}
