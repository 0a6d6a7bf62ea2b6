package scenarios

import (
	"strings"
	"testing"
)

// TestRoPEImpl: training.rope_impl round-trips through Encode and stays out
// of the resolved scenario when unset (complex), so files without it
// resolve and report as before.
func TestRoPEImpl(t *testing.T) {
	for _, c := range []struct {
		set  string
		want RoPEImpl
	}{
		{"", ""},
		{"training.rope_impl=complex", RoPEComplex},
		{"training.rope_impl=rotation", RoPERotation},
		{"training.rope_impl=fused", RoPEFused},
	} {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		if err != nil {
			t.Fatalf("%q: %v", c.set, err)
		}
		if s.Training.RoPEImpl != c.want {
			t.Errorf("%q: rope_impl %q, want %q", c.set, s.Training.RoPEImpl, c.want)
		}
		b, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "rope_impl:"); got != (c.want != "") {
			t.Errorf("%q: encoded scenario has rope_impl %v:\n%s", c.set, got, b)
		}
		again, err := Load("again.yaml", b, nil)
		if err != nil || again.Training.RoPEImpl != s.Training.RoPEImpl {
			t.Errorf("%q: reloaded rope_impl %q, %v; want %q", c.set, again.Training.RoPEImpl, err, s.Training.RoPEImpl)
		}
	}
}
