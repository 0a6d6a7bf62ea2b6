package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// remaindersTwoUnits is the model of the remainder toys: two bf16 units
// of 600 and 400 parameters.
const remaindersTwoUnits = "  layer_list: [{name: a, params: 600}, {name: b, params: 400}]\n"

// remaindersToy loads the remainder tests' generic toy under stack megatron
// over N = 2 at zero_stage 1 (padding toy, activations off) with the model
// lines given (indented under model:, after kind: generic) and the sets.
func remaindersToy(t *testing.T, model string, sets ...string) *scenarios.Scenario {
	t.Helper()
	yaml := `version: 1
stack: megatron
cluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}
model:
  kind: generic
` + model + `parallelism: {dp: 2, zero_stage: 1}
communication: {padding: toy}
training: {micro_batch: 1}
memory: {activations: false}
`
	s, err := scenarios.Load("s.yaml", []byte(yaml), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParamRemaindersStateBytes holds training.store_param_remainders to
// the optimizer state its sources allocate, derived by hand on two bf16
// units of 600 and 400 parameters under stack megatron over N = 2 (P =
// 1000, the rank's shard R = 500; padding toy, so none): Apex's StateBucket keeps
// param_remainders_shard in torch.int16 (2 B) and exp_avg_shard and
// exp_avg_sq_shard in the optimizer's fp32 (4 B each), with no
// params_shard; Transformer Engine's FusedAdam keeps master_param in
// torch.int16 for a bf16 param and exp_avg, exp_avg_sq in fp32
// (scenarios.resolveParamRemainders cites both). Against Megatron's
// fp32 shard_main_param (4 B) the state drops from 12 to 10 B per shard
// element. Both optimizers read the gradient in its dtype, so the
// grad.float() copy of a bf16 gradient shard (R × 4 B) goes as well;
// beside Megatron's fp32 main_grad buffer (reduce_dtype fp32, the
// preset's) there was none. The full param and grad buffers stay. At
// stages other than the loader's 1 (a stage comparison) the master is
// whole again.
func TestParamRemaindersStateBytes(t *testing.T) {
	const P, R = 1000, 500
	for _, c := range []struct {
		name                         string
		sets                         []string
		stage                        int // 0: the file's
		params, grads, mst, m, v, tm int64
	}{
		{"fp32 master, fp32 main_grad", nil, 0, 2 * P, 4 * P, 4 * R, 4 * R, 4 * R, 0},
		{"remainders, fp32 main_grad", []string{"training.store_param_remainders=true"}, 0, 2 * P, 4 * P, 2 * R, 4 * R, 4 * R, 0},
		{"fp32 master, bf16 main_grad", []string{"training.reduce_dtype=param_dtype"}, 0, 2 * P, 2 * P, 4 * R, 4 * R, 4 * R, 4 * R},
		{"remainders, bf16 main_grad", []string{"training.reduce_dtype=param_dtype", "training.store_param_remainders=true"}, 0, 2 * P, 2 * P, 2 * R, 4 * R, 4 * R, 0},
		{"remainders, compared at stage 2", []string{"training.reduce_dtype=param_dtype", "training.store_param_remainders=true"}, 2, 2 * P, 2 * R, 4 * R, 4 * R, 4 * R, 4 * R},
	} {
		s := remaindersToy(t, remaindersTwoUnits, c.sets...)
		if c.stage != 0 {
			s.Parallelism.Stage = c.stage
		}
		r := mustAnalyze(t, s, Options{})
		if g := r.Groups[0]; g.RankNumel != R || g.ShardElems != R {
			t.Fatalf("%s: shard %d (padded %d), want %d", c.name, g.RankNumel, g.ShardElems, R)
		}
		checkStateBytes(t, c.name, r, stateBytes{c.params, c.grads, c.mst, c.m, c.v, c.tm})
	}
}

// TestParamRemaindersLlama3: on Llama 3 8B (8,030,261,248 parameters, the
// hand count TestFP8ParamsMemory derives) over 8 GPUs at zero_stage 1 the
// remainders hold 2 bytes of the rank's 1/8 where the fp32 master held 4:
// 2,007,565,312 B (1.87 GiB) fewer at rest and at the peak, nothing else
// moved.
func TestParamRemaindersLlama3(t *testing.T) {
	const yaml = `version: 1
stack: megatron
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {kind: transformer, arch: llama, hidden: 4096, layers: 32, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, seq_len: 8192}
parallelism: {dp: 8, zero_stage: 1}
training: {micro_batch: 1, param_dtype: bf16}
`
	const P = 8_030_261_248
	analyze := func(set ...string) *Report {
		t.Helper()
		s, err := scenarios.Load("llama3.yaml", []byte(yaml), set)
		if err != nil {
			t.Fatal(err)
		}
		return mustAnalyze(t, s, Options{})
	}
	full, rem := analyze(), analyze("training.store_param_remainders=true")
	var shard int64
	for _, g := range rem.Groups {
		shard += g.RankNumel
	}
	if shard != P/8 {
		t.Fatalf("rank's shard %d, want %d", shard, P/8)
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"master, fp32", full.Component(CompMaster).AtRest, 4 * P / 8},
		{"master, remainders", rem.Component(CompMaster).AtRest, 2 * P / 8},
		{"at rest, fewer", full.AtRest - rem.AtRest, 2 * P / 8},
		{"peak, fewer", full.Peak - rem.Peak, 2 * P / 8},
		{"adam m", rem.Component(CompAdamM).AtRest, full.Component(CompAdamM).AtRest},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d B, want %d", c.what, c.got, c.want)
		}
	}
	fewer := full.Peak - rem.Peak
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestParamRemaindersLlama3",
		fmt.Sprintf("the rank holds %s B (%.2f GiB) fewer at rest and at the peak", commas(fewer), float64(fewer)/float64(units.GiB)))
}
