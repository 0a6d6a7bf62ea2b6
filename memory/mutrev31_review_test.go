package memory

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOpSaveAbsOrder: under torchtitan's op policy with aten.abs saved,
// each Float8Linear takes the abs of its weight (no float8 all-gather) and
// of its input before its mm runs (torchao's Float8Linear.forward:
// _get_weight_scale, then hp_tensor_to_float8_dynamic on the input, then
// the matmul; opAbs), so the policy's cache holds them before the mm's
// output and the allocator replay allocates them in that order. On Llama
// 3 8B's block (t = 8192, h = 4096, f = 14336): after the block input
// 2·t·h, wq's weight abs 2·h·h and its input's abs 2·t·h come first; the
// block ends with w2's weight abs 2·f·h, its input's abs 2·t·f and w2's
// output 2·t·h (the seventh mm, odd: kept).
func TestOpSaveAbsOrder(t *testing.T) {
	const t8, h, f = 8192, 4096, 14336
	d := BlockDims{Arch: "llama", Seq: t8, Batch: 1, Hidden: h, Heads: 32, KVHeads: 8, FFN: f, Attention: AttentionSDPA, OpSaveAbs: true, OpAbsWeights: true}
	keep, _, err := BlockActivationTensors(d, PolicyOp)
	if err != nil {
		t.Fatal(err)
	}
	n := len(keep)
	if n < 6 || !slices.Equal(keep[:3], []int64{2 * t8 * h, 2 * h * h, 2 * t8 * h}) || !slices.Equal(keep[n-3:], []int64{2 * f * h, 2 * t8 * f, 2 * t8 * h}) {
		t.Errorf("op policy keeps %v; want it to start with the block input, wq's weight abs and input abs %v and end with w2's weight abs, input abs and output %v",
			keep, []int64{2 * t8 * h, 2 * h * h, 2 * t8 * h}, []int64{2 * f * h, 2 * t8 * f, 2 * t8 * h})
	}
}

// TestMegatronLocalQKNormOpPolicy: under torchtitan's op policy the aten
// local block's q_norm keeps the q_proj output, which is the tensor the
// policy caches for q_proj (the first mm, odd: saved), so it is kept once,
// not rebuilt: beside the same block without q/k norms (where q_proj's
// output is a cached mm output of its own) the policy keeps nothing more,
// and rebuilds the q_norm rstd 4·t·a, the k_proj output k_norm keeps
// 2·t·kv (k_proj is the second mm: recomputed) and the k_norm rstd 4·t·kv_h.
func TestMegatronLocalQKNormOpPolicy(t *testing.T) {
	d := teFP8Dims
	d.MegatronLocal, d.NormATen, d.HeadDim = true, true, 128
	keep0, rebuild0, err := BlockActivationTensors(d, PolicyOp)
	if err != nil {
		t.Fatal(err)
	}
	d.QKNorm = scenarios.QKNormRMSHead
	keep, rebuild, err := BlockActivationTensors(d, PolicyOp)
	if err != nil {
		t.Fatal(err)
	}
	const kvw = teTok * 8 * 128
	if dk, dr := sum(keep)-sum(keep0), sum(rebuild)-sum(rebuild0); dk != 0 || dr != 4*teTok*32+2*kvw+4*teTok*8 {
		t.Errorf("q/k norms under the op policy keep %d more and rebuild %d more, want 0 and 4·t·a + 2·t·kv + 4·t·kv_h = %d", dk, dr, int64(4*teTok*32+2*kvw+4*teTok*8))
	}
}

// TestParamRemaindersFP32Group: the remainders are the low half of a bf16
// param's fp32 master; an fp32 group (a router kept in fp32) is its own
// master (elemBytes: no master copy), and Apex's and TE's kernels keep no
// remainder for it. On two units, a bf16 one of 600 and an fp32 one of 400
// parameters, over N = 2 (padding toy): the bf16 group's master is 2 B an
// element, the fp32 group's 0, so the master component is 2 · 300 B.
func TestParamRemaindersFP32Group(t *testing.T) {
	s := remaindersToy(t, `  groups: [{name: dense, precision: bf16}, {name: router, precision: fp32}]
  layer_list: [{name: a, params: 600}, {name: r, params: 400, group: router}]
`, "training.store_param_remainders=true")
	r := mustAnalyze(t, s, Options{})
	want := map[string]int64{"dense": 2, "router": 0}
	if len(r.Groups) != len(want) {
		t.Errorf("%d groups, want %d (dense and router)", len(r.Groups), len(want))
	}
	for _, g := range r.Groups {
		if w, ok := want[g.Name]; !ok || g.MasterBytes != w {
			t.Errorf("group %s (%s): master %d B an element, want %d", g.Name, g.Precision, g.MasterBytes, w)
		}
	}
	if got := r.Component(CompMaster).AtRest; got != 2*300 {
		t.Errorf("master at rest %d B, want 2 · 300 = 600", got)
	}
}

// TestParamRemaindersNote: the master row says what it holds under
// store_param_remainders, the int16 low halves, not an fp32 shard.
func TestParamRemaindersNote(t *testing.T) {
	s := remaindersToy(t, remaindersTwoUnits, "training.store_param_remainders=true")
	c := mustAnalyze(t, s, Options{}).Component(CompMaster)
	if c.AtRest != 2*500 || !strings.Contains(c.Note, "int16 remainders") {
		t.Errorf("master %d B, note %q; want 2 · 500 B of int16 remainders", c.AtRest, c.Note)
	}
}

// TestHFLossRebindOrder: held past the loss (hf_use_cache kept, keep_logits
// fp32), logits = logits.float() frees the 16-bit projection output
// 2·t·V (t = 8·2048, V = 32,000) before the loss, in order: its free is an
// OpRebind, which a replay applies when it starts, not when the head's
// compute ends (where the old logits would meet the 16-bit ones). With the
// loop rebinding before the loss (hf_use_cache forward) the loss's inputs
// are the new logits and the free stays with the compute.
func TestHFLossRebindOrder(t *testing.T) {
	const p16 = 2 * 8 * 2048 * 32000
	for _, c := range []struct {
		cache string
		op    Op
	}{{"kept", OpRebind}, {"forward", OpCompute}} {
		r := keepLogitsReport(t, "training.keep_logits=fp32", "training.hf_use_cache="+c.cache)
		head := unitIndex(t, r, "lm_head")
		var ops []Op
		for _, e := range r.Timeline() {
			if e.Phase == PhaseForward && e.Unit == head && e.Component == CompLossTemp && e.Delta == -p16 {
				ops = append(ops, e.Op)
			}
		}
		if len(ops) != 1 || ops[0] != c.op {
			t.Errorf("%s: frees of the 16-bit logits at lm_head %v, want one %s", c.cache, ops, c.op)
		}
	}
}

// TestOpSaveAbsDDP: under DDP (torchtitan's stage 0) nothing is gathered,
// so training.fp8_all_gather has no fp8 weight to hand the Float8Linears:
// each casts its whole bf16 weight and the op policy keeps that weight's
// abs too, the 1 GiB a block of TestOpSaveAbs (inputs and weights), 32
// GiB over Llama 3 8B's 32 blocks at the activations' peak, as without
// the float8 all-gather.
func TestOpSaveAbsDDP(t *testing.T) {
	peak := func(abs bool) int64 {
		s := loadOpSaveAbs(t, abs, "parallelism.zero_stage=0", "training.fp8=torchao", "training.fp8_all_gather=true")
		return mustAnalyze(t, s, Options{}).Component(CompActivations).Peak
	}
	if got := peak(true) - peak(false); got != 32<<30 {
		t.Errorf("DDP with fp8_all_gather: op_save_abs adds %d B to the activations' peak, want 32 GiB (inputs' and weights' abs)", got)
	}
}

// TestMegatronCompiledBlocks: Megatron's Transformer Engine and local
// blocks are derived eager (BlockDims.check refuses them compiled); a
// scenario with training.compile: blocks under stack megatron, which the
// loader takes, gets the compiled Llama block instead and analyzes.
func TestMegatronCompiledBlocks(t *testing.T) {
	for _, impl := range []string{"transformer_engine", "local"} {
		s, err := scenarios.Load("s.yaml", []byte("version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 1}\ntraining: {compile: blocks, transformer_impl: "+impl+"}\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := baseDims(s); d.MegatronTE || d.MegatronLocal || d.NormATen || !d.Compiled {
			t.Errorf("%s, compiled: MegatronTE %t, MegatronLocal %t, NormATen %t, Compiled %t; want a compiled block of neither", impl, d.MegatronTE, d.MegatronLocal, d.NormATen, d.Compiled)
		}
		if _, err := Analyze(s, Options{}); err != nil {
			t.Errorf("%s, compiled: %v", impl, err)
		}
	}
}
