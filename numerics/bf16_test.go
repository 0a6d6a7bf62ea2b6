package numerics

import (
	"math"
	"testing"
)

// TestToBF16 checks round-to-nearest-even on hand-computed cases (bf16
// keeps the top 16 bits of a float32; the expected patterns follow from
// the IEEE layout).
func TestToBF16(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   uint32
		want BF16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"below half ulp", 0x3f807fff, 0x3f80},
		{"tie to even (down)", 0x3f808000, 0x3f80},
		{"tie to even (up)", 0x3f818000, 0x3f82},
		{"above half ulp", 0x3f808001, 0x3f81},
		{"negative tie", 0xbf808000, 0xbf80},
		{"max float32 → inf", 0x7f7fffff, 0x7f80},
		{"largest bf16 stays", 0x7f7f0000, 0x7f7f},
		{"-inf", 0xff800000, 0xff80},
		{"subnormal rounds up", 0x00018000, 0x0002},
		{"-0", 0x80000000, 0x8000},
	} {
		if got := ToBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("%s: ToBF16(%#08x) = %#04x, want %#04x", tc.name, tc.in, uint16(got), uint16(tc.want))
		}
	}
	for _, nan := range []uint32{0x7fc00000, 0x7f800001, 0xff800001, 0x7f80ffff} {
		if got := ToBF16(math.Float32frombits(nan)); !got.IsNaN() {
			t.Errorf("ToBF16(%#08x) = %#04x, want a NaN", nan, uint16(got))
		}
	}
}

// TestBF16FromFloat64 checks the single rounding from float64: the first
// case would round to 1 through float32 (1+2⁻⁸ is a tie there), but it
// lies above the tie.
func TestBF16FromFloat64(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want BF16
	}{
		{1 + 0x1p-8 + 0x1p-30, 0x3f81},
		{1 + 0x1p-8, 0x3f80},
		{-(1 + 0x1p-8 + 0x1p-30), 0xbf81},
		{1 + 0x1p-8 - 0x1p-40, 0x3f80},
		{1e300, 0x7f80},
		{1e-300, 0x0000},
		{3, 0x4040},
	} {
		if got := BF16FromFloat64(tc.in); got != tc.want {
			t.Errorf("BF16FromFloat64(%g) = %#04x, want %#04x", tc.in, uint16(got), uint16(tc.want))
		}
	}
	// Agrees with ToBF16 on every float32-representable input sampled.
	for b := uint32(0); b < 1<<32-1<<20; b += 0x10001 {
		f := math.Float32frombits(b)
		if math.IsNaN(float64(f)) {
			continue
		}
		if got, want := BF16FromFloat64(float64(f)), ToBF16(f); got != want {
			t.Fatalf("%#08x: BF16FromFloat64 %#04x, ToBF16 %#04x", b, uint16(got), uint16(want))
		}
	}
}

func TestULPDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b BF16
		want int
	}{
		{0x3f80, 0x3f80, 0}, {0x3f80, 0x3f81, 1}, {0x0000, 0x8000, 0}, {0x0001, 0x8001, 2}, {0x3f80, 0xbf80, 2 * 0x3f80},
	} {
		if got := ULPDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("ULPDistance(%#04x, %#04x) = %d, want %d", uint16(tc.a), uint16(tc.b), got, tc.want)
		}
	}
}

// TestAdamStepHand checks one Adam step against a hand calculation: at
// step 1 the update is −lr·g/(|g|+eps) ≈ −lr·sign(g).
func TestAdamStepHand(t *testing.T) {
	p := []float32{1, -2, 0}
	g := []float32{0.5, -4, 0}
	m := make([]float32, 3)
	v := make([]float32, 3)
	AdamStep(DefaultHyper, 1, p, g, m, v)
	for i, want := range []float64{1 - 1e-3, -2 + 1e-3, 0} {
		if math.Abs(float64(p[i])-want) > 1e-6 {
			t.Errorf("p[%d] = %v, want ≈ %v", i, p[i], want)
		}
	}
	if m[1] != float32(-0.4) || v[1] != fma32(float32(float32(1-0.999)*-4), -4, 0) {
		t.Errorf("moments m %v v %v", m, v)
	}
}

// TestAdamWeightDecay checks the two weight-decay forms against their
// definitions: Adam's L2 term equals plain Adam on g' = fma(p, f32(wd), g)
// bit for bit, and AdamW equals plain Adam on p' = p·f32(1 − lr·wd); at
// step 1 with g = 0 the L2 term alone moves p by −lr (hand calculation:
// m̂/√v̂ = sign(g')).
func TestAdamWeightDecay(t *testing.T) {
	p0 := []float32{1, -0.5, 3e-3, 0}
	g := []float32{0, 0.25, -1e-4, 0}
	for _, decoupled := range []bool{false, true} {
		h := Hyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1, Decoupled: decoupled}
		plain := h
		plain.WeightDecay = 0
		p, m, v := append([]float32(nil), p0...), make([]float32, 4), make([]float32, 4)
		q, mq, vq := append([]float32(nil), p0...), make([]float32, 4), make([]float32, 4)
		for step := 1; step <= 3; step++ {
			AdamStep(h, step, p, g, m, v)
			g2 := append([]float32(nil), g...)
			for i := range q {
				if decoupled {
					q[i] *= float32(1 - float64(h.LR*h.WeightDecay))
				} else {
					g2[i] = fma32(q[i], float32(h.WeightDecay), g[i])
				}
			}
			AdamStep(plain, step, q, g2, mq, vq)
			for i := range p {
				if math.Float32bits(p[i]) != math.Float32bits(q[i]) {
					t.Errorf("decoupled %v step %d p[%d]: %v vs definition %v", decoupled, step, i, p[i], q[i])
				}
			}
			if step == 1 && !decoupled && math.Abs(float64(p[0])-(1-1e-3)) > 1e-6 {
				t.Errorf("L2 step 1: p[0] = %v, want ≈ 0.999", p[0])
			}
		}
		if p[3] != 0 {
			t.Errorf("decoupled %v: a zero parameter with zero gradient moved to %v", decoupled, p[3])
		}
	}
}
