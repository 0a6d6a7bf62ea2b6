package main

import (
	"strings"
	"testing"
)

// TestNVLTrayWarningShows (QA13 F1): the load warning for a GB200 cluster
// described a tray per node reaches stderr in run, compare and sweep
// (per point), at the key's position, and the rack description the
// warning proposes (one node of 8) draws none.
func TestNVLTrayWarningShows(t *testing.T) {
	const file = "testdata/gb200-trays.yaml"
	const want = "warning: " + file + ":7:3: gpus_per_node=4 is a GB200 compute tray or less, but NCCL's MNNVL counts the NVL72 rack as one node"
	for _, args := range [][]string{
		{"run", file},
		{"compare", file, "--vary", "parallelism.zero_stage=1,3"},
		{"sweep", file, "--grid", "training.micro_batch=1,2"},
	} {
		_, stderr, code := runCLI(args...)
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", args[0], code, stderr, want)
		}
		_, stderr, code = runCLI(append(args, "--set", "cluster.nodes=1", "--set", "cluster.gpus_per_node=8")...)
		if code != 0 || strings.Contains(stderr, "MNNVL") {
			t.Errorf("%s as one node of 8: exit %d, stderr %q; want no MNNVL warning", args[0], code, stderr)
		}
	}
	// A sweep over the description warns for its tray point only (2 × 8
	// would warn too: QA14 finding 5), and not for the file, whose 2 × 4
	// no point runs (QA25 M2; a --set cluster.nodes=1 under the grid's
	// key hid it before, and is refused now).
	_, stderr, code := runCLI("sweep", file, "--set", "parallelism.dp=auto", "--grid", "cluster.nodes=1,2", "--grid", "cluster.gpus_per_node=72,4")
	if code != 0 || strings.Count(stderr, "MNNVL") != 1 || !strings.Contains(stderr, "point 3 (cluster.nodes=2, cluster.gpus_per_node=4): "+file+": --grid cluster.gpus_per_node=4: gpus_per_node=4 is a GB200 compute tray") {
		t.Errorf("sweep over nodes and gpus_per_node: exit %d, stderr %q; want the warning for point 3 alone", code, stderr)
	}
}
