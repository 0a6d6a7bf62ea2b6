package zero

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/memory"
)

// The memory timeline carries the simulated caching allocator's series
// (memory.AllocSim.Series) on the replayed times where the reserve is
// simulated (FSDP at stage 3): from the step's start, in time order,
// never reserving less than it allocates, its most the reported step's
// reserved peak (the simulated one: no retries in these steps, so the
// reserve only grows), and what the device holds beside it the device
// peak less the reserved one. A reserve that is a fraction of the peak
// (the default scenario at stage 1) has none.
func TestMemoryTimelineReservedSeries(t *testing.T) {
	for _, sets := range [][]string{
		{"parallelism.zero_stage=3", "communication.boundary=fsdp2"},
		{"parallelism.zero_stage=3", "communication.boundary=fsdp1"},
		{"parallelism.zero_stage=3", "communication.boundary=fsdp2", "training.grad_accum=2"},
	} {
		r, err := Replay(loadDefault(t, sets...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, sim := r.Memory, r.MemoryModel.AllocSim
		if sim == nil || len(m.Reserved) < 2 {
			t.Fatalf("%v: simulated %v, series of %d points", sets, sim != nil, len(m.Reserved))
		}
		if sim.LastStepRetries() != 0 {
			t.Fatalf("%v: the case needs a step without retries", sets)
		}
		accum := r.Schedule.Micro > 1
		if first := m.Reserved[0].Time; accum != (first > 0) {
			t.Errorf("%v: the series starts at %v (micro-steps %d)", sets, first, r.Schedule.Micro)
		}
		var peak int64
		for i, p := range m.Reserved {
			if i > 0 && p.Time <= m.Reserved[i-1].Time || p.Time > r.StepTime {
				t.Errorf("%v: point %d at %v after %v (step %v)", sets, i, p.Time, m.Reserved[i-1].Time, r.StepTime)
			}
			if p.Reserved < p.Allocated {
				t.Errorf("%v: point %d: reserved %d below allocated %d", sets, i, p.Reserved, p.Allocated)
			}
			peak = max(peak, p.Reserved)
		}
		if peak != sim.PeakReserved || peak != sim.SeriesPeakReserved() {
			t.Errorf("%v: the series' reserved peak %d, the simulation's %d (its series' %d)", sets, peak, sim.PeakReserved, sim.SeriesPeakReserved())
		}
		if m.Outside <= 0 || m.Outside != r.DevicePeak-r.ReservedPeak {
			t.Errorf("%v: outside the allocator %d, device %d less reserved %d", sets, m.Outside, r.DevicePeak, r.ReservedPeak)
		}
	}
	r, err := Replay(loadDefault(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.MemoryModel.AllocSim != nil || r.Memory.Reserved != nil || r.Memory.Outside != 0 {
		t.Errorf("default (stage 1, a fraction): series of %d points, outside %d", len(r.Memory.Reserved), r.Memory.Outside)
	}
}

// reservedSeries places the simulation's points (by event) on the events'
// times, in time order: two events at one instant give one point with the
// allocated bytes after the second and the most reserved during both (a
// release at the instant does not hide the reserve it reached; the next
// point reads the fall); a value that does not change gives no point; under accumulation the start is at
// the first event's time.
func TestReservedSeriesPlacement(t *testing.T) {
	series := []memory.ReservedPoint{{Event: -1, Allocated: 1, Reserved: 10}, {Event: 0, Allocated: 5, Reserved: 20}, {Event: 1, Allocated: 2, Reserved: 12}, {Event: 3, Allocated: 1, Reserved: 12}}
	sorted := []timedEvent{{t: 5, seq: 0}, {t: 5, seq: 1}, {t: 7, seq: 2}, {t: 9, seq: 3}}
	want := []ReservedPoint{{Time: 0, Allocated: 1, Reserved: 10}, {Time: 5, Allocated: 2, Reserved: 20}, {Time: 7, Allocated: 2, Reserved: 12}, {Time: 9, Allocated: 1, Reserved: 12}}
	if got := reservedSeries(series, sorted, 4, false); !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := reservedSeries(series, sorted, 4, true); !slices.Equal(got, want[1:]) {
		t.Errorf("accumulation: got %+v, want %+v", got, want[1:])
	}
	// An instant that ends where the previous point stands adds none.
	series = []memory.ReservedPoint{{Event: -1, Allocated: 1, Reserved: 10}, {Event: 0, Allocated: 2, Reserved: 10}, {Event: 1, Allocated: 3, Reserved: 10}, {Event: 2, Allocated: 2, Reserved: 10}}
	want = []ReservedPoint{{Time: 0, Allocated: 1, Reserved: 10}, {Time: 5, Allocated: 2, Reserved: 10}}
	if got := reservedSeries(series, []timedEvent{{t: 5, seq: 0}, {t: 7, seq: 1}, {t: 7, seq: 2}}, 3, false); !slices.Equal(got, want) {
		t.Errorf("back at an instant: got %+v, want %+v", got, want)
	}
	if got := reservedSeries(nil, sorted, 4, false); got != nil {
		t.Errorf("no simulation: %+v", got)
	}
}
