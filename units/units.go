package units

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Bytes is an exact number of bytes.
type Bytes int64

// Duration is an exact time in picoseconds.
type Duration int64

// Bandwidth is an exact rate in bytes per second.
type Bandwidth int64

// FLOPS is an exact rate in floating-point operations per second.
type FLOPS int64

// Count is an exact dimensionless count, such as a number of parameters.
type Count int64

// Time constants in picoseconds.
const (
	Picosecond  Duration = 1
	Nanosecond           = 1000 * Picosecond
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
)

// Byte size constants: decimal SI prefixes (powers of 1000: BIPM, The
// International System of Units, 9th edition 2019, table 7) and binary
// prefixes (powers of 1024: IEC 80000-13:2008, kibi- to tebi-), the
// meanings vendors' datasheets (GB, TB/s) and nvidia-smi or PyTorch (MiB,
// GiB) give them.
const (
	KB  Bytes = 1000
	MB        = 1000 * KB
	GB        = 1000 * MB
	TB        = 1000 * GB
	KiB Bytes = 1 << 10
	MiB       = 1 << 20
	GiB       = 1 << 30
	TiB       = 1 << 40
)

// ErrOverflow is returned when a value does not fit in an int64.
var ErrOverflow = errors.New("value does not fit in 64 bits")

type suffix struct {
	name string
	num  int64 // multiplier numerator
	den  int64 // multiplier denominator (8 for bits to bytes)
}

var (
	byteSuffixes = []suffix{
		{"B", 1, 1}, {"KB", 1e3, 1}, {"kB", 1e3, 1}, {"MB", 1e6, 1}, {"GB", 1e9, 1}, {"TB", 1e12, 1}, {"PB", 1e15, 1},
		{"KiB", 1 << 10, 1}, {"MiB", 1 << 20, 1}, {"GiB", 1 << 30, 1}, {"TiB", 1 << 40, 1}, {"PiB", 1 << 50, 1},
	}
	bandwidthSuffixes = []suffix{
		{"B/s", 1, 1}, {"KB/s", 1e3, 1}, {"kB/s", 1e3, 1}, {"MB/s", 1e6, 1}, {"GB/s", 1e9, 1}, {"TB/s", 1e12, 1},
		{"KiB/s", 1 << 10, 1}, {"MiB/s", 1 << 20, 1}, {"GiB/s", 1 << 30, 1}, {"TiB/s", 1 << 40, 1},
		{"bps", 1, 8}, {"Kbps", 1e3, 8}, {"Mbps", 1e6, 8}, {"Gbps", 1e9, 8}, {"Tbps", 1e12, 8},
		{"b/s", 1, 8}, {"Kb/s", 1e3, 8}, {"Mb/s", 1e6, 8}, {"Gb/s", 1e9, 8}, {"Tb/s", 1e12, 8},
		{"bit/s", 1, 8}, {"Kbit/s", 1e3, 8}, {"Mbit/s", 1e6, 8}, {"Gbit/s", 1e9, 8}, {"Tbit/s", 1e12, 8},
		// Lowercase as NIC datasheets and ethtool write them ("400gbps").
		{"kbps", 1e3, 8}, {"mbps", 1e6, 8}, {"gbps", 1e9, 8}, {"tbps", 1e12, 8},
	}
	durationSuffixes = []suffix{
		// µ is the micro sign U+00B5, μ the Greek mu U+03BC that Greek
		// keyboards and some editors type for it (QA19 L9).
		{"ps", 1, 1}, {"ns", 1e3, 1}, {"us", 1e6, 1}, {"µs", 1e6, 1}, {"μs", 1e6, 1}, {"ms", 1e9, 1}, {"s", 1e12, 1},
	}
	// Counts take the binary prefixes too (IEC 80000-13 defines them for
	// any unit): a global batch of "4Mi tokens" is 4 × 2^20 = 4,194,304,
	// what many mean by "4M tokens", which is 4,000,000 (QA34 L3).
	countSuffixes = []suffix{
		{"K", 1e3, 1}, {"M", 1e6, 1}, {"B", 1e9, 1}, {"T", 1e12, 1},
		{"Ki", 1 << 10, 1}, {"Mi", 1 << 20, 1}, {"Gi", 1 << 30, 1}, {"Ti", 1 << 40, 1},
	}
	flopsSuffixes = []suffix{
		{"FLOPS", 1, 1}, {"GFLOPS", 1e9, 1}, {"TFLOPS", 1e12, 1}, {"PFLOPS", 1e15, 1},
	}
)

// caseFix is s with its unit written as the one suffix of sufs it matches
// but for case ("1mib" → "1MiB"), "" when none or several match ("25MB"
// spelt "25Mb" and "25mb": two units) or what precedes it is not a number.
// A unit that reads as bytes or as bits ("400GB/S": GB/s or Gb/s;
// "900GBps", the usual spelling of gigabytes per second, whose "bps" is
// bits) is returned as both spellings with their meanings: "900GB/s
// (bytes) or 900Gbps (bits)" (QA19 M2: naming only Gbps made the link 8×
// slower for whoever followed the hint).
func caseFix(s string, sufs []suffix) string {
	fixed, bytesFix, bitsFix := "", "", ""
	var mul, den int64
	for _, x := range sufs {
		if len(s) <= len(x.name) || !strings.EqualFold(s[len(s)-len(x.name):], x.name) {
			continue
		}
		num := strings.TrimSpace(s[:len(s)-len(x.name)])
		if _, ok := Decimal(num); !ok {
			continue
		}
		if x.den == 8 && bitsFix == "" {
			bitsFix = num + x.name
		} else if x.den == 1 && bytesFix == "" {
			bytesFix = num + x.name
		}
		if fixed != "" && (x.num != mul || x.den != den) {
			fixed = "-" // two meanings
		}
		if fixed == "" {
			fixed, mul, den = num+x.name, x.num, x.den // spellings of one unit (KB, kB): the first
		}
	}
	// "900GBps", "400MBps", "25Bps", "10GBPS": B for bytes, ps for per
	// second.
	if t := strings.TrimSuffix(strings.TrimSuffix(s, "Bps"), "BPS"); t != s && bitsFix != "" && bytesFix == "" {
		num := strings.TrimRight(t, "kKmMgGtT")
		if p := strings.ToUpper(t[len(num):]); len(p) <= 1 {
			if c := strings.TrimSpace(num) + p + "B/s"; hasSuffix(sufs, p+"B/s") {
				bytesFix = c
			}
		}
	}
	if bytesFix != "" && bitsFix != "" {
		return bytesFix + " (bytes) or " + bitsFix + " (bits)"
	}
	if fixed == "-" || fixed == s {
		return ""
	}
	return fixed
}

// decimalRE is a plain decimal number: digits with an optional fraction
// and exponent, optionally signed.
var decimalRE = regexp.MustCompile(`^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$`)

// Decimal reads s as a plain decimal number, ok false for anything else:
// strconv.ParseFloat also takes "nan", "inf", "1_000" and hex floats,
// which a hint built on it then offered as "nanGiB", a value the parser
// refuses (qa20 L2). A number too large for a float64 is not ok either.
func Decimal(s string) (float64, bool) {
	if !decimalRE.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// hasSuffix says whether sufs has a suffix called name.
func hasSuffix(sufs []suffix, name string) bool {
	for _, x := range sufs {
		if x.name == name {
			return true
		}
	}
	return false
}

// parse reads "<number><suffix>" exactly. The number is a non-negative
// decimal with an optional fraction and exponent; plain says whether a bare
// number (no suffix) is allowed, with multiplier 1.
func parse(s, what, allowed string, sufs []suffix, plain bool) (int64, error) {
	return parseRounding(s, what, allowed, sufs, plain, false)
}

// parseRounding is parse; with nearest, a value that is not a whole number
// of the base unit is rounded to the nearest one (halves away from zero)
// instead of refused.
func parseRounding(s, what, allowed string, sufs []suffix, plain, nearest bool) (int64, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty %s (use %s)", what, allowed)
	}
	// Longest suffix that matches wins ("GiB/s" before "B/s", "ms" before "s").
	var best *suffix
	for i := range sufs {
		if strings.HasSuffix(s, sufs[i].name) && (best == nil || len(sufs[i].name) > len(best.name)) {
			best = &sufs[i]
		}
	}
	if what != "count" && what != "rate" {
		// "1mib", "80gib", "2.84S", "300gib/s" (whose "b/s" is a suffix):
		// the list of examples did not say which letter was wrong. Counts
		// and rates ("7b") are left as they were.
		numOK := false
		if best != nil {
			_, numOK = Decimal(strings.TrimSpace(strings.TrimSuffix(s, best.name)))
		}
		if fixed := caseFix(s, sufs); !numOK && fixed != "" {
			return 0, fmt.Errorf("%q is not a %s (did you mean %s? units are case-sensitive)", orig, what, fixed)
		}
	}
	num := s
	mul := suffix{"", 1, 1}
	if best != nil {
		num = strings.TrimSpace(strings.TrimSuffix(s, best.name))
		mul = *best
	} else if !plain {
		return 0, fmt.Errorf("%q is not a %s (use %s)", orig, what, allowed)
	}
	if num == "" || strings.ContainsAny(num, "/+_ ") || strings.HasPrefix(num, "-") {
		if strings.HasPrefix(num, "-") {
			// Not "must be ≥ 0": keys that refuse 0 then said "use a
			// size > 0" of 0 (QA25 L2).
			return 0, fmt.Errorf("%q is negative (a %s cannot be: drop the \"-\")", orig, what)
		}
		return 0, fmt.Errorf("%q is not a %s (use %s)", orig, what, allowed)
	}
	mant, exp, hasExp := strings.Cut(strings.ReplaceAll(num, "E", "e"), "e")
	for _, c := range mant {
		if !(c >= '0' && c <= '9' || c == '.') {
			return 0, fmt.Errorf("%q is not a %s (use %s)", orig, what, allowed)
		}
	}
	if len(num) > 64 {
		return 0, fmt.Errorf("%q is too long for a %s (use at most 64 characters)", orig, what)
	}
	if hasExp {
		// Bound the exponent before big.Rat expands it.
		digits := strings.TrimPrefix(strings.TrimPrefix(exp, "-"), "+")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return 0, fmt.Errorf("%q is not a %s (use %s)", orig, what, allowed)
		}
		if e, err := strconv.Atoi(exp); err != nil || e > 30 || e < -30 {
			return 0, fmt.Errorf("%q has an exponent out of range for a %s (use an exponent from -30 to 30)", orig, what)
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%q is not a %s (use %s)", orig, what, allowed)
	}
	r.Mul(r, new(big.Rat).SetFrac64(mul.num, mul.den))
	if nearest && !r.IsInt() {
		// r ≥ 0: floor(r + 1/2).
		half := new(big.Rat).Add(r, big.NewRat(1, 2))
		r.SetInt(new(big.Int).Quo(half.Num(), half.Denom()))
	}
	if !r.IsInt() {
		if what == "count" {
			return 0, fmt.Errorf("%q is not a whole number (use %s)", orig, allowed)
		}
		return 0, fmt.Errorf("%q is not a whole number of %s (zerosim counts whole %s; round it)", orig, baseName(what), baseName(what))
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%q: %w (the largest %s is %s)", orig, ErrOverflow, what,
			strings.TrimSpace(fmt.Sprintf("%d %s", int64(math.MaxInt64), baseName(what))))
	}
	return r.Num().Int64(), nil
}

func baseName(what string) string {
	switch what {
	case "size":
		return "bytes"
	case "bandwidth":
		return "bytes per second"
	case "duration":
		return "picoseconds"
	case "rate":
		return "FLOP/s"
	}
	return ""
}

// ParseBytes parses a size such as "80GiB", "2GB", "512MiB" or "4096B". A
// bare number other than 0 is an error: "gpu_memory: 80" would be 80 bytes,
// and nobody means that.
func ParseBytes(s string) (Bytes, error) { return parseBytes(s, false) }

// ParseBytesNearest parses a size as ParseBytes does, but rounds one that
// is not a whole number of bytes to the nearest byte: a measurement printed
// to a few digits ("82.4GiB" is 88,476,326,297.6 B) names the bytes it was
// rounded from only to that precision.
func ParseBytesNearest(s string) (Bytes, error) { return parseBytes(s, true) }

func parseBytes(s string, nearest bool) (Bytes, error) {
	if n, ok := bareNumber(s); ok && n != "0" {
		return 0, fmt.Errorf("%s what? %s", n, sizeUnitHint(n))
	}
	v, err := parseRounding(s, "size", `a size such as 80GiB, 2GB, 512MiB or 4096B`, byteSuffixes, true, nearest)
	return Bytes(v), err
}

// ParseBandwidth parses a rate such as "450GB/s", "400Gbps", "400Gbit/s",
// "400gbps" or "25GiB/s". A bare number is an error naming both readings.
func ParseBandwidth(s string) (Bandwidth, error) {
	if n, ok := bareNumber(s); ok {
		return 0, fmt.Errorf("%s what? use %sGB/s (bytes) or %sGbit/s (bits) (a bandwidth needs a unit)", n, n, n)
	}
	v, err := parse(s, "bandwidth", `a bandwidth such as 450GB/s, 25GiB/s or 400Gbps`, bandwidthSuffixes, false)
	return Bandwidth(v), err
}

// bareNumber reports whether s is a plain non-negative decimal without a
// unit, and returns it trimmed (clipped for messages).
func bareNumber(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" || !strings.ContainsAny(s[:1], "0123456789.") {
		return "", false
	}
	// A long number is still bare (33 digits "000…001" read as 1 FLOP/s
	// when length alone made it not bare: FuzzParseQuantities); only the
	// message clips it.
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return s, true
}

// ParseDuration parses a time such as "500ns", "2us", "1.5ms" or "0".
func ParseDuration(s string) (Duration, error) { return parseDuration(s, false) }

// ParseDurationNearest parses a time as ParseDuration does, but rounds
// one finer than a picosecond to the nearest picosecond (halves away from
// zero): a measured step printed to 15 digits ("3.89006944856651s", a
// mean over logged steps) names a time only to that precision, and
// zerosim's clock ticks in picoseconds.
func ParseDurationNearest(s string) (Duration, error) { return parseDuration(s, true) }

func parseDuration(s string, nearest bool) (Duration, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	if n, ok := bareNumber(s); ok {
		// Said `"1" is not a duration`, not which unit was missing (qa22 L3).
		return 0, fmt.Errorf("%s what? use %sns, %sus, %sms or %ss (a duration needs a unit)", n, n, n, n, n)
	}
	v, err := parseRounding(s, "duration", `a duration such as 500ns, 2us, 1.5ms or 0`, durationSuffixes, false, nearest)
	return Duration(v), err
}

// ParseCount parses a count such as "7B", "1.34B", "175B", "350M" or "260"
// (decimal: B is 10^9), or "4Mi" (binary: 4 × 2^20).
func ParseCount(s string) (Count, error) {
	v, err := parse(s, "count", `a count such as 260, 350M, 1.34B or 7B`, countSuffixes, true)
	return Count(v), err
}

// MinBareFLOPS is the smallest rate a bare number (no unit) may give: 1
// GFLOP/s. A bare number is FLOP/s ("312e12"), and one below it is a
// figure in TFLOPS without its unit ("peak_bf16: 989" read as 989 FLOP/s
// made a step of 2.6e9 s: qa22 L3), as a bare size or bandwidth is asked
// for its unit.
const MinBareFLOPS = 1e9

// ParseFLOPS parses a rate such as "312TFLOPS", "989.4TFLOPS" or "312e12".
// A bare number below MinBareFLOPS is an error that asks for the unit.
func ParseFLOPS(s string) (FLOPS, error) {
	v, err := parse(s, "rate", `a rate such as 312TFLOPS or 312e12`, flopsSuffixes, true)
	if n, ok := bareNumber(s); ok && err == nil && v > 0 && v < MinBareFLOPS {
		return 0, fmt.Errorf("%s what? use %sTFLOPS (a bare number is FLOP/s, and one below 1e9 is no GPU's peak)", n, n)
	}
	return FLOPS(v), err
}

// Add returns a+b, or ErrOverflow.
func Add(a, b int64) (int64, error) {
	c := a + b
	if (c > a) != (b > 0) {
		return 0, ErrOverflow
	}
	return c, nil
}

// Mul returns a*b, or ErrOverflow.
func Mul(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, ErrOverflow
	}
	return c, nil
}

// CheckedMulDivCeil returns ceil(a*b/c) for non-negative a, b and positive
// c, computed in 128 bits, or ErrOverflow when the result does not fit in an
// int64. Use it wherever the operands come from a scenario.
func CheckedMulDivCeil(a, b, c int64) (int64, error) {
	q, r, err := mulDiv128("ceil", a, b, c)
	if err != nil {
		return 0, err
	}
	// Check before rounding up: q may be MaxUint64 (a·b < c·2⁶⁴ only bounds
	// q below 2⁶⁴), and q++ would wrap it to 0.
	if q > math.MaxInt64 || (r != 0 && q == math.MaxInt64) {
		return 0, ErrOverflow
	}
	if r != 0 {
		q++
	}
	return int64(q), nil
}

// CheckedMulDivFloor returns floor(a*b/c) for non-negative a, b and positive
// c, computed in 128 bits (so a*b may exceed int64 when the quotient does
// not), or ErrOverflow when the result does not fit in an int64.
func CheckedMulDivFloor(a, b, c int64) (int64, error) {
	q, _, err := mulDiv128("floor", a, b, c)
	if err != nil {
		return 0, err
	}
	if q > math.MaxInt64 {
		return 0, ErrOverflow
	}
	return int64(q), nil
}

// mulDiv128 is a*b/c with its remainder, the product in 128 bits, for
// CheckedMulDivCeil and CheckedMulDivFloor (round names which).
func mulDiv128(round string, a, b, c int64) (q, r uint64, err error) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, 0, fmt.Errorf("units: %s(%d·%d/%d): need a, b ≥ 0 and c > 0", round, a, b, c)
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, 0, ErrOverflow
	}
	q, r = bits.Div64(hi, lo, uint64(c))
	return q, r, nil
}

// CheckedTransferTime is TransferTime, or ErrOverflow when the time does not
// fit in int64 picoseconds (about 106 days).
func CheckedTransferTime(n Bytes, bw Bandwidth) (Duration, error) {
	if n == 0 {
		return 0, nil
	}
	d, err := CheckedMulDivCeil(int64(n), int64(Second), int64(bw))
	return Duration(d), err
}

// MulDivCeil returns ceil(a*b/c) for non-negative a, b and positive c,
// computed in 128 bits. It panics if c is not positive or the result does not
// fit in an int64; callers pass validated quantities.
func MulDivCeil(a, b, c int64) int64 {
	v, err := CheckedMulDivCeil(a, b, c)
	if err != nil {
		panic("units: MulDivCeil: " + err.Error())
	}
	return v
}

// TransferTime is the time to move n bytes at bandwidth bw, rounded up to a
// whole picosecond. Every part of zerosim that turns bytes into time uses it,
// so closed forms and the engine agree to the picosecond.
func TransferTime(n Bytes, bw Bandwidth) Duration {
	if n == 0 {
		return 0
	}
	return Duration(MulDivCeil(int64(n), int64(Second), int64(bw)))
}

// fixed formats num/den with the given number of decimals, exactly.
func fixed(num, den int64, decimals int) string {
	return new(big.Rat).SetFrac64(num, den).FloatString(decimals)
}

// IEC formats b with a binary prefix and two decimals ("2.50 GiB").
func (b Bytes) IEC() string {
	units := []struct {
		n string
		v Bytes
	}{{"PiB", 1 << 50}, {"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}}
	for _, u := range units {
		if b >= u.v || -b >= u.v {
			return fixed(int64(b), int64(u.v), 2) + " " + u.n
		}
	}
	return fmt.Sprintf("%d B", int64(b))
}

// SI formats b with a decimal prefix and two decimals ("2.68 GB").
func (b Bytes) SI() string {
	units := []struct {
		n string
		v Bytes
	}{{"PB", 1000 * TB}, {"TB", TB}, {"GB", GB}, {"MB", MB}, {"KB", KB}}
	for _, u := range units {
		if b >= u.v || -b >= u.v {
			return fixed(int64(b), int64(u.v), 2) + " " + u.n
		}
	}
	return fmt.Sprintf("%d B", int64(b))
}

// String formats b with a binary prefix.
func (b Bytes) String() string { return b.IEC() }

// Exact formats b as a whole number of the largest unit that divides it,
// the form a scenario file writes it in: "40MB", "32MiB", "1GB",
// "40000001B" (a decimal unit before a binary one of the same size class).
// ParseBytes reads it back to b.
func (b Bytes) Exact() string {
	units := []struct {
		n string
		v Bytes
	}{{"PiB", 1 << 50}, {"PB", 1000 * TB}, {"TiB", TiB}, {"TB", TB}, {"GiB", GiB}, {"GB", GB}, {"MiB", MiB}, {"MB", MB}, {"KiB", KiB}, {"KB", KB}}
	for _, u := range units {
		if b != 0 && b%u.v == 0 {
			return strconv.FormatInt(int64(b/u.v), 10) + u.n
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

// sizeUnitHint suggests units for a bare number n given as a size, by the
// reading a user most likely meant: below 1,024, GiB or GB (a GPU's memory,
// "80"); below 2²⁰, MiB or MB (a bucket, "4096": 4 GiB, where 4,096 GiB is
// beyond any GPU); above, bytes ("3623878656": 3.38 GiB, where GiB would be
// 3.4 EiB).
func sizeUnitHint(n string) string {
	v, err := strconv.ParseFloat(n, 64)
	switch {
	case err == nil && v >= 1<<20:
		hint := n + "B"
		if v == math.Trunc(v) && v < 1<<62 {
			hint += " (" + Bytes(int64(v)).IEC() + ")"
		}
		return fmt.Sprintf("use %s (a size needs a unit)", hint)
	case err == nil && v >= 1<<10:
		return fmt.Sprintf("use %sMiB or %sMB (a size needs a unit; %sB for bytes)", n, n, n)
	}
	return fmt.Sprintf("use %sGiB or %sGB (a size needs a unit; %sB for bytes)", n, n, n)
}

// String formats d in the largest unit that keeps it ≥ 1, with up to three
// decimals and trailing zeros trimmed ("398.5µs").
func (d Duration) String() string {
	units := []struct {
		n string
		v Duration
	}{{"s", Second}, {"ms", Millisecond}, {"µs", Microsecond}, {"ns", Nanosecond}}
	for _, u := range units {
		if d >= u.v || -d >= u.v {
			s := fixed(int64(d), int64(u.v), 3)
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			return s + u.n
		}
	}
	return fmt.Sprintf("%dps", int64(d))
}

// Micros returns d in microseconds as a float, for plots and traces only.
func (d Duration) Micros() float64 { return float64(d) / float64(Microsecond) }

// Seconds returns d in seconds as a float, for display only.
func (d Duration) Seconds() float64 { return float64(d) / float64(Second) }

// String formats bw in GB/s (decimal) with two decimals.
func (bw Bandwidth) String() string { return fixed(int64(bw), 1e9, 2) + " GB/s" }

// String formats f in TFLOPS with one decimal.
func (f FLOPS) String() string { return fixed(int64(f), 1e12, 1) + " TFLOPS" }

// String formats c with a decimal suffix when it is exact ("7B"), else digits.
func (c Count) String() string {
	for _, s := range []struct {
		n string
		v int64
	}{{"T", 1e12}, {"B", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if int64(c) >= s.v && int64(c)%s.v == 0 {
			return fmt.Sprintf("%d%s", int64(c)/s.v, s.n)
		}
	}
	return fmt.Sprintf("%d", int64(c))
}

// Calc is checked int64 arithmetic that keeps the first overflow, so a
// formula of many terms is written plainly and checked once: Err is nil
// when every product and sum fit.
type Calc struct{ Err error }

// Mul returns the product of xs, recording the first overflow in c.Err.
func (c *Calc) Mul(xs ...int64) int64 {
	v := int64(1)
	for _, x := range xs {
		r, err := Mul(v, x)
		if err != nil && c.Err == nil {
			c.Err = err
		}
		v = r
	}
	return v
}

// MulDivFloor returns floor(a*b/d) (CheckedMulDivFloor), recording its
// error in c.Err when it is the first.
func (c *Calc) MulDivFloor(a, b, d int64) int64 {
	v, err := CheckedMulDivFloor(a, b, d)
	c.keep(err)
	return v
}

// MulDivCeil returns ceil(a*b/d) (CheckedMulDivCeil), recording its error
// in c.Err when it is the first.
func (c *Calc) MulDivCeil(a, b, d int64) int64 {
	v, err := CheckedMulDivCeil(a, b, d)
	c.keep(err)
	return v
}

// keep records err in c.Err when it is the first.
func (c *Calc) keep(err error) {
	if err != nil && c.Err == nil {
		c.Err = err
	}
}

// Add returns the sum of xs, recording the first overflow in c.Err.
func (c *Calc) Add(xs ...int64) int64 {
	var v int64
	for _, x := range xs {
		r, err := Add(v, x)
		if err != nil && c.Err == nil {
			c.Err = err
		}
		v = r
	}
	return v
}
