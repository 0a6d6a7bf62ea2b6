package collectives

import (
	"fmt"
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
		Link: make([]units.Bytes, len(t.Links())),
	}
}

func (tr *Traffic) clone() Traffic {
	c := *tr
	c.Sent = append([][topology.NumClasses]units.Bytes(nil), tr.Sent...)
	c.Recv = append([][topology.NumClasses]units.Bytes(nil), tr.Recv...)
	c.Link = append([]units.Bytes(nil), tr.Link...)
	return c
}

// planBytes is the plan's wire bytes per class, or ErrOverflow.
func planBytes(p *Plan) ([topology.NumClasses]units.Bytes, error) {
	var tot [topology.NumClasses]int64
	for i := range p.Phases {
		ph := &p.Phases[i]
		var n [topology.NumClasses]int64
		for _, path := range ph.paths {
			n[path.Class]++
		}
		for c := range tot {
			b, err := units.Mul(n[c], int64(ph.Bytes))
			if err == nil {
				tot[c], err = units.Add(tot[c], b)
			}
			if err != nil {
				return [topology.NumClasses]units.Bytes{}, err
			}
		}
	}
	var out [topology.NumClasses]units.Bytes
	for c := range tot {
		out[c] = units.Bytes(tot[c])
	}
	return out, nil
}

// add accumulates plan p's bytes, or nothing on overflow. Every per-rank
// and per-link counter is at most its class total, so checking the class
// totals is enough.
func (tr *Traffic) add(p *Plan) error {
	pb, err := planBytes(p)
	if err != nil {
		return fmt.Errorf("collectives: traffic: %w", err)
	}
	for c := range pb {
		if _, err := units.Add(int64(tr.Total[c]), int64(pb[c])); err != nil {
			return fmt.Errorf("collectives: traffic: %w", err)
		}
	}
	for c := range pb {
		tr.Total[c] += pb[c]
	}
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j, x := range ph.Transfers {
			path := &ph.paths[j]
			tr.Sent[x.Src][path.Class] += ph.Bytes
			tr.Recv[x.Dst][path.Class] += ph.Bytes
			tr.Link[path.Links[0]] += ph.Bytes
			tr.Link[path.Links[1]] += ph.Bytes
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
	tr := newTraffic(t)
	if err := tr.add(p); err != nil {
		return Traffic{}, err
	}
	return tr, nil
}

// Fabric runs collectives on a topology's links as flows of a sim engine.
// Each link is one sim.Resource; each phase of a collective is one coupled
// flow group, so collectives that share links share their bandwidth max–min
// fairly. It is not safe for concurrent use (like the engine).
type Fabric struct {
	eng     *sim.Engine
	topo    *topology.Topology
	res     []*sim.Resource
	traffic Traffic
	// cache holds lowered plans and their flow members by spec; a replay
	// starts the same few collectives many times. Looked up, never iterated.
	cache  map[planKey][]*lowered
	cached int
	// noTraffic: the caller accounts bytes itself (FabricOptions).
	noTraffic bool
}

// FabricOptions tune a Fabric.
type FabricOptions struct {
	// NoTraffic turns off the fabric's own wire-byte accounting (Traffic
	// stays empty), which costs O(transfers) per collective started; for
	// callers that account bytes themselves (see Prepared.Wire and
	// Prepared.Sent).
	NoTraffic bool
}

// maxCached bounds the plan cache (it is emptied when full).
const maxCached = 256

type planKey struct {
	op    Op
	algo  Algo
	bytes units.Bytes
	n     int
	hash  uint64
}

type lowered struct {
	plan   *Plan
	shapes []*sim.Shape // per phase: the flow group's aggregated links
}

func groupHash(g []int) uint64 {
	h := uint64(14695981039346656037)
	for _, r := range g {
		h ^= uint64(r)
		h *= 1099511628211
	}
	return h
}

// NewFabric makes one sim.Resource per topology link on eng.
func NewFabric(eng *sim.Engine, t *topology.Topology) *Fabric {
	return NewFabricOptions(eng, t, FabricOptions{})
}

// NewFabricOptions is NewFabric with options.
func NewFabricOptions(eng *sim.Engine, t *topology.Topology, opt FabricOptions) *Fabric {
	f := &Fabric{eng: eng, topo: t, cache: map[planKey][]*lowered{}, noTraffic: opt.NoTraffic}
	if !opt.NoTraffic {
		f.traffic = newTraffic(t)
	}
	for _, l := range t.Links() {
		f.res = append(f.res, sim.NewResource(l.Name, int64(l.Bandwidth)))
	}
	return f
}

// Engine is the fabric's engine.
func (f *Fabric) Engine() *sim.Engine { return f.eng }

// Topology is the fabric's topology.
func (f *Fabric) Topology() *topology.Topology { return f.topo }

// Resource is the sim resource of link id (to start other flows on it).
func (f *Fabric) Resource(id topology.LinkID) *sim.Resource { return f.res[id] }

// Traffic is a copy of the wire bytes of every collective started so far
// (counted when it starts).
func (f *Fabric) Traffic() Traffic { return f.traffic.clone() }

// Handle is a running collective.
type Handle struct {
	Plan  *Plan
	start sim.Time
	end   sim.Time
	done  bool
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
// Alone on the links it takes exactly ClosedForm. A collective with no
// phases (one rank, zero bytes) finishes at Now, through an event.
func (f *Fabric) Start(spec Spec, onDone func()) (*Handle, error) {
	lw, err := f.lower(spec)
	if err != nil {
		return nil, err
	}
	if !f.noTraffic {
		if err := f.traffic.add(lw.plan); err != nil {
			return nil, err
		}
	}
	return f.run(lw.plan, lw.shapes, onDone), nil
}

// run starts plan p's phases with one shape per phase.
func (f *Fabric) run(p *Plan, shapes []*sim.Shape, onDone func()) *Handle {
	h := &Handle{Plan: p, start: f.eng.Now()}
	var run func(i int)
	run = func(i int) {
		if i == len(p.Phases) {
			h.done, h.end = true, f.eng.Now()
			if onDone != nil {
				onDone()
			}
			return
		}
		ph := &p.Phases[i]
		flow := func() { f.eng.StartShape(int64(ph.Bytes), shapes[i], func() { run(i + 1) }) }
		if ph.Latency > 0 {
			f.eng.After(sim.Time(ph.Latency), flow)
		} else {
			flow()
		}
	}
	if len(p.Phases) == 0 {
		f.eng.After(0, func() { run(0) })
	} else {
		run(0)
	}
	return h
}

// lower returns spec's plan and flow members, from the cache when the same
// spec (op, algorithm, size and group in the same order) was started before.
// Cached plans are shared between handles: treat Handle.Plan as read-only.
func (f *Fabric) lower(spec Spec) (*lowered, error) {
	key := planKey{spec.Op, spec.Algo, spec.Bytes, len(spec.Group), groupHash(spec.Group)}
	for _, lw := range f.cache[key] {
		if slices.Equal(lw.plan.Spec.Group, spec.Group) {
			return lw, nil
		}
	}
	p, err := Lower(f.topo, spec)
	if err != nil {
		return nil, err
	}
	p.Spec.Group = slices.Clone(spec.Group) // the caller may reuse its slice
	lw := &lowered{plan: p, shapes: f.shapes(p, nil)}
	if f.cached == maxCached {
		clear(f.cache)
		f.cached = 0
	}
	f.cache[key] = append(f.cache[key], lw)
	f.cached++
	return lw, nil
}

// shapes aggregates each phase's transfers into a sim.Shape; with keep
// non-nil, only the transfers whose source or destination is kept.
func (f *Fabric) shapes(p *Plan, keep []bool) []*sim.Shape {
	out := make([]*sim.Shape, len(p.Phases))
	var flat []*sim.Resource
	var members [][]*sim.Resource
	for i := range p.Phases {
		ph := &p.Phases[i]
		flat, members = flat[:0], members[:0]
		for j, path := range ph.paths {
			if keep != nil {
				if x := ph.Transfers[j]; !keep[x.Src] && !keep[x.Dst] {
					continue
				}
			}
			flat = append(flat, f.res[path.Links[0]], f.res[path.Links[1]])
		}
		for j := 0; j < len(flat); j += 2 {
			members = append(members, flat[j:j+2:j+2])
		}
		out[i] = f.eng.NewShape(members)
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
	shapes []*sim.Shape
	wire   [topology.NumClasses]units.Bytes
	sent   []RankBytes
}

// Plan is the full plan (every transfer, restricted or not); read-only.
func (p *Prepared) Plan() *Plan { return p.plan }

// Wire is the full plan's wire bytes per link class (every transfer).
func (p *Prepared) Wire() [topology.NumClasses]units.Bytes { return p.wire }

// Sent lists the bytes each source rank sends per class, in order of first
// appearance in the plan: every source rank, or with a restriction only the
// kept ones. The slice is shared: do not modify it.
func (p *Prepared) Sent() []RankBytes { return p.sent }

// Prepare lowers spec once. keep, if not nil, restricts the flow groups to
// a subset of ranks (keep[r] for rank r, len(keep) = Ranks): each phase's
// coupled group then holds only the transfers whose source or destination
// is kept, so that a caller simulating a symmetric slice of the cluster
// (every port of a kept rank sees exactly its flows) pays for that slice
// only. Latencies, Plan, Wire are the full collective's. It costs
// O(transfers) once; StartPrepared is then O(kept transfers).
func (f *Fabric) Prepare(spec Spec, keep []bool) (*Prepared, error) {
	if keep != nil && len(keep) != f.topo.Ranks() {
		return nil, fmt.Errorf("collectives: prepare: keep has %d entries for %d ranks", len(keep), f.topo.Ranks())
	}
	p, err := Lower(f.topo, spec)
	if err != nil {
		return nil, err
	}
	p.Spec.Group = slices.Clone(spec.Group)
	pr := &Prepared{plan: p, shapes: f.shapes(p, keep)}
	if pr.wire, err = planBytes(p); err != nil {
		return nil, fmt.Errorf("collectives: traffic: %w", err)
	}
	// Per-rank sums are at most the class totals, which did not overflow.
	idx := map[int]int{} // rank → index in sent; looked up, never iterated
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j, x := range ph.Transfers {
			if keep != nil && !keep[x.Src] {
				continue
			}
			k, ok := idx[x.Src]
			if !ok {
				k = len(pr.sent)
				idx[x.Src] = k
				pr.sent = append(pr.sent, RankBytes{Rank: x.Src})
			}
			pr.sent[k].Bytes[ph.paths[j].Class] += ph.Bytes
		}
	}
	return pr, nil
}

// StartPrepared starts p like Start (same phases, times and callback).
func (f *Fabric) StartPrepared(p *Prepared, onDone func()) (*Handle, error) {
	if !f.noTraffic {
		if err := f.traffic.add(p.plan); err != nil {
			return nil, err
		}
	}
	return f.run(p.plan, p.shapes, onDone), nil
}
