package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAutocastOpsTraffic: a GPT block's memory-bound traffic writes and
// reads once in forward, and twice that in backward, each tensor autograd
// keeps (blockTraffic's rule); under DeepSpeed's torch_autocast over bf16
// parameters (scenarios.Training.AutocastOps) those include autocast's
// fp32 copies (memory.BlockDims.Autocast): each of the two LayerNorms'
// inputs is 4·t·h in place of 2·t·h, and eager softmax keeps 4·a·s²·b of
// fp32 probabilities and their 2·a·s²·b bf16 cast in place of 2·a·s²·b.
// DeepSpeedExamples' bf16_master_weight 254M block (train.py at
// 516082c6): h 1024, 16 heads, seq 512, batch 4 (t = 2048): 4·t·h +
// 4·a·s²·b = 8,388,608 + 67,108,864 = 75,497,472 B more kept, so
// 150,994,944 B more forward and 301,989,888 B more backward.
//
// Autocast over an fp32 model (Training.Autocasts, stage-0 DDP) keeps the
// same tensors in a GPT block: its LayerNorms save the fp32 residual
// stream (memory.BlockDims.InputFP32), 4·t·h each, and softmax runs on
// the same fp32 policy: the same deltas.
func TestAutocastOpsTraffic(t *testing.T) {
	d := FLOPDims{Arch: "gpt", Seq: 512, Batch: 4, Hidden: 1024, Heads: 16, KVHeads: 16, FFN: 4096, Vocab: 50000}
	for _, c := range []struct {
		name, stack string
		param       scenarios.DType
	}{
		{"deepspeed over bf16", "deepspeed", scenarios.BF16},
		{"ddp over fp32", "", scenarios.FP32},
	} {
		s := &scenarios.Scenario{Stack: c.stack}
		s.Training.Attention = scenarios.AttentionEager
		s.Training.ParamDType = c.param
		f0, b0, err := blockElementwise(s, d, false)
		if err != nil {
			t.Fatal(err)
		}
		s.Training.Autocast = scenarios.BF16
		if !s.Training.AutocastOps() && !s.Training.Autocasts() {
			t.Fatalf("%s: autocast bf16 is neither AutocastOps nor Autocasts", c.name)
		}
		f1, b1, err := blockElementwise(s, d, false)
		if err != nil {
			t.Fatal(err)
		}
		// t = s·b tokens: the LayerNorms' 2·(4−2)·t·h, softmax's 4·a·s²·b +
		// 2·a·s²·b − 2·a·s²·b; written and read once forward, twice backward.
		const tok, h, a, seq, b = 512 * 4, 1024, 16, 512, 4
		const kept = 2*(4-2)*tok*h + 4*a*seq*seq*b // 75,497,472
		if f1-f0 != 2*kept || b1-b0 != 4*kept {
			t.Errorf("%s: autocast adds %d / %d B, want %d / %d (150,994,944 / 301,989,888)", c.name, f1-f0, b1-b0, 2*kept, 4*kept)
		}
	}
}

// TestAutocastLossTraffic: under training.cross_entropy autocast the
// head's loss moves 10 B per logit (scenarios.CrossEntropyAutocast:
// log_softmax reads and writes the bf16 logits, 4 B; autocast's fp32 copy
// for nll_loss reads 2 and writes 4), against 4 B for the bf16 loss: the
// head unit's forward is 6·t·V B longer at the memory-bound rate and its
// backward twice that; no other unit moves. Llama 2 7B under DeepSpeed's
// torch_autocast over bf16 parameters, micro-batch 1 of 4,096 tokens,
// vocabulary 32,000, on A100s (2,039 GB/s at DefaultHBMEfficiency).
func TestAutocastLossTraffic(t *testing.T) {
	const doc = `version: 1
stack: deepspeed
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: llama2-7b}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 1, param_dtype: bf16, autocast: bf16}
`
	ac, b16 := docCosts(t, doc, "training.cross_entropy=autocast"), docCosts(t, doc, "training.cross_entropy=bf16")
	hbm := 2039e9 * DefaultHBMEfficiency
	const tv = 4096 * 32000 // micro-batch 1 of llama2-7b's 4,096 tokens, vocabulary 32,000
	headOnlyDelta(t, ac, b16, 6*tv/hbm, "longer")
}
