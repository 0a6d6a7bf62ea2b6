package zero

import (
	"math"
	"testing"
)

// TestGEMMSecondsWaves checks the wave quantization by hand: on 108 SMs a
// 4096×8192 output is 16·64 = 1024 tiles of 256×128, ceil(1024/108) = 10
// waves, so the matmul runs at 1024/1080 of the GEMM efficiency; doubling m
// gives 2048 tiles in 19 waves (2048/2052). This is the size dependence: a
// micro-batch of 2 (m = 4096) runs 5 % slower per FLOP than 4 (m = 8192).
func TestGEMMSecondsWaves(t *testing.T) {
	g := GPUShape{Peak: 312e12, HBM: 1555e9, SMs: 108}
	e := Efficiency{GEMM: 0.8, Attention: 0.6, HBM: 0.88}
	for _, c := range []struct {
		m     int64
		quant float64
	}{{4096, 1024.0 / 1080}, {8192, 2048.0 / 2052}} {
		got, err := GEMMSeconds(c.m, 8192, 8192, g, e)
		if err != nil {
			t.Fatal(err)
		}
		want := 2 * float64(c.m) * 8192 * 8192 / (312e12 * 0.8 * c.quant)
		if math.Abs(got/want-1) > 1e-12 {
			t.Errorf("m=%d: %g s, want %g", c.m, got, want)
		}
	}
	// A skinny matmul is memory-bound: 16 rows of 8192×8192 move the
	// 128 MiB weight for 2 GFLOP.
	got, _ := GEMMSeconds(16, 8192, 8192, g, e)
	if want := 2 * (16*8192 + 8192*8192 + 16*8192) / (1555e9 * 0.88); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("skinny: %g s, want the HBM bound %g", got, want)
	}
}

// TestBlockSecondsShape checks that a block's backward costs about twice
// its forward for GEMMs and that recomputation adds its FLOPs.
func TestBlockSecondsShape(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 8192, Batch: 2, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Causal: true}
	g := GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132}
	e := Efficiency{GEMM: DefaultGEMMEfficiency, Attention: DefaultAttentionEfficiency, HBM: DefaultHBMEfficiency}
	fwd, bwd, err := BlockSeconds(d, g, e, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := bwd / fwd; r < 2 || r > 2.5 {
		t.Errorf("backward/forward = %.3f, want between 2 (GEMMs) and 2.5 (attention)", r)
	}
	full, err := RecomputeFLOPs(d, "full")
	if err != nil {
		t.Fatal(err)
	}
	_, bwdFull, _ := BlockSeconds(d, g, e, 0, full)
	if math.Abs((bwdFull-bwd)/fwd-1) > 1e-9 {
		t.Errorf("full recompute adds %.4f forwards, want 1", (bwdFull-bwd)/fwd)
	}
}
