package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestValidationREADMEFits holds testdata/validation/README.md's account of
// fms-fsdp's compiled tables to the efficiencies TestValidation fitted
// (publishedEfficiencies, written by it) and to the sources' measured 7b
// rows: the A100 compiled fit, the compiled fits above the default, the
// compiled fits against the eager ones, and what compile bought the 7b row
// (measured tokens/s, compiled over eager).
func TestValidationREADMEFits(t *testing.T) {
	fit := func(source string) float64 {
		t.Helper()
		for _, p := range publishedEfficiencies {
			if p.Source == source {
				return p.Efficiency
			}
		}
		t.Fatalf("no fitted efficiency for %s", source)
		return 0
	}
	// Every bf16 fit above the default is of a compiled run: the README
	// says so, and says how many (below).
	above := 0
	for _, p := range publishedEfficiencies {
		if p.FP8 == scenarios.FP8None && p.Efficiency > scenarios.DefaultComputeEfficiency {
			above++
			if !p.Compiled {
				t.Errorf("%s: an eager bf16 fit %.4f above the default; the README says only compiled runs are", p.Source, p.Efficiency)
			}
		}
	}
	tps7b := func(source string) float64 {
		t.Helper()
		src, _ := loadValidation(t, "../testdata/validation/"+source)
		for _, r := range src.Rows {
			if r.Model == "llama2-7b" {
				return r.TokensPerGPU
			}
		}
		t.Fatalf("%s: no llama2-7b row", source)
		return 0
	}
	a, ac := fit("fms-fsdp-llama2-a100"), fit("fms-fsdp-llama2-a100-compile")
	h, hc := fit("fms-fsdp-llama2-h100"), fit("fms-fsdp-llama2-h100-compile")
	pct := func(x float64) string { return fmt.Sprintf("%.0f %%", 100*(x-1)) }
	golden.CheckQuotes(t, "../testdata/validation/README.md", "TestValidationREADMEFits (publishedEfficiencies, the sources' 7b rows)",
		fmt.Sprintf("the A100 column fits a compute efficiency of %.4f, above the default %g, as %d compiled runs' fits are, and no eager run's.", ac, scenarios.DefaultComputeEfficiency, above),
		fmt.Sprintf("fit %s and %s more than the eager table of the same team (A100 %.4f → %.4f, H100 %.4f → %.4f", pct(ac/a), pct(hc/h), a, ac, h, hc),
		fmt.Sprintf("(+%s and +%s tokens/s on the 7b row)", pct(tps7b("fms-fsdp-llama2-a100-compile")/tps7b("fms-fsdp-llama2-a100")), pct(tps7b("fms-fsdp-llama2-h100-compile")/tps7b("fms-fsdp-llama2-h100"))))
	// The README's account of the default against the fits says the same
	// count in words.
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if above >= len(words) {
		t.Fatalf("%d compiled fits above the default: reword the README's count", above)
	}
	runs := map[bool]string{true: "run", false: "runs"}[above == 1]
	golden.CheckQuotes(t, "../README.md", "TestValidationREADMEFits (publishedEfficiencies)",
		fmt.Sprintf("only %s %s under torch.compile fitted above it", words[above], runs))
}

// TestValidationREADMEMosaicFA1Rows holds testdata/validation/README.md's
// row counts of the four mosaicml/examples FlashAttention-1 sources to
// their JSON files.
func TestValidationREADMEMosaicFA1Rows(t *testing.T) {
	rows := func(name string) int {
		t.Helper()
		src, _ := loadValidation(t, "../testdata/validation/mosaicml-examples-gpt-"+name)
		return len(src.Rows)
	}
	golden.CheckQuotes(t, "../testdata/validation/README.md", "TestValidationREADMEMosaicFA1Rows (the sources' rows)",
		fmt.Sprintf("`mosaicml-examples-gpt-a100-40gb-d14a7c94.json`: every row (%d and %d) of", rows("a100-80gb-d14a7c94"), rows("a100-40gb-d14a7c94")),
		fmt.Sprintf("`mosaicml-examples-gpt-a100-80gb-22d724c8.json`: every row (%d and %d) of", rows("a100-40gb-22d724c8"), rows("a100-80gb-22d724c8")))
}
