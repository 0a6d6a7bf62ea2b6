package zero

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestA2ABytesOverflow: an expert unit whose all-to-all bytes exceed
// int64 (micro_batch 2^50 tokens of h 64: b·s·k·h·2 = 2^50·64·2·64·2 =
// 2^65) is an error naming the unit, under either dispatcher, rather than
// a saturated (deepep) or wrapped (alltoall) size. (A whole Build fails
// earlier here, on the unit's elementwise bytes.)
func TestA2ABytesOverflow(t *testing.T) {
	doc := "version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 1\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16}}\n  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 1, ep: 4}\n"
	for _, d := range []string{"alltoall", "deepep"} {
		t.Run(d, func(t *testing.T) {
			s, err := scenarios.Load("o.yaml", []byte(doc), []string{"communication.moe_dispatcher=" + d})
			if err != nil {
				t.Fatal(err)
			}
			s.Training.MicroBatch = 1 << 50
			_, err = a2aBytes(s, epPhases(s))
			if err == nil || !strings.Contains(err.Error(), `layer "experts.0"`) || !strings.Contains(err.Error(), "all-to-all bytes") {
				t.Fatalf("a2aBytes: %v, want an overflow error naming experts.0", err)
			}
			t.Log(err)
		})
	}
}
