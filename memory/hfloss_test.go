package memory

import "testing"

// TestHFShiftLogits: Hugging Face's shift_logits copy (HFShiftLogits) is
// the fp32 logits without each sequence's last position, 4·b·(s−1)·V; on
// keepLogitsYAML's shapes (b 8, s 2048, V 32,000) 4 · 8 · 2047 · 32,000 =
// 2,096,128,000 B. Over fp32 logits the model returns (keepLogits 4) or
// upcasts for an fp32 loss with nothing kept (keepLogits 0, LossFP32):
// none over 16-bit kept logits or under a 16-bit loss, none under a
// compiled, fused or chunked loss, none without a vocabulary.
func TestHFShiftLogits(t *testing.T) {
	base := BlockDims{Arch: "llama", Seq: 2048, Batch: 8, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Vocab: 32000, LossFP32: true}
	for _, c := range []struct {
		name string
		keep int64
		d    func(BlockDims) BlockDims
		want int64
	}{
		{"fp32 logits", 4, func(d BlockDims) BlockDims { return d }, 4 * 8 * 2047 * 32000},
		{"one sequence of 4096", 4, func(d BlockDims) BlockDims { d.Batch, d.Seq = 1, 4096; return d }, 4 * 4095 * 32000},
		{"16-bit logits", 2, func(d BlockDims) BlockDims { return d }, 0},
		{"no kept logits, fp32 loss", 0, func(d BlockDims) BlockDims { return d }, 4 * 8 * 2047 * 32000},
		{"no kept logits, 16-bit loss", 0, func(d BlockDims) BlockDims { d.LossFP32 = false; return d }, 0},
		{"megatron's saved upcast", 0, func(d BlockDims) BlockDims { d.LossSavesUpcast = true; return d }, 0},
		{"compiled", 4, func(d BlockDims) BlockDims { d.LossCompiled = true; return d }, 0},
		{"fused", 4, func(d BlockDims) BlockDims { d.LossFused = true; return d }, 0},
		{"chunked", 4, func(d BlockDims) BlockDims { d.LossChunks = 8; return d }, 0},
		{"no vocabulary", 4, func(d BlockDims) BlockDims { d.Vocab = 0; return d }, 0},
	} {
		if got, err := HFShiftLogits(c.d(base), c.keep); err != nil || got != c.want {
			t.Errorf("%s: %d (%v), want %d", c.name, got, err, c.want)
		}
	}
}

// TestHFLossInsideForward: under hf_use_cache kept with keep_logits fp32
// (dlrover's outputs = model(**batch) around LlamaForCausalLM's own loss)
// the loss runs before the loop rebinds outputs, so when log_softmax
// writes its output (the head's OpLossSaved) the previous step's fp32
// logits and cache are still alive beside the new ones, with forward's
// shift_logits copy and without the 16-bit projection output .float()
// freed; that moment is the forward's peak. On keepLogitsYAML (t =
// 16,384, V = 32,000): logits 2 · 4·t·V = 4,194,304,000 B, loss
// temporaries 4 · 8 · 2047 · 32,000 = 2,096,128,000 B, kv cache 2 · 8 GiB.
// Under hf_use_cache forward the loop keeps only the loss (outputs
// dropped, nothing rebound after forward): the rebinding stays before the
// loss, so there the new logits alone and one cache, but the loss still
// runs inside forward on its shift_logits copy (modeling_llama.py at
// 002272831 copies whenever labels is passed, whatever use_cache is).
// With keep_logits unset, forward's .float() is the loss's fp32 upcast
// (4·t·V) and frees the 16-bit logits before the copy: loss temporaries
// 4·t·V + the copy, no 16-bit logits.
func TestHFLossInsideForward(t *testing.T) {
	const tV = 8 * 2048 * 32000
	const shift = 4 * 8 * 2047 * 32000
	for _, c := range []struct {
		cache, keep       string
		logits, temps, kv int64
	}{
		{"kept", "fp32", 2 * 4 * tV, shift, 2 * kvWhole},
		{"forward", "fp32", 4 * tV, shift, kvWhole},
		{"forward", "none", 0, 4*tV + shift, kvWhole},
	} {
		r := keepLogitsReport(t, "training.keep_logits="+c.keep, "training.hf_use_cache="+c.cache)
		head := unitIndex(t, r, "lm_head")
		live := map[Comp]int64{CompLogits: r.Component(CompLogits).AtRest, CompKVCache: r.Component(CompKVCache).AtRest}
		total, found := r.AtRest, false
		for _, e := range r.Timeline() {
			live[e.Component] += e.Delta
			total += e.Delta
			if e.Phase == PhaseForward && e.Unit == head && e.Op == OpLossSaved && e.Delta > 0 {
				found = true
				if live[CompLogits] != c.logits || live[CompLossTemp] != c.temps || live[CompKVCache] != c.kv {
					t.Errorf("%s: at the loss logits %d, loss temporaries %d, kv cache %d; want %d, %d, %d",
						c.cache, live[CompLogits], live[CompLossTemp], live[CompKVCache], c.logits, c.temps, c.kv)
				}
				if c.cache == "kept" && total != forwardPeak(t, r) {
					t.Errorf("kept: %d B at the loss, forward peak %d: want the loss to be the peak", total, forwardPeak(t, r))
				}
			}
			if e.Phase != PhaseForward && live[CompLossTemp] != 0 {
				t.Fatalf("%s: %d B of loss temporaries at %+v, want none outside the forward", c.cache, live[CompLossTemp], e)
			}
		}
		if !found {
			t.Errorf("%s: no loss-saved event at lm_head's forward", c.cache)
		}
	}
}
