package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoWarningBeforeInputError (review s18 B6): plan, fit, sweep and
// compare load the scenario first, and its warnings (Mixtral's ep note)
// were printed before a flag error found after the load: an input error
// must be the one line on stderr. Each still prints them when it runs.
func TestNoWarningBeforeInputError(t *testing.T) {
	const file = "../../docs/examples/mixtral-8x7b.yaml"
	out := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(out, []byte("not a sweep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"plan --k", []string{"plan", file, "--k", "3"}, "--k 3 does not divide N"},
		// An empty search space, found after the load.
		{"plan: no K at stage 0", []string{"plan", file, "--stages", "0", "--k", "2"}, "no configuration to search: no K searched (2)"},
		{"plan: torchtitan's DDP with cp", []string{"plan", file, "--set", "stack=torchtitan", "--cp", "2", "--stages", "0"}, "stack torchtitan runs none of the stages searched (0) with cp 2"},
		{"fit --max-gpus", []string{"fit", file, "--max-gpus", "4"}, "--max-gpus 4: less than one node"},
		{"sweep --out", []string{"sweep", file, "--grid", "training.micro_batch=1,2", "--out", out}, out},
		{"compare --vary", []string{"compare", file, "--vary", "training.micro_batch=0,1"}, "micro_batch=0 is out of range"},
		// Found after the load, by the replay or the fit (QA22 M2): the
		// file's two warnings came first (run, compare, calibrate).
		{"run: replay refuses", []string{"run", file, "--set", "training.micro_batch=1000000"}, "FLOPs per micro-step overflow"},
		{"compare: a variant's replay refuses", []string{"compare", file, "--vary", "training.micro_batch=1,1000000"}, "training.micro_batch=1000000: FLOPs per micro-step overflow"},
		// fit printed the warnings before its search (QA24 L4).
		{"fit: the search refuses", []string{"fit", file, "--set", "communication.bucket_size=1B"}, "more than 262144 buckets"},
		{"calibrate: the fit refuses", []string{"calibrate", "--step-time", "10000s", file, "--file", filepath.Join(t.TempDir(), "c.yaml")}, "--step-time 10000s: cannot be reached"},
	} {
		_, stderr, code := runCLI(tc.args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "warning") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", tc.name, code, stderr, tc.want)
		}
	}
	if _, stderr, code := runCLI("plan", file, "--stages", "3", "--recompute", "full", "--k", "1", "--micro-batches", "1", "--prefetch", "1"); code != 0 || !strings.Contains(stderr, "warning: "+file) {
		t.Errorf("plan that runs: exit %d, stderr %q; want the scenario's warnings", code, stderr)
	}
	for _, args := range [][]string{{"run", file}, {"compare", file, "--vary", "training.micro_batch=1,2"}} {
		if out, stderr, code := runCLI(args...); code != 0 || out == "" || !strings.HasPrefix(stderr, "zerosim: warning: "+file) {
			t.Errorf("%v that runs: exit %d, stderr %q; want the scenario's warnings", args, code, stderr)
		}
	}
}

// TestPlanReproduceStdin: the reproduce line of a plan read from standard
// input says that `zerosim run -` needs the same input (review s18 B14:
// "zerosim run - …" read as self-contained).
func TestPlanReproduceStdin(t *testing.T) {
	doc, _, code := runCLI("scenarios", "show", "default")
	if code != 0 {
		t.Fatal("scenarios show default failed")
	}
	var out, errOut bytes.Buffer
	code = Main([]string{"plan", "-", "--stages", "3", "--recompute", "full", "--k", "1", "--prefetch", "1"}, strings.NewReader(doc), &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "reproduce: zerosim run - --set parallelism.zero_stage=3 --set training.recompute=full (on the same standard input)") {
		t.Errorf("exit %d (%s):\n%s", code, errOut.String(), out.String())
	}
}

// TestNVLSTreeRefusalSaysTheFix: an explicit nvlstree whose all-reduce
// group has one GPU per node (K = 2 over 2 nodes: the inter-group
// all-reduce) exits 2 with one line that says why and what to use; it
// said "two or more GPUs per node" of a cluster of 8 a node, and no fix.
// It is refused at the key, before the replay (zero.CheckPins).
func TestNVLSTreeRefusalSaysTheFix(t *testing.T) {
	_, stderr, code := runCLI("run", "--set", "communication.algorithm=nvlstree", "--set", "parallelism.k=2", "--set", "parallelism.zero_stage=3")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--set communication.algorithm=nvlstree: communication.algorithm: the step's all-reduces: nvlstree cannot run allreduce over 2 ranks on 2 nodes") ||
		!strings.Contains(stderr, "two or more of the group's GPUs on each node") || !strings.HasSuffix(stderr, "; NCCL's own choice runs the rest): set algorithm: auto (NCCL's own choice)\n") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
