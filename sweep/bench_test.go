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

// BenchmarkPlan70B512 plans Llama 2 70B on 64 nodes × 8 H100 (512 GPUs,
// global batch 2,048 sequences: micro-batch 1, 2 or 4) over every stage, K
// dividing 512, checkpointing policy, bucket size, prefetch depth and
// algorithm (auto, ring and hierarchical, plan's default before auto alone):
// ≥ 1,000 candidates, target under 10 s on 2 cores.
func BenchmarkPlan70B512(b *testing.B) {
	// The global batch as a flag: a --set of training.micro_batch would pin it.
	src := exampleSource(b, "default", "model.preset=llama2-70b", "cluster.nodes=64", "parallelism.dp=512")
	var p *Plan
	for b.Loop() {
		var err error
		if p, err = PlanSearch(context.Background(), src, PlanOptions{Jobs: 2, GlobalBatch: 2048, Algorithms: []string{"auto", "ring", "hierarchical"}}); err != nil {
			b.Fatal(err)
		}
	}
	if p.Searched < 1000 {
		b.Fatalf("%d candidates, want ≥ 1,000", p.Searched)
	}
	b.ReportMetric(float64(p.Searched), "candidates")
	b.ReportMetric(float64(p.Replayed), "replays")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/plan")
}
