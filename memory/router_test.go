package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"

	"github.com/zerosim/zerosim/scenarios"
)

// TestRouterActivations counts, from the modeling code, what one MoE
// block's router and dispatch keep for backward (t = 4096 tokens: s 4096,
// b 1) and checks the experts unit keeps its experts' tensors
// (ExpertActivation: t·k·(4h + 6f)) plus them, and with full recompute
// keeps nothing and rebuilds both.
//
// Mixtral-8x7B (h 4096, E 8, k 2, f 14336), MixtralSparseMoeBlock.forward
// in transformers models/mixtral/modeling_mixtral.py
// @ af3efdd71ee5b568dfdb71bb41d316df830147af: F.softmax(logits,
// dtype=torch.float) keeps its fp32 output 4·t·E; topk its int64 indices
// 8·t·k; routing_weights /= sum (in place: pytorch derivatives.yaml
// div.Tensor reads self and other, gen_variable_type.py saves a clone of
// the original self) the fp32 top-k weights 4·t·k and sums 4·t; the
// per-expert torch.where indices top_x and idx, t·k int64 each over the
// experts, 16·t·k; the gathered bf16 weights kept by the mul 2·t·k.
//
// DeepSeek-V3 (h 7168, E 256, k 8, f 2048, norm_topk_prob true),
// DeepseekV3TopkRouter.forward and DeepseekV3MoE.moe in
// models/deepseek_v3/modeling_deepseek_v3.py
// @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3: F.linear of
// hidden_states.type(torch.float32) and weight.type(torch.float32) keeps
// both fp32 copies, 4·t·h and 4·E·h; sigmoid its fp32 output 4·t·E;
// gather the int64 top-k indices 8·t·k; topk_weights /= denominator the
// fp32 clone 4·t·k and denominator 4·t; torch.where's token and weight
// indices 16·t·k; the mul the fp32 gathered weights 4·t·k.
//
// Qwen3-30B-A3B (h 2048, E 128, k 8, f 768, norm_topk_prob true),
// Qwen3MoeSparseMoeBlock in models/qwen3_moe/modeling_qwen3_moe.py
// @ 16b6c53c8ec3a720bd45c1c377bf94e1d01249c5: Mixtral's code with the
// division under norm_topk_prob, so Mixtral's count.
//
// DeepSeek-V2 (h 5120, E 160, k 6, f 1536, group_limited_greedy) and
// DeepSeek-V2-Lite (h 2048, E 64, k 6, f 1408, greedy), DeepseekV2MoEGate
// and DeepseekV2MoE.moe in models/deepseek_v2/modeling_deepseek_v2.py
// @ 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d: the fp32 F.linear keeps the
// fp32 input 4·t·h and weight 4·E·h; softmax its fp32 output 4·t·E; (group
// limited) masked_fill its bool mask t·E; topk its indices 8·t·k;
// hidden_states[indices // k] that index 8·t·k; new_x[indices] = outs the
// argsort indices 8·t·k; the in-place mul_ of the fp32 expert outputs by
// the weights a clone of the fp32 outputs 4·t·k·h and the fp32 weights
// 4·t·k; no division.
//
// Llama-4-Scout (h 5120, E 16, k 1, f 8192), Llama4Router and
// Llama4TextMoe in models/llama4/modeling_llama4.py
// @ 63210d0e3b74c2119b7998ff65bc6a2729283626: topk (and scatter_) keep the
// indices 8·t·k; sigmoid its fp32 output 4·t·E; routed_in *
// router_scores keeps the repeated bf16 input 2·E·t·h and the bf16
// scores 2·t·E.
//
// gpt-oss-20b (h 2880, E 32, k 4, f 2880), GptOssTopKRouter and
// GptOssExperts (training path) in models/gpt_oss/modeling_gpt_oss.py
// @ 6edf5b311854175ff83c59179b3360beca1ceffc: topk keeps its indices
// 8·t·k; the softmax over the top-k its bf16 output 2·t·k; torch.where's
// token_idx (t·k over the experts) 8·t·k; the mul the gathered bf16
// weights 2·t·k.
func TestRouterActivations(t *testing.T) {
	const tk = int64(4096)
	experts := func(h, k, f int64) int64 { return tk * k * (4*h + 6*f) }
	const mh, me, mk, mf = 4096, 8, 2, 14336
	mixtralRouter := 4*tk*me + 8*tk*mk + 4*tk*mk + 4*tk + 16*tk*mk + 2*tk*mk
	const dh, de, dk, df = 7168, 256, 8, 2048
	dsRouter := 4*tk*dh + 4*de*dh + 4*tk*de + 8*tk*dk + 4*tk*dk + 4*tk + 16*tk*dk + 4*tk*dk
	const qh, qe, qk, qf = 2048, 128, 8, 768
	qwen3Router := 4*tk*qe + 8*tk*qk + 4*tk*qk + 4*tk + 16*tk*qk + 2*tk*qk
	v2 := func(h, e, k, mask int64) int64 {
		return 4*tk*h + 4*e*h + 4*tk*e + mask*tk*e + 8*tk*k + 8*tk*k + 8*tk*k + 4*tk*k*h + 4*tk*k
	}
	const v2h, v2e, v2k, v2f = 5120, 160, 6, 1536
	const lh, le, lk, lf = 2048, 64, 6, 1408
	const l4h, l4e, l4k, l4f = 5120, 16, 1, 8192
	llama4Router := 8*tk*l4k + 4*tk*l4e + 2*l4e*tk*l4h + 2*tk*l4e
	const gh, ge, gk, gf = 2880, 32, 4, 2880
	gptOssRouter := 8*tk*gk + 2*tk*gk + 8*tk*gk + 2*tk*gk
	for _, c := range []struct {
		name, cfg, unit, recompute string
		layers                     int
		stored, transient          int64
	}{
		{"mixtral", "hf/mixtral-8x7b/config.json", "experts.0", "none", 1, experts(mh, mk, mf) + mixtralRouter, 0},
		{"mixtral/selective", "hf/mixtral-8x7b/config.json", "experts.0", "selective", 1, experts(mh, mk, mf) + mixtralRouter, 0},
		{"mixtral/full", "hf/mixtral-8x7b/config.json", "experts.0", "full", 1, 0, experts(mh, mk, mf) + mixtralRouter},
		{"deepseek-v3", "hf-extra/deepseek-v3.json", "experts.3", "none", 4, experts(dh, dk, df) + dsRouter, 0},
		{"deepseek-v3/full", "hf-extra/deepseek-v3.json", "experts.3", "full", 4, 0, experts(dh, dk, df) + dsRouter},
		{"qwen3-moe", "hf-extra/qwen3-30b-a3b.json", "experts.0", "none", 1, experts(qh, qk, qf) + qwen3Router, 0},
		{"qwen3-moe/full", "hf-extra/qwen3-30b-a3b.json", "experts.0", "full", 1, 0, experts(qh, qk, qf) + qwen3Router},
		{"deepseek-v2", "hf-extra/deepseek-v2.json", "experts.1", "none", 2, experts(v2h, v2k, v2f) + v2(v2h, v2e, v2k, 1), 0},
		{"deepseek-v2/selective", "hf-extra/deepseek-v2.json", "experts.1", "selective", 2, experts(v2h, v2k, v2f) + v2(v2h, v2e, v2k, 1), 0},
		{"deepseek-v2/full", "hf-extra/deepseek-v2.json", "experts.1", "full", 2, 0, experts(v2h, v2k, v2f) + v2(v2h, v2e, v2k, 1)},
		{"deepseek-v2-lite", "hf-extra/deepseek-v2-lite.json", "experts.1", "none", 2, experts(lh, lk, lf) + v2(lh, le, lk, 0), 0},
		{"llama4", "hf-extra/llama-4-scout-17b-16e.json", "experts.0", "none", 1, experts(l4h, l4k, l4f) + llama4Router, 0},
		{"llama4/full", "hf-extra/llama-4-scout-17b-16e.json", "experts.0", "full", 1, 0, experts(l4h, l4k, l4f) + llama4Router},
		{"gpt-oss", "hf-extra/gpt-oss-20b.json", "experts.0", "none", 1, experts(gh, gk, gf) + gptOssRouter, 0},
		{"gpt-oss/full", "hf-extra/gpt-oss-20b.json", "experts.0", "full", 1, 0, experts(gh, gk, gf) + gptOssRouter},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := loadHF(t, c.cfg, c.layers, "recompute: "+c.recompute)
			stored, transient, err := unitActivations(s)
			if err != nil {
				t.Fatal(err)
			}
			for u, l := range s.Model.LayerList {
				if l.Name == c.unit {
					if stored[u] != c.stored || transient[u] != c.transient {
						t.Errorf("%s keeps %d B, rebuilds %d B; want %d B, %d B (hand count, %+d B, %+d B)",
							c.unit, stored[u], transient[u], c.stored, c.transient, stored[u]-c.stored, transient[u]-c.transient)
					}
					return
				}
			}
			t.Fatalf("no unit %s", c.unit)
		})
	}
}

// TestRouterDoc holds the router figures docs/memory-model.md quotes
// (the hand counts are TestRouterActivations').
func TestRouterDoc(t *testing.T) {
	sum := func(cfg, unit string, layers int) (router, input, experts int64) {
		t.Helper()
		s := loadHF(t, cfg, layers, "recompute: none")
		for _, l := range s.Model.LayerList {
			if l.Name != unit {
				continue
			}
			d := l.Dims
			ts, err := RouterTensors(4096, d.Hidden, d.Experts, d.TopK, d.Router, d.RouterNorm)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ts {
				router += x.Bytes
			}
			if len(ts) > 0 {
				input = ts[0].Bytes
			}
			experts, _, err = ExpertActivation(4096, 1, d.TopK, d.Hidden, d.ExpertFFN, scenarios.RecomputeNone)
			if err != nil {
				t.Fatal(err)
			}
			return router, input, experts
		}
		t.Fatalf("no unit %s", unit)
		return 0, 0, 0
	}
	mr, _, me := sum("hf/mixtral-8x7b/config.json", "experts.0", 1)
	dr, di, de := sum("hf-extra/deepseek-v3.json", "experts.3", 4)
	qr, _, _ := sum("hf-extra/qwen3-30b-a3b.json", "experts.0", 1)
	v2r, _, _ := sum("hf-extra/deepseek-v2.json", "experts.1", 2)
	v2lr, _, _ := sum("hf-extra/deepseek-v2-lite.json", "experts.1", 2)
	l4r, _, _ := sum("hf-extra/llama-4-scout-17b-16e.json", "experts.0", 1)
	gr, _, _ := sum("hf-extra/gpt-oss-20b.json", "experts.0", 1)
	part := func(cfg, unit string, layers int, name string) int64 {
		t.Helper()
		s := loadHF(t, cfg, layers, "recompute: none")
		for _, l := range s.Model.LayerList {
			if l.Name == unit {
				d := l.Dims
				ts, err := RouterTensors(4096, d.Hidden, d.Experts, d.TopK, d.Router, d.RouterNorm)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range ts {
					if x.Name == name {
						return x.Bytes
					}
				}
			}
		}
		t.Fatalf("%s %s: no tensor %q", cfg, unit, name)
		return 0
	}
	v2c := part("hf-extra/deepseek-v2.json", "experts.1", 2, "expert outputs in fp32 before mul_ (clone)")
	l4c := part("hf-extra/llama-4-scout-17b-16e.json", "experts.0", 1, "router input repeated per expert (bf16)")
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestRouterDoc (RouterTensors, s 4096, b 1)",
		fmt.Sprintf("Per MoE block: Qwen3-30B-A3B %s B; DeepSeek-V2 %s B (%s B of it the fp32 clone of the expert outputs); DeepSeek-V2-Lite %s B; Llama-4-Scout %s B (%s B of it the repeated input); gpt-oss-20b %s B.",
			commas(qr), commas(v2r), commas(v2c), commas(v2lr), commas(l4r), commas(l4c), commas(gr)))
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestRouterDoc (RouterTensors and ExpertActivation, s 4096, b 1)",
		fmt.Sprintf("Mixtral-8x7B's router keeps %s B per MoE block, beside its experts' %s B;", commas(mr), commas(me)),
		fmt.Sprintf("DeepSeek-V3's keeps %s B per MoE block (%s B of it the fp32 copy of the router input), beside its experts' %s B.",
			commas(dr), commas(di), commas(de)))
}
