package reports

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// exampleRun loads an embedded example and replays it with spans.
func exampleRun(t testing.TB, name string, sets ...string) *Run {
	t.Helper()
	data, ok := scenarios.Example(name)
	if !ok {
		t.Fatalf("no example %q", name)
	}
	s, err := scenarios.Load(name+".yaml", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	r, err := zero.Replay(s, zero.Options{KeepSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	run, err := NewRun(s, r)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

