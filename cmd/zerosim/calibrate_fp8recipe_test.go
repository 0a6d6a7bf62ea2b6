package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// TestCalibrateFP8RecipeRange (qatput30 finding 7b): a step fitted under
// one fp8 recipe is set beside the published runs of that recipe only. On
// H100 the published torchao fp8 runs are torchtitan's float8 runs
// (0.31–0.53) and the Transformer Engine runs NeMo 24.07's three
// performance-summary snapshots (0.5324–0.5453, nemo-24.07-h100-*), so a
// torchao fit of 0.54 is warned above its recipe's runs, while a
// Transformer Engine fit of 0.54 is set beside the Transformer Engine runs
// only, within them, and is not; a bf16 fit of 0.54 is within the bf16
// runs' 0.36–0.70, as before. The range is read from
// the generated table (zero.PublishedRange over published_efficiency.go,
// written from docs/validation.md's fits by
// `go test ./zero -run 'TestValidation$' -update`), not retyped.
func TestCalibrateFP8RecipeRange(t *testing.T) {
	dir := t.TempDir()
	const fit = 0.54
	lo, hi, n, _ := zero.PublishedRange("H100-80GB", scenarios.FP8TorchAO)
	if n != 2 || hi >= fit {
		// The warning's "both …" names two runs, and the torchao fit
		// below must lie above their range for the test to mean anything.
		t.Fatalf("published torchao fp8 runs on H100-80GB: %d, %g–%g; the test wants 2, topping out below %g", n, lo, hi, fit)
	}
	above := "is above the " + zero.FittedRange(lo, hi) + " that 2 published fp8 runs on H100-80GB (both single-node torch.compile runs) fitted (docs/validation.md)"
	for _, c := range []struct {
		recipe string
		warn   bool
	}{
		{"torchao", true},
		{"te", false},
		{"te_current", false},
		{"none", false},
	} {
		set := "training.fp8=" + c.recipe
		step := replayDefault(t, set, fmt.Sprintf("training.compute_efficiency=%g", fit)).StepTime.String()
		_, errOut, code := runCLI("calibrate", "--set", set, "--step-time", step, "default", "--file", filepath.Join(dir, c.recipe+".yaml"))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.recipe, code, errOut)
		}
		if got := strings.Contains(errOut, above); got != c.warn || !c.warn && strings.Contains(errOut, " is above ") {
			t.Errorf("fp8 %s at %g: stderr %q; want the torchao runs' range quoted: %v", c.recipe, fit, errOut, c.warn)
		}
	}
}
