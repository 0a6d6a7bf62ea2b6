package zero

import (
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// maxtextGDN is calculate_gated_delta_net_flops_per_device in
// src/maxtext/utils/maxtext_utils.py (AI-Hypercomputer/maxtext @
// e591f30cbbf217ed67ef71263ec0538239f9c3b8), transcribed: the weight part
// (in_proj_qkvz + in_proj_ba, out_proj, the depthwise convolution) and the
// core of one Gated DeltaNet layer's forward, for B sequences of S tokens.
func maxtextGDN(B, S, E, Hk, Hv, Dk, Dv, Kconv int64) (weights, core int64) {
	K, V := Hk*Dk, Hv*Dv
	flopsQKVZBA := 2 * B * S * E * (2*K + 2*V + 2*Hv)
	flopsOut := 2 * B * S * E * V
	flopsConv := 2 * B * S * Kconv * (2*K + V)
	return flopsQKVZBA + flopsOut + flopsConv, B * S * Hv * (Dk * Dv) * 8
}

// qwen3NextCosts loads Qwen3-Next-80B-A3B cut to 4 layers at s = 4096
// under flash, micro-batch b, and returns its Costs.
func qwen3NextCosts(t *testing.T, b int) (*scenarios.Scenario, []LayerCost) {
	t.Helper()
	y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
		"model: {hf_config: qwen3-next-80b-a3b-instruct.json, layers: 4, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n"+
		"training: {micro_batch: %d, attention: flash}\n", b)
	s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, cs
}

// TestQwen3NextFLOPs holds the FLOP count of Qwen3-Next-80B-A3B's blocks
// (scenarios/testdata/hf-extra/qwen3-next-80b-a3b-instruct.json, 4
// layers, s = 4096, b = 2) to MaxText's formulas: a Gated DeltaNet block
// (block.0) is MaxText's GDN weights and core plus 2·t per parameter of
// what MaxText counts elsewhere (the norms, A_log, dt_bias, the gated
// norm's weight, the router, the shared expert and its gate), with no
// softmax attention, all at the GEMM efficiency and 2× in backward; the
// gated-attention block (block.3) is 2·t per parameter (q_proj at twice
// heads·head_dim) plus AttentionFLOPs, causal under flash.
func TestQwen3NextFLOPs(t *testing.T) {
	const S, B, E, Hk, Hv, Dk, Dv, Kconv = 4096, 2, 2048, 16, 32, 128, 128, 4
	s, cs := qwen3NextCosts(t, B)
	eff, err := effectiveFLOPS(s)
	if err != nil {
		t.Fatal(err)
	}
	unit := func(name string) (scenarios.Layer, LayerCost) {
		for i, l := range s.Model.LayerList {
			if l.Name == name {
				return l, cs[i]
			}
		}
		t.Fatalf("no unit %s", name)
		return scenarios.Layer{}, LayerCost{}
	}
	tokens := int64(S * B)
	weights, core := maxtextGDN(B, S, E, Hk, Hv, Dk, Dv, Kconv)
	if core != 8*tokens*Hv*Dk*Dv || weights != 2*tokens*(E*(2*Hk*Dk+2*Hv*Dv+2*Hv)+Hv*Dv*E+Kconv*(2*Hk*Dk+Hv*Dv)) {
		t.Fatalf("MaxText's formula transcribed wrong: %d, %d", weights, core)
	}
	// What MaxText counts outside calculate_gated_delta_net_flops_per_device
	// (the router and shared expert with the FFN) or not at all (norms,
	// A_log, dt_bias), as 2·t per parameter.
	other := int64(2*E + 2*Hv + Dv + 512*E + 3*E*512 + E)
	gdn, gc := unit("block.0")
	if gdn.Dims == nil || gdn.Dims.LinearAttention != scenarios.LinearGatedDeltaNet {
		t.Fatalf("block.0 dims %+v, want a Gated DeltaNet block", gdn.Dims)
	}
	if want := weights + core + 2*tokens*other; gc.FwdFLOPs != want {
		t.Errorf("block.0 forward FLOPs %d, want MaxText's %d + %d + 2·t·%d = %d (off by %d)", gc.FwdFLOPs, weights, core, other, want, gc.FwdFLOPs-want)
	}
	if gc.FwdFLOPs != 2*tokens*int64(gdn.Params)+core || gc.BwdFLOPs != 2*gc.FwdFLOPs {
		t.Errorf("block.0: forward %d, backward %d, want 2·t·params + core and twice that", gc.FwdFLOPs, gc.BwdFLOPs)
	}
	// Every FLOP at the GEMM efficiency, plus the block's memory-bound
	// work (blockOtherBytes: its norms and residual adds, the shared
	// expert's SwiGLU, the router) at the HBM rate.
	_, plan, err := costsAndPlan(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var elem float64
	for i, l := range s.Model.LayerList {
		if l.Name == "block.0" {
			elem = plan[i].elemFwd
		}
	}
	if want, _ := units.CheckedMulDivCeil(gc.FwdFLOPs, int64(units.Second), eff); elem <= 0 || int64(gc.Fwd) != want+int64(math.Ceil(elem*float64(units.Second))) {
		t.Errorf("block.0 forward %v, want %v at the GEMM efficiency + %g s of memory-bound work", gc.Fwd, units.Duration(want), elem)
	}
	full, fc := unit("block.3")
	if full.Dims == nil || full.Dims.LinearAttention != "" || full.Dims.Heads != 16 || !full.Dims.OutputGate {
		t.Fatalf("block.3 dims %+v, want the gated attention", full.Dims)
	}
	att := int64(2 * B * 16 * S * S * (256 + 256) / 2)
	q, kv := int64(2*16*256), int64(2*256)
	if p := int64(full.Params); p != E*q+2*E*kv+16*256*E+2*256+other-2*Hv-Dv || fc.FwdFLOPs != 2*tokens*p+att {
		t.Errorf("block.3: %d parameters, forward %d, want 2·t·params + %d", p, fc.FwdFLOPs, att)
	}
}

// TestQwen3NextFLOPsDoc holds docs/compute-model.md's Gated DeltaNet
// figures ("Linear attention") to Costs of qwen3-next-80b-a3b-instruct.json's
// block.0 at s = 4096, b = 1: its parameters, 2·t of them, the delta rule's
// GatedDeltaNetCoreFLOPs, their sum as the block's forward, and the causal
// softmax attention 16 heads of 256 would add (AttentionFLOPs under flash).
func TestQwen3NextFLOPsDoc(t *testing.T) {
	s, cs := qwen3NextCosts(t, 1)
	l := s.Model.LayerList[1]
	if l.Name != "block.0" || l.Dims == nil || l.Dims.LinearAttention == "" {
		t.Fatalf("unit 1 is %s %+v, want the Gated DeltaNet block.0", l.Name, l.Dims)
	}
	const tokens = 4096
	x := l.Dims
	core, err := GatedDeltaNetCoreFLOPs(tokens, x.LinearValueHeads, x.LinearKeyHeadDim, x.LinearValueHeadDim)
	if err != nil {
		t.Fatal(err)
	}
	weights := 2 * tokens * int64(l.Params)
	if cs[1].FwdFLOPs != weights+core {
		t.Fatalf("block.0 forward %d, want 2·t·params %d + core %d", cs[1].FwdFLOPs, weights, core)
	}
	att, err := AttentionFLOPs(1, 16, tokens, tokens, 256, 256, true, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestQwen3NextFLOPsDoc (Costs of qwen3-next-80b-a3b-instruct.json's block.0, s 4096, b 1)",
		fmt.Sprintf("Gated DeltaNet block (%s parameters with its router and shared expert) counts %s + %s = %s forward FLOPs, where softmax attention of the gated blocks' 16 heads of 256 would have added %s.",
			commas(int64(l.Params)), commas(weights), commas(core), commas(cs[1].FwdFLOPs), commas(att)))
}
