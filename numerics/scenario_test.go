package numerics

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

func loadExample(t *testing.T, name string, sets ...string) *scenarios.Scenario {
	t.Helper()
	in, err := scenarios.ReadInput(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := in.Load(sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScenarioConfigs: verify's mapping of a scenario onto the toy runs.
func TestScenarioConfigs(t *testing.T) {
	s := loadExample(t, "seed002-tiny")
	base, cfgs, err := ScenarioConfigs(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if base.Model != TinyTransformer || base.N != s.N() || base.K != 1 {
		t.Errorf("base %+v", base)
	}
	if len(cfgs) != len(Matrix(base)) {
		t.Errorf("%d configurations, want the matrix's %d", len(cfgs), len(Matrix(base)))
	}
	c := &Corruption{Rank: 1, Index: 5, Step: 7}
	s.Parallelism.Stage, s.Parallelism.K = 2, 2
	_, one, err := ScenarioConfigs(s, c)
	if err != nil || len(one) != 1 || one[0].Stage != 2 || one[0].K != 2 || one[0].Steps != 7 || one[0].Corrupt != c {
		t.Errorf("corrupted run %+v, %v", one, err)
	}
	big := loadExample(t, "seed002-tiny", "parallelism.dp=4096", "cluster.nodes=2048")
	if _, err := FromScenario(big); err == nil || !strings.Contains(err.Error(), "N = dp·cp = 4096") {
		t.Errorf("N = 4096: %v", err)
	}
}
