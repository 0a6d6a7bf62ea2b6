package sweep

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// BenchmarkSweep runs the acceptance sweep (1,728 points of seed 002's tiny
// model) with jobs workers and reports points/s.
func BenchmarkSweep(b *testing.B) {
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			src := tinySource(b)
			sp := space(b, acceptanceGrids...)
			ev := &Evaluator{Src: src, Space: sp}
			b.ReportAllocs()
			for b.Loop() {
				enc := NewEncoder(io.Discard, CSV, sp.Keys())
				if err := Run(context.Background(), RunConfig{Indices: All.Indices(sp.Len(), nil), Jobs: jobs, Eval: ev.Eval, Emit: enc.Write}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sp.Len())*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
