package numerics

import "testing"

// TestWordsToOdd: the one fixed-point-to-float64 conversion of wideSum and
// wideSq rounds to odd. 2^127 + 1 (words 1 and 2^63) keeps its top 53
// bits, 2^127, and sets the last of them for the dropped 1: 2^127 + 2^75
// (Horner over the words, float64(2^63)·2^64 + 1, gave 2^127 by
// round-to-nearest); 2^127 + 2^75 exactly is returned as is; 2^53 − 1 in
// units of 2^-266 is exact.
func TestWordsToOdd(t *testing.T) {
	for _, c := range []struct {
		w    []uint64
		unit int
		want float64
	}{
		{[]uint64{1, 1 << 63}, 0, 0x1p127 + 0x1p75},
		{[]uint64{1 << 11, 1 << 63}, 0, 0x1p127 + 0x1p75},
		{[]uint64{0, 1 << 63}, 0, 0x1p127},
		{[]uint64{1<<53 - 1, 0, 0}, -266, 0x1p-266 * (1<<53 - 1)},
		{[]uint64{0, 0}, 0, 0},
	} {
		if got := wordsToOdd(c.w, c.unit); got != c.want {
			t.Errorf("wordsToOdd(%x, %d) = %g, want %g", c.w, c.unit, got, c.want)
		}
	}
}
