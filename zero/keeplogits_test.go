package zero

import (
	"os"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestReplayKeptLogits: the replay binds the kept logits
// (training.keep_logits, memory.KeptLogits) to lm_head's forward and
// holds 4·t·V = 4·(8·2048)·32,000 = 2,097,152,000 B of them from rest
// through the step. On torchtitan 83c879f's Llama 2 7B FSDP2 run under
// full AC the replayed peak equals the walked one, 2,097,152,000 B above
// the same run without the key (the output projection's weight gradient,
// V·h·2 = 262,144,000 B, comes after the loss's backward, memory.OpHeadGrad),
// and the timeline starts and ends with them. Both peaks are in the loss's
// backward, by hand (P = 6,738,415,616, B = 202,383,360 a block, h 4,096,
// V 32,000, t = 16,384 tokens a rank): the fp32 shard, m and v 3·4·P/8;
// gathered, the root group (embedding, final norm, lm_head) in bf16,
// 2·(2·V·h + h), and the last block, which torchtitan does not reshard,
// 2·B; full checkpointing's 32 block inputs 32·2·t·h, the final norm's
// tensors and the projection's input 8·t·h + 4·t, the loss's fp32
// log-probabilities and two fp32 gradients 3·4·t·V: 22,160,046,080 B; with
// the kept logits 24,257,198,080 B.
func TestReplayKeptLogits(t *testing.T) {
	const kept = 2_097_152_000
	data, err := os.ReadFile("../testdata/validation/torchtitan-llama2-7b-h100-fsdp2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	peaks := map[string]int64{}
	for _, v := range []string{"none", "fp32"} {
		s, err := scenarios.Load("fsdp2.yaml", data, []string{"training.recompute=full", "training.keep_logits=" + v})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		peak, _ := res.Peak()
		if m := res.MemoryModel.Peak; peak != m {
			t.Errorf("keep_logits %s: replayed peak %d, walked %d", v, peak, m)
		}
		peaks[v] = peak
		tl := res.Memory
		i := slices.Index(tl.Components, string(memory.CompLogits))
		if v == "none" {
			if i >= 0 {
				t.Errorf("keep_logits none: the timeline has a %q component", memory.CompLogits)
			}
			continue
		}
		if i < 0 {
			t.Fatalf("keep_logits %s: no %q component in %v", v, memory.CompLogits, tl.Components)
		}
		cur, most := tl.AtRest[i], tl.AtRest[i]
		for _, p := range tl.Points {
			if p.Component == i {
				cur += p.Delta
				most = max(most, cur)
			}
		}
		if tl.AtRest[i] != kept || cur != kept || most != 2*kept {
			t.Errorf("keep_logits %s: kept logits %d at rest, %d at the end, %d at most; want %d, %d, %d", v, tl.AtRest[i], cur, most, kept, kept, 2*kept)
		}
		// The loop's rebinding frees the previous logits as lm_head's
		// forward starts, before the loss's tensors (memory.OpRebind):
		// up to that instant the replay's largest total is the walk's
		// forward peak, old logits and log_softmax's output never both
		// counted (memory's TestKeptLogitsForwardPeak).
		rebind := units.Duration(-1)
		for _, p := range tl.Points {
			if p.Component == i && p.Delta < 0 {
				rebind = p.Time
			}
		}
		var fwd int64
		for _, p := range res.MemoryModel.PhasePeaks {
			if p.Phase == memory.PhaseForward {
				fwd = p.Bytes
			}
		}
		total, best := int64(0), int64(0)
		for _, r := range tl.AtRest {
			total += r
		}
		for _, p := range tl.Points {
			if p.Time > rebind {
				break
			}
			total += p.Delta
			best = max(best, total)
		}
		if rebind < 0 || best != fwd {
			t.Errorf("keep_logits %s: replayed total up to the rebinding at %v is %d at most, the walk's forward peak %d", v, rebind, best, fwd)
		}
	}
	const (
		P, B, h, V, tok = 6_738_415_616, 202_383_360, 4096, 32_000, 8 * 2048
		none            = 3*4*P/8 + 2*(2*V*h+h) + 2*B + 32*2*tok*h + 8*tok*h + 4*tok + 3*4*tok*V
	)
	if peaks["none"] != none || peaks["fp32"] != none+kept {
		t.Errorf("replayed peaks %d (none) and %d (fp32), by hand %d and %d", peaks["none"], peaks["fp32"], int64(none), int64(none+kept))
	}
}
