package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestActivationsNoteSaysWhatIsCounted: the activations row says
// "recompute in backward" only where a backward rebuilds activations
// (qauser s28 L6: it said so under recompute: none; the head's loss
// gradients, which every backward builds, are named apart), and, under
// convention zerosim, why a bare model.params has none (qauser s28 H1:
// "0 B" with no note); the seeds' conventions, which count model states
// only, keep their empty note.
func TestActivationsNoteSaysWhatIsCounted(t *testing.T) {
	def, _ := scenarios.Example("default")
	seed, _ := scenarios.Example("seed002-7b")
	mlp, _ := scenarios.Example("seed000-mlp")
	for _, tc := range []struct {
		data []byte
		sets []string
		conv Convention
		want string
	}{
		{def, []string{"training.recompute=none"}, ConventionZerosim, "kept for backward (+ loss gradients in backward)"},
		{def, []string{"training.recompute=selective"}, ConventionZerosim, "kept for backward (+ recompute and loss gradients in backward)"},
		{def, []string{"training.recompute=full"}, ConventionZerosim, "kept for backward (+ recompute and loss gradients in backward)"},
		{mlp, []string{"memory.activations=true"}, ConventionZerosim, "kept for backward"},
		{seed, nil, ConventionZerosim, NoActivationsNote},
		{seed, nil, ConventionSeed002, ""},
		{seed, []string{"model.seq_len=4096"}, ConventionZerosim, NoActivationsNote},
	} {
		s, err := scenarios.Load("s.yaml", tc.data, tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{Reserve: ReserveNone, Convention: tc.conv})
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Component(CompActivations); c.Note != tc.want {
			t.Errorf("%v %s: activations note %q, want %q", tc.sets, tc.conv, c.Note, tc.want)
		}
	}
}
