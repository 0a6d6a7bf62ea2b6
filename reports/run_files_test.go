package reports

import (
	"slices"
	"testing"
)

// TestRenderRunFiles: -o renders exactly the kinds --only asks for, in
// runKinds order.
func TestRenderRunFiles(t *testing.T) {
	run := tinyRun(t)
	plots := []string{"memory_stages.png", "memory_stages.svg", "comm.png", "comm.svg", "timeline.png", "timeline.svg", "memory_timeline.png", "memory_timeline.svg"}
	for _, tc := range []struct {
		only []string
		want []string
	}{
		{[]string{"json"}, []string{"result.json"}},
		{[]string{"trace", "json"}, []string{"result.json", "trace.json"}},
		{nil, append([]string{"report.html", "result.json", "trace.json"}, plots...)},
	} {
		want, err := ParseRunKinds(tc.only)
		if err != nil {
			t.Fatal(err)
		}
		files, err := RenderRunFiles(run, want, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			if len(f.Data) == 0 {
				t.Errorf("%v: %s is empty", tc.only, f.Name)
			}
			got = append(got, f.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("--only %v renders %v, want %v", tc.only, got, tc.want)
		}
	}
	if _, err := ParseRunKinds([]string{"pdf"}); err == nil || err.Error() != `--only "pdf": use html, json, trace or plots` {
		t.Errorf("--only pdf: %v", err)
	}
}
