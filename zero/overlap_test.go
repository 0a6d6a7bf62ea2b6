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
// compute is suddenly exposed whole, fails the second check. The sweeps
// with communication.collective_interference 0.3 also slow the collectives
// while compute runs beside them (the communication they time includes
// that slowdown).
func TestExposureDegradesGradually(t *testing.T) {
	cases := []struct {
		example string
		sets    []string
	}{
		{"default", []string{"parallelism.zero_stage=3"}},
		{"default", []string{"parallelism.zero_stage=3", "communication.collective_interference=0.3"}},
		{"default", []string{"parallelism.zero_stage=2"}},
		{"default", []string{"parallelism.zero_stage=1"}},
		{"default", []string{"parallelism.zero_stage=1", "communication.collective_interference=0.3"}},
	}
	steps := 48
	if testing.Short() {
		cases, steps = cases[:2], 16
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.sets), func(t *testing.T) {
			nominal := 50e9
			var prevStep, prevComm float64
			for i := range steps + 1 {
				bw := nominal / (1 + 15*float64(i)/float64(steps))
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

// TestBoundary checks each stack's forward/backward boundary on Llama 2 7B
// at ZeRO-3 over 16 ranks: reshard gathers every unit again in backward;
// fsdp1 skips the three root units (embedding, final norm, lm_head), fsdp2
// also the last block, fsdp2_head only the units after the last block
// (final_norm, lm_head), deepspeed every unit whose later parameters (forward
// and backward) stay under 1e9: lm_head (0), final_norm (2·131,072,000),
// block.31 (2·131,076,096) and block.30 (2·333,475,840 = 666,951,680), not
// block.29 (2·535,875,584 > 1e9). Skipping gathers never slows the step.
// FSDP2's copies around its collectives (fsdp2CopyBytes), which the other
// boundaries' stacks do not run, are off here (Options.noFSDP2Copies) so
// that the steps differ by the gathers alone (TestFSDP2CopyBytes holds the
// copies).
func TestBoundary(t *testing.T) {
	var steps []units.Duration
	for _, c := range []struct {
		boundary string
		skipped  int
	}{{"reshard", 0}, {"fsdp1", 3}, {"fsdp2", 4}, {"fsdp2_head", 2}, {"deepspeed", 4}} {
		s := example(t, "default", "parallelism.zero_stage=3", "communication.boundary="+c.boundary)
		sc, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		var fwdAG, bwdAG int
		for _, task := range sc.Tasks {
			switch task.Phase {
			case PhaseForwardAG:
				fwdAG++
			case PhaseBackwardAG:
				bwdAG++
			}
		}
		if fwdAG-bwdAG != c.skipped {
			t.Errorf("%s: %d forward and %d backward all-gathers, want %d fewer in backward", c.boundary, fwdAG, bwdAG, c.skipped)
		}
		r, err := Replay(s, Options{noFSDP2Copies: true})
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, r.StepTime)
	}
	for i, st := range steps[1:] {
		if st > steps[0] {
			t.Errorf("boundary %d: step %v slower than resharding everything (%v)", i+1, st, steps[0])
		}
	}
}
