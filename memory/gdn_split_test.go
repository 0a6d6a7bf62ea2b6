package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOpPolicyGDNSplitProjections: Qwen3.5's Gated DeltaNet runs four
// input projections, in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, in
// that order (Qwen3_5GatedDeltaNet.forward, transformers
// models/qwen3_5/modular_qwen3_5.py @ 8940358af742), where Qwen3-Next's
// runs in_proj_qkvz and in_proj_ba. Qwen3.6-27B (h 5120, 16 key and 48
// value heads of 128: K = 2048, V = 6144; intermediate 17408), block.0 a
// linear-attention block, under the op policy at s = 4096, b = 1:
// in_proj_qkv 1* (its output, transposed, is causal_conv1d's x itself,
// 2·t·(2K + V) = 83,886,080 B, on the list), in_proj_z 2, in_proj_b 3*
// (2·t·48 = 393,216 B, which only the sigmoid reads: kept beside the
// list), in_proj_a 4, out_proj 5* (2·t·h beside the list), w1 6, w3 7*
// (2·t·f on the list), w2 8. Kept, in forward order: the input 2·t·h,
// the conv input, b's output, out_proj's, w3's = 310,771,712 B; under
// Qwen3-Next's fused projections the same dims keep in_proj_qkvz's
// 2·t·(2K + 2V) = 134,217,728 B instead of the conv input and b's
// output: 360,710,144 B, 49,938,432 B more. Rerun: in_proj_z, in_proj_a,
// w1 and w2, 2·t·5120·(6144 + 48 + 2·17408) = 1,720,000,184,320 FLOPs
// (fused: in_proj_ba, w1, w2, 2·t·5120·(96 + 2·17408) =
// 1,464,315,412,480).
func TestOpPolicyGDNSplitProjections(t *testing.T) {
	const tk = 4096
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3.6-27b.json, layers: 2, seq_len: 4096}\n" +
		"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op, attention: flash}\n"
	s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{2 * tk * 5120, 2 * tk * (2*2048 + 6144), 2 * tk * 48, 2 * tk * 5120, 2 * tk * 17408}
	var sum int64
	for _, x := range want {
		sum += x
	}
	if sum != 310_771_712 {
		t.Fatalf("hand count %d", sum)
	}
	u := -1
	for i, ui := range r.Units {
		if ui.Name == "block.0" {
			u = i
			if !slices.Equal(ui.ActivationTensors, want) {
				t.Errorf("Qwen3.6-27B block.0 keeps %v, want %v", ui.ActivationTensors, want)
			}
		}
	}
	if u < 0 {
		t.Fatal("no block.0")
	}
	if f, err := UnitOpRecomputedMMFLOPs(s, u); err != nil || f != 1_720_000_184_320 {
		t.Errorf("Qwen3.6-27B block.0 reruns %d FLOPs (%v), want 1,720,000,184,320", f, err)
	}
	// The same block with Qwen3-Next's fused projections.
	d := UnitBlockDims(s, u)
	if !d.LinearSplitProj || d.LinearAttention == "" {
		t.Fatalf("block.0 dims %+v: want a split-projection Gated DeltaNet", d)
	}
	d.LinearSplitProj = false
	stored, _, err := BlockActivation(d, PolicyOp)
	if err != nil || stored != 360_710_144 {
		t.Errorf("fused projections keep %d B (%v), want 360,710,144", stored, err)
	}
	if f, err := OpRecomputedMMFLOPs(d); err != nil || f != 1_464_315_412_480 {
		t.Errorf("fused projections rerun %d FLOPs (%v), want 1,464,315,412,480", f, err)
	}
}
