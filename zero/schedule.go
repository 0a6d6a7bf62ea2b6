package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Kind is what a task does.
type Kind uint8

// Task kinds.
const (
	Forward Kind = iota
	Backward
	Optimizer
	ReduceScatter
	AllGather
	AllReduce
	numKinds
)

var kindNames = [...]string{"forward", "backward", "optimizer", "reduce-scatter", "all-gather", "all-reduce"}

func (k Kind) String() string { return kindNames[k] }

// IsComm reports whether k is a collective.
func (k Kind) IsComm() bool { return k >= ReduceScatter }

// Stream is a per-rank queue: tasks on one stream start in issue order.
type Stream uint8

// Streams of a rank. Overlap off puts every task on Compute.
const (
	Compute   Stream = iota
	GradComm         // reduce-scatter / all-reduce of gradients (intra or whole group)
	InterComm        // K > 1: all-reduce of gradient shards across the inter group
	ParamComm        // all-gather of parameters
	numStreams
)

var streamNames = [...]string{"compute", "grad-comm", "inter-comm", "param-comm"}

func (s Stream) String() string { return streamNames[s] }

// GroupKind names the process group a collective runs over.
type GroupKind uint8

// Process groups (topology defines their members).
const (
	GroupNone  GroupKind = iota
	GroupAll             // the dp·cp group of N ranks
	GroupIntra           // the rank's intra group of N/K ranks
	GroupInter           // the rank's inter group of K ranks
)

// Phase labels a collective the way the seeds count communication.
type Phase uint8

// Phases of a step.
const (
	PhaseCompute Phase = iota
	PhaseForwardAG
	PhaseBackwardAG
	PhaseBackwardRS
	PhaseBackwardAR // stage 0 gradient all-reduce, or seed 001's all-reduce ZeRO-1
	PhaseInterAR    // K > 1: all-reduce of shards across the inter group
	PhasePostOptAG
	numPhases
)

var phaseNames = [...]string{"compute", "forward all-gather", "backward all-gather", "backward reduce-scatter",
	"backward all-reduce", "inter-group all-reduce", "post-optimizer all-gather"}

func (p Phase) String() string { return phaseNames[p] }

// Task is one unit of work in a rank's step. Every rank runs the same task
// list; compute durations are scaled by the rank's GPU speed and collectives
// are joined by the members of the rank's group.
type Task struct {
	Kind   Kind
	Stream Stream
	Phase  Phase
	Unit   int // layer / FSDP unit for compute and ZeRO-3 gathers; -1 otherwise
	Bucket int // gradient or parameter bucket; -1 otherwise
	Dur    units.Duration
	Group  GroupKind
	Bytes  int64 // collective size S (full buffer) in bytes
	// After lists tasks that must have ended; AfterStart tasks that must
	// have started (prefetch issues a gather when an earlier unit starts).
	After      []int32
	AfterStart []int32
}

// Schedule is the task template of one training step.
type Schedule struct {
	Stage, N, K int
	Overlap     bool
	Tasks       []Task
	// Order lists each stream's tasks in issue order; Cap is how many of a
	// stream's tasks may run at once (ZeRO-3's cap on all-gathers in flight).
	Order  [numStreams][]int32
	Cap    [numStreams]int
	Layout *memory.Layout
	Costs  []LayerCost
	// OptElems is the number of elements each rank's optimizer updates.
	OptElems int64
}

// paramBytes is the size of a bf16 parameter or gradient element.
const paramBytes = 2

// LayoutFor builds the gradient/parameter buffer layout the replay uses for
// s: one bucket per unit for ZeRO-3, buckets of bucket_size otherwise; shards
// over the intra group (N/K ranks) for stages 1–3, none for stage 0.
func LayoutFor(s *scenarios.Scenario) (*memory.Layout, error) {
	pad, err := memory.ParsePadding(s.Communication.Padding)
	if err != nil {
		return nil, err
	}
	k := max(s.Parallelism.K, 1)
	shards := s.N() / k
	if s.Parallelism.Stage == 0 {
		shards = 1
	}
	spec := memory.LayoutSpec{Shards: shards, Padding: pad}
	for i, l := range s.Model.LayerList {
		spec.Params = append(spec.Params, memory.Param{Name: l.Name, Numel: int64(l.Params), Unit: i})
	}
	if s.Parallelism.Stage == 3 {
		spec.PerUnit = true
	} else {
		spec.BucketElems = int64(s.Communication.BucketSize) / paramBytes
	}
	return memory.NewLayout(spec)
}

// Build makes the step schedule of s.
func Build(s *scenarios.Scenario) (*Schedule, error) {
	costs, err := Costs(s)
	if err != nil {
		return nil, err
	}
	lay, err := LayoutFor(s)
	if err != nil {
		return nil, fmt.Errorf("zero: layout: %w", err)
	}
	k := max(s.Parallelism.K, 1)
	sc := &Schedule{Stage: s.Parallelism.Stage, N: s.N(), K: k, Layout: lay, Costs: costs, Overlap: true}
	if s.Communication.Overlap != nil {
		sc.Overlap = *s.Communication.Overlap
	}
	b := &builder{sc: sc, s: s}
	if sc.Stage == 3 {
		err = b.stage3()
	} else {
		err = b.stage012()
	}
	if err != nil {
		return nil, err
	}
	for st := range sc.Cap {
		sc.Cap[st] = 1
	}
	if sc.Stage == 3 {
		sc.Cap[ParamComm] = max(s.Communication.MaxInflightAllGathers, 1)
	}
	for i, t := range sc.Tasks {
		st := t.Stream
		if !sc.Overlap {
			st = Compute
			sc.Tasks[i].Stream = Compute
		}
		sc.Order[st] = append(sc.Order[st], int32(i))
	}
	if !sc.Overlap {
		sc.Cap[ParamComm] = 1
	}
	return sc, nil
}

type builder struct {
	sc *Schedule
	s  *scenarios.Scenario
}

func (b *builder) add(t Task) int32 {
	b.sc.Tasks = append(b.sc.Tasks, t)
	return int32(len(b.sc.Tasks) - 1)
}

// unitRange returns the first and last unit whose parameters lie in bucket i.
func unitRange(l *memory.Layout, i int) (lo, hi int) {
	bk := l.Buckets[i]
	return l.Params[bk.FirstParam].Unit, l.Params[bk.LastParam].Unit
}

func (b *builder) optimizer(after []int32, elems int64) error {
	d, err := OptimizerTime(b.s, elems)
	if err != nil {
		return err
	}
	b.sc.OptElems = elems
	b.add(Task{Kind: Optimizer, Stream: Compute, Phase: PhaseCompute, Unit: -1, Bucket: -1, Dur: d, After: after})
	return nil
}

// gradSync adds the gradient collectives of one bucket (or unit) after task
// ready and returns the task that ends them.
func (b *builder) gradSync(bucket, unit int, bytes int64, ready int32) int32 {
	sc := b.sc
	shardBytes := bytes / int64(sc.N/sc.K)
	switch {
	case sc.Stage == 0 || b.s.Communication.Zero1AllReduce:
		return b.add(Task{Kind: AllReduce, Stream: GradComm, Phase: PhaseBackwardAR, Unit: unit, Bucket: bucket,
			Group: GroupAll, Bytes: bytes, After: []int32{ready}})
	case sc.K == 1:
		return b.add(Task{Kind: ReduceScatter, Stream: GradComm, Phase: PhaseBackwardRS, Unit: unit, Bucket: bucket,
			Group: GroupIntra, Bytes: bytes, After: []int32{ready}})
	default:
		rs := b.add(Task{Kind: ReduceScatter, Stream: GradComm, Phase: PhaseBackwardRS, Unit: unit, Bucket: bucket,
			Group: GroupIntra, Bytes: bytes, After: []int32{ready}})
		return b.add(Task{Kind: AllReduce, Stream: InterComm, Phase: PhaseInterAR, Unit: unit, Bucket: bucket,
			Group: GroupInter, Bytes: shardBytes, After: []int32{rs}})
	}
}

// stage012 is DDP (stage 0) and the distributed optimizer (stages 1, 2):
// bucketed gradient reduction launched as buckets fill during backward, the
// (sharded) optimizer, and the parameter all-gather after it — or, with
// overlap_param_gather, at the start of the step overlapped with forward.
func (b *builder) stage012() error {
	sc, lay := b.sc, b.sc.Layout
	L := len(sc.Costs)
	nb := len(lay.Buckets)
	overlapAG := sc.Stage > 0 && b.s.Communication.OverlapParamGather && sc.Overlap
	// Parameter all-gathers at the step start (pre-hook pipeline, seed 000).
	agFirst := make([][]int32, L) // unit → all-gathers it waits for
	if overlapAG {
		for i := 0; i < nb; i++ {
			lo, hi := unitRange(lay, i)
			t := b.add(Task{Kind: AllGather, Stream: ParamComm, Phase: PhasePostOptAG, Unit: -1, Bucket: i,
				Group: GroupIntra, Bytes: lay.Buckets[i].Size * paramBytes})
			for u := lo; u <= hi; u++ {
				agFirst[u] = append(agFirst[u], t)
			}
		}
	}
	for u := 0; u < L; u++ {
		b.add(Task{Kind: Forward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Fwd, After: agFirst[u]})
	}
	// Buckets become ready when the backward of their first unit is done.
	readyAt := make([][]int, L)
	for _, i := range lay.ReduceOrder() {
		lo, _ := unitRange(lay, i)
		readyAt[lo] = append(readyAt[lo], i)
	}
	var synced []int32
	for u := L - 1; u >= 0; u-- {
		bw := b.add(Task{Kind: Backward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Bwd})
		for _, i := range readyAt[u] {
			synced = append(synced, b.gradSync(i, -1, lay.Buckets[i].Size*paramBytes, bw))
		}
	}
	elems := lay.Size
	if sc.Stage > 0 {
		elems = lay.ShardElems()
	}
	if err := b.optimizer(synced, elems); err != nil {
		return err
	}
	opt := int32(len(sc.Tasks) - 1)
	if sc.Stage > 0 && !overlapAG {
		for i := 0; i < nb; i++ {
			b.add(Task{Kind: AllGather, Stream: ParamComm, Phase: PhasePostOptAG, Unit: -1, Bucket: i,
				Group: GroupIntra, Bytes: lay.Buckets[i].Size * paramBytes, After: []int32{opt}})
		}
	}
	return nil
}

// stage3 is ZeRO-3 / FSDP: gather–compute–flush per unit in forward and
// backward with prefetch depth d, reduce-scatter of each unit's gradients in
// backward, and no post-optimizer all-gather (seed 002).
func (b *builder) stage3() error {
	sc, lay := b.sc, b.sc.Layout
	L := len(sc.Costs)
	d := 1
	if b.s.Communication.PrefetchDepth != nil {
		d = *b.s.Communication.PrefetchDepth
	}
	unitBytes := func(u int) int64 { return lay.Buckets[u].Size * paramBytes }
	fwd := make([]int32, L)
	for u := 0; u < L; u++ {
		ag := Task{Kind: AllGather, Stream: ParamComm, Phase: PhaseForwardAG, Unit: u, Bucket: u, Group: GroupIntra, Bytes: unitBytes(u)}
		switch {
		case d == 0 && u > 0:
			ag.After = []int32{fwd[u-1]}
		case d > 0 && u-d >= 0:
			ag.AfterStart = []int32{fwd[u-d]}
		}
		t := b.add(ag)
		fwd[u] = b.add(Task{Kind: Forward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Fwd, After: []int32{t}})
	}
	bwd := make([]int32, L)
	var synced []int32
	for u := L - 1; u >= 0; u-- {
		ag := Task{Kind: AllGather, Stream: ParamComm, Phase: PhaseBackwardAG, Unit: u, Bucket: u, Group: GroupIntra, Bytes: unitBytes(u)}
		switch {
		case u+max(d, 1) >= L:
			ag.After = []int32{fwd[L-1]}
		case d == 0:
			ag.After = []int32{bwd[u+1]}
		default:
			ag.AfterStart = []int32{bwd[u+d]}
		}
		t := b.add(ag)
		bwd[u] = b.add(Task{Kind: Backward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Bwd, After: []int32{t}})
		synced = append(synced, b.gradSync(u, u, unitBytes(u), bwd[u]))
	}
	return b.optimizer(synced, lay.ShardElems())
}
