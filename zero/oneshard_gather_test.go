package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestNoGatherOverOneShard: Mixtral-8x7B on one node of 8 GPUs at stage 2
// with ep = 8 leaves each expert bucket's shard group one rank (N/K/ep =
// 8/1/8): the rank holds its expert whole and nothing is gathered for it,
// neither in the first forward's gathers nor in FSDP's regathers
// (grad_accum 2 under boundary fsdp1 regathers in micro-step 1), while the
// dense buckets, sharded over N/K = 8 ranks, are gathered in both.
func TestNoGatherOverOneShard(t *testing.T) {
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\n" +
		"parallelism: {dp: 8, zero_stage: 2, ep: 8}\n"
	s, err := scenarios.Load("mixtral.yaml", []byte(doc), []string{"communication.boundary=fsdp1", "training.grad_accum=2"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	dense := map[Phase]int{}
	fwd := map[int]int{} // micro-step → forward all-gathers
	for _, task := range sc.Tasks {
		if task.Kind != AllGather {
			continue
		}
		if task.Group == GroupEDP {
			t.Errorf("%v of bucket %d over a one-rank expert shard group", task.Phase, task.Bucket)
		}
		dense[task.Phase]++
		if task.Phase == PhaseForwardAG {
			fwd[task.Micro]++
		}
	}
	// FSDP's stage 2 gathers in the forward (memory.FSDPStage2): the
	// step's first micro-step, and micro-step 1 after the reshard.
	if dense[PhasePostOptAG] != 0 || fwd[0] == 0 || fwd[1] == 0 {
		t.Errorf("dense all-gathers by phase %v, forward ones by micro-step %v: want forward ones in micro-steps 0 and 1, none after the optimizer", dense, fwd)
	}
}
