package scenarios

import "strings"

// KernelClass is the operation class of a GPU compute kernel, read from its
// name: what calibrate --trace fits each efficiency to.
type KernelClass uint8

const (
	// KernelOther is every compute kernel that is neither a GEMM nor
	// attention: elementwise ops, norms, softmax, the loss, the optimizer,
	// copies (memory-bound in the model).
	KernelOther KernelClass = iota
	// KernelGEMM is a dense matmul from cuBLAS, cuBLASLt, CUTLASS or a
	// vendor BLAS.
	KernelGEMM
	// KernelAttention is a fused attention kernel (FlashAttention, PyTorch
	// SDPA's backends, cuDNN's fused attention, Triton FlashAttention).
	KernelAttention
)

func (c KernelClass) String() string {
	switch c {
	case KernelGEMM:
		return "GEMM"
	case KernelAttention:
		return "attention"
	}
	return "other"
}

// kernelPattern is one rule of ClassifyKernel: a kernel whose lower-cased
// name contains (or, with prefix, starts with) pattern is of class.
type kernelPattern struct {
	pattern string
	prefix  bool
	class   KernelClass
}

// kernelPatterns are the names as they appear in the "name" of a Kineto
// kernel event (the demangled CUDA function), in order: attention first,
// because FlashAttention's and PyTorch's memory-efficient kernels carry
// "cutlass" in their template arguments. Where each comes from:
//
//   - flash_fwd / flash_bwd: FlashAttention-2's kernels, flash_fwd_kernel,
//     flash_fwd_splitkv_kernel, flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel,
//     flash_bwd_dot_do_o_kernel, flash_bwd_convert_dq_kernel
//     (Dao-AILab/flash-attention csrc/flash_attn/src/flash_fwd_kernel.h,
//     flash_bwd_kernel.h, flash_bwd_preprocess_kernel.h); PyTorch's vendored
//     copy that SDPA's flash backend runs is the same kernels in namespace
//     pytorch_flash:: (aten/src/ATen/native/transformers/cuda/flash_attn/).
//   - flash::: FlashAttention-3's Hopper kernels (hopper/, namespace flash:
//     e.g. flash::compute_attn_ws, flash::FlashAttnFwdSm90).
//   - fmha: PyTorch SDPA's memory-efficient backend (xFormers' CUTLASS
//     kernels, fmha_cutlassF_* forward and fmha_cutlassB_* backward:
//     pytorch/pytorch aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/
//     cutlassF_bf16_aligned.cu at 734153fcabe6), and cuDNN's and TransformerEngine's
//     fused_attn kernels named *fmha*.
//   - sdpa: cuDNN's fused attention as SDPA's cuDNN backend launches it
//     (cudnn_generated_fort_native_sdpa_sm90_flash_fprop_* and _bprop_*, as
//     published profiles of PyTorch ≥ 2.5 on H100 show them).
//   - attention / attn_fwd / attn_bwd: Triton attention kernels named after
//     what they do (Triton's fused-attention tutorial: _attn_fwd,
//     _attn_bwd, _attn_bwd_preprocess; torch.compile's flex_attention
//     templates, triton_tem_fused_flex_attention*).
//   - _fwd_kernel / _bwd_kernel / _bwd_preprocess (prefix): Tri Dao's
//     FlashAttention in Triton (flash_attn/flash_attn_triton.py, which
//     llm-foundry copies as llmfoundry/models/layers/flash_attn_triton.py
//     and runs for attn_impl: triton); prefix only, since Triton appends
//     the specialization to the name in older versions and other Triton
//     kernels end in _fwd_kernel too (a norm's _layer_norm_fwd_kernel).
//   - gemm, xmma, cutlass, nvjet: cuBLAS and cuBLASLt kernels as published
//     profiles name them (ampere_bf16_s16816gemm_bf16_*, sm80_xmma_gemm_*,
//     sm90_xmma_gemm_*, cutlass_80_tensorop_bf16_s16816gemm_*,
//     cutlass3x_sm90_tensorop_gemm_*, and the nvjet_hsh_*/nvjet_tst_*
//     kernels recent cuBLAS picks on Hopper and Blackwell), CUTLASS's own
//     device GEMMs
//     (cutlass::Kernel<cutlass::gemm::kernel::...>), volta_sgemm_*.
//   - cijk_: rocBLAS and hipBLASLt's Tensile GEMM kernels (Cijk_Ailk_Bljk_*)
//     on AMD GPUs.
var kernelPatterns = []kernelPattern{
	{"flash_fwd", false, KernelAttention},
	{"flash_bwd", false, KernelAttention},
	{"flash::", false, KernelAttention},
	{"fmha", false, KernelAttention},
	{"sdpa", false, KernelAttention},
	{"attention", false, KernelAttention},
	{"attn_fwd", false, KernelAttention},
	{"attn_bwd", false, KernelAttention},
	{"_fwd_kernel", true, KernelAttention},
	{"_bwd_kernel", true, KernelAttention},
	{"_bwd_preprocess", true, KernelAttention},
	{"gemm", false, KernelGEMM},
	{"xmma", false, KernelGEMM},
	{"cutlass", false, KernelGEMM},
	{"nvjet", false, KernelGEMM},
	{"cijk_", true, KernelGEMM},
}

// AttentionFamily is the training.attention_kernel whose kernels an
// attention kernel's name (ClassifyKernel's KernelAttention) belongs to, ""
// when its name does not say: FlashAttention-3's kernels (fa3, fa3Kernel),
// FlashAttention-2's flash_fwd/flash_bwd (fa2; SDPA's flash backend runs
// the same kernels; since flash-attn v2.7.4 they are in the namespace
// flash too, so the names decide before the namespace does), any other
// kernel of the namespace flash (FlashAttention-3's helpers, fa3), cuDNN's
// generated kernels (cudnn_generated_*…sdpa…: SDPA's cuDNN backend and
// Transformer Engine's FusedAttention, cudnn), Tri Dao's Triton kernels
// (_fwd_kernel/_bwd_kernel, triton), torch.compile's FlexAttention
// templates (flex). The fmha kernels are either xFormers'
// (SDPA's memory-efficient backend) or fused kernels of other libraries,
// and Triton kernels named after attention any of several.
func AttentionFamily(name string) AttentionKernel {
	n := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "void "))
	switch {
	case ClassifyKernel(name) != KernelAttention:
		return ""
	case fa3Kernel(n):
		return KernelFA3
	case strings.Contains(n, "flash_fwd"), strings.Contains(n, "flash_bwd"):
		return KernelFA2
	case namespaceFlash(n):
		return KernelFA3
	case strings.Contains(n, "cudnn"), strings.Contains(n, "sdpa"):
		return KernelCuDNN
	case strings.HasPrefix(n, "_fwd_kernel"), strings.HasPrefix(n, "_bwd_kernel"), strings.HasPrefix(n, "_bwd_preprocess"):
		return KernelTriton
	case strings.Contains(n, "flex_attention"):
		// torch.compile's FlexAttention templates
		// (triton_tem_fused_flex_attention*, the backward
		// triton_tem_fused_flex_attention_backward*: tritonbench's
		// inductor_flex_attention_bwd operator, meta-pytorch/tritonbench
		// pull request 940).
		return KernelFlex
	}
	return ""
}

// fa3Kernel reports whether the lower-cased kernel name n is one of
// FlashAttention-3's main kernels in the namespace flash (Dao-AILab/
// flash-attention hopper/): the first release's compute_attn_ws and
// compute_dqkv and convert_dQ (flash_fwd_launch_template.h line 59,
// flash_bwd_launch_template.h line 141, flash_bwd_preprocess_kernel.h line
// 186, all at 7f67966c; that release's global flash_bwd_dot_do_o_kernel
// and flash_bwd_convert_dkv_kernel cannot be told from FlashAttention-2's
// by name and count as fa2, a small share of the time) and the later
// cutlass::device_kernel<flash::…FlashAttnFwdSm90…>, FlashAttnBwdSm90,
// FlashAttnFwdCombine, FlashAttnBwdPreprocess and
// FlashAttnBwdPostprocessConvertdQ (flash_fwd_launch_template.h and
// flash_bwd_launch_template.h at 0251105a). FlashAttention-2's kernels
// from v2.7.4 on (bc482cbf, "Add a macro for namespace") are
// flash::flash_fwd_kernel and the like: in the same namespace, named
// flash_fwd/flash_bwd.
func fa3Kernel(n string) bool {
	if !namespaceFlash(n) {
		return false
	}
	for _, k := range []string{"compute_attn_ws", "compute_dqkv", "convert_dq", "flashattnfwd", "flashattnbwd"} {
		if strings.Contains(n, k) {
			return true
		}
	}
	return false
}

// namespaceFlash reports whether n names something in the namespace flash
// (FlashAttention-3's), not pytorch_flash (PyTorch's copy of
// FlashAttention-2).
func namespaceFlash(n string) bool {
	for i := strings.Index(n, "flash::"); i >= 0; {
		if i == 0 || !(n[i-1] == '_' || n[i-1] >= 'a' && n[i-1] <= 'z' || n[i-1] >= '0' && n[i-1] <= '9') {
			return true
		}
		j := strings.Index(n[i+1:], "flash::")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// ClassifyKernel is the operation class of a compute kernel by its name
// (NCCL's kernels are not compute: see IsNCCLKernel). A leading "void "
// of a demangled name is ignored.
func ClassifyKernel(name string) KernelClass {
	n := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "void "))
	for _, p := range kernelPatterns {
		if p.prefix && strings.HasPrefix(n, p.pattern) || !p.prefix && strings.Contains(n, p.pattern) {
			return p.class
		}
	}
	if inductorGEMM(n) {
		return KernelGEMM
	}
	return KernelOther
}

// inductorGEMM reports whether the lower-cased kernel name n is one of
// torch.compile's Triton GEMM templates (mode="max-autotune"): Inductor
// names a template kernel triton_tem_fused_ followed by the ATen ops it
// fuses, so a GEMM template reads triton_tem_fused_mm_0,
// triton_tem_fused_addmm_gelu_1 or triton_tem_fused_bmm_2 (pytorch
// test/inductor/test_profiler.py at 3f0959bb,
// test_inductor_profiling_kernel_names_template, profiles a kernel named
// triton_tem_fused_mm_0). Flex attention's templates
// (triton_tem_fused_flex_attention*) are attention's, which kernelPatterns
// matches first.
func inductorGEMM(n string) bool {
	rest, ok := strings.CutPrefix(n, "triton_tem_fused_")
	if !ok {
		return false
	}
	for _, op := range strings.Split(rest, "_") {
		switch op {
		case "mm", "addmm", "bmm", "baddbmm":
			return true
		}
	}
	return false
}
