package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// loadReplay loads a scenario (name and data as scenarios.Load takes them,
// with its --set overrides) and replays it, failing the test on either
// error.
func loadReplay(t *testing.T, name string, data []byte, sets []string) (*Result, *scenarios.Scenario) {
	t.Helper()
	s, err := scenarios.Load(name, data, sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, s
}
