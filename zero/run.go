package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Options tune a replay.
type Options struct {
	// KeepSpans keeps every rank's task timeline in Result.Spans (for
	// traces and timeline plots); off for large sweeps.
	KeepSpans bool
	// MemoryRank is the rank whose memory timeline Result.Memory holds.
	MemoryRank int
	// Full simulates every rank even when the scenario is symmetric (see
	// Symmetric); by default a symmetric scenario runs one representative.
	Full bool
}

// Symmetric reports whether every rank of s behaves alike, so one
// representative rank can stand for all: no per-link or per-GPU overrides,
// every GPU holds a rank, and the intra groups tile the nodes evenly.
func Symmetric(s *scenarios.Scenario) bool {
	c := &s.Cluster
	if len(c.LinkOverrides) > 0 || s.N() != s.GPUs() {
		return false
	}
	for _, g := range c.GPUOverrides {
		if g.Speed != 1 {
			return false
		}
	}
	k := max(s.Parallelism.K, 1)
	size, gpn := s.N()/k, c.GPUsPerNode
	if size%gpn != 0 && gpn%size != 0 {
		return false
	}
	// Shared NICs must be shared by the same number of GPUs each.
	if c.NICs == "per_node" && c.NICsPerNode > 0 && gpn%c.NICsPerNode != 0 {
		return false
	}
	return true
}

// engineClock adapts sim.Engine to the replay's clock.
type engineClock struct{ e *sim.Engine }

func (c engineClock) Now() units.Duration { return units.Duration(c.e.Now()) }
func (c engineClock) After(d units.Duration, fn func()) {
	c.e.After(sim.Time(d), fn)
}
func (c engineClock) Run() { c.e.Run() }

// fabricNet runs the replay's collectives on a collectives.Fabric and
// accounts their bytes per phase.
type fabricNet struct {
	f     *collectives.Fabric
	topo  *topology.Topology
	algo  collectives.Algo
	err   error
	phase Phase // set by the executor before each Start
	// wire[phase][class] and rankWire[phase][rank][class].
	wire     [numPhases][topology.NumClasses]int64
	rankWire [numPhases][][topology.NumClasses]int64
	count    [numPhases]int
}

var opOf = [...]collectives.Op{ReduceScatter: collectives.ReduceScatter, AllGather: collectives.AllGather, AllReduce: collectives.AllReduce}

func (n *fabricNet) Start(kind Kind, members []int, bytes int64, done func()) {
	spec := collectives.Spec{Op: opOf[kind], Algo: n.algo, Group: members, Bytes: units.Bytes(bytes)}
	h, err := n.f.Start(spec, done)
	if err != nil {
		if n.err == nil {
			n.err = fmt.Errorf("zero: %s over %d ranks: %w", kind, len(members), err)
		}
		return
	}
	ph := n.phase
	n.count[ph]++
	if n.rankWire[ph] == nil {
		n.rankWire[ph] = make([][topology.NumClasses]int64, n.topo.Ranks())
	}
	rw := n.rankWire[ph]
	h.Plan.EachTransfer(func(src, _ int, c topology.Class, b units.Bytes) {
		n.wire[ph][c] += int64(b)
		rw[src][c] += int64(b)
	})
}

// Replay builds the schedule of s and replays one step on every rank.
func Replay(s *scenarios.Scenario, opt Options) (*Result, error) {
	sc, err := Build(s)
	if err != nil {
		return nil, err
	}
	topo, err := topology.Build(s)
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	algo, err := collectives.ParseAlgo(s.Communication.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	eng := sim.New()
	net := &fabricNet{f: collectives.NewFabric(eng, topo), topo: topo, algo: algo}
	speed := make([]float64, sc.N)
	for r := range speed {
		speed[r] = topo.Speed(r)
	}
	mrep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	mev, mnames, mrest, err := bindMemory(sc, mrep)
	if err != nil {
		return nil, err
	}
	if opt.MemoryRank < 0 || opt.MemoryRank >= sc.N {
		return nil, fmt.Errorf("zero: memory rank %d out of range [0, %d)", opt.MemoryRank, sc.N)
	}
	sym := !opt.Full && Symmetric(s)
	ex := newExecutor(sc, engineClock{eng}, net, speed, sym)
	ex.onStart = func(t int32) { net.phase = sc.Tasks[t].Phase }
	if err := ex.run(); err != nil {
		return nil, err
	}
	if net.err != nil {
		return nil, net.err
	}
	res := ex.result(s, net, eng.Events(), opt)
	res.Symmetric = sym
	for _, o := range s.Cluster.LinkOverrides {
		nominal := s.Cluster.Inter.Bandwidth
		if o.Class == "intra" {
			nominal = s.Cluster.Intra.Bandwidth
		}
		where := fmt.Sprintf("node %d", o.Node)
		if o.GPU != nil && *o.GPU >= 0 {
			where += fmt.Sprintf(" gpu %d", *o.GPU)
		}
		if o.Bandwidth > 0 && o.Bandwidth < nominal {
			res.Warnings = append(res.Warnings, fmt.Sprintf("degraded %s link at %s: %v instead of %v; every collective crossing it runs at its pace", o.Class, where, o.Bandwidth, nominal))
		}
	}
	if res.Straggler != nil {
		st := res.Straggler
		res.Warnings = append(res.Warnings, fmt.Sprintf("straggler: rank %d (compute %v vs median %v) kept the others waiting %v in total", st.Rank, st.Compute, st.MedianCompute, st.Caused))
	}
	res.MemoryModel = mrep
	res.Memory = ex.memoryTimeline(opt.MemoryRank, mev, mnames, mrest)
	res.PeakMemory = make([]int64, sc.N)
	for r := range res.PeakMemory {
		switch {
		case sym || r == opt.MemoryRank:
			res.PeakMemory[r] = res.Memory.Peak // every rank's timeline is rank 0's
		case r > 0 && r-1 != opt.MemoryRank && ex.sameAsPrev(r):
			res.PeakMemory[r] = res.PeakMemory[r-1]
		default:
			res.PeakMemory[r] = ex.peakMemory(r, mev, mrest)
		}
	}
	return res, nil
}

// result assembles the Result after a run.
func (e *executor) result(s *scenarios.Scenario, net *fabricNet, events int64, opt Options) *Result {
	sc := e.sc
	res := &Result{Name: s.Name, Stage: sc.Stage, N: sc.N, K: sc.K, Overlap: sc.Overlap, Schedule: sc, Events: events}
	for _, c := range topology.Classes() {
		res.LinkClasses = append(res.LinkClasses, c.String())
	}
	for _, t := range sc.Tasks {
		if !t.Kind.IsComm() {
			res.Compute += t.Dur
		}
	}
	for r := 0; r < sc.N; r++ {
		for t := range sc.Tasks {
			res.StepTime = max(res.StepTime, e.end[e.at(r, int32(t))])
		}
	}
	for r := 0; r < sc.N; r++ {
		if e.sameAsPrev(r) {
			st := res.Ranks[r-1]
			st.Rank = r
			res.Ranks = append(res.Ranks, st)
			continue
		}
		res.Ranks = append(res.Ranks, e.rankStats(r, res.StepTime))
	}
	// Collective instances, in start order (ties: task, group).
	for t, task := range sc.Tasks {
		if !task.Kind.IsComm() {
			continue
		}
		for g := range e.arrivals[t] {
			m := e.groups[task.Group][g]
			i := e.at(m[0], int32(t))
			res.Collectives = append(res.Collectives, CollectiveRecord{Task: int32(t), Kind: task.Kind, Phase: task.Phase,
				Group: task.Group, GroupIndex: g, Ranks: len(m), Bytes: task.Bytes, Start: e.start[i], End: e.end[i]})
		}
	}
	sortRecords(res.Collectives)
	// Bytes per phase: logical and exact per rank from the schedule (every
	// rank runs every task), wire bytes from the fabric.
	for ph := Phase(1); ph < numPhases; ph++ {
		pb := PhaseBytes{Phase: ph, Wire: make([]int64, topology.NumClasses), MaxRankWire: make([]int64, topology.NumClasses)}
		for _, t := range sc.Tasks {
			if t.Phase != ph || !t.Kind.IsComm() {
				continue
			}
			n := len(e.groups[t.Group][0])
			pb.Logical += Logical(t.Kind, t.Bytes)
			pb.Sent += Sent(t.Kind, t.Bytes, n)
			pb.Collectives++
		}
		if pb.Collectives == 0 {
			continue
		}
		for c := range pb.Wire {
			pb.Wire[c] = net.wire[ph][c]
			for _, rw := range net.rankWire[ph] {
				pb.MaxRankWire[c] = max(pb.MaxRankWire[c], rw[c])
			}
		}
		res.Phases = append(res.Phases, pb)
	}
	res.CriticalPath = e.criticalPath()
	res.Straggler = e.straggler(res.Ranks)
	if opt.KeepSpans {
		for r := 0; r < sc.N; r++ {
			res.Spans = append(res.Spans, e.spans(r))
		}
	}
	return res
}
