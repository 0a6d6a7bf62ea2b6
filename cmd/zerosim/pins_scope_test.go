package main

import (
	"strings"
	"testing"
)

// TestPinsScope (rev24): the step's NCCL pins are judged where the step
// runs. plan searches the stages asked for, not the file's own: on 2 × 8
// H100 NVLS,Tree leaves the file's stage 1 no reduce-scatter across the
// nodes, but stage 0 only all-reduces, which Tree runs, and HSDP keeps its
// shards on one node, where NVLS runs them; collective times what --algo
// asks, whatever the file pins; memory replays no collective; a grid whose
// every point is refused names the --grid value, not a --set; fit notes a
// node search the pins cut short instead of failing.
func TestPinsScope(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout (code 0) or stderr
	}{
		{[]string{"plan", "--global-batch", "64", "--set", "communication.nccl_algo=NVLS,Tree", "--set", "model.layers=8", "--stages", "0"}, 0, "ZeRO stage 0, micro-batch 4"},
		{[]string{"plan", "--global-batch", "64", "--set", "communication.nccl_algo=NVLS,Tree", "--set", "model.layers=8", "--k", "1,2", "--stages", "3"}, 0, "ZeRO stage 3 with hybrid shard (HSDP: 2 replicas of 8-GPU shards)"},
		{[]string{"collective", "--set", "communication.nccl_algo=PAT", "--algo", "ring", "--size", "1MiB"}, 0, "ring/"},
		// Without --algo the scenario's pin times it, and its refusal is the key's (final read R2).
		{[]string{"collective", "--set", "communication.nccl_algo=PAT", "--size", "1MiB"}, 2, "zerosim: default.yaml: --set communication.nccl_algo=PAT: communication.nccl_algo: no algorithm/protocol available for allreduce over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to PAT. (PAT runs all-gather and reduce-scatter over one GPU per node, Simple only) (time another with --algo or --proto, or change nccl_algo)\n"},
		{[]string{"memory", "--set", "communication.nccl_algo=PAT"}, 0, "peak"},
		// fit's node search over clusters the pins do not run (final read R2).
		{[]string{"fit", "--set", "communication.nccl_algo=NVLS,Tree", "--set", "parallelism.zero_stage=0"}, 0, "stage 3, K=2: fewest nodes not searched: the NCCL pins leave a collective no algorithm on a larger cluster"},
		{[]string{"sweep", "--grid", "communication.nccl_algo=PAT,NVLS"}, 2, "--grid communication.nccl_algo=PAT: communication.nccl_algo: the step's reduce-scatters"},
		{[]string{"run", "--set", "communication.nccl_algo=PAT"}, 2, "--set communication.nccl_algo=PAT: communication.nccl_algo: the step's reduce-scatters"},
	} {
		code, out, errOut := runMain(t, "", c.args...)
		got := out
		if c.code != 0 {
			got = errOut
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, want %d with %q in\nstdout %q\nstderr %q", c.args, code, c.code, c.want, out, errOut)
		}
	}
}
