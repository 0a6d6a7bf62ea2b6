package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// An attention rate measured on another GPU is capped at the GPU's own
// GEMM default: the A100's FlashAttention-2 0.6 taken for an MI300X, whose
// best bf16 matmul measures 668.4 of its 1,307.4 TFLOPS
// (stas00/ml-engineering compute/accelerator/README.md at 744d01e), ran
// attention faster than its GEMMs (QA s29 finding 1). Rates below the
// ceiling, and eager attention, are as published.
func TestAttentionCappedAtGEMMCeiling(t *testing.T) {
	const h100 = 794.5 / 989.0 // the H100 SXM row
	mi300x := 0.8 * (668.4 / 1307.4) / h100
	mi325x := 0.8 * (784.9 / 1307.4) / h100
	fa2MI300X := 3.5 / (1/353.22 + 2.5/194.43) / 1307.4
	// No preset's published rate is above its ceiling any more; the
	// ceilings themselves stay checked.
	if c := GEMMCeiling("MI300X"); math.Abs(c-mi300x) > 1e-12 {
		t.Errorf("MI300X GEMM ceiling %g, want %g", c, mi300x)
	}
	if c := GEMMCeiling("MI325X"); math.Abs(c-mi325x) > 1e-12 {
		t.Errorf("MI325X GEMM ceiling %g, want %g", c, mi325x)
	}
	for _, c := range []struct {
		gpu    string
		kernel scenarios.AttentionKernel
		rate   float64 // the published (or borrowed) rate
		want   float64 // what attention runs at
		capped bool
	}{
		// FlashAttention-2's own MI300X rate (ROCm/flash-attention
		// issue 142: 353.22 forward, 194.43 backward of 1,307.4 TFLOPS)
		// is below both CDNA3 parts' measured matmuls; before it, the
		// A100's 0.6 was capped at mi300x and mi325x.
		{"MI300X", scenarios.KernelFA2, fa2MI300X, fa2MI300X, false},
		{"MI325X", scenarios.KernelFA2, fa2MI300X, fa2MI300X, false},
		{"MI300X", scenarios.KernelTriton, 0.325, 0.325, false},
		// MI355X: 1,565 of 2,516.6 TFLOPS, 0.62 of its peak, above 0.6.
		{"MI355X", scenarios.KernelFA2, 0.6, 0.6, false},
		{"A100-80GB", scenarios.KernelFA2, 0.6, 0.6, false},
		{"H100-80GB", scenarios.KernelFA2, 0.35, 0.35, false},
		{"L40S", scenarios.KernelFA2, 0.6, 0.6, false},
	} {
		rate, ceiling, capped := AttentionRateCapped(c.gpu, c.kernel, 128)
		if math.Abs(rate-c.rate) > 1e-12 || capped != c.capped {
			t.Errorf("%s %s: rate %g capped %v, want %g, %v", c.gpu, c.kernel, rate, capped, c.rate, c.capped)
		}
		if got := AttentionEfficiency(c.gpu, c.kernel, 0.5); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s %s: attention at %.6f of the peak, want %.6f", c.gpu, c.kernel, got, c.want)
		}
		if got := AttentionEfficiency(c.gpu, c.kernel, 0.5); got > ceiling+1e-15 {
			t.Errorf("%s %s: attention %g above the GEMM ceiling %g", c.gpu, c.kernel, got, ceiling)
		}
	}
	// Eager attention runs at the GEMM efficiency given, whatever it is.
	if got := AttentionEfficiency("MI300X", scenarios.KernelEager, 0.3); got != 0.3 {
		t.Errorf("eager on MI300X: %g, want the GEMM efficiency 0.3", got)
	}
}

// The published runs' quote says what every run on a GPU shares: both
// H200 runs are KempnerForge's single-node torch.compile ones
// (testdata/validation/kempnerforge-llama3-8b-h200*.yaml: nodes 1,
// compile: model; QA s28 M4), MI300X's one run torchao's 8-GPU compiled
// one; H100's 13 are of every kind.
func TestOnGPU(t *testing.T) {
	for _, c := range []struct {
		gpu  string
		fp8  scenarios.FP8Recipe
		want string
	}{
		{"H200", scenarios.FP8None, "on H200 (both single-node torch.compile runs)"},
		{"MI300X", scenarios.FP8None, "on MI300X (a single-node torch.compile run)"},
		{"H100-80GB", scenarios.FP8None, "on H100-80GB"},
		{"A100-40GB", scenarios.FP8None, "on A100-40GB"},
		{"H200", scenarios.FP8TorchAO, "on H200 (a torch.compile run)"},
		{"L40S", scenarios.FP8None, "on L40S"},
	} {
		if got := OnGPU(c.gpu, c.fp8); got != c.want {
			t.Errorf("OnGPU(%q, %q) = %q, want %q", c.gpu, c.fp8, got, c.want)
		}
	}
}

// TestAttentionCeilingAtGEMMCeiling: a fitted attention efficiency is
// bounded by 1.5× the kernel's rate and by the GPU's own GEMM ceiling, not
// the H100's 0.8: an MI355X has no FlashAttention-2 figure of its own and
// borrows the A100's 0.6, below its GEMM default 0.8 × (1565 / 2516.6) /
// (794.5 / 989) ≈ 0.619 (ml-engineering's MAMF row against the preset's
// peak), and 1.5 × 0.6 = 0.9 is above that, so the GEMM ceiling is the
// bound. On an A100 1.5 × 0.6 = 0.9 is cut to 0.8 (its measured 271.2 of
// 312 TFLOPS is above the H100's fraction, so it keeps 0.8).
func TestAttentionCeilingAtGEMMCeiling(t *testing.T) {
	const h100 = 794.5 / 989.0
	for _, c := range []struct {
		gpu        string
		rate, want float64
	}{
		{"MI355X", 0.6, 0.8 * (1565.0 / 2516.6) / h100},
		{"A100-80GB", 0.6, 0.8},
	} {
		ceiling, rate, ok := AttentionCeiling(c.gpu, scenarios.KernelFA2)
		if !ok || math.Abs(rate-c.rate) > 1e-12 || math.Abs(ceiling-c.want) > 1e-12 {
			t.Errorf("%s fa2: ceiling %.6f rate %.6f ok %v, want %.6f, %.6f, true", c.gpu, ceiling, rate, ok, c.want, c.rate)
		}
	}
}
