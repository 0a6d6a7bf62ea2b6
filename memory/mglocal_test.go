package memory

import (
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMegatronLocalBlock: Llama 3.1 8B's block (teFP8Dims, t = 4,096) as
// Megatron-core builds it from its own modules (--transformer-impl local,
// BlockDims.MegatronLocal). Its norms are torch.nn.RMSNorm, PyTorch's
// composite rms_norm: each keeps the fp32 upcast 4·th, rstd 4·t and the
// normalized 16-bit tensor 2·th (the weight multiply's input), and its
// output 2·th is the next linear's input: 8·th a norm where TE's
// LayerNormLinear keeps its input and ln_out, 4·th. Its MLP keeps what
// the TE block's does: linear_fc1's output 4·tf (bias_swiglu_impl) and
// linear_fc2's input 2·tf. So 12·th + 2·4·th = 20·th + 4·tkv + 8·t +
// 4·a·s·b + 6·tf = 705,200,128 B, the eager block's less 2·tf. The final
// norm is the eager one: 4·th + 4·t + 2·th, and the output layer's input
// 2·th = 134,234,112 B before the logits.
func TestMegatronLocalBlock(t *testing.T) {
	d := teFP8Dims
	d.MegatronLocal = true
	const rest = 4*teTKV + 8*teTok + 4*teASB
	const want = 20*teTH + rest + 6*teTF
	if want != 705_200_128 {
		t.Fatalf("want %d, the doc comment says 705,200,128", int64(want))
	}
	st, tr, err := BlockActivation(d, PolicyNone)
	if err != nil || st != want || tr != 0 {
		t.Errorf("local block keeps %d (rebuilds %d, %v), want %d", st, tr, err, int64(want))
	}
	d.Vocab = 128256
	const head = 4*teTH + 4*teTok + 2*teTH + 2*teTH
	if model, _, _, err := headParts(d); err != nil || model != head {
		t.Errorf("local head keeps %d (%v) before the logits, want %d", model, err, int64(head))
	}
	for _, bad := range []func(*BlockDims){
		func(b *BlockDims) { b.MegatronTE = true },
		func(b *BlockDims) { b.Compiled = true },
		func(b *BlockDims) { b.Arch, b.KVHeads = "gpt", 32 },
	} {
		b := teFP8Dims
		b.MegatronLocal = true
		bad(&b)
		if _, _, err := BlockActivation(b, PolicyNone); err == nil {
			t.Errorf("local block %+v: no error", b)
		}
	}
}

// TestMegatronLocalScenario: QA's NeMo scenario (teFP8YAML) with
// training.transformer_impl: local keeps, on its 32 blocks, 32 × 8·th =
// 4,294,967,296 B more activations than with Transformer Engine, and the
// final norm's 4·th = 67,108,864 more (held at the peak, the head's
// forward): 260·th = 4,362,076,160 B; a GPT
// model under local keeps what it kept (apex's FusedLayerNorm, bias_gelu:
// the GPT block's tensors); the key is refused off stack: megatron and
// for an unknown value, naming the file, line and column.
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
	if !d.MegatronTE || d.MegatronLocal {
		t.Errorf("default: MegatronTE %v, MegatronLocal %v, want true, false", d.MegatronTE, d.MegatronLocal)
	}
	local, d := acts("training.transformer_impl=local")
	if d.MegatronTE || !d.MegatronLocal {
		t.Errorf("local: MegatronTE %v, MegatronLocal %v, want false, true", d.MegatronTE, d.MegatronLocal)
	}
	if local-te != 32*8*teTH+4*teTH {
		t.Errorf("activations te %d, local %d: want local 260·th = 4,362,076,160 B more, got %d", te, local, local-te)
	}
	gptTE, _ := acts("model.arch=gpt", "model.kv_heads=32")
	gptLocal, d := acts("model.arch=gpt", "model.kv_heads=32", "training.transformer_impl=local")
	if gptTE != gptLocal || d.MegatronLocal || d.MegatronTE {
		t.Errorf("gpt: te %d, local %d (MegatronLocal %v), want equal and no Megatron llama block", gptTE, gptLocal, d.MegatronLocal)
	}
	// The key goes after training's last line, dropout.
	at := strings.Index(teFP8YAML, "  dropout: 0\n") + len("  dropout: 0\n")
	line := strconv.Itoa(strings.Count(teFP8YAML[:at], "\n") + 1)
	for _, c := range []struct{ stack, value, want string }{
		{"megatron", "te", "nemo.yaml:" + line + `:3: transformer_impl "te" is unknown (use transformer_engine or local)`},
		{"torchtitan", "local", "nemo.yaml:" + line + ":3: transformer_impl is Megatron-LM's --transformer-impl and goes with stack: megatron only"},
	} {
		y := teFP8YAML[:at] + "  transformer_impl: " + c.value + "\n" + teFP8YAML[at:]
		y = strings.Replace(y, "stack: megatron", "stack: "+c.stack, 1)
		if _, err := load(y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("stack %s, transformer_impl %s: error %v, want %q", c.stack, c.value, err, c.want)
		}
	}
}
