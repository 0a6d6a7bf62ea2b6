package reports

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// TestComputeCalibrationFP8Note: under an fp8 recipe calibrate's
// utilization line says what run's says (fp8Utilization): MFU and HFU are
// over the bf16 peak, which fp8 GEMMs can pass at the default efficiency,
// and gives both points over peak_fp8. The default example's H100 is 989
// and 1,979 TFLOPS dense (ratio 0.49975): before MFU 120 % and HFU 125 %
// are 60.0 % and 62.5 % over peak_fp8, after 60 % and 65 % are 30.0 % and
// 32.5 %. Without fp8, no note.
func TestComputeCalibrationFP8Note(t *testing.T) {
	data, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"training.fp8=te"}, "utilization: before MFU 120.0 %, HFU 125.0 %; after MFU 60.0 %, HFU 65.0 %; with fp8 GEMMs MFU and HFU are over the bf16 peak, as torchtitan reports MFU; over peak_fp8 they are before 60.0 % and 62.5 %, after 30.0 % and 32.5 %\n"},
		{nil, "utilization: before MFU 120.0 %, HFU 125.0 %; after MFU 60.0 %, HFU 65.0 %\n"},
	} {
		s, err := scenarios.Load("default.yaml", data, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		r := &ComputeCalibration{File: "c.yaml", Scenario: s.Name, Method: "step-time", Measured: units.Duration(1e12), Setup: s,
			Before: ComputePoint{Efficiency: 0.8, Utilization: zero.Utilization{MFU: 1.20, HFU: 1.25}},
			After:  ComputePoint{Efficiency: 0.4, Utilization: zero.Utilization{MFU: 0.60, HFU: 0.65}}}
		var b strings.Builder
		if err := WriteComputeCalibration(&b, r); err != nil {
			t.Fatal(err)
		}
		var line string
		for _, l := range strings.SplitAfter(b.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "utilization") {
				line = strings.Join(strings.Fields(l), " ") + "\n"
			}
		}
		if line != strings.Join(strings.Fields(c.want), " ")+"\n" {
			t.Errorf("%v: utilization line %q, want %q\n%s", c.sets, line, c.want, b.String())
		}
	}
}
