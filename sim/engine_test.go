package sim

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestEventOrder checks time order with ties broken by insertion order.
func TestEventOrder(t *testing.T) {
	e := New()
	var got []int
	add := func(at Time, id int) { e.At(at, func() { got = append(got, id) }) }
	add(5, 0)
	add(3, 1)
	add(5, 2)
	add(0, 3)
	add(3, 4)
	e.After(5, func() {
		got = append(got, 5)
		e.After(0, func() { got = append(got, 6) }) // same time, runs after 2
	})
	e.Run()
	want := []int{3, 1, 4, 0, 2, 5, 6}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if e.Now() != 5 || e.Events() != 7 {
		t.Fatalf("now %d events %d, want 5 and 7", e.Now(), e.Events())
	}
}

func TestRunUntil(t *testing.T) {
	e := New()
	var ran []Time
	for _, at := range []Time{10, 20, 30} {
		e.At(at, func() { ran = append(ran, e.Now()) })
	}
	e.RunUntil(20)
	if !slices.Equal(ran, []Time{10, 20}) || e.Now() != 20 {
		t.Fatalf("after RunUntil(20): ran %v now %d", ran, e.Now())
	}
	e.RunUntil(25)
	if e.Now() != 25 || len(ran) != 2 {
		t.Fatalf("after RunUntil(25): ran %v now %d", ran, e.Now())
	}
	if !e.Step() || e.Now() != 30 || e.Step() {
		t.Fatalf("Step: now %d", e.Now())
	}
}

func TestPanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"past":     func() { e := New(); e.RunUntil(10); e.At(5, func() {}) },
		"nil":      func() { New().At(0, nil) },
		"negative": func() { New().After(-1, func() {}) },
		"bw0":      func() { NewResource("x", 0) },
		"bwbig":    func() { NewResource("x", MaxBandwidth+1) },
		"bytes<0":  func() { New().StartFlow(-1, nil, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestTransferTime(t *testing.T) {
	for _, c := range []struct {
		bytes, bw int64
		want      Time
	}{
		{0, 1, 0},
		{1, 1, 1e12},
		{3, 1e12, 3},
		{1, 3, 333333333334},
		{64 << 20, 300e9, 223696214}, // ceil(67108864e12/300e9)
		{1 << 62, 1, MaxTime},
	} {
		if got := TransferTime(c.bytes, c.bw); got != c.want {
			t.Errorf("TransferTime(%d, %d) = %d, want %d", c.bytes, c.bw, got, c.want)
		}
	}
}

type recTracer struct {
	times []Time
	seqs  []uint64
}

func (r *recTracer) Event(t Time, seq uint64) {
	r.times = append(r.times, t)
	r.seqs = append(r.seqs, seq)
}

// randomLoad builds a seeded random mix of timers, flows and groups and
// returns the trace of (time, seq) pairs plus each flow's end time.
func randomLoad(seed uint64) (*recTracer, []Time) {
	rng := rand.New(rand.NewPCG(seed, 1))
	e := New()
	tr := &recTracer{}
	e.SetTracer(tr)
	res := make([]*Resource, 12)
	for i := range res {
		res[i] = NewResource("r", int64(1+rng.IntN(100))*1e9)
	}
	pick := func() []*Resource {
		n := 1 + rng.IntN(3)
		out := make([]*Resource, n)
		for i := range out {
			out[i] = res[rng.IntN(len(res))]
		}
		return out
	}
	var ends []Time
	var flows []*Flow
	for range 200 {
		at := Time(rng.IntN(1e9))
		bytes := int64(rng.IntN(1 << 24))
		if rng.IntN(3) == 0 {
			members := make([][]*Resource, 1+rng.IntN(4))
			for i := range members {
				members[i] = pick()
			}
			e.At(at, func() { flows = append(flows, e.StartGroup(bytes, members, nil)) })
		} else {
			rs := pick()
			e.At(at, func() { flows = append(flows, e.StartFlow(bytes, rs, nil)) })
		}
	}
	e.Run()
	for _, f := range flows {
		ends = append(ends, f.End())
	}
	return tr, ends
}

// TestDeterminismAndMonotone runs the same seeded load twice, under
// GOMAXPROCS 1 and 2: identical event order, and times never go back.
func TestDeterminismAndMonotone(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		old := runtime.GOMAXPROCS(1)
		a, ea := randomLoad(seed)
		runtime.GOMAXPROCS(2)
		b, eb := randomLoad(seed)
		runtime.GOMAXPROCS(old)
		if !slices.Equal(a.times, b.times) || !slices.Equal(a.seqs, b.seqs) || !slices.Equal(ea, eb) {
			t.Fatalf("seed %d: runs differ", seed)
		}
		for i := 1; i < len(a.times); i++ {
			if a.times[i] < a.times[i-1] {
				t.Fatalf("seed %d: time went back at event %d: %d after %d", seed, i, a.times[i], a.times[i-1])
			}
		}
		if len(a.times) < 400 {
			t.Fatalf("seed %d: only %d events", seed, len(a.times))
		}
	}
}
