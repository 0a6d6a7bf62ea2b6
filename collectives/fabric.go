package collectives

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Traffic is wire bytes: every byte a transfer sends is counted once on its
// source (Sent), once on its destination (Recv), once on each link it
// crosses (Link: egress and ingress) and once in its class total.
type Traffic struct {
	// Total[c] is the bytes sent over links of class c.
	Total [topology.NumClasses]units.Bytes
	// Sent[r][c] and Recv[r][c] are rank r's bytes sent and received over
	// class c.
	Sent, Recv [][topology.NumClasses]units.Bytes
	// Link[id] is the bytes that crossed link id.
	Link []units.Bytes
}

func newTraffic(t *topology.Topology) Traffic {
	return Traffic{
		Sent: make([][topology.NumClasses]units.Bytes, t.Ranks()),
		Recv: make([][topology.NumClasses]units.Bytes, t.Ranks()),
		Link: make([]units.Bytes, t.NumLinks()),
	}
}

func (tr *Traffic) clone() Traffic {
	c := *tr
	c.Sent = append([][topology.NumClasses]units.Bytes(nil), tr.Sent...)
	c.Recv = append([][topology.NumClasses]units.Bytes(nil), tr.Recv...)
	c.Link = append([]units.Bytes(nil), tr.Link...)
	return c
}

// add accumulates a prepared collective's bytes (its full plan's), or
// nothing on overflow. The class totals are the Prepared's own accounting
// (Prepared.Wire); every per-rank and per-link counter is at most its class
// total, so checking the totals is enough.
func (tr *Traffic) add(pr *Prepared) error {
	for c := range pr.wire {
		if _, err := units.Add(int64(tr.Total[c]), int64(pr.wire[c])); err != nil {
			return fmt.Errorf("collectives: traffic: %w", err)
		}
	}
	for c := range pr.wire {
		tr.Total[c] += pr.wire[c]
	}
	p := pr.plan
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j, x := range ph.Transfers {
			path := &ph.paths[j]
			b := ph.transferBytes(j)
			tr.Sent[x.Src][path.Class] += b
			tr.Recv[x.Dst][path.Class] += b
			tr.Link[path.Links[0]] += b
			tr.Link[path.Links[1]] += b
		}
	}
	return nil
}

// MaxSent is the largest Sent[r][c] over ranks: the busiest rank on class c.
func (tr *Traffic) MaxSent(c topology.Class) units.Bytes {
	var m units.Bytes
	for _, s := range tr.Sent {
		m = max(m, s[c])
	}
	return m
}

// Wire is the traffic of one collective, without running it.
func Wire(t *topology.Topology, spec Spec) (Traffic, error) {
	p, err := Lower(t, spec)
	if err != nil {
		return Traffic{}, err
	}
	pr, err := newPrepared(p, nil)
	if err != nil {
		return Traffic{}, err
	}
	tr := newTraffic(t)
	if err := tr.add(pr); err != nil {
		return Traffic{}, err
	}
	return tr, nil
}

// Fabric runs collectives on a topology's links as flows of a sim engine.
// Each link is one sim.Resource; each phase of a collective is one coupled
// flow group, so collectives that share links share their bandwidth max–min
// fairly. It is not safe for concurrent use (like the engine).
type Fabric struct {
	eng  *sim.Engine
	topo *topology.Topology
	// res[id/resChunk][id%resChunk] is link id's resource, made a chunk
	// at a time on first use (resource).
	res     [][]*sim.Resource
	traffic Traffic
	// noTraffic: the caller accounts bytes itself (FabricOptions).
	noTraffic bool
	model     *Model
	// skel is the fabric's one cache: per op, algorithm and group, the
	// first Prepared (other sizes derive from it) and the sizes prepared
	// since; looked up, never iterated.
	skel map[skelKey][]*skeleton
	// lw is the scratch of the fabric's lowerings; groups holds one copy of
	// each group prepared, which its plans share (looked up, never
	// iterated).
	lw     *lowering
	groups map[groupKey][]int
	// flat is the scratch of shapes (sim.NewShapeFlat copies what it
	// keeps), grown to the largest phase prepared.
	flat []*sim.Resource
}

type groupKey struct {
	n    int
	hash uint64
}

// skeleton is one lowering and the sizes derived from it.
type skeleton struct {
	base  *Prepared
	sizes map[units.Bytes]*Prepared // bounded by maxSizes; never iterated
}

// maxSizes bounds the sizes a skeleton keeps (emptied when full): a replay
// starts a few sizes per group many times.
const maxSizes = 64

// FabricOptions tune a Fabric.
type FabricOptions struct {
	// NoTraffic turns off the fabric's own wire-byte accounting (Traffic
	// stays empty), which costs O(transfers) per collective started; for
	// callers that account bytes themselves (see Prepared.Wire and
	// Prepared.Sent).
	NoTraffic bool
	// Model, if set, times every collective but Hierarchical ones by NCCL's
	// cost model (Auto picks NCCL's algorithm and protocol): the plan's
	// phases keep their traffic on the links, so concurrent collectives
	// still contend, and alone they take the model's time.
	Model *Model
}

// groupHash is an FNV-1a-style hash of the group's ranks (a lookup key,
// never output), in four interleaved lanes: one lane's chain of
// multiplications made it a few cycles per rank, which 16,384-rank groups
// paid at every Prepare.
func groupHash(g []int) uint64 {
	const prime = 1099511628211
	h := [4]uint64{14695981039346656037, 14695981039346656037 ^ 1, 14695981039346656037 ^ 2, 14695981039346656037 ^ 3}
	i := 0
	for ; i+4 <= len(g); i += 4 {
		h[0] = (h[0] ^ uint64(g[i])) * prime
		h[1] = (h[1] ^ uint64(g[i+1])) * prime
		h[2] = (h[2] ^ uint64(g[i+2])) * prime
		h[3] = (h[3] ^ uint64(g[i+3])) * prime
	}
	for ; i < len(g); i++ {
		h[0] = (h[0] ^ uint64(g[i])) * prime
	}
	return ((h[0]*prime^h[1])*prime^h[2])*prime ^ h[3]
}

// NewFabric makes one sim.Resource per topology link on eng.
func NewFabric(eng *sim.Engine, t *topology.Topology) *Fabric {
	return NewFabricOptions(eng, t, FabricOptions{})
}

// NewFabricOptions is NewFabric with options.
func NewFabricOptions(eng *sim.Engine, t *topology.Topology, opt FabricOptions) *Fabric {
	f := &Fabric{eng: eng, topo: t, noTraffic: opt.NoTraffic, model: opt.Model, lw: newLowering(t)}
	if !opt.NoTraffic {
		f.traffic = newTraffic(t)
	}
	f.res = make([][]*sim.Resource, (t.NumLinks()+resChunk-1)/resChunk)
	return f
}

// Engine is the fabric's engine.
func (f *Fabric) Engine() *sim.Engine { return f.eng }

// Topology is the fabric's topology.
func (f *Fabric) Topology() *topology.Topology { return f.topo }

// Resource is the sim resource of link id (to start other flows on it).
func (f *Fabric) Resource(id topology.LinkID) *sim.Resource { return f.resource(id) }

// resChunk is how many links' resources are made at once, on first use: a
// run that touches a few ports of a large cluster (the symmetric replay)
// makes only those chunks.
const resChunk = 64

func (f *Fabric) resource(id topology.LinkID) *sim.Resource {
	c := int(id) / resChunk
	if f.res[c] == nil {
		lo := c * resChunk
		hi := min(lo+resChunk, f.topo.NumLinks())
		names := make([]string, hi-lo)
		bws := make([]int64, hi-lo)
		for i := range names {
			l := f.topo.Link(topology.LinkID(lo + i))
			names[i], bws[i] = l.Name, int64(l.Bandwidth)
		}
		f.res[c] = sim.NewResources(names, bws)
	}
	return f.res[c][int(id)%resChunk]
}

// Traffic is a copy of the wire bytes of every collective started so far
// (counted when it starts).
func (f *Fabric) Traffic() Traffic { return f.traffic.clone() }

// Handle is a running collective.
type Handle struct {
	Plan  *Plan
	start sim.Time
	end   sim.Time
	done  bool
	// flows are the running phases' flow groups (none before the first:
	// one at a time for an alpha–beta plan, every phase at once for a
	// timed one); num/den is the stretch of their transfers (SetStretch;
	// 0/0: none).
	flows    []*sim.Flow
	num, den uint64
	// The run's state (run, runTimed), held here rather than in closures
	// (a replay starts a collective per bucket and layer): its fabric, flow
	// groups and callback, the phase running (alpha–beta), the flow groups
	// still running, and the callbacks given to the engine, each made once.
	f       *Fabric
	shapes  [][]classShape
	onDone  func()
	phase   int
	left    int
	doneFn  func()
	startFn func()
}

// SetStretch makes the collective's transfers take num/den times as long
// from Now on (num/den = 1 + the slowdown; 1/1 is nominal): the running
// phase's remaining bytes and every later phase's are stretched, the α
// latencies are not. It models NCCL kernels slowed by compute kernels
// beside them on their GPUs (zero/interference.go); it panics if num or
// den is 0.
func (h *Handle) SetStretch(num, den uint64) {
	if num == 0 || den == 0 {
		panic("collectives: SetStretch by a zero factor")
	}
	on, oden := h.num, h.den
	if on == 0 {
		on, oden = 1, 1
	}
	if num*oden == den*on {
		return
	}
	h.num, h.den = num, den
	if h.done {
		return
	}
	for _, fl := range h.flows {
		if !fl.Done() {
			fl.Stretch(num*oden, den*on)
		}
	}
}

// Done reports whether the collective has finished.
func (h *Handle) Done() bool { return h.done }

// Start is when the collective started.
func (h *Handle) Start() sim.Time { return h.start }

// End is when it finished (valid once Done).
func (h *Handle) End() sim.Time { return h.end }

// Start begins spec at the engine's Now: its phases run one after the
// other, each as Steps·α of delay followed by one coupled flow group over the
// phase's transfers; onDone (may be nil) runs when the last phase finishes.
// Alone on the links it takes exactly ClosedForm (or the Model's time). A
// collective with no phases (one rank, zero bytes) finishes at Now, through
// an event. It is Prepare (one cache: the same op, algorithm and group start
// from the same lowering at any size) and StartPrepared.
func (f *Fabric) Start(spec Spec, onDone func()) (*Handle, error) {
	p, err := f.Prepare(spec, nil)
	if err != nil {
		return nil, err
	}
	return f.StartPrepared(p, onDone)
}

// run starts plan p's phases, each as its flow groups (shapes): an
// alpha–beta plan's one after the other, a timed plan's all at once
// (runTimed).
func (f *Fabric) run(p *Plan, shapes [][]classShape, onDone func()) *Handle {
	h := &Handle{Plan: p, start: f.eng.Now(), f: f, shapes: shapes, onDone: onDone}
	if p.Timed && len(p.Phases) > 1 {
		f.runTimed(h)
		return h
	}
	if len(p.Phases) == 0 {
		f.eng.After(0, h.finish)
	} else {
		h.runPhase(0)
	}
	return h
}

// finish marks h done at Now and calls its onDone.
func (h *Handle) finish() {
	h.done, h.end = true, h.f.eng.Now()
	onDone := h.onDone
	// A finished handle keeps nothing of its run (callers may hold it).
	h.shapes, h.onDone, h.doneFn, h.startFn = nil, nil, nil, nil
	if onDone != nil {
		onDone()
	}
}

// runPhase starts an alpha–beta run's phase i after its latency, or
// finishes the collective after its last phase.
func (h *Handle) runPhase(i int) {
	p := h.Plan
	if i == len(p.Phases) {
		h.finish()
		return
	}
	h.phase = i
	if lat := p.Phases[i].Latency; lat > 0 {
		if h.startFn == nil {
			h.startFn = h.startFlows
		}
		h.f.eng.After(sim.Time(lat), h.startFn)
	} else {
		h.startFlows()
	}
}

// startFlows starts the flow groups of the phase running; the last of them
// to end runs the next phase (phaseDone).
func (h *Handle) startFlows() {
	i := h.phase
	h.flows = h.flows[:0]
	h.left = len(h.shapes[i])
	if h.doneFn == nil {
		h.doneFn = h.phaseDone
	}
	h.startGroups(i, h.doneFn)
}

// startGroups starts phase i's flow groups, each ending with done, at the
// handle's stretch, and adds them to its flows.
func (h *Handle) startGroups(i int, done func()) {
	for _, cs := range h.shapes[i] {
		fl := h.f.startPhase(h.Plan, i, cs, done)
		h.flows = append(h.flows, fl)
		if h.num != h.den {
			fl.Stretch(h.num, h.den)
		}
	}
}

// phaseDone is one of the running phase's flow groups ending.
func (h *Handle) phaseDone() {
	if h.left--; h.left == 0 {
		h.runPhase(h.phase + 1)
	}
}

// runTimed runs a timed plan of several phases as NCCL runs the
// collective: one pipeline whose hops inside and across nodes all carry
// data at once, so every phase's flow group starts together after the
// choice's latency (on phase 0) and the collective ends with the last.
// Each link class then carries its phases' bytes, scaled to the model's
// time (timePlan), for the whole collective: a collective beside another
// shares each link it needs all of its time on for all of that time, as
// two NCCL rings over one NIC do, and holds only its pace of a link it
// needs less of.
func (f *Fabric) runTimed(h *Handle) {
	p := h.Plan
	for _, ss := range h.shapes {
		h.left += len(ss)
	}
	if lat := p.Phases[0].Latency; lat > 0 {
		f.eng.After(sim.Time(lat), h.startTimed)
	} else {
		h.startTimed()
	}
}

// startTimed starts every phase's flow groups of a timed run at once.
func (h *Handle) startTimed() {
	p := h.Plan
	h.flows = make([]*sim.Flow, 0, h.left)
	done := h.timedDone
	for i := range p.Phases {
		h.startGroups(i, done)
	}
}

// timedDone is one of a timed run's flow groups ending: the last finishes
// the collective.
func (h *Handle) timedDone() {
	if h.left--; h.left == 0 {
		h.finish()
	}
}

// startPhase starts p's phase i's flow group cs: its bytes; with a Model
// its wire bytes paced over its class's time, or its share of the model's
// time at its class's busiest link's rate when that link needs all of it
// (timePlan).
func (f *Fabric) startPhase(p *Plan, i int, cs classShape, onDone func()) *sim.Flow {
	ph := &p.Phases[i]
	if !p.Timed {
		return f.eng.StartShape(int64(ph.Bytes), cs.s, onDone)
	}
	if cs.class < 0 {
		return f.eng.StartShape(0, cs.s, onDone) // a phase of no transfer
	}
	if r := ph.runs[cs.class]; r.pace > 0 {
		return f.eng.StartShapePaced(int64(ph.Bytes), int64(r.wire), sim.Time(r.pace), cs.s, onDone)
	}
	// The work is the model's time at the class's bandwidth: a link
	// slower than that (cluster.link_overrides) slows the group, which
	// moves at its slowest member's pace.
	l := ph.perByte.nominal[cs.class]
	if ph.dur == 0 || l.bw <= 0 {
		return f.eng.StartShape(0, cs.s, onDone)
	}
	return f.eng.StartShapeAt(int64(ph.Bytes), sim.Time(ph.dur), int64(l.bw), max(l.load, 1), cs.s, onDone)
}

// classShape is a phase's flow group: the transfers over one link class
// of a timed plan's phase, or all of an alpha–beta plan's, or none (class
// −1 for both).
type classShape struct {
	class int
	s     *sim.Shape
}

// shapes aggregates each phase's transfers into flow groups (sim.Shape): a
// timed plan's one per link class the phase crosses, each paced or timed
// on its own (timePlan), an alpha–beta plan's one per phase, whose members
// move in lockstep; with keep non-nil, only the transfers whose source or
// destination is kept.
func (f *Fabric) shapes(p *Plan, keep []bool) [][]classShape {
	out := make([][]classShape, len(p.Phases))
	most := 0
	for i := range p.Phases {
		most = max(most, len(p.Phases[i].paths))
	}
	if cap(f.flat) < 2*most {
		f.flat = make([]*sim.Resource, 0, 2*most)
	}
	flat := f.flat
	for i := range p.Phases {
		ph := &p.Phases[i]
		for c := range topology.NumClasses {
			if p.Timed && ph.count[c] == 0 {
				continue
			}
			flat = flat[:0]
			for j, path := range ph.paths {
				if p.Timed && path.Class != topology.Class(c) {
					continue
				}
				if keep != nil {
					if x := ph.Transfers[j]; !keep[x.Src] && !keep[x.Dst] {
						continue
					}
				}
				flat = append(flat, f.resource(path.Links[0]), f.resource(path.Links[1]))
			}
			// Each transfer is a member crossing its path's two links.
			cs := classShape{class: -1, s: f.eng.NewShapeFlat(flat)}
			if !p.Timed {
				out[i] = append(out[i], cs)
				break
			}
			cs.class = int(c)
			out[i] = append(out[i], cs)
		}
		if len(out[i]) == 0 { // no transfer: a group that ends at once
			out[i] = append(out[i], classShape{class: -1, s: f.eng.NewShape(nil)})
		}
	}
	return out
}

// RankBytes is one rank's wire bytes sent per link class.
type RankBytes struct {
	Rank  int
	Bytes [topology.NumClasses]units.Bytes
}

// Prepared is a collective lowered once, with its flow groups and wire
// bytes, for starting many times (StartPrepared) without looking it up.
type Prepared struct {
	plan   *Plan
	model  *Model // the fabric's, which times the plan when it is Timed
	shape  Shape  // the group's, for the model
	shapes [][]classShape
	wire   [topology.NumClasses]units.Bytes
	sent   []RankBytes
	// What a collective of another size over the same group derives its
	// bytes from: per phase, the transfers per class (Phase.count); per
	// accounted source rank (index into sent), phase and class, its
	// transfers.
	keep     []bool
	srcCount []srcCount
}

type srcCount struct {
	sent, phase int32
	class       topology.Class
	n           int64
	n0          int64 // of them, channel 0's of a rail phase (Phase.extra)
}

// Plan is the plan; read-only. Its phases hold every transfer, or, when
// a restriction was prepared on a fabric that does not account traffic
// itself (FabricOptions.NoTraffic: the symmetric replay), only the
// transfers its flow groups run, those touching a kept rank. Its latencies,
// bytes, times and Wire are the full collective's either way.
func (p *Prepared) Plan() *Plan { return p.plan }

// Wire is the full plan's wire bytes per link class (every transfer).
func (p *Prepared) Wire() [topology.NumClasses]units.Bytes { return p.wire }

// Sent lists the bytes each source rank sends per class, in order of first
// appearance in the plan: every source rank, or with a restriction only the
// kept ones. The slice is shared: do not modify it.
func (p *Prepared) Sent() []RankBytes { return p.sent }

// skelKey finds a prepared collective of the same op, algorithm and group
// (any non-zero size): its lowering serves every size.
type skelKey struct {
	op   Op
	algo Algo
	// chosen is the algorithm a Model picks at the size (its traffic
	// pattern follows it, lowerModel); Auto without a Model.
	chosen Algo
	n      int
	hash   uint64
}

// Prepare lowers spec once. keep, if not nil, restricts the flow groups to
// a subset of ranks (keep[r] for rank r, len(keep) = Ranks): each phase's
// coupled group then holds only the transfers whose source or destination
// is kept, so that a caller simulating a symmetric slice of the cluster
// (every port of a kept rank sees exactly its flows) pays for that slice
// only. Latencies and Wire are the full collective's (see Plan). It costs
// O(transfers) time for the first size of an (op, algorithm, group, keep),
// and memory for the kept transfers only on a NoTraffic fabric, and
// O(phases + kept sources) for the others; StartPrepared is then O(kept
// transfers). keep must not change after the call.
func (f *Fabric) Prepare(spec Spec, keep []bool) (*Prepared, error) {
	if keep != nil && len(keep) != f.topo.Ranks() {
		return nil, fmt.Errorf("collectives: prepare: keep has %d entries for %d ranks", len(keep), f.topo.Ranks())
	}
	var key skelKey
	var c Choice // the model's, when it times spec (derive)
	hash := groupHash(spec.Group)
	if spec.Bytes > 0 && len(spec.Group) > 1 {
		key = skelKey{op: spec.Op, algo: spec.Algo, n: len(spec.Group), hash: hash}
		if f.timed(spec) {
			if err := f.lw.validate(spec); err != nil {
				return nil, err
			}
			blocks, _ := f.lw.nodeBlocks(spec.Group)
			var err error
			if c, err = f.model.Time(spec.Op, blockShape(f.lw.t, len(spec.Group), blocks), spec.Algo, spec.Bytes); err != nil {
				return nil, err
			}
			key.chosen = c.Algo
		}
		for _, sk := range f.skel[key] {
			if !sameKeep(sk.base.keep, keep) || !sameGroup(sk.base.plan.Spec.Group, spec.Group) {
				continue
			}
			if pr := sk.sizes[spec.Bytes]; pr != nil {
				return pr, nil
			}
			pr, err := sk.base.derive(spec, c)
			if err != nil {
				return nil, err
			}
			if len(sk.sizes) == maxSizes {
				clear(sk.sizes)
			}
			sk.sizes[spec.Bytes] = pr
			return pr, nil
		}
	}
	// A fabric that accounts traffic counts every transfer of the plan
	// (Traffic.add): it lowers them all.
	f.lw.keep = keep
	if !f.noTraffic {
		f.lw.keep = nil
	}
	// The plan keeps its own copy of the group, shared with the other
	// plans over it (and the lowering's memos).
	gk := groupKey{len(spec.Group), hash}
	if g := f.groups[gk]; sameGroup(g, spec.Group) {
		spec.Group = g
	} else {
		spec.Group = slices.Clone(spec.Group)
		if f.groups == nil {
			f.groups = map[groupKey][]int{}
		}
		f.groups[gk] = spec.Group
	}
	p, sh, err := f.lowerTimed(spec)
	f.lw.keep = nil
	if err != nil {
		return nil, err
	}
	pr, err := newPrepared(p, keep)
	if err != nil {
		return nil, err
	}
	pr.model, pr.shape, pr.shapes = f.model, sh, f.shapes(p, keep)
	if len(p.Phases) > 0 && spec.Bytes > 0 {
		if f.skel == nil {
			f.skel = map[skelKey][]*skeleton{}
		}
		f.skel[key] = append(f.skel[key], &skeleton{base: pr, sizes: map[units.Bytes]*Prepared{spec.Bytes: pr}})
	}
	return pr, nil
}

// newPrepared counts p's transfers per kept source rank, phase and class,
// and accounts its bytes (no flow groups).
func newPrepared(p *Plan, keep []bool) (*Prepared, error) {
	pr := &Prepared{plan: p, keep: keep}
	idx := map[int]int32{} // rank → index in sent; looked up, never iterated
	type rpc struct {
		sent, phase int32
		class       topology.Class
	}
	cidx := map[rpc]int{} // → index in srcCount; looked up, never iterated
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j, x := range ph.Transfers {
			c := ph.paths[j].Class
			if keep != nil && !keep[x.Src] {
				continue
			}
			k, ok := idx[x.Src]
			if !ok {
				k = int32(len(pr.sent))
				idx[x.Src] = k
				pr.sent = append(pr.sent, RankBytes{Rank: x.Src})
			}
			key := rpc{k, int32(i), c}
			m, ok := cidx[key]
			if !ok {
				m = len(pr.srcCount)
				cidx[key] = m
				pr.srcCount = append(pr.srcCount, srcCount{sent: k, phase: int32(i), class: c})
			}
			pr.srcCount[m].n++
			if j < ph.first {
				pr.srcCount[m].n0++
			}
		}
	}
	if err := pr.account(); err != nil {
		return nil, err
	}
	return pr, nil
}

func sameKeep(a, b []bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return len(a) == len(b) && &a[0] == &b[0]
}

// account fills wire and sent from the counts and the phases' bytes, or
// ErrOverflow. Every per-rank sum is at most its class total.
func (p *Prepared) account() error {
	p.wire = [topology.NumClasses]units.Bytes{}
	for i := range p.plan.Phases {
		ph := &p.plan.Phases[i]
		for c, n := range ph.count {
			x, err := units.Mul(n, int64(ph.Bytes))
			if err == nil {
				var y int64
				if y, err = units.Mul(ph.count0[c], int64(ph.extra)); err == nil {
					x, err = units.Add(x, y)
				}
			}
			if err == nil {
				var y int64
				y, err = units.Add(int64(p.wire[c]), x)
				p.wire[c] = units.Bytes(y)
			}
			if err != nil {
				return fmt.Errorf("collectives: traffic: %w", err)
			}
		}
	}
	for i := range p.sent {
		p.sent[i].Bytes = [topology.NumClasses]units.Bytes{}
	}
	for _, sc := range p.srcCount {
		ph := &p.plan.Phases[sc.phase]
		p.sent[sc.sent].Bytes[sc.class] += units.Bytes(sc.n)*ph.Bytes + units.Bytes(sc.n0)*ph.extra
	}
	return nil
}

// derive is p for spec, a collective of the same op, algorithm and group
// on another (non-zero) size: the same transfers, flow groups and
// latencies, other bytes.
func (p *Prepared) derive(spec Spec, c Choice) (*Prepared, error) {
	// spec differs from p's only in its positive size: it is valid.
	np := *p.plan
	np.Spec.Bytes = spec.Bytes
	np.Phases = slices.Clone(p.plan.Phases)
	for i := range np.Phases {
		np.Phases[i].Bytes = np.Phases[i].bytesFor(spec.Bytes)
		np.Phases[i].extra = np.Phases[i].extraFor(spec.Bytes)
	}
	if np.Timed {
		timePlan(p.model, &np, p.shape, c)
	}
	d := &Prepared{plan: &np, model: p.model, shape: p.shape, shapes: p.shapes, keep: p.keep, srcCount: p.srcCount,
		sent: slices.Clone(p.sent)}
	if err := d.account(); err != nil {
		return nil, err
	}
	return d, nil
}

// StartPrepared starts p like Start (same phases, times and callback).
func (f *Fabric) StartPrepared(p *Prepared, onDone func()) (*Handle, error) {
	if !f.noTraffic {
		if err := f.traffic.add(p); err != nil {
			return nil, err
		}
	}
	return f.run(p.plan, p.shapes, onDone), nil
}

// timedAlgo reports whether a Model times algorithm a: Auto (NCCL's own
// choice), NVLS and NVLSTree. Explicit Ring, Tree and Hierarchical stay
// zerosim's alpha–beta lowerings (seed 000's flat ring in group order).
func timedAlgo(a Algo) bool { return a == Auto || a == NVLS || a == NVLSTree }

// lowerTimed lowers spec on the fabric's scratch and, with a Model, times
// it (sh is then the group's shape).
func (f *Fabric) lowerTimed(spec Spec) (p *Plan, sh Shape, err error) {
	if !f.timed(spec) {
		p, err = f.lw.lower(spec)
		return p, sh, err
	}
	return f.lw.lowerModel(f.model, spec)
}

// timed reports whether the fabric's Model times spec: NCCL's all-to-all
// is grouped point-to-point sends, which its tuner does not model, and
// explicit ring, hierarchical and tree keep the lowering's alpha–beta time.
func (f *Fabric) timed(spec Spec) bool {
	return f.model != nil && timedAlgo(spec.Algo) && spec.Op != AllToAll
}

// LowerModel lowers spec for timing by m: the traffic of the algorithm m
// chooses (Plan.Choice) on the links, timed so that alone it takes m's time
// for spec. NCCL's ring over a group that spans nodes evenly is one flat
// ring per channel through every rank, crossing between nodes on its own
// rail (railRings); its tree and NVLS algorithms keep the two-level pattern
// of Hierarchical when the group spans nodes evenly; everything else is a
// ring in group order.
func LowerModel(t *topology.Topology, m *Model, spec Spec) (*Plan, error) {
	p, _, err := newLowering(t).lowerModel(m, spec)
	return p, err
}

// modelPattern is the algorithm whose traffic stands for NCCL's chosen
// algorithm chosen on a group split into blocks: rails means NCCL's
// channels, their rings (railRings) or, with pattern Tree, their trees
// (railTrees); Hierarchical the two-level pattern, and Ring without rails
// the ring in group order. A group of at least two ranks on each of
// several nodes crosses between them on its channels' NICs whatever NCCL
// chose; over even blocks tree and NVLS keep the two-level pattern, whose
// inter-node rings leave each node through every rank's own NIC: NCCL's
// channels balance over a node's NICs, so that stands for them only where
// every block's ranks split evenly over the NICs they reach (nicsEven:
// always with one NIC per GPU; 4 GPUs on 3 shared NICs, 2 + 1 + 1, put
// half the bytes on the first NIC, which the model prices a third).
// Over uneven blocks, where it cannot run, or unevenly split NICs, a tree
// or NVLS-tree runs NCCL's trees over the channels (railTrees), one-rank
// nodes included: the rings there carry 2(n−1)/n of the buffer through
// each node's NICs, the tree the buffer once, which NCCL's model prices
// over two nodes (tuning.cc line 306, bwIntra, which the tree search
// raises to twice bwInter: search.cc lines 1279–1281, at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027), so a ring standing in for it
// ran the NICs above their speed (2 + 1 H100 ranks, a 1 GiB tree
// all-reduce: 4/3 of S through rank 7's NIC in the tree's 26.0 ms,
// 55.1 GB/s on a 50 GB/s NIC). A group of one rank a node (or on one
// node) runs the ring in group order.
func modelPattern(chosen Algo, blocks [][]int, even, nicsEven bool) (pattern Algo, rails bool) {
	if len(blocks) < 2 {
		return Ring, false
	}
	if (!even || !nicsEven) && (chosen == Tree || chosen == NVLSTree) {
		return Tree, true
	}
	if slices.ContainsFunc(blocks, func(b []int) bool { return len(b) < 2 }) {
		return Ring, false
	}
	if chosen == Ring || !even {
		return Ring, true
	}
	return Hierarchical, false
}

// nicsEven reports whether every block's ranks split evenly over the
// shared NICs they reach (as many ranks on each), true with one NIC per
// GPU.
func nicsEven(t *topology.Topology, blocks [][]int) bool {
	shared := t.SharedNICs()
	if shared == 0 {
		return true
	}
	on := make([]int32, shared) // ranks of the block on each NIC
	for _, blk := range blocks {
		clear(on)
		for _, r := range blk {
			on[t.NIC(r)]++
		}
		first := on[t.NIC(blk[0])]
		for _, k := range on {
			if k != 0 && k != first {
				return false
			}
		}
	}
	return true
}

// lowerModel is LowerModel on lw's scratch, and the group's shape.
func (lw *lowering) lowerModel(m *Model, spec Spec) (*Plan, Shape, error) {
	if err := lw.validate(spec); err != nil {
		return nil, Shape{}, err
	}
	if spec.Algo == NVLSTree && spec.Op != AllReduce {
		return nil, Shape{}, fmt.Errorf("collectives: nvlstree supports allreduce only, not %v", spec.Op)
	}
	blocks, even := lw.nodeBlocks(spec.Group)
	sh := blockShape(lw.t, len(spec.Group), blocks)
	// The pattern follows the algorithm the model picks for this size.
	c, err := m.Time(spec.Op, sh, spec.Algo, spec.Bytes)
	if err != nil {
		return nil, Shape{}, err
	}
	pattern := spec
	var rails bool
	balanced := true
	if even && (c.Algo == Tree || c.Algo == NVLSTree) {
		balanced = nicsEven(lw.t, blocks)
	}
	pattern.Algo, rails = modelPattern(c.Algo, blocks, even, balanced)
	var p *Plan
	switch {
	case rails && len(spec.Group) > 1 && spec.Bytes > 0 && pattern.Algo == Tree:
		p = &Plan{Spec: spec, Algo: Tree}
		err = lw.railTrees(p, spec, blocks, sh)
	case rails && len(spec.Group) > 1 && spec.Bytes > 0:
		p = &Plan{Spec: spec, Algo: Ring}
		err = lw.railRings(p, spec, blocks, sh)
	default:
		p, err = lw.phases(pattern, blocks, even)
	}
	if err != nil {
		return nil, Shape{}, err
	}
	p.Spec = spec
	p.Timed = true
	timePlan(m, p, sh, c)
	return p, sh, nil
}

// railRings adds NCCL's ring channels over a group of m > 1 nodes of at
// least 2 ranks each (blocks) to p: C channels (railChannels), each one
// ring through all n ranks carrying S/C of the buffer (a reduce-scatter or
// all-gather phase of n−1 steps; all-reduce is both). NCCL builds each
// channel's ring in a node as NET k → GPU a → … → GPU x → NET k, with the
// same NIC k in and out first (crossNic 0), and connects node i's sending
// rank to node i+1's receiving rank (NVIDIA/nccl src/graph/search.cc
// ncclTopoSearchParams' comment and ncclTopoSearchCheckNet,
// src/graph/connect.cc connectRings, commit
// 5067397c2676d5aed50042fc39e5c8ee96eb0027); GPU x reaches NIC k by PXN,
// through the NVLink of the GPU beside NIC k (src/transport/net.cc
// useNetPXN, same commit). Channel c here enters block b at its crossing
// rank s = cross[b][c] (railCrossings: the c-th rank with one NIC per GPU),
// walks the block from there (s, s+1, …, s−1), and leaves on rank s's NIC:
// the last rank's bytes go over NVLink to rank s (PXN) and from its NIC to
// the next block's crossing rank of channel c. The channels split the
// flat ring's hop bytes B = (n−1)·⌈S/n⌉ exactly, unpadded: ⌊B/C⌋ on every
// hop and the remainder (under C bytes) on channel 0's (Phase.extra), per
// channel one NVLink transfer per rank (the ring's hops in each node and
// the PXN one) and m network transfers; the channels run as one flow
// group, timed by the model. Every channel crosses each pair of
// neighbours in a block once whatever its crossing rank, so the NVLink
// loads do not depend on it; the NICs' loads do. One channel per rank of
// a node puts on every link the bytes of NCCL's two channels per NIC
// (Model.channels) with one NIC per GPU.
//
// Over uneven nodes (72 + 24 ranks, 8 + 4) every node searches its rings
// alone, channel c from the c-th NIC of its list, its own GPUs' NICs first
// (search.cc ncclTopoSearchRecNet: nets[(nChannels + i) % netCount], the
// list from ncclTopoSelectNets), each NIC's speed taken once per channel,
// and the communicator keeps the fewest channels any node found
// (src/init.cc: graphs[a]->nChannels = min over the ranks' graphInfo, same
// commit): the node with the fewest ranks crosses on at most as many NICs
// as it has GPUs, the busiest of them carrying B over that count. g = the
// smallest block's ranks channels, each on its own rail in every node,
// put exactly that on the small node's NICs, and on the larger node's as
// many (its other NICs idle).
func (lw *lowering) railRings(p *Plan, spec Spec, blocks [][]int, sh Shape) error {
	m, n := len(blocks), len(spec.Group)
	C := railChannels(lw.t, sh)
	var at func(b, c int) int // channel c's crossing rank in block b, on a cache miss
	build := func(name string) error {
		ph := Phase{Name: name, Steps: n - 1, ringK: n, div: C, rail: true}
		ph.Bytes, ph.extra = ph.bytesFor(spec.Bytes), ph.extraFor(spec.Bytes)
		key := ringKey{railRing, n, groupHash(spec.Group)}
		if r := lw.rings[key]; r != nil && sameKeep(r.keep, lw.keep) && sameGroup(r.group, spec.Group) {
			ph.Transfers, ph.paths, ph.count, ph.perByte = r.transfers, r.paths, r.count, r.perByte
			ph.first, ph.count0 = r.first, r.count0
		} else {
			if at == nil {
				at = crossingRank(railCrossings(lw.t, blocks, C))
			}
			if err := lw.begin(&ph, C*(n+m)); err != nil {
				return err
			}
			// The links' loads: channel c's hops in a block of gb ranks
			// from its crossing rank s are the pairs (s, s+1), …,
			// (s−2, s−1) and its PXN hop (s−1, s), all modulo gb, so every
			// channel crosses each pair of neighbours in a block once, and
			// its rail from each block's crossing rank to the next
			// block's. Counted by pair (C transfers each) and channel:
			// n + C·m paths, not C·(n+m).
			for _, blk := range blocks {
				gb := len(blk)
				for j := range gb {
					if _, err := lw.addLoad(&ph, blk[j], blk[(j+1)%gb], uint32(C)); err != nil {
						return err
					}
				}
			}
			for c := range C {
				for b, blk := range blocks {
					if _, err := lw.addLoad(&ph, blk[at(b, c)], blocks[(b+1)%m][at((b+1)%m, c)], 1); err != nil {
						return err
					}
				}
			}
			for k := range ph.count0 {
				ph.count0[k] = ph.count[k] / int64(C) // every channel alike
			}
			// The transfers, in channel order: the kept ones only, so under a
			// restriction only the blocks that hold a kept rank or send to one.
			bs := lw.railBlocks(blocks)
			for c := range C {
				for _, b := range bs {
					blk := blocks[b]
					gb, s := len(blk), at(b, c)
					for i := range gb - 1 {
						if err := lw.keepTransfer(&ph, blk[(s+i)%gb], blk[(s+i+1)%gb]); err != nil {
							return err
						}
					}
					// PXN: the block's last rank to the crossing one, then
					// its NIC to the next block's crossing rank.
					if err := lw.keepTransfer(&ph, blk[(s+gb-1)%gb], blk[s]); err != nil {
						return err
					}
					if err := lw.keepTransfer(&ph, blk[s], blocks[(b+1)%m][at((b+1)%m, c)]); err != nil {
						return err
					}
				}
				if c == 0 {
					ph.first = len(ph.Transfers)
				}
			}
			lw.finish()
			ph.perByte = lw.perByte
			if lw.rings == nil {
				lw.rings = map[ringKey]*ringMemo{}
			}
			lw.rings[key] = &ringMemo{group: spec.Group, keep: lw.keep, transfers: ph.Transfers, paths: ph.paths, count: ph.count,
				alpha: lw.alpha, perByte: lw.perByte, first: ph.first, count0: ph.count0}
		}
		if ph.Bytes+ph.extra == 0 {
			ph.perByte = bottleneck{}
		}
		p.Phases = append(p.Phases, ph)
		return nil
	}
	if spec.Op != AllGather {
		if err := build("ring-rs"); err != nil {
			return err
		}
	}
	if spec.Op != ReduceScatter {
		return build("ring-ag")
	}
	return nil
}

// railTrees adds NCCL's tree all-reduce over a group of m > 1 nodes
// (blocks, of any sizes) to p, on the channels and crossing ranks of
// railRings (railChannels, railCrossings): in every node channel c is a chain from its
// crossing rank s through the node's ranks (s, s+1, …, s−1), whose head s
// talks to the other nodes over its NIC. Between nodes each channel runs
// NCCL's double binary tree over the nodes (ncclGetDtree: a binary tree,
// btreeParent, and its mirror for an even count of nodes or its shift
// by one for an odd one; src/graph/trees.cc lines 32–113), channel c's
// first tree on channel c and its second on channel c + nChannels
// (connect.cc connectTrees, lines 138–176), each on half of the
// channel's share of the buffer: ⌈S/(2C)⌉ goes up every edge of both
// trees (the reduce, tail of a chain to its head, a node's head to its
// parent node's) and down again (the broadcast). NCCL's chain is the
// tree graph's GPUs in order, treeIntra[0] the one that connects to the
// parent node (connect.cc ncclTopoPreset lines 53–62, NVIDIA/nccl at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027); under the tree pattern the
// head also takes the children (child0Index 0), which is what two nodes
// do under any pattern (each node is the other's child 1, attached at
// treeIntra[0]). Over more nodes the balanced tree attaches a first
// child at treeIntra[1] (line 55): zerosim keeps it at the head, the
// same bytes through the node's NICs on one NIC of the channel rather
// than two. So over two nodes each node's NICs send and receive S, S/B of
// what a ring's channels put on them (B = 2(n−1)·⌈S/n⌉), spread over the
// channels' NICs as railRings spreads its crossings.
func (lw *lowering) railTrees(p *Plan, spec Spec, blocks [][]int, sh Shape) error {
	m, n := len(blocks), len(spec.Group)
	C := railChannels(lw.t, sh)
	at := crossingRank(railCrossings(lw.t, blocks, C))
	// NCCL's depth estimate (src/graph/connect.cc line 144 at NVIDIA/nccl
	// 5067397c: nRanks/nNodes − 1 + log2i(nNodes)), a step up and one down
	// per level; a timed plan's latency is the model's (timePlan).
	ph := Phase{Name: "tree", Steps: 2 * (n/m - 1 + log2i(m)), div: C}
	ph.Bytes = ph.bytesFor(spec.Bytes)
	if err := lw.begin(&ph, 4*C*(n-1)); err != nil {
		return err
	}
	parent := dtreeParents(m)
	for c := range C {
		for t := range parent {
			for b, blk := range blocks {
				gb, s := len(blk), at(b, c)
				for i := range gb - 1 {
					lo, hi := blk[(s+i)%gb], blk[(s+i+1)%gb]
					if err := lw.add(&ph, hi, lo); err != nil {
						return err
					}
					if err := lw.add(&ph, lo, hi); err != nil {
						return err
					}
				}
				if up := parent[t][b]; up >= 0 {
					head, top := blk[s], blocks[up][at(up, c)]
					if err := lw.add(&ph, head, top); err != nil {
						return err
					}
					if err := lw.add(&ph, top, head); err != nil {
						return err
					}
				}
			}
		}
	}
	lw.finish()
	return lw.end(p, ph)
}

// railChannels is the channels railRings and railTrees lower a group of
// shape sh on (its smallest node's ranks g = sh.minPPN()), and
// railCrossings where each crosses between nodes. Under shared NICs NCCL's
// search on a node lists the NICs local to the communicator's GPUs there,
// each once, in GPU order (src/graph/search.cc ncclTopoSelectNets and
// ncclTopoPrefNetsChannelFirst), starts channel c at nets[c mod
// netCount], entered through a GPU local to that NIC first
// (ncclTopoSearchRecNet: net->net.localGpu, then ncclTopoGetLocal's GPUs;
// commit 5067397c2676d5aed50042fc39e5c8ee96eb0027), so a communicator's
// channels go round-robin over the distinct NICs its ranks on the node
// reach, each NIC's channels entered through its own ranks in turn. The
// channel count is g rounded up to a multiple of the fewest NICs any block
// reaches: L, the shape's own count (Shape.MinNICs, or min(NICs, g) where
// that is unset: nodeShape), the one the model prices (Hardware.shapeNICs),
// so the two cannot disagree. With C = q·L channels a block of L NICs
// puts B/L on each, and a block of L' > L NICs at most ⌈q·L/L'⌉ ≤ q
// channels, B/L, on its busiest, so no NIC carries more than the model
// prices, where g channels over L ∤ g NICs put ⌈g/L⌉/g of B on one (3
// ranks on NICs 0, 0, 1: 2/3 of B on NIC 0 where the model prices B/2).
// NCCL's own channel count on such a node is a multiple of its NICs (two
// channels per NIC, then duplicated: search.cc ncclTopoCompute), balanced
// alike. The bytes a link carries do not depend on the channel count but
// through the NICs' shares (every channel crosses each NVLink pair once
// with B/C). With one NIC per GPU it is g.
func railChannels(t *topology.Topology, sh Shape) int {
	g := sh.minPPN()
	shared := t.SharedNICs()
	if shared == 0 {
		return g
	}
	L := sh.MinNICs
	if L == 0 {
		L = min(shared, g)
	}
	return (g + L - 1) / L * L
}

// railCrossings is where each of C channels (railChannels) crosses between
// nodes: cross[b][c] is the index in blocks[b] of channel c's crossing
// rank, nil when every GPU has its own NIC (channel c crosses at each
// block's c-th rank, on rail c); under shared NICs channel c of block b
// crosses on the (c mod l)-th of the l NICs its ranks reach, in order of
// first use, through that NIC's ranks in turn.
func railCrossings(t *topology.Topology, blocks [][]int, C int) [][]int32 {
	shared := t.SharedNICs()
	if shared == 0 {
		return nil
	}
	// nics[b] is block b's NICs in order of first use, each the indices
	// of its ranks in the block.
	nics := make([][]int32, 0, shared)
	pos := make([]int32, shared) // NIC → 1 + its place in nics
	cross := make([][]int32, len(blocks))
	for b, blk := range blocks {
		clear(pos)
		nics = nics[:0]
		for j, r := range blk {
			k := t.NIC(r)
			if pos[k] == 0 {
				nics = append(nics, nil)
				pos[k] = int32(len(nics))
			}
			nics[pos[k]-1] = append(nics[pos[k]-1], int32(j))
		}
		l := len(nics)
		cross[b] = make([]int32, C)
		for c := range C {
			rs := nics[c%l]
			cross[b][c] = rs[(c/l)%len(rs)]
		}
	}
	return cross
}

// crossingRank is channel c's crossing rank in block b: cross[b][c]
// (railCrossings), or c with one NIC per GPU (cross nil).
func crossingRank(cross [][]int32) func(b, c int) int {
	return func(b, c int) int {
		if cross == nil {
			return c
		}
		return int(cross[b][c])
	}
}

// railBlocks is the indices of the blocks whose rail-ring transfers the
// restriction keeps some of: every block without one, else those holding
// a kept rank and those before them (whose rail hop reaches it).
func (lw *lowering) railBlocks(blocks [][]int) []int {
	m := len(blocks)
	var bs []int
	for b := range blocks {
		if lw.keep == nil || slices.ContainsFunc(blocks[b], func(r int) bool { return lw.keep[r] }) ||
			slices.ContainsFunc(blocks[(b+1)%m], func(r int) bool { return lw.keep[r] }) {
			bs = append(bs, b)
		}
	}
	return bs
}

// ShapeOf is the communicator shape of a group: ranks, nodes spanned and
// the ranks on the node holding fewest of them (Shape.MinPerNode), and
// under shared NICs the fewest NICs they cross on one node
// (Shape.MinNICs).
func ShapeOf(t *topology.Topology, group []int) Shape {
	return shapeOf(t, len(group), func(i int) int { return group[i] })
}

// ShapeOfRange is ShapeOf of the group of n ranks first, first+stride, …,
// first+(n−1)·stride, without the group: t.All() is (0, 1, t.Ranks()),
// IntraGroups(k)[i] (i·N/k, 1, N/k) and InterGroups(k)[i] (i, N/k, k).
func ShapeOfRange(t *topology.Topology, first, stride, n int) Shape {
	return shapeOf(t, n, func(i int) int { return first + i*stride })
}

// shapeOf is the shape of the n ranks rank(0), …, rank(n−1): their ranks
// counted by node, no more memory than a count per node (and, under
// shared NICs, a bit per NIC of each node).
func shapeOf(t *topology.Topology, n int, rank func(int) int) Shape {
	count := make([]int32, t.Nodes())
	shared := t.SharedNICs()
	words := (shared + 63) / 64
	seen := make([]uint64, t.Nodes()*words) // node nd's NICs at [nd·words, (nd+1)·words)
	nodes := 0
	for i := range n {
		r := rank(i)
		nd := t.Node(r)
		if count[nd] == 0 {
			nodes++
		}
		count[nd]++
		if shared > 0 {
			k := t.NIC(r)
			seen[nd*words+k/64] |= 1 << (k % 64)
		}
	}
	least, leastNICs := 0, 0
	for nd, c := range count {
		if c == 0 {
			continue
		}
		least = minPositive(least, int(c))
		if shared > 0 {
			nics := 0
			for _, w := range seen[nd*words : (nd+1)*words] {
				nics += bits.OnesCount64(w)
			}
			leastNICs = minPositive(leastNICs, nics)
		}
	}
	return nodeShape(n, nodes, least, shared, leastNICs)
}

// blockShape is the shape of a group of n ranks split by node into blocks
// (nodeBlocks) on t.
func blockShape(t *topology.Topology, n int, blocks [][]int) Shape {
	least, leastNICs := 0, 0
	shared := t.SharedNICs()
	var seen []bool
	if shared > 0 {
		seen = make([]bool, shared)
	}
	for _, b := range blocks {
		least = minPositive(least, len(b))
		if shared > 0 {
			clear(seen)
			nics := 0
			for _, r := range b {
				if k := t.NIC(r); !seen[k] {
					seen[k] = true
					nics++
				}
			}
			leastNICs = minPositive(leastNICs, nics)
		}
	}
	return nodeShape(n, len(blocks), least, shared, leastNICs)
}

// minPositive is the lesser of a and b, b when a is 0 (none yet).
func minPositive(a, b int) int {
	if a == 0 || b < a {
		return b
	}
	return a
}

// nodeShape is the shape of n ranks over nodes nodes, least on the
// smallest: MinPerNode is set where least differs from n/nodes, so an even
// group's shape is {n, nodes}. Under shared NICs (shared per node, 0 when
// each GPU has its own) nics is the fewest NICs the group crosses on a
// node, MinNICs where it differs from Hardware.nics's min(shared, least).
func nodeShape(n, nodes, least, shared, nics int) Shape {
	sh := Shape{Ranks: n, Nodes: nodes}
	if nodes > 0 && least != sh.ppn() {
		sh.MinPerNode = least
	}
	if shared > 0 && nics > 0 && nics != min(shared, least) {
		sh.MinNICs = nics
	}
	return sh
}

// timePlan sets p's choice to c, m's for p's spec, and its phases'
// latency and work from it; sh is the shape of p's group (ShapeOf).
func timePlan(m *Model, p *Plan, sh Shape, c Choice) {
	p.Choice, p.Algo, p.Proto = c, c.Algo, c.Proto
	if len(p.Phases) == 0 {
		return
	}
	// The phases run at once (runTimed); those over one link class share
	// its links (the intra-node phases of a two-level pattern cross the
	// same NVLink ports, the inter-node ones the same NICs), so alone the
	// collective takes as long as its busiest class needs for all of its
	// phases' bytes. Every phase's work is its bytes scaled by one factor
	// that makes that the model's bandwidth time: each class carries its
	// real share of the traffic, and no class's work depends on another
	// class's bandwidth but through the model's time.
	need := linkNeed(p)
	busiest := slices.Max(need[:])
	for i := range p.Phases {
		p.Phases[i].Latency, p.Phases[i].dur, p.Phases[i].runs = 0, 0, [topology.NumClasses]classRun{}
	}
	if busiest == 0 {
		p.Phases[0].Latency = c.Time
		return
	}
	p.Phases[0].Latency = c.Latency + slowHops(m, p, sh, c)
	// Each phase's share of the model's bandwidth time bw, in whole
	// picoseconds at its bottleneck's rate (the engine's work for it is
	// exact: sim.StartShapeAt); a class's phases share its links, so each
	// class ends when its phases' times add up, and the busiest class's add
	// up to bw exactly: alone, the collective ends at the model's time to
	// the picosecond, whatever the links' bandwidths.
	bw := c.Time - c.Latency
	// The model prices every group, even or not, by its smallest node's
	// channels and NICs (Shape.minPPN, as NCCL's init.cc keeps the least
	// any rank's graph has), which are the NICs the lowering's channels
	// cross on (railRings: one channel per rank of the smallest node; a
	// node of one rank crosses on its own NIC in the ring in group order;
	// under shared NICs the channels go round-robin over the NICs a node's
	// ranks reach, a multiple of the fewest any node reaches, Shape.MinNICs,
	// so no NIC carries more than B/MinNICs: railChannels), each at the
	// search's 48 of 50 GB/s (Model.netBW). So where the
	// lowering is the chosen algorithm's traffic (a ring), its busiest NIC
	// needs no more than the model's time at the network's nominal speed
	// (8 + 4 H100 ranks, a 1 GiB all-gather: 246 MB through each of 4 NICs,
	// 4.92 ms at 50 GB/s, in the model's 5.13 ms bandwidth term), and no
	// floor of the plan's NIC bytes is needed: only the ring's chunk
	// padding of a buffer of a few bytes per rank could pass it, by
	// picoseconds of zerosim's own rounding, and a calibration's measured
	// efficiency stands. A tree or NVLS-tree over uneven nodes runs NCCL's
	// trees on the same channels (railTrees: S through each node's NICs
	// over two nodes, in the model's time at its bwIntra, twice the NICs'
	// bwInter; 8 + 4 H100, a 1 GiB NVLS-tree all-reduce: 268 MB through
	// each of 4 NICs, 5.37 ms at 50 GB/s, in the model's 5.59 ms). Where
	// the lowering stands in for another algorithm (NVLS's NVLink bytes
	// below; the two-level pattern of a tree over even nodes), its bytes
	// are squeezed into the model's time: a floor of them would price the
	// pattern NCCL did not choose (the ring channels that stood for the
	// 8 + 4 NVLS-tree needed 9.84 ms at 50 GB/s, NCCL's model 5.83 ms, the
	// 4 + 4 group's).
	// Where the model is faster than the lowering's busiest class (NVLS
	// moves fewer NVLink bytes than the ring pattern it is lowered on),
	// only the classes that need more than the model's time are squeezed
	// into it: another class keeps its real bytes at its links' rate, so a
	// slower link of it (cluster.link_overrides) is never crossed faster
	// than it moves them.
	var own [topology.NumClasses + 1]float64 // 0: the common scale bw/busiest
	for k, n := range need {
		if n > 0 && float64(bw) < busiest {
			if f := min(1, float64(bw)/n); f > float64(bw)/busiest {
				own[k] = f
			}
		}
	}
	var sum [topology.NumClasses + 1]units.Duration
	var first [topology.NumClasses + 1]int
	for i := len(p.Phases) - 1; i >= 0; i-- {
		ph := &p.Phases[i]
		k := phaseClass(ph)
		first[k] = i
		if b := ph.Bytes + ph.extra; b > 0 {
			ph.dur = units.Duration(float64(b) * ph.perByte.nominalPS() * float64(bw) / busiest)
			if own[k] > 0 {
				ph.dur = units.Duration(float64(b) * ph.perByte.nominalPS() * own[k])
			}
			sum[k] += ph.dur
		}
	}
	for k := range sum {
		if sum[k] > 0 && (need[k] == busiest || sum[k] > bw) {
			p.Phases[first[k]].dur += bw - sum[k]
			sum[k] = bw
		}
	}
	// Where the model's time is longer than a link class needs for the
	// collective's bytes on the wire (its protocol's flags and the share
	// of each link NCCL reaches: Model.wireFraction), that class's
	// transfers are paced: each phase's move their wire bytes over its
	// group's time and no faster (sim.StartShapePaced), so beside other
	// traffic they hold only the bandwidth those bytes need, whichever link
	// is the bottleneck. (Filled for the model's time instead, a ring's
	// NVLink hops took all of each NVLink port once a faster NIC left
	// NVLink the bottleneck, though the model's time and the bytes had not
	// changed.) A class whose wire bytes need all of the time keeps its
	// busiest link full.
	var wire [topology.NumClasses + 1][topology.NumClasses]float64
	for i := range p.Phases {
		ph := &p.Phases[i]
		if ph.dur == 0 {
			continue
		}
		for k, l := range ph.perByte.nominal {
			if l.bw > 0 {
				r := &ph.runs[k]
				r.wire = units.Bytes(math.Ceil(float64(ph.Bytes) / m.wireFraction(topology.Class(k), sh, c.Proto)))
				wire[phaseClass(ph)][k] += float64(float64(r.wire+ph.extra) * l.ps())
			}
		}
	}
	for i := range p.Phases {
		ph := &p.Phases[i]
		g := phaseClass(ph)
		for k := range ph.runs {
			// A part per billion of slack keeps the rounded paces of a
			// group's phases within its links.
			if r := &ph.runs[k]; r.wire > 0 && wire[g][k]*(1+1e-9) < float64(sum[g]) {
				r.pace = sum[g]
			}
		}
	}
}

// slowHops is the latency p's paths add beyond their classes' (a
// cluster.link_overrides latency) under choice c: the model's latency
// with each class's hops at its slowest path's, less its latency. NCCL's
// tuner charges each step of a ring or tree its hop's latency
// (src/graph/tuning.cc ncclTopoTuneModel: nsteps·intraLat +
// nInterSteps·interLat, at 5067397c2676d5aed50042fc39e5c8ee96eb0027;
// comm.latency), and a step waits for its slowest hop, so zerosim counts
// the slowest path's latency for every hop of its class.
func slowHops(m *Model, p *Plan, sh Shape, c Choice) units.Duration {
	var lag [topology.NumClasses]units.Duration
	for i := range p.Phases {
		for k, l := range p.Phases[i].perByte.lag {
			lag[k] = max(lag[k], l)
		}
	}
	if lag == ([topology.NumClasses]units.Duration{}) {
		return 0
	}
	slow := *m
	slow.HW.IntraLatency += lag[topology.Intra]
	slow.HW.InterLatency += lag[topology.Inter]
	base, ok := m.Cost(p.Spec.Op, sh, c.Algo, c.Proto, p.Spec.Bytes)
	late, ok2 := slow.Cost(p.Spec.Op, sh, c.Algo, c.Proto, p.Spec.Bytes)
	if !ok || !ok2 {
		return 0
	}
	return max(late.Latency-base.Latency, 0)
}

// linkNeed is the time in picoseconds each link class (the last: phases
// that cross several) needs at full speed for p's phases' bytes, alone on
// its links.
func linkNeed(p *Plan) (need [topology.NumClasses + 1]float64) {
	// A rail phase's channel 0 carries its extra bytes on its own links.
	for i := range p.Phases {
		ph := &p.Phases[i]
		need[phaseClass(ph)] += float64(float64(ph.Bytes+ph.extra) * ph.perByte.nominalPS())
	}
	return need
}

// phaseClass is the link class all of ph's transfers cross, or
// topology.NumClasses when they cross several.
func phaseClass(ph *Phase) int {
	class := -1
	for c, n := range ph.count {
		if n == 0 {
			continue
		}
		if class >= 0 {
			return int(topology.NumClasses)
		}
		class = c
	}
	return max(class, 0)
}
