package sim

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestFlowAloneExact: a flow alone finishes after exactly TransferTime.
func TestFlowAloneExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 500 {
		bytes := rng.Int64N(1 << 40)
		bw := 1 + rng.Int64N(MaxBandwidth)
		if i%3 == 0 {
			bw = int64(1+rng.IntN(1000)) * 1e9
		}
		e := New()
		r1, r2 := NewResource("a", bw), NewResource("b", bw+int64(rng.IntN(1000)))
		start := Time(rng.IntN(1000))
		var f *Flow
		e.At(start, func() { f = e.StartFlow(bytes, []*Resource{r1, r2}, nil) })
		e.Run()
		if want := start + TransferTime(bytes, bw); f.End() != want {
			t.Fatalf("case %d: %d bytes at %d B/s ends at %d, want %d", i, bytes, bw, f.End(), want)
		}
	}
}

// TestTwoFlowsOneLink: two equal flows sharing one link take exactly twice
// as long; on separate links, as long as one.
func TestTwoFlowsOneLink(t *testing.T) {
	for _, c := range []struct {
		bytes, bw int64
		exact     bool
	}{{1 << 20, 25e9, true}, {64 << 20, 300e9, false}, {1e9, 50e9, true}, {3, 1e12, true}, {7, 3, false}} {
		e := New()
		l := NewResource("l", c.bw)
		a := e.StartFlow(c.bytes, []*Resource{l}, nil)
		b := e.StartFlow(c.bytes, []*Resource{l}, nil)
		e.Run()
		one := TransferTime(c.bytes, c.bw)
		want := TransferTime(2*c.bytes, c.bw) // = 2·one when bytes·1e12/bw is whole
		if c.exact && want != 2*one {
			t.Fatalf("case %d B at %d: not an exact case", c.bytes, c.bw)
		}
		if a.End() != want || b.End() != want {
			t.Errorf("%d B at %d: shared ends %d %d, want %d", c.bytes, c.bw, a.End(), b.End(), want)
		}
		e = New()
		a = e.StartFlow(c.bytes, []*Resource{NewResource("x", c.bw)}, nil)
		b = e.StartFlow(c.bytes, []*Resource{NewResource("y", c.bw)}, nil)
		e.Run()
		if a.End() != one || b.End() != one {
			t.Errorf("%d B at %d: separate ends %d %d, want %d", c.bytes, c.bw, a.End(), b.End(), one)
		}
	}
}

// TestMaxMinFair: flow A crosses links L1 (10 GB/s) and L2 (100 GB/s), B
// and C cross only L2. A is capped at 10 by L1; B and C share the 90 left
// on L2 (45 each). When A finishes, B and C speed up to 50 each.
func TestMaxMinFair(t *testing.T) {
	e := New()
	l1, l2 := NewResource("l1", 10e9), NewResource("l2", 100e9)
	a := e.StartFlow(10e9, []*Resource{l1, l2}, nil) // 1 s alone at 10 GB/s
	b := e.StartFlow(95e9, []*Resource{l2}, nil)
	c := e.StartFlow(45e9, []*Resource{l2}, nil)
	if a.Rate() != 10e9 || b.Rate() != 45e9 || c.Rate() != 45e9 {
		t.Fatalf("rates %g %g %g, want 10e9 45e9 45e9", a.Rate(), b.Rate(), c.Rate())
	}
	e.Run()
	// c: 45e9 at 45 GB/s = 1 s (same instant as a). b: 45e9 done at 1 s,
	// then 50e9 alone at 100 GB/s = 0.5 s.
	if a.End() != 1e12 || c.End() != 1e12 || b.End() != 1.5e12 {
		t.Fatalf("ends a %d b %d c %d, want 1e12 1.5e12 1e12", a.End(), b.End(), c.End())
	}
}

// TestGroupLockstep: a 3-member ring group on per-rank ports moves at the
// slowest member's rate; one completion event for the whole group.
func TestGroupLockstep(t *testing.T) {
	e := New()
	out := []*Resource{NewResource("o0", 100e9), NewResource("o1", 100e9), NewResource("o2", 50e9)}
	in := []*Resource{NewResource("i0", 100e9), NewResource("i1", 100e9), NewResource("i2", 100e9)}
	var members [][]*Resource
	for i := range 3 {
		members = append(members, []*Resource{out[i], in[(i+1)%3]})
	}
	done := 0
	g := e.StartGroup(1e9, members, func() { done++ })
	e.Run()
	if want := TransferTime(1e9, 50e9); g.End() != want || done != 1 || e.Events() != 1 {
		t.Fatalf("group ends %d (want %d), onDone %d times, %d events", g.End(), want, done, e.Events())
	}
	// Two members on one shared NIC: weight 2 halves the rate.
	e = New()
	nic := NewResource("nic", 100e9)
	g = e.StartGroup(1e9, [][]*Resource{{nic, in[0]}, {nic, in[1]}}, nil)
	e.Run()
	if want := TransferTime(2e9, 100e9); g.End() != want {
		t.Fatalf("shared NIC group ends %d, want %d", g.End(), want)
	}
}

func TestZeroFlow(t *testing.T) {
	e := New()
	e.RunUntil(42)
	ran := false
	f := e.StartFlow(0, []*Resource{NewResource("x", 1)}, func() { ran = true })
	e.Run()
	if !ran || f.End() != 42 || !f.Done() {
		t.Fatalf("zero flow: ran %v end %d", ran, f.End())
	}
}

// TestRemaining checks the partial progress of a flow.
func TestRemaining(t *testing.T) {
	e := New()
	f := e.StartFlow(1000, []*Resource{NewResource("x", 1000)}, nil) // 1 byte per ms
	e.RunUntil(250e9)                                                // 0.25 s
	if got := f.Remaining(); got != 750 {
		t.Fatalf("Remaining = %d, want 750", got)
	}
	e.Run()
	if f.End() != 1e12 || f.Remaining() != 0 {
		t.Fatalf("end %d remaining %d", f.End(), f.Remaining())
	}
}

// TestShape: a pre-aggregated group behaves like StartGroup and can be
// started again (here twice at once: they share every port equally).
func TestShape(t *testing.T) {
	e := New()
	out := []*Resource{NewResource("o0", 100e9), NewResource("o1", 100e9)}
	in := []*Resource{NewResource("i0", 100e9), NewResource("i1", 100e9)}
	s := e.NewShape([][]*Resource{{out[0], in[1]}, {out[1], in[0]}})
	a := e.StartShape(1e9, s, nil)
	e.Run()
	if want := TransferTime(1e9, 100e9); a.End() != want {
		t.Fatalf("shape group ends %d, want %d", a.End(), want)
	}
	b := e.StartShape(1e9, s, nil)
	c := e.StartShape(1e9, s, nil)
	e.Run()
	if want := a.End() + TransferTime(2e9, 100e9); b.End() != want || c.End() != want {
		t.Fatalf("two shape groups end %d %d, want %d", b.End(), c.End(), want)
	}
	defer func() {
		if recover() == nil {
			t.Error("StartShape with another engine's shape: no panic")
		}
	}()
	New().StartShape(1, s, nil)
}

// A group alone on its resources takes its rate from its lowest fair level
// at once (no recomputation), finishing after the largest
// TransferTime(weight·bytes, bandwidth) over its resources; when it leaves
// shared resources the other flows speed up, when it leaves its own nothing
// else changes.
func TestGroupAlone(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"1MB", 1e6}, {"odd", 999_983}, {"1B", 1}} {
		e := New()
		a, b := NewResource("a", 100e9), NewResource("b", 30e9)
		g := e.StartGroup(c.bytes, [][]*Resource{{a, b}, {a}, {b, b}}, nil) // a: 2, b: 3
		want := max(TransferTime(2*c.bytes, 100e9), TransferTime(3*c.bytes, 30e9))
		x := NewResource("x", 50e9)
		alone := e.StartFlow(c.bytes, []*Resource{x}, nil)
		e.Run()
		if g.End() != Time(want) || alone.End() != TransferTime(c.bytes, 50e9) {
			t.Errorf("%s: group ends %d, want %d; flow ends %d, want %d", c.name, g.End(), want, alone.End(), TransferTime(c.bytes, 50e9))
		}
		// Shared then alone again: a flow on b shares it with the group
		// (weight 3 + 1 = 4 on 30 GB/s), then runs alone at full rate.
		e2 := New()
		a2, b2 := NewResource("a", 100e9), NewResource("b", 30e9)
		g2 := e2.StartGroup(c.bytes, [][]*Resource{{a2, b2}, {a2}, {b2, b2}}, nil)
		f2 := e2.StartFlow(4*c.bytes, []*Resource{b2}, nil)
		e2.Run()
		// While both run, b gives each weight unit 30e9/4: the group needs
		// 3·bytes at 3/4 of b, the flow 4·bytes at 1/4 of b; the group ends
		// first (at TransferTime(4·bytes, b)), then the flow has 3·bytes
		// left alone on b.
		if want := TransferTime(4*c.bytes, 30e9); g2.End() != want {
			t.Errorf("%s: shared group ends %d, want %d", c.name, g2.End(), want)
		}
		if want := TransferTime(4*c.bytes, 30e9) + TransferTime(3*c.bytes, 30e9); f2.End() < want-1 || f2.End() > want+1 {
			t.Errorf("%s: flow ends %d, want %d (±1 ps)", c.name, f2.End(), want)
		}
	}
}

// TestStretch: 1 GB alone on a 10 GB/s link takes 100 ms; stretched by 5/4
// from 20 ms to 60 ms, its 40 ms there move 32 ms' worth of bytes, so it
// ends 8 ms late, at 108 ms. A second flow on the same link keeps its fair
// half of the link throughout (the stretched flow holds its bandwidth).
// Stretching by a factor and back leaves at most a work unit of rounding,
// and a huge factor saturates instead of wrapping.
func TestStretch(t *testing.T) {
	const ms = Time(1e9)
	e := New()
	l := NewResource("l", 10e9)
	f := e.StartFlow(1e9, []*Resource{l}, nil)
	e.At(20*ms, func() { f.Stretch(5, 4) })
	e.At(60*ms, func() { f.Stretch(4, 5) })
	e.Run()
	if want := 108 * ms; f.End() != want {
		t.Errorf("stretched flow ends at %d ps, want %d", f.End(), want)
	}

	e = New()
	l = NewResource("l", 10e9)
	a := e.StartFlow(1e9, []*Resource{l}, nil)
	b := e.StartFlow(1e9, []*Resource{l}, nil)
	a.Stretch(2, 1)
	e.Run()
	// Both move at 5 GB/s until b ends at 200 ms; a, whose 1 GB counts
	// double, has moved half of it and is then alone at 10 GB/s with 1 GB
	// of doubled work left: 100 ms more.
	if b.End() != 200*ms || a.End() != 300*ms {
		t.Errorf("shared link: ends %d and %d ps, want %d and %d", a.End(), b.End(), 300*ms, 200*ms)
	}

	h0, l0 := bits.Mul64(1e9, workPerByte)
	hi, lo := mulDivCeil128(h0, l0, 1_189_000, 1_000_000)
	hi, lo = mulDivCeil128(hi, lo, 1_000_000, 1_189_000)
	if d, b := bits.Sub64(lo, l0, 0); hi-h0-b != 0 || d > 1 {
		t.Errorf("stretch and back: %d:%d, want %d:%d (+1)", hi, lo, h0, l0)
	}
	if hi, lo := mulDivCeil128(1<<62, 0, 8, 1); hi != ^uint64(0) || lo != ^uint64(0) {
		t.Errorf("overflowing stretch gives %d:%d, want saturation", hi, lo)
	}
}

// TestShapeClass: shapes over the same resources with the same weights, in
// any order, are one class; another weight or resource makes another.
func TestShapeClass(t *testing.T) {
	e := New()
	r := []*Resource{NewResource("a", 10e9), NewResource("b", 20e9), NewResource("c", 30e9)}
	base := e.NewShape([][]*Resource{{r[0], r[1]}, {r[1], r[2]}}) // a 1, b 2, c 1
	for _, c := range []struct {
		name    string
		members [][]*Resource
		same    bool
	}{
		{"same members", [][]*Resource{{r[0], r[1]}, {r[1], r[2]}}, true},
		{"reordered", [][]*Resource{{r[2], r[1]}, {r[1]}, {r[0]}}, true},
		{"other weight", [][]*Resource{{r[0], r[1]}, {r[2]}}, false},
		{"subset", [][]*Resource{{r[0], r[1]}, {r[1]}}, false},
		{"superset", [][]*Resource{{r[0], r[1]}, {r[1], r[2]}, {NewResource("d", 10e9)}}, false},
	} {
		if got := e.NewShape(c.members).cls == base.cls; got != c.same {
			t.Errorf("%s: same class %v, want %v", c.name, got, c.same)
		}
	}
	// a: 10e9·rateScale/1, b: 20e9·rateScale/2, c: 30e9·rateScale/1.
	if want := uint64(10e9) * rateScale; base.cls.alone != want {
		t.Errorf("class alone rate %d, want %d", base.cls.alone, want)
	}
}

// TestNewShapeFlat: members laid end to end give NewShape's resources, in
// first-appearance order, with its weights and class (a: 3 crossings, b 2,
// c 1), and what a Shape keeps holds one entry per distinct resource, not
// one per crossing (a ring of g channels crosses each link g times).
func TestNewShapeFlat(t *testing.T) {
	e := New()
	a, b, c := NewResource("a", 10e9), NewResource("b", 20e9), NewResource("c", 30e9)
	for _, tc := range []struct {
		name    string
		members [][]*Resource
		want    []resUse
	}{
		{"pairs", [][]*Resource{{a, b}, {b, a}, {a, c}}, []resUse{{a, 3}, {b, 2}, {c, 1}}},
		{"one member", [][]*Resource{{c, a, c}}, []resUse{{c, 2}, {a, 1}}},
		{"empty", nil, []resUse{}},
	} {
		var flat []*Resource
		for _, m := range tc.members {
			flat = append(flat, m...)
		}
		s, g := e.NewShapeFlat(flat), e.NewShape(tc.members)
		for _, sh := range []struct {
			name string
			s    *Shape
		}{{"NewShapeFlat", s}, {"NewShape", g}} {
			if !slices.Equal(sh.s.res, tc.want) {
				t.Errorf("%s: %s resources %v, want %v", tc.name, sh.name, sh.s.res, tc.want)
			}
			if cap(sh.s.res) != len(tc.want) {
				t.Errorf("%s: %s keeps capacity %d for %d resources", tc.name, sh.name, cap(sh.s.res), len(tc.want))
			}
		}
		if s.cls != g.cls {
			t.Errorf("%s: NewShapeFlat's class is not NewShape's", tc.name)
		}
	}
}

// TestShapeClassRates: a seeded load of shape groups, most of one class
// (two shapes over the same ports in another order), some of another class
// or overlapping both (brief on odd seeds, so the class's flows often hold
// their ports alone together; as long on even ones), with stretches, gives
// the same trace (every event with its sequence number, rate change and
// finish) as the same groups started with StartGroup, whose rates always
// come from progressive filling. Over the seeds, classes park (A and B
// together, being disjoint) and are unparked by a flow that overlaps them.
func TestShapeClassRates(t *testing.T) {
	var parked, unparked int64
	for seed := uint64(1); seed <= 8; seed++ {
		run := func(shapes bool) (string, int64) {
			rng := rand.New(rand.NewPCG(seed, 2))
			e := New()
			tr := &textTracer{}
			e.SetTracer(tr)
			r := make([]*Resource, 6)
			for i := range r {
				r[i] = NewResource("r", int64(1+rng.IntN(4))*25e9)
			}
			kinds := [][][]*Resource{
				{{r[0], r[1]}, {r[2], r[3]}},         // class A
				{{r[3], r[2]}, {r[1], r[0]}},         // class A, another order
				{{r[4], r[4]}, {r[5]}},               // class B (r4 weight 2)
				{{r[3], r[4]}},                       // overlaps A and B
				{{r[0], r[1]}, {r[2], r[3]}, {r[0]}}, // A's ports, r0 weight 2
			}
			var ss []*Shape
			for _, k := range kinds {
				ss = append(ss, e.NewShape(k))
			}
			var flows []*Flow
			for range 300 {
				at := Time(rng.IntN(300)) * 1e6 // ties
				bytes := int64(1+rng.IntN(4)) * 1e5
				k := []int{0, 0, 0, 1, 1, 1, 0, 1, 2, 2, 3, 4}[rng.IntN(12)]
				if k >= 3 && seed%2 == 1 {
					bytes /= 10 // brief: A's flows often run alone together
				}
				e.At(at, func() {
					if shapes {
						flows = append(flows, e.StartShape(bytes, ss[k], nil))
					} else {
						flows = append(flows, e.StartGroup(bytes, kinds[k], nil))
					}
				})
				if rng.IntN(5) == 0 {
					num := uint64(1 + rng.IntN(3))
					e.At(at+Time(rng.IntN(3))*1e6, func() {
						if len(flows) > 0 {
							flows[len(flows)/2].Stretch(num, 2)
						}
					})
				}
			}
			e.Run()
			parked += e.parkedStarts
			unparked += e.unparked
			return tr.b.String(), e.classRates
		}
		got, fast := run(true)
		want, slow := run(false)
		if got != want {
			t.Errorf("seed %d: shape groups' trace differs from StartGroup's:\n%s", seed, golden.Diff([]byte(want), []byte(got)))
		}
		if fast == 0 || slow != 0 {
			t.Errorf("seed %d: %d rate updates by class with shapes (want some), %d without (want 0)", seed, fast, slow)
		}
	}
	t.Logf("%d flows started parked, %d unparked", parked, unparked)
	if parked == 0 || unparked == 0 {
		t.Errorf("%d flows started parked and %d unparked: want some of each", parked, unparked)
	}
}

// TestParkedUsers: a shape group started alone on its ports is parked (kept
// off its resources' users lists), yet each resource still counts it, and
// another engine may not take one of its ports while it runs; once it has
// finished, it may, and the first engine then no longer parks.
func TestParkedUsers(t *testing.T) {
	e := New()
	a, b := NewResource("a", 10e9), NewResource("b", 10e9)
	s := e.NewShape([][]*Resource{{a, b}})
	f := e.StartShape(1e6, s, nil)
	g := e.StartShape(1e6, s, nil)
	if !f.parked || !g.parked || e.parkedStarts != 2 {
		t.Fatalf("shape groups alone on their ports: parked %v %v (%d parked starts), want both", f.parked, g.parked, e.parkedStarts)
	}
	if a.Users() != 2 || b.Users() != 2 || len(a.users) != 0 {
		t.Errorf("users a %d b %d (%d on a's list), want 2, 2 (0)", a.Users(), b.Users(), len(a.users))
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("another engine's flow on a parked group's port: no panic")
			}
		}()
		New().StartFlow(1, []*Resource{b}, nil)
	}()
	e.Run()
	if a.Users() != 0 || f.End() != TransferTime(2e6, 10e9) {
		t.Errorf("after the run: %d users on a, ends at %d, want 0 and %d", a.Users(), f.End(), TransferTime(2e6, 10e9))
	}
	e2 := New()
	e2.StartFlow(1, []*Resource{b}, nil) // b is free now
	e2.Run()
	if h := e.StartShape(1e6, s, nil); h.parked || !e.noPark {
		t.Errorf("after losing a port the engine still parks (parked %v, noPark %v)", h.parked, e.noPark)
	}
}

// A Resource stays 128 bytes, what NewResources' block layout assumes (its
// recomputation fields in the first 64).
func TestResourceSize(t *testing.T) {
	if got := unsafe.Sizeof(Resource{}); got != 128 {
		t.Fatalf("Resource is %d bytes, want 128", got)
	}
	if got := unsafe.Offsetof(Resource{}.inline); got != 64 {
		t.Fatalf("Resource's recomputation fields end at %d, want 64", got)
	}
}

// A Flow stays 192 bytes (a size class of its own: one is allocated per
// flow group started, millions in a 16,384-rank step).
func TestFlowSize(t *testing.T) {
	if got := unsafe.Sizeof(Flow{}); got != 192 {
		t.Fatalf("Flow is %d bytes, want 192", got)
	}
}

// TestFillSortMatchesScan: progressive filling by sort (every recomputation
// with more than scanMax active resources) gives the same trace, event for
// event, as the scan a round, on seeded loads of flows over 1 to 5 of 80
// links of mixed bandwidths, started at tied and untied times and some
// stretched.
func TestFillSortMatchesScan(t *testing.T) {
	defer func(v int) { scanMax = v }(scanMax)
	for seed := uint64(1); seed <= 6; seed++ {
		run := func(limit int) string {
			scanMax = limit
			rng := rand.New(rand.NewPCG(seed, 3))
			e := New()
			tr := &textTracer{}
			e.SetTracer(tr)
			links := make([]*Resource, 80)
			for i := range links {
				links[i] = NewResource("l", int64(1+rng.IntN(7))*12_500_000_000)
			}
			var flows []*Flow
			for range 400 {
				at := Time(rng.IntN(200)) * 1e6
				rs := make([]*Resource, 1+rng.IntN(5))
				for i := range rs {
					rs[i] = links[rng.IntN(len(links))]
				}
				bytes := int64(1+rng.IntN(1<<20)) * 64
				e.At(at, func() { flows = append(flows, e.StartFlow(bytes, rs, nil)) })
				if rng.IntN(6) == 0 {
					num := uint64(1 + rng.IntN(3))
					e.At(at+Time(rng.IntN(3))*1e6, func() {
						if len(flows) > 0 {
							flows[len(flows)/2].Stretch(num, 2)
						}
					})
				}
			}
			e.Run()
			return tr.b.String()
		}
		scan, sorted := run(1<<30), run(0)
		if sorted != scan {
			t.Errorf("seed %d: the sorted fill's trace differs from the scan's:\n%s", seed, golden.Diff([]byte(scan), []byte(sorted)))
		}
	}
	// A tie that decides rates: a and b, alike, each carry a 16-member
	// group (weight 16) and one flow of their own, so both sit at level
	// L = floor(cap/17) with a remainder ρ > 0 (17 does not divide
	// rateScale·bw). The one filled first freezes its own flow at L; the
	// other's flow gets cap − 16·L = L + ρ. The scan fills b first (visited
	// first: the last flow started crosses it), so a's flow, on a terabyte,
	// ends a few ps sooner than b's; the sorted fill must do the same.
	tie := func(limit int) (Time, Time) {
		scanMax = limit
		e := New()
		a, b := NewResource("a", 25e9), NewResource("b", 25e9)
		members := make([][]*Resource, 16)
		for i := range members {
			members[i] = []*Resource{a, b}
		}
		e.StartGroup(1e12, members, nil)
		fa := e.StartFlow(1e12, []*Resource{a}, nil)
		fb := e.StartFlow(1e12, []*Resource{b}, nil)
		e.Run()
		return fa.End(), fb.End()
	}
	sa, sb := tie(1 << 30)
	ha, hb := tie(0)
	if sa >= sb || ha != sa || hb != sb {
		t.Errorf("tie: scan ends a at %d, b at %d (want a first); sorted %d, %d (want the scan's)", sa, sb, ha, hb)
	}
}

// TestParkMarking: from markAbove parked classes on, a class asks whether it
// may park by its resources' marks instead of pair by pair. Many disjoint
// shape classes (a concurrent collective's groups) and a few shapes that
// overlap two of them, started later at seeded times, give the same trace as the
// same groups started with StartGroup (never parked), and marking happened.
func TestParkMarking(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		var markings, parked int64
		run := func(shapes bool) string {
			rng := rand.New(rand.NewPCG(seed, 4))
			e := New()
			tr := &textTracer{}
			e.SetTracer(tr)
			const groups = 3 * markAbove
			r := make([]*Resource, 2*groups)
			for i := range r {
				r[i] = NewResource("p", int64(1+rng.IntN(3))*25e9)
			}
			var kinds [][][]*Resource
			for g := range groups {
				kinds = append(kinds, [][]*Resource{{r[2*g], r[2*g+1]}, {r[2*g+1], r[2*g]}})
			}
			for range 4 { // overlapping two groups
				a, b := rng.IntN(groups), rng.IntN(groups)
				kinds = append(kinds, [][]*Resource{{r[2*a], r[2*b+1]}})
			}
			var ss []*Shape
			for _, k := range kinds {
				ss = append(ss, e.NewShape(k))
			}
			for range 600 {
				at := Time(rng.IntN(100)) * 1e6
				bytes := int64(1+rng.IntN(4)) * 1e5
				k := rng.IntN(groups)
				if rng.IntN(20) == 0 { // after the disjoint groups' first wave
					k, at = groups+rng.IntN(4), 50e6+at/2
				}
				e.At(at, func() {
					if shapes {
						e.StartShape(bytes, ss[k], nil)
					} else {
						e.StartGroup(bytes, kinds[k], nil)
					}
				})
			}
			e.Run()
			if shapes {
				markings, parked = e.markings, e.parkedStarts
			}
			return tr.b.String()
		}
		got, want := run(true), run(false)
		if got != want {
			t.Errorf("seed %d: marked parking's trace differs from StartGroup's:\n%s", seed, golden.Diff([]byte(want), []byte(got)))
		}
		if markings == 0 || parked == 0 {
			t.Errorf("seed %d: marking began %d times, %d flows parked: want some of each", seed, markings, parked)
		}
	}
}

// TestStartShapeAtExact: a flow group timed at its bottleneck's rate ends
// exactly d after it starts alone, whatever d and the bandwidth (no whole
// byte rounds it), and groups that share the bottleneck end together
// after the sum of their times (each had its exact share of the link).
func TestStartShapeAtExact(t *testing.T) {
	tests := []struct {
		bw    int64
		share uint32 // members on the bottleneck
		d     []Time // groups started at once on it
		want  Time
	}{
		{50e9, 1, []Time{1}, 1},
		{50e9, 1, []Time{123456789}, 123456789},
		{450e9, 8, []Time{2784759872}, 2784759872},
		{450e9, 8, []Time{2784759871, 2784759873}, 5569519744},
		{25e9, 3, []Time{7, 11, 13}, 31},
		{100e9, 16, []Time{999999999999}, 999999999999},
	}
	for _, tc := range tests {
		e := New()
		link := NewResource("link", tc.bw)
		spare := NewResource("spare", MaxBandwidth)
		members := make([][]*Resource, tc.share)
		for i := range members {
			members[i] = []*Resource{link, spare}
		}
		var ends []Time
		for _, d := range tc.d {
			e.StartShapeAt(1, d, tc.bw, tc.share, e.NewShape(members), func() { ends = append(ends, e.Now()) })
		}
		e.Run()
		if len(ends) != len(tc.d) || slices.Max(ends) != tc.want {
			t.Errorf("%d B/s, %d members, %v ps: ends %v, want the last at %d", tc.bw, tc.share, tc.d, ends, tc.want)
		}
	}
}

// TestStartShapePaced: a group paced at bytes/time, whose link moves its
// bytes in less than its time, ends at its time to the picosecond alone;
// beside other flows it holds only its pace, and max–min fairness gives
// the rest of the link to them. Figures: one 100 GB/s link, 10 ps a byte.
func TestStartShapePaced(t *testing.T) {
	const bw = 100e9 // 10 ps a byte
	type group struct {
		bytes int64
		d     Time // 0: a plain flow of bytes (StartShape)
	}
	tests := []struct {
		name   string
		groups []group
		want   []Time // each group's end, in start order
	}{
		// 1e6 B take 10 µs on the link; timed at 40 µs it moves at 25 GB/s.
		{"alone", []group{{1e6, 40e6}}, []Time{40e6}},
		// A time shorter than the link's: the link binds (1e6 B, 10 µs).
		{"faster than the link", []group{{1e6, 4e6}}, []Time{10e6}},
		// 1 B in 20 ps and 3 B in 70 ps: paces of 50 and 42.9 GB/s,
		// rounded down to whole work units, still end on time.
		{"a few bytes", []group{{1, 20}, {3, 70}}, []Time{20, 70}},
		// Two paced at 25 GB/s each leave each other alone.
		{"two paced", []group{{1e6, 40e6}, {2e6, 80e6}}, []Time{40e6, 80e6}},
		// A plain flow of 3e6 B beside the 25 GB/s one gets 75 GB/s until
		// 40 µs (3e6 B), so it ends with it, not at 45 µs as with a
		// greedy neighbour holding half the link (1e6 B at 50 GB/s, then
		// 2.5e6 B at 100 GB/s ends at 45 µs).
		{"beside a plain flow", []group{{1e6, 40e6}, {3e6, 0}}, []Time{40e6, 40e6}},
		// Two paced at 75 GB/s each exceed the link: each gets 50 GB/s
		// (max–min, both below their pace), so 3e6 B end at 60 µs.
		{"paces over the link", []group{{3e6, 40e6}, {3e6, 40e6}}, []Time{60e6, 60e6}},
		// One paced at 25 GB/s and one at 90 GB/s: the first keeps its
		// pace, the second gets the other 75 GB/s, 3e6 B by 40 µs, then
		// its pace alone: 1.5e6 B at 90 GB/s end 16,666,667 ps later.
		{"one pace binds", []group{{1e6, 40e6}, {4.5e6, 50e6}}, []Time{40e6, 56666667}},
	}
	defer func(m int) { scanMax = m }(scanMax)
	for _, tc := range tests {
		// fillByScan, fillBySort; parked classes (shapeClass.rate), or
		// every flow placed (startWork's alone path, recompute).
		for _, run := range []struct {
			sm     int
			noPark bool
		}{{64, false}, {0, false}, {64, true}, {0, true}} {
			scanMax = run.sm
			e := New()
			e.noPark = run.noPark
			link := NewResource("link", bw)
			shape := e.NewShape([][]*Resource{{link}})
			ends := make([]Time, len(tc.groups))
			for i, g := range tc.groups {
				done := func() { ends[i] = e.Now() }
				if g.d == 0 {
					e.StartShape(g.bytes, shape, done)
				} else {
					e.StartShapePaced(g.bytes, g.bytes, g.d, shape, done)
				}
			}
			e.Run()
			if !slices.Equal(ends, tc.want) {
				t.Errorf("%s, scanMax %d, noPark %v: ends %v, want %v", tc.name, run.sm, run.noPark, ends, tc.want)
			}
		}
	}
}

// TestPacedParkedLikePlaced: paced groups (StartShapePaced, several paces
// per shape) beside plain ones give the same trace whether their classes
// may park (one rate per class and pace, shapeClass.rate) or every flow is
// placed on its resources (noPark), where a pace is a resource of the
// flow's own in progressive filling, under both fills. Paces below and
// above what the links give are both drawn.
func TestPacedParkedLikePlaced(t *testing.T) {
	defer func(m int) { scanMax = m }(scanMax)
	for seed := uint64(1); seed <= 4; seed++ {
		run := func(park bool, sm int) (string, int64) {
			scanMax = sm
			rng := rand.New(rand.NewPCG(seed, 7))
			e := New()
			e.noPark = !park
			tr := &textTracer{}
			e.SetTracer(tr)
			r := make([]*Resource, 8)
			for i := range r {
				r[i] = NewResource("p", int64(1+rng.IntN(4))*25e9)
			}
			var ss []*Shape
			for range 6 {
				a, b, c := r[rng.IntN(len(r))], r[rng.IntN(len(r))], r[rng.IntN(len(r))]
				ss = append(ss, e.NewShape([][]*Resource{{a, b}, {b, c}}))
			}
			for range 400 {
				at := Time(rng.IntN(60)) * 1e6
				bytes := int64(1+rng.IntN(4)) * 1e5
				wire := bytes + bytes*int64(rng.IntN(3))/4
				d := Time(1+rng.IntN(4)) * 2e6 // 2 to 8 µs: 12.5 to 250 GB/s
				s, paced := ss[rng.IntN(len(ss))], rng.IntN(3) > 0
				e.At(at, func() {
					if paced {
						e.StartShapePaced(bytes, wire, d, s, nil)
					} else {
						e.StartShape(bytes, s, nil)
					}
				})
			}
			e.Run()
			return tr.b.String(), e.parkedStarts
		}
		want, _ := run(false, 64)
		for _, sm := range []int{64, 0} {
			got, parked := run(true, sm)
			if got != want {
				t.Errorf("seed %d, scanMax %d: parked classes' trace differs from placed flows':\n%s", seed, sm, golden.Diff([]byte(want), []byte(got)))
			}
			if parked == 0 {
				t.Errorf("seed %d: no flow parked", seed)
			}
		}
		if got, _ := run(false, 0); got != want {
			t.Errorf("seed %d: the sorted fill's trace differs from the scan's:\n%s", seed, golden.Diff([]byte(want), []byte(got)))
		}
	}
}
