package memory

import (
	"fmt"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// The Llama 3 8B block of the op_save_abs tests (t = 8192, h = 4096,
// kv = 8·128, f = 14336) and the abs its Float8Linears keep a block, by
// hand from the Linears' shapes (TestOpSaveAbs spells the sums out).
const (
	opAbsSeq, opAbsHidden, opAbsKV, opAbsFFN = 8192, 4096, 1024, 14336

	opAbsInputs  = 2 * opAbsSeq * (6*opAbsHidden + opAbsFFN)
	opAbsWeights = 2 * (2*opAbsHidden*opAbsHidden + 2*opAbsKV*opAbsHidden + 3*opAbsFFN*opAbsHidden)
)

// TestOpSaveAbs: torchtitan's op policy with aten.abs in its _save_list
// (87e2c09c4 to 88247277c) under eager torchao float8 keeps the 16-bit abs
// of every tensor a Float8Linear casts (opAbs). By hand for a Llama 3 8B
// block at seq 8192, micro-batch 1 (t = 8192, h = 4096, kv = 8·128 =
// 1024, f = 14336), from the Linears' shapes:
//
//	inputs   2·t·(h + h + h + h + h + h + f)   wq wk wv wo w1 w3 w2
//	       = 2·8192·38,912                        =   637,534,208
//	weights  2·(h·h + kv·h + kv·h + h·h + 3·f·h)  wq wk wv wo w1 w3 w2
//	       = 2·218,103,808                        =   436,207,616
//	                                                1,073,741,824 bytes
//
// a block, exactly 1 GiB (32 GiB over 32 blocks: torchtitan 2271b6386's
// eager float8 run measured 81.77 GiB reserved where zerosim, without
// it, gave 49.60). Kept only under the op policy; the inputs alone with
// the float8 all-gather (the gathered weight is already fp8); nothing
// compiled (OpSavesAbs leaves OpSaveAbs off), nothing under the other
// policies, and nothing rebuilt.
func TestOpSaveAbs(t *testing.T) {
	const t8, h, f = opAbsSeq, opAbsHidden, opAbsFFN
	const inputs, weights = opAbsInputs, opAbsWeights
	if inputs != 637_534_208 || weights != 436_207_616 || inputs+weights != 1<<30 {
		t.Fatalf("hand sums %d + %d", inputs, weights)
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestOpSaveAbs",
		fmt.Sprintf("%s + %s = %s bytes, 1 GiB a block", commas(inputs), commas(weights), commas(inputs+weights)))
	base := BlockDims{Arch: "llama", Seq: t8, Batch: 1, Hidden: h, Heads: 32, KVHeads: 8, FFN: f, Attention: AttentionSDPA}
	for _, c := range []struct {
		abs, weights bool
		want         int64 // more kept under the op policy
	}{
		{false, false, 0},
		{false, true, 0},
		{true, false, inputs},
		{true, true, inputs + weights},
	} {
		d := base
		d.OpSaveAbs, d.OpAbsWeights = c.abs, c.weights
		for _, policy := range []string{PolicyNone, PolicySelective, PolicyOp, PolicyFull} {
			keep0, rebuild0, err := BlockActivationTensors(base, policy)
			if err != nil {
				t.Fatal(err)
			}
			keep, rebuild, err := BlockActivationTensors(d, policy)
			if err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			if policy == PolicyOp {
				want = c.want
			}
			if dk, dr := sum(keep)-sum(keep0), sum(rebuild)-sum(rebuild0); dk != want || dr != 0 {
				t.Errorf("abs %t weights %t %s: keeps %d more and rebuilds %d more, want %d and 0", c.abs, c.weights, policy, dk, dr, want)
			}
		}
	}
}

// loadOpSaveAbs loads the op_save_abs tests' torchtitan Llama 3 8B
// (8 H100s at 95 GiB, seq 8192, micro-batch 1, op recompute, zero_stage 3)
// with the sets and training.op_save_abs as abs.
func loadOpSaveAbs(t *testing.T, abs bool, sets ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("tt.yaml", []byte(`version: 1
stack: torchtitan
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB, gpu_memory: 95GiB}
model: {preset: llama3.1-8b, seq_len: 8192}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 1, recompute: op}
`), append(slices.Clone(sets), fmt.Sprintf("training.op_save_abs=%t", abs)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpSaveAbsScenario: the scenario wires training.op_save_abs into the
// blocks only under torchao's float8 with the blocks eager (OpSavesAbs),
// the weights' abs only without the float8 all-gather; Llama 3 8B
// (llama3.1-8b's shapes) on 8 H100 at seq 8192 under the op policy, as
// torchtitan's llama3_8b.toml: 32 GiB more allocated at the peak without
// the float8 all-gather (TestOpSaveAbs's 1 GiB a block), 32 blocks'
// inputs with it, and nothing compiled, in bf16 or with op_save_abs false.
func TestOpSaveAbsScenario(t *testing.T) {
	const inputs, both = 32 * opAbsInputs, 32 << 30 // TestOpSaveAbs: inputs 637,534,208 B a block, inputs and weights 1 GiB
	for _, c := range []struct {
		sets []string
		want int64
	}{
		{[]string{"training.fp8=torchao", "training.fp8_all_gather=false"}, both},
		{[]string{"training.fp8=torchao", "training.fp8_all_gather=true"}, inputs},
		{[]string{"training.fp8=torchao", "training.fp8_all_gather=false", "training.compile=blocks"}, 0},
		{[]string{"training.fp8=none"}, 0},
	} {
		peak := func(abs bool) int64 {
			s := loadOpSaveAbs(t, abs, c.sets...)
			if got := OpSavesAbs(s); got != (abs && c.want > 0) {
				t.Errorf("%v op_save_abs %t: OpSavesAbs %t", c.sets, abs, got)
			}
			return mustAnalyze(t, s, Options{}).Peak
		}
		if got := peak(true) - peak(false); got != c.want {
			t.Errorf("%v: op_save_abs adds %d B to the peak, want %d", c.sets, got, c.want)
		}
	}
}
