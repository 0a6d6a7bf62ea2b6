package zero

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestOpQwen3ResendsAllToAll: torchtitan's qwen3 save list
// (torchtitan/models/qwen3/infra/parallelize.py lines 39-53 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1) has no
// _c10d_functional.all_to_all_single, which deepseek_v3's, llama4's and
// gpt_oss's hold: under the op policy at ep > 1 a Qwen3-MoE block
// recomputes its dispatch and combine (PREFER_RECOMPUTE), so its experts
// unit keeps nothing and resends both in backward, as under full.
// Qwen3-30B-A3B (h 2048, top-8, 128 experts, expert ffn 768), 2 layers,
// s = 4096, b = 1, ep 8: each all-to-all moves b·s·k·h·2 =
// 4096·8·2048·2 = 134,217,728 B; backward sends 2 per layer plus the 2
// rerun ones, 8 in all; an experts unit keeps 0 B and rebuilds its rows
// 4096·8·(4·2048 + 6·768) = 419,430,400 B plus its router's 3,096,576 B
// (memory.TestOpPolicyRoutedExperts).
func TestOpQwen3ResendsAllToAll(t *testing.T) {
	const layers, a2a = 2, 134_217_728
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, layers: 2, seq_len: 4096}\n" +
		"parallelism: {dp: 8, zero_stage: 3, ep: 8}\ntraining: {micro_batch: 1, recompute: op, attention: sdpa}\n"
	s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if memory.OpSavesAllToAll(s) {
		t.Fatalf("%s: want qwen3's save list", s.Model.Architecture)
	}
	r, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range r.Phases {
		want := map[Phase]int{PhaseForwardA2A: 2 * layers, PhaseBackwardA2A: 4 * layers}
		if n, ok := want[ph.Phase]; ok && (ph.Collectives != n || ph.Logical != int64(n)*a2a) {
			t.Errorf("%s: %d all-to-alls of %d B, want %d of %d B", ph.Phase, ph.Collectives, ph.Logical, n, int64(n)*a2a)
		}
	}
	m, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := unitNamed(t, s, "experts.0")
	if mu := m.Units[u]; mu.Activation != 0 || mu.Recompute != 419_430_400+3_096_576 {
		t.Errorf("experts.0: keeps %d B, rebuilds %d B; want 0, 422,526,976", mu.Activation, mu.Recompute)
	}
}
