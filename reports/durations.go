package reports

import (
	"math/big"

	"github.com/zerosim/zerosim/units"
)

// durAt formats ps in the unit units.Duration.String picks for it (s, ms,
// µs, ns; ps below a nanosecond) with digits decimals, trailing zeros kept:
// "17.000s", not units.Duration's "17s" beside "17.910s" (QA24 L5).
func durAt(ps int64, digits int) string {
	for _, u := range []struct {
		n string
		v units.Duration
	}{{"s", units.Second}, {"ms", units.Millisecond}, {"µs", units.Microsecond}, {"ns", units.Nanosecond}} {
		if d := units.Duration(ps); d >= u.v || -d >= u.v {
			return new(big.Rat).SetFrac64(ps, int64(u.v)).FloatString(digits) + u.n
		}
	}
	return units.Duration(ps).String()
}

// apartDigits is the least d in [from, to] at which f(v, d) prints every
// two different values of vs differently (to when none does): a column or
// a pair printed at one precision, whose figures differ wherever the values
// do (plan's "7.2 ms less compute (433.64 s vs 433.64 s)", QA24 L5).
func apartDigits(f func(v int64, d int) string, from, to int, vs ...int64) int {
	for d := from; d < to; d++ {
		seen := map[string]int64{}
		apart := true
		for _, v := range vs {
			s := f(v, d)
			if w, ok := seen[s]; ok && w != v {
				apart = false
				break
			}
			seen[s] = v
		}
		if apart {
			return d
		}
	}
	return to
}

// durs formats vs at one precision, each in its own unit: 3 decimals
// (units.Duration's), more where two different times would print alike (12
// resolve a picosecond in any unit).
func durs(vs ...int64) []string {
	d := apartDigits(durAt, 3, 12, vs...)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = durAt(v, d)
	}
	return out
}

// durPair is durs of two times.
func durPair(a, b int64) (string, string) {
	s := durs(a, b)
	return s[0], s[1]
}
