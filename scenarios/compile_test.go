package scenarios

import (
	"strings"
	"testing"
)

// TestCompile: training.compile reads torchtitan's components, round-trips
// through Encode, and stays out of the resolved scenario when unset (so a
// file without it resolves, and reports, as before).
func TestCompile(t *testing.T) {
	for _, c := range []struct {
		set          string
		blocks, loss bool
		line         string
	}{
		{"", false, false, ""},
		{"training.compile=none", false, false, "compile: none"},
		{"training.compile=blocks", true, false, "compile: blocks"},
		{"training.compile=loss", false, true, "compile: loss"},
		{"training.compile=blocks+loss", true, true, "compile: blocks+loss"},
		{"training.compile=model", true, false, "compile: model"},
	} {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		if c.set == "training.compile=model" {
			// model needs its graphs known (TestCompileModelScope).
			sets = append(sets, "parallelism.zero_stage=3", "communication.boundary=fsdp2")
		}
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		if err != nil {
			t.Fatalf("%q: %v", c.set, err)
		}
		if s.Training.Compile.Blocks() != c.blocks || s.Training.Compile.Loss() != c.loss {
			t.Errorf("%q: blocks %v loss %v, want %v %v", c.set, s.Training.Compile.Blocks(), s.Training.Compile.Loss(), c.blocks, c.loss)
		}
		b, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "compile:"); got != (c.line != "") || (c.line != "" && !strings.Contains(string(b), c.line)) {
			t.Errorf("%q: encoded scenario has compile %v, want %q:\n%s", c.set, got, c.line, b)
		}
		again, err := Load("again.yaml", b, nil)
		if err != nil || again.Training.Compile != s.Training.Compile {
			t.Errorf("%q: reloaded compile %q, %v; want %q", c.set, again.Training.Compile, err, s.Training.Compile)
		}
	}
}
