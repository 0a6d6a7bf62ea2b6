package main

import (
	"errors"
	"fmt"
	"testing"
)

// TestPlain: plain drops a package prefix where an error's own text starts
// (the message, and each error it wraps with %w) and nowhere else, so a
// value the user typed is printed as typed.
func TestPlain(t *testing.T) {
	inner := errors.New("numerics: qwZ/qgZ are ZeRO++")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("zero: communication.bucket_size 1 B cuts"), "communication.bucket_size 1 B cuts"},
		{fmt.Errorf("drift: %w", fmt.Errorf("numerics: drift K 1: %w", inner)), "drift: drift K 1: qwZ/qgZ are ZeRO++"},
		// Text inside a message, not at an error's start: kept. (It was
		// edited to "a: b" when every ": memory: " was replaced.)
		{errors.New(`default.yaml: --set model.name=a: memory: b: the value is not valid YAML`), `default.yaml: --set model.name=a: memory: b: the value is not valid YAML`},
		// Wrapped with %s, the inner text is the outer's own: kept too.
		{fmt.Errorf("--set x=%s: bad", "sweep: y"), "--set x=sweep: y: bad"},
		{errors.New("plain already"), "plain already"},
	} {
		if got := plain(tc.err); got != tc.want {
			t.Errorf("plain(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
