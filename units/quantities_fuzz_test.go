package units

import (
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

// quantityParser is one of the package's parsers with what its units mean,
// written out here from their definitions (SI prefixes are powers of 1000,
// IEC prefixes powers of 1024, a bit is an eighth of a byte, durations are
// in picoseconds, a count's B is a billion) rather than read from the
// package's suffix tables, so that the fuzzer checks the tables too.
type quantityParser struct {
	name  string
	parse func(string) (int64, error)
	// units maps a unit to its value in the base unit, as a fraction.
	units map[string][2]int64
	// bare says which bare numbers are accepted: all (a count), 0 and
	// those of MinBareFLOPS or more ("1e9", a rate), only "0" (a size, a
	// duration), or none (a bandwidth).
	bare string
}

var quantityParsers = []quantityParser{
	{"ParseBytes", func(s string) (int64, error) { v, err := ParseBytes(s); return int64(v), err },
		map[string][2]int64{"B": {1, 1}, "KB": {1e3, 1}, "MB": {1e6, 1}, "GB": {1e9, 1}, "TB": {1e12, 1}, "PB": {1e15, 1},
			"KiB": {1 << 10, 1}, "MiB": {1 << 20, 1}, "GiB": {1 << 30, 1}, "TiB": {1 << 40, 1}, "PiB": {1 << 50, 1}}, "0"},
	{"ParseBandwidth", func(s string) (int64, error) { v, err := ParseBandwidth(s); return int64(v), err },
		map[string][2]int64{"B/s": {1, 1}, "GB/s": {1e9, 1}, "TB/s": {1e12, 1}, "MiB/s": {1 << 20, 1}, "GiB/s": {1 << 30, 1},
			"bps": {1, 8}, "Gbps": {1e9, 8}, "gbps": {1e9, 8}, "Mb/s": {1e6, 8}, "Gbit/s": {1e9, 8}, "Tbit/s": {1e12, 8}}, ""},
	{"ParseDuration", func(s string) (int64, error) { v, err := ParseDuration(s); return int64(v), err },
		map[string][2]int64{"ps": {1, 1}, "ns": {1e3, 1}, "us": {1e6, 1}, "µs": {1e6, 1}, "ms": {1e9, 1}, "s": {1e12, 1}}, "0"},
	{"ParseCount", func(s string) (int64, error) { v, err := ParseCount(s); return int64(v), err },
		map[string][2]int64{"": {1, 1}, "K": {1e3, 1}, "M": {1e6, 1}, "B": {1e9, 1}, "T": {1e12, 1},
			"Ki": {1 << 10, 1}, "Mi": {1 << 20, 1}, "Gi": {1 << 30, 1}, "Ti": {1 << 40, 1}}, "all"},
	{"ParseFLOPS", func(s string) (int64, error) { v, err := ParseFLOPS(s); return int64(v), err },
		map[string][2]int64{"": {1, 1}, "FLOPS": {1, 1}, "GFLOPS": {1e9, 1}, "TFLOPS": {1e12, 1}, "PFLOPS": {1e15, 1}}, "1e9"},
}

// quantityText is the grammar the oracle reads: a non-negative decimal
// with an optional fraction and an exponent of one or two digits (read up
// to ±30, which the parsers document as their range), optional
// blanks, then a unit (letters, µ and /).
var quantityText = regexp.MustCompile(`^[ \t]*([0-9]*\.?[0-9]*)(?:[eE](-?[0-9]{1,2}))?[ \t]*([A-Za-zµ/]*)[ \t]*$`)

// oracle is the exact value of s under p's units: ok is false when s is
// outside the grammar above or names another unit, exact false when the
// value is not a whole number of base units that fits in 64 bits.
func (p quantityParser) oracle(s string) (v int64, exact, ok bool) {
	m := quantityText.FindStringSubmatch(s)
	if m == nil || strings.Trim(m[1], ".") == "" || len(m[1]) > 60 {
		return 0, false, false
	}
	unit, known := p.units[m[3]]
	if !known {
		return 0, false, false
	}
	if m[3] == "" && p.bare != "all" && p.bare != "1e9" {
		return 0, false, false // the bare-number rules are checked apart
	}
	r, good := new(big.Rat).SetString(m[1])
	if !good {
		return 0, false, false
	}
	if m[2] != "" {
		e, _ := new(big.Int).SetString(strings.TrimPrefix(m[2], "-"), 10)
		if e.Int64() > 30 {
			return 0, false, false // the parsers refuse exponents beyond ±30 outright
		}
		p10 := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), e, nil))
		if strings.HasPrefix(m[2], "-") {
			r.Quo(r, p10)
		} else {
			r.Mul(r, p10)
		}
	}
	r.Mul(r, big.NewRat(unit[0], unit[1]))
	if m[3] == "" && p.bare == "1e9" && r.Sign() > 0 && r.Cmp(big.NewRat(MinBareFLOPS, 1)) < 0 {
		return 0, false, true // a bare rate below 1e9 asks for its unit
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false, true
	}
	return r.Num().Int64(), true, true
}

// FuzzParseQuantities: no input panics and every error is one line; what
// a parser accepts is ≥ 0; and where the input is a decimal and a unit
// the parser knows, it accepts exactly the whole numbers of base units
// that fit in 64 bits, and reads the exact value (big.Rat arithmetic on
// the units' definitions).
func FuzzParseQuantities(f *testing.F) {
	for _, s := range []string{"80GiB", "2GB", "0", "80", "400Gbps", "450 GB/s", "1.5ms", "500ns", "2µs", "7B", "1.34B", "260",
		"312TFLOPS", "312e12", "989.4TFLOPS", "1e-3KiB", "0.5B", "9.3e18B", "8PiB", "1e30T", "-1s", ".5us", "1.", "1e5", "1E-2s", "12.5us ", "4Mi", "1.5Ki", "9e6Ti"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range quantityParsers {
			got, err := p.parse(s)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s(%q): error of more than one line: %q", p.name, s, err)
				}
			} else if got < 0 {
				t.Fatalf("%s(%q) = %d < 0", p.name, s, got)
			}
			if n, bare := bareNumber(s); bare {
				switch {
				case p.bare == "" && err == nil:
					t.Fatalf("%s(%q) = %d: a bare number must be refused", p.name, s, got)
				case p.bare == "0" && n != "0" && err == nil:
					t.Fatalf("%s(%q) = %d: a bare number other than 0 must be refused", p.name, s, got)
				case p.bare == "0" && n == "0" && (err != nil || got != 0):
					t.Fatalf("%s(%q) = %d, %v: want 0", p.name, s, got, err)
				}
			}
			want, exact, ok := p.oracle(s)
			if !ok {
				continue
			}
			switch {
			case exact && err != nil:
				t.Fatalf("%s(%q): %v; want %d", p.name, s, err, want)
			case exact && got != want:
				t.Fatalf("%s(%q) = %d; want %d", p.name, s, got, want)
			case !exact && err == nil:
				t.Fatalf("%s(%q) = %d; want an error (not a whole number of base units, or beyond %d)", p.name, s, got, int64(math.MaxInt64))
			}
		}
	})
}
