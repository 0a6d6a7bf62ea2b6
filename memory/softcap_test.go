package memory

import (
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestLogitSoftcapHead counts Gemma 2's final_logit_softcapping in the
// head: tanh keeps its 16-bit output, 2·t·V, until the head's backward
// (HeadActivation; Gemma2ForCausalLM.forward). Gemma 2 27B at t = 4096,
// V = 256,000: the fp32 final norm 8·t·h + 4·t = 150,994,944 + 16,384,
// the projection input 2·t·h = 37,748,736, log_softmax's fp32 output
// 4·t·V = 4,194,304,000 and tanh's output 2·t·V = 2,097,152,000:
// 6,480,216,064 B (4,383,064,064 without the cap). Under a compiled or a
// fused loss the tanh output is kept the same, 2,097,152,000 B more.
func TestLogitSoftcapHead(t *testing.T) {
	const tanh = 2_097_152_000
	base := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4608, Heads: 32, Vocab: 256000, LossFP32: true, Norms: "gemma"}
	for _, c := range []struct {
		name string
		mod  func(*BlockDims)
	}{
		{"eager loss", func(*BlockDims) {}},
		{"compiled loss", func(d *BlockDims) { d.LossCompiled = true }},
		{"fused loss", func(d *BlockDims) { d.LossFused = true }},
		{"compiled loss, kept logits", func(d *BlockDims) { d.LossCompiled, d.KeepLogits = true, 2 }},
	} {
		d := base
		c.mod(&d)
		without, tw, err := HeadActivation(d)
		if err != nil {
			t.Fatal(err)
		}
		d.LogitSoftcap = true
		with, tr, err := HeadActivation(d)
		if err != nil {
			t.Fatal(err)
		}
		if with-without != tanh || tr != tw {
			t.Errorf("%s: softcap adds %d B kept and %d transient, want %d and 0", c.name, with-without, tr-tw, int64(tanh))
		}
		if c.name == "eager loss" && with != 6_480_216_064 {
			t.Errorf("Gemma 2 27B head keeps %d B, want 6,480,216,064", with)
		}
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestLogitSoftcapHead",
		"Gemma 2 27B at t = 4,096: 6,480,216,064 B kept by the head (4,383,064,064 without the cap; `TestLogitSoftcapHead`).")
	// From config.json (scenarios/testdata/hf-extra/gemma-2-27b.json,
	// final_logit_softcapping absent: Gemma2Config's 30.0): the tied
	// head's unit, final_norm, keeps the same 6,480,216,064 B.
	s := loadHF(t, "hf-extra/gemma-2-27b.json", 2, "attention: flash, recompute: none")
	stored, _, err := unitActivations(s)
	if err != nil {
		t.Fatal(err)
	}
	u := len(s.Model.LayerList) - 1
	if s.Model.LayerList[u].Name != "final_norm" || stored[u] != 6_480_216_064 {
		t.Errorf("imported Gemma 2 27B: %s keeps %d B, want final_norm 6,480,216,064", s.Model.LayerList[u].Name, stored[u])
	}
}
