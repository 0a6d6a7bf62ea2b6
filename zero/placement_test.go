package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestFractionRecomputeTime checks which blocks' backward reruns the
// forward under fms-fsdp's p = 1/2 (blocks 0 and 2, 0-based) and under
// recompute_every: 2 (1 and 3) on a 4-block Llama, and that the recompute
// time is the same: identical blocks, two checkpointed either way, each
// rerunning its whole forward (recompute_early_stop off), so a checkpointed
// block's backward is a plain one's plus its forward's FLOPs and time.
func TestFractionRecomputeTime(t *testing.T) {
	costs := func(tr scenarios.Training) []LayerCost {
		s := resolved(&scenarios.Scenario{
			Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 2, GPU: "A100-80GB"},
			Model:       scenarios.Model{Kind: "transformer", Arch: "llama", Hidden: 1024, Layers: 4, Heads: 8, KVHeads: 8, FFN: 2816, Vocab: 1024, SeqLen: 2048},
			Parallelism: scenarios.Parallelism{DP: 2, Stage: 3},
			Training:    tr,
		})
		c, err := Costs(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	none := costs(scenarios.Training{MicroBatch: 1, Recompute: "none"})
	fwd, bwd, fwdT, bwdT := none[1].FwdFLOPs, none[1].BwdFLOPs, none[1].Fwd, none[1].Bwd
	var totals [2]units.Duration
	for k, c := range []struct {
		name    string
		tr      scenarios.Training
		wrapped [4]bool
	}{
		{"every 2", scenarios.Training{MicroBatch: 1, Recompute: "full", RecomputeEvery: 2}, [4]bool{false, true, false, true}},
		{"p=1/2", scenarios.Training{MicroBatch: 1, Recompute: "full", RecomputeFraction: "1/2"}, [4]bool{true, false, true, false}},
	} {
		got := costs(c.tr)
		for b, w := range c.wrapped {
			u := got[b+1]
			wantF, wantT := bwd, bwdT
			if w {
				wantF, wantT = bwd+fwd, bwdT+fwdT
			}
			if u.BwdFLOPs != wantF || u.Bwd != wantT {
				t.Errorf("%s: block.%d backward %d FLOPs %v, want %d %v", c.name, b, u.BwdFLOPs, u.Bwd, wantF, wantT)
			}
			totals[k] += u.Bwd
		}
	}
	if totals[0] != totals[1] || totals[0] != 4*bwdT+2*fwdT {
		t.Errorf("blocks' backward: every 2 %v, p=1/2 %v, want both 4·%v + 2·%v", totals[0], totals[1], bwdT, fwdT)
	}
}
