package units

import "testing"

// TestUnitCaseSuggested: a size, bandwidth or duration whose unit is right
// but for case names the unit meant; before, "\"1mib\" is not a size (use
// a size such as 80GiB, 2GB, 512MiB or 4096B)", which did not say which
// letter was wrong. An ambiguous one (GB/S: bytes or bits?) keeps the
// list, and valid inputs still parse.
func TestUnitCaseSuggested(t *testing.T) {
	for _, c := range []struct {
		parse func(string) error
		in    string
		want  string
	}{
		{func(s string) error { _, err := ParseBytes(s); return err }, "1mib", `"1mib" is not a size (did you mean 1MiB? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBytes(s); return err }, "80gib", `"80gib" is not a size (did you mean 80GiB? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBytes(s); return err }, "4096b", `"4096b" is not a size (did you mean 4096B? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "300gib/s", `"300gib/s" is not a bandwidth (did you mean 300GiB/s? units are case-sensitive)`},
		{func(s string) error { _, err := ParseDuration(s); return err }, "500NS", `"500NS" is not a duration (did you mean 500ns? units are case-sensitive)`},
		{func(s string) error { _, err := ParseDuration(s); return err }, "2.84S", `"2.84S" is not a duration (did you mean 2.84s? units are case-sensitive)`},
		// Two spellings of one unit (KB, kB): the first is named.
		{func(s string) error { _, err := ParseBytes(s); return err }, "25kb", `"25kb" is not a size (did you mean 25KB? units are case-sensitive)`},
		// Bytes or bits: both spellings, with their meanings (QA19 M2:
		// "900GBps" used to suggest 900Gbps, an eighth of the 900 GB/s
		// an H100's NVLink has).
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "300GB/S", `"300GB/S" is not a bandwidth (did you mean 300GB/s (bytes) or 300Gb/s (bits)? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "900GBps", `"900GBps" is not a bandwidth (did you mean 900GB/s (bytes) or 900Gbps (bits)? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "400MBps", `"400MBps" is not a bandwidth (did you mean 400MB/s (bytes) or 400Mbps (bits)? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "25kBps", `"25kBps" is not a bandwidth (did you mean 25KB/s (bytes) or 25Kbps (bits)? units are case-sensitive)`},
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "400GBPS", `"400GBPS" is not a bandwidth (did you mean 400GB/s (bytes) or 400Gbps (bits)? units are case-sensitive)`},
		// A small b is bits: one unit.
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "400GbPS", `"400GbPS" is not a bandwidth (did you mean 400Gbps? units are case-sensitive)`},
		// Greek mu (U+03BC) as well as the micro sign (QA19 L9).
		{func(s string) error { _, err := ParseDuration(s); return err }, "2μs", ""},
		// Valid forms are unchanged.
		{func(s string) error { _, err := ParseBytes(s); return err }, "1 MiB", ""},
		{func(s string) error { _, err := ParseBytes(s); return err }, "1e3MB", ""},
		{func(s string) error { _, err := ParseBandwidth(s); return err }, "400gbps", ""},
		{func(s string) error { _, err := ParseDuration(s); return err }, "2ms", ""},
	} {
		err := c.parse(c.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
