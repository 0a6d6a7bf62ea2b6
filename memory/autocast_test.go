package memory

import (
	"errors"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// autocastYAML is a two-block Llama (hidden 64, 4 heads of 16, 2 KV heads,
// FFN 128, vocabulary 256, untied head) on two ranks at stage 0. Its
// tensors, by hand: a block's q_proj 64×64 = 4,096, k_proj and v_proj
// 64×32 = 2,048 each, o_proj 4,096, gate_proj, up_proj and down_proj
// 64×128 = 8,192 each, two RMSNorm weights of 64: 36,864 matmul weights
// and 36,992 parameters; the embedding 256×64 = 16,384, the final norm
// 64, lm_head 256×64 = 16,384; P = 2·36,992 + 16,384 + 64 + 16,384 =
// 106,816 parameters.
const autocastYAML = `version: 1
cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}
model: {kind: transformer, arch: llama, hidden: 64, layers: 2, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq_len: 16}
parallelism: {dp: 2, zero_stage: 0}
training: {micro_batch: 1, param_dtype: fp32, autocast: bf16}
`

// autocastYAML's shapes: hidden 64, 4 heads of 16 with 2 KV heads (k and v
// 32 wide), FFN 128, vocabulary 256, 2 llama blocks (attention q, k, v, o,
// MLP gate, up, down, two RMSNorms), the embedding, the final norm and an
// untied lm_head.
const (
	acHidden, acKV, acFFN, acVocab = 64, 2 * 64 / 4, 128, 256
	acBlockMatmul                  = 2*acHidden*acHidden + 2*acKV*acHidden + 3*acHidden*acFFN     // 36,864
	acParams                       = 2*acVocab*acHidden + 2*(acBlockMatmul+2*acHidden) + acHidden // 106,816
	acBlockCasts                   = 2 * acBlockMatmul                                            // bf16 B: 73,728
	acHeadCasts                    = 2 * acVocab * acHidden                                       // bf16 B: 32,768
	acLargestCast                  = 2 * acHidden * acFFN                                         // gate/up/down: 16,384
)

// TestAutocastStatesAndCasts holds training.autocast to bytes derived from
// the shapes above. Model states: fp32 parameters, gradients and Adam
// moments, 4 × 106,816 = 427,264 B each, and no master copy, where the
// approximation zerosim's importers wrote before (bf16 parameters beside
// an fp32 master, fp32 gradients) holds 2 × 106,816 = 213,632 B of
// parameters and 427,264 of master. The casts: the blocks' matmul weights
// and lm_head's, not the embedding's (nn.Embedding is on no autocast
// list) or the norms', 2·36,864 + 16,384 = 90,112 elements × 2 B =
// 180,224 B at the forward's end. Without recompute they go unit by unit
// in backward (lm_head's 32,768 B first); under recompute full the
// blocks' 2 × 73,728 B go when the forward's autocast exits, lm_head's
// 32,768 B, which autograd kept, go with its backward, and each block's
// backward then casts its 73,728 B anew: at most 73,728 B in backward.
func TestAutocastStatesAndCasts(t *testing.T) {
	const P, blockCasts, headCasts = acParams, acBlockCasts, acHeadCasts
	for _, c := range []struct {
		name    string
		sets    []string
		bwdPeak int64 // the casts' largest total in backward
	}{
		{"recompute none", nil, 2*blockCasts + headCasts},
		{"recompute full", []string{"training.recompute=full"}, blockCasts},
		{"recompute op", []string{"training.recompute=op", "stack=torchtitan"}, blockCasts},
		// Core-attention recompute reruns no weight: autograd keeps
		// every cast to its unit's backward.
		{"recompute selective", []string{"training.recompute=selective"}, 2*blockCasts + headCasts},
	} {
		s, err := scenarios.Load("s.yaml", []byte(autocastYAML), c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := mustAnalyze(t, s, Options{})
		for _, x := range []struct {
			comp Comp
			want int64
		}{{CompParams, 4 * P}, {CompMaster, 0}, {CompAdamM, 4 * P}, {CompAdamV, 4 * P}} {
			if got := r.Component(x.comp).AtRest; got != x.want {
				t.Errorf("%s: %s at rest %d B, want %d", c.name, x.comp, got, x.want)
			}
		}
		casts := r.Component(CompCasts)
		if casts.AtRest != 0 || casts.Peak != 2*blockCasts+headCasts || casts.PeakPhase != PhaseForward {
			t.Errorf("%s: casts at rest %d, peak %d in %s, want 0, %d in forward", c.name, casts.AtRest, casts.Peak, casts.PeakPhase, 2*blockCasts+headCasts)
		}
		var cur, bwd int64
		for _, e := range r.Timeline() {
			if e.Component != CompCasts {
				continue
			}
			if e.Phase == PhaseBackward {
				bwd = max(bwd, cur) // held as the backward starts
			}
			cur += e.Delta
			if e.Phase == PhaseBackward {
				bwd = max(bwd, cur)
			}
		}
		if cur != 0 || bwd != c.bwdPeak {
			t.Errorf("%s: casts end the step at %d B and peak at %d B in backward, want 0 and %d", c.name, cur, bwd, c.bwdPeak)
		}
	}
	// The approximation before: 16-bit parameters beside an fp32 master.
	s, err := scenarios.Load("s.yaml", []byte(autocastYAML), []string{"training.param_dtype=bf16", "training.autocast=none", "training.reduce_dtype=fp32", "training.shard_dtype=fp32"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, s, Options{})
	if p, m, cs := r.Component(CompParams).AtRest, r.Component(CompMaster).AtRest, r.Component(CompCasts).Peak; p != 2*P || m != 4*P || cs != 0 {
		t.Errorf("bf16 beside a master: params %d, master %d, casts %d B, want %d, %d, 0", p, m, cs, 2*P, 4*P)
	}
}

// TestAutocastOtherStagesRefused: over fp32 parameters the loader takes
// training.autocast at zero_stage 0, and at stages 2–3 only under PyTorch
// FSDP's boundaries (scenarios.AutocastStageRefusal: the stacks zerosim models
// at stages 1–3 otherwise run their own mixed precision); this scenario's
// boundary is the default, so the per-stage tables of an autocast scenario
// say why stages 1–3 have no figures, as they do for
// master_dtype bf16 at stage 0, instead of laying out fp32 parameters and
// autocast casts at a stage the loader refuses.
func TestAutocastOtherStagesRefused(t *testing.T) {
	s, err := scenarios.Load("s.yaml", []byte(autocastYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := EstimateStages(s, []int{0, 1, 2, 3}, []Estimator{EstimatorZerosim}, Options{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d rows for stages 0–3 with one estimator, want 4", len(rs))
	}
	for i, r := range rs {
		switch {
		case r.Stage != i:
			t.Errorf("row %d is stage %d, want stage %d", i, r.Stage, i)
		case r.Stage == 0 && r.NotApplicable != "":
			t.Errorf("stage 0: not applicable (%s), want figures", r.NotApplicable)
		case r.Stage != 0 && !strings.Contains(r.NotApplicable, "autocast"):
			t.Errorf("stage %d: peak %d B, not applicable %q, want the stage refused for training.autocast", r.Stage, r.Peak, r.NotApplicable)
		}
	}
	// The scenario's own stage is an error, not a row.
	c := *s
	c.Parallelism.Stage = 3
	if _, err := Analyze(&c, Options{}); !errors.As(err, new(*StageRefusedError)) {
		t.Errorf("stage 3 as the scenario's own: %v, want a *StageRefusedError", err)
	} else if !strings.Contains(err.Error(), "fsdp2_head") {
		t.Errorf("stage 3 refused with %q, want the loader's rule, which names every FSDP boundary (fsdp2_head too)", err)
	}
}

// TestAutocastDims: the scenario's autocast reaches the block dimensions
// the activations are counted with: over an fp32 model both the op
// policies (Autocast) and the fp32 residual stream (InputFP32), neither
// without autocast.
func TestAutocastDims(t *testing.T) {
	for _, c := range []struct {
		sets             []string
		autocast, fp32In bool
	}{
		{nil, true, true},
		{[]string{"training.autocast=none"}, false, false},
	} {
		s, err := scenarios.Load("s.yaml", []byte(autocastYAML), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		d := baseDims(s)
		if d.Autocast != c.autocast || d.InputFP32 != c.fp32In {
			t.Errorf("%v: Autocast %v, InputFP32 %v, want %v, %v", c.sets, d.Autocast, d.InputFP32, c.autocast, c.fp32In)
		}
	}
}
