package zero

import (
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
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
