package zero

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestLlamaRecipesLimiterDocFigures holds the figures docs/memory-model.md
// and testdata/validation/README.md quote for llama-recipes' Llama-2-13B on
// 8 A100 40GB (FSDP1 with limit_all_gathers=False) to the validation's own
// replay of that source (runValidation, as TestValidation writes
// docs/validation.md): the reserved peak and its error as the run ran
// (the rate limiter off) and with the limiter's two in flight.
func TestLlamaRecipesLimiterDocFigures(t *testing.T) {
	const name = "llamarecipes-llama2-13b-a100-40gb"
	cases, src, tmpl := replayValidation(t, name)
	const off = "limit_all_gathers: false"
	if !bytes.Contains(tmpl, []byte(off)) {
		t.Fatalf("%s.yaml no longer says %q: reword the docs' account of the rate limiter", name, off)
	}
	figure := func(cases []validationCase) (gib, pct string) {
		t.Helper()
		if len(cases) != 1 || math.IsNaN(cases[0].memoryErr) {
			t.Fatalf("%s: want one row with a memory error, got %d", name, len(cases))
		}
		c := cases[0]
		return fmt.Sprintf("%.1f", c.peakGiB), strings.Replace(fmt.Sprintf("%+.1f %%", 100*c.memoryErr), "-", "−", 1)
	}
	poolGiB, poolPct := figure(cases)
	on, _ := runValidation(t, name, src, bytes.Replace(tmpl, []byte(off), []byte("limit_all_gathers: true"), 1), validationVariant{})
	limGiB, limPct := figure(on)
	from := "TestLlamaRecipesLimiterDocFigures (runValidation of " + name + ")"
	golden.CheckQuotes(t, "../docs/memory-model.md", from,
		fmt.Sprintf("the pool, cut by the 40 GB device, makes %s (%s), the limiter's two in flight %s (%s)", poolGiB, poolPct, limGiB, limPct))
	golden.CheckQuotes(t, "../testdata/validation/README.md", from,
		fmt.Sprintf("zerosim's %s is that upper bound's;", poolPct),
		fmt.Sprintf("with the limiter's two in flight (`limit_all_gathers: true`) it is %s.", limPct))
}
