package scenarios

import (
	"strings"
	"testing"
)

// TestStraddleWarns (QA17 M1, QA18 M4): shard groups (N/K ranks) or cp
// rings that spread over nodes unevenly, on the GPUs the placement gives
// them, warn at their key, with the most uneven split by hand and the K
// values that tile; layouts that tile say nothing.
func TestStraddleWarns(t *testing.T) {
	file := []byte(`version: 1
cluster: {nodes: 4, gpus_per_node: 6, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 24, zero_stage: 3}
`)
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, ""},
		{[]string{"parallelism.k=2"}, ""}, // 12 = 2 nodes of 6
		{[]string{"parallelism.k=4"}, ""}, // 6, a node
		{[]string{"parallelism.k=12"}, ""},
		// 24 ranks in 3 groups of 8 over nodes of 6: 6 + 2, 4 + 4, 2 + 6.
		{[]string{"parallelism.k=3"}, "--set parallelism.k=3: k=3 makes shard groups of 8 ranks on nodes of 6 GPUs, so the groups spread over nodes unevenly (one as 6 + 2)"},
		// 6 groups of 4: 4, 2 + 2, 4, … the worst 2 + 2.
		{[]string{"parallelism.k=6"}, "unevenly (one as 2 + 2), and NCCL prices a group by its smallest node: expect a slower step than with groups that tile the nodes (k = 1, 2, 4, 8, 12, 24)"},
		// cp 4 over nodes of 6: rings 0–3 | 4, 5 + 6, 7 | …: 2 + 2.
		{[]string{"parallelism.dp=6", "parallelism.cp=4"}, "--set parallelism.cp=4: cp=4 makes context-parallel rings of 4 ranks on nodes of 6 GPUs, so the rings spread over nodes unevenly (one as 2 + 2) under cluster.placement [cp, dp]"},
		{[]string{"parallelism.dp=8", "parallelism.cp=3", "model.seq_len=2046"}, ""}, // 2·cp = 6 chunks of 341
		// dp fastest: ring d is GPUs d, 6+d, 12+d, 18+d, one a node,
		// every ring alike.
		{[]string{"parallelism.dp=6", "parallelism.cp=4", "cluster.placement=[dp, cp]"}, ""},
		// QA18 M4: 3 nodes of 8, dp 6, cp 4, dp fastest: ring 0 is GPUs 0,
		// 6, 12, 18 on nodes 0, 0, 1, 2.
		{[]string{"cluster.nodes=3", "cluster.gpus_per_node=8", "parallelism.dp=6", "parallelism.cp=4", "cluster.placement=[dp, cp]"},
			"cp=4 makes context-parallel rings of 4 ranks on nodes of 8 GPUs, so the rings spread over nodes unevenly (one as 2 + 1 + 1) under cluster.placement [dp, cp]"},
	} {
		s, err := Load("s.yaml", file, c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		var got string
		for _, w := range s.Warnings {
			if strings.Contains(w, "unevenly") {
				got = w
			}
		}
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%v: warning %q, want %q", c.sets, got, c.want)
		}
	}
}

// TestNCCLAlgoAllReduceOnlyLoads: an nccl_algo of all-reduce algorithms
// only (NCCL's Tree, NVLSTree) loads under any stage: the step's
// reduce-scatters and all-gathers are what NCCL cannot run, so the
// commands that replay a step refuse it at the key (zero.CheckPins,
// zero's TestCheckPinsAllReduceOnly), while collective and calibrate,
// which replay none, take it (an all_reduce_perf log under
// NCCL_ALGO=Tree).
func TestNCCLAlgoAllReduceOnlyLoads(t *testing.T) {
	file := []byte(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 16, zero_stage: 1}
communication:
  nccl_algo: Tree,NVLSTree
`)
	for _, sets := range [][]string{nil, {"parallelism.zero_stage=0"}, {"communication.nccl_algo=Tree,Ring"}} {
		if _, err := Load("s.yaml", file, sets); err != nil {
			t.Errorf("%v: %v", sets, err)
		}
	}
}

// TestNCCLAlgoOffWhatAlgorithmRuns (final read R3 L6): algorithm nvls or
// nvlstree with an nccl_algo that switches that algorithm off is refused
// at nccl_algo, not mid-replay as a hardware limit.
func TestNCCLAlgoOffWhatAlgorithmRuns(t *testing.T) {
	file := []byte(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 16, zero_stage: 1}
communication:
  algorithm: nvlstree
  nccl_algo: Ring
`)
	_, err := Load("s.yaml", file, nil)
	if err == nil || !strings.Contains(err.Error(), `s.yaml:7:3: nccl_algo "Ring" switches off NVLSTree, which communication.algorithm nvlstree runs: add NVLSTree to nccl_algo, or set algorithm: auto`) {
		t.Errorf("nvlstree, nccl_algo Ring: %v", err)
	}
	if _, err := Load("s.yaml", file, []string{"communication.nccl_algo=Ring,NVLSTree"}); err != nil {
		t.Errorf("nvlstree, nccl_algo Ring,NVLSTree: %v", err)
	}
}
