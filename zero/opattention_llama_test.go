package zero

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCostsOpRecomputeAttentionLlama: a Llama block, timed by PlanCompute
// from the scenario (flopDims), reruns its attention's forward in the
// backward under training.op_recompute_attention too. By hand for Llama 3
// 8B's shape at seq 8192, micro-batch 1: the causal forward attention,
// QKᵀ and P·V halved, 2·s²·h = 2·8192²·4096 = 549,755,813,888 FLOPs more
// in each block's backward; the forward, and the units that are not
// blocks, unchanged.
func TestCostsOpRecomputeAttentionLlama(t *testing.T) {
	const att = 2 * 8192 * 8192 * 4096
	if att != 549_755_813_888 {
		t.Fatalf("hand count %d", att)
	}
	var costs [2][]LayerCost
	var s *scenarios.Scenario
	for i, extra := range []string{"", ", op_recompute_attention: true"} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
			"model: {kind: transformer, arch: llama, hidden: 4096, layers: 2, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, seq_len: 8192}\n" +
			"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op, attention: flash, attention_kernel: cudnn" + extra + "}\n"
		var err error
		if s, err = scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil); err != nil {
			t.Fatal(err)
		}
		if costs[i], err = Costs(s); err != nil {
			t.Fatal(err)
		}
	}
	for u, l := range s.Model.LayerList {
		want := int64(0)
		if strings.HasPrefix(l.Name, "block.") {
			want = att
		}
		a, b := costs[0][u], costs[1][u]
		if got := b.BwdFLOPs - a.BwdFLOPs; got != want || b.FwdFLOPs != a.FwdFLOPs || b.Fwd != a.Fwd {
			t.Errorf("%s: backward %d FLOPs more (forward %d vs %d FLOPs, %v vs %v), want %d more and the forward unchanged", l.Name, got, b.FwdFLOPs, a.FwdFLOPs, b.Fwd, a.Fwd, want)
		}
		if (b.Bwd > a.Bwd) != (want > 0) {
			t.Errorf("%s: backward %v with the flag, %v without", l.Name, b.Bwd, a.Bwd)
		}
	}
}
