package zero

import (
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestSelectiveRerunsAttentionOfFLOPCountBlocks: Korthikanti's selective
// checkpointing reruns a block's core attention in its backward. Blocks the
// per-operation model leaves to the FLOP count (MoE and multi-head latent
// attention blocks) were charged nothing under selective, so a Mixtral
// block's backward equalled the one without checkpointing. Now its
// backward FLOPs grow by exactly its core attention's forward FLOPs
// (blockAttentionFLOPs, the kernel's causal count) and its backward time
// by that work at the attention rate; under none nothing changes.
func TestSelectiveRerunsAttentionOfFLOPCountBlocks(t *testing.T) {
	for _, preset := range []string{"mixtral-8x7b", "deepseek-v2-lite"} {
		none := example(t, "default", "model.preset="+preset, "parallelism.zero_stage=3", "training.recompute=none")
		sel := example(t, "default", "model.preset="+preset, "parallelism.zero_stage=3", "training.recompute=selective")
		cn, err := Costs(none)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := Costs(sel)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i, l := range sel.Model.LayerList {
			if !l.Block {
				continue
			}
			att, err := blockAttentionFLOPs(sel, l)
			if err != nil {
				t.Fatal(err)
			}
			if got := cs[i].BwdFLOPs - cn[i].BwdFLOPs; got != att || att == 0 {
				t.Errorf("%s %s: selective adds %d backward FLOPs, want its core attention's %d", preset, l.Name, got, att)
			}
			eff, err := attentionFLOPS(sel)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := units.CheckedMulDivCeil(att, int64(units.Second), eff)
			if d := int64(cs[i].Bwd - cn[i].Bwd); d < want-1 || d > want+1 {
				t.Errorf("%s %s: selective adds %v of backward, want %v", preset, l.Name, units.Duration(d), units.Duration(want))
			}
			if cs[i].Fwd != cn[i].Fwd || cs[i].FwdFLOPs != cn[i].FwdFLOPs {
				t.Errorf("%s %s: forward changed under selective", preset, l.Name)
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("%s: no blocks", preset)
		}
	}
}
