package memory

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Convention says which memory a figure counts, so that a reader can match a
// published table. Every Report names its convention.
type Convention int

const (
	// ConventionZerosim is zerosim's own model of one training step on a
	// Megatron-style implementation: persistent param/grad buffers, gradient
	// bucket staging buffers (stage 2), activations, fixed overheads, and
	// gradients whose lifetime follows the implementation: the DDP grad
	// buffer (stage 0) and the full grad buffer (stage 1) persist, the grad
	// shard persists at stage 2 (DeepSpeed contiguous_gradients), and
	// ZeRO-3/FSDP sharded gradients live from backward to the end of the
	// optimizer step (zero_grad(set_to_none=True)), so stage 3 holds no
	// gradients at rest.
	ConventionZerosim Convention = iota
	// ConventionSeed000 matches seed 000's table ("Baseline (1 GPU)" vs
	// "ZeRO-1"): model states only (no activations, no bucket buffers), and
	// the baseline counts no gradients at rest because param.grad is created
	// during backward and freed during optimizer.step(); ZeRO-1's grad_buffer
	// is persistent. Stages 2 and 3 count gradients as ConventionZerosim.
	ConventionSeed000
	// ConventionSeed002 matches seed 002's tables ("Memory per GPU" 16P,
	// (4+12/N)P, (2+14/N)P, 16P/N): model states only, with 2 bytes of
	// gradient per parameter counted at rest for every stage (sharded 2P/N at
	// stages 2 and 3).
	ConventionSeed002
)

// Conventions lists every convention in a stable order.
var Conventions = []Convention{ConventionZerosim, ConventionSeed000, ConventionSeed002}

// String returns the convention's short name: zerosim, seed000 or seed002.
func (c Convention) String() string {
	switch c {
	case ConventionZerosim:
		return "zerosim"
	case ConventionSeed000:
		return "seed000"
	case ConventionSeed002:
		return "seed002"
	}
	return fmt.Sprintf("Convention(%d)", int(c))
}

// Description is one sentence describing what the convention counts.
func (c Convention) Description() string {
	switch c {
	case ConventionZerosim:
		return "everything zerosim models: buffers, gradients with their real lifetime, bucket buffers, activations, temporaries, fixed overheads"
	case ConventionSeed000:
		return "seed 000: model states only; the stage-0 baseline holds no gradients at rest (param.grad is freed in optimizer.step)"
	case ConventionSeed002:
		return "seed 002: model states only; 2 bytes of gradient per parameter at rest for every stage (2P/N when sharded)"
	}
	return "unknown convention"
}

// ParseConvention parses a convention name.
func ParseConvention(s string) (Convention, error) {
	for _, c := range Conventions {
		if strings.EqualFold(strings.TrimSpace(s), c.String()) {
			return c, nil
		}
	}
	if strings.TrimSpace(s) == "" {
		return ConventionZerosim, nil
	}
	return 0, fmt.Errorf("memory: convention %q: use zerosim, seed000 or seed002", s)
}

// modelStatesOnly reports whether c leaves out activations and bucket
// buffers.
func (c Convention) modelStatesOnly() bool { return c != ConventionZerosim }

// Phase is a part of the training step.
type Phase int

const (
	PhaseRest Phase = iota
	PhaseForward
	PhaseBackward
	PhaseOptimizer
	PhaseParamGather
)

// Phases lists the phases in step order.
var Phases = []Phase{PhaseRest, PhaseForward, PhaseBackward, PhaseOptimizer, PhaseParamGather}

// StagePhases are the phases of a step at ZeRO stage stage: only stages 1
// and 2 all-gather the updated parameters after the optimizer step (into
// the persistent bf16 buffer, so the phase peaks at rest); stage 0 has no
// such phase and stage 3 gathers inside forward and backward.
func StagePhases(stage int) []Phase {
	if stage == 1 || stage == 2 {
		return Phases
	}
	return Phases[:PhaseParamGather]
}

// String returns the phase name.
func (p Phase) String() string {
	switch p {
	case PhaseRest:
		return "at rest"
	case PhaseForward:
		return "forward"
	case PhaseBackward:
		return "backward"
	case PhaseOptimizer:
		return "optimizer step"
	case PhaseParamGather:
		return "param all-gather"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Comp names a component of zerosim's memory model (a row of its report,
// the component of a timeline Event). The estimators' reports name their
// rows by their own formulas.
type Comp string

// Component names, in report order.
const (
	CompParams      Comp = "params"
	CompGrads       Comp = "grads"
	CompMaster      Comp = "fp32 master params"
	CompAdamM       Comp = "adam m"
	CompAdamV       Comp = "adam v"
	CompPadding     Comp = "padding"
	CompGradBuckets Comp = "grad buckets"
	CompGathered    Comp = "gathered params"
	CompStepTemp    Comp = "optimizer temporaries"
	CompFP8         Comp = "fp8 copies"
	CompActivations Comp = "activations"
	CompRing        Comp = "ring attention buffers"
	CompMask        Comp = "attention masks"
	CompRuntime     Comp = "runtime context"
	CompNCCL        Comp = "nccl buffers"
	// CompLogits is the logits the model returns when the training loop
	// keeps them referenced (training.keep_logits, KeptLogits): the
	// previous step's at rest, the new ones from the head's forward.
	// Last in the order, so that the other rows keep their places (and
	// their plot colours).
	CompLogits Comp = "kept logits"
	// CompLossTemp is the head's forward temporaries around its loss
	// (UnitInfo.LossLogits, LossUpcast; HeadLossTemps): after the kept
	// logits in the order, for the same reason.
	CompLossTemp Comp = "loss temporaries"
	// CompCasts is the weights torch.autocast casts to the 16-bit dtype
	// of training.autocast (UnitInfo.Casts); last in the order.
	CompCasts Comp = "autocast weight casts"
	// CompKVCache is the KV cache a Hugging Face model builds in its
	// training forward under torch's checkpoint wrapper
	// (training.hf_use_cache, KVCache): each block's from its forward,
	// the previous step's at rest when the loop keeps the outputs; last in
	// the order.
	CompKVCache Comp = "kv cache"
)

// NoActivationsNote is the activations row's note for a model zerosim
// derives none for (scenarios.Scenario.CountsNoActivations), under
// convention zerosim, which counts them: a bare model.params read "0 B"
// with no note, as if the model kept nothing for backward (qauser s28 H1).
const NoActivationsNote = "not counted: no transformer dimensions (give model.preset, model.hf_config or hidden, layers and heads)"

// componentOrder fixes the row order of every report.
var componentOrder = []Comp{
	CompParams, CompGrads, CompMaster, CompAdamM, CompAdamV, CompPadding, CompGradBuckets,
	CompGathered, CompHPZ, CompQuant, CompStepTemp, CompFP8, CompActivations, CompRing, CompMask, CompRuntime, CompNCCL, CompLogits,
	CompLossTemp, CompSavedWeights, CompCasts, CompKVCache,
}

// Components lists the memory model's components in report order.
func Components() []Comp { return slices.Clone(componentOrder) }

func componentIndex(name Comp) int {
	for i, n := range componentOrder {
		if n == name {
			return i
		}
	}
	panic("memory: unknown component " + string(name))
}

// PhasePeak is the rank's largest total during one phase.
type PhasePeak struct {
	Phase Phase
	Bytes int64
}

// Component is one named row of a report, in exact bytes per rank.
type Component struct {
	Name string
	// AtRest is the component between steps (after the optimizer step and
	// the parameter all-gather, before the next forward).
	AtRest int64
	// Peak is the component's own maximum over the step, reached first in
	// PeakPhase.
	Peak      int64
	PeakPhase Phase
	// AtTotalPeak is the component's value at the moment the rank's total
	// peaks; the AtTotalPeak values add up to Report.Peak.
	AtTotalPeak int64
	// Note says what the row holds (dtype, sharding).
	Note string
}

// Options tunes Analyze.
type Options struct {
	Convention Convention
	// Rank is the rank whose padding/real split is reported (totals are the
	// same on every rank of the intra group); default 0.
	Rank int
	// Reserve is how much of the profiler's view Analyze works out under
	// convention zerosim (Report.Reserved, Device, GatherPoolHeld and
	// AllocSim): all of it by default, less for a caller that reads less.
	// The caching allocator's simulation, where the scenario has one
	// (SimulatesReserve), is most of Analyze's time.
	Reserve ReserveLevel
}

// ReserveLevel is how much of the profiler's view Analyze works out
// (Options.Reserve).
type ReserveLevel int

const (
	// ReserveAll works out every figure.
	ReserveAll ReserveLevel = iota
	// ReserveWhereFits works them out where the allocated peak and the
	// device's need fit the GPU, the only place the simulated allocator
	// can change Fits (its out-of-memory), and leaves them out elsewhere:
	// Fits is ReserveAll's, for a caller that reads Peak and Fits.
	ReserveWhereFits
	// ReserveNone leaves them out (Need is kept): the allocated figures
	// alone. Fits then leaves out the simulated allocator's
	// out-of-memory, and Warnings what the reserve would add.
	ReserveNone
)

// GroupInfo describes one parameter group and its buffer layout.
type GroupInfo struct {
	Name      string
	Precision string
	// ParamBytes, GradBytes are the element sizes of the param and grad
	// buffers; MasterBytes is 4, or 0 when the fp32 params are their own
	// master (no copy). ReduceBytes is the element size gradients are
	// reduced in, what a reduce-scatter or all-reduce moves per element:
	// GradBytes, except under training.reduce_dtype fp32 (4), where at
	// stages 0–2 the grad buffer itself is fp32 (GradBytes 4, Megatron's
	// main_grad) and at stage 3 autograd's unsharded gradients stay in
	// param_dtype and are copied into an fp32 reduce-scatter input
	// (UnitInfo.ReduceInput).
	ParamBytes  int64
	GradBytes   int64
	MasterBytes int64
	ReduceBytes int64
	// StateBytes is the element size of each Adam moment (exp_avg,
	// exp_avg_sq): 4, or ParamBytes under training.master_dtype none,
	// where the optimizer keeps its states in the parameters' dtype
	// (scenarios.MasterNone) and MasterBytes is 0.
	StateBytes int64
	// Numel is the group's real elements; Size its padded buffer length;
	// ShardElems/RankNumel the rank's shard (padded / real).
	Numel      int64
	Size       int64
	ShardElems int64
	RankNumel  int64
	Buckets    int
	// Layout is the group's buffer layout (per unit at stage 3).
	Layout *Layout
	// EP is the expert-parallel degree the group is split over (1 for
	// dense groups): the rank holds 1/EP of each unit and shards it over
	// the Shards/EP ranks holding the same experts.
	EP int
}

// TooManyBucketsError is a bucket size that cuts a parameter group into more
// than MaxBuckets buckets; Least is the smallest bucket size that does not
// (zero.AdviseBucket raises it to the least that a replay also runs), and
// Stage the ZeRO stage analyzed.
type TooManyBucketsError struct {
	BucketSize int64
	Group      string
	Numel      int64
	Least      int64
	Stage      int
}

func (e *TooManyBucketsError) Error() string {
	return fmt.Sprintf("communication.bucket_size %d B cuts group %q (%d parameters) into more than %d buckets (use a bucket_size of at least %d B)",
		e.BucketSize, e.Group, e.Numel, MaxBuckets, e.Least)
}

// GatherPoolMode and FSDP1GatherPoolMode end a Report.ReservedMode whose
// reserve holds a gather pool (GatherPoolHeld > 0: DeepSpeed ZeRO-3's, or
// FSDP1's without its rate limiter; scenarios.GatherPoolName), which fills
// what the GPU has free up to its size: the device peak is then the GPU's
// memory (HoldsGatherPool).
const (
	GatherPoolMode      = " + " + scenarios.PoolNameDeepSpeed
	FSDP1GatherPoolMode = " + " + scenarios.PoolNameFSDP1
)

// HoldsGatherPool reports whether a Report.ReservedMode ends with a gather
// pool's (GatherPoolMode, FSDP1GatherPoolMode).
func HoldsGatherPool(mode string) bool {
	return strings.HasSuffix(mode, GatherPoolMode) || strings.HasSuffix(mode, FSDP1GatherPoolMode)
}

// StageRefusedError is a ZeRO stage the scenario's stack refuses for its
// other settings (training.master_dtype bf16 at stage 0: DeepSpeed takes
// bf16_master_weights_and_grads at stages 1–3 only, scenarios.MasterBF16;
// training.autocast at stages 1–3 outside PyTorch FSDP, scenarios/autocast_fsdp.go).
// The loader refuses it at the scenario's own stage; the per-stage tables
// leave another stage out, saying why.
type StageRefusedError struct {
	Stage  int
	Reason string
}

func (e *StageRefusedError) Error() string {
	return fmt.Sprintf("zero_stage %d: %s", e.Stage, e.Reason)
}

// UnitInfo holds the per-unit allocation sizes used by the timeline.
type UnitInfo struct {
	Name   string
	Params int64
	// Gather is the bytes of the unit's gathered (unsharded) parameters at
	// stage 3, padding included, and at FSDP's stage 2 (FSDPStage2, no
	// padding: the flat buffer is laid out by bucket there); 0 otherwise.
	Gather int64
	// SavedWeights is the bytes of the unit's gathered weights autograd
	// keeps referenced from the unit's forward release to its backward
	// under DeepSpeed's ZeRO-3 without its memory-efficient linear
	// (SavesGatheredWeights, savedweights.go); 0 otherwise.
	SavedWeights int64
	// Grad is the bytes of the unit's unsharded gradient produced in
	// backward when it is not a view of a persistent buffer (stage 3 and
	// FSDP's stage 2, shardsPerUnit; stage 0 without a gradient buffer,
	// stage0GradsFreed, or beside torch DDP's buckets, ddpGradCopies);
	// ShardGrad the unit's share of the sharded gradient allocated by its
	// reduce-scatter (stage 3, FSDP's stage 2), in the shard's dtype.
	Grad      int64
	ShardGrad int64
	// HeldGrad is the bytes of the unit's unsharded gradient kept from one
	// micro-step to the next under FSDP's no_sync (stages 2 and 3,
	// scenarios.Scenario.HoldsUnshardedGrads), 0 otherwise: the unit's
	// parameters the rank computes gradients for, in the dtype they
	// accumulate in (heldGradBytes).
	HeldGrad int64
	// OneGraphGrad is the bytes of the unit's new gradients, in the
	// parameters' dtype, that a whole-model compiled backward keeps until
	// it returns on a micro-step that accumulates into an existing .grad
	// (OneGraphGrads), 0 otherwise.
	OneGraphGrad int64
	// ReduceInput is the bytes of the unit's reduce-scatter input when it
	// is a buffer of its own in another dtype than Grad (stage 3 and FSDP's
	// stage 2 under training.reduce_dtype fp32: FSDP's copy-in into an fp32
	// buffer), 0 otherwise.
	ReduceInput int64
	// Alone is set when no other rank shares the unit's parameters: every
	// group of them is sharded over one rank (N/K = 1, or routed experts
	// with ep = N/K), so at stage 3 nothing gathers or reduce-scatters it
	// and a replay binds those events to its compute (zero's bindMemory).
	Alone bool
	// Activation is the bytes kept from forward for backward; Recompute the
	// extra bytes rebuilt during the unit's backward (recompute).
	Activation int64
	Recompute  int64
	// ActivationTensors are the tensors of Activation the unit's forward
	// compute allocates (all of it but AfterLogits), and
	// RecomputeTensors those of Recompute, in the order the activation
	// model lists them (BlockActivationTensors under the unit's policy;
	// one tensor where it does not tell them apart: actTensors). The
	// allocator replay (allocseq.go) allocates them one by one.
	ActivationTensors, RecomputeTensors []int64
	// RingForward and RingBackward are the bytes of context parallelism's
	// ring attention alive during the unit's forward and backward compute
	// (RingBuffers; 0 at cp = 1).
	RingForward  int64
	RingBackward int64
	// Mask is the bytes of transformers' boolean sdpa masks allocated at
	// the unit's forward (the first block using each); MaskFreeForward
	// those freed after its forward and MaskFreeBackward those freed at
	// the end of its backward (unitMasks, sdpamask.go).
	Mask, MaskFreeForward, MaskFreeBackward int64
	// Logits is the bytes of the logits the model returns that the
	// training loop keeps (training.keep_logits), on the head unit
	// (headLogits); 0 elsewhere. AfterLogits is, of Activation, what the
	// head's loss saves after the model has returned the logits
	// (headParts' loss), on the head unit: the timeline allocates it after
	// the loop frees the previous step's kept logits and after the loss's
	// fp32 upcast.
	Logits, AfterLogits int64
	// KVCache is, on a block unit under training.hf_use_cache, the bytes
	// of the keys and values its forward hands to the model's cache
	// (KVCache); 0 elsewhere. The timeline allocates them at the unit's
	// forward and frees the whole cache as the head's forward returns:
	// the step's own (forward) or the previous step's (kept, at rest).
	KVCache int64
	// LossLogits and LossUpcast are the head's forward temporaries around
	// its loss (HeadLossTemps): the 16-bit logits nothing keeps past the
	// loss (past the model's own .float() under keep_logits fp32) and the
	// loss's fp32 copy of 16-bit logits, alive while log_softmax runs; on
	// the head unit, 0 elsewhere.
	LossLogits, LossUpcast int64
	// LossShift is, on the head unit when a Hugging Face loss runs inside
	// forward over fp32 logits (scenarios.Training.HFLossInsideForward
	// with keep_logits fp32, or unset under an fp32 loss), the
	// loss's fp32 shift_logits copy (HFShiftLogits): made before the loss,
	// freed when forward returns with it; 0 elsewhere.
	LossShift int64
	// HeadMm are, on the head unit under the eager loss, the tensors the
	// output projection's MmBackward0 holds beside the weight gradient it
	// makes and the head's Activation does not count then: the logits'
	// 16-bit gradient and the projection's input gradient
	// (HeadProjectionBackward); nil elsewhere. The timeline allocates them
	// with the gradient (OpHeadGrad), after the loss's tensors are freed
	// and before the rest of the head's activations are.
	HeadMm []int64
	// LossBuffer and LossGrad16 are, on the head unit under the chunked
	// loss (training.loss_chunks), the wrapper's fp32 [T, D] gradient
	// buffer and its 16-bit cast handed to the decoder's backward
	// (ChunkedLossBuffers); LossHeldGrad the unsharded gradient of
	// lm_head that FSDP2 accumulates across the chunks, in reduce_dtype,
	// until the last chunk's reduce-scatter (timeline.go, unitInfos). 0
	// elsewhere and without chunks.
	LossBuffer, LossGrad16, LossHeldGrad int64
	// Casts is the bytes of the unit's weights cast to training.autocast's
	// dtype in its forward (AutocastCastElems), CastTensors one per
	// weight; 0 and nil without autocast. They live to the end of the
	// unit's backward: autograd saves them, and autocast's cache holds
	// them to the end of the forward. CastsRebuilt marks a checkpointed
	// unit: its casts go when the forward's autocast exits and its
	// recomputation makes them anew (scenarios/autocast.go).
	Casts        int64
	CastTensors  []int64
	CastsRebuilt bool
	// CastsPerOp marks a checkpointed unit whose forward casts autocast's
	// cache does not keep (FSDP1's views, scenarios.Scenario.
	// AutocastCached): each lives while its matmul runs, so the forward
	// holds the largest, CastPeak, and ends with none.
	CastsPerOp bool
	CastPeak   int64
}

// Report is the per-rank memory of one scenario at one stage.
type Report struct {
	// actOff is the activation offloading's blocks (actoffload.go).
	actOff     []ActOffload
	Scenario   string
	Estimator  string
	Convention Convention
	// ConventionName is Convention.String(), for reports.
	ConventionName string
	Stage          int
	N              int
	K              int
	// Shards is the number of ranks one copy is sharded over: N/K at
	// stages 1–3, 1 at stage 0.
	Shards  int
	Rank    int
	Padding string
	// Params is the model's real parameter count.
	Params    int64
	GPUMemory int64
	// GPUMemoryUsable: GPUMemory is the capacity CUDA exposes, from the GPU
	// preset (scenarios.Cluster.GPUMemoryUsable).
	GPUMemoryUsable bool
	Components      []Component
	AtRest          int64
	Peak            int64
	PeakPhase       Phase
	// PeakUnit is the unit being processed when the total peaks, -1 if none.
	PeakUnit int
	// PhasePeaks is the total at the peak of every phase, in Phases order:
	// the param all-gather after the step only for stages 1 and 2.
	PhasePeaks []PhasePeak
	// Reserved and Device are the profiler's view of Peak (convention
	// zerosim only; see ProfilerPeaks): the caching allocator's reserved
	// peak, and that plus the CUDA context and NCCL's buffers.
	Reserved int64
	Device   int64
	// AllocSim is the caching-allocator simulation Reserved comes from
	// when the scenario's reserved peak is simulated (SimulatesReserve),
	// nil otherwise.
	AllocSim *AllocSim
	// ReservedMode says how Reserved was obtained (ReservedModeOf):
	// "simulated-default", "simulated-expandable", or the fraction above
	// the allocated peak and where it came from, "overhead 0.15
	// (default)", "overhead 0.2 (memory.allocator_overhead)" or "overhead
	// 0.1493 (calibration FILE)"; empty where Reserved is not worked out.
	ReservedMode string
	// OverheadFrom names where the allocator overhead Reserved takes above
	// the allocated peak came from when the scenario or a calibration set
	// it (not simulated): "memory.allocator_overhead", or the calibration
	// (scenarios' Memory.AllocatorOverheadFrom: "calibration FILE (fitted
	// to …)"); Overhead is that fraction. Empty and 0 for the default or a
	// simulated reserve.
	OverheadFrom string
	Overhead     float64
	// RoomWarning is the warning (also in Warnings) that the step fits
	// but the device has no room for the allocator's usual reserve (a
	// fraction of the peak, not simulated), by the walk's figures; ""
	// otherwise. The simulated allocator's retries (AllocSim) are the
	// replay's own figures and stay a plain warning. A replayed report (zerosim run) says it
	// in its verdict by the replay's figures instead (reports.FitVerdict),
	// so that one report gives one figure per question (QA30 M1).
	RoomWarning string
	// ReserveSkipped says that Reserved, Device, GatherPoolHeld and
	// AllocSim were not worked out (Options.Reserve).
	ReserveSkipped bool
	// outside is what the device holds outside the caching allocator (the
	// CUDA context and NCCL's buffers: outsideAllocator), worked out once
	// under convention zerosim; 0 otherwise.
	outside int64
	// GatherPool is what DeepSpeed ZeRO-3's host releases in forward while
	// the GPU is behind (GatherPool); GatherPoolHeld the part of it
	// Reserved holds, cut to the room the GPU's memory leaves
	// (heldGatherPool).
	GatherPool, GatherPoolHeld int64
	// GatherPoolOneLayer says the pool is one unit's because the host
	// syncs in every attention layer (scenarios.HostSyncEachLayer), not
	// memory.host_lead of the forward's.
	GatherPoolOneLayer bool
	// GatherPoolOneLayerWhy names what syncs the host when
	// GatherPoolOneLayer (scenarios.HostSyncWhy).
	GatherPoolOneLayerWhy string
	// GatherPoolName names the pool (scenarios.GatherPoolName) when
	// GatherPool is not 0.
	GatherPoolName string
	// Need is what the device needs at Peak (DeviceNeed: the allocated
	// peak with the CUDA context and NCCL's buffers, no reserve), under
	// convention zerosim only.
	Need int64
	// Fits reports Peak ≤ GPUMemory and, under convention zerosim, Need ≤
	// GPUMemory (false when GPUMemory is unknown); a warning says when
	// Device, with the allocator's reserve, does not fit.
	Fits bool
	// NotApplicable is set (and the figures are zero) when an estimator has
	// no formula for this stage, or, with NotLaidOut, when the bucket size
	// cannot lay this stage out though it lays out the scenario's own
	// (EstimateStages): it says why.
	NotApplicable string
	NotLaidOut    bool
	Groups        []GroupInfo
	Units         []UnitInfo
	// DeepSpeedOffload holds the rows DeepSpeed's _all_cold estimator
	// prints, offload columns included (estimator deepspeed, stages 1–3).
	DeepSpeedOffload []DeepSpeedOffloadRow
	// Host is the host RAM of a rank and a node when the scenario offloads
	// (offload.go); nil otherwise.
	Host     *HostMemory
	Warnings []string

	events []Event
	// heldGrads: some unit holds its unsharded gradient across
	// micro-steps (UnitInfo.HeldGrad > 0, FSDP's no_sync).
	heldGrads bool
	// keptThroughNoSync: FSDP1's SHARD_GRAD_OP under no_sync keeps every
	// unit gathered through the micro-steps that do not reduce
	// (keepsGatheredUnderNoSync): only the reducing one frees them.
	keptThroughNoSync bool
	// gatherAhead is the prefetch depth of FSDP's stage-2 forward gathers
	// (ForwardGatherUnit); 0 elsewhere.
	gatherAhead int
	// root marks FSDP2's root group (fsdp2RootGroup), worked out once
	// with the events: the timeline gathers, releases and reduces it as
	// one set of events of its lead unit rootLead, and the allocator's
	// replay follows them. Nil when every unit is its own group.
	root     []bool
	rootLead int
}

// ForwardGatherUnit is the unit whose forward compute unit v's parameters
// are gathered by at FSDP's stage 2 (FSDPStage2): v less the prefetch
// depth, at least 0 (the walk gathers v at that unit's step, before its
// compute). Elsewhere, and out of range, v.
func (r *Report) ForwardGatherUnit(v int) int {
	if v < 0 || v >= len(r.Units) {
		return v
	}
	return max(v-r.gatherAhead, 0)
}

// inRoot reports whether unit u is in FSDP2's root group (Report.root).
func (r *Report) inRoot(u int) bool { return u >= 0 && u < len(r.root) && r.root[u] }

// OnlyInReducingMicroStep reports whether event e, of the walk's (the
// last) micro-step, is missing from the micro-steps before it under FSDP's
// no_sync (some UnitInfo.HeldGrad > 0). Those run the same forward and
// backward but reduce nothing: they have no gradient reduction
// (OpReduceCopyIn, OpReduceScatter), no optimizer step and no parameter
// all-gather after it, and they hold every unit's unsharded gradient
// through their whole backward, where the last micro-step frees each at
// its reduce-scatter. The walk's peaks, and a replay's, are the larger of
// the two kinds of micro-step: the events without these are the earlier
// micro-steps' (the fit must hold for every micro-step). Under FSDP1's
// SHARD_GRAD_OP those micro-steps also keep every unit's unsharded
// parameters through their backward (_should_free_in_backward is false
// while not syncing; FSDPStage2): the post-backward's frees of them are
// the reducing micro-step's alone.
func (r *Report) OnlyInReducingMicroStep(e Event) bool {
	return r.heldGrads && (e.Op == OpReduceCopyIn || e.Op == OpReduceScatter || e.Phase >= PhaseOptimizer ||
		r.keptThroughNoSync && e.Component == CompGathered && e.Op == OpRelease)
}

// Component returns the named row, or a zero Component.
func (r *Report) Component(name Comp) Component {
	for _, c := range r.Components {
		if c.Name == string(name) {
			return c
		}
	}
	return Component{Name: string(name)}
}

// ProfilerPeaksAt is ProfilerPeaks at the allocated peak peak of a replay
// of s, the scenario r reports on, with r's gather pool and memory outside
// the allocator, not worked out again, and r's allocator simulation: the
// reserved peak is then simulated, capped at the limit the simulation ran
// under (the allocator cannot reserve more; at least the allocated peak).
func (r *Report) ProfilerPeaksAt(s *scenarios.Scenario, peak int64) (reserved, device int64, err error) {
	outside, err := r.outsideOf(s)
	if err != nil {
		return 0, 0, err
	}
	return profilerPeaksOf(s, peak, r.GatherPool, r.AllocSim, outside)
}

// DeviceNeedAt is DeviceNeed at the allocated peak peak of a replay of s,
// the scenario r reports on, with r's memory outside the allocator.
func (r *Report) DeviceNeedAt(s *scenarios.Scenario, peak int64) (int64, error) {
	outside, err := r.outsideOf(s)
	if err != nil {
		return 0, err
	}
	return deviceNeed(s, peak, outside)
}

// outsideOf is r's memory outside the allocator, worked out from s when r
// has none (a convention other than zerosim's).
func (r *Report) outsideOf(s *scenarios.Scenario) (int64, error) {
	if r.outside > 0 {
		return r.outside, nil
	}
	return outsideAllocator(s)
}

// Optimizer is the optimizer-state bytes at rest: master params + Adam m +
// Adam v (padding excluded).
func (r *Report) Optimizer() int64 {
	return r.Component(CompMaster).AtRest + r.Component(CompAdamM).AtRest + r.Component(CompAdamV).AtRest
}

// elemBytes returns param, grad and master element sizes of a precision.
func elemBytes(precision scenarios.DType) (param, grad, master int64, err error) {
	switch precision {
	case scenarios.BF16, scenarios.FP16:
		return 2, 2, 4, nil
	case scenarios.FP32:
		// fp32 params (e.g. the MoE router) are their own master copy.
		return 4, 4, 0, nil
	case scenarios.FP8:
		// fp8 weights: 1-byte param buffer, bf16 grads, fp32 master.
		return 1, 2, 4, nil
	}
	return 0, 0, 0, fmt.Errorf("precision %q: use bf16, fp16, fp32 or fp8", precision)
}

// Stages analyzes stages 0–3 of the same scenario.
func Stages(s *scenarios.Scenario, opt Options) ([]*Report, error) {
	var out []*Report
	for st := 0; st <= 3; st++ {
		c := *s
		c.Parallelism.Stage = st
		r, err := Analyze(&c, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Analyze computes the per-rank memory of s at its ZeRO stage: every
// component at rest and at peak, with the phase of the peak. It returns an
// error for any input it cannot model (bad stage, K not dividing N, unknown
// group or precision, an empty model, sizes that overflow int64). Errors
// do not name the scenario's name: the commands name its file ("default:
// NCCL buffers: …" named the name, not the file: qa22 M3).
func Analyze(s *scenarios.Scenario, opt Options) (*Report, error) {
	r, err := analyze(s, opt)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return r, nil
}

func scenarioName(s *scenarios.Scenario) string {
	if s == nil {
		return "<nil scenario>"
	}
	if s.Name != "" {
		return s.Name
	}
	return "scenario"
}

// calc is units.Calc: checked int64 arithmetic that keeps the first overflow.
type calc = units.Calc

type group struct {
	info    GroupInfo
	layout  *Layout
	units   []int // unit indices, forward order
	numel   int64
	perUnit map[int]int64
	// bucketGradBytes is the element size communication.bucket_size is
	// divided by: param_dtype's gradient, whatever training.reduce_dtype,
	// so that the reduction dtype changes a bucket's bytes and never which
	// parameters it holds (Megatron-Core's bucket_size counts parameters:
	// DistributedDataParallelConfig.bucket_size, "Maximum number of
	// parameters in each bucket", distributed_data_parallel_config.py at
	// NVIDIA/Megatron-LM core_v0.12.0, d580efc6).
	bucketGradBytes int64
}

// analyzeSetup returns the report skeleton of a resolved scenario (see
// scenarios.Resolve; nothing here re-validates it).
func analyzeSetup(s *scenarios.Scenario, opt Options) (*Report, error) {
	if s == nil {
		return nil, errors.New("no scenario")
	}
	p := s.Parallelism
	n, k := s.N(), p.K
	shards := n / k
	if p.Stage == 0 {
		shards = 1
	}
	if opt.Rank < 0 || opt.Rank >= shards {
		opt.Rank = 0
	}
	padding := PaddingOf(s.Communication.Padding)
	return &Report{
		Scenario: scenarioName(s), Estimator: "zerosim",
		Convention: opt.Convention, ConventionName: opt.Convention.String(),
		Stage: p.Stage, N: n, K: k, Shards: shards, Rank: opt.Rank, Padding: padding.String(),
		GPUMemory: int64(s.Cluster.GPUMemory), GPUMemoryUsable: s.Cluster.GPUMemoryUsable, PeakUnit: -1,
	}, nil
}

func analyze(s *scenarios.Scenario, opt Options) (*Report, error) {
	if s != nil && s.Training.MasterDType == scenarios.MasterBF16 && s.Parallelism.Stage == 0 {
		return nil, &StageRefusedError{Stage: 0, Reason: "DeepSpeed takes bf16_master_weights_and_grads (training.master_dtype bf16) at ZeRO stages 1, 2 and 3 only (deepspeed/runtime/config.py)"}
	}
	if s != nil {
		// The loader's rule (scenarios/autocast_fsdp.go), in its words
		// (which name fsdp2_head too): at stages 1–3 outside PyTorch FSDP
		// the stacks zerosim models run their own mixed precision, 16-bit
		// parameters gathered from an fp32 shard.
		if why := scenarios.AutocastStageRefusal(s); why != "" {
			return nil, &StageRefusedError{Stage: s.Parallelism.Stage, Reason: "training.autocast: " + why}
		}
	}
	r, err := analyzeSetup(s, opt)
	if err != nil {
		return nil, err
	}
	padding := PaddingOf(s.Communication.Padding)
	shards := r.Shards
	groups, err := buildGroups(s, r, shards, padding)
	if err != nil {
		return nil, err
	}
	var c calc
	for _, g := range groups {
		r.Params = c.Add(r.Params, g.numel)
	}
	uis, err := unitInfos(s, r, groups)
	if err != nil {
		return nil, err
	}
	r.Units = uis
	m := newModel(r, groups, s, &c)
	for u, alone := range m.reducedAlone() {
		r.Units[u].Alone = alone
	}
	if c.Err != nil {
		return nil, fmt.Errorf("sizes overflow int64: %w", c.Err)
	}
	m.run()
	if c.Err != nil {
		return nil, fmt.Errorf("sizes overflow int64: %w", c.Err)
	}
	r.Fits = r.GPUMemory > 0 && r.Peak <= r.GPUMemory
	if r.GPUMemory > 0 && r.Fits && r.Peak > r.GPUMemory/20*19 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("peak %s is within 5%% of the GPU memory %s",
			units.Bytes(r.Peak).IEC(), units.Bytes(r.GPUMemory).IEC()))
	}
	if r.Convention == ConventionZerosim {
		if r.GatherPool, err = GatherPool(s, r.Units); err != nil {
			return nil, err
		}
		r.GatherPoolOneLayer = r.GatherPool > 0 && s.HostSyncEachLayer()
		if r.GatherPoolOneLayer {
			r.GatherPoolOneLayerWhy = s.HostSyncWhy()
		}
		if r.GatherPool > 0 {
			r.GatherPoolName = s.GatherPoolName()
		}
		if r.outside, err = outsideAllocator(s); err != nil {
			return nil, err
		}
		if r.Need, err = deviceNeed(s, r.Peak, r.outside); err != nil {
			return nil, err
		}
		// The verdict turns on what the allocator cannot give back too;
		// the reports say so where they give it (reports.FitVerdict).
		r.Fits = r.Fits && r.Need <= r.GPUMemory
		if opt.Reserve == ReserveNone || opt.Reserve == ReserveWhereFits && !r.Fits {
			r.ReserveSkipped = true
			return r, nil
		}
		if SimulatesReserve(s) {
			if r.AllocSim, err = simulateWithin(s, r); err != nil {
				return nil, err
			}
		}
		if r.Reserved, r.Device, err = profilerPeaksOf(s, r.Peak, r.GatherPool, r.AllocSim, r.outside); err != nil {
			return nil, err
		}
		if r.GatherPoolHeld, err = heldGatherPool(s, r.Peak, r.GatherPool, r.AllocSim, r.outside); err != nil {
			return nil, err
		}
		r.ReservedMode = ReservedModeOf(s, r.AllocSim)
		if r.GatherPoolHeld > 0 {
			// DeepSpeed ZeRO-3's reserve also holds its gather pool
			// (GatherPool), not a fraction of the peak (QA18 L7).
			r.ReservedMode += " + " + s.GatherPoolName()
		}
		if o := s.Memory.AllocatorOverhead; o != nil { // set: never simulated (SimulatesReserve)
			r.Overhead, r.OverheadFrom = *o, "memory.allocator_overhead"
			if f := s.Memory.AllocatorOverheadFrom; f != "" {
				r.OverheadFrom = f
			}
		}
		switch sim, v := r.AllocSim, VerdictOf(r.Fits, r.Device, r.GPUMemory, r.AllocSim); {
		case sim != nil && sim.OOM != nil:
			// The peak fits, but the simulated allocator cannot place a
			// request even after releasing its cache (fragmentation):
			// PyTorch raises OutOfMemoryError there.
			r.Fits = false
			r.Warnings = append(r.Warnings, sim.OOMReason())
		case v != DoesNotFit && sim != nil && sim.Retries > 0:
			// In the last step (FitsWithRetries), or only while the cache
			// warmed up (FitsWithRoom): RetriesReason says which.
			r.Warnings = append(r.Warnings, sim.RetriesReason(outsideWords(&s.Cluster), r.GPUMemory))
		case v == FitsWithRetries:
			r.RoomWarning = NoRoomWarning(r.Need, r.GPUMemory, r.Device, outsideWords(&s.Cluster))
			r.Warnings = append(r.Warnings, r.RoomWarning)
		}
	}
	return r, nil
}

// buildGroups lays out one buffer per parameter group.
func buildGroups(s *scenarios.Scenario, r *Report, shards int, padding Padding) ([]*group, error) {
	precision := map[string]scenarios.DType{}
	var order []string
	for _, g := range s.Model.Groups {
		precision[g.Name] = g.Precision
		order = append(order, g.Name)
	}
	if _, ok := precision["dense"]; !ok {
		precision["dense"] = s.Training.ParamDType
		order = append([]string{"dense"}, order...)
	}
	byName := map[string]*group{}
	var c calc
	for u, l := range s.Model.LayerList {
		gname := l.Group
		prec := precision[gname]
		g := byName[gname]
		if g == nil {
			pb, gb, mb, err := elemBytes(prec)
			if err != nil {
				return nil, fmt.Errorf("group %q: %w", gname, err)
			}
			sb := int64(4)
			switch {
			case s.Training.NoMaster():
				// Pure 16-bit training: no master copy, Adam's moments in
				// the parameters' dtype (scenarios.MasterNone cites
				// torch.optim.AdamW's zeros_like(param)).
				mb, sb = 0, pb
			case s.Training.MasterDType == scenarios.MasterBF16:
				// DeepSpeed's bf16 master: a separate bf16 copy, the
				// moments in optimizer_state_dtype (scenarios.MasterBF16;
				// the loader takes bf16 groups only).
				mb, sb = 2, 2
				if s.Training.StateDType() == scenarios.FP32 {
					sb = 4
				}
			case s.ParamRemainders() && prec == scenarios.BF16:
				// The fp32 master's low 16 bits, an int16 remainder
				// beside the bf16 param that is its top half; Adam's
				// moments stay fp32 (scenarios.resolveParamRemainders
				// cites Apex's StateBucket and TE's FusedAdam).
				mb = 2
			}
			g = &group{info: GroupInfo{Name: gname, Precision: string(prec), ParamBytes: pb, GradBytes: gb, MasterBytes: mb, ReduceBytes: gb, StateBytes: sb},
				perUnit: map[int]int64{}, bucketGradBytes: gb}
			if s.Training.FP32Reduce() && gb < 4 {
				g.info.ReduceBytes = 4
				if r.Stage < 3 && !fsdpStage2(r, s) && !s.Training.NoMaster() && !(r.Convention == ConventionZerosim && stage0GradsFreed(r, s) && !s.FSDP1NoShard()) {
					// The grad buffer is the reduction's buffer: fp32
					// (grad_reduce_in_fp32, scenarios/stack.go). FSDP's
					// stage 2 reduces as its stage 3 (shardsPerUnit): the
					// gradients stay param_dtype, the reduction's fp32
					// input is a transient (UnitInfo.ReduceInput) and the
					// reduced shard is cast to the shard's dtype. Under
					// master_dtype none the loader takes reduce_dtype
					// fp32 below stage 3 only at FSDP's stage 2
					// (scenarios.MasterNone), whose seed conventions
					// count model states only. Without a gradient buffer
					// (stage0GradsFreed) .grad is AccumulateGrad's, in the
					// parameter's dtype: nothing reduces in one process, and
					// DeepSpeed's stage 0 all-reduces a flattened copy it
					// copies back (allreduce_bucket casts that copy to
					// communication_data_type, deepspeed/runtime/engine.py
					// at edaa7221). FSDP1's NO_SHARD (FSDP1NoShard) casts
					// .grad itself to reduce_dtype before its all-reduce
					// (_post_backward_hook: flat_param.grad.data =
					// flat_param.grad.to(handle._reduce_dtype),
					// torch/distributed/fsdp/_runtime_utils.py at
					// 3ade90a6aaa939cd6238e314c321b9f920db1471) and keeps
					// it so: fp32.
					g.info.GradBytes = 4
				}
			}
			byName[gname] = g
		}
		if l.Params == 0 {
			continue
		}
		n := int64(l.Params)
		if ep := expertParallel(s, gname); ep > 1 {
			if r.K < 1 || r.N%r.K != 0 || (r.N/r.K)%ep != 0 {
				return nil, fmt.Errorf("parallelism.ep %d does not divide the ranks of a shard group (N=%d, K=%d)", ep, r.N, r.K)
			}
			// The rank holds its 1/ep of the routed experts (validated to divide).
			n /= int64(ep)
			g.info.EP = ep
		}
		g.units = append(g.units, u)
		g.perUnit[u] = n
		g.numel = c.Add(g.numel, n)
	}
	if c.Err != nil {
		return nil, fmt.Errorf("model: parameter count overflows: %w", c.Err)
	}
	var groups []*group
	for _, name := range order {
		g := byName[name]
		if g == nil || g.numel == 0 {
			continue
		}
		var params []Param
		ep := max(g.info.EP, 1)
		for _, u := range g.units {
			ps, local, err := unitParams(&s.Model, u, r.Stage, padding, ep)
			if err != nil {
				return nil, err
			}
			for i := range ps {
				if local {
					break
				}
				// The rank holds 1/ep of each tensor the unit does
				// not list per expert.
				if ps[i].Numel%int64(ep) != 0 {
					return nil, fmt.Errorf("parallelism.ep %d does not divide tensor %s (%d elements) of group %q", ep, ps[i].Name, ps[i].Numel, name)
				}
				ps[i].Numel /= int64(ep)
			}
			params = append(params, ps...)
		}
		var bucketElems int64
		if bs := int64(s.Communication.BucketSize); bs > 0 {
			bucketElems = max(bs/g.bucketGradBytes, 1)
		}
		gshards := shards
		if g.info.EP > 1 {
			gshards = max(shards/g.info.EP, 1)
		}
		if g.info.EP == 0 {
			g.info.EP = 1
		}
		spec := StageSpec(params, r.Stage, gshards, bucketElems, padding)
		if !spec.PerUnit && bucketElems > 0 && (g.numel-1)/bucketElems+1 > MaxBuckets {
			return nil, &TooManyBucketsError{BucketSize: int64(s.Communication.BucketSize), Group: name, Numel: g.numel,
				Least: ((g.numel-1)/MaxBuckets + 1) * g.bucketGradBytes, Stage: s.Parallelism.Stage}
		}
		l, err := NewLayout(spec)
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", name, err)
		}
		g.layout = l
		g.info.Numel, g.info.Size = l.Numel, l.Size
		g.info.ShardElems, g.info.RankNumel = l.ShardElems(), l.RankNumel(min(r.Rank/g.info.EP, gshards-1))
		g.info.Buckets = len(l.Buckets)
		g.info.Layout = l
		groups = append(groups, g)
		r.Groups = append(r.Groups, g.info)
	}
	if len(groups) == 0 {
		return nil, errors.New("model: no parameters")
	}
	return groups, nil
}

// expertParallel is the expert-parallel degree of group name: parallelism.ep
// for the routed experts' group, 1 otherwise.
func expertParallel(s *scenarios.Scenario, name string) int {
	if name == scenarios.GroupExpert && s.Parallelism.EP > 1 {
		return s.Parallelism.EP
	}
	return 1
}

// unitParams returns unit u's tensors as layout params: the tensors the
// layer lists, else at stages 0–2 the tensors of the stack whose module
// tree the padding rule follows (unitTensors, tensorStyleOf), else one
// param for the whole unit. Megatron-Core's _ParamAndGradBuffer lays out
// and buckets parameter tensors (`for param in params[::-1]`,
// megatron/core/distributed/param_and_grad_buffer.py at NVIDIA/Megatron-LM
// 001199898c4badd01eaf0785c212d8ed7ce83042), so a block's fused linear_fc1
// and linear_fc2 may close buckets of their own; at stage 3 a unit is one
// FSDP flat parameter and stays one param. The scenario checked the listed
// shapes and that they add up to the layer's params.
//
// local reports that the params are already the rank's under
// expert-parallel degree ep: routed experts kept one module per expert,
// of which the rank holds its experts/ep whole (the first ones: the
// experts are alike). Otherwise the caller takes 1/ep of every param.
func unitParams(m *scenarios.Model, u, stage int, pad Padding, ep int) (ps []Param, local bool, err error) {
	l := m.LayerList[u]
	if len(l.Tensors) > 0 {
		for _, t := range l.Tensors {
			n := int64(1)
			for _, d := range t.Shape {
				n *= d // within int64: scenarios.Resolve checked the product
			}
			ps = append(ps, Param{Name: l.Name + "." + t.Name, Numel: n, Unit: u})
		}
		return ps, false, nil
	}
	var ts []paramTensor
	if stage < 3 {
		ts = unitTensors(m, u, tensorStyleOf(pad))
	}
	if len(ts) == 0 {
		return []Param{{Name: l.Name, Numel: int64(l.Params), Unit: u}}, false, nil
	}
	experts := int64(0)
	if l.Dims != nil {
		experts = l.Dims.Experts
	}
	local = ep > 1 && ts[0].expert > 0 && experts%int64(ep) == 0
	ps = make([]Param, 0, len(ts))
	for _, t := range ts {
		if local && t.expert > experts/int64(ep) {
			break
		}
		ps = append(ps, Param{Name: l.Name + "." + t.tensorName(), Numel: t.numel, Unit: u})
	}
	return ps, local, nil
}

// BufferLayouts returns the buffer layout of every parameter group of s at
// its stage, exactly as Analyze builds them (one code path): groups in
// declaration order ("dense" first unless declared), the units' tensors
// (unitParams) in forward order with Unit = layer index, Shards = N/K at stages
// 1–3 and 1 at stage 0, one bucket per unit at stage 3, otherwise buckets of
// communication.bucket_size bytes / the group's grad element size, and the
// scenario's padding rules. The zero/ replay and numerics should use these
// layouts rather than building their own.
func BufferLayouts(s *scenarios.Scenario) ([]GroupInfo, error) {
	r, err := analyzeSetup(s, Options{})
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	if _, err := buildGroups(s, r, r.Shards, PaddingOf(s.Communication.Padding)); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return r.Groups, nil
}
