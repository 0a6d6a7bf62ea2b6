package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestExpertTileDocFigures holds the figures docs/compute-model.md quotes
// for routed experts under tile quantization, at compute efficiency 0.8:
// Qwen1.5-MoE-A2.7B's experts (60 of f 1408 on h 2048, top-4, ep 1) at
// 4,096 tokens, their forward GEMMs with the 273.07 mean rows padded to
// 512 against unpadded (ExpertGEMMSeconds), on an H100 and an A100; and
// torchtitan's deepseek-v3-16b experts (64 of f 1408 on h 2048, top-6,
// ep 1) at 32,768 tokens, their backward GEMMs with the down projection's
// weight-gradient m 1408 tiled to 1536 against untiled.
func TestExpertTileDocFigures(t *testing.T) {
	shape := func(gpu string) GPUShape {
		t.Helper()
		s, err := scenarios.Load("x.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: "+gpu+"}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 8, zero_stage: 1}\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return GPUShape{Peak: float64(s.Cluster.PeakBF16), HBM: float64(s.Cluster.HBMBandwidth), SMs: SMCount(gpu)}
	}
	e := Efficiency{GEMM: 0.8, HBM: DefaultHBMEfficiency}
	must := func(x float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	padded := func(g GPUShape) float64 {
		fwd, _, err := ExpertGEMMSeconds(4096, 60, 4, 1, 2048, 1408, g, e)
		if err != nil {
			t.Fatal(err)
		}
		m, p := 4096.0*4/60, 0.0
		for _, s := range []gemmShape{{1408, 2048}, {1408, 2048}, {2048, 1408}} {
			p += must(groupedGEMMSeconds(60, m, float64(s.n), float64(s.k), true, g, e))
		}
		return 100 * (p/fwd - 1)
	}
	h100, a100 := shape("H100-80GB"), shape("A100-80GB")
	_, bwd, err := ExpertGEMMSeconds(32768, 64, 6, 1, 2048, 1408, h100, e)
	if err != nil {
		t.Fatal(err)
	}
	m := 32768.0 * 6 / 64
	tiled := must(groupedGEMMSeconds(64, 1408, 2048, m, true, h100, e))
	untiled := must(groupedGEMMSeconds(64, 1408, 2048, m, false, h100, e))
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestExpertTileDocFigures (ExpertGEMMSeconds at efficiency 0.8)",
		fmt.Sprintf("would add %.0f %% to the experts' forward GEMMs on an H100 and %.1f %% on an A100,", padded(h100), padded(a100)),
		fmt.Sprintf("its experts' backward GEMMs +%.1f %% at 32,768 tokens;", 100*(bwd/(bwd-tiled+untiled)-1)))
}
