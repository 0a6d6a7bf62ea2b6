package reports

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestAfterStepRounding (qa20 L7): Megatron's median 6,107.5 ms fitted to
// 6,107,499,458,700 ps printed "step 6.108s" measured and "6.107s after";
// within a microsecond the after is printed as the measured step, beyond
// it as fitted.
func TestAfterStepRounding(t *testing.T) {
	for _, c := range []struct {
		after units.Duration
		want  string
	}{
		{6_107_499_458_700, "step time:           5.107s before, 6.108s after\n"},
		{6_107_400_000_000, "step time:           5.107s before, 6.107s after\n"},
	} {
		r := &ComputeCalibration{File: "c.yaml", Scenario: "s", Method: "step-time", Measured: 6_107_500_000_000,
			Before: ComputePoint{Step: 5_107_000_000_000, Efficiency: 0.5}, After: ComputePoint{Step: c.after, Efficiency: 0.4}}
		var b strings.Builder
		if err := WriteComputeCalibration(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("after %d ps: %s, want %q", c.after, b.String(), c.want)
		}
	}
}
