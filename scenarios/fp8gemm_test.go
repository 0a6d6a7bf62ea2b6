package scenarios

import (
	"math"
	"strings"
	"testing"
)

// TestFP8GEMMRatioDerivation recomputes the Hopper fp8_gemm_ratio from the
// published figures DefaultFP8GEMMRatio cites: torchao's float8 linear
// speedup on H100 (1.39× at M, K, N = 4096, 8192, 16384, forward and
// backward with the casts; torchao/float8/README.md at b6ef500d3 lines
// 104-112) and torchao's roofline figures for that H100 (bf16 GEMMs at
// 0.78 of 989 TFLOPS, memory at 0.92 of 2.4 TB/s, the unfused tensorwise
// casts' 6 B per input and output-gradient element and 8 B per weight
// element; torchao/testing/training/roofline_utils.py at 36027d82d), and
// the Blackwell one from vLLM's B200 GEMM throughputs (#19566).
func TestFP8GEMMRatioDerivation(t *testing.T) {
	const m, k, n = 4096.0, 8192.0, 16384.0
	const speedup, bf16Eff, peakBF16, peakFP8, hbm = 1.39, 0.78, 989e12, 1979e12, 2.4e12 * 0.92
	flops := 3 * 2 * m * k * n // forward, data- and weight-gradient GEMMs
	bf16 := flops / (bf16Eff * peakBF16)
	casts := (6*m*k + 8*k*n + 6*m*n) / hbm
	fp8GEMM := bf16/speedup - casts
	hopper := flops / (fp8GEMM * peakFP8) / bf16Eff
	blackwell := 2544.683145 / 1512.843919 / 2 // fp8 and bf16 TFLOP/s over the peaks' 2×
	for _, c := range []struct {
		gpu  string
		want float64
	}{{"H100-80GB", hopper}, {"H200", hopper}, {"B200", blackwell}, {"GB300", blackwell}} {
		got, from, ok := DefaultFP8GEMMRatio(c.gpu)
		if !ok || from == "" || math.Abs(got-c.want) > 0.005 {
			t.Errorf("%s: fp8_gemm_ratio %g (%q, %v), the published figures give %.4f", c.gpu, got, from, ok, c.want)
		}
	}
	if got, _, ok := DefaultFP8GEMMRatio("MI300X"); ok || got != 1 {
		t.Errorf("MI300X: fp8_gemm_ratio %g (%v), want 1 and no source: none is published", got, ok)
	}
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
		{"H100-80GB", "", 0.92, ""},
		{"B200", "", 0.84, ""},
		{"MI300X", "", 1, ""},
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
