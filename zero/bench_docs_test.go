package zero

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestBenchEventsDoc holds the event counts that README "Performance" and
// docs/compute-model.md quote for BenchmarkStepScaling's GPT-3 replays equal
// to what the replays count (deterministic, unlike the wall times beside
// them), every row up to 16,384 ranks (about 3 s of replays), and the
// growth factors README states between the largest rows. (Up to 1,024
// ranks only, the 8,192-rank row went stale: 3,146,610 events typed for
// 1,655,666 counted.)
func TestBenchEventsDoc(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile("../docs/compute-model.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(readme)), " ")
	// The scaling table's rows: | ranks | wall time | events | ...
	rows := map[int]string{}
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 8 || !strings.HasSuffix(strings.TrimSpace(cells[2]), " s") {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(cells[1])); err == nil {
			rows[n] = strings.TrimSpace(cells[3])
		}
	}
	events := map[int]int64{}
	for nodes := 1; nodes <= 2048; nodes *= 2 {
		ranks := nodes * 8
		res, err := Replay(gpt3(nodes), Options{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		events[ranks] = res.Events
		if got := strconv.FormatInt(res.Events, 10); rows[ranks] != got {
			t.Errorf("README's scaling table gives %d ranks %q events, the replay %s", ranks, rows[ranks], got)
		}
		if ranks == 1024 {
			if want := "The 1,024-rank step has " + commas(res.Events) + " events"; !strings.Contains(flat, want) {
				t.Errorf("README does not say %q", want)
			}
		}
		if ranks == 512 {
			s := gpt3(nodes)
			off := 0.0
			s.Communication.ComputeInterference = &off
			resOff, err := Replay(s, Options{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("ZeRO-3 on 512 GPUs (64 nodes) replays in %s events against %s with", commas(res.Events), commas(resOff.Events))
			if !strings.Contains(strings.Join(strings.Fields(string(model)), " "), want) {
				t.Errorf("docs/compute-model.md does not say %q", want)
			}
		}
	}
	growth := func(a, b int) string { return fmt.Sprintf("%.2f×", float64(events[b])/float64(events[a])) }
	want := fmt.Sprintf("so from 2,048 to 4,096 and from 4,096 to 8,192 ranks they grow by %s and %s, and from 8,192 to 16,384 by %s",
		growth(2048, 4096), growth(4096, 8192), growth(8192, 16384))
	if !strings.Contains(flat, want) {
		t.Errorf("README does not say %q", want)
	}
}

// commas writes n with thousands separators, as the docs do.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
