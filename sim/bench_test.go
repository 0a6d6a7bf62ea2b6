package sim

import "testing"

// BenchmarkEngineEvents: a synthetic load of self-rescheduling timers with
// pseudo-random delays (1024 in flight), the steady state of a replay.
func BenchmarkEngineEvents(b *testing.B) {
	e := New()
	const inflight = 1024
	var x uint64 = 88172645463325252
	var tick func()
	tick = func() {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		e.After(Time(x%1000000), tick)
	}
	for range inflight {
		tick()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.Step()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkFlows: flows starting and finishing on 64 shared links (each
// start and finish recomputes the rates of the flows sharing its links).
func BenchmarkFlows(b *testing.B) {
	e := New()
	links := make([]*Resource, 64)
	for i := range links {
		links[i] = NewResource("l", 100e9)
	}
	var x uint64 = 88172645463325252
	var start func()
	start = func() {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		rs := []*Resource{links[x%64], links[(x>>8)%64]}
		e.StartFlow(int64(x%(1<<20)), rs, start)
	}
	for range 256 {
		start()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.Step()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRingGroup: one 16,384-member ring group phase (one event).
func BenchmarkRingGroup(b *testing.B) {
	const n = 16384
	out := make([]*Resource, n)
	in := make([]*Resource, n)
	for i := range n {
		out[i], in[i] = NewResource("o", 25e9), NewResource("i", 25e9)
	}
	members := make([][]*Resource, n)
	for i := range n {
		members[i] = []*Resource{out[i], in[(i+1)%n]}
	}
	b.ReportAllocs()
	for range b.N {
		e := New()
		e.StartGroup(1<<20, members, nil)
		e.Run()
		if e.Events() != 1 {
			b.Fatal("events", e.Events())
		}
	}
}
