package numerics

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func wideOf(xs ...float32) float64 {
	var a wideSum
	for _, x := range xs {
		a.addFloat32(x)
	}
	return a.float64()
}

// TestWideSumSpan: values more than 2^60 apart sum exactly, where the
// float64 partial sums verify used lost them (QA23 M1: seed000-mlp
// stopped at step 64 with "differ by more than 2^45").
func TestWideSumSpan(t *testing.T) {
	big100 := float32(math.Ldexp(1, 100))
	tiny := math.Float32frombits(1) // 2^-149
	for _, tc := range []struct {
		xs   []float32
		want float64
	}{
		{[]float32{big100, 1, -big100}, 1},                                        // 2^100 apart: float64 gives 0
		{[]float32{math.MaxFloat32, tiny, -math.MaxFloat32}, math.Ldexp(1, -149)}, // 2^277 apart
		{[]float32{-3, 1, 2}, 0},
		{nil, 0},
	} {
		if got := wideOf(tc.xs...); got != tc.want && !(got == 0 && tc.want == 0) {
			t.Errorf("%v: %v, want %v", tc.xs, got, tc.want)
		}
	}
	// 2^70 + 1 + 2^-70 is not a float64: round-to-odd keeps it above
	// 2^70 + 1 (the sticky bit), so the bf16 rounding sees the rest.
	v := wideOf(float32(math.Ldexp(1, 70)), 1, float32(math.Ldexp(1, -70)))
	if v <= math.Ldexp(1, 70) || math.Float64bits(v)&1 != 1 {
		t.Errorf("2^70+1+2^-70 = %v (bits %x), want round-to-odd above 2^70", v, math.Float64bits(v))
	}
	if got := wideOf(-0.0, float32(math.Copysign(0, -1))); math.Signbit(got) {
		t.Errorf("-0 + -0 = %v, want +0 as verify's float64 sums from +0 gave", got)
	}
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		xs   []float32
		want float64
	}{
		{[]float32{1, inf}, math.Inf(1)},
		{[]float32{-inf, 1}, math.Inf(-1)},
		{[]float32{inf, -inf}, math.NaN()},
		{[]float32{float32(math.NaN()), 1}, math.NaN()},
	} {
		if got := wideOf(tc.xs...); math.Float64bits(got) != math.Float64bits(tc.want) && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%v: %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// TestWideSumRounding: over random bf16 values of any spread, the sum
// rounded to bf16 equals the exact (math/big.Rat) sum rounded to nearest
// even by math/big, and equals the float64 sum whenever that was exact
// (the result verify gave before).
func TestWideSumRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	exactSeen, inexactSeen := 0, 0
	for i := range 20000 {
		n := 1 + rng.IntN(40)
		spread := 1 + rng.IntN(200)
		var a wideSum
		exact := new(big.Rat)
		f64, ok := 0.0, true
		for range n {
			b := BF16(rng.Uint32()&0x807f) | BF16(uint16(127-spread/2+rng.IntN(spread+1)))<<7
			x := b.Float32()
			a.addFloat32(x)
			exact.Add(exact, new(big.Rat).SetFloat64(float64(x)))
			var exactStep bool
			f64, exactStep = exactAdd(f64, float64(x))
			ok = ok && exactStep
		}
		got := BF16FromFloat64(a.float64())
		want := ratToBF16(exact)
		if got != want {
			t.Fatalf("case %d: %v, want %v (exact %s)", i, got.Float64(), want.Float64(), exact.FloatString(60))
		}
		if ok {
			exactSeen++
			if math.Float64bits(a.float64()) != math.Float64bits(f64) {
				t.Fatalf("case %d: %v, the exact float64 sum gave %v", i, a.float64(), f64)
			}
		} else {
			inexactSeen++
		}
	}
	if exactSeen < 1000 || inexactSeen < 1000 {
		t.Errorf("cases: %d float64-exact, %d not: the test misses one kind", exactSeen, inexactSeen)
	}
}

// ratToBF16 rounds r to bf16, ties to even, by math/big (normal range).
func ratToBF16(r *big.Rat) BF16 {
	f, _ := new(big.Float).SetPrec(8).SetMode(big.ToNearestEven).SetRat(r).Float32()
	return ToBF16(f) // exact: f has 8 significant bits
}

// exactAdd is the float64 sum verify used before wideSum: a+b and whether
// it is exact (TwoSum); the oracle for "the same result whenever float64
// was exact".
func exactAdd(a, b float64) (float64, bool) {
	s := a + b
	bb := s - a
	return s, (a-(s-bb))+(b-bb) == 0
}

// TestWideSumFastPath: the float64 fast path and the words agree bit for
// bit whenever the spill happens (at the start, never, or in between), for
// additions of values and of partial sums, finite or not.
func TestWideSumFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), math.Float32frombits(1), math.MaxFloat32}
	spilled, fast := 0, 0
	for i := range 20000 {
		n := 1 + rng.IntN(12)
		spread := 1 + rng.IntN(250)
		var lazy, eager wideSum
		var parts [3]wideSum
		eager.spill()
		for j := range n {
			x := math.Float32frombits(rng.Uint32()&0x807fffff | uint32(127-spread/2+rng.IntN(spread+1))<<23)
			if rng.IntN(200) == 0 {
				x = specials[rng.IntN(len(specials))]
			}
			lazy.addFloat32(x)
			eager.addFloat32(x)
			parts[j%3].addFloat32(x)
		}
		var joined wideSum
		for k := range parts {
			joined.add(&parts[k])
		}
		a, b, c := lazy.float64(), eager.float64(), joined.float64()
		if math.IsNaN(a) != math.IsNaN(b) || math.IsNaN(a) != math.IsNaN(c) ||
			!math.IsNaN(a) && (math.Float64bits(a) != math.Float64bits(b) || math.Float64bits(a) != math.Float64bits(c)) {
			t.Fatalf("case %d: lazy %v, words %v, partials %v", i, a, b, c)
		}
		if lazy.x != nil {
			spilled++
		} else {
			fast++
		}
	}
	if spilled < 1000 || fast < 1000 {
		t.Errorf("%d spilled, %d stayed float64: the test misses one path", spilled, fast)
	}
}
