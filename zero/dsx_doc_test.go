package zero

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestDSXAutocastQuotesTheTable holds the after-figures docs/memory-model.md
// and docs/compute-model.md quote for DeepSpeedExamples' bf16_master_weight
// rows under DeepSpeed's torch_autocast (training.autocast bf16 over bf16
// parameters, cross_entropy autocast) to the rows TestValidation writes into
// docs/validation.md: the peak-memory error column for the memory model, the
// throughput error column for the compute model. The before-figures are the
// rows before torch_autocast was modelled and are not regenerated.
func TestDSXAutocastQuotesTheTable(t *testing.T) {
	b, err := os.ReadFile("../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	const bf16 = ", master bf16, optimizer states bf16, autocast bf16, cross_entropy autocast"
	// | case | tok/s | tok/s | error | GiB | GiB | error | fits |
	row := func(label string) (tps, mem string) {
		t.Helper()
		re := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(label) + ` \| \d+ \| \d+ \| ([+-]\d+\.\d %) \| [\d.]+ \| [\d.]+ \| ([+-]\d+\.\d %) \|`)
		m := re.FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("docs/validation.md: no row %q", label)
		}
		minus := strings.NewReplacer("-", "−")
		return minus.Replace(m[1]), minus.Replace(m[2])
	}
	t1, m1 := row("dsx-254m, 1 GPUs, micro-batch 4, GA 1" + bf16)
	t4, m4 := row("dsx-254m, 4 GPUs, micro-batch 4, GA 1" + bf16)
	tb, mb := row("dsx-6.86b, 4 GPUs, micro-batch 1, GA 1" + bf16)
	tr, _ := row("dsx-6.86b, 4 GPUs, micro-batch 1, GA 1, recompute full" + bf16)
	const from = "TestDSXAutocastQuotesTheTable (docs/validation.md's dsx-bf16-master-weight rows)"
	golden.CheckQuotes(t, "../docs/memory-model.md", from,
		"254M 1 GPU −17.3 % → "+m1+", 4 GPUs −33.3 % → "+m4+", 6.86B −5.6 % → "+mb+" (docs/validation.md)")
	golden.CheckQuotes(t, "../docs/compute-model.md", from,
		"254M 1 GPU +9.7 % → "+t1+", 4 GPUs +24.7 % → "+t4+", 6.86B +2.4 % → "+tb+", its full-recompute row −1.5 % → "+tr+".")
}
