package memory

import (
	"os"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
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
//
// At few tokens per rank the projection's MmBackward0, which makes that
// gradient, is the head's own peak (HeadProjectionBackward): at
// model.seq_len 512 (t = 512) it holds, with the same fp32 states
// (12,045,391,872 B), root and last-block parameters (2,101,354,496 +
// 436,224,000 B), 32 blocks' kept tensors (32 × 63,616·t = 1,042,284,544
// B) and the head's final-norm tensors and saved input (8·t·h + 4·t =
// 16,779,264 B), the kept fp32 logits (4·t·V = 262,668,288 B), the logits'
// 16-bit gradient (2·t·V = 131,334,144 B), the projection's input
// gradient (2·t·h = 4,194,304 B) and the weight gradient (1,050,673,152
// B): 17,090,904,064 B, above the loss's backward (the same but 16·t·V
// for the last four: 16,692,707,328 B). Freeing the head's activations
// before the gradient, as the timeline did, counted 16,938,596,352 B there.
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
	t.Run("seq 512", func(t *testing.T) {
		s, err := scenarios.Load(f, data, []string{"model.seq_len=512"})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		head := unitIndex(t, r, "lm_head")
		// The running total through the head's backward: its largest
		// before the gradient (the loss's backward) and at the gradient.
		total, loss, mm := r.AtRest, int64(0), int64(0)
		for _, e := range r.Timeline() {
			total += e.Delta
			if e.Unit != head || e.Phase != PhaseBackward {
				continue
			}
			if e.Component == CompGrads && e.Op == OpHeadGrad {
				mm = total
			} else if mm == 0 {
				loss = max(loss, total)
			}
		}
		const base = 12_045_391_872 + 2_101_354_496 + 436_224_000 + 1_042_284_544 + 16_779_264
		const wantLoss, wantMM = base + 16*512*128_256, base + 262_668_288 + 131_334_144 + 4_194_304 + 1_050_673_152
		if loss != wantLoss {
			t.Errorf("loss's backward %d B, want %d", loss, int64(wantLoss))
		}
		if mm != wantMM {
			t.Errorf("MmBackward0 %d B, want %d", mm, int64(wantMM))
		}
		golden.CheckQuotes(t, "../docs/memory-model.md", "TestHeadGradAfterLoss (by hand)",
			"8B holds "+commas(wantMM)+" B there against "+commas(wantLoss)+" B in the loss's backward")
	})
	const want = 12_045_391_872 + 16_810_770_432 + 16_676_552_704 + 268_468_224 + 2_101_354_496 + 436_224_000
	head := unitIndex(t, r, "lm_head")
	if r.Peak != want || r.PeakPhase != PhaseBackward || r.PeakUnit != head {
		t.Errorf("peak %d B in %s at unit %d, want %d B in the lm_head's backward", r.Peak, r.PeakPhase, r.PeakUnit, int64(want))
	}
	// The document's before and after: the weight gradient, V·h·2, no
	// longer beside the loss's fp32 tensors.
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestHeadGradAfterLoss (by hand)",
		"from "+commas(want+128_256*4096*2)+" to "+commas(want)+" B")
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
