package numerics

import "math"

// BF16 is a bfloat16 value stored as its bit pattern: the top 16 bits of the
// float32 with the same sign, exponent and leading 7 mantissa bits.
type BF16 uint16

// bf16NaN is the quiet NaN zerosim writes into flushed (not gathered)
// parameter storage so that a missing gather cannot go unnoticed.
const bf16NaN BF16 = 0x7fc0

// ToBF16 rounds a float32 to the nearest bfloat16, ties to even (PyTorch's
// Tensor.to(torch.bfloat16)). NaN stays NaN (a quiet NaN keeping the sign);
// values beyond the largest finite bfloat16 round to ±Inf.
func ToBF16(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it NaN even if the payload is in the low half
		return BF16(b>>16) | 0x0040
	}
	// Round to nearest even on bit 16: add 0x7fff plus the parity of the
	// result's lowest bit, then truncate. Carries into the exponent are
	// exactly the rounding overflow to the next binade (or to Inf).
	b += 0x7fff + (b>>16)&1
	return BF16(b >> 16)
}

// Float32 returns the float32 with the same value (exact).
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// Float64 returns the float64 with the same value (exact).
func (b BF16) Float64() float64 { return float64(b.Float32()) }

// IsNaN reports whether b is a NaN.
func (b BF16) IsNaN() bool { return b&0x7fff > 0x7f80 }

// RoundBF16 rounds a float32 to the nearest bfloat16 and returns it as a
// float32 (the value a bf16 tensor would hold).
func RoundBF16(f float32) float32 { return ToBF16(f).Float32() }

// BF16FromFloat64 rounds a float64 to the nearest bfloat16, ties to even,
// with a single rounding: the float64 is first rounded to float32 with
// round-to-odd, which keeps the second rounding (to bf16, 16 bits shorter)
// correct.
func BF16FromFloat64(x float64) BF16 {
	return ToBF16(roundToOdd32(x))
}

// roundToOdd32 rounds x to float32 by truncation toward zero, setting the
// lowest mantissa bit when the result is inexact (round to odd).
func roundToOdd32(x float64) float32 {
	f := float32(x)
	if math.IsNaN(x) || float64(f) == x {
		return f
	}
	b := math.Float32bits(f)
	if math.Abs(float64(f)) > math.Abs(x) {
		b-- // one step toward zero in magnitude (also Inf → MaxFloat32)
	}
	return math.Float32frombits(b | 1)
}

// ULPDistance is the number of bfloat16 values between a and b (0 when
// equal; +0 and -0 are equal). It is meaningless for NaNs.
func ULPDistance(a, b BF16) int {
	d := bf16Key(a) - bf16Key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// bf16Key maps b to an integer that orders like the value.
func bf16Key(b BF16) int {
	if b&0x8000 != 0 {
		return -int(b & 0x7fff)
	}
	return int(b)
}
