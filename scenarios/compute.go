package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// RecomputeOp is torchtitan's op-level selective checkpointing
// (training.recompute: op; see memory/tensors.go).
const RecomputeOp Recompute = "op"

// Attention is the attention kernel (training.attention).
type Attention string

const (
	// AttentionFlash is FlashAttention: no s² scores kept, GQA native
	// (default).
	AttentionFlash Attention = "flash"
	// AttentionSDPA is PyTorch's scaled_dot_product_attention after
	// repeat_kv (torchtitan).
	AttentionSDPA Attention = "sdpa"
	// AttentionEager writes softmax(QKᵀ)V out and keeps the s² scores.
	AttentionEager Attention = "eager"
)

// AttentionKernel is the implementation that runs attention
// (training.attention_kernel): it sets the fraction of the peak attention
// reaches (zero.AttentionEfficiency cites each default).
type AttentionKernel string

const (
	// KernelFA2 is FlashAttention-2's CUDA kernel (flash_attn, and PyTorch
	// SDPA's flash backend, which is FlashAttention-2 since PyTorch 2.2).
	// Default unless training.attention is eager.
	KernelFA2 AttentionKernel = "fa2"
	// KernelFA1 is FlashAttention-1's CUDA kernel (flash-attn before 2.0:
	// flash_attn_unpadded_func and its qkvpacked form, the FlashMHA and
	// FlashAttention modules of flash_attn/flash_attention.py, which
	// MosaicGPT's attn_impl: flash ran in mosaicml/examples before
	// llm-foundry; zero.FA1AttentionEfficiency cites its rate). Turing,
	// Ampere, Ada and Hopper only.
	KernelFA1 AttentionKernel = "fa1"
	// KernelFA3 is FlashAttention-3 (Hopper only).
	KernelFA3 AttentionKernel = "fa3"
	// KernelCuDNN is cuDNN's fused attention (PyTorch SDPA's
	// CUDNN_ATTENTION backend, Transformer Engine's FusedAttention).
	KernelCuDNN AttentionKernel = "cudnn"
	// KernelTE is Transformer Engine's DotProductAttention (Megatron-LM's
	// default --transformer-impl): cuDNN's fused attention on Hopper and
	// newer, FlashAttention-2 before (zero.AttentionEfficiency cites it).
	KernelTE AttentionKernel = "te"
	// KernelTriton is FlashAttention's Triton kernel (Tri Dao's
	// flash_attn_triton.py, which llm-foundry's attn_impl triton copies), a
	// FlashAttention-1-class kernel.
	KernelTriton AttentionKernel = "triton"
	// KernelFlex is FlexAttention (torch.nn.attention.flex_attention under
	// torch.compile): Inductor's Triton flex_attention template, which
	// torchtitan's language models run by default from 16954571
	// (2026-06-09) and its deepseek_v3 from f738a03bf
	// (zero.AttentionEfficiency cites its rates).
	KernelFlex AttentionKernel = "flex"
	// KernelEager is unfused attention: two batched matmuls at the GEMM
	// efficiency and the s² softmax on HBM (training.attention eager).
	KernelEager AttentionKernel = "eager"
)

// HopperGPU reports whether a GPU preset is a Hopper part (GH100: the
// H100 SXM5 and PCIe, the H200 and the GH200's GPU).
func HopperGPU(gpu string) bool {
	return gpu == "H100-80GB" || gpu == "H100-PCIe" || gpu == "H200" || gpu == "GH200-96GB"
}

// BlackwellGPU reports whether a GPU preset is a Blackwell data-centre
// part, compute capability 10.0 and up (sm100: the B200 and GB200;
// sm103: the B300 and GB300).
func BlackwellGPU(gpu string) bool {
	switch gpu {
	case "B200", "GB200", "B300", "GB300":
		return true
	}
	return false
}

// VoltaGPU reports whether a GPU preset is a Volta part (GV100: the V100
// SXM2), on which neither FlashAttention-2 ("currently supports: Ampere,
// Ada, or Hopper GPUs", Dao-AILab/flash-attention README.md at 1d817a8f)
// nor cuDNN's fused attention (sm80 on, PyTorch's
// check_cudnn_hardware_support in sdp_utils.cpp at 21c3369e) runs:
// PyTorch's SDPA falls back to its memory-efficient kernel.
func VoltaGPU(gpu string) bool { return gpu == "V100-16GB" || gpu == "V100-32GB" }

// AttentionKernelRuns reports whether kernel runs on c's GPU:
// FlashAttention-3 on Hopper only (its hopper/ build: "FlashAttention-3 is
// optimized for Hopper GPUs", flash-attention README.md line 31 at
// 0251105a; any kernel on a GPU
// described by its figures), cuDNN's attention on NVIDIA's GPUs only
// (cuDNNOnAMD), FlashAttention-1 on NVIDIA's Turing to Hopper GPUs
// (fa1OnGPU), every other kernel anywhere.
func AttentionKernelRuns(kernel AttentionKernel, c *Cluster) bool {
	switch kernel {
	case KernelFA1:
		// The RTX 5090 is Blackwell too (sm120), outside BlackwellGPU's
		// data-centre parts: flash-attn 1.x's TORCH_CHECK(is_sm90 ||
		// is_sm8x || is_sm75) refuses it (csrc/flash_attn/fmha_api.cpp
		// l.211 at v1.0.9, 6d48e14a).
		return !c.AMD() && !VoltaGPU(c.GPU) && !BlackwellGPU(c.GPU) && c.GPU != "RTX5090"
	case KernelFA3:
		return c.GPU == "" && !c.AMD() || HopperGPU(c.GPU)
	case KernelCuDNN:
		return !c.AMD()
	}
	return true
}

// cuDNNOnAMD is why training.attention_kernel: cudnn is refused on an AMD
// GPU: PyTorch's ROCm build has no cuDNN attention. can_use_cudnn_attention
// returns false under USE_ROCM ("#if defined(USE_ROCM) || !AT_CUDNN_ENABLED()
// ... Torch was not compiled with cuDNN attention."), so SDPA's priority
// list (torchtitan's CUDNN_ATTENTION, FLASH_ATTENTION, MATH) falls to the
// flash backend, which on ROCm is AOTriton's kernel or, with the CK
// preference, Composable Kernel's (check_flash_attention_hardware_support
// under USE_ROCM_ATTENTION): aten/src/ATen/native/transformers/cuda/
// sdp_utils.cpp, pytorch/pytorch at 001f694aef6f922b4fdf6d27d59162d27bf3df58.
// zerosim times that flash kernel as fa2.
const cuDNNOnAMD = "PyTorch's ROCm build has no cuDNN attention: SDPA runs its flash backend there (AOTriton or CK), which zerosim times as fa2"

// fa1OnGPU is why training.attention_kernel: fa1 is refused on a GPU that
// is not NVIDIA's Turing, Ampere, Ada or Hopper: "FlashAttention currently
// supports: 1. Turing, Ampere, Ada, or Hopper GPUs (e.g., H100, A100, RTX
// 3090, T4, RTX 2080)" (Dao-AILab/flash-attention README.md at v1.0.9,
// 6d48e14a, the last FlashAttention-1 release; its CUDA extension builds
// for NVIDIA's GPUs only, and 1.x predates Blackwell).
const fa1OnGPU = "FlashAttention-1 (flash-attn < 2.0) runs on NVIDIA's Turing, Ampere, Ada and Hopper GPUs only (flash-attention README.md at v1.0.9)"

// Boundary is how ZeRO-3 units cross from forward to backward
// (communication.boundary; memory/boundary.go cites each stack).
type Boundary string

const (
	BoundaryReshard Boundary = "reshard" // default: every unit gathers again
	BoundaryFSDP1   Boundary = "fsdp1"
	BoundaryFSDP2   Boundary = "fsdp2"
	// BoundaryFSDP2Head is FSDP2 as torchtitan applies it from 2026: the
	// embedding and every block reshard, only the final norm and the
	// output stay gathered (memory/boundary.go).
	BoundaryFSDP2Head Boundary = "fsdp2_head"
	BoundaryDeepSpeed Boundary = "deepspeed"
)

// FSDP2 reports whether b is one of FSDP2's boundaries (fsdp2,
// fsdp2_head), which share its reduce-scatter pacing.
func (b Boundary) FSDP2() bool { return b == BoundaryFSDP2 || b == BoundaryFSDP2Head }

// FSDP reports whether b is one of PyTorch FSDP's boundaries (fsdp1, fsdp2,
// fsdp2_head).
func (b Boundary) FSDP() bool { return b == BoundaryFSDP1 || b.FSDP2() }

// overheadGivesReserve is UnsimulatedReserve's reason when
// memory.allocator_overhead is set.
const overheadGivesReserve = "memory.allocator_overhead gives the reserve"

// UnsimulatedReserve says why the reserved peak of s is not simulated
// through the caching allocator (memory.SimulateReserved) but taken as
// memory.allocator_overhead above the allocated peak, or "" when it is
// simulated: PyTorch FSDP (communication.boundary fsdp1, fsdp2 or
// fsdp2_head) at zero_stage 3, whose allocations the simulation replays,
// with nothing offloaded (the replay keeps every shard on the GPU and has
// no host copies), no gradients held across micro-steps
// (HoldsUnshardedGrads: the replay reduce-scatters every micro-step) and
// memory.allocator_overhead unset by the scenario and by a calibration.
func (s *Scenario) UnsimulatedReserve() string {
	switch b := s.Communication.Boundary; {
	case b != BoundaryFSDP1 && !b.FSDP2():
		return fmt.Sprintf("communication.boundary is %s", b)
	case s.Parallelism.Stage != 3:
		return fmt.Sprintf("parallelism.zero_stage is %d", s.Parallelism.Stage)
	case s.Offload.Any():
		return "something is offloaded"
	case s.HoldsUnshardedGrads():
		return "training.grad_sync is last (FSDP's no_sync keeps whole unsharded gradients across micro-steps, which the allocator replay does not follow)"
	case s.Memory.AllocatorOverhead != nil:
		return overheadGivesReserve
	}
	return ""
}

// Compute-model defaults.
const (
	// DefaultComputeEfficiency is the fraction of the dense peak cuBLAS bf16
	// GEMMs of training sizes reach standalone on H100, about 80 % (NVIDIA
	// developer forum, "Compute-Communication Overlap Causes Severe GEMM
	// Performance Degradation because of Tail Effect", 2025,
	// https://forums.developer.nvidia.com/t/compute-communication-overlap-causes-severe-gemm-performance-degradation-because-of-tail-effect/337991:
	// "When the gemm kernel runs standalone, it achieves high MFU (~80%)";
	// zero.DefaultGEMMEfficiency). It is the H100's: another GPU's default
	// stands to it as their measured maximum matmul throughputs do
	// (DefaultComputeEfficiencyOf).
	DefaultComputeEfficiency = 0.8
	// MinEfficiency is the lowest training.mfu, compute_efficiency and
	// attention_efficiency taken, and the lowest a calibration searches
	// (zero.MinEfficiency): below one ten-thousandth of the peak no GPU
	// trains a model zerosim simulates. 1e-30 loaded, and the step's
	// compute then overflowed int64 picoseconds with no key named (qa22
	// L13).
	MinEfficiency = 1e-4
	// DefaultComputeInterference is the compute slowdown while a collective
	// runs on the same GPU: 18.9 % on average (Lee et al. 2025, arXiv
	// 2507.03114).
	DefaultComputeInterference = 0.189
	// DefaultCollectiveInterference is the slowdown of a collective's
	// transfers while compute runs beside it: 0 (off), because no published
	// characterization gives a representative figure. Lee et al. 2025 report
	// only the compute side; the measurements found are single kernels in
	// issue threads (NVIDIA/nccl#205: an all-reduce kernel 4.7 ms alone,
	// 5.5 ms beside one SGEMM, 10 ms beside a hundred; NVIDIA/nccl#1433:
	// send/recv "up to 2x in communication" beside a CUTLASS GEMM), a range
	// to calibrate in, not a default (docs/compute-model.md).
	DefaultCollectiveInterference = 0.0
	// DefaultAllocatorOverhead is the caching allocator's reserved peak over
	// the allocated peak (memory/profiler.go explains the fit).
	DefaultAllocatorOverhead = 0.15
	// MaxAllocatorOverhead is memory.allocator_overhead's largest value.
	MaxAllocatorOverhead = 10.0
	// PublishedAllocatorOverheadMax is the largest reserved peak over the
	// allocated peak, less 1, that published training runs show: 1.04 to
	// 1.50 for DeepSpeed ZeRO-3 with full recompute by model (GMLake,
	// ASPLOS 2024, arXiv:2401.08156; intelligent-machine-learning/glake
	// GMLake/README.md), 1.44 and 1.30 on an FSDP1 Llama 7B run
	// (pytorch/torchtitan#97), reserved/active 1.20–1.36 at torchtitan
	// 83c879f (docs/memory-model.md). calibrate warns of a fitted overhead
	// above it.
	PublishedAllocatorOverheadMax = 0.50
	// DefaultHostLead is memory.host_lead's default, 1: DeepSpeed ZeRO-3's
	// forward never waits for the GPU, so the host releases every gathered
	// parameter before the GPU has used it (memory/profiler.go, GatherPool).
	DefaultHostLead   = 1.0
	maxRecomputeEvery = 1 << 20
)

func (l *loader) resolveCompute(s *Scenario) *Error {
	t := &s.Training
	if l.has("training.mfu") {
		if math.IsNaN(t.MFU) || !(t.MFU >= MinEfficiency && t.MFU <= 1) {
			return l.errAlone("training.mfu", fmt.Sprintf("mfu=%s is out of range (use a fraction in [0.0001, 1] such as 0.4)", fmtFloat(t.MFU)))
		}
		if l.has("training.compute_efficiency") {
			return l.errPath("training.mfu", "give training.mfu (the model FLOPs utilization to reach) or training.compute_efficiency (the fraction of peak matmuls reach), not both")
		}
	}
	cal := s.Communication.CalibrationData
	if cal != nil && cal.Compute != nil {
		l.warnCalibratedCompute(s, cal.Compute)
	}
	switch {
	case l.has("training.mfu"):
		// The replay fits the efficiency to the MFU; left unset so that
		// resolving again keeps one of the two keys.
	case !l.has("training.compute_efficiency") && cal != nil && cal.Compute != nil:
		// The calibration file's efficiency, unless the scenario sets its
		// own (warnCalibratedCompute says which wins).
		// Fitted on another GPU, carried as a ratio to that GPU's
		// default (ComputeEfficiencyCarry).
		c := cal.Compute
		t.ComputeEfficiency = CarryComputeEfficiency(c.Efficiency, c.GPU, s.Cluster.GPU)
		t.ComputeEfficiencyFrom = calibrationSource(s.Communication.Calibration, c) + carriedText(c.Efficiency, c.GPU, s.Cluster.GPU)
	case !l.has("training.compute_efficiency"):
		t.ComputeEfficiency, _, _ = DefaultComputeEfficiencyOf(s.Cluster.GPU)
		t.ComputeEfficiencyDefault = true
	case math.IsNaN(t.ComputeEfficiency) || !(t.ComputeEfficiency >= MinEfficiency && t.ComputeEfficiency <= 1):
		return l.errAlone("training.compute_efficiency", fmt.Sprintf("compute_efficiency=%s is out of range (use a fraction in [0.0001, 1] such as 0.8)", fmtFloat(t.ComputeEfficiency)))
	}
	if err := enum(l, "training.attention", &t.Attention, AttentionFlash, AttentionFlash, AttentionSDPA, AttentionEager); err != nil {
		return err
	}
	if err := l.checkAttentionClass(s); err != nil {
		return err
	}
	if err := l.resolveAttentionKernel(s); err != nil {
		return err
	}
	if l.has("training.attention_efficiency") && (math.IsNaN(t.AttentionEfficiency) || !(t.AttentionEfficiency >= MinEfficiency && t.AttentionEfficiency <= 1)) {
		return l.errAlone("training.attention_efficiency", fmt.Sprintf("attention_efficiency=%s is out of range (use a fraction in [0.0001, 1] such as 0.6)", fmtFloat(t.AttentionEfficiency)))
	}
	if cal != nil && cal.Compute != nil && cal.Compute.AttentionEfficiency > 0 {
		l.applyCalibratedAttention(s, cal.Compute)
	}
	if l.has("training.dropout") && (math.IsNaN(t.Dropout) || t.Dropout < 0 || t.Dropout >= 1) {
		return l.errAlone("training.dropout", fmt.Sprintf("dropout=%s is out of range (use a probability in [0, 1) such as 0.1)", fmtFloat(t.Dropout)))
	}
	if l.has("training.max_grad_norm") && !(t.MaxGradNorm > 0 && t.MaxGradNorm <= math.MaxFloat32) {
		return l.errAlone("training.max_grad_norm", fmt.Sprintf("max_grad_norm=%s is out of range (use a positive norm such as 1.0)", fmtFloat(t.MaxGradNorm)))
	}
	// A fraction leaves recompute_every unset (0, which Encode omits): the
	// resolved scenario then loads back without both keys, and a file that
	// writes both is refused below.
	t.RecomputeFractionP = 0
	if l.has("training.recompute_fraction") {
		p, err := ParseRecomputeFraction(t.RecomputeFraction)
		if err != nil {
			v := t.RecomputeFraction
			if strings.TrimSpace(v) == "" {
				v = strconv.Quote(v)
			}
			return l.errAlone("training.recompute_fraction", fmt.Sprintf("recompute_fraction=%s %v", v, err))
		}
		if l.has("training.recompute_every") {
			return l.errPath("training.recompute_fraction", "give training.recompute_fraction (fms-fsdp's fraction of the blocks) or training.recompute_every (every N-th block), not both")
		}
		t.RecomputeFractionP, t.RecomputeEvery = p, 0
	} else {
		if !l.has("training.recompute_every") {
			t.RecomputeEvery = 1
		}
		if err := l.intRange("training.recompute_every", int64(t.RecomputeEvery)); err != nil {
			return err
		}
	}
	l.warnPlacement(s)
	c := &s.Communication
	if err := enum(l, "communication.boundary", &c.Boundary, BoundaryReshard, BoundaryReshard, BoundaryFSDP1, BoundaryFSDP2, BoundaryFSDP2Head, BoundaryDeepSpeed); err != nil {
		return err
	}
	if c.LimitAllGathers != nil && c.Boundary != BoundaryFSDP1 {
		return l.errPath("communication.limit_all_gathers", fmt.Sprintf("limit_all_gathers is PyTorch FSDP1's rate limiter, not %s's (set communication.boundary: fsdp1, or remove limit_all_gathers)", c.Boundary))
	}
	// Unset, backward_prefetch_depth follows prefetch_depth (also after an
	// edit of prefetch_depth on a resolved scenario).
	if d := c.BackwardPrefetchDepth; d != nil {
		if err := l.intRange("communication.backward_prefetch_depth", int64(*d)); err != nil {
			return err
		}
	}
	if c.ComputeInterference == nil {
		c.ComputeInterference = new(float64)
		*c.ComputeInterference = DefaultComputeInterference
	} else if v := *c.ComputeInterference; math.IsNaN(v) || v < 0 || v > 10 {
		return l.errAlone("communication.compute_interference", fmt.Sprintf("compute_interference=%s is out of range (use a slowdown fraction in [0, 10] such as 0.189)", fmtFloat(v)))
	}
	if c.CollectiveInterference == nil {
		c.CollectiveInterference = new(float64)
		*c.CollectiveInterference = DefaultCollectiveInterference
	} else if v := *c.CollectiveInterference; math.IsNaN(v) || v < 0 || v > 10 {
		return l.errAlone("communication.collective_interference", fmt.Sprintf("collective_interference=%s is out of range (use a slowdown fraction in [0, 10] such as 0.2)", fmtFloat(v)))
	}
	m := &s.Memory
	if cal != nil && cal.Memory != nil {
		l.applyCalibratedMemory(s, cal.Memory)
	}
	// Unset (and no calibration sets it), memory.allocator_overhead stays
	// nil: the reserved peak is then simulated where zerosim replays the
	// stack's allocations (PyTorch FSDP at stage 3, memory/allocseq.go),
	// DefaultAllocatorOverhead applies elsewhere, and a resolved scenario
	// resolves the same after an edit of its stack.
	if m.AllocatorOverhead != nil && (math.IsNaN(*m.AllocatorOverhead) || *m.AllocatorOverhead < 0 || *m.AllocatorOverhead > MaxAllocatorOverhead) {
		v := *m.AllocatorOverhead
		return l.errAlone("memory.allocator_overhead", fmt.Sprintf("allocator_overhead=%s is out of range (use a fraction in [0, 10] such as 0.15)", fmtFloat(v)))
	}
	l.warnExpandable(s)
	// Unset, memory.host_lead stays nil (DefaultHostLead where it applies),
	// so that the many scenarios it does not concern resolve as before.
	if v := m.HostLead; v != nil && (math.IsNaN(*v) || *v < 0 || *v > 1) {
		return l.errAlone("memory.host_lead", fmt.Sprintf("host_lead=%s is out of range (use a fraction in [0, 1] such as 1)", fmtFloat(*v)))
	}
	return nil
}

// calibrationSource describes a compute calibration for reports: "calibration
// cal.yaml (fitted to a 2.84s step of llama2-7b, 6,738,415,616 params, in
// scenario default)".
func calibrationSource(file string, c *CalCompute) string {
	if file == "" {
		file = "a calibration"
	}
	d := units.Duration(math.Round(c.MeasuredMS * float64(units.Millisecond)))
	what := fmt.Sprintf("a %v step", d)
	if c.Method == CalMethodTrace {
		what = fmt.Sprintf("%v of compute kernels per step", d)
		if c.Source != "" {
			what += " in " + c.Source
		}
	}
	if of := c.CalModel.of(c.Scenario); of != "" {
		what += " of " + of
	}
	return fmt.Sprintf("calibration %s (fitted to %s)", file, what)
}

// carriedText says that a calibrated compute efficiency was carried from
// GPU from to GPU to (ComputeEfficiencyCarry): "; carried from GB200 to
// B200 as 0.4751, × 0.7723/0.7258, the GPUs' default efficiencies"; ""
// when it was not.
func carriedText(eff float64, from, to string) string {
	if ComputeEfficiencyCarry(from, to) == 1 {
		return ""
	}
	return fmt.Sprintf("; carried from %s to %s as %s, × %s/%s, the GPUs' default efficiencies",
		from, to, fmtFloat(roundEff(CarryComputeEfficiency(eff, from, to))), fmtFloat(roundEff(defaultEff(to))), fmtFloat(roundEff(defaultEff(from))))
}

// defaultEff is DefaultComputeEfficiencyOf's efficiency alone.
func defaultEff(gpu string) float64 {
	e, _, _ := DefaultComputeEfficiencyOf(gpu)
	return e
}

// roundEff rounds an efficiency to 4 decimals, as reports print them.
func roundEff(e float64) float64 { return math.Round(e*1e4) / 1e4 }

// warnCalibratedCompute warns when the scenario's own efficiency or MFU
// target overrides the calibration file's compute part, and when the file
// was fitted on another GPU or another model.
func (l *loader) warnCalibratedCompute(s *Scenario, c *CalCompute) {
	const at = "communication.calibration"
	switch {
	case l.has("training.mfu"):
		l.warn(s, at, fmt.Sprintf("training.mfu %s overrides the calibration's compute_efficiency %s (remove training.mfu to use the calibrated efficiency)",
			fmtFloat(s.Training.MFU), fmtFloat(c.Efficiency)))
	case l.has("training.compute_efficiency") && s.Training.ComputeEfficiency != c.Efficiency &&
		s.Training.ComputeEfficiency != CarryComputeEfficiency(c.Efficiency, c.GPU, s.Cluster.GPU):
		l.warn(s, at, fmt.Sprintf("training.compute_efficiency %s overrides the calibration's %s (remove the key to use the calibrated efficiency)",
			fmtFloat(s.Training.ComputeEfficiency), fmtFloat(c.Efficiency)))
	}
	if c.GPU != "" && s.Cluster.GPU != "" && c.GPU != s.Cluster.GPU {
		l.warn(s, at, fmt.Sprintf("the compute efficiency was fitted on %s, this cluster runs %s: carried as %s, the fit × %s's default over %s's (%s/%s), which holds the GPUs' measured matmul ratio but not what else differs (calibrate on this GPU)",
			c.GPU, s.Cluster.GPU, fmtFloat(roundEff(CarryComputeEfficiency(c.Efficiency, c.GPU, s.Cluster.GPU))), s.Cluster.GPU, c.GPU,
			fmtFloat(roundEff(defaultEff(s.Cluster.GPU))), fmtFloat(roundEff(defaultEff(c.GPU)))))
	}
	takes := !l.has("training.mfu") && !l.has("training.compute_efficiency") ||
		c.AttentionEfficiency > 0 && !l.has("training.attention_efficiency")
	if d := c.CalModel.differs("the compute efficiency", &s.Model); d != "" && takes {
		// GEMM efficiency follows the matrix shapes: a smaller hidden size
		// reaches less of the peak.
		l.warn(s, at, d)
	}
}

// warnCalibratedSetup warns when the calibration's compute or memory part,
// taken by s, was fitted with another stack, fp8 recipe, attention kernel
// (a step-time fit) or segment mode (qa20 M2: each carried over without a
// word). The compute efficiency follows the stack's kernels and the fp8
// recipe (a bf16 fit applied to fp8 overstates its speed-up: H100's
// published bf16 and fp8 ranges, gpuEfficiencyRanges, differ); the
// allocator overhead follows the stack's allocation order and the segment
// mode (expandable segments map pages into one segment instead of
// caching whole blocks; memory/allocator.go).
func (l *loader) warnCalibratedSetup(s *Scenario) {
	cal := s.Communication.CalibrationData
	if cal == nil {
		return
	}
	now := CalSetupOf(s)
	if c := cal.Compute; c != nil && s.Training.ComputeEfficiencyFrom != "" {
		var d setupDiffs
		d.add("stack", c.Stack, now.Stack, "its kernels and overlap differ")
		d.add("training.fp8", c.FP8, now.FP8, "GEMMs in another precision reach another fraction of the peak")
		if c.Method == CalMethodStepTime {
			d.add("training.attention_kernel", c.AttentionKernel, string(s.Training.AttentionKernel), "the fitted step held that kernel's attention time")
			d.add("training.compile", c.Compile, CompileName(s.Training.Compile), "the fitted efficiency holds the part of torch.compile's speed-up the model does not charge")
		}
		d.warn(l, s, "the compute efficiency")
	}
	if m := cal.Memory; m != nil && s.Memory.AllocatorOverheadFrom != "" {
		var d setupDiffs
		d.add("stack", m.Stack, now.Stack, "its allocations differ")
		if e := m.ExpandableSegments; e != nil {
			d.add("memory.expandable_segments", fmt.Sprint(*e), fmt.Sprint(*now.ExpandableSegments), "the segment mode sets what the allocator caches")
		}
		d.warn(l, s, "the allocator overhead")
	}
}

// setupDiffs are the keys a calibration part was fitted with that the
// scenario runs otherwise (warnCalibratedSetup).
type setupDiffs struct{ was, now, why []string }

// add records key when the file says what it was (was != "") and it
// differs.
func (d *setupDiffs) add(key, was, now, why string) {
	if was != "" && was != now {
		d.was = append(d.was, key+" "+was)
		d.now = append(d.now, now)
		d.why = append(d.why, why)
	}
}

// warn is one warning for a part: "the compute efficiency was fitted with
// stack none, training.fp8 none; this scenario runs megatron, torchao: …".
func (d *setupDiffs) warn(l *loader, s *Scenario, part string) {
	if len(d.was) == 0 {
		return
	}
	l.warn(s, "communication.calibration", fmt.Sprintf("%s was fitted with %s; this scenario runs %s: %s, so it may not carry over (calibrate with this scenario's settings)",
		part, strings.Join(d.was, ", "), strings.Join(d.now, ", "), strings.Join(d.why, "; ")))
}

// applyCalibratedAttention takes the calibration's attention efficiency
// (calibrate --trace) unless the scenario sets training.attention_efficiency
// (then it warns, as for compute_efficiency), and warns when the file was
// fitted with another attention kernel.
func (l *loader) applyCalibratedAttention(s *Scenario, c *CalCompute) {
	const at = "communication.calibration"
	t := &s.Training
	if l.has("training.attention_efficiency") {
		if t.AttentionEfficiency != c.AttentionEfficiency {
			l.warn(s, at, fmt.Sprintf("training.attention_efficiency %s overrides the calibration's %s (remove the key to use the calibrated efficiency)",
				fmtFloat(t.AttentionEfficiency), fmtFloat(c.AttentionEfficiency)))
		}
		return
	}
	t.AttentionEfficiency, t.AttentionEfficiencyFrom = c.AttentionEfficiency, s.Communication.Calibration
	t.AttentionEfficiencyHeadDim = c.HeadDim
	t.AttentionEfficiencyGPU = c.GPU
	if c.AttentionKernel != "" && c.AttentionKernel != string(t.AttentionKernel) {
		l.warn(s, at, fmt.Sprintf("the attention efficiency was fitted with attention_kernel %s, this scenario runs %s: it may not carry over (calibrate with this kernel)",
			c.AttentionKernel, t.AttentionKernel))
	}
}

// applyCalibratedMemory takes the calibration's allocator overhead
// (calibrate --reserved or --device) unless the scenario sets
// memory.allocator_overhead (then it warns, as for compute_efficiency).
func (l *loader) applyCalibratedMemory(s *Scenario, c *CalMemory) {
	m := &s.Memory
	if l.has("memory.allocator_overhead") {
		if m.AllocatorOverhead != nil && *m.AllocatorOverhead != c.AllocatorOverhead {
			l.warn(s, "communication.calibration", fmt.Sprintf("memory.allocator_overhead %s overrides the calibration's %s (remove the key to use the calibrated overhead)",
				fmtFloat(*m.AllocatorOverhead), fmtFloat(c.AllocatorOverhead)))
		}
		return
	}
	v := c.AllocatorOverhead
	m.AllocatorOverhead = &v
	file := s.calibrationName()
	what := "reserved peak"
	if c.Method == CalMethodDevice {
		what = "device peak"
	}
	of := ""
	if w := c.CalModel.of(c.Scenario); w != "" {
		of = " of " + w
	}
	if d := c.CalModel.differs("the allocator overhead", &s.Model); d != "" {
		l.warn(s, "communication.calibration", d)
	}
	m.AllocatorOverheadFrom = fmt.Sprintf("calibration %s (fitted to a %s of %v%s)", file, what, units.Bytes(c.MeasuredBytes), of)
}

// resolveAttentionKernel fills training.attention_kernel (eager when
// training.attention is eager, else fa2) and checks it against the
// attention's memory semantics and the GPU.
func (l *loader) resolveAttentionKernel(s *Scenario) *Error {
	t := &s.Training
	def := KernelFA2
	if t.Attention == AttentionEager {
		def = KernelEager
	}
	if err := enum(l, "training.attention_kernel", &t.AttentionKernel, def, KernelFA2, KernelFA1, KernelFA3, KernelCuDNN, KernelTE, KernelTriton, KernelFlex, KernelEager); err != nil {
		return err
	}
	if eager := t.AttentionKernel == KernelEager; eager != (t.Attention == AttentionEager) {
		if eager && !l.has("training.attention") {
			// The unfused kernel keeps the s² scores.
			t.Attention = AttentionEager
		} else if s.Stack == "megatron" && t.TransformerImpl == TransformerLocal && !l.written("training.attention_kernel") && l.has("training.attention") {
			// The kernel is the one stack megatron fills in under local
			// (presetLocalAttention): name local's kernels at the key given.
			return l.errPath("training.attention", fmt.Sprintf("training.attention=%s is not what transformer_impl: local runs: its kernels are Megatron-core's own DotProductAttention (eager) or flash-attn 2 (fa2, --use-legacy-models --use-flash-attn), LocalSpecProvider.core_attention in megatron/core/models/backends.py at d98e8a64 (use training.attention: eager (local's DotProductAttention) or flash (--use-legacy-models --use-flash-attn), without attention_kernel)", t.Attention))
		} else {
			return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=%s does not go with training.attention=%s (use attention_kernel: eager with attention: eager, and fa2, fa1, fa3, cudnn, te, triton or flex with flash or sdpa)", t.AttentionKernel, t.Attention))
		}
	}
	if t.AttentionUnpad && t.Attention != AttentionFlash {
		return l.errPath("training.attention_unpad", fmt.Sprintf("attention_unpad is flash-attn's padding wrapper around its own kernel, not training.attention=%s's (use attention: flash, or drop attention_unpad)", t.Attention))
	}
	if !AttentionKernelRuns(t.AttentionKernel, &s.Cluster) {
		gpu := s.Cluster.GPU
		if gpu == "" {
			gpu = "an AMD GPU (cluster.gfx)"
		}
		if t.AttentionKernel == KernelCuDNN {
			return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=cudnn does not run on %s: %s (use attention_kernel: fa2)", gpu, cuDNNOnAMD))
		}
		if t.AttentionKernel == KernelFA1 {
			return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=fa1 does not run on %s: %s (use attention_kernel: fa2 or triton)", gpu, fa1OnGPU))
		}
		if s.Cluster.AMD() {
			return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=fa3 runs on Hopper GPUs only, not on %s (use fa2)", gpu))
		}
		return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=fa3 runs on Hopper GPUs only, not on %s (use cudnn or fa2)", gpu))
	}
	if t.AttentionKernel == KernelFA1 {
		return l.checkFA1HeadDim(s)
	}
	return nil
}

// checkFA1HeadDim refuses FlashAttention-1 at a head_dim flash-attn 1.x
// does not train: it takes head dims that are multiples of 8 up to 128
// (TORCH_CHECK((head_size % 8 == 0) && (head_size <= 128)) in forward and
// backward, csrc/flash_attn/fmha_api.cpp l.246 and l.415 at v1.0.9,
// 6d48e14a; l.245 and l.408 at v0.2.8, 33e0860c), and its backward above
// 64 runs on sm80 and sm90 only ("FlashAttention backward for head dim >
// 64 requires A100 or H100 GPUs as the implementation needs a large amount
// of shared memory", l.417 at v1.0.9): not on the sm86 and sm89 presets
// (A10G, L4, L40S, RTX4090).
func (l *loader) checkFA1HeadDim(s *Scenario) *Error {
	hd, gpu := ModelHeadDim(s), s.Cluster.GPU
	switch {
	case hd <= 0:
		return nil
	case hd%8 != 0 || hd > 128:
		return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=fa1 does not run at head_dim %d: flash-attn 1.x takes head dims that are multiples of 8 up to 128 (csrc/flash_attn/fmha_api.cpp at v1.0.9) (use attention_kernel: fa2)", hd))
	case hd > 64 && gpu != "" && !HopperGPU(gpu) && gpu != "A100-40GB" && gpu != "A100-80GB" && gpu != "A800-80GB":
		return l.errPath("training.attention_kernel", fmt.Sprintf("attention_kernel=fa1 does not train at head_dim %d on %s: flash-attn 1.x's backward above head_dim 64 needs an A100 or H100 (sm80 or sm90; csrc/flash_attn/fmha_api.cpp at v1.0.9) (use attention_kernel: fa2, or heads of 64 or less)", hd, gpu))
	}
	return nil
}

// ModelHeadDim is the head_dim (the q·k width) attention runs at in s:
// its first softmax-attention block's dims.head_dim, else model.hidden /
// model.heads; 0 when neither is known. A model whose blocks differ in
// head_dim is rated at the first one's.
func ModelHeadDim(s *Scenario) int64 {
	for _, l := range s.Model.LayerList {
		if x := l.Dims; x != nil && x.HeadDim > 0 && x.Heads > 0 && x.LinearAttention == "" {
			return x.HeadDim
		}
	}
	if m := &s.Model; m.Heads > 0 && m.Hidden > 0 {
		return m.Hidden / m.Heads
	}
	return 0
}

// calibrationName names the calibration file s read: communication.
// calibration, or "a calibration" when the scenario came without its name.
func (s *Scenario) calibrationName() string {
	if f := s.Communication.Calibration; f != "" {
		return f
	}
	return "a calibration"
}

// OverheadSource names where s's memory.allocator_overhead comes from:
// "default" (unset: scenarios.DefaultAllocatorOverhead, or a simulated
// reserve), "memory.allocator_overhead" (the scenario's key) or
// "calibration FILE" (a calibration's fit).
func (s *Scenario) OverheadSource() string {
	m := s.Memory
	switch {
	case m.AllocatorOverhead == nil:
		return "default"
	case m.AllocatorOverheadFrom != "":
		return "calibration " + s.calibrationName()
	}
	return "memory.allocator_overhead"
}

// pyInt and pyDecimal are the number literals Python's eval reads (The
// Python Language Reference, 2.4.5 Integer literals and 2.4.6
// Floating-point literals), signed, without the underscores between
// digits it also takes: a decimal integer has no leading zero unless it
// is all zeros; a float may ("05e-1", "00.5").
var (
	pyInt     = regexp.MustCompile(`^[+-]?(0+|[1-9][0-9]*)$`)
	pyDecimal = regexp.MustCompile(`^[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?$`)
)

// warnPlacement warns when training.recompute_fraction or a
// training.recompute_every other than 1 places nothing: under recompute:
// none (as op_force_recompute under another policy, resolveOpForce), or
// when it checkpoints none of the model's blocks. fms-fsdp's check_fn
// (memory.FractionCheckpointed) wraps block b once b·p ≥ 1/2, so a
// fraction wraps none of L blocks when L·p < 1/2 (1/100 on 32 blocks);
// torchtitan's every-N-th wraps block b when N divides b, none when N > L.
func (l *loader) warnPlacement(s *Scenario) {
	t := &s.Training
	key, val := "", ""
	switch {
	case t.RecomputeFractionP > 0:
		key, val = "training.recompute_fraction", "recompute_fraction="+strings.TrimSpace(t.RecomputeFraction)
	case t.RecomputeEvery > 1:
		key, val = "training.recompute_every", fmt.Sprintf("recompute_every=%d", t.RecomputeEvery)
	default:
		return
	}
	if t.Recompute == RecomputeNone {
		l.warn(s, key, fmt.Sprintf("%s counts nothing here: it says which blocks training.recompute applies to, and training.recompute is none (set recompute: full, selective or op, or delete the key)", val))
		return
	}
	blocks := s.Model.BlockCount()
	if blocks == 0 {
		return
	}
	if t.RecomputeFractionP > 0 && FractionWrapped(blocks, t.RecomputeFractionP) == 0 {
		l.warn(s, key, fmt.Sprintf("%s checkpoints none of the model's %d blocks (fms-fsdp wraps block b once b·p ≥ 1/2): the step runs as recompute: none (use a fraction of at least 1/%d, or recompute: none)", val, blocks, 2*blocks))
	}
	if t.RecomputeFractionP == 0 && t.RecomputeEvery > blocks {
		l.warn(s, key, fmt.Sprintf("%s checkpoints none of the model's %d blocks (torchtitan wraps block b when %d divides b): the step runs as recompute: none (use at most recompute_every: %d, or recompute: none)", val, blocks, t.RecomputeEvery, blocks))
	}
}

// FractionWrapped is how many of blocks 1..b fms-fsdp's selective
// checkpointing wraps at fraction p (memory.FractionCheckpointed derives
// the rule): #{k ≥ 0 : k + 1/2 ≤ b·p}, b·p rounded to float64 as Python
// forms it, so none while b·p < 1/2.
func FractionWrapped(b int, p float64) int {
	x := float64(float64(b) * p) // rounded, as Python rounds it (no fused multiply-add)
	if x < 0.5 {
		return 0
	}
	return int(math.Floor(x-0.5)) + 1
}

// ParseRecomputeFraction reads training.recompute_fraction as fms-fsdp reads
// its selective_checkpointing (fms_fsdp/policies/ac_handler.py at
// ed74fd5ddec00e309eac20f478de883464c86526: p = eval(p) if isinstance(p,
// str) else p): a quotient "a/b" of whole numbers, which Python's true
// division rounds to the nearest float64 as float64(a)/float64(b) does, or
// a decimal. p must be in (0, 1]: fms-fsdp's p = 0 checkpoints nothing
// (training.recompute: none) and p > 1 every block (1). Only what
// Python's eval reads as those numbers is taken (pyInt, pyDecimal): not
// Go's other forms, hex floats (0x1p-1), Inf, underscores, or an integer
// with a leading zero, which eval refuses (SyntaxError, NameError).
func ParseRecomputeFraction(s string) (float64, error) {
	const use = "use a fraction of the blocks in (0, 1] such as 1/2, 2/3 or 0.5"
	v := strings.TrimSpace(s)
	var p float64
	if a, b, ok := strings.Cut(v, "/"); ok {
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !pyInt.MatchString(a) || !pyInt.MatchString(b) {
			return 0, fmt.Errorf("is not a fraction (%s)", use)
		}
		n, err1 := strconv.ParseInt(a, 10, 64)
		d, err2 := strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil || n < 0 || d <= 0 || n > 1<<53 || d > 1<<53 {
			return 0, fmt.Errorf("is not a fraction (%s)", use)
		}
		p = float64(n) / float64(d)
	} else {
		if !pyDecimal.MatchString(v) || !strings.ContainsAny(v, ".eE") && !pyInt.MatchString(v) {
			return 0, fmt.Errorf("is not a fraction (%s)", use)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("is not a fraction (%s)", use)
		}
		p = f
	}
	switch {
	case !(p > 0):
		return 0, fmt.Errorf("is out of range (%s; for no checkpointed block, training.recompute: none)", use)
	case p > 1:
		return 0, fmt.Errorf("is out of range (%s)", use)
	}
	return p, nil
}
