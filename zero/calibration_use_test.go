package zero

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCalibrationUseParts: the parts of a calibration file a run applied,
// from where the loader says each value came from. A compute part fitted
// by --trace carries the GEMM and the attention efficiency; a scenario
// that sets compute_efficiency itself still takes the attention one, so
// the compute part is applied; one that sets both takes none (the part
// was named whenever the scenario's own attention efficiency equalled the
// file's).
func TestCalibrationUseParts(t *testing.T) {
	dir := t.TempDir()
	cal := filepath.Join(dir, "cal.yaml")
	body := "version: 1\ncompute:\n  compute_efficiency: 0.5\n  attention_efficiency: 0.31\n  attention_kernel: fa2\n  method: trace\n  measured_ms: 3000\n  scenario: default\n  gpu: H100-80GB\n  peak_tflops: 989\n  model: llama2-7b\n  params: 6738415616\n"
	if err := os.WriteFile(cal, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{nil, "compute"},
		{[]string{"training.compute_efficiency=0.6"}, "compute"},
		{[]string{"training.compute_efficiency=0.6", "training.attention_efficiency=0.31"}, ""},
	} {
		in, err := scenarios.ReadInput("default", nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scenarios.Load(in.File, in.Data, append([]string{"communication.calibration=" + cal}, tc.sets...))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Model(s)
		if err != nil {
			t.Fatal(err)
		}
		u := calibrationUse(s, m)
		if got := strings.Join(u.Parts, ","); got != tc.want || u.File != cal {
			t.Errorf("%v: %s parts %q, want %s parts %q", tc.sets, u.File, got, cal, tc.want)
		}
	}
}
