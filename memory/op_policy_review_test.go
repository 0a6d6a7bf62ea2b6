package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestGPTBlockOpTensors holds a GPT block's lists under torchtitan's op
// policy to a hand count (t = 2,048 tokens, h = 1,024, 16 heads, f =
// 4,096). The policy (torchtitan/distributed/activation_checkpoint.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, _save_list and every other
// aten.mm) caches the outputs of the odd-numbered mms and the attention
// kernel's outputs; PyTorch's _CachedTorchDispatchMode hands the cached
// outputs back in the recomputation and reruns every other op.
//
// The gpt preset's block has a bias on every matrix (scenarios'
// buildLayers), so qkv, proj, fc1 and fc2 run aten.addmm (pytorch
// aten/src/ATen/native/Linear.cpp at
// 81735ee6f5da25b75bccd580b6958c36c92166af: linear calls addmm for a 2-D
// input with a bias and _flatten_nd_linear, also addmm, for a contiguous
// 3-D one), which is not in the save list: no mm output is kept. Kept:
// the block input 2·t·h, the attention output 2·t·h and the log-sum-exp
// 4·a·s = 131,072. Rebuilt: the two LayerNorms' mean and rstd (8·t each),
// their outputs (2·t·h each), q, k and v (2·t·h each: sdpa's GQA copies
// are as wide), the residual sum the FFN norm saves (2·t·h), fc1's output
// and gelu's (2·t·f each).
//
// Without biases (Falcon-style) mm 1 (qkv) and mm 3 (fc1) are kept as
// before: q, k and v are views of the cached qkv output and are not
// rebuilt, unless sdpa's GQA expansion copies k and v (2·t·h each).
func TestGPTBlockOpTensors(t *testing.T) {
	const th, tf, t8 = 2 * 2048 * 1024, 2 * 2048 * 4096, 8 * 2048
	biased := func(d BlockDims) BlockDims { d.QKVBias, d.OBias, d.MLPBias = true, true, true; return d }
	mha := BlockDims{Seq: 2048, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096, Attention: AttentionFlash}
	sdpa := mha
	sdpa.Attention = AttentionSDPA
	gqa := sdpa
	gqa.KVHeads = 4
	for _, c := range []struct {
		name          string
		d             BlockDims
		keep, rebuild []int64
	}{
		{"MHA flash", biased(mha), []int64{th, th, 4 * 16 * 2048}, []int64{t8, th, th, th, th, th, t8, th, tf, tf}},
		{"MHA sdpa", biased(sdpa), []int64{th, th, 4 * 16 * 2048}, []int64{t8, th, th, th, th, th, t8, th, tf, tf}},
		{"GQA sdpa", biased(gqa), []int64{th, th, 4 * 16 * 2048}, []int64{t8, th, th, th, th, th, t8, th, tf, tf}},
		{"MHA flash, no biases", mha, []int64{th, 2 * 2048 * 3 * 1024, th, 4 * 16 * 2048, tf}, []int64{t8, th, th, t8, th, tf}},
		{"MHA sdpa, no biases", sdpa, []int64{th, 2 * 2048 * 3 * 1024, th, 4 * 16 * 2048, tf}, []int64{t8, th, th, t8, th, tf}},
		{"GQA sdpa, no biases", gqa, []int64{th, 2 * 2048 * (1024 + 2*256), th, 4 * 16 * 2048, tf}, []int64{t8, th, th, th, th, t8, th, tf}},
	} {
		keep, rebuild, err := BlockActivationTensors(c.d, PolicyOp)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keep, c.keep) || !slices.Equal(rebuild, c.rebuild) {
			t.Errorf("%s: keep %v, rebuild %v; want %v, %v", c.name, keep, rebuild, c.keep, c.rebuild)
		}
	}
}

// TestUnitTensorsOutsideBlocks: the lists the allocator replay allocates
// add up to the activation model's bytes for the units that are not
// derived blocks too (the embedded examples have none of them, so
// checkReport's sum check never saw them): routed experts (Qwen3-30B-A3B,
// kept without recompute, rebuilt under full) and a block whose
// activation_bytes are given (3 MiB, kept as one tensor).
func TestUnitTensorsOutsideBlocks(t *testing.T) {
	moe := func(rc string) string {
		return "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, layers: 2, seq_len: 4096}\n" +
			"parallelism: {dp: 16, zero_stage: 3, ep: 16}\ntraining: {micro_batch: 1, recompute: " + rc + "}\n"
	}
	given := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  hidden: 1024\n  heads: 16\n  seq_len: 2048\n  vocab: 1000\n" +
		"  layer_list:\n  - {name: embedding, params: 1024000}\n  - {name: block.0, params: 12000000, activation_bytes: 3MiB}\n" +
		"  - {name: block.1, params: 12000000}\n  - {name: lm_head, params: 1024001}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: none}\n"
	for _, c := range []struct {
		name, yaml, unit string
		keep, rebuild    bool // the unit has a kept / a rebuilt tensor
	}{
		{"experts, none", moe("none"), "experts.0", true, false},
		{"experts, full", moe("full"), "experts.0", false, true},
		{"activation_bytes", given, "block.0", true, false},
	} {
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(c.yaml), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, c.name, r)
		found := false
		for _, ui := range r.Units {
			if ui.Name != c.unit {
				continue
			}
			found = true
			if (len(ui.ActivationTensors) == 1) != c.keep || (len(ui.RecomputeTensors) == 1) != c.rebuild {
				t.Errorf("%s: %s keeps %v and rebuilds %v (%d, %d B)", c.name, c.unit, ui.ActivationTensors, ui.RecomputeTensors, ui.Activation, ui.Recompute)
			}
			if c.unit == "block.0" && ui.Activation != 3<<20 {
				t.Errorf("%s: %s keeps %d B, want the 3 MiB given", c.name, c.unit, ui.Activation)
			}
		}
		if !found {
			t.Fatalf("%s: no unit %s", c.name, c.unit)
		}
	}
}
