package memory

import (
	"os"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestHeadGradAfterLoss: torchtitan 40f8fd007's Llama 3 8B on 8 ranks
// (testdata/validation/torchtitan-llama3-8b-a100.yaml: t = 8,192 tokens,
// V = 128,256, h = 4,096, fp32 logits kept, eager fp32 loss, op-level
// checkpointing) peaks in the loss's backward, at log_softmax's backward,
// holding, by hand:
//
//   - the fp32 shard, exp_avg and exp_avg_sq: 3 × 8,030,261,248/8 × 4 B
//     = 12,045,391,872 B;
//   - the kept logits, log_softmax's saved output and the two fp32
//     gradients (nll_loss's, log_softmax's): 4 × 4·t·V = 16,810,770,432 B;
//   - each block's kept tensors under the op policy (its input, the
//     outputs of wq, wv, w1 and w2 and SDPA's output, 2·t·(4096 + 4096 +
//     1024 + 14336 + 4096 + 4096) B, and its fp32 logsumexp, 4·32·t B):
//     32 × 521,142,272 B = 16,676,552,704 B;
//   - the final norm's fp32 input, normalized output and rstd and the
//     projection's input: 8·t·h + 4·t = 268,468,224 B;
//   - the root's unsharded parameters, (2·V·h + h)·2 = 2,101,354,496 B,
//     and the last block's, which torchtitan does not reshard,
//     218,112,000·2 = 436,224,000 B;
//
// 48,338,761,728 B in all: not the output projection's weight gradient
// (V·h·2 = 1,050,673,152 B), which autograd computes after the loss's
// fp32 tensors are gone (OpHeadGrad).
func TestHeadGradAfterLoss(t *testing.T) {
	const f = "../testdata/validation/torchtitan-llama3-8b-a100.yaml"
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(f, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = 12_045_391_872 + 16_810_770_432 + 16_676_552_704 + 268_468_224 + 2_101_354_496 + 436_224_000
	head := unitIndex(t, r, "lm_head")
	if r.Peak != want || r.PeakPhase != PhaseBackward || r.PeakUnit != head {
		t.Errorf("peak %d B in %s at unit %d, want %d B in the lm_head's backward", r.Peak, r.PeakPhase, r.PeakUnit, int64(want))
	}
	// The gradient's event is the head's last backward compute event,
	// after the loss's tensors are freed.
	freed := false
	for _, e := range r.Timeline() {
		if e.Unit != head || e.Phase != PhaseBackward {
			continue
		}
		switch {
		case e.Component == CompActivations && e.Delta < 0:
			freed = true
		case e.Component == CompGrads && e.Op == OpHeadGrad:
			if !freed || e.Delta != 1_050_673_152 {
				t.Errorf("head gradient %d B, after the loss's frees: %v; want 1,050,673,152 B after them", e.Delta, freed)
			}
		case e.Component == CompGrads && e.Op == OpCompute && e.Delta > 0:
			t.Errorf("head gradient of %d B allocated with the loss's backward", e.Delta)
		}
	}
}
