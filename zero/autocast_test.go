package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAutocastCastTime: torch.autocast's casts of a unit's fp32 weights
// read 4 B and write 2 B per weight element on the compute stream, once
// per forward, and again in the backward of a checkpointed block, timed
// at the memory-bound roofline (HBM × DefaultHBMEfficiency). On the
// two-block Llama of memory's autocast test (hidden 64, KV 32, FFN 128,
// vocab 256): a block casts 64·64·2 + 64·32·2 + 64·128·3 = 36,864
// weights, lm_head 256·64 = 16,384, the embedding and the norms none. The
// optimizer steps the fp32 parameters themselves: seed 000's 36 B less
// the gradient's cast (2 + 4) and the 16-bit parameters' write (2), 28 B
// per element; a set implementation adds no copy back.
func TestAutocastCastTime(t *testing.T) {
	const yaml = `version: 1
cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}
model: {kind: transformer, arch: llama, hidden: 64, layers: 2, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq_len: 16}
parallelism: {dp: 2, zero_stage: 0}
training: {micro_batch: 1, param_dtype: fp32}
`
	// The model line's shapes: q and o h×h, k and v h×kv, gate, up and
	// down h×ffn; lm_head vocab×h.
	const h, kv, ffn, vocab = 64, 32, 128, 256
	const block = h*h*2 + h*kv*2 + h*ffn*3 // 36,864
	casts := map[string]int64{"embedding": 0, "block.0": block, "block.1": block, "final_norm": 0, "lm_head": vocab * h}
	for _, recompute := range []string{"none", "full"} {
		load := func(autocast string) []LayerCost {
			return docCosts(t, yaml, "training.autocast="+autocast, "training.recompute="+recompute)
		}
		s, _ := scenarios.Load("s.yaml", []byte(yaml), nil)
		bw := float64(s.Cluster.HBMBandwidth) * DefaultHBMEfficiency
		off, on := load("none"), load("bf16")
		if len(on) != len(casts) || len(off) != len(on) {
			t.Fatalf("recompute %s: %d units with autocast, %d without, want the hand count's %d", recompute, len(on), len(off), len(casts))
		}
		for u := range on {
			n, ok := casts[on[u].Name]
			if !ok {
				t.Fatalf("unit %q: not in the hand count", on[u].Name)
			}
			want := float64(6*n) / bw * 1e12 // ps
			wantBwd := 0.0
			if recompute == "full" && n > 0 && on[u].Name != "lm_head" {
				wantBwd = want
			}
			if d := float64(on[u].Fwd - off[u].Fwd); math.Abs(d-want) > 1 {
				t.Errorf("recompute %s, %s: forward +%.0f ps, want %.0f (6 B × %d)", recompute, on[u].Name, d, want, n)
			}
			if d := float64(on[u].Bwd - off[u].Bwd); math.Abs(d-wantBwd) > 1 {
				t.Errorf("recompute %s, %s: backward +%.0f ps, want %.0f", recompute, on[u].Name, d, wantBwd)
			}
		}
	}
	for _, c := range []struct {
		impl string
		want int64
	}{{"", 16 + 12}, {"fused", 16 + 12}, {"foreach", 12 + 8 + 12 + 8 + 8 + 8 + 16}} {
		s, err := scenarios.Load("s.yaml", []byte(yaml), []string{"training.autocast=bf16", "training.optimizer_impl=" + c.impl})
		if c.impl == "" {
			s, err = scenarios.Load("s.yaml", []byte(yaml), []string{"training.autocast=bf16"})
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := OptimizerBytesPerElem(s); got != c.want {
			t.Errorf("optimizer_impl %q under autocast: %d B per element, want %d", c.impl, got, c.want)
		}
	}
}
