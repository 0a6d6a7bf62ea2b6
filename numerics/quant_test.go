package numerics

import (
	"math"
	"testing"
)

// TestFakeQuant checks DeepSpeed's symmetric quantizer by hand
// (quantization_utils.h:52-92): int8, one group of [1, −0.5, 0.25, 0]:
// max 1, scale 256/2 = 128; q = 128 → clamped to 127, −64, 32, 0;
// dequantized q/128 = 0.9921875, −0.5, 0.25, 0. int4, [3, 1, −1.5, 0.2]:
// scale 16/6 = 2.6666667; q = 8 → 7, 2.67 → 3, −4, 0.53 → 1; dequantized
// ·0.375 = 2.625, 1.125, −1.5, 0.375.
func TestFakeQuant(t *testing.T) {
	for _, tc := range []struct {
		x, want []float32
		groups  int64
		bits    uint
	}{
		{[]float32{1, -0.5, 0.25, 0}, []float32{0.9921875, -0.5, 0.25, 0}, 1, 8},
		{[]float32{3, 1, -1.5, 0.2}, []float32{2.625, 1.125, -1.5, 0.375}, 1, 4},
		// two groups: [0, 0] keeps scale 1 (max 0) → 0, 0; [2, −2] → 1.984375, −2.
		{[]float32{0, 0, 2, -2}, []float32{0, 0, 1.984375, -2}, 2, 8},
	} {
		got := fakeQuant(tc.x, tc.groups, tc.bits)
		for i := range got {
			if math.Abs(float64(got[i]-tc.want[i])) > 1e-6 {
				t.Errorf("fakeQuant(%v, %d groups, %d bits) = %v, want %v", tc.x, tc.groups, tc.bits, got, tc.want)
				break
			}
		}
	}
}

// TestQGZReduceExactOnRepresentable: gradients int4 represents exactly at
// both stages reduce to their exact sum, so qgzReduce's swizzle, slices and
// order are a reduce-scatter's. Rank r's gradient is −(r+1) everywhere:
// every group's max is its own value, which quantizes to q = −8 exactly;
// node 0 sums −1 − 2 = −3 and node 1 −3 − 4 = −7 (again −8·max/8 in their
// groups), and the nodes sum to −10.
func TestQGZReduceExactOnRepresentable(t *testing.T) {
	const world, local, d0, d1 = 4, 2, 4, 4
	grads := make([][]float32, world)
	for r := range grads {
		grads[r] = make([]float32, d0*d1)
		for i := range grads[r] {
			grads[r][i] = -float32(r + 1)
		}
	}
	for i, v := range qgzReduce(grads, d0, d1, world, local) {
		if v != -10 {
			t.Fatalf("element %d = %v, want −10", i, v)
		}
	}
}

// TestVerifyZeroPP: qwZ and qgZ on the toy models train bit for bit like
// the unsharded reference that quantizes the same way, drift from
// unquantized training by a bounded amount, and a corrupted master shard
// still fails.
func TestVerifyZeroPP(t *testing.T) {
	for _, c := range []Config{
		{Model: TinyTransformer, N: 8, K: 1, Stage: 3, Steps: 5, Seed: 1, QuantWeights: true},
		{Model: TinyTransformer, N: 8, K: 1, Stage: 3, Steps: 5, Seed: 1, QuantGrads: true, Local: 4},
		{Model: TinyTransformer, N: 8, K: 1, Stage: 3, Steps: 5, Seed: 1, QuantWeights: true, QuantGrads: true, Local: 2},
		{Model: ResidualMLP, Hidden: 16, Layers: 3, N: 4, K: 1, Stage: 3, Steps: 5, Seed: 1, QuantWeights: true, QuantGrads: true, Local: 2},
	} {
		r, err := Verify(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if !r.Pass {
			t.Errorf("%s: sharded quantized run differs from its reference: %v", c.Name(), r.First)
		}
		if len(r.QuantDrift) != c.Steps {
			t.Fatalf("%s: %d drift steps", c.Name(), len(r.QuantDrift))
		}
		moved := false
		for _, d := range r.QuantDrift {
			t.Logf("%s step %d: loss %.6g (unquantized %.6g), max |Δparam| %.3g, relative %.3g", c.Name(), d.Step, d.Loss, d.PlainLoss, d.MaxAbsParamDiff, d.RelParamDiff)
			moved = moved || d.MaxAbsParamDiff > 0
			// Bounded: the parameters stay within 5 % (L2) of unquantized
			// training and the loss within 5 %.
			if d.RelParamDiff > 0.05 || math.Abs(d.Loss-d.PlainLoss) > 0.05*math.Abs(d.PlainLoss) {
				t.Errorf("%s step %d: drift %.3g, loss %.6g vs %.6g", c.Name(), d.Step, d.RelParamDiff, d.Loss, d.PlainLoss)
			}
		}
		if !moved {
			t.Errorf("%s: quantization changed nothing", c.Name())
		}
		c.Corrupt = &Corruption{Rank: 1, Index: 0, Step: 2}
		r, err = Verify(c)
		if err != nil {
			t.Fatalf("%s corrupt: %v", c.Name(), err)
		}
		if r.Pass || r.First == nil || r.First.Step != 2 || r.First.Rank != 1 {
			t.Errorf("%s: corrupted master: pass %v, first %v; want a failure at step 2 rank 1", c.Name(), r.Pass, r.First)
		}
	}
	if err := (&Config{Model: TinyTransformer, N: 8, K: 2, Stage: 3, Steps: 1, QuantWeights: true}).Validate(); err == nil {
		t.Error("qwZ with K 2 accepted")
	}
	if err := (&Config{Model: TinyTransformer, N: 8, K: 1, Stage: 3, Steps: 1, QuantGrads: true, Local: 3}).Validate(); err == nil {
		t.Error("qgZ with 3 ranks per node of 8 accepted")
	}
}
