package memory

import (
	"slices"
	"strings"
	"testing"
)

// TestLigerChunk holds LigerChunk to Liger's own example and to the
// formula at ops/fused_linear_cross_entropy.py lines 32-45 (Liger-Kernel
// c3c2d4fa): inc_factor = ceil(V/H), chunk_size =
// next_power_of_2(ceil(BT/inc_factor)).
func TestLigerChunk(t *testing.T) {
	for _, c := range []struct {
		t, h, v, want int64
	}{
		// The file's comment: "BT = 4096*4, V = 32000, H = 4096 ==>
		// inc_factor = 8, chunk_size = 2048".
		{16384, 4096, 32000, 2048},
		// Qwen2.5-7B at 8192 tokens: ceil(152064/3584) = 43,
		// ceil(8192/43) = 191 → 256 (32 chunks).
		{8192, 3584, 152064, 256},
		// Llama 3 8B at 8192: ceil(128256/4096) = 32, 8192/32 = 256.
		{8192, 4096, 128256, 256},
		// ceil(100/32) = 4, already a power of two.
		{100, 4096, 128256, 4},
		// V ≤ H: inc 1, next_power_of_2(5) = 8, but one chunk of all 5.
		{5, 4096, 4096, 5},
		{0, 4096, 32000, 0},
	} {
		if got := LigerChunk(c.t, c.h, c.v); got != c.want {
			t.Errorf("LigerChunk(%d, %d, %d) = %d, want %d", c.t, c.h, c.v, got, c.want)
		}
	}
}

// TestLigerActivations: under training.liger a Llama-family block keeps
// what it keeps with fused norms (LigerRMSNorm saves X, W and the fp32
// RSTD: ops/rms_norm.py line 333 at c3c2d4fa) less silu(gate), 2·t·f
// (LigerSiLUMulFunction saves a and b and recomputes silu: ops/swiglu.py
// lines 50-54, 108); the head keeps grad_weight [V, h] in the weight's
// dtype and no loss gradient, and its forward temporaries are one chunk's
// logits and input gradient and the fp32 per-token loss.
func TestLigerActivations(t *testing.T) {
	for _, c := range []struct {
		name                string
		d                   BlockDims
		weightElem, logElem int64
	}{
		{"qwen2.5-7b s8192", BlockDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 3584, Heads: 28, KVHeads: 4, FFN: 18944, Vocab: 152064, QKVBias: true, LossFP32: true}, 2, 2},
		{"llama-2-7b s4096 b2", BlockDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Vocab: 32000, LossFP32: true}, 2, 2},
		{"fp32 weight", BlockDims{Arch: "llama", Seq: 2048, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 16, FFN: 5632, Vocab: 32000, LossFP32: true}, 4, 4},
	} {
		tok := c.d.Seq * c.d.Batch
		fused := c.d
		fused.NormFused = true
		lig := fused
		lig.Liger, lig.LigerWeightElem, lig.LigerLogitsElem = true, c.weightElem, c.logElem
		for _, policy := range []string{PolicyNone, PolicyFull} {
			fs, ft, err := BlockActivation(fused, policy)
			if err != nil {
				t.Fatal(err)
			}
			ls, lt, err := BlockActivation(lig, policy)
			if err != nil {
				t.Fatal(err)
			}
			silu := 2 * tok * c.d.FFN
			if policy == PolicyNone && (ls != fs-silu || lt != ft) {
				t.Errorf("%s %s: liger keeps %d (+%d rebuilt), want fused %d − 2·t·f %d", c.name, policy, ls, lt, fs, silu)
			}
			if policy == PolicyFull && (ls != fs || lt != ft-silu) {
				t.Errorf("%s %s: liger keeps %d, rebuilds %d; want %d, %d", c.name, policy, ls, lt, fs, ft-silu)
			}
		}
		ts, err := BlockTensors(lig)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(ts, func(x SavedTensor) bool { return strings.Contains(x.Name, "silu output") }) {
			t.Errorf("%s: liger keeps a silu output", c.name)
		}
		model, loss, grads, err := headParts(lig)
		if err != nil {
			t.Fatal(err)
		}
		fm, _, _, _ := headParts(fused)
		if model != fm || loss != c.weightElem*c.d.Vocab*c.d.Hidden || len(grads) != 0 {
			t.Errorf("%s: head model %d loss %d grads %v; want %d, %d·V·h = %d, none", c.name, model, loss, grads, fm, c.weightElem, c.weightElem*c.d.Vocab*c.d.Hidden)
		}
		logits, upcast, err := HeadLossTemps(lig)
		if err != nil {
			t.Fatal(err)
		}
		ch := LigerChunk(tok, c.d.Hidden, c.d.Vocab)
		if want := c.logElem*ch*(c.d.Vocab+c.d.Hidden) + 4*tok; logits != want || upcast != 0 {
			t.Errorf("%s: loss temporaries %d + %d, want %d (chunk %d)", c.name, logits, upcast, want, ch)
		}
		if mm, err := HeadProjectionBackward(lig); err != nil || mm != nil {
			t.Errorf("%s: head backward allocates %v (%v), want nothing", c.name, mm, err)
		}
	}
	// Liger without the fused norms or with another loss is no state the
	// scenario can reach.
	bad := BlockDims{Arch: "llama", Seq: 8, Batch: 1, Hidden: 64, Heads: 4, KVHeads: 4, FFN: 128, Vocab: 100, Liger: true, LigerWeightElem: 2, LigerLogitsElem: 2}
	if _, err := BlockTensors(bad); err == nil {
		t.Error("liger without NormFused: no error")
	}
	bad.NormFused, bad.LossFused = true, true
	if _, err := BlockTensors(bad); err == nil {
		t.Error("liger with the fused loss: no error")
	}
}
