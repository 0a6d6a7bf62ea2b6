package zero

import (
	"fmt"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// layersMLP is four layers of the given parameter counts (l0 first) with
// explicit times (forward 1 ms, backward 2 ms) on the 2 GPUs of one A100
// node (NVLink3, 300 GB/s, 500 ns), ring collectives, overlap on, no
// compute interference, no accumulation.
func layersMLP(t *testing.T, params [4]int64, sets ...string) *scenarios.Scenario {
	t.Helper()
	layers := ""
	for i, p := range params {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, p)
	}
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" + layers +
		"parallelism: {dp: 2, zero_stage: 2}\ncommunication: {algorithm: ring, compute_interference: 0, overlap: true}\n"
	s, err := scenarios.Load("layers.yaml", []byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDeepSpeedHoldsBackwardToOneBucketInFlight: under DeepSpeed's ZeRO-1/2
// with overlap_comm the backward after a bucket's reduction is launched
// waits for the reductions launched before it (average_tensor's
// current_stream().wait_stream(reduction_stream), bucketPace), so it
// stalls by max(0, reduce(b) − the compute between the two launches);
// DDP, Megatron and FSDP let the reductions queue.
//
// Four layers, backward 2 ms each after 4 ms of forward (times below are
// from the forward's start as if it took 4 ms: FSDP's stage-2 gathers in
// the forward delay it, the test shifts by that); R_u is the sum
// of the reduce-scatter closed forms of layer u's buckets over the two
// ranks (0.5 µs + bytes/2 / 300 GB/s each), all launched as l_u's
// backward ends. Held, with 1 G parameters a layer (R ≈ 3.334 ms > 2 ms):
// l3 starts at 4 ms, l2 at 6 (nothing was launched before l3's buckets),
// l1 once l3's reductions, launched at 6, have ended: 6 + R3; l0 once
// l2's have, queued behind them: 6 + R3 + R2. The reductions end where
// they would unheld, 6 + R3 + R2 + R1 + R0: with even layers the stall
// only moves the backward. With l3 large and the others of 1 M
// parameters (R3 ≈ 3.8 ms, the rest µs), the stall shows in the step: l1
// starts at 6 + R3; l0 waits for l2's reductions, which end at
// 6 + R3 + R2, before l1's backward does: 8 + R3; the last reduction ends
// at 10 + R3 + R0, where unheld the backward runs through to 12 ms and the
// reductions queue (e3 = 6 + R3, e2 = max(8, e3) + R2, e1 = max(10, e2) +
// R1, e0 = max(12, e1) + R0). Two buckets a layer, launched together,
// count as one (bucketPace): l1 waits for both of l3's.
func TestDeepSpeedHoldsBackwardToOneBucketInFlight(t *testing.T) {
	ms := units.Millisecond
	const big, small = 1_000_000_000, 1_000_000
	even := [4]int64{big, big, big, big}
	lopsided := [4]int64{small, small, small, big}
	heldEven := func(R [4]units.Duration) ([4]units.Duration, units.Duration) {
		return [4]units.Duration{4 * ms, 6 * ms, 6*ms + R[3], 6*ms + R[3] + R[2]}, 6*ms + R[3] + R[2] + R[1] + R[0]
	}
	heldLopsided := func(R [4]units.Duration) ([4]units.Duration, units.Duration) {
		return [4]units.Duration{4 * ms, 6 * ms, 6*ms + R[3], 8*ms + R[3]}, 10*ms + R[3] + R[0]
	}
	queued := func(R [4]units.Duration) ([4]units.Duration, units.Duration) {
		e := 6*ms + R[3]
		e = max(8*ms, e) + R[2]
		e = max(10*ms, e) + R[1]
		return [4]units.Duration{4 * ms, 6 * ms, 8 * ms, 10 * ms}, max(12*ms, e) + R[0]
	}
	ds := []string{"stack=deepspeed", "communication.overlap=true"}
	for _, c := range []struct {
		name   string
		params [4]int64
		sets   []string
		// want gives l3..l0's backward starts and the last reduction's
		// end from each layer's reduce-scatter time R.
		want func(R [4]units.Duration) ([4]units.Duration, units.Duration)
	}{
		{"deepspeed stage 2, even", even, append(ds, "communication.bucket_size=2GB"), heldEven},
		{"deepspeed stage 1, even", even, append(ds, "parallelism.zero_stage=1", "communication.bucket_size=2GB"), heldEven},
		{"deepspeed stage 2, two buckets a layer", even, append(ds, "communication.bucket_size=1GB"), heldEven},
		{"deepspeed stage 2, lopsided", lopsided, append(ds, "communication.bucket_size=2MB"), heldLopsided},
		{"deepspeed stage 1, lopsided", lopsided, append(ds, "parallelism.zero_stage=1", "communication.bucket_size=2MB"), heldLopsided},
		// boundary deepspeed without the stack is DeepSpeed too
		// (scenarios.Scenario.DeepSpeed), as for no_sync.
		{"boundary deepspeed stage 2, lopsided", lopsided, []string{"communication.boundary=deepspeed", "communication.overlap=true", "communication.bucket_size=2MB"}, heldLopsided},
		// Unheld: the backward runs through, the reductions queue.
		{"no stack, stage 2, lopsided", lopsided, []string{"communication.bucket_size=2MB"}, queued},
		{"megatron stage 1, lopsided", lopsided, []string{"stack=megatron", "parallelism.zero_stage=1", "communication.overlap=true", "communication.bucket_size=2MB"}, queued},
		{"torchtitan (FSDP2) stage 2, lopsided", lopsided, []string{"stack=torchtitan", "communication.bucket_size=2MB"}, queued},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := layersMLP(t, c.params, c.sets...)
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			sc := res.Schedule
			var R, got [4]units.Duration
			var end, fwdEnd units.Duration
			for _, sp := range res.Spans[0] {
				task := &sc.Tasks[sp.Task]
				switch {
				case task.Kind == Forward:
					fwdEnd = max(fwdEnd, sp.End)
				case task.Kind == Backward:
					got[3-task.Unit] = sp.Start
				case task.Phase == PhaseBackwardRS:
					bk := sc.Buckets[task.Bucket]
					if bk.FirstUnit != bk.LastUnit {
						t.Fatalf("bucket %d spans layers %d-%d: the case wants buckets within a layer", task.Bucket, bk.FirstUnit, bk.LastUnit)
					}
					R[bk.FirstUnit] += closedForm(t, s, res, task)
					end = max(end, sp.End)
				}
			}
			// Times from the forward's end, 4 ms without gathers: FSDP's
			// stage 2 gathers in the forward (memory.FSDPStage2), which
			// the large layer's gather delays.
			shift := fwdEnd - 4*ms
			for i := range got {
				got[i] -= shift
			}
			end -= shift
			starts, wantEnd := c.want(R)
			if got != starts || end != wantEnd {
				t.Errorf("backward starts l3..l0 %v, last reduction ends %v; want %v, %v (R %v)", got, end, starts, wantEnd, R)
			}
		})
	}
}

// TestDeepSpeedHoldGatesTheNextComputeTask: the wait falls on the first
// compute-stream task after a unit's launches, which in an expert layer
// under expert parallelism is the all-to-all after its backward, not the
// next unit's backward (the compute stream runs the all-to-all first). In
// Mixtral-8x7B's schedule under DeepSpeed's ZeRO-2 with ep 8, every
// compute-stream task that follows a backward which launched reductions
// waits for every reduction the previous such backward launched.
func TestDeepSpeedHoldGatesTheNextComputeTask(t *testing.T) {
	doc := "version: 1\nstack: deepspeed\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\n" +
		"parallelism: {dp: 64, zero_stage: 2, ep: 8}\ntraining: {grad_accum: 2}\ncommunication: {overlap: true}\n"
	s, err := scenarios.Load("mixtral.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	// launched[bw] lists the reductions launched after backward task bw.
	launched := map[int32][]int32{}
	for i, task := range sc.Tasks {
		if task.Phase != PhaseBackwardRS && task.Phase != PhaseBackwardAR {
			continue
		}
		for _, d := range task.After {
			if sc.Tasks[d].Kind == Backward {
				launched[d] = append(launched[d], int32(i))
			}
		}
	}
	var prev []int32 // the reductions the previous launching backward launched
	gatedA2A := 0
	compute := sc.Order[Compute]
	for k, t0 := range compute {
		ts, ok := launched[t0]
		if !ok {
			continue
		}
		if prev != nil && sc.Tasks[prev[0]].Micro != sc.Tasks[t0].Micro {
			prev = nil // a micro-step starts once the last one's reductions have ended
		}
		if prev != nil && k+1 < len(compute) {
			next := compute[k+1]
			for _, w := range prev {
				if !slices.Contains(sc.Tasks[next].After, w) {
					t.Fatalf("task %d (%v of unit %d) follows backward %d's launches and does not wait for reduction %d of the launches before", next, sc.Tasks[next].Kind, sc.Tasks[next].Unit, t0, w)
				}
			}
			if sc.Tasks[next].Kind == AllToAll {
				gatedA2A++
			}
		}
		prev = ts
	}
	if gatedA2A == 0 {
		t.Fatal("no all-to-all was gated: the case does not exercise an expert layer's backward")
	}
}
