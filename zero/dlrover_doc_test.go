package zero

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestDLRoverDocFigures holds the memory errors docs/memory-model.md
// quotes for dlrover ATorch's Llama 2 7B rows ("A loss inside the model's
// forward") to the validation's own replay of that source (runValidation,
// as TestValidation writes docs/validation.md).
func TestDLRoverDocFigures(t *testing.T) {
	const name = "dlrover-atorch-fsdp-llama2-7b"
	cases, _, _ := replayValidation(t, name)
	if len(cases) != 4 {
		t.Fatalf("%d rows, want the README's 4 (8, 16, 32 and 64 GPUs)", len(cases))
	}
	errs := make([]string, len(cases))
	for i, c := range cases {
		if math.IsNaN(c.memoryErr) {
			t.Fatalf("%s: no memory error", c.row.name())
		}
		errs[i] = fmt.Sprintf("%+.1f", 100*c.memoryErr)
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestDLRoverDocFigures (runValidation of "+name+")",
		fmt.Sprintf("the dlrover-atorch-fsdp-llama2-7b rows are at %s %% of the measured `max_memory_allocated`", strings.Join(errs, "/")))
}
