package sim

import (
	"container/heap"
	"math"
	"math/bits"
)

// Time is a simulated instant or span in picoseconds.
type Time int64

// MaxTime is the largest representable time; a flow whose finish would lie
// beyond it is scheduled at MaxTime.
const MaxTime Time = math.MaxInt64

// Tracer observes the engine. Event is called with the event's time and
// insertion sequence number just before the event runs; times never
// decrease.
type Tracer interface {
	Event(t Time, seq uint64)
}

// FlowTracer is an optional extension of Tracer: a tracer that implements
// it also sees every flow or group start, every rate change (bytes/s per
// member, rounded down) and every finish.
type FlowTracer interface {
	FlowStart(t Time, f *Flow)
	FlowRate(t Time, f *Flow, bytesPerSec int64)
	FlowDone(t Time, f *Flow)
}

// event is one queued callback. Flow completions are not events in this
// heap: each flow in progress sits in a second indexed heap (fheap) keyed by
// its finish time, moved in place when its rate changes, so a rate change
// leaves no stale event behind. Both heaps share one sequence counter, so
// ties between them also follow scheduling order.
type event struct {
	t   Time
	seq uint64
	fn  func()
}

// bucket is a FIFO of events at one time t, the events of consecutive At
// calls with that t (a replay of many ranks schedules bursts of events at
// one instant). The event heap orders buckets by (t, seq of their first
// event): events enter a bucket in sequence order and a bucket only grows
// while it is the latest one created, so buckets of one time hold disjoint,
// ordered sequence ranges and consuming a bucket's front never breaks the
// heap order.
type bucket struct {
	t    Time
	ev   []event
	head int
}

// Engine is a deterministic discrete-event engine. It is not safe for
// concurrent use. The zero value is not ready; use New.
type Engine struct {
	now    Time
	seq    uint64
	heap   []*bucket
	last   *bucket // the bucket the latest At went to, while queued
	free   []*bucket
	queued int // events in heap
	fheap  flowHeap
	events int64
	tracer Tracer
	ftrace FlowTracer
	nflows int64

	// Scratch for rate recomputation (reused, see flow.go).
	epoch   uint64
	compRes []*Resource
	compF   []*Flow
	active  []*Resource
	fill    []fillEntry
	fillOut []fillEntry
	rekeyed fillHeap
	// paceRes are the paced flows' caps as resources during a
	// recomputation (recompute).
	paceRes []*Resource
	flows   int
	// deferRates (SetDeferRates) defers the rate recomputations of flows
	// that start or end until the clock moves on; deferred holds their
	// seeds meanwhile (settle).
	deferRates bool
	deferred   []resUse

	// classes holds the Shapes' classes (looked up, never iterated).
	classes map[classKey][]*shapeClass
	// placed counts the flows on their resources' users lists; parked
	// lists the parked classes (shapeClass). noPark is set once one of
	// the engine's resources has moved to another engine: a parked class
	// cannot see that, so none parks again.
	placed int
	parked []*shapeClass
	noPark bool
	// marking is set while the parked classes mark their resources
	// (markAbove of them were parked at once; cleared when none is).
	marking bool
	// classRates counts the rate updates recomputeClass made, parkedStarts
	// the flows started parked, unparked those unparkAll placed and
	// markings the times marking began (tests).
	classRates, parkedStarts, unparked, markings int64
}

// New returns an engine at time 0 with an empty queue.
func New() *Engine { return &Engine{heap: make([]*bucket, 0, 64)} }

// SetTracer installs t (nil removes it).
func (e *Engine) SetTracer(t Tracer) {
	e.tracer = t
	e.ftrace, _ = t.(FlowTracer)
}

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Events is the number of events run so far, flow and group completions
// included.
func (e *Engine) Events() int64 { return e.events }

// Pending is the number of queued events, flow completions included.
func (e *Engine) Pending() int { return e.queued + len(e.fheap) }

// ActiveFlows is the number of flows and groups started and not finished.
func (e *Engine) ActiveFlows() int { return e.flows }

// At schedules fn at time t. Events at equal times run in the order they
// were scheduled. It panics if t is before Now or fn is nil (caller bugs).
func (e *Engine) At(t Time, fn func()) {
	if t < e.now {
		panic("sim: At with a time in the past")
	}
	if fn == nil {
		panic("sim: At with a nil function")
	}
	e.push(event{t: t, fn: fn})
}

// After schedules fn d picoseconds from now. It panics if d < 0.
func (e *Engine) After(d Time, fn func()) {
	if d < 0 {
		panic("sim: After with a negative delay")
	}
	t := e.now + d
	if t < e.now { // overflow
		t = MaxTime
	}
	e.At(t, fn)
}

// Step runs the next event and reports whether there was one.
func (e *Engine) Step() bool {
	if len(e.deferred) > 0 {
		if t, ok := e.next(); !ok || t > e.now {
			e.settle()
		}
	}
	if len(e.fheap) > 0 {
		f := e.fheap[0]
		if len(e.heap) == 0 || f.at < e.heap[0].t || (f.at == e.heap[0].t && f.fseq < e.heap[0].ev[e.heap[0].head].seq) {
			e.now = f.at
			e.events++
			if e.tracer != nil {
				e.tracer.Event(f.at, f.fseq)
			}
			e.finish(f)
			return true
		}
	}
	if len(e.heap) == 0 {
		return false
	}
	ev := e.pop()
	e.now = ev.t
	e.events++
	if e.tracer != nil {
		e.tracer.Event(ev.t, ev.seq)
	}
	ev.fn()
	return true
}

// next is the time of the next event, and false if there is none.
func (e *Engine) next() (Time, bool) {
	switch {
	case len(e.heap) == 0 && len(e.fheap) == 0:
		return 0, false
	case len(e.heap) == 0:
		return e.fheap[0].at, true
	case len(e.fheap) == 0:
		return e.heap[0].t, true
	}
	return min(e.heap[0].t, e.fheap[0].at), true
}

// Run runs events until the queue is empty.
func (e *Engine) Run() {
	for e.Step() {
	}
}

// RunUntil runs every event at or before t, then advances the clock to t
// (if it is not already later).
func (e *Engine) RunUntil(t Time) {
	for {
		nt, ok := e.next()
		if !ok || nt > t {
			if len(e.deferred) == 0 {
				break
			}
			e.settle() // may queue ends at Now
			continue
		}
		e.Step()
	}
	if e.now < t {
		e.now = t
	}
}

// The event heap is written out rather than built on container/heap: its
// interface calls do not inline, and on BenchmarkEngineEvents they cost
// 138 ns per event against 77 ns here. (The flow heap, touched once per
// rate change rather than per event, uses container/heap.)

func (e *Engine) less(i, j int) bool {
	a, b := e.heap[i], e.heap[j]
	return a.t < b.t || (a.t == b.t && a.ev[a.head].seq < b.ev[b.head].seq)
}

func (e *Engine) push(ev event) {
	ev.seq = e.seq
	e.seq++
	e.queued++
	if b := e.last; b != nil && b.t == ev.t {
		b.ev = append(b.ev, ev)
		return
	}
	var b *bucket
	if n := len(e.free); n > 0 {
		b = e.free[n-1]
		e.free = e.free[:n-1]
	} else {
		b = &bucket{}
	}
	b.t = ev.t
	b.ev = append(b.ev, ev)
	e.last = b
	e.heap = append(e.heap, b)
	i := len(e.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(i, p) {
			break
		}
		e.heap[i], e.heap[p] = e.heap[p], e.heap[i]
		i = p
	}
}

func (e *Engine) pop() event {
	b := e.heap[0]
	top := b.ev[b.head]
	b.ev[b.head] = event{} // drop references
	b.head++
	e.queued--
	if b.head < len(b.ev) {
		return top // the bucket's next event still sorts first (see bucket)
	}
	if e.last == b {
		e.last = nil
	}
	b.ev, b.head = b.ev[:0], 0
	e.free = append(e.free, b)
	h := e.heap
	n := len(h) - 1
	h[0] = h[n]
	h[n] = nil
	e.heap = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && e.less(r, l) {
			m = r
		}
		if !e.less(m, i) {
			break
		}
		e.heap[i], e.heap[m] = e.heap[m], e.heap[i]
		i = m
	}
	return top
}

// TransferTime is ceil(bytes·1e12 / bytesPerSec) picoseconds, computed in
// 128 bits: the time a flow alone on resources of that bandwidth takes. It
// is the same rounding as units.TransferTime (sim imports no zerosim
// package, so it is reimplemented here). It panics on negative bytes or
// non-positive bandwidth, and returns MaxTime on overflow.
func TransferTime(bytes, bytesPerSec int64) Time {
	if bytes < 0 || bytesPerSec <= 0 {
		panic("sim: TransferTime needs bytes ≥ 0 and bandwidth > 0")
	}
	hi, lo := bits.Mul64(uint64(bytes), 1e12)
	if hi >= uint64(bytesPerSec) {
		return MaxTime
	}
	q, r := bits.Div64(hi, lo, uint64(bytesPerSec))
	if r != 0 {
		q++
	}
	if q > uint64(MaxTime) {
		return MaxTime
	}
	return Time(q)
}

// flowHeap orders the flows in progress by (at, fseq) for container/heap;
// each flow keeps its index in hidx so a rate change can heap.Fix it in
// place. Its elements are pointers, so Push and Pop do not allocate.
type flowHeap []*Flow

func (h flowHeap) Len() int { return len(h) }
func (h flowHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].fseq < h[j].fseq)
}
func (h flowHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = int32(i), int32(j)
}
func (h *flowHeap) Push(x any) {
	f := x.(*Flow)
	f.hidx = int32(len(*h))
	*h = append(*h, f)
}
func (h *flowHeap) Pop() any {
	old := *h
	n := len(old) - 1
	f := old[n]
	old[n] = nil
	*h = old[:n]
	f.hidx = -1
	return f
}

// schedule (re)places f in the flow heap to finish at t; like At, it takes
// the next sequence number, so it runs after events already scheduled at t.
func (e *Engine) schedule(f *Flow, t Time) {
	f.at = t
	f.fseq = e.seq
	e.seq++
	if f.hidx < 0 {
		heap.Push(&e.fheap, f)
		return
	}
	heap.Fix(&e.fheap, int(f.hidx))
}

// unschedule removes f from the flow heap if it is there.
func (e *Engine) unschedule(f *Flow) {
	if f.hidx >= 0 {
		heap.Remove(&e.fheap, int(f.hidx))
	}
}
