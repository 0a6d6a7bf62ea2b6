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
// l0's own) to its backward compute's end (memory.FSDPStage2). Four bf16 MLP layers of 10M, 20M, 30M and 40M
// parameters on 4 GPUs, the rank's shard 25M: at rest, by hand, the shard
// 50 MB, the gradient shard 50 MB, the fp32 master 100 MB, Adam's m and v
// 200 MB, two 20M-element bf16 staging buckets 80 MB: 480,000,000 B; the
// last forward holds every unit, 480M + 100M·2 = 680,000,000 B (the
// memory package's TestFSDPStage2ParamLifetime walks the same figures).
// Each gathered unit is 2 B per parameter: 20, 40, 60, 80 MB.
func TestFSDPStage2ReplayParamLifetime(t *testing.T) {
	layers := ""
	for i := range 4 {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, (i+1)*10_000_000)
	}
	for _, c := range []struct {
		boundary string
		sets     []string
		peak     int64
		heldFrom int // the unit whose forward start allocates every gathered unit (-1: each its own)
	}{
		{"fsdp1", nil, 680_000_000, -1},
		{"fsdp2", nil, 680_000_000, -1},
		// Under no_sync the unsharded gradients (100M·2) are held too;
		// FSDP1 kept every unit gathered from the micro-step before.
		{"fsdp1", []string{"training.grad_accum=2", "training.grad_sync=last"}, 880_000_000, 0},
		{"fsdp2", []string{"training.grad_accum=2", "training.grad_sync=last"}, 880_000_000, -1},
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
			if rest != 480_000_000 || res.Memory.Peak != c.peak || res.MemoryModel.Peak != c.peak {
				t.Errorf("replay at rest %d B, peak %d (memory model %d); want 480000000, %d", rest, res.Memory.Peak, res.MemoryModel.Peak, c.peak)
			}
			// When each unit's compute starts and ends on rank 0, in the
			// last micro-step (the one the timeline follows).
			start, end := map[int]units.Duration{}, map[int]units.Duration{}
			for _, sp := range res.Spans[0] {
				tk := res.Schedule.Tasks[sp.Task]
				if tk.Micro != res.Schedule.Micro-1 {
					continue
				}
				switch tk.Kind {
				case Forward:
					start[tk.Unit] = sp.Start
				case Backward:
					end[tk.Unit] = sp.End
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
