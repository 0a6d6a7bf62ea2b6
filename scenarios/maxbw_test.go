package scenarios

import (
	"testing"

	"github.com/zerosim/zerosim/sim"
)

// TestMaxBandwidthWithinEngine: every bandwidth a scenario loads is one the
// engine's exact rate arithmetic accepts (sim.NewResource panics past
// sim.MaxBandwidth).
func TestMaxBandwidthWithinEngine(t *testing.T) {
	if int64(MaxBandwidth) > sim.MaxBandwidth {
		t.Errorf("MaxBandwidth %d B/s is past sim.MaxBandwidth %d B/s", int64(MaxBandwidth), sim.MaxBandwidth)
	}
}
