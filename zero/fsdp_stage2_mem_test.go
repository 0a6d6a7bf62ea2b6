package zero

import (
	"fmt"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestFSDPStage2ReplayParamLifetime: the replay of FSDP's ZeRO-2 holds
// the parameter shard at rest and each unit's unsharded parameters from
// the start of the forward compute one unit before it (prefetch_depth 1;
// l0's own) to its backward compute's end (memory.FSDPStage2), and its
// gradients as its stage 3 does: none at rest, the sharded ones alive when
// the optimizer starts. Four bf16 MLP layers of 10M, 20M, 30M and 40M
// parameters on 4 GPUs, the rank's shard 25M: at rest, by hand, the shard
// 50 MB, the fp32 master 100 MB, Adam's m and v 200 MB: 350,000,000 B; the
// last forward holds every unit, 350M + 100M·2 = 550 MB, and unit 3's
// backward adds its 40M·2 B gradient, 630,000,000 B, the peak (the memory
// package's TestFSDPStage2ParamLifetime walks the same figures). Each
// gathered unit is 2 B per parameter: 20, 40, 60, 80 MB. The optimizer
// starts beside the four bf16 gradient shards, 25M·2 = 50,000,000 B.
// Under training.shard_dtype fp32 and reduce_dtype fp32 (torchtitan's
// mixed precision) the shard is fp32 and the master goes: 100 + 200 =
// 300,000,000 B at rest; unit 3's reduce-scatter, issued as its backward
// ends, once its unsharded parameters are freed, holds its fp32 input
// (40M·4 B) and fp32 shard (10M·4 B) beside unit 2's backward and its
// bf16 gradient (30M·2 B): the step's peak, 300 + 120 (units 0–2
// gathered) + 160 + 40 + 60 = 680,000,000 B; the optimizer starts beside
// the fp32 gradient shards, 25M·4 = 100,000,000 B.
func TestFSDPStage2ReplayParamLifetime(t *testing.T) {
	layers := ""
	for i := range 4 {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, (i+1)*10_000_000)
	}
	for _, c := range []struct {
		boundary     string
		sets         []string
		atRest, peak int64
		heldFrom     int   // the unit whose forward start allocates every gathered unit (-1: each its own)
		gradsAtStep  int64 // the gradients when the optimizer starts
		shardElem    int64 // the gradient shard's bytes per element (0: not checked)
	}{
		{"fsdp1", nil, 350_000_000, 630_000_000, -1, 50_000_000, 2},
		{"fsdp2", nil, 350_000_000, 630_000_000, -1, 50_000_000, 2},
		// Under no_sync the unsharded gradients (100M·2) are held too;
		// FSDP1 kept every unit gathered from the micro-step before.
		{"fsdp1", []string{"training.grad_accum=2", "training.grad_sync=last"}, 350_000_000, 830_000_000, 0, 50_000_000, 0},
		{"fsdp2", []string{"training.grad_accum=2", "training.grad_sync=last"}, 350_000_000, 830_000_000, -1, 50_000_000, 0},
		{"fsdp2", []string{"training.shard_dtype=fp32", "training.reduce_dtype=fp32"}, 300_000_000, 680_000_000, -1, 100_000_000, 4},
	} {
		t.Run(fmt.Sprint(c.boundary, c.sets), func(t *testing.T) {
			yaml := "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: A100-80GB}\n" +
				"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" + layers +
				"parallelism: {dp: 4, zero_stage: 2}\ncommunication: {boundary: " + c.boundary + ", bucket_size: 40MB, algorithm: ring, compute_interference: 0}\n"
			s, err := scenarios.Load("fsdp-stage2.yaml", []byte(yaml), c.sets)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			var rest int64
			for _, v := range res.Memory.AtRest {
				rest += v
			}
			if rest != c.atRest || res.Memory.Peak != c.peak || res.MemoryModel.Peak != c.peak {
				t.Errorf("replay at rest %d B, peak %d (memory model %d); want %d, %d", rest, res.Memory.Peak, res.MemoryModel.Peak, c.atRest, c.peak)
			}
			// When each unit's compute starts and ends on rank 0, in the
			// last micro-step (the one the timeline follows).
			start, end := map[int]units.Duration{}, map[int]units.Duration{}
			bwdStart := map[int]units.Duration{}
			var optStart units.Duration = -1
			for _, sp := range res.Spans[0] {
				tk := res.Schedule.Tasks[sp.Task]
				if tk.Kind == Optimizer {
					optStart = sp.Start
				}
				if tk.Micro != res.Schedule.Micro-1 {
					continue
				}
				switch tk.Kind {
				case Forward:
					start[tk.Unit] = sp.Start
				case Backward:
					bwdStart[tk.Unit], end[tk.Unit] = sp.Start, sp.End
				}
			}
			gr := slices.Index(res.Memory.Components, string(memory.CompGrads))
			grads := res.Memory.AtRest[gr]
			for _, p := range res.Memory.Points {
				if p.Component == gr && p.Time <= optStart { // the last reduce-scatter ends as it starts
					grads += p.Delta
				}
			}
			if res.Memory.AtRest[gr] != 0 || grads != c.gradsAtStep {
				t.Errorf("gradients %d B at rest, %d B as the optimizer starts; want 0, %d", res.Memory.AtRest[gr], grads, c.gradsAtStep)
			}
			if c.shardElem > 0 {
				// Each unit's bf16 gradient (u+1)·10M·2 B from its backward
				// compute's start, its shard (u+1)·10M/4 elements from the
				// post-backward, as that compute ends.
				var gradAllocs, want []string
				for _, p := range res.Memory.Points {
					if p.Component == gr && p.Delta > 0 {
						gradAllocs = append(gradAllocs, fmt.Sprintf("%d@%v", p.Delta, p.Time))
					}
				}
				for u := 3; u >= 0; u-- {
					n := int64(u+1) * 10_000_000
					want = append(want, fmt.Sprintf("%d@%v", n*2, bwdStart[u]), fmt.Sprintf("%d@%v", n/4*c.shardElem, end[u]))
				}
				if fmt.Sprint(gradAllocs) != fmt.Sprint(want) {
					t.Errorf("gradients allocated %v, want %v", gradAllocs, want)
				}
			}
			gi := slices.Index(res.Memory.Components, string(memory.CompGathered))
			var allocs, frees []string
			for _, p := range res.Memory.Points {
				if p.Component != gi {
					continue
				}
				if p.Delta > 0 {
					allocs = append(allocs, fmt.Sprintf("%d@%v", p.Delta, p.Time))
				} else {
					frees = append(frees, fmt.Sprintf("%d@%v", p.Delta, p.Time))
				}
			}
			var wantAllocs, wantFrees []string
			if c.heldFrom >= 0 {
				wantAllocs = []string{fmt.Sprintf("%d@%v", 200_000_000, start[c.heldFrom])}
			}
			for u := range 4 {
				b := int64(u+1) * 20_000_000
				if c.heldFrom < 0 {
					wantAllocs = append(wantAllocs, fmt.Sprintf("%d@%v", b, start[max(u-1, 0)]))
				}
			}
			for u := 3; u >= 0; u-- {
				wantFrees = append(wantFrees, fmt.Sprintf("%d@%v", -int64(u+1)*20_000_000, end[u]))
			}
			if fmt.Sprint(allocs) != fmt.Sprint(wantAllocs) || fmt.Sprint(frees) != fmt.Sprint(wantFrees) {
				t.Errorf("gathered params allocated %v, freed %v; want %v, %v", allocs, frees, wantAllocs, wantFrees)
			}
		})
	}
}
