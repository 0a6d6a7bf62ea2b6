package sim

import (
	"cmp"
	"container/heap"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

// Rates and remaining work are kept in exact integers. A resource of bw
// bytes/s has capacity bw·rateScale "work units" per picosecond, and a flow
// of n bytes carries n·1e12·rateScale work units (128 bits). A flow alone on
// its resources therefore finishes after ceil(n·1e12·rateScale /
// (bw·rateScale)) = ceil(n·1e12/bw) ps, exactly TransferTime. rateScale is
// lcm(1..16), so a capacity shared by up to 16 equal users (or weights
// summing to at most 16) divides exactly: two equal flows on one link get
// exactly half the rate each. Beyond that, max–min shares are rounded down
// to a whole work unit per picosecond (a relative error below 1e-15).
const rateScale = 720720

// workPerByte is 1e12·rateScale: work units per byte.
const workPerByte uint64 = 1e12 * rateScale

// MaxBandwidth is the largest bandwidth (bytes/s) a Resource accepts
// (≈ 25.6 TB/s), so that bw·rateScale fits in 64 bits.
const MaxBandwidth int64 = math.MaxUint64 / rateScale

// Resource is a bandwidth resource (one direction of a link, a port, a NIC)
// shared max–min fairly by the flows that cross it.
type Resource struct {
	// What recomputation touches comes first: 64 bytes, one cache line
	// of a 128-byte-aligned resource (NewResources).
	mark uint64 // scratch for recomputation and group building
	// users are the flows currently crossing the resource.
	users []user
	cap   uint64 // bw·rateScale
	rem   uint64
	wsum  uint64
	level uint64 // rem/wsum, kept up to date during progressive filling

	// inline backs users while at most len(inline) flows cross it, so a
	// port's users sit next to it.
	inline [2]user
	e      *Engine
	name   *string // a pointer keeps the resource at 128 bytes
	// parked is the parked class crossing r while its engine marks them
	// (Engine.marking), else nil.
	parked *shapeClass
	gidx   int32
	// id numbers resources in the order they were made (process-wide;
	// NewResources numbers its block in memory order): the order a Shape's
	// flows join and leave them in, and its class's lookup key. Never
	// output, and no result depends on it.
	id uint32
}

// made counts the resources made (Resource.id); it wraps, which costs
// nothing but locality.
var made atomic.Uint32

type user struct {
	f *Flow
	w uint64
}

// resUse is one resource of a flow with its weight. A flow's []resUse is
// immutable once started, so flows of one Shape share it.
type resUse struct {
	r *Resource
	w uint64
}

// NewResource returns a resource of bytesPerSec bandwidth. It panics if
// bytesPerSec is not in (0, MaxBandwidth]; callers validate input first.
func NewResource(name string, bytesPerSec int64) *Resource {
	if bytesPerSec <= 0 || bytesPerSec > MaxBandwidth {
		panic("sim: NewResource bandwidth out of range (0, MaxBandwidth]")
	}
	r := &Resource{name: &name, cap: uint64(bytesPerSec) * rateScale, id: made.Add(1)}
	r.users = r.inline[:0]
	return r
}

// NewResources returns len(names) resources in one allocation, resource i
// named names[i] with bytesPerSec[i] bandwidth (a fabric of many ports). It
// panics like NewResource, or if the slices differ in length.
func NewResources(names []string, bytesPerSec []int64) []*Resource {
	if len(names) != len(bytesPerSec) {
		panic("sim: NewResources with names and bandwidths of different lengths")
	}
	names = slices.Clone(names)
	block := make([]Resource, len(names))
	out := make([]*Resource, len(names))
	id := made.Add(uint32(len(names))) - uint32(len(names))
	for i, bw := range bytesPerSec {
		if bw <= 0 || bw > MaxBandwidth {
			panic("sim: NewResources bandwidth out of range (0, MaxBandwidth]")
		}
		block[i] = Resource{name: &names[i], cap: uint64(bw) * rateScale, id: id + uint32(i) + 1}
		block[i].users = block[i].inline[:0]
		out[i] = &block[i]
	}
	return out
}

// Name is the resource's name.
func (r *Resource) Name() string { return *r.name }

// Bandwidth is the resource's capacity in bytes/s.
func (r *Resource) Bandwidth() int64 { return int64(r.cap / rateScale) }

// Users is the number of flows currently crossing r.
func (r *Resource) Users() int { return len(r.users) + len(r.parkedUsers()) }

// parkedUsers is the flows of the parked class crossing r (see
// shapeClass), nil if none: parked classes are disjoint, so at most one.
func (r *Resource) parkedUsers() []user {
	if r.e == nil {
		return nil
	}
	if r.parked != nil {
		return r.parked.flows
	}
	for _, c := range r.e.parked {
		if c.holds(r) {
			return c.flows
		}
	}
	return nil
}

// Flow is a transfer in progress: a single flow (StartFlow) or a coupled
// group (StartGroup) whose members progress in lockstep. A group is one flow
// that crosses each resource with a weight: the number of its members that
// cross it.
type Flow struct {
	e      *Engine
	res    []resUse
	hi, lo uint64 // remaining work units (128 bits)
	rate   uint64 // work units per ps (per member)
	last   Time   // time hi:lo was last brought up to date
	at     Time   // scheduled finish (while in the flow heap)
	fseq   uint64 // sequence number of that scheduling
	onDone func()
	bytes  int64
	id     int64
	start  Time
	end    Time
	// cls is the class of the flow's Shape while the flow crosses its
	// resources (nil for StartGroup and StartFlow flows).
	cls *shapeClass
	// byID is res in the order the flow joins and leaves its resources
	// (Shape.byID; res itself for StartGroup and StartFlow flows).
	byID []resUse
	// pace, if not 0, caps the flow's rate (work units per ps per member):
	// a timed transfer moves its real bytes no faster than its time allows
	// (StartShapeAt), leaving the rest of its links to others.
	pace uint64
	// scratch
	mark  uint64
	nrate uint64
	// paceR is the flow's cap as a resource of its own during a
	// recomputation (recompute), nil otherwise.
	paceR *Resource
	// hidx is the flow's index in the engine's flow heap, -1 if not
	// there; it shares a word with the flags below (a Flow is allocated
	// per flow group started: 192 bytes, TestFlowSize).
	hidx int32
	done bool
	// parked: the flow is in its class's flows, not in its resources'
	// users (see shapeClass).
	parked bool
	frozen bool // scratch
}

// ID numbers flows and groups in the order they were started, from 0.
func (f *Flow) ID() int64 { return f.id }

// Done reports whether the flow has finished.
func (f *Flow) Done() bool { return f.done }

// Bytes is the size of the flow (per member for a group).
func (f *Flow) Bytes() int64 { return f.bytes }

// Start is when the flow was started.
func (f *Flow) Start() Time { return f.start }

// End is when the flow finished (valid once Done).
func (f *Flow) End() Time { return f.end }

// Rate is the current rate per member in bytes/s (for display).
func (f *Flow) Rate() float64 { f.e.settle(); return float64(f.rate) / rateScale }

// Remaining is the number of bytes per member still to move at Now, rounded
// up.
func (f *Flow) Remaining() int64 {
	if f.done {
		return 0
	}
	f.e.settle()
	hi, lo := f.progressed(f.e.now)
	// bytes < 2^63 and workPerByte < 2^60, so hi < workPerByte.
	q, r := bits.Div64(hi, lo, workPerByte)
	if r != 0 {
		q++
	}
	return int64(q)
}

// progressed is the remaining work at time t ≥ f.last at the current rate.
func (f *Flow) progressed(t Time) (hi, lo uint64) {
	if f.rate == 0 || t <= f.last {
		return f.hi, f.lo
	}
	ph, pl := bits.Mul64(f.rate, uint64(t-f.last))
	if ph > f.hi || (ph == f.hi && pl >= f.lo) {
		return 0, 0
	}
	lo, b := bits.Sub64(f.lo, pl, 0)
	hi, _ = bits.Sub64(f.hi, ph, b)
	return hi, lo
}

// StartFlow starts a flow of bytes across the resources rs (a resource
// listed twice counts twice) and calls onDone when it has finished. Its rate
// is its max–min fair share; rates are recomputed only when the set of flows
// on one of its resources changes. onDone may be nil. A flow of 0 bytes or
// with no resources finishes at Now (as an event). It panics if bytes < 0.
func (e *Engine) StartFlow(bytes int64, rs []*Resource, onDone func()) *Flow {
	return e.StartGroup(bytes, [][]*Resource{rs}, onDone)
}

// StartGroup starts a coupled flow group: each member moves bytesPerMember
// across its own resources, all members progress in lockstep at the rate of
// the slowest (a ring pipeline), and onDone runs once when the group
// finishes. The group costs one completion event however many members it
// has. For max–min fairness the group is one flow that uses each resource
// with a weight equal to the number of members crossing it.
func (e *Engine) StartGroup(bytesPerMember int64, members [][]*Resource, onDone func()) *Flow {
	if bytesPerMember < 0 {
		panic("sim: StartGroup with negative bytes")
	}
	return e.start(bytesPerMember, e.aggregate(members), onDone)
}

// Shape is a coupled group's resources with their weights (how many members
// cross each), aggregated once: a group started many times with the same
// members (a replay's repeated collectives) skips the aggregation. A Shape
// is immutable and may be used by any number of groups of its engine.
type Shape struct {
	e   *Engine
	res []resUse
	cls *shapeClass
	// byID is res in Resource.id order: a flow joins and leaves its
	// resources in that order (the order of those walks changes nothing),
	// so a large group's walks run through memory forward rather than in
	// ring order (ports scattered over the fabric).
	byID []resUse
}

// shapeClass is the shapes of an engine that cross the same resources with
// the same weights, in any order. While every user of its resources is a
// flow of the class (active flows on each), max–min fairness gives all of
// them one rate, found without progressive filling: a resource r carries
// active·w_r of weight, so its fair level is floor(cap_r/(active·w_r)) =
// floor(floor(cap_r/w_r)/active), and the lowest is floor(alone/active),
// every flow frozen at it in the first round (recomputeClass).
//
// A class can also be parked: its flows are kept in its flows list instead
// of in the users list of each of its resources, so that starting and
// finishing one costs nothing per resource (a replay's ring phase crosses
// 32,768 ports of a 16,384-GPU fabric; walking them at every start and
// finish was a third of the replay's time). A class parks when its first
// flow starts while no flow is on any resource of the engine's (placed ==
// 0) and no parked class shares a resource with it. From then on the
// users list of each of its resources would have seen exactly the appends
// (starts) and swap-removes (finishes) that flows sees, from empty, so each
// would equal flows (with the resource's weight): any other flow that
// would join one of them first places every parked class's flows on their
// resources (unparkAll), in that order, and everything then runs as if
// they had never been parked. Parked classes are disjoint, and there is no
// parked class while any flow is placed.
//
// Whether a class may park is asked of the parked ones pair by pair
// (overlaps, cached) while they are few; from markAbove of them (disjoint
// groups running at once: a replay's K inter-group all-reduces, collective
// --concurrent) each parked class marks its resources (Resource.parked)
// instead, so that asking costs a walk of the asking class's resources, not
// one pair per parked class.
type shapeClass struct {
	res   []resUse // the first shape's
	byID  []resUse // res in Resource.id order (overlaps)
	alone uint64   // min over res of floor(cap/w): one flow's rate alone
	// pace caps each flow's rate (0: none): the class of a shape's flows
	// started with one pace (StartShapeAt), made by paced from the
	// shape's own class, whose paced classes it keeps.
	pace   uint64
	paced  map[uint64]*shapeClass
	active int // flows of the class crossing its resources
	// flows are the class's flows while it is parked (the order its
	// resources' users lists would hold them in), empty otherwise.
	flows []user
	// overlap caches overlaps: whether another class shares a resource.
	overlap map[*shapeClass]bool
	// pidx is the class's index in Engine.parked while it is parked;
	// marked is set while its resources point at it (Resource.parked).
	pidx   int
	marked bool
}

// rate is the one rate of the class's flows while n of them share its
// resources alone: each resource's fair level, floor(alone/n), or the pace.
func (c *shapeClass) rate(n int) uint64 {
	r := c.alone / uint64(n)
	if c.pace > 0 {
		r = min(r, c.pace)
	}
	return r
}

// withPace is c's class for flows paced at pace (0: c itself).
func (c *shapeClass) withPace(pace uint64) *shapeClass {
	if pace == 0 || c == nil {
		return c
	}
	if p := c.paced[pace]; p != nil {
		return p
	}
	p := &shapeClass{res: c.res, byID: c.byID, alone: c.alone, pace: pace}
	if c.paced == nil {
		c.paced = map[uint64]*shapeClass{}
	}
	c.paced[pace] = p
	return p
}

// markAbove is the number of parked classes from which they mark their
// resources rather than answer overlaps pair by pair.
const markAbove = 16

// mark points c's resources at it (on) or clears them.
func (c *shapeClass) mark(on bool) {
	if c.marked == on {
		return
	}
	c.marked = on
	p := c
	if !on {
		p = nil
	}
	for _, ru := range c.byID {
		ru.r.parked = p
	}
}

// overlaps reports whether c and d share a resource: a merge of their
// resources in id order, once per pair. (Ids wrap after 2^32 resources:
// two resources with one id count as shared, which only costs parking.)
func (c *shapeClass) overlaps(d *shapeClass) bool {
	if v, ok := c.overlap[d]; ok {
		return v
	}
	v := false
	for i, j := 0, 0; i < len(c.byID) && j < len(d.byID); {
		a, b := c.byID[i].r.id, d.byID[j].r.id
		switch {
		case a == b:
			v = true
			i = len(c.byID)
		case a < b:
			i++
		default:
			j++
		}
	}
	if c.overlap == nil {
		c.overlap = map[*shapeClass]bool{}
	}
	if d.overlap == nil {
		d.overlap = map[*shapeClass]bool{}
	}
	c.overlap[d], d.overlap[c] = v, v
	return v
}

// holds reports whether r is one of c's resources.
func (c *shapeClass) holds(r *Resource) bool {
	i, ok := slices.BinarySearchFunc(c.byID, r.id, func(ru resUse, id uint32) int { return cmp.Compare(ru.r.id, id) })
	for ; ok && i < len(c.byID) && c.byID[i].r.id == r.id; i++ {
		if c.byID[i].r == r {
			return true
		}
	}
	return false
}

// classKey finds the classes a shape may belong to: its resource count and
// an order-independent hash of its resources' ids and weights.
type classKey struct {
	n    int
	hash uint64
}

// NewShape aggregates members for StartShape.
func (e *Engine) NewShape(members [][]*Resource) *Shape {
	return e.newShape(e.aggregate(members))
}

// NewShapeFlat is NewShape of members laid end to end in crossings (any
// split of crossings into members gives the same Shape: a Shape holds each
// resource with the number of members crossing it), without building the
// members.
func (e *Engine) NewShapeFlat(crossings []*Resource) *Shape {
	return e.newShape(e.aggregateFlat(crossings))
}

// newShape is the Shape of res, just aggregated.
func (e *Engine) newShape(res []resUse) *Shape {
	byID := slices.Clone(res)
	slices.SortFunc(byID, func(a, b resUse) int { return cmp.Compare(a.r.id, b.r.id) })
	return &Shape{e: e, res: res, cls: e.class(res, byID), byID: byID}
}

// class is the class of res, just aggregated (each resource's mark is the
// current epoch and gidx its index in res), made if it is the first; byID
// is res in Resource.id order.
func (e *Engine) class(res, byID []resUse) *shapeClass {
	key := classKey{n: len(res)}
	alone := uint64(math.MaxUint64)
	for _, ru := range res {
		key.hash += mix64(uint64(ru.r.id)<<32 ^ ru.w)
		alone = min(alone, ru.r.cap/ru.w)
	}
	ep := e.epoch
next:
	for _, c := range e.classes[key] {
		// Both lists hold distinct resources and have the same length,
		// so c's all in res with the same weights make them one set.
		for _, ru := range c.res {
			if ru.r.mark != ep || ru.r.e != e || res[ru.r.gidx].w != ru.w {
				continue next
			}
		}
		return c
	}
	c := &shapeClass{res: res, byID: byID, alone: alone}
	if e.classes == nil {
		e.classes = map[classKey][]*shapeClass{}
	}
	e.classes[key] = append(e.classes[key], c)
	return c
}

// mix64 is SplitMix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// StartShape is StartGroup with pre-aggregated members. It panics if s
// belongs to another engine or bytesPerMember < 0.
func (e *Engine) StartShape(bytesPerMember int64, s *Shape, onDone func()) *Flow {
	if bytesPerMember < 0 {
		panic("sim: StartShape with negative bytes")
	}
	if s.e != e {
		panic("sim: StartShape with another engine's shape")
	}
	return e.startClass(bytesPerMember, s.res, s.byID, s.cls, onDone)
}

// aggregate merges members into one resUse per resource with its weight,
// in first-appearance order.
func (e *Engine) aggregate(members [][]*Resource) []resUse {
	// Count the distinct resources first: the result is kept (by a Shape
	// or a flow), and members may cross each resource many times (a ring
	// of g channels crosses each of its links g times).
	distinct := 0
	e.epoch++
	for _, m := range members {
		distinct += e.countNew(m)
	}
	res := make([]resUse, 0, distinct)
	e.epoch++
	for _, m := range members {
		res = e.merge(res, m)
	}
	return res
}

// aggregateFlat is aggregate of members laid end to end in crossings:
// weights count crossings, whatever members they belong to.
func (e *Engine) aggregateFlat(crossings []*Resource) []resUse {
	e.epoch++
	res := make([]resUse, 0, e.countNew(crossings))
	e.epoch++
	return e.merge(res, crossings)
}

// countNew adopts rs and counts those not yet marked in this epoch,
// marking them.
func (e *Engine) countNew(rs []*Resource) int {
	n := 0
	for _, r := range rs {
		if r.e != e {
			e.adopt(r)
		}
		if r.mark != e.epoch {
			r.mark = e.epoch
			n++
		}
	}
	return n
}

// merge adds rs to res (resources adopted by countNew): a resource marked
// in this epoch has its weight raised, another is appended with weight 1
// and marked with its index (gidx).
func (e *Engine) merge(res []resUse, rs []*Resource) []resUse {
	for _, r := range rs {
		if r.mark == e.epoch {
			res[r.gidx].w++
			continue
		}
		r.mark = e.epoch
		r.gidx = int32(len(res))
		res = append(res, resUse{r: r, w: 1})
	}
	return res
}

// adopt makes r, unused, e's resource (a resource serves one engine at a
// time). It panics if a flow of another engine crosses r. That engine has
// lost a resource, which a class of its, parked, may hold without crossing
// it again (parking does not walk the resources): it parks no more.
func (e *Engine) adopt(r *Resource) {
	if len(r.users) > 0 || len(r.parkedUsers()) > 0 {
		panic("sim: resource in use by another engine")
	}
	if r.e != nil {
		r.e.noPark = true
	}
	r.e, r.mark = e, 0 // marks are per-engine epochs
}

// canPark reports whether a flow of cls may start parked (see
// shapeClass): its class is parked already, or no flow is placed and no
// parked class shares a resource with it.
func (e *Engine) canPark(cls *shapeClass) bool {
	if cls == nil || e.noPark || e.placed > 0 {
		return false
	}
	if len(cls.flows) > 0 {
		return true
	}
	if !e.marking && len(e.parked) >= markAbove {
		e.marking = true
		e.markings++
		for _, c := range e.parked {
			c.mark(true)
		}
	}
	if e.marking {
		for _, ru := range cls.byID {
			if ru.r.parked != nil {
				return false
			}
		}
		return true
	}
	for _, c := range e.parked {
		if c.overlaps(cls) {
			return false
		}
	}
	return true
}

// unparkAll places the flows of every parked class on their resources, in
// the order of the class's flows: the users lists they would have had.
func (e *Engine) unparkAll() {
	for _, c := range e.parked {
		c.mark(false)
		for _, ru := range c.byID {
			r := ru.r
			for _, u := range c.flows {
				r.users = append(r.users, user{f: u.f, w: ru.w})
			}
		}
		for i, u := range c.flows {
			u.f.parked = false
			c.flows[i] = user{}
		}
		e.placed += len(c.flows)
		e.unparked += int64(len(c.flows))
		c.flows = c.flows[:0]
	}
	clear(e.parked)
	e.parked = e.parked[:0]
	e.marking = false
}

// start starts a flow over res (never modified from now on, so it may be
// shared with a Shape).
func (e *Engine) start(bytesPerMember int64, res []resUse, onDone func()) *Flow {
	return e.startClass(bytesPerMember, res, res, nil, onDone)
}

// startClass is start for a flow of a Shape: byID is res in another order
// (Shape.byID), cls the shape's class (nil: none).
func (e *Engine) startClass(bytesPerMember int64, res, byID []resUse, cls *shapeClass, onDone func()) *Flow {
	hi, lo := bits.Mul64(uint64(bytesPerMember), workPerByte)
	return e.startWork(bytesPerMember, hi, lo, 0, res, byID, cls, onDone)
}

// StartShapeAt is StartShape for a flow group timed rather than sized:
// each member's work is what it moves in d at bytesPerSec/share bytes per
// second (d·bytesPerSec·rateScale/share work units, exact when share
// divides bytesPerSec·rateScale, as any share up to 16 does). Where its
// members move at that rate (alone on resources of bytesPerSec that share
// of its members cross, and faster elsewhere) it ends exactly d after it
// starts; flows sharing a resource with it divide the resource's time
// exactly as their work. Bytes reports bytesPerMember. It panics as
// StartShape does, or if d < 0, bytesPerSec is not in (0, MaxBandwidth]
// or share is 0.
func (e *Engine) StartShapeAt(bytesPerMember int64, d Time, bytesPerSec int64, share uint32, s *Shape, onDone func()) *Flow {
	if bytesPerMember < 0 || d < 0 {
		panic("sim: StartShapeAt with negative bytes or time")
	}
	if bytesPerSec <= 0 || bytesPerSec > MaxBandwidth || share == 0 {
		panic("sim: StartShapeAt with a rate out of range")
	}
	if s.e != e {
		panic("sim: StartShapeAt with another engine's shape")
	}
	hi, lo := bits.Mul64(uint64(d), uint64(bytesPerSec)*rateScale/uint64(share))
	return e.startWork(bytesPerMember, hi, lo, 0, s.res, s.byID, s.cls, onDone)
}

// StartShapePaced is StartShape for a flow group that moves wireBytes per
// member on its resources (its bytes with whatever overhead the wire
// carries) in d and no faster: its rate is capped at wireBytes/d (its
// pace, rounded down to a whole work unit per picosecond; its work is the
// pace times d, within a byte of wireBytes). Alone on resources that move
// those bytes in less than d it ends exactly d after it starts, and beside
// other flows it holds only its pace: max–min fairness gives the rest of
// each resource to them (the pace is a resource of its own in progressive
// filling). A group its resources cannot keep at its pace shares them as
// any flow does, and ends later. Bytes reports bytesPerMember. It panics
// as StartShape does, or if wireBytes < 0, d ≤ 0 or the pace does not fit
// 64 bits (wireBytes/d far above MaxBandwidth, a rate no resource has).
func (e *Engine) StartShapePaced(bytesPerMember, wireBytes int64, d Time, s *Shape, onDone func()) *Flow {
	if bytesPerMember < 0 || wireBytes < 0 || d <= 0 {
		panic("sim: StartShapePaced with negative bytes or a time that is not positive")
	}
	if s.e != e {
		panic("sim: StartShapePaced with another engine's shape")
	}
	rhi, rlo := bits.Mul64(uint64(wireBytes), workPerByte)
	if rhi >= uint64(d) {
		panic("sim: StartShapePaced at a pace beyond any bandwidth")
	}
	pace, _ := bits.Div64(rhi, rlo, uint64(d))
	if pace == 0 {
		return e.startWork(bytesPerMember, 0, 0, 0, s.res, s.byID, s.cls, onDone)
	}
	hi, lo := bits.Mul64(uint64(d), pace)
	return e.startWork(bytesPerMember, hi, lo, pace, s.res, s.byID, s.cls.withPace(pace), onDone)
}

// startWork starts a flow of bytesPerMember bytes (reported), hi:lo work
// units per member and a rate cap of pace (0: none); cls is of that pace.
func (e *Engine) startWork(bytesPerMember int64, hi, lo, pace uint64, res, byID []resUse, cls *shapeClass, onDone func()) *Flow {
	f := &Flow{e: e, onDone: onDone, bytes: bytesPerMember, start: e.now, last: e.now, hidx: -1, id: e.nflows, res: res, byID: byID, pace: pace}
	e.nflows++
	e.flows++
	if e.ftrace != nil {
		e.ftrace.FlowStart(e.now, f)
	}
	f.hi, f.lo = hi, lo
	if hi|lo == 0 || len(f.res) == 0 {
		f.res, f.byID = nil, nil
		e.schedule(f, e.now)
		return f
	}
	if e.canPark(cls) {
		e.startParked(f, cls)
		return f
	}
	e.unparkAll()
	e.placed++
	// uniform: every user of f's resources is a flow of its class (each
	// resource has exactly the class's active flows).
	uniform := cls != nil
	if uniform {
		f.cls = cls
		cls.active++
	}
	shared, alone := false, uint64(math.MaxUint64)
	for _, ru := range f.byID {
		r := ru.r
		if r.e != e {
			e.adopt(r)
		}
		r.users = append(r.users, user{f: f, w: ru.w})
		uniform = uniform && len(r.users) == cls.active
		if len(r.users) > 1 {
			shared = true
		} else {
			l := r.cap
			if ru.w > 1 {
				l /= ru.w
			}
			alone = min(alone, l)
		}
	}
	if shared {
		if uniform {
			e.recomputeClass(f.res[0].r.users, cls)
		} else {
			e.recomputeOrDefer(f.res, f)
		}
		return f
	}
	// Alone on its resources (most ring phases of a replay): progressive
	// filling saturates its lowest fair level at once, or its pace, which
	// is what recompute would find.
	if pace > 0 {
		alone = min(alone, pace)
	}
	if alone > 0 {
		f.rate = alone
		if e.ftrace != nil {
			e.ftrace.FlowRate(e.now, f, int64(f.rate/rateScale))
		}
		e.schedule(f, finishAt(e.now, f.hi, f.lo, f.rate))
	}
	return f
}

// startParked starts f of class cls parked: what the walk of startClass
// would do, every resource's users being cls's flows. Alone, f takes the
// lowest fair level of its resources, cls.alone; with others, the class's
// one rate.
func (e *Engine) startParked(f *Flow, cls *shapeClass) {
	e.parkedStarts++
	f.cls, f.parked = cls, true
	cls.active++
	cls.flows = append(cls.flows, user{f: f})
	if len(cls.flows) > 1 {
		e.recomputeClass(cls.flows, cls)
		return
	}
	cls.pidx = len(e.parked)
	e.parked = append(e.parked, cls)
	if e.marking {
		cls.mark(true)
	}
	if r := cls.rate(1); r > 0 {
		f.rate = r
		if e.ftrace != nil {
			e.ftrace.FlowRate(e.now, f, int64(f.rate/rateScale))
		}
		e.schedule(f, finishAt(e.now, f.hi, f.lo, f.rate))
	}
}

// removeUser removes f from us by a scan from the end and a swap with the
// last user, the order every users list and a parked class's flows keep
// (so that a parked class's flows stay what its resources' lists would
// hold). A list has few users (the flows crossing one port), so a scan is
// cheaper than keeping each flow's index per list.
func removeUser(us []user, f *Flow) []user {
	n := len(us) - 1
	i := n
	for us[i].f != f {
		i--
	}
	us[i] = us[n]
	us[n] = user{}
	return us[:n]
}

// finishParked is finish's walk for a parked flow: it leaves its class's
// flows as it would have left each resource's users (the same scan and
// swap), and the class's other flows, if any, get their new rate.
func (e *Engine) finishParked(f *Flow) {
	cls := f.cls
	f.cls, f.parked = nil, false
	cls.active--
	cls.flows = removeUser(cls.flows, f)
	if len(cls.flows) > 0 {
		e.recomputeClass(cls.flows, cls)
		return
	}
	cls.mark(false)
	k, last := cls.pidx, len(e.parked)-1
	e.parked[k] = e.parked[last]
	e.parked[k].pidx = k
	e.parked[last] = nil
	e.parked = e.parked[:last]
	if last == 0 {
		e.marking = false
	}
}

// finish completes f at Now: it leaves its resources, the rates of the
// flows that shared them are recomputed, then onDone runs.
func (e *Engine) finish(f *Flow) {
	e.unschedule(f)
	f.done = true
	f.end = e.now
	if e.ftrace != nil {
		e.ftrace.FlowDone(e.now, f)
	}
	f.hi, f.lo, f.rate = 0, 0, 0
	e.flows--
	if f.parked {
		e.finishParked(f)
		if f.onDone != nil {
			f.onDone()
		}
		return
	}
	if len(f.byID) > 0 {
		e.placed--
	}
	cls := f.cls
	uniform := cls != nil
	if uniform {
		f.cls = nil
		cls.active--
	}
	shared := false
	for _, ru := range f.byID {
		r := ru.r
		r.users = removeUser(r.users, f)
		n := len(r.users)
		shared = shared || n > 0
		uniform = uniform && n == cls.active
	}
	// If no other flow crossed its resources, no rate changes.
	if shared {
		if uniform {
			e.recomputeClass(f.res[0].r.users, cls)
		} else {
			e.recomputeOrDefer(f.res, nil)
		}
	}
	if f.onDone != nil {
		f.onDone()
	}
}

// recompute brings every flow connected (through shared resources) to the
// resources in seeds up to date at Now and recomputes their max–min fair
// rates by progressive filling in integer work units, then reschedules the
// completion of each flow whose rate changed.
//
// self, if not nil, is the flow that just started over exactly the seeds:
// its resources are all seeds already, so its list is not walked again.
func (e *Engine) recompute(seeds []resUse, self *Flow) {
	e.epoch++
	ep := e.epoch
	res := e.compRes[:0]
	fl := e.compF[:0]
	for _, ru := range seeds {
		if ru.r.mark != ep {
			ru.r.mark = ep
			res = append(res, ru.r)
		}
	}
	// One pass finds the connected flows and resources and sets each
	// resource's fair level (the active list keeps the visiting order).
	act := e.active[:0]
	for i := 0; i < len(res); i++ {
		r := res[i]
		var wsum uint64
		for _, u := range r.users {
			wsum += u.w
			if u.f.mark == ep {
				continue
			}
			u.f.mark = ep
			fl = append(fl, u.f)
			if u.f == self {
				continue
			}
			for _, ru := range u.f.res {
				if ru.r.mark != ep {
					ru.r.mark = ep
					res = append(res, ru.r)
				}
			}
		}
		r.rem, r.wsum = r.cap, wsum
		switch wsum {
		case 0:
		case 1:
			r.level = r.rem
			act = append(act, r)
		default:
			r.level = r.rem / wsum
			act = append(act, r)
		}
	}
	now := e.now
	paces := 0
	for _, f := range fl {
		f.hi, f.lo = f.progressed(now)
		f.last = now
		f.frozen = false
		f.nrate = 0
		if f.pace > 0 {
			// The pace is a resource of the flow's own, after the
			// shared ones in the visiting order.
			if paces == len(e.paceRes) {
				e.paceRes = append(e.paceRes, &Resource{})
			}
			r := e.paceRes[paces]
			paces++
			r.users = append(r.inline[:0], user{f: f, w: 1})
			r.cap, r.rem, r.wsum, r.level = f.pace, f.pace, 1, f.pace
			f.paceR = r
			act = append(act, r)
		}
	}
	// Progressive filling: the resource with the lowest fair level
	// saturates first, the earliest visited among equals, and its
	// unfrozen flows freeze at that level.
	if len(act) <= scanMax {
		fillByScan(act)
	} else {
		e.fillBySort(act, len(fl))
	}
	for _, r := range e.paceRes[:paces] {
		r.users[0].f.paceR = nil
		r.users = r.users[:0]
		r.inline[0] = user{}
	}
	for _, f := range fl {
		if f.nrate == f.rate {
			continue // its queued completion is still right
		}
		f.rate = f.nrate
		if e.ftrace != nil {
			e.ftrace.FlowRate(now, f, int64(f.rate/rateScale))
		}
		if f.rate == 0 {
			e.unschedule(f)
			continue
		}
		e.schedule(f, finishAt(now, f.hi, f.lo, f.rate))
	}
	// Keep scratch capacity, drop references.
	clear(res)
	clear(fl)
	clear(act)
	e.compRes, e.compF, e.active = res[:0], fl[:0], act[:0]
}

// SetDeferRates sets whether the rates of the flows a start or an end
// touches are recomputed at once (false, the default) or once for every
// start and end of one instant, before the clock moves on (true): a
// thousand collectives that start together on one fabric then cost one
// progressive filling of their component, not a thousand (a replay of
// 1,024 ranks with K = 2 and one slowed GPU, every rank simulated: 25.3 s,
// 0.59 s deferred; docs/performance.md). Both give every flow its max–min
// fair rate whenever time passes. The order in which resources at equal
// fair levels saturate may differ, which integer rounding could turn into
// a different end; TestDeferRates finds none over 6,400 flows with ties.
// Rate, Remaining and RunUntil settle the deferred rates first.
func (e *Engine) SetDeferRates(on bool) {
	e.settle()
	e.deferRates = on
}

// recomputeOrDefer recomputes the rates of the flows connected to seeds
// (self: the flow starting, see recompute) now, or under SetDeferRates
// before the clock moves on.
func (e *Engine) recomputeOrDefer(seeds []resUse, self *Flow) {
	if !e.deferRates {
		e.recompute(seeds, self)
		return
	}
	e.deferred = append(e.deferred, seeds...)
}

// settle runs the deferred recomputation, if any.
func (e *Engine) settle() {
	if len(e.deferred) == 0 {
		return
	}
	// Emptied before recompute runs: a tracer that asks a Rate from
	// within it finds nothing to settle.
	seeds := e.deferred
	e.deferred = nil
	e.recompute(seeds, nil)
	clear(seeds)
	if e.deferred == nil {
		e.deferred = seeds[:0]
	}
}

// recomputeClass is recompute for a connected set of flows that are all of
// class cls, each crossing every resource of the class and nothing else:
// they get one rate (shapeClass), and recompute's effects follow in its
// order, that of the users us of one of the resources (the flows it would
// visit first, and all of them), or of the parked class's flows.
func (e *Engine) recomputeClass(us []user, cls *shapeClass) {
	e.classRates++
	now := e.now
	rate := cls.rate(cls.active)
	for _, u := range us {
		f := u.f
		f.hi, f.lo = f.progressed(now)
		f.last = now
	}
	for _, u := range us {
		f := u.f
		if f.rate == rate {
			continue // its queued completion is still right
		}
		f.rate = rate
		if e.ftrace != nil {
			e.ftrace.FlowRate(now, f, int64(f.rate/rateScale))
		}
		if rate == 0 {
			e.unschedule(f)
			continue
		}
		e.schedule(f, finishAt(now, f.hi, f.lo, f.rate))
	}
}

// finishAt is now + ceil(work/rate), saturating at MaxTime.
func finishAt(now Time, hi, lo, rate uint64) Time {
	if hi >= rate {
		return MaxTime
	}
	q, r := bits.Div64(hi, lo, rate)
	if r != 0 {
		q++
	}
	if q > uint64(MaxTime-now) {
		return MaxTime
	}
	return now + Time(q)
}

// Stretch multiplies the work f has left by num/den (rounded up) at Now,
// so that from Now its remaining bytes take num/den times as long at any
// rate: a transfer whose endpoint runs slower for a while (a collective's
// kernels sharing their GPU with compute) is stretched by the slowdown when
// it begins and by its inverse when it ends, and is slowed for exactly that
// interval. Its rate and share of its resources are unchanged: the slowed
// transfer still holds its bandwidth. Work that would overflow 128 bits
// saturates (the flow then ends at MaxTime). It panics if num or den is 0;
// a finished flow is left alone.
func (f *Flow) Stretch(num, den uint64) {
	if num == 0 || den == 0 {
		panic("sim: Stretch by a zero factor")
	}
	if f.done || num == den {
		return
	}
	e := f.e
	f.hi, f.lo = f.progressed(e.now)
	f.last = e.now
	f.hi, f.lo = mulDivCeil128(f.hi, f.lo, num, den)
	if f.rate > 0 {
		e.schedule(f, finishAt(e.now, f.hi, f.lo, f.rate))
	}
}

// mulDivCeil128 is ceil(hi:lo · num / den), saturating at 2^128 − 1.
func mulDivCeil128(hi, lo, num, den uint64) (uint64, uint64) {
	// hi:lo · num as three words w2:w1:w0.
	h1, w0 := bits.Mul64(lo, num)
	h2, m1 := bits.Mul64(hi, num)
	w1, c := bits.Add64(m1, h1, 0)
	w2 := h2 + c
	if w2 >= den {
		return math.MaxUint64, math.MaxUint64 // the quotient needs more than 128 bits
	}
	q1, r := bits.Div64(w2, w1, den)
	q0, r := bits.Div64(r, w0, den)
	if r != 0 {
		if q1 == math.MaxUint64 && q0 == math.MaxUint64 {
			return q1, q0
		}
		var c uint64
		q0, c = bits.Add64(q0, 1, 0)
		q1 += c
	}
	return q1, q0
}

// scanMax is the number of active resources up to which progressive
// filling scans them every round; above it, it sorts them once
// (fillBySort: a contended fabric's component has thousands, and a scan a
// round made a 4,096-rank K=8 replay spend 24 of its 25 s here). Both pick
// the same resource every round. A variable so that tests can send every
// recomputation down either path.
var scanMax = 64

// freeze freezes r's unfrozen flows at level and takes their share off
// every resource they cross; it returns how many it froze.
func freeze(r *Resource, level uint64) int {
	n := 0
	for _, u := range r.users {
		f := u.f
		if f.frozen {
			continue
		}
		f.frozen = true
		f.nrate = level
		n++
		if f.paceR != nil {
			f.paceR.wsum = 0
		}
		for _, ru := range f.res {
			q := ru.r
			q.rem -= level * ru.w
			q.wsum -= ru.w
			if q.wsum > 0 {
				q.level = q.rem / q.wsum
			}
		}
	}
	return n
}

// fillByScan is progressive filling over act by a scan a round.
func fillByScan(act []*Resource) {
	for len(act) > 0 {
		best := -1
		var level uint64
		for i, r := range act {
			if best < 0 || r.level < level {
				best, level = i, r.level
			}
		}
		freeze(act[best], level)
		// Drop resources with no unfrozen user left.
		k := 0
		for _, r := range act {
			if r.wsum > 0 {
				act[k] = r
				k++
			}
		}
		act = act[:k]
	}
}

// fillBySort is progressive filling over act, whose resources carry
// unfrozen flows, in the order of a sort. Levels only rise as flows freeze
// (a flow frozen at level ≤ r.level leaves r's level at least as high), so
// an entry's key may be stale low: the entries are sorted once by (level,
// visiting order), and one found stale moves, re-keyed, to a heap that
// stays small (a few re-keys per frozen flow); the next entry is the lesser
// of the sorted one and the heap's top. A resource with no unfrozen user
// left is dropped, and it stops once every flow is frozen. The entry taken
// is then the lowest level, earliest visited among equals, as fillByScan
// finds it.
func (e *Engine) fillBySort(act []*Resource, unfrozen int) {
	sorted := e.fill[:0]
	for i, r := range act {
		sorted = append(sorted, fillEntry{level: r.level, ord: int32(i), r: r})
	}
	e.fill = sorted
	sorted = e.sortByLevel(sorted)
	rekeyed := &e.rekeyed
	for i := 0; unfrozen > 0 && (i < len(sorted) || len(*rekeyed) > 0); {
		fromSorted := len(*rekeyed) == 0 || (i < len(sorted) && sorted[i].cmp((*rekeyed)[0]) < 0)
		var c *fillEntry
		if fromSorted {
			c = &sorted[i]
		} else {
			c = &(*rekeyed)[0]
		}
		r := c.r
		switch {
		case r.wsum == 0:
		case c.level != r.level:
			if fromSorted {
				// Appended and sifted up (heap.Push would box it).
				*rekeyed = append(*rekeyed, fillEntry{level: r.level, ord: c.ord, r: r})
				heap.Fix(rekeyed, len(*rekeyed)-1)
				i++
			} else {
				c.level = r.level
				heap.Fix(rekeyed, 0)
			}
			continue
		default:
			unfrozen -= freeze(r, r.level)
		}
		if fromSorted {
			i++
		} else {
			heap.Pop(rekeyed)
		}
	}
	clear(e.fill)
	clear(e.fillOut)
	clear(*rekeyed)
	e.fill, e.fillOut, *rekeyed = e.fill[:0], e.fillOut[:0], (*rekeyed)[:0]
}

// fillEntry is a resource in fillBySort's order: its fair level when
// sorted or last re-keyed (never above the current one) and its visiting
// order.
type fillEntry struct {
	level uint64
	ord   int32
	r     *Resource
}

// sortByLevel sorts entries, which come in visiting order, by level and
// then visiting order. A fabric's ports mostly share a few capacities and
// loads, so with at most 16 distinct levels it counts (one pass to count
// each level's entries, one to place them); otherwise it sorts stably. The
// result is in, or the engine's second scratch slice.
func (e *Engine) sortByLevel(in []fillEntry) []fillEntry {
	const few = 16
	var levels [few]uint64
	var counts [few]int
	d := 0
	for _, x := range in {
		k := 0
		for k < d && levels[k] != x.level {
			k++
		}
		if k == d {
			if d == few {
				slices.SortStableFunc(in, func(a, b fillEntry) int { return cmp.Compare(a.level, b.level) })
				return in
			}
			levels[d] = x.level
			d++
		}
		counts[k]++
	}
	// start[k]: where level k's first entry goes (levels in ascending order).
	var start [few]int
	for k := range d {
		for j := range d {
			if levels[j] < levels[k] {
				start[k] += counts[j]
			}
		}
	}
	out := slices.Grow(e.fillOut[:0], len(in))[:len(in)]
	for _, x := range in {
		k := 0
		for levels[k] != x.level {
			k++
		}
		out[start[k]] = x
		start[k]++
	}
	e.fillOut = out
	return out
}

// cmp orders fill entries by level, then visiting order.
func (a fillEntry) cmp(b fillEntry) int {
	if c := cmp.Compare(a.level, b.level); c != 0 {
		return c
	}
	return cmp.Compare(a.ord, b.ord)
}

// fillHeap is a heap of fill entries (container/heap) in cmp's order; Pop
// drops the last entry and returns nothing, so that popping does not
// allocate.
type fillHeap []fillEntry

func (h fillHeap) Len() int           { return len(h) }
func (h fillHeap) Less(i, j int) bool { return h[i].cmp(h[j]) < 0 }
func (h fillHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fillHeap) Push(x any)        { *h = append(*h, x.(fillEntry)) }
func (h *fillHeap) Pop() any {
	old := *h
	old[len(old)-1] = fillEntry{}
	*h = old[:len(old)-1]
	return nil
}
