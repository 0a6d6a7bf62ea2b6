package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"

	"github.com/zerosim/zerosim/scenarios"
)

// Llama 3.1 8B's block as NVIDIA's NeMo 24.09 benchmark runs it with
// context parallelism 2 (dgxc-benchmarking llama3.1/llama3.1_8b.yaml at
// 35a9aecc: seq 8192, micro-batch 1, so t = 4,096 tokens a rank): h 4096,
// 32 heads, 8 KV heads (kv = 1,024), f 14,336, flash attention. With
// th = t·h = 16,777,216, tkv = t·kv = 4,194,304, tf = t·f = 58,720,256,
// the fp32 statistics 8·t = 32,768 (two rstds) and the log-sum-exp
// 4·a·s·b = 524,288.
var teFP8Dims = BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Attention: AttentionFlash}

// teFP8Dims' sizes in elements: t tokens, th, tkv, tf, and the
// log-sum-exp's a·s·b (4 B each).
const (
	teTok = 4096 * 1
	teTH  = teTok * 4096
	teTKV = teTok * 1024
	teTF  = teTok * 14336
	teASB = 32 * 4096 * 1
)

// TestTEFP8BlockTensors counts by hand what a block keeps under
// Transformer Engine's fp8 recipes (BlockDims.FP8Inputs, teFP8Input) and
// as Megatron-core builds it with TE (BlockDims.MegatronTE).
//
//   - eager norms (torchtitan's, HF's), bf16: each norm's fp32 input 4·th,
//     rstd and normalized 2·th, its output 2·th, q 2·th, k and v 2·tkv
//     each, the attention output 2·th and log-sum-exp, w1's, silu's, w3's
//     outputs and the product 2·tf each: 20·th + 4·tkv + 8·t + 4·a·s·b +
//     8·tf = 822,640,640.
//   - the same with TE's fp8 linears: the q/k/v and FFN inputs and the
//     product (w2's input) at 1 byte (−th −th −tf), and the out-projection's
//     own fp8 copy of the attention output beside the kernel's 16-bit one
//     (+th): 822,640,640 − th − tf = 747,143,168.
//   - Megatron with TE, bf16: linear_qkv's LayerNormLinear keeps the block
//     input 2·th, rsigma and ln_out 2·th; the attention kernel q, k, v, its
//     output and log-sum-exp; linear_fc1's the residual sum 2·th, rsigma,
//     ln_out 2·th; bias_swiglu_impl linear_fc1's output 4·tf; linear_fc2
//     its input 2·tf: 12·th + 4·tkv + 8·t + 4·a·s·b + 6·tf = 570,982,400.
//   - Megatron, te (delayed scaling): the two ln_outs and linear_fc2's
//     input at 1 byte, linear_proj's fp8 copy: 11·th + ... + 5·tf =
//     495,484,928.
//   - Megatron, te_current: linear_proj saves the kernel's output
//     (set_save_original_input): 10·th + ... + 5·tf = 478,707,712.
//
// Under full recompute each keeps only what the checkpoint holds: the
// block input, 2·th = 33,554,432, and rebuilds the rest: all of the eager
// block's (its block input is kept only by the checkpoint), all but the
// block input of Megatron's (linear_qkv's saved inputmat).
func TestTEFP8BlockTensors(t *testing.T) {
	with := func(fp8, megatron, original bool) BlockDims {
		d := teFP8Dims
		d.FP8Inputs, d.MegatronTE, d.FP8ProjOriginal = fp8, megatron, original
		return d
	}
	// q/k/v's 4·tkv, the two rstds' 8·t and the log-sum-exp's 4·a·s·b are
	// in every case; the eager block's 20·th + … + 8·tf.
	const rest = 4*teTKV + 8*teTok + 4*teASB
	const eagerBF16 = 20*teTH + rest + 8*teTF
	for _, c := range []struct {
		name string
		d    BlockDims
		want int64
	}{
		{"eager norms, bf16", with(false, false, false), eagerBF16},               // 822,640,640
		{"eager norms, te", with(true, false, false), eagerBF16 - teTH - teTF},    // 747,143,168
		{"megatron, bf16", with(false, true, false), 12*teTH + rest + 6*teTF},     // 570,982,400
		{"megatron, te", with(true, true, false), 11*teTH + rest + 5*teTF},        // 495,484,928
		{"megatron, te_current", with(true, true, true), 10*teTH + rest + 5*teTF}, // 478,707,712
		// FP8ProjOriginal means nothing without fp8.
		{"megatron, bf16, original", with(false, true, true), 12*teTH + rest + 6*teTF},
	} {
		st, tr, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatal(err)
		}
		if st != c.want || tr != 0 {
			t.Errorf("%s: keeps %d (rebuilds %d), want %d", c.name, st, tr, c.want)
		}
		st, tr, err = BlockActivation(c.d, PolicyFull)
		if err != nil {
			t.Fatal(err)
		}
		const input = 2 * teTH // the block input the checkpoint holds, 33,554,432
		rebuilt := c.want
		if c.d.MegatronTE {
			rebuilt -= input
		}
		if st != input || tr != rebuilt {
			t.Errorf("%s, full: keeps %d, rebuilds %d; want %d, %d", c.name, st, tr, input, rebuilt)
		}
	}
	// Megatron's final TENorm keeps its 16-bit input and rsigma, and the
	// output layer its input: 2·th + 4·t + 2·th = 67,125,248; the eager
	// norm 4·th + 4·t + 2·th + 2·th = 134,234,112.
	for _, c := range []struct {
		d    BlockDims
		want int64
	}{{with(true, true, false), 2*teTH + 4*teTok + 2*teTH}, {with(false, false, false), 4*teTH + 4*teTok + 2*teTH + 2*teTH}} {
		c.d.Vocab = 128256
		model, _, _, err := headParts(c.d)
		if err != nil || model != c.want {
			t.Errorf("megatron %v: the head keeps %d (%v) before the logits, want %d", c.d.MegatronTE, model, err, c.want)
		}
	}
	// docs/memory-model.md's Megatron TE block against the eager one, in
	// bf16: a block, and 32 blocks and the head's part before the logits.
	keeps := func(d BlockDims) (block, head int64) {
		t.Helper()
		var err error
		if block, _, err = BlockActivation(d, PolicyNone); err != nil {
			t.Fatal(err)
		}
		d.Vocab = 128256
		if head, _, _, err = headParts(d); err != nil {
			t.Fatal(err)
		}
		return block, head
	}
	mb, mh := keeps(with(false, true, false))
	eb, eh := keeps(with(false, false, false))
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestTEFP8BlockTensors (Llama 3.1 8B, t = 4,096)",
		fmt.Sprintf("%s B a block against %s, %.2f GiB less over 32 blocks and the head.", commas(mb), commas(eb), float64(32*(eb-mb)+eh-mh)/(1<<30)))
	// A GPT block (LayerNorm, fused qkv, GeLU; llm-foundry's MPT with
	// te.Linear): the same −th −tf, its norms and GeLU input unchanged.
	gpt := teFP8Dims
	gpt.Arch, gpt.KVHeads = "gpt", 32
	bf16, _, err := BlockActivation(gpt, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	gpt.FP8Inputs = true
	fp8, _, err := BlockActivation(gpt, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	if bf16-fp8 != 16_777_216+58_720_256 {
		t.Errorf("gpt block: fp8 inputs keep %d B less, want th + tf = 75,497,472", bf16-fp8)
	}
	bad := teFP8Dims
	bad.MegatronTE, bad.Compiled = true, true
	if _, _, err := BlockActivation(bad, PolicyNone); err == nil {
		t.Error("Megatron's TE block compiled: no error")
	}
}

// teFP8YAML is qatput30's NeMo 24.09 Llama 3.1 8B scenario
// (/work/coord/qatput30_s30.md section G): NVIDIA/dgxc-benchmarking
// llama3.1/README_8b.md and llama3.1_8b.yaml at 35a9aecc, "Llama 3.1 8b
// FP8 (TP=1, PP=1, CP=2, MBS=1, GA=32)" on 8 H100, distributed_fused_adam
// (bucket 75 MB, overlap grad/param sync), no recompute, flash attention.
// Its published FP8 and BF16 runs both ran on 80 GB.
const teFP8YAML = `version: 1
name: nemo-llama3.1-8b-h100
stack: megatron
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: H100-80GB
  intra: {preset: NVLink4}
  inter: {preset: NDR}
  nics: per_gpu
model: {kind: transformer, arch: llama, hidden: 4096, layers: 32, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, seq_len: 8192}
parallelism: {dp: 4, cp: 2, zero_stage: 1, k: 1}
training:
  micro_batch: 1
  grad_accum: 32
  param_dtype: bf16
  reduce_dtype: param_dtype
  optimizer: adamw
  weight_decay: 0.1
  grad_clip: norm
  recompute: none
  attention_kernel: cudnn
  dropout: 0
communication: {overlap: true, bucket_size: 75MB, zero1_allreduce: false, overlap_param_gather: true, padding: megatron}
`

// TestTEFP8Scenario: on that scenario te keeps 32 blocks × (570,982,400 −
// 495,484,928) = 2,415,919,104 B less of activations than bf16
// (TestTEFP8BlockTensors), te_current 32 × 16,777,216 = 536,870,912 B
// less again, and torchao's Float8Linear, which saves its bf16 input,
// none; the block dimensions come from the scenario.
func TestTEFP8Scenario(t *testing.T) {
	acts := func(set ...string) (int64, BlockDims) {
		t.Helper()
		s, err := scenarios.Load("nemo.yaml", []byte(teFP8YAML), set)
		if err != nil {
			t.Fatal(err)
		}
		return mustAnalyze(t, s, Options{}).Component(CompActivations).Peak, baseDims(s)
	}
	bf16, d := acts()
	if !d.MegatronTE || d.FP8Inputs || d.FP8ProjOriginal {
		t.Errorf("bf16 megatron: %+v, want MegatronTE alone", d)
	}
	te, d := acts("training.fp8=te")
	if !d.MegatronTE || !d.FP8Inputs || d.FP8ProjOriginal {
		t.Errorf("te: FP8Inputs %v, FP8ProjOriginal %v, want true, false", d.FP8Inputs, d.FP8ProjOriginal)
	}
	cur, d := acts("training.fp8=te_current")
	if !d.FP8Inputs || !d.FP8ProjOriginal {
		t.Errorf("te_current: FP8Inputs %v, FP8ProjOriginal %v, want true, true", d.FP8Inputs, d.FP8ProjOriginal)
	}
	// 32 blocks × (th + tf): the two ln_outs and linear_fc2's input at
	// 1 byte (−2·th −tf), linear_proj's fp8 copy (+th): 12·th + 6·tf →
	// 11·th + 5·tf; then te_current 32 × th less (linear_proj's copy).
	if bf16-te != 32*(teTH+teTF) || te-cur != 32*teTH {
		t.Errorf("activations bf16 %d, te %d, te_current %d: want te 2,415,919,104 and te_current 536,870,912 B less", bf16, te, cur)
	}
	if _, d := acts("stack=torchtitan", "training.fp8=torchao", "parallelism.zero_stage=3"); d.FP8Inputs || d.MegatronTE {
		t.Errorf("torchtitan torchao: FP8Inputs %v, MegatronTE %v, want neither", d.FP8Inputs, d.MegatronTE)
	}
	// save_original_input on linear_proj is Megatron-core's
	// (attention.py lines 428-444 at d98e8a64): llm-foundry's te.Linear
	// under current scaling keeps its fp8 copy of the attention output.
	if _, d := acts("stack=llm-foundry", "communication.padding=toy", "training.fp8=te_current"); !d.FP8Inputs || d.FP8ProjOriginal || d.MegatronTE {
		t.Errorf("llm-foundry te_current: FP8Inputs %v, FP8ProjOriginal %v, MegatronTE %v, want true, false, false", d.FP8Inputs, d.FP8ProjOriginal, d.MegatronTE)
	}
}

// TestTEFP8ScopeAndGate: FP8Inputs' other block shapes.
//
//   - An MLA block (KVLoRARank > 0; DeepSeek-V2-Lite's dimensions: h 2048,
//     16 heads, nope 128, rope 64, value 128, kv rank 512, f 10,944) keeps
//     its 16-bit tensors: FP8Inputs covers the dense softmax-attention
//     layers of Megatron's and llm-foundry's Transformer Engine specs
//     (blockTensors), so fp8 changes nothing there.
//   - Qwen3-Next's gated attention (OutputGate; teFP8Dims otherwise): the
//     out-projection's input is the gated product, which the o_proj keeps
//     in fp8, t·h, in place of 2·t·h; the kernel's own output stays
//     beside it as before, and no second fp8 copy of it is made (that copy
//     is the ungated out-projection's input). So fp8 keeps less by th
//     (q/k/v input), th (o_proj input), th (FFN input) and tf (w2 input):
//     3·16,777,216 + 58,720,256 = 109,051,904 B.
func TestTEFP8ScopeAndGate(t *testing.T) {
	mla := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, RopeHeadDim: 64, ValueHeadDim: 128, KVLoRARank: 512, FFN: 10944, Attention: AttentionFlash}
	gate := teFP8Dims
	gate.OutputGate = true
	for _, c := range []struct {
		name string
		d    BlockDims
		less int64
	}{
		{"mla", mla, 0},
		{"output gate", gate, 3*16_777_216 + 58_720_256},
	} {
		bf16, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		c.d.FP8Inputs = true
		fp8, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if bf16-fp8 != c.less {
			t.Errorf("%s: fp8 inputs keep %d B less than bf16 (%d), want %d", c.name, bf16-fp8, bf16, c.less)
		}
	}
}
