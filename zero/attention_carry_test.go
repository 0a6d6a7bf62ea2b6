package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAttentionCarry: an attention efficiency fitted on one GPU carries to
// another as a compute efficiency does (scenarios.CarryComputeEfficiency):
// by the kernel's default rates on the two, taken here from the
// measurements in zero/testdata/attention as the constants state them
// (cuDNN 9.22's forward and 2.5× backward TFLOPS on the GB200 and GB300 at
// their 2,500 TFLOPS peak; cuDNN on the H200 at 989; FlashAttention-2 on
// the MI300X at 1,307.4 against the A100's 0.6). Without it, a cuDNN rate
// fitted on GB200 ran a GB300 at the GB200's fraction of the peak, 9 %
// under cuDNN's measured GB300/GB200 ratio.
func TestAttentionCarry(t *testing.T) {
	cudnn := func(fwd, bwd, peak float64) float64 { return 3.5 / (1/fwd + 2.5/bwd) / peak }
	gb200, gb300, h200 := cudnn(1574e12, 1332e12, 2500e12), cudnn(1856e12, 1435e12, 2500e12), cudnn(644e12, 541e12, 989e12)
	mi300x := cudnn(353.22e12, 194.43e12, 1307.4e12)
	for _, tc := range []struct {
		name     string
		from, to string
		kernel   scenarios.AttentionKernel
		want     float64
	}{
		{"same GPU", "GB200", "GB200", scenarios.KernelCuDNN, 1},
		{"cuDNN GB200 to GB300", "GB200", "GB300", scenarios.KernelCuDNN, gb300 / gb200},
		// The B200 takes the GB200's cuDNN rate: nothing to carry.
		{"cuDNN GB200 to B200", "GB200", "B200", scenarios.KernelCuDNN, 1},
		{"cuDNN H100 to GB200", "H100-80GB", "GB200", scenarios.KernelCuDNN, gb200 / h200},
		{"FlashAttention-2 A100 to MI300X", "A100-80GB", "MI300X", scenarios.KernelFA2, mi300x / 0.6},
		{"eager: the GEMM efficiency, carried already", "GB200", "GB300", scenarios.KernelEager, 1},
		{"file without a GPU", "", "GB300", scenarios.KernelCuDNN, 1},
	} {
		if got := AttentionCarry(tc.from, tc.to, tc.kernel); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: AttentionCarry(%q, %q, %s) = %.6f, want %.6f", tc.name, tc.from, tc.to, tc.kernel, got, tc.want)
		}
	}
	// A calibration's rate fitted on GB200 runs on a GB300 scenario at the
	// carried rate; on its own GPU as fitted.
	for _, tc := range []struct {
		gpu  string
		want float64
	}{{"GB200", 0.4}, {"GB300", 0.4 * gb300 / gb200}} {
		s := &scenarios.Scenario{}
		s.Cluster.GPU = tc.gpu
		s.Training.AttentionKernel = scenarios.KernelCuDNN
		s.Training.AttentionEfficiency, s.Training.AttentionEfficiencyFrom, s.Training.AttentionEfficiencyGPU = 0.4, "cal.yaml", "GB200"
		if got := AttentionEfficiencyOf(s); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("fitted on GB200, run on %s: AttentionEfficiencyOf = %.6f, want %.6f", tc.gpu, got, tc.want)
		}
	}
}
