package zero

import (
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestPlanComputeOpRecomputeAttention: under torchtitan's op policy before
// b39377f (FLOPDims.OpRecomputeAttention: cuDNN's attention op missing from
// its _save_list) a block's backward reruns the attention's forward, at
// the attention kernel's rate. By hand for Llama 3 8B at t = 8192 on a
// B200 (2.25 PFLOPS dense bf16, attention at 0.5): the causal forward
// attention is QKᵀ and P·V, 2 × 2·b·a·s²·d halved, 2·s²·h =
// 2·8192²·4096 = 549,755,813,888 FLOPs, which take
// 549,755,813,888 / (2.25e15·0.5) = 0.48867 ms more per block; the
// forward and every other policy are unchanged.
func TestPlanComputeOpRecomputeAttention(t *testing.T) {
	const att = 2 * 8192 * 8192 * 4096
	if att != 549_755_813_888 {
		t.Fatalf("hand count %d", att)
	}
	d := FLOPDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Causal: true}
	for _, policy := range []string{"none", "selective", "op", "full"} {
		spec := ComputeSpec{Dims: d, GPU: GPUShape{Peak: 2.25e15, HBM: 8e12, SMs: 148},
			Eff: Efficiency{GEMM: 0.6, Attention: 0.5, HBM: 0.88}, Policy: policy, Blocks: []bool{true}, Head: -1}
		saved, err := PlanCompute(spec)
		if err != nil {
			t.Fatal(err)
		}
		spec.Dims.OpRecomputeAttention = true
		rerun, err := PlanCompute(spec)
		if err != nil {
			t.Fatal(err)
		}
		wantFLOPs, wantSecs := int64(0), 0.0
		if policy == "op" {
			wantFLOPs, wantSecs = att, att/(2.25e15*0.5)
		}
		if policy == "op" {
			golden.CheckQuotes(t, "../docs/compute-model.md", "TestPlanComputeOpRecomputeAttention",
				fmt.Sprintf("for Llama 3 8B at seq 8192, %s FLOPs, %.5f ms per block", commas(rerun[0].BwdFLOPs-saved[0].BwdFLOPs), 1e3*(rerun[0].Bwd-saved[0].Bwd)))
		}
		if got := rerun[0].BwdFLOPs - saved[0].BwdFLOPs; got != wantFLOPs {
			t.Errorf("%s: backward %d FLOPs more, want %d", policy, got, wantFLOPs)
		}
		if got := rerun[0].Bwd - saved[0].Bwd; math.Abs(got-wantSecs) > 1e-12 {
			t.Errorf("%s: backward %.6g s more, want %.6g", policy, got, wantSecs)
		}
		if got := rerun[0].BwdBy.Attention - saved[0].BwdBy.Attention; math.Abs(got-wantSecs) > 1e-12 {
			t.Errorf("%s: backward attention class %.6g s more, want %.6g", policy, got, wantSecs)
		}
		if rerun[0].Fwd != saved[0].Fwd || rerun[0].FwdFLOPs != saved[0].FwdFLOPs {
			t.Errorf("%s: forward moved: %+v vs %+v", policy, rerun[0], saved[0])
		}
	}
}

// TestCostsOpRecomputeAttention: a block left to the FLOP count (Costs'
// path: DeepSeek-V2-Lite's multi-head latent attention) reruns its
// attention's forward under training.op_recompute_attention too. By hand
// at seq 4096 (16 heads, q·k width 128 + 64 = 192, value width 128,
// unpadded under cuDNN's kernel): QKᵀ and P·V causal, b·a·s²·(d_qk + d_v)
// = 16·4096²·320 = 85,899,345,920 FLOPs more in block.0's and block.1's
// backward; the forward unchanged.
func TestCostsOpRecomputeAttention(t *testing.T) {
	const att = 16 * 4096 * 4096 * 320
	if att != 85_899_345_920 {
		t.Fatalf("hand count %d", att)
	}
	var bwd, fwd [2]map[string]int64
	for i, extra := range []string{"", ", op_recompute_attention: true"} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/deepseek-v2-lite.json, layers: 2, seq_len: 4096}\n" +
			"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op, attention: flash, attention_kernel: cudnn" + extra + "}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		costs, err := Costs(s)
		if err != nil {
			t.Fatal(err)
		}
		bwd[i], fwd[i] = map[string]int64{}, map[string]int64{}
		for _, u := range []string{"block.0", "block.1"} {
			c := costs[unitNamed(t, s, u)]
			bwd[i][u], fwd[i][u] = c.BwdFLOPs, c.FwdFLOPs
		}
	}
	for _, u := range []string{"block.0", "block.1"} {
		if got := bwd[1][u] - bwd[0][u]; got != att || fwd[1][u] != fwd[0][u] {
			t.Errorf("%s: backward %d FLOPs more (forward %d vs %d), want %d", u, got, fwd[1][u], fwd[0][u], att)
		}
	}
}
