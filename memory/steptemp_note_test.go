package memory

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestStepTempNoteFollowsTheModel: the optimizer temporaries' note says
// what the model counts (qa19 L6: it read "grad.float()" under an fp32
// shard, where docs/memory-model.md and the model have none): the grad
// copy beside a 16-bit shard, torch._foreach_sqrt of exp_avg_sq under
// foreach, exp_avg_sq.sqrt() and its quotient under Composer's
// tensor-by-tensor step.
func TestStepTempNoteFollowsTheModel(t *testing.T) {
	data, _ := scenarios.Example("default")
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"parallelism.zero_stage=3", "training.shard_dtype=bf16"}, "(grad.float())"},
		{[]string{"parallelism.zero_stage=3", "training.shard_dtype=fp32", "training.optimizer_impl=foreach"}, "torch._foreach_sqrt of exp_avg_sq over the whole shard"},
		{[]string{"parallelism.zero_stage=3", "training.shard_dtype=fp32", "training.optimizer_impl=composer"}, "exp_avg_sq.sqrt() and its quotient"},
	} {
		s, err := scenarios.Load("default.yaml", data, tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{Reserve: ReserveNone})
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Component(CompStepTemp); c.AtTotalPeak == 0 && c.Peak == 0 || !strings.Contains(c.Note, tc.want) {
			t.Errorf("%v: optimizer temporaries %+v, want a note with %q", tc.sets, c, tc.want)
		}
	}
}
