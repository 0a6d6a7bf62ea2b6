package zero

import (
	"math"

	"github.com/zerosim/zerosim/scenarios"
)

// FlashAttention-1 (training.attention_kernel: fa1): the CUDA kernel of
// flash-attn before 2.0 (flash_attn_unpadded_func, FlashMHA), which
// MosaicGPT's attn_impl: flash ran (mosaicml/examples examples/llm/src/
// mosaic_gpt.py FlashCausalAttention at d14a7c94: flash_attn.
// flash_attention.FlashMHA, flash-attn 0.2.8 in examples/llm/
// requirements.txt there; flash-attn 0.2.2 at 22d724c8).
//
// Its rate is read off one published figure, the only one found that
// gives FlashAttention-1 in TFLOP/s: the "FlashAttention" bars of
// Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png at
// 4f285b354796 (2023-07-17, the FlashAttention-2 release; the same figure
// as the FlashAttention-2 paper's A100 forward + backward benchmark, Dao
// 2023, arXiv 2307.08691): A100 80GB SXM4, forward + backward, hidden
// 2,048 (32 heads of 64 or 16 of 128), batch 16k/seqlen, TFLOP/s counted
// as zerosim counts them (4·b·s²·h·d, halved when causal, the backward
// 2.5× the forward: benchmarks/benchmark_flash_attention.py's flops()).
// Causal panels, (c) head_dim 64 and (d) head_dim 128, by sequence length
// (the bar labels; copied with the figure's name to
// zero/testdata/attention/fa1.csv, which TestFA1RatesMeasured reads
// back):
//
//	seq          512  1k  2k  4k  8k  16k
//	head_dim 64   58  70  77  87  92   97
//	head_dim 128  55  62  69  76  80   83
//
// The same panels' FlashAttention-2 bars are 165 and 182 at 8k, and its
// "FlashAttention Triton" bars 79 and 78: FlashAttention-1's CUDA kernel
// runs at 0.44 of FlashAttention-2 at head_dim 128, and, unlike
// FlashAttention-2, faster at head_dim 64 than at 128 (92 against 80) and
// markedly faster with longer sequences (55 at 512 tokens, 83 at 16k: its
// thread blocks are one per batch entry and head, so short sequences leave
// the GPU's SMs idle; FlashAttention-2 §3.2 adds parallelism over the
// sequence length for this). zerosim therefore rates it by head_dim and
// sequence length, where every other kernel's rate is one figure at 8k
// (HeadDimScale alone).
//
// The figure ran the FlashAttention of mid-2023 (flash-attn 1.0.x). The
// 0.2.x releases MosaicGPT ran in 2022-23 are the same kernels: from v0.2.2
// (d95ee1a9) to v1.0.9 (6d48e14a) csrc/flash_attn changed by compilation
// fixes, H100 support (1b18f1b7), an optional rng_state, CUDA-graph
// capture and one forward store (45567a25), none a change of algorithm
// (git log v0.2.2..v1.0.9 -- csrc/flash_attn); no figure of 0.2.x itself
// was found.
var (
	fa1Seqs = []int64{512, 1024, 2048, 4096, 8192, 16384}
	// fa1AmpereTFLOPS are the bars above, by head_dim.
	fa1AmpereTFLOPS = map[int64][]float64{
		64:  {58, 70, 77, 87, 92, 97},
		128: {55, 62, 69, 76, 80, 83},
	}
)

// fa1AmperePeak is the dense bf16 peak the figure's A100 80GB SXM4 has,
// 312 TFLOP/s (NVIDIA A100 datasheet, "BFLOAT16 Tensor Core 312 TFLOPS").
const fa1AmperePeak = 312.0

// FA1AttentionEfficiency is FlashAttention-1 on an A100 at head_dim 128,
// causal, 8,192 tokens, the shape every other default is quoted at: 80
// TFLOP/s of 312, 0.256 (the figure above). Other GPUs of the A100's
// generation and the consumer cards take it (no figure of their own);
// Hopper takes HopperFA1AttentionEfficiency.
const FA1AttentionEfficiency = 80.0 / fa1AmperePeak

// HopperFA1AttentionEfficiency is FlashAttention-1 on Hopper (supported
// from flash-attn 1.0.x: "[Mar 2023] Support SM90 GPUs (H100)", README.md
// at v1.0.9): no Hopper figure of it is published, so Hopper's
// FlashAttention-2 rate times FlashAttention-1's share of FlashAttention-2
// on the A100 figure at the same shape (80 of 182): 0.154.
const HopperFA1AttentionEfficiency = HopperAttentionEfficiency * 80.0 / 182.0

// fa1HeadDim is FlashAttention-1's HeadDimScale point: the figure's rate
// at head_dim 64 over 128, at 8k, 92/80 = 1.15.
var fa1HeadDim = []HeadDimRate{{64, 92.0 / 80}}

// fa1TFLOPS is the figure's rate at headDim and seq: linear in log2(seq)
// between the published lengths and linear in head_dim between 64 and
// 128; outside them the nearest published figure holds.
func fa1TFLOPS(headDim, seq int64) float64 {
	at := func(hd int64) float64 {
		v := fa1AmpereTFLOPS[hd]
		switch {
		case seq <= fa1Seqs[0]:
			return v[0]
		case seq >= fa1Seqs[len(fa1Seqs)-1]:
			return v[len(v)-1]
		}
		for i := 1; i < len(fa1Seqs); i++ {
			if seq <= fa1Seqs[i] {
				x := math.Log2(float64(seq)/float64(fa1Seqs[i-1])) / math.Log2(float64(fa1Seqs[i])/float64(fa1Seqs[i-1]))
				return v[i-1] + float64(x*(v[i]-v[i-1]))
			}
		}
		return v[len(v)-1]
	}
	switch {
	case headDim <= 64:
		return at(64)
	case headDim >= 128:
		return at(128)
	}
	x := float64(headDim-64) / 64
	return at(64) + float64(x*(at(128)-at(64)))
}

// SeqLenScale is kernel's rate on gpu at seq tokens over its rate at 8,192
// (the length its default is quoted at), both at head_dim headDim:
// FlashAttention-1's figure above; 1 for every other kernel (their
// figures are taken at 8k only) and for seq or headDim ≤ 0 (unknown;
// headDim unknown is rated as 128).
func SeqLenScale(gpu string, kernel scenarios.AttentionKernel, headDim, seq int64) float64 {
	if RunsAs(gpu, kernel) != scenarios.KernelFA1 || seq <= 0 {
		return 1
	}
	if headDim <= 0 {
		headDim = 128
	}
	return fa1TFLOPS(headDim, seq) / fa1TFLOPS(headDim, 8192)
}

// AttentionSeqLen is the length each attention call of s runs over, the
// one SeqLenScale rates: model.document_len when documents are packed
// shorter than the sequence (each runs as a sequence of its own:
// documentMask), else model.seq_len.
func AttentionSeqLen(s *scenarios.Scenario) int64 {
	if d, _ := documentMask(s); d > 0 {
		return d
	}
	return s.Model.SeqLen
}
