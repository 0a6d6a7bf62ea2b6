package zero

import (
	"cmp"
	"slices"

	"github.com/zerosim/zerosim/units"
)

// RankStats splits one rank's step into compute (the compute stream's
// kernels, Task.IsCompute), exposed communication (a collective of the
// rank, or a ZeRO++ quantize kernel on a communication stream, runs and
// its compute stream is idle), waiting for
// peers (the rank reached a collective that its group has not all reached)
// and other idle time. The four add up to the step time.
type RankStats struct {
	Rank    int
	Compute units.Duration
	// Alone is the rank's compute tasks summed at its GPU's speed
	// (cluster.gpu_overrides; a context-parallel ring's exchange inside
	// them at its own links' pace) with nothing beside them: Compute
	// before communication.compute_interference slowed it. Result.Compute
	// is the same at speed 1 on nominal links.
	Alone       units.Duration
	ExposedComm units.Duration
	Wait        units.Duration
	Idle        units.Duration
	End         units.Duration
	// AllGather is the time during which any parameter all-gather of the
	// rank runs, hidden or not.
	AllGather units.Duration
	// ExposedAllGather is the part of ExposedComm during which a parameter
	// all-gather runs (what ZeRO-3 prefetch hides).
	ExposedAllGather units.Duration
}

// Busiest is the rank with the most compute (RankStats.Compute; the lowest
// such rank), the zero RankStats when r has no ranks.
func (r *Result) Busiest() RankStats {
	var b RankStats
	for i, st := range r.Ranks {
		if i == 0 || st.Compute > b.Compute {
			b = st
		}
	}
	return b
}

type interval struct{ lo, hi units.Duration }

// union merges intervals in place and returns them sorted and disjoint.
func union(iv []interval) []interval {
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.lo, b.lo) })
	out := iv[:0]
	for _, x := range iv {
		if x.hi <= x.lo {
			continue
		}
		if n := len(out); n > 0 && x.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return out
}

func length(iv []interval) units.Duration {
	var t units.Duration
	for _, x := range iv {
		t += x.hi - x.lo
	}
	return t
}

// minus returns the parts of a (disjoint, sorted) not covered by b (disjoint, sorted).
func minus(a, b []interval) []interval {
	var out []interval
	j := 0
	for _, x := range a {
		lo := x.lo
		for j < len(b) && b[j].hi <= lo {
			j++
		}
		for k := j; k < len(b) && b[k].lo < x.hi; k++ {
			if b[k].lo > lo {
				out = append(out, interval{lo, b[k].lo})
			}
			lo = max(lo, b[k].hi)
		}
		if lo < x.hi {
			out = append(out, interval{lo, x.hi})
		}
	}
	return out
}

// intervals gathers rank r's GPU intervals, each merged (union): its
// compute tasks, its collectives, the waits at its collectives (arrival to
// start) and its parameter all-gathers; alone is its compute summed at its
// GPU's speed. Host-side (offload) tasks are not the GPU's and are left out.
// The slices reuse the executor's scratch; the caller hands them back with
// e.keep.
func (e *executor) intervals(r int) (comp, comm, wait, ag []interval, alone units.Duration) {
	comp, comm, wait, ag = e.comp[:0], e.comm[:0], e.wait[:0], e.gathr[:0]
	for t, task := range e.sc.Tasks {
		i := e.at(r, int32(t))
		if task.Kind == AllGather {
			ag = append(ag, interval{e.start[i], e.end[i]})
		}
		// Host-side (offload) time is neither (not the GPU's).
		if task.IsCompute() {
			comp = append(comp, interval{e.start[i], e.end[i]})
			alone += e.taskDur(r, &e.sc.Tasks[t])
		} else if task.isCommWork() {
			comm = append(comm, interval{e.start[i], e.end[i]})
		}
		if task.Kind.IsComm() {
			wait = append(wait, interval{e.arrive[i], e.start[i]})
		}
	}
	return union(comp), union(comm), union(wait), union(ag), alone
}

// keep hands the scratch slices of intervals back to the executor.
func (e *executor) keep(comp, comm, wait, ag []interval) {
	e.comp, e.comm, e.wait, e.gathr = comp, comm, wait, ag
}

// waitOnly is the time a rank waits for its peers: the union of its waits at
// collectives (wait) less the time its compute stream runs (comp) and less
// the time one of its collectives runs (comm), comp and comm merged. The
// table's waiting column (RankStats.Wait) and the straggler's share of it
// (Straggler.Caused) both measure this.
func waitOnly(wait, comp, comm []interval) []interval {
	return minus(minus(union(wait), comp), comm)
}

// rankStats computes RankStats for rank r over a step of length step.
func (e *executor) rankStats(r int, step units.Duration) RankStats {
	comp, comm, wait, ag, alone := e.intervals(r)
	defer e.keep(comp, comm, wait, ag)
	exposed := minus(comm, comp)
	st := RankStats{Rank: r, Compute: length(comp), Alone: alone, ExposedComm: length(exposed), Wait: length(waitOnly(wait, comp, comm)),
		AllGather: length(ag), ExposedAllGather: length(minus(ag, comp))}
	for t := range e.sc.Tasks {
		st.End = max(st.End, e.end[e.at(r, int32(t))])
	}
	st.Idle = step - st.Compute - st.ExposedComm - st.Wait
	return st
}

// PathStep is one task on the critical path.
type PathStep struct {
	Rank       int
	Task       int32
	Start, End units.Duration
	// OnPath is the part of [Start, End) that this step accounts for: up
	// to the start of the next step on the path, which a step released at
	// its start (an AfterStart link, such as a prefetched all-gather
	// issued when a forward starts) reaches before this one ends. The
	// path's OnPath add up to the step time.
	OnPath units.Duration
}

// criticalPath walks back from the task that ends the step, each time to the
// dependency (same-rank dependency, stream predecessor, or the last member to
// reach a collective) whose time released the task.
func (e *executor) criticalPath() []PathStep {
	nt := len(e.sc.Tasks)
	// The task that ends last, the first in rank order, then task order,
	// among equals. Read row by row (see at): a later task replaces the
	// best on a later end only, or an equal one on a lower rank (for one
	// rank its earliest task comes first). In the symmetric run the other
	// ranks repeat these.
	bestR, bestT := 0, int32(0)
	best := e.end[e.at(0, 0)]
	for t := range int32(nt) {
		row := e.end[e.at(0, t) : e.at(0, t)+e.reps]
		for r, end := range row {
			if end > best || (end == best && r < bestR) {
				best, bestR, bestT = end, r, t
			}
		}
	}
	var path []PathStep
	var pos []int32 // each task's position in its stream's order
	r, t := bestR, bestT
	for guard := 0; guard < e.sc.N*nt+1; guard++ {
		i := e.at(r, t)
		path = append(path, PathStep{Rank: r, Task: t, Start: e.start[i], End: e.end[i]})
		task := &e.sc.Tasks[t]
		// A collective starts when its last member arrives (follow that
		// member) or, queued on its communicator, when the one before it
		// there ends (follow that one).
		if task.Kind.IsComm() && e.arrive[i] < e.start[i] {
			// The predecessor first: a queued collective's members all
			// arrived before it started, and scanning them for the last
			// took 80 % of a 16,384-rank symmetric replay.
			if p := e.commPredecessor(r, t); p >= 0 {
				t = p
				continue
			}
			_, members := e.members(task.Group, r)
			for _, m := range members {
				if e.arrive[e.at(m, t)] == e.start[i] {
					r = m
					break
				}
			}
			i = e.at(r, t)
		}
		if pos == nil {
			pos = streamPositions(e.sc)
		}
		p := e.released(r, t, pos)
		if p < 0 {
			break
		}
		t = p
	}
	slices.Reverse(path)
	for i := range path {
		hi := path[i].End
		if i+1 < len(path) {
			hi = min(hi, path[i+1].Start)
		}
		path[i].OnPath = max(hi-path[i].Start, 0)
	}
	return path
}

// released is the task of rank r whose end (or, for an AfterStart link,
// start) released rank r's task t at its arrival: a dependency of t, else
// the nearest stream predecessor that ended then; −1 when t arrived at the
// step's start or nothing of r released it. pos is streamPositions.
func (e *executor) released(r int, t int32, pos []int32) int32 {
	task := &e.sc.Tasks[t]
	at := e.arrive[e.at(r, t)]
	if at == 0 {
		return -1
	}
	for _, d := range task.After {
		if e.end[e.at(r, d)] == at {
			return d
		}
	}
	for _, d := range task.AfterStart {
		if e.start[e.at(r, d)] == at {
			return d
		}
	}
	// The stream predecessor released it (the nearest one before it in
	// issue order that ended then).
	order := e.sc.Order[task.Stream]
	for p := pos[t] - 1; p >= 0; p-- {
		if e.end[e.at(r, order[p])] == at {
			return order[p]
		}
	}
	return -1
}

// commPredecessor is the collective of rank r that ended when collective t
// started on their communicator, which t waited for: the one launched
// there just before it (executor.launchedAfter), or −1 when t did not wait
// for one.
func (e *executor) commPredecessor(r int, t int32) int32 {
	task := &e.sc.Tasks[t]
	p := e.launchedAfter[t][e.slot[task.Group][e.instance(task.Group, r)]]
	if p >= 0 && e.end[e.at(r, p)] == e.start[e.at(r, t)] {
		return p
	}
	return -1
}

// streamPositions returns each task's index in its stream's issue order
// (-1 for a task in none), so walking back along a stream does not search
// the order for the task first (that search made the critical path
// quadratic in the tasks).
func streamPositions(sc *Schedule) []int32 {
	pos := make([]int32, len(sc.Tasks))
	for i := range pos {
		pos[i] = -1
	}
	for _, order := range sc.Order {
		for k, t := range order {
			pos[t] = int32(k)
		}
	}
	return pos
}

// Notable returns the ranks a view of a few ranks should show beside the
// first ones, in this order, without repeats: the straggler (Straggler,
// the rank the others waited for the most), then the rank with the most
// waiting and exposed communication (RankStats.Wait + ExposedComm; the
// lowest such rank), unless every rank has as much: a view of the first
// ranks alone leaves out the cause. Nil when the ranks do not differ.
func (r *Result) Notable() []int {
	var out []int
	if r.Straggler != nil {
		out = append(out, r.Straggler.Rank)
	}
	best, lo := -1, units.Duration(-1)
	var most units.Duration
	for _, st := range r.Ranks {
		v := st.Wait + st.ExposedComm
		if best < 0 || v > most {
			best, most = st.Rank, v
		}
		if lo < 0 || v < lo {
			lo = v
		}
	}
	if best >= 0 && most > lo && !slices.Contains(out, best) {
		out = append(out, best)
	}
	return out
}

// Straggler names the rank the others wait for because it is late by its
// own compute: the rank at the root of the waits (see rootOf) whose
// compute at its GPU's speed, nothing beside it (RankStats.Alone), is above
// the other ranks' median, the one that cost the others the most waiting.
// A rank late only through its collectives (a degraded link) or through
// waiting for another rank is none: nil then, however long the waits. A
// context-parallel ring's exchange runs inside the blocks' compute
// (RankStats.Alone), so a cp group behind a degraded link is late by its
// own compute: its rank is named, and run's step line says why.
type Straggler struct {
	Rank int
	// Caused is the time the other ranks waited for this rank at
	// collectives, summed over them: each rank's waiting as the time
	// table counts it (RankStats.Wait: the union of its waits, less its
	// compute and collectives), the part at collectives whose last
	// arriver this rank made late (rootOf).
	Caused units.Duration
	// Compute is the straggler's compute at its GPU's speed with nothing
	// beside it (RankStats.Alone), MedianCompute the (lower) median of the
	// other ranks' (so that with two ranks it is the other rank's, not
	// the straggler's own): the figures it is chosen by.
	Compute, MedianCompute units.Duration
}

// lastArrivers is, per collective task and touched instance slot, the
// member that arrived last (the first in member order among equals): the
// one its group waited for. Only simulated ranks wait or are waited for
// (members of simMem).
func (e *executor) lastArrivers() [][]int32 {
	last := make([][]int32, len(e.sc.Tasks))
	for t, task := range e.sc.Tasks {
		if !task.Kind.IsComm() {
			continue
		}
		last[t] = make([]int32, len(e.touched[task.Group]))
		for k, g := range e.touched[task.Group] {
			members := e.simMem[task.Group][g]
			l := members[0]
			for _, m := range members {
				if e.arrive[e.at(m, int32(t))] > e.arrive[e.at(l, int32(t))] {
					l = m
				}
			}
			last[t][k] = int32(l)
		}
	}
	return last
}

// waitChain follows the lateness of collectives back along the ranks'
// release chains (criticalPath's links): rank r's task x arrived when the
// task released reached its end, back to the first collective at which r
// waited for another member. Memoised per (rank, task): every chain
// through a task ends at the same collective.
type waitChain struct {
	e    *executor
	last [][]int32
	pos  []int32
	// first[at(r, x)]: the first collective at or before x on r's chain at
	// which r waited for another member, −1 for none, −2 not yet known.
	first []int32
	stack []int
}

func (e *executor) newWaitChain(last [][]int32) *waitChain {
	w := &waitChain{e: e, last: last, pos: streamPositions(e.sc), first: make([]int32, len(e.arrive))}
	for i := range w.first {
		w.first[i] = -2
	}
	return w
}

// lastOf is the last arriver at rank r's instance of collective t.
func (w *waitChain) lastOf(r int, t int32) int {
	g := w.e.sc.Tasks[t].Group
	return int(w.last[t][w.e.slot[g][w.e.instance(g, r)]])
}

// firstWait is the first collective at or before task x (−1: none) on
// rank r's release chain at which r waited for another member, who
// arrived then. A collective r waited at for its communicator's previous
// one passes the chain on to that one; one that started on r's own
// arrival, or a compute task, to the task that released it.
func (w *waitChain) firstWait(r int, x int32) int32 {
	e := w.e
	w.stack = w.stack[:0]
	res := int32(-1)
	for x >= 0 {
		i := e.at(r, x)
		if f := w.first[i]; f != -2 {
			res = f
			break
		}
		w.stack = append(w.stack, i)
		task := &e.sc.Tasks[x]
		if task.Kind.IsComm() && !task.Kind.IsHost() && e.arrive[i] < e.start[i] {
			if m := w.lastOf(r, x); m != r && e.arrive[e.at(m, x)] == e.start[i] {
				res = x
				break
			}
			x = e.commPredecessor(r, x)
			continue
		}
		x = e.released(r, x, w.pos)
	}
	for _, i := range w.stack {
		w.first[i] = res
	}
	return res
}

// rootOf is the rank whose own time made rank l, the last arriver at its
// instance of collective t, late by lead (its arrival less the earliest
// member's): l's chain back to the collectives at which l waited, nearest
// first; once the waits for one member m cover the lead (had l not waited
// for m it would not have been late), the lateness is m's at the earliest
// of them, c, followed the same way; a wait for another member first, or
// no such waits, leaves it l's own. (A rank a slow one holds up at a
// MoE layer's dispatch and at its combine waits twice for it before the
// next collective of its data-parallel group.)
func (w *waitChain) rootOf(l int, t int32, lead units.Duration) int {
	e := w.e
	for {
		x := e.released(l, t, w.pos)
		m := -1
		var waited units.Duration
		for {
			c := w.firstWait(l, x)
			if c < 0 {
				return l
			}
			i := e.at(l, c)
			if lc := w.lastOf(l, c); m >= 0 && lc != m {
				return l
			} else {
				m = lc
			}
			waited += e.start[i] - e.arrive[i]
			if waited >= lead {
				t = c
				break
			}
			x = e.released(l, c, w.pos)
		}
		l = m
	}
}

func (e *executor) straggler(stats []RankStats) *Straggler {
	// Only a rank slower than the others by its own compute is a
	// straggler: the others' (lower) median of RankStats.Alone, from the
	// sorted values less one of its own.
	alone := make([]units.Duration, len(stats))
	for i, s := range stats {
		alone[i] = s.Alone
	}
	slices.Sort(alone)
	othersMedian := func(own units.Duration) units.Duration {
		k := (len(alone) - 2) / 2
		if p, _ := slices.BinarySearch(alone, own); p <= k {
			return alone[k+1]
		}
		return alone[k]
	}
	slower := func(r int) bool { return len(alone) > 1 && stats[r].Alone > othersMedian(stats[r].Alone) }
	// No rank computes longer than the others' median (every GPU at the
	// same speed): none can be a straggler, and the causes of the waits,
	// which walk every rank's intervals, are not needed (qa21 LOW 11: on
	// Qwen3-235B over 576 GB200s they were a quarter of plan's time).
	some := false
	for r := range stats {
		some = some || slower(r)
	}
	if !some {
		return nil
	}
	last := e.lastArrivers()
	// The rank at the root of each waited-at instance's lateness (rootOf),
	// found once per instance.
	var chain *waitChain
	root := make([][]int32, len(e.sc.Tasks))
	rootAt := func(t int, k int32) int32 {
		if root[t] == nil {
			root[t] = make([]int32, len(last[t]))
			for i := range root[t] {
				root[t][i] = -1
			}
		}
		if root[t][k] < 0 {
			if chain == nil {
				chain = e.newWaitChain(last)
			}
			task := &e.sc.Tasks[t]
			l := int(last[t][k])
			lead := units.Duration(0)
			for _, m := range e.simMem[task.Group][e.touched[task.Group][k]] {
				lead = max(lead, e.arrive[e.at(l, int32(t))]-e.arrive[e.at(m, int32(t))])
			}
			root[t][k] = int32(chain.rootOf(l, int32(t), lead))
		}
		return root[t][k]
	}
	// Each rank's waiting (the table's, see waitOnly) split by the rank at
	// the root of what it waited for: a stretch in which the rank waits at
	// two collectives, or waits while it computes or another collective
	// of it runs, counts once, as in the table, so a rank's total is at
	// most the waiting column's sum over the other ranks.
	caused := make([]units.Duration, e.reps)
	byRoot := map[int32][]interval{}
	for r := 0; r < e.reps; r++ {
		if stats[r].Wait == 0 {
			continue
		}
		clear(byRoot)
		for t, task := range e.sc.Tasks {
			if !task.Kind.IsComm() || task.Kind.IsHost() {
				continue
			}
			i := e.at(r, int32(t))
			if e.arrive[i] < e.start[i] {
				l := rootAt(t, e.slot[task.Group][e.instance(task.Group, r)])
				byRoot[l] = append(byRoot[l], interval{e.arrive[i], e.start[i]})
			}
		}
		comp, comm, wait, ag, _ := e.intervals(r)
		for l, iv := range byRoot {
			if int(l) != r {
				caused[l] += length(waitOnly(iv, comp, comm))
			}
		}
		e.keep(comp, comm, wait, ag)
	}
	best := -1
	for r := range caused {
		if caused[r] > 0 && (best < 0 || caused[r] > caused[best]) && slower(r) {
			best = r
		}
	}
	if best < 0 {
		return nil
	}
	// Reported with the figures it was chosen by.
	return &Straggler{Rank: best, Caused: caused[best], Compute: stats[best].Alone, MedianCompute: othersMedian(stats[best].Alone)}
}

// Interval is a stretch [Lo, Hi) of simulated time.
type Interval struct{ Lo, Hi units.Duration }

// Exposure splits one rank's timeline (its spans from Result.Spans) into the
// intervals of exposed communication — a collective of the rank, or a
// ZeRO++ quantize kernel on a communication stream (isCommWork), runs
// while its compute stream is idle — and of waiting for peers at a
// collective (reached, not started, nothing of the rank running), both
// sorted and disjoint: the same split RankStats measures. Offload's host
// tasks are neither.
func Exposure(sc *Schedule, spans []Span) (exposed, waiting []Interval) {
	var comp, comm, wait []interval
	for _, sp := range spans {
		t := &sc.Tasks[sp.Task]
		if t.IsCompute() {
			comp = append(comp, interval{sp.Start, sp.End})
		} else if t.isCommWork() {
			comm = append(comm, interval{sp.Start, sp.End})
		}
		if t.Kind.IsComm() {
			wait = append(wait, interval{sp.Arrive, sp.Start})
		}
	}
	comp, comm = union(comp), union(comm)
	conv := func(iv []interval) []Interval {
		out := make([]Interval, len(iv))
		for i, x := range iv {
			out[i] = Interval{x.lo, x.hi}
		}
		return out
	}
	return conv(minus(comm, comp)), conv(waitOnly(wait, comp, comm))
}

// PeerWait splits a rank's waiting for peers (Exposure's waiting, the
// table's RankStats.Wait) among its collectives: an instant of it goes to
// the collective, among those the rank has reached and not started
// (Arrive ≤ t < Start), that starts first (the first in spans among
// equals), the one whose late peers hold the rank there. It returns each
// span's share (zero for a task that is not a collective); the shares add
// up to the length of Exposure's waiting. A collective's Start − Arrive
// is more: it also holds the time the rank ran other work meanwhile, and
// the time it queued behind the collectives launched before it on its
// communicator while they ran.
func PeerWait(sc *Schedule, spans []Span) []units.Duration {
	share := make([]units.Duration, len(spans))
	_, waiting := Exposure(sc, spans)
	if len(waiting) == 0 {
		return share
	}
	// The collectives' [Arrive, Start) by arrival; a sweep over the
	// boundaries keeps those open, the first to start in front.
	var open []int // spans reached and not started: a heap by (Start, index)
	less := func(a, b int) bool {
		if spans[a].Start != spans[b].Start {
			return spans[a].Start < spans[b].Start
		}
		return a < b
	}
	push := func(i int) {
		open = append(open, i)
		for c := len(open) - 1; c > 0; {
			p := (c - 1) / 2
			if !less(open[c], open[p]) {
				break
			}
			open[c], open[p] = open[p], open[c]
			c = p
		}
	}
	pop := func() {
		n := len(open) - 1
		open[0] = open[n]
		open = open[:n]
		for p := 0; ; {
			c := 2*p + 1
			if c >= n {
				break
			}
			if c+1 < n && less(open[c+1], open[c]) {
				c++
			}
			if !less(open[c], open[p]) {
				break
			}
			open[p], open[c] = open[c], open[p]
			p = c
		}
	}
	var byArrive []int
	for i, sp := range spans {
		if sc.Tasks[sp.Task].Kind.IsComm() && sp.Arrive < sp.Start {
			byArrive = append(byArrive, i)
		}
	}
	slices.SortStableFunc(byArrive, func(a, b int) int { return cmp.Compare(spans[a].Arrive, spans[b].Arrive) })
	next := 0
	for _, iv := range waiting {
		for lo := iv.Lo; lo < iv.Hi; {
			for next < len(byArrive) && spans[byArrive[next]].Arrive <= lo {
				push(byArrive[next])
				next++
			}
			for len(open) > 0 && spans[open[0]].Start <= lo {
				pop()
			}
			if len(open) == 0 { // never: a waiting instant is inside some [Arrive, Start)
				break
			}
			hi := min(iv.Hi, spans[open[0]].Start)
			if next < len(byArrive) { // a later arrival may start first
				hi = min(hi, spans[byArrive[next]].Arrive)
			}
			share[open[0]] += hi - lo
			lo = hi
		}
	}
	return share
}
