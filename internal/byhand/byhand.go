// Package byhand works figures of the example scenarios by hand from the
// documents' formulas (docs/compute-model.md), without calling the code
// that models them, so that tests can hold the code to them. Its inputs
// are the published figures the presets cite. It is used by tests only.
package byhand

import "math"

// GEMM is docs/compute-model.md's weight-matmul time ("Time per operation
// class"), written out again rather than called: 2mnk FLOPs at peak·e
// scaled by the wave quantization of ⌈m/256⌉·⌈n/128⌉ tiles on the GPU's
// SMs (every matmul here is compute-bound, so the HBM side of the max
// never decides).
func GEMM(m, n, k, peak, e, sms float64) float64 {
	tiles := math.Ceil(m/256) * math.Ceil(n/128)
	quant := tiles / (math.Ceil(tiles/sms) * sms)
	return 2 * m * n * k / (peak * e * quant)
}

// Compute is one rank's compute in seconds, unit by unit.
type Compute struct {
	// Block is one transformer block's forward and backward; BlockBwd
	// includes the selective recompute's rerun of the attention core,
	// BlockBwdNone is the backward without checkpointing.
	BlockFwd, BlockBwd, BlockBwdNone float64
	Blocks                           int
	HeadFwd, HeadBwd                 float64
	NormFwd, NormBwd                 float64
	EmbFwd, EmbBwd                   float64
	// Optimizer is Adam's step over the rank's shard.
	Optimizer float64
}

// FullSpeed is the rank's compute at full speed: every unit's forward and
// backward and the optimizer step, with selective recompute or without
// checkpointing.
func (c Compute) FullSpeed(selective bool) float64 {
	bwd := c.BlockBwdNone
	if selective {
		bwd = c.BlockBwd
	}
	return float64(float64(c.Blocks)*(c.BlockFwd+bwd)) + c.HeadFwd + c.HeadBwd + c.NormFwd + c.NormBwd + c.EmbFwd + c.EmbBwd + c.Optimizer
}

// DefaultParams is Llama 2 7B's parameter count (scenarios/examples/
// default.yaml: embedding, 32 blocks, final norm, lm_head).
const DefaultParams = 6738415616

// Default is the compute of the default example
// (scenarios/examples/default.yaml: Llama 2 7B, s 4,096, micro-batch 1,
// flash attention, ZeRO's shard over 16 H100-80GB): Llama27B at 4,096
// tokens and FlashAttention-2's 0.35 on H100 ("FlashAttention-2 achieves
// only 35% utilization on the H100 GPU", FlashAttention-3, arXiv
// 2407.08608, abstract; typed here, not read from zero).
func Default() Compute { return Llama27B(4096, 0.35) }

// Llama27B is the compute of the default example at seq tokens a
// micro-step (micro-batch 1) and attention efficiency eAtt, worked from
// docs/compute-model.md's rules. Inputs: H100 SXM5 dense bf16 989 TFLOPS,
// HBM 3.35 TB/s, 132 SMs (scenarios/presets.go, zero.SMCount); E = 0.8 and
// 0.88 of HBM for memory-bound kernels ("Time per operation class").
func Llama27B(seq, eAtt float64) Compute {
	const (
		h, f, V, layers = 4096.0, 11008.0, 32000.0, 32
		peak, hbm, sms  = 989e12, 3350e9, 132.0
		eGEMM           = 0.8
		eHBM            = 0.88
		shards          = 16
	)
	tok := seq // s·b, b = 1
	mem := func(bytes float64) float64 { return bytes / (hbm * eHBM) }
	gemm := func(m, n, k float64) float64 { return GEMM(m, n, k, peak, eGEMM, sms) }
	// A block's matmuls as (out, in) widths: wq, wk, wv, wo (32 KV heads:
	// k and v are h wide), w1, w3, w2 ("FLOPs per operation class").
	mms := [][2]float64{{h, h}, {h, h}, {h, h}, {h, h}, {f, h}, {f, h}, {h, f}}
	var gemmFwd, gemmBwd, gemmFLOPs float64
	for _, w := range mms {
		gemmFwd += gemm(tok, w[0], w[1])
		// Backward: the input gradient t×n·n×k and the weight gradient
		// k×t·t×n, each with its own waves.
		gemmBwd += gemm(tok, w[1], w[0]) + gemm(w[1], w[0], tok)
		gemmFLOPs += float64(2 * tok * w[0] * w[1])
	}
	// Causal attention, halved: 4·t·s·h / 2; backward 2.5× (flash).
	attFLOPs := float64(4 * tok * seq * h / 2)
	att := attFLOPs / (peak * eAtt)
	// The eager Llama block's memory-bound kernels a token ("Memory-bound
	// traffic of an eager Llama block", RoPE complex, q = kv = h):
	// forward 2 RMSNorms 2·36h, RoPE 20·(q+kv), 2 residual adds 2·6h,
	// SwiGLU 10f; backward 2·92h, 20·(q+kv), 2·6h, 18h for the inputs
	// several matmuls read, 18f.
	elemFwd := tok * (2*36*h + 20*2*h + 2*6*h + 10*f)
	elemBwd := tok * (2*92*h + 20*2*h + 2*6*h + 18*h + 18*f)
	var c Compute
	c.Blocks = layers
	c.BlockFwd = gemmFwd + att + mem(elemFwd)
	c.BlockBwdNone = gemmBwd + float64(2.5*att) + mem(elemBwd)
	// Selective recompute reruns the attention core (its forward FLOPs)
	// at the forward's average rate per FLOP.
	c.BlockBwd = c.BlockBwdNone + float64(attFLOPs*c.BlockFwd)/(gemmFLOPs+attFLOPs)
	// The head: the t×h·h×V matmul and the loss's 14 B a logit (bf16
	// read, fp32 written, log_softmax's read and write); backward both
	// gradients and twice the loss's traffic.
	c.HeadFwd = gemm(tok, V, h) + mem(14*tok*V)
	c.HeadBwd = gemm(tok, h, V) + gemm(h, V, tok) + 2*mem(14*tok*V)
	// The final norm is one of the block's norms; the embedding's lookup
	// reads and writes a row, its backward zeroes V×h and moves 12·h a
	// token.
	c.NormFwd, c.NormBwd = mem(tok*36*h), mem(tok*92*h)
	c.EmbFwd, c.EmbBwd = mem(tok*4*h), mem(2*V*h+float64(tok*12*h))
	// Adam's 36 B per element of the rank's shard (seed 000's traffic)
	// at the full HBM bandwidth.
	c.Optimizer = 36 * float64(DefaultParams/shards) / hbm
	return c
}

// DefaultActivationPeak is what the default example's model (Llama 2 7B,
// s 4,096, micro-batch 1, flash attention, selective recompute) holds of
// activations at its peak, in the loss's backward, in bytes, from
// docs/memory-model.md ("Activations tensor by tensor"): every block's
// kept tensors (the eager Llama block without checkpointing but the
// attention core's log-sum-exp, which selective recompute rebuilds:
// 24·t·h + 8·t·f + 8·t), the final norm's tensors and the projection's
// input (8·t·h + 4·t), and the loss's fp32 log-probabilities and two fp32
// gradients (3·4·t·V).
func DefaultActivationPeak() int64 { return ActivationPeak(4096) }

// ActivationPeak is DefaultActivationPeak at t tokens a micro-step
// (model.seq_len t, micro-batch 1).
func ActivationPeak(t int64) int64 {
	const h, f, V, layers = 4096, 11008, 32000, 32
	block := 24*t*h + 8*t*f + 8*t
	head := 8*t*h + 4*t
	loss := 3 * 4 * t * V
	return layers*block + head + loss
}

// DefaultPeak is the default example's allocated peak per rank, in bytes:
// ZeRO-1 keeps the full bf16 parameters and gradient buffer (2P + 2P) and
// shards the fp32 master and Adam's m and v over the 16 ranks (3·4P/16),
// beside DefaultActivationPeak.
func DefaultPeak() int64 { return Peak(4096) }

// Peak is DefaultPeak at t tokens a micro-step.
func Peak(t int64) int64 {
	const P, shards = DefaultParams, 16
	return 2*P + 2*P + 3*4*P/shards + ActivationPeak(t)
}

// DefaultStage0Peak is the default example's allocated peak per rank at
// ZeRO stage 0, in bytes: nothing is sharded, so a rank keeps the bf16
// parameters and gradients (2P + 2P), the fp32 master and Adam's m and v
// (3·4P) throughout, and either the activations in backward
// (DefaultActivationPeak) or, in the optimizer step, the fp32 copy of the
// gradients it updates (4P: seed 000's count, "read the bf16 grad shard and
// write its fp32 copy"), whichever is larger: 20P.
func DefaultStage0Peak() int64 {
	const P = DefaultParams
	return 16*P + max(DefaultActivationPeak(), 4*P)
}

// H100Memory is the H100-80GB's memory as CUDA exposes it, in bytes: the
// caching allocator's "GPU 0 has a total capacity of 79.11 GiB"
// (vllm-project/vllm#27508, as scenarios/presets.go cites it), 79.11 ×
// 2^30 B, not nvidia-smi's 81,559 MiB.
const H100Memory = 7911 << 30 / 100
