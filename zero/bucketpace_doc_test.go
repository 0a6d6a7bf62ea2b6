package zero

import (
	"fmt"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestDeepSpeedBucketPaceDocFigures holds docs/compute-model.md's figures
// for DeepSpeed's one bucket of reductions in flight: `zerosim run
// llama2-13b-a100-eth --set stack=deepspeed --set parallelism.zero_stage=2
// --set communication.overlap=true`, replayed with the wait (bucketPaced)
// and without it (the same resolved scenario with its stack cleared and
// the default boundary: at stage 2 the replay reads them only for
// bucketPaced, no_sync and Megatron's rules):
// the step time of each and the end of the first micro-step's backward.
func TestDeepSpeedBucketPaceDocFigures(t *testing.T) {
	sets := []string{"stack=deepspeed", "parallelism.zero_stage=2", "communication.overlap=true"}
	run := func(paced bool) (step, firstBackward units.Duration) {
		s := example(t, "llama2-13b-a100-eth", sets...)
		if !paced {
			// Not DeepSpeed (scenarios.Scenario.DeepSpeed): at stage 2
			// the boundary matters to nothing else here.
			s.Stack, s.Communication.Boundary = "", scenarios.BoundaryReshard
		}
		res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The first micro-step's backward ends with unit 0's.
		i := slices.IndexFunc(res.Schedule.Tasks, func(task Task) bool { return task.Kind == Backward && task.Unit == 0 })
		for _, sp := range res.Spans[0] {
			if int(sp.Task) == i {
				firstBackward = sp.End
			}
		}
		return res.StepTime, firstBackward
	}
	paced, pacedBwd := run(true)
	queued, queuedBwd := run(false)
	sec := func(d units.Duration) string { return fmt.Sprintf("%.3f s", float64(d)/1e12) }
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestDeepSpeedBucketPaceDocFigures (zerosim run llama2-13b-a100-eth --set stack=deepspeed --set parallelism.zero_stage=2 --set communication.overlap=true, with and without the wait)",
		fmt.Sprintf("takes %s with the wait and without it, its first backward ending at %s instead of %s;", sec(paced), sec(pacedBwd), sec(queuedBwd)))
	if paced != queued {
		t.Errorf("step %s with the wait, %s without: the document says they are the same with even buckets", sec(paced), sec(queued))
	}
}
