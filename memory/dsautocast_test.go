package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAutocastOpsTensors: a GPT block under torch.autocast over bf16
// parameters (DeepSpeed's torch_autocast beside bf16.enabled,
// BlockDims.Autocast) keeps autocast's fp32 copies where layer_norm and
// softmax sit on autocast's fp32 lists (AT_FORALL_FP32: layer_norm,
// native_layer_norm; AT_FORALL_FP32_SET_OPT_DTYPE: softmax;
// registered by aten/src/ATen/autocast_mode.cpp at pytorch/pytorch
// 008ec6b1): each
// LayerNorm saves its input's fp32 copy, 4·t·h in place of 2·t·h, and
// eager softmax saves fp32 probabilities, 4·a·s²·b, beside the bf16 cast
// the bmm with v saves, 2·a·s²·b, in place of one 2·a·s²·b; the head's
// final LayerNorm likewise. Dimensions: DeepSpeedExamples'
// bf16_master_weight SimpleTransformerModel (train.py at 516082c6: h
// 1024, 16 heads, seq 512, batch 4, vocab 50000) and its 6.86B twin
// (h 4096, 32 heads, batch 1).
func TestAutocastOpsTensors(t *testing.T) {
	for _, c := range []struct {
		name              string
		s, b, h, a, v     int64
		attention         string
		blockDelta, headΔ int64
	}{
		// 254M: t = 2048; 2 LayerNorms · 2·t·h = 4·2048·1024, softmax
		// 4·a·s²·b + 2·a·s²·b − 2·a·s²·b = 4·16·512²·4.
		{"254m eager", 512, 4, 1024, 16, 50000, AttentionEager, 4*2048*1024 + 4*16*512*512*4, 2 * 2048 * 1024},
		// 6.86B: t = 512.
		{"6.86b eager", 512, 1, 4096, 32, 50000, AttentionEager, 4*512*4096 + 4*32*512*512*1, 2 * 512 * 4096},
		// Under flash attention no softmax is kept: the LayerNorms only.
		{"254m flash", 512, 4, 1024, 16, 50000, AttentionFlash, 4 * 2048 * 1024, 2 * 2048 * 1024},
	} {
		d := BlockDims{Arch: "gpt", Seq: c.s, Batch: c.b, Hidden: c.h, Heads: c.a, Vocab: c.v, Attention: c.attention, QKVBias: true, OBias: true, MLPBias: true}
		// Full checkpointing keeps the block's bf16 input, 2·t·h, as
		// without autocast.
		checkAutocastDeltas(t, c.name, d, func(d *BlockDims) { d.Autocast = true }, c.blockDelta, c.headΔ, 2*c.s*c.b*c.h)
	}
}

// checkAutocastDeltas holds what d keeps after on sets its autocast
// fields against what it keeps before: the block's and the head's
// activations grow by block and head bytes, and full checkpointing keeps
// full bytes.
func checkAutocastDeltas(t *testing.T, name string, d BlockDims, on func(*BlockDims), block, head, full int64) {
	t.Helper()
	base, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	headBase, _, err := HeadActivation(d)
	if err != nil {
		t.Fatal(err)
	}
	on(&d)
	got, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	gotHead, _, err := HeadActivation(d)
	if err != nil {
		t.Fatal(err)
	}
	if got-base != block {
		t.Errorf("%s: block %d B under autocast, %d without: +%d, want +%d", name, got, base, got-base, block)
	}
	if gotHead-headBase != head {
		t.Errorf("%s: head +%d B under autocast, want +%d", name, gotHead-headBase, head)
	}
	gotFull, _, err := BlockActivation(d, PolicyFull)
	if err != nil {
		t.Fatal(err)
	}
	if gotFull != full {
		t.Errorf("%s: full recompute keeps %d B, want %d", name, gotFull, full)
	}
}

// TestAutocastLoss: cross-entropy on the bf16 logits inside
// torch.autocast (BlockDims.LossAutocast, scenarios.CrossEntropyAutocast)
// keeps log_softmax's bf16 output, 2·t·V, and the fp32 copy nll_loss
// (on autocast's fp32 list) saves, 4·t·V; its backward starts with
// nll_loss's dense fp32 gradient, 4·t·V, and there is no upcast
// temporary beside them (the copy is the saved one). The 254M model's
// head: t = 2048 tokens, V = 50,000: t·V = 102,400,000; beside the bf16
// loss (2·t·V saved, two 2·t·V gradients).
func TestAutocastLoss(t *testing.T) {
	const tv = 2048 * 50000
	d := BlockDims{Arch: "gpt", Seq: 512, Batch: 4, Hidden: 1024, Heads: 16, Vocab: 50000, KeepLogits: 2}
	for _, c := range []struct {
		name              string
		autocast          bool
		loss, transient   int64
		logitTemp, upcast int64
	}{
		{"bf16 loss", false, 2 * tv, 4 * tv, 0, 0},
		{"autocast loss", true, 6 * tv, 4 * tv, 0, 0},
	} {
		d.LossAutocast = c.autocast
		_, loss, grads, err := headParts(d)
		if err != nil {
			t.Fatal(err)
		}
		var tr int64
		for _, g := range grads {
			tr += g
		}
		if loss != c.loss || tr != c.transient {
			t.Errorf("%s: saves %d B, backward %d B; want %d, %d", c.name, loss, tr, c.loss, c.transient)
		}
		logits, upcast, err := HeadLossTemps(d)
		if err != nil {
			t.Fatal(err)
		}
		if logits != c.logitTemp || upcast != c.upcast {
			t.Errorf("%s: temporaries %d, %d B; want %d, %d", c.name, logits, upcast, c.logitTemp, c.upcast)
		}
	}
}

// TestAutocastFP32ModelTensors: torch.autocast over an fp32 model
// (training.autocast with param_dtype fp32: BlockDims.Autocast with
// InputFP32) applies the same op policies as over bf16 parameters, and
// its residual stream is fp32 (scenarios/autocast_fsdp.go). A GPT
// block's two LayerNorms save the fp32 stream, 4·t·h in place of 2·t·h,
// and eager softmax saves fp32 probabilities beside the bf16 cast
// (TestAutocastOpsTensors' deltas); an eager Llama block's two RMSNorms
// keep their normalized tensor in fp32 (hidden_states.to(input_dtype),
// input_dtype fp32), 4·t·h in place of 2·t·h, and its softmax is fp32
// already (SoftmaxFP32); the head's final norm likewise, +2·t·h; full
// checkpointing keeps the fp32 block input, 4·t·h.
func TestAutocastFP32ModelTensors(t *testing.T) {
	const s, b, h, a, f, v = 512, 4, 1024, 16, 2816, 50000
	const tok = s * b
	for _, c := range []struct {
		name              string
		d                 BlockDims
		blockDelta, headΔ int64
	}{
		{"gpt eager", BlockDims{Arch: "gpt", Attention: AttentionEager, QKVBias: true, OBias: true, MLPBias: true},
			2*2*tok*h + 4*a*s*s*b, 2 * tok * h},
		{"gpt flash", BlockDims{Arch: "gpt", Attention: AttentionFlash, QKVBias: true, OBias: true, MLPBias: true},
			2 * 2 * tok * h, 2 * tok * h},
		{"llama eager", BlockDims{Arch: "llama", Attention: AttentionEager, SoftmaxFP32: true},
			2 * 2 * tok * h, 2 * tok * h},
		{"llama flash", BlockDims{Arch: "llama", Attention: AttentionFlash},
			2 * 2 * tok * h, 2 * tok * h},
	} {
		d := c.d
		d.Seq, d.Batch, d.Hidden, d.Heads, d.KVHeads, d.FFN, d.Vocab = s, b, h, a, a, f, v
		checkAutocastDeltas(t, c.name, d, func(d *BlockDims) { d.Autocast, d.InputFP32 = true, true }, c.blockDelta, c.headΔ, 4*tok*h)
	}
}

// TestAutocastFP32CompiledHead: under compiled blocks the final norm is
// still eager (torchtitan's apply_compile compiles each block alone), so
// over the fp32 residual stream it keeps its fp32 normalized tensor:
// +2·t·h on the head, as eager.
func TestAutocastFP32CompiledHead(t *testing.T) {
	const s, b, h = 512, 4, 1024
	d := BlockDims{Arch: "llama", Attention: AttentionFlash, Compiled: true, Seq: s, Batch: b, Hidden: h, Heads: 16, KVHeads: 16, FFN: 2816, Vocab: 50000}
	base, _, err := HeadActivation(d)
	if err != nil {
		t.Fatal(err)
	}
	d.Autocast, d.InputFP32 = true, true
	got, _, err := HeadActivation(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * s * b * h); got-base != want {
		t.Errorf("compiled blocks: head +%d B over the fp32 stream, want +2·t·h = %d", got-base, want)
	}
}

// TestAutocastLossScenario: a scenario's training.cross_entropy autocast
// reaches the head's tensors as the loss on the 16-bit logits
// (baseDims: LossAutocast, not LossFP32). log_softmax runs on the bf16
// logits with their own dtype (scenarios.CrossEntropyAutocast), so no
// fp32 upcast of the logits is made beside them: HeadLossTemps' upcast is
// 0, where the fp32 loss (cross_entropy fp32) makes one of 4·t·V (GPT-3
// 125M's vocab 50,257 at micro-batch 1, seq 2,048: 4·2,048·50,257 =
// 411,705,344 B).
func TestAutocastLossScenario(t *testing.T) {
	const y = `version: 1
stack: deepspeed
cluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 2, zero_stage: 3}
training: {micro_batch: 1, param_dtype: bf16, autocast: bf16}
`
	for _, c := range []struct {
		loss   string
		upcast int64
	}{{"autocast", 0}, {"fp32", 4 * 2048 * 50257}} {
		s, err := scenarios.Load("s.yaml", []byte(y), []string{"training.cross_entropy=" + c.loss})
		if err != nil {
			t.Fatalf("%s: %v", c.loss, err)
		}
		d := baseDims(s)
		_, up, err := HeadLossTemps(d)
		if err != nil {
			t.Fatal(err)
		}
		if up != c.upcast || d.LossAutocast != (c.loss == "autocast") {
			t.Errorf("cross_entropy %s: upcast %d B, LossAutocast %t; want %d, %t", c.loss, up, d.LossAutocast, c.upcast, c.loss == "autocast")
		}
	}
}
