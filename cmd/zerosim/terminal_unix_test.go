//go:build linux

package main

import (
	"io"
	"os"
	"testing"

	"github.com/zerosim/zerosim/reports"
)

// TestIsTerminalSeesStdoutThroughItsWrappers (QA25 M3): execute wraps
// standard output (warnFirst over reports.ErrWriter), so sweep never saw
// that its rows went to the terminal the bar is drawn on.
func TestIsTerminalSeesStdoutThroughItsWrappers(t *testing.T) {
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer pty.Close()
	if !isTerminal(pty) {
		t.Skip("the pseudo-terminal's master answers no terminal ioctl here")
	}
	a := &app{}
	if w := io.Writer(warnFirst{a, &reports.ErrWriter{W: pty}}); !isTerminal(w) {
		t.Error("standard output on a terminal, as execute wraps it: not a terminal")
	}
	if w := io.Writer(warnFirst{a, &reports.ErrWriter{W: io.Discard}}); isTerminal(w) {
		t.Error("io.Discard wrapped: a terminal")
	}
}
