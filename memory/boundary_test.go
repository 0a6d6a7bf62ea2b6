package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestKeptAcrossBoundaryExperts names the units that keep their gathered
// parameters from forward to backward for Qwen3-30B-A3B cut to 4 blocks
// (embedding, block.i and experts.i for i = 0..3, final_norm, lm_head).
// The routed experts are part of their decoder layer (Qwen3MoeSparseMoeBlock
// is the layer's mlp): FSDP1 keeps only the root units, FSDP2 the root units
// and the last block with its experts, torchtitan's fsdp2_head the units
// after the last block and its experts. Before the experts followed their
// block, FSDP1 and FSDP2 kept every experts unit gathered (Qwen3.6-35B-A3B
// at seq 8192 on 8 H100s under stack torchtitan: 63.47 GiB of gathered
// parameters in forward, where DeepSpeed's boundary gave 1.57 GiB).
func TestKeptAcrossBoundaryExperts(t *testing.T) {
	for _, c := range []struct {
		boundary string
		want     []string
	}{
		{"reshard", nil},
		{"fsdp1", []string{"embedding", "final_norm", "lm_head"}},
		{"fsdp2", []string{"embedding", "block.3", "experts.3", "final_norm", "lm_head"}},
		{"fsdp2_head", []string{"final_norm", "lm_head"}},
	} {
		data, ok := scenarios.Example("default")
		if !ok {
			t.Fatal("no default example")
		}
		s, err := scenarios.Load("default", data, []string{"model.preset=qwen3-30b-a3b", "model.layers=4",
			"parallelism.zero_stage=3", "communication.boundary=" + c.boundary})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for u, k := range KeptAcrossBoundary(s) {
			if k {
				got = append(got, s.Model.LayerList[u].Name)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: kept %q, want %q", c.boundary, got, c.want)
		}
	}
}
