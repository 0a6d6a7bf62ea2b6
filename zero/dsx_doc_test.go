package zero

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
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

// TestValidationProseQuotesTheTable holds figures the hand-written
// testdata/validation/README.md quotes from the rows TestValidation writes
// into docs/validation.md: the range by which DeepSpeedExamples' published
// allocated-at-rest figures exceed zerosim's (the measured minus the
// predicted column of the at-rest table), and the torchtitan eager float8
// row's throughput error. docs/memory-model.md's
// dlrover-atorch-fsdp-llama2-7b peak-memory errors are held by
// TestDLRoverDocFigures, from the validation replay itself.
func TestValidationProseQuotesTheTable(t *testing.T) {
	b, err := os.ReadFile("../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	// | case † | measured allocated GiB | predicted at rest GiB | error |
	rest := regexp.MustCompile(`(?m)^\| (dsx-[^|]*) \| (\d+\.\d\d) \| (\d+\.\d\d) \| [+-]\d+\.\d % \|$`)
	lo, hi := math.Inf(1), math.Inf(-1)
	rows := rest.FindAllStringSubmatch(string(b), -1)
	if len(rows) < 4 {
		t.Fatalf("docs/validation.md: %d dsx rows of allocated memory at rest, want at least 4", len(rows))
	}
	for _, m := range rows {
		pub, _ := strconv.ParseFloat(m[2], 64)
		got, _ := strconv.ParseFloat(m[3], 64)
		lo, hi = min(lo, pub-got), max(hi, pub-got)
	}
	golden.CheckQuotes(t, "../testdata/validation/README.md", "TestValidationProseQuotesTheTable (docs/validation.md's dsx allocated-at-rest rows)",
		fmt.Sprintf("every at-rest figure of the README is %.2f–%.2f GiB above zerosim's.", lo, hi))

	// testdata/validation/README.md's torchtitan-llama3-8b-h100-commits eager
	// float8 row ("predicted about N % fast"), its throughput error to the
	// nearest percent.
	eager := regexp.MustCompile(`(?m)^\| llama3-8b, 8 GPUs, micro-batch 1, GA 1, fp8 torchao \(bf16 all-gather\), compile none \| \d+ \| \d+ \| \+(\d+\.\d) % \|`)
	m := eager.FindAllStringSubmatch(string(b), -1)
	if len(m) != 1 {
		t.Fatalf("docs/validation.md: %d torchtitan eager float8 rows, want 1", len(m))
	}
	fast, _ := strconv.ParseFloat(m[0][1], 64)
	golden.CheckQuotes(t, "../testdata/validation/README.md", "TestValidationProseQuotesTheTable (docs/validation.md's torchtitan-llama3-8b-h100-commits compile none row)",
		fmt.Sprintf("it is still predicted about %.0f %% fast", fast))
}
