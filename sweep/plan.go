package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
	"golang.org/x/sync/errgroup"
)

// PlanOptions bound the configurations Plan searches. Empty lists take the
// defaults below; every list is searched in full (the result is exact over
// the product, see Plan).
type PlanOptions struct {
	// GlobalBatch is the number of sequences per optimizer step; 0 keeps the
	// scenario's (micro_batch · grad_accum · dp).
	GlobalBatch int64
	// Stages are the ZeRO stages searched (default 0–3).
	Stages []int
	// Recompute are the activation checkpointing policies (default none,
	// selective, full).
	Recompute []string
	// BucketSizes are the gradient bucket sizes of stages 0–2 (default the
	// scenario's, 25MiB and 200MB). 25MiB is PyTorch DDP's default:
	// bucket_cap_mb=25, taken as bucket_bytes_cap = int(bucket_cap_mb *
	// 1024 * 1024) (torch/nn/parallel/distributed.py,
	// DistributedDataParallel.__init__, at pytorch/pytorch
	// 0028a164b2c000670e756008243689d9233e1a05). 200MB is a search point
	// between it and DeepSpeed's reduce_bucket_size default of 5e8 elements
	// (1 GB of 16-bit gradients; deepspeed/runtime/zero/config.py line 113
	// at deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641),
	// not a stack's default.
	BucketSizes []string
	// Prefetch are the ZeRO-3 prefetch depths (default 1 and 2).
	Prefetch []int
	// Algorithms are the collective algorithms (default auto alone, what a
	// run does; ring, hierarchical and tree are zerosim's alpha–beta
	// lowerings, bounds no NCCL setting reproduces for reduce-scatter and
	// all-gather).
	Algorithms []string
	// CP are the context-parallel degrees searched (ring attention over cp
	// GPUs: a rank keeps seq_len/cp of each sequence). Each keeps the GPU
	// count, dp = GPUs/cp, and the global batch, so a data-parallel rank
	// trains global/dp sequences; a degree whose dp does not split the
	// global batch is skipped (Plan.SkippedCP). nil keeps the scenario's
	// cp, and Candidate.Sets leaves cp and dp out.
	CP []int
	// K, if set, keeps the K searched to these (each must divide N).
	K []int
	// RequireDeviceFit ranks only the rows whose device peak (the caching
	// allocator's reserve, the CUDA context and NCCL's buffers on the
	// allocated peak: zero.Result.DevicePeak) fits the GPU, where run
	// expects no allocator retries; the others count as not fitting, by
	// their device peak.
	RequireDeviceFit bool
	// MicroBatches, if set, keeps the micro-batches searched to these (one
	// at least must split a rank's sequences).
	MicroBatches []int64
	// Jobs is how many replays run at once (≤ 0: runtime.GOMAXPROCS(0); at most
	// MaxJobs).
	Jobs int
	// Screening, if set, is called after each memory-model analysis of the
	// screen that comes before the replays (one per configuration that
	// differs in memory), with the number done and the number to do (from
	// several goroutines, never at once): on DeepSeek-V3 it is most of a
	// plan's time (QA s28 M1).
	Screening func(done, total int)
	// Progress, if set, is called after each replay with the number done
	// and the number to do (from several goroutines, never at once).
	Progress func(done, total int)
	// Accepted, if set, is called once the options and the search space
	// are found valid, before the first replay (the CLI prints the
	// scenario's warnings then: nothing before an input error), with the
	// collective algorithms the search runs (--algorithms, a --set
	// communication.algorithm, or auto).
	Accepted func(algorithms []string)
}

// Candidate is one configuration of a plan: the values Plan varies.
type Candidate struct {
	// CP is the context-parallel degree and DP = GPUs/CP the data-parallel
	// one when the plan searches cp (PlanOptions.CP); both 0 when it keeps
	// the scenario's.
	CP, DP int
	// EP is the expert-parallel degree when the plan searches it (a MoE
	// model whose ep a --set does not pin), 0 when it keeps the scenario's;
	// K is 1 where it is above 1 (scenarios' resolveEP).
	EP    int
	Stage int
	// K is the number of replicas of the sharded state at stages 1–3:
	// Megatron's num_distributed_optimizer_instances at stage 1 (its
	// distributed optimizer), HSDP / hybrid shard at stages 2–3 (shard
	// over N/K ranks, replicate K times); 1 at stage 0.
	K          int
	MicroBatch int64
	GradAccum  int64
	Recompute  string
	// BucketSize is "" at stage 3 (one bucket per unit: the size is unused).
	BucketSize string
	// Prefetch is the ZeRO-3 prefetch depth, -1 at stages 0–2 (unused).
	Prefetch  int
	Algorithm string
}

// BucketBytes is the candidate's bucket size in bytes: 0 at stage 3 (one
// bucket per unit) or for a --bucket-sizes value that is no size (its rows
// are rejected as input).
func (c Candidate) BucketBytes() int64 {
	b, err := units.ParseBytes(c.BucketSize)
	if err != nil {
		return 0
	}
	return int64(b)
}

// Sets returns the candidate as --set overrides: PlanCPKeys when cp is
// searched, PlanEPKey when ep is, then PlanKeys in order (unused keys left
// out).
func (c Candidate) Sets() []string {
	var sets []string
	if c.CP > 0 {
		sets = []string{"parallelism.cp=" + strconv.Itoa(c.CP), "parallelism.dp=" + strconv.Itoa(c.DP)}
	}
	if c.EP > 0 {
		sets = append(sets, PlanEPKey+"="+strconv.Itoa(c.EP))
	}
	sets = append(sets,
		"parallelism.zero_stage="+strconv.Itoa(c.Stage),
		"parallelism.k="+strconv.Itoa(c.K),
		"training.micro_batch="+strconv.FormatInt(c.MicroBatch, 10),
		"training.grad_accum="+strconv.FormatInt(c.GradAccum, 10),
		"training.recompute="+c.Recompute,
	)
	if c.BucketSize != "" {
		sets = append(sets, "communication.bucket_size="+c.BucketSize)
	}
	if c.Prefetch >= 0 {
		sets = append(sets, "communication.prefetch_depth="+strconv.Itoa(c.Prefetch))
	}
	return append(sets, "communication.algorithm="+c.Algorithm)
}

// Changed returns the overrides of c.Sets() that change src's scenario,
// in that order: each is loaded alone over the file and kept when the
// resolved scenario differs from the file's (or does not load), so a value
// spelled another way than the file's ("40000000B" for 40MB) is not a change.
func (c Candidate) Changed(src Source) ([]string, error) {
	base, err := src.LoadUnpinned()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, set := range c.Sets() {
		if s, err := src.LoadUnpinned(set); err != nil || !sameResolved(s, base) {
			out = append(out, set)
		}
	}
	return out, nil
}

// sameResolved reports whether a and b resolve to the same scenario, their
// warnings aside: a warning names the key's place, which a --set moves
// ("--set parallelism.ep=8: ep=8: …" for the file's "6:38: ep=8: …").
func sameResolved(a, b *scenarios.Scenario) bool {
	x, y := *a, *b
	x.Warnings, y.Warnings, x.LayoutWarning, y.LayoutWarning = nil, nil, "", ""
	return reflect.DeepEqual(&x, &y)
}

// memoryKey is the candidate without what memory does not depend on (the
// algorithm). The accumulation stays: at stage 3 the sharded gradients of
// the earlier micro-steps are alive through the last one
// (memory/timeline.go), so a peak taken at grad_accum 1 is not the
// candidate's. Within a plan the micro-batch fixes the accumulation, so
// keeping it adds no analysis.
func (c Candidate) memoryKey() Candidate {
	c.Algorithm = ""
	return c
}

// PlanRow is one candidate that fits, replayed.
type PlanRow struct {
	Candidate
	// StepTime, Compute (the nominal compute, the step's lower bound) and
	// ExposedComm (busiest rank) in picoseconds.
	StepTime    int64
	Compute     int64
	ExposedComm int64
	// Slowed is how much longer the busiest rank's compute ran than it
	// would alone (zero.RankStats.Compute − Alone: collectives beside it
	// slowing it, communication.compute_interference), the gap between
	// the two compute figures of zerosim run's step line; Wait the most
	// any rank waited for its peers (run's waiting column), in picoseconds.
	Slowed int64
	Wait   int64
	// NetworkBytes and NVLinkBytes are the step's wire bytes over every link
	// of the class; NetworkBusiest the busiest rank's network bytes.
	NetworkBytes   int64
	NVLinkBytes    int64
	NetworkBusiest int64
	// PeakMemory is the per-GPU peak; Fits is zerosim run's verdict
	// (zero.Result.Fits: the peak and what the device needs there, with
	// the CUDA context and NCCL's buffers, within the GPU), and Headroom
	// the GPU memory left beside that same need (zero.Result.DeviceNeed),
	// so a row fits exactly when its Headroom is not negative.
	PeakMemory int64
	Headroom   int64
	Fits       bool
	// DevicePeak is the busiest rank's peak as nvidia-smi sees it
	// (zero.Result.DevicePeak: the caching allocator's reserve, the CUDA
	// context and NCCL's buffers on top), the figure zerosim run warns
	// about when it exceeds the GPU while the allocated peak fits.
	DevicePeak int64
	// ReservedMode says how the reserve in DevicePeak was obtained
	// (zero.Result.ReservedMode); SimulatedRetries is how many times a
	// step the simulated caching allocator released its cache to stay
	// within the GPU (zero.Result.SimulatedRetries, the last simulated
	// step's; DevicePeak is capped there, so such a row does not fit the
	// device without retries either), nil where the reserve is a fraction
	// (plan.csv's and plan.json's allocator_retries).
	ReservedMode     string
	SimulatedRetries *int
	// DeviceFit is the replay's zero.Result.DeviceFits on the plan's GPU.
	DeviceFit bool
	// ReplayedBucket is the gradient bucket size the replay used at
	// stages 0–2 (communication.bucket_size after the candidate's sets: the
	// candidate's own size, or the scenario's or its stack's when the
	// candidate sets none, as torchtitan's DDP 100 MiB), 0 at stage 3.
	// plan.csv and plan.json write it, so a row set by the stack does not
	// read as "no bucket".
	ReplayedBucket int64
	// TokensPerSecPerGPU is the step's tokens over its time and the GPUs;
	// MFU the model FLOPs utilization as zerosim run reports it
	// (zero.Utilization: 6N + 12·L·H·Q·s per token, recompute excluded; 3×
	// the forward FLOPs for a model without that count, MFUFromForward).
	TokensPerSecPerGPU float64
	MFU                float64
	MFUFromForward     bool
	// Pareto marks the memory-vs-throughput front: no other row fits in
	// less (or equal) memory with more throughput.
	Pareto bool
	// BucketNote is how the row's stack reduces gradients at stages 0–2
	// where it sets no bucket size (scenarios.StackLayout.BucketNote; the
	// row then sets none), ReduceNote what the stack's reduction adds
	// (StackLayout.ReduceNote: DeepSpeed's overlap_comm off below stage
	// 3), for plan's run line; "" without.
	BucketNote, ReduceNote string
	// Timing names what timed the collectives (zero.Result.Timing): NCCL's
	// cost model, or the alpha–beta lowerings.
	Timing string
	// allocOOM is set when the replay's simulated caching allocator ran
	// out of memory (zero.Result.AllocatorOOM; the row does not fit).
	allocOOM bool
}

// Plan is the result of a plan search.
type Plan struct {
	Scenario    string
	Model       string
	Params      int64
	Nodes       int
	GPUs        int
	GPUsPerNode int
	GPU         string
	GPUMemory   int64
	// GPUMemoryUsable: GPUMemory is the capacity CUDA exposes
	// (scenarios.Cluster.GPUMemoryUsable).
	GPUMemoryUsable bool
	PeakFLOPS       int64
	// Efficiency is the base scenario's training.compute_efficiency and
	// EfficiencyFrom where it came from (a calibration file; "" when the
	// scenario or zerosim's default set it) and EfficiencyDefault whether
	// zerosim's default did; MFU is set when every replay fits the
	// efficiency to training.mfu instead, and FP8 when an fp8 recipe runs
	// the GEMMs.
	Efficiency        float64
	EfficiencyFrom    string
	EfficiencyDefault bool
	MFU               bool
	FP8               scenarios.FP8Recipe
	N                 int
	DP                int
	CP                int
	SeqLen            int64
	// GlobalBatch in sequences and TokensPerStep per optimizer step.
	GlobalBatch   int64
	TokensPerStep int64
	// Searched is the number of candidates, MemoryPruned those the memory
	// model rejected without a replay, Replayed the others.
	Searched     int
	MemoryPruned int
	Replayed     int
	// Invalid counts the candidates the loader, memory model or replay
	// rejected (a bucket size that makes too many buckets, a step beyond
	// the time range), as a sweep's error rows; FirstInvalid is one's error
	// (the first the memory model rejected, else the first replay).
	Invalid      int
	FirstInvalid string
	// pinInvalid counts the invalid candidates refused for their NCCL
	// pins (PinError).
	pinInvalid int
	// Rows are the candidates that fit: those with room for the caching
	// allocator's reserve first, then those that need retries (rankRows),
	// each fastest first (ties: search order).
	Rows []PlanRow
	// Smallest is the candidate with the least peak memory and its peak
	// (to say what to change when nothing fits).
	Smallest     Candidate
	SmallestPeak int64
	// SmallestNeed is what the device needs at Smallest's peak: the
	// larger of the peak and the peak with the CUDA context and NCCL's
	// buffers (zero.Result.DeviceNeed, memory.Report.Need), the
	// replay's where Smallest was replayed. Nothing fits by
	// SmallestNeed − GPUMemory, which can be positive when SmallestPeak
	// is within the GPU.
	SmallestNeed int64
	// SmallestAllocOOM is set when the simulated caching allocator runs
	// out of memory at Smallest (memory.AllocSim.OOM: fragmentation), by
	// the replay where Smallest was replayed, else by the memory model:
	// then it does not fit although SmallestPeak and SmallestNeed can be
	// within the GPU.
	SmallestAllocOOM bool
	// modelNeed is the memory model's SmallestNeed and SmallestAllocOOM
	// for a candidate it screened.
	modelNeed func(Candidate) (int64, bool)
	// Closest holds, for each searched stage none of whose candidates
	// fits, the one with the least peak (replayed where it was, else the
	// memory model's): what plan --network times for that stage at the
	// plan's global batch.
	Closest map[int]Candidate
	// SearchedStages and SearchedRecompute are the stages and checkpointing
	// policies searched (what to suggest when nothing fits).
	SearchedStages    []int
	SearchedRecompute []string
	// SearchedAlgorithms are the collective algorithms searched.
	SearchedAlgorithms []string
	// Pinned are the searched keys a --set gave, each searched at that
	// value alone ("parallelism.k=1", PlanKeys order).
	Pinned []string
	// SearchedK, SearchedMicroBatches, SearchedBuckets (as --set values)
	// and SearchedPrefetch are the other lists searched: every K of any
	// stage, every micro-batch of any cp.
	SearchedK            []int
	SearchedMicroBatches []int64
	SearchedBuckets      []string
	SearchedPrefetch     []int
	// SearchedEP are the expert-parallel degrees searched (a MoE model:
	// Candidate.EP), nil when the plan keeps the scenario's ep, EP.
	SearchedEP []int
	EP         int
	// EPLeftOut is set when expert-parallel degrees above 1 run but no K
	// searched runs with them (K = 1 there: scenarios.KOne).
	EPLeftOut bool
	// ScenarioSHA256 is scenarios.Digest of the scenario with Sets, the
	// --set overrides over it (sweep's Meta: scenario_sha256, sets; run's
	// "resolved: sha256" is its first 12 digits).
	ScenarioSHA256 string
	Sets           []string
	// PickAtFits is the winner replayed at the published runs' fits on its
	// GPU (AtPublishedFits: two more replays), nil when the scenario does
	// not run at zerosim's default efficiency, no published run is on its
	// GPU, or nothing fits.
	PickAtFits *PublishedFits
	// WinnerSets are the winner's overrides that change the scenario with
	// Sets applied (Candidate.Changed): zerosim run FILE with Sets, then
	// these, replays the winner. Empty when nothing fits.
	WinnerSets []string
	// ZeroPP is set when the scenario's ZeRO++ keys kept the search to
	// stage 3 (unless the stages were given) with K = 1.
	ZeroPP bool
	// Stack is the scenario's stack preset, "" without one, and StackRuns
	// the stages and K it runs (scenarios.StackLayout.Runs), the only ones
	// searched.
	Stack, StackRuns string
	stack            *scenarios.StackLayout
	// SearchedCP are the context-parallel degrees searched, nil when the
	// plan keeps the scenario's cp; SkippedCP says, for each searched
	// degree without a configuration to run, why ("cp=3: …"): the GPUs do
	// not split into cp-GPU rings, dp = GPUs/cp does not split the global
	// batch (no candidate was made), or the loader refused every candidate
	// (counted in Invalid).
	SearchedCP []int
	SkippedCP  []string
	// ActivationShare is the activations' share of Smallest's peak by the
	// memory model (memory.CompActivations at the total's peak); set only
	// when nothing fits, cp is not searched and the model has a sequence:
	// context parallelism divides them by cp.
	ActivationShare float64
	// NodesToFit is the least number of nodes (same GPUs per node) on which
	// Smallest fits as zerosim run judges it (the replayed peak), 0 if none
	// up to 65,536 GPUs does; set only when nothing fits.
	NodesToFit int
	// NodesToRoom is the least number of nodes on which Smallest fits with
	// room on the device for the caching allocator's reserve (fit's "leave
	// room", zero.Result.DeviceFits), 0 if none does; set with NodesToFit.
	// Where it exceeds NodesToFit, run on NodesToFit nodes says "yes, but
	// … expect allocator retries" (QA30 M1).
	NodesToRoom int
	// NodesCandidate is the configuration NodesToFit and NodesToRoom are
	// of, at K = 1: Smallest's, or another stage's least-memory
	// configuration (Closest) that fits on fewer nodes.
	NodesCandidate Candidate
	// RequireDeviceFit is PlanOptions': rows fit by their device peak.
	RequireDeviceFit bool
	// OneStep is set when the stack has no gradient accumulation
	// (scenarios.Scenario.NoGradAccum) and no --set asks for it: every candidate
	// runs a rank's sequences as one micro-batch.
	OneStep bool
	// NoSeqLen is set when the model has no sequence length (an MLP, a
	// bare parameter count): a sample counts as one token.
	NoSeqLen bool
	// OffloadSets is the least DeepSpeed offload (the optimizer states to
	// the CPU; at stage 3 the parameters too) under which Smallest fits the
	// GPU (the replayed peak, as zerosim run judges it) and the host's
	// memory (the memory model), as --set overrides, and OffloadPeak its
	// replayed GPU peak; empty when none does. Set only when nothing fits:
	// plan does not search offload.
	OffloadSets []string
	OffloadPeak int64
	// LossSets is training.cross_entropy=fused when Smallest fits the GPU
	// with flash-attn's fused loss in place of the fp32 cross-entropy (the
	// fp32 logits and their gradients are what breaks the fit at long
	// sequences and large vocabularies: docs/memory-model.md), judged as
	// OffloadSets is, with LossPeak its replayed peak; empty otherwise.
	// Set only when nothing fits: plan does not search the loss kernel.
	LossSets []string
	LossPeak int64

	invalidCP map[int]invalidCount
}

// KSetting is the stack's setting for c's K (scenarios.StackLayout.KSetting),
// "" without a stack or at K = 1.
func (p *Plan) KSetting(c Candidate) string {
	if p.stack == nil {
		return ""
	}
	return p.stack.KSetting(c.Stage, c.K)
}

// StackStages are the ZeRO stages the scenario's stack preset runs
// (scenarios.StackLayout.Stages), nil without a stack.
func (p *Plan) StackStages() []int {
	if p.stack == nil {
		return nil
	}
	return p.stack.Stages()
}

// StackOffloadNote is why the plan's stack does not run DeepSpeed's CPU
// offload (scenarios.StackLayout.OffloadNote), "" when it does or no stack
// is named: plan then does not advise offload.
func (p *Plan) StackOffloadNote() string {
	if p.stack == nil {
		return ""
	}
	return p.stack.OffloadNote()
}

// Best returns the winning row, nil when nothing fits.
func (p *Plan) Best() *PlanRow {
	if len(p.Rows) == 0 {
		return nil
	}
	return &p.Rows[0]
}

// BestPerStage returns each stage's fastest configuration that fits.
func (p *Plan) BestPerStage() map[int]Candidate {
	out := map[int]Candidate{}
	for _, r := range p.Rows {
		if _, ok := out[r.Stage]; !ok {
			out[r.Stage] = r.Candidate
		}
	}
	return out
}

// closestPerStage is Plan.Closest: for each stage of cands absent from
// fit, the candidate with the least peak, replayed where it was, else the
// memory model's; the first in search order on a tie.
func closestPerStage(cands []Candidate, fit map[int]Candidate, replayed map[Candidate]int64, modelPeak func(Candidate) (int64, bool)) map[int]Candidate {
	out := map[int]Candidate{}
	peaks := map[int]int64{}
	for _, c := range cands {
		if _, ok := fit[c.Stage]; ok {
			continue
		}
		peak, ok := peakOf(c, replayed, modelPeak)
		if !ok {
			continue
		}
		if best, seen := peaks[c.Stage]; !seen || peak < best {
			out[c.Stage], peaks[c.Stage] = c, peak
		}
	}
	return out
}

// peakOf is a candidate's peak as plan judges one that does not fit: the
// replayed peak where it was replayed (as zerosim run reports it), else the
// memory model's; false when neither has one.
func peakOf(c Candidate, replayed map[Candidate]int64, modelPeak func(Candidate) (int64, bool)) (int64, bool) {
	if peak, ok := replayed[c]; ok {
		return peak, true
	}
	return modelPeak(c)
}

// PlanKeys are the scenario keys a plan varies, in Candidate.Sets order.
var PlanKeys = []string{"parallelism.zero_stage", "parallelism.k", "training.micro_batch", "training.grad_accum",
	"training.recompute", planBucketKey, "communication.prefetch_depth", "communication.algorithm"}

// planBucketKey is the key of PlanKeys a plan leaves out where no
// candidate sets a bucket size (planSpace.searchesBuckets).
const planBucketKey = "communication.bucket_size"

// PlanCPKeys are the keys a plan that searches cp varies too, first in
// Candidate.Sets.
var PlanCPKeys = []string{"parallelism.cp", "parallelism.dp"}

// PlanEPKey is the key a plan of a MoE model varies too, after PlanCPKeys
// in Candidate.Sets.
const PlanEPKey = "parallelism.ep"

// planSpace is the resolved search space of a plan.
type planSpace struct {
	base *scenarios.Scenario
	// basePins is the base scenario's own pin error (Source.checkPins),
	// refused only when every candidate is refused for its pins too.
	basePins  error
	global    int64 // sequences per step
	layouts   []cpLayout
	cps       []int // the degrees searched, each once; nil: the scenario's
	skippedCP []string
	stages    []int
	recompute []string
	buckets   []string
	// bucketsAsked: --bucket-sizes or a --set communication.bucket_size
	// gave the sizes (a stack's fixed reduction does not override them).
	bucketsAsked bool
	// oneStep: the stack has no gradient accumulation and no --set asks
	// for it (noAccum), so every candidate runs one micro-step.
	oneStep    bool
	prefetch   []int
	algorithms []string
	// zeroPP: the scenario sets ZeRO++ keys, which run at stage 3 with one
	// copy of the state (the loader's rule): K = 1 only.
	zeroPP bool
	// stack is the layout of the scenario's stack preset, nil without
	// one: only its stages and K are searched.
	stack *scenarios.StackLayout
	// kOnly, if set, are the only K searched (--k, or a pinned
	// parallelism.k).
	kOnly []int
	// eps are the expert-parallel degrees searched (scenarios'
	// EPDegrees), nil when the plan keeps the scenario's ep: a dense
	// model, or an ep a --set pins.
	eps []int
	// pinned are the searched keys a --set gave ("key=value", the
	// resolved value, in PlanKeys order): searched at that value alone.
	pinned []string
}

// ks are the K searched at stage and expert-parallel degree ep (0: the
// scenario's): every divisor of N (1 alone at stage 0, with ZeRO++ or with
// ep > 1), those the scenario's stack runs.
func (sp *planSpace) ks(stage, ep int) []int {
	if ep == 0 {
		ep = sp.base.Parallelism.EP
	}
	ks := searchKs(sp.base, stage, ep, sp.zeroPP)
	if sp.stack != nil {
		ks = sp.stack.Ks(stage, sp.base.Cluster.Nodes, ks)
	}
	if sp.kOnly != nil {
		ks = slices.DeleteFunc(ks, func(k int) bool { return !slices.Contains(sp.kOnly, k) })
	}
	return ks
}

// noCandidates says why the space has no configuration: the stack runs
// none of the stages searched at any cp searched (--cp, or the scenario's:
// torchtitan's DDP has no cp), or the K asked for (--k, a pinned
// parallelism.k) run at none of the stages searched.
func (sp *planSpace) noCandidates() error {
	if st := sp.stack; st != nil {
		// The stack runs none of the stages at any cp searched (torchtitan's
		// DDP has no context parallelism): say so, not K.
		cps := make([]int, len(sp.layouts))
		for i, l := range sp.layouts {
			cps[i] = sp.layoutCP(l)
		}
		runs := func(x int) bool {
			return slices.ContainsFunc(cps, func(cp int) bool { return st.RunsCP(x, cp) })
		}
		if !slices.ContainsFunc(sp.stages, runs) {
			return fmt.Errorf("no configuration to search: stack %s runs none of the stages searched (%s) with cp %s (search stages it does: --stages %s; docs/stacks.md)",
				st.Name, strings.Join(mapInts(sp.stages), ", "), strings.Join(mapInts(slices.Compact(slices.Sorted(slices.Values(cps)))), ", "),
				strings.Join(mapInts(slices.DeleteFunc(st.Stages(), func(x int) bool { return !runs(x) })), ","))
		}
	}
	ks := "every divisor of N"
	if sp.kOnly != nil {
		ks = strings.Join(mapInts(sp.kOnly), ", ")
	}
	why := "stage 0, ZeRO++ and ep > 1 run K = 1 only"
	if sp.stack != nil {
		why += "; stack " + sp.stack.Name + " runs " + sp.stack.Runs(sp.base.Cluster.Nodes)
	}
	return fmt.Errorf("no configuration to search: no K searched (%s) runs at the stages searched (%s): %s", ks, strings.Join(mapInts(sp.stages), ", "), why)
}

// layoutCP is the cp of layout l: its own where --cp searches it, else
// the scenario's.
func (sp *planSpace) layoutCP(l cpLayout) int {
	if l.cp == 0 {
		return sp.base.Parallelism.CP
	}
	return l.cp
}

// epList is the expert-parallel degrees candidates take: eps, or 0 (the
// scenario's) when ep is not searched.
func (sp *planSpace) epList() []int {
	if sp.eps == nil {
		return []int{0}
	}
	return sp.eps
}

// setKeys are the keys src's --set overrides name, trimmed.
func setKeys(sets []string) map[string]bool {
	keys := map[string]bool{}
	for _, set := range sets {
		if k, _, ok := strings.Cut(set, "="); ok {
			keys[strings.TrimSpace(k)] = true
		}
	}
	return keys
}

// pin searches each key PlanKeys lists that a --set of src gives at that
// value alone, as the user asked, and refuses the key's search flag beside
// it; it applies --k and --micro-batches too. The value is the resolved
// scenario's (sp.base loads with the --set overrides).
func (sp *planSpace) pin(src Source, opt PlanOptions) error {
	set := setKeys(src.Sets)
	s := sp.base
	type pinKey struct {
		key, flag string
		given     bool
		apply     func() string // narrows the search, returns the value
	}
	for _, pk := range []pinKey{
		{"parallelism.zero_stage", "--stages", opt.Stages != nil, func() string {
			sp.stages = []int{s.Parallelism.Stage}
			return strconv.Itoa(s.Parallelism.Stage)
		}},
		{"parallelism.k", "--k", opt.K != nil, func() string {
			sp.kOnly = []int{s.Parallelism.K}
			return strconv.Itoa(s.Parallelism.K)
		}},
		{"training.micro_batch", "--micro-batches", opt.MicroBatches != nil, func() string {
			return strconv.FormatInt(s.Training.MicroBatch, 10)
		}},
		{"training.grad_accum", "--micro-batches", opt.MicroBatches != nil, func() string {
			return strconv.FormatInt(max(s.Training.GradAccum, 1), 10)
		}},
		{"training.recompute", "--recompute", opt.Recompute != nil, func() string {
			sp.recompute = []string{string(s.Training.Recompute)}
			return string(s.Training.Recompute)
		}},
		{planBucketKey, "--bucket-sizes", opt.BucketSizes != nil, func() string {
			sp.buckets, sp.bucketsAsked = []string{units.Bytes(s.Communication.BucketSize).Exact()}, true
			return sp.buckets[0]
		}},
		{"communication.prefetch_depth", "--prefetch", opt.Prefetch != nil, func() string {
			d := s.Communication.Prefetch()
			sp.prefetch = []int{d}
			return strconv.Itoa(d)
		}},
		{"communication.algorithm", "--algorithms", opt.Algorithms != nil, func() string {
			sp.algorithms = []string{string(s.Communication.Algorithm)}
			return sp.algorithms[0]
		}},
		{"parallelism.ep", "", false, func() string {
			sp.eps = nil
			return strconv.Itoa(s.Parallelism.EP)
		}},
		{"parallelism.cp", "--cp", opt.CP != nil, func() string { return strconv.Itoa(max(s.Parallelism.CP, 1)) }},
		{"parallelism.dp", "--cp", opt.CP != nil, func() string { return strconv.Itoa(s.Parallelism.DP) }},
	} {
		if !set[pk.key] {
			continue
		}
		v := pk.apply()
		if pk.given {
			return fmt.Errorf("--set %s=%s pins %s, and %s searches it: drop one of them", pk.key, v, pk.key, pk.flag)
		}
		if pk.key != "parallelism.cp" && pk.key != "parallelism.dp" {
			sp.pinned = append(sp.pinned, pk.key+"="+v)
		}
	}
	if st := sp.stack; st != nil && set["parallelism.zero_stage"] && !slices.Contains(st.Stages(), s.Parallelism.Stage) {
		return fmt.Errorf("--set parallelism.zero_stage=%d: stack %s does not run ZeRO stage %d (it runs %s; docs/stacks.md)",
			s.Parallelism.Stage, st.Name, s.Parallelism.Stage, st.Runs(s.Cluster.Nodes))
	}
	if opt.K != nil {
		n := sp.base.N()
		for _, k := range opt.K {
			if k < 1 || n%k != 0 {
				return fmt.Errorf("--k %d does not divide N = dp·cp = %d (use divisors of %d: %s)", k, n, n, strings.Join(mapInts(Divisors(n)), ", "))
			}
		}
		sp.kOnly = slices.Clone(opt.K)
	}
	// The micro-batches: those --micro-batches lists, or the pinned
	// micro_batch (or the one the pinned grad_accum leaves), of those that
	// split a rank's sequences.
	keep := opt.MicroBatches
	for i := range sp.layouts {
		l := &sp.layouts[i]
		ms := keep
		switch {
		case set["training.micro_batch"] && set["training.grad_accum"]:
			// Both pinned: they hold only where they make the rank's
			// sequences (the grad_accum was shown as pinned and replaced).
			ms = []int64{}
			if s.Training.MicroBatch*max(s.Training.GradAccum, 1) == l.perRank {
				ms = []int64{s.Training.MicroBatch}
			}
		case set["training.micro_batch"]:
			ms = []int64{s.Training.MicroBatch}
		case set["training.grad_accum"] && l.perRank%max(s.Training.GradAccum, 1) == 0:
			ms = []int64{l.perRank / max(s.Training.GradAccum, 1)}
		case set["training.grad_accum"]:
			ms = []int64{}
		}
		if ms != nil {
			l.microBatchs = slices.DeleteFunc(l.microBatchs, func(m int64) bool { return !slices.Contains(ms, m) })
		}
		if sp.oneStep = noAccum(s, set); sp.oneStep {
			// One micro-step: the rank's sequences are its micro-batch.
			l.microBatchs = slices.DeleteFunc(l.microBatchs, func(m int64) bool { return m != l.perRank })
		}
	}
	if !slices.ContainsFunc(sp.layouts, func(l cpLayout) bool { return len(l.microBatchs) > 0 }) {
		per := sp.layouts[0].perRank
		what := "--micro-batches " + strings.Join(mapInt64s(opt.MicroBatches), ",")
		switch {
		case noAccum(s, set):
			return fmt.Errorf("stack %s has no gradient accumulation (%s), so the %d sequences per data-parallel rank of the global batch %d must be one micro-batch, which --micro-batches or training.micro_batch leaves out or scenarios.MaxMicroBatch (%d) exceeds (use a --global-batch of dp × the micro-batch, or --set training.grad_accum=N to model accumulation anyway)",
				s.Stack, scenarios.NoAccumFrom, per, sp.global, scenarios.MaxMicroBatch)
		case set["training.micro_batch"] && set["training.grad_accum"]:
			mb, ga := s.Training.MicroBatch, int64(max(s.Training.GradAccum, 1))
			return fmt.Errorf("--set training.micro_batch=%d and --set training.grad_accum=%d make %d sequences per data-parallel rank, not the %d of the global batch %d over dp %d (drop one of them, or use --global-batch %d)",
				mb, ga, mb*ga, per, sp.global, sp.global/per, mb*ga*(sp.global/per))
		case set["training.micro_batch"]:
			what = "--set training.micro_batch=" + strconv.FormatInt(s.Training.MicroBatch, 10)
		case set["training.grad_accum"]:
			what = "--set training.grad_accum=" + strconv.FormatInt(max(s.Training.GradAccum, 1), 10)
		}
		seqs := "sequences"
		if per == 1 {
			seqs = "sequence"
		}
		return fmt.Errorf("%s does not split the %d %s per data-parallel rank of the global batch %d (use micro-batches dividing %d: %s)",
			what, per, seqs, sp.global, per, strings.Join(mapInt64s(microBatches(per)), ", "))
	}
	return nil
}

func mapInts(v []int) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.Itoa(x)
	}
	return out
}

func mapInt64s(v []int64) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.FormatInt(x, 10)
	}
	return out
}

// cpLayout is one context-parallel degree of a plan: cp and dp are 0 when
// the plan keeps the scenario's (Candidate.CP).
type cpLayout struct {
	cp, dp      int
	perRank     int64 // sequences per data-parallel rank per step
	microBatchs []int64
}

func newPlanSpace(src Source, opt PlanOptions) (*planSpace, error) {
	s, err := src.LoadUnpinned()
	if err != nil {
		return nil, err
	}
	if at := s.ActivationsKey(); at != "" {
		// Without activations every micro-batch fits without
		// checkpointing: plan recommended micro-batch 4 and no
		// checkpointing for a bare 13B at 15.7 GiB, which a real 13B
		// runs out of memory at (qauser s28 H1).
		return nil, scenarios.Place(src.File, src.Data, src.Sets, &scenarios.Error{Path: at,
			Msg: "plan needs the model's shape: " + noShape(at) + ", so no activations are counted and every micro-batch would fit without checkpointing (give model.preset, model.hf_config, or kind: transformer with hidden, layers and heads; zerosim run and fit give this model's states)"})
	}
	sp := &planSpace{base: s, basePins: src.checkPins(s), global: opt.GlobalBatch, stages: opt.Stages, recompute: opt.Recompute, buckets: opt.BucketSizes,
		prefetch: opt.Prefetch, algorithms: opt.Algorithms}
	if sp.global == 0 {
		sp.global = scenarioBatch(s)
	}
	if err := sp.cpLayouts(opt.CP); err != nil {
		return nil, err
	}
	sp.zeroPP = s.Communication.ZeroPP()
	if st, ok := s.StackLayout(); ok {
		sp.stack = &st
		for _, stage := range sp.stages {
			if !slices.Contains(st.Stages(), stage) {
				return nil, fmt.Errorf("--stages %d: stack %s does not run ZeRO stage %d (it runs %s; docs/stacks.md)", stage, st.Name, stage, st.Runs(s.Cluster.Nodes))
			}
		}
		if sp.stages == nil {
			sp.stages = st.Stages()
			if sp.zeroPP {
				sp.stages = slices.DeleteFunc(sp.stages, func(x int) bool { return x != 3 })
			}
		}
	}
	switch {
	case sp.stages == nil && sp.zeroPP:
		// DeepSpeed runs ZeRO++ at stage 3 only (scenarios' resolveZeroPP):
		// the other stages would all be refused as input.
		sp.stages = []int{3}
	case sp.stages == nil:
		sp.stages = []int{0, 1, 2, 3}
	}
	if sp.recompute == nil {
		sp.recompute = []string{"none", "selective", "full"}
	}
	sp.bucketsAsked = sp.buckets != nil
	if sp.buckets == nil {
		// The file's, then PlanOptions.BucketSizes' defaults it is not:
		// compared as bytes, so a file's 25MiB is searched once and its
		// 25MB is searched beside 25MiB.
		own := s.Communication.BucketSize
		sp.buckets = []string{units.Bytes(own).Exact()}
		for _, b := range []units.Bytes{25 * units.MiB, 200 * units.MB} {
			if b != own {
				sp.buckets = append(sp.buckets, b.Exact())
			}
		}
	} else {
		// One spelling for every size (plan.csv's bucket_size column, the
		// --set overrides): the scenario file's, a whole number of the
		// largest unit that divides it.
		sp.buckets = slices.Clone(sp.buckets)
		for i, b := range sp.buckets {
			if v, err := units.ParseBytes(b); err == nil && v > 0 {
				sp.buckets[i] = v.Exact()
			}
		}
	}
	if sp.prefetch == nil {
		sp.prefetch = []int{1, 2}
	}
	if sp.algorithms == nil {
		// auto is what a run does: on a GPU preset NCCL's cost model picks
		// the algorithm and protocol per collective. ring and hierarchical
		// are zerosim's alpha–beta lowerings at the links' full speed, which
		// no NCCL setting reproduces for a reduce-scatter or all-gather over
		// nodes (docs/collectives.md, Auto: NCCL's flat ring on every
		// channel), and which a network calibration does not correct:
		// bounds to ask for with --algorithms, not settings to run.
		sp.algorithms = []string{"auto"}
	}
	// A MoE model: every expert-parallel degree that runs (K = 1 above 1),
	// unless ZeRO++ keeps the search to its layout or a --set pins ep.
	if !sp.zeroPP {
		sp.eps = s.EPDegrees()
	}
	// ep 1 alone under a stack that runs no expert parallelism for the
	// model (scenarios' StackLayout.RunsEP; qa21 LOW 13).
	if sp.eps != nil && sp.stack != nil && !sp.stack.RunsEP(s.Model.Architecture) {
		sp.eps = []int{1}
	}
	if err := sp.pin(src, opt); err != nil {
		return nil, err
	}
	// A flag no searched stage reads was ignored: refuse it.
	switch {
	case opt.Prefetch != nil && !slices.Contains(sp.stages, 3):
		return nil, fmt.Errorf("--prefetch: no stage searched (%s) prefetches: the prefetch depth is ZeRO-3's (add 3 to --stages, or drop --prefetch)", strings.Join(mapInts(sp.stages), ", "))
	case opt.BucketSizes != nil && !slices.ContainsFunc(sp.stages, func(st int) bool { return st < 3 }):
		return nil, fmt.Errorf("--bucket-sizes: ZeRO-3 reduces one bucket per unit, and only stage 3 is searched (add 0, 1 or 2 to --stages, or drop --bucket-sizes)")
	}
	return sp, nil
}

// scenarioBatch is s's global batch: micro_batch · grad_accum · dp.
func scenarioBatch(s *scenarios.Scenario) int64 {
	return s.Training.MicroBatch * max(s.Training.GradAccum, 1) * int64(s.Parallelism.DP)
}

// CheckPlanCP reports whether any of the context-parallel degrees cps can
// run s's GPUs with a global batch of global sequences (0: s's own), as
// PlanSearch judges: the error names why each cannot.
func CheckPlanCP(s *scenarios.Scenario, global int64, cps []int) error {
	sp := &planSpace{base: s, global: global}
	if sp.global == 0 {
		sp.global = scenarioBatch(s)
	}
	return sp.cpLayouts(cps)
}

// cpLayouts resolves the context-parallel degrees: the scenario's alone
// (its dp must split the global batch), or each of cps on the same GPUs
// (dp = GPUs/cp) whose dp splits it, the others skipped with the reason.
func (sp *planSpace) cpLayouts(cps []int) error {
	if cps == nil {
		dp := int64(sp.base.Parallelism.DP)
		if err := CheckGlobalBatch(sp.global, dp); err != nil {
			return err
		}
		sp.layouts = []cpLayout{{perRank: sp.global / dp, microBatchs: microBatches(sp.global / dp)}}
		return nil
	}
	gpus := sp.base.GPUs()
	for _, cp := range cps {
		if slices.Contains(sp.cps, cp) {
			continue // a degree listed twice is searched and named once
		}
		sp.cps = append(sp.cps, cp)
		if cp < 1 || gpus%cp != 0 {
			sp.skippedCP = append(sp.skippedCP, fmt.Sprintf("cp=%d: the %d GPUs do not split into rings of %d", cp, gpus, cp))
			continue
		}
		dp := gpus / cp
		if err := CheckGlobalBatch(sp.global, int64(dp)); err != nil {
			sp.skippedCP = append(sp.skippedCP, fmt.Sprintf("cp=%d: %v", cp, err))
			continue
		}
		per := sp.global / int64(dp)
		sp.layouts = append(sp.layouts, cpLayout{cp: cp, dp: dp, perRank: per, microBatchs: microBatches(per)})
	}
	if len(sp.layouts) == 0 {
		return fmt.Errorf("no context-parallel degree can run: %s", strings.Join(sp.skippedCP, "; "))
	}
	return nil
}

// candidates lists every distinct configuration in search order: cp,
// stage, K, micro-batch, recompute, bucket size, prefetch, algorithm.
// Values a stage does not use are not varied (stage 0 shards nothing, so
// K = 1; stages 0–2 have no prefetch; stage 3 buckets per unit). K divides
// N = dp·cp, the GPU count at every cp; with ep > 1 it is 1.
func (sp *planSpace) candidates() []Candidate {
	var out []Candidate
	for _, l := range sp.layouts {
		cp := sp.layoutCP(l)
		for _, st := range sp.stages {
			if sp.stack != nil && !sp.stack.RunsCP(st, cp) {
				continue // only what the stack runs (torchtitan's DDP has no cp)
			}
			buckets, prefetch := []string{""}, []int{-1}
			if sp.setsBucket(st) {
				buckets = sp.buckets
			}
			if st == 3 {
				prefetch = sp.prefetch
			}
			for _, ep := range sp.epList() {
				for _, k := range sp.ks(st, ep) {
					for _, mb := range l.microBatchs {
						c := Candidate{CP: l.cp, DP: l.dp, EP: ep, Stage: st, K: k, MicroBatch: mb, GradAccum: l.perRank / mb}
						out = sp.settings(out, c, buckets, prefetch)
					}
				}
			}
		}
	}
	return out
}

// setsBucket reports whether a candidate at stage st sets a bucket size:
// stages 0–2, unless the scenario's stack fixes the gradient reduction
// there (scenarios.StackLayout.BucketNote: torchtitan's DDP 100 MiB
// buckets, FSDP's per-unit reductions) and no --bucket-sizes or --set
// communication.bucket_size asks for sizes (qa27 M2, L4). Stage 3
// reduces one bucket per unit.
func (sp *planSpace) setsBucket(st int) bool {
	return st < 3 && !(sp.stack != nil && sp.stack.FixesBucket(st) && !sp.bucketsAsked)
}

// searchesBuckets reports whether some stage searched sets a bucket size
// (setsBucket): otherwise neither the plan nor its sweep varies one.
func (sp *planSpace) searchesBuckets() bool {
	return slices.ContainsFunc(sp.stages, sp.setsBucket)
}

// settings appends c under every checkpointing policy, bucket size,
// prefetch depth and algorithm.
func (sp *planSpace) settings(out []Candidate, c Candidate, buckets []string, prefetch []int) []Candidate {
	for _, rc := range sp.recompute {
		for _, b := range buckets {
			for _, pf := range prefetch {
				for _, al := range sp.algorithms {
					c.Recompute, c.BucketSize, c.Prefetch, c.Algorithm = rc, b, pf, al
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// PlanGrids returns the exhaustive sweep over the plan's space: the cartesian
// product of every key Plan varies, unused values and micro-batch ×
// accumulation pairs that miss the global batch included; with cp searched,
// every cp against every dp first (the pairs whose dp·cp is not the GPU
// count are the loader's error rows). Its best fitting row with
// micro_batch · grad_accum · dp = the global batch is the plan's winner
// (TestPlanEqualsExhaustiveSweep).
func PlanGrids(src Source, opt PlanOptions) ([]Grid, error) {
	sp, err := newPlanSpace(src, opt)
	if err != nil {
		return nil, err
	}
	itoas := func(v []int) []string {
		var o []string
		for _, x := range v {
			o = append(o, strconv.Itoa(x))
		}
		return o
	}
	// Every cp's micro-batches and accumulations, ascending (one cp: its
	// own).
	var mbv, gav []int64
	var cps, dps []string
	for _, l := range sp.layouts {
		for _, m := range l.microBatchs {
			mbv, gav = append(mbv, m), append(gav, l.perRank/m)
		}
		cps, dps = append(cps, strconv.Itoa(l.cp)), append(dps, strconv.Itoa(l.dp))
	}
	ascending := func(v []int64) []string {
		slices.Sort(v)
		var o []string
		for _, x := range slices.Compact(v) {
			o = append(o, strconv.FormatInt(x, 10))
		}
		return o
	}
	mbs, gas := ascending(mbv), ascending(gav)
	// Every stage's K (unused values included, as above).
	var kv []int64
	for _, st := range sp.stages {
		for _, ep := range sp.epList() {
			for _, k := range sp.ks(st, ep) {
				kv = append(kv, int64(k))
			}
		}
	}
	ks := ascending(kv)
	var grids []Grid
	if sp.layouts[0].cp > 0 {
		grids = []Grid{{PlanCPKeys[0], cps}, {PlanCPKeys[1], dps}}
	}
	if sp.eps != nil {
		grids = append(grids, Grid{PlanEPKey, itoas(sp.eps)})
	}
	// The values of PlanKeys, in its order; no bucket size where no
	// candidate sets one.
	values := [][]string{itoas(sp.stages), ks, mbs, gas, sp.recompute, sp.buckets, itoas(sp.prefetch), sp.algorithms}
	for i, key := range PlanKeys {
		if key != planBucketKey || sp.searchesBuckets() {
			grids = append(grids, Grid{key, values[i]})
		}
	}
	return grids, nil
}

// PlanSearch searches every candidate of src's cluster and model: the
// memory model first rejects what cannot fit (no replay), then the rest are
// replayed in parallel (each on the symmetric fast path where it applies)
// and ranked by step time, so by tokens/s per GPU (every candidate moves
// the same global batch). The result is exact over the space: no heuristic
// skips a candidate that fits.
func PlanSearch(ctx context.Context, src Source, opt PlanOptions) (*Plan, error) {
	sp, err := newPlanSpace(src, opt)
	if err != nil {
		return nil, err
	}
	// An empty space is an input error, found before Accepted prints the
	// scenario's warnings: the error is then the one line.
	cands := sp.candidates()
	if len(cands) == 0 {
		return nil, sp.noCandidates()
	}
	if opt.Accepted != nil {
		opt.Accepted(sp.algorithms)
	}
	s := sp.base
	model := s.Model.Preset
	if model == "" {
		model = s.Name // an imported or explicit model: the scenario names it
	}
	if model == "" {
		model = string(s.Model.Kind)
	}
	p := &Plan{Scenario: src.File, Model: model, Params: s.Model.TotalParams(), Nodes: s.Cluster.Nodes, GPUs: s.GPUs(),
		GPUsPerNode: s.Cluster.GPUsPerNode, GPU: s.Cluster.GPU, GPUMemory: int64(s.Cluster.GPUMemory), GPUMemoryUsable: s.Cluster.GPUMemoryUsable, PeakFLOPS: int64(s.Cluster.PeakBF16),
		N: s.N(), DP: s.Parallelism.DP, CP: max(s.Parallelism.CP, 1), SeqLen: max(s.Model.SeqLen, 1), GlobalBatch: sp.global}
	p.TokensPerStep = sp.global * p.SeqLen
	p.Efficiency, p.EfficiencyFrom, p.EfficiencyDefault = s.Training.ComputeEfficiency, s.Training.ComputeEfficiencyFrom, s.Training.ComputeEfficiencyDefault
	p.MFU, p.FP8 = s.Training.MFU > 0, s.Training.FP8
	p.NoSeqLen = s.Model.SeqLen == 0
	p.SearchedStages, p.SearchedRecompute, p.SearchedAlgorithms = sp.stages, sp.recompute, sp.algorithms
	p.ZeroPP = sp.zeroPP
	p.Pinned = sp.pinned
	p.RequireDeviceFit = opt.RequireDeviceFit
	if p.ScenarioSHA256, err = scenarios.Digest(s); err != nil {
		return nil, err
	}
	p.Sets = slices.Clone(src.Sets)
	if p.Sets == nil {
		p.Sets = []string{}
	}
	p.SearchedBuckets, p.SearchedPrefetch = sp.buckets, sp.prefetch
	if !sp.searchesBuckets() {
		p.SearchedBuckets = []string{}
	}
	// The ep degrees searched are those some stage runs at a K searched
	// (--k 2 leaves ep > 1, which runs K = 1 only, out).
	var eps []int
	for _, st := range sp.stages {
		for _, ep := range sp.epList() {
			ks := sp.ks(st, ep)
			if len(ks) > 0 && !slices.Contains(eps, ep) {
				eps = append(eps, ep)
			}
			for _, k := range ks {
				if !slices.Contains(p.SearchedK, k) {
					p.SearchedK = append(p.SearchedK, k)
				}
			}
		}
	}
	if sp.eps != nil {
		slices.Sort(eps)
		p.SearchedEP = eps
		p.EPLeftOut = slices.ContainsFunc(sp.eps, func(ep int) bool { return ep > 1 && !slices.Contains(eps, ep) })
	}
	p.EP = max(s.Parallelism.EP, 1)
	slices.Sort(p.SearchedK)
	for _, l := range sp.layouts {
		for _, m := range l.microBatchs {
			if !slices.Contains(p.SearchedMicroBatches, m) {
				p.SearchedMicroBatches = append(p.SearchedMicroBatches, m)
			}
		}
	}
	slices.Sort(p.SearchedMicroBatches)
	if sp.stack != nil {
		p.Stack, p.StackRuns, p.stack = sp.stack.Name, sp.stack.Runs(s.Cluster.Nodes), sp.stack
		if note := sp.stack.EPNote(s.Model.Architecture); note != "" && s.EPDegrees() != nil {
			p.StackRuns += "; ep 1 only (" + note + ")"
		}
		if p.OneStep = sp.oneStep; sp.oneStep {
			p.StackRuns += "; one micro-step per optimizer step (no gradient accumulation: " + scenarios.NoAccumFrom + ")"
		}
	}
	p.SearchedCP, p.SkippedCP = sp.cps, sp.skippedCP
	p.Searched = len(cands)
	fits, modelPeak, screened, err := sp.prune(ctx, src, cands, opt, p)
	if err != nil {
		return nil, err
	}
	p.Replayed = len(fits)
	p.MemoryPruned = p.Searched - p.Replayed - p.Invalid
	rows := make([]PlanRow, len(fits))
	errs := make([]error, len(fits))
	var done atomic.Int64
	var progress sync.Mutex
	err = parallel(ctx, len(fits), opt.Jobs, func(i int) error {
		rows[i], errs[i] = p.replay(src, fits[i], screened(fits[i]))
		if opt.Progress != nil {
			progress.Lock()
			opt.Progress(int(done.Add(1)), len(fits))
			progress.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	replayed := map[Candidate]int64{}
	// shortOf says, for a replayed candidate that does not fit, what the
	// device needs at its replayed peak and whether the simulated
	// allocator ran out of memory (plan's nothing-fits line).
	type shortfall struct {
		need int64
		oom  bool
	}
	shortOf := map[Candidate]shortfall{}
	var tooLongAt Candidate
	tooLongN := 0
	for i, r := range rows {
		switch {
		case errs[i] != nil:
			var tl *zero.StepTooLongError
			if errors.As(errs[i], &tl) {
				if tooLongN++; tooLongN == 1 {
					tooLongAt = fits[i]
				}
			}
			p.invalid(fits[i], errs[i])
		case r.Fits && (!opt.RequireDeviceFit || r.DeviceFit):
			p.Rows = append(p.Rows, r)
		case opt.RequireDeviceFit: // judged by what the device needs
			replayed[fits[i]], shortOf[fits[i]] = r.DevicePeak, shortfall{r.DevicePeak, r.allocOOM}
		default: // the model let it through; the replayed step does not fit
			replayed[fits[i]], shortOf[fits[i]] = r.PeakMemory, shortfall{p.GPUMemory - r.Headroom, r.allocOOM}
		}
	}
	p.Closest = closestPerStage(cands, p.BestPerStage(), replayed, modelPeak)
	if len(p.Rows) == 0 && len(replayed) > 0 {
		// Nothing fits: the smallest peak is a replayed one where the
		// candidate was replayed (as zerosim run reports it), else the
		// model's.
		p.SmallestPeak = -1
		for _, c := range cands {
			peak, ok := peakOf(c, replayed, modelPeak)
			if !ok {
				continue
			}
			if p.SmallestPeak < 0 || peak < p.SmallestPeak {
				p.Smallest, p.SmallestPeak = c, peak
				if sf, ok := shortOf[c]; ok {
					p.SmallestNeed, p.SmallestAllocOOM = sf.need, sf.oom
				} else {
					p.SmallestNeed, p.SmallestAllocOOM = p.modelNeed(c)
				}
			}
		}
	}
	if p.Invalid > 0 && p.pinInvalid == p.Invalid && len(p.Rows) == 0 && len(replayed) == 0 && sp.basePins != nil {
		// Every candidate loaded was refused for the pins the base
		// scenario is refused for: that error, at its key.
		return nil, sp.basePins
	}
	if tooLongN > 0 && len(p.Rows) == 0 && len(replayed) == 0 {
		// No configuration that fits could be timed, and some because
		// their compute alone outlasts what a replay can time: the cause
		// is the global batch, not the links (QA s28 M2).
		return nil, fmt.Errorf("--global-batch %d: no configuration that fits in memory can be replayed: at %d of the %d the step's compute alone runs past %v, the range of int64 picoseconds (the first: %s); use a smaller --global-batch",
			sp.global, tooLongN, len(fits), units.Duration(math.MaxInt64), strings.Join(tooLongAt.Sets(), " "))
	}
	if p.Invalid == p.Searched {
		return nil, fmt.Errorf("no configuration can be replayed; the first: %s", p.FirstInvalid)
	}
	if len(fits) > 0 && len(p.Rows) == 0 && len(replayed) == 0 {
		// Every candidate the memory model let through failed as input:
		// saying nothing fits in memory would blame the wrong cause
		// (QA18 M1: a smallest peak under the GPU, "-72631.7 MiB over").
		return nil, fmt.Errorf("no configuration that fits in memory can be replayed; the first: %s", p.FirstInvalid)
	}
	slices.SortStableFunc(p.Rows, rankRows)
	markPareto(p.Rows)
	if best := p.Best(); best != nil {
		if p.WinnerSets, err = best.Changed(src); err != nil {
			return nil, err
		}
		if p.PickAtFits, err = pickAtFits(src, best.Candidate); err != nil {
			return nil, err
		}
	}
	p.skippedAll(cands)
	if len(p.Rows) == 0 {
		p.NodesToFit, p.NodesToRoom = nodesToFit(src, s, p.Smallest, opt.RequireDeviceFit)
		p.NodesCandidate = p.Smallest
		p.NodesCandidate.K = 1
		// The least-memory configuration here need not be the one that
		// fits on the fewest nodes: another stage's may shard more as the
		// nodes grow (qauser32 M3: gpt-oss-120b on 2 × 8 H100, the least
		// memory was stage 2 at ep 16, 6 nodes, where stage 3's
		// least-memory configuration, at ep 2, fits on 4). Each searched
		// stage's least-memory candidate
		// (Closest) is grown too, and the fewest nodes named with theirs.
		for _, st := range slices.Sorted(maps.Keys(p.Closest)) {
			c := p.Closest[st]
			c.K = 1
			if c == p.NodesCandidate {
				continue
			}
			if fit, room := nodesToFit(src, s, c, opt.RequireDeviceFit); fit > 0 && (p.NodesToFit == 0 || fit < p.NodesToFit) {
				p.NodesToFit, p.NodesToRoom, p.NodesCandidate = fit, room, c
			}
		}
		if p.StackOffloadNote() == "" {
			// Only what the stack runs is advised (qa19 L15).
			p.OffloadSets, p.OffloadPeak = offloadToFit(src, p.Smallest, opt.RequireDeviceFit)
		}
		p.LossSets, p.LossPeak = lossToFit(src, s, p.Smallest, opt.RequireDeviceFit)
		if opt.CP == nil && s.Model.SeqLen > 0 {
			p.ActivationShare = activationShare(src, p.Smallest)
		}
	}
	return p, nil
}

// skippedAll adds to SkippedCP each searched degree at which every
// candidate was rejected as input (the loader refuses cp > 1 with ZeRO++,
// for one), with the first error.
func (p *Plan) skippedAll(cands []Candidate) {
	total := map[int]int{}
	for _, c := range cands {
		total[c.CP]++
	}
	for _, cp := range p.SearchedCP {
		if n := total[cp]; n > 0 && p.invalidCP[cp].n == n {
			p.SkippedCP = append(p.SkippedCP, fmt.Sprintf("cp=%d: every configuration is rejected as input, e.g. %s", cp, p.invalidCP[cp].first))
		}
	}
}

// activationShare is the activations' share of c's peak by the memory
// model, 0 if c cannot be analyzed.
func activationShare(src Source, c Candidate) float64 {
	s, err := src.Load(c.Sets()...)
	if err != nil {
		return 0
	}
	rep, err := memory.Analyze(s, memory.Options{Reserve: memory.ReserveNone})
	if err != nil || rep.Peak <= 0 {
		return 0
	}
	return float64(rep.Component(memory.CompActivations).AtTotalPeak) / float64(rep.Peak)
}

// lossToFit is training.cross_entropy=fused when c fits under it and s's
// loss is not the fused one (the fp32 loss, or the 16-bit one, which keeps
// 2·t·V of log-probabilities and writes two gradients), with the replayed
// peak; nil otherwise. Models
// without a vocabulary have no loss kernel to change.
func lossToFit(src Source, s *scenarios.Scenario, c Candidate, device bool) ([]string, int64) {
	if s.Model.Vocab == 0 || s.Training.CrossEntropy == scenarios.CrossEntropyFused {
		return nil, 0
	}
	o := []string{"training.cross_entropy=fused"}
	f, err := src.Load(append(c.Sets(), o...)...)
	if err != nil {
		return nil, 0
	}
	rep, err := memory.Analyze(f, memory.Options{Reserve: memory.ReserveWhereFits})
	if err != nil || !rep.Fits {
		return nil, 0
	}
	if peak, ok := replayFits(f, rep, device); ok {
		return o, peak
	}
	return nil, 0
}

// offloadToFit is the least offload under which c fits (offload_optimizer
// to the CPU, then offload_param too at stage 3; DeepSpeed offloads at
// stages 1–3 with one copy of the state, K = 1, the loader's rule), with
// its GPU peak; nil if none fits the GPU and the host's memory. The memory
// model screens each offload and the replayed step decides, as zerosim run
// judges "fits" (replayFits): the suggestion then runs under
// run --require-fit, and the peak is the one run prints.
func offloadToFit(src Source, c Candidate, device bool) ([]string, int64) {
	if c.Stage < 1 {
		return nil, 0
	}
	opts := [][]string{{"offload.optimizer=cpu"}}
	if c.Stage == 3 {
		opts = append(opts, []string{"offload.optimizer=cpu", "offload.params=cpu"})
	}
	for _, o := range opts {
		if c.K != 1 {
			o = append([]string{"parallelism.k=1"}, o...)
		}
		s, err := src.Load(append(c.Sets(), o...)...)
		if err != nil {
			continue
		}
		rep, err := memory.Analyze(s, memory.Options{Reserve: memory.ReserveWhereFits})
		if err != nil || !rep.Fits || rep.Host != nil && !rep.Host.Fits {
			continue
		}
		if peak, ok := replayFits(s, rep, device); ok {
			return o, peak
		}
	}
	return nil, 0
}

// replayFits replays s (its memory-model report model taken, when not
// nil) and reports whether its peak fits the GPU, the verdict of zerosim
// run (zero.Result.Fits), with the peak; with device, whether its device
// peak fits too (zero.Result.DeviceFits), with that.
func replayFits(s *scenarios.Scenario, model *memory.Report, device bool) (int64, bool) {
	res, err := zero.Replay(s, zero.Options{NoCollectives: true, Memory: model})
	if err != nil {
		return 0, false
	}
	peak, _ := res.Peak()
	gpu := int64(s.Cluster.GPUMemory)
	if device {
		return res.DevicePeak, res.Fits(gpu) && res.DeviceFits(gpu)
	}
	return peak, res.Fits(gpu)
}

// jobs is how many run at once for a Jobs option j: j, at most MaxJobs,
// or DefaultJobs for j ≤ 0.
func jobs(j int) int {
	if j <= 0 {
		return DefaultJobs()
	}
	return min(j, MaxJobs)
}

// parallel calls f(0), …, f(n-1) on at most jobs(j) goroutines and returns
// the first error; once ctx is done or a call has failed, the calls not yet
// started return the context's error instead of running.
func parallel(ctx context.Context, n, j int, f func(i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs(j))
	for i := range n {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return f(i)
		})
	}
	return g.Wait()
}

// prune runs the memory model once per memory-relevant configuration and
// returns the candidates that fit, in search order, and each valid
// candidate's peak by the model; it records the smallest peak in p. The
// model works out the reserve only where the candidate fits (the
// simulated allocator's out-of-memory is then part of its verdict:
// memory.ReserveWhereFits), and screened gives the report of a candidate
// whose scenario it analyzed as it stands (the first algorithm searched,
// or another whose report is the same: memory.SameUnderAlgorithms), for
// its replay to take instead of analyzing it again; nil for the others.
func (sp *planSpace) prune(ctx context.Context, src Source, cands []Candidate, opt PlanOptions, p *Plan) (out []Candidate, modelPeak func(Candidate) (int64, bool), screened func(Candidate) *memory.Report, err error) {
	var keys []Candidate
	index := map[Candidate]int{}
	for _, c := range cands {
		k := c.memoryKey()
		if _, ok := index[k]; !ok {
			index[k] = len(keys)
			keys = append(keys, k)
		}
	}
	peaks := make([]int64, len(keys))
	needs := make([]int64, len(keys))
	ooms := make([]bool, len(keys)) // the simulated allocator out of memory
	fit := make([]bool, len(keys))
	errs := make([]error, len(keys))
	reps := make([]*memory.Report, len(keys))
	var done atomic.Int64
	var progress sync.Mutex
	err = parallel(ctx, len(keys), opt.Jobs, func(i int) error {
		c := keys[i]
		c.Algorithm = sp.algorithms[0]
		s, err := src.Load(c.Sets()...)
		var rep *memory.Report
		if err == nil {
			rep, err = memory.Analyze(s, memory.Options{Reserve: memory.ReserveWhereFits})
		}
		if opt.Screening != nil {
			progress.Lock()
			opt.Screening(int(done.Add(1)), len(keys))
			progress.Unlock()
		}
		if err != nil {
			errs[i] = err
			return nil // an invalid candidate, as a sweep's error row
		}
		peaks[i], needs[i], fit[i] = rep.Peak, max(rep.Peak, rep.Need), rep.Fits
		ooms[i] = rep.AllocSim != nil && rep.AllocSim.OOM != nil
		if rep.Fits {
			reps[i] = rep
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	p.modelNeed = func(c Candidate) (int64, bool) {
		ki := index[c.memoryKey()]
		return needs[ki], ooms[ki]
	}
	modelPeak = func(c Candidate) (int64, bool) {
		ki, ok := index[c.memoryKey()]
		if !ok || errs[ki] != nil {
			return 0, false
		}
		return peaks[ki], true
	}
	screened = func(c Candidate) *memory.Report {
		if ki, ok := index[c.memoryKey()]; ok && memory.SameUnderAlgorithms(scenarios.Algorithm(c.Algorithm), scenarios.Algorithm(sp.algorithms[0])) {
			return reps[ki]
		}
		return nil
	}
	p.SmallestPeak = -1
	for _, c := range cands {
		ki := index[c.memoryKey()]
		if errs[ki] != nil {
			p.invalid(c, errs[ki])
			continue
		}
		peak := peaks[ki]
		if p.SmallestPeak < 0 || peak < p.SmallestPeak {
			p.Smallest, p.SmallestPeak, p.SmallestNeed, p.SmallestAllocOOM = c, peak, needs[ki], ooms[ki]
		}
		if fit[ki] { // the model's verdict: the peak and the device's need within the GPU
			out = append(out, c)
		}
	}
	return out, modelPeak, screened, nil
}

// invalid counts a candidate that cannot run and keeps the first error,
// per searched cp too.
func (p *Plan) invalid(c Candidate, err error) {
	p.Invalid++
	if PinError(err) {
		p.pinInvalid++
	}
	if p.FirstInvalid == "" {
		p.FirstInvalid = fmt.Sprintf("%s: %v", strings.Join(c.Sets(), " "), err)
	}
	if c.CP > 0 {
		if p.invalidCP == nil {
			p.invalidCP = map[int]invalidCount{}
		}
		ic := p.invalidCP[c.CP]
		if ic.n++; ic.first == "" {
			ic.first = err.Error()
		}
		p.invalidCP[c.CP] = ic
	}
}

// invalidCount counts the invalid candidates of one cp.
type invalidCount struct {
	n     int
	first string
}

// replay measures one candidate, given its memory-model report when the
// screen has it (nil: the replay analyzes it).
func (p *Plan) replay(src Source, c Candidate, model *memory.Report) (PlanRow, error) {
	s, err := src.Load(c.Sets()...)
	if err != nil {
		return PlanRow{}, err
	}
	res, err := zero.Replay(s, zero.Options{NoCollectives: true, Memory: model})
	if err != nil {
		return PlanRow{}, err
	}
	m := measured(res, p.GPUMemory)
	r := PlanRow{Candidate: c, StepTime: m.StepTime, Compute: int64(res.Compute), ExposedComm: m.ExposedComm, Timing: res.Timing,
		NVLinkBytes: m.NVLinkBytes, DevicePeak: m.DevicePeak, TokensPerSecPerGPU: m.TokensPerSecPerGPU, MFU: m.MFU, MFUFromForward: m.MFUFromForward}
	r.DeviceFit = res.DeviceFits(p.GPUMemory)
	r.ReservedMode, r.SimulatedRetries = m.ReservedMode, m.AllocRetries
	if c.Stage < 3 {
		r.ReplayedBucket = int64(s.Communication.BucketSize)
	}
	if sl, ok := s.StackLayout(); ok {
		if c.Stage < 3 && c.BucketSize == "" {
			r.BucketNote = sl.BucketNote(c.Stage, s.Communication.BucketSize)
		}
		if o := s.Communication.Overlap; o != nil && !*o {
			r.ReduceNote = sl.ReduceNote(c.Stage)
		}
	}
	r.NetworkBusiest, r.NetworkBytes = BusiestWire(res, topology.Inter)
	b := res.Busiest()
	r.Slowed = max(int64(b.Compute-b.Alone), 0)
	for _, rk := range res.Ranks {
		r.Wait = max(r.Wait, int64(rk.Wait))
	}
	// The replayed peak and verdict, zerosim run's (zero.Result.Fits: the
	// peak and the device's need within the GPU); the memory model only
	// prunes (a configuration it rejects is not replayed).
	r.PeakMemory, r.Fits = m.PeakMemory, m.Fits
	r.Headroom = p.GPUMemory - max(r.PeakMemory, res.DeviceNeed)
	r.allocOOM = res.AllocatorOOM() != nil
	return r, nil
}

// rankRows orders a plan's rows: those whose device peak fits the GPU
// (DeviceFit: room for the caching allocator's reserve, no retries) before
// those that fit only without it (plan's †, where run warns "expect
// retries": cudaMalloc retries are slow, and with fragmentation they end
// in an OOM), each fastest first; ties keep the search order. QA34 M2: a
// † row 3.5 % faster than the first with room was the pick and its
// reproduce line. --require-device-fit drops the † rows instead.
func rankRows(a, b PlanRow) int {
	if a.DeviceFit != b.DeviceFit {
		if a.DeviceFit {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.StepTime, b.StepTime)
}

// markPareto marks the rows on the memory-vs-throughput front: a row is
// on it when every faster row needs more memory (by step time, whatever
// rankRows' order; ties in the rows' order). Where some rows have room
// for the caching allocator's reserve (DeviceFit), the front is theirs: a
// row that needs allocator retries is ranked after them (rankRows), and
// its step time leaves out what the retries cost, so it dominates none
// (qauser32 L4: the front listed #4, 72.8 GiB with retries, for 1,849
// tokens/s and left out #1, the plan's choice, 1,848 at 72.8 GiB).
func markPareto(rows []PlanRow) {
	room := slices.ContainsFunc(rows, func(r PlanRow) bool { return r.DeviceFit })
	var idx []int
	for i, r := range rows {
		if r.DeviceFit || !room {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(rows[i].StepTime, rows[j].StepTime) })
	least := int64(-1)
	for _, i := range idx {
		if least < 0 || rows[i].PeakMemory < least {
			rows[i].Pareto = true
			least = rows[i].PeakMemory
		}
	}
}

// nodesToFit is the least number of nodes (GPUs per node and cp kept, dp
// grown with them, K = 1) on which c fits, as zerosim run judges it (the
// replayed peak); 0 if none up to 65,536 GPUs does (or a layout cannot be
// loaded). It is fit's least-nodes search (leastNodes): the memory model's
// least node count (a binary search, the peak taken not to grow with dp)
// is where the replays start, and they walk from there to the least that
// fits, doubling the step, then bisecting: near capacity the replayed peak
// can be above the model's (docs/memory-model.md).
//
// The node counts step as the candidate's layout needs (nodeStep): its cp
// and its ep, where plan searched ep, not the file's (qauser32 M3:
// gpt-oss-120b's least-memory candidate at ep 16 stepped by the file's
// ep 1, was refused at 3 nodes, "ep=16 does not divide the 24 ranks",
// and plan named no node count at all).
func nodesToFit(src Source, s *scenarios.Scenario, c Candidate, device bool) (fit, room int) {
	c.K = 1
	cs := *s
	if c.CP > 0 { // the candidate's cp, kept; dp grows with the nodes
		cs.Parallelism.CP = c.CP
	}
	if c.EP > 0 { // the candidate's ep, kept
		cs.Parallelism.EP = c.EP
	}
	s = &cs
	gpn, step := max(s.Cluster.GPUsPerNode, 1), nodeStep(s, 1)
	jd := judge{memory.ConventionZerosim}
	ns, err := leastNodes((1<<16)/(gpn*step), func(j int) (*scenarios.Scenario, error) {
		return src.Load(append(c.Sets(), nodeSets(s, j*step)...)...)
	}, jd)
	if err != nil {
		return 0, 0
	}
	if device { // the least with room on the device (fit's device nodes)
		return ns.DeviceJ * step, ns.DeviceJ * step
	}
	return ns.J * step, ns.DeviceJ * step
}

// ParseGlobalBatch reads a global batch: a number of sequences ("512"), or
// of tokens with a "tokens" or "tok" suffix ("4194304tokens", "4194304
// tok"), which must be a whole number of sequences of seqLen tokens (M is
// 10^6, so "4Mtokens" is not, at any power-of-two seqLen above 256; "4Mi
// tokens", 4 × 2^20, is: the refusal says so).
func ParseGlobalBatch(v string, seqLen int64) (int64, error) {
	return ParseGlobalBatchDP(v, seqLen, 1)
}

// ParseGlobalBatchDP is ParseGlobalBatch for a plan over dp data-parallel
// ranks: a token count must then be a whole number of sequences for each
// rank, and the counts it suggests are multiples of seqLen·dp (QA7 F11:
// "use 3997696 tokens" was 488 sequences, which dp 32 does not split).
func ParseGlobalBatchDP(v string, seqLen, dp int64) (int64, error) {
	t := strings.TrimSpace(v)
	num, tokens := t, false
	for _, suf := range []string{"tokens", "tok"} {
		if strings.HasSuffix(t, suf) {
			num, tokens = strings.TrimSpace(strings.TrimSuffix(t, suf)), true
			break
		}
	}
	n, err := units.ParseCount(num)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q: use a number of sequences such as 512, or of tokens such as 4194304tokens or 4Mitokens (a whole number of sequences)", v)
	}
	if !tokens {
		return int64(n), nil
	}
	seqLen, dp = max(seqLen, 1), max(dp, 1)
	unit, what := seqLen, fmt.Sprintf("%d-token sequences", seqLen)
	if dp > 1 && seqLen <= math.MaxInt64/dp {
		unit, what = seqLen*dp, fmt.Sprintf("dp=%d × %d-token sequences", dp, seqLen)
	}
	if int64(n)%unit != 0 || int64(n) < unit {
		lo := max(int64(n)/unit, 1)
		return 0, fmt.Errorf("%q is not a whole number of %s (use %s tokens%s)", v, what, multiplesAround(lo*unit, unit), binaryTokens(num, unit))
	}
	return int64(n) / seqLen, nil
}

// binaryTokens is, for a token count num written with a decimal prefix
// ("4M"), the same digits with the binary one ("4Mi": 4 × 2^20), when
// that is a whole number of unit tokens: what "4M tokens" usually means
// (QA34 L3). "" otherwise.
func binaryTokens(num string, unit int64) string {
	for _, p := range [][2]string{{"K", "Ki"}, {"M", "Mi"}, {"B", "Gi"}, {"T", "Ti"}} {
		digits, ok := strings.CutSuffix(num, p[0])
		if !ok {
			continue
		}
		n, err := units.ParseCount(digits + p[1])
		if err != nil || int64(n)%unit != 0 || int64(n) < unit {
			return ""
		}
		return fmt.Sprintf("; %s is decimal, %s binary: %stokens is %d", p[0], p[1], strings.TrimSpace(digits)+p[1], int64(n))
	}
	return ""
}

// CheckPlanValues checks the values a plan option lists: key is the option
// ("recompute", "algorithms", "bucket-sizes", "prefetch", "cp") and the
// error says what is allowed.
func CheckPlanValues(key string, vals []string) error {
	allowed := map[string][]string{"recompute": {"none", "selective", "full", "op"}, "algorithms": {"auto", "ring", "hierarchical", "tree"}}[key]
	for _, v := range vals {
		switch {
		case allowed != nil && !slices.Contains(allowed, v):
			return fmt.Errorf("%q: use %s", v, strings.Join(allowed, ", "))
		case key == "bucket-sizes":
			if b, err := units.ParseBytes(v); err != nil || b < 1 {
				return fmt.Errorf("%q: use a size such as 25MB", v)
			}
		case key == "prefetch":
			if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 64 {
				return fmt.Errorf("%q: use a depth from 0 to 64", v)
			}
		case key == "cp":
			if n, err := strconv.Atoi(v); err != nil || n < 1 || n > scenarios.MaxNodes*scenarios.MaxGPUsPerNode {
				return fmt.Errorf("%q: use context-parallel degrees of 1 or more that divide the GPU count, such as 1,2,4,8", v)
			}
		}
	}
	return nil
}

// CheckGlobalBatch reports whether a global batch of sequences splits
// evenly over dp data-parallel ranks.
func CheckGlobalBatch(global, dp int64) error {
	if global < dp || global%dp != 0 {
		lo := max(global/dp, 1) * dp
		return fmt.Errorf("global batch %d sequences is not a multiple of dp=%d (use %s)", global, dp, multiplesAround(lo, dp))
	}
	if len(microBatches(global/dp)) == 0 {
		return fmt.Errorf("global batch %d sequences is %d per data-parallel rank (dp=%d): more than %d micro-steps (training.grad_accum) of at most %d sequences (training.micro_batch) (use a smaller global batch)",
			global, global/dp, dp, scenarios.MaxGradAccum, scenarios.MaxMicroBatch)
	}
	return nil
}

// microBatches lists, in ascending order, the micro-batches that split a
// rank's sequences in whole micro-steps, both within a scenario's limits:
// one per gradient accumulation that divides them. (A loop over every
// micro-batch up to the rank's sequences ran for hours at --global-batch
// 1T.)
func microBatches(perRank int64) []int64 {
	var ms []int64
	for g := min(perRank, scenarios.MaxGradAccum); g >= 1; g-- {
		if m := perRank / g; perRank%g == 0 && m <= scenarios.MaxMicroBatch {
			ms = append(ms, m)
		}
	}
	return ms
}

// multiplesAround suggests the multiple lo of step and the next one, "lo or
// lo+step", or lo alone when the next one does not fit in 64 bits (it
// wrapped to a negative number: "use 9223372036854775806 or
// -9223372036854775808").
func multiplesAround(lo, step int64) string {
	if lo > math.MaxInt64-step {
		return strconv.FormatInt(lo, 10)
	}
	return fmt.Sprintf("%d or %d", lo, lo+step)
}

// ParseTokens reads a training length in tokens ("1T", "300B").
func ParseTokens(v string) (int64, error) {
	n, err := units.ParseCount(strings.TrimSuffix(strings.TrimSpace(v), "tokens"))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q: use a token count such as 1T or 300B", v)
	}
	return int64(n), nil
}

// noAccum reports whether plan searches one micro-step only: under a stack
// whose trainer has no gradient accumulation (scenarios.Scenario.NoGradAccum),
// unless the scenario sets training.grad_accum itself.
func noAccum(s *scenarios.Scenario, set map[string]bool) bool {
	return s.NoGradAccum() && !set["training.grad_accum"]
}

// noShape says what the key at, which sizes a model counting no
// activations (scenarios.Scenario.ActivationsKey), leaves out.
func noShape(at string) string {
	if at == "model.params" {
		return "model.params alone has no transformer dimensions"
	}
	return "the layer list gives no dims or activation_bytes"
}
