package memory

import (
	"os"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFSDP1RootFlatGemma: litgpt's Gemma 2B under FSDP1 on 4 ranks
// (testdata/validation/litgpt-gemma-2b-fsdp1-a10g.yaml: P = 3,030,460,416
// bf16 parameters, V = 256,000, h = 2,048, t = 512, every Block checkpointed,
// GA 4 under no_sync, master_dtype none) peaks in an accumulating
// micro-step at the root's split backward (rootflat.go), as the embedding's
// backward ends, holding, by hand:
//
//   - the bf16 shard, exp_avg and exp_avg_sq: 3 × P/4 × 2 = 4,545,690,624 B;
//   - every unit's unsharded gradient held under no_sync: P × 2 =
//     6,060,920,832 B;
//   - the root's unsharded parameters (embedding, final norm, lm_head),
//     resharded only after the cat: (2·V·h + h) × 2 = 2,097,156,096 B;
//   - the root's view gradients: lm_head's and the embedding's V·h × 2 =
//     1,048,576,000 B each and the final norm's h × 2 = 4,096 B;
//   - their cat, the root's size: 2,097,156,096 B;
//   - the kept bf16 logits of the micro-step before: t·V × 2 = 262,144,000 B;
//
// 17,160,223,744 B (17.16 GB; litgpt's README at 5895df10 measured 17.43).
func TestFSDP1RootFlatGemma(t *testing.T) {
	const f = "../testdata/validation/litgpt-gemma-2b-fsdp1-a10g.yaml"
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
	const V, h, P = 256_000, 2_048, 3_030_460_416
	want := int64(3*P/4*2 + P*2 + (2*V*h+h)*2 + 2*V*h*2 + h*2 + (2*V*h+h)*2 + 512*V*2)
	if want != 17_160_223_744 {
		t.Fatalf("hand sum %d", want)
	}
	if r.Peak != want || r.PeakPhase != PhaseBackward || r.PeakUnit != 0 {
		t.Errorf("peak %d B in %s unit %d, want %d B in backward at the embedding (unit 0)", r.Peak, r.PeakPhase, r.PeakUnit, want)
	}
	var cat, views int64
	for _, e := range r.Timeline() {
		switch {
		case e.Op == OpRootCat && e.Delta > 0:
			cat += e.Delta
		case e.Op == OpRootViews:
			views += e.Delta
		case e.Op == OpRelease && e.Phase == PhaseBackward && e.Component == CompGathered && e.Unit != 0 && (e.Unit == len(r.Units)-1 || e.Unit == len(r.Units)-2):
			t.Errorf("root unit %d released at its own backward (%d B), want with the root's reshard after the embedding's", e.Unit, e.Delta)
		}
	}
	if root := int64((2*V*h + h) * 2); cat != root || views != -root {
		t.Errorf("root cat %d B, views freed %d B, want %d and -%d", cat, views, root, root)
	}
	// FSDP2 has no flat parameter: no cat.
	s2 := *s
	s2.Communication.Boundary = scenarios.BoundaryFSDP2
	if r2, err := Analyze(&s2, Options{}); err != nil {
		t.Fatal(err)
	} else {
		for _, e := range r2.Timeline() {
			if e.Op == OpRootCat || e.Op == OpRootViews {
				t.Fatalf("FSDP2 has a root cat event %+v", e)
			}
		}
	}
}
