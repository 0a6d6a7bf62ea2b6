package scenarios

import (
	"strings"
	"testing"
)

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

// TestRecomputeFractionPython: ParseRecomputeFraction takes what fms-fsdp's
// eval(p) reads as a number, and refuses Go's other forms Python's eval
// does not: eval("0x1p-1") and eval("01/2") are SyntaxErrors, eval("Inf")
// a NameError (Go's strconv read them as 0.5, 0.5 and +Inf).
func TestRecomputeFractionPython(t *testing.T) {
	for v, want := range map[string]float64{"1/2": 0.5, "+1/2": 0.5, " 1 / 4 ": 0.25, ".5": 0.5, "05e-1": 0.5, "00.5": 0.5, "1": 1, "1e-3": 0.001, "0/1": -1,
		"0x1p-1": -1, "0X.8P0": -1, "01/2": -1, "1/02": -1, "01": -1, "Inf": -1, "0.5_0": -1, "1_0/20": -1, "0x1/2": -1} {
		p, err := ParseRecomputeFraction(v)
		switch {
		case want < 0 && err == nil:
			t.Errorf("%q: %v, want it refused", v, p)
		case want >= 0 && (err != nil || p != want):
			t.Errorf("%q: %v (%v), want %v", v, p, err, want)
		}
	}
}

// TestRecomputePlacementWarnings (final read LOW-1, LOW-2): a fraction or
// an every-N-th under recompute: none is warned of, as op_force_recompute
// under another policy is, and so is one that checkpoints none of the
// model's blocks (gpt3-125m has 12: fms-fsdp wraps block b once b·p ≥ 1/2,
// so 1/25 wraps none and 1/24 block 12; every 13th wraps none).
func TestRecomputePlacementWarnings(t *testing.T) {
	for _, c := range []struct {
		training, warn string
	}{
		{"  recompute: none\n  recompute_fraction: 1/2\n", "s.yaml:13:3: recompute_fraction=1/2 counts nothing here: it says which blocks training.recompute applies to, and training.recompute is none (set recompute: full, selective or op, or delete the key)"},
		{"  recompute: none\n  recompute_every: 2\n", "s.yaml:13:3: recompute_every=2 counts nothing here: it says which blocks training.recompute applies to, and training.recompute is none (set recompute: full, selective or op, or delete the key)"},
		{"  recompute: none\n  recompute_every: 1\n", ""},
		{"  recompute: full\n  recompute_fraction: 1/25\n", "s.yaml:13:3: recompute_fraction=1/25 checkpoints none of the model's 12 blocks (fms-fsdp wraps block b once b·p ≥ 1/2): the step runs as recompute: none (use a fraction of at least 1/24, or recompute: none)"},
		{"  recompute: full\n  recompute_fraction: 1/24\n", ""},
		{"  recompute: full\n  recompute_every: 13\n", "s.yaml:13:3: recompute_every=13 checkpoints none of the model's 12 blocks (torchtitan wraps block b when 13 divides b): the step runs as recompute: none (use at most recompute_every: 12, or recompute: none)"},
		{"  recompute: full\n  recompute_every: 12\n", ""},
	} {
		s, err := Load("s.yaml", []byte(baseYAML+"training:\n"+c.training), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.training, err)
		}
		var got string
		for _, w := range s.Warnings {
			if strings.Contains(w, "recompute_") {
				got = w
			}
		}
		if got != c.warn {
			t.Errorf("%q: warning %q, want %q", c.training, got, c.warn)
		}
	}
}
