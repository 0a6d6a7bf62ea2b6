package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestFP8ParamsMemory: training.fp8_params on QA's NeMo Llama 3.1 8B
// scenario (teFP8YAML; NVIDIA's dgxc runs set +model.fp8_params=true,
// llama3.1/configure.sh line 116 at dgxc-benchmarking 35a9aecc). By hand:
// a Llama 3.1 8B block holds q and o (h·h each), k and v (h·kv each), the
// SwiGLU's three h·f matrices and two RMSNorm weights (h each); the bf16
// group keeps the embedding and the untied output layer (V·h each) and the
// final norm (h). Under fp8_params the blocks' param buffer is 1 byte an
// element, TE's transpose 1 byte more, and nothing else: 2 bytes per block
// parameter where the bf16 weights and TE's cached fp8 copy and transpose
// took 4. Gradients (bf16, grad_sync_dtype) are unchanged.
func TestFP8ParamsMemory(t *testing.T) {
	const h, kv, f, V, L = 4096, 1024, 14336, 128256, 32
	const block = 2*h*h + 2*h*kv + 3*h*f + 2*h // 218,112,000
	const blocks = L * block                   // 6,979,584,000
	const dense = 2*V*h + h                    // 1,050,677,248
	const amax = 4 * L * 3 * scenarios.AmaxHistoryLen * 4
	if blocks+dense != 8_030_261_248 {
		t.Fatalf("hand count %d, want Llama 3.1 8B's 8,030,261,248", blocks+dense)
	}
	analyze := func(set ...string) *Report {
		t.Helper()
		s, err := scenarios.Load("nemo.yaml", []byte(teFP8YAML), set)
		if err != nil {
			t.Fatal(err)
		}
		return mustAnalyze(t, s, Options{})
	}
	rest := func(r *Report, c Comp) int64 { return r.Component(c).AtRest }
	te := analyze("training.fp8=te")
	p8 := analyze("training.fp8=te", "training.fp8_params=true")
	cur := analyze("training.fp8=te_current", "training.fp8_params=true")
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"te params", rest(te, CompParams), 2 * (blocks + dense)},
		{"te fp8 copies", rest(te, CompFP8), 2*blocks + amax},
		{"fp8_params params", rest(p8, CompParams), 2*dense + blocks},
		{"fp8_params fp8 copies (transposes)", rest(p8, CompFP8), blocks + amax},
		{"fp8_params grads", rest(p8, CompGrads), 2 * (blocks + dense)},
		{"te_current fp8_params fp8 copies", rest(cur, CompFP8), blocks},
		{"te grads", rest(te, CompGrads), 2 * (blocks + dense)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d B, want %d", c.name, c.got, c.want)
		}
	}
	fewer := rest(te, CompParams) + rest(te, CompFP8) - rest(p8, CompParams) - rest(p8, CompFP8)
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestFP8ParamsMemory (teFP8YAML, fp8 te against te with fp8_params)",
		fmt.Sprintf("fewer in **fp8 copies** (the transpose without the fp8 copy): %.2f GiB on Llama 3.1 8B", float64(fewer)/float64(units.GiB)))
	// The fp32 master and Adam's states: 4 bytes per element of the
	// rank's shard of each buffer, now two.
	var shard int64
	for _, g := range p8.Groups {
		shard += g.ShardElems
	}
	if len(p8.Groups) != 2 || p8.Groups[1].Name != scenarios.FP8ParamsGroup || p8.Groups[1].ParamBytes != 1 || p8.Groups[1].GradBytes != 2 || p8.Groups[1].MasterBytes != 4 {
		t.Errorf("groups %+v, want dense and fp8 (1-byte params, bf16 grads, fp32 master)", p8.Groups)
	}
	if got := rest(p8, CompMaster); got != 4*shard {
		t.Errorf("fp32 master %d B, want 4 × %d shard elements", got, shard)
	}
}
