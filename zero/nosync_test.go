package zero

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestNoSyncCollectives counts, per optimizer step of a = 4 micro-steps,
// each bucket's collectives by phase under training.grad_sync and the
// stack's boundary, on four 100M-parameter layers over 2 GPUs (one bucket
// per layer):
//
//   - reduce-scatters (and the K > 1 all-reduces across the replicas): a
//     per bucket where every micro-step reduces, 1 under no_sync (FSDP1's
//     _post_backward_hook returns before its reduce-scatter when not
//     syncing, FSDP2's post_backward when not reduce_grads); DeepSpeed's
//     stage 3 has no no_sync and reduces a times whatever grad_sync says.
//   - stage 3 gathers: a forward and a backward all-gathers per unit under
//     no_sync too (FULL_SHARD and FSDP2 reshard after every backward).
//   - stage 2 gathers: zerosim's (DeepSpeed's) stage 2 gathers once, after
//     the optimizer; FSDP's gathers in the forward of the step's first
//     micro-step (its pre-forward unshard, memory.FSDPStage2) and again in
//     the forward of every micro-step after a reshard: FSDP1 SHARD_GRAD_OP
//     reshards only after a reducing backward (a gathers when every
//     micro-step reduces, 1 under no_sync), FSDP2 after every backward (a
//     either way).
func TestNoSyncCollectives(t *testing.T) {
	const a = 4
	for _, c := range []struct {
		stage    int
		boundary string
		sync     string
		k        int
		// per bucket: reduce-scatters, inter-replica all-reduces, forward,
		// backward and post-optimizer all-gathers.
		rs, ar, fwdAG, bwdAG, postAG int
	}{
		{3, "reshard", "every", 1, a, 0, a, a, 0},
		{3, "fsdp1", "last", 1, 1, 0, a, a, 0},
		{3, "fsdp2", "last", 1, 1, 0, a, a, 0},
		{3, "reshard", "last", 1, 1, 0, a, a, 0},
		{3, "fsdp1", "last", 2, 0, 1, 0, 0, 0}, // K = N = 2: all-reduce across the replicas only
		{3, "deepspeed", "last", 1, a, 0, a, a, 0},
		{2, "reshard", "every", 1, a, 0, 0, 0, 1},
		{2, "reshard", "last", 1, 1, 0, 0, 0, 1},
		{2, "fsdp1", "every", 1, a, 0, a, 0, 0},
		{2, "fsdp1", "last", 1, 1, 0, 1, 0, 0},
		{2, "fsdp2", "every", 1, a, 0, a, 0, 0},
		{2, "fsdp2", "last", 1, 1, 0, a, 0, 0},
		{2, "fsdp2_head", "last", 1, 1, 0, a, 0, 0},
	} {
		name := fmt.Sprintf("stage %d %s %s k=%d", c.stage, c.boundary, c.sync, c.k)
		t.Run(name, func(t *testing.T) {
			s := fourLayers(t, fmt.Sprintf("parallelism.zero_stage=%d", c.stage), "communication.boundary="+c.boundary,
				"training.grad_sync="+c.sync, fmt.Sprintf("parallelism.k=%d", c.k), fmt.Sprintf("training.grad_accum=%d", a),
				"communication.bucket_size=200MB")
			sc, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Buckets) != 4 {
				t.Fatalf("%d buckets, want one per layer", len(sc.Buckets))
			}
			kept := memory.KeptAcrossBoundary(s)
			count := map[Phase]map[int]int{}
			for _, task := range sc.Tasks {
				if !task.Kind.IsComm() {
					continue
				}
				if count[task.Phase] == nil {
					count[task.Phase] = map[int]int{}
				}
				count[task.Phase][task.Bucket]++
			}
			for _, w := range []struct {
				ph   Phase
				want int
			}{{PhaseBackwardRS, c.rs}, {PhaseInterAR, c.ar}, {PhaseForwardAG, c.fwdAG}, {PhaseBackwardAG, c.bwdAG}, {PhasePostOptAG, c.postAG}} {
				for i := range sc.Buckets {
					want := w.want
					if u := sc.Buckets[i].FirstUnit; w.ph == PhaseBackwardAG && u < len(kept) && kept[u] {
						want = 0 // kept gathered across the boundary (memory.KeptAcrossBoundary)
					}
					if got := count[w.ph][i]; got != want {
						t.Errorf("bucket %d: %d %s tasks per step, want %d", i, got, w.ph, want)
					}
				}
			}
			checkTaskBound(t, s)
		})
	}
}

// TestNoSyncReplayFreesHeldGradients: the replay frees each unit's held
// no_sync gradient with the last micro-step's reduction of it (the unit's
// reduce-scatter at stage 3, its bucket's at stage 2), so when the
// optimizer starts the rank holds only the sharded gradients: 4 × 100M /
// 2 × 2 B = 400,000,000 B at stage 3 (FSDP casts the reduced shard back
// to bf16) and at FSDP's stage 2, which handles gradients as its stage 3
// (memory's shardsPerUnit), nothing beyond the shard at rest at stage 2
// outside FSDP (boundary reshard). Its peak is the
// memory model's: on four equal layers the last micro-step's, and with a
// first layer of 400M parameters the earlier micro-steps', which hold
// every gradient through l0's backward: 7,900,000,000 B
// (memory's TestNoSyncHeldGradients derives it).
func TestNoSyncReplayFreesHeldGradients(t *testing.T) {
	for _, c := range []struct {
		name        string
		l0          int64
		sets        []string
		gradsAtStep int64
		peak        int64 // 0: the memory model's, whatever it is
	}{
		{"stage 3 fsdp1", 100000000, []string{"communication.boundary=fsdp1"}, 400000000, 0},
		{"stage 3 fsdp2 reduce fp32", 100000000, []string{"communication.boundary=fsdp2", "training.reduce_dtype=fp32"}, 400000000, 0},
		{"stage 2 fsdp1", 100000000, []string{"parallelism.zero_stage=2", "communication.boundary=fsdp1"}, 400000000, 0},
		{"stage 2 fsdp2", 100000000, []string{"parallelism.zero_stage=2", "communication.boundary=fsdp2"}, 400000000, 0},
		{"stage 2 reshard", 100000000, []string{"parallelism.zero_stage=2", "communication.boundary=reshard"}, 0, 0},
		{"stage 3 fsdp1 big first layer", 400000000, []string{"communication.boundary=fsdp1"}, 0, 7900000000},
	} {
		t.Run(c.name, func(t *testing.T) {
			yaml := strings.Replace(fourLayerMLP(100000000, 3, "{algorithm: ring, compute_interference: 0}"),
				"l0, params: 100000000", fmt.Sprintf("l0, params: %d", c.l0), 1)
			sets := append([]string{"training.grad_sync=last", "training.grad_accum=4", "communication.bucket_size=200MB"}, c.sets...)
			s, err := scenarios.Load("four-layers.yaml", []byte(yaml), sets)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			want := c.peak
			if want == 0 {
				want = res.MemoryModel.Peak
			}
			if res.Memory.Peak != want || res.MemoryModel.Peak != want {
				t.Errorf("replay peak %d B, memory model %d, want %d", res.Memory.Peak, res.MemoryModel.Peak, want)
			}
			if c.l0 != 100000000 {
				return
			}
			opt := slices.IndexFunc(res.Schedule.Tasks, func(t Task) bool { return t.Kind == Optimizer })
			at := slices.IndexFunc(res.Spans[0], func(sp Span) bool { return sp.Task == int32(opt) })
			if opt < 0 || at < 0 {
				t.Fatal("no optimizer task in rank 0's spans")
			}
			start := res.Spans[0][at].Start
			grads := slices.Index(res.Memory.Components, string(memory.CompGrads))
			level := res.Memory.AtRest[grads]
			for _, p := range res.Memory.Points {
				if p.Component == grads && p.Time <= start { // the last reduce-scatter ends as it starts
					level += p.Delta
				}
			}
			if got := level - res.Memory.AtRest[grads]; got != c.gradsAtStep {
				t.Errorf("the optimizer starts beside %d B of gradients beyond those at rest, want %d", got, c.gradsAtStep)
			}
		})
	}
}
