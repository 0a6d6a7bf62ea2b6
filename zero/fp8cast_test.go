package zero

import (
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFP8CastBytes holds the fp8 recipes' cast traffic to hand counts from
// the kernels FP8CastRuleOf cites, per micro-batch, on two blocks:
//
// Qwen3-30B-A3B's attention half (t = 4,096 tokens, h = 2,048, q = 32·128
// = 4,096, kv = 4·128 = 512) under Megatron's TE modules: the qkv
// LayerNormLinear's input is quantized by the norm, the proj input
// (t×q) by its own kernel; backward quantizes the qkv output gradient
// (t×(q + 2kv)) and the proj's (t×h); the weights h·(q + 2kv) + q·h =
// 18,874,368 once a step.
//   - te on an H100: the norm's transpose 2·t·h = 16,777,216, cast_transpose
//     4·t·q = 67,108,864: forward 83,886,080; backward 4·t·5,120 + 4·t·2,048
//     = 117,440,512; the weights 4·18,874,368 = 75,497,472 a step.
//   - te_current: the fused norm's cast 4·t·h, amax + cast 6·t·q: forward
//     134,217,728; backward 6·t·7,168 = 176,160,768; weights 113,246,208.
//   - te on a B200 (no transposes): nothing added by the norm, 3·t·q =
//     50,331,648; backward 3·t·7,168 = 88,080,384; weights 56,623,104.
//
// Llama-3.1-8B's block (t = 2·8,192, h = q = 4,096, kv = 1,024, f =
// 14,336; weights W = 218,103,808) with separate linears:
//   - torchao compiled: one cast per distinct input (the attention norm's
//     and FFN norm's outputs, the attention output, the SwiGLU product),
//     amax fused: 4·t·(h + q + h + f) = 1,744,830,464, plus the weights'
//     amax and two casts every micro-batch, 8·W = 1,744,830,464: forward
//     3,489,660,928; backward every linear's output gradient,
//     4·t·(q + 2kv + h + 2f + h) = 2,818,572,288.
//   - torchao eager (TestTorchAOEagerLinear): each linear casts its input
//     and its weight at 33 B an element, 33·(t·(3h + q + 2h + f) + W) =
//     33·855,638,016 = 28,236,054,528; backward the output gradient twice
//     and its transposed copy, 68·t·43,008 = 47,915,728,896, the input
//     again and its copy, 35·t·38,912 = 22,313,697,280, and the fp8
//     weight's copy, 2·W = 436,207,616: 70,665,633,792.
//   - te without Megatron (te.Linear per nn.Linear, called without
//     is_first_microbatch, so the weights are cast every forward):
//     4·t·(3h + q + 2h + f) + 4·W = 2,550,136,832 + 872,415,232 =
//     3,422,552,064; backward 4·t·43,008 = 2,818,572,288.
func TestFP8CastBytes(t *testing.T) {
	qwen := FLOPDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128}
	llama := FLOPDims{Arch: "llama", Seq: 8192, Batch: 2, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336}
	for _, c := range []struct {
		name                      string
		recipe                    scenarios.FP8Recipe
		nonTN, megatron, compiled bool
		d                         FLOPDims
		ffn                       int64
		fwd, bwd, step            int64
	}{
		{"qwen3 attention, megatron te, H100", scenarios.FP8TE, false, true, false, qwen, 0, 83886080, 117440512, 75497472},
		{"qwen3 attention, megatron te_current, H100", scenarios.FP8TECurrent, false, true, false, qwen, 0, 134217728, 176160768, 113246208},
		{"qwen3 attention, megatron te, B200", scenarios.FP8TE, true, true, false, qwen, 0, 50331648, 88080384, 56623104},
		{"llama block, torchao compiled", scenarios.FP8TorchAO, false, false, true, llama, 14336, 3489660928, 2818572288, 0},
		{"llama block, torchao eager", scenarios.FP8TorchAO, false, false, false, llama, 14336, 28236054528, 70665633792, 0},
		{"llama block, te.Linear", scenarios.FP8TE, false, false, false, llama, 14336, 3422552064, 2818572288, 0},
		{"no recipe", scenarios.FP8None, false, true, false, llama, 14336, 0, 0, 0},
	} {
		r, err := FP8CastRuleOf(c.recipe, c.nonTN, c.megatron, c.compiled)
		if err != nil {
			t.Fatal(err)
		}
		f, b, step, err := FP8CastBytes(r, blockFP8Linears(c.d, c.ffn, c.megatron, c.megatron))
		if err != nil {
			t.Fatal(err)
		}
		if f != c.fwd || b != c.bwd || step != c.step {
			t.Errorf("%s: forward %d, backward %d, a step %d B; want %d, %d, %d", c.name, f, b, step, c.fwd, c.bwd, c.step)
		}
	}
	if _, err := FP8CastRuleOf("mx", false, false, false); err == nil {
		t.Error("an unknown recipe was accepted")
	}
	if _, _, _, err := FP8CastBytes(FP8CastRule{Input: 4}, []FP8Linear{{Rows: 1 << 42, K: 1 << 20, N: 1}}); err == nil {
		t.Error("an overflowing size was accepted")
	}
	if NonTNFP8("H100-80GB") || NonTNFP8("RTX5090") || !NonTNFP8("B200") || !NonTNFP8("GB300") {
		t.Error("NonTNFP8: only compute capability 10.x (B200, GB200, B300, GB300) takes non-TN fp8 GEMMs")
	}
}

// TestTorchAOEagerLinear holds one eager Float8Linear's traffic per
// micro-batch to the kernels torchaoEagerRule lists, counted here from
// the kernel list and the shapes (t rows, k in, n out): forward the
// input's and the weight's casts (TorchAOEagerCast); backward the output
// gradient's two casts, the input's second cast, and preprocess_addmm's
// copies (TorchAOLayoutCopy) of the fp8 weight, the gradient's transpose
// and the input. A cast is abs 2 + 2, max 2, to(float32) 2 + 4, mul
// 4 + 4, clamp 4 + 4, to(float8) 4 + 1 = 33 B an element.
func TestTorchAOEagerLinear(t *testing.T) {
	if got := castBytes(TorchAOEagerCast); got != 33 {
		t.Fatalf("eager cast: %d B an element, want 33", got)
	}
	type op struct {
		bwd    bool
		tensor string // input, weight or grad
		ks     []CastKernel
	}
	cast, cp := TorchAOEagerCast, []CastKernel{TorchAOLayoutCopy}
	kernels := []op{
		{false, "input", cast},  // matmul_with_hp_or_float8_args.forward :90
		{false, "weight", cast}, // Float8Linear.forward :325, :338
		{true, "grad", cast},    // backward :145, for grad_input
		{true, "weight", cp},    // grad_input's b, row-major fp8 weight
		{true, "grad", cast},    // :210, for grad_weight
		{true, "input", cast},   // :227
		{true, "grad", cp},      // grad_weight's a, the gradient transposed
		{true, "input", cp},     // grad_weight's b, the row-major input
	}
	r, err := FP8CastRuleOf(scenarios.FP8TorchAO, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ t, k, n int64 }{
		{8192, 4096, 4096},  // Llama 3 8B wq, wo
		{8192, 4096, 1024},  // wk, wv
		{8192, 4096, 14336}, // w1, w3
		{8192, 14336, 4096}, // w2
		{1, 16, 16},
	} {
		elems := map[string]int64{"input": c.t * c.k, "weight": c.n * c.k, "grad": c.t * c.n}
		var fwd, bwd int64
		for _, o := range kernels {
			b := elems[o.tensor] * castBytes(o.ks)
			if o.bwd {
				bwd += b
			} else {
				fwd += b
			}
		}
		f, b, step, err := FP8CastBytes(r, []FP8Linear{{Rows: c.t, K: c.k, N: c.n}})
		if err != nil {
			t.Fatal(err)
		}
		if f != fwd || b != bwd || step != 0 {
			t.Errorf("%d×%d→%d: forward %d, backward %d, a step %d B; want %d, %d, 0", c.t, c.k, c.n, f, b, step, fwd, bwd)
		}
	}
	// wq, wk and wv read one tensor: eager, each casts it (twice).
	one, _, _, _ := FP8CastBytes(r, []FP8Linear{{Rows: 8, K: 16, N: 16}})
	three, _, _, _ := FP8CastBytes(r, []FP8Linear{{Rows: 8, K: 16, N: 16}, {Rows: 8, K: 16, N: 16}, {Rows: 8, K: 16, N: 16}})
	if three != 3*one {
		t.Errorf("three linears of one input: forward %d B, want 3 × %d", three, one)
	}
}

// TestBlockOtherBytes holds the memory-bound traffic of a block left to
// the FLOP count to hand counts on Qwen3-30B-A3B's MoE block (t = 4,096,
// h = 2,048, q + kv = 4,608 rotated and normalised per token, E = 128
// experts, top-8), per the dense blocks' rule for the stack:
//
// stack: megatron, fp8 te on an H100 (megatronChain): per token two TE
// norms 2·4·h, fused RoPE 4·4,608, q/k TENorms 4·4,608, two residual adds
// 2·6·h, no SwiGLU (no shared expert) = 77,824 B, ×t = 318,767,104; the
// fused router 9·E·t = 4,718,592; the casts 83,886,080
// (TestFP8CastBytes): forward 407,371,776. Backward 2·6·h + 4·4,608 +
// 6·4,608 + 2·6·h + 6·h (the router's and the dispatcher's gradients of
// the MLP norm's output added) = 107,520 B, ×t = 440,401,920; router
// 4,718,592; casts 117,440,512 + 75,497,472/64 = 118,620,160: 563,740,672.
//
// No stack, no fp8, flash attention (llamaChain, the eager chain of a
// dense Llama block): per token 2·36·h + 20·4,608 (complex RoPE) +
// 36·4,608 (q/k norms) + 2·6·h = 430,080 B, ×t = 1,761,607,680; the
// router's kept tensors (memory.RouterTensors, softmax top-k with the
// norm: 4tE + 8tk + 4tk + 4t + 16tk + 2tk = 3,096,576) written and read,
// 6,193,152: 1,767,800,832. Backward 2·92·h + 20·4,608 + 92·4,608 +
// 2·6·h + 3·6·h = 954,368 B, ×t = 3,909,091,328, router twice its
// forward: 3,921,477,632.
func TestBlockOtherBytes(t *testing.T) {
	for _, c := range []struct {
		head     string
		training string
		fwd, bwd int64
	}{
		{"stack: megatron\n", "fp8: te", 407371776, 563740672},
		{"", "attention: flash", 1767800832, 3921477632},
	} {
		doc := "version: 1\n" + c.head + "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096, layers: 2}\n" +
			"parallelism: {dp: 16, zero_stage: 1, ep: 16}\ntraining: {micro_batch: 1, grad_accum: 64, recompute: none, " + c.training + "}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		base, _ := flopDims(s)
		f, b, err := blockOtherBytes(s, base, unitNamed(t, s, "block.0"))
		if err != nil {
			t.Fatal(err)
		}
		if f != c.fwd || b != c.bwd {
			t.Errorf("%q %s: forward %d, backward %d B; want %d, %d", c.head, c.training, f, b, c.fwd, c.bwd)
		}
	}
}

// TestMegatronChain holds a dense Llama-3.1-8B block under stack:
// megatron (h = 4,096, f = 14,336, q + kv = 5,120, t = 8,192 at
// micro-batch 1) to megatronChain's count: per token two norms, fused RoPE
// 4·(q + kv), two residual adds 12·h and the fused SwiGLU 6·f forward;
// the norms' 2·6·h, RoPE, 12·h and 10·f backward. Transformer Engine's
// norms and local's torch.nn.RMSNorm on aten::_fused_rms_norm (PyTorch
// 2.9 or later, the default, or norm_impl: aten_fused) move 4 and 6 B an
// element: 188,416 B a token forward, ×t = 1,543,503,872; 262,144 B
// backward, ×t = 2,147,483,648. On the composite rms_norm (norm_impl:
// fp32) they are the eager chain's 36 and 92 B (rmsNormFwd, rmsNormBwd):
// 450,560 and 966,656 B a token, ×t = 3,690,987,520 and 7,918,845,952.
// The final norm (finalNormBytes) moves 4·t·h and 6·t·h, or 36·t·h and
// 92·t·h on the composite. The local cases state training.attention:
// flash (flash-attn 2, --use-legacy-models --use-flash-attn), attention as the Transformer
// Engine case runs it; local's default is eager (scenarios.localAttention).
func TestMegatronChain(t *testing.T) {
	doc := "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b, seq_len: 8192}\n" +
		"parallelism: {dp: 8, zero_stage: 1}\ntraining: {micro_batch: 1}\n"
	const h, f, qk, tok = 4096, 14336, 5120, 8192
	chain := func(nf, nb int64) (int64, int64) {
		return tok * (2*nf*h + 4*qk + 12*h + 6*f), tok * (2*nb*h + 4*qk + 12*h + 10*f)
	}
	for _, c := range []struct {
		name, training string
		nf, nb         int64
		fwd, bwd       int64 // the doc comment's
	}{
		{"Transformer Engine", "{micro_batch: 1}", 4, 6, 1_543_503_872, 2_147_483_648},
		{"local, aten::_fused_rms_norm (default)", "{micro_batch: 1, transformer_impl: local, attention: flash}", 4, 6, 1_543_503_872, 2_147_483_648},
		{"local, norm_impl aten_fused", "{micro_batch: 1, transformer_impl: local, attention: flash, norm_impl: aten_fused}", 4, 6, 1_543_503_872, 2_147_483_648},
		{"local, norm_impl fp32 (composite)", "{micro_batch: 1, transformer_impl: local, attention: flash, norm_impl: fp32}", 36, 92, 3_690_987_520, 7_918_845_952},
	} {
		t.Run(c.name, func(t *testing.T) {
			wf, wb := chain(c.nf, c.nb)
			if wf != c.fwd || wb != c.bwd {
				t.Fatalf("derived %d, %d; the doc comment says %d, %d", wf, wb, c.fwd, c.bwd)
			}
			s, err := scenarios.Load("llama.yaml", []byte(strings.Replace(doc, "{micro_batch: 1}", c.training, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := flopDims(s)
			if f, b, err := blockElementwise(s, d, false); err != nil || f != wf || b != wb {
				t.Errorf("block: forward %d, backward %d B (%v); want %d and %d", f, b, err, wf, wb)
			}
			if f, b, err := finalNormBytes(s, d); err != nil || f != c.nf*tok*h || b != c.nb*tok*h {
				t.Errorf("final norm: forward %d, backward %d B (%v); want %d and %d", f, b, err, c.nf*tok*h, c.nb*tok*h)
			}
		})
	}
}

// TestFP8CastRerun holds the casts torchtitan's op policy reruns in an
// eager torchao block's recompute (fp8CastRerun) on Llama 3 8B's block at
// t = 8,192 tokens: every linear's input, t·(3h + q + 2h + f) =
// 318,767,104 elements, and weight, W = 218,103,808, at 27 B an element
// when the policy keeps abs and max (op_save_abs: TorchAOEagerCast less
// abs 2 + 2 and max 2) and 33 B when it does not; the weights alone drop
// out under the fp8 all-gather; nothing compiled or under another policy.
// PlanCompute then charges the block's backward the rerun bytes in place
// of the casts' share by FLOPs.
func TestFP8CastRerun(t *testing.T) {
	const in, w = 8192 * (3*4096 + 4096 + 2*4096 + 14336), 218103808
	d := FLOPDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336}
	for _, c := range []struct {
		name, training, policy string
		want                   int64
	}{
		{"op, op_save_abs", "{fp8: torchao, fp8_all_gather: false, recompute: op, op_save_abs: true}", "op", 27 * (in + w)},
		{"op", "{fp8: torchao, fp8_all_gather: false, recompute: op, op_save_abs: false}", "op", 33 * (in + w)},
		{"op, fp8 all-gather", "{fp8: torchao, fp8_all_gather: true, recompute: op, op_save_abs: true}", "op", 27 * in},
		{"op, compiled", "{fp8: torchao, fp8_all_gather: false, recompute: op, compile: blocks}", "op", 0},
		{"full", "{fp8: torchao, fp8_all_gather: false, recompute: full}", "full", 0},
		{"te", "{fp8: te, recompute: op}", "op", 0},
	} {
		s, err := scenarios.Load("s.yaml", []byte("version: 1\nstack: torchtitan\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\n"+
			"parallelism: {dp: 8, zero_stage: 3}\ntraining: "+c.training+"\n"), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := fp8CastRerun(s, scenarios.Layer{Name: "block.0", Block: true}, d, 14336, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: %d B rerun, want %d", c.name, got, c.want)
		}
	}
	g := GPUShape{Peak: 989e12, HBM: 3.35e12, GEMMPeak: 1979e12}
	e := Efficiency{GEMM: 0.5, Attention: 0.5, HBM: 0.88}
	const cast, rerun = 28236054528 / 2, 27 * (in + w)
	spec := ComputeSpec{Dims: d, GPU: g, Eff: e, Policy: "op", Blocks: []bool{true}, Head: -1, Elementwise: cast, Cast: cast}
	base, err := PlanCompute(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.CastRerun = rerun
	with, err := PlanCompute(spec)
	if err != nil {
		t.Fatal(err)
	}
	re, err := RecomputeFLOPs(d, "op")
	if err != nil {
		t.Fatal(err)
	}
	f, err := BlockForwardFLOPs(d)
	if err != nil {
		t.Fatal(err)
	}
	want := (float64(rerun) - float64(re)/float64(f.Total())*cast) / (g.HBM * e.HBM)
	if diff := with[0].Bwd - base[0].Bwd; math.Abs(diff-want) > 1e-12 || with[0].Fwd != base[0].Fwd {
		t.Errorf("op recompute: backward %.6g s more, forward %.6g s more; want %.6g and 0", diff, with[0].Fwd-base[0].Fwd, want)
	}
}
