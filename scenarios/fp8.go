package scenarios

import (
	"fmt"
	"slices"
)

// FP8Recipe is the fp8 training recipe (training.fp8).
type FP8Recipe string

// FP8 training recipes.
const (
	FP8None FP8Recipe = "none"
	// FP8TE is Transformer Engine's delayed scaling: bf16 weights (and
	// their ZeRO buffers) as usual, plus an fp8 copy and an fp8 transpose
	// of every linear weight the rank holds unsharded, cached for the step,
	// and an amax history per fp8 tensor; GEMMs at the fp8 peak; each
	// linear layer keeps its input for backward in fp8, 1 byte an element
	// (memory.BlockDims.FP8Inputs). Primary fp8 weights (NeMo's
	// fp8_params, Megatron's --fp8-param-gather): training.fp8_params.
	FP8TE FP8Recipe = "te"
	// FP8TECurrent is Transformer Engine's current (per-tensor) scaling,
	// Float8CurrentScaling (Megatron-LM's --fp8-recipe tensorwise,
	// Megatron-Bridge's fp8_cs: scripts/performance/utils/precision.py at
	// NVIDIA-NeMo/Megatron-Bridge 21d102f5e): the weights' fp8 copies and
	// transposes as te's, no amax history (the scale comes from the
	// tensor's own amax: Float8CurrentScalingQuantizer, transformer_engine/
	// pytorch/csrc/quantizer.cpp at NVIDIA/TransformerEngine
	// d0067d0da6cb01811b8072a7d304f0e00344ce2b), and an amax pass over
	// every tensor before its cast (zero.FP8CastRuleOf); the linear
	// inputs kept in fp8 as te's, except that under stack: megatron the
	// attention output projection keeps the attention kernel's bf16
	// output (memory.BlockDims.FP8ProjOriginal).
	FP8TECurrent FP8Recipe = "te_current"
	// FP8TorchAO is torchao float8 training with FSDP2 and
	// enable_fsdp_float8_all_gather: dynamic scaling (no history), and at
	// ZeRO-3 the linear weights are cast to fp8 before the all-gather, so
	// the gather moves and holds 1 byte per parameter instead of 2.
	FP8TorchAO FP8Recipe = "torchao"
)

// TE reports whether the recipe is one of Transformer Engine's (te,
// te_current): fp8 copies and transposes of the weights cached for the
// step.
func (r FP8Recipe) TE() bool { return r == FP8TE || r == FP8TECurrent }

// FP8 reports whether r is an fp8 recipe: set, and not none.
func (r FP8Recipe) FP8() bool { return r != "" && r != FP8None }

// FP8Gather reports whether the ZeRO-3 all-gathers move the block weights
// in fp8, one byte per parameter: torchao with enable_fsdp_float8_all_gather
// (training.fp8_all_gather, default true), which casts the weight shards
// before FSDP2 gathers them (torchao/float8/fsdp_utils.py @
// 11ce634705af1972320a8488d3e2ca223dcb0372).
func (t Training) FP8Gather() bool {
	return t.FP8 == FP8TorchAO && (t.FP8AllGather == nil || *t.FP8AllGather)
}

// AmaxHistoryLen is Transformer Engine's default amax history length
// (DelayedScaling.amax_history_len, transformer_engine/common/recipe/
// __init__.py @ 799cf76be3c1bb0a9d7995614a1af5a2a77a9e10).
const AmaxHistoryLen = 1024

// FP8Linear reports whether unit l's parameters are linear weights that an
// fp8 recipe runs in fp8: transformer blocks and routed experts (the
// embedding, final norm and output layer stay in bf16, as TE and torchao
// leave them by default).
func FP8Linear(l Layer) bool { return l.Block || l.Dims != nil }

// GathersFP8 reports whether unit u's parameters are all-gathered in fp8,
// one byte per element: a linear unit (FP8Linear) under FP8Gather.
func (s *Scenario) GathersFP8(u int) bool {
	return s.Training.FP8Gather() && FP8Linear(s.Model.LayerList[u])
}

// FP8GEMMs is the number of fp8 GEMM modules of unit l for the amax
// history: 4 per transformer block (fused qkv, attention output, fc1 or
// gate_up, fc2 — TE's LayerNormLinear/Linear/LayerNormMLP split) and 2 per
// expert of a routed-expert unit held by the rank.
func FP8GEMMs(l Layer, ep int) int64 {
	switch {
	case l.Dims != nil && l.Dims.ExpertsOnly() && l.Dims.Experts > 0:
		return 2 * l.Dims.Experts / int64(max(ep, 1))
	case FP8Linear(l):
		return 4
	}
	return 0
}

// DefaultFP8GEMMRatio is cluster.fp8_gemm_ratio for gpu: the fraction of
// the bf16 GEMM efficiency (of peak_bf16) that fp8 GEMMs reach of
// peak_fp8, from one published measurement of both on that GPU, and where
// it comes from; 1 (fp8 GEMMs at the bf16 efficiency) and ok false for a
// GPU with none.
//
// NVIDIA's figures are the "Maximum Achievable Matmul FLOPS comparison table"
// of compute/accelerator/README.md at stas00/ml-engineering
// 744d01e18b79512572f64a6bbd8b5f4a725203a7 (lines 348-377): mamf-finder.py
// times torch.mm in bf16 and torch._scaled_mm with per-tensor scales in
// float8_e4m3fn, torchao's tensorwise GEMM (benchmarks/mamf-finder.py
// :330-357), over a sweep of shapes, and reports the best mean TFLOPS of
// each; the ratio is fp8's over its peak divided by bf16's over its own:
//   - H100-80GB: bf16 794.5 of 989, fp8 1,402.6 of 1,979 (both torch
//     2.7.0+cu126): 0.88.
//   - H200: fp8 1,453.4 of 1,979 (torch 2.7.1+cu128) over the bf16 row,
//     which the table gives as H100 SXM's ("H200 is the same"): 0.91.
//   - B200: bf16 1,745.0 of 2,250, fp8 3,432.5 of 4,500 (both torch
//     2.7.1+cu128): 0.98.
//   - B300: bf16 1,769.0 of 2,250, fp8 3,353.3 of 4,500 (both torch
//     2.9.1+cu130): 0.95; GB300, which the table lacks, is taken as its
//     die's, B300's.
//   - GB200: bf16 1,822.0 of 2,500, fp8 3,615.6 of 5,000 (both torch
//     2.10.0.dev20250916+cu130): 0.99.
//   - GH200-96GB: bf16 828.6 of 989, fp8 1,535.0 of 1,979 (both torch
//     2.6.0+cu126), the table's "NVIDIA GH200 SXM" rows, measured on the
//     900W 141GiB HBM3e part: the same Hopper GPU at the same peaks as the
//     preset's 96GB HBM3 one (scenarios/presets.go), taken as its: 0.93.
//   - every other GPU but MI300X and MI325X: no fp8 row (no same-source
//     bf16 and fp8 GEMM figures for AMD's MI350X, MI355X or for L40S, L4,
//     RTX4090, RTX5090 were found), so fp8 GEMMs are assumed to reach the
//     bf16 efficiency (1).
//
// ml-engineering's MI300X fp8 row is empty; MI300X and MI325X take AMD's
// own same-method figures instead: the "Max Achievable FLOPs (MAF)" table
// of "Measuring Max-Achievable FLOPs – Part 2" (ROCm blogs, 28 Feb 2025;
// blogs/software-tools-optimization/measuring-max-achievable-flops-part2/
// README.md at ROCm/rocm-blogs 8e011952aebcdc6ad86b42f5ee236136aa8765dd,
// Table 1): hipblaslt-bench at hipBLASLt db8e93b4fd6c, ROCm 6.3.0, the
// best of a shape search in each dtype (bf16 at M, N, K = 4096, 4864,
// 32896; fp8 e4m3fnuz in and out, unscaled, at 4096, 3648, 32896),
// trig_float inputs, cold caches, thermally settled: the same method in
// both dtypes, as mamf-finder's is; the ratio is taken over the presets'
// peaks (1,307.4 and 2,614.9 TFLOPS on both GPUs):
//   - MI300X (750 W): bf16 708, fp8 1,273 TFLOPS: 0.90. The post's
//     footnote 4 gives the fp8 figure as 1,223.6 TFLOPS "at 1273MHz"
//     (0.86) where the table has 1,273 at 1,230 MHz; the table's is taken:
//     at its clock fp8 runs 83 % of the 304 CUs' 4,096 FLOPs per clock,
//     as the MI325X's does at its own (1,519 at 1,464 MHz), where the
//     footnote's would be 77 %.
//   - MI325X (1,000 W): bf16 843, fp8 1,519 TFLOPS: 0.90.
//
// AMD's later post on the same series, "Completing the GPU Performance
// Picture: Understanding TAF Alongside Peak FLOPs and MAF"
// (blogs/artificial-intelligence/taf-blog/README.md at ROCm/rocm-blogs
// d9464d46e663709d5af29e4ec4e84a458fdbe46f, footnote 1), remeasured the
// MI325X with normal-distribution inputs on ROCm 7.2.1: MAF bf16 831.40
// and fp8 1,408.06 TFLOPS (0.85), and over ten fixed DeepSeek-V3 GEMM
// shapes, the same in both dtypes, bf16 616.42 and fp8 1,143.18 (0.93);
// the 0.90 lies between them (TestFP8GEMMRatioDerivation).
//
// An independent figure agrees on H100: torchao's float8 linear
// microbenchmark (torchao/float8/README.md at pytorch/ao
// b6ef500d3efce0a271935ee567e96d1e9ebbb227 lines 104-112, first published
// at 8c81863ba85cce742244c0151c6683c5696bbe04: tensorwise scaling,
// torch.compile, forward and backward with the casts, 1.39× bf16 at M, K,
// N = 4096, 8192, 16384), with the figures of torchao's roofline for that
// H100 (torchao/testing/training/roofline_utils.py at
// 36027d82d1ad9949597ea16002ff4940374b1b94: bf16 GEMMs at 0.78 of 989
// TFLOPS, memory at 0.92 of 2.4 TB/s, the unfused casts' 6 B per input and
// output-gradient element and 8 B per weight element, :146-174), leaves
// the fp8 GEMMs 0.92 of the bf16 efficiency (TestFP8GEMMRatioDerivation).
func DefaultFP8GEMMRatio(gpu string) (ratio float64, from string, ok bool) {
	const mamf = "ml-engineering's bf16 and fp8 matmul maxima, compute/accelerator/README.md at stas00/ml-engineering 744d01e"
	const maf = "AMD's bf16 and fp8 max-achievable FLOPs, measuring-max-achievable-flops-part2/README.md at ROCm/rocm-blogs 8e01195"
	switch gpu {
	case "H100-80GB":
		return 0.88, mamf, true
	case "H200":
		return 0.91, mamf, true
	case "B200":
		return 0.98, mamf, true
	case "B300", "GB300":
		return 0.95, mamf, true
	case "GB200":
		return 0.99, mamf, true
	case "GH200-96GB":
		return 0.93, mamf, true
	case "MI300X", "MI325X":
		return 0.90, maf, true
	}
	return 1, "", false
}

// FP8GEMMRatioOf is cluster.fp8_gemm_ratio, or the GPU's
// DefaultFP8GEMMRatio where the file gives none.
func (c Cluster) FP8GEMMRatioOf() float64 {
	if c.FP8GEMMRatio > 0 {
		return c.FP8GEMMRatio
	}
	r, _, _ := DefaultFP8GEMMRatio(c.GPU)
	return r
}

// resolveFP8 fills training.fp8 and cluster.peak_fp8, checks
// cluster.fp8_gemm_ratio and that the GPU has fp8 tensor cores when a
// recipe is on.
func (l *loader) resolveFP8(s *Scenario) *Error {
	t, c := &s.Training, &s.Cluster
	if !l.has("cluster.peak_fp8") {
		if g, ok := findGPU(c.GPU); ok && l.has("cluster.gpu") {
			c.PeakFP8 = g.PeakFP8
		}
	} else if c.PeakFP8 <= 0 {
		return l.errPath("cluster.peak_fp8", "peak_fp8=0 is out of range (use a rate > 0 such as 1979TFLOPS, or delete the key)")
	}
	if l.has("cluster.fp8_gemm_ratio") && !(c.FP8GEMMRatio > 0 && c.FP8GEMMRatio <= 2) {
		return l.errPath("cluster.fp8_gemm_ratio", fmt.Sprintf("fp8_gemm_ratio=%s is out of range (use the fraction of the bf16 GEMM efficiency fp8 GEMMs reach, in (0, 2], such as 0.92, or delete the key)", fmtFloat(c.FP8GEMMRatio)))
	}
	if !l.has("training.fp8") {
		t.FP8 = FP8None
	} else if err := oneOf(l, "training.fp8", t.FP8, FP8None, FP8TE, FP8TECurrent, FP8TorchAO); err != nil {
		return err
	}
	if l.has("training.fp8_all_gather") && t.FP8 != FP8TorchAO {
		return l.errPath("training.fp8_all_gather", fmt.Sprintf("fp8_all_gather is torchao's enable_fsdp_float8_all_gather, and training.fp8 is %s (set fp8: torchao, or delete the key)", t.FP8))
	}
	if t.FP8 == FP8None {
		return nil
	}
	if t.FP8 != FP8None && c.PeakFP8 <= 0 {
		gpu := "this GPU"
		if c.GPU != "" {
			gpu = c.GPU
		}
		return l.errPath("training.fp8", fmt.Sprintf("fp8 %s needs cluster.peak_fp8, and %s has no fp8 tensor cores (use a GPU with fp8 such as H100-80GB, or give peak_fp8)", t.FP8, gpu))
	}
	// torchao's float8 all-gather runs only under FSDP2: with
	// enable_fsdp_float8_all_gather the weight is a
	// WeightWithDynamicFloat8CastTensor (torchao/float8/fsdp_utils.py line
	// 129 at 11ce634705af1972320a8488d3e2ca223dcb0372), whose
	// fsdp_pre_all_gather (line 218) casts the shard to fp8 and
	// fsdp_post_all_gather (line 238) wraps the gathered bytes: FSDP2's
	// tensor-subclass extension hooks (config.py lines 182-184 there: "to
	// do float8 all-gather with FSDP2"). FSDP1's FlatParameter and
	// DeepSpeed's stage 3 call neither and gather the 16-bit weights. So
	// under those boundaries an explicit fp8_all_gather: true is refused,
	// and the key left out is false there: torchao's own default
	// (Float8LinearConfig.enable_fsdp_float8_all_gather = False, config.py
	// line 184 at 11ce634) and torchtitan's (job_config.py line 732 at
	// 238fa99), with which torchao runs float8 under FSDP1
	// (test/float8/test_fsdp.py lines 83-95 at 11ce634). zerosim's default
	// true is the FSDP2 recipe torchtitan's docs/float8.md shows (lines 14
	// and 17 at 238fa99).
	if b := s.Communication.Boundary; t.FP8 == FP8TorchAO && (b == BoundaryFSDP1 || b == BoundaryDeepSpeed) {
		gathers := s.Parallelism.Stage == 3 || (b == BoundaryFSDP1 && s.Parallelism.Stage == 2)
		what := map[Boundary]string{BoundaryFSDP1: "FSDP1's FlatParameter gathers 16-bit weights", BoundaryDeepSpeed: "DeepSpeed's stage 3 gathers 16-bit weights"}[b]
		if !gathers {
			what = fmt.Sprintf("stage %d under it gathers no weights", s.Parallelism.Stage)
		}
		if l.has("training.fp8_all_gather") && t.FP8Gather() {
			return l.errPath("training.fp8_all_gather", fmt.Sprintf("fp8_all_gather is torchao's float8 all-gather, which only FSDP2 runs (fsdp_pre_all_gather/fsdp_post_all_gather of torchao/float8/fsdp_utils.py), and communication.boundary is %s: %s (set fp8_all_gather: false, or boundary: fsdp2)", b, what))
		}
		if !l.has("training.fp8_all_gather") {
			off := false
			t.FP8AllGather = &off
		}
	}
	// torchao's fp8 all-gather is FSDP2's (enable_fsdp_float8_all_gather
	// casts the weight shards before fully_shard gathers them); ZeRO++ is
	// DeepSpeed's stage 3, whose gathers move 16-bit or qwZ's int8
	// weights. No stack runs both, and the schedule would gather 16-bit
	// weights where the memory model holds fp8 ones.
	if t.FP8 == FP8TorchAO && s.Communication.ZeroPP() {
		return l.errPath("training.fp8", "fp8 torchao gathers fp8 weights with FSDP2, and ZeRO++ (zero_quantized_weights, zero_hpz_partition_size, zero_quantized_gradients) is DeepSpeed's stage 3: no stack runs both (use fp8: te with ZeRO++, or remove the ZeRO++ keys)")
	}
	return nil
}

// FP8ParamsGroup is the parameter group training.fp8_params puts the
// transformer blocks in: Megatron's separate uint8 param buffer.
const FP8ParamsGroup = "fp8"

// FP8Primary reports whether unit l's weights are fp8 primary weights
// (training.fp8_params): it is in FP8ParamsGroup.
func FP8Primary(l Layer) bool { return l.Group == FP8ParamsGroup }

// resolveFP8Params checks training.fp8_params and moves the transformer
// blocks into FP8ParamsGroup (precision fp8: 1-byte param buffer, bf16
// gradients, fp32 master; memory's elemBytes). What the sources allocate
// per block weight with fp8 primary weights under the distributed
// optimizer:
//
//   - The module weight is a Float8Tensor, no bf16 copy: Transformer
//     Engine's fp8_model_init (transformer_engine/pytorch/fp8.py lines
//     489-521 at NVIDIA/TransformerEngine v1.11 c27ee60ec746) makes
//     reset_parameters wrap each weight as Float8Tensor.to_float8(...,
//     with_transpose_cache=torch.is_grad_enabled()) (module/base.py lines
//     879-892): uint8 data, one fp32 scale_inv and a uint8 transpose of the
//     same size (tensor/float8_tensor.py lines 124-148); the optimizer's
//     update only marks the transpose stale (_reset_caches, lines 881-886)
//     and Linear.forward refills it in place, with no workspace
//     (module/linear.py lines 964-972). TE 2.x alike: the weight quantizer
//     is set_usage(rowwise=True, columnwise=torch.is_grad_enabled())
//     (module/base.py lines 1838-1865 at d0067d0da6cb).
//   - NeMo's model.fp8_params builds the model under fp8_model_init and
//     sets the DDP's fp8_param_gather (nemo/collections/nlp/models/
//     language_modeling/megatron_gpt_model.py lines 362-364 and 563 at
//     NVIDIA/NeMo v2.0.0 e938df32, the 24.09 container); Megatron-LM's
//     --fp8-param-gather the same (pretrain_gpt.py lines 82-93 at
//     core_v0.9.0 86197976) and only with the distributed optimizer
//     (megatron/training/arguments.py lines 314-316).
//   - Megatron's DDP puts them in their own buffer, param dtype uint8, the
//     gradient dtype the weight's nominal bf16 (fp32 under
//     grad_reduce_in_fp32) (megatron/core/distributed/
//     distributed_data_parallel.py lines 113-121 at core_v0.9.0), and
//     points each Float8Tensor's _data into it (param_and_grad_buffer.py
//     lines 496-532): the all-gather after the step moves 1 byte per
//     weight. The distributed optimizer keeps the fp32 main shard and
//     Adam's states as for bf16 (distrib_optimizer.py lines 344-368) and
//     casts the updated shard into the uint8 buffer (lines 1724-1740).
//     NeMo's distributed_fused_adam alike: uint8 param buckets and buffer
//     (nemo/core/optim/distributed_adam.py lines 295, 393-465 at v2.0.0),
//     the fp32 shard cast into it (_check_params_shard_dtypes, line 601),
//     store_params for the fp32 master (megatron_base_model.py line 804).
//
// A block's norm weights (TE LayerNormLinear's layer_norm_weight, not
// fp8) sit in Megatron's bf16 buffer; zerosim's unit is the whole block,
// so they are counted at 1 byte with it (2·hidden bytes a block too few,
// 256 KiB on Llama 3.1 8B). The embedding, final norm and output layer
// stay in the bf16 group, as TE and Megatron leave them.
func (l *loader) resolveFP8Params(s *Scenario) *Error {
	t := &s.Training
	if !t.FP8Params {
		return nil
	}
	const key = "training.fp8_params"
	const what = "fp8_params is Transformer Engine's fp8 primary weights (fp8_model_init: NeMo's model.fp8_params, Megatron-LM's --fp8-param-gather)"
	switch {
	case !t.FP8.TE():
		return l.errPath(key, fmt.Sprintf("%s, and training.fp8 is %s (set fp8: te or te_current, or delete the key)", what, t.FP8))
	case s.Stack != "megatron":
		return l.errPath(key, fmt.Sprintf("%s, modelled with Megatron's distributed optimizer, and stack is %q (set stack: megatron, or delete the key)", what, s.Stack))
	case s.Parallelism.Stage != 1:
		return l.errPath(key, fmt.Sprintf("%s, which Megatron-LM takes only with the distributed optimizer (arguments.py: \"--fp8-param-gather only supported with distributed optimizer\"), and zero_stage is %d (set zero_stage: 1, or delete the key)", what, s.Parallelism.Stage))
	case t.ParamDType != BF16 && t.ParamDType != FP16:
		return l.errPath(key, fmt.Sprintf("%s beside 16-bit parameters, and param_dtype is %s (set param_dtype: bf16, or delete the key)", what, t.ParamDType))
	}
	m := &s.Model
	have := false // resolved before: the group is there (a resolved scenario written out and read back)
	for _, g := range m.Groups {
		if g.Name == FP8ParamsGroup && g.Precision == FP8 {
			have = true
			continue
		}
		if g.Name != "dense" {
			return l.errPath(key, fmt.Sprintf("%s: the blocks go to their own fp8 group, and model.groups has %q besides dense (not modelled: drop the group or the key)", what, g.Name))
		}
	}
	list := slices.Clone(m.LayerList)
	n := 0
	for i := range list {
		if list[i].Block && list[i].Group == "dense" {
			list[i].Group = FP8ParamsGroup
		}
		if list[i].Group == FP8ParamsGroup {
			n++
		}
	}
	if n == 0 {
		return l.errPath(key, what+", and the model has no transformer blocks to hold them (use a transformer model, or delete the key)")
	}
	m.LayerList = list
	if !have {
		m.Groups = append(slices.Clone(m.Groups), ParamGroup{Name: FP8ParamsGroup, Precision: FP8})
	}
	return nil
}
