package zero

import (
	"fmt"
	"slices"
	"testing"
)

// TestRegatherWaitsForThePreviousBackward holds where FSDP's stage-2
// regathers sit in the step, not only how many there are
// (TestNoSyncCollectives): four layers of 100M bf16 parameters over 2 GPUs,
// one bucket per layer, a = 4 micro-steps.
//
//   - A forward all-gather of micro-step m ≥ 1 moves the whole bucket,
//     100M × 2 B = 200,000,000 B, and waits for micro-step m−1's backward
//     to end (its last, unit 0's): FSDP issues it from the next forward's
//     pre-hook, after the reshard in the post-backward
//     (_should_free_in_backward, _runtime_utils.py at 00ae0bc9).
//   - Unit u's forward in that micro-step waits for bucket u's
//     all-gather of the same micro-step.
//   - Micro-step 0's forward all-gathers (the step's first gathers, in
//     each unit's pre-forward: memory.FSDPStage2) move the same
//     200,000,000 B and wait for nothing; there are no post-optimizer
//     all-gathers (overlap_param_gather off changes nothing for FSDP).
func TestRegatherWaitsForThePreviousBackward(t *testing.T) {
	const a, bucketBytes = 4, 100000000 * 2
	for _, c := range []struct {
		boundary, sync string
		regathered     []int // the micro-steps whose forward gathers again
	}{
		{"fsdp1", "every", []int{0, 1, 2, 3}},
		{"fsdp2", "last", []int{0, 1, 2, 3}},
		{"fsdp1", "last", []int{0}}, // SHARD_GRAD_OP under no_sync keeps the parameters
	} {
		t.Run(c.boundary+" "+c.sync, func(t *testing.T) {
			s := fourLayers(t, "parallelism.zero_stage=2", "communication.boundary="+c.boundary,
				"training.grad_sync="+c.sync, fmt.Sprintf("training.grad_accum=%d", a),
				"communication.bucket_size=200MB", "communication.overlap_param_gather=false")
			sc, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			fwdAG := map[[2]int]int32{} // (micro-step, bucket) → task
			var micros []int
			for i, task := range sc.Tasks {
				switch task.Phase {
				case PhaseForwardAG:
					fwdAG[[2]int{task.Micro, task.Bucket}] = int32(i)
					if !slices.Contains(micros, task.Micro) {
						micros = append(micros, task.Micro)
					}
					if task.Bytes != bucketBytes {
						t.Errorf("micro-step %d bucket %d: forward all-gather of %d B, want %d", task.Micro, task.Bucket, task.Bytes, bucketBytes)
					}
					if task.Micro == 0 && len(task.After) > 0 {
						t.Errorf("bucket %d: micro-step 0's forward all-gather waits for %v, want nothing", task.Bucket, task.After)
					}
					if task.Micro > 0 && !slices.ContainsFunc(task.After, func(p int32) bool {
						q := sc.Tasks[p]
						return q.Kind == Backward && q.Unit == 0 && q.Micro == task.Micro-1
					}) {
						t.Errorf("micro-step %d bucket %d: forward all-gather does not wait for micro-step %d's last backward (after %v)", task.Micro, task.Bucket, task.Micro-1, task.After)
					}
				case PhasePostOptAG:
					t.Errorf("bucket %d: a post-optimizer all-gather (FSDP gathers in the forward)", task.Bucket)
				}
			}
			slices.Sort(micros)
			if !slices.Equal(micros, c.regathered) {
				t.Errorf("forward all-gathers in micro-steps %v, want %v", micros, c.regathered)
			}
			for _, task := range sc.Tasks {
				if task.Kind != Forward || !slices.Contains(c.regathered, task.Micro) {
					continue
				}
				bk := -1
				for i, b := range sc.Buckets {
					if b.FirstUnit <= task.Unit && task.Unit <= b.LastUnit {
						bk = i
					}
				}
				ag, ok := fwdAG[[2]int{task.Micro, bk}]
				if !ok || !slices.Contains(task.After, ag) {
					t.Errorf("micro-step %d: unit %d's forward does not wait for bucket %d's all-gather of its micro-step (after %v)", task.Micro, task.Unit, bk, task.After)
				}
			}
		})
	}
}
