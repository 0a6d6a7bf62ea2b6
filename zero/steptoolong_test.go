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

// TestCheckStepTooLong: Check refuses what Replay refuses before it builds
// the schedule, so that a scenario that validates also runs. Two units of
// explicit times, 1,000,000 s forward and 2,000,000 s backward each: one
// micro-step computes 6,000,000 s, within the 9,223,372 s int64
// picoseconds hold; two compute 12,000,000 s, past it. validate passed
// the second (and 4,096 micro-steps of it), which run refused.
func TestCheckStepTooLong(t *testing.T) {
	const file = "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  layer_list:\n  - {name: a, params: 1000, fwd: 1000000s, bwd: 2000000s}\n  - {name: b, params: 1000, fwd: 1000000s, bwd: 2000000s}\nparallelism: {dp: 2, zero_stage: 1}\n"
	for _, c := range []struct {
		ga      string
		refused bool
	}{{"1", false}, {"2", true}, {"4096", true}} {
		s, err := scenarios.Load("long.yaml", []byte(file), []string{"training.grad_accum=" + c.ga})
		if err != nil {
			t.Fatal(err)
		}
		var tl *StepTooLongError
		if err := Check(s); errors.As(err, &tl) != c.refused || !c.refused && err != nil {
			t.Errorf("grad_accum %s: Check: %v, want a StepTooLongError %t", c.ga, err, c.refused)
		}
		if _, err := Replay(s, Options{NoCollectives: true}); errors.As(err, &tl) != c.refused || !c.refused && err != nil {
			t.Errorf("grad_accum %s: Replay: %v, want a StepTooLongError %t", c.ga, err, c.refused)
		}
	}
}

// TestStepTooLongFix (qauser32 L9): the fix names only what can be
// lowered: with one micro-step of one sequence, the sequence or the model,
// not grad_accum and micro_batch, both already 1.
func TestStepTooLongFix(t *testing.T) {
	for _, c := range []struct {
		ga, mb int64
		want   string
	}{
		{4000, 15625, "(lower training.grad_accum or training.micro_batch)"},
		{1, 8, "(lower training.micro_batch)"},
		{8, 1, "(lower training.grad_accum)"},
		{1, 1, "(one sequence alone runs that long: lower model.seq_len or the model's size)"},
	} {
		err := &StepTooLongError{GradAccum: c.ga, MicroBatch: c.mb}
		if !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%d × %d: %v, want it to end %q", c.ga, c.mb, err, c.want)
		}
	}
}
