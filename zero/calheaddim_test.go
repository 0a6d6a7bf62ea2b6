package zero

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestCalibratedAttentionHeadDim: a calibrated attention efficiency
// (calibrate --trace) fitted on a model of one head_dim and taken by a
// model of another is rescaled as the default rates are, by FlashAttention-2's
// published fwd+bwd causal rate on the H100 at 8K: 273 TFLOP/s at head_dim
// 64 and 308 at 128 (flash2_h100_fwd_bwd_benchmark.png at
// Dao-AILab/flash-attention 4f285b35, zero/testdata/attention/headdim.csv).
// The default scenario is Llama 2 7B (head_dim 4096/32 = 128); model.heads
// 64 makes it 64. A file that does not say its head_dim, the same head_dim
// and the scenario's own training.attention_efficiency are taken as is;
// the rescaled rate is at most 1.
func TestCalibratedAttentionHeadDim(t *testing.T) {
	const fa2H100 = 273.0 / 308.0
	dir := t.TempDir()
	write := func(name string, eff float64, headDim string) string {
		p := filepath.Join(dir, name)
		body := "version: 1\ncompute:\n  compute_efficiency: 0.5\n  attention_efficiency: " + strconv.FormatFloat(eff, 'g', -1, 64) + "\n  attention_kernel: fa2\n" + headDim +
			"  method: trace\n  measured_ms: 3000\n  scenario: default\n  gpu: H100-80GB\n  peak_tflops: 989\n  model: llama2-7b\n  params: 6738415616\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	at128 := write("hd128.yaml", 0.31, "  head_dim: 128\n")
	at64 := write("hd64.yaml", 0.31, "  head_dim: 64\n")
	old := write("old.yaml", 0.31, "")
	high := write("high.yaml", 0.95, "  head_dim: 64\n")
	for _, c := range []struct {
		name string
		set  []string
		want float64
	}{
		{"fitted at 128, run at 128", []string{"communication.calibration=" + at128}, 0.31},
		{"fitted at 128, run at 64", []string{"communication.calibration=" + at128, "model.heads=64"}, 0.31 * fa2H100},
		{"fitted at 64, run at 128", []string{"communication.calibration=" + at64}, 0.31 / fa2H100},
		{"fitted at 64, run at 64", []string{"communication.calibration=" + at64, "model.heads=64"}, 0.31},
		{"file without head_dim", []string{"communication.calibration=" + old, "model.heads=64"}, 0.31},
		{"own key", []string{"communication.calibration=" + at128, "model.heads=64", "training.attention_efficiency=0.31"}, 0.31},
		{"capped at 1", []string{"communication.calibration=" + high}, 1},
	} {
		in, err := scenarios.ReadInput("default", nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scenarios.Load(in.File, in.Data, c.set)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := AttentionEfficiencyOf(s); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: attention efficiency %.6f, want %.6f", c.name, got, c.want)
		}
	}
}
