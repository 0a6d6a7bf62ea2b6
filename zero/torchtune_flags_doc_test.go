package zero

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestTorchtuneFlagsFusedDocFigure holds the figure testdata/validation/
// README.md quotes for torchtune's '+ Activation Checkpointing' row
// (torchtune-llama3.2-3b-a100-flags) under the fused AdamW that
// torchtune's 3B_full.yaml sets (fused: True at 1814feb17), which the
// suite's foreach template does not run: the validation's own replay of
// that row with training.optimizer_impl: fused, its active peak against
// the table's 24.9 GiB.
func TestTorchtuneFlagsFusedDocFigure(t *testing.T) {
	const name = "torchtune-llama3.2-3b-a100-flags"
	src, tmpl := loadValidation(t, "../testdata/validation/"+name)
	const foreach = "optimizer_impl: foreach"
	if !bytes.Contains(tmpl, []byte(foreach)) {
		t.Fatalf("%s.yaml no longer says %q: reword the README's account of the fused AdamW", name, foreach)
	}
	cases, _ := runValidation(t, name, src, bytes.Replace(tmpl, []byte(foreach), []byte("optimizer_impl: fused"), 1), validationVariant{})
	var ac *validationCase
	for i := range cases {
		if cases[i].row.Recompute == "full" {
			ac = &cases[i]
		}
	}
	if ac == nil || math.IsNaN(ac.activeErr) {
		t.Fatalf("%s: no activation-checkpointing row with an active error", name)
	}
	golden.CheckQuotes(t, "../testdata/validation/README.md", "TestTorchtuneFlagsFusedDocFigure (runValidation of "+name+", optimizer_impl fused)",
		fmt.Sprintf("with which the AC row would read %+.1f %%", 100*ac.activeErr))
}
