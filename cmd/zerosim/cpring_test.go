package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/reports"
)

// TestRunCPRingBytes checks that run's communication table and result.json
// carry context parallelism's ring on the link class its cp groups cross.
// Llama 3.1 8B cut to 4 blocks at 4,096 tokens, cp 2 on 2 nodes × 8 H100
// under the default selective recompute and training.attention sdpa
// (repeat_kv before SDPA: k and v at all 32 heads; flash would carry the 8
// kv heads, memory.RingKVHeads): per block each rank holds
// X = 2,048 · 32 · 128 = 8,388,608 elements of k and of v, all-gathers them
// in bf16 three times (forward, backward, the rerun forward: 4X each, one
// chunk sent at cp 2) and sends its fp32 dk, dv (8X) twice: 28X = 234,881,024
// B a block, 939,524,096 B a step, 16 ranks 15,032,385,536 B of wire.
// Placement [cp, dp] keeps each group's two ranks on neighbouring GPUs
// (NVLink); [dp, cp] puts them 8 GPUs apart, on the other node (network).
func TestRunCPRingBytes(t *testing.T) {
	const (
		X    = 2048 * 32 * 128 // a rank's k (or v) elements of a block
		sent = 4 * 28 * X      // 4 blocks
		wire = 16 * sent       // 16 ranks
	)
	for _, c := range []struct {
		placement string
		class     string // where the ring's bytes go
		other     string
	}{
		{"[cp, dp]", "nvlink", "network"},
		{"[dp, cp]", "network", "nvlink"},
	} {
		args := []string{"run", "default", "--set", "model.preset=llama3.1-8b", "--set", "model.layers=4", "--set", "parallelism.dp=8",
			"--set", "parallelism.cp=2", "--set", "training.attention=sdpa", "--set", "cluster.placement=" + c.placement}
		code, out, errOut := runMain(t, "", append(args, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.placement, code, errOut)
		}
		var j runFigures
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		found := false
		sums := map[string]int64{}
		for _, p := range j.Phases {
			for _, w := range p.Wire {
				sums[w.Class] += w.Total
			}
			if p.Phase != "context-parallel ring" {
				continue
			}
			found = true
			if p.Sent != sent || p.Collectives != 4*(3+2) {
				t.Errorf("%s: ring sends %d B in %d collectives, want %d in 20", c.placement, p.Sent, p.Collectives, int64(sent))
			}
			for _, w := range p.Wire {
				want, busiest := int64(0), int64(0)
				if w.Class == c.class {
					want, busiest = wire, sent
				}
				if w.Total != want || w.Busiest != busiest {
					t.Errorf("%s: ring %s wire %d (busiest %d), want %d (%d)", c.placement, w.Class, w.Total, w.Busiest, want, busiest)
				}
			}
		}
		if !found {
			t.Fatalf("%s: result.json has no context-parallel ring phase", c.placement)
		}
		for _, w := range j.Totals.Wire {
			if w.Total != sums[w.Class] {
				t.Errorf("%s: totals %s %d, phases sum to %d", c.placement, w.Class, w.Total, sums[w.Class])
			}
		}
		// The table, with exact bytes: phase, collectives, algorithm,
		// logical, sent, then wire per class (nvlink, network), then the
		// busiest rank's.
		code, out, errOut = runMain(t, "", append(args, "--wide")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.placement, code, errOut)
		}
		var row []string
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "│ context-parallel ring") {
				for _, f := range strings.Split(line, "│") {
					row = append(row, strings.TrimSpace(f))
				}
			}
		}
		if len(row) != 11 { // the empty fields before the first and after the last │
			t.Fatalf("%s: ring row %q", c.placement, row)
		}
		want := map[string][2]string{c.class: {reports.Commas(wire), reports.Commas(sent)}, c.other: {"0", "0"}}
		if row[3] != "ring" || row[5] != reports.Commas(sent) || row[6] != want["nvlink"][0] || row[7] != want["network"][0] ||
			row[8] != want["nvlink"][1] || row[9] != want["network"][1] {
			t.Errorf("%s: ring row %q, want sent %s on %s", c.placement, row, reports.Commas(sent), c.class)
		}
	}
}
