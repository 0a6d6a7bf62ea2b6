package zero

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Limits on the size of a replay, so that every scenario that passes them
// loads and replays in under 10 s and 2 GB on one core. The replay is linear
// in its task instances (BenchmarkReplayUnits and BenchmarkReplayBuckets fit
// the exponent of CPU time against tasks: 1.01 over 1k–30k units, 1.00 over
// 10–250,000 buckets). Measured on this project's shared 2-core machine
// with GOMAXPROCS=1: the worst input within the limits, a 3.3 MB file of
// 104,800 ZeRO-3 units on 16 GPUs (524,001 tasks per rank), takes 7.6 s of
// CPU and 1.58 GB peak RSS for `zerosim run` (loading the file is 4 s of
// it; the replay alone 3.1 s, BenchmarkReplayLargest/units-zero3); 174,000
// ZeRO-2 buckets with K = 2 on 16 GPUs replay in 3.0 s and 1.25 GB; 8,001
// tasks on 1,024 ranks in 1.0 s and 0.24 GB (BenchmarkReplayWide). Twice
// these limits (2^20, 2^24) took 11.6 s and 2.45 GB. They count tasks, not
// contention: a full replay with K > 1, whose inter-group all-reduces and
// shard groups' collectives share every NIC, re-rates its contended flows
// once per instant at which some start or end (sim.Engine.SetDeferRates;
// `zerosim run gpt3-175b-16k --full`, GPT-3 175B, ZeRO-3, every rank: 4,096
// ranks at K = 2 in 0.9 s, 8,192 at K = 4 in 1.4 s, where each start
// re-rating them took 8.3 s and, at c95fabd, 27.2 s; docs/performance.md,
// "Since: contended fabrics" and "Since: one re-rating per instant").
const (
	// MaxTasks bounds the tasks of one step's schedule (computations and
	// collectives of one rank).
	MaxTasks = 1 << 19
	// MaxTaskInstances bounds the tasks times the ranks simulated (every
	// rank, or node 0's in the symmetric run): 16,384 ranks × 488 tasks
	// (GPT-3 175B, ZeRO-3, every rank) is 8.0 M.
	MaxTaskInstances = 1 << 23
)

// taskCount is the shape of a schedule's task count: per unit a forward
// and a backward (and ZeRO++'s kernels and all-to-alls, offload's copies), per bucket its collectives (stage 0 an all-reduce; stages
// 1–2 a reduce-scatter and a gather; stage 3 a gather in forward and in
// backward and a reduce-scatter; with K > 1 one more all-reduce across the
// instances), and the optimizer. With gradient accumulation the units'
// tasks repeat every micro-step, and so do the buckets' where every
// micro-step reduces (scenarios.Scenario.GradSyncEvery, the schedule's own rule);
// elsewhere they reduce once. Stage 3's gathers repeat every micro-step
// whether it reduces or not, and so do FSDP's stage-2 regathers.
type taskCount struct {
	units, buckets, perBucket, perUnit int64
	// a2a is the expert-parallel all-to-alls of a micro-step: four per
	// unit of routed experts (dispatch and combine, forward and backward),
	// two more where full recompute reruns its forward (recomputeA2A).
	a2a    int64
	stage3 bool
	// micro is the micro-steps per step, bucketMicro how many of them run
	// the buckets' gradient collectives (perBucket); gatherMicro how many
	// run the buckets' per-micro-step gathers (perGather: stage 3's, in
	// every micro-step whether it reduces or not, and FSDP's stage 2's
	// regathers, counted by regathersAt, the schedule's own rule).
	micro, bucketMicro, gatherMicro, perGather int64
	// pieces bounds the forward tasks a unit's first forward adds when it
	// runs in pieces (paramChain.forward).
	pieces int64
}

func countTasks(s *scenarios.Scenario, groups []memory.GroupInfo) taskCount {
	c := taskCount{units: int64(len(s.Model.LayerList)), stage3: s.Parallelism.Stage == 3, perUnit: 2,
		micro: s.Training.GradAccum, bucketMicro: 1}
	if s.GradSyncEvery() {
		c.bucketMicro = c.micro
	}
	c.perBucket = map[int]int64{0: 1, 1: 2, 2: 2, 3: 1}[s.Parallelism.Stage]
	if c.stage3 {
		c.gatherMicro, c.perGather = c.micro, 2 // forward and backward
	} else {
		// FSDP's stage-2 regathers: the schedule's own rule, micro-step
		// by micro-step (FSDP1 regathers only after a reducing backward).
		for m := range c.micro {
			if regathersAt(s, int(m)) {
				c.gatherMicro++
			}
		}
		c.perGather = 1
	}
	if s.Parallelism.K > 1 {
		c.perBucket++
	}
	cm := &s.Communication
	if cm.ZeroQuantizedWeights {
		c.perGather += 2 // a quantize kernel before each gather
		c.perUnit += 2   // a dequantize after the unit's gathers, per pass
	}
	if cm.ZeroQuantizedGradients {
		c.perUnit += 5 // qgZ: three kernels and two all-to-alls
	}
	if s.OffloadsActivations() {
		c.perUnit += 2 // activation offloading: a block's copy down and its reload (actoffload.go)
	}
	if s.Offload.Any() {
		c.perBucket++  // the gradient shard copied down
		c.perUnit += 2 // the parameters copied up, and a copy down per unit
	}
	for _, g := range groups {
		c.buckets += int64(g.Buckets)
	}
	if !c.stage3 && cm.OverlapParamGather && !memory.FSDPStage2(s) {
		// Megatron-Core's overlapped gather: the first forward's pieces,
		// at most one more per bucket (paramChain.forward).
		c.pieces = c.buckets
	}
	if per := int64(len(epPhases(s))); per > 0 {
		// Each dispatch and combine is per all-to-alls (epPhases, as
		// a2aAfter adds them): forward and backward, and the rerun
		// forward's under full recompute, and under op where its save
		// list does not hold them (rerunsA2A).
		policy := memory.UnitPolicies(s)
		for u, l := range s.Model.LayerList {
			if !expertA2A(l) {
				continue
			}
			c.a2a += 4 * per
			if rerunsA2A(s, policy[u]) {
				c.a2a += 2 * per
			}
		}
	}
	return c
}

// bound is an upper bound of the schedule's tasks.
func (c taskCount) bound() int64 {
	return c.micro*(c.perUnit*c.units+c.a2a) + (c.bucketMicro*c.perBucket+c.gatherMicro*c.perGather)*c.buckets + c.pieces + 8
}

// checkSize refuses a replay of tasks tasks (per rank) on reps simulated
// ranks over the limits, with the bucket size (or layer count) that brings
// it within them.
func checkSize(s *scenarios.Scenario, c taskCount, tasks int64, full bool) error {
	if n := s.N() / max(s.Cluster.GPUsPerNode, 1); s.Communication.ZeroQuantizedGradients && n > collectives.MaxAllToAllRanks {
		// qgZ's second all-to-all is over a rank of each node (GroupRail).
		return fmt.Errorf("zero: communication.zero_quantized_gradients: qgZ's inter-node all-to-all runs over one rank per node, %d here, more than the %d ranks an all-to-all is lowered over (use at most %d nodes, or drop qgZ)",
			n, collectives.MaxAllToAllRanks, collectives.MaxAllToAllRanks)
	}
	if withinLimits(s, tasks, full) {
		return nil
	}
	reps := simulatedRanks(s, full)
	limit := taskLimit(reps)
	what := fmt.Sprintf("%d tasks per rank, more than the %d", tasks, int64(MaxTasks))
	if tasks <= MaxTasks {
		what = fmt.Sprintf("%d tasks on each of %d simulated ranks, %d in all, more than the %d", tasks, reps, tasks*int64(reps), int64(MaxTaskInstances))
	}
	// Every unit keeps a forward and a backward, and at stage 3 at least one
	// bucket of its own; the rest shrinks with larger buckets.
	perUnit := c.perUnit * c.micro
	if c.stage3 {
		perUnit += c.perBucket*c.bucketMicro + c.perGather*c.gatherMicro
	}
	fixed := perUnit*c.units + 8
	var hints []string
	if room := (limit - fixed) * 9 / 10; room > 0 && c.buckets > 0 {
		hints = append(hints, fmt.Sprintf("use a communication.bucket_size of at least %d B", suggestBucket(s, 2*int64(s.Communication.BucketSize), full)))
	} else if n := (limit - 8) / perUnit * 9 / 10; n >= 1 {
		hints = append(hints, fmt.Sprintf("use at most %d layers", n))
	}
	if c.micro > 1 {
		hints = append(hints, "use fewer accumulation steps (training.grad_accum) with a larger micro_batch")
	}
	if tasks <= MaxTasks {
		n := int64(MaxTaskInstances) / tasks
		switch {
		case full:
			hints = append(hints, fmt.Sprintf("use at most %d ranks, or drop --full", n))
		case Symmetric(s):
			hints = append(hints, fmt.Sprintf("use at most %d GPUs per node", n))
		default:
			hints = append(hints, fmt.Sprintf("use at most %d ranks: every rank is simulated because %s", n, Asymmetry(s)))
		}
	}
	return &LimitError{fmt.Errorf("zero: the step has %s a replay handles in 10 s and 2 GB (%s)", what, strings.Join(hints, ", or "))}
}

// taskLimit is the most tasks per rank a replay of reps ranks may have.
func taskLimit(reps int) int64 { return min(int64(MaxTasks), int64(MaxTaskInstances)/int64(reps)) }

// withinLimits reports whether tasks tasks per rank are within the limits.
func withinLimits(s *scenarios.Scenario, tasks int64, full bool) bool {
	return tasks <= taskLimit(simulatedRanks(s, full))
}

// suggestBucket returns the smallest of least, 2·least, 4·least, … whose
// step passes memory.MaxBuckets and the task limits, at s's stage and K
// and at every other stage 0–2, at K = 1 and at N's least K > 1 (one more
// collective per bucket), so that the size an error suggests replays in
// every row that memory, fit and plan try, not only at s's stage: memory's
// stage 0 of the default scenario needs 51412 B and run's stage 2, two
// collectives per bucket, 102824 B (qa19 M5). A layout that s's model
// does not run at all (ZeRO++ below stage 3, an ep that K does not divide)
// is left out, and so is stage 3, which no bucket size changes (allLayouts).
func suggestBucket(s *scenarios.Scenario, least int64, full bool) int64 {
	kmin := 1
	for k := 2; k <= s.N(); k++ {
		if s.N()%k == 0 {
			kmin = k
			break
		}
	}
	b := max(least, 1)
	for ; b < 1<<50; b *= 2 {
		if bucketReplays(s, b, full, s.Parallelism.Stage, s.Parallelism.K, true) && allLayouts(s, b, full, kmin) {
			break
		}
	}
	return b
}

// allLayouts reports whether bucket size b replays at every stage 0–2, K =
// 1 and K = kmin, that s's model analyzes at all. Stage 3 is left out: it
// lays out one bucket per unit (memory.StageSpec's PerUnit), so no bucket
// size changes its buckets or tasks, and a stage 3 over the task limits
// (1,000 units × 128 micro-steps) made the advice double to 2^50 and
// advise 2204520813690880 B for a stage-2 scenario that 1,026,560 B runs.
func allLayouts(s *scenarios.Scenario, b int64, full bool, kmin int) bool {
	for st := 0; st <= 2; st++ {
		for _, k := range []int{1, kmin} {
			if !bucketReplays(s, b, full, st, k, false) {
				return false
			}
		}
	}
	return true
}

// bucketReplays reports whether s at stage st and K k with bucket size b
// passes memory.MaxBuckets and the task limits; a layout the memory model
// refuses for another reason passes unless own (s's own layout).
func bucketReplays(s *scenarios.Scenario, b int64, full bool, st, k int, own bool) bool {
	c := *s
	c.Communication.BucketSize = units.Bytes(b)
	c.Parallelism.Stage, c.Parallelism.K = st, k
	m, err := memory.Analyze(&c, memory.Options{Reserve: memory.ReserveNone})
	var tb *memory.TooManyBucketsError
	switch {
	case errors.As(err, &tb):
		return false
	case err != nil:
		return !own
	}
	return withinLimits(&c, countTasks(&c, m.Groups).bound(), full)
}

// LimitError is a step over a replay's limits (memory.MaxBuckets,
// MaxTasks, MaxTaskInstances); its text names the fix. A search over model
// sizes takes it for the end of what zerosim replays, not for bad input.
type LimitError struct{ err error }

func (e *LimitError) Error() string { return e.err.Error() }
func (e *LimitError) Unwrap() error { return e.err }

// AdviseBucket is err with a memory.TooManyBucketsError (memory.Analyze's
// of s) replaced by a LimitError whose bucket size also meets the task
// limits of s's replay at that stage, the size run suggests, so that every
// command advises one size and run accepts it (memory's bare Least, 51412 B
// for the default scenario at stage 0, makes 524346 tasks per rank, which
// run refuses); any other err is returned as it is.
func AdviseBucket(s *scenarios.Scenario, err error) error {
	return adviseBucket(s, err, false)
}

func adviseBucket(s *scenarios.Scenario, err error, full bool) error {
	var tb *memory.TooManyBucketsError
	if !errors.As(err, &tb) {
		return err
	}
	c := *s
	c.Parallelism.Stage = tb.Stage
	t := *tb
	t.Least = suggestBucket(&c, tb.Least, full)
	return &LimitError{fmt.Errorf("zero: %w", &t)}
}

// analyze runs the memory model for a replay, working out its profiler
// view as far as reserve asks (memory.Options.Reserve); a bucket size over
// memory.MaxBuckets is refused with a size that also meets the task limits.
func analyze(s *scenarios.Scenario, full bool, reserve memory.ReserveLevel) (*memory.Report, error) {
	mrep, err := memory.Analyze(s, memory.Options{Reserve: reserve})
	var tb *memory.TooManyBucketsError
	if errors.As(err, &tb) {
		return nil, adviseBucket(s, err, full)
	}
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	return mrep, nil
}

// simulatedRanks is how many ranks a replay of s simulates.
func simulatedRanks(s *scenarios.Scenario, full bool) int {
	if !full && Symmetric(s) {
		return min(s.Cluster.GPUsPerNode, s.N())
	}
	return s.N()
}

// Check reports whether s can be replayed within the limits (MaxTasks,
// MaxTaskInstances, memory.MaxBuckets) without replaying it: zerosim
// validate runs it, so a scenario that validates also runs.
func Check(s *scenarios.Scenario) error {
	// All of the model, so that what fails a replay's analysis fails here.
	mrep, err := analyze(s, false, memory.ReserveAll)
	if err != nil {
		return err
	}
	c := countTasks(s, mrep.Groups)
	if err := checkSize(s, c, c.bound(), false); err != nil {
		return err
	}
	sc, err := build(s, mrep.Groups, nil)
	if err != nil {
		return err
	}
	// What Replay refuses before it builds the schedule: a step whose
	// compute alone outlasts int64 picoseconds (validate passed a layer
	// list of explicit fwd and bwd times whose 4,096 micro-steps run
	// refused).
	topo, err := topology.Build(s)
	if err != nil {
		return fmt.Errorf("zero: %w", err)
	}
	if err := checkComputeTime(s, unitsCompute(sc.Costs, s.Training.GradAccum), topo); err != nil {
		return err
	}
	if err := checkSize(s, c, int64(len(sc.Tasks)), false); err != nil {
		return err
	}
	// What the replay computes without replaying (qa22 M3: validate
	// passed a micro-batch whose FLOPs overflow, and a training.mfu whose
	// step does).
	if s.Training.MFU > 0 {
		if _, err := mfuStep(s, s.Training.MFU); err != nil {
			return err
		}
	}
	_, err = countFLOPs(s, sc.Costs)
	return err
}
