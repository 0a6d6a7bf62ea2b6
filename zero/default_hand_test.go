package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/units"
)

// handGEMM is docs/compute-model.md's weight-matmul time ("Time per
// operation class"), written out again here rather than called: 2mnk FLOPs
// at peak·E scaled by the wave quantization of ⌈m/256⌉·⌈n/128⌉ tiles on the
// GPU's SMs (every matmul of the default example is compute-bound, so the
// HBM side of the max never decides).
func handGEMM(m, n, k, peak, e, sms float64) float64 {
	tiles := math.Ceil(m/256) * math.Ceil(n/128)
	quant := tiles / (math.Ceil(tiles/sms) * sms)
	return 2 * m * n * k / (peak * e * quant)
}

// TestDefaultComputeByHand works the compute of the default example's step
// (scenarios/examples/default.yaml: Llama 2 7B, s 4,096, micro-batch 1,
// selective recompute, flash attention, 16 H100-80GB, ZeRO-1) by hand from
// docs/compute-model.md's rules, the inputs being the published figures
// the presets cite: H100 SXM5 dense bf16 989 TFLOPS, HBM 3.35 TB/s, 132 SMs
// (scenarios/presets.go, SMCount); E = 0.8, FlashAttention-2's 0.35 on H100
// and 0.88 of HBM for memory-bound kernels ("Time per operation class").
// It holds every unit's forward and backward, and the rank's compute at
// full speed (RankStats.Alone: the "356.506ms at full speed" of `zerosim
// run`'s step line). What the step adds to that (overlap interference, the
// exposed reduce-scatter tail and the ZeRO-1 all-gather under NCCL's cost
// model) is not derived here; the step's figure itself is held as real
// output by the README's console block (TestREADMEExamples).
func TestDefaultComputeByHand(t *testing.T) {
	const (
		h, f, V, layers = 4096.0, 11008.0, 32000.0, 32
		tok             = 4096.0 // s·b
		peak, hbm, sms  = 989e12, 3350e9, 132.0
		eGEMM, eAtt     = 0.8, 0.35
		eHBM            = 0.88
		P               = 6738415616 // default.yaml's comment; TestRunDefault
		dp              = 16
	)
	mem := func(bytes float64) float64 { return bytes / (hbm * eHBM) }
	gemm := func(m, n, k float64) float64 { return handGEMM(m, n, k, peak, eGEMM, sms) }
	// A block's matmuls as (out, in) widths: wq, wk, wv, wo (32 KV heads:
	// k and v are h wide), w1, w3, w2 ("FLOPs per operation class").
	mms := [][2]float64{{h, h}, {h, h}, {h, h}, {h, h}, {f, h}, {f, h}, {h, f}}
	var gemmFwd, gemmBwd, gemmFLOPs float64
	for _, w := range mms {
		gemmFwd += gemm(tok, w[0], w[1])
		// Backward: the input gradient t×n·n×k and the weight gradient
		// k×t·t×n, each with its own waves.
		gemmBwd += gemm(tok, w[1], w[0]) + gemm(w[1], w[0], tok)
		gemmFLOPs += 2 * tok * w[0] * w[1]
	}
	// Causal attention, halved: 4·t·s·h / 2; backward 2.5× (flash).
	attFLOPs := 4 * tok * tok * h / 2
	att := attFLOPs / (peak * eAtt)
	// The eager Llama block's memory-bound kernels a token ("Memory-bound
	// traffic of an eager Llama block", RoPE complex, q = kv = h):
	// forward 2 RMSNorms 2·36h, RoPE 20·(q+kv), 2 residual adds 2·6h,
	// SwiGLU 10f; backward 2·92h, 20·(q+kv), 2·6h, 18h for the inputs
	// several matmuls read, 18f.
	elemFwd := tok * (2*36*h + 20*2*h + 2*6*h + 10*f)
	elemBwd := tok * (2*92*h + 20*2*h + 2*6*h + 18*h + 18*f)
	blockFwd := gemmFwd + att + mem(elemFwd)
	// Selective recompute reruns the attention core (its forward FLOPs)
	// at the forward's average rate per FLOP.
	blockBwd := gemmBwd + 2.5*att + mem(elemBwd) + attFLOPs*blockFwd/(gemmFLOPs+attFLOPs)
	// The head: the t×h·h×V matmul and the loss's 14 B a logit (bf16
	// read, fp32 written, log_softmax's read and write); backward both
	// gradients and twice the loss's traffic.
	headFwd := gemm(tok, V, h) + mem(14*tok*V)
	headBwd := gemm(tok, h, V) + gemm(h, V, tok) + 2*mem(14*tok*V)
	// The final norm is one of the block's norms; the embedding's lookup
	// reads and writes a row, its backward zeroes V×h and moves 12·h a
	// token.
	normFwd, normBwd := mem(tok*36*h), mem(tok*92*h)
	embFwd, embBwd := mem(tok*4*h), mem(2*V*h+tok*12*h)
	// Adam's 36 B per element of the rank's shard (seed 000's traffic:
	// bytesPerOptimizerElem) at the full HBM bandwidth.
	optimizer := 36 * float64(P/dp) / hbm

	ps := func(sec float64) units.Duration { return units.Duration(math.Round(sec * 1e12)) }
	want := map[string][2]float64{"block.0": {blockFwd, blockBwd}, "block.31": {blockFwd, blockBwd}, "lm_head": {headFwd, headBwd},
		"final_norm": {normFwd, normBwd}, "embedding": {embFwd, embBwd}}
	s := example(t, "default")
	costs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range costs {
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		delete(want, c.Name)
		for i, got := range []units.Duration{c.Fwd, c.Bwd} {
			if d := got - ps(w[i]); d < -1 || d > 1 {
				t.Errorf("%s %s: %v, by hand %v (%d ps apart)", c.Name, []string{"forward", "backward"}[i], got, ps(w[i]), d)
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("units missing from Costs: %v", want)
	}
	full := layers*(blockFwd+blockBwd) + headFwd + headBwd + normFwd + normBwd + embFwd + embBwd + optimizer
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// At most a picosecond of rounding per task: 2·35 units and the step.
	if got, d := res.Ranks[0].Alone, res.Ranks[0].Alone-ps(full); d < -71 || d > 71 {
		t.Errorf("rank 0's compute at full speed %v, by hand %v (%d ps apart)", got, ps(full), d)
	}
	golden.CheckQuotes(t, "../README.md", "TestDefaultComputeByHand (the default example's compute worked by hand)",
		"; "+ps(full).String()+" at full speed)")
}
