package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMTPActivations counts what DeepSeek-V3's multi-token-prediction
// module keeps, by hand, on scenarios/testdata/hf-extra/deepseek-v3.json
// at 3 layers (block.3 the module), s = 4096, b = 1: t = 4096, h = 7168,
// V = 129,280.
//   - block.3 keeps, besides its decoder layer, hnorm and enorm (eager
//     RMSNorms: x.float() 4·t·h, rstd 4·t, normalized 2·t·h each) and
//     eh_proj's input cat(·,·), 2·t·2h: 16·t·h + 8·t = 469,794,816 B.
//   - lm_head keeps the main head's tensors (shared_head.norm / norm 4·t·h
//   - 4·t + 2·t·h, the projection input 2·t·h, the fp32 log-probabilities
//     4·t·V: 8·t·h + 4·t + 4·t·V = 2,353,020,928 B) once per pass, main
//     and MTP: 4,706,041,856 B; the loss backward's 8·t·V transient is one pass's.
func TestMTPActivations(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {hf_config: deepseek-v3.json, layers: 3, seq_len: 4096, mtp_layers: 1}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1}\n"
	sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	const tk, h, v = int64(4096), int64(7168), int64(129280)
	acts := func(mtp bool) (map[string]int64, map[string]int64) {
		c := *sc
		c.Model.LayerList = append([]scenarios.Layer(nil), sc.Model.LayerList...)
		for i, l := range c.Model.LayerList {
			if l.Dims != nil && l.Dims.MTP {
				d := *l.Dims
				d.MTP = mtp
				c.Model.LayerList[i].Dims = &d
			}
		}
		st, tr, err := unitActivations(&c)
		if err != nil {
			t.Fatal(err)
		}
		s, r := map[string]int64{}, map[string]int64{}
		for u, l := range c.Model.LayerList {
			s[l.Name], r[l.Name] = st[u], tr[u]
		}
		return s, r
	}
	ws, wt := acts(true)
	os, ot := acts(false)
	x := 16*tk*h + 8*tk // 469,794,816
	if d := ws["block.3"] - os["block.3"]; d != x || x != 469_794_816 {
		t.Errorf("MTP block keeps %d B more than its decoder layer, want 16·t·h + 8·t = 469,794,816", d)
	}
	head := 8*tk*h + 4*tk + 4*tk*v
	if ws["lm_head"] != 2*head || head != 2_353_020_928 {
		t.Errorf("lm_head keeps %d B, want two passes of %d = %d", ws["lm_head"], head, 2*head)
	}
	if os["lm_head"] != head {
		t.Errorf("lm_head without the MTP pass keeps %d B, want %d", os["lm_head"], head)
	}
	if wt["lm_head"] != 8*tk*v || ot["lm_head"] != 8*tk*v {
		t.Errorf("lm_head transient %d / %d B, want one loss backward's 8·t·V = %d", wt["lm_head"], ot["lm_head"], 8*tk*v)
	}
	if ws["block.2"] != os["block.2"] {
		t.Errorf("block.2 (not MTP) moved: %d → %d B", os["block.2"], ws["block.2"])
	}
	// Under flash-attn's fused loss each pass saves its 16-bit logits and
	// an fp32 log-sum-exp, 2·t·V + 4·t, in place of 4·t·V. With
	// keep_logits: bf16 the main pass's 16-bit logits are the loop's kept
	// pred (KeptLogits), not the head's; the MTP pass's logits are not
	// returned to the loop, so its head keeps them:
	// (8·t·h + 4·t + 4·t) + (8·t·h + 4·t + 4·t + 2·t·V) = 469,827,584 +
	// 1,059,061,760 = 1,528,889,344 B.
	fused := *sc
	fused.Training.CrossEntropy, fused.Training.KeepLogits = scenarios.CrossEntropyFused, "bf16"
	st, _, err := unitActivations(&fused)
	if err != nil {
		t.Fatal(err)
	}
	pass := 8*tk*h + 8*tk
	if got, want := st[len(st)-1], 2*pass+2*tk*v; got != want || want != 1_528_889_344 {
		t.Errorf("fused loss, keep_logits bf16: lm_head keeps %d B, want %d (the MTP pass's 16-bit logits, not the main pass's)", got, want)
	}
}
