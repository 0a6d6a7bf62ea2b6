package memory

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOpForceRecomputeList holds training.op_force_recompute, torchtitan's
// per_op_sac_force_recompute_mm_shapes_by_fqns: _apply_op_sac
// (torchtitan/distributed/activation_checkpoint.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, lines 76-93) collects the
// (in, out) weight shape of every Linear of the block whose FQN contains a
// fragment, and _custom_policy (lines 110-113) recomputes every aten.mm
// whose rhs has one of those shapes without counting it. t = 4,096 tokens
// (s = 4,096, b = 1), sdpa.
//
// Qwen3-30B-A3B's MoE block (h 2048, 32 heads of 128, 4 kv heads: wq
// (2048, 4096), wk and wv (2048, 512), wo (4096, 2048), the gate (2048,
// 128); the experts are the next unit). It keeps the attention output
// 2·t·4096 and log-sum-exp 4·32·t, and of the mms:
//
//   - default ["moe.router.gate"]: wq 1*, wk 2, wv 3*, wo 4, (gate):
//     wq's output 2·t·4096 and wv's 2·t·512.
//   - []: the gate counts, 5*: 2·t·128 = 1,048,576 B more.
//   - ["feed_forward.w2"]: the block has no dense MLP, no Linear matches:
//     the same as [].
//   - ["attention.wk"]: wk's shape (2048, 512) is wv's too: both forced,
//     wq 1*, wo 2, gate 3*: wq's and the gate's outputs, not wv's.
//
// Llama 3 8B's dense block (h 4096, 32 heads, 8 kv heads, ffn 14336):
// default wq 1*, wk 2, wv 3*, wo 4, w1 5*, w3 6, w2 7* (w1's output is
// silu's input, on the list; the others kept beside it):
//
//   - ["feed_forward.w2"]: w2 (14336, 4096) forced: its output 2·t·4096
//     is no longer kept.
//   - ["attention.wo"]: wo's (4096, 4096) is wq's shape too: wk 1*, wv 2,
//     w1 3*, w3 4, w2 5*: wk's output 2·t·1024 kept instead of wq's
//     2·t·4096 and wv's 2·t·1024.
func TestOpForceRecomputeList(t *testing.T) {
	const tk = 4096
	moe := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, NoFFN: true, RouterExperts: 128, Attention: AttentionSDPA}
	dense := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Attention: AttentionSDPA}
	const (
		mIn, mQ, mKV, mAttn, mLSE, mGate = 2 * tk * 2048, 2 * tk * 4096, 2 * tk * 512, 2 * tk * 4096, 4 * 32 * tk, 2 * tk * 128
		lIn, lKV, lLSE, lW1              = 2 * tk * 4096, 2 * tk * 1024, 4 * 32 * tk, 2 * tk * 14336
	)
	if mGate != 1_048_576 {
		t.Fatalf("hand count: gate output %d", mGate)
	}
	with := func(d BlockDims, frags ...string) BlockDims {
		d.OpForce, d.OpForceGiven = strings.Join(frags, "\n"), true
		return d
	}
	for _, c := range []struct {
		name   string
		d      BlockDims
		keep   []int64
		onList int64
	}{
		{"MoE, default", moe, []int64{mIn, mQ, mKV, mAttn, mLSE}, mAttn + mLSE},
		{"MoE, default given", with(moe, "moe.router.gate"), []int64{mIn, mQ, mKV, mAttn, mLSE}, mAttn + mLSE},
		{"MoE, []", with(moe), []int64{mIn, mQ, mKV, mAttn, mLSE, mGate}, mAttn + mLSE},
		{"MoE, feed_forward.w2", with(moe, "feed_forward.w2"), []int64{mIn, mQ, mKV, mAttn, mLSE, mGate}, mAttn + mLSE},
		{"MoE, attention.wk", with(moe, "attention.wk"), []int64{mIn, mQ, mAttn, mLSE, mGate}, mAttn + mLSE},
		{"dense, default", dense, []int64{lIn, lIn, lKV, lIn, lLSE, lW1, lIn}, lIn + lLSE + lW1},
		{"dense, feed_forward.w2", with(dense, "feed_forward.w2"), []int64{lIn, lIn, lKV, lIn, lLSE, lW1}, lIn + lLSE + lW1},
		{"dense, attention.wo", with(dense, "attention.wo"), []int64{lIn, lKV, lIn, lLSE, lW1, lIn}, lIn + lLSE + lW1},
	} {
		checkOpKeep(t, c.name, c.d, c.keep, c.onList, 0)
	}
	// The rerun: default wk, wo and the gate, 2·t·2048·(512 + 4096 +
	// 128); [] wk and wo only.
	for _, c := range []struct {
		d     BlockDims
		flops int64
	}{{moe, 2 * tk * 2048 * (512 + 4096 + 128)}, {with(moe), 2 * tk * 2048 * (512 + 4096)}} {
		if f, err := OpRecomputedMMFLOPs(c.d); err != nil || f != c.flops {
			t.Errorf("%q: reruns %d FLOPs (%v), want %d", c.d.OpForce, f, err, c.flops)
		}
	}
}

// TestOpForceFromScenario: training.op_force_recompute reaches block.0 of
// a scenario (baseDims): Qwen3-30B-A3B's block keeps its gate's output
// 2·t·128 under [] and not under the default (TestOpForceRecomputeList).
func TestOpForceFromScenario(t *testing.T) {
	const tk = 4096
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, layers: 2, seq_len: 4096}\n" +
		"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op, attention: sdpa}\n"
	base := []int64{2 * tk * 2048, 2 * tk * 4096, 2 * tk * 512, 2 * tk * 4096, 4 * 32 * tk}
	for _, c := range []struct {
		sets []string
		keep []int64
	}{
		{nil, base},
		{[]string{"training.op_force_recompute=[]"}, append(slices.Clone(base), 2*tk*128)},
	} {
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(r.Units, func(u UnitInfo) bool { return u.Name == "block.0" })
		if i < 0 {
			t.Fatal("no block.0")
		}
		if got := r.Units[i].ActivationTensors; !slices.Equal(got, c.keep) {
			t.Errorf("%v: block.0 keeps %v, want %v", c.sets, got, c.keep)
		}
	}
}

// TestOpForceFQNsAreScenarios: the mms the op policy names and matches
// (blockTensors) are, for every block of every model config in
// scenarios/testdata/hf-extra and of the gpt and llama presets, the
// Linears scenarios.BlockLinearFQNs lists (the names the loader warns of
// a fragment matching none of), in the same order.
func TestOpForceFQNsAreScenarios(t *testing.T) {
	files, err := filepath.Glob("../scenarios/testdata/hf-extra/*.json")
	if err != nil || len(files) < 20 {
		t.Fatalf("configs: %v, %v", files, err)
	}
	models := []string{"{preset: gpt3-1.3b, seq_len: 1024}", "{preset: llama2-7b}"}
	for _, f := range files {
		models = append(models, "{hf_config: hf-extra/"+filepath.Base(f)+", layers: 4, seq_len: 1024}")
	}
	kinds := map[string]bool{}
	for _, m := range models {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: " + m +
			"\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		for u, l := range s.Model.LayerList {
			if !l.Block {
				continue
			}
			_, _, mms, err := blockTensors(UnitBlockDims(s, u))
			if err != nil {
				t.Fatalf("%s: %s: %v", m, l.Name, err)
			}
			var got []string
			for _, x := range mms {
				got = append(got, x.fqn)
			}
			want := scenarios.BlockLinearFQNs(&s.Model, u)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s: mms %v, scenarios lists %v", m, l.Name, got, want)
			}
			kinds[strings.Join(got, " ")] = true
		}
	}
	if len(kinds) < 8 {
		t.Errorf("only %d block kinds: %v", len(kinds), kinds)
	}
}
