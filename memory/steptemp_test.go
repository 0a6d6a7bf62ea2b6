package memory

import (
	"slices"
	"testing"
)

// foreach AdamW's step temporaries reach the allocator one tensor per
// tensor the optimizer steps (torch._foreach_sqrt's empty_like per list
// entry): FSDP2's per-parameter dim-0 shards, FSDP1's (use_orig_params)
// slices of the rank's flat shard; fused and one-at-a-time steps, and a
// total that is not whole lists, stay one request.
func TestStepTemps(t *testing.T) {
	// Unit a: a 10×6 matrix and a 7-vector; unit b: a 5-vector and a
	// 12×5 matrix; 4 ranks, fp32 moments.
	a := simUnit{n: 4, state: 4, ps: []unitParam{{numel: 60, dim0: 10}, {numel: 7, dim0: 7}}}
	b := simUnit{n: 4, state: 4, ps: []unitParam{{numel: 5, dim0: 5}, {numel: 60, dim0: 12}}}
	// FSDP2: ⌈dim0/4⌉ rows of each parameter.
	fsdp2A := []int64{3 * 6 * 4, 2 * 1 * 4}
	fsdp2B := []int64{2 * 1 * 4, 3 * 5 * 4}
	// FSDP1: rank 0's first ⌈67/4⌉ = 17 and ⌈65/4⌉ = 17 elements of each
	// flat parameter, cut at the parameters' boundaries.
	fsdp1A := []int64{17 * 4}
	fsdp1B := []int64{5 * 4, 12 * 4}
	sum := func(xs ...[]int64) (n int64) {
		for _, x := range xs {
			for _, v := range x {
				n += v
			}
		}
		return n
	}
	for _, c := range []struct {
		name  string
		impl  string
		fsdp2 bool
		units []simUnit
		delta int64
		want  []int64
	}{
		{"fsdp2 one list", "foreach", true, []simUnit{a, b}, sum(fsdp2A, fsdp2B), slices.Concat(fsdp2A, fsdp2B)},
		{"fsdp2 two lists", "foreach", true, []simUnit{a, b}, 2 * sum(fsdp2A, fsdp2B), slices.Concat(fsdp2A, fsdp2B, fsdp2A, fsdp2B)},
		{"fsdp1 views", "foreach", false, []simUnit{a, b}, sum(fsdp1A, fsdp1B), slices.Concat(fsdp1A, fsdp1B)},
		{"not whole lists", "foreach", true, []simUnit{a, b}, sum(fsdp2A, fsdp2B) + 4, []int64{sum(fsdp2A, fsdp2B) + 4}},
		{"fused", "fused", true, []simUnit{a, b}, sum(fsdp2A, fsdp2B), []int64{sum(fsdp2A, fsdp2B)}},
		{"one at a time", "composer", false, []simUnit{a, b}, 2 * 17 * 4, []int64{2 * 17 * 4}},
	} {
		st := &simState{s: loadFSDP(t, "training.optimizer_impl="+c.impl), fsdp2: c.fsdp2}
		if got := st.stepTemps(c.units, c.delta); !slices.Equal(got, c.want) {
			t.Errorf("%s: stepTemps(%d) = %v, want %v", c.name, c.delta, got, c.want)
		}
	}
}
