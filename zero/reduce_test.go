package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
)

// TestReduceDTypeBytes: with training.reduce_dtype fp32 every gradient
// reduction moves 4 bytes per element instead of 2 and nothing else moves
// differently. Seed 002's 260 parameters on 2 GPUs: the stage 1–3
// reduce-scatters carry 4 × 260 = 1,040 B (seed 002's table: 520 in bf16)
// and the stage 0 all-reduce twice that, the all-gathers keep their 520 B; on
// the wire one rank of two sends half. Seed 000's K = 4 example: the
// inter-group all-reduce of the gradient shards doubles with them, 0.75·S
// per rank over the slow link where S is now the fp32 buffer.
func TestReduceDTypeBytes(t *testing.T) {
	want := map[int]map[Phase]int64{
		0: {PhaseBackwardAR: 2 * 1040}, // an all-reduce counts 2·S (reduce-scatter + all-gather)
		1: {PhaseBackwardRS: 1040, PhasePostOptAG: 520},
		2: {PhaseBackwardRS: 1040, PhasePostOptAG: 520},
		3: {PhaseForwardAG: 520, PhaseBackwardAG: 520, PhaseBackwardRS: 1040},
	}
	for stage := 0; stage <= 3; stage++ {
		s := tiny(stage, 2, 1)
		s.Training.ReduceDType = scenarios.ReduceFP32
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[Phase]int64{}
		for _, p := range res.Phases {
			got[p.Phase] = p.Logical
			if p.Sent != p.Logical/2 || p.Wire[topology.Intra] != p.Logical {
				t.Errorf("stage %d %s: sent %d, intra wire %d; want %d, %d", stage, p.Phase, p.Sent, p.Wire[topology.Intra], p.Logical/2, p.Logical)
			}
		}
		if len(got) != len(want[stage]) {
			t.Errorf("stage %d: phases %v, want %v", stage, got, want[stage])
		}
		for ph, b := range want[stage] {
			if got[ph] != b {
				t.Errorf("stage %d %s: %d B, want %d", stage, ph, got[ph], b)
			}
		}
	}
	for _, k := range []int{1, 4} {
		def := mlp(1, k, 256, 4)
		fp32 := mlp(1, k, 256, 4)
		fp32.Training.ReduceDType = scenarios.ReduceFP32
		a, err := Replay(def, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Replay(fp32, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if S, S2 := a.Schedule.GradBytes(), b.Schedule.GradBytes(); S2 != 2*S || len(b.Schedule.Buckets) != len(a.Schedule.Buckets) {
			t.Errorf("K=%d: gradient buffers %d B in %d buckets, want 2 × %d in %d", k, S2, len(b.Schedule.Buckets), S, len(a.Schedule.Buckets))
		}
		for _, ph := range []Phase{PhaseBackwardRS, PhaseInterAR, PhasePostOptAG} {
			pa, pb := phaseWire(a, ph), phaseWire(b, ph)
			f := int64(2)
			if ph == PhasePostOptAG {
				f = 1
			}
			if pb.Logical != f*pa.Logical || pb.Wire[topology.Inter] != f*pa.Wire[topology.Inter] {
				t.Errorf("K=%d %s: %d B (%d over the network), want %d × %d (%d)", k, ph, pb.Logical, pb.Wire[topology.Inter], f, pa.Logical, pa.Wire[topology.Inter])
			}
		}
		if k == 4 {
			S := b.Schedule.GradBytes()
			if w := phaseWire(b, PhaseInterAR).MaxRankWire[topology.Inter]; w != 3*S/4 {
				t.Errorf("K=4 inter all-reduce: %d B per rank, want 0.75·S = %d (S = %d, fp32)", w, 3*S/4, S)
			}
		}
		if b.StepTime <= a.StepTime {
			t.Errorf("K=%d: fp32 reductions step %v not slower than bf16 %v on a 25 GB/s network", k, b.StepTime, a.StepTime)
		}
	}
}

// TestReduceDTypeOptimizerBytes: at stages 0–2 the fp32 grad buffer is the
// optimizer's grad, so seed 000's count loses the cast's 2 + 4 (30 B) and
// a set implementation beside a 16-bit shard keeps only the copy back,
// 4 + 2, of the master's 16 B; at stage 3 and FSDP's stage 2 (the
// gradient shard is in the shard's dtype: memory.FSDPStage2, 36 B, or the
// master's 16 B beside a 16-bit shard, 28 + 16) and with fp32 params
// nothing changes.
func TestReduceDTypeOptimizerBytes(t *testing.T) {
	for _, c := range []struct {
		impl     scenarios.OptimizerImpl
		param    scenarios.DType
		shard    scenarios.DType
		stage    int
		boundary scenarios.Boundary
		want     int64
	}{
		{"", scenarios.BF16, "", 1, "", 30},
		{"", scenarios.BF16, "", 0, "", 30},
		{scenarios.OptimizerFused, scenarios.BF16, "", 2, "", 28 + 6},
		{"", scenarios.BF16, "", 2, scenarios.BoundaryReshard, 30},
		{"", scenarios.BF16, "", 2, scenarios.BoundaryFSDP1, 36},
		{"", scenarios.BF16, "", 2, scenarios.BoundaryFSDP2, 36},
		{scenarios.OptimizerFused, scenarios.BF16, "", 2, scenarios.BoundaryFSDP2, 28 + 16},
		{scenarios.OptimizerFused, scenarios.BF16, scenarios.ShardFP32, 2, scenarios.BoundaryFSDP2, 28},
		{"", scenarios.BF16, "", 3, "", 36},
		{scenarios.OptimizerFused, scenarios.BF16, scenarios.ShardFP32, 3, "", 28},
		{"", scenarios.FP32, "", 1, "", 36},
	} {
		s := scenarios.Scenario{Training: scenarios.Training{OptimizerImpl: c.impl, ParamDType: c.param, ShardDType: c.shard, ReduceDType: scenarios.ReduceFP32}}
		s.Parallelism.Stage = c.stage
		s.Communication.Boundary = c.boundary
		if got := OptimizerBytesPerElem(&s); got != c.want {
			t.Errorf("%q, %s params, shard %q, stage %d, boundary %q: %d B, want %d", c.impl, c.param, c.shard, c.stage, c.boundary, got, c.want)
		}
	}
}

// TestReduceDTypeReplayMemory: in the replay of seed 002's model at stage 3
// on 2 GPUs with reduce_dtype fp32, each unit's fp32 reduce-scatter input
// (the "grad buckets" row) is allocated when the unit's reduce-scatter
// starts and freed when it ends: it peaks at the FFN unit's 4 × 148 =
// 592 B, and ends the step at 0.
func TestReduceDTypeReplayMemory(t *testing.T) {
	s := tiny(3, 2, 1)
	s.Training.ReduceDType = scenarios.ReduceFP32
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := res.Memory
	ci := -1
	for i, n := range tl.Components {
		if n == "grad buckets" {
			ci = i
		}
	}
	if ci < 0 {
		t.Fatal("no grad buckets row")
	}
	cur, peak, allocs := tl.AtRest[ci], int64(0), 0
	for _, p := range tl.Points {
		if p.Component != ci {
			continue
		}
		cur += p.Delta
		peak = max(peak, cur)
		if p.Delta > 0 {
			allocs++
		}
	}
	if peak != 4*148 || cur != 0 || allocs != 5 {
		t.Errorf("fp32 reduce-scatter inputs: peak %d, end %d, %d allocations; want 592, 0, 5 (one per unit)", peak, cur, allocs)
	}
}
