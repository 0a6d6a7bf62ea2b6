package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// contentionYAML is ZeRO-3 over the 2 GPUs of one node (NVLink3, 300 GB/s,
// 500 ns), ring collectives, four layers of 400M bf16 parameters: each
// forward all-gather moves 400 MB per rank, 1.333 ms on the link, and each
// layer's forward takes 1 ms, so the prefetched gather of layer i+1 runs
// beside layer i's forward for 1 ms and alone for the rest.
// c is its collective_interference.
func contentionYAML(c string) string {
	return fourLayerMLP(400000000, 3, "{algorithm: ring, prefetch_depth: 1, compute_interference: 0, collective_interference: "+c+"}")
}

// TestCollectiveSlowsOnlyBesideCompute: with collective_interference c, a
// forward all-gather is slowed for exactly the time it overlaps compute on
// its ranks: its transfer moves at 1/(1+c) of its pace while a forward runs
// beside it, so it lasts W·c/(1+c) longer than alone, W being the time it
// overlapped compute (its first 500 ns are the ring step's latency, which
// is not slowed: that much tolerance). The first gather, issued before any
// compute, and every gather that overlaps none are unchanged to the
// picosecond. Hand-worked: a gather of 1.333 ms issued with a 1 ms forward
// at c = 0.5 moves 1/1.5 ms' worth of bytes during that forward, then the
// remaining 0.667 ms' worth alone: 1.667 ms, 1/3 ms (= 1 ms·c/(1+c)) late.
func TestCollectiveSlowsOnlyBesideCompute(t *testing.T) {
	run := func(c string) *Result {
		s, err := scenarios.Load("contention.yaml", []byte(contentionYAML(c)), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(s, Options{KeepSpans: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	nominal, slowed := run("0"), run("0.5")
	const c, lat = 0.5, 500 * units.Nanosecond
	compute := func(r *Result) []interval {
		var out []interval
		for _, sp := range r.Spans[0] {
			if task := r.Schedule.Tasks[sp.Task]; !task.Kind.IsComm() && task.Stream == Compute && sp.End > sp.Start {
				out = append(out, interval{sp.Start, sp.End})
			}
		}
		return out
	}(slowed)
	var overlapped, alone int
	for i, rec := range slowed.Collectives {
		if rec.GroupIndex != 0 || rec.Phase != PhaseForwardAG {
			continue
		}
		nom := nominal.Collectives[i]
		if nom.Task != rec.Task {
			t.Fatalf("collective %d: task %d, nominal run %d", i, rec.Task, nom.Task)
		}
		var w units.Duration
		for _, iv := range compute {
			if lo, hi := max(iv.lo, rec.Start+lat), min(iv.hi, rec.End); hi > lo {
				w += hi - lo
			}
		}
		got, base := rec.End-rec.Start, nom.End-nom.Start
		want := base + units.Duration(float64(w)*c/(1+c))
		t.Logf("all-gather %d: %v alone, %v slowed, overlapped compute %v", i, base, got, w)
		if w == 0 {
			alone++
			if got != base {
				t.Errorf("all-gather %d overlaps no compute but lasts %v, %v alone", i, got, base)
			}
			continue
		}
		overlapped++
		if d := got - want; float64(d) < -float64(lat)*c/(1+c)-2 || d > 2 {
			t.Errorf("all-gather %d: lasts %v, want %v (alone %v + %v overlapped × c/(1+c))", i, got, want, base, w)
		}
	}
	if overlapped == 0 || alone == 0 {
		t.Errorf("%d forward all-gathers overlapped compute and %d did not: want some of each", overlapped, alone)
	}
	if slowed.StepTime <= nominal.StepTime {
		t.Errorf("step %v with slowed collectives, not longer than %v", slowed.StepTime, nominal.StepTime)
	}
}
