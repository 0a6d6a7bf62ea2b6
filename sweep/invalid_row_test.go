package sweep

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// TestInvalidPointSortsLast: an invalid point's figures are empty CSV
// cells and JSON nulls, not 0 (QA22 L11: `--grid cluster.nodes=1,2 --grid
// parallelism.dp=8,16` gave two rows of step_time_ps 0, the "fastest" in
// a spreadsheet sort); so are its fits and device_fits (QA29 #9: false
// read as "does not fit" to a filter on fits == false, for a point that was
// never evaluated); and a row of either kind still reads back for --resume.
func TestInvalidPointSortsLast(t *testing.T) {
	sp, err := NewSpace([]Grid{{Key: "parallelism.k", Values: []string{"1", "3"}}})
	if err != nil {
		t.Fatal(err)
	}
	valid := Row{Index: 0, Values: []string{"1"}, StepTime: 418150485922, TokensPerSecPerGPU: 9795.517, MFU: 0.45646, Fits: true}
	bad := Row{Index: 1, Values: []string{"3"}, Err: "default.yaml: --grid parallelism.k=3: k=3 does not divide dp·cp=16"}
	for _, f := range []Format{CSV, JSONL} {
		enc := NewEncoder(nil, f, sp.Keys())
		for _, r := range []Row{valid, bad} {
			line, err := enc.Line(r)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.TrimSuffix(string(line), "\n")
			if _, err := parseRow(f, []byte(text), sp); err != nil {
				t.Errorf("%v row %d does not read back: %v\n%s", f, r.Index, err, text)
			}
			var step, tps, fits string
			if f == CSV {
				rec, err := csv.NewReader(strings.NewReader(text)).Read()
				if err != nil {
					t.Fatal(err)
				}
				step, tps, fits = rec[2], rec[2+intColumns], rec[2+intColumns+2]
			} else {
				var v map[string]any
				if err := json.Unmarshal([]byte(text), &v); err != nil {
					t.Fatal(err)
				}
				str := func(x any) string {
					if x == nil {
						return ""
					}
					b, _ := json.Marshal(x)
					return string(b)
				}
				step, tps, fits = str(v["step_time_ps"]), str(v["tokens_per_s_per_gpu"]), str(v["fits"])
				if _, ok := v["step_time_ps"]; !ok {
					t.Errorf("JSON row %d has no step_time_ps (want null)", r.Index)
				}
			}
			want := [3]string{"418150485922", "9795.517", "true"}
			if r.Err != "" {
				want = [3]string{"", "", ""}
			}
			if got := [3]string{step, tps, fits}; got != want {
				t.Errorf("%v row %d: step, tokens/s, fits %q, want %q", f, r.Index, got, want)
			}
		}
	}
	// A file written before, with 0s in its error rows, resumes too.
	old := `1,3,0,0,0,0,0,0,0.000,0.00000,false,false,,,"k=3 does not divide"`
	if _, err := parseRow(CSV, []byte(old), sp); err != nil {
		t.Errorf("an earlier error row does not read back: %v", err)
	}
}
