package scenarios

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCarryComputeEfficiency: a compute efficiency fitted on one GPU is
// carried to another as a ratio to the fitting GPU's default, so that the
// two GPUs keep the ratio of their measured maximum matmul throughputs
// (ml-engineering's MAMF table, bf16 TFLOPS of each preset's dense peak):
// GB200 1,822 of 2,500, B200 1,745 of 2,250, GB300 as the B300's 1,769 of
// 2,250, MI300X 668.4 of 1,307.4, the H100's 794.5 of 989 the reference at
// 0.8 (a part above it keeps 0.8: A100). Taken as is, the GB200 fit of
// NVIDIA's Llama 3 8B fp8 table, 0.4465, ran the B200 at 0.4465 of its
// 2,250 TFLOPS, 6 % under the two GPUs' measured ratio.
func TestCarryComputeEfficiency(t *testing.T) {
	gb200, b200, b300 := 1822/2500.0, 1745/2250.0, 1769/2250.0
	h100, mi300x := 794.5/989, 668.4/1307.4
	for _, tc := range []struct {
		name     string
		eff      float64
		from, to string
		want     float64
	}{
		{"same GPU", 0.4465, "GB200", "GB200", 0.4465},
		{"GB200 to B200", 0.4465, "GB200", "B200", 0.4465 * b200 / gb200},
		{"B200 to GB200", 0.4934, "B200", "GB200", 0.4934 * gb200 / b200},
		{"GB200 to GB300 (the B300's row)", 0.4465, "GB200", "GB300", 0.4465 * b300 / gb200},
		{"H100 to MI300X", 0.5, "H100-80GB", "MI300X", 0.5 * mi300x / h100},
		{"GB200 to H100", 0.4465, "GB200", "H100-80GB", 0.4465 * h100 / gb200},
		// Both keep 0.8: the A100's best shape beats the H100's.
		{"H100 to A100", 0.6, "H100-80GB", "A100-80GB", 0.6},
		// No MAMF row: the H100's 0.8 is L40S's default too.
		{"H100 to L40S", 0.6, "H100-80GB", "L40S", 0.6},
		{"unnamed GPU", 0.4465, "GB200", "", 0.4465},
		{"file without a GPU", 0.4465, "", "B200", 0.4465},
		{"capped at 1", 0.95, "MI300X", "H100-80GB", 1},
	} {
		got := CarryComputeEfficiency(tc.eff, tc.from, tc.to)
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: CarryComputeEfficiency(%g, %q, %q) = %.6f, want %.6f", tc.name, tc.eff, tc.from, tc.to, got, tc.want)
		}
	}
}

// TestCalibrationCarriedToGPU: a scenario on another GPU than its
// calibration file's takes the fit carried (TestCarryComputeEfficiency),
// says so where the efficiency comes from and in the warning, and a
// re-resolved scenario keeps it; on the file's own GPU nothing moves.
func TestCalibrationCarriedToGPU(t *testing.T) {
	dir := t.TempDir()
	const cal = "version: 1\ncompute: {compute_efficiency: 0.4465, method: step-time, measured_ms: 2840, scenario: s, gpu: GB200, peak_tflops: 2500}\n"
	if err := os.WriteFile(filepath.Join(dir, "gb200.yaml"), []byte(cal), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gpu        string
		eff        float64
		from, warn string
	}{
		{"GB200", 0.4465, "calibration gb200.yaml (fitted to a 2.84s step of s)", ""},
		{"B200", 0.4465 * (1745 / 2250.0) / (1822 / 2500.0),
			"calibration gb200.yaml (fitted to a 2.84s step of s); carried from GB200 to B200 as 0.4751, × 0.7723/0.7258, the GPUs' default efficiencies",
			"the compute efficiency was fitted on GB200, this cluster runs B200: carried as 0.4751, the fit × B200's default over GB200's (0.7723/0.7258), which holds the GPUs' measured matmul ratio but not what else differs (calibrate on this GPU)"},
	} {
		// One node of 8: GB200's trays of 4 are one NVL72 node to NCCL.
		text := strings.NewReplacer("A100-80GB", tc.gpu, "nodes: 2", "nodes: 1", "gpus_per_node: 4", "gpus_per_node: 8").Replace(baseYAML) +
			"communication:\n  calibration: gb200.yaml\n"
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path, []byte(text), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.gpu, err)
		}
		if math.Abs(s.Training.ComputeEfficiency-tc.eff) > 1e-12 || s.Training.ComputeEfficiencyFrom != tc.from {
			t.Errorf("%s: efficiency %.6f from %q, want %.6f from %q", tc.gpu, s.Training.ComputeEfficiency, s.Training.ComputeEfficiencyFrom, tc.eff, tc.from)
		}
		if got := strings.Join(s.Warnings, "\n"); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.gpu, got, tc.warn)
		}
		if err := Resolve(s); err != nil || math.Abs(s.Training.ComputeEfficiency-tc.eff) > 1e-12 || s.Training.ComputeEfficiencyFrom != tc.from {
			t.Errorf("%s: after Resolve: %v, %.6f from %q", tc.gpu, err, s.Training.ComputeEfficiency, s.Training.ComputeEfficiencyFrom)
		}
	}
}
