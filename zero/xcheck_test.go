package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/numerics"
)

// The bytes each numeric collective of numerics.Verify moved (one group
// instance, seed accounting) equal the replay's per-rank logical bytes for
// the same toy scenario, phase by phase: one layout code path
// (memory.BufferLayouts / memory.NewLayout) serves both.
func TestNumericsBytesMatchReplay(t *testing.T) {
	phaseOf := map[[3]string]Phase{
		{"forward", "all-gather", "intra"}:      PhaseForwardAG,
		{"backward", "all-gather", "intra"}:     PhaseBackwardAG,
		{"backward", "reduce-scatter", "intra"}: PhaseBackwardRS,
		{"backward", "all-reduce", "world"}:     PhaseBackwardAR,
		{"backward", "all-reduce", "inter"}:     PhaseInterAR,
		{"post-optim", "all-gather", "intra"}:   PhasePostOptAG,
	}
	for _, tc := range []struct{ n, k, stage int }{
		{2, 1, 0}, {2, 1, 1}, {2, 1, 2}, {2, 1, 3}, {2, 2, 1},
		{8, 1, 1}, {8, 4, 1}, {8, 4, 2}, {8, 2, 3}, {8, 8, 3},
	} {
		t.Run(fmt.Sprintf("n%d/k%d/stage%d", tc.n, tc.k, tc.stage), func(t *testing.T) {
			s := example(t, "seed002-tiny", fmt.Sprintf("cluster.gpus_per_node=%d", tc.n), fmt.Sprintf("parallelism.dp=%d", tc.n),
				fmt.Sprintf("parallelism.k=%d", tc.k), fmt.Sprintf("parallelism.zero_stage=%d", tc.stage), "communication.bucket_size=1GiB")
			res, err := Replay(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			nr, err := numerics.Verify(numerics.Config{Model: numerics.TinyTransformer, N: tc.n, K: tc.k, Stage: tc.stage, Steps: 1, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !nr.Pass {
				t.Fatalf("numerics failed: %+v", nr.First)
			}
			got := map[Phase]int64{}
			for _, c := range nr.CollectiveBytes {
				ph, ok := phaseOf[[3]string{c.Phase, c.Op, c.Group}]
				if !ok {
					t.Fatalf("numerics collective %+v has no replay phase", c)
				}
				got[ph] += c.Bytes
			}
			want := map[Phase]int64{}
			for _, p := range res.Phases {
				want[p.Phase] = p.Logical
			}
			if len(got) != len(want) {
				t.Errorf("numerics phases %v, replay %v", got, want)
			}
			for ph, b := range want {
				if got[ph] != b {
					t.Errorf("%s: numerics moved %d B, replay reports %d B", ph, got[ph], b)
				}
			}
		})
	}
}
