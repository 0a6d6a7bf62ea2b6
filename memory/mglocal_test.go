package memory

import (
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMegatronLocalBlock: Llama 3.1 8B's block (teFP8Dims, t = 4,096) as
// Megatron-core builds it from its own modules (--transformer-impl local,
// BlockDims.MegatronLocal), with its torch.nn.RMSNorms on each PyTorch
// path (BlockDims.NormATen). Its ColumnParallelLinear/RowParallelLinear
// keep their 16-bit inputs and its MLP keeps what the TE block's does:
// linear_fc1's output 4·tf (bias_swiglu_impl) and linear_fc2's input
// 2·tf; with attention's q, k, v, output and log-sum-exp that is 8·th +
// 4·tkv + 4·a·s·b + 6·tf besides the norms.
//
//   - aten::_fused_rms_norm (PyTorch 2.9 or later, local's default):
//     each norm keeps its 16-bit input 2·th and the fp32 rstd 4·t, its
//     output 2·th being the next linear's input: 4·th + 4·t a norm, as
//     TE's LayerNormLinear keeps: 12·th + 4·tkv + 8·t + 4·a·s·b + 6·tf =
//     570,982,400 B, the TE block's. The final norm keeps 2·th + 4·t and
//     the output layer's input 2·th: 67,125,248 B before the logits.
//   - the composite rms_norm (norm_impl fp32, PyTorch 2.8 or earlier):
//     each keeps the fp32 upcast 4·th, rstd 4·t and the 16-bit
//     normalized tensor 2·th besides the output, 8·th + 4·t a norm: the
//     block 20·th + 4·tkv + 8·t + 4·a·s·b + 6·tf = 705,200,128 B, the
//     final norm 4·th + 4·t + 2·th and the output layer's input 2·th =
//     134,234,112 B.
func TestMegatronLocalBlock(t *testing.T) {
	const rest = 4*teTKV + 8*teTok + 4*teASB + 6*teTF
	for _, c := range []struct {
		name            string
		aten            bool
		block, head     int64
		blockDoc, hdDoc int64
	}{
		{"aten::_fused_rms_norm", true, 12*teTH + rest, 2*teTH + 4*teTok + 2*teTH, 570_982_400, 67_125_248},
		{"composite rms_norm", false, 20*teTH + rest, 4*teTH + 4*teTok + 2*teTH + 2*teTH, 705_200_128, 134_234_112},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.block != c.blockDoc || c.head != c.hdDoc {
				t.Fatalf("block %d, head %d: the doc comment says %d and %d", c.block, c.head, c.blockDoc, c.hdDoc)
			}
			d := teFP8Dims
			d.MegatronLocal, d.NormATen = true, c.aten
			st, tr, err := BlockActivation(d, PolicyNone)
			if err != nil || st != c.block || tr != 0 {
				t.Errorf("local block keeps %d (rebuilds %d, %v), want %d", st, tr, err, c.block)
			}
			d.Vocab = 128256
			if model, _, _, err := headParts(d); err != nil || model != c.head {
				t.Errorf("local head keeps %d (%v) before the logits, want %d", model, err, c.head)
			}
		})
	}
	te := teFP8Dims
	te.MegatronTE = true
	if st, _, err := BlockActivation(te, PolicyNone); err != nil || st != 12*teTH+rest {
		t.Errorf("TE block keeps %d (%v), want the aten local block's %d", st, err, int64(12*teTH+rest))
	}
	for _, bad := range []func(*BlockDims){
		func(b *BlockDims) { b.MegatronTE = true },
		func(b *BlockDims) { b.Compiled = true },
		func(b *BlockDims) { b.Arch, b.KVHeads = "gpt", 32 },
		func(b *BlockDims) { b.MegatronLocal, b.NormATen, b.Norms = false, true, scenarios.NormsGemma },
	} {
		b := teFP8Dims
		b.MegatronLocal = true
		bad(&b)
		if _, _, err := BlockActivation(b, PolicyNone); err == nil {
			t.Errorf("local block %+v: no error", b)
		}
	}
}

// TestMegatronLocalQKNorm: a Qwen3-style block (q_norm and k_norm over
// each head, QKNormRMSHead) under the local spec: on aten::_fused_rms_norm
// the q/k norms keep their 16-bit inputs (the q_proj and k_proj outputs)
// and the fp32 rstd per head, 2·t·qw + 4·t·a + 2·t·kv + 4·t·kv_h; on the
// composite, the fp32 upcast, rstd and normalized tensor, 4·t·qw + 4·t·a +
// 2·t·qw and 4·t·kv + 4·t·kv_h + 2·t·kv. The difference is 4·t·qw +
// 4·t·kv on the q/k norms and 4·th on each of the two hidden norms
// (TestMegatronLocalBlock).
func TestMegatronLocalQKNorm(t *testing.T) {
	d := teFP8Dims
	d.MegatronLocal, d.QKNorm, d.HeadDim = true, scenarios.QKNormRMSHead, 128
	qw, kv := int64(teTok*32*128), int64(teTok*8*128)
	d.NormATen = true
	aten, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	d.NormATen = false
	comp, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*4*int64(teTH) + 4*qw + 4*kv; comp-aten != want {
		t.Errorf("composite %d − aten %d = %d, want 8·th + 4·t·qw + 4·t·kv = %d", comp, aten, comp-aten, want)
	}
	plain := teFP8Dims
	plain.MegatronLocal, plain.NormATen, plain.HeadDim = true, true, 128
	base, _, err := BlockActivation(plain, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*qw + 4*teTok*32 + 2*kv + 4*teTok*8; aten-base != want {
		t.Errorf("aten q/k norms keep %d, want 2·t·qw + 4·t·a + 2·t·kv + 4·t·kv_h = %d", aten-base, want)
	}
}

// TestMegatronLocalScenario: QA's NeMo scenario (teFP8YAML) with
// training.transformer_impl: local. On aten::_fused_rms_norm (the default,
// or norm_impl: aten_fused) it keeps what the Transformer Engine block
// keeps; on the composite rms_norm (norm_impl: fp32) its 32 blocks keep
// 32 × 8·th = 4,294,967,296 B more, and the final norm 4·th = 67,108,864
// more (held at the peak, the head's forward): 260·th = 4,362,076,160 B.
// A GPT model under local keeps what it kept (apex's FusedLayerNorm,
// bias_gelu: the GPT block's tensors). transformer_impl is refused off
// stack: megatron and for an unknown value, norm_impl: aten_fused off the
// local block (and torchtitan's, TestTorchtitanATenNorm) and for a GPT model, each naming the file, line and column.
func TestMegatronLocalScenario(t *testing.T) {
	load := func(yaml string, set ...string) (*scenarios.Scenario, error) {
		return scenarios.Load("nemo.yaml", []byte(yaml), set)
	}
	acts := func(set ...string) (int64, BlockDims) {
		t.Helper()
		s, err := load(teFP8YAML, set...)
		if err != nil {
			t.Fatal(err)
		}
		return mustAnalyze(t, s, Options{}).Component(CompActivations).Peak, baseDims(s)
	}
	te, d := acts()
	// The file's attention_kernel cudnn is Transformer Engine's fused
	// attention, which local does not run (scenarios.localAttention):
	// local states flash-attn 2 (--use-legacy-models --use-flash-attn), flash attention
	// keeping flash's saved tensors, as the TE block's cudnn does.
	const localFA2 = "training.attention_kernel=fa2"
	if !d.MegatronTE || d.MegatronLocal || d.NormATen {
		t.Errorf("default: MegatronTE %v, MegatronLocal %v, NormATen %v, want true, false, false", d.MegatronTE, d.MegatronLocal, d.NormATen)
	}
	for _, c := range []struct {
		name string
		set  []string
		aten bool
		more int64
	}{
		{"local (aten::_fused_rms_norm by default)", []string{"training.transformer_impl=local", localFA2}, true, 0},
		{"local, norm_impl aten_fused", []string{"training.transformer_impl=local", localFA2, "training.norm_impl=aten_fused"}, true, 0},
		{"local, norm_impl fp32 (composite)", []string{"training.transformer_impl=local", localFA2, "training.norm_impl=fp32"}, false, 32*8*teTH + 4*teTH},
	} {
		local, d := acts(c.set...)
		if d.MegatronTE || !d.MegatronLocal || d.NormATen != c.aten {
			t.Errorf("%s: MegatronTE %v, MegatronLocal %v, NormATen %v, want false, true, %v", c.name, d.MegatronTE, d.MegatronLocal, d.NormATen, c.aten)
		}
		if local-te != c.more {
			t.Errorf("%s: activations te %d, local %d: want %d B more, got %d", c.name, te, local, c.more, local-te)
		}
	}
	gptTE, _ := acts("model.arch=gpt", "model.kv_heads=32")
	gptLocal, d := acts("model.arch=gpt", "model.kv_heads=32", "training.transformer_impl=local", localFA2)
	if gptTE != gptLocal || d.MegatronLocal || d.MegatronTE || d.NormATen {
		t.Errorf("gpt: te %d, local %d (MegatronLocal %v, NormATen %v), want equal and no Megatron llama block", gptTE, gptLocal, d.MegatronLocal, d.NormATen)
	}
	// The keys go after training's last line, dropout.
	at := strings.Index(teFP8YAML, "  dropout: 0\n") + len("  dropout: 0\n")
	line := strconv.Itoa(strings.Count(teFP8YAML[:at], "\n") + 1)
	next := strconv.Itoa(strings.Count(teFP8YAML[:at], "\n") + 2)
	for _, c := range []struct{ stack, keys, arch, want string }{
		{"megatron", "  transformer_impl: te\n", "", "nemo.yaml:" + line + `:3: transformer_impl "te" is unknown (use transformer_engine or local)`},
		{"torchtitan", "  transformer_impl: local\n", "", "nemo.yaml:" + line + ":3: transformer_impl is Megatron-LM's --transformer-impl and goes with stack: megatron only"},
		{"megatron", "  norm_impl: aten_fused\n", "", "nemo.yaml:" + line + ":3: norm_impl=aten_fused (torch.nn.RMSNorm on aten::_fused_rms_norm, PyTorch 2.9 or later) is derived for Megatron-core's local block and torchtitan's blocks only"},
		{"deepspeed", "  norm_impl: aten_fused\n", "", "nemo.yaml:" + line + ":3: norm_impl=aten_fused"},
		{"megatron", "  transformer_impl: local\n  norm_impl: aten_fused\n", "gpt", "nemo.yaml:" + next + ":3: norm_impl=aten_fused is torch.nn.RMSNorm's fused kernel, and this model's blocks are GPT's"},
	} {
		y := teFP8YAML[:at] + c.keys + teFP8YAML[at:]
		y = strings.Replace(y, "stack: megatron", "stack: "+c.stack, 1)
		var set []string
		if c.arch != "" {
			set = []string{"model.arch=" + c.arch, "model.kv_heads=32"}
		}
		if _, err := load(y, set...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("stack %s, %q: error %v, want %q", c.stack, c.keys, err, c.want)
		}
	}
}
