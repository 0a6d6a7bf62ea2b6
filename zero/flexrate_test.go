package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFlexAndMI300XRates checks FlexAttention's and the MI300X's
// FlashAttention-2 defaults against the published figures, worked by hand
// from the sources zero/efficiency.go cites: the FlexAttention blog's A100
// fractions of FlashAttention-2 (0.90 forward, 0.85 backward), the GTC 2025
// abstract's H100 multiples (1.25, 1.03), the FlashAttention-4 paper's
// Triton rate on the B200 (1,613/2.7 of 2,250) and ROCm/flash-attention
// issue 142's MI300X row (353.22 forward, 194.43 backward of 1,307.4).
func TestFlexAndMI300XRates(t *testing.T) {
	ampere := 3.5 / (1/0.90 + 2.5/0.85) // 0.86373
	mi300x := 3.5 / (1/353.22 + 2.5/194.43) / 1307.4
	for _, c := range []struct {
		gpu    string
		kernel scenarios.AttentionKernel
		want   float64
		part   string
	}{
		{"A100-80GB", scenarios.KernelFlex, 0.6 * ampere, "A100"},
		{"A100-40GB", scenarios.KernelFlex, 0.51824, "A100"},
		{"H100-80GB", scenarios.KernelFlex, 0.35 * 3.5 / (1/1.25 + 2.5/1.03), "H100"},
		{"H200", scenarios.KernelFlex, 0.37958, "H100"},
		{"B200", scenarios.KernelFlex, 1613.0 / 2.7 / 2250, "B200"},
		{"GB200", scenarios.KernelFlex, 0.26551, "B200"},
		{"MI300X", scenarios.KernelFA2, 223.08 / 1307.4, "MI300X"},
		{"MI325X", scenarios.KernelFA2, mi300x, "MI300X"},
		{"MI300X", scenarios.KernelFlex, mi300x * ampere, "MI300X"},
		{"MI300X", scenarios.KernelTriton, 0.325, "A100"},
		{"L40S", scenarios.KernelFlex, 0.6 * ampere, "A100"},
	} {
		got := AttentionEfficiency(c.gpu, c.kernel, 0.7)
		if math.Abs(got-c.want) > 2e-4 {
			t.Errorf("%s %s: %.5f, want %.5f", c.gpu, c.kernel, got, c.want)
		}
		if p := AttentionRatePart(c.gpu, c.kernel); p != c.part {
			t.Errorf("%s %s: measured on %q, want %q", c.gpu, c.kernel, p, c.part)
		}
	}
	// FlexAttention is slower than FlashAttention-2 on the A100 and
	// faster on the H100, as the two sources say.
	if f, a := AttentionEfficiency("A100-80GB", scenarios.KernelFlex, 0.7), AttentionEfficiency("A100-80GB", scenarios.KernelFA2, 0.7); f >= a {
		t.Errorf("A100: flex %.4f ≥ fa2 %.4f", f, a)
	}
	if f, a := AttentionEfficiency("H100-80GB", scenarios.KernelFlex, 0.7), AttentionEfficiency("H100-80GB", scenarios.KernelFA2, 0.7); f <= a {
		t.Errorf("H100: flex %.4f ≤ fa2 %.4f", f, a)
	}
	// The MI300X's measured rate is below its GEMM ceiling: no cap.
	if _, _, capped := AttentionRateCapped("MI300X", scenarios.KernelFA2, 128); capped {
		t.Error("MI300X fa2 capped at its GEMM default; its own rate is below it")
	}
}
