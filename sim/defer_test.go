package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDeferRates: a seeded load of flows and groups over shared ports,
// starting at instants many share (ties), with stretches, ends every flow
// at the same picosecond whether rates are recomputed at each start and
// end or once per instant (SetDeferRates), and deferring recomputes fewer
// times.
func TestDeferRates(t *testing.T) {
	worst, differ, all := Time(0), 0, 0
	for seed := uint64(1); seed <= 16; seed++ {
		run := func(deferRates bool) ([]Time, []int64, uint64) {
			rng := rand.New(rand.NewPCG(seed, 3))
			e := New()
			e.SetDeferRates(deferRates)
			r := make([]*Resource, 8)
			for i := range r {
				r[i] = NewResource("r", int64(1+rng.IntN(4))*25e9)
			}
			var flows []*Flow
			var probes []int64
			for range 400 {
				at := Time(rng.IntN(200)) * 1e6 // ties
				bytes := int64(1+rng.IntN(8)) * 1e5
				var members [][]*Resource
				for range 1 + rng.IntN(3) {
					a, b := r[rng.IntN(len(r))], r[rng.IntN(len(r))]
					members = append(members, []*Resource{a, b})
				}
				e.At(at, func() { flows = append(flows, e.StartGroup(bytes, members, nil)) })
				if rng.IntN(4) == 0 {
					// A probe at an instant where flows start: what Rate
					// and Remaining say then (settled first).
					e.At(at, func() {
						if len(flows) > 0 {
							f := flows[len(flows)/3]
							probes = append(probes, f.Remaining(), int64(f.Rate()))
						}
					})
				}
				if rng.IntN(6) == 0 {
					num := uint64(1 + rng.IntN(3))
					e.At(at+Time(rng.IntN(3))*1e6, func() {
						if len(flows) > 0 {
							flows[len(flows)/2].Stretch(num, 2)
						}
					})
				}
			}
			if seed%2 == 0 {
				e.Run()
			} else {
				// RunUntil in steps that fall between instants: it must
				// settle before it moves the clock.
				for e.Pending() > 0 {
					e.RunUntil(e.Now() + 700_001)
				}
			}
			ends := make([]Time, len(flows))
			for i, f := range flows {
				if !f.Done() {
					t.Fatalf("seed %d: flow %d never ended", seed, i)
				}
				ends[i] = f.End()
			}
			return ends, probes, e.epoch
		}
		now, nowProbes, nowRecomputes := run(false)
		later, laterProbes, laterRecomputes := run(true)
		if !slices.Equal(nowProbes, laterProbes) || len(nowProbes) == 0 {
			t.Errorf("seed %d: Rate and Remaining probed at instants of starts differ deferred (%d probes)", seed, len(nowProbes))
		}
		if len(now) != len(later) {
			t.Fatalf("seed %d: %d and %d flows", seed, len(now), len(later))
		}
		for i := range now {
			d := max(now[i]-later[i], later[i]-now[i])
			all++
			if d != 0 {
				differ++
			}
			worst = max(worst, d)
		}
		if laterRecomputes >= nowRecomputes {
			t.Errorf("seed %d: %d recomputations deferred, %d at once", seed, laterRecomputes, nowRecomputes)
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d ends differ, the most by %d ps", differ, all, worst)
	}
}
