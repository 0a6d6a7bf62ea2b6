package zero

import (
	"fmt"
	"slices"

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
	AllToAll // expert-parallel token dispatch or combine; ZeRO++ qgZ's all-to-all (zeropp.go)
	// Quantize is a ZeRO++ quantize or dequantize kernel (zeropp.go): a
	// compute task timed by the HBM roofline.
	Quantize
	// Offload (offload.go): PCIeDown and PCIeUp copy to and from the host,
	// CPUAdam is the optimizer step on the CPU.
	PCIeDown
	PCIeUp
	CPUAdam
	numKinds
)

// kindNames name the kinds in tables, traces and JSON; the copies say
// their direction as run's host line does (qauser32 L8: "pcie down" beside
// "PCIe GPU→host").
var kindNames = [...]string{"forward", "backward", "optimizer", "reduce-scatter", "all-gather", "all-reduce",
	"all-to-all", "quantize", "pcie gpu→host", "pcie host→gpu", "cpu adam"}

// IsHost reports whether k runs on the host side (offload): not GPU time.
func (k Kind) IsHost() bool { return k >= PCIeDown && k <= CPUAdam }

func (k Kind) String() string { return kindNames[k] }

// IsComm reports whether k is a collective.
func (k Kind) IsComm() bool { return k >= ReduceScatter && k <= AllToAll }

// IsCompute reports whether t's time is the compute stream's work in the
// split of a rank's step (RankStats, Exposure, Result.Compute): a GPU task
// that is not a collective, on the Compute stream. ZeRO++'s quantize
// kernels on the communication streams are not (isCommWork): DeepSpeed
// launches qwZ's quantize inside the all-gather stream's context
// (partitioned_param_coordinator.py:610-613) and qgZ's quantize, reduce
// and dequantize inside reduce_and_partition_stream (stage3.py, both at
// deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641, see
// zeropp.go), so a profiler shows them on those streams while the
// compute stream is idle or runs its own kernels: they take SMs, but the
// training's forward and backward do not run in them.
func (t *Task) IsCompute() bool { return !t.Kind.IsComm() && !t.Kind.IsHost() && t.Stream == Compute }

// isCommWork reports whether t's time is communication in that split: a
// collective, or a GPU kernel on a communication stream (ZeRO++'s
// quantize kernels, part of the quantized collective they feed).
func (t *Task) isCommWork() bool {
	return t.Kind.IsComm() || (!t.Kind.IsHost() && t.Stream != Compute)
}

// Stream is a per-rank queue: tasks on one stream start in issue order.
type Stream uint8

// Streams of a rank. Overlap off puts every task on Compute.
const (
	Compute   Stream = iota
	GradComm         // reduce-scatter / all-reduce of gradients (intra or whole group)
	InterComm        // K > 1: all-reduce of gradient shards across the inter group
	ParamComm        // all-gather of parameters
	HostDown         // offload: gradient copies to the host
	HostUp           // offload: parameter copies to the GPU
	HostCPU          // offload: the CPU optimizer
	// EPComm carries a deduplicating MoE dispatcher's node phase beside its
	// rail phase (builder.a2aAfter).
	EPComm
	numStreams
)

var streamNames = [...]string{"compute", "grad-comm", "inter-comm", "param-comm", "pcie-down", "pcie-up", "host-cpu", "ep-comm"}

func (s Stream) String() string { return streamNames[s] }

// GroupKind names the process group a collective runs over.
type GroupKind uint8

// Process groups (topology defines their members).
const (
	GroupNone  GroupKind = iota
	GroupAll             // the dp·cp group of N ranks
	GroupIntra           // the rank's intra group of N/K ranks
	GroupInter           // the rank's inter group of K ranks
	// GroupEP is the rank's expert-parallel group: EP consecutive ranks
	// of its intra group, which split the routed experts between them.
	GroupEP
	// GroupEDP is the rank's expert-data-parallel group: the N/(K·EP)
	// ranks of its intra group holding the same experts (intra positions
	// ≡ the rank's mod EP), over which expert parameters are sharded.
	GroupEDP
	GroupHPZ  // ZeRO++ hpZ: consecutive blocks of Schedule.HPZ ranks
	GroupNode // ZeRO++ qgZ: the ranks of one node (Schedule.Local consecutive ranks)
	GroupRail // ZeRO++ qgZ: the ranks of one local index across nodes
	// GroupEPNode and GroupEPRail split the ep group for a deduplicating
	// MoE dispatcher (dedupBytes): the ranks of the ep group on
	// one node (Schedule.EPNode consecutive ranks), and the ranks of the
	// ep group of one local index, one per node.
	GroupEPNode
	GroupEPRail
	numGroupKinds
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
	PhaseForwardA2A  // expert-parallel dispatch and combine in forward
	PhaseBackwardA2A // their gradients in backward
	// PhaseCPRing is context parallelism's ring attention exchange (k, v
	// all-gathers and dk, dv sends inside each block's attention,
	// ringattn.go): no task of the schedule (its time is in the blocks'),
	// counted by ringPhase.
	PhaseCPRing
	numPhases
)

var phaseNames = [...]string{"compute", "forward all-gather", "backward all-gather", "backward reduce-scatter",
	"backward all-reduce", "inter-group all-reduce", "post-optimizer all-gather", "forward all-to-all", "backward all-to-all",
	"context-parallel ring"}

func (p Phase) String() string { return phaseNames[p] }

// groupNames are the group kinds' names in result.json and the trace:
// intra and inter after Megatron's intra- and inter-instance data-parallel
// groups (the shard group of N/K ranks, which spans nodes when it holds
// more than a node's GPUs, and the K ranks holding the same shard).
var groupNames = [numGroupKinds]string{GroupNone: "none", GroupAll: "all", GroupIntra: "intra", GroupInter: "inter",
	GroupEP: "ep", GroupEDP: "edp", GroupHPZ: "hpz", GroupNode: "node", GroupRail: "rail",
	GroupEPNode: "ep-node", GroupEPRail: "ep-rail"}

func (g GroupKind) String() string {
	if g >= numGroupKinds {
		return fmt.Sprintf("group(%d)", int(g))
	}
	return groupNames[g]
}

// Task is one unit of work in a rank's step. Every rank runs the same task
// list; compute durations are scaled by the rank's GPU speed and collectives
// are joined by the members of the rank's group.
type Task struct {
	Kind   Kind
	Stream Stream
	Phase  Phase
	Unit   int // layer / FSDP unit for compute and ZeRO-3 gathers; -1 otherwise
	// Micro is the micro-step (0 … grad_accum−1) of forward, backward and
	// their collectives; the optimizer and what follows it carry the last.
	Micro  int
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
	// EP is the expert-parallel degree (1 without expert parallelism).
	EP      int
	Overlap bool
	Tasks   []Task
	// Order lists each stream's tasks in issue order; Cap is how many of a
	// stream's tasks may run at once (ZeRO-3's cap on all-gathers in flight).
	Order [numStreams][]int32
	Cap   [numStreams]int
	// Groups are the parameter groups' buffer layouts (memory.BufferLayouts:
	// the one layout code path shared with the memory model and numerics);
	// Buckets lists their communication buckets.
	Groups  []memory.GroupInfo
	Buckets []CommBucket
	Costs   []LayerCost
	// OptElems is the number of elements each rank's optimizer updates.
	// Micro is the number of micro-steps per step (training.grad_accum).
	Micro    int
	OptElems int64
	// ZeRO++ (zeropp.go): HPZ is the hpZ group size (> 1 when hpZ is on),
	// Local the GPUs of a node (qgZ's intra-node stage).
	HPZ, Local int
	// EPNode is the ranks of an ep group on one node, min(EP, Local), when
	// a deduplicating MoE dispatcher splits it (GroupEPNode); 0 otherwise.
	EPNode int
	// GradCommunicator is set when the gradients reduce on a communicator
	// apart from the one the parameters gather on, over the same ranks
	// (memory.GradientCommunicator: DeepSpeed's ZeRO-3).
	GradCommunicator bool
}

// comm is the communicator collective task t runs on over its group
// instance: DeepSpeed ZeRO-3's parameter all-gathers on their own (the
// world group's), everything else on the group's process group.
func (sc *Schedule) comm(t *Task) Comm {
	if sc.GradCommunicator && t.Kind == AllGather {
		return CommParams
	}
	return CommGroup
}

// CommBucket is one bucket of one parameter group's buffer: the unit of
// gradient reduction and parameter all-gather (one per unit at stage 3).
type CommBucket struct {
	Group, Bucket int
	// GradBytes and ParamBytes are the bucket's padded size in bytes of its
	// gradients as they are reduced (memory.GroupInfo.ReduceBytes: fp32
	// under training.reduce_dtype fp32) and of its parameters.
	GradBytes, ParamBytes int64
	// FirstUnit and LastUnit are the units with parameters in the bucket.
	FirstUnit, LastUnit int
}

// GradBytes is the size of all gradient buffers, padding included.
func (sc *Schedule) GradBytes() int64 {
	var t int64
	for _, b := range sc.Buckets {
		t += b.GradBytes
	}
	return t
}

// commBuckets lists the buckets of every group's layout, group by group in
// buffer order.
func commBuckets(groups []memory.GroupInfo) []CommBucket {
	var out []CommBucket
	for g, gi := range groups {
		l := gi.Layout
		for i, bk := range l.Buckets {
			out = append(out, CommBucket{Group: g, Bucket: i,
				GradBytes: bk.Size * gi.ReduceBytes, ParamBytes: bk.Size * gi.ParamBytes,
				FirstUnit: l.Params[bk.FirstParam].Unit, LastUnit: l.Params[bk.LastParam].Unit})
		}
	}
	return out
}

// Build makes the step schedule of s.
func Build(s *scenarios.Scenario) (*Schedule, error) {
	groups, err := memory.BufferLayouts(s)
	if err != nil {
		return nil, fmt.Errorf("zero: %w", err)
	}
	return build(s, groups, nil)
}

// build makes the schedule over the given buffer layouts (Replay passes the
// ones of the memory report it already has), context parallelism's ring
// timed by net (nil: s's topology and model, built if a ring is timed;
// Replay passes the RingNet of its fabric).
func build(s *scenarios.Scenario, groups []memory.GroupInfo, net *RingNet) (*Schedule, error) {
	costs, _, err := costsAndPlan(s, net, Options{})
	if err != nil {
		return nil, err
	}
	return buildCosts(s, groups, costs)
}

// buildCosts is build with the units' costs (costsAndPlan's) given.
func buildCosts(s *scenarios.Scenario, groups []memory.GroupInfo, costs []LayerCost) (*Schedule, error) {
	var err error
	sc := &Schedule{Stage: s.Parallelism.Stage, N: s.N(), K: s.Parallelism.K, EP: s.Parallelism.EP, Groups: groups, Buckets: commBuckets(groups), Costs: costs,
		Overlap: *s.Communication.Overlap, HPZ: 1, Local: s.Cluster.GPUsPerNode, Micro: int(s.Training.GradAccum),
		GradCommunicator: memory.GradientCommunicator(s)}
	if s.Communication.MoEDispatcher.Dedup() && sc.EP > 1 {
		_, sc.EPNode = epSplit(sc.EP, sc.Local)
	}
	// The task list at its size (countTasks' bound, exact but at FSDP's
	// stage 2, within MaxTasks): appended to from empty it grew by 1.25×
	// steps to 5× its bytes, a quarter of a 256-micro-step replay's
	// allocations (BenchmarkStepGA256). Appends past it still grow it.
	sc.Tasks = make([]Task, 0, min(countTasks(s, groups).bound(), MaxTasks+8))
	b := &builder{sc: sc, s: s, host: newHostPlan(s), phases: epPhases(s)}
	if b.actOff, err = newActOffPlan(s); err != nil {
		return nil, err
	}
	if b.a2aBytes, err = a2aBytes(s, b.phases); err != nil {
		return nil, err
	}
	if sc.Stage == 3 {
		err = b.stage3()
	} else {
		err = b.stage012()
	}
	if err != nil {
		return nil, err
	}
	if err := checkNodePhases(sc.Tasks); err != nil {
		return nil, err
	}
	for st := range sc.Cap {
		sc.Cap[st] = 1
	}
	if sc.Stage == 3 {
		sc.Cap[ParamComm] = s.Communication.MaxInflightAllGathers
	}
	for i, t := range sc.Tasks {
		st := t.Stream
		// The ep-comm stream holds the second half of one dispatcher
		// kernel, not communication beside compute: it stays, as do
		// activation offloading's copies, which run on Transformer
		// Engine's own offload stream whatever the collectives' overlap
		// (actoffload.go; DeepSpeed's offload is refused beside it).
		if !sc.Overlap && st != EPComm && (b.actOff == nil || !t.Kind.IsHost()) {
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

// checkNodePhases refuses a schedule where a task that is on neither the
// compute stream nor the ep-comm stream waits for a deduplicating
// dispatcher's node phase alone (a2aAfter): it would not wait for the
// rail phase beside it. The builder never makes one (a model's first and
// last units, whose ends other streams wait for, are not routed experts);
// this holds it to that.
func checkNodePhases(tasks []Task) error {
	for i, t := range tasks {
		if t.Stream == Compute || t.Stream == EPComm {
			continue
		}
		for _, d := range t.After {
			if tasks[d].Stream == EPComm {
				return fmt.Errorf("zero: task %d (%v on %v) waits for the node phase of unit %d's all-to-all and not its rail phase (a schedule bug: please report it)", i, t.Kind, t.Stream, tasks[d].Unit)
			}
		}
	}
	return nil
}

type builder struct {
	sc   *Schedule
	s    *scenarios.Scenario
	host *hostPlan // offload; nil without
	// actOff is activation offloading (actoffload.go); nil without.
	actOff *actOffPlan
	// micro is the micro-step being built; every task added carries it.
	micro int
	// policy is each unit's checkpointing policy (memory.UnitPolicies),
	// set on first use.
	policy []string
	// phases are the all-to-alls of an expert unit's dispatch or combine
	// (epPhases), a2aBytes their bytes per unit.
	phases   []epPhase
	a2aBytes [][]int64
}

func (b *builder) add(t Task) int32 {
	t.Micro = b.micro
	b.sc.Tasks = append(b.sc.Tasks, t)
	return int32(len(b.sc.Tasks) - 1)
}

func (b *builder) optimizer(after []int32, elems int64) error {
	if h := b.host; h != nil {
		var param int64
		for _, g := range b.sc.Groups {
			param += g.ShardElems * g.ParamBytes
		}
		if h.opt != scenarios.OffloadNone {
			_, err := h.step(b, after, elems, param)
			return err
		}
		// offload_param alone: the GPU steps and the shard goes back down.
		if err := b.gpuOptimizer(after, elems); err != nil {
			return err
		}
		_, err := h.gradDown(b, -1, -1, param, []int32{int32(len(b.sc.Tasks) - 1)})
		return err
	}
	return b.gpuOptimizer(after, elems)
}

// offloadGrad adds, with offload_optimizer, the copy of a reduced gradient
// shard (its bucket's bytes / the shard count) to the host after the tasks
// that reduce it, and returns what the optimizer waits for.
func (b *builder) offloadGrad(unit, bucket int, bytes int64, synced []int32) ([]int32, error) {
	if b.host == nil || b.host.opt == scenarios.OffloadNone || len(synced) == 0 {
		return synced, nil
	}
	t, err := b.host.gradDown(b, unit, bucket, bytes/int64(b.sc.N/b.sc.K), synced)
	if err != nil {
		return nil, err
	}
	return []int32{t}, nil
}

func (b *builder) gpuOptimizer(after []int32, elems int64) error {
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
	shard, size := b.shardGroup(bucket)
	shardBytes := bytes / int64(size)
	all := GroupAll
	if shard == GroupEDP {
		all = GroupEDP // with ep > 1, k = 1 (scenarios checks): the expert data-parallel group spans N
	}
	switch {
	case sc.N == 1 || shard == GroupEDP && size == 1 && sc.K == 1:
		return ready // nothing to reduce: one rank, or every rank holds other experts
	case sc.Stage == 0 || b.s.Communication.Zero1AllReduce:
		return b.add(Task{Kind: AllReduce, Stream: GradComm, Phase: PhaseBackwardAR, Unit: unit, Bucket: bucket,
			Group: all, Bytes: bytes, After: []int32{ready}})
	case size == 1:
		// One rank per intra group (K = N): nothing to reduce-scatter, only
		// the all-reduce across the inter group (plain data parallelism).
		return b.add(Task{Kind: AllReduce, Stream: InterComm, Phase: PhaseInterAR, Unit: unit, Bucket: bucket,
			Group: GroupInter, Bytes: shardBytes, After: []int32{ready}})
	case sc.K == 1:
		return b.add(Task{Kind: ReduceScatter, Stream: GradComm, Phase: PhaseBackwardRS, Unit: unit, Bucket: bucket,
			Group: shard, Bytes: bytes, After: []int32{ready}})
	default:
		rs := b.add(Task{Kind: ReduceScatter, Stream: GradComm, Phase: PhaseBackwardRS, Unit: unit, Bucket: bucket,
			Group: shard, Bytes: bytes, After: []int32{ready}})
		return b.add(Task{Kind: AllReduce, Stream: interStream(b.s), Phase: PhaseInterAR, Unit: unit, Bucket: bucket,
			Group: GroupInter, Bytes: shardBytes, After: []int32{rs}})
	}
}

// interStream is the stream of the all-reduce across the inter group that
// follows a reduce-scatter at K > 1. FSDP2 runs HSDP's all-reduce on its
// own all_reduce_stream, "concurrently with all-gather/reduce-scatter"
// (FSDPCommContext.lazy_init, torch/distributed/fsdp/_fully_shard/
// _fsdp_param_group.py at pytorch/pytorch
// 002a76fbfea0ac0f199e4b8e2a0691074796c908): InterComm, beside the next
// reduce-scatter. Megatron's distributed optimizer with
// num_distributed_optimizer_instances > 1 issues both synchronously on one
// communication stream, the all-reduce after the reduce-scatter and the
// next bucket's reduce-scatter after both ("Comm. Stream: ---(wait for
// NCCL)-----(wait for NCCL)--- / NCCL Stream: ---RS--- ---AR---",
// start_grad_sync, megatron/core/distributed/param_and_grad_buffer.py
// :309-381 at NVIDIA/Megatron-LM d580efc6): GradComm, behind the
// reduce-scatter.
func interStream(s *scenarios.Scenario) Stream {
	if s.Stack == "megatron" {
		return GradComm
	}
	return InterComm
}

// shardGroup is the group bucket's gradients are reduce-scattered and its
// parameters all-gathered over, and its size: the intra group of N/K
// ranks, or for the routed experts with ep > 1 the expert-data-parallel
// group of N/(K·ep) ranks (Megatron's expert_data_parallel group; FSDP2
// over torchtitan's dp_shard_mod_ep mesh).
func (b *builder) shardGroup(bucket int) (GroupKind, int) {
	sc := b.sc
	if ep := sc.Groups[sc.Buckets[bucket].Group].EP; ep > 1 {
		return GroupEDP, sc.N / sc.K / ep
	}
	return GroupIntra, sc.N / sc.K
}

// a2a adds one expert-parallel all-to-all of unit u (routed experts with
// ep > 1) after task ready and returns it, or returns ready when unit u
// has no all-to-all. It runs on the compute stream: the experts' compute
// needs the tokens it brings (Megatron's alltoall token dispatcher
// without overlap).
func (b *builder) a2a(u int, ph Phase, ready int32) int32 {
	var after []int32
	if ready >= 0 {
		after = []int32{ready}
	}
	if t := b.a2aAfter(u, ph, after); t >= 0 {
		return t
	}
	return ready
}

// a2aAfter adds unit u's all-to-alls (epPhases, of the bytes a2aBytes
// computed once per build) after the tasks after and returns the task the
// unit's next compute waits for, or -1 when unit u has none. Under a
// deduplicating dispatcher (communication.moe_dispatcher deepep, flex,
// hybridep) it is two all-to-alls, timed as every collective is: over the
// ep group's rail (one rank per node; each rank sends dedupBytes's rail
// bytes to every other node's rank of its local index, DeepEP's RDMA
// phase) and over its node (each rank forwards the node bytes to every
// other rank there, DeepEP's NVLink phase). DeepEP runs the two in one
// kernel, pipelined: its RDMA senders post chunks while the forwarders of
// the receiving node pass each chunk on over NVLink as it lands
// (csrc/kernels/internode.cu dispatch's kRDMASender and
// kRDMAAndNVLForwarder warp roles, combine the same reversed, at
// deepseek-ai/DeepEP dd758caf4518); HybridEP is taken to do the same (its
// guide, deepseek-ai/DeepEP Hybrid-EP_Implementation.md at 07eea0c,
// describes warp-level pipelining; its kernel was not read for it). So
// the node phase starts when the rail
// phase starts (on the ep-comm stream, AfterStart) and the unit's next
// compute-stream task waits for both: the node phase's end by its After,
// the rail phase's by the compute stream, where the rail phase runs. The
// two share a step's links as any concurrent collectives do; a phase
// cannot pass on a chunk before it lands, so this is the pipeline's lower
// bound, short of it by the pipeline's fill (not modelled). Both phases are one
// kernel, so they overlap each other even when communication does not
// overlap compute (Schedule.Overlap false).
// The combine (and every backward pass) runs the same two phases: DeepEP's
// combine is the dispatch reversed, of the same bytes in bf16. The node
// phase returned stands for the pair only to a task on the compute stream,
// which runs the rail phase before it; a task on another stream that
// waited for it alone could start while the rail phase still runs
// (checkNodePhases refuses such a schedule).
func (b *builder) a2aAfter(u int, ph Phase, after []int32) int32 {
	if b.a2aBytes == nil || b.a2aBytes[u] == nil {
		return -1
	}
	last, first := int32(-1), int32(-1)
	for i, p := range b.phases {
		S := b.a2aBytes[u][i]
		if S == 0 {
			continue
		}
		t := Task{Kind: AllToAll, Stream: Compute, Phase: ph, Unit: u, Bucket: -1, Group: p.group, Bytes: S, After: after}
		if first >= 0 {
			t.Stream, t.AfterStart = EPComm, []int32{first}
		}
		last = b.add(t)
		if first < 0 {
			first = last
		}
	}
	return last
}

// recomputeA2A adds, when full checkpointing reruns unit u's forward in
// its backward (memory.UnitPolicies: the policy of the block holding the
// experts), the rerun forward's dispatch and combine all-to-alls after
// task ready, and returns the last (ready when there are none). The rerun
// forward is the whole decoder layer, MoE layer and token dispatcher
// included: Megatron-LM's checkpointed_forward (megatron/core/recompute.py
// :21, called from megatron/core/transformer/transformer_block.py:663 under
// recompute_granularity 'full') and moe_layer_recompute
// (megatron/core/transformer/moe/moe_layer.py:701) rerun
// MoEAlltoAllTokenDispatcher's all_to_all calls
// (megatron/core/transformer/moe/token_dispatcher.py:705 dispatch, :864
// combine) at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553;
// torchtitan's FullAC wraps the block in checkpoint_wrapper
// (torchtitan/distributed/activation_checkpoint.py:166-182 at
// pytorch/torchtitan b5bcd76c66d0acb1a08b176d9639425bc55e0b2a). Not under
// torchtitan's op-level policy (training.recompute op) when its save list
// keeps all_to_all_single's outputs "to avoid re-communication" (the same
// file, :60-63; training.op_save_all_to_all, memory.OpSavesAllToAll: from
// c4e2291155a4, 2025-09-06, for deepseek_v3 and llama4; never in qwen3's
// list up to 238fa9953e4aec2a62582121564273d7cbb1e9f1, whose
// PREFER_RECOMPUTE reruns them), nor under selective, which reruns
// attention only. The
// tensors the rerun brings back are the experts' transient activations
// (memory.ExpertActivation: the dispatched input and the expert output are
// its 2·h per (token, expert) pair), rebuilt for the unit's backward.
// Both run on the compute stream before the unit's backward compute, which
// carries the rerun forward's FLOPs (Costs); the combine also waits for
// the tasks gathered (the unit's backward all-gathers at stage 3): it
// brings back the output of the experts' rerun forward, which needs their
// parameters.
func (b *builder) recomputeA2A(u int, ready int32, gathered []int32) int32 {
	if b.policy == nil {
		b.policy = memory.UnitPolicies(b.s)
	}
	if !rerunsA2A(b.s, b.policy[u]) {
		return ready
	}
	dispatch := b.a2a(u, PhaseBackwardA2A, ready)
	if dispatch == ready {
		return ready
	}
	return b.a2aAfter(u, PhaseBackwardA2A, append([]int32{dispatch}, gathered...))
}

// rerunsA2A: a unit of routed experts under policy resends its dispatch
// and combine in backward (recomputeA2A).
func rerunsA2A(s *scenarios.Scenario, policy string) bool {
	return policy == memory.PolicyFull || policy == memory.PolicyOp && !memory.OpSavesAllToAll(s)
}

// stage012 is DDP (stage 0) and the distributed optimizer (stages 1, 2):
// bucketed gradient reduction launched as buckets fill during backward, the
// (sharded) optimizer, and the parameter all-gather after it — or, with
// overlap_param_gather, in the step's first forward, one bucket ahead of it
// (paramChain).
func (b *builder) stage012() error {
	sc := b.sc
	L := len(sc.Costs)
	gather := sc.Stage > 0 && sc.N/sc.K > 1 // an intra group of one rank holds everything
	// FSDP's ZeRO-2 (memory.FSDPStage2) gathers each unit in its
	// pre-forward unshard, prefetched while the unit before computes
	// (FSDP1's _pre_forward_unshard, FSDP2's pre_forward; see
	// memory.FSDPStage2), not after the optimizer: the step's first
	// micro-step gathers in its forward, overlapped with it, as its later
	// micro-steps regather (regathersAt).
	fsdpAG := gather && memory.FSDPStage2(b.s)
	overlapAG := gather && (b.s.Communication.OverlapParamGather || fsdpAG) && sc.Overlap
	// Parameter all-gathers in the step's first forward: FSDP's stage-2
	// unshards issued at the step start, or Megatron-Core's pre-hook chain
	// (paramgather.go), one bucket group ahead of the forward.
	agFirst := make([][]int32, L) // unit → all-gathers it waits for
	var chain *paramChain
	switch {
	case overlapAG && fsdpAG:
		agFirst = b.bucketGathers(PhaseForwardAG, nil)
	case overlapAG:
		chain = b.newParamChain()
	}
	// Buckets become ready when the backward of their first unit is done;
	// within a unit they are reduced in each group's reduce order.
	readyAt := make([][]int, L)
	base := 0
	for g, gi := range sc.Groups {
		for _, i := range gi.Layout.ReduceOrder() {
			u := sc.Buckets[base+i].FirstUnit
			readyAt[u] = append(readyAt[u], base+i)
		}
		base += len(sc.Groups[g].Layout.Buckets)
	}
	var synced, prevSync []int32
	prev := int32(-1) // the last compute-stream task so far (or a2aAfter's node phase)
	for m := 0; m < sc.Micro; m++ {
		b.micro = m
		var first [][]int32
		var ch *paramChain
		switch {
		case m == 0:
			first, ch = agFirst, chain
		case gather && regathersAt(b.s, m):
			first = b.bucketGathers(PhaseForwardAG, []int32{prev})
		}
		ss, last, err := b.microStep012(readyAt, first, ch, prev, prevSync, reducesAt(b.s, m))
		if err != nil {
			return err
		}
		synced, prev, prevSync = append(synced, ss...), last, ss
	}
	if err := b.optimizer(synced, b.optElems()); err != nil {
		return err
	}
	opt := int32(len(sc.Tasks) - 1)
	if gather && !overlapAG {
		b.bucketGathers(PhasePostOptAG, []int32{opt})
	}
	return nil
}

// bucketGathers adds an all-gather of phase ph of every bucket whose shard
// group has more than one rank, each after the tasks after, and returns,
// per unit, the gathers its forward waits for: the post-optimizer gathers
// of stages 1 and 2 without overlap_param_gather, FSDP's stage-2 gathers at
// the step start and its regathers (regathersAt).
func (b *builder) bucketGathers(ph Phase, after []int32) [][]int32 {
	sc := b.sc
	first := make([][]int32, len(sc.Costs))
	for i, bk := range sc.Buckets {
		g, size := b.shardGroup(i)
		if size == 1 {
			continue
		}
		t := b.add(Task{Kind: AllGather, Stream: ParamComm, Phase: ph, Unit: -1, Bucket: i,
			Group: g, Bytes: b.bucketGatherBytes(i), After: slices.Clone(after)})
		for u := bk.FirstUnit; u <= bk.LastUnit; u++ {
			first[u] = append(first[u], t)
		}
	}
	return first
}

// bucketGatherBytes is the bytes bucket i's all-gather moves at stages 1
// and 2: its parameters in their dtype, but under FSDP's stage 2
// (memory.FSDPStage2) with torchao's fp8 all-gather (FP8Gather) one byte
// per element of the fp8 units' weights, as FSDP2 gathers them at stage 3
// and as the memory model holds them (memory's unitInfos); the padding
// keeps the parameters' dtype.
func (b *builder) bucketGatherBytes(i int) int64 {
	sc := b.sc
	bk := sc.Buckets[i]
	g := sc.Groups[bk.Group]
	if !b.s.Training.FP8Gather() || !memory.FSDPStage2(b.s) || g.ParamBytes <= 1 || g.Layout == nil {
		return bk.ParamBytes
	}
	l := g.Layout
	lb := l.Buckets[bk.Bucket]
	bytes := bk.ParamBytes
	for p := lb.FirstParam; p <= lb.LastParam; p++ {
		if u := l.Params[p].Unit; u < 0 || u >= len(b.s.Model.LayerList) || !b.s.GathersFP8(u) {
			continue
		}
		for _, seg := range l.Segments(p) {
			if seg.Bucket == bk.Bucket {
				bytes -= seg.Numel * (g.ParamBytes - 1)
			}
		}
	}
	return bytes
}

// microStep3 adds one micro-step of stage 3 after task prev (-1: none):
// gather–compute–flush of every unit in forward and in backward with
// prefetch depth d (ZeRO++'s gathers and gradient sync when zp is set), the
// all-to-alls, and, when reduce is set, each unit's gradient sync and
// offload. Under no_sync (reduce unset, Scenario.HoldsUnshardedGrads) a
// unit still gathers in forward and backward and reshards after both:
// FULL_SHARD frees the unsharded parameters in the post-backward whether
// it syncs or not (_should_free_in_backward, see regathersAt), as does FSDP2
// with its default reshard_after_backward; its post-backward hook returns
// before the reduce-scatter ("if not state._sync_gradients: ... return",
// _post_backward_hook, torch/distributed/fsdp/_runtime_utils.py at
// 00ae0bc9; FSDP2's post_backward returns when not reduce_grads,
// _fsdp_param_group.py at 002a76fb). A micro-step
// after the first gathers its first units once the previous micro-step's
// backward has ended, as FSDP issues the next forward's gathers, and
// computes its first unit once the previous micro-step's gradient syncs
// (prevSync) have ended: the end of every backward makes the compute
// stream wait for the reduce-scatters (PyTorch FSDP's root
// _post_backward_final_callback, "current_stream().wait_stream(
// root_state._streams["post_backward"])", pytorch/pytorch
// torch/distributed/fsdp/_runtime_utils.py @ 00ae0bc9; Composer runs it
// after every micro-batch because under FSDP it never enters no_sync,
// mosaicml/composer composer/trainer/dist_strategy.py ddp_sync_context @
// v0.13.4 d80c37dc; the same in the torch 1.13.1 and Composer 0.13.2 of
// llm-foundry's A100-40GB table, mosaicml/examples sweep.sh at 9fa3ceb9a49cc28a91deee5e9166eab6b3122c8b:
// 1.13.1 has no _runtime_utils.py, its fully_sharded_data_parallel.py's
// _wait_for_post_backward makes the wait after the post-backward hook's
// reduce-scatters; composer/trainer/ is identical in v0.13.2-v0.13.4). It
// returns the syncs' last tasks and this micro-step's last compute-stream
// task (or a2aAfter's node phase).
func (b *builder) microStep3(byUnit [][]int, gathers func(int, Phase, []int32, []int32) []int32, zp *zeroPP, d int, prev int32, prevSync []int32, reduce bool) ([]int32, int32, error) {
	sc := b.sc
	L := len(sc.Costs)
	fwd := make([]int32, L)
	fwdEnd := int32(-1) // the last compute-stream task of forward so far (or a2aAfter's node phase)
	for u := 0; u < L; u++ {
		var after, afterStart []int32
		switch {
		case d == 0 && u > 0:
			after = []int32{fwd[u-1]}
		case d > 0 && u-d >= 0:
			afterStart = []int32{fwd[u-d]}
		case prev >= 0:
			after = []int32{prev} // a later micro-step's first gathers wait for the previous backward
		}
		ags := gathers(u, PhaseForwardAG, after, afterStart)
		if u > 0 {
			if in := b.a2a(u, PhaseForwardA2A, fwdEnd); in != fwdEnd {
				ags = append(ags, in)
			}
		}
		if u == 0 && len(prevSync) > 0 {
			ags = append(ags[:len(ags):len(ags)], prevSync...)
		}
		ags = b.actOff.forwardWaits(u, ags)
		fwd[u] = b.add(Task{Kind: Forward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Fwd, After: ags})
		b.actOff.offload(b, u, fwd[u])
		fwdEnd = b.a2a(u, PhaseForwardA2A, fwd[u])
	}
	bwd := make([]int32, L)
	bwdEnd := int32(-1)
	var synced []int32
	// Backward prefetch depth (communication.backward_prefetch_depth) and
	// the units kept gathered across the forward/backward boundary, which
	// need no backward all-gather (communication.boundary,
	// memory.KeptAcrossBoundary).
	db := d
	if p := b.s.Communication.BackwardPrefetchDepth; p != nil {
		db = *p
	}
	kept := memory.KeptAcrossBoundary(b.s)
	// The stack's bound on gradient syncs in flight
	// (memory.ReduceScatterLags cites each): unit u's backward starts only
	// once the sync of unit u+1+n(u) has ended — FSDP2's post_backward makes
	// the compute stream wait for the previous unit's reduce-scatter event
	// (n = 1), DeepSpeed's ZeRO-3 blocks the host on the oldest of its
	// outstanding reduce events when more than max_param_reduce_events = 2
	// are (n: the whole units three buckets' elements hold, at least one) — so
	// when the network cannot keep up the backward waits instead of piling
	// up unreduced gradients. FSDP1 (nil) waits only at the end of the
	// backward (the micro-step's syncs, above and in stage3).
	lags := memory.ReduceScatterLags(b.s)
	syncEnd := make([][]int32, L)
	for u := L - 1; u >= 0; u-- {
		var after, afterStart []int32
		switch {
		case u+max(db, 1) >= L:
			after = []int32{fwdEnd}
		case db == 0:
			after = []int32{bwd[u+1]}
		default:
			afterStart = []int32{bwd[u+db]}
		}
		ags := after // kept: in order after forward (or the unit before)
		if u >= len(kept) || !kept[u] {
			ags = gathers(u, PhaseBackwardAG, after, afterStart)
		}
		before := fwdEnd
		if u+1 < L {
			before = bwdEnd
		}
		if in := b.a2a(u, PhaseBackwardA2A, b.recomputeA2A(u, before, ags)); in != before {
			ags = append(ags, in)
		}
		if lags != nil && u+1+lags[u] < L { // lags has a lag per unit
			w := u + 1 + lags[u]
			ags = append(ags[:len(ags):len(ags)], syncEnd[w]...)
		}
		b.actOff.reload(b, u, before)
		ags = b.actOff.backwardWaits(u, ags)
		bwd[u] = b.add(Task{Kind: Backward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Bwd, After: ags})
		bwdEnd = b.a2a(u, PhaseBackwardA2A, bwd[u])
		if !reduce {
			continue
		}
		var unitSync []int32
		var gradBytes int64
		for _, i := range byUnit[u] {
			gradBytes += sc.Buckets[i].GradBytes
		}
		ok := false
		if zp != nil {
			ts, done, e := zp.gradSync(b, u, bwd[u])
			if e != nil {
				return nil, 0, e
			}
			unitSync, ok = ts, done
		}
		if !ok {
			for _, i := range byUnit[u] {
				unitSync = append(unitSync, b.gradSync(i, u, sc.Buckets[i].GradBytes, bwd[u]))
			}
		}
		ts, e := b.offloadGrad(u, -1, gradBytes, unitSync)
		if e != nil {
			return nil, 0, e
		}
		syncEnd[u] = ts
		synced = append(synced, ts...)
	}
	return synced, bwdEnd, nil
}

// reducesAt reports whether micro-step m reduces gradients: the last one
// always, the others where s.GradSyncEvery (the rule countTasks'
// bound shares; it cites each stack's trainer), of s's training.grad_accum
// micro-steps.
func reducesAt(s *scenarios.Scenario, m int) bool {
	return int64(m) == s.Training.GradAccum-1 || s.GradSyncEvery()
}

// regathersAt reports whether micro-step m > 0 of stage 2 all-gathers the
// parameters again in its forward: PyTorch FSDP's ZeRO-2
// (communication.boundary fsdp1, fsdp2 or fsdp2_head) reshards every unit
// after a backward that reduced its gradients, and FSDP2 after every
// backward. FSDP1 SHARD_GRAD_OP frees the unsharded flat parameter in the
// post-backward only while syncing ("state._sync_gradients or
// handle._sharding_strategy in RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES",
// _should_free_in_backward, torch/distributed/fsdp/_runtime_utils.py at
// pytorch/pytorch 00ae0bc91ac2c1718d1baa193d9d299e2b82776c), so under
// no_sync it keeps the parameters to the next micro-step; FSDP2's
// post_backward reshards when reshard_after_backward, True by default
// and left so by set_requires_gradient_sync (FSDPParamGroup.post_backward,
// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at
// 002a76fbfea0ac0f199e4b8e2a0691074796c908; neither Accelerate's no_sync
// nor torchtitan calls set_reshard_after_backward). Micro-step 0 gathers
// in its forward too (stage012: the step before ended in a reducing
// micro-step, which resharded, and FSDP unshards a unit in its
// pre-forward, memory.FSDPStage2). zerosim's own stage 2, and DeepSpeed's
// and Megatron-LM's, keep the whole 16-bit parameters and gather once per
// step, after the optimizer. FSDP's memory is its own: the shard at rest,
// each unit's unsharded parameters from its forward to its post-backward;
// the replay binds them to the unit's compute (bindMemory), the bucket
// gathers stay the timing's. The one rule the schedule and countTasks'
// bound share.
func regathersAt(s *scenarios.Scenario, m int) bool {
	bd := s.Communication.Boundary
	if s.Parallelism.Stage != 2 || m == 0 || bd != scenarios.BoundaryFSDP1 && !bd.FSDP2() {
		return false
	}
	return bd.FSDP2() || reducesAt(s, m-1)
}

// microStep012 adds one micro-step of stages 0–2 after task prev (-1: none):
// the forward of every unit (unit u also after the tasks agFirst[u], if
// any, and the gathers chain's pre-hooks dispatch for it, if chain is set)
// with its all-to-alls, the backward in reverse, and, when reduce is
// set, each bucket's gradient sync (and offload) as its unit's backward
// ends. Its first unit computes once the previous micro-step's gradient
// syncs (prevSync, none where it did not reduce) have ended: DeepSpeed's
// ZeRO-1/2 ends every backward with independent_gradient_partition_epilogue,
// which under overlap_comm synchronizes the device before the next
// micro-step ("if self.overlap_comm: ... get_accelerator().synchronize()",
// deepspeed/runtime/zero/stage_1_and_2.py:929-931 at deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641; engine.allreduce_gradients
// runs it on every micro-step at stage ≥ 2), and FSDP's
// SHARD_GRAD_OP ends it with the same root _post_backward_final_callback
// wait as stage 3 (microStep3). Under DeepSpeed's ZeRO-1/2 with overlap
// the backward after a bucket's launch also waits for the bucket launched
// before it (bucketPace). It returns the syncs' last tasks and the
// micro-step's last compute-stream task (or a2aAfter's node phase).
func (b *builder) microStep012(readyAt [][]int, agFirst [][]int32, chain *paramChain, prev int32, prevSync []int32, reduce bool) ([]int32, int32, error) {
	sc := b.sc
	L := len(sc.Costs)
	lastFwd := int32(-1) // the forward before unit u (Megatron's hooks dispatch after it)
	for u := 0; u < L; u++ {
		in := b.a2a(u, PhaseForwardA2A, prev)
		var after []int32
		if agFirst != nil {
			after = append(after, agFirst[u]...)
		}
		if u == 0 {
			after = append(after, prevSync...)
		}
		if in != prev {
			after = append(after, in)
		}
		after = b.actOff.forwardWaits(u, after)
		if chain != nil {
			prev = chain.forward(b, u, lastFwd, after)
		} else {
			prev = b.add(Task{Kind: Forward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Fwd, After: after})
		}
		lastFwd = prev
		b.actOff.offload(b, u, prev)
		prev = b.a2a(u, PhaseForwardA2A, prev)
	}
	var synced []int32
	var pace *bucketPace // DeepSpeed's one bucket of reductions in flight (bucketpace.go)
	if reduce && b.bucketPaced() {
		pace = &bucketPace{}
	}
	for u := L - 1; u >= 0; u-- {
		b.actOff.reload(b, u, prev)
		first := len(sc.Tasks)
		var after []int32
		if in := b.a2a(u, PhaseBackwardA2A, b.recomputeA2A(u, prev, nil)); in != prev {
			after = []int32{in}
		}
		after = b.actOff.backwardWaits(u, after)
		bw := b.add(Task{Kind: Backward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: sc.Costs[u].Bwd, After: after})
		pace.hold(sc.Tasks, first)
		out := len(sc.Tasks)
		prev = b.a2a(u, PhaseBackwardA2A, bw)
		if !reduce {
			continue
		}
		launched := len(synced)
		for _, i := range readyAt[u] {
			ts, err := b.offloadGrad(-1, i, sc.Buckets[i].GradBytes, []int32{b.gradSync(i, -1, sc.Buckets[i].GradBytes, bw)})
			if err != nil {
				return nil, 0, err
			}
			synced = append(synced, ts...)
		}
		pace.launch(synced[launched:])
		if prev != bw {
			pace.hold(sc.Tasks, out) // the all-to-all after the backward
		}
	}
	return synced, prev, nil
}

// optElems is the number of elements the rank's optimizer updates: its
// shard of every group (the whole buffer at stage 0).
func (b *builder) optElems() int64 {
	var n int64
	for _, g := range b.sc.Groups {
		n += g.ShardElems
	}
	return n
}

// stage3 is ZeRO-3 / FSDP: gather–compute–flush per unit in forward and
// backward with prefetch depth d, reduce-scatter of each unit's gradients in
// backward, and no post-optimizer all-gather (seed 002).
func (b *builder) stage3() error {
	sc := b.sc
	L := len(sc.Costs)
	d := b.s.Communication.Prefetch()
	// With one bucket per unit, unit u's buckets (one per group holding it).
	byUnit := make([][]int, L)
	for i, bk := range sc.Buckets {
		byUnit[bk.FirstUnit] = append(byUnit[bk.FirstUnit], i)
	}
	zp, err := newZeroPP(b.s, sc)
	if err != nil {
		return err
	}
	gathers := func(u int, ph Phase, after, afterStart []int32) []int32 {
		var ts []int32
		var shard int64
		for _, i := range byUnit[u] {
			if _, size := b.shardGroup(i); size > 1 {
				shard += sc.Buckets[i].ParamBytes / int64(size)
			}
		}
		after, afterStart, e := b.host.paramUp(b, u, shard, after, afterStart)
		if e != nil {
			if err == nil {
				err = e
			}
			return nil
		}
		if zp != nil {
			if sc.N/sc.K == 1 {
				return nil
			}
			ts, e := zp.gather(b, u, byUnit[u], ph, after, afterStart)
			if e != nil && err == nil {
				err = e
			}
			return ts
		}
		for _, i := range byUnit[u] {
			g, size := b.shardGroup(i)
			if size == 1 {
				continue // every rank of the group holds whole units, nothing to gather
			}
			bytes := sc.Buckets[i].ParamBytes
			if b.s.GathersFP8(u) {
				// fp8 all-gather: one byte per element (torchao float8 with
				// FSDP2, enable_fsdp_float8_all_gather).
				bytes /= sc.Groups[sc.Buckets[i].Group].ParamBytes
			}
			ts = append(ts, b.add(Task{Kind: AllGather, Stream: ParamComm, Phase: ph, Unit: u, Bucket: i,
				Group: g, Bytes: bytes, After: after, AfterStart: afterStart}))
		}
		return ts
	}
	var synced []int32
	prev := int32(-1)    // the previous micro-step's last compute-stream task (or a2aAfter's node phase)
	var prevSync []int32 // and its gradient syncs
	for m := 0; m < sc.Micro && err == nil; m++ {
		b.micro = m
		ss, last, e := b.microStep3(byUnit, gathers, zp, d, prev, prevSync, reducesAt(b.s, m))
		if e != nil {
			return e
		}
		synced, prev, prevSync = append(synced, ss...), last, ss
	}
	if err != nil {
		return err
	}
	return b.optimizer(synced, b.optElems())
}
