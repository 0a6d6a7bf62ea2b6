package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"

	"github.com/zerosim/zerosim/scenarios"
)

// loadHFAt loads the Hugging Face config at path (relative to
// scenarios/testdata) at the given layers, seq_len 4096, micro-batch 1,
// flash attention and training.recompute.
func loadHFAt(t *testing.T, path string, layers int, recompute string) *scenarios.Scenario {
	t.Helper()
	y := fmt.Sprintf(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {hf_config: %s, layers: %d, seq_len: 4096}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 1, recompute: %s}
`, path, layers, recompute)
	s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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
func TestRouterActivations(t *testing.T) {
	const tk = int64(4096)
	experts := func(h, k, f int64) int64 { return tk * k * (4*h + 6*f) }
	const mh, me, mk, mf = 4096, 8, 2, 14336
	mixtralRouter := 4*tk*me + 8*tk*mk + 4*tk*mk + 4*tk + 16*tk*mk + 2*tk*mk
	const dh, de, dk, df = 7168, 256, 8, 2048
	dsRouter := 4*tk*dh + 4*de*dh + 4*tk*de + 8*tk*dk + 4*tk*dk + 4*tk + 16*tk*dk + 4*tk*dk
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
	} {
		t.Run(c.name, func(t *testing.T) {
			s := loadHFAt(t, c.cfg, c.layers, c.recompute)
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
		s := loadHFAt(t, cfg, layers, "none")
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
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestRouterDoc (RouterTensors and ExpertActivation, s 4096, b 1)",
		fmt.Sprintf("Mixtral-8x7B's router keeps %s B per MoE block, beside its experts' %s B;", commas(mr), commas(me)),
		fmt.Sprintf("DeepSeek-V3's keeps %s B per MoE block (%s B of it the fp32 copy of the router input), beside its experts' %s B.",
			commas(dr), commas(di), commas(de)))
}
