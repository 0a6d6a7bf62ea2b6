package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestNoMasterStateBytes holds training.master_dtype none to its bytes,
// derived by hand on two bf16 units of 600 and 400 parameters over N = 2
// (P = 1000, the rank's shard R = 300 + 200 = 500, no padding): the
// parameters, gradients and both Adam moments in bf16 (2 B) and no master
// copy, against mixed precision's fp32 master and moments (4 B each). The
// optimizer's temporaries follow the implementation in bf16: fused none,
// foreach the whole shard (torch._foreach_sqrt), and so an unset one
// (torch.optim.AdamW's default on CUDA), composer two of the largest unit's
// share (600 at stage 0, 300 at stage 3).
func TestNoMasterStateBytes(t *testing.T) {
	const yaml = `version: 1
cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}
model:
  kind: generic
  layer_list: [{name: a, params: 600}, {name: b, params: 400}]
parallelism: {dp: 2, zero_stage: 0}
training: {micro_batch: 1}
memory: {activations: false}
`
	for _, c := range []struct {
		stage                         int
		master                        string
		impl                          string
		params, grads, mst, m, v, tmp int64
	}{
		// Stage 0: everything whole. Mixed precision: bf16 params and
		// grads, fp32 master, m, v; the unset implementation's
		// grad.float() copy of the 1000 gradients (4000 B).
		{0, "fp32", "", 2000, 2000, 4000, 4000, 4000, 4000},
		{0, "none", "", 2000, 2000, 0, 2000, 2000, 1000 * 2},
		{0, "none", "fused", 2000, 2000, 0, 2000, 2000, 0},
		{0, "none", "foreach", 2000, 2000, 0, 2000, 2000, 1000 * 2},
		{0, "none", "composer", 2000, 2000, 0, 2000, 2000, 2 * 600 * 2},
		// Stage 3: the rank's 500-element shard; gradients freed at rest.
		{3, "fp32", "fused", 1000, 0, 2000, 2000, 2000, 500 * 4},
		{3, "none", "fused", 1000, 0, 0, 1000, 1000, 0},
		{3, "none", "foreach", 1000, 0, 0, 1000, 1000, 500 * 2},
		{3, "none", "", 1000, 0, 0, 1000, 1000, 500 * 2},
		{3, "none", "composer", 1000, 0, 0, 1000, 1000, 2 * 300 * 2},
	} {
		sets := []string{"parallelism.zero_stage=" + itoa(c.stage), "training.master_dtype=" + c.master}
		if c.impl != "" {
			sets = append(sets, "training.optimizer_impl="+c.impl)
		}
		s, err := scenarios.Load("s.yaml", []byte(yaml), sets)
		if err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		checkStateBytes(t, fmt.Sprintf("stage %d, master_dtype %s, optimizer_impl %q", c.stage, c.master, c.impl), r,
			stateBytes{c.params, c.grads, c.mst, c.m, c.v, c.tmp})
	}
}

// TestNoMasterReduceFP32Stage2 holds FSDP's stage 2 under master_dtype none
// to its stage 3 (shardsPerUnit), derived by hand on the same two bf16
// units (P = 1000, N = 2, R = 500; a = 600, b = 400 elements): no
// gradient at rest and no staging buckets; in backward unit b makes its
// bf16 gradient, 400 × 2 = 800 B, and its reduce-scatter, in flight beside
// a's backward as at stage 3, makes a 200 × 2 = 400 B shard (FSDP casts
// an fp32-reduced shard back to bf16) before b's gradient goes: a's 600 ×
// 2 = 1,200 B gradient peaks the gradients at 800 + 400 + 1,200 = 2,400
// B. Under reduce_dtype fp32 each unit's bf16 gradient is first copied
// into an fp32 reduce-scatter input (a: 600 × 4 = 2,400 B, the grad
// buckets' peak) and freed, so the gradients peak at b's shard and a's
// gradient, 400 + 1,200 = 1,600 B. Megatron's fp32 main_grad (master fp32, boundary reshard; the default
// bucket_size holds the whole model, one bucket of 1000, one staging bucket
// in flight) keeps its fp32 shard and buckets at rest: 500 × 4 and 1000 ×
// 4 B.
func TestNoMasterReduceFP32Stage2(t *testing.T) {
	const yaml = `version: 1
cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}
model:
  kind: generic
  layer_list: [{name: a, params: 600}, {name: b, params: 400}]
parallelism: {dp: 2, zero_stage: 2}
training: {micro_batch: 1}
memory: {activations: false}
`
	for _, c := range []struct {
		sets                   []string
		grads, buckets         int64 // at rest
		gradsPeak, bucketsPeak int64
		reduceElemBytes        int64
	}{
		{[]string{"training.master_dtype=none", "communication.boundary=fsdp2"}, 0, 0, 800 + 400 + 1200, 0, 2},
		{[]string{"training.master_dtype=none", "communication.boundary=fsdp2", "training.reduce_dtype=fp32"}, 0, 0, 400 + 1200, 600 * 4, 4},
		{[]string{"training.master_dtype=none", "communication.boundary=fsdp1", "training.reduce_dtype=fp32"}, 0, 0, 400 + 1200, 600 * 4, 4},
		{[]string{"training.reduce_dtype=fp32"}, 500 * 4, 1000 * 4, 500 * 4, 1000 * 4, 4},
	} {
		s, err := scenarios.Load("s.yaml", []byte(yaml), c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		r := mustAnalyze(t, s, Options{})
		if got := r.Component(CompGrads).AtRest; got != c.grads {
			t.Errorf("%v: grads %d B at rest, want %d", c.sets, got, c.grads)
		}
		if got := r.Component(CompGradBuckets).AtRest; got != c.buckets {
			t.Errorf("%v: grad buckets %d B at rest, want %d", c.sets, got, c.buckets)
		}
		if got := r.Component(CompGrads).Peak; got != c.gradsPeak {
			t.Errorf("%v: grads' peak %d B, want %d", c.sets, got, c.gradsPeak)
		}
		if got := r.Component(CompGradBuckets).Peak; got != c.bucketsPeak {
			t.Errorf("%v: grad buckets' peak %d B, want %d", c.sets, got, c.bucketsPeak)
		}
		if got := r.Groups[0].ReduceBytes; got != c.reduceElemBytes {
			t.Errorf("%v: reduced in %d B per element, want %d", c.sets, got, c.reduceElemBytes)
		}
	}
}

// stateBytes is a rank's optimizer-side bytes by hand: the parameters,
// gradients, master copy and Adam moments at rest, and the optimizer's
// temporaries at their peak.
type stateBytes struct{ params, grads, master, m, v, stepTemp int64 }

// checkStateBytes reports each of r's components that differs from want,
// the message led by what (the case).
func checkStateBytes(t *testing.T, what string, r *Report, want stateBytes) {
	t.Helper()
	for _, x := range []struct {
		comp      Comp
		got, want int64
	}{
		{CompParams, r.Component(CompParams).AtRest, want.params},
		{CompGrads, r.Component(CompGrads).AtRest, want.grads},
		{CompMaster, r.Component(CompMaster).AtRest, want.master},
		{CompAdamM, r.Component(CompAdamM).AtRest, want.m},
		{CompAdamV, r.Component(CompAdamV).AtRest, want.v},
		{CompStepTemp, r.Component(CompStepTemp).Peak, want.stepTemp},
	} {
		if x.got != x.want {
			t.Errorf("%s: %s %d B, want %d", what, x.comp, x.got, x.want)
		}
	}
}
