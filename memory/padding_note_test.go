package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// The padding row names the key and value that chose its rules, not "toy
// rules", which a planner read as a toy model (qa21 LOW 9): Llama 2 7B
// under the default padding, and under Megatron's.
func TestPaddingNoteNamesTheKey(t *testing.T) {
	data, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	for _, p := range []string{"toy", "megatron"} {
		s, err := scenarios.Load("default", data, []string{"communication.padding=" + p})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "to a multiple of the shard count (communication.padding: " + p + ")"
		for _, c := range r.Components {
			if c.Name == string(CompPadding) && c.Note != want {
				t.Errorf("padding %s: note %q, want %q", p, c.Note, want)
			}
		}
	}
}
