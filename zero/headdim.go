package zero

import (
	"slices"

	"github.com/zerosim/zerosim/scenarios"
)

// Attention rate by head dimension. Every default attention rate above
// (AttentionEfficiency) is measured at head_dim 128; the same kernels run
// slower per FLOP at head_dim 64 (QA qatput31 finding 1: a Llama-3.2-1B,
// head_dim 64, ran 6.7 % slower on GH200 than a fit on the 3B, head_dim
// 128, predicts). HeadDimScale is the published rate of a kernel at a
// head_dim over its rate at 128, from the figures below, each at 8,192
// tokens (the shape the cuDNN rates are taken at), causal where the figure
// has a causal panel. A forward f and backward b (TFLOP/s) combine as the
// rates do, 3.5/(1/f + 2.5/b); a figure of forward + backward gives the
// pair directly; a head_dim with a forward figure and no backward one takes
// the forward's ratio for both. Copied with their provenance to
// zero/testdata/attention/headdim.csv (and the cudnn-frontend files beside
// it), where TestHeadDimScaleMeasured reads them back.
//
//   - FlashAttention-2 on A100 (and every GPU that takes the A100's
//     FlashAttention-2 rate: AMD's, the consumer cards; no head_dim figure
//     of the MI300X's Composable Kernel FlashAttention-2 was found, and it
//     runs the same algorithm): forward + backward, causal, 8k: 165 TFLOP/s
//     at head_dim 64, 182 at 128 (Dao-AILab/flash-attention
//     assets/flash2_a100_fwd_bwd_benchmark.png at 4f285b354796, the
//     FlashAttention-2 release; hidden 2,048, so 32 or 16 heads, batch
//     16k/seqlen; README "A100"): 0.907. No head_dim 256 figure: above 128
//     the 128 rate holds.
//   - FlashAttention in Triton (training.attention_kernel triton): flat in
//     head_dim, ratio 1 on every GPU. The same A100 figure's "FlashAttention
//     Triton" bars, forward + backward, causal, are 79 at 64 and 78 at 128
//     at 8k, 80 and 80 at 16k (1.013 and 1.000, both within a label's
//     rounding of 1, where FlashAttention-2's fall 9 %); the figure does not
//     say which Triton port it ran, and zerosim's triton is llm-foundry's
//     flash_attn_triton.py (TritonAttentionEfficiency), of which no
//     head_dim figure was found, so no dependence is taken.
//   - FlashAttention-2 on H100 (and on Blackwell, where FlashAttention-2
//     runs the same sm80 code; no Blackwell head_dim figure was found):
//     forward + backward, causal, 8k: 273 at 64, 308 at 128
//     (assets/flash2_h100_fwd_bwd_benchmark.png at 4f285b354796): 0.886;
//     at 256 the forward, causal, 8k: 297 against 333 at 128 (Shah et al.
//     2024, FlashAttention-3, arXiv 2407.08608, Fig. 5, the repository's
//     assets/flash3_fp16_fwd.png at 7ef24848cf2f, panels d and f): 0.892.
//   - cuDNN on H100 (the same figure, its forward, causal, 8k: 379 at 64,
//     529 at 128, 497 at 256; its backward, Fig. 6, which has no causal
//     panel, not causal, 8k: 432 at 64, 518 at 128, as subtext.edge.nugit.net
//     transcribes the figure's bar labels, the forward figure's labels
//     agreeing with the repository's image on the panels compared): 0.797
//     at 64, 0.940 at 256.
//     cuDNN on Blackwell takes Hopper's 64 (cudnn-frontend's only head_dim
//     64 run there, gpt_oss, has a 128-token sliding window); its 256 is
//     its own forward, causal, 8k: cuDNN 9.22 on a GB200 1,708 TFLOP/s
//     with head_dim 256 (qwen35, 32 query and 2 KV heads) against 1,574
//     at 128 (llama3.1), 1.085, and on a GB300 1,965 against 1,856, 1.059
//     (NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/
//     qwen35/ and llama3.1/ at fb682ce761a2).
//   - FlashAttention-3 on H100 (Fig. 5 and 6 as above): forward 460 at 64,
//     602 at 128, 628 at 256; backward 472 at 64, 559 at 128: 0.821 at
//     64, 1.043 at 256.
//   - FlashAttention-1 (training.attention_kernel fa1) on A100, from the
//     same A100 figure's "FlashAttention" bars, forward + backward, causal,
//     8k: 92 at head_dim 64, 80 at 128: 1.15, faster at 64 (fa1rate.go,
//     which also rates it by sequence length); Hopper takes the A100's.
//   - cuDNN on an A100 and other GPUs without a cuDNN figure, and
//     FlexAttention except on Blackwell, are rated as multiples of
//     FlashAttention-2's rate and take its ratio; FlexAttention on
//     Blackwell takes the Triton kernel's rate, and its ratio, 1.
//
// Between published head_dims the ratio is interpolated linearly (head_dim
// sets the depth of QKᵀ and the width of PV; with no figure between two
// measured sizes, a straight line between them assumes no shape the
// figures do not show); below the smallest and above the largest published
// head_dim the nearest figure's ratio holds (no extrapolation).

// HeadDimRate is one published point: a kernel's rate at HeadDim over its
// rate at head_dim 128 on the same figure.
type HeadDimRate struct {
	HeadDim int64
	Ratio   float64
}

// attentionPair is a forward and backward TFLOP/s combined as the rates
// are (3.5/(1/f + 2.5/b)); b 0: the forward alone.
func attentionPair(f, b float64) float64 {
	if b == 0 {
		return f
	}
	k := attentionBackwardFactor(false)
	return (1 + k) / (1/f + k/b)
}

// The published points, per kernel and the part they were measured on.
var (
	fa2AmpereHeadDim   = []HeadDimRate{{64, 165.0 / 182}}
	fa2HopperHeadDim   = []HeadDimRate{{64, 273.0 / 308}, {256, 297.0 / 333}}
	cudnnHopperHeadDim = []HeadDimRate{{64, attentionPair(379, 432) / attentionPair(529, 518)}, {256, 497.0 / 529}}
	fa3HopperHeadDim   = []HeadDimRate{{64, attentionPair(460, 472) / attentionPair(602, 559)}, {256, 628.0 / 602}}
	cudnnGB200HeadDim  = []HeadDimRate{cudnnHopperHeadDim[0], {256, 1708.0 / 1574}}
	cudnnGB300HeadDim  = []HeadDimRate{cudnnHopperHeadDim[0], {256, 1965.0 / 1856}}
)

// HeadDimRates is the published points HeadDimScale interpolates for
// kernel on gpu (head_dim 128, ratio 1, is implied), and the part the
// head_dim 64 figure was measured on; none, and "", for eager attention
// (the GEMM efficiency) and for the Triton kernel (flat in head_dim).
func HeadDimRates(gpu string, kernel scenarios.AttentionKernel) ([]HeadDimRate, string) {
	fa2 := func() ([]HeadDimRate, string) {
		if hopper(gpu) || blackwell(gpu) {
			return fa2HopperHeadDim, "H100"
		}
		return fa2AmpereHeadDim, "A100"
	}
	switch RunsAs(gpu, kernel) {
	case scenarios.KernelEager:
		return nil, ""
	case scenarios.KernelFA3:
		return fa3HopperHeadDim, "H100"
	case scenarios.KernelCuDNN:
		switch {
		case hopper(gpu):
			return cudnnHopperHeadDim, "H100"
		case gpu == "B300" || gpu == "GB300":
			return cudnnGB300HeadDim, "H100"
		case blackwell(gpu):
			return cudnnGB200HeadDim, "H100"
		}
		return fa2()
	case scenarios.KernelTriton:
		return nil, ""
	case scenarios.KernelFA1:
		// FlashAttention-1's own bars on the A100 figure (fa1rate.go),
		// taken for Hopper too (no Hopper figure of it).
		return fa1HeadDim, "A100"
	case scenarios.KernelFlex:
		if blackwell(gpu) {
			return nil, ""
		}
	}
	return fa2()
}

// HeadDimScale is kernel's rate on gpu at headDim over its rate at head_dim
// 128 (HeadDimRates, interpolated linearly between published head_dims,
// the nearest one's held outside them); 1 for headDim ≤ 0 (unknown) and
// for eager attention.
func HeadDimScale(gpu string, kernel scenarios.AttentionKernel, headDim int64) float64 {
	pts, _ := HeadDimRates(gpu, kernel)
	if headDim <= 0 || len(pts) == 0 {
		return 1
	}
	pts = append([]HeadDimRate{{128, 1}}, pts...)
	slices.SortFunc(pts, func(a, b HeadDimRate) int { return int(a.HeadDim - b.HeadDim) })
	if headDim <= pts[0].HeadDim {
		return pts[0].Ratio
	}
	for i := 1; i < len(pts); i++ {
		if a, b := pts[i-1], pts[i]; headDim <= b.HeadDim {
			x := float64(headDim-a.HeadDim) / float64(b.HeadDim-a.HeadDim)
			return a.Ratio + float64(x*(b.Ratio-a.Ratio))
		}
	}
	return pts[len(pts)-1].Ratio
}

// ModelHeadDim is the head_dim (the q·k width) attention runs at in s
// (scenarios.ModelHeadDim, which the loader checks fa1 against).
func ModelHeadDim(s *scenarios.Scenario) int64 { return scenarios.ModelHeadDim(s) }
