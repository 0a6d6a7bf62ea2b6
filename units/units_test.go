package units

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// Expected values are hand calculations: decimal prefixes are powers of
// 1000, binary prefixes powers of 1024, bits are divided by 8.

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Bytes
	}{
		{"80GiB", 80 << 30},
		{"80GB", 80_000_000_000},
		{"2GB", 2_000_000_000},
		{"40MB", 40_000_000},
		{"25kB", 25_000}, // SI writes kB
		{"512MiB", 512 << 20},
		{"1KiB", 1024},
		{"1.5KiB", 1536},
		{"4096B", 4096},
		{"0", 0},
		{"1TiB", 1 << 40},
		{"1PB", 1_000_000_000_000_000},
		{"8PiB", 8 << 50},
		{"2.5GB", 2_500_000_000},
		{"1E3B", 1000},
		{"1e-3GB", 1_000_000},
		{"2 GB", 2_000_000_000},
		{" 16GiB ", 16 << 30},
		{"8191PiB", 8191 << 50},
	} {
		got, err := ParseBytes(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseBytesErrors(t *testing.T) {
	const use = "(use a size such as 80GiB, 2GB, 512MiB or 4096B)"
	for _, tc := range []struct{ in, want string }{
		{"", "empty size " + use},
		{"   ", "empty size " + use},
		{"-1GB", `"-1GB" is negative (a size cannot be: drop the "-")`},
		{"1.5.5GB", `"1.5.5GB" is not a size ` + use},
		{"GB", `"GB" is not a size ` + use},
		{"1bps", `"1bps" is not a size ` + use},
		{"1e400B", `"1e400B" has an exponent out of range for a size (use an exponent from -30 to 30)`},
		{"1e31B", `"1e31B" has an exponent out of range for a size (use an exponent from -30 to 30)`},
		{"99999999999PiB", `"99999999999PiB": value does not fit in 64 bits (the largest size is 9223372036854775807 bytes)`},
		{"8192PiB", `"8192PiB": value does not fit in 64 bits (the largest size is 9223372036854775807 bytes)`},
		{"1 0GB", `"1 0GB" is not a size ` + use},
		{"1/2GB", `"1/2GB" is not a size ` + use},
		{"80", "80 what? use 80GiB or 80GB (a size needs a unit; 80B for bytes)"},
		{" 40.5 ", "40.5 what? use 40.5GiB or 40.5GB (a size needs a unit; 40.5B for bytes)"},
		{"1e3", "1e3 what? use 1e3GiB or 1e3GB (a size needs a unit; 1e3B for bytes)"},
		// QA s15 finding 15: a number GiB would make exabytes of is
		// bytes (3,623,878,656 = 3.375 · 2³⁰); one GiB would make
		// terabytes of is MiB or MB (4,096 MiB = 4 GiB).
		{"3623878656", "3623878656 what? use 3623878656B (3.38 GiB) (a size needs a unit)"},
		{"1048576", "1048576 what? use 1048576B (1.00 MiB) (a size needs a unit)"},
		{"4096", "4096 what? use 4096MiB or 4096MB (a size needs a unit; 4096B for bytes)"},
		{"1024", "1024 what? use 1024MiB or 1024MB (a size needs a unit; 1024B for bytes)"},
		{"1023", "1023 what? use 1023GiB or 1023GB (a size needs a unit; 1023B for bytes)"},
		{"+1GB", `"+1GB" is not a size ` + use},
		{"1_000B", `"1_000B" is not a size ` + use},
		{"0x10B", `"0x10B" is not a size ` + use},
		{"abc", `"abc" is not a size ` + use},
		{"1eB", `"1eB" is not a size ` + use},
		{"1e+B", `"1e+B" is not a size ` + use},
		{"0.5B", `"0.5B" is not a whole number of bytes (zerosim counts whole bytes; round it)`},
		{"1e-3B", `"1e-3B" is not a whole number of bytes (zerosim counts whole bytes; round it)`},
		{"1.0000000001KiB", `"1.0000000001KiB" is not a whole number of bytes (zerosim counts whole bytes; round it)`},
		{"∞B", `"∞B" is not a size ` + use},
		{"1" + string(make([]byte, 0)) + "00000000000000000000000000000000000000000000000000000000000000000B",
			`"100000000000000000000000000000000000000000000000000000000000000000B" is too long for a size (use at most 64 characters)`},
	} {
		got, err := ParseBytes(tc.in)
		if err == nil {
			t.Errorf("ParseBytes(%q) = %d, want error %q", tc.in, got, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("ParseBytes(%q) error\n got %q\nwant %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseBytes("99999999999PiB"); !errors.Is(err, ErrOverflow) {
		t.Errorf("overflow error %v does not wrap ErrOverflow", err)
	}
}

func TestParseBandwidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Bandwidth
	}{
		{"450GB/s", 450_000_000_000},
		{"400Gbps", 50_000_000_000},
		{"40Gbps", 5_000_000_000},
		{"100Gb/s", 12_500_000_000},
		{"25GB/s", 25_000_000_000},
		{"12.5GB/s", 12_500_000_000},
		{"25GiB/s", 25 << 30},
		{"8bps", 1},
		{"16b/s", 2},
		{"1B/s", 1},
		{"3.2Tbps", 400_000_000_000},
		{"1TB/s", 1_000_000_000_000},
		{"300MB/s", 300_000_000},
		{"10Mbps", 1_250_000},
		{"1KiB/s", 1024},
		{"400Gbit/s", 50_000_000_000},
		{"800Gb/s", 100_000_000_000},
		{"400gbps", 50_000_000_000},
		{"100mbps", 12_500_000},
		{"10Mbit/s", 1_250_000},
		{"1kB/s", 1000}, // SI writes kB
	} {
		got, err := ParseBandwidth(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBandwidth(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	const use = "(use a bandwidth such as 450GB/s, 25GiB/s or 400Gbps)"
	for _, tc := range []struct{ in, want string }{
		{"", "empty bandwidth " + use},
		{"100", "100 what? use 100GB/s (bytes) or 100Gbit/s (bits) (a bandwidth needs a unit)"},
		{"1bps", `"1bps" is not a whole number of bytes per second (zerosim counts whole bytes per second; round it)`},
		{"1.5bps", `"1.5bps" is not a whole number of bytes per second (zerosim counts whole bytes per second; round it)`},
		{"-1GB/s", `"-1GB/s" is negative (a bandwidth cannot be: drop the "-")`},
		{"GB/s", `"GB/s" is not a bandwidth ` + use},
		{"99999999TB/s", `"99999999TB/s": value does not fit in 64 bits (the largest bandwidth is 9223372036854775807 bytes per second)`},
		{"1GB/h", `"1GB/h" is not a bandwidth ` + use},
	} {
		got, err := ParseBandwidth(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseBandwidth(%q) = %d, %v; want error %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Duration
	}{
		{"500ns", 500_000},
		{"2us", 2_000_000},
		{"2µs", 2_000_000},
		{"2μs", 2_000_000}, // Greek mu, U+03BC (QA19 L9)
		{"1.5ms", 1_500_000_000},
		{"0", 0},
		{"0s", 0},
		{"1s", 1_000_000_000_000},
		{"10ps", 10},
		{"0.5ns", 500},
		{"9000000s", 9_000_000 * Second},
	} {
		got, err := ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	const use = "(use a duration such as 500ns, 2us, 1.5ms or 0)"
	for _, tc := range []struct{ in, want string }{
		{"", "empty duration " + use},
		// Said `"1" is not a duration` (qa22 L3).
		{"1", "1 what? use 1ns, 1us, 1ms or 1s (a duration needs a unit)"},
		{"1h", `"1h" is not a duration ` + use},
		{"-1ns", `"-1ns" is negative (a duration cannot be: drop the "-")`},
		{"0.5ps", `"0.5ps" is not a whole number of picoseconds (zerosim counts whole picoseconds; round it)`},
		{"10000000s", `"10000000s": value does not fit in 64 bits (the largest duration is 9223372036854775807 picoseconds)`},
	} {
		got, err := ParseDuration(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseDuration(%q) = %d, %v; want error %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Count
	}{
		{"7B", 7_000_000_000},
		{"1.34B", 1_340_000_000},
		{"175B", 175_000_000_000},
		{"260", 260},
		{"350M", 350_000_000},
		{"1.5K", 1500},
		{"1T", 1_000_000_000_000},
		{"1e9", 1_000_000_000},
		{"131072000", 131_072_000},
		// Binary prefixes, as for bytes (QA34 L3: "4Mtokens" is 4e6).
		{"4Mi", 4 << 20},
		{"4 Mi", 4 << 20},
		{"1.5Ki", 1536},
		{"2Gi", 2 << 30},
		{"1Ti", 1 << 40},
	} {
		got, err := ParseCount(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	const use = "(use a count such as 260, 350M, 1.34B or 7B)"
	for _, tc := range []struct{ in, want string }{
		{"", "empty count " + use},
		{"1.5", `"1.5" is not a whole number ` + use},
		{"1.0000000001B", `"1.0000000001B" is not a whole number ` + use},
		{"7b", `"7b" is not a count ` + use},
		{"4mi", `"4mi" is not a count ` + use},
		{"4Bi", `"4Bi" is not a count ` + use}, // B is a billion, not a binary prefix
		{"1.0001Ki", `"1.0001Ki" is not a whole number ` + use},
		{"-7B", `"-7B" is negative (a count cannot be: drop the "-")`},
		{"10000000000T", `"10000000000T": value does not fit in 64 bits (the largest count is 9223372036854775807)`},
	} {
		got, err := ParseCount(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseCount(%q) = %d, %v; want error %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseFLOPS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FLOPS
	}{
		{"312TFLOPS", 312e12},
		{"989.4TFLOPS", 989_400_000_000_000},
		{"312e12", 312e12},
		{"125TFLOPS", 125e12},
		{"1PFLOPS", 1e15},
		{"5GFLOPS", 5e9},
		{"1e9", 1e9},
		{"0", 0},
		{"10FLOPS", 10}, // a unit given is taken
	} {
		got, err := ParseFLOPS(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseFLOPS(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"1.5FLOPS", `"1.5FLOPS" is not a whole number of FLOP/s (zerosim counts whole FLOP/s; round it)`},
		{"312TF", `"312TF" is not a rate (use a rate such as 312TFLOPS or 312e12)`},
		// Read as 989 FLOP/s (qa22 L3).
		{"989", "989 what? use 989TFLOPS (a bare number is FLOP/s, and one below 1e9 is no GPU's peak)"},
		{"999999999", "999999999 what? use 999999999TFLOPS (a bare number is FLOP/s, and one below 1e9 is no GPU's peak)"},
		// 33 digits: still bare (it was read as 1 FLOP/s when length alone
		// made it not bare); the message clips it to 32 characters.
		{"000000000000000000000000000000001", "00000000000000000000000000000000… what? use 00000000000000000000000000000000…TFLOPS (a bare number is FLOP/s, and one below 1e9 is no GPU's peak)"},
	} {
		got, err := ParseFLOPS(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseFLOPS(%q) = %d, %v; want error %q", tc.in, got, err, tc.want)
		}
	}
}

func TestAddMul(t *testing.T) {
	for _, tc := range []struct {
		a, b, sum, prod int64
		sumOK, prodOK   bool
	}{
		{2, 3, 5, 6, true, true},
		{math.MaxInt64, 1, 0, math.MaxInt64, false, true},
		{math.MaxInt64, 0, math.MaxInt64, 0, true, true},
		{math.MinInt64, -1, 0, 0, false, false},
		{1 << 32, 1 << 31, 1<<32 + 1<<31, 0, true, false},
		{-5, 5, 0, -25, true, true},
		{3037000500, 3037000500, 6074001000, 0, true, false},
	} {
		s, err := Add(tc.a, tc.b)
		if (err == nil) != tc.sumOK || (tc.sumOK && s != tc.sum) {
			t.Errorf("Add(%d, %d) = %d, %v; want %d ok=%v", tc.a, tc.b, s, err, tc.sum, tc.sumOK)
		}
		p, err := Mul(tc.a, tc.b)
		if (err == nil) != tc.prodOK || (tc.prodOK && p != tc.prod) {
			t.Errorf("Mul(%d, %d) = %d, %v; want %d ok=%v", tc.a, tc.b, p, err, tc.prod, tc.prodOK)
		}
	}
}

// TestCheckedMulDiv holds CheckedMulDivFloor and CheckedMulDivCeil against
// math/big's exact quotient, at the edges of their 128-bit product: a
// product past int64 whose quotient fits, a quotient one past MaxInt64,
// and 2⁶⁴ − 1 = 4,294,967,295 · 4,294,967,297 over 2, whose floor is
// MaxInt64 and whose ceiling is not an int64.
func TestCheckedMulDiv(t *testing.T) {
	const top = math.MaxInt64
	for _, tc := range []struct {
		name    string
		a, b, c int64
		bad     bool // refused: a or b negative, c not positive
	}{
		{"small", 10, 10, 3, false},
		{"exact", 6, 7, 42, false},
		{"zero a", 0, 5, 7, false},
		{"zero b", 5, 0, 7, false},
		{"product past int64, quotient fits", top, 2, 4, false},
		{"max·max/max", top, top, top, false},
		{"quotient 2^63", 1 << 62, 4, 2, false},
		{"quotient past 2^64", top, top, 1, false},
		{"floor MaxInt64, ceil past", 4_294_967_295, 4_294_967_297, 2, false},
		// 2³²·2³² = 2⁶⁴: the product's high word equals c, so the
		// quotient is 2⁶⁴, one past uint64 (bits.Div64 would panic).
		{"high word equals c", 1 << 32, 1 << 32, 1, false},
		// 2⁶⁵ − 1 = 31 · 1,190,112,520,884,487,201: floor over 2 is
		// MaxUint64, which rounding up must not wrap to 0.
		{"floor MaxUint64, ceil wraps", 31, 1_190_112_520_884_487_201, 2, false},
		{"negative a", -1, 1, 1, true},
		{"negative b", 1, -1, 1, true},
		{"zero den", 1, 1, 0, true},
		{"negative den", 1, 1, -1, true},
	} {
		p := new(big.Int).Mul(big.NewInt(tc.a), big.NewInt(tc.b))
		for _, r := range []struct {
			name string
			f    func(a, b, c int64) (int64, error)
			ceil bool
		}{{"floor", CheckedMulDivFloor, false}, {"ceil", CheckedMulDivCeil, true}} {
			got, err := r.f(tc.a, tc.b, tc.c)
			if tc.bad {
				if err == nil || errors.Is(err, ErrOverflow) {
					t.Errorf("%s: %s(%d, %d, %d) = %d, %v; want an operand error", tc.name, r.name, tc.a, tc.b, tc.c, got, err)
				}
				continue
			}
			q, m := new(big.Int).QuoRem(p, big.NewInt(tc.c), new(big.Int))
			if r.ceil && m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			if !q.IsInt64() {
				if !errors.Is(err, ErrOverflow) {
					t.Errorf("%s: %s(%d, %d, %d) = %d, %v; want ErrOverflow (%s)", tc.name, r.name, tc.a, tc.b, tc.c, got, err, q)
				}
				continue
			}
			if err != nil || got != q.Int64() {
				t.Errorf("%s: %s(%d, %d, %d) = %d, %v; want %s", tc.name, r.name, tc.a, tc.b, tc.c, got, err, q)
			}
		}
	}
	// The edge case really does split floor from ceil.
	if f, err := CheckedMulDivFloor(4_294_967_295, 4_294_967_297, 2); err != nil || f != top {
		t.Errorf("floor((2^64-1)/2) = %d, %v; want MaxInt64", f, err)
	}
	if _, err := CheckedMulDivCeil(4_294_967_295, 4_294_967_297, 2); !errors.Is(err, ErrOverflow) {
		t.Errorf("ceil((2^64-1)/2): %v; want ErrOverflow", err)
	}
	// Calc keeps the first error and carries on.
	var c Calc
	if v := c.MulDivFloor(7, 5, 2); v != 17 || c.Err != nil {
		t.Errorf("Calc.MulDivFloor(7, 5, 2) = %d, %v; want 17", v, c.Err)
	}
	if v := c.MulDivCeil(7, 5, 2); v != 18 || c.Err != nil {
		t.Errorf("Calc.MulDivCeil(7, 5, 2) = %d, %v; want 18", v, c.Err)
	}
	c.MulDivCeil(top, top, 1)
	c.MulDivFloor(1, 1, 0)
	if !errors.Is(c.Err, ErrOverflow) {
		t.Errorf("Calc.Err = %v; want the first error, ErrOverflow", c.Err)
	}
}

func TestMulDivCeilAndTransferTime(t *testing.T) {
	for _, tc := range []struct{ a, b, c, want int64 }{
		{10, 10, 3, 34},
		{math.MaxInt64, 2, 4, math.MaxInt64/2 + 1},
		{0, 5, 7, 0},
		{6, 7, 42, 1},
	} {
		if got := MulDivCeil(tc.a, tc.b, tc.c); got != tc.want {
			t.Errorf("MulDivCeil(%d, %d, %d) = %d, want %d", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
	// 1 GB at 50 GB/s (400 Gb/s) is 20 ms; 1 byte at 3 B/s rounds up.
	for _, tc := range []struct {
		n    Bytes
		bw   Bandwidth
		want Duration
	}{
		{GB, 50e9, 20 * Millisecond},
		{1, 3, 333_333_333_334},
		{0, 1, 0},
		{1_342_382_080 * 2, 450e9, 5_966_142_578},
	} {
		if got := TransferTime(tc.n, tc.bw); got != tc.want {
			t.Errorf("TransferTime(%d, %d) = %d, want %d", tc.n, tc.bw, got, tc.want)
		}
	}
	for i, f := range []func(){
		func() { MulDivCeil(-1, 1, 1) },
		func() { MulDivCeil(1, 1, 0) },
		func() { MulDivCeil(math.MaxInt64, math.MaxInt64, 1) },
	} {
		if !panics(f) {
			t.Errorf("case %d: MulDivCeil did not panic", i)
		}
	}
}

func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Bytes(2_684_764_160).IEC(), "2.50 GiB"},
		{Bytes(2_684_764_160).SI(), "2.68 GB"},
		{Bytes(520).String(), "520 B"},
		{(398_500 * Nanosecond).String(), "398.5µs"},
		{Duration(1500).String(), "1.5ns"},
		{Duration(7).String(), "7ps"},
		{Bandwidth(50e9).String(), "50.00 GB/s"},
		{FLOPS(989e12).String(), "989.0 TFLOPS"},
		{Count(7e9).String(), "7B"},
		{Count(1_342_382_080).String(), "1342382080"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCalcKeepsFirstOverflow: Calc's products and sums are exact until one
// overflows int64, and Err then names that first overflow.
func TestCalcKeepsFirstOverflow(t *testing.T) {
	var c Calc
	if got := c.Add(c.Mul(3, 5, 7), 1); got != 106 || c.Err != nil {
		t.Fatalf("3·5·7+1 = %d, err %v; want 106, nil", got, c.Err)
	}
	c.Mul(1<<62, 4)
	first := c.Err
	if first == nil {
		t.Fatal("2^62·4 did not overflow")
	}
	c.Add(1<<62, 1<<62)
	if c.Err != first {
		t.Errorf("a second overflow replaced the first: %v", c.Err)
	}
}

// TestParseBytesNearest: a size that is not a whole number of bytes rounds
// to the nearest byte (82.4 · 2^30 = 88,476,326,297.6; 0.5 B rounds up);
// whole sizes and errors are ParseBytes's.
func TestParseBytesNearest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Bytes
	}{
		{"82.4GiB", 88_476_326_298},
		{"67.0GiB", 67 << 30},
		{"1.5B", 2},
		{"1.49B", 1},
		{"0.4B", 0},
		{"1e-3KiB", 1}, // 1.024 B
		{"2.5e-1B", 0}, // 0.25 B
		{"80GB", 80_000_000_000},
		{"0", 0},
	} {
		got, err := ParseBytesNearest(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBytesNearest(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"82.4", "-1GiB", "fast", "8192PiB", ""} {
		_, err := ParseBytesNearest(in)
		_, want := ParseBytes(in)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("ParseBytesNearest(%q): error %v, want ParseBytes's %v", in, err, want)
		}
	}
}

// FuzzParseBytesNearest: no input panics; a size ParseBytes reads is read
// the same, and any other result is ≥ 0 and within half a byte of the
// value written (checked where the input is a plain decimal of bytes).
func FuzzParseBytesNearest(f *testing.F) {
	for _, s := range []string{"82.4GiB", "0.5B", "1.49B", "1e-30B", "9.3e18B", "8191.9999PiB", "80", " 2 GB ", "-0.4B", "1e-3KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseBytesNearest(s)
		if exact, e := ParseBytes(s); e == nil && (err != nil || got != exact) {
			t.Fatalf("%q: %d, %v; ParseBytes gives %d", s, got, err, exact)
		}
		if err != nil {
			return
		}
		if got < 0 {
			t.Fatalf("%q: %d < 0", s, got)
		}
		if num, ok := strings.CutSuffix(strings.TrimSpace(s), "B"); ok && !strings.ContainsAny(num, "KMGTPi") {
			if v, e := strconv.ParseFloat(strings.TrimSpace(num), 64); e == nil && v < 1e15 && math.Abs(float64(got)-v) > 0.5+1e-6*v {
				t.Fatalf("%q: %d, more than half a byte from %g", s, got, v)
			}
		}
	})
}

// QA s15 finding 15: plan.csv's bucket_size column spelled the file's size
// "40000000B" beside "25MB". Exact spells a size as a whole number of the
// largest unit that divides it, and ParseBytes reads it back.
func TestBytesExact(t *testing.T) {
	for _, tc := range []struct {
		b    Bytes
		want string
	}{
		{40_000_000, "40MB"},
		{25_000_000, "25MB"},
		{200_000_000, "200MB"},
		{32 << 20, "32MiB"},
		{1_000_000_000, "1GB"},
		{1 << 30, "1GiB"},
		{3 << 39, "1536GiB"},
		{2_000_000_000_000, "2TB"},
		{1 << 50, "1PiB"},
		{1000, "1KB"},
		{1024, "1KiB"},
		{40_000_001, "40000001B"},
		{0, "0B"},
	} {
		got := tc.b.Exact()
		if got != tc.want {
			t.Errorf("Bytes(%d).Exact() = %q, want %q", int64(tc.b), got, tc.want)
		}
		if back, err := ParseBytes(got); tc.b != 0 && (err != nil || back != tc.b) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", got, int64(back), err, int64(tc.b))
		}
	}
}
