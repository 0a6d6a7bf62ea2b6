package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestOpAllToAllSavedOrResent: under the op policy at ep > 1 an MoE block
// keeps its dispatch's and combine's outputs only with
// training.op_save_all_to_all (torchtitan from c4e2291155a4, 2025-09-06,
// whose deepseek_v3 and llama4 save lists gained
// _c10d_functional.all_to_all_single; never qwen3's up to
// 238fa9953e4aec2a62582121564273d7cbb1e9f1). Without it (the default, every
// torchtitan before c4e2291) the experts unit keeps nothing and resends
// both in backward, as under full (PREFER_RECOMPUTE). Qwen3-30B-A3B
// (h 2048, top-8, 128 experts, expert ffn 768), 2 layers, s = 4096, b = 1,
// ep 8: each all-to-all moves b·s·k·h·2 = 4096·8·2048·2 = 134,217,728 B;
// resent, backward sends 2 per layer plus the 2 rerun ones, 8 in all, and
// an experts unit rebuilds its rows 4096·8·(4·2048 + 6·768) = 419,430,400 B
// plus its router's 3,096,576 B (memory.TestOpPolicyRoutedExperts); saved,
// backward sends 2 per layer and the unit keeps the two received tensors,
// 2·134,217,728 = 268,435,456 B, of those rows.
func TestOpAllToAllSavedOrResent(t *testing.T) {
	const layers, a2a = 2, 134_217_728
	for _, c := range []struct {
		key           string
		save          bool
		bwd           int
		keep, rebuild int64
	}{
		{"", false, 4 * layers, 0, 419_430_400 + 3_096_576},
		{", op_save_all_to_all: false", false, 4 * layers, 0, 419_430_400 + 3_096_576},
		{", op_save_all_to_all: true", true, 2 * layers, 2 * a2a, 419_430_400 + 3_096_576 - 2*a2a},
	} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, layers: 2, seq_len: 4096}\n" +
			"parallelism: {dp: 8, zero_stage: 3, ep: 8}\ntraining: {micro_batch: 1, recompute: op, attention: sdpa" + c.key + "}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		if memory.OpSavesAllToAll(s) != c.save {
			t.Fatalf("%q: OpSavesAllToAll %t, want %t", c.key, !c.save, c.save)
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkAllToAlls(t, fmt.Sprintf("%q ", c.key), r, 2*layers, c.bwd, a2a)
		m, err := memory.Analyze(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := unitNamed(t, s, "experts.0")
		if mu := m.Units[u]; mu.Activation != c.keep || mu.Recompute != c.rebuild {
			t.Errorf("%q experts.0: keeps %d B, rebuilds %d B; want %d, %d", c.key, mu.Activation, mu.Recompute, c.keep, c.rebuild)
		}
	}
}
