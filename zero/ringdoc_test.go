package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/units"
)

// TestRingDocFigures holds the steps docs/compute-model.md quotes for the
// context-parallel ring under a degraded link and beside ZeRO's
// collectives (cp 2, dp 8, placement [dp, cp] on the default example).
func TestRingDocFigures(t *testing.T) {
	cp := []string{"parallelism.cp=2", "parallelism.dp=8", "cluster.placement=[dp,cp]"}
	run := func(sets ...string) *Result {
		t.Helper()
		res, err := Replay(example(t, "default", append(append([]string(nil), cp...), sets...)...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sec := func(d units.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
	slow := run("cluster.link_overrides=[{node: 1, gpu: 2, class: inter, bandwidth: 1GB/s}]")
	var ring4, other units.Duration
	for _, st := range slow.Ranks {
		switch st.Rank {
		case 4:
			ring4 = st.Compute
		case 0:
			other = st.Alone
		}
	}
	beside := run("cluster.inter.bandwidth=2GB/s", "communication.algorithm=ring")
	auto := run("cluster.inter.bandwidth=2GB/s")
	hier := run("cluster.inter.bandwidth=2GB/s", "communication.algorithm=hierarchical")
	nvlink := run("cluster.placement=[cp,dp]", "cluster.intra.bandwidth=20GB/s", "communication.algorithm=ring")
	half := run("cluster.inter.bandwidth=2GB/s", "communication.algorithm=ring", "cluster.gpu_overrides=[{rank: 3, speed: 0.5}]")
	nominal := run()
	golden.CheckQuotes(t, "../docs/compute-model.md", "zero.Replay of the default example with "+fmt.Sprint(cp),
		"ranks 4 and 5 compute "+sec(ring4)+", the others "+fmt.Sprintf("%.1f ms", float64(other)/1e9)+" as without it, step "+sec(slow.StepTime),
		"takes "+sec(beside.StepTime)+" where the busiest NIC's",
		"`auto` "+sec(auto.StepTime)+" against", "`hierarchical` "+sec(hier.StepTime)+" against",
		"with `ring` "+sec(nvlink.StepTime)+" against",
		"rank 3 at speed 0.5: compute "+sec(half.Ranks[3].Alone)+" alone,",
		fmt.Sprintf("take 150 ms of a %.0f ms step", float64(nominal.StepTime)/1e9))
}
