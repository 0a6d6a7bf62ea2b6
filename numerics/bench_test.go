package numerics

import (
	"fmt"
	"testing"
)

func benchmarkVerify(b *testing.B, c Config) {
	b.ReportAllocs()
	for b.Loop() {
		r, err := Verify(c)
		if err != nil || !r.Pass {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.N*c.Steps), "rank-steps/op")
}

// BenchmarkVerify times one matrix configuration (reference included).
func BenchmarkVerify(b *testing.B) {
	for _, stage := range []int{1, 3} {
		for _, n := range []int{4, 16} {
			b.Run(fmt.Sprintf("model=tiny-transformer/stage=%d/ranks=%d", stage, n), func(b *testing.B) {
				benchmarkVerify(b, Config{Model: TinyTransformer, N: n, K: 1, Stage: stage, Steps: 5, Seed: 1})
			})
			b.Run(fmt.Sprintf("model=mlp-h16/stage=%d/ranks=%d", stage, n), func(b *testing.B) {
				benchmarkVerify(b, Config{Model: ResidualMLP, Hidden: 16, Layers: 3, N: n, K: 1, Stage: stage, Steps: 5, Seed: 1})
			})
		}
	}
}

// BenchmarkAdamStep is one Adam step over 1<<16 elements.
func BenchmarkAdamStep(b *testing.B) {
	const n = 1 << 16
	p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range g {
		g[i] = float32(i%7) - 3
	}
	b.ReportAllocs()
	step := 0
	for b.Loop() {
		step++
		AdamStep(DefaultHyper, step, p, g, m, v)
	}
	b.ReportMetric(n, "elems/op")
}
