package zero

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zerosim/zerosim/units"
)

// clock is what the replay needs from the discrete-event engine.
type clock interface {
	Now() units.Duration
	After(d units.Duration, fn func())
	Run()
}

// network is what the replay needs from the collectives: issue one
// collective instance, call began when it starts to run (at once, or when
// the collectives issued before it on its communicator have ended) and done
// when it ends.
type network interface {
	Start(c netCollective, began, done func())
}

// netCollective is one collective instance the executor starts.
type netCollective struct {
	Kind    Kind
	Phase   Phase
	Group   GroupKind
	Index   int   // group instance
	Members []int // in the group's rank order (the ring orders them by GPU)
	Bytes   int64
	// Comm is the communicator of the group instance (Group, Index) the
	// collective is issued on (Schedule.comm).
	Comm Comm
	// Weight is how many instances' wire bytes this start accounts for:
	// 1 in the full run; in the symmetric run the instance of rank 0 stands
	// for every instance of its task and the others count 0.
	Weight int
	// Run, when collectives slow beside compute, is the instance's state
	// (interference.go): the network attaches its handle when it starts.
	Run *collRun
}

// Span is one task of one rank: when the rank reached it (Arrive; for a
// collective the rank then waits for its group, and for the collectives
// issued before it on its communicator to end), when it ran (Start, End).
type Span struct {
	Task               int32
	Arrive, Start, End units.Duration
}

// executor replays a Schedule for every rank of the N group, or, in the
// symmetric run, for the ranks of node 0 only (see newExecutor).
type executor struct {
	sc  *Schedule
	clk clock
	net network
	// host runs the offload tasks as flows on the engine (hostNet, nil:
	// each takes its nominal duration).
	host  hostRunner
	speed []float64 // per-rank compute speed (1 = nominal)
	// ring is, per rank, the context-parallel ring's part of each unit's
	// forward and backward where it is not the schedule's (ringRows; nil
	// rows, or nil, elsewhere).
	ring [][]ringDur

	// reps is the number of simulated ranks 0..reps−1: N, or in the
	// symmetric run the GPUs of one node; rank r reads the state of rank
	// r mod reps.
	reps      int
	symmetric bool

	// Per simulated rank and task, indexed by at(rank, task).
	arrive, start, end []units.Duration
	// met counts the dependencies of a rank's task that are met; the task
	// is ready when it reaches need[task]. afterEnd[d] and afterStart[d]
	// list the tasks waiting for task d to end or to start.
	met                  []int32
	need                 []int32
	afterEnd, afterStart [][]int32
	// finished counts the task instances that ended; progress, if not
	// nil, hears of them every ProgressEvery (Options.Progress).
	finished int64
	progress func(done, total int64)
	// lanes[r] is simulated rank r's stream state (see lane);
	// endWakes[t] and startWakes[t] are the streams whose head's readiness
	// task t's end (its own stream, those of afterEnd[t]) and start
	// (afterStart[t]) can change.
	lanes                []lane
	endWakes, startWakes []uint8
	// Per collective task: arrivals per touched group instance (the
	// instance's slot), not per instance: the symmetric run of 16,384
	// ranks at K = 2 has 8,192 inter-group instances per task and touches
	// eight.
	arrivals [][]int32
	// launchedAfter[t][slot] is the collective launched on the same
	// communicator just before task t's instance in that slot (−1: none),
	// recorded when t launches; lastLaunched[g][comm][slot] is the last one
	// launched on each communicator. A queued collective launches as that
	// one ends, so the critical path and the wait chains follow it without
	// searching the tasks (commPredecessor).
	launchedAfter [][]int32
	lastLaunched  [numGroupKinds][numComms][]int32
	// Per group kind, built on first use: every instance's members, the
	// simulated ones, the instances holding a simulated rank, and each
	// instance's place among those (−1: none).
	groups  [numGroupKinds][][]int
	simMem  [numGroupKinds][][]int
	touched [numGroupKinds][]int
	slot    [numGroupKinds][]int32

	// done[r] finishes rank r's compute task, one closure per rank.
	done []func()
	// inter slows compute while collectives run (nil: no interference);
	// cont slows collectives while compute runs (nil: none).
	inter *interference
	cont  *contention

	// differs caches sameAsPrev: differs[r] when rank r's times are not
	// rank r−1's.
	differs []bool

	// Scratch reused across ranks by the per-rank analyses.
	memScratch              []timedEvent
	memOrder                []int32
	comp, comm, wait, gathr []interval
}

const unset units.Duration = -1

// lane is one simulated rank's stream state, kept together because every
// task start and end of the rank reads it: 64 bytes with padding, one or
// two cache lines where four per-rank slices touched up to four (paired
// runs of BenchmarkStep_1k: 0.95 of the wall time, docs/performance.md).
type lane struct {
	// head is each stream's next position in Order, running its count of
	// tasks running.
	head, running [numStreams]int32
	// computing is the compute task the rank runs now, −1 for none
	// (compute tasks of a rank never overlap).
	computing int32
	// stale has bit st set when stream st may be able to start its next
	// task: advance checks only those streams (see advance).
	stale uint8
}

// newExecutor prepares a replay of sc. With symmetric set (a scenario where
// every rank behaves like the rank of the same local index on node 0, see
// Symmetric), only the first reps ranks (node 0) are simulated: each
// collective instance that holds one of them starts when they have all
// arrived, and the network runs it restricted to them.
func newExecutor(sc *Schedule, clk clock, net network, speed []float64, symmetric bool, reps int) *executor {
	n, t := sc.N, len(sc.Tasks)
	if !symmetric || reps <= 0 || reps > n {
		reps = n
	}
	cells := reps * t
	e := &executor{sc: sc, clk: clk, net: net, speed: speed, symmetric: symmetric, reps: reps,
		arrive: make([]units.Duration, cells), start: make([]units.Duration, cells), end: make([]units.Duration, cells),
		met: make([]int32, cells), need: make([]int32, t), afterEnd: make([][]int32, t), afterStart: make([][]int32, t),
		lanes: make([]lane, reps), arrivals: make([][]int32, t), launchedAfter: make([][]int32, t),
		endWakes: make([]uint8, t), startWakes: make([]uint8, t),
	}
	for i := range e.start {
		e.arrive[i], e.start[i], e.end[i] = unset, unset, unset
	}
	for r := range e.lanes {
		e.lanes[r] = lane{computing: -1, stale: allStreams}
	}
	for i, task := range sc.Tasks {
		e.need[i] = int32(len(task.After) + len(task.AfterStart))
		e.endWakes[i] |= 1 << task.Stream
		for _, d := range task.After {
			e.afterEnd[d] = append(e.afterEnd[d], int32(i))
			e.endWakes[d] |= 1 << task.Stream
		}
		for _, d := range task.AfterStart {
			e.afterStart[d] = append(e.afterStart[d], int32(i))
			e.startWakes[d] |= 1 << task.Stream
		}
		if task.Kind.IsComm() {
			e.buildGroups(task.Group)
			e.arrivals[i] = make([]int32, len(e.touched[task.Group]))
			e.launchedAfter[i] = make([]int32, len(e.touched[task.Group]))
			last := &e.lastLaunched[task.Group][sc.comm(&task)]
			if *last == nil {
				*last = make([]int32, len(e.touched[task.Group]))
				for k := range *last {
					(*last)[k] = -1
				}
			}
		}
	}
	e.done = make([]func(), reps)
	for r := range e.done {
		e.done[r] = func() {
			l := &e.lanes[r]
			t := l.computing
			l.computing = -1
			e.computeDelta(r, -1)
			e.finish(r, t)
		}
	}
	return e
}

// buildGroups fills e.groups, e.simMem and e.touched for kind g once.
func (e *executor) buildGroups(g GroupKind) {
	if e.groups[g] != nil {
		return
	}
	sc := e.sc
	e.groups[g] = make([][]int, groupCount(sc, g))
	e.simMem[g] = make([][]int, len(e.groups[g]))
	e.slot[g] = make([]int32, len(e.groups[g]))
	for i := range e.groups[g] {
		m := sc.groupMembers(g, i)
		e.groups[g][i] = m
		e.slot[g][i] = -1
		if e.reps == sc.N {
			e.simMem[g][i] = m
		} else {
			for _, r := range m {
				if r < e.reps {
					e.simMem[g][i] = append(e.simMem[g][i], r)
				}
			}
		}
		if len(e.simMem[g][i]) > 0 {
			e.slot[g][i] = int32(len(e.touched[g]))
			e.touched[g] = append(e.touched[g], i)
		}
	}
}

// instance is the index of rank's group instance of kind g.
func (e *executor) instance(g GroupKind, rank int) int {
	switch g {
	case GroupIntra:
		return rank / (e.sc.N / e.sc.K)
	case GroupInter:
		return rank % (e.sc.N / e.sc.K)
	case GroupEP:
		return rank / e.sc.EP
	case GroupEDP:
		size := e.sc.N / e.sc.K
		return rank/size*e.sc.EP + rank%size%e.sc.EP
	case GroupHPZ:
		return rank / e.sc.HPZ
	case GroupNode:
		return rank / e.sc.Local
	case GroupRail:
		return rank % e.sc.Local
	case GroupEPNode:
		return rank / e.sc.EPNode
	case GroupEPRail:
		return rank/e.sc.EP*e.sc.EPNode + rank%e.sc.EPNode
	}
	return 0
}

// members is rank's group instance of kind g and its members.
func (e *executor) members(g GroupKind, rank int) (int, []int) {
	i := e.instance(g, rank)
	return i, e.groups[g][i]
}

// groupCount is the number of instances of a group kind.
func groupCount(sc *Schedule, g GroupKind) int {
	switch g {
	case GroupIntra:
		return sc.K
	case GroupInter:
		return sc.N / sc.K
	case GroupEP:
		return sc.N / sc.EP
	case GroupEDP:
		return sc.K * sc.EP
	case GroupHPZ:
		return sc.N / sc.HPZ
	case GroupNode:
		return sc.N / sc.Local
	case GroupRail:
		return sc.Local
	case GroupEPNode:
		return sc.N / sc.EPNode
	case GroupEPRail:
		return sc.N / sc.EP * sc.EPNode
	}
	return 1
}

// groupMembers lists group idx of kind g in rank order: intra groups are
// contiguous blocks of N/K ranks (Megatron), inter group i holds ranks i,
// i+N/K, i+2N/K, ….
func groupMembers(n, k, ep int, g GroupKind, idx int) []int {
	size := n / k
	var m []int
	switch g {
	case GroupEP:
		m = make([]int, ep)
		for i := range m {
			m[i] = idx*ep + i
		}
	case GroupEDP:
		m = make([]int, size/ep)
		for i := range m {
			m[i] = idx/ep*size + idx%ep + i*ep
		}
	case GroupIntra:
		m = make([]int, size)
		for i := range m {
			m[i] = idx*size + i
		}
	case GroupInter:
		m = make([]int, k)
		for i := range m {
			m[i] = idx + i*size
		}
	default:
		m = make([]int, n)
		for i := range m {
			m[i] = i
		}
	}
	return m
}

// at indexes rank's task state: task-major, one row of reps ranks per task.
// In the symmetric run rank r reads rank r mod reps's.
//
// The replay works in bursts of ranks, not of tasks: a collective's end
// releases each of its members in rank order, and their compute tasks end
// together in that order. Each rank then touches the same few tasks (the
// one that ended, those waiting on it, its streams' heads), so across the
// burst each of those rows is read in memory order, which the hardware
// prefetches; blocks of 8 ranks, task-major inside a block, put each
// block's cells a whole block apart (491 tasks × 64 B for GPT-3 175B), a
// new cache line on another page per task every 8 ranks (3.7 against
// 2.4 s per 16k step). The analyses that look at
// every rank go row by row (sameAsPrev, criticalPath, straggler, run's
// check); rankStats and the memory timeline read one rank's column, only
// for the ranks whose times differ from the previous rank's.
func (e *executor) at(rank int, task int32) int {
	if rank >= e.reps {
		rank %= e.reps
	}
	return int(task)*e.reps + rank
}

func (e *executor) run() error {
	for r := 0; r < e.reps; r++ {
		e.advance(r)
	}
	e.clk.Run()
	if e.progress != nil {
		e.progress(e.finished, int64(len(e.sc.Tasks))*int64(e.reps))
	}
	// Any task left unfinished? (One pass in memory order; then the
	// first one in rank order is named.)
	if !slices.Contains(e.end, unset) {
		return nil
	}
	for r := 0; r < e.reps; r++ {
		for t := range e.sc.Tasks {
			if e.end[e.at(r, int32(t))] == unset {
				return fmt.Errorf("zero: rank %d never finished task %d (%s): the schedule deadlocks", r, t, e.sc.Tasks[t].Kind)
			}
		}
	}
	return nil
}

// ready reports whether task t's dependencies on rank r are met.
func (e *executor) ready(r int, t int32) bool { return e.met[e.at(r, t)] == e.need[t] }

// started records that task t started on rank r at now.
func (e *executor) started(r int, t int32, now units.Duration) {
	e.start[e.at(r, t)] = now
	for _, w := range e.afterStart[t] {
		e.met[e.at(r, w)]++
	}
	e.lanes[r].stale |= e.startWakes[t]
}

// allStreams has a bit for each stream (a rank's stale mask).
const allStreams = 1<<numStreams - 1

// The stale masks hold a bit per stream.
var _ [8 - numStreams]struct{}

// advance starts every task of rank r that can start now: in passes over
// the streams in order until one starts nothing, each stream starting its
// next tasks while it has room and the next is ready. A stream whose bit
// in stale[r] is clear is skipped: it was found unable to start when the
// bit was cleared, and only a task's end on it (running), a met dependency
// of one of its tasks (ready) or its own starts (head, here) change that;
// finish and started set the bits of the streams they touch. So the tasks
// start in the same order as when every stream is checked on every pass,
// without checking the eight streams twice per task end of every rank.
func (e *executor) advance(r int) {
	l := &e.lanes[r]
	for progress := true; progress; {
		progress = false
		for st := Stream(0); st < numStreams; st++ {
			if l.stale&(1<<st) == 0 {
				continue
			}
			order := e.sc.Order[st]
			for l.running[st] < int32(e.sc.Cap[st]) && int(l.head[st]) < len(order) {
				t := order[l.head[st]]
				if !e.ready(r, t) {
					break
				}
				l.head[st]++
				l.running[st]++
				e.begin(r, t)
				progress = true
			}
			l.stale &^= 1 << st // blocked: nothing changed since the check
		}
	}
}

// taskDur is how long compute or host task takes on rank r alone: its
// duration scaled by the rank's GPU speed (host tasks keep theirs), before
// any communication.compute_interference.
//
// A block's context-parallel ring is part of its compute task
// (ringattn.go): on a rank with a row of its own (ringRows) the speed
// scales the rest of the task and the rank's own ring part is added, so
// that the ring's exchange keeps the links' time and waits for the rank's
// own cp group's links.
func (e *executor) taskDur(r int, task *Task) units.Duration {
	d := task.Dur
	var own units.Duration
	if e.ring != nil && e.ring[r] != nil && task.Unit >= 0 && (task.Kind == Forward || task.Kind == Backward) {
		c, x := &e.sc.Costs[task.Unit], e.ring[r][task.Unit]
		ref := c.RingFwd
		own = x.fwd
		if task.Kind == Backward {
			ref, own = c.RingBwd, x.bwd
		}
		if ref == 0 || ref > d {
			own = 0 // the task carries no ring (an explicit time)
		} else {
			d -= ref
		}
	}
	if s := e.speed[r]; s != 1 && d > 0 && !task.Kind.IsHost() {
		d = units.Duration(units.MulDivCeil(int64(d), 1_000_000, int64(s*1_000_000)))
	}
	return d + own
}

func (e *executor) begin(r int, t int32) {
	now := e.clk.Now()
	i := e.at(r, t)
	e.arrive[i] = now
	task := &e.sc.Tasks[t]
	if !task.Kind.IsComm() {
		e.started(r, t, now)
		d := e.taskDur(r, task)
		if task.Kind.IsHost() && e.host != nil {
			// Offload copies and the CPU step run as flows on the host's
			// links (offload.go).
			e.host.Run(r, task, func() { e.finish(r, t) })
			return
		}
		if task.Stream != Compute {
			// A ZeRO++ kernel launched on a communication stream
			// (zeropp.go), or a host task, runs beside the compute
			// stream's task.
			e.clk.After(d, func() { e.finish(r, t) })
			return
		}
		if e.lanes[r].computing >= 0 {
			panic("zero: two compute tasks at once on one rank")
		}
		e.lanes[r].computing = t
		e.computeDelta(r, 1)
		if e.inter != nil {
			e.startCompute(r, d)
			return
		}
		e.clk.After(d, e.done[r])
		return
	}
	g, members := e.members(task.Group, r)
	sim := e.simMem[task.Group][g]
	slot := e.slot[task.Group][g]
	arrived := &e.arrivals[t][slot]
	if *arrived++; int(*arrived) < len(sim) {
		return
	}
	w := 1
	if e.symmetric {
		w = 0
		if g == 0 {
			w = len(e.groups[task.Group])
		}
	}
	var run *collRun
	if e.cont != nil {
		run = e.openColl(sim)
	}
	// It starts when its communicator runs it: its time queued behind the
	// collectives issued there before it is the rank's waiting, not this
	// collective's (a predecessor's run covers it).
	comm := e.sc.comm(task)
	began := func() {
		last := &e.lastLaunched[task.Group][comm][slot]
		e.launchedAfter[t][slot], *last = *last, t
		at := e.clk.Now()
		for _, m := range sim {
			e.started(m, t, at)
			e.commDelta(m, 1)
		}
		if len(e.afterStart[t]) > 0 {
			// A collective starts when its communicator runs it, which
			// may be after every member arrived (queued behind the
			// collectives issued there before it): nothing else advances
			// the tasks waiting for that start (a deduplicating MoE
			// dispatcher's node phase, builder.a2aAfter). When the
			// communicator runs it at once, this is inside net.Start,
			// within the last member's advance: the nested advance
			// re-reads each stream's head and running count, so the outer
			// loop goes on from where it leaves them, and the node phase
			// enters the fabric at this instant before the rail phase,
			// whose rates are settled once the instant's starts are in
			// (sim.Engine.SetDeferRates), whatever their order.
			for _, m := range sim {
				e.advance(m)
			}
		}
	}
	e.net.Start(netCollective{Kind: task.Kind, Phase: task.Phase, Group: task.Group, Index: g, Members: members, Bytes: task.Bytes, Weight: w, Comm: comm, Run: run}, began, func() {
		if run != nil {
			e.closeColl(run)
		}
		for _, m := range sim {
			e.commDelta(m, -1)
		}
		for _, m := range sim {
			e.finish(m, t)
		}
	})
}

func (e *executor) finish(r int, t int32) {
	e.end[e.at(r, t)] = e.clk.Now()
	if e.finished++; e.progress != nil && e.finished%ProgressEvery == 0 {
		e.progress(e.finished, int64(len(e.sc.Tasks))*int64(e.reps))
	}
	for _, w := range e.afterEnd[t] {
		e.met[e.at(r, w)]++
	}
	l := &e.lanes[r]
	l.running[e.sc.Tasks[t].Stream]--
	l.stale |= e.endWakes[t]
	e.advance(r)
}

// sameAsPrev reports whether simulated rank r > 0 arrived at, started and ended
// every task at the same times as rank r−1 (then every per-rank analysis,
// a pure function of those times, gives the same answer).
// The answers for all ranks are found on the first call, the run being
// over: one pass over each task's row of ranks (see at) reads the state
// in memory order, where asking rank by rank reads one cache line per task
// for each rank.
func (e *executor) sameAsPrev(r int) bool {
	if r == 0 || r >= e.reps {
		return false
	}
	if e.differs == nil {
		differs := make([]bool, e.reps)
		for t := range int32(len(e.sc.Tasks)) {
			i := e.at(0, t)
			end, start, arrive := e.end[i:i+e.reps], e.start[i:i+e.reps], e.arrive[i:i+e.reps]
			for q := 1; q < e.reps; q++ {
				if end[q] != end[q-1] || start[q] != start[q-1] || arrive[q] != arrive[q-1] {
					differs[q] = true
				}
			}
		}
		e.differs = differs
	}
	return !e.differs[r]
}

// spans returns rank r's tasks in start order.
func (e *executor) spans(r int) []Span {
	out := make([]Span, len(e.sc.Tasks))
	for t := range e.sc.Tasks {
		i := e.at(r, int32(t))
		out[t] = Span{Task: int32(t), Arrive: e.arrive[i], Start: e.start[i], End: e.end[i]}
	}
	slices.SortStableFunc(out, func(a, b Span) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmp.Compare(a.Task, b.Task)
	})
	return out
}

// groupMembers lists group idx of kind g: ZeRO++'s groups here — hpZ
// groups are contiguous blocks of HPZ ranks and node groups of Local ranks
// (deepspeed/utils/groups.py at deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641: _create_zero_param_parallel_group,
// lines 859–885, ranks i·size … (i+1)·size−1; _get_local_all_to_all_group,
// lines 672–698, local_i the GPUs of node i; ranks fill GPUs in order),
// rail group i holds ranks i, i+Local, … (the same function's global_i) —
// and every other kind from the package function.
func (sc *Schedule) groupMembers(g GroupKind, idx int) []int {
	block := func(b int) []int {
		m := make([]int, b)
		for i := range m {
			m[i] = idx*b + i
		}
		return m
	}
	switch g {
	case GroupHPZ:
		return block(sc.HPZ)
	case GroupNode:
		return block(sc.Local)
	case GroupRail:
		m := make([]int, sc.N/sc.Local)
		for i := range m {
			m[i] = idx + i*sc.Local
		}
		return m
	case GroupEPNode:
		return block(sc.EPNode)
	case GroupEPRail:
		// Ep group idx/EPNode's ranks of local index idx%EPNode in it.
		m := make([]int, sc.EP/sc.EPNode)
		for i := range m {
			m[i] = idx/sc.EPNode*sc.EP + idx%sc.EPNode + i*sc.EPNode
		}
		return m
	}
	return groupMembers(sc.N, sc.K, sc.EP, g, idx)
}
