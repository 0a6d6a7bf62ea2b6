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

// network is what the replay needs from the collectives: run one collective
// over members (in ring order) on a buffer of S bytes and call done when it
// ends.
type network interface {
	Start(kind Kind, members []int, bytes int64, done func())
}

// Span is one task of one rank: when the rank reached it (Arrive; for a
// collective the rank then waits for its group), when it ran (Start, End).
type Span struct {
	Task               int32
	Arrive, Start, End units.Duration
}

// executor replays a Schedule for every rank of the N group.
type executor struct {
	sc    *Schedule
	clk   clock
	net   network
	speed []float64 // per-rank compute speed (1 = nominal)

	// Per rank, indexed [rank*len(Tasks)+task].
	arrive, start, end []units.Duration
	// Per rank and stream: next position in Order and running count.
	head, running [][numStreams]int32
	// Per collective task: arrivals per group instance.
	arrivals [][]int32
	members  func(g GroupKind, rank int) (index int, ranks []int)
	// onStart, if set, is called just before a collective task starts.
	onStart func(task int32)
	// symmetric: only rank 0 is simulated and stands for every rank; each
	// collective still starts all its group instances on the network, so
	// links are shared exactly as in the full run.
	symmetric bool
	groups    [GroupInter + 1][][]int

	// computing[r] is the compute task rank r runs now (compute tasks of a
	// rank never overlap); done[r] finishes it, one closure per rank.
	computing []int32
	done      []func()

	// Scratch reused across ranks by the per-rank analyses.
	memScratch              []timedEvent
	memOrder                []int32
	comp, comm, wait, gathr []interval
}

const unset units.Duration = -1

func newExecutor(sc *Schedule, clk clock, net network, speed []float64, symmetric bool) *executor {
	n, t := sc.N, len(sc.Tasks)
	if symmetric {
		n = 1
	}
	e := &executor{sc: sc, clk: clk, net: net, speed: speed, symmetric: symmetric,
		arrive: make([]units.Duration, n*t), start: make([]units.Duration, n*t), end: make([]units.Duration, n*t),
		head: make([][numStreams]int32, n), running: make([][numStreams]int32, n),
		arrivals: make([][]int32, t),
	}
	for i := range e.start {
		e.arrive[i], e.start[i], e.end[i] = unset, unset, unset
	}
	for i, task := range sc.Tasks {
		if task.Kind.IsComm() {
			e.arrivals[i] = make([]int32, groupCount(sc, task.Group))
		}
	}
	e.computing = make([]int32, n)
	e.done = make([]func(), n)
	for r := range e.done {
		e.computing[r] = -1
		e.done[r] = func() {
			t := e.computing[r]
			e.computing[r] = -1
			e.finish(r, t)
		}
	}
	// Every group's members, built once (a collective task reads them for
	// each arriving rank).
	var groups [GroupInter + 1][][]int
	for g := GroupAll; g <= GroupInter; g++ {
		groups[g] = make([][]int, groupCount(sc, g))
		for i := range groups[g] {
			groups[g][i] = groupMembers(sc.N, sc.K, g, i)
		}
	}
	e.members = func(g GroupKind, rank int) (int, []int) {
		idx := 0
		switch g {
		case GroupIntra:
			idx = rank / (sc.N / sc.K)
		case GroupInter:
			idx = rank % (sc.N / sc.K)
		}
		return idx, groups[g][idx]
	}
	e.groups = groups
	return e
}

// groupCount is the number of instances of a group kind.
func groupCount(sc *Schedule, g GroupKind) int {
	switch g {
	case GroupIntra:
		return sc.K
	case GroupInter:
		return sc.N / sc.K
	}
	return 1
}

// groupMembers lists group idx of kind g in ring order: intra groups are
// contiguous blocks of N/K ranks (Megatron), inter group i holds ranks i,
// i+N/K, i+2N/K, ….
func groupMembers(n, k int, g GroupKind, idx int) []int {
	size := n / k
	var m []int
	switch g {
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

// at indexes rank's task state; in the symmetric run every rank reads rank
// 0's.
func (e *executor) at(rank int, task int32) int {
	if e.symmetric {
		rank = 0
	}
	return rank*len(e.sc.Tasks) + int(task)
}

// simulated is the number of ranks the executor runs.
func (e *executor) simulated() int {
	if e.symmetric {
		return 1
	}
	return e.sc.N
}

func (e *executor) run() error {
	for r := 0; r < e.simulated(); r++ {
		e.advance(r)
	}
	e.clk.Run()
	for r := 0; r < e.sc.N; r++ {
		for t := range e.sc.Tasks {
			if e.end[e.at(r, int32(t))] == unset {
				return fmt.Errorf("zero: rank %d never finished task %d (%s): the schedule deadlocks", r, t, e.sc.Tasks[t].Kind)
			}
		}
	}
	return nil
}

// ready reports whether task t's dependencies on rank r are met.
func (e *executor) ready(r int, t int32) bool {
	task := &e.sc.Tasks[t]
	for _, d := range task.After {
		if e.end[e.at(r, d)] == unset {
			return false
		}
	}
	for _, d := range task.AfterStart {
		if e.start[e.at(r, d)] == unset {
			return false
		}
	}
	return true
}

// advance starts every task of rank r that can start now.
func (e *executor) advance(r int) {
	for progress := true; progress; {
		progress = false
		for st := Stream(0); st < numStreams; st++ {
			order := e.sc.Order[st]
			for e.running[r][st] < int32(e.sc.Cap[st]) && int(e.head[r][st]) < len(order) {
				t := order[e.head[r][st]]
				if !e.ready(r, t) {
					break
				}
				e.head[r][st]++
				e.running[r][st]++
				e.begin(r, t)
				progress = true
			}
		}
	}
}

func (e *executor) begin(r int, t int32) {
	now := e.clk.Now()
	i := e.at(r, t)
	e.arrive[i] = now
	task := &e.sc.Tasks[t]
	if !task.Kind.IsComm() {
		e.start[i] = now
		d := task.Dur
		if s := e.speed[r]; s != 1 && d > 0 {
			d = units.Duration(units.MulDivCeil(int64(d), 1_000_000, int64(s*1_000_000)))
		}
		if e.computing[r] >= 0 {
			panic("zero: two compute tasks at once on one rank")
		}
		e.computing[r] = t
		e.clk.After(d, e.done[r])
		return
	}
	g, members := e.members(task.Group, r)
	if e.symmetric {
		e.start[i] = now
		if e.onStart != nil {
			e.onStart(t)
		}
		for other := range e.arrivals[t] {
			if other == g {
				continue
			}
			e.net.Start(task.Kind, e.groups[task.Group][other], task.Bytes, func() {})
		}
		e.net.Start(task.Kind, members, task.Bytes, func() { e.finish(r, t) })
		return
	}
	e.arrivals[t][g]++
	if int(e.arrivals[t][g]) < len(members) {
		return
	}
	for _, m := range members {
		e.start[e.at(m, t)] = now
	}
	if e.onStart != nil {
		e.onStart(t)
	}
	e.net.Start(task.Kind, members, task.Bytes, func() {
		for _, m := range members {
			e.finish(m, t)
		}
	})
}

func (e *executor) finish(r int, t int32) {
	e.end[e.at(r, t)] = e.clk.Now()
	e.running[r][e.sc.Tasks[t].Stream]--
	e.advance(r)
}

// sameAsPrev reports whether rank r > 0 arrived at, started and ended
// every task at the same times as rank r−1 (then every per-rank analysis,
// a pure function of those times, gives the same answer).
func (e *executor) sameAsPrev(r int) bool {
	if r == 0 || e.symmetric {
		return r > 0
	}
	t := len(e.sc.Tasks)
	a, b := r*t, (r-1)*t
	return slices.Equal(e.end[a:a+t], e.end[b:b+t]) && slices.Equal(e.start[a:a+t], e.start[b:b+t]) &&
		slices.Equal(e.arrive[a:a+t], e.arrive[b:b+t])
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
