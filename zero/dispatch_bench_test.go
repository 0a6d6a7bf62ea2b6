package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// BenchmarkBuildDedup builds DeepSeek-V3's schedule (512 H100, ep 64,
// grad_accum 4) under each MoE dispatcher and reports the build's
// milliseconds: a deduplicating dispatcher's per-unit bytes (dedupBytes'
// exact probabilities) must not make the build orders of magnitude slower
// than alltoall's (go test ./zero -run - -bench BuildDedup).
func BenchmarkBuildDedup(b *testing.B) {
	for _, d := range []string{"alltoall", "deepep"} {
		b.Run(d, func(b *testing.B) {
			doc := "version: 1\ncluster: {nodes: 64, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/deepseek-v3.json, seq_len: 4096}\n" +
				"parallelism: {dp: 512, zero_stage: 3, ep: 64}\ntraining: {grad_accum: 4}\n"
			s, err := scenarios.Load("../scenarios/testdata/b.yaml", []byte(doc), []string{"communication.moe_dispatcher=" + d})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := Build(s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/build")
		})
	}
}

// TestDedupBuildAllocs holds a deduplicating dispatcher's schedule build
// to the cost of alltoall's plus one evaluation of each distinct routing:
// DeepSeek-V3 (58 MoE layers of one dims, node-limited routing) and
// Qwen3-30B-A3B (48, none), ep on 8-GPU nodes, grad_accum 4, where
// evaluating the exact probabilities per all-to-all allocated 10^4 times
// alltoall's build. The bound, twice alltoall's allocations plus 20,000,
// holds one evaluation of a rail and a node phase (a few thousand big.Int
// each) with room; it does not hold one per layer.
func TestDedupBuildAllocs(t *testing.T) {
	for _, c := range []struct {
		cfg, par string
		nodes    int
	}{
		{"deepseek-v3.json", "{dp: 64, zero_stage: 3, ep: 64}", 8},
		{"qwen3-30b-a3b.json", "{dp: 16, zero_stage: 1, ep: 16}", 2},
	} {
		t.Run(c.cfg, func(t *testing.T) {
			var allocs [2]float64
			for i, d := range []string{"alltoall", "deepep"} {
				doc := fmt.Sprintf("version: 1\ncluster: {nodes: %d, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/%s, seq_len: 4096}\nparallelism: %s\ntraining: {grad_accum: 4}\n", c.nodes, c.cfg, c.par)
				s, err := scenarios.Load("../scenarios/testdata/b.yaml", []byte(doc), []string{"communication.moe_dispatcher=" + d})
				if err != nil {
					t.Fatal(err)
				}
				allocs[i] = testing.AllocsPerRun(1, func() {
					if _, err := Build(s); err != nil {
						t.Fatal(err)
					}
				})
			}
			if allocs[1] > 2*allocs[0]+20000 {
				t.Errorf("Build allocates %.0f times under deepep, %.0f under alltoall: more than 2×+20,000", allocs[1], allocs[0])
			}
			t.Logf("allocations: alltoall %.0f, deepep %.0f", allocs[0], allocs[1])
		})
	}
}
