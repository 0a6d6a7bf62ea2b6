package scenarios

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestFP8GEMMRatioDerivation recomputes every default fp8_gemm_ratio from
// the published figures DefaultFP8GEMMRatio cites: ml-engineering's
// maximum achievable matmul TFLOPS in bf16 and fp8 (compute/accelerator/
// README.md at 744d01e, lines 348-377) over the peaks, and checks the H100
// one against an independent source, torchao's float8 linear speedup on
// H100 (1.39× at M, K, N = 4096, 8192, 16384, forward and backward with the
// casts; torchao/float8/README.md at b6ef500d3 lines 104-112) with
// torchao's roofline figures for that H100 (bf16 GEMMs at 0.78 of 989
// TFLOPS, memory at 0.92 of 2.4 TB/s, the unfused tensorwise casts' 6 B
// per input and output-gradient element and 8 B per weight element;
// torchao/testing/training/roofline_utils.py at 36027d82d); and AMD's
// max-achievable FLOPs for MI300X and MI325X (measuring-max-achievable-
// flops-part2 at ROCm/rocm-blogs 8e01195), checked against AMD's MI325X
// remeasurement with normal-distribution inputs (taf-blog at d9464d4).
func TestFP8GEMMRatioDerivation(t *testing.T) {
	ratio := func(fp8, fp8Peak, bf16, bf16Peak float64) float64 { return (fp8 / fp8Peak) / (bf16 / bf16Peak) }
	for _, c := range []struct {
		gpu  string
		want float64
	}{
		{"H100-80GB", ratio(1402.6, 1979, 794.5, 989)},
		{"H200", ratio(1453.4, 1979, 794.5, 989)},
		{"B200", ratio(3432.5, 4500, 1745.0, 2250)},
		{"B300", ratio(3353.3, 4500, 1769.0, 2250)},
		{"GB300", ratio(3353.3, 4500, 1769.0, 2250)},
		{"GB200", ratio(3615.6, 5000, 1822.0, 2500)},
		{"GH200-96GB", ratio(1535.0, 1979, 828.6, 989)},
		// AMD's max-achievable FLOPs (measuring-max-achievable-flops-part2
		// at ROCm/rocm-blogs 8e01195, Table 1).
		{"MI300X", ratio(1273, 2614.9, 708, 1307.4)},
		{"MI325X", ratio(1519, 2614.9, 843, 1307.4)},
	} {
		got, from, ok := DefaultFP8GEMMRatio(c.gpu)
		if !ok || from == "" || math.Abs(got-c.want) > 0.005 {
			t.Errorf("%s: fp8_gemm_ratio %g (%q, %v), the published figures give %.4f", c.gpu, got, from, ok, c.want)
		}
	}
	for _, gpu := range []string{"MI350X", "MI355X", "L40S", "A100-80GB"} {
		if got, _, ok := DefaultFP8GEMMRatio(gpu); ok || got != 1 {
			t.Errorf("%s: fp8_gemm_ratio %g (%v), want 1 and no source: none is published", gpu, got, ok)
		}
	}
	// AMD's MI325X remeasured with normal-distribution inputs (taf-blog
	// at ROCm/rocm-blogs d9464d4, footnote 1): the best shape in each
	// dtype (MAF) and ten fixed DeepSeek-V3 shapes, the same in both (TAF),
	// bracket the default the trig_float MAF gives.
	mafNormal, taf := ratio(1408.06, 2614.9, 831.40, 1307.4), ratio(1143.18, 2614.9, 616.42, 1307.4)
	if got, _, _ := DefaultFP8GEMMRatio("MI325X"); math.Abs(mafNormal-0.8468) > 0.0005 || math.Abs(taf-0.9272) > 0.0005 || got < mafNormal || got > taf {
		t.Errorf("MI325X: fp8_gemm_ratio %g, AMD's normal-input MAF gives %.4f and its TAF %.4f: want the default between them", got, mafNormal, taf)
	}
	// torchao's microbenchmark: the fp8 linear's time less its casts is
	// its GEMMs' time, and their efficiency over the bf16 GEMMs' is the
	// ratio; the two H100 sources agree within 5 points.
	const m, k, n = 4096.0, 8192.0, 16384.0
	const speedup, bf16Eff, peakBF16, peakFP8, hbm = 1.39, 0.78, 989e12, 1979e12, 2.4e12 * 0.92
	flops := 3 * 2 * m * k * n // forward, data- and weight-gradient GEMMs
	bf16 := flops / (bf16Eff * peakBF16)
	casts := (6*m*k + 8*k*n + 6*m*n) / hbm
	torchao := flops / ((bf16/speedup - casts) * peakFP8) / bf16Eff
	if got, _, _ := DefaultFP8GEMMRatio("H100-80GB"); math.Abs(torchao-0.9225) > 0.0005 || math.Abs(torchao-got) > 0.05 {
		t.Errorf("torchao's H100 microbenchmark gives fp8_gemm_ratio %.4f, the default is %g: want them within 0.05", torchao, got)
	}
}

// TestFP8GEMMRatioDocs holds the default fp8_gemm_ratio that
// docs/compute-model.md's table and docs/scenario-format.md's cluster row
// give each GPU to DefaultFP8GEMMRatio's.
func TestFP8GEMMRatioDocs(t *testing.T) {
	r := func(gpu string) string {
		got, _, _ := DefaultFP8GEMMRatio(gpu)
		return fmt.Sprintf("%g", got)
	}
	var rows []string
	for _, gpus := range [][]string{{"H100-80GB"}, {"H200"}, {"B200"}, {"B300", "GB300"}, {"GB200"}, {"GH200-96GB"}, {"MI300X", "MI325X"}} {
		if len(gpus) == 2 && r(gpus[0]) != r(gpus[1]) {
			t.Errorf("%s and %s share a row of docs/compute-model.md but have fp8_gemm_ratio %s and %s", gpus[0], gpus[1], r(gpus[0]), r(gpus[1]))
		}
		rows = append(rows, fmt.Sprintf("| %s | %s |", strings.Join(gpus, ", "), r(gpus[0])))
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "scenarios.DefaultFP8GEMMRatio", rows...)
	golden.CheckQuotes(t, "../docs/scenario-format.md", "scenarios.DefaultFP8GEMMRatio",
		fmt.Sprintf("from `gpu`: %s on H100-80GB, %s on H200, %s on B200, %s on GB200, %s on B300 and GB300, %s on GH200-96GB, %s on MI300X and MI325X, %s elsewhere",
			r("H100-80GB"), r("H200"), r("B200"), r("GB200"), r("B300"), r("GH200-96GB"), r("MI300X"), r("MI355X")))
}

// TestFP8GEMMRatioKey: cluster.fp8_gemm_ratio defaults from the GPU, takes
// a value in (0, 2] and refuses others with the key's place and the fix.
func TestFP8GEMMRatioKey(t *testing.T) {
	const doc = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: %s%s}\nmodel: {kind: transformer, hidden: 4096, layers: 4, heads: 32, seq_len: 2048, vocab: 32000}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, fp8: torchao}\n"
	for _, c := range []struct {
		gpu, extra string
		want       float64
		err        string
	}{
		{"H100-80GB", "", 0.88, ""},
		{"B200", "", 0.98, ""},
		{"MI300X", "", 0.90, ""},
		{"MI355X", "", 1, ""},
		{"H100-80GB", ", fp8_gemm_ratio: 0.7", 0.7, ""},
		{"H100-80GB", ", fp8_gemm_ratio: 0", 0, "w.yaml:2:55: fp8_gemm_ratio=0 is out of range (use the fraction of the bf16 GEMM efficiency fp8 GEMMs reach, in (0, 2], such as 0.92, or delete the key)"},
		{"H100-80GB", ", fp8_gemm_ratio: 2.5", 0, "fp8_gemm_ratio=2.5 is out of range"},
	} {
		s, err := Load("w.yaml", []byte(strings.Replace(strings.Replace(doc, "%s", c.gpu, 1), "%s", c.extra, 1)), nil)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s%s: err %v, want %q", c.gpu, c.extra, err, c.err)
			}
		case err != nil:
			t.Errorf("%s%s: %v", c.gpu, c.extra, err)
		case s.Cluster.FP8GEMMRatioOf() != c.want:
			t.Errorf("%s%s: fp8_gemm_ratio %g, want %g", c.gpu, c.extra, s.Cluster.FP8GEMMRatioOf(), c.want)
		}
	}
}
