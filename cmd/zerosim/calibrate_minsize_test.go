package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unseenLogPath is a published log of collectives/testdata (its "##"
// lines give the source).
func unseenLogPath(name string) string {
	return filepath.Join("..", "..", "collectives", "testdata", "nccl-tests", name)
}

// TestCalibrateSmallSizesNotAffine (QA30 MED-2): CSCS Alps' GH200 log over
// Slingshot (2 × 1 GPUs, one 200 Gb/s NIC each, on its own cluster, at
// the RoCE200 preset's latency) needs
// inter efficiency 1.119 fitted whole, because its small sizes cost more
// than a latency plus a bandwidth; the refusal (exit 2) says that and the
// size from which the rows fit plausibly (4 MiB), not that the log is of
// another cluster; --min-size fits those rows only (from 16 MiB: inter
// efficiency 0.939, as docs/calibration.md says); a --min-size above
// every row or not a size is refused naming the flag.
func TestCalibrateSmallSizesNotAffine(t *testing.T) {
	log := unseenLogPath("gh200_2node_allreduce_alps_slingshot.log")
	cluster := []string{"--set", "cluster.nodes=2", "--set", "cluster.gpus_per_node=1", "--set", "parallelism.dp=auto",
		"--set", "cluster.gpu=H200", "--set", "cluster.inter.preset=RoCE200"}
	dir := t.TempDir()
	file := filepath.Join(dir, "cal.yaml")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		want   []string // in stderr (code 2) or stdout (code 0)
		unwant string
	}{
		{"whole", nil, 2, []string{"the fit needs inter efficiency 1.119", "the small sizes are not explained by a latency plus a bandwidth on this cluster",
			"the sizes from 4MiB fit at intra efficiency 1.000, inter efficiency 0.802; fit those only with --min-size 4MiB"}, "is of another cluster"},
		{"from 16 MiB", []string{"--min-size", "16MiB"}, 0, []string{"inter efficiency 0.939", "allreduce, 2 ranks on 2 nodes, 4 sizes"}, ""},
		{"above every row", []string{"--min-size", "256MiB"}, 2, []string{"--min-size 256MiB: " + log + ":15 has no row of that size or above (its largest is 128MiB)"}, ""},
		{"zero", []string{"--min-size", "0"}, 2, []string{"--min-size 0: give a size above 0"}, ""},
		{"not a size", []string{"--min-size", "big"}, 2, []string{"--min-size: "}, ""},
	} {
		args := append(append([]string{"calibrate", log, "--file", file}, cluster...), c.args...)
		out, errOut, code := runCLI(args...)
		got := out
		if c.code != 0 {
			got = errOut
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
				t.Errorf("%s: not one line on stderr alone:\n%s\n%s", c.name, out, errOut)
			}
			if _, err := os.Stat(file); err == nil {
				t.Errorf("%s: refused, yet wrote %s", c.name, file)
			}
		}
		if code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.name, code, c.code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: does not say %q:\n%s", c.name, w, got)
			}
		}
		if c.unwant != "" && strings.Contains(got, c.unwant) {
			t.Errorf("%s: says %q:\n%s", c.name, c.unwant, got)
		}
		os.Remove(file)
	}
	data, err := os.ReadFile("../../docs/calibration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(data)), " ")
	for _, w := range []string{"fitted whole it needs inter efficiency 1.119", "the Alps log from 16 MiB fits inter efficiency 0.939"} {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/calibration.md does not say %q", w)
		}
	}
}

// TestCalibrateTreeLog (QA30 MED-2, MED-4): a log of all_reduce_perf under
// NCCL_ALGO=Tree (2 × 1 H100 over RoCE 400 Gb/s) is calibrated under
// communication.nccl_algo: Tree on the default example: calibrate replays
// no step, so ZeRO stage 1's reduce-scatters, which Tree cannot run, do
// not refuse it (run does); and on a scenario whose link preset is already
// RoCE400, the poor-fit warning does not ask for RoCE400 again.
func TestCalibrateTreeLog(t *testing.T) {
	log := unseenLogPath("h100_2node_1gpu_allreduce_roce_tree.log")
	cluster := []string{"--set", "cluster.nodes=2", "--set", "cluster.gpus_per_node=1", "--set", "parallelism.dp=auto", "--set", "cluster.inter.preset=RoCE400"}
	shape := []string{"--nodes", "2", "--gpus-per-node", "1"} // the post kept no devices block
	file := filepath.Join(t.TempDir(), "cal.yaml")
	_, errOut, code := runCLI(append(append(append([]string{"calibrate", log, "--file", file}, shape...), cluster...), "--set", "communication.nccl_algo=Tree")...)
	if code != 0 {
		t.Errorf("nccl_algo Tree: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(append([]string{"run"}, append(cluster, "--set", "communication.nccl_algo=Tree")...)...); code != 2 || !strings.Contains(errOut, `nccl_algo "Tree" leaves only NCCL's all-reduce algorithms`) {
		t.Errorf("run under nccl_algo Tree: exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(append(append([]string{"calibrate", log, "--file", file}, shape...), cluster...)...)
	if code != 0 || !strings.Contains(errOut, "the scenario's link preset is already RoCE400") || strings.Contains(errOut, "RoCE400 (RoCE)") {
		t.Errorf("RoCE400 scenario: exit %d: %s", code, errOut)
	}
}
