package scenarios

import "testing"

// TestRecomputeFraction checks how training.recompute_fraction reads
// fms-fsdp's selective_checkpointing: a quotient as Python's true division
// forms it (eval("2/3") == 2/3 == 0.6666666666666666), a YAML decimal, and
// the same through --set.
func TestRecomputeFraction(t *testing.T) {
	for _, c := range []struct {
		yaml string
		sets []string
		want float64
	}{
		{"training:\n  recompute: full\n  recompute_fraction: 1/2\n", nil, 0.5},
		{"training:\n  recompute: full\n  recompute_fraction: 0.5\n", nil, 0.5},
		{"training:\n  recompute: full\n  recompute_fraction: \"2/3\"\n", nil, 0.6666666666666666},
		{"training:\n  recompute: full\n", []string{"training.recompute_fraction=1/3"}, 0.3333333333333333},
		{"training:\n  recompute: full\n  recompute_fraction: 1\n", nil, 1},
		{"training:\n  recompute: full\n", nil, 0},
	} {
		s, err := Load("s.yaml", []byte(baseYAML+c.yaml), c.sets)
		if err != nil {
			t.Fatalf("%q %v: %v", c.yaml, c.sets, err)
		}
		if s.Training.RecomputeFractionP != c.want {
			t.Errorf("%q %v: p = %v, want %v", c.yaml, c.sets, s.Training.RecomputeFractionP, c.want)
		}
	}
}
