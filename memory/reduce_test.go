package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// modelStates is the at-rest sum of a report's model-state rows.
func modelStates(r *Report) int64 {
	var n int64
	for _, c := range []Comp{CompParams, CompGrads, CompMaster, CompAdamM, CompAdamV, CompPadding} {
		n += r.Component(c).AtRest
	}
	return n
}

// TestReduceDTypeMegatron: with training.reduce_dtype fp32 (Megatron-LM's
// default with bf16, grad_reduce_in_fp32) zerosim's bf16 model states at
// rest are 2 B param + 4 B fp32 grad buffer per parameter + 12 B per
// parameter of the rank's optimizer shard: Megatron's rule of thumb
// (Estimate with EstimatorMegatron: 18, and 6 + 12/DP with the distributed
// optimizer) to the byte when the toy padding adds nothing, and exactly
// the padding's 6 B per padded element (plus the shard's rounding) above
// it when it does. The fp32 gradient is the buffer the optimizer reads,
// so the step has no fp32 copy. Without the key zerosim's buffer is bf16:
// 2 B per parameter less.
func TestReduceDTypeMegatron(t *testing.T) {
	for _, c := range []struct {
		params      int64
		dp, stage   int
		hand        int64 // 2·Z + 4·Z + 12·S (Z padded buffer, S shard)
		megatron    int64 // 6·P + ⌈12·P/DP⌉, or 18·P at stage 0
		fp32GradBuf int64 // 4·P
	}{
		{64_000, 8, 1, 2*64_000 + 4*64_000 + 12*8_000, 6*64_000 + 12*64_000/8, 4 * 64_000},
		{6_400_000, 64, 1, 2*6_400_000 + 4*6_400_000 + 12*100_000, 6*6_400_000 + 12*6_400_000/64, 4 * 6_400_000},
		{64_000, 8, 0, 18 * 64_000, 18 * 64_000, 4 * 64_000},
		// 1,001 parameters on 8 ranks: padded to Z = 1,008, S = 126;
		// Megatron's ⌈12·1001/8⌉ = 1,502.
		{1_001, 8, 1, 6*1_008 + 12*126, 6*1_001 + 1_502, 4 * 1_001},
	} {
		mk := func(fp32 bool) *scenarios.Scenario {
			s := bigModel(c.params, c.dp, 1, c.dp, c.stage)
			if fp32 {
				s.Training.ReduceDType = scenarios.ReduceFP32
			}
			return s
		}
		r := mustAnalyze(t, mk(true), Options{})
		if got := modelStates(r); got != c.hand {
			t.Errorf("P=%d DP=%d stage %d: model states at rest %d, want the hand count %d", c.params, c.dp, c.stage, got, c.hand)
		}
		if got := r.Component(CompGrads).AtRest; got != c.fp32GradBuf {
			t.Errorf("P=%d stage %d: grad buffer %d, want 4·P = %d", c.params, c.stage, got, c.fp32GradBuf)
		}
		if got := r.Component(CompStepTemp).Peak; got != 0 {
			t.Errorf("P=%d stage %d: optimizer temporaries %d, want 0 (the fp32 buffer is the grad)", c.params, c.stage, got)
		}
		meg, err := Estimate(mk(true), EstimatorMegatron, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if meg.AtRest != c.megatron {
			t.Errorf("P=%d DP=%d stage %d: Megatron's estimate %d, want %d", c.params, c.dp, c.stage, meg.AtRest, c.megatron)
		}
		if c.hand == c.megatron && modelStates(r) != meg.AtRest {
			t.Errorf("P=%d DP=%d stage %d: zerosim %d, Megatron %d: want equal without padding", c.params, c.dp, c.stage, modelStates(r), meg.AtRest)
		}
		def := mustAnalyze(t, mk(false), Options{})
		z := r.Groups[0].Size
		if d := modelStates(r) - modelStates(def); d != 2*z {
			t.Errorf("P=%d stage %d: fp32 grad buffer adds %d B, want 2·Z = %d", c.params, c.stage, d, 2*z)
		}
		if r.Groups[0].ReduceBytes != 4 || def.Groups[0].ReduceBytes != 2 || len(r.Groups[0].Layout.Buckets) != len(def.Groups[0].Layout.Buckets) {
			t.Errorf("P=%d stage %d: reduce bytes %d/%d, buckets %d/%d: want 4/2 and the same buckets",
				c.params, c.stage, r.Groups[0].ReduceBytes, def.Groups[0].ReduceBytes, len(r.Groups[0].Layout.Buckets), len(def.Groups[0].Layout.Buckets))
		}
	}
}

// TestReduceDTypeFSDP2Peak: at stage 3 with training.reduce_dtype fp32
// (FSDP2's MixedPrecisionPolicy reduce_dtype) each unit's bf16 gradients
// are copied into an fp32 reduce-scatter input, which lives while the unit
// is reduced. Units a 8,000, b 64,000, c 8,000 on 8 ranks, fp32 shards
// (shard_dtype fp32), prefetch 1, no activations, FSDP2 (boundary fsdp2:
// post_backward reshards the unit, then issues its reduce-scatter, and the
// next unit's backward runs beside it, memory.ReduceScatterLags): at rest
// 12 B × 10,000; the peak is at b's copy-in, as a's backward begins: a
// gathered (prefetched, 2 × 8,000; b released before its reduce-scatter),
// c's fp32 gradient shard (4 × 1,000; c's reduce-scatter ended before a's
// backward), b's bf16 gradients (2 × 64,000) and its fp32 reduce-scatter
// input (4 × 64,000): 524,000 B. Without the key the peak is in b's
// backward, beside c's reduce-scatter in flight: b and a gathered (2 ×
// 72,000), c's bf16 gradients (2 × 8,000) and fp32 shard (4 × 1,000), b's
// gradients (2 × 64,000): 120,000 + 144,000 + 16,000 + 4,000 + 128,000 =
// 412,000 B.
func TestReduceDTypeFSDP2Peak(t *testing.T) {
	layers := []scenarios.Layer{{Name: "a", Params: 8000, Group: "dense"}, {Name: "b", Params: 64000, Group: "dense"}, {Name: "c", Params: 8000, Group: "dense"}}
	for _, c := range []struct {
		reduce scenarios.ReduceDType
		peak   int64
		input  int64 // b's reduce-scatter input
	}{
		{"", 120_000 + 144_000 + 16_000 + 4_000 + 128_000, 0},
		{scenarios.ReduceParamDType, 120_000 + 144_000 + 16_000 + 4_000 + 128_000, 0},
		{scenarios.ReduceFP32, 120_000 + 16_000 + 4_000 + 128_000 + 256_000, 4 * 64_000},
	} {
		s := bigModel(80_000, 8, 1, 8, 3)
		s.Model.LayerList = layers
		s.Communication.Boundary = scenarios.BoundaryFSDP2
		s.Training.ShardDType = scenarios.ShardFP32
		s.Training.ReduceDType = c.reduce
		r := mustAnalyze(t, s, Options{})
		if r.AtRest != 120_000 {
			t.Fatalf("%q: at rest %d, want 120,000 (the test's premise)", c.reduce, r.AtRest)
		}
		if r.Peak != c.peak || r.PeakPhase != PhaseBackward || r.PeakUnit != 1 {
			t.Errorf("%q: peak %d in %s unit %d, want %d in backward unit 1", c.reduce, r.Peak, r.PeakPhase, r.PeakUnit, c.peak)
		}
		if got := r.Units[1].ReduceInput; got != c.input {
			t.Errorf("%q: unit b's reduce-scatter input %d, want %d", c.reduce, got, c.input)
		}
		if got := r.Component(CompGradBuckets).Peak; got != c.input {
			t.Errorf("%q: grad buckets peak %d, want %d", c.reduce, got, c.input)
		}
		if got := r.Units[1].Grad; got != 2*64_000 {
			t.Errorf("%q: unit b's autograd gradient %d, want bf16 %d", c.reduce, got, 2*64_000)
		}
		if got, want := r.BucketBytes(0)[1], 64_000*max(c.input/64_000, 2); got != want {
			t.Errorf("%q: unit b's reduce-scatter message %d B, want %d", c.reduce, got, want)
		}
	}
}

// TestReduceDTypeStage2: at stage 2 the gradient shard and the staging
// buckets are the reduction's buffers, fp32 under training.reduce_dtype
// fp32, and the buckets keep their parameters: 64,000 parameters on 8
// ranks with bucket_size 32,000 B (16,000 bf16 gradients a bucket, 4
// buckets either way): the shard 4 × 8,000 B (bf16: 2 × 8,000), two
// staging buckets 2 × 16,000 × 4 B (bf16: × 2), and no fp32 grad copy at
// the step (bf16: 4 × 8,000).
func TestReduceDTypeStage2(t *testing.T) {
	for _, c := range []struct {
		reduce                    scenarios.ReduceDType
		grads, buckets, temp, nbk int64
	}{
		{"", 2 * 8_000, 2 * 16_000 * 2, 4 * 8_000, 4},
		{scenarios.ReduceFP32, 4 * 8_000, 2 * 16_000 * 4, 0, 4},
	} {
		s := bigModel(64_000, 8, 1, 8, 2)
		s.Communication.BucketSize = 32_000
		s.Training.ReduceDType = c.reduce
		r := mustAnalyze(t, s, Options{})
		got := [4]int64{r.Component(CompGrads).AtRest, r.Component(CompGradBuckets).AtRest, r.Component(CompStepTemp).Peak, int64(len(r.Groups[0].Layout.Buckets))}
		if want := [4]int64{c.grads, c.buckets, c.temp, c.nbk}; got != want {
			t.Errorf("%q: grad shard, staging buckets, optimizer temporaries, buckets %v, want %v", c.reduce, got, want)
		}
	}
}
