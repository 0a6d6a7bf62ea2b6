package zero

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestPeerWait splits a rank's waiting for peers among its collectives by
// hand: compute [0, 10), an all-gather reached at 5 that runs [30, 40), a
// reduce-scatter reached at 12 that runs [20, 25). The waiting is
// [10, 20) and [25, 30) (15): [10, 12) is the all-gather's, the only
// one reached; [12, 20) the reduce-scatter's, which starts first;
// [25, 30) the all-gather's again. Their Start − Arrive (25 and 8) hold
// the compute and the reduce-scatter's run besides.
func TestPeerWait(t *testing.T) {
	sc := &Schedule{Tasks: []Task{{Kind: Forward}, {Kind: AllGather, Stream: ParamComm}, {Kind: ReduceScatter, Stream: GradComm}}}
	spans := []Span{{0, 0, 0, 10}, {1, 5, 30, 40}, {2, 12, 20, 25}}
	got := PeerWait(sc, spans)
	if want := []units.Duration{0, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("shares %v, want %v", got, want)
	}
	_, waiting := Exposure(sc, spans)
	if want := []Interval{{10, 20}, {25, 30}}; !slices.Equal(waiting, want) {
		t.Errorf("waiting %v, want %v", waiting, want)
	}
}
