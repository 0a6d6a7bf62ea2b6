package zero

import (
	"fmt"
	"math"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// This file is the compute-time model per operation class, as pure
// functions over explicit shapes: weight matmuls (GEMMs) at a size-dependent
// fraction of the dense peak, attention at its own fraction, and
// memory-bound work (norms, activations, residuals, the optimizer) as a
// roofline on HBM bandwidth. Costs applies it to a scenario's layers.

// Efficiency holds the fraction of the hardware each class reaches.
type Efficiency struct {
	// GEMM is the fraction of the dense peak a large weight matmul reaches
	// (training.compute_efficiency; what calibration fits).
	GEMM float64
	// Attention is the fraction of the dense peak the fused attention
	// kernel reaches.
	Attention float64
	// HBM is the fraction of the HBM bandwidth memory-bound kernels reach.
	HBM float64
}

// Defaults, each from a published measurement:
//
//   - DefaultGEMMEfficiency: cuBLAS bf16 GEMMs of training sizes reach about
//     80 % of the dense peak on H100 when nothing runs beside them (NVIDIA
//     developer forum, "Compute-Communication Overlap Causes Severe GEMM
//     Performance Degradation because of Tail Effect", 2025: "~80%" MFU for
//     the standalone GEMM on an H100,
//     https://forums.developer.nvidia.com/t/compute-communication-overlap-causes-severe-gemm-performance-degradation-because-of-tail-effect/337991);
//     calibration replaces it per cluster.
//   - DefaultAttentionEfficiency: FlashAttention-2 reaches "50-73% of the
//     theoretical maximum FLOPs/s on A100" (Dao 2023, arXiv 2307.08691,
//     abstract); the middle, 0.6, for forward and backward.
//   - DefaultHBMEfficiency: a read kernel on an A100-80GB SXM reaches 1.80
//     of 2.04 TB/s, 88 %, and "the maximum memory bandwidth achieved by any
//     kernel was around 90%" (NVIDIA developer forum, "Trouble to Reach Peak
//     Bandwidth of A100", 2025, citing a GTC talk,
//     https://forums.developer.nvidia.com/t/trouble-to-reach-peak-bandwidth-of-a100/339083;
//     the kernel was timed with events and Nsight Compute, which agreed); 0.88.
const (
	DefaultGEMMEfficiency      = 0.8
	DefaultAttentionEfficiency = 0.6
	DefaultHBMEfficiency       = 0.88
)

// PublishedEfficiency is training.compute_efficiency as docs/validation.md
// fits it to the calibration row of one published run: what that stack's
// weight matmuls reached on its cluster, with everything zerosim leaves out
// folded in. published_efficiency.go lists them, written by TestValidation.
type PublishedEfficiency struct {
	Source string // the run's file in testdata/validation/
	GPU    string // its cluster.gpu preset
	// FP8 is the run's training.fp8 recipe (none: bf16 GEMMs); an fp8
	// recipe's efficiency is a fraction of the fp8 peak, and it is
	// compared only with runs of the same recipe family (SameFP8Family):
	// what one stack's fp8 reaches says little of another's (qatput30
	// finding 7b: a NeMo Megatron + Transformer Engine fp8 fit of 0.5469
	// was warned "above" the two torchao runs' 0.31–0.53).
	FP8 scenarios.FP8Recipe
	// Compiled is set when the run's scenario compiles anything
	// (training.compile other than none): its fit absorbs torch.compile's
	// fusion.
	Compiled bool
	// Nodes is the calibration row's cluster.nodes.
	Nodes      int
	Efficiency float64
}

// OnGPU is where the published runs on gpu with that fp8 setting ran, as
// run, plan and calibrate quote them: "on H200", with what they all share
// that the others need not (QA s28 M4: both H200 runs are single-node
// torch.compile runs, beside H100's 13 of every kind): "on H200 (both
// single-node torch.compile runs)".
func OnGPU(gpu string, fp8 scenarios.FP8Recipe) string {
	n, single, compiled := 0, true, true
	for _, p := range publishedEfficiencies {
		if !SameFP8Family(p.FP8, fp8) || p.GPU != gpu {
			continue
		}
		n++
		single = single && p.Nodes == 1
		compiled = compiled && p.Compiled
	}
	var kind []string
	if single {
		kind = append(kind, "single-node")
	}
	if compiled {
		kind = append(kind, "torch.compile")
	}
	if n == 0 || len(kind) == 0 {
		return "on " + gpu
	}
	switch n {
	case 1:
		return "on " + gpu + " (a " + strings.Join(kind, " ") + " run)"
	case 2:
		return "on " + gpu + " (both " + strings.Join(kind, " ") + " runs)"
	}
	return "on " + gpu + " (all " + strings.Join(kind, " ") + " runs)"
}

// OnOtherGPUs is where PublishedRange's fits are from when none ran on
// gpu, as run and calibrate quote them: "on other GPUs (carried to B200)"
// (each carried by the GPUs' default efficiencies), or "on other GPUs"
// for an unnamed GPU, to which none is carried.
func OnOtherGPUs(gpu string) string {
	if gpu == "" {
		return "on other GPUs"
	}
	return "on other GPUs (carried to " + gpu + ")"
}

// PublishedRange is the least and the greatest efficiency fitted to the
// published runs on gpu with the same fp8 recipe family (SameFP8Family:
// none for bf16; Transformer Engine's te and te_current; torchao), and how
// many there are; when none ran on gpu, it is over every GPU and onGPU is
// false (n is 0 when no run has that family: an fp8 run of another stack's
// recipe is not compared). A fit on another GPU is carried to gpu as a
// calibration file is (scenarios.CarryComputeEfficiency: × gpu's default
// over its GPU's), so that the range is of efficiencies on gpu's peak.
func PublishedRange(gpu string, fp8 scenarios.FP8Recipe) (lo, hi float64, n int, onGPU bool) {
	for _, same := range []bool{true, false} {
		lo, hi, n = 0, 0, 0
		for _, p := range publishedEfficiencies {
			if !SameFP8Family(p.FP8, fp8) || (same && p.GPU != gpu) {
				continue
			}
			e := scenarios.CarryComputeEfficiency(p.Efficiency, p.GPU, gpu)
			if n == 0 || e < lo {
				lo = e
			}
			hi = max(hi, e)
			n++
		}
		if n > 0 {
			return lo, hi, n, same
		}
	}
	return 0, 0, 0, false
}

// SameFP8Family reports whether fits under recipes a and b measure the
// same GEMMs, so that one is set beside the other: the same recipe (unset
// as none), or Transformer Engine's two (te, te_current). Delayed and
// current scaling run the same fp8 GEMMs of the same stack (Megatron's
// TE modules: te.pytorch's general_gemm on Float8Tensor operands,
// whichever quantizer made them, transformer_engine/pytorch/cpp_extensions/
// gemm.py at NVIDIA/TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b)
// and differ in the casts around them, which zerosim charges per recipe
// (FP8CastRuleOf) rather than folding them into the fit. torchao's
// float8 (torch._scaled_mm under torch.compile or eager PyTorch) is
// another stack's and stays apart (qatput30 finding 7b).
func SameFP8Family(a, b scenarios.FP8Recipe) bool {
	a, b = recipe(a), recipe(b)
	return a == b || a.TE() && b.TE()
}

// recipe is r with an unset training.fp8 as the none it defaults to.
func recipe(r scenarios.FP8Recipe) scenarios.FP8Recipe {
	if r == "" {
		return scenarios.FP8None
	}
	return r
}

// PublishedCP is one published run with context parallelism as
// docs/validation.md predicts it: Error is the predicted tokens/s per GPU
// over the measured, less one (+0.50: zerosim predicted 50 % more than the
// run reached). published_efficiency.go lists them, written by
// TestValidation.
type PublishedCP struct {
	Source string // the run's file in testdata/validation/
	GPU    string // its cluster.gpu preset
	CP     int
	Error  float64
}

// PublishedCPRuns returns the predicted published rows with cp > 1, in
// docs/validation.md's order (by source, then row).
func PublishedCPRuns() []PublishedCP { return append([]PublishedCP(nil), publishedCP...) }

// GPUShape is what the GEMM model needs of a GPU: dense peak (FLOP/s), HBM
// bandwidth (B/s) and the number of streaming multiprocessors.
type GPUShape struct {
	Peak, HBM float64
	SMs       int
	// GEMMPeak, when > 0, is the peak the weight matmuls run at instead of
	// Peak (an fp8 recipe: cluster.peak_fp8); attention stays at Peak.
	GEMMPeak float64
}

// HopperAttentionEfficiency is FlashAttention-2 (and SDPA's flash kernel,
// which is FlashAttention-2) on H100: "FlashAttention-2 achieves only 35%
// utilization on the H100 GPU" (Shah et al. 2024, FlashAttention-3, arXiv
// 2407.08608, abstract).
const HopperAttentionEfficiency = 0.35

// FlashAttention1Efficiency is the first FlashAttention generation on A100:
// FlashAttention "reaching only 25-40% of the theoretical maximum FLOPs/s"
// (Dao 2023, FlashAttention-2, arXiv 2307.08691, abstract); the middle,
// 0.325. The Triton port of the same algorithm that MPT's attn_impl:
// triton runs (flash-attn 0.2.8, flash_attn/flash_attn_triton.py at
// Dao-AILab/flash-attention 00583fb1: "Overall Triton forward + backward
// is slightly slower than CUDA forward + backward") belongs to the same
// class (training.attention_kernel: triton).
const FlashAttention1Efficiency = 0.325

// Attention efficiency of the other kernel families, each from a
// published measurement:
//
//   - TritonAttentionEfficiency: Tri Dao's FlashAttention in Triton
//     (flash_attn/flash_attn_triton.py, which llm-foundry copies as
//     llmfoundry/models/layers/flash_attn_triton.py, "Copied from
//     .../flash-attention/blob/eff9fe6b.../flash_attn/flash_attn_triton.py",
//     and runs for attn_impl: triton, attention.py lines 344 and 541–542,
//     both at mosaicml/llm-foundry
//     3903b0d82e4d0e7f2a48121143292ca6c633c084, the last commit before the
//     copy was removed) is FlashAttention1Efficiency's class, 0.325 on A100; FlashAttention-2
//     is "1.3-2.5× faster than FlashAttention in Triton" (Dao 2023, §4.1):
//     0.6/0.325 = 1.85 lies inside that range.
//   - HopperTritonAttentionEfficiency: no rate of it on H100 is published;
//     Hopper's FlashAttention-2 rate halved, FlashAttention-2 being "around
//     2x speedup compared to FlashAttention" (Dao 2023, abstract), as
//     0.6 / 2 ≈ 0.325 is on A100: 0.175.
//   - FA3AttentionEfficiency: FlashAttention-3 is "1.5-2.0× faster than
//     FlashAttention-2" on H100 in bf16/fp16 (Shah et al. 2024, arXiv
//     2407.08608, abstract): 0.35 × 1.75 ≈ 0.61.
//   - Eager attention runs QKᵀ and PV as batched cuBLAS matmuls, at the
//     GEMM efficiency; its s² softmax, mask and dropout are memory-bound
//     traffic (the block's elementwise bytes).
const (
	TritonAttentionEfficiency       = FlashAttention1Efficiency
	HopperTritonAttentionEfficiency = HopperAttentionEfficiency / 2
	FA3AttentionEfficiency          = HopperAttentionEfficiency * 1.75
)

// hopper reports whether a GPU preset is a Hopper part.
func hopper(gpu string) bool { return scenarios.HopperGPU(gpu) }

// blackwell reports whether a GPU preset is a Blackwell datacenter part
// (sm100/sm103).
func blackwell(gpu string) bool { return scenarios.BlackwellGPU(gpu) }

// Measured attention rates on Hopper and Blackwell (NVIDIA/cudnn-frontend's
// benchmark/sdpa_benchmark_training, which counts FLOPs as zerosim does:
// causal halved, backward 2.5× the forward; Llama 3.1 shapes: GQA with 8 KV
// heads, head_dim 128, causal, bf16; the rows at 8,192 tokens; copied with
// their provenance to zero/testdata/attention, where
// TestAttentionEfficiencyMeasured reads them back). A forward at f and a
// backward at b FLOP/s take the time of both at 3.5/(1/f + 2.5/b):
//
//   - BlackwellAttentionEfficiency: FlashAttention-2 (PyTorch SDPA's flash
//     backend) on a B200, forward 373.392 and backward 298.867 TFLOPS
//     (artifacts/sdpa_bf16_benchmark_results_NVIDIA_B200.csv at 0b1577c8c834,
//     torch 2.9.0a0 nv25.09, flash_attn 2.7.4.post1): 317 TFLOPS of the
//     B200's dense 2,250, 0.141 (GB300: 350 of 2,500, 0.140, the GB300 file
//     at the same commit; GB200: 357 of 2,500, 0.143, its file at b372d39879d4,
//     torch 2.10.0a0 nv25.11).
//   - CuDNNHopperAttentionEfficiency: cuDNN 9.19's fused attention on an
//     H200, forward 644 and backward 541 TFLOPS
//     (results/h200_919_only_cudnn/llama3.1_20260227_034703.csv at
//     df73764adb98): 567 of 989, 0.573.
//   - CuDNNBlackwellAttentionEfficiency: cuDNN 9.22's on a GB200, forward
//     1,574 and backward 1,332 TFLOPS (results/llama3.1/gb200/
//     llama3.1_20260424_100750.csv at fb682ce761a2): 1,393 of 2,500, 0.557.
//     cuDNN 9.13 reached 0.44 of a B200 (the B200 file above): the kernel
//     improves with cuDNN's version; calibrate for the one you run.
//   - CuDNNBlackwellUltraAttentionEfficiency: the same on a GB300 (Blackwell
//     Ultra: B300, GB300), forward 1,856 and backward 1,435 TFLOPS
//     (results/llama3.1/gb300/llama3.1_20260424_100757.csv at fb682ce):
//     1,534 of 2,500, 0.614.
//   - CuDNNAmpereAttentionEfficiency: cuDNN's attention runs 0.85× PyTorch
//     SDPA's flash backend on an A100 at 8K tokens (huggingface/transformers
//     pull request 48163, its benchmark of 2026-08-20: 0.82-0.85× from 8K to
//     128K): 0.85 × 0.6 = 0.51. Other GPUs take FlashAttention-2's rate
//     (0.91-1.00× on A10G and L40S there).
//   - BlackwellTritonAttentionEfficiency: FlashAttention-4 "achieves up to
//     1.3× speedup over cuDNN 9.13 and 2.7× over Triton on B200 GPUs with
//     BF16, reaching up to 1613 TFLOPs/s (71% utilization)" (Dao et al.
//     2026, FlashAttention-4, abstract, as deeplearn.org's arXiv listing
//     gives it; Together AI's post, together.ai/blog/flashattention-4, says
//     1,605): 1,613 / 2.7 of 2,250, 0.266.
const (
	BlackwellAttentionEfficiency           = 3.5 / (1/373.392e12 + 2.5/298.867e12) / 2250e12
	CuDNNHopperAttentionEfficiency         = 3.5 / (1/644e12 + 2.5/541e12) / 989e12
	CuDNNBlackwellAttentionEfficiency      = 3.5 / (1/1574e12 + 2.5/1332e12) / 2500e12
	CuDNNBlackwellUltraAttentionEfficiency = 3.5 / (1/1856e12 + 2.5/1435e12) / 2500e12
	CuDNNAmpereAttentionEfficiency         = 0.85 * DefaultAttentionEfficiency
	BlackwellTritonAttentionEfficiency     = 1613e12 / 2.7 / 2250e12
)

// FlexAttention (training.attention_kernel: flex; torch.compile's Triton
// flex_attention template), each rate a published comparison with
// FlashAttention-2 on the same GPU, made a forward-plus-backward fraction
// of FlashAttention-2's as above (3.5/(1/f + 2.5/b) with f and b FA2's
// multiples):
//
//   - FlexAmpereOverFA2: "FlexAttention achieves 90% of FlashAttention2's
//     performance in the forward pass and 85% in the backward pass",
//     causal attention on an A100 against FlashAttention-2 (Team PyTorch,
//     "FlexAttention: The Flexibility of PyTorch with the Performance of
//     FlashAttention", 2024-08-07, https://pytorch.org/blog/flexattention/,
//     section "Performance", its figures fg15 and fg16;
//     pytorch/pytorch.github.io _posts/2024-08-07-flexattention.md at
//     67fc54cfbce7): 0.864 of FlashAttention-2's rate, 0.518 of the A100's
//     peak. A GPU without a figure of its own (no Hopper or Blackwell
//     part: the A100, AMD's, the consumer cards) takes this fraction of its
//     FlashAttention-2 rate.
//   - HopperFlexAttentionEfficiency: "On H100 GPUs, FlexAttention's
//     forward performance averages 85% of FlashAttention3 and is ~25%
//     faster than FlashAttention2, while backward performance averages 76%
//     of FlashAttention3 and is ~3% faster than FlashAttention2" (Driss
//     Guessous's GTC 2025 session "FlexAttention: The Flexibility of PyTorch
//     With the Performance of FlashAttention", its abstract in "PyTorch at
//     GTC 2025", https://pytorch.org/blog/pytorch-at-gtc/,
//     pytorch/pytorch.github.io _posts/2025-03-16-pytorch-at-gtc.md at
//     5b5db1e88883): 1.25 and 1.03 of FlashAttention-2, 1.085 of
//     HopperAttentionEfficiency, 0.380.
//   - Blackwell: no FlexAttention figure is published against a kernel
//     zerosim times there. FlexAttention "is nearly as performant as a
//     handwritten Triton kernel, which is unsurprising, as we heavily
//     leverage a handwritten Triton kernel" (the 2024 blog, "Performance"),
//     so a Blackwell part takes the Triton kernel's rate,
//     BlackwellTritonAttentionEfficiency, 0.266.
const (
	FlexAmpereOverFA2             = 3.5 / (1/0.90 + 2.5/0.85)
	HopperFlexAttentionEfficiency = HopperAttentionEfficiency * 3.5 / (1/1.25 + 2.5/1.03)
)

// MI300XAttentionEfficiency is FlashAttention-2 (ROCm/flash-attention's
// Composable Kernel backend, the kernel PyTorch's ROCm SDPA also
// dispatches to with the CK preference) on an MI300X, bf16, head_dim 128,
// 16,384 tokens, not causal: forward 353.22 and backward 194.43 TFLOPS,
// "fwd + bwd: 223.08 TFLOPs/s" (benchmarks/benchmark_flash_attention.py on
// ROCm 6.3.2, ROCm/flash-attention issue 142, "SDPA outperforms Flash
// Attention on MI300x", 2025-05-18; its batch 2, 4 and 8 rows give
// 229-232): 223 of the MI300X's dense 1,307.4, 0.171. The MI325X (the same
// gfx942 CDNA3 die at the same peak) takes it. No causal figure was found;
// a causal kernel skips half the tiles at some loss, so this may be
// slightly above a causal training step's rate.
const MI300XAttentionEfficiency = 3.5 / (1/353.22e12 + 2.5/194.43e12) / 1307.4e12

// cdna3 reports whether a GPU preset is an AMD CDNA3 (gfx942) part.
func cdna3(gpu string) bool { return gpu == "MI300X" || gpu == "MI325X" }

// AttentionEfficiency is the default attention efficiency of kernel on a
// GPU preset (gemm is the GEMM efficiency, which eager attention's
// matmuls reach): FlashAttention-2 0.6 (0.35 on Hopper, 0.141 on
// Blackwell), FlashAttention-3 0.61, cuDNN 0.573 on Hopper, 0.557 on
// Blackwell (0.614 on Blackwell Ultra), 0.51 on Ampere, the Triton kernel
// 0.325 (0.175 on Hopper, 0.266 on Blackwell), FlexAttention 0.864 of
// FlashAttention-2's rate (0.380 on Hopper, the Triton kernel's 0.266 on
// Blackwell); FlashAttention-2 on the MI300X and MI325X 0.171; te and the
// empty kernel are the kernel they run as (RunsAs).
//
// A rate measured on another GPU (the A100's, taken for an AMD part) is
// capped at the GPU's own GEMM default (GEMMCeiling): attention is two
// GEMMs and a softmax, and runs no faster than the GPU's plain matmuls
// (QA s29: the A100's 0.6 taken for an MI300X whose best bf16 matmul
// measures 0.51 of its peak). AttentionRateCapped says when it is.
//
// These are the rates at head_dim 128, the head_dim each is published at;
// AttentionEfficiencyAt is the rate at another.
func AttentionEfficiency(gpu string, kernel scenarios.AttentionKernel, gemm float64) float64 {
	return AttentionEfficiencyAt(gpu, kernel, gemm, 128)
}

// AttentionEfficiencyAt is AttentionEfficiency at head_dim headDim: the
// published rate times HeadDimScale (0.797 for cuDNN on Hopper at
// head_dim 64), before the GEMM ceiling; headDim ≤ 0 (unknown) is rated
// as 128.
func AttentionEfficiencyAt(gpu string, kernel scenarios.AttentionKernel, gemm float64, headDim int64) float64 {
	if RunsAs(gpu, kernel) == scenarios.KernelEager {
		return gemm
	}
	rate, ceiling, _ := AttentionRateCapped(gpu, kernel, headDim)
	return min(rate, ceiling)
}

// AttentionRateCapped is the published rate of kernel on gpu (or the one
// it borrows) at head_dim headDim (HeadDimScale; ≤ 0: 128) and
// GEMMCeiling(gpu), capped true when the rate exceeds the ceiling and
// AttentionEfficiencyAt runs attention at the ceiling instead.
func AttentionRateCapped(gpu string, kernel scenarios.AttentionKernel, headDim int64) (rate, ceiling float64, capped bool) {
	if RunsAs(gpu, kernel) == scenarios.KernelEager {
		return 0, 0, false
	}
	rate, ceiling = publishedAttentionRate(gpu, kernel)*HeadDimScale(gpu, kernel, headDim), GEMMCeiling(gpu)
	return rate, ceiling, rate > ceiling
}

// GEMMCeiling is the most zerosim takes a GPU preset's matmuls to reach:
// its default GEMM efficiency, scenarios.DefaultComputeEfficiencyOf
// (DefaultGEMMEfficiency scaled by the GPU's measured maximum matmul
// throughput over the H100's; DefaultGEMMEfficiency for a GPU with none).
func GEMMCeiling(gpu string) float64 {
	eff, _, _ := scenarios.DefaultComputeEfficiencyOf(gpu)
	return eff
}

// publishedAttentionRate is AttentionEfficiency before the GEMM ceiling: the
// published rate of kernel (not eager) on gpu, or the one it borrows.
func publishedAttentionRate(gpu string, kernel scenarios.AttentionKernel) float64 {
	switch RunsAs(gpu, kernel) {
	case scenarios.KernelFA3:
		return FA3AttentionEfficiency
	case scenarios.KernelFA1:
		if hopper(gpu) {
			return HopperFA1AttentionEfficiency
		}
		return FA1AttentionEfficiency
	case scenarios.KernelCuDNN:
		switch {
		case hopper(gpu):
			return CuDNNHopperAttentionEfficiency
		case gpu == "B300" || gpu == "GB300":
			return CuDNNBlackwellUltraAttentionEfficiency
		case blackwell(gpu):
			return CuDNNBlackwellAttentionEfficiency
		case ampere(gpu):
			return CuDNNAmpereAttentionEfficiency
		}
		return DefaultAttentionEfficiency
	case scenarios.KernelTriton:
		switch {
		case hopper(gpu):
			return HopperTritonAttentionEfficiency
		case blackwell(gpu):
			return BlackwellTritonAttentionEfficiency
		}
		return TritonAttentionEfficiency
	case scenarios.KernelFlex:
		switch {
		case hopper(gpu):
			return HopperFlexAttentionEfficiency
		case blackwell(gpu):
			return BlackwellTritonAttentionEfficiency
		}
		return FlexAmpereOverFA2 * fa2Rate(gpu)
	}
	return fa2Rate(gpu)
}

// fa2Rate is FlashAttention-2's published rate on gpu, or the one it
// borrows (the A100's).
func fa2Rate(gpu string) float64 {
	switch {
	case hopper(gpu):
		return HopperAttentionEfficiency
	case blackwell(gpu):
		return BlackwellAttentionEfficiency
	case cdna3(gpu):
		return MI300XAttentionEfficiency
	}
	return DefaultAttentionEfficiency
}

// AttentionRatePart is the GPU whose measurement AttentionEfficiency's
// default for kernel on gpu is (its sources above), so that a report names
// it: FlashAttention-2 on the A100 (FlashAttention-2 paper), the H100
// (FlashAttention-3 paper, as FlashAttention-3 and Hopper's Triton rate
// derived from it) and the B200 (cudnn-frontend's B200 file, which
// BlackwellTritonAttentionEfficiency's FlashAttention-4 figure also is);
// cuDNN on the A100, the H200, the GB200 and the GB300. A GPU of another
// part of the same family (GB200 for FlashAttention-2, B200 for cuDNN, H100
// for cuDNN) takes that part's rate; FlashAttention-2 and FlexAttention on
// the MI300X and MI325X the MI300X's; a GPU of no family (AttentionRateOwn)
// the A100's. FlexAttention's rate is named by the GPU its comparison
// with FlashAttention-2 was measured on (the A100, the H100) and on
// Blackwell by the B200's Triton figure. "" for eager, which runs at the
// GEMM efficiency.
func AttentionRatePart(gpu string, kernel scenarios.AttentionKernel) string {
	k := RunsAs(gpu, kernel)
	switch {
	case k == scenarios.KernelEager:
		return ""
	case k == scenarios.KernelFA3:
		return "H100"
	case k == scenarios.KernelCuDNN && hopper(gpu):
		return "H200"
	case k == scenarios.KernelCuDNN && (gpu == "B300" || gpu == "GB300"):
		return "GB300"
	case k == scenarios.KernelCuDNN && blackwell(gpu):
		return "GB200"
	case hopper(gpu):
		return "H100"
	case blackwell(gpu):
		return "B200"
	case cdna3(gpu) && (k == scenarios.KernelFA2 || k == scenarios.KernelFlex):
		return "MI300X"
	}
	return "A100"
}

// RunsAs is the kernel family kernel runs on a GPU preset: te resolved to
// Transformer Engine's choice there, the empty kernel fa2, any other as it
// is. Transformer Engine's DotProductAttention prefers FusedAttention
// (cuDNN) to FlashAttention from compute capability 9.0: "Disabling
// FlashAttention to give FusedAttention preference on Hopper+ for
// performance reasons" (transformer_engine/pytorch/attention/
// dot_product_attention/utils.py get_attention_backend at
// NVIDIA/TransformerEngine d0067d0da6cb; on sm90 in attention.py since
// 43569381, 2024-06-13); before Hopper it runs FlashAttention-2.
func RunsAs(gpu string, kernel scenarios.AttentionKernel) scenarios.AttentionKernel {
	switch {
	case kernel == "":
		return scenarios.KernelFA2
	case kernel != scenarios.KernelTE:
		return kernel
	case hopper(gpu) || blackwell(gpu):
		return scenarios.KernelCuDNN
	}
	return scenarios.KernelFA2
}

// AttentionRateOwn reports whether the attention kernels' default rates
// (AttentionEfficiency) have a figure of the GPU's own family: A100-class,
// Hopper or Blackwell datacenter parts. Every other preset (V100, the
// consumer and PCIe cards, AMD's) takes the A100's, the table's "A100 (and
// other GPUs)" column of docs/compute-model.md, except FlashAttention-2
// and FlexAttention on the MI300X and MI325X (AttentionRatePart "MI300X").
func AttentionRateOwn(gpu string) bool { return ampere(gpu) || hopper(gpu) || blackwell(gpu) }

// ampere reports whether a GPU preset is an A100-class part (GA100).
func ampere(gpu string) bool {
	return gpu == "A100-40GB" || gpu == "A100-80GB" || gpu == "A800-80GB"
}

// SMCount returns the streaming multiprocessors of the GPU presets
// (A100 SXM4: 108; H100 SXM5: 132; V100: 80; RTX 4090: 128; from NVIDIA's
// architecture whitepapers; the A800 is the A100's GA100 with its NVLink cut,
// scenarios' A800-80GB preset; the H200 is the same GH100 die with HBM3e:
// "SMs: 132 Streaming Multiprocessors", ai-hpc.github.io's AI hardware
// engineer roadmap, "8x-H200 Training/Inference, 01 — H200 Hardware
// Architecture"), 0 when unknown (no wave quantization).
func SMCount(gpu string) int {
	switch gpu {
	case "A100-40GB", "A100-80GB", "A800-80GB":
		return 108
	case "H100-80GB", "H200":
		return 132
	case "GH200-96GB":
		// OpenCL on a GH200 480GB: "Compute Units 132"
		// (mredenti/PowerCapping configuration/OpenCL_benchmark.md at f57c11cb).
		return 132
	case "H100-PCIe":
		// OpenXLA's H100 PCIe target spec: core_count 114
		// (xla/backends/gpu/target_config/specs/h100_pcie.txtpb at 4336d12e).
		return 114
	case "V100-16GB", "V100-32GB":
		return 80
	case "RTX4090":
		return 128
	}
	return 0
}

// GEMM tile of the large-matmul kernels cuBLAS picks for bf16 on
// A100/H100 (256×128 output tiles per thread block; NVIDIA, "Matrix
// Multiplication Background User's Guide", §"Tile quantization" and "Wave
// quantization",
// https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html#dim-quantization,
// the address stas00/ml-engineering compute/accelerator/README.md at
// 744d01e18b79 links; the tile is as cited there, not checked against the
// guide's tables).
const tileM, tileN = 256, 128

// GEMMSeconds is the time of one m×k by k×n matmul in 16 bits: the larger of
// its compute and its bytes (2·(m·k + k·n + m·n)) at the HBM efficiency.
// The compute follows the two dimension quantizations of NVIDIA's "Matrix
// Multiplication Background User's Guide" (DU-09799-001_v001, February
// 2023, §3 "Dimension Quantization Effects",
// https://docs.nvidia.com/deeplearning/performance/pdf/Matrix-Multiplication-Background-User-Guide.pdf):
// tile quantization (§3.1: the output is cut into whole tiles, a tile only
// partly inside the matrix does a whole tile's work, and the execution
// time stays constant while the number of tiles does; the section read
// through a reader's notes of the guide, whose contents the PDF confirms)
// and wave quantization (§3.2: the tiles run in waves of one per SM, and
// the last wave takes as long as a full one). So the compute is
// waves·SMs whole tiles of 2·256·128·k FLOPs at the GEMM efficiency: for m
// and n multiples of the tile, 2mnk over the efficiency scaled by the wave
// fill tiles/(waves·SMs), as before; otherwise the time of m and n rounded
// up to the tile, never less (a dimension below one tile counts as it is:
// groupedGEMMSeconds). Small micro-batches make m small, the matmul short
// of a full last wave and memory-bound sooner.
func GEMMSeconds(m, n, k int64, g GPUShape, e Efficiency) (float64, error) {
	if m <= 0 || n <= 0 || k <= 0 {
		return 0, nil
	}
	return groupedGEMMSeconds(1, float64(m), float64(n), float64(k), true, g, e)
}

// groupedGEMMSeconds is GEMMSeconds of one grouped matmul: groups
// independent m×k by k×n matmuls in one kernel (a MoE layer's local
// experts, torch._grouped_mm or Transformer Engine's grouped GEMM), whose
// tiles share the waves: groups·⌈m/256⌉·⌈n/128⌉ whole tiles of
// 2·256·128·k FLOPs in whole waves of SMs at the GEMM efficiency, against
// groups·2(mk + kn + mn) bytes (every group's weights read once). m, n, k
// may be fractional (a mean row count): tiles round each group's n, and m
// when tileRows, up, as if every group had the mean rows. A dimension below one tile
// counts as it is, not as a whole 256- or 128-wide tile: cuBLAS picks its
// tile by the shape (the guide's §2.3, "Typical Tile Dimensions In cuBLAS
// And Performance"), and a matrix of 16 rows does not run 256-row tiles
// (a modelling choice, not the guide's figure; it keeps a skinny matmul's
// time what it was, TestGEMMSecondsWaves). On a GPU of unknown SM count
// (g.SMs 0) neither quantization applies: its tile is not known either,
// and the compute is the true 2mnk·groups. One group is GEMMSeconds
// exactly.
//
// tileRows says whether m is a real row count to round up to whole tiles.
// A routed expert's m is the mean of the rows balanced routing gives it
// (ExpertGEMMSeconds), not any expert's rows: real routing spreads the
// tokens unevenly and the grouped kernel pads each expert's own rows, so
// the padding depends on a distribution zerosim does not model. There m
// counts as it is and only the waves of its ⌈m/256⌉ tiles quantize (the
// charge before whole tiles were counted); padding every expert to the
// mean's tile edge would charge Qwen1.5-MoE-A2.7B's 273 rows a 512-row
// tile, +45 % on the experts' forward, for a mean no expert has.
func groupedGEMMSeconds(groups, m, n, k float64, tileRows bool, g GPUShape, e Efficiency) (float64, error) {
	if groups <= 0 || m <= 0 || n <= 0 || k <= 0 {
		return 0, nil
	}
	if g.Peak <= 0 || g.HBM <= 0 || e.GEMM <= 0 || e.HBM <= 0 {
		return 0, fmt.Errorf("zero: GEMM time needs a peak, an HBM bandwidth and efficiencies > 0")
	}
	// The tiled extent: m and n themselves without a tile shape or below
	// one tile, else rounded up to whole tiles, whose work (2·256·128·k
	// each) the waves run; compute = tiledFLOPs·(waves·SMs)/tiles/(peak·E)
	// = waves·SMs·2·256·128·k/(peak·E), written so that tile multiples give
	// the same bits as 2mnk/(peak·E·tiles/(waves·SMs)) (shapes of equal
	// waves may then differ in the last bit).
	tm, tn := m, n
	quant := 1.0
	if g.SMs > 0 {
		rows, cols := math.Ceil(m/tileM), math.Ceil(n/tileN)
		if tileRows && m > tileM {
			tm = rows * tileM
		}
		if n > tileN {
			tn = cols * tileN
		}
		tiles := rows * cols * groups
		waves := math.Ceil(tiles / float64(g.SMs))
		quant = tiles / (waves * float64(g.SMs))
	}
	flops := 2 * tm * tn * k * groups
	peak := g.Peak
	if g.GEMMPeak > 0 {
		peak = g.GEMMPeak
	}
	compute := flops / (peak * e.GEMM * quant)
	bytes := 2 * (float64(m*k) + float64(k*n) + float64(m*n)) * groups // float64(...): no fused multiply-add (fma_test.go)
	return max(compute, bytes/(g.HBM*e.HBM)), nil
}

// ExpertGEMMSeconds is the forward and backward (before any recompute)
// time of one unit of routed SwiGLU experts on a rank under balanced
// routing: its t tokens each reach top-k of the E experts, so each of the
// rank's E/ep local experts receives m = t·k·ep/E rows from the ep ranks of
// its group, and each projection (gate and up h→f, down f→h) runs as one
// grouped matmul over the local experts (groupedGEMMSeconds; torchtitan
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a torchtitan/models/common/moe.py
// GroupedExperts, three torch._grouped_mm over the experts' token offsets;
// Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553
// megatron/core/transformer/moe/experts.py TEGroupedMLP). Backward is each
// projection's input gradient (m×n by n×k) and weight gradient (k×m by
// m×n), as the dense blocks' (blockClasses). Few rows per expert (small
// ep, many fine-grained experts) make the weight reads dominate.
func ExpertGEMMSeconds(t, experts, topK, ep, h, f int64, g GPUShape, e Efficiency) (fwd, bwd float64, err error) {
	if t <= 0 || experts <= 0 || topK <= 0 || ep <= 0 || h <= 0 || f <= 0 {
		return 0, 0, nil
	}
	local := float64(experts / ep)
	m := float64(t) * float64(topK) * float64(ep) / float64(experts)
	for _, s := range []gemmShape{{f, h}, {f, h}, {h, f}} {
		x, err := groupedGEMMSeconds(local, m, float64(s.n), float64(s.k), false, g, e)
		if err != nil {
			return 0, 0, err
		}
		dg, err := groupedGEMMSeconds(local, m, float64(s.k), float64(s.n), false, g, e)
		if err != nil {
			return 0, 0, err
		}
		wg, err := groupedGEMMSeconds(local, float64(s.k), float64(s.n), m, true, g, e)
		if err != nil {
			return 0, 0, err
		}
		fwd += x
		bwd += dg + wg
	}
	return fwd, bwd, nil
}

// gemmShape is one weight matmul of a block: t×k input by k×n weight.
type gemmShape struct{ n, k int64 }

// blockGEMMs lists a block's weight matmuls (per token row): the attention
// projections and the MLP (gpt: fc1, fc2; llama: w1, w3, w2).
func blockGEMMs(d FLOPDims) []gemmShape {
	qw, kv := d.Heads*d.HeadDim, d.KVHeads*d.HeadDim
	var gs []gemmShape
	if d.Arch == "llama" {
		gs = append(gs, gemmShape{qw, d.Hidden}, gemmShape{kv, d.Hidden}, gemmShape{kv, d.Hidden})
	} else {
		gs = append(gs, gemmShape{qw + 2*kv, d.Hidden})
	}
	gs = append(gs, gemmShape{d.Hidden, qw}, gemmShape{d.FFN, d.Hidden})
	if d.Arch == "llama" {
		gs = append(gs, gemmShape{d.FFN, d.Hidden})
	}
	return append(gs, gemmShape{d.Hidden, d.FFN})
}

// ClassSeconds is compute time split by the efficiency it depends on:
// GEMM (training.compute_efficiency), Attention (the attention efficiency)
// and Other (memory-bound work on HBM, context parallelism's ring; no
// efficiency that calibration fits).
type ClassSeconds struct{ GEMM, Attention, Other float64 }

// Total is the sum of the classes.
func (c ClassSeconds) Total() float64 { return c.GEMM + c.Attention + c.Other }

func (c ClassSeconds) add(o ClassSeconds) ClassSeconds {
	return ClassSeconds{c.GEMM + o.GEMM, c.Attention + o.Attention, c.Other + o.Other}
}

func (c ClassSeconds) scale(f float64) ClassSeconds {
	// float64(...) keeps each product rounded, unfused with a later add on
	// every architecture (fma_test.go).
	return ClassSeconds{float64(c.GEMM * f), float64(c.Attention * f), float64(c.Other * f)}
}

// blockTimes is one block's forward and backward time by class before any
// recompute, and its forward FLOPs: what seconds and classes share
// (PlanCompute derives both from one).
type blockTimes struct {
	fwd, bwd ClassSeconds
	flops    BlockFLOPs
}

// blockClasses times one block, forward and backward by class: its GEMMs
// (forward t×k·k×n; backward the input gradient t×n·n×k and the weight
// gradient k×t·t×n), its attention FLOPs (backward
// attentionBackwardFactor× forward: 2.5, FlashAttention-2's five matmuls
// to the forward's two, Dao 2023 §3.1; 2 eager, which keeps the
// probabilities: AttentionBackwardFLOPs) at the attention efficiency, and
// its memory-bound bytes, elemFwd in forward and elemBwd in backward, at
// the HBM efficiency. seconds and classes add the forward work recompute
// reruns in backward (see RecomputeFLOPs).
func blockClasses(d FLOPDims, g GPUShape, e Efficiency, elemFwd, elemBwd int64) (blockTimes, error) {
	var b blockTimes
	if err := d.fill(); err != nil {
		return b, err
	}
	if e.Attention <= 0 {
		return b, fmt.Errorf("zero: attention efficiency must be > 0")
	}
	t := d.Seq * d.Batch
	for _, s := range blockGEMMs(d) {
		f, err := GEMMSeconds(t, s.n, s.k, g, e)
		if err != nil {
			return b, err
		}
		dg, err := GEMMSeconds(t, s.k, s.n, g, e)
		if err != nil {
			return b, err
		}
		wg, err := GEMMSeconds(s.k, s.n, t, g, e)
		if err != nil {
			return b, err
		}
		b.fwd.GEMM += f
		b.bwd.GEMM += dg + wg
	}
	f, err := BlockForwardFLOPs(d)
	if err != nil {
		return b, err
	}
	att := float64(f.Attention) / (g.Peak * e.Attention)
	bw := g.HBM * e.HBM
	b.fwd.Attention, b.fwd.Other = att, float64(elemFwd)/bw
	b.bwd.Attention, b.bwd.Other = attentionBackwardFactor(d.KeepsProbs)*att, float64(elemBwd)/bw
	b.flops = f
	return b, nil
}

// seconds is the block's forward and backward totals with recompute FLOPs
// rerun in backward at the forward's average rate per FLOP.
func (b blockTimes) seconds(recompute int64) (fwd, bwd float64) {
	fwd = b.fwd.Total()
	bwd = b.bwd.GEMM + (b.bwd.Attention + b.bwd.Other)
	if recompute > 0 && b.flops.GEMM > 0 {
		bwd += float64(recompute) * fwd / float64(b.flops.Total())
	}
	return fwd, bwd
}

// classes is seconds by class (for calibrate --trace, which fits each
// class's efficiency to the kernels of that class): the recomputed work
// divides over the classes as the forward's time does.
func (b blockTimes) classes(recompute int64) (fwd, bwd ClassSeconds) {
	fwd, bwd = b.fwd, b.bwd
	if recompute > 0 && b.flops.GEMM > 0 {
		bwd = bwd.add(fwd.scale(float64(recompute) / float64(b.flops.Total())))
	}
	return fwd, bwd
}

// EfficiencyCeiling is the most a compute efficiency can plausibly be on
// gpu (qa20 M1: a fit of 0.9943 was written without a word, while the
// same value typed in was flagged): for one fitted to a whole step
// (kernels false), the top of the range the published runs on that GPU
// fitted (PublishedRange, as run's header quotes it for a typed value);
// for one fitted to a trace's GEMM kernels alone (kernels true), which
// hold no communication or other work, GEMMCeiling, what the GPU's
// matmuls reach with nothing beside them. what says which, for a message; ok is
// false when no published run is on gpu (a step fit is then not judged).
func EfficiencyCeiling(gpu string, fp8 scenarios.FP8Recipe, kernels bool) (ceiling float64, what string, ok bool) {
	if kernels {
		c := GEMMCeiling(gpu)
		return c, fmt.Sprintf("the %.2f of the dense peak cuBLAS's GEMMs reach with nothing beside them (docs/compute-model.md)", c), true
	}
	lo, hi, n, onGPU := PublishedRange(gpu, fp8)
	if n == 0 || !onGPU {
		return 0, "", false
	}
	return hi, FittedBy(lo, hi, n, recipe(fp8) != scenarios.FP8None, OnGPU(gpu, fp8)) + " (docs/validation.md)", true
}

// FittedRange is the published fits' efficiencies as run, plan and
// calibrate quote them: "0.45–0.62", or "0.24" when they round to one value.
func FittedRange(lo, hi float64) string {
	l, h := fmt.Sprintf("%.2f", lo), fmt.Sprintf("%.2f", hi)
	if l == h {
		return l
	}
	return l + "–" + h
}

// FittedBy is the published fits and the runs that fitted them, as run,
// plan and calibrate quote them: "the 0.45–0.62 that 8 published bf16
// runs on H100-80GB fitted" (FittedRange, PublishedRuns).
func FittedBy(lo, hi float64, n int, fp8 bool, where string) string {
	return "the " + FittedRange(lo, hi) + " that " + PublishedRuns(n, fp8, where) + " fitted"
}

// PublishedRuns names n published runs of bf16 or fp8 GEMMs where they
// ran: "8 published bf16 runs on H100-80GB", "the one published fp8 run
// on other GPUs".
func PublishedRuns(n int, fp8 bool, where string) string {
	kind := "bf16"
	if fp8 {
		kind = "fp8"
	}
	if n == 1 {
		return fmt.Sprintf("the one published %s run %s", kind, where)
	}
	return fmt.Sprintf("%d published %s runs %s", n, kind, where)
}

// AttentionCeilingFactor bounds a fitted attention efficiency at this
// multiple of the kernel's published rate on the GPU (AttentionEfficiency):
// FlashAttention-3 is "1.5-2.0× faster than FlashAttention-2" on H100
// (Shah et al. 2024, arXiv 2407.08608, abstract), so FlashAttention-2
// fitted at 1.5× its rate runs at the next generation's, which it cannot.
const AttentionCeilingFactor = 1.5

// AttentionCeiling is the most a fitted attention efficiency of kernel can
// plausibly be on gpu: AttentionCeilingFactor × its published rate, and no
// more than GEMMCeiling (attention is two GEMMs and a softmax);
// rate is that published rate. ok is false for eager attention, which runs
// at the GEMM efficiency.
func AttentionCeiling(gpu string, kernel scenarios.AttentionKernel) (ceiling, rate float64, ok bool) {
	if RunsAs(gpu, kernel) == scenarios.KernelEager {
		return 0, 0, false
	}
	rate = AttentionEfficiency(gpu, kernel, DefaultGEMMEfficiency)
	return min(AttentionCeilingFactor*rate, GEMMCeiling(gpu)), rate, true
}
