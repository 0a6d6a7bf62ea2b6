package zero

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCheckPinsEveryGroup (review rev24, mutations of stepCollectives:
// only the first group of a kind asked, or groups of one operation told
// apart by kind and algorithm but not shape; and of CheckPins skipping
// the check when only communication.algorithm is explicit):
//   - 3 × 8 H100, dp 24 at K = 4: shard groups of 6 ranks, the first on
//     node 0 alone, the second 2 + 4 over nodes 0 and 1. Under
//     NCCL_ALGO=NVLS,Tree the first group's reduce-scatter runs NVLS (one
//     node of H100s on an NVSwitch) and the inter groups' all-reduce the
//     tree, but the second shard group's reduce-scatter has neither (NVLS
//     needs one node, the tree only all-reduces): refused at the key, as
//     the replay refuses it.
//   - 2 × 8 H100 at stage 1 with algorithm: nvls and no NCCL pins: NVLS
//     does not run across nodes, so the reduce-scatters over all 16 ranks
//     have no algorithm: refused at communication.algorithm.
func TestCheckPinsEveryGroup(t *testing.T) {
	for _, c := range []struct {
		name, file string
		want       []string
	}{
		{"shard 2+4", `version: 1
cluster: {nodes: 3, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 24, k: 4, zero_stage: 2}
communication:
  nccl_algo: "NVLS,Tree"
`, []string{"s.yaml:6:3: communication.nccl_algo: the step's reduce-scatters: ", "reducescatter over 6 ranks on 2 nodes", "add Ring"}},
		{"nvls across nodes", `version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 16, zero_stage: 1}
communication:
  algorithm: nvls
`, []string{"s.yaml:6:3: communication.algorithm: the step's reduce-scatters: nvls cannot run reducescatter over 16 ranks on 2 nodes", "set algorithm: auto"}},
	} {
		s, err := scenarios.Load("s.yaml", []byte(c.file), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = scenarios.Place("s.yaml", []byte(c.file), nil, CheckPins(s))
		if err == nil {
			t.Errorf("%s: CheckPins passed", c.name)
		} else {
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v\nwant it to hold %q", c.name, err, w)
				}
			}
		}
		if _, rerr := Replay(s, Options{}); rerr == nil {
			t.Errorf("%s: the replay ran", c.name)
		}
	}
}
