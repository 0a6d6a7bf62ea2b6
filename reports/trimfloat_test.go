package reports

import "testing"

// TestTrimFloat checks calibrate --tokens-per-sec's number printing: the
// shortest decimal digits of the value, not math.Modf's fraction's binary
// error (3760.1 once printed as 3,760.09999999999990905).
func TestTrimFloat(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{3760, "3,760"},
		{3760.1, "3,760.1"},
		{1234.5, "1,234.5"},
		{98765.43, "98,765.43"},
		{0.25, "0.25"},
		{-0.5, "-0.5"},
		{-1234.5, "-1,234.5"},
		{0, "0"},
	} {
		if got := trimFloat(c.x); got != c.want {
			t.Errorf("trimFloat(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}
