package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// loadHF loads a scenario of the Hugging Face config at path (relative to
// scenarios/testdata) at the given layers, seq_len 4096 and micro-batch 1
// on 8 H100s at ZeRO-3, with the training keys given (a YAML flow
// fragment such as "attention: sdpa" or "recompute: full").
func loadHF(t *testing.T, path string, layers int, training string) *scenarios.Scenario {
	t.Helper()
	y := fmt.Sprintf(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {hf_config: %s, layers: %d, seq_len: 4096}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 1, %s}
`, path, layers, training)
	s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSharedExpertAndMLAActivations counts, tensor by tensor from the
// modeling code, the activation bytes one DeepSeek-V3 block and one
// Qwen1.5-MoE block keep for backward (no checkpointing, bf16, s = 4096,
// b = 1: t = 4096 tokens), and checks zerosim's unit activations equal
// them. Sources: transformers models/deepseek_v3/modeling_deepseek_v3.py
// @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3 (DeepseekV3Attention,
// DeepseekV3MoE, DeepseekV3RMSNorm) and models/qwen2_moe/
// modeling_qwen2_moe.py @ 1c351314a42ac9aef3510fc536c18130d52be2ef
// (Qwen2MoeSparseMoeBlock). Every RMSNorm of width w keeps x.float()
// (4·t·w), rstd (4·t) and the bf16 normalized tensor (2·t·w); its output
// is the next Linear's input (2·t·w).
func TestSharedExpertAndMLAActivations(t *testing.T) {
	const tk = int64(4096) // tokens
	rms := func(w int64) int64 { return 4*tk*w + 4*tk + 2*tk*w + 2*tk*w }
	// DeepSeek-V3 (testdata deepseek-v3.json): h 7168, 128 heads, q·k
	// width 128 + 64 = 192, v_head_dim 128, q_lora_rank 1536,
	// kv_lora_rank 512, intermediate_size 18432, shared MLP 1 × 2048.
	const h, a, dqk, dv, dr, rq, rkv, ffn, fs = 7168, 128, 192, 128, 64, 1536, 512, 18432, 2048
	mla := func(attention string) int64 {
		v := rms(h) + rms(rq) + rms(rkv) // input_layernorm, q_a_layernorm, kv_a_layernorm (+ their outputs)
		v += 2 * 2 * tk * a * dqk        // query_states, key_states = cat(nope, RoPE(rope))
		switch attention {
		case "flash": // F.pad(v) to 192, padded output, lse, sliced copy into o_proj
			v += 2*tk*a*dqk + 2*tk*a*dqk + 4*a*tk + 2*tk*a*dv
		case "sdpa": // v is a view of kv_b_proj's whole output; output; lse
			v += 2*tk*a*(dqk-dr+dv) + 2*tk*a*dv + 4*a*tk
		case "eager": // softmax in fp32 and the bf16 copy matmul(p, v) keeps, v copied contiguous, output
			v += 4*a*tk*tk + 2*a*tk*tk + 2*tk*a*dv + 2*tk*a*dv
		}
		return v + rms(h) // post_attention_layernorm
	}
	swiglu := func(f int64) int64 { return 4 * 2 * tk * f } // gate out, silu out, up out, product
	// Qwen1.5-MoE-A2.7B: h 2048, 16 heads of 128 (MHA), shared expert
	// 5632 with its sigmoid gate: sigmoid output (2·t) and the shared
	// MLP's output (2·t·h), both kept by the product.
	const qh, qa, qfs = 2048, 16, 5632
	qwen := rms(qh) + 4*2*tk*qh + 4*qa*tk + rms(qh) + swiglu(qfs) + 2*tk + 2*tk*qh

	for _, c := range []struct {
		cfg, attention string
		layers         int
		unit           string
		want           int64
	}{
		{"deepseek-v3.json", "flash", 4, "block.0", mla("flash") + swiglu(ffn)}, // dense MLP
		{"deepseek-v3.json", "flash", 4, "block.3", mla("flash") + swiglu(fs)},  // MoE: shared expert
		{"deepseek-v3.json", "sdpa", 4, "block.3", mla("sdpa") + swiglu(fs)},
		{"deepseek-v3.json", "eager", 4, "block.3", mla("eager") + swiglu(fs)},
		{"qwen1.5-moe-a2.7b.json", "flash", 2, "block.0", qwen},
	} {
		t.Run(c.cfg+"/"+c.attention+"/"+c.unit, func(t *testing.T) {
			s := loadHF(t, "hf-extra/"+c.cfg, c.layers, "attention: "+c.attention)
			stored, _, err := unitActivations(s)
			if err != nil {
				t.Fatal(err)
			}
			for u, l := range s.Model.LayerList {
				if l.Name == c.unit {
					if stored[u] != c.want {
						t.Errorf("%s keeps %d B, want %d B (hand count, %+d B)", c.unit, stored[u], c.want, stored[u]-c.want)
					}
					return
				}
			}
			t.Fatalf("no unit %s", c.unit)
		})
	}
}

// commas writes n with thousands separators (2,082,537,472).
func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestSharedExpertAndMLADoc holds the figures docs/memory-model.md quotes
// to this model (the hand counts are TestSharedExpertAndMLAActivations').
// The "without" figures are the blocks with their shared_ffn and MLA dims
// cleared, as the model counted them before they were recorded.
func TestSharedExpertAndMLADoc(t *testing.T) {
	unit := func(s *scenarios.Scenario, name string, strip bool) int64 {
		t.Helper()
		if strip {
			for i, l := range s.Model.LayerList {
				if l.Dims != nil {
					d := *l.Dims
					d.SharedFFN, d.SharedGate, d.ValueHeadDim, d.RopeHeadDim, d.QLoRARank, d.KVLoRARank = 0, false, 0, 0, 0, 0
					s.Model.LayerList[i].Dims = &d
				}
			}
		}
		stored, _, err := unitActivations(s)
		if err != nil {
			t.Fatal(err)
		}
		for u, l := range s.Model.LayerList {
			if l.Name == name {
				return stored[u]
			}
		}
		t.Fatalf("no unit %s", name)
		return 0
	}
	ds := func(name string, strip bool) string {
		return commas(unit(loadHF(t, "hf-extra/deepseek-v3.json", 4, "attention: flash"), name, strip))
	}
	qw := func(strip bool) string {
		return commas(unit(loadHF(t, "hf-extra/qwen1.5-moe-a2.7b.json", 2, "attention: flash"), "block.0", strip))
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestSharedExpertAndMLADoc (unitActivations of deepseek-v3.json and qwen1.5-moe-a2.7b.json, s 4096, b 1, flash)",
		fmt.Sprintf("a dense block (block.0) keeps %s B, where counting q, k, v and o at heads·head_dim without the low-rank tensors kept %s B;", ds("block.0", false), ds("block.0", true)),
		fmt.Sprintf("a MoE block (block.3) keeps %s B (%s B without the low-rank tensors and the shared expert), besides its `experts.3` unit's %s B.",
			ds("block.3", false), ds("block.3", true), ds("experts.3", false)),
		fmt.Sprintf("Qwen1.5-MoE-A2.7B under the same settings: %s B per block (%s B without the shared expert).", qw(false), qw(true)))
}
