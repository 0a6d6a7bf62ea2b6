package zero

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// A GPT-3 175B block (h = 12288, s = 2048, b = 1, a = 96 heads) on an H100
// (989 TFLOPS, 132 SMs, 3350 GB/s) at compute efficiency 0.5: parameters
// 12·h² + 13·h (q, k, v, o and the two MLP matrices, their biases and the
// two LayerNorms' weights and biases: Brown et al. 2020's 175B is 96 such
// blocks); forward FLOPs 24·s·h² + 2·s²·h (causal: half of Megatron's
// 4·s²·h); backward 2× the GEMMs + 2.5× the attention (FlashAttention-2).
// The forward time is the GEMMs at 0.5 of peak times the wave quantization
// (8 × 96 tiles of 256×128 on 132 SMs: 768/792; the q/k/v and fc1 GEMMs'
// 2304 and 3072 tiles quantize to the same 0.9697), plus the attention at
// FlashAttention-2's 0.35 of the H100's peak ("FlashAttention-2 achieves
// only 35% utilization on the H100 GPU": Shah et al. 2024, FlashAttention-3,
// arXiv 2407.08608, abstract), plus the memory-bound work: a GPT block's
// LayerNorm and GELU run as one kernel each, so each tensor it keeps for
// backward is written once and read once (blockElementwise), at the HBM
// roofline. It keeps, in bf16, the two LayerNorms' inputs and outputs
// (4 × 2·s·h), q, k and v (3 × 2·s·h), the attention output (2·s·h), the
// fc1 output and the GELU output (2 × 2·s·4h): 32·s·h bytes; in fp32, the
// two LayerNorms' mean and rstd (2 × 8·s) and the attention's log-sum-exp
// (4·a·s) (Korthikanti et al. 2022, arXiv 2205.05198, §4.1's 34·s·h less
// its two dropout masks, with FlashAttention's log-sum-exp in place of the
// s² scores). Full recompute adds one forward to the backward. The
// embedding is two lookups and an add: no FLOPs, 14·s·h bytes at the HBM
// roofline.
func TestCostsGPT3Block(t *testing.T) {
	const h, sq, heads = 12288, 2048, 96
	s := gpt3(1)
	costs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	b := costs[1]
	if b.Params != 12*h*h+13*h || b.FwdFLOPs != 24*sq*h*h+2*sq*sq*h || b.BwdFLOPs != 2*24*sq*h*h+5*sq*sq*h {
		t.Errorf("block: params %d, fwd %d, bwd %d FLOPs; want %d, %d, %d", b.Params, b.FwdFLOPs, b.BwdFLOPs,
			12*h*h+13*h, 24*sq*h*h+2*sq*sq*h, 2*24*sq*h*h+5*sq*sq*h)
	}
	hbm := float64(s.Cluster.HBMBandwidth) * DefaultHBMEfficiency
	kept := 32*sq*h + 2*8*sq + 4*heads*sq
	want := 24*sq*h*h/(989e12*0.5*768/792) + 2*sq*sq*h/(989e12*0.35) + 2*float64(kept)/hbm
	if f := b.Fwd.Seconds(); math.Abs(f-want) > 2e-12 {
		t.Errorf("block forward %v, want %.9fs: GEMMs, attention at 0.35 and 2 × %d kept bytes on HBM", b.Fwd, want, kept)
	}
	// Its lookup reads and writes a bf16 row a token, 4·s·h; the gpt
	// preset's learned positions (seq_len rows) a second lookup, 4·s·h,
	// and the add, which reads both and writes the sum, 6·s·h
	// (embeddingBytes, positionBytes).
	look := (4 + 4 + 6) * sq * h / hbm
	if e := costs[0]; e.FwdFLOPs != 0 || math.Abs(e.Fwd.Seconds()-look) > 1e-12 {
		t.Errorf("embedding forward %d FLOPs, %v; want none, %.9fs", e.FwdFLOPs, e.Fwd, look)
	}
	// The tied output projection runs on the last unit, once.
	if head := costs[len(costs)-1]; head.FwdFLOPs != 2*sq*h*50257 {
		t.Errorf("head forward FLOPs %d, want 2·s·h·V = %d", head.FwdFLOPs, 2*sq*h*50257)
	}
	s.Training.Recompute = "full"
	full, _ := Costs(s)
	if d := full[1].Bwd - b.Bwd - b.Fwd; d < -2 || d > 2 {
		t.Errorf("full recompute backward %v, want %v + one forward %v", full[1].Bwd, b.Bwd, b.Fwd)
	}
	costs = full
	// Explicit times win.
	s.Model.LayerList[1].Fwd, s.Model.LayerList[1].Bwd = 7*units.Microsecond, 9*units.Microsecond
	costs, _ = Costs(s)
	if costs[1].Fwd != 7*units.Microsecond || costs[1].Bwd != 9*units.Microsecond {
		t.Errorf("explicit times ignored: %v %v", costs[1].Fwd, costs[1].Bwd)
	}
	// The optimizer reads and writes 36 B per shard element over HBM:
	// 1e9 elements at 3350 GB/s = 36e9/3350e9 s = 10,746,268,657 ps (rounded up).
	d, err := OptimizerTime(s, 1_000_000_000)
	if err != nil || d != 10_746_268_657 {
		t.Errorf("optimizer time %d ps (%v), want 10746268657", d, err)
	}
}

// Issue 13: 4·b·s² was multiplied before the overflow check; at the
// largest seq_len (2^24) and micro_batch 2^20 it wraps to 0 (2^70 mod 2^64)
// and the attention FLOPs vanished from a run that "succeeded".
func TestAttentionFLOPsOverflowIsAnError(t *testing.T) {
	s, err := scenarios.Load("big.yaml", []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 1, gpu: H100-80GB}
model: {kind: transformer, arch: llama, hidden: 64, ffn: 64, heads: 1, layers: 1, vocab: 8, seq_len: 16777216}
parallelism: {dp: 1, zero_stage: 0}
training: {micro_batch: 1048576}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Costs(s); err == nil || !strings.Contains(err.Error(), "attention FLOPs") {
		t.Errorf("error %v, want an attention FLOPs overflow", err)
	}
}

// Issue 13: which units are transformer blocks was decided twice — memory
// by name or most common size, zero by kind and size — and the two
// disagreed on an explicit layer list whose embedding is ≥ 4h² ("wte"):
// zero gave it attention FLOPs, memory no activations. The scenario now
// marks the blocks once (Layer.Block); the units with activations are
// exactly the units with attention FLOPs.
func TestBlocksDecidedOnce(t *testing.T) {
	s, err := scenarios.Load("list.yaml", []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 1, gpu: H100-80GB}
model:
  kind: transformer
  hidden: 64
  heads: 4
  seq_len: 32
  layers: 2
  layer_list:
    - {name: wte, params: 20000}
    - {name: h.0, params: 50000}
    - {name: h.1, params: 50000}
    - {name: ln_f, params: 128}
parallelism: {dp: 1, zero_stage: 0}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := s.Training.MicroBatch * s.Model.SeqLen
	for u, c := range costs {
		attention := c.FwdFLOPs > 2*c.Params*tokens
		activations := rep.Units[u].Activation > 0
		if attention != activations {
			t.Errorf("unit %s: attention FLOPs %v, activations %v", c.Name, attention, activations)
		}
	}
	if rep.Units[1].Activation == 0 || rep.Units[0].Activation != 0 {
		t.Errorf("blocks are h.0 and h.1: activations %d, %d", rep.Units[0].Activation, rep.Units[1].Activation)
	}
}

// Forward FLOPs of 7e18 fit in int64 but 2× or 3× them do not: the backward
// multiply must fail rather than wrap (it wrapped to a step of 19,319 s
// instead of 56,623 s under full recompute).
func TestCostsBackwardOverflow(t *testing.T) {
	for _, rc := range []scenarios.Recompute{scenarios.RecomputeNone, scenarios.RecomputeFull} {
		s := gpt3(1)
		s.Training.Recompute = rc
		s.Model.LayerList[1].FwdFLOPs = 7e18
		if costs, err := Costs(s); err == nil {
			t.Errorf("recompute %q: fwd 7e18 FLOPs gave backward %d FLOPs, %v; want an overflow error", rc, costs[1].BwdFLOPs, costs[1].Bwd)
		}
	}
	// 3e18 × 3 = 9e18 still fits.
	s := gpt3(1)
	s.Training.Recompute = scenarios.RecomputeFull
	s.Model.LayerList[1].FwdFLOPs = 3e18
	costs, err := Costs(s)
	if err != nil || costs[1].BwdFLOPs != 9e18 {
		t.Errorf("fwd 3e18 full recompute: bwd %v, %v; want 9e18", costs, err)
	}
}

// TestOptimizerBytesPerElem holds each training.optimizer_impl to its
// kernel-by-kernel count (OptimizerBytesPerElem's comment cites them):
// fp32 p, g, m, v, each distinct tensor read once per kernel.
func TestOptimizerBytesPerElem(t *testing.T) {
	const fp32, master = scenarios.ShardFP32, scenarios.DType("")
	for _, c := range []struct {
		impl  scenarios.OptimizerImpl
		wd    float64
		clip  scenarios.GradClip
		shard scenarios.DType
		want  int64
	}{
		{"", 0, "", master, 36},                         // seed 000: 2 + 4 + 16 + 12 + 2
		{scenarios.OptimizerSeed, 0.1, "", master, 36},  // seed's count has no weight-decay pass
		{scenarios.OptimizerFused, 0.1, "", fp32, 28},   // read p, g, m, v; write p, m, v
		{scenarios.OptimizerForeach, 0, "", fp32, 72},   // lerp 12, mul 8, addcmul 12, sqrt 8, div 8, add 8, addcdiv 16
		{scenarios.OptimizerForeach, 0.1, "", fp32, 80}, // + _foreach_mul_(p) for weight decay, read 4 write 4
		{scenarios.OptimizerComposer, 0, "", fp32, 80},  // mul 8 + add 12 in place of lerp 12
		{scenarios.OptimizerComposer, 0.1, "", fp32, 88},
		{scenarios.OptimizerComposer, 0, scenarios.GradClipNorm, fp32, 92}, // + norm read 4, scale 8
		{"", 0, scenarios.GradClipNorm, master, 48},
		{scenarios.OptimizerForeach, 0, scenarios.GradClipNone, fp32, 72},
		// Beside a separate fp32 master (DeepSpeed): flatten 2 + 2, cast
		// 2 + 4, copy back 4 + 2 around the fused update's 28.
		{scenarios.OptimizerFused, 0.1, "", master, 44},
		{scenarios.OptimizerFused, 0.1, scenarios.GradClipNorm, master, 56},
	} {
		s := scenarios.Scenario{Training: scenarios.Training{OptimizerImpl: c.impl, WeightDecay: c.wd, GradClip: c.clip, ShardDType: c.shard}}
		s.Parallelism.Stage = 3
		if got := OptimizerBytesPerElem(&s); got != c.want {
			t.Errorf("%q, weight decay %g, clip %q, shard %q: %d B per element, want %d", c.impl, c.wd, c.clip, c.shard, got, c.want)
		}
	}
	// DeepSpeed's ZeRO-3 step: isinf and isnan of the bf16 gradient
	// buffer (read 2, write a bool 1, .any() reads it 1; twice: 8), the
	// fp64 norm (read 2, write 8, read 8: 18) and the fp32 unscale (read
	// 4, write 4: 8), clipping or not, beside the fused update's 28 and
	// the master's copies' 16: 78. Below stage 3, or without a set
	// implementation (the seeds' count), nothing changes.
	for _, c := range []struct {
		impl  scenarios.OptimizerImpl
		clip  scenarios.GradClip
		stage int
		want  int64
	}{
		{scenarios.OptimizerFused, scenarios.GradClipNorm, 3, 28 + 16 + 34},
		{scenarios.OptimizerFused, "", 3, 28 + 16 + 34},
		{scenarios.OptimizerFused, scenarios.GradClipNorm, 2, 28 + 16 + 12},
		{"", scenarios.GradClipNorm, 3, 36 + 12},
	} {
		s := scenarios.Scenario{Training: scenarios.Training{OptimizerImpl: c.impl, WeightDecay: 0.1, GradClip: c.clip}}
		s.Parallelism.Stage = c.stage
		s.Communication.Boundary = scenarios.BoundaryDeepSpeed
		if got := OptimizerBytesPerElem(&s); got != c.want {
			t.Errorf("deepspeed, %q, clip %q, stage %d: %d B per element, want %d", c.impl, c.clip, c.stage, got, c.want)
		}
	}
}

// TestOptimizerBytesPerElemNoMaster: under training.master_dtype none every
// tensor access of the same kernels moves a param_dtype element (bf16 2 B,
// fp32 4 B) and no master copy or gradient cast is added, so each count is
// its fp32-shard count above halved for bf16: fused 28/2, foreach 72/2 and
// 80/2, composer 88/2; an unset implementation is foreach's (torch.optim.
// AdamW's default on CUDA); clipping by norm adds its 12/2.
func TestOptimizerBytesPerElemNoMaster(t *testing.T) {
	for _, c := range []struct {
		impl  scenarios.OptimizerImpl
		wd    float64
		clip  scenarios.GradClip
		param scenarios.DType
		stage int
		want  int64
	}{
		{scenarios.OptimizerFused, 0.1, "", scenarios.BF16, 3, 14},
		{scenarios.OptimizerFused, 0.1, scenarios.GradClipNorm, scenarios.BF16, 0, 14 + 6},
		{scenarios.OptimizerForeach, 0, "", scenarios.BF16, 3, 36},
		{scenarios.OptimizerForeach, 0.1, "", scenarios.BF16, 3, 40},
		{scenarios.OptimizerComposer, 0.1, "", scenarios.BF16, 2, 44},
		{"", 0, "", scenarios.BF16, 0, 36},
		{"", 0.1, "", scenarios.FP16, 1, 40},
		{scenarios.OptimizerFused, 0, "", scenarios.FP32, 3, 28},
	} {
		s := scenarios.Scenario{Training: scenarios.Training{OptimizerImpl: c.impl, WeightDecay: c.wd, GradClip: c.clip,
			ParamDType: c.param, MasterDType: scenarios.MasterNone}}
		s.Parallelism.Stage = c.stage
		if got := OptimizerBytesPerElem(&s); got != c.want {
			t.Errorf("master none, %q, weight decay %g, clip %q, %s, stage %d: %d B per element, want %d", c.impl, c.wd, c.clip, c.param, c.stage, got, c.want)
		}
	}
}

// TestOptimizerBytesPerElemMasterBF16: under training.master_dtype bf16
// (DeepSpeed's bf16_master_weights_and_grads with bf16 optimizer states)
// every access OptimizerBytesPerElem counts in fp32 moves bf16: fused
// 14 B, the master's flatten and copy back 8 B (no cast: the gradient is
// bf16 already), DeepSpeed's ZeRO-3 passes 30 B (the unscale of a bf16
// gradient); against the fp32 master's 28 + 16 + 34 = 78 B.
func TestOptimizerBytesPerElemMasterBF16(t *testing.T) {
	for _, c := range []struct {
		impl     scenarios.OptimizerImpl
		wd       float64
		clip     scenarios.GradClip
		stage    int
		boundary scenarios.Boundary
		want     int64
	}{
		{scenarios.OptimizerFused, 0.1, scenarios.GradClipNorm, 3, scenarios.BoundaryDeepSpeed, 14 + 8 + 30},
		{scenarios.OptimizerFused, 0, "", 2, scenarios.BoundaryDeepSpeed, 14 + 8},
		{scenarios.OptimizerFused, 0, scenarios.GradClipNorm, 1, scenarios.BoundaryDeepSpeed, 14 + 8 + 6},
		{scenarios.OptimizerForeach, 0.1, "", 2, scenarios.BoundaryDeepSpeed, 36 + 4 + 8},
		{scenarios.OptimizerComposer, 0, "", 2, scenarios.BoundaryDeepSpeed, 40 + 8},
		{"", 0, "", 3, scenarios.BoundaryDeepSpeed, 2 + 2 + 8 + 6 + 2},
	} {
		for _, master := range []scenarios.DType{scenarios.FP32, scenarios.MasterBF16} {
			s := scenarios.Scenario{Training: scenarios.Training{OptimizerImpl: c.impl, WeightDecay: c.wd, GradClip: c.clip,
				ParamDType: scenarios.BF16, MasterDType: master}}
			s.Parallelism.Stage = c.stage
			s.Communication.Boundary = c.boundary
			got := OptimizerBytesPerElem(&s)
			if master == scenarios.MasterBF16 && got != c.want {
				t.Errorf("master bf16, %q, weight decay %g, clip %q, stage %d: %d B per element, want %d", c.impl, c.wd, c.clip, c.stage, got, c.want)
			}
			if master == scenarios.FP32 && got <= c.want {
				t.Errorf("master fp32, %q, stage %d: %d B per element, not above bf16's %d", c.impl, c.stage, got, c.want)
			}
		}
	}
	s := scenarios.Scenario{Training: scenarios.Training{OptimizerImpl: scenarios.OptimizerFused, ParamDType: scenarios.BF16, MasterDType: scenarios.FP32, GradClip: scenarios.GradClipNorm}}
	s.Parallelism.Stage = 3
	s.Communication.Boundary = scenarios.BoundaryDeepSpeed
	if got := OptimizerBytesPerElem(&s); got != 28+16+34 {
		t.Errorf("master fp32, fused, DeepSpeed ZeRO-3: %d B per element, want 78", got)
	}
}

// llama7bZeRO3Costs is the unit costs of Llama 2 7B at ZeRO-3 on 8
// A100-80GB at micro-batch mb, with sets: 35 units, the embedding, its 32
// blocks (num_hidden_layers 32 in meta-llama/Llama-2-7b-hf's config.json),
// the final norm and the LM head, so that the tests' loops over them
// cannot pass on an empty list.
func llama7bZeRO3Costs(t *testing.T, mb int, sets ...string) []LayerCost {
	t.Helper()
	c := docCosts(t, fmt.Sprintf(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: llama2-7b}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: %d}
`, mb), sets...)
	if len(c) != 1+32+2 {
		t.Fatalf("llama2-7b: %d units, want the embedding, 32 blocks, the final norm and the LM head", len(c))
	}
	return c
}

// docCosts is the unit costs of the scenario doc with sets.
func docCosts(t *testing.T, doc string, sets ...string) []LayerCost {
	t.Helper()
	s, err := scenarios.Load("s.yaml", []byte(doc), sets)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLoss16Traffic: under training.cross_entropy: bf16 the head's loss
// moves log_softmax's read and write of the bf16 logits, 4 B per logit,
// where the fp32 loss moves 14 (the upcast's read 2 and write 4, then
// log_softmax's 4 + 4): the head's forward is 10·t·V B shorter at the
// memory-bound rate and its backward twice that; no other unit moves.
func TestLoss16Traffic(t *testing.T) {
	load := func(sets ...string) []LayerCost { return llama7bZeRO3Costs(t, 2, sets...) }
	f32, b16 := load("training.cross_entropy=fp32"), load("training.cross_entropy=bf16")
	hbm := 2039e9 * DefaultHBMEfficiency
	const tv = 2 * 4096 * 32000 // micro-batch 2 of llama2-7b's 4,096 tokens, vocabulary 32,000
	headOnlyDelta(t, f32, b16, 10*tv/hbm, "shorter")
}

// headOnlyDelta checks that long and short list the same units, one of them
// the LM head, and that each unit's forward in long exceeds short's by
// wantF seconds and its backward by 2·wantF on the LM head, and by nothing
// on every other unit (within 2 ps); what words the difference in errors
// ("longer", "shorter"). TestLoss16Traffic and TestAutocastLossTraffic
// share it: a cross-entropy variant moves only the head's logits traffic.
func headOnlyDelta(t *testing.T, long, short []LayerCost, wantF float64, what string) {
	t.Helper()
	if len(long) != len(short) {
		t.Fatalf("%d units against %d, want the same units", len(long), len(short))
	}
	heads := 0
	for i := range long {
		var wf, wb float64
		if long[i].Name == "lm_head" {
			heads++
			wf, wb = wantF, 2*wantF
		}
		if got := (long[i].Fwd - short[i].Fwd).Seconds(); math.Abs(got-wf) > 2e-12 {
			t.Errorf("unit %s: forward %.6g s %s, want %.6g s", long[i].Name, got, what, wf)
		}
		if got := (long[i].Bwd - short[i].Bwd).Seconds(); math.Abs(got-wb) > 2e-12 {
			t.Errorf("unit %s: backward %.6g s %s, want %.6g s", long[i].Name, got, what, wb)
		}
	}
	if heads != 1 {
		t.Errorf("%d units named lm_head, want 1", heads)
	}
}

// TestFlatParamGradCopy: with training.flat_param_views (PyTorch FSDP1's
// flat parameter) every unit's backward reads and writes its unsharded
// bf16 gradient once more, 4 B per parameter at the memory-bound rate, and
// at every stage (FULL_SHARD, SHARD_GRAD_OP); the forward is unchanged.
func TestFlatParamGradCopy(t *testing.T) {
	load := func(sets ...string) []LayerCost { return llama7bZeRO3Costs(t, 1, sets...) }
	base, flat := load(), load("training.flat_param_views=true")
	hbm := 2039e9 * DefaultHBMEfficiency
	for i := range base {
		if flat[i].Fwd != base[i].Fwd {
			t.Errorf("unit %s: forward %v, want %v unchanged", base[i].Name, flat[i].Fwd, base[i].Fwd)
		}
		want := 4 * float64(base[i].Params) / hbm
		if got := (flat[i].Bwd - base[i].Bwd).Seconds(); math.Abs(got-want) > 2e-12 {
			t.Errorf("unit %s: backward grows %.6g s, want 4 B × %d params / HBM = %.6g s", base[i].Name, got, base[i].Params, want)
		}
	}
	// SHARD_GRAD_OP (stage 2) trains through the same views.
	stage2 := load("training.flat_param_views=true", "parallelism.zero_stage=2")
	base2 := load("parallelism.zero_stage=2")
	for i := range base2 {
		want := 4 * float64(base2[i].Params) / hbm
		if got := (stage2[i].Bwd - base2[i].Bwd).Seconds(); math.Abs(got-want) > 2e-12 {
			t.Errorf("unit %s at stage 2: backward grows %.6g s, want %.6g s", base2[i].Name, got, want)
		}
	}
}

// TestFSDP2CopyBytes: FSDP2's compute-stream copies (fsdp2CopyBytes) on
// Llama 2 7B over 8 A100s, each unit against the same scenario under the
// reshard boundary, which charges none: the all-gather copy-out reads and
// writes the gathered unit once per gather (2 × 2 B in bf16, 2 × 1 B for
// the blocks torchao gathers in fp8), in forward and again in backward
// unless the unit stays gathered (under fsdp2 the last block and the root's
// units: memory.KeptAcrossBoundary), and the reduce-scatter copy-in reads
// the bf16 gradient and writes the reduce dtype once per reduction (2 + 2,
// 2 + 4 under fp32), with the pre-divide's read and write of the fp32 input
// before PyTorch 2.5 (memory.fsdp2_rs_own_stream), a reduction once a step
// under grad_sync last spread over its micro-steps, with FSDP2's fp32
// accumulation between them under reduce_dtype fp32 (fsdp2AccumBytes);
// FSDP's stage 2 gathers in forward only, and FSDP1 none of this.
func TestFSDP2CopyBytes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sets      []string
		out       func(block bool) float64 // copy-out B a parameter a gather
		in        float64                  // copy-in B a parameter a micro-step
		bwdGather bool                     // resharded units gather again in backward
	}{
		{"fsdp2", nil, func(bool) float64 { return 4 }, 4, true},
		{"fsdp2 reduce fp32", []string{"training.reduce_dtype=fp32"}, func(bool) float64 { return 4 }, 6, true},
		{"fsdp2 fp8 all-gather on H100", []string{"cluster.gpu=H100-80GB", "training.fp8=torchao"}, func(block bool) float64 {
			if block {
				return 2
			}
			return 4
		}, 4, true},
		{"fsdp2 stage 2", []string{"parallelism.zero_stage=2"}, func(bool) float64 { return 4 }, 4, false},
		// No mixed precision: the unit gathers and reduces fp32, 2 × 4 B
		// copied out, 4 + 4 B copied in.
		{"fsdp2 fp32 params", []string{"training.param_dtype=fp32"}, func(bool) float64 { return 8 }, 8, true},
		// grad_sync last at grad_accum 1: the one micro-step reduces, with
		// no accumulation before it (fsdp2AccumBytes is 0 below 2).
		{"fsdp2 grad_sync last, GA 1, reduce fp32", []string{"training.grad_sync=last", "training.reduce_dtype=fp32"}, func(bool) float64 { return 4 }, 6, true},
		// Stage 3 reduces every micro-step (grad_sync every, its
		// default): a copy-in each, 4 B a parameter a micro-step.
		{"fsdp2 GA 4", []string{"training.grad_accum=4"}, func(bool) float64 { return 4 }, 4, true},
		{"fsdp2 grad_sync last, GA 4", []string{"training.grad_accum=4", "training.grad_sync=last"}, func(bool) float64 { return 4 }, 1, true},
		// The first micro-step's upcast (2 + 4), three adds into the fp32
		// sum (4 + 2 + 4 each) and the last one's copy-in from it (4 + 4):
		// 44 B a step, 11 a micro-step.
		{"fsdp2 grad_sync last, GA 4, reduce fp32", []string{"training.grad_accum=4", "training.grad_sync=last", "training.reduce_dtype=fp32"}, func(bool) float64 { return 4 }, 11, true},
		{"fsdp2 before PyTorch 2.5, reduce fp32", []string{"training.reduce_dtype=fp32", "memory.fsdp2_rs_own_stream=true"}, func(bool) float64 { return 4 }, 6 + 8, true},
		// One rank: _get_gradient_divide_factors' predivide factor is 1
		// there and _div_if_needed divides only by a factor above 1
		// (_fsdp_collectives.py at 01d66d21), so no pre-divide pass.
		{"fsdp2 before PyTorch 2.5, reduce fp32, one GPU", []string{"training.reduce_dtype=fp32", "memory.fsdp2_rs_own_stream=true", "parallelism.dp=1", "cluster.gpus_per_node=1"}, func(bool) float64 { return 4 }, 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hbm := 2039e9 * DefaultHBMEfficiency // A100 SXM4 80GB
			if slices.Contains(tc.sets, "cluster.gpu=H100-80GB") {
				hbm = 3350e9 * DefaultHBMEfficiency // H100 SXM5
			}
			base := llama7bZeRO3Costs(t, 1, append([]string{"communication.boundary=reshard"}, tc.sets...)...)
			got := llama7bZeRO3Costs(t, 1, append([]string{"communication.boundary=fsdp2"}, tc.sets...)...)
			lastBlock := len(base) - 3 // embedding, 32 blocks, final_norm, lm_head
			for i := range base {
				block := i > 0 && i <= lastBlock
				p := float64(base[i].Params)
				wantF := tc.out(block) * p / hbm
				wantB := tc.in * p / hbm
				if tc.bwdGather && block && i != lastBlock {
					wantB += wantF
				}
				if d := (got[i].Fwd - base[i].Fwd).Seconds(); math.Abs(d-wantF) > 2e-12 {
					t.Errorf("unit %s: forward grows %.6g s, want %.6g s", base[i].Name, d, wantF)
				}
				if d := (got[i].Bwd - base[i].Bwd).Seconds(); math.Abs(d-wantB) > 2e-12 {
					t.Errorf("unit %s: backward grows %.6g s, want %.6g s", base[i].Name, d, wantB)
				}
			}
		})
	}
	base := llama7bZeRO3Costs(t, 1, "communication.boundary=reshard")
	fsdp1 := llama7bZeRO3Costs(t, 1, "communication.boundary=fsdp1")
	for i := range base {
		if base[i].Fwd != fsdp1[i].Fwd || base[i].Bwd != fsdp1[i].Bwd {
			t.Errorf("unit %s under fsdp1: %v/%v, want %v/%v (no FSDP2 copies)", base[i].Name, fsdp1[i].Fwd, fsdp1[i].Bwd, base[i].Fwd, base[i].Bwd)
		}
	}
}

// TestFSDP2CopyBytesExpertParallel: under expert parallelism each rank
// gathers and reduces only its 1/ep of the routed experts (torchtitan
// shards the experts over the dp_shard_mod_ep mesh, as memory holds
// them), so the all-gather copy-out of the expert unit is 2 × 2 B (bf16
// read and write) × its 196,608 parameters / ep 4 = 196,608 B a gather,
// not 786,432 B; the dense units copy all of theirs (4 B a parameter).
// The growth is measured against the reshard boundary, which charges no
// copy, at H100 SXM5's 3,350 GB/s (presets.go) × DefaultHBMEfficiency.
func TestFSDP2CopyBytesExpertParallel(t *testing.T) {
	const doc = "version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 1\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16}}\n  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 3, ep: 4}\n"
	costs := func(boundary string, sets ...string) []LayerCost {
		return docCosts(t, doc, append([]string{"communication.boundary=" + boundary}, sets...)...)
	}
	base, got := costs("reshard"), costs("fsdp2")
	if len(base) != 4 || len(got) != 4 {
		t.Fatalf("%d and %d units, want the model's 4", len(base), len(got))
	}
	// Under full recompute the copies do not run again: FSDP2 gathers a
	// unit once in its backward (pre_backward's unshard) and the
	// checkpointed forward reruns on those gathered parameters, so the
	// backward grows by what it grows without recompute.
	baseR, gotR := costs("reshard", "training.recompute=full"), costs("fsdp2", "training.recompute=full")
	for i := range base {
		d, dR := (got[i].Bwd - base[i].Bwd).Seconds(), (gotR[i].Bwd - baseR[i].Bwd).Seconds()
		if math.Abs(dR-d) > 2e-12 {
			t.Errorf("unit %s: under recompute full the backward grows %.6g s, want %.6g s as without it", base[i].Name, dR, d)
		}
	}
	hbm := 3350e9 * DefaultHBMEfficiency
	want := map[string]float64{"embedding": 4 * 16384, "block.0": 4 * 16640, "experts.0": 4 * 196608 / 4, "lm_head": 4 * 16384}
	for i := range base {
		w, ok := want[base[i].Name]
		if !ok {
			t.Fatalf("unit %s: not in the test's model", base[i].Name)
		}
		if d := (got[i].Fwd - base[i].Fwd).Seconds(); math.Abs(d-w/hbm) > 2e-12 {
			t.Errorf("unit %s: forward grows %.6g s (%.0f B at HBM speed), want %.0f B = %.6g s", base[i].Name, d, d*hbm, w, w/hbm)
		}
	}
}

// TestFSDPCopiesOwnFLOPs: FSDP's compute-stream copies move a unit's
// parameters, not its FLOPs, so a unit with the scenario's own fwd_flops
// pays them as any other; only a direction whose time the scenario gives
// (fwd, bwd) is taken whole. Llama-style toy on 4 H100s at ZeRO-3, each
// unit against the reshard boundary (no copies), at H100 SXM5's 3,350 GB/s
// (presets.go) × DefaultHBMEfficiency. block.0 (fwd_flops, not the last
// block, so resharded after forward) under fsdp2: forward 2 × 2 B (the
// bf16 copy-out) × 16,640 = 66,560 B; backward the copy-out again and the
// copy-in (2 + 2 B), 133,120 B. block.1 (its own fwd, the last block,
// kept across the boundary: memory.KeptAcrossBoundary): forward unchanged,
// backward the copy-in only, 66,560 B. Under FSDP1's flat parameter
// (training.flat_param_views) both blocks' backward grows by the split's
// copy, 2 × 2 B a parameter, and no forward moves.
func TestFSDPCopiesOwnFLOPs(t *testing.T) {
	const doc = "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 2\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, fwd_flops: 1000000000, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16, ffn: 128}}\n  - {name: block.1, params: 16640, fwd: 1ms, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16, ffn: 128}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 3}\n"
	hbm := 3350e9 * DefaultHBMEfficiency
	for _, tc := range []struct {
		name       string
		base, sets []string
		want       map[string][2]float64 // forward, backward growth in B
	}{
		{"fsdp2", []string{"communication.boundary=reshard"}, []string{"communication.boundary=fsdp2"},
			map[string][2]float64{"block.0": {(2 + 2) * 16640, (2+2)*16640 + (2+2)*16640}, "block.1": {0, (2 + 2) * 16640}}},
		{"fsdp1 flat_param_views", []string{"communication.boundary=fsdp1"}, []string{"communication.boundary=fsdp1", "training.flat_param_views=true"},
			map[string][2]float64{"block.0": {0, (2 + 2) * 16640}, "block.1": {0, (2 + 2) * 16640}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, got := docCosts(t, doc, tc.base...), docCosts(t, doc, tc.sets...)
			checked := 0
			for i := range base {
				w, ok := tc.want[base[i].Name]
				if !ok {
					continue
				}
				checked++
				for k, d := range []float64{(got[i].Fwd - base[i].Fwd).Seconds(), (got[i].Bwd - base[i].Bwd).Seconds()} {
					if math.Abs(d-w[k]/hbm) > 2e-12 {
						t.Errorf("unit %s: %s grows %.6g s (%.0f B at HBM speed), want %.0f B = %.6g s",
							base[i].Name, [2]string{"forward", "backward"}[k], d, d*hbm, w[k], w[k]/hbm)
					}
				}
			}
			if checked != len(tc.want) {
				t.Fatalf("checked %d units, want the %d the table names", checked, len(tc.want))
			}
			if base[2].Fwd != units.Millisecond || got[2].Fwd != units.Millisecond {
				t.Errorf("block.1's own forward: %v and %v, want 1ms both", base[2].Fwd, got[2].Fwd)
			}
		})
	}
	// A unit of routed experts, left to the FLOP count, goes through the
	// flat parameter's split too: 2 × 2 B × 196,608 more in backward
	// (TestFSDP2CopyBytesExpertParallel's model at ep 1).
	moe := strings.Replace(doc, "layers: 2", "layers: 1", 1)
	moe = strings.Replace(moe, "  - {name: block.1, params: 16640, fwd: 1ms, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16, ffn: 128}}\n",
		"  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128}}\n", 1)
	base, got := docCosts(t, moe, "communication.boundary=fsdp1"), docCosts(t, moe, "communication.boundary=fsdp1", "training.flat_param_views=true")
	if base[2].Name != "experts.0" {
		t.Fatalf("unit 2 is %s, want experts.0", base[2].Name)
	}
	if d, w := (got[2].Bwd - base[2].Bwd).Seconds(), 4*196608/hbm; math.Abs(d-w) > 2e-12 {
		t.Errorf("experts.0 under flat_param_views: backward grows %.6g s, want 4 B × 196,608 = %.6g s", d, w)
	}
	// At ep 4 each rank holds, gathers and computes gradients for 2 of the
	// 8 experts (the memory model's units: memory.expertParallel), so its
	// flat parameter and the split's copy are a quarter: 4 B × 196,608 / 4;
	// the dense units are unchanged.
	baseEP, gotEP := docCosts(t, moe, "communication.boundary=fsdp1", "parallelism.ep=4"), docCosts(t, moe, "communication.boundary=fsdp1", "training.flat_param_views=true", "parallelism.ep=4")
	for i := range baseEP {
		w := 4 * float64(baseEP[i].Params) / hbm
		if baseEP[i].Name == "experts.0" {
			w = 4 * 196608 / 4 / hbm
		}
		if d := (gotEP[i].Bwd - baseEP[i].Bwd).Seconds(); math.Abs(d-w) > 2e-12 {
			t.Errorf("unit %s under flat_param_views at ep 4: backward grows %.6g s (%.0f B at HBM speed), want %.0f B", baseEP[i].Name, d, d*hbm, w*hbm)
		}
	}
}

// TestFSDPCopiesWithoutDims: models without transformer dims (kind: mlp, a
// bare model.params) run FSDP's compute-stream copies as any other, by
// the same rule (fsdpCopies). An MLP of three units (100,000, 200,000 and
// 300,000 bf16 parameters, no blocks, so FSDP wraps every unit and only
// the last stays gathered across the boundary: memory.KeptAcrossBoundary)
// on 4 H100s at ZeRO-3, against the reshard boundary (no copies): under
// fsdp2 each forward grows by the copy-out, 2 × 2 B a parameter, and each
// backward by the copy-in, 2 + 2 B, plus the copy-out again for the two
// units resharded after forward; under FSDP1's flat parameter
// (training.flat_param_views) each backward grows by 4 B a parameter. The
// copies are class Other in ComputeClasses: the MLP's Other is the sum of
// all of them, 4 B × (forward 600,000 + backward 600,000 + 300,000)
// parameters under fsdp2. A bare 1e9-parameter model under the flat
// parameter grows its backward by 4 B × 1e9 in all.
func TestFSDPCopiesWithoutDims(t *testing.T) {
	const mlp = "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: H100-80GB}\nmodel:\n  kind: mlp\n  layer_list:\n" +
		"  - {name: l0, params: 100000}\n  - {name: l1, params: 200000}\n  - {name: l2, params: 300000}\n" +
		"parallelism: {dp: 4, zero_stage: 3}\n"
	hbm := 3350e9 * DefaultHBMEfficiency // H100 SXM5 (presets.go)
	params := []float64{100000, 200000, 300000}
	for _, tc := range []struct {
		name       string
		base, sets []string
		fwd, bwd   func(u int) float64 // growth in B
	}{
		{"fsdp2", []string{"communication.boundary=reshard"}, []string{"communication.boundary=fsdp2"},
			func(u int) float64 { return 4 * params[u] },
			func(u int) float64 {
				if u == 2 {
					return 4 * params[u]
				}
				return 8 * params[u]
			}},
		{"fsdp1 flat_param_views", []string{"communication.boundary=fsdp1"}, []string{"communication.boundary=fsdp1", "training.flat_param_views=true"},
			func(int) float64 { return 0 }, func(u int) float64 { return 4 * params[u] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, got := docCosts(t, mlp, tc.base...), docCosts(t, mlp, tc.sets...)
			if len(base) != 3 {
				t.Fatalf("%d units, want 3", len(base))
			}
			for u := range base {
				for k, d := range []float64{(got[u].Fwd - base[u].Fwd).Seconds(), (got[u].Bwd - base[u].Bwd).Seconds()} {
					w := [2]float64{tc.fwd(u), tc.bwd(u)}[k]
					if math.Abs(d-w/hbm) > 2e-12 {
						t.Errorf("unit %s: %s grows %.6g s (%.0f B at HBM speed), want %.0f B = %.6g s",
							base[u].Name, [2]string{"forward", "backward"}[k], d, d*hbm, w, w/hbm)
					}
				}
			}
		})
	}
	s, err := scenarios.Load("s.yaml", []byte(mlp), []string{"communication.boundary=fsdp2"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ComputeClasses(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 * (600000 + 600000 + 300000) / hbm; math.Abs(c.Other-want) > 1e-11 {
		t.Errorf("ComputeClasses under fsdp2: Other %.6g s, want the copies' %.6g s", c.Other, want)
	}
	if c.Separate || c.Attention != 0 {
		t.Errorf("ComputeClasses under fsdp2: Separate %v, Attention %.6g s; want no attention class for an MLP", c.Separate, c.Attention)
	}
	const bare = "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: H100-80GB}\nmodel: {params: 1B, seq_len: 4096}\nparallelism: {dp: 4, zero_stage: 3}\ncommunication: {boundary: fsdp1}\n"
	base, got := docCosts(t, bare), docCosts(t, bare, "training.flat_param_views=true")
	var d, n float64
	for u := range base {
		if got[u].Fwd != base[u].Fwd {
			t.Errorf("bare model unit %s: forward %v, want %v unchanged", base[u].Name, got[u].Fwd, base[u].Fwd)
		}
		d += (got[u].Bwd - base[u].Bwd).Seconds()
		n += float64(base[u].Params)
	}
	if n != 1e9 {
		t.Fatalf("bare model: %.0f params over its units, want 1e9", n)
	}
	if w := 4 * 1e9 / hbm; math.Abs(d-w) > 1e-9 {
		t.Errorf("bare model under flat_param_views: backward grows %.6g s in all, want 4 B × 1e9 = %.6g s", d, w)
	}
}

// TestOptimizerBytesPerElemParamRemainders: under
// training.store_param_remainders (zero_stage 1, bf16) one kernel loads the
// bf16 param 2, its int16 remainder 2, m 4, v 4 and the gradient (bf16 2,
// or Megatron's fp32 main_grad 4) and stores the remainder 2, m 4, v 4
// and the bf16 param 2 (Apex's DistAdamWithParamRemaindersFunctor): 26 or
// 28 B, where the fp32 master's count is seed 000's 36 or 30; clipping
// adds its 12 as it does there. An implementation the loader takes (fused)
// changes nothing; at another stage (a stage comparison) the whole
// master's count returns.
func TestOptimizerBytesPerElemParamRemainders(t *testing.T) {
	for _, c := range []struct {
		reduce scenarios.ReduceDType
		impl   scenarios.OptimizerImpl
		clip   scenarios.GradClip
		rem    bool
		stage  int
		want   int64
	}{
		{scenarios.ReduceParamDType, "", "", false, 1, 36},
		{scenarios.ReduceParamDType, "", "", true, 1, 2 + 2 + 4 + 4 + 2 + 2 + 4 + 4 + 2},
		{scenarios.ReduceFP32, "", "", false, 1, 30},
		{scenarios.ReduceFP32, "", "", true, 1, 2 + 2 + 4 + 4 + 4 + 2 + 4 + 4 + 2},
		{scenarios.ReduceFP32, "", scenarios.GradClipNorm, true, 1, 28 + 12},
		{scenarios.ReduceFP32, scenarios.OptimizerFused, scenarios.GradClipNorm, true, 1, 28 + 12},
		{scenarios.ReduceParamDType, "", "", true, 2, 36},
	} {
		s := scenarios.Scenario{Training: scenarios.Training{ParamDType: scenarios.BF16, ReduceDType: c.reduce, OptimizerImpl: c.impl, GradClip: c.clip, StoreParamRemainders: c.rem}}
		s.Parallelism.Stage = c.stage
		if got := OptimizerBytesPerElem(&s); got != c.want {
			t.Errorf("reduce %s, impl %q, clip %q, remainders %v, stage %d: %d B per element, want %d", c.reduce, c.impl, c.clip, c.rem, c.stage, got, c.want)
		}
	}
}
