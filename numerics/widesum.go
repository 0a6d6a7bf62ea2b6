package numerics

import (
	"math"
	"math/bits"
)

// wideWords is the size of a wideSum in 64-bit words. Every finite
// float32 (so every bf16) is an integer multiple of 2^-149, the smallest
// subnormal, and below 2^128 = 2^277·2^-149: as an integer count of
// 2^-149 it has at most 277 bits. 320 bits in two's complement hold the
// sign and 42 bits of headroom: any 2^42 float32 values sum exactly.
const wideWords = 5

// wideSum is an exact sum of float32 values: a fixed-point accumulator
// (Kulisch's "long accumulator", Kulisch & Miranker 1981) counting units
// of 2^-149 in 320-bit two's complement. Integer addition is associative,
// so the sum depends on no order or grouping and never loses a bit,
// whatever the magnitudes (the float64 partial sums it replaces could hold
// only values within about 2^45 of each other: QA23 M1). NaN and ±Inf are
// kept aside and win as IEEE addition says: a NaN, or +Inf with −Inf,
// gives NaN; one infinity gives it.
//
// Most sums fit a float64 exactly, so a wideSum starts as one: f holds the
// sum while every addition is exact (TwoSum), and the first inexact or
// non-finite addition spills f into the words (wide), which then take
// every value. Either way the value is the exact sum, so the result does
// not depend on when it spilled (TestWideSumFastPath).
type wideSum struct {
	f float64
	x *wideExt // nil until the sum spills
}

// wideExt is a spilled wideSum's words and non-finite values.
type wideExt struct {
	w               [wideWords]uint64
	nan, pinf, ninf bool
}

// twoSum returns a+b and whether it is exact and finite.
func twoSum(a, b float64) (float64, bool) {
	s := a + b
	bb := s - a
	return s, (a-(s-bb))+(b-bb) == 0 && s-s == 0
}

// spill moves the float64 part into the words.
func (a *wideSum) spill() {
	if a.x != nil {
		return
	}
	a.x = new(wideExt)
	f := a.f
	a.f = 0
	if f == 0 {
		return
	}
	// f is an exact sum of float32s: an integer multiple of 2^-149 below
	// 2^(128+42), so m·2^(e−53) with a 53-bit m and a shift ≥ 0 after
	// dropping m's trailing zeros.
	fr, e := math.Frexp(math.Abs(f))
	m := uint64(math.Ldexp(fr, 53))
	shift := e - 53 + 149
	for shift < 0 {
		m >>= 1
		shift++
	}
	word, bit := shift/64, uint(shift%64)
	lo, hi := m<<bit, uint64(0)
	if bit > 0 {
		hi = m >> (64 - bit)
	}
	if f > 0 {
		a.addAt(word, lo, hi)
	} else {
		a.subAt(word, lo, hi)
	}
}

// addFloat32 adds x exactly.
func (a *wideSum) addFloat32(x float32) {
	if a.x == nil {
		if s, ok := twoSum(a.f, float64(x)); ok {
			a.f = s
			return
		}
		a.spill()
	}
	b := math.Float32bits(x)
	exp, man := int(b>>23&0xff), uint64(b&0x7fffff)
	switch {
	case exp == 0xff && man != 0:
		a.x.nan = true
		return
	case exp == 0xff && b>>31 != 0:
		a.x.ninf = true
		return
	case exp == 0xff:
		a.x.pinf = true
		return
	case exp == 0 && man == 0:
		return
	case exp == 0:
		exp = 1 // subnormal: man·2^-149
	default:
		man |= 1 << 23 // normal: man·2^(exp−150) = man·2^-149·2^(exp−1)
	}
	shift := exp - 1 // 0…253
	word, bit := shift/64, uint(shift%64)
	lo, hi := man<<bit, uint64(0)
	if bit > 0 {
		hi = man >> (64 - bit)
	}
	if b>>31 == 0 {
		a.addAt(word, lo, hi)
	} else {
		a.subAt(word, lo, hi)
	}
}

// addAt adds hi·2^64+lo at word i.
func (a *wideSum) addAt(i int, lo, hi uint64) {
	var c uint64
	a.x.w[i], c = bits.Add64(a.x.w[i], lo, 0)
	for i++; i < wideWords; i++ {
		a.x.w[i], c = bits.Add64(a.x.w[i], hi, c)
		hi = 0
		if c == 0 && hi == 0 {
			return
		}
	}
}

// subAt subtracts hi·2^64+lo at word i.
func (a *wideSum) subAt(i int, lo, hi uint64) {
	var c uint64
	a.x.w[i], c = bits.Sub64(a.x.w[i], lo, 0)
	for i++; i < wideWords; i++ {
		a.x.w[i], c = bits.Sub64(a.x.w[i], hi, c)
		hi = 0
		if c == 0 {
			return
		}
	}
}

// add adds the sum o.
func (a *wideSum) add(o *wideSum) {
	if a.x == nil && o.x == nil {
		if s, ok := twoSum(a.f, o.f); ok {
			a.f = s
			return
		}
	}
	if o.x == nil {
		oc := *o
		oc.spill()
		o = &oc
	}
	a.spill()
	var c uint64
	for i := range wideWords {
		a.x.w[i], c = bits.Add64(a.x.w[i], o.x.w[i], c)
	}
	a.x.nan, a.x.pinf, a.x.ninf = a.x.nan || o.x.nan, a.x.pinf || o.x.pinf, a.x.ninf || o.x.ninf
}

// float64 returns the sum rounded to float64 by round-to-odd (truncation
// toward zero, the lowest bit set when inexact): rounding that once more
// to a format of at most 51 bits (BF16FromFloat64, through float32) is the
// correctly rounded, ties-to-even result of the exact sum. Exact when the
// sum fits in 53 bits, so whenever a float64 sum of the values was exact
// it returns that sum. Zero is +0, as IEEE addition of cancelling values
// gives.
func (a *wideSum) float64() float64 {
	if a.x == nil {
		return a.f
	}
	switch {
	case a.x.nan || (a.x.pinf && a.x.ninf):
		return math.NaN()
	case a.x.pinf:
		return math.Inf(1)
	case a.x.ninf:
		return math.Inf(-1)
	}
	w := a.x.w
	neg := w[wideWords-1]>>63 != 0
	if neg { // two's complement negation
		var c uint64 = 1
		for i := range wideWords {
			w[i], c = bits.Add64(^w[i], 0, c)
		}
	}
	v := wordsToOdd(w[:], -149)
	if neg {
		v = -v
	}
	return v
}

// wordsToOdd returns the non-negative fixed-point number w (little-endian
// 64-bit words, in units of 2^unit) rounded to float64 by round-to-odd:
// its top 53 bits, the lowest set when any bit below them is (sticky).
// Exact when the number fits in 53 bits. wideSum.float64 and wideSq.norm
// share it; Every caller's unit (−149, −266) keeps the result exact in float64's range.
func wordsToOdd(w []uint64, unit int) float64 {
	top := -1 // index of the highest set bit
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] != 0 {
			top = 64*i + 63 - bits.LeadingZeros64(w[i])
			break
		}
	}
	if top < 0 {
		return 0
	}
	if top < 53 {
		return math.Ldexp(float64(w[0]), unit) // man < 2^53: exact
	}
	low := top - 52 // the bits below low are dropped
	man := bitsAt(w, low)
	sticky := false
	for i := range w {
		switch {
		case 64*(i+1) <= low:
			sticky = sticky || w[i] != 0
		case 64*i < low:
			sticky = sticky || w[i]<<(64-uint(low-64*i)) != 0
		}
	}
	if sticky {
		man |= 1
	}
	return math.Ldexp(float64(man), unit+low) // man < 2^53: exact
}

// bitsAt returns the 53 bits of w from bit low up.
func bitsAt(w []uint64, low int) uint64 {
	i, sh := low/64, uint(low%64)
	v := w[i] >> sh
	if sh > 0 && i+1 < len(w) {
		v |= w[i+1] << (64 - sh)
	}
	return v & (1<<53 - 1)
}
