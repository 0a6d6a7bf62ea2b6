package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestReduceScatterLags: the units of gradient sync each stack lets pend
// beside a ZeRO-3 backward. DeepSpeed's host blocks when more than
// max_param_reduce_events = 2 reductions of reduce_bucket_size elements
// are outstanding (stage3.py at edaa7221267243c7be7fb49c5d5f5c4fb97b4641): three buckets' elements in
// flight, which here are 3 × 40 MB / 2 B = 60,000,000 bf16 elements (three
// units of 20,000,000 or of 19,999,999 fit in them, a fourth would not:
// DeepSpeed has reduced all of it but the buckets in flight; fewer toward
// the end of the backward, where fewer units are left; a unit of 70,000,000
// fits alone in none, and one stays pending all the same) or
// 3 × 2 MB / 4 B = 1,500,000 fp32 elements, less than one unit: one. FSDP2's post_backward waits for
// the previous reduce-scatter: one. FSDP1 sets none (nil), and without
// overlap nothing pends (zeros).
func TestReduceScatterLags(t *testing.T) {
	mk := func(params []int, boundary scenarios.Boundary, bucket units.Bytes, dtype scenarios.DType, overlap bool, stage int) *scenarios.Scenario {
		var layers []scenarios.Layer
		for i, p := range params {
			layers = append(layers, scenarios.Layer{Name: string(rune('a' + i)), Params: units.Count(p), Group: "dense"})
		}
		return &scenarios.Scenario{
			Parallelism:   scenarios.Parallelism{DP: 8, Stage: stage},
			Model:         scenarios.Model{LayerList: layers},
			Training:      scenarios.Training{ParamDType: dtype},
			Communication: scenarios.Communication{Boundary: boundary, BucketSize: bucket, Overlap: &overlap},
		}
	}
	const mb = units.Bytes(1_000_000)
	six := []int{20_000_000, 20_000_000, 20_000_000, 20_000_000, 20_000_000, 20_000_000}
	short := []int{19_999_999, 19_999_999, 19_999_999, 19_999_999, 19_999_999, 19_999_999}
	for _, c := range []struct {
		name string
		s    *scenarios.Scenario
		want []int
	}{
		{"DeepSpeed, 40 MB bf16: three units of 20 M hold 60 M", mk(six, scenarios.BoundaryDeepSpeed, 40*mb, scenarios.BF16, true, 3), []int{3, 3, 3, 2, 1, 1}},
		{"DeepSpeed, 40 MB bf16: three of 19,999,999 fit, four do not", mk(short, scenarios.BoundaryDeepSpeed, 40*mb, scenarios.BF16, true, 3), []int{3, 3, 3, 2, 1, 1}},
		// 20,000,001 each: two fit (40,000,002), three do not (60,000,003).
		{"DeepSpeed, 40 MB bf16: two of 20,000,001 fit", mk([]int{20_000_001, 20_000_001, 20_000_001, 20_000_001, 20_000_001, 20_000_001}, scenarios.BoundaryDeepSpeed, 40*mb, scenarios.BF16, true, 3), []int{2, 2, 2, 2, 1, 1}},
		// An MoE's alternation (QA30 M1, gpt-oss-120b): an expert unit of
		// 3,186,155,520 then a small attention unit of 26,924,672 (
		// the first alone over 60 M, the second under it): one pending
		// everywhere, not the attention unit and the expert unit after it
		// (two, 3.2e9 elements) as the fewest units holding 60 M had it.
		{"DeepSpeed, MoE alternation", mk([]int{3_186_155_520, 26_924_672, 3_186_155_520, 26_924_672, 3_186_155_520}, scenarios.BoundaryDeepSpeed, 40*mb, scenarios.BF16, true, 3), []int{1, 1, 1, 1, 1}},
		{"reshard takes DeepSpeed's", mk(six, scenarios.BoundaryReshard, 40*mb, scenarios.BF16, true, 3), []int{3, 3, 3, 2, 1, 1}},
		// 70 M after a unit of 10 M holds three buckets alone; the four
		// units of 10 M after it hold only 40 M.
		{"DeepSpeed, 40 MB bf16, uneven units", mk([]int{10_000_000, 70_000_000, 10_000_000, 10_000_000, 10_000_000, 10_000_000}, scenarios.BoundaryDeepSpeed, 40*mb, scenarios.BF16, true, 3), []int{1, 4, 3, 2, 1, 1}},
		{"DeepSpeed, 2 MB fp32: 1.5 M elements, one unit", mk(six, scenarios.BoundaryDeepSpeed, 2*mb, scenarios.FP32, true, 3), []int{1, 1, 1, 1, 1, 1}},
		{"FSDP2", mk(six, scenarios.BoundaryFSDP2, 40*mb, scenarios.BF16, true, 3), []int{1, 1, 1, 1, 1, 1}},
		{"FSDP2 as torchtitan applies it from 2026", mk(six, scenarios.BoundaryFSDP2Head, 40*mb, scenarios.BF16, true, 3), []int{1, 1, 1, 1, 1, 1}},
		{"FSDP1: unbounded", mk(six, scenarios.BoundaryFSDP1, 40*mb, scenarios.BF16, true, 3), nil},
		{"no overlap", mk(six, scenarios.BoundaryDeepSpeed, 40*mb, scenarios.BF16, false, 3), []int{0, 0, 0, 0, 0, 0}},
		{"stage 2", mk(six, scenarios.BoundaryReshard, 40*mb, scenarios.BF16, true, 2), nil},
	} {
		if got := ReduceScatterLags(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: lags %v, want %v", c.name, got, c.want)
		}
	}
}
