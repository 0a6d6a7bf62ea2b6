package units

import "testing"

// TestDecimalHints (qa20 L2): a hint never offers a value the parser then
// refuses: "nan", "inf", "1_000" and hex floats are no numbers (ParseFloat
// took them, and "--reserved nan" was told to use nanGiB), and a
// case-sensitivity hint is never the input itself ("nans").
func TestDecimalHints(t *testing.T) {
	for s, want := range map[string]bool{"1": true, "82.4": true, ".5": true, "1e3": true, "-2.5E-3": true, "+7": true,
		"nan": false, "NaN": false, "inf": false, "-Inf": false, "1_000": false, "0x1p3": false, "": false, "1e400": false, "1.2.3": false} {
		if _, ok := Decimal(s); ok != want {
			t.Errorf("Decimal(%q) ok %t, want %t", s, ok, want)
		}
	}
	for _, s := range []string{"nans", "infms", "1_000s", "0x1p3s"} {
		if fix := caseFix(s, durationSuffixes); fix != "" {
			t.Errorf("caseFix(%q) = %q, want no hint", s, fix)
		}
	}
	if fix := caseFix("2US", durationSuffixes); fix != "2us" {
		t.Errorf("caseFix(2US) = %q, want 2us", fix)
	}
}
