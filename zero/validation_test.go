package zero

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

var updateValidation = flag.Bool("update", false, "rewrite docs/validation.md")

// validationSource is one file of ../testdata/validation: a published table
// (source, setup) and its rows.
type validationSource struct {
	// gpn is the template's cluster.gpus_per_node (loadValidation), by
	// which validationRow.sets divides a row's GPUs into nodes.
	gpn    int
	Source string `json:"source"`
	Setup  string `json:"setup"`
	// CapacityGiB is the GPU memory, in GiB as the source states it, that
	// its rows' memory_pct and active_pct are percentages of (torchtitan
	// 83c879f logs memory as a percentage of the device's total memory).
	CapacityGiB float64         `json:"capacity_gib"`
	Rows        []validationRow `json:"rows"`
	// OOMRows are runs the source publishes as out of memory (a footnote
	// instead of a throughput): each must be predicted not to fit, with
	// the efficiency fitted on Rows, and none is in the throughput
	// figures.
	OOMRows []validationRow `json:"oom_rows"`
	// OutsideRange says why the source's fitted efficiency is not one of
	// the published fits run, plan and calibrate quote for its GPU
	// (PublishedRange): its GPUs did not run at the preset's peak (torchao's
	// "power limited" B200, at 750 W), so the fit measures the
	// cap as much as the stack. Empty: the fit is quoted.
	OutsideRange string `json:"outside_range"`
	// ActiveAllocated says why the source's active peaks (active_gib) are
	// compared with zerosim's allocated peak: a setup where the two are
	// one figure and memory simulates no caching allocator (it does for
	// FSDP1 and FSDP2 at stage 3). Empty: a published active peak must
	// meet a simulated one; given, it must not.
	ActiveAllocated string `json:"active_allocated"`
	// MemoryOnly says why the source's throughput is no evidence (a
	// host-side step time, an unnamed GPU): its rows still calibrate the
	// replay, and their predicted throughput is shown, but none is in the
	// suite's throughput figures and its fit is not quoted
	// (PublishedRange); its memory is the test.
	MemoryOnly string `json:"memory_only"`
}

// unfitted reports whether the source publishes no throughput at all (a
// memory_only source whose rows give none: ms-swift's example scripts
// state memory and wall time only): nothing calibrates its replay, which
// runs at the template's compute efficiency, and its rows' throughput
// errors are NaN.
func (s validationSource) unfitted() bool {
	return len(s.Rows) > 0 && s.Rows[0].TokensPerGPU == 0
}

// validationRow is one published run. Zero fields come from the source's
// scenario template.
type validationRow struct {
	Model  string `json:"model"`
	Hidden int64  `json:"hidden"`
	Layers int64  `json:"layers"`
	Heads  int64  `json:"heads"`
	GPUs   int    `json:"gpus"`
	// GPU is cluster.gpu for a source whose rows ran the same recipe on
	// different GPUs (Megatron-Bridge's 25.11 table: DGX-GB200, DGX-B200,
	// DGX-GB300), so that one calibration predicts the others; "" for the
	// template's.
	GPU string `json:"gpu"`
	// GPUsPerNode is the GPUs of the row's one node where the row ran on
	// part of a node (2 of an H200 node's 4): cluster.gpus_per_node, one
	// node. 0: the template's.
	GPUsPerNode  int     `json:"gpus_per_node"`
	DP           int     `json:"dp"` // dp when the row gives cp (else dp = gpus)
	CP           int     `json:"cp"`
	SeqLen       int64   `json:"seq_len"`
	MicroBatch   int64   `json:"micro_batch"`
	GradAccum    int     `json:"grad_accum"`
	TokensPerGPU float64 `json:"tokens_per_gpu_per_s"`
	// TokensRange is a throughput the source publishes as a range
	// ("6100-6200 WPS"), instead of tokens_per_gpu_per_s: the test
	// compares with its midpoint.
	TokensRange []float64 `json:"tokens_per_gpu_per_s_range"`
	MemoryGiB   float64   `json:"memory_gib"`
	// MemoryBytes is memory_gib published in bytes (Megatron-LM's
	// training_log writes torch.cuda.memory_stats()
	// ["allocated_bytes.all.peak"] as mem-max-allocated-bytes).
	MemoryBytes int64 `json:"memory_bytes"`
	// MemoryPct is memory_gib published as a percentage of the source's
	// capacity_gib.
	MemoryPct float64 `json:"memory_pct"`
	// ActiveGiB (or ActivePct, a percentage of capacity_gib) is the caching
	// allocator's peak active bytes (torch.cuda.memory_stats()
	// ["active_bytes.all.peak"]: the blocks in use, allocated or freed but
	// still waiting on a stream), compared with zerosim's active peak
	// (activeGiB); a row may give it beside memory_gib (the reserved peak).
	ActiveGiB float64 `json:"active_gib"`
	ActivePct float64 `json:"active_pct"`
	// ActiveMiss is MemoryMiss for the active peak.
	ActiveMiss string `json:"active_miss"`
	// RestGiB is the allocated memory after the step
	// (torch.cuda.memory_allocated() once the optimizer step has
	// returned: model states and what the loop still references),
	// compared with zerosim's allocated at rest; RestMiss is MemoryMiss
	// for it.
	RestGiB  float64 `json:"rest_gib"`
	RestMiss string  `json:"rest_miss"`
	// MemoryKind says what MemoryGiB measured: unset, the caching
	// allocator's reserved peak (torch.cuda.max_memory_reserved, what
	// torchtitan logs), compared with zerosim's reserved peak; or
	// "nvidia-smi", the device memory nvidia-smi shows (reserved plus the
	// CUDA context and NCCL's buffers), compared with zerosim's device peak;
	// or "allocated", torch.cuda.max_memory_allocated (KempnerForge's
	// peak_gb), compared with zerosim's allocated peak.
	MemoryKind string `json:"memory_kind"`
	// Optional per-row settings for sources whose rows differ in more than
	// size and batch (fms-fsdp, llm-foundry's other tables): grouped-query
	// heads, FFN width, HSDP replicas (parallelism.k), the recompute policy
	// and every-N-th-block checkpointing; the optimizer's implementation
	// (training.optimizer_impl: torchtitan 40f8fd007 logs the same run
	// with foreach and with fused AdamW).
	KVHeads        int64  `json:"kv_heads"`
	FFN            int64  `json:"ffn"`
	K              int    `json:"k"`
	Recompute      string `json:"recompute"`
	RecomputeEvery int    `json:"recompute_every"`
	// RecomputeFraction is training.recompute_fraction: fms-fsdp's
	// selective_checkpointing p from e53bac1 on (its ed74fd5 table).
	RecomputeFraction string `json:"recompute_fraction"`
	// Vocab and NormImpl are model.vocab and training.norm_impl for a
	// source whose rows are of models with different vocabularies or
	// norms (torchtitan 157a12c56: Llama 3 and Llama 2, fused_rmsnorm or
	// rmsnorm by the model's config).
	Vocab    int64  `json:"vocab"`
	NormImpl string `json:"norm_impl"`
	// Row is the source's line as published.
	Row string `json:"row"`
	// OptimizerImpl is training.optimizer_impl for a source whose rows
	// differ by it (torchtitan 40f8fd007: foreach and fused AdamW).
	OptimizerImpl string `json:"optimizer_impl"`
	// MasterDType and OptimizerStateDType are training.master_dtype and
	// training.optimizer_state_dtype for a row that ran another master or
	// optimizer-state precision than its template (DeepSpeedExamples'
	// bf16_master_weight: bf16.bf16_master_weights_and_grads and
	// bf16.bf16_optimizer_states beside its fp32-master baseline).
	MasterDType         string `json:"master_dtype"`
	OptimizerStateDType string `json:"optimizer_state_dtype"`
	// Autocast and CrossEntropy are training.autocast and
	// training.cross_entropy for a row that ran under torch.autocast
	// where its template did not (bf16_master_weight's bf16_full.json:
	// DeepSpeed's torch_autocast bf16 around the model, and train.py's
	// own torch.autocast around the loss: cross_entropy autocast).
	Autocast     string `json:"autocast"`
	CrossEntropy string `json:"cross_entropy"`
	// MemoryMiss, when set, names a known gap of the memory model that
	// puts this row's memory beyond 10 % (what the stack does that zerosim
	// does not model). The row is reported with the reason and asserted
	// to still miss: when the model learns the mechanism, the test fails
	// until the field is removed.
	MemoryMiss string `json:"memory_miss"`
	// FP8, FP8AllGather and Compile are training.fp8,
	// training.fp8_all_gather and training.compile for a row that differs
	// from its source's template in precision or compilation (torchao's
	// float8 tables publish a bf16 row and float8 rows of the same job):
	// calibrated on the source's bf16 row, such a row tests what zerosim
	// predicts of float8 from bf16 alone (fp8GEMMPeak, the casts).
	FP8          string `json:"fp8"`
	FP8AllGather *bool  `json:"fp8_all_gather"`
	Compile      string `json:"compile"`
	// ZeroStage is parallelism.zero_stage for a row that differs from its
	// template in it: torchtitan 5940ddeb5's reshard_after_forward_policy
	// "never", under which FSDP2 keeps every unit gathered from forward
	// through backward, is ZeRO-2 under an FSDP boundary.
	ZeroStage *int `json:"zero_stage"`
	// Boundary is communication.boundary for a row that ran another
	// FSDP reshard policy than its template's (torchtitan 5940ddeb5's
	// reshard_after_forward_policy "always").
	Boundary string `json:"boundary"`
	// ModelPreset is model.preset for a source whose rows train models
	// that the row dimensions cannot describe (torchtitan bcc09297a's
	// nvfp4.md: Llama 3 8B and Qwen3 8B, whose q/k norms only its
	// config.json gives); the template then names its model by a preset
	// too.
	ModelPreset string `json:"model_preset"`
	// Arch and Dropout are model.arch and training.dropout for a row
	// whose model is of another block layout than its template's, with
	// its own dropout (NeMo 24.07's GPT3-5B row, a GPT block with
	// hidden_dropout 0.1, beside the Llama rows it is predicted from).
	Arch    string `json:"arch"`
	Dropout string `json:"dropout"`
	// TokenMiss, on a row whose precision differs from its source's
	// calibration row, names why it is predicted outside 5 % (what the
	// stack does that zerosim does not model); TokenBound holds it at the
	// error it reached, and the test asserts it still misses 5 %, so both
	// fields must go when the model learns the mechanism.
	TokenMiss  string  `json:"token_miss"`
	TokenBound float64 `json:"token_bound"`
	// FitMiss, when set, names why zerosim cannot predict that this row,
	// which ran, fits in its GPU's memory (what the stack does that
	// zerosim does not model). Every other row must be predicted to fit
	// (TestValidation's fit check); a row with FitMiss is reported with the
	// reason and asserted to still not fit, so the field must go when the
	// model learns the mechanism.
	FitMiss string `json:"fit_miss"`
	// OpSaveAllToAll is training.op_save_all_to_all for a row whose op
	// policy kept the expert-parallel all-to-alls and its template's did
	// not: torchtitan c4e2291's "After" run of the same job config.
	OpSaveAllToAll *bool `json:"op_save_all_to_all"`
}

// resolve turns the forms a source may publish in into the figures the
// test compares: a throughput range into its midpoint, percentages of the
// source's capacity into GiB.
func (r *validationRow) resolve(capacityGiB float64) error {
	if r.TokensRange != nil {
		if len(r.TokensRange) != 2 || r.TokensRange[0] <= 0 || r.TokensRange[0] > r.TokensRange[1] {
			return fmt.Errorf("tokens_per_gpu_per_s_range %v: want [low, high] with 0 < low <= high", r.TokensRange)
		}
		if r.TokensPerGPU != 0 {
			return fmt.Errorf("tokens_per_gpu_per_s and tokens_per_gpu_per_s_range both set: give one")
		}
		r.TokensPerGPU = (r.TokensRange[0] + r.TokensRange[1]) / 2
	}
	for _, m := range []struct {
		name     string
		gib, pct *float64
	}{{"memory", &r.MemoryGiB, &r.MemoryPct}, {"active", &r.ActiveGiB, &r.ActivePct}} {
		if *m.pct == 0 {
			continue
		}
		switch {
		case *m.gib != 0:
			return fmt.Errorf("%s_gib and %s_pct both set: give one", m.name, m.name)
		case capacityGiB <= 0:
			return fmt.Errorf("%s_pct without the source's capacity_gib", m.name)
		}
		*m.gib = *m.pct / 100 * capacityGiB
	}
	if r.MemoryBytes != 0 {
		if r.MemoryBytes < 0 {
			return fmt.Errorf("memory_bytes %d: want a byte count above 0", r.MemoryBytes)
		}
		if r.MemoryGiB != 0 {
			return fmt.Errorf("memory_gib and memory_bytes both set: give one")
		}
		r.MemoryGiB = float64(r.MemoryBytes) / (1 << 30)
	}
	if r.ActiveMiss != "" && r.ActiveGiB == 0 {
		return fmt.Errorf("active_miss without an active peak")
	}
	if r.RestMiss != "" && r.RestGiB == 0 {
		return fmt.Errorf("rest_miss without an allocated figure at rest")
	}
	return nil
}

// measured is the published throughput as the doc shows it: the figure,
// or the midpoint of a range with the range beside it.
func (r validationRow) measured() string {
	if r.TokensPerGPU == 0 {
		return "—"
	}
	if r.TokensRange != nil {
		return fmt.Sprintf("%.0f (%.0f-%.0f)", r.TokensPerGPU, r.TokensRange[0], r.TokensRange[1])
	}
	return fmt.Sprintf("%.0f", r.TokensPerGPU)
}

func (r validationRow) sets(gpusPerNode int) []string {
	var part []string
	if r.GPU != "" {
		part = append(part, "cluster.gpu="+r.GPU)
	}
	if r.GPUsPerNode > 0 {
		gpusPerNode = r.GPUsPerNode
		part = append(part, fmt.Sprintf("cluster.gpus_per_node=%d", r.GPUsPerNode))
	}
	sets := []string{
		fmt.Sprintf("cluster.nodes=%d", r.GPUs/gpusPerNode),
		fmt.Sprintf("parallelism.dp=%d", max(r.DP, r.GPUs/max(r.CP, 1))),
		fmt.Sprintf("parallelism.cp=%d", max(r.CP, 1)),
		fmt.Sprintf("training.micro_batch=%d", r.MicroBatch),
		fmt.Sprintf("training.grad_accum=%d", max(r.GradAccum, 1)),
	}
	for _, d := range []struct {
		key string
		v   int64
	}{{"model.hidden", r.Hidden}, {"model.layers", r.Layers}, {"model.heads", r.Heads}, {"model.seq_len", r.SeqLen},
		{"model.kv_heads", r.KVHeads}, {"model.ffn", r.FFN}, {"model.vocab", r.Vocab}, {"parallelism.k", int64(r.K)}, {"training.recompute_every", int64(r.RecomputeEvery)}} {
		if d.v > 0 {
			sets = append(sets, fmt.Sprintf("%s=%d", d.key, d.v))
		}
	}
	// The rows' settings as --set values, "" for a setting the row leaves
	// at its template's.
	given := func(p any) string {
		switch v := p.(type) {
		case *bool:
			if v != nil {
				return strconv.FormatBool(*v)
			}
		case *int:
			if v != nil {
				return strconv.Itoa(*v)
			}
		}
		return ""
	}
	for _, o := range []struct{ key, v string }{
		{"training.recompute", r.Recompute},
		{"training.recompute_fraction", r.RecomputeFraction},
		{"training.norm_impl", r.NormImpl},
		{"training.optimizer_impl", r.OptimizerImpl},
		{"training.master_dtype", r.MasterDType},
		{"training.optimizer_state_dtype", r.OptimizerStateDType},
		{"training.autocast", r.Autocast},
		{"training.cross_entropy", r.CrossEntropy},
		{"training.fp8", r.FP8},
		{"training.fp8_all_gather", given(r.FP8AllGather)},
		{"training.compile", r.Compile},
		{"parallelism.zero_stage", given(r.ZeroStage)},
		{"communication.boundary", r.Boundary},
		{"model.preset", r.ModelPreset},
		{"model.arch", r.Arch},
		{"training.dropout", r.Dropout},
		{"training.op_save_all_to_all", given(r.OpSaveAllToAll)},
	} {
		if o.v != "" {
			sets = append(sets, o.key+"="+o.v)
		}
	}
	return append(part, sets...)
}

func (r validationRow) name() string {
	var n string
	gpus := fmt.Sprintf("%d GPUs", r.GPUs)
	if r.GPU != "" {
		gpus = fmt.Sprintf("%d %s", r.GPUs, r.GPU)
	}
	if r.CP > 1 || r.SeqLen > 0 {
		n = fmt.Sprintf("%s, %s (dp %d, cp %d), seq %d, micro-batch %d, GA %d", r.Model, gpus, max(r.DP, r.GPUs/max(r.CP, 1)), max(r.CP, 1), r.SeqLen, r.MicroBatch, max(r.GradAccum, 1))
	} else {
		n = fmt.Sprintf("%s, %s, micro-batch %d, GA %d", r.Model, gpus, r.MicroBatch, max(r.GradAccum, 1))
	}
	if r.K > 1 {
		n += fmt.Sprintf(", HSDP k %d", r.K)
	}
	if r.Recompute != "" {
		n += ", recompute " + r.Recompute
		if r.RecomputeEvery > 1 {
			n += fmt.Sprintf(" every %d", r.RecomputeEvery)
		}
		if r.RecomputeFraction != "" {
			n += " of " + r.RecomputeFraction + " of the blocks"
		}
	}
	for _, o := range []struct{ label, v string }{
		{"norm", r.NormImpl},
		{"optimizer", r.OptimizerImpl},
		{"master", r.MasterDType},
		{"optimizer states", r.OptimizerStateDType},
		{"autocast", r.Autocast},
		{"cross_entropy", r.CrossEntropy},
	} {
		if o.v != "" {
			n += ", " + o.label + " " + o.v
		}
	}
	if r.FP8 != "" {
		n += ", fp8 " + r.FP8
		if r.FP8AllGather != nil && !*r.FP8AllGather {
			n += " (bf16 all-gather)"
		}
	}
	if r.Compile != "" {
		n += ", compile " + r.Compile
	}
	if r.ZeroStage != nil {
		n += fmt.Sprintf(", zero_stage %d", *r.ZeroStage)
	}
	if r.Boundary != "" {
		n += ", boundary " + r.Boundary
	}
	if r.OpSaveAllToAll != nil {
		n += fmt.Sprintf(", op_save_all_to_all %t", *r.OpSaveAllToAll)
	}
	return n
}

// validationCase is a row's prediction.
type validationCase struct {
	row                 validationRow
	calibrated          bool
	tokens, peakGiB     float64
	tokenErr, memoryErr float64 // relative, NaN when not published
	activeErr           float64 // the active peak against activeGiB; NaN when not published
	// activeGiB is zerosim's active peak: the simulated caching
	// allocator's, the allocated bytes with the blocks whose record_stream
	// frees still wait (memory.AllocSim.PeakActive), where the reserve is
	// simulated; the allocated peak elsewhere.
	activeGiB float64
	restErr   float64 // the allocated at rest against restGiB; NaN when not published
	restGiB   float64 // zerosim's allocated at rest (rank 0)
	// The fit check: every published row ran, so it must fit. allocGiB is the
	// allocated peak; needGiB what the device needs at least, the allocated
	// peak plus the CUDA context and NCCL's buffers (the caching allocator
	// releases its cached blocks and retries before it reports out-of-memory:
	// pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp at
	// eb42ad6eca0ce61e7c581212b4bf32f991425571,
	// DeviceCachingAllocator::malloc, release_cached_blocks on a failed
	// cudaMalloc, num_alloc_retries); deviceGiB the device peak with the
	// allocator's usual reserve (memory.ProfilerPeaks), capGiB the GPU's
	// memory. fits is zerosim's verdict (zero.Result.Fits,
	// reports.FitVerdict): the allocated peak and needGiB within the capacity.
	allocGiB, needGiB, deviceGiB, capGiB float64
	fits                                 bool
	// For the known misses' reasons: tokens per GPU and step, the
	// model's parameters, dp, the GiB a rank sends in a step and the
	// intra-node link's bandwidth (B/s).
	stepTokens int64
	params     int64
	dp         int
	sentGiB    float64
	intraBW    float64
	// For the nvidia-smi comparison (deepspeedGaps): tokens of one
	// micro-step and the parameters of the units kept gathered across the
	// forward/backward boundary (memory.KeptAcrossBoundary).
	microTokens int64
	keptParams  int64
	paramDType  scenarios.DType
	poolBytes   int64 // memory.GatherPool
	overlap     bool  // communication.overlap: DeepSpeed's overlap_comm
	// crossPrecision: the row runs an fp8 recipe and its source's
	// calibration row does not (checkCrossPrecision).
	crossPrecision bool
	// The row's cluster.gpu, whether it runs an fp8 recipe and whether
	// it compiles anything (training.compile other than none)
	// (PublishedEfficiency).
	gpu      string
	fp8      scenarios.FP8Recipe
	compiled bool
	nodes    int // cluster.nodes
}

// sharedSource is the source copied from the team's shared validation set:
// issue 16's acceptance holds every predicted row of it within 5 %.
const sharedSource = "llm-foundry-mpt-a100-40gb"

// heldSources are the sources whose every predicted row of the
// calibration row's precision is held within 5 % after calibration, or at
// the bound of its knownMisses entry: the shared source (issue 16's
// acceptance) and the sources added with that promise, torchtitan's
// Llama 3 8B commit runs, nvfp4.md's bf16 rows and the Qwen3-32B table
// (a row of another precision is held by checkCrossPrecision).
var heldSources = []string{sharedSource, "torchtitan-llama3-8b-h100-commits", "torchtitan-nvfp4md-gb200", "torchtitan-qwen3-32b-h100"}

// heldMiss is a predicted row in knownMisses.
type heldMiss struct {
	source string
	c      validationCase
}

// knownMiss is a row of a held source that is predicted outside 5 %
// after honest work, or a single row of another source held the same way
// (an outlier of its table, whose other rows stay reported only): the
// test holds it at the figure reached (bound) so that it cannot get worse
// unnoticed, asserts that it still misses (the entry must go when the
// model learns why), and docs/validation.md says why.
type knownMiss struct {
	bound float64 // |relative error| allowed
	// reason says why, its figures computed from c (the row) and v
	// (every source's predictions), none typed in.
	reason func(c validationCase, v validationResults) string
}

// validationResults are every source's predicted rows, by source.
type validationResults map[string][]validationCase

// rows are source's predicted rows that keep says to keep.
func (v validationResults) rows(source string, keep func(validationRow) bool) []validationCase {
	var out []validationCase
	for _, c := range v[source] {
		if keep(c.row) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		panic(fmt.Sprintf("validation: no such rows in %s", source))
	}
	return out
}

// errRange is the least and the largest token error of cs.
func errRange(cs []validationCase) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		lo, hi = min(lo, c.tokenErr), max(hi, c.tokenErr)
	}
	return lo, hi
}

// maxAbsErr is the largest |token error| of cs.
func maxAbsErr(cs []validationCase) float64 {
	lo, hi := errRange(cs)
	return max(-lo, hi)
}

// stepSeconds is a row's step time at tokens per second per GPU.
func (c validationCase) stepSeconds(tokens float64) float64 { return float64(c.stepTokens) / tokens }

// persistentGiB is the state a rank keeps between steps under full
// sharding with mixed-precision Adam and gradient accumulation: the fp32
// master shard, Adam's two moments and the accumulated fp32 gradients,
// 16 bytes a parameter over dp.
func (c validationCase) persistentGiB() float64 {
	return 16 * float64(c.params) / float64(c.dp) / float64(units.GiB)
}

// knownMisses is keyed by source and row name. The bounds are the
// errors the rows reached when they were added (or last moved), rounded
// up to the next 0.1 point: never loosened to pass.
var knownMisses = map[[2]string]knownMiss{
	{sharedSource, "mpt-13b, 8 GPUs, micro-batch 4, GA 16"}: {0.122,
		// The bound follows the model, never the other way: 0.121 held
		// +11.4 % until collectives' timed phases ran at once (NCCL's
		// pipelined ring, collectives.Fabric.runTimed), which made
		// concurrent multi-node collectives share their bottleneck for all
		// of their time; that slowed this source's 16-GPU calibration row,
		// raised its fitted efficiency 0.7723 -> 0.7784 and moved this row
		// to +12.1 % (1870 against 1668 tok/s/GPU, 0.1211), while the
		// suite's median error fell 3.0 -> 2.8 % and its rows within 5 %
		// rose 137 -> 143.
		// What ran, what was read and what was ruled out; see the reason.
		// The torch sources are v1.13.1's Python files as Debian bookworm
		// ships them (python3-torch 1.13.1+dfsg-4; dfsg strips no Python):
		// fully_sharded_data_parallel.py _FreeEventQueue (lines 730-757,
		// _max_num_inflight_all_gathers = 2), _unshard (1538-1561),
		// _reshard (1568-1599), _post_backward_hook (3191-3355),
		// _cast_grad_to_param_dtype (3357-3384), _wait_for_post_backward
		// (3408-3424); flat_param.py prepare_gradient (775-835),
		// _free_unsharded_flat_param (913-927). Composer v0.13.2
		// (433273d8): composer/trainer/trainer.py _train_batch's closure
		// .item() (2145-2153), _train_microbatches (2194-2256),
		// _train_microbatch (2258-2348), _eval_train_metrics (2071-2095);
		// devices/device_gpu.py tensor_to_device (58-59);
		// trainer/dist_strategy.py ddp_sync_context (57-69).
		mpt13bMissReason},
	// -6.27 % when the source was added; the zero_stage 2 row, -8.66 %
	// then, was -8.12 % at lead 4d5a9bff (session 29), and its bound
	// follows it down from 0.087.
	{titanCommitsSource, "llama3-8b, 8 GPUs, micro-batch 1, GA 1, boundary fsdp2"}: {0.063, titanCommitsReason},
	{titanCommitsSource, "llama3-8b, 8 GPUs, micro-batch 1, GA 1, zero_stage 2"}:   {0.082, titanCommitsReason},
	// -10.60 % when the source was added, -6.62 % at lead 4d5a9bff
	// (session 29; its bound follows it down from 0.106); the eager batch-2
	// row, -6.98 % then, is -3.3 % since FSDP2's copies are charged
	// (zero.fsdp2CopyBytes).
	{qwen32bSource, "qwen3-32b, 8 GPUs, micro-batch 2, GA 1, compile blocks+loss"}: {0.067, qwen32bBatchReason},
	// +1.1 % when the source was added, +7.4 % since FSDP2's copies are
	// charged.
	{qwen32bSource, "qwen3-32b, 16 GPUs, micro-batch 4, GA 1"}: {0.075, qwen32bNodesReason},
	// Single rows of sources that are not held (llmfOutlierReason).
	// +19.9, +27.2 and +7.5 % until the head was charged the fused
	// loss's own traffic (4 B a logit each way, not the fp32 loss's 14
	// and 28) and Composer's two train-metric cross-entropies (20 B a
	// logit, training.train_metrics): 14 B a logit less a micro-step,
	// which these short-sequence rows of a small model feel most (the
	// sources' rows within 5 % rose 48 -> 54 and 33 -> 34).
	{llmfA100Source, "mpt-760m, 8 GPUs (dp 8, cp 1), seq 1024, micro-batch 48, GA 2, recompute none"}: {0.215, llmfA100ShortReason},
	{llmfA100Source, "mpt-760m, 8 GPUs (dp 8, cp 1), seq 512, micro-batch 96, GA 2, recompute none"}:  {0.289, llmfA100ShortReason},
	{llmfH100Source, "mpt-760m, 8 GPUs (dp 8, cp 1), seq 2048, micro-batch 24, GA 2, recompute none"}: {0.091, llmfH100760Reason},
}

// qwen32bNodesReason is the reason for the Qwen3-32B row on two hosts (c),
// batch 4 on 16 GPUs, predicted from the batch-1 row on one host.
func qwen32bNodesReason(c validationCase, v validationResults) string {
	b2 := v.rows(qwen32bSource, func(r validationRow) bool { return r.GPUs == 8 && r.MicroBatch == 2 && r.Compile == "" })[0]
	return fmt.Sprintf("not established. On one host the batch-2 row is %+.1f %%; this row ran on two hosts (16 GPUs, local batch 4), "+
		"and the commit names neither host nor network for it: the template assumes the 400 Gb/s RDMA per GPU of Meta's Grand Teton hosts "+
		"(torchtitan docs/performance.md at eaea6f6), which zerosim then overlaps with the blocks' compute (%.1f GiB sent a rank a step). "+
		"Before FSDP2's per-gather and per-reduction copies were charged (zero.fsdp2CopyBytes: they cost the batch-1 calibration row "+
		"four times what they cost this row a token) it was +1.1 %%, and the batch-2 row -7.0 %%",
		100*b2.tokenErr, c.sentGiB)
}

const (
	titanCommitsSource = "torchtitan-llama3-8b-h100-commits"
	qwen32bSource      = "torchtitan-qwen3-32b-h100"
)

// calibrationRow is source's calibration row.
func (v validationResults) calibrationRow(source string) validationCase {
	i := slices.IndexFunc(v[source], func(c validationCase) bool { return c.calibrated })
	if i < 0 {
		panic(fmt.Sprintf("validation: no calibration row in %s", source))
	}
	return v[source][i]
}

// titanDefaultRun is the tps of torchtitan 5940ddeb5's 'Default' run, the
// median of its lines of steps 10 to 50 as the commit message logs them
// (pytorch/torchtitan 5940ddeb5, "tps: 5,536", "5,615", "5,607", "5,603",
// "5,605"), logged on 2025-02-05 beside the 'Always' and 'Never' runs with
// the same llama3_8b.toml as 6a6f755d2's run, at the same 49.59 GiB: 5,605
// (testdata/validation/torchtitan-llama3-8b-h100-commits.json's note).
var titanDefaultRun = medianOf([]float64{5536, 5615, 5607, 5603, 5605})

// titanCommitsReason is the reason for a 5940ddeb5 row of the torchtitan
// commit runs (c), which the source predicts from 6a6f755d2's run of
// November 2024.
func titanCommitsReason(c validationCase, v validationResults) string {
	cal := v.calibrationRow(titanCommitsSource)
	drift := titanDefaultRun/cal.row.TokensPerGPU - 1
	// The row against the Default run of its own day, as zerosim
	// predicts the row against the calibration row's configuration.
	sameDay := c.tokens/cal.tokens*titanDefaultRun/c.row.TokensPerGPU - 1
	if math.Abs(sameDay) > 0.05 {
		panic("validation: " + c.row.name() + " is off by more than 5 % against the Default run of its own day: reword titanCommitsReason")
	}
	return fmt.Sprintf("calibrated on 6a6f755d2's run of 2024-11-25 (%.2f tok/s/GPU, the wandb summary's wps of steps 991 to 1000, a window that holds the profiler's recorded steps), "+
		"this row ran on 2025-02-05 on another nightly: 5940ddeb5's message logs that day a 'Default' run of the calibration row's own configuration "+
		"(the same llama3_8b.toml, the same 49.59 GiB reserved) at %.0f tps, %+.1f %% on the calibration row, where zerosim, given one configuration, predicts one throughput. "+
		"Against that run of its own day the row is %+.1f %% (zerosim predicts it at %+.1f %% of the calibration row): the miss is the stack and the window between the two runs, "+
		"which zerosim does not model, not the reshard policy",
		cal.row.TokensPerGPU, titanDefaultRun, 100*drift, 100*sameDay, 100*(c.tokens/cal.tokens-1))
}

// qwen32bBatchReason is the reason for the Qwen3-32B rows at local batch
// 2 on 8 GPUs (c), eager and compiled, predicted from the batch-1 row.
func qwen32bBatchReason(c validationCase, v validationResults) string {
	on8 := func(mb int64) validationCase {
		return v.rows(qwen32bSource, func(r validationRow) bool { return r.GPUs == 8 && r.MicroBatch == mb && r.Compile == "" })[0]
	}
	b1, b2 := on8(1), on8(2)
	// A step of fixed time plus time per token through the two eager rows,
	// measured and predicted.
	fixedPer := func(s1, s2 float64) (fixed, perToken float64) {
		perToken = (s2 - s1) / float64(b2.stepTokens-b1.stepTokens)
		return s1 - perToken*float64(b1.stepTokens), perToken
	}
	mFixed, mPer := fixedPer(b1.stepSeconds(b1.row.TokensPerGPU), b2.stepSeconds(b2.row.TokensPerGPU))
	pFixed, pPer := fixedPer(b1.stepSeconds(b1.tokens), b2.stepSeconds(b2.tokens))
	if b2.row.TokensPerGPU/b1.row.TokensPerGPU <= b2.tokens/b1.tokens || mFixed <= pFixed {
		panic("validation: Qwen3-32B's batch-2 row no longer gains more over batch 1 than predicted: reword qwen32bBatchReason")
	}
	why := fmt.Sprintf("local batch 2 ran %.1f %% more tokens per second per GPU than batch 1 on the same 8 GPUs (%.0f against %.0f), where zerosim predicts %+.1f %% (%.0f against the calibrated %.0f). "+
		"Read as a step of fixed time plus time per token, the two runs give %.2f s fixed and %.3f ms a token, zerosim %.2f s and %.3f ms: "+
		"the runs pay about %.1f times zerosim's per step whatever the batch. Not established: zerosim times every GEMM at the one fitted efficiency "+
		"whatever its rows (4,096 or 8,192 tokens a micro-step), and overlaps FSDP2's per-block all-gathers and reduce-scatters with full recomputation's compute; "+
		"the message publishes no trace and no torch version. The 16-GPU batch-4 row is %+.1f %%",
		100*(b2.row.TokensPerGPU/b1.row.TokensPerGPU-1), b2.row.TokensPerGPU, b1.row.TokensPerGPU, 100*(b2.tokens/b1.tokens-1), b2.tokens, b1.tokens,
		mFixed, 1e3*mPer, pFixed, 1e3*pPer, mFixed/pFixed,
		100*v.rows(qwen32bSource, func(r validationRow) bool { return r.GPUs == 16 })[0].tokenErr)
	if c.row.Compile == "" {
		return why
	}
	return fmt.Sprintf("compiled, the row ran %.1f %% faster than the eager batch-2 row, where zerosim predicts %+.1f %% (what compile removes of the blocks' and the loss's memory-bound traffic): "+
		"against the eager row's own error, %+.1f %%, it is %+.1f %%; the rest is that row's miss: %s",
		100*(c.row.TokensPerGPU/b2.row.TokensPerGPU-1), 100*(c.tokens/b2.tokens-1), 100*b2.tokenErr, 100*((1+c.tokenErr)/(1+b2.tokenErr)-1), why)
}

// mpt13bMissReason is the reason for the shared source's 13B row with
// gradient accumulation (c), its figures taken from the predictions v.
func mpt13bMissReason(c validationCase, v validationResults) string {
	const seq, small, mpt70b, a100x80, april = seqSpreadSource, "llm-foundry-mpt-a100-40gb-small", "llm-foundry-mpt-a100-80gb-70b", "llm-foundry-mpt-a100-80gb", "mosaicml-examples-mpt-a100-80gb"
	lo13, hi13 := errRange(v.rows(seq, func(r validationRow) bool { return r.Model == "mpt-13b" }))
	rows7 := v.rows(seq, func(r validationRow) bool { return r.Model == "mpt-7b" })
	rows13 := v.rows(sharedSource, func(r validationRow) bool { return r.Model == "mpt-13b" && r.GPUs >= 16 && r.GradAccum <= 1 })
	within7, within13 := maxAbsErr(rows7), maxAbsErr(rows13)
	ga7 := rows7[0].row.GradAccum
	for _, k := range rows7 {
		if k.row.GradAccum != ga7 {
			panic("validation: the 7B rows on one node no longer share one GA: reword mpt13bMissReason")
		}
	}
	min13, max13 := math.MaxInt, 0
	for _, k := range rows13 {
		min13, max13 = min(min13, k.row.GPUs), max(max13, k.row.GPUs)
	}
	measured, predicted := c.stepSeconds(c.row.TokensPerGPU), c.stepSeconds(c.tokens)
	ga := c.row.GradAccum
	sent := c.sentGiB / float64(ga)
	ga16 := v.rows(mpt70b, func(r validationRow) bool { return r.GradAccum == 16 })[0]
	mpt30b := v.rows(a100x80, func(r validationRow) bool { return r.Model == "mpt-30b" && r.SeqLen == 8192 })[0]
	nopen := v.rows(small, func(r validationRow) bool {
		return r.Model == "mpt-760m" && r.GPUs == 8 && r.GradAccum > 1 && r.Recompute == "none" && (r.SeqLen == 8192 || r.SeqLen == 4096)
	})
	if len(nopen) != 2 || nopen[0].row.SeqLen != 8192 {
		panic("validation: mpt-760m's 8,192- and 4,096-token rows without recompute")
	}
	// The April 2023 A100-80GB table, the shared source's stack: each
	// model's 8-GPU and 16-GPU rows at 2,048 tokens, and the error
	// ranges of its 8-GPU rows and of its 16-64-GPU rows (the calibrated
	// row, 0 by construction, left out).
	at2048 := func(source, model string, gpus int) validationCase {
		cs := v.rows(source, func(r validationRow) bool { return r.Model == model && r.GPUs == gpus && r.SeqLen == 2048 })
		if len(cs) != 1 {
			panic(fmt.Sprintf("validation: %d rows of %s on %d GPUs at 2,048 tokens in %s", len(cs), model, gpus, source))
		}
		return cs[0]
	}
	// minN, maxN are the fewest and most GPUs of the multi-node rows.
	minN, maxN := math.MaxInt, 0
	nodeErrs := func(model string) (lo8, hi8, loN, hiN float64) {
		predicted := func(gpus func(int) bool) []validationCase {
			var out []validationCase
			for _, k := range v.rows(april, func(r validationRow) bool { return r.Model == model && gpus(r.GPUs) }) {
				if !k.calibrated {
					out = append(out, k)
				}
			}
			return out
		}
		lo8, hi8 = errRange(predicted(func(g int) bool { return g == 8 }))
		multi := predicted(func(g int) bool { return g >= 16 })
		loN, hiN = errRange(multi)
		for _, k := range multi {
			minN, maxN = min(minN, k.row.GPUs), max(maxN, k.row.GPUs)
		}
		return
	}
	a30x8, a30x16, a13x8, a13x16 := at2048(april, "mpt-30b", 8), at2048(april, "mpt-30b", 16), at2048(april, "mpt-13b", 8), at2048(april, "mpt-13b", 16)
	rerun30 := at2048(a100x80, "mpt-30b", 8)
	lo30x8, hi30x8, lo30N, hi30N := nodeErrs("mpt-30b")
	lo13x8, hi13x8, lo13N, hi13N := nodeErrs("mpt-13b")
	// Per model, the 8-GPU row's error less the 16-GPU row's at 2,048
	// tokens: mpt-30b's, and the range of every other model's.
	var models []string
	for _, c := range v[april] {
		if !slices.Contains(models, c.row.Model) {
			models = append(models, c.row.Model)
		}
	}
	otherLo, otherHi := math.Inf(1), math.Inf(-1)
	for _, m := range models {
		if m == "mpt-30b" {
			continue
		}
		d := at2048(april, m, 8).tokenErr - at2048(april, m, 16).tokenErr
		otherLo, otherHi = min(otherLo, d), max(otherHi, d)
	}
	if fmt.Sprintf("%.1f", a13x8.persistentGiB()) != fmt.Sprintf("%.1f", c.persistentGiB()) {
		panic("validation: mpt-13b's persistent state on 8 A100-80GB no longer rounds to this row's: reword mpt13bMissReason (\"the same\")")
	}
	if rerun30.row.MicroBatch != a30x8.row.MicroBatch || rerun30.row.GradAccum != a30x8.row.GradAccum {
		panic("validation: the rerun's 8-GPU mpt-30b row at 2,048 tokens is no longer the April 2023 one: reword mpt13bMissReason (\"the same 8-GPU row\")")
	}
	ratio := func(a, b float64) float64 { return 100 * (a/b - 1) }
	if ratio(a30x8.row.TokensPerGPU, a30x16.row.TokensPerGPU) >= ratio(a30x8.tokens, a30x16.tokens) ||
		ratio(a13x8.row.TokensPerGPU, a13x16.row.TokensPerGPU) <= ratio(a13x8.tokens, a13x16.tokens) {
		panic("validation: the April 2023 A100-80GB contrast (mpt-30b's 8-GPU row slower against its 16-GPU row than predicted, mpt-13b's not) no longer holds: reword mpt13bMissReason")
	}
	calName := ""
	for _, k := range v[april] {
		if k.calibrated {
			calName = k.row.name()
		}
	}
	return fmt.Sprintf(
		"the 13B rows on one node run slower than predicted at every sequence length, errors of %+.1f %% to %+.1f %% (%s) "+
			"while the 7B rows on the same node (GA %d) match within %.1f %% and the 13B rows on %d-%d GPUs (GA 1) within %.1f %%. "+
			"What ran: not the sweep of llm-foundry 061f2c7 (its sweep.sh runs mosaicml/pytorch:2.0.1_cu118 and has no a100_40gb line; "+
			"its rerun 4b482bd6 replaced only the 80 GB table): the table was measured for mosaicml/examples "+
			"(examples/llm/throughput/README.md, 71dd21bd, merged as 9fa3ceb9 on 2023-04-04) and moved verbatim to llm-foundry in 300cc5c5; "+
			"sweep.sh at 9fa3ceb9 runs image mosaicml/pytorch:1.13.1_cu117 (torch 1.13.1) with examples release/v0.0.4 "+
			"(examples/llm/requirements.txt: mosaicml 0.13.2, 0.13.3 from 13699fbf; composer/trainer/ is identical in v0.13.2-v0.13.4), "+
			"flash-attn 0.2.8, triton 2.0.0.dev20221202, as `13b.yaml -g 8 --microbatch_size 4 --accum 16`; "+
			"submit_benchmarks.py sets attn_impl triton, precision bf16, mixed_precision PURE, activation_checkpointing_reentrant False "+
			"and limit_all_gathers True (13b.yaml: activation_checkpointing true, verbose false). "+
			"Read at those versions: Composer's micro-batch loop (trainer.py _train_microbatches, _train_microbatch) has no host sync "+
			"(tensor_to_device is non_blocking, devices/device_gpu.py; .item() once per batch) and no no_sync "+
			"(dist_strategy.py ddp_sync_context returns for a model that is not DDP); torch 1.13.1's FSDP "+
			"(torch/distributed/fsdp/fully_sharded_data_parallel.py and flat_param.py at v1.13.1, which has no _runtime_utils.py) "+
			"reduce-scatters every micro-step (as zerosim's schedule does) and accumulates into _saved_grad_shard on its post-backward stream "+
			"(_post_backward_hook: a padded copy of the unsharded gradient, reduce-scatter, cast to fp32, +=), "+
			"makes the compute stream wait for that stream with no host sync (_wait_for_post_backward), and with limit_all_gathers "+
			"keeps at most 2 gathered units by a host event.synchronize (_FreeEventQueue, _unshard), the bound zerosim counts; "+
			"the record_stream of a freed unit (_free_unsharded_flat_param) ends at that same event, so it holds no extra memory. "+
			"Ruled out: the gap is %.2f s per micro-step (a %.1f s step measured, %.1f s predicted, %d micro-steps), more than all "+
			"of a micro-step's collectives serialised at NVLink3's %.0f GB/s (%.0f GiB sent per rank, about %.2f s); the post-backward's extra "+
			"gradient copy is under 1 %% and on a side stream; the train metrics Composer updates per micro-batch "+
			"(LanguageCrossEntropy, LanguagePerplexity on the logits) are charged (training.train_metrics: 20 B a logit, a few "+
			"milliseconds a micro-step here); a cost per micro-step in proportion to the parameters (a per-unit synchronisation) "+
			"is ruled out by the same April 2023 stack's mpt-70b on 32 A100-80GB with GA 16 and 4,096 tokens per micro-step "+
			"(%+.1f %% in %s, calibrated on its GA 4 row). "+
			"Not established: the caching allocator under memory pressure (cudaMalloc retries that release the cache and synchronize). "+
			"Published stalls of that kind are of this size: under FSDP on 16 A100s a 7B GPT with 46 cudaMalloc retries took 7.3 s an iteration "+
			"against 5.3 s for a 7B LLaMA without retries (pytorch/pytorch#104509), and cudaMalloc/cudaFree gaps made a 13B ZeRO-2 iteration "+
			"on 8 H100s 868 ms against 729 ms with expandable segments (Lightning-AI/lightning-thunder#420); neither gives a rule for when they start. "+
			"The penalised rows keep the most persistent state for their GPU (fp32 shard, Adam and the accumulated gradients, 16 bytes "+
			"a parameter over %d GPUs: %.1f GiB of %.1f usable here, %.1f of %.1f for mpt-30b on %d A100-80GB, whose 8,192-token GA 21 row, "+
			"rerun in 2023 on mosaicml/pytorch:2.1.0_cu121-nightly20230827 (torch 2.1.0.dev20230821; llm-foundry's h100new.md at 803e6718), is %+.1f %%), "+
			"but the table publishes no memory and zerosim predicts this row needs %.1f GiB of %.1f (%.1f with the allocator's reserve), "+
			"less than 8-GPU rows with GA that are not penalised (mpt-760m at 8,192 and 4,096 tokens, %.1f GiB: %+.1f %% and %+.1f %% "+
			"in %s), so no cost can be derived from it. "+
			"Evidence from this row's own stack on 80 GB GPUs (%s, mosaicml/examples 9fa3ceb9, April 2023, calibrated on %s): "+
			"against its 16-GPU row, one node runs slower than zerosim predicts for mpt-30b, not for mpt-13b. "+
			"mpt-30b on 8 GPUs (micro-batch %d, GA %d; %.1f GiB of persistent state of %.1f) ran at %.0f tok/s/GPU against %.0f on 16 "+
			"(micro-batch %d, GA %d), %+.1f %%, where zerosim predicts %+.1f %% (the 2023 rerun measured the same 8-GPU row at %.0f tok/s/GPU); "+
			"mpt-13b on 8 GPUs (micro-batch %d, GA %d; the same %.1f GiB as here, of %.1f) ran at %.0f against %.0f on 16 (micro-batch %d, GA %d), "+
			"%+.1f %%, where zerosim predicts %+.1f %%. "+
			"At 2,048 tokens the 8-GPU row's error less the 16-GPU row's is %+.1f points for mpt-30b and %+.1f to %+.1f for every other model there; "+
			"over all sequence lengths mpt-30b's 8-GPU rows are %+.1f %% to %+.1f %% (%d-%d GPUs: %+.1f %% to %+.1f %%) "+
			"and mpt-13b's %+.1f %% to %+.1f %% (%d-%d GPUs: %+.1f %% to %+.1f %%), against this row's %+.1f %%. "+
			"So the same model on one node of 8 GPUs, with the same software and persistent state as this row, is not slow when its GPU has %.1f GiB usable, not %.1f "+
			"(and it runs %d micro-steps, not %d; %d micro-steps alone do not slow the 70B row above, %.1f GiB of persistent state of %.1f): "+
			"a contrast that fits memory pressure, not a measurement of it (the two tables also ran on different clusters: sweep.sh's "+
			"CLUSTER_80GB and CLUSTER_40GB)",
		100*lo13, 100*hi13, seq, ga7, 100*within7, min13, max13, 100*within13,
		(measured-predicted)/float64(ga), measured, predicted, ga, c.intraBW/1e9, sent, sent*float64(units.GiB)/c.intraBW,
		100*ga16.tokenErr, mpt70b,
		c.dp, c.persistentGiB(), c.capGiB, mpt30b.persistentGiB(), mpt30b.capGiB, mpt30b.dp, 100*mpt30b.tokenErr,
		c.needGiB, c.capGiB, c.deviceGiB,
		max(nopen[0].needGiB, nopen[1].needGiB), 100*nopen[0].tokenErr, 100*nopen[1].tokenErr, small,
		april, calName,
		a30x8.row.MicroBatch, a30x8.row.GradAccum, a30x8.persistentGiB(), a30x8.capGiB, a30x8.row.TokensPerGPU, a30x16.row.TokensPerGPU,
		a30x16.row.MicroBatch, a30x16.row.GradAccum, ratio(a30x8.row.TokensPerGPU, a30x16.row.TokensPerGPU), ratio(a30x8.tokens, a30x16.tokens), rerun30.row.TokensPerGPU,
		a13x8.row.MicroBatch, a13x8.row.GradAccum, a13x8.persistentGiB(), a13x8.capGiB, a13x8.row.TokensPerGPU, a13x16.row.TokensPerGPU, a13x16.row.MicroBatch, a13x16.row.GradAccum,
		ratio(a13x8.row.TokensPerGPU, a13x16.row.TokensPerGPU), ratio(a13x8.tokens, a13x16.tokens),
		100*(a30x8.tokenErr-a30x16.tokenErr), 100*otherLo, 100*otherHi,
		100*lo30x8, 100*hi30x8, minN, maxN, 100*lo30N, 100*hi30N, 100*lo13x8, 100*hi13x8, minN, maxN, 100*lo13N, 100*hi13N, 100*c.tokenErr,
		a13x8.capGiB, c.capGiB, a13x8.row.GradAccum, ga, ga16.row.GradAccum, ga16.persistentGiB(), ga16.capGiB)
}

// seqSpreadSource publishes one model on one node at several sequence
// lengths: the spread of a model's errors over them shows whether attention
// (s² per sequence) is costed right relative to the matmuls.
const seqSpreadSource = "llm-foundry-mpt-a100-40gb-seq"

// replayValidation loads the suite's source name from
// ../testdata/validation (loadValidation) and replays it as TestValidation
// does (runValidation, no variant): what the tests that hold a document's
// figures to the validation's own replay share.
func replayValidation(t *testing.T, name string) ([]validationCase, validationSource, []byte) {
	t.Helper()
	src, tmpl := loadValidation(t, "../testdata/validation/"+name)
	cases, _ := runValidation(t, name, src, tmpl, validationVariant{})
	return cases, src, tmpl
}

// loadValidation loads a source and its template.
func loadValidation(t *testing.T, base string) (validationSource, []byte) {
	t.Helper()
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var src validationSource
	if err := json.Unmarshal(raw, &src); err != nil {
		t.Fatalf("%s.json: %v", base, err)
	}
	for i := range src.Rows {
		if err := src.Rows[i].resolve(src.CapacityGiB); err != nil {
			t.Fatalf("%s.json: row %d: %v", base, i, err)
		}
	}
	tmpl, err := os.ReadFile(base + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(filepath.Base(base)+".yaml", tmpl, nil)
	if err != nil {
		t.Fatalf("%s.yaml: %v", base, err)
	}
	src.gpn = s.Cluster.GPUsPerNode
	// A throughput in every row or in none, and none only where the
	// source says why its memory is the test.
	for i, r := range src.Rows {
		if (r.TokensPerGPU == 0) != src.unfitted() {
			t.Fatalf("%s.json: row %d: give tokens_per_gpu_per_s in every row or in none", base, i)
		}
	}
	if src.unfitted() && src.MemoryOnly == "" {
		t.Fatalf("%s.json: no row gives a throughput: set memory_only to say why", base)
	}
	return src, tmpl
}

// TestValidation calibrates the compute efficiency on the first row without
// gradient accumulation of each
// published source in ../testdata/validation, predicts every other row with
// it and writes the comparison to ../docs/validation.md (a golden: -update
// rewrites it). Memory is compared where the source publishes it.
func TestValidation(t *testing.T) {
	files, err := filepath.Glob("../testdata/validation/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no validation sources: %v", err)
	}
	var b strings.Builder
	b.WriteString("# Validation against published runs\n\n")
	b.WriteString("Generated by `go test ./zero -run TestValidation -update` from testdata/validation/ (see its README):\n")
	b.WriteString("the compute efficiency is calibrated on the first row without gradient accumulation of each source (marked *;\n")
	b.WriteString("the first row when every row accumulates)\n")
	b.WriteString("and every other row is predicted with it. Rows with gradient accumulation run with training.grad_accum as published.\n")
	b.WriteString("A row on another GPU than the calibration row's (its `gpu`) takes the fit carried as a calibration file carries it:\n")
	b.WriteString("× its GPU's default efficiency over the calibration GPU's (docs/calibration.md, \"Carrying a fit to another GPU\").\n")
	b.WriteString("Throughput is tokens per second per GPU; memory is the peak a profiler reports\n")
	b.WriteString("(torchtitan: max reserved) against zerosim's reserved peak: under PyTorch FSDP at stage 3 the step's allocations replayed through\n")
	b.WriteString("a simulation of PyTorch's caching allocator (memory/allocator.go; memory.expandable_segments as the run's launcher set it),\n")
	b.WriteString("elsewhere allocated × (1 + memory.allocator_overhead),\n")
	b.WriteString("or, where the source gives what nvidia-smi shows (FlagPerf), against zerosim's device peak (reserved + CUDA context + NCCL buffers),\n")
	b.WriteString("or, where it gives torch.cuda.max_memory_allocated (KempnerForge), against zerosim's allocated peak;\n")
	b.WriteString("a source that also gives the allocator's peak active bytes (torchtitan's memory monitor) has them compared with zerosim's active peak in a table of their own\n")
	b.WriteString("(the simulated allocator's, freed blocks still waiting on a stream included, where the reserve is simulated; the allocated peak elsewhere),\n")
	b.WriteString("and one that gives the allocated memory after the step (DeepSpeedExamples) has it compared with zerosim's allocated at rest likewise.\n")
	b.WriteString("A throughput published as a range is compared at its midpoint (the range in parentheses).\n")
	b.WriteString("Every row ran, so each must be predicted to fit: the last column is zerosim's verdict (the allocated peak within the GPU's memory,\n")
	b.WriteString("and with the CUDA context and NCCL's buffers added too: what the device needs when PyTorch's caching allocator, short of memory,\n")
	b.WriteString("releases its cached blocks and retries), then in parentheses the device peak with the allocator's usual reserve\n")
	b.WriteString("(simulated, or memory.allocator_overhead; \"retries\" where that exceeds the GPU: the allocator must release cached blocks to run).\n")
	b.WriteString("The GPU's memory is what a process can allocate where PyTorch's out-of-memory message for the part is published (A100-40GB 39.39 GiB,\n")
	b.WriteString("A100-80GB 79.18 GiB \"total capacity\": scenarios.GPUPreset.Usable), the driver's total elsewhere.\n")
	b.WriteString("Nothing here is typed by hand.\n")
	// body holds the per-source sections, written after the summary that
	// their figures make.
	var body strings.Builder
	var summaries []sourceSummary
	worst, worstFit := 0.0, 0.0
	// The memory criterion is the peak (the published peak, and
	// the peak active against the allocated peak); the allocated memory
	// at rest is reported apart. Each over every row, known misses
	// included, and over the rows held to 10 %.
	var worstPeak, worstPeakHeld, worstRest, worstRestHeld worstErr
	var predictedErrs []float64 // |token error| of every predicted row
	worstCase, worstFitCase := "", ""
	var sharedWorst [2]float64 // without, with gradient accumulation
	var sharedCase [2]string
	var tokenMisses strings.Builder
	results := validationResults{}
	var missed []heldMiss // the held sources' rows in knownMisses
	var published []PublishedEfficiency
	var publishedCPRows []PublishedCP
	for _, f := range files {
		base := strings.TrimSuffix(f, ".json")
		src, tmpl := loadValidation(t, base)
		cases, eff := runValidation(t, filepath.Base(base), src, tmpl, validationVariant{})
		results[filepath.Base(base)] = cases
		summaries = append(summaries, summarize(filepath.Base(base), eff, cases, src.MemoryOnly != "", src.unfitted()))
		for _, c := range cases {
			if c.calibrated && src.OutsideRange == "" && src.MemoryOnly == "" {
				published = append(published, PublishedEfficiency{Source: filepath.Base(base), GPU: c.gpu, FP8: c.fp8, Compiled: c.compiled, Nodes: c.nodes, Efficiency: eff})
			} else if c.row.CP > 1 {
				publishedCPRows = append(publishedCPRows, PublishedCP{Source: filepath.Base(base), GPU: c.gpu, CP: c.row.CP, Error: c.tokenErr})
			}
		}
		b := &body
		fmt.Fprintf(b, "\n## %s\n\nSource: %s.\n\nSetup: %s.\n\n", filepath.Base(base), src.Source, src.Setup)
		if src.unfitted() {
			fmt.Fprintf(b, "No throughput published: the replay runs at the template's training.compute_efficiency, %.4f, fitted to nothing.\n\n", eff)
		} else {
			fmt.Fprintf(b, "Fitted training.compute_efficiency: %.4f.\n\n", eff)
		}
		if src.OutsideRange != "" {
			fmt.Fprintf(b, "Not among the published fits run, plan and calibrate quote for the GPU: %s.\n\n", src.OutsideRange)
		}
		if src.MemoryOnly != "" {
			fmt.Fprintf(b, "Memory only: its throughput is shown but is in none of the suite's throughput figures, and its fit is not quoted: %s.\n\n", src.MemoryOnly)
		}
		b.WriteString("| case | measured tok/s/GPU | predicted | error | measured GiB | predicted GiB | error | fits: needs GiB of GPU GiB (with reserve) |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		var misses, fitMisses []struct{ rows, reason string }
		for _, c := range cases {
			mark := ""
			if c.calibrated && !src.unfitted() {
				mark = " *"
			}
			mem := "| | | |"
			if !math.IsNaN(c.memoryErr) {
				mem = fmt.Sprintf("| %.1f | %.1f | %+.1f %% |", c.row.MemoryGiB, c.peakGiB, 100*c.memoryErr)
			}
			if c.row.MemoryMiss != "" {
				mark += " †"
				if n := len(misses); n > 0 && misses[n-1].reason == c.row.MemoryMiss {
					misses[n-1].rows += "; " + c.row.name()
				} else {
					misses = append(misses, struct{ rows, reason string }{c.row.name(), c.row.MemoryMiss})
				}
			}
			fit := "yes"
			if !c.fits {
				fit = "NO"
			}
			reserve := fmt.Sprintf("%.1f", c.deviceGiB)
			if c.deviceGiB > c.capGiB {
				reserve += ", retries" // the allocator must release cached blocks
			}
			if c.row.FitMiss != "" {
				mark += " ‡"
				fitMisses = append(fitMisses, struct{ rows, reason string }{c.row.name(), c.row.FitMiss})
			}
			tokErr := fmt.Sprintf("%+.1f %%", 100*c.tokenErr)
			if math.IsNaN(c.tokenErr) {
				tokErr = "—"
			}
			fmt.Fprintf(b, "| %s%s | %s | %.0f | %s %s %s: %.1f of %.1f (%s) |\n", c.row.name(), mark, c.row.measured(), c.tokens, tokErr, mem, fit, c.needGiB, c.capGiB, reserve)
			if c.capGiB > 0 && c.needGiB/c.capGiB > worstFit {
				worstFit, worstFitCase = c.needGiB/c.capGiB, fmt.Sprintf("%s: %s, needs %.1f GiB of %.1f", filepath.Base(base), c.row.name(), c.needGiB, c.capGiB)
			}
			// Every published row ran: zerosim must say it fits (the
			// allocated peak within the GPU's memory, and the device peak
			// too), unless a fit_miss explains why not.
			switch {
			case c.row.FitMiss != "" && c.fits:
				t.Errorf("%s: now predicted to fit (needs %.1f GiB of %.1f): delete its fit_miss", c.row.name(), c.needGiB, c.capGiB)
			case c.row.FitMiss == "" && !c.fits:
				t.Errorf("%s: ran on %.1f GiB GPUs, but zerosim predicts it does not fit (allocated %.1f GiB, with the CUDA context and NCCL's buffers %.1f GiB)", c.row.name(), c.capGiB, c.allocGiB, c.needGiB)
			}
			if !c.calibrated && src.MemoryOnly == "" {
				predictedErrs = append(predictedErrs, math.Abs(c.tokenErr))
			}
			if !c.calibrated && src.MemoryOnly == "" && math.Abs(c.tokenErr) > math.Abs(worst) {
				worst, worstCase = c.tokenErr, filepath.Base(base)+": "+c.row.name()
			}
			if g := min(max(c.row.GradAccum-1, 0), 1); filepath.Base(base) == sharedSource && !c.calibrated && math.Abs(c.tokenErr) > math.Abs(sharedWorst[g]) {
				sharedWorst[g], sharedCase[g] = c.tokenErr, c.row.name()
			}
			for _, m := range []struct {
				err        float64
				what, miss string
				all, held  *worstErr
			}{
				{c.memoryErr, "", c.row.MemoryMiss, &worstPeak, &worstPeakHeld},
				{c.activeErr, ", peak active", c.row.ActiveMiss, &worstPeak, &worstPeakHeld},
				{c.restErr, "", c.row.RestMiss, &worstRest, &worstRestHeld},
			} {
				what := filepath.Base(base) + ": " + c.row.name() + m.what
				m.all.see(m.err, what)
				if m.miss == "" {
					m.held.see(m.err, what)
				}
			}
			// Issue 16's acceptance: every published memory within 10 %
			// (the peak active against the active peak too); every
			// row of the shared source within 5 % after calibration,
			// with or without gradient accumulation, except a known
			// miss, held at the figure it reached.
			checkMemory(t, c.row.name(), "active peak", "published peak active", "active_miss", c.activeGiB, c.row.ActiveGiB, c.activeErr, c.row.ActiveMiss)
			checkMemory(t, c.row.name(), "allocated at rest", "published allocated after the step", "rest_miss", c.restGiB, c.row.RestGiB, c.restErr, c.row.RestMiss)
			checkMemory(t, c.row.name(), "memory", "published", "memory_miss", c.peakGiB, c.row.MemoryGiB, c.memoryErr, c.row.MemoryMiss)
			if c.crossPrecision {
				checkCrossPrecision(t, filepath.Base(base), c, &tokenMisses)
			} else if c.row.TokenMiss != "" || c.row.TokenBound != 0 {
				t.Errorf("%s: token_miss and token_bound are for a row whose precision differs from its source's calibration row", c.row.name())
			}
			source := filepath.Base(base)
			if c.calibrated || c.crossPrecision {
				continue
			}
			m, known := knownMisses[[2]string{source, c.row.name()}]
			if !known && !slices.Contains(heldSources, source) {
				continue
			}
			bound := 0.05
			if known {
				bound = m.bound
				missed = append(missed, heldMiss{source, c})
				if math.Abs(c.tokenErr) <= 0.05 {
					t.Errorf("%s: %s: %+.1f %% is now within 5 %%: delete its knownMisses entry", source, c.row.name(), 100*c.tokenErr)
				}
			}
			if math.Abs(c.tokenErr) > bound {
				t.Errorf("%s: %s: %.0f tokens/s/GPU, published %.0f (%+.1f %%, over %.1f %%)", source, c.row.name(), c.tokens, c.row.TokensPerGPU, 100*c.tokenErr, 100*bound)
			}
		}
		if len(fitMisses) > 0 {
			b.WriteString("\n‡ Ran, but zerosim predicts it does not fit (reported and asserted to still miss):\n\n")
			for _, m := range fitMisses {
				fmt.Fprintf(b, "- %s: %s.\n", m.rows, m.reason)
			}
		}
		if len(misses) > 0 {
			b.WriteString("\n† Known memory-model gap, reported and not asserted within 10 % (the test asserts it still misses):\n\n")
			for _, m := range misses {
				fmt.Fprintf(b, "- %s: %s.\n", m.rows, m.reason)
			}
		}
		writeAllocated(b, cases, activeTable)
		writeAllocated(b, cases, restTable)
		writeOOM(t, b, filepath.Base(base), src, tmpl, eff, cases[slices.IndexFunc(cases, func(c validationCase) bool { return c.calibrated })].gpu)
		if filepath.Base(base) == seqSpreadSource {
			spreadCheck(t, b, cases)
		}
	}
	deepspeedGaps(t, &body, files, results)
	for key := range knownMisses {
		if !slices.ContainsFunc(missed, func(h heldMiss) bool { return h.source == key[0] && h.c.row.name() == key[1] }) {
			t.Errorf("knownMisses names %s: %s, which is no predicted row of a held source", key[0], key[1])
		}
	}
	for _, h := range missed {
		m := knownMisses[[2]string{h.source, h.c.row.name()}]
		fmt.Fprintf(&tokenMisses, "- %s: %s, %+.1f %% (held at ±%.1f %%; the requirement is 5 %%): %s.\n", h.source, h.c.row.name(), 100*h.c.tokenErr, 100*m.bound, m.reason(h.c, results))
	}
	within := func(bound float64) int {
		n := 0
		for _, e := range predictedErrs {
			if e <= bound {
				n++
			}
		}
		return n
	}
	n := len(predictedErrs)
	median := medianOf(predictedErrs)
	b.WriteString("\n## Summary\n\n")
	fmt.Fprintf(&b, "Shared source (llm-foundry-mpt-a100-40gb), predicted rows without gradient accumulation: worst %+.1f %% (%s); with it: worst %+.1f %% (%s).\n",
		100*sharedWorst[0], sharedCase[0], 100*sharedWorst[1], sharedCase[1])
	fmt.Fprintf(&b, "Over the suite: %d sources, %d predicted rows; median |throughput error| %.1f %%, %d rows within 5 %%, %d within 10 %%.\n",
		len(files), n, 100*median, within(0.05), within(0.10))
	fmt.Fprintf(&b, "Worst throughput error over the predicted rows: %+.1f %% (%s).\n", 100*worst, worstCase)
	fmt.Fprintf(&b, "Worst peak memory error: %s, known misses included; of the peaks held to 10 %%: %s.\n", worstPeak, worstPeakHeld)
	fmt.Fprintf(&b, "Worst allocated-at-rest error: %s, known misses included; of those held to 10 %%: %s.\n", worstRest, worstRestHeld)
	fmt.Fprintf(&b, "Fullest GPU (what the device needs over its memory): %.1f %% (%s).\n", 100*worstFit, worstFitCase)
	writeSummaryTable(&b, summaries)
	b.WriteString(body.String())
	if tokenMisses.Len() > 0 {
		b.WriteString("\n## Known misses of the 5 % requirement\n\n")
		b.WriteString(tokenMisses.String())
	}
	got := b.String()
	golden.Check(t, "../docs/validation.md", []byte(got), *updateValidation)
	golden.Check(t, "published_efficiency.go", publishedSource(t, published, publishedCPRows), *updateValidation)
}

// publishedSource is published_efficiency.go: the fitted efficiencies as
// the Go table that zerosim run quotes (PublishedRange).
func publishedSource(t *testing.T, ps []PublishedEfficiency, cps []PublishedCP) []byte {
	var b strings.Builder
	b.WriteString("// Code generated by go test ./zero -run TestValidation -update from testdata/validation/; DO NOT EDIT.\n\n")
	b.WriteString("package zero\n\n")
	b.WriteString("// publishedEfficiencies are the training.compute_efficiency values\n")
	b.WriteString("// docs/validation.md fits to the published runs, one per source.\n")
	b.WriteString("var publishedEfficiencies = []PublishedEfficiency{\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "{Source: %q, GPU: %q, FP8: %q, Compiled: %t, Nodes: %d, Efficiency: %.4f},\n", p.Source, p.GPU, p.FP8, p.Compiled, p.Nodes, p.Efficiency)
	}
	b.WriteString("}\n\n")
	b.WriteString("// publishedCP are docs/validation.md's predicted rows with context\n")
	b.WriteString("// parallelism and their throughput errors.\n")
	b.WriteString("var publishedCP = []PublishedCP{\n")
	for _, p := range cps {
		fmt.Fprintf(&b, "{Source: %q, GPU: %q, CP: %d, Error: %.4f},\n", p.Source, p.GPU, p.CP, p.Error)
	}
	b.WriteString("}\n")
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		t.Fatalf("published_efficiency.go: %v", err)
	}
	return out
}

// worstErr is the relative error of the largest magnitude seen, and
// what it is of.
type worstErr struct {
	err  float64
	what string
}

// see keeps err (NaN: not published) if it is the worst so far.
func (w *worstErr) see(err float64, what string) {
	if !math.IsNaN(err) && (w.what == "" || math.Abs(err) > math.Abs(w.err)) {
		w.err, w.what = err, what
	}
}

func (w worstErr) String() string {
	if w.what == "" {
		return "none published"
	}
	return fmt.Sprintf("%+.1f %% (%s)", 100*w.err, w.what)
}

// sourceSummary is one source's line in docs/validation.md's summary.
type sourceSummary struct {
	source     string
	efficiency float64 // the fitted training.compute_efficiency
	predicted  int     // rows predicted (all but the calibration row)
	median     float64 // median |throughput error| of the predicted rows
	worst      validationCase
	memRows    int              // rows that publish memory
	worstMem   float64          // the worst peak, relative; NaN when no row publishes a peak
	off        []validationCase // predicted rows more than 10 % off
	memoryOnly bool             // the source's throughput is no evidence (MemoryOnly)
	unfitted   bool             // no throughput published: efficiency is the template's (unfitted)
}

// summarize makes a source's summary from its rows.
func summarize(source string, eff float64, cases []validationCase, memoryOnly, unfitted bool) sourceSummary {
	s := sourceSummary{source: source, efficiency: eff, worstMem: math.NaN(), memoryOnly: memoryOnly, unfitted: unfitted}
	var errs []float64
	for _, c := range cases {
		if !math.IsNaN(c.memoryErr) || !math.IsNaN(c.activeErr) || !math.IsNaN(c.restErr) {
			s.memRows++
		}
		// The peaks only (the criterion): the allocated memory
		// at rest has its own table per source.
		for _, e := range []float64{c.memoryErr, c.activeErr} {
			if !math.IsNaN(e) && (math.IsNaN(s.worstMem) || math.Abs(e) > math.Abs(s.worstMem)) {
				s.worstMem = e
			}
		}
		if c.calibrated || memoryOnly {
			continue
		}
		errs = append(errs, math.Abs(c.tokenErr))
		if s.predicted == 0 || math.Abs(c.tokenErr) > math.Abs(s.worst.tokenErr) {
			s.worst = c
		}
		s.predicted++
		if math.Abs(c.tokenErr) > 0.10 {
			s.off = append(s.off, c)
		}
	}
	if len(errs) > 0 {
		s.median = medianOf(errs)
	}
	return s
}

// writeOOM predicts, at the source's fitted efficiency eff, each run the
// source publishes as out of memory (OOMRows), asserts that zerosim says
// it does not fit and lists it with what it needs.
func writeOOM(t *testing.T, b *strings.Builder, name string, src validationSource, tmpl []byte, eff float64, calGPU string) {
	t.Helper()
	if len(src.OOMRows) == 0 {
		return
	}
	b.WriteString("\nPublished as out of memory (each must be predicted not to fit; not in the throughput figures):\n\n")
	for _, r := range src.OOMRows {
		s, err := scenarios.Load(name+".yaml", tmpl, r.sets(src.gpn))
		if err != nil {
			t.Fatalf("%s OOM row %s: %v", name, r.name(), err)
		}
		s.Training.ComputeEfficiency = scenarios.CarryComputeEfficiency(eff, calGPU, s.Cluster.GPU)
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatalf("%s OOM row %s: %v", name, r.name(), err)
		}
		capB := int64(s.Cluster.GPUMemory)
		alloc := slices.Max(res.PeakMemory)
		fits := res.Fits(capB)
		verdict := "does not fit"
		if fits {
			verdict = "FITS"
			t.Errorf("%s: published as out of memory (%s), but zerosim predicts it fits (allocated %.1f GiB, needs %.1f of %.1f)", r.name(), r.Row, float64(alloc)/float64(units.GiB), float64(res.DeviceNeed)/float64(units.GiB), float64(capB)/float64(units.GiB))
		}
		fmt.Fprintf(b, "- %s (%s): allocated peak %.1f GiB, needs %.1f GiB of %.1f: %s.\n", r.name(), r.Row, float64(alloc)/float64(units.GiB),
			float64(res.DeviceNeed)/float64(units.GiB), float64(capB)/float64(units.GiB), verdict)
	}
}

// allocatedTable is a published allocated-memory figure a row may give
// beside its peak, compared in a table of its own per source.
type allocatedTable struct {
	intro, measured, predicted string
	gap                        string                       // the heading of the known gaps
	format                     string                       // a row: name, mark, published, predicted, error %
	err                        func(validationCase) float64 // NaN when the row does not give it
	pub, got                   func(validationCase) float64
	miss                       func(validationCase) string
}

// activeTable: the caching allocator's peak active bytes against
// zerosim's active peak (active_miss).
var activeTable = allocatedTable{
	intro:    "Peak active (the caching allocator's `active_bytes.all.peak`) against zerosim's: the simulated allocator's active peak (allocated, and freed blocks still waiting on another stream) where it simulates the reserve, else the allocated peak:",
	measured: "measured active GiB", predicted: "predicted active GiB",
	gap: "Known gap of the active peak", format: "| %s%s | %.1f | %.1f | %+.1f %% |\n",
	err: func(c validationCase) float64 { return c.activeErr },
	pub: func(c validationCase) float64 { return c.row.ActiveGiB }, got: func(c validationCase) float64 { return c.activeGiB },
	miss: func(c validationCase) string { return c.row.ActiveMiss },
}

// restTable: the allocated memory after the step
// (torch.cuda.memory_allocated()) against zerosim's at rest (rest_miss).
var restTable = allocatedTable{
	intro:    "Allocated after the step (`torch.cuda.memory_allocated()`) against zerosim's allocated at rest:",
	measured: "measured allocated GiB", predicted: "predicted at rest GiB",
	gap: "Known gap of the allocated memory at rest", format: "| %s%s | %.2f | %.2f | %+.1f %% |\n",
	err: func(c validationCase) float64 { return c.restErr },
	pub: func(c validationCase) float64 { return c.row.RestGiB }, got: func(c validationCase) float64 { return c.restGiB },
	miss: func(c validationCase) string { return c.row.RestMiss },
}

// writeAllocated writes, for a source whose rows publish tb's figure,
// each against zerosim's, and the reasons of the rows known to miss it
// (marked †).
func writeAllocated(b *strings.Builder, cases []validationCase, tb allocatedTable) {
	var rows []validationCase
	for _, c := range cases {
		if !math.IsNaN(tb.err(c)) {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n\n", tb.intro)
	fmt.Fprintf(b, "| case | %s | %s | error |\n", tb.measured, tb.predicted)
	b.WriteString("| --- | ---: | ---: | ---: |\n")
	var misses []struct{ rows, reason string }
	for _, c := range rows {
		mark := ""
		if m := tb.miss(c); m != "" {
			mark = " †"
			if n := len(misses); n > 0 && misses[n-1].reason == m {
				misses[n-1].rows += "; " + c.row.name()
			} else {
				misses = append(misses, struct{ rows, reason string }{c.row.name(), m})
			}
		}
		fmt.Fprintf(b, tb.format, c.row.name(), mark, tb.pub(c), tb.got(c), 100*tb.err(c))
	}
	if len(misses) > 0 {
		fmt.Fprintf(b, "\n† %s, reported and not asserted within 10 %% (the test asserts it still misses):\n\n", tb.gap)
		for _, m := range misses {
			fmt.Fprintf(b, "- %s: %s.\n", m.rows, m.reason)
		}
	}
}

// medianOf is the median of xs (sorted in place): the mean of the two
// middle values when there are an even number. gonum's stat.Quantile(0.5)
// does not give it: Empirical takes the lower middle value ({1,2,3,4}: 2)
// and LinInterp interpolates at p·n ({1,2,3,4}: 2, {1,2,3}: 1.5).
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

// writeSummaryTable writes one line per source and then every predicted
// row more than 10 % off, worst first.
func writeSummaryTable(b *strings.Builder, ss []sourceSummary) {
	b.WriteString("\n| source | predicted rows | fitted efficiency | median \\|error\\| | worst throughput error | memory rows | worst peak memory error |\n")
	b.WriteString("| --- | ---: | ---: | ---: | --- | ---: | ---: |\n")
	type offRow struct {
		source string
		c      validationCase
	}
	var off []offRow
	for _, s := range ss {
		worst, median := "(calibration row only)", ""
		if s.memoryOnly {
			worst = "(memory only)"
		}
		if s.predicted > 0 {
			worst = fmt.Sprintf("%+.1f %% (%s)", 100*s.worst.tokenErr, s.worst.row.name())
			median = fmt.Sprintf("%.1f %%", 100*s.median)
		}
		mem := ""
		if !math.IsNaN(s.worstMem) {
			mem = fmt.Sprintf("%+.1f %%", 100*s.worstMem)
		}
		eff := fmt.Sprintf("%.4f", s.efficiency)
		if s.unfitted {
			eff = "(none: no throughput)"
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %d | %s |\n", s.source, s.predicted, eff, median, worst, s.memRows, mem)
		for _, c := range s.off {
			off = append(off, offRow{s.source, c})
		}
	}
	if len(off) == 0 {
		return
	}
	slices.SortStableFunc(off, func(x, y offRow) int { return cmp.Compare(math.Abs(y.c.tokenErr), math.Abs(x.c.tokenErr)) })
	fast := 0
	for _, o := range off {
		if o.c.tokenErr > 0 {
			fast++
		}
	}
	fmt.Fprintf(b, "\nPredicted rows more than 10 %% off (%d, of which %d predicted faster than they ran), worst first (what zerosim does not model yet):\n\n", len(off), fast)
	for _, o := range off {
		fmt.Fprintf(b, "- %+.1f %%: %s: %s\n", 100*o.c.tokenErr, o.source, o.c.row.name())
	}
}

// deepspeedGaps writes the rows whose memory is nvidia-smi's (FlagPerf's
// DeepSpeed ZeRO-3 runs) side by side with DeepSpeed's gather pool
// (memory.GatherPool): what the device peak without the pool misses
// (measured less the predicted device peak, plus the pool) against the
// pool, across micro-step sizes and machines. It fails when a row no
// longer needs the pool (the device peak without it reaches the
// measurement), and checks the pool against an independent count: a
// 16-bit copy of every parameter but those of the units kept across the
// boundary. Every figure is computed here; the conclusions are worded from
// their signs.
func deepspeedGaps(t *testing.T, b *strings.Builder, files []string, v validationResults) {
	t.Helper()
	type gap struct {
		source        string
		c             validationCase
		missing, pool float64 // GiB
	}
	var gaps []gap
	for _, f := range files {
		source := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, c := range v[source] {
			if c.row.MemoryKind != "nvidia-smi" || math.IsNaN(c.memoryErr) {
				continue
			}
			// The independent count: 16-bit parameters, 2 bytes each
			// (every nvidia-smi source trains in bf16), all but the kept
			// units' (the layers divide evenly over the ranks: no padding),
			// under overlap_comm; none without it (DeepSpeed then gathers
			// on the compute stream: memory.GatherPool), and such a row
			// has no pool to set its gap against.
			if c.paramDType != scenarios.BF16 {
				t.Fatalf("%s: %s: param_dtype %q: deepspeedGaps counts 2-byte parameters", source, c.row.name(), c.paramDType)
			}
			if !c.overlap {
				if c.poolBytes != 0 {
					t.Errorf("%s: %s: gather pool %d B under overlap_comm false, want none", source, c.row.name(), c.poolBytes)
				}
				continue
			}
			if want := 2 * (c.params - c.keptParams); c.poolBytes != want {
				t.Errorf("%s: %s: gather pool %d B, want 2 B × (%d − %d kept) parameters = %d B", source, c.row.name(), c.poolBytes, c.params, c.keptParams, want)
			}
			pool := float64(c.poolBytes) / float64(units.GiB)
			gaps = append(gaps, gap{source, c, c.row.MemoryGiB - c.peakGiB + pool, pool})
		}
	}
	if len(gaps) == 0 {
		return
	}
	b.WriteString("\n## nvidia-smi rows side by side\n\n")
	b.WriteString("Every row whose memory is nvidia-smi's under DeepSpeed's overlap_comm (FlagPerf's DeepSpeed ZeRO-3 runs; without it no pool forms). The gather pool is what DeepSpeed's caching allocator\n")
	b.WriteString("still holds of the parameters the host gathered and released in forward while the GPU was behind (memory.GatherPool, memory.host_lead 1:\n")
	b.WriteString("a bf16 copy of every parameter but the units stage3_max_reuse_distance keeps gathered across the boundary); missing without it is\n")
	b.WriteString("the measured memory less zerosim's device peak without the pool.\n\n")
	b.WriteString("| source: case | tokens per micro-step | measured GiB | predicted GiB | of which gather pool | missing without it | missing / pool |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	lo, hi, loR, hiR := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, g := range gaps {
		fmt.Fprintf(b, "| %s: %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n", g.source, g.c.row.name(), g.c.microTokens, g.c.row.MemoryGiB, g.c.peakGiB, g.pool, g.missing, g.missing/g.pool)
		lo, hi = min(lo, g.missing), max(hi, g.missing)
		loR, hiR = min(loR, g.missing/g.pool), max(hiR, g.missing/g.pool)
		if g.missing <= 0 {
			t.Errorf("%s: %s: zerosim's device peak without the gather pool, %.1f GiB, is no longer below nvidia-smi's %.1f: reword deepspeedGaps and memory.GatherPool's evidence", g.source, g.c.row.name(), g.c.peakGiB-g.pool, g.c.row.MemoryGiB)
		}
	}
	fmt.Fprintf(b, "\nWithout the pool the device peak misses %.1f to %.1f GiB, %.2f to %.2f times the pool.", lo, hi, loR, hiR)
	// Within a source (one model on one machine), the rows with the
	// fewest and the most tokens per micro-step.
	for _, f := range files {
		source := strings.TrimSuffix(filepath.Base(f), ".json")
		var few, many *gap
		for i := range gaps {
			g := &gaps[i]
			if g.source != source {
				continue
			}
			if few == nil || g.c.microTokens < few.c.microTokens {
				few = g
			}
			if many == nil || g.c.microTokens > many.c.microTokens {
				many = g
			}
		}
		if few == nil || few.c.microTokens == many.c.microTokens {
			continue
		}
		d := many.missing - few.missing
		trend := "what is missing does not grow with the tokens, as a pool of parameters would not"
		if d > 0 {
			trend = fmt.Sprintf("what is missing grows by %.2f GiB per 1,000 tokens", 1000*d/float64(many.c.microTokens-few.c.microTokens))
		}
		fmt.Fprintf(b, " In %s, %d rather than %d tokens per micro-step change what is missing by %+.1f GiB while the predicted device peak grows by %.1f GiB: %s.",
			source, many.c.microTokens, few.c.microTokens, d, many.c.peakGiB-few.c.peakGiB, trend)
	}
	// Across sources, the rows of one model and micro-step shape.
	for i := range gaps {
		for j := i + 1; j < len(gaps); j++ {
			a, o := gaps[i], gaps[j]
			if a.source == o.source || a.c.row.Model != o.c.row.Model || a.c.row.SeqLen != o.c.row.SeqLen || a.c.row.MicroBatch != o.c.row.MicroBatch || a.c.row.GradAccum != o.c.row.GradAccum {
				continue
			}
			fmt.Fprintf(b, " The same %s micro-step of %d tokens, GA %d, on %s and %s: predicted %.1f and %.1f GiB, measured %.1f and %.1f (%+.1f GiB more on the second, which the model does not explain).",
				a.c.row.Model, a.c.microTokens, max(a.c.row.GradAccum, 1), a.source, o.source, a.c.peakGiB, o.c.peakGiB, a.c.row.MemoryGiB, o.c.row.MemoryGiB, o.c.row.MemoryGiB-a.c.row.MemoryGiB)
		}
	}
	b.WriteString("\n")
}

// spreadCheck writes, per model, the spread of the errors over the
// sequence lengths of a sweep and requires it under 5 points: attention
// grows as s² per sequence, the matmuls as s, so a wrong attention rate
// tilts the errors with the sequence length (FlashAttention-2's rate on MPT's
// Triton FlashAttention-1 kernel tilted the 7B rows by 25 points, from
// -4 % at 512 tokens to +21 % at 16384).
func spreadCheck(t *testing.T, b *strings.Builder, cases []validationCase) {
	t.Helper()
	lo, hi := map[string]float64{}, map[string]float64{}
	var models []string
	for _, c := range cases {
		m := c.row.Model
		if _, ok := lo[m]; !ok {
			models = append(models, m)
			lo[m], hi[m] = c.tokenErr, c.tokenErr
		}
		lo[m], hi[m] = min(lo[m], c.tokenErr), max(hi[m], c.tokenErr)
	}
	b.WriteString("\nSpread of the errors over the sequence lengths (attention against matmuls; required under 5 points):")
	for _, m := range models {
		fmt.Fprintf(b, " %s %.1f points (%+.1f %% to %+.1f %%);", m, 100*(hi[m]-lo[m]), 100*lo[m], 100*hi[m])
		if hi[m]-lo[m] > 0.05 {
			t.Errorf("%s: errors spread %.1f points over the sequence lengths (%+.1f %% to %+.1f %%), over 5", m, 100*(hi[m]-lo[m]), 100*lo[m], 100*hi[m])
		}
	}
	b.WriteString("\n")
}

// validationVariant is what runValidation changes in a source before it
// calibrates and predicts (TestStackCosts' candidates): edit, when set,
// changes every row's resolved scenario; hostGap is a fixed time per step
// in which the GPU idles, not in the replay: the calibration row's measured
// step less it is fitted, and every row's predicted step has it added;
// noFSDP2Copies calibrates and replays without FSDP2's compute-stream
// copies (Options.noFSDP2Copies: TestStackCosts' column without them).
type validationVariant struct {
	edit          func(*scenarios.Scenario)
	hostGap       units.Duration
	noFSDP2Copies bool
}

func runValidation(t *testing.T, name string, src validationSource, tmpl []byte, variant validationVariant) ([]validationCase, float64) {
	t.Helper()
	// Calibrate on the first row that ran without gradient accumulation
	// (the replay runs one micro-step per step).
	cal := 0
	for i, r := range src.Rows {
		if r.GradAccum <= 1 {
			cal = i
			break
		}
	}
	load := func(i int) *scenarios.Scenario {
		s, err := scenarios.Load(name+".yaml", tmpl, src.Rows[i].sets(src.gpn))
		if err != nil {
			t.Fatalf("%s row %d: %v", name, i, err)
		}
		if variant.edit != nil {
			variant.edit(s)
		}
		return s
	}
	s := load(cal)
	opt := Options{noFSDP2Copies: variant.noFSDP2Copies}
	eff := s.Training.ComputeEfficiency // the template's, for an unfitted source
	if !src.unfitted() {
		tokens := s.Training.MicroBatch * s.Training.GradAccum * s.Model.SeqLen / int64(s.Parallelism.CP)
		measured := units.Duration(math.Round(float64(tokens) / src.Rows[cal].TokensPerGPU * float64(units.Second)))
		var err error
		if eff, err = calibrateEfficiency(s, measured-variant.hostGap, 1e-5, opt); err != nil {
			t.Fatalf("%s row %d: %v", name, cal, err)
		}
	}
	var out []validationCase
	calGPU := s.Cluster.GPU
	for i, r := range src.Rows {
		s := load(i)
		// A row on another GPU takes the fit as a calibration file
		// carries it there (scenarios.CarryComputeEfficiency).
		s.Training.ComputeEfficiency = scenarios.CarryComputeEfficiency(eff, calGPU, s.Cluster.GPU)
		res, err := Replay(s, opt)
		if err != nil {
			t.Fatalf("%s row %d: %v", name, i, err)
		}
		c := validationCase{row: r, calibrated: i == cal, tokens: res.Utilization.TokensPerGPU, memoryErr: math.NaN(), activeErr: math.NaN(), restErr: math.NaN()}
		c.stepTokens = s.Training.MicroBatch * s.Training.GradAccum * s.Model.SeqLen / int64(s.Parallelism.CP)
		if variant.hostGap > 0 {
			c.tokens = float64(c.stepTokens) / (c.stepSeconds(c.tokens) + variant.hostGap.Seconds())
		}
		c.tokenErr = c.tokens/r.TokensPerGPU - 1
		if src.unfitted() {
			c.tokenErr = math.NaN()
		}
		// Published memory is the caching allocator's reserved peak
		// (torchtitan: max_reserved), or the device memory nvidia-smi
		// shows (memory_kind nvidia-smi), compared with the device peak,
		// or torch.cuda.max_memory_allocated (memory_kind allocated:
		// KempnerForge), compared with the allocated peak.
		// A reserve above what the GPU holds is what a profiler cannot
		// see: the figures are capped there (Result.SeenPeaks).
		seenReserved, seenDevice, _ := res.SeenPeaks(int64(s.Cluster.GPUMemory))
		c.peakGiB = float64(seenReserved) / float64(units.GiB)
		switch r.MemoryKind {
		case "":
		case "nvidia-smi":
			c.peakGiB = float64(seenDevice) / float64(units.GiB)
		case "allocated":
			c.peakGiB = float64(slices.Max(res.PeakMemory)) / float64(units.GiB)
		default:
			t.Fatalf("%s row %d: memory_kind %q, want unset, nvidia-smi or allocated", name, i, r.MemoryKind)
		}
		alloc := slices.Max(res.PeakMemory)
		// Short of memory, the allocator waits for the GPU and reuses
		// DeepSpeed's released gathers too, so what the device needs
		// holds no pool and no reserve (Result.DeviceNeed, which
		// zero.Result.Fits judges by).
		need := res.DeviceNeed
		// DeviceNeed is the profiler's device figure at the allocated
		// peak with no reserve and no pool: derived apart, as this test
		// did before it existed.
		noReserve := *s
		noReserve.Memory.AllocatorOverhead = new(float64)
		if _, apart, err := memory.ProfilerPeaks(&noReserve, alloc, 0); err != nil || apart != need {
			t.Fatalf("%s row %d: device need %d, ProfilerPeaks without reserve or pool %d (%v)", name, i, need, apart, err)
		}
		c.allocGiB = float64(alloc) / float64(units.GiB)
		c.needGiB = float64(need) / float64(units.GiB)
		c.deviceGiB = float64(res.DevicePeak) / float64(units.GiB)
		c.capGiB = float64(s.Cluster.GPUMemory) / float64(units.GiB)
		c.fits = alloc <= int64(s.Cluster.GPUMemory) && need <= int64(s.Cluster.GPUMemory)
		if c.fits != res.Fits(int64(s.Cluster.GPUMemory)) {
			t.Errorf("%s row %d: fits %v here, %v by zero.Result.Fits", name, i, c.fits, !c.fits)
		}
		if r.MemoryGiB > 0 {
			c.memoryErr = c.peakGiB/r.MemoryGiB - 1
		}
		c.activeGiB = c.allocGiB
		m := res.MemoryModel
		simulated := m != nil && m.AllocSim != nil && m.AllocSim.OOM == nil
		if simulated {
			c.activeGiB = float64(m.AllocSim.PeakActive) / float64(units.GiB)
		}
		if r.ActiveGiB > 0 {
			// A published active peak (active_bytes.all.peak) is the
			// simulated allocator's to match; the allocated peak only
			// where the source states why it is the same figure
			// (active_allocated).
			switch {
			case !simulated && src.ActiveAllocated == "":
				t.Errorf("%s row %d (%s): publishes an active peak (active_gib) but the replay has no simulated active peak (no allocator simulation, or one out of memory), and the source gives no active_allocated: it would be compared with the allocated peak", name, i, r.name())
			case simulated && src.ActiveAllocated != "":
				t.Errorf("%s row %d (%s): active_allocated says the active peak is compared with the allocated one, but the replay simulates the allocator's active peak: drop active_allocated", name, i, r.name())
			}
			c.activeErr = c.activeGiB/r.ActiveGiB - 1
		}
		c.restGiB = float64(res.MemoryModel.AtRest) / float64(units.GiB)
		if r.RestGiB > 0 {
			c.restErr = c.restGiB/r.RestGiB - 1
		}
		c.params, c.dp, c.intraBW = s.Model.TotalParams(), s.Parallelism.DP, float64(s.Cluster.Intra.Bandwidth)
		c.microTokens = s.Training.MicroBatch * s.Model.SeqLen / int64(s.Parallelism.CP)
		c.paramDType = s.Training.ParamDType
		c.gpu, c.fp8 = s.Cluster.GPU, recipe(s.Training.FP8)
		c.compiled = s.Training.Compile != scenarios.CompileNone && s.Training.Compile != ""
		c.nodes = s.Cluster.Nodes
		c.poolBytes = res.MemoryModel.GatherPool
		c.overlap = s.Communication.Overlap == nil || *s.Communication.Overlap
		for u, kept := range memory.KeptAcrossBoundary(s) {
			if kept {
				c.keptParams += int64(s.Model.LayerList[u].Params)
			}
		}
		for _, p := range res.Phases {
			c.sentGiB += float64(p.Sent) / float64(units.GiB)
		}
		out = append(out, c)
	}
	for i := range out {
		out[i].crossPrecision = out[i].fp8 != scenarios.FP8None && out[cal].fp8 == scenarios.FP8None
	}
	return out, eff
}

// checkCrossPrecision holds a float8 row predicted from its source's bf16
// calibration row within 5 %, or, with token_miss, at its token_bound
// (asserted to still miss 5 %), and lists such a miss with its reason.
func checkCrossPrecision(t *testing.T, source string, c validationCase, misses *strings.Builder) {
	t.Helper()
	r := c.row
	switch {
	case (r.TokenMiss == "") != (r.TokenBound == 0):
		t.Errorf("%s: give token_miss and token_bound together", r.name())
	case r.TokenMiss == "":
		if math.Abs(c.tokenErr) > 0.05 {
			t.Errorf("%s: %.0f tokens/s/GPU from the bf16 row's efficiency, published %.0f (%+.1f %%, over 5 %%)", r.name(), c.tokens, r.TokensPerGPU, 100*c.tokenErr)
		}
	case math.Abs(c.tokenErr) > r.TokenBound:
		t.Errorf("%s: %.0f tokens/s/GPU, published %.0f (%+.1f %%, over its token_bound %.1f %%)", r.name(), c.tokens, r.TokensPerGPU, 100*c.tokenErr, 100*r.TokenBound)
	case math.Abs(c.tokenErr) <= 0.05:
		t.Errorf("%s: %+.1f %% is now within 5 %%: delete its token_miss and token_bound", r.name(), 100*c.tokenErr)
	default:
		fmt.Fprintf(misses, "- %s: %s, float8 predicted from the bf16 row, %+.1f %% (held at ±%.1f %%; the requirement is 5 %%): %s.\n", source, r.name(), 100*c.tokenErr, 100*r.TokenBound, r.TokenMiss)
	}
}

// checkMemory holds a published memory figure (err: zerosim's got against
// it, NaN when not published) within 10 %, unless the row names it a
// known miss, which must then still miss.
func checkMemory(t *testing.T, row, what, published, missKey string, got, want, err float64, miss string) {
	t.Helper()
	switch {
	case math.IsNaN(err):
	case miss != "":
		if math.Abs(err) <= 0.10 {
			t.Errorf("%s: %s %.1f GiB, %s %.1f GiB (%+.1f %%) is now within 10 %%: delete its %s", row, what, got, published, want, 100*err, missKey)
		}
	case math.Abs(err) > 0.10:
		t.Errorf("%s: %s %.1f GiB, %s %.1f GiB (%+.1f %%, over 10 %%)", row, what, got, published, want, 100*err)
	}
}
