package reports

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCalParamsJSONKeys: calibrate --format json's params keys are the
// file's (scenarios.CalParamNames), and the text and the JSON name a held
// parameter from that one table.
func TestCalParamsJSONKeys(t *testing.T) {
	ty := reflect.TypeOf(CalibrationParams{})
	for i, n := range scenarios.CalParamNames {
		if tag := ty.Field(i).Tag.Get("json"); tag != n.Key || ty.Field(i).Tag.Get("yaml") != n.Key {
			t.Errorf("CalibrationParams.%s's json key is %q (yaml %q), want %q", ty.Field(i).Name, tag, ty.Field(i).Tag.Get("yaml"), n.Key)
		}
	}
	r := &CalibrationReport{Held: []int{3, 4}}
	var text, js strings.Builder
	if err := WriteCalibration(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteCalibrationJSON(&js, &CalibrationSummary{Network: r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "held at nominal: inter hop, fixed: ") || !strings.Contains(strings.Join(strings.Fields(js.String()), ""), `"held":["inter_hop_latency_us","fixed_cost_us"]`) {
		t.Errorf("held 3, 4: text %q, JSON %q", text.String(), js.String())
	}
	if s := (CalibrationParams{}).String(); !strings.HasPrefix(s, "intra efficiency 0.000, inter efficiency 0.000, intra hop +0.00 µs, inter hop +0.00 µs, fixed +0.00 µs") {
		t.Errorf("params print %q", s)
	}
}
