package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/units"
)

// TestDefaultComputeByHand holds the compute of the default example's step
// (Llama 2 7B, s 4,096, selective recompute, 16 H100-80GB, ZeRO-1) to
// byhand.Default, worked from docs/compute-model.md's rules and the
// presets' published figures. It holds every unit's forward and backward,
// and the rank's compute at full speed (RankStats.Alone: the "356.506ms at
// full speed" of `zerosim run`'s step line). What the step adds to that (overlap interference, the
// exposed reduce-scatter tail and the ZeRO-1 all-gather under NCCL's cost
// model) is not derived here; the step's figure itself is held as real
// output by the README's console block (TestREADMEExamples).
func TestDefaultComputeByHand(t *testing.T) {
	c := byhand.Default()
	ps := func(sec float64) units.Duration { return units.Duration(math.Round(sec * 1e12)) }
	want := map[string][2]float64{"block.0": {c.BlockFwd, c.BlockBwd}, "block.31": {c.BlockFwd, c.BlockBwd}, "lm_head": {c.HeadFwd, c.HeadBwd},
		"final_norm": {c.NormFwd, c.NormBwd}, "embedding": {c.EmbFwd, c.EmbBwd}}
	s := example(t, "default")
	costs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, lc := range costs {
		w, ok := want[lc.Name]
		if !ok {
			continue
		}
		delete(want, lc.Name)
		for i, got := range []units.Duration{lc.Fwd, lc.Bwd} {
			if d := got - ps(w[i]); d < -1 || d > 1 {
				t.Errorf("%s %s: %v, by hand %v (%d ps apart)", lc.Name, []string{"forward", "backward"}[i], got, ps(w[i]), d)
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("units missing from Costs: %v", want)
	}
	full := c.FullSpeed(true)
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// At most a picosecond of rounding per task: 2·35 units and the step.
	if got, d := res.Ranks[0].Alone, res.Ranks[0].Alone-ps(full); d < -71 || d > 71 {
		t.Errorf("rank 0's compute at full speed %v, by hand %v (%d ps apart)", got, ps(full), d)
	}
	golden.CheckQuotes(t, "../README.md", "TestDefaultComputeByHand (the default example's compute worked by hand)",
		"; "+ps(full).String()+" at full speed)")
}
