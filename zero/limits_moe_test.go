package zero

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestTaskBoundMoE holds countTasks' bound above the schedule's tasks for
// Mixtral-8x7B (32 MoE layers), ep 8 on nodes of 4, grad_accum 4, under
// each dispatcher: a deduplicating one lowers every dispatch and combine
// to two all-to-alls (ep-rail, ep-node), and the bound must count both or
// checkSize admits replays past the limits (deepep, stage 1, full
// recompute: 2799 tasks against a bound of 2038 that counted one).
func TestTaskBoundMoE(t *testing.T) {
	for _, c := range []struct {
		dispatcher, recompute string
		stage                 int
	}{
		{"deepep", "full", 1},
		{"deepep", "none", 3},
		{"hybridep", "selective", 2},
		{"alltoall", "full", 1},
		{"alltoall", "none", 3},
	} {
		t.Run(c.dispatcher+" "+c.recompute+" stage "+itoa(c.stage), func(t *testing.T) {
			s := mixtralOn(t, 4, c.stage, 8)
			s.Communication.MoEDispatcher = scenariosDispatcher(c.dispatcher)
			s.Training.Recompute = scenarios.Recompute(c.recompute)
			s.Training.GradAccum = 4
			checkTaskBound(t, s)
		})
	}
}

// checkTaskBound fails when s's schedule has more tasks than countTasks'
// bound, which checkSize trusts to refuse a replay before building it.
func checkTaskBound(t *testing.T, s *scenarios.Scenario) {
	t.Helper()
	mrep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	n, bound := int64(len(sc.Tasks)), countTasks(s, mrep.Groups).bound()
	if n > bound {
		t.Errorf("%d tasks, more than the bound %d", n, bound)
	}
	t.Logf("%d tasks, bound %d", n, bound)
}
