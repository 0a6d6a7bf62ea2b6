package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// commSeconds is the summed duration of the collectives rank 0 takes part
// in: the most the step could lose to communication.
func commSeconds(r *Result) float64 {
	var d units.Duration
	for _, c := range r.Collectives {
		if c.GroupIndex == 0 {
			d += c.End - c.Start
		}
	}
	return d.Seconds()
}

// TestExposureDegradesGradually sweeps the inter-node bandwidth down from
// nominal (NDR, 50 GB/s per NIC) to 1/16 of it in 48 steps and checks that
// the step time grows with every slowdown (communication overlapping compute
// slows it: see interference.go), and never jumps by more
// than the interval's share: between two neighbouring bandwidths the step
// grows by at most what the communication itself grew (plus a nanosecond
// of rounding per collective). A cliff, where communication hidden behind
// compute is suddenly exposed whole, fails the second check.
func TestExposureDegradesGradually(t *testing.T) {
	for _, c := range []struct {
		example string
		sets    []string
	}{
		{"default", []string{"parallelism.zero_stage=3"}},
		{"default", []string{"parallelism.zero_stage=2"}},
		{"default", []string{"parallelism.zero_stage=1"}},
	} {
		t.Run(fmt.Sprint(c.sets), func(t *testing.T) {
			const steps = 48
			nominal := 50e9
			var prevStep, prevComm float64
			for i := range steps + 1 {
				bw := nominal / (1 + 15*float64(i)/steps)
				s := example(t, c.example, append(c.sets, fmt.Sprintf("cluster.inter.bandwidth=%.0fB/s", bw))...)
				r, err := Replay(s, Options{})
				if err != nil {
					t.Fatal(err)
				}
				step, comm := r.StepTime.Seconds(), commSeconds(r)
				if i > 0 {
					slack := float64(len(r.Collectives)) * 1e-9
					if step <= prevStep {
						t.Errorf("bandwidth %.3g B/s: step %.6fs is not longer than %.6fs at the faster link before it", bw, step, prevStep)
					}
					if grow := step - prevStep; grow > (comm-prevComm)+slack {
						t.Errorf("bandwidth %.3g B/s: step grew %.6fs, more than the communication did (%.6fs): a cliff", bw, grow, comm-prevComm)
					}
				}
				prevStep, prevComm = step, comm
			}
		})
	}
}
