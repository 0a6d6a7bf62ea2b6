package zero

import (
	"errors"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestStepTooLong: a step whose compute alone outlasts int64 picoseconds
// (13B parameters, 16 GPUs, 4,000 micro-steps of 15,625 4,096-token
// sequences: 6·13e9·2.56e11 FLOPs per GPU, about 2e7 s at 989 TFLOPS,
// past the 9.2e6 s int64 picoseconds hold) is refused before its schedule
// is built, naming the micro-steps and sequences, not the links (QA s28
// M2: plan replayed such steps for 10 minutes, then blamed "the link
// bandwidths and latencies"). The same scenario at 4 micro-steps of 1
// replays.
func TestStepTooLong(t *testing.T) {
	const file = "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {params: 13B, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 1}\n"
	s, err := scenarios.Load("p.yaml", []byte(file), []string{"training.micro_batch=15625", "training.grad_accum=4000"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Replay(s, Options{NoCollectives: true})
	var tl *StepTooLongError
	if !errors.As(err, &tl) {
		t.Fatalf("Replay: %v, want a StepTooLongError", err)
	}
	if tl.GradAccum != 4000 || tl.MicroBatch != 15625 || !strings.Contains(err.Error(), "lower training.grad_accum or training.micro_batch") {
		t.Errorf("error %v (%+v)", err, *tl)
	}
	s, err = scenarios.Load("p.yaml", []byte(file), []string{"training.micro_batch=1", "training.grad_accum=4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(s, Options{NoCollectives: true}); err != nil {
		t.Errorf("4 micro-steps of 1: %v", err)
	}
}
