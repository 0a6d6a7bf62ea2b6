package zero

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMegatronGPTChain holds a small GPT block under stack: megatron
// (h = 1,024, f = 4h = 4,096, 16 heads, seq 1,024 at micro-batch 2: t =
// 2,048 tokens) to megatronChain's GPT count, derived by hand from the
// kernels Megatron-core's get_gpt_layer_with_transformer_engine_spec runs
// (megatron/core/models/gpt/gpt_layer_specs.py at NVIDIA/Megatron-LM
// baf94af3c667248865f23df73b9fb8e2395e6fd0, core_v0.8.0):
//
// Forward per token: the two LayerNorms fused into linear_qkv and
// linear_fc1 (TE's layernorm_fwd: x read, y written) 2·4·h, the two
// bias-dropout-adds (one compiled kernel: branch and residual read, sum
// written) 2·6·h, bias_gelu (fc1's output read, activation written) 4·f:
// 20·1,024 + 4·4,096 = 36,864 B, ×t = 75,497,472. Backward: the norms
// (dy and x read, dx written) 2·6·h, the residual gradients added to the
// norms' 2·6·h, bias_gelu_back (g and fc1's output read, tmp written) 6·f
// and the fc1 bias gradient's sum over tmp 2·f, linear_proj's and
// linear_fc2's bias gradients (the branch gradient read) 2·2·h: 28·1,024 +
// 8·4,096 = 61,440 B, ×t = 125,829,120. No RoPE (learned positions, the
// embedding's). With dropout 0.1 each bias-dropout-add writes its 1 B
// mask forward, +2·h = 38,912 B (79,691,776), and runs the dropout's
// backward (gradient and mask read, gradient written, 5 B) twice, +10·h
// = 71,680 B (146,800,640).
//
// The local spec (get_gpt_layer_local_spec: LNImpl, apex's FusedLayerNorm,
// one kernel each way; the same MLP and bias-dropout-add modules) moves
// the same bytes; under its own eager DotProductAttention the s² tensors
// it keeps (softmax output 2·a·s²·b, dropout mask a·s²·b and output
// 2·a·s²·b, memory's eagerScores: 5·16·1,024²·2 = 167,772,160 B) are
// written and read once forward (+335,544,320) and twice that backward
// (+671,088,640).
//
// The old rule (2× the kept tensors forward, 4× backward, keptTraffic)
// charged this block 2-3 times the bytes; the final norm is a TENorm (4
// and 6 B an element) and the learned positions' rows (seq_len) sit in
// the embedding unit.
func TestMegatronGPTChain(t *testing.T) {
	const h, f, tok = 1024, 4096, 2048
	const scores = 5 * 16 * 1024 * 1024 * 2
	doc := "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {kind: transformer, arch: gpt, hidden: 1024, layers: 2, heads: 16, ffn: 4096, vocab: 50304, seq_len: 1024}\n" +
		"parallelism: {dp: 8, zero_stage: 1}\ntraining: TRAINING\n"
	for _, c := range []struct {
		name, training string
		fwd, bwd       int64 // the doc comment's
		perF, perB     int64 // per token, before eager attention
		eager          bool
	}{
		{"Transformer Engine, no dropout", "{micro_batch: 2, dropout: 0}", 75_497_472, 125_829_120, 20*h + 4*f, 28*h + 8*f, false},
		{"Transformer Engine, dropout 0.1", "{micro_batch: 2, dropout: 0.1}", 79_691_776, 146_800_640, 22*h + 4*f, 38*h + 8*f, false},
		{"local, flash, dropout 0.1", "{micro_batch: 2, dropout: 0.1, transformer_impl: local, attention: flash}", 79_691_776, 146_800_640, 22*h + 4*f, 38*h + 8*f, false},
		{"local, eager, dropout 0.1", "{micro_batch: 2, dropout: 0.1, transformer_impl: local}", 79_691_776 + 2*scores, 146_800_640 + 4*scores, 22*h + 4*f, 38*h + 8*f, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			wf, wb := tok*c.perF, tok*c.perB
			if c.eager {
				wf, wb = wf+2*scores, wb+4*scores
			}
			if wf != c.fwd || wb != c.bwd {
				t.Fatalf("derived %d, %d; the doc comment says %d, %d", wf, wb, c.fwd, c.bwd)
			}
			s, err := scenarios.Load("gpt.yaml", []byte(strings.Replace(doc, "TRAINING", c.training, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := flopDims(s)
			if got, b, err := blockElementwise(s, d, false); err != nil || got != wf || b != wb {
				t.Errorf("block: forward %d, backward %d B (%v); want %d and %d", got, b, err, wf, wb)
			}
			if got, b, err := finalNormBytes(s, d); err != nil || got != 4*tok*h || b != 6*tok*h {
				t.Errorf("final norm: forward %d, backward %d B (%v); want %d and %d", got, b, err, 4*tok*h, 6*tok*h)
			}
			if r := s.Model.LearnedPositionRows(); r != 1024 {
				t.Errorf("learned position rows %d, want seq_len 1,024", r)
			}
		})
	}
}
