package reports

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/topology"
)

// TestCommPlotBusiestPanel: comm.png's lower panel holds each link class's
// busiest-rank wire bytes and is titled so (QA3 s16 finding 8): on the
// default scenario it was "busiest rank (sent)" with a 13.24 GiB total over
// the backward reduce-scatter, nvlink 11.77 + network 1.47 GiB, while run's
// sent/rank is 11.77 GiB (12,634,529,280 B = 15/16·2P): NCCL's PXN bytes
// cross NVLink and then the network and count on both. The panel carries
// no total, and neither its title nor the HTML caption calls it sent.
func TestCommPlotBusiestPanel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		run    *Run
		phase  int
		sent   int64 // the phase's sent bytes per rank
		wireGT bool  // the classes' busiest wire bytes add up to more than sent
	}{
		{"default", exampleRun(t, "default"), 0, 12_634_529_280, true},
		{"seed000-k4", exampleRun(t, "seed000-k4"), 0, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.run.commPlot()
			busy := p.Panels[1]
			if strings.Contains(busy.Title, "sent") || !strings.Contains(busy.Title, "wire bytes") || busy.TotalLabels {
				t.Errorf("lower panel %q, total labels %v: want wire bytes per link class and no total", busy.Title, busy.TotalLabels)
			}
			ph := tc.run.Result.Phases[tc.phase]
			var sum int64
			for i, c := range topology.Classes() {
				if got := busy.Series[i].Values[tc.phase]; got != ph.MaxRankWire[c] {
					t.Errorf("%s %s: %d, want MaxRankWire %d", ph.Phase, c, got, ph.MaxRankWire[c])
				}
				sum += ph.MaxRankWire[c]
			}
			if tc.sent >= 0 && ph.Sent != tc.sent {
				t.Errorf("%s sent %d, want %d", ph.Phase, ph.Sent, tc.sent)
			}
			if (sum > ph.Sent) != tc.wireGT {
				t.Errorf("%s: busiest wire %d against sent %d: more %v, want %v", ph.Phase, sum, ph.Sent, sum > ph.Sent, tc.wireGT)
			}
		})
	}
	if c := plotCaptions["comm"]; strings.Contains(c, "sends the most") || !strings.Contains(c, "not the bytes a rank sends") {
		t.Errorf("HTML caption %q", c)
	}
}
