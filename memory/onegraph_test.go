package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOneGraphGrads holds training.compile model on one GPU to its bytes,
// derived by hand on two units of 600 and 400 parameters (P = 1000): the
// gradient buffer at rest is P × its dtype (bf16: 2000 B; fp32 under
// reduce_dtype fp32: 4000 B), and on a micro-step after the first
// (grad_accum > 1: the timeline's last micro-step) the compiled backward
// returns every new gradient at once, P × the parameters' dtype more
// (bf16: 2000 B, fp32: 4000 B), before AccumulateGrad adds them in. On the
// first micro-step (grad_accum 1) .grad is None and the new gradients
// become it: no second set, and no buffer at rest either (one process,
// no wrapper: stage0GradsFreed). compile blocks never holds one.
// twoUnitsOneGPU is a generic model of two units, a (600 parameters) and b
// (400), in bf16 without a master copy, at zero_stage 0 on one GPU, with
// no activations: only the gradients and the states change with a test's
// --set.
const twoUnitsOneGPU = `version: 1
cluster: {nodes: 1, gpus_per_node: 1, gpu: H200}
model:
  kind: generic
  layer_list: [{name: a, params: 600}, {name: b, params: 400}]
parallelism: {dp: 1, zero_stage: 0}
training: {micro_batch: 1, master_dtype: none, reduce_dtype: param_dtype}
memory: {activations: false}
`

func TestOneGraphGrads(t *testing.T) {
	for _, c := range []struct {
		sets       []string
		rest, peak int64
	}{
		{[]string{"training.compile=model", "training.grad_accum=4"}, 2000, 2000 + 1000*2},
		{[]string{"training.compile=model", "training.grad_accum=2"}, 2000, 2000 + 1000*2},
		// grad_accum 1: no gradient at rest (stage0GradsFreed); the
		// new gradients become .grad as the graph makes them.
		{[]string{"training.compile=model", "training.grad_accum=1"}, 0, 2000},
		{[]string{"training.compile=blocks", "training.grad_accum=4"}, 2000, 2000},
		{[]string{"training.grad_accum=4"}, 2000, 2000},
		// fp32 parameters: 4 B gradients, new and kept.
		{[]string{"training.compile=model", "training.grad_accum=4", "training.param_dtype=fp32", "training.master_dtype=fp32"}, 4000, 4000 + 1000*4},
		// bf16 parameters with an fp32 gradient buffer: the new
		// gradients are the parameters' dtype, 2 B each.
		{[]string{"training.compile=model", "training.grad_accum=4", "training.master_dtype=fp32", "training.reduce_dtype=fp32"}, 4000, 4000 + 1000*2},
	} {
		s, err := scenarios.Load("s.yaml", []byte(twoUnitsOneGPU), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		g := r.Component(CompGrads)
		if g.AtRest != c.rest || g.Peak != c.peak {
			t.Errorf("%v: grads at rest %d B, peak %d B; want %d, %d", c.sets, g.AtRest, g.Peak, c.rest, c.peak)
		}
		// The second set is gone when the step ends: the walk returns
		// to the at-rest state.
		var sum int64
		for _, e := range r.Timeline() {
			if e.Component == CompGrads {
				sum += e.Delta
			}
		}
		if sum != 0 {
			t.Errorf("%v: the step's gradient events sum to %d B, want 0", c.sets, sum)
		}
	}
}
