package scenarios

import "testing"

// TestStackWeightDecay: the stacks' AdamW weight decay is the one their
// training scripts pass, not the preset's own keys read back: fms-fsdp's
// main_training.py:118-120 calls optim.AdamW(..., betas=(0.9, 0.95),
// weight_decay=0.1), torchtitan's build_optimizers passes weight_decay 0.1
// (torchtitan/optimizer.py:136); 0.1 under both.
func TestStackWeightDecay(t *testing.T) {
	for _, stack := range []string{"fms-fsdp", "torchtitan"} {
		s, err := Load("s.yaml", []byte(stackYAML+"stack: "+stack+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Training.WeightDecay != 0.1 {
			t.Errorf("stack %s: weight decay %g, want 0.1", stack, s.Training.WeightDecay)
		}
	}
}
