package zero

import (
	"errors"
	"fmt"
	"math"
	"slices"

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
	// SpanRanks, if > 0, keeps the timelines of the first SpanRanks ranks
	// only (a trace of 16,384 ranks is rarely wanted).
	SpanRanks int
	// SpanNotable also keeps, in Result.NotableSpans, the timelines of the
	// ranks Result.Notable names (the straggler, the rank that waits or
	// is exposed the most) where SpanRanks leaves them out.
	SpanNotable bool
	// MemoryRank is the rank whose memory timeline Result.Memory holds.
	MemoryRank int
	// Full simulates every rank even when the scenario is symmetric (see
	// Symmetric); by default a symmetric scenario runs one representative.
	Full bool
	// NoCollectives leaves Result.Collectives empty, for callers that read
	// only the peak (zerosim fit's searches): one record per collective
	// instance and their sort took 1.2 of 1.3 s of a replay of 16,384 ranks
	// at ZeRO-1 with K=8,192 (three layers of gpt3-175b-16k). Nothing else
	// in the Result changes.
	NoCollectives bool
	// MaxCollectives, if > 0, leaves Result.Collectives empty when the step
	// runs more collective instances than it (Result.CollectiveCount still
	// counts them): a command that lists them only up to a limit need not
	// build millions. At 16,384 ranks with K = 2 a step of gpt3-175b-16k
	// at ZeRO-1 runs 8,192 inter-group all-reduces per bucket; recording
	// every one took 60 s and 16 GB.
	MaxCollectives int
	// Memory, if not nil, is the memory model's report of the scenario
	// (memory.Analyze with memory.Options{}, or with Reserve
	// memory.ReserveWhereFits where it fits: ReserveSkipped false), which
	// a caller that screened the scenario with it already has: the replay
	// takes it instead of analyzing the scenario again (the caching
	// allocator's simulation is most of that). A report without the
	// profiler's view is not taken.
	Memory *memory.Report
	// Progress, if not nil, is called with the task instances finished so
	// far and their total (tasks × simulated ranks) every ProgressEvery
	// of them and once at the end, from the replaying goroutine: what a
	// command shows as progress on a terminal.
	Progress func(done, total int64)
	// noFSDP2Copies leaves FSDP2's compute-stream copies around its
	// collectives (fsdp2CopyBytes) uncharged: for the tests that weigh
	// the charge (TestStackCosts' FSDP2 table, TestBoundary's gathers
	// alone), never a user's replay.
	noFSDP2Copies bool
}

// ProgressEvery is how many finished task instances separate two calls of
// Options.Progress (a 16,384-rank step finishes about 8 M).
const ProgressEvery = 1 << 16

// Symmetric reports whether every rank of s behaves like the rank of the
// same local index on node 0, so node 0's ranks can stand for all
// (Asymmetry returns "").
func Symmetric(s *scenarios.Scenario) bool { return Asymmetry(s) == "" }

// Asymmetry returns why the ranks of s do not all behave like the rank of
// the same local index on node 0, naming the check that failed with its
// figures, or "" when they do: no per-link or per-GPU overrides, every GPU
// holds a rank in order (placement [cp, dp], or cp = 1), the intra, expert
// and hpZ groups tile the nodes evenly, and the collectives are not the
// explicit alpha–beta tree (a double binary tree is not the same seen from
// every node; NCCL's model, with auto, times its trees on the rail-aligned
// traffic of rings, which is).
func Asymmetry(s *scenarios.Scenario) string {
	c := &s.Cluster
	gpn := c.GPUsPerNode
	straddle := func(key string, v int, what string, size int) string {
		return fmt.Sprintf("%s=%d: %s groups of %d ranks straddle the nodes of %d GPUs", key, v, what, size, gpn)
	}
	tiles := func(size int) bool { return size%gpn == 0 || gpn%size == 0 }
	switch {
	case len(c.LinkOverrides) > 0:
		return "cluster.link_overrides sets some links apart"
	case s.N() != s.GPUs():
		return fmt.Sprintf("the %d ranks do not fill the %d GPUs", s.N(), s.GPUs())
	case s.Communication.Algorithm == scenarios.AlgoTree:
		return "communication.algorithm: tree (a double binary tree is not the same seen from every node)"
	case s.Parallelism.CP > 1 && c.Placement[0] == scenarios.AxisDP:
		return "cluster.placement [dp, cp] puts rank r off GPU r"
	}
	for _, g := range c.GPUOverrides {
		if g.Speed != 1 {
			return "cluster.gpu_overrides sets a GPU's speed"
		}
	}
	if k := s.Parallelism.K; !tiles(s.N() / k) {
		return straddle("parallelism.k", k, "shard", s.N()/k)
	}
	if ep := s.Parallelism.EP; ep > 1 && !tiles(ep) {
		return straddle("parallelism.ep", ep, "expert", ep)
	}
	if h := s.Communication.ZeroHPZPartitionSize; h > 1 && !tiles(h) {
		return straddle("communication.zero_hpz_partition_size", h, "hpZ", h)
	}
	if c.NICs == scenarios.NICPerNode && gpn%c.NICsPerNode != 0 {
		return fmt.Sprintf("%d GPUs per node do not share %d NICs evenly", gpn, c.NICsPerNode)
	}
	return ""
}

// algoOf maps the scenario's communication.algorithm to the collectives'
// algorithm.
var algoOf = map[scenarios.Algorithm]collectives.Algo{
	scenarios.AlgoAuto: collectives.Auto, scenarios.AlgoRing: collectives.Ring,
	scenarios.AlgoHierarchical: collectives.Hierarchical, scenarios.AlgoTree: collectives.Tree,
	scenarios.AlgoNVLS: collectives.NVLS, scenarios.AlgoNVLSTree: collectives.NVLSTree,
}

// engineClock adapts sim.Engine to the replay's clock.
type engineClock struct{ e *sim.Engine }

func (c engineClock) Now() units.Duration { return units.Duration(c.e.Now()) }
func (c engineClock) After(d units.Duration, fn func()) {
	c.e.After(sim.Time(d), fn)
}
func (c engineClock) Run() { c.e.Run() }

// fabricNet runs the replay's collectives on a collectives.Fabric and
// accounts their bytes per phase. Each distinct instance (kind, group,
// index, size) is prepared once; its wire bytes are counted per start at
// the end, so accounting costs nothing per collective.
type fabricNet struct {
	f    *collectives.Fabric
	topo *topology.Topology
	algo collectives.Algo
	err  error
	// keep restricts every collective to the simulated ranks (symmetric
	// run); nil in the full run.
	keep  []bool
	prep  map[prepKey]*prepared // looked up, never iterated
	preps []*prepared           // in creation order
	// queues holds, per communicator, the collectives issued while
	// another runs on it (commKey); looked up, never iterated.
	queues map[commKey]*commQueue
}

// commKey names an NCCL communicator: a group instance (kind and index)
// and which of the stack's communicators over those ranks (Comm). A
// communicator runs its collectives one after another in issue order,
// whatever CUDA stream each is issued on: NCCL makes each kernel on a
// communicator depend on the communicator's internal stream and that
// stream on the kernel (src/enqueue.cc ncclLaunchPrepare: "Launch kernel,
// depends on all of {deviceStream, hostStream, userStream[i]...}",
// "{deviceStream, userStream[i]...} depend on kernel", deviceStream being
// comm->sharedRes->deviceStream; NVIDIA/nccl v2.18.3-1, the same in
// ncclLaunchPrepare and ncclLaunchFinish at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027). PyTorch's
// ProcessGroupNCCL holds one communicator per process group and device
// and issues every collective of the group on it, on that group's internal
// stream (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp collective():
// getNCCLComm(key, devices), ncclStreams_[key], key =
// getKeyFromDevices(devices); pytorch/pytorch at
// 0007e752d518810f0f8942a830dbbbfc69f34577; whichever stream a version
// issues on, the communicator orders them). So two
// collectives over one process group never run at once, though FSDP
// issues its all-gathers and reduce-scatters from different streams; the
// stacks' process groups are in memory.GradientCommunicator. Collectives
// over different groups, or DeepSpeed ZeRO-3's two communicators, overlap
// and share the links.
type commKey struct {
	group GroupKind
	index int
	comm  Comm
}

// Comm tells apart the communicators a stack opens over the ranks of one
// group instance.
type Comm uint8

const (
	// CommGroup is the group's process group: every collective over it
	// but DeepSpeed ZeRO-3's parameter all-gathers.
	CommGroup Comm = iota
	// CommParams is DeepSpeed ZeRO-3's world group, which its parameters
	// gather over while the gradients reduce over the data-parallel
	// group, a clone of it (memory.GradientCommunicator).
	CommParams
	numComms = iota
)

type commQueue struct {
	busy    bool
	waiting []queued
}

type queued struct {
	c           netCollective
	began, done func()
}

// Start issues c on its communicator: it runs when the ones issued there
// before it have finished, calling began then.
func (n *fabricNet) Start(c netCollective, began, done func()) {
	key := commKey{c.Group, c.Index, c.Comm}
	q := n.queues[key]
	if q == nil {
		if n.queues == nil {
			n.queues = map[commKey]*commQueue{}
		}
		q = &commQueue{}
		n.queues[key] = q
	}
	if q.busy {
		q.waiting = append(q.waiting, queued{c, began, done})
		return
	}
	q.busy = true
	var next func()
	run := func(c netCollective, began, done func()) {
		began()
		n.start(c, func() {
			// The next one launches as this one ends, before this one's
			// end is seen, so its members never see zero collectives in
			// flight between the two (which would re-time their compute
			// twice under interference, for nothing).
			next()
			done()
		})
	}
	next = func() {
		if len(q.waiting) == 0 {
			q.busy = false
			return
		}
		w := q.waiting[0]
		q.waiting = q.waiting[1:]
		run(w.c, w.began, w.done)
	}
	run(c, began, done)
}

// kindAlgo is the algorithm the replay runs a collective of kind k with
// under the scenario's algo: trees only all-reduce. Beside zerosim's
// alpha–beta tree the others run its alpha–beta ring; beside NCCL's
// NVLS-tree, NCCL's model picks theirs as under auto (its ring was the
// alpha–beta one: default at stage 1 ran 671.325 ms under nvlstree,
// 418.150 under auto, with the same all-reduces).
func kindAlgo(algo collectives.Algo, k Kind) collectives.Algo {
	switch {
	case k == AllReduce:
		return algo
	case algo == collectives.Tree:
		return collectives.Ring
	case algo == collectives.NVLSTree:
		return collectives.Auto
	}
	return algo
}

type prepKey struct {
	kind  Kind
	group GroupKind
	index int
	bytes int64
}

type prepared struct {
	p *collectives.Prepared
	// starts and weight (instances accounted, see netCollective.Weight)
	// per phase.
	starts, weight [numPhases]int64
}

var opOf = [...]collectives.Op{ReduceScatter: collectives.ReduceScatter, AllGather: collectives.AllGather, AllReduce: collectives.AllReduce,
	AllToAll: collectives.AllToAll}

func (n *fabricNet) start(c netCollective, done func()) {
	key := prepKey{c.Kind, c.Group, c.Index, c.Bytes}
	p := n.prep[key]
	if p == nil {
		spec := collectives.Spec{Op: opOf[c.Kind], Algo: kindAlgo(n.algo, c.Kind), Group: c.Members, Bytes: units.Bytes(c.Bytes)}
		pr, err := n.f.Prepare(spec, n.keep)
		if err != nil {
			if n.err == nil {
				n.err = fmt.Errorf("zero: %s over %d ranks: %w", c.Kind, len(c.Members), err)
			}
			return
		}
		p = &prepared{p: pr}
		n.prep[key] = p
		n.preps = append(n.preps, p)
	}
	h, err := n.f.StartPrepared(p.p, done)
	if err != nil {
		if n.err == nil {
			n.err = fmt.Errorf("zero: %s over %d ranks: %w", c.Kind, len(c.Members), err)
		}
		return
	}
	if c.Run != nil {
		c.Run.attach(h)
	}
	p.starts[c.Phase]++
	p.weight[c.Phase] += int64(c.Weight)
}

// latencyTerm sums the NCCL model's latency term and time over rank r's
// collectives (one simulated rank stands for r in the symmetric run); nil
// when one of them is not timed by that model or r runs none.
func (e *executor) latencyTerm(n *fabricNet, r int) *LatencyTerm {
	r %= e.reps
	lt := &LatencyTerm{Rank: r}
	for _, task := range e.sc.Tasks {
		if !task.Kind.IsComm() || task.Kind.IsHost() {
			continue
		}
		g, members := e.members(task.Group, r)
		pr := n.prep[prepKey{task.Kind, task.Group, g, task.Bytes}]
		if pr == nil {
			continue // never started (no bytes)
		}
		if !pr.p.Plan().Timed {
			return nil
		}
		c := pr.p.Plan().Choice
		lt.Collectives++
		lt.Latency += c.Latency
		lt.Modelled += c.Time
		lt.MaxRanks = max(lt.MaxRanks, len(members))
	}
	if lt.Collectives == 0 {
		return nil
	}
	return lt
}

// phaseWire is phase ph's wire bytes per class over every instance, and
// the busiest rank's sent bytes per class (over the ranks whose sends were
// accounted: every rank, or in the symmetric run the simulated ones, which
// stand for all). scratch is per-rank scratch of an entry per rank up to
// the largest accounted one (sentRanks).
func (n *fabricNet) phaseWire(ph Phase, scratch [][topology.NumClasses]int64) (wire, most [topology.NumClasses]int64, err error) {
	clear(scratch)
	for _, p := range n.preps {
		if p.starts[ph] == 0 {
			continue
		}
		pw := p.p.Wire()
		for c := range wire {
			b, err := units.Mul(int64(pw[c]), p.weight[ph])
			if err == nil {
				wire[c], err = units.Add(wire[c], b)
			}
			if err != nil {
				return wire, most, fmt.Errorf("zero: %s wire bytes: %w", ph, err)
			}
		}
		for _, rb := range p.p.Sent() {
			for c := range rb.Bytes {
				scratch[rb.Rank][c] += int64(rb.Bytes[c]) * p.starts[ph] // ≤ the phase's wire bytes
			}
		}
	}
	for _, rw := range scratch {
		for c := range most {
			most[c] = max(most[c], rw[c])
		}
	}
	return wire, most, nil
}

// sentRanks is one more than the largest rank whose sends were accounted
// (every rank in the full run; node 0's in the symmetric run).
func (n *fabricNet) sentRanks() int {
	m := 0
	for _, p := range n.preps {
		for _, rb := range p.p.Sent() {
			m = max(m, rb.Rank+1)
		}
	}
	return m
}

// Model is NCCL's cost model of s's cluster, calibrated when the scenario
// names a calibration (communication.calibration). NCCL's tables depend on
// the GPU generation: a cluster that names no GPU preset (the seeds'
// idealised clusters, given by link bandwidths and latencies only) and has
// no calibration keeps the alpha–beta model (nil); one that cluster.gfx
// names AMD's runs RCCL's, whose tables depend on the target alone.
func Model(s *scenarios.Scenario) (*collectives.Model, error) {
	return ModelOn(s, collectives.HardwareOf(s), s.Communication.CalibrationData)
}

// ModelOn is Model with the hardware hw (s's, as collectives.HardwareOf
// gives it, with what a command changes: collective's --algo and --proto
// set its NCCL_ALGO and NCCL_PROTO) and the calibration file cd (s's, or
// one a command names; nil: none). A calibration whose hardware, pins
// included, is not hw applies its fitted parameters without its measured
// curves (collectives.Calibration.Model, PinsDiffer): the commands warn.
func ModelOn(s *scenarios.Scenario, hw collectives.Hardware, cd *scenarios.Calibration) (*collectives.Model, error) {
	if cd == nil || !cd.HasNetwork() {
		if s.Cluster.GPU == "" && !s.Cluster.AMD() {
			return nil, nil
		}
		m := collectives.NewModel(hw)
		m.Params.InterEff = PresetInterEfficiency(s)
		return m, nil
	}
	cal, err := collectives.CalibrationOf(cd)
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	return cal.Model(hw), nil
}

// PresetInterEfficiency is the inter-node efficiency an uncalibrated
// model of s runs at: its inter link preset's published Efficiency
// (scenarios.LinkPreset: EFA-p4d's 0.69, cited there) when the scenario
// takes the preset's bandwidth, 1 (nominal) otherwise: no preset, a
// preset that carries none, or a cluster.inter.bandwidth of the user's.
func PresetInterEfficiency(s *scenarios.Scenario) float64 {
	in := s.Cluster.Inter
	if p, ok := scenarios.FindLink(in.Preset); ok && p.Efficiency > 0 && in.Bandwidth == p.Bandwidth {
		return p.Efficiency
	}
	return 1
}

// CalibrationWarnings says when s's network calibration is not used as
// measured: an explicit ring, tree or hierarchical algorithm runs
// zerosim's alpha–beta lowerings, which the calibration does not correct
// (its efficiencies and latencies are relative to NCCL's cost model: its
// bandwidth after the channel search and its latency tables, not to the
// links' nominal figures); and a calibration fitted on other hardware
// applies its corrections to this cluster's figures without its measured
// curves, as does one measured under other NCCL_ALGO or NCCL_PROTO
// settings (collectives.Calibration.PinsDiffer). A replay's result
// carries them; sweep and plan, which replay many points, print each
// distinct one once (qa20 M4: they dropped them).
func CalibrationWarnings(s *scenarios.Scenario) []string {
	return calibrationWarnings(s, false)
}

// UnphysicalCalibrationWarnings are CalibrationWarnings' warnings of a
// value no hardware reaches (collectives.Unphysical) alone, which plan
// prints once (its header says the rest); plan picked them by their text
// before (final read R2 #9).
func UnphysicalCalibrationWarnings(s *scenarios.Scenario) []string {
	return calibrationWarnings(s, true)
}

// unphysicalWarnings are the warnings of cal's values no hardware reaches:
// a hand-edited file, or a fit whose logs did not constrain a value (QA6
// F6: inter_efficiency 50, fixed_cost_us -500 timed a 2-node 1 MiB
// all-reduce at 4.09 µs, busbw 481 GB/s).
func unphysicalWarnings(cal *collectives.Calibration, name string) []string {
	var w []string
	for _, b := range collectives.Unphysical(cal.HW, cal.Params) {
		w = append(w, fmt.Sprintf("%s: %s: no hardware is that fast; collectives it times are too fast (recalibrate, or fix the value)", name, b))
	}
	return w
}

// calibrationWarnings is CalibrationWarnings, or with unphysicalOnly its
// unphysical values' alone.
func calibrationWarnings(s *scenarios.Scenario, unphysicalOnly bool) []string {
	cd := s.Communication.CalibrationData
	if cd == nil || !cd.HasNetwork() {
		return nil
	}
	name := s.Communication.Calibration
	if name == "" {
		name = "the calibration"
	}
	var w []string
	if !s.Communication.Algorithm.NCCLModel() && !unphysicalOnly {
		w = append(w, fmt.Sprintf("communication.algorithm %s runs zerosim's alpha–beta lowering: the network part of %s (fitted to NCCL's cost model) is not used; set communication.algorithm=auto to time the collectives as calibrated", s.Communication.Algorithm, name))
		return w
	}
	cal, err := collectives.CalibrationOf(cd)
	if err != nil {
		return nil
	}
	w = append(w, unphysicalWarnings(cal, name)...)
	if unphysicalOnly {
		return w
	}
	hw := collectives.HardwareOf(s)
	if d := cal.PinsDiffer(hw); d != "" {
		w = append(w, fmt.Sprintf("the network part of %s was %s: its efficiencies and latencies are applied, its measured curves, timed under the algorithms those settings chose, are not used (set communication.nccl_algo and nccl_proto as measured, or calibrate on logs taken with this run's)", name, d))
	}
	// This cluster as it is (rev24: it was described with the
	// calibration's pins, "NCCL_ALGO=Ring", where nothing was pinned).
	if cal.OtherHardware(hw) {
		w = append(w, fmt.Sprintf("the network part of %s was %s", name, cal.OtherHardwareWords(hw)))
	}
	return w
}

// networkCalibrated reports whether s's network calibration times its
// collectives: it has a network part, and NCCL's cost model m (Model),
// which that part corrects, times them (scenarios.Algorithm.NCCLModel).
func networkCalibrated(s *scenarios.Scenario, m *collectives.Model) bool {
	cd := s.Communication.CalibrationData
	return cd != nil && cd.HasNetwork() && m != nil && s.Communication.Algorithm.NCCLModel()
}

// CalibrationUse is the calibration file a scenario names
// (communication.calibration, as the scenario names it) and the parts of
// it a run applied, in this order: "network" when it times the
// collectives (networkCalibrated), "compute" when it set the compute or
// the attention efficiency, "memory" when it set the allocator overhead
// (the loader's ComputeEfficiencyFrom, AttentionEfficiencyFrom,
// AllocatorOverheadFrom: a key the scenario sets itself wins over the
// file's).
type CalibrationUse struct {
	File  string
	Parts []string
}

// calibrationUse is s's CalibrationUse under the cost model m, nil
// without a calibration.
func calibrationUse(s *scenarios.Scenario, m *collectives.Model) *CalibrationUse {
	if s.Communication.CalibrationData == nil {
		return nil
	}
	u := &CalibrationUse{File: s.Communication.Calibration, Parts: []string{}}
	if networkCalibrated(s, m) {
		u.Parts = append(u.Parts, "network")
	}
	if t := &s.Training; t.ComputeEfficiencyFrom != "" || t.AttentionEfficiencyFrom != "" {
		u.Parts = append(u.Parts, "compute")
	}
	if s.Memory.AllocatorOverheadFrom != "" {
		u.Parts = append(u.Parts, "memory")
	}
	return u
}

// timing names what times the collectives of s.
func timing(s *scenarios.Scenario, m *collectives.Model, algo collectives.Algo) string {
	if algo == collectives.Tree {
		// kindAlgo: trees only all-reduce.
		if cd := s.Communication.CalibrationData; cd != nil && cd.HasNetwork() {
			return "alpha–beta, not calibrated; all-reduces on the tree, the other collectives on its ring"
		}
		return "alpha–beta; all-reduces on the tree, the other collectives on its ring"
	}
	if m == nil || !s.Communication.Algorithm.NCCLModel() {
		if cd := s.Communication.CalibrationData; cd != nil && cd.HasNetwork() {
			return "alpha–beta, not calibrated"
		}
		return "alpha–beta"
	}
	if c := s.Communication.Calibration; networkCalibrated(s, m) {
		if c == "" {
			c = "a calibration"
		}
		if cal, err := collectives.CalibrationOf(s.Communication.CalibrationData); err == nil {
			c += cal.CurvesUnused(collectives.HardwareOf(s))
		}
		return m.Tuner() + " calibrated by " + c + treeOnly(algo)
	}
	return m.Tuner() + treeOnly(algo)
}

// treeOnly says what an all-reduce-only algorithm leaves to NCCL (kindAlgo).
func treeOnly(algo collectives.Algo) string {
	if algo == collectives.NVLSTree {
		return "; all-reduces on NVLS-tree, the other collectives NCCL's choice as under auto"
	}
	return ""
}

// Replay builds the schedule of s and replays one step on every rank.
func Replay(s *scenarios.Scenario, opt Options) (*Result, error) {
	r, err := replay(s, opt)
	if errors.Is(err, collectives.ErrNoAlgorithm) || errors.Is(err, collectives.ErrCannotRun) {
		// A pin that leaves a collective no algorithm, which the
		// commands refuse at load: the key and the fix as they word it
		// (QA18 M5: the run's error named no key). Only then: the check
		// builds the schedule again (final read R1 F4).
		if perr := CheckPins(s); perr != nil {
			return nil, perr
		}
	}
	return r, err
}

// StepTooLongError is a step whose compute alone runs past sim.MaxTime,
// the range of int64 picoseconds: a rank's compute stream runs its tasks
// one after another, so no replay of it can end. Replay returns it before
// simulating (QA s28 M2: plan --global-batch 1e9 replayed 4,000
// micro-steps for 10 minutes to say "check the link bandwidths").
type StepTooLongError struct {
	// Compute is a lower bound of the step's compute: the compute stream's
	// tasks at the fastest GPU's speed, saturated at sim.MaxTime.
	Compute units.Duration
	// GradAccum and MicroBatch are the step's micro-steps and sequences
	// per micro-step.
	GradAccum, MicroBatch int64
}

func (e *StepTooLongError) Error() string {
	fix := "lower training.grad_accum or training.micro_batch"
	switch {
	case e.GradAccum <= 1 && e.MicroBatch <= 1:
		// Nothing of the batch is left to lower (qauser32 L9: the fix
		// named two keys both at 1): one sequence is too long.
		fix = "one sequence alone runs that long: lower model.seq_len or the model's size"
	case e.GradAccum <= 1:
		fix = "lower training.micro_batch"
	case e.MicroBatch <= 1:
		fix = "lower training.grad_accum"
	}
	return fmt.Sprintf("zero: the step's compute alone (%d micro-steps of %d sequences) runs past %v, the range of int64 picoseconds (%s)",
		e.GradAccum, e.MicroBatch, units.Duration(sim.MaxTime), fix)
}

// checkComputeTime returns a StepTooLongError when compute, the compute
// stream's time of a step at nominal speed, reaches sim.MaxTime at the
// fastest GPU of topo.
func checkComputeTime(s *scenarios.Scenario, compute units.Duration, topo *topology.Topology) error {
	fastest := 1.0
	for r := range s.N() {
		fastest = max(fastest, topo.Speed(r))
	}
	// The executor scales a rank's compute by 1/speed.
	if float64(compute)/fastest < float64(sim.MaxTime) {
		return nil
	}
	return &StepTooLongError{Compute: compute, GradAccum: max(s.Training.GradAccum, 1), MicroBatch: max(s.Training.MicroBatch, 1)}
}

// unitsCompute is a lower bound of a step's compute stream: every
// micro-step runs each unit's forward and backward task on it, one after
// another (Costs' Fwd and Bwd: stage3's and microStep012's Forward and
// Backward tasks), less the context-parallel ring's part, which a rank's
// own links may shorten (ringRows); saturated at sim.MaxTime.
func unitsCompute(costs []LayerCost, ga int64) units.Duration {
	var micro units.Duration
	for _, c := range costs {
		micro = addSat(addSat(micro, max(c.Fwd-c.RingFwd, 0)), max(c.Bwd-c.RingBwd, 0))
	}
	if ga = max(ga, 1); micro > 0 && micro > units.Duration(sim.MaxTime)/units.Duration(ga) {
		return units.Duration(sim.MaxTime)
	}
	return micro * units.Duration(ga)
}

// addSat is a + b for non-negative durations, saturated at sim.MaxTime.
func addSat(a, b units.Duration) units.Duration {
	if a > units.Duration(sim.MaxTime)-b {
		return units.Duration(sim.MaxTime)
	}
	return a + b
}

// replay is Replay.
func replay(s *scenarios.Scenario, opt Options) (*Result, error) {
	if s.Training.MFU > 0 {
		// training.mfu is a target: fit the efficiency on a copy.
		c := *s
		if err := fitMFU(&c); err != nil {
			return nil, err
		}
		s = &c
		opt.Memory = nil // of the scenario before the fit
	}
	// The memory report carries the buffer layouts it used: the schedule
	// takes the same ones instead of building them again.
	mrep := opt.Memory
	if mrep == nil || mrep.ReserveSkipped || mrep.Convention != memory.ConventionZerosim {
		var err error
		if mrep, err = analyze(s, opt.Full, memory.ReserveAll); err != nil {
			return nil, err
		}
	}
	reps := simulatedRanks(s, opt.Full)
	tc := countTasks(s, mrep.Groups)
	if err := checkSize(s, tc, tc.bound(), opt.Full); err != nil {
		return nil, err
	}
	topo, err := topology.Build(s)
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	algo := algoOf[s.Communication.Algorithm]
	model, err := Model(s)
	if err != nil {
		return nil, err
	}
	eng := sim.New()
	// The collectives that start and end at one instant (a step's
	// inter-group all-reduces, the shard groups' phases) settle their
	// rates once (sim.Engine.SetDeferRates): a replay of 1,024 ranks with
	// K = 2 and one slowed GPU, every rank simulated, took 25 s.
	eng.SetDeferRates(true)
	net := &fabricNet{f: collectives.NewFabricOptions(eng, topo, collectives.FabricOptions{NoTraffic: true, Model: model}), topo: topo, algo: algo,
		prep: map[prepKey]*prepared{}}
	// Context parallelism's ring is timed on the replay's fabric: its
	// topology and NCCL model, not built again.
	ring := NewRingNet(s, net.f, model, algo)
	costs, _, err := costsAndPlan(s, ring, opt)
	if err != nil {
		return nil, err
	}
	// Before the schedule is built: at a huge global batch it holds
	// hundreds of thousands of tasks.
	if err := checkComputeTime(s, unitsCompute(costs, s.Training.GradAccum), topo); err != nil {
		return nil, err
	}
	sc, err := buildCosts(s, mrep.Groups, costs)
	if err != nil {
		return nil, err
	}
	if err := checkSize(s, tc, int64(len(sc.Tasks)), opt.Full); err != nil {
		return nil, err
	}
	speed := make([]float64, sc.N)
	var longest units.Duration
	for _, t := range sc.Tasks {
		if !t.Kind.IsComm() {
			longest = max(longest, t.Dur)
		}
	}
	for r := range speed {
		speed[r] = topo.Speed(r)
		if speed[r] == 1 {
			continue
		}
		// The executor scales compute times by 1e6/round-down(speed·1e6).
		ppm := int64(speed[r] * 1_000_000)
		if ppm < 1 {
			return nil, fmt.Errorf("zero: rank %d: gpu speed %g is below 1e-6 (use a speed of at least 0.000001)", r, speed[r])
		}
		if _, err := units.CheckedMulDivCeil(int64(longest), 1_000_000, ppm); err != nil {
			return nil, fmt.Errorf("zero: rank %d: at speed %g a %v task takes longer than %v (use a larger speed)", r, speed[r], longest, units.Duration(math.MaxInt64))
		}
	}
	mev, mnames, mrest, err := bindMemory(sc, mrep)
	if err != nil {
		return nil, err
	}
	if opt.MemoryRank < 0 || opt.MemoryRank >= sc.N {
		return nil, fmt.Errorf("zero: memory rank %d out of range [0, %d)", opt.MemoryRank, sc.N)
	}
	sym := !opt.Full && Symmetric(s)
	if sym {
		// Node 0's ranks stand for every node's (ranks fill GPUs in order).
		net.keep = make([]bool, sc.N)
		for r := range reps {
			net.keep[r] = true
		}
	}
	ex := newExecutor(sc, engineClock{eng}, net, speed, sym, reps)
	// A rank's own ring where its GPU speed or its cp group's links
	// differ (ringattn.go).
	if ex.ring, err = ringRows(s, sc, ring, speed); err != nil {
		return nil, err
	}
	ex.progress = opt.Progress
	if s.Offload.Any() || s.OffloadsActivations() {
		ex.host = newHostNet(eng, s)
	}
	if slow := computeInterference(s); slow > 0 {
		ex.inter = newInterference(ex, reps, slow)
	}
	if slow := collectiveInterference(s); slow > 0 {
		ex.cont = newContention(reps, slow)
	}
	err = ex.run()
	if net.err != nil {
		return nil, net.err // a collective that could not start is the cause of any stall
	}
	if err != nil {
		return nil, err
	}
	res, err := ex.result(s, net, eng.Events(), opt)
	if err != nil {
		return nil, err
	}
	if res.StepTime >= units.Duration(sim.MaxTime) {
		// The engine saturates times that overflow; a step that reaches
		// the limit is not a result.
		return nil, fmt.Errorf("zero: the step runs past %v, the range of int64 picoseconds (check the link bandwidths and latencies)", units.Duration(sim.MaxTime))
	}
	res.Symmetric = sym
	if !opt.Full {
		res.Asymmetry = Asymmetry(s)
	}
	res.Tokens = max(s.Training.MicroBatch, 1) * max(s.Training.GradAccum, 1) * int64(s.Parallelism.DP) * max(s.Model.SeqLen, 1)
	res.Timing = timing(s, model, algo)
	res.Calibration = calibrationUse(s, model)
	res.Warnings = append(res.Warnings, CalibrationWarnings(s)...)
	res.Degraded = s.Cluster.DegradedLinks()
	for _, d := range res.Degraded {
		res.Warnings = append(res.Warnings, fmt.Sprintf("degraded %s link at %s: %s; every collective crossing it runs at its pace", d.Class, d.Where(), d.Change()))
	}
	if res.Straggler != nil {
		st := res.Straggler
		res.Warnings = append(res.Warnings, fmt.Sprintf("straggler: rank %d (compute %v vs the other ranks' median %v) kept the others waiting %v in total", st.Rank, st.Compute, st.MedianCompute, st.Caused))
	}
	res.MemoryModel = mrep
	if res.Host != nil && mrep.Host != nil {
		res.Host.RAMPerNode = mrep.Host.PerNode
	}
	var series []memory.ReservedPoint
	if mrep.AllocSim != nil {
		series = mrep.AllocSim.Series
	}
	res.Memory = ex.memoryTimeline(opt.MemoryRank, mev, mnames, mrest, series)
	if series != nil {
		res.Memory.Outside = mrep.OutsideAllocator()
	}
	res.PeakMemory = make([]int64, sc.N)
	for r := range res.PeakMemory {
		switch {
		case r == opt.MemoryRank:
			res.PeakMemory[r] = res.Memory.Peak
		case r >= ex.reps: // symmetric: rank r's timeline is rank r mod reps's
			res.PeakMemory[r] = res.PeakMemory[r%ex.reps]
		case ex.sameAsPrev(r):
			res.PeakMemory[r] = res.PeakMemory[r-1]
		default:
			res.PeakMemory[r] = ex.peakMemory(r, mev, mrest)
		}
	}
	// The memory model's DeepSpeed gather pool is the same on every rank.
	// A simulated reserved peak (memory.SimulatesReserve) comes from the
	// memory model's timeline order.
	// It is capped at what the simulated allocator could hold
	// (memory.Report.ProfilerPeaksAt).
	if res.ReservedPeak, res.DevicePeak, err = mrep.ProfilerPeaksAt(s, slices.Max(res.PeakMemory)); err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	peak, _ := res.Peak()
	if res.DeviceNeed, err = mrep.DeviceNeedAt(s, peak); err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	if res.Utilization, err = utilization(s, res.StepTime, sc.Costs); err != nil {
		return nil, err
	}
	return res, nil
}

// utilization is the step's throughput and FLOP utilization per GPU. A
// transformer's MFU and HFU count FLOPs in the same convention, the one
// llm-foundry and torchtitan report (ModelFLOPsPerToken: attention over the
// full s², not halved for the causal mask; FlashAttention's backward
// recomputation not counted); HFU adds the forward work checkpointing
// reruns, counted the same way, so HFU ≥ MFU and the two are equal without
// recompute. Other models count the FLOPs the cost model executes (costs,
// the schedule's Costs(s)): HFU all of them, MFU 3× the forward's, each
// sample once however many cp ranks run it (cpCopies).
func utilization(s *scenarios.Scenario, step units.Duration, costs []LayerCost) (Utilization, error) {
	n, err := countFLOPs(s, costs)
	if err != nil {
		return Utilization{}, err
	}
	executed, per, ga := n.executed, n.per, n.ga
	u := Utilize(step, n.tok, n.perStep, per, n.hardware, float64(s.Cluster.PeakBF16))
	if secs, peak := step.Seconds(), float64(s.Cluster.PeakBF16); secs > 0 && peak > 0 {
		u.Executed = float64(executed) * float64(ga) / secs / peak
	}
	if per == 0 && u.HFU > 0 {
		model, err := forwardModelFLOPs(costs, ga)
		if err != nil {
			return Utilization{}, err
		}
		u.MFU, u.FromForward = float64(model)/step.Seconds()/float64(s.Cluster.PeakBF16), true
	}
	// Each sample counted once, not once per cp rank that runs it whole
	// (cpCopies); Executed stays what the rank runs.
	if k := float64(n.copies); k > 1 {
		u.TokensPerGPU, u.MFU, u.HFU = u.TokensPerGPU/k, u.MFU/k, u.HFU/k
	}
	return u, nil
}

// flopCounts are a step's FLOP and token counts per GPU (utilization):
// the FLOPs a micro-step executes, the model FLOPs per token (0 without a
// per-token count), the tokens and hardware FLOPs of a step of ga
// micro-steps, and the tokens of the whole step; copies is cpCopies: how
// many GPUs run each of tok's samples whole.
type flopCounts struct {
	executed, per, ga, tok, hardware, perStep, copies int64
}

// countFLOPs is s's flopCounts under costs, the schedule's Costs(s); an
// overflow of int64 is an error. It needs no replay: Check runs it, so
// that validate refuses what run would.
func countFLOPs(s *scenarios.Scenario, costs []LayerCost) (flopCounts, error) {
	var c flopCalc
	executed, err := sumFLOPs(costs)
	if err != nil {
		return flopCounts{}, err
	}
	per, _, err := modelFLOPsPerToken(s)
	if err != nil {
		return flopCounts{}, err
	}
	// A step runs grad_accum micro-steps, each with these tokens and FLOPs.
	ga := max(s.Training.GradAccum, 1)
	tok := c.Mul(tokensPerGPU(s), ga)
	hardware := c.Mul(executed, ga)
	if per > 0 {
		re, err := recomputedModelFLOPs(s)
		if err != nil {
			return flopCounts{}, err
		}
		hardware = c.Mul(c.Add(c.Mul(per, tokensPerGPU(s)), re), ga)
	}
	copies := cpCopies(s)
	perStep := c.MulDivFloor(tok, int64(s.N()), copies) // N = dp·cp: exact
	if c.Err != nil {
		return flopCounts{}, fmt.Errorf("zero: FLOPs per step overflow: %w", c.Err)
	}
	return flopCounts{executed: executed, per: per, ga: ga, tok: tok, hardware: hardware, perStep: perStep, copies: copies}, nil
}

// forwardModelFLOPs is the model FLOPs of a step of ga micro-steps for a
// model without a per-token count (a bare parameter count, an MLP): 3× the
// forward FLOPs the cost model executes (the backward twice the forward,
// as 6N counts it; recompute not counted). utilization reports MFU by it,
// and a training.mfu target is reached against it.
func forwardModelFLOPs(costs []LayerCost, ga int64) (int64, error) {
	var c flopCalc
	var fwd int64
	for _, l := range costs {
		fwd = c.Add(fwd, l.FwdFLOPs)
	}
	model := c.Mul(3, fwd, ga)
	if c.Err != nil {
		return 0, fmt.Errorf("zero: FLOPs per step overflow: %w", c.Err)
	}
	return model, nil
}

// executedFLOPs is the FLOPs one GPU's micro-step executes under the cost
// model (Costs: forward and backward of every unit, recompute included).
func executedFLOPs(s *scenarios.Scenario) (int64, error) {
	costs, err := Costs(s)
	if err != nil {
		return 0, err
	}
	return sumFLOPs(costs)
}

// sumFLOPs is the forward and backward FLOPs of costs.
func sumFLOPs(costs []LayerCost) (int64, error) {
	var c flopCalc
	var executed int64
	for _, l := range costs {
		executed = c.Add(executed, l.FwdFLOPs, l.BwdFLOPs)
	}
	if c.Err != nil {
		return 0, fmt.Errorf("zero: FLOPs per micro-step overflow: %w", c.Err)
	}
	return executed, nil
}

// recomputedModelFLOPs is the forward work training.recompute reruns in one
// GPU's micro-step, with attention counted as ModelFLOPsPerToken counts it:
// the difference between the executed FLOPs with and without recompute,
// both under an attention kernel that computes the whole s² (eager), so
// that selective and full recompute add their attention unhalved, as
// llm-foundry's HFU does (4·attn_flops_per_seq under activation
// checkpointing: scripts/train/benchmarking/README.md at c90b9b312c64, "HFU").
func recomputedModelFLOPs(s *scenarios.Scenario) (int64, error) {
	if s.Training.Recompute == "" || s.Training.Recompute == scenarios.RecomputeNone {
		return 0, nil
	}
	whole := *s
	whole.Training.Attention = scenarios.AttentionEager
	with, err := executedFLOPs(&whole)
	if err != nil {
		return 0, err
	}
	whole.Training.Recompute = scenarios.RecomputeNone
	without, err := executedFLOPs(&whole)
	if err != nil {
		return 0, err
	}
	return max(with-without, 0), nil
}

// result assembles the Result after a run.
func (e *executor) result(s *scenarios.Scenario, net *fabricNet, events int64, opt Options) (*Result, error) {
	sc := e.sc
	res := &Result{Name: s.Name, Stage: sc.Stage, N: sc.N, K: sc.K, Overlap: sc.Overlap, Schedule: sc, Events: events}
	for i := range sc.Tasks {
		if t := &sc.Tasks[i]; t.IsCompute() {
			res.Compute += t.Dur
		}
	}
	res.Host = e.hostStats()
	for _, t := range e.end {
		res.StepTime = max(res.StepTime, t)
	}
	res.Ranks = make([]RankStats, 0, sc.N)
	for r := 0; r < sc.N; r++ {
		if r >= e.reps {
			st := res.Ranks[r%e.reps]
			st.Rank = r
			res.Ranks = append(res.Ranks, st)
			continue
		}
		if e.sameAsPrev(r) {
			st := res.Ranks[r-1]
			st.Rank = r
			res.Ranks = append(res.Ranks, st)
			continue
		}
		res.Ranks = append(res.Ranks, e.rankStats(r, res.StepTime))
	}
	// Collective instances, in start order (ties: task, group), and the
	// algorithm each collective task ran (taskAlgo), asked once.
	algos := make([]ranAlgo, len(sc.Tasks))
	for t, task := range sc.Tasks {
		if task.Kind.IsComm() {
			res.CollectiveCount += int64(groupCount(sc, task.Group))
			algos[t] = e.taskAlgo(net, t)
		}
	}
	if !opt.NoCollectives && (opt.MaxCollectives <= 0 || res.CollectiveCount <= int64(opt.MaxCollectives)) {
		res.Collectives = e.records(net, algos, int(res.CollectiveCount))
	}
	// Bytes per phase: logical and exact per rank from the schedule (every
	// rank runs every task), wire bytes from the fabric.
	var scratch [][topology.NumClasses]int64
	for ph := Phase(1); ph < numPhases; ph++ {
		pb := PhaseBytes{Phase: ph}
		for ti, t := range sc.Tasks {
			if t.Phase != ph || !t.Kind.IsComm() {
				continue
			}
			n := len(e.groups[t.Group][0])
			pb.Logical += Logical(t.Kind, t.Bytes)
			v, err := collectives.RankVolume(opOf[t.Kind], units.Bytes(t.Bytes), n)
			if err != nil {
				return nil, fmt.Errorf("zero: %s of %d B over %d ranks: %w", t.Kind, t.Bytes, n, err)
			}
			pb.Sent += int64(v)
			pb.Collectives++
			if t.Group == GroupEPRail || t.Group == GroupEPNode {
				pb.Dispatcher = s.Communication.MoEDispatcher
			}
			if a := algos[ti]; a.ok {
				pb.Algos = addAlgo(pb.Algos, a.algo, 1)
			}
		}
		if pb.Collectives == 0 {
			continue
		}
		if scratch == nil {
			scratch = make([][topology.NumClasses]int64, net.sentRanks())
		}
		wire, most, err := net.phaseWire(ph, scratch)
		if err != nil {
			return nil, err
		}
		pb.Wire, pb.MaxRankWire = wire, most
		res.Phases = append(res.Phases, pb)
	}
	// Context parallelism's ring runs inside the blocks' compute (its time
	// is theirs): its bytes come from the schedule's costs and the cp
	// groups' placement.
	if pb, ok, err := ringPhase(sc, net.f, net.algo); err != nil {
		return nil, err
	} else if ok {
		res.Phases = append(res.Phases, pb)
	}
	res.CriticalPath = e.criticalPath()
	res.Straggler = e.straggler(res.Ranks)
	res.Latency = e.latencyTerm(net, res.Busiest().Rank)
	if opt.KeepSpans {
		n := sc.N
		if opt.SpanRanks > 0 {
			n = min(n, opt.SpanRanks)
		}
		for r := 0; r < n; r++ {
			res.Spans = append(res.Spans, e.spans(r))
		}
		if opt.SpanNotable {
			for _, r := range res.Notable() {
				if r >= n {
					if res.NotableSpans == nil {
						res.NotableSpans = map[int][]Span{}
					}
					res.NotableSpans[r] = e.spans(r)
				}
			}
		}
	}
	return res, nil
}

// records lists every collective instance, count of them, in start order
// (ties: task, group). The symmetric run lowers the simulated ranks' groups only, whose
// copies run the same algorithm and, through their members' representatives,
// at the same times.
func (e *executor) records(net *fabricNet, algos []ranAlgo, count int) []CollectiveRecord {
	sc := e.sc
	rs := make([]CollectiveRecord, 0, count)
	for t, task := range sc.Tasks {
		if !task.Kind.IsComm() {
			continue
		}
		same := algos[t].algo
		for g, m := range e.groups[task.Group] {
			i := e.at(m[0], int32(t))
			algo := same
			if pr := net.prep[prepKey{task.Kind, task.Group, g, task.Bytes}]; pr != nil {
				algo = pr.p.Plan().Algo
			}
			rs = append(rs, CollectiveRecord{Task: int32(t), Kind: task.Kind, Phase: task.Phase,
				Group: task.Group, GroupIndex: g, Ranks: len(m), Bytes: task.Bytes, Algo: algo, Start: e.start[i], End: e.end[i]})
		}
	}
	sortRecords(rs)
	return rs
}

// ranAlgo is the algorithm a collective task ran; ok is false when no
// instance of it was lowered.
type ranAlgo struct {
	algo collectives.Algo
	ok   bool
}

// taskAlgo is the algorithm collective task t ran: its first lowered
// group instance's (the one holding rank 0 when it ran), which the
// symmetric run's copies share.
func (e *executor) taskAlgo(net *fabricNet, t int) ranAlgo {
	task := e.sc.Tasks[t]
	for _, g := range e.touched[task.Group] {
		if pr := net.prep[prepKey{task.Kind, task.Group, g, task.Bytes}]; pr != nil {
			return ranAlgo{pr.p.Plan().Algo, true}
		}
	}
	return ranAlgo{collectives.Auto, false}
}
