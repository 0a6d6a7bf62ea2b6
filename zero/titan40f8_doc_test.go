package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestTorchtitan40f8fd007DocFigures holds what docs/compute-model.md and
// docs/memory-model.md say of torchtitan 40f8fd007's Llama 3 8B run
// (testdata/validation/torchtitan-llama3-8b-a100: foreach and fused AdamW
// on 8 A100 80GB) to the validation's own replay of that source
// (runValidation, as TestValidation writes docs/validation.md), to the
// measured rows and to the arithmetic the documents state: the step gap
// from the two measured wps (8,192 tokens a GPU and step), the optimizer
// traffic's share of it (OptimizerBytesPerElem of each implementation over
// the rank's P/8 shard at the A100 80GB's 2,039 GB/s), and FSDP2's root
// group (V = 128,256, h = 4,096): the output projection's unsharded
// parameters and gradient 2·2·V·h, the root's fp32 reduce-scatter input
// 4·(2·V·h + h) where the embedding's and the projection's, 4·V·h each,
// were. The document's figure before the root group (55.47 GiB) is history
// and not held.
func TestTorchtitan40f8fd007DocFigures(t *testing.T) {
	const name = "torchtitan-llama3-8b-a100"
	cases, src, tmpl := replayValidation(t, name)
	if len(cases) != 2 || cases[0].row.OptimizerImpl != "foreach" || cases[1].row.OptimizerImpl != "fused" {
		t.Fatalf("%d rows; want foreach then fused", len(cases))
	}
	foreach, fused := cases[0], cases[1]
	const (
		tokens, P, shards, hbm = 8192, 8030261248, 8, 2039e9
		V, h, layers           = 128256, 4096, 32
		gib                    = 1 << 30
	)
	bytes := make([]int64, 2)
	for i, c := range cases {
		s, err := scenarios.Load(name+".yaml", tmpl, c.row.sets(src.gpn))
		if err != nil {
			t.Fatal(err)
		}
		bytes[i] = OptimizerBytesPerElem(s)
	}
	gap := float64(tokens)/foreach.row.TokensPerGPU - float64(tokens)/fused.row.TokensPerGPU
	traffic := float64((bytes[0]-bytes[1])*P/shards) / hbm
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestTorchtitan40f8fd007DocFigures (runValidation of "+name+")",
		fmt.Sprintf("(docs/validation.md, %s: %.1fe9 fp32 shard elements a rank in %d parameters), %.0f and %.0f wps, %.0f ms a step apart, where the traffic (%d B against %d B a shard element, the norm clipping's 12 B in both, at %.2f TB/s) accounts for %.0f ms, so the fused row, calibrated on the foreach one, is predicted %.1f %% slow",
			name, float64(P/shards)/1e9, layers*9+3, foreach.row.TokensPerGPU, fused.row.TokensPerGPU, 1e3*gap, bytes[0], bytes[1], hbm/1e12, 1e3*traffic, -100*fused.tokenErr))
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestTorchtitan40f8fd007DocFigures (runValidation of "+name+")",
		fmt.Sprintf("(V = 128,256): %.2f GiB more through the blocks' backward, a %.2f GiB reduce-scatter input at the end where two of %.2f GiB were;",
			float64(2*2*V*h)/gib, float64(4*(2*V*h+h))/gib, float64(4*V*h)/gib),
		fmt.Sprintf("→ %.2f GiB against %.2f measured)", foreach.peakGiB, foreach.row.MemoryGiB))
}
