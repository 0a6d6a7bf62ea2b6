package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSweepInterruptedToStdout: a sweep to standard output stopped by
// SIGINT/SIGTERM says so in its own words, as with --out, not Go's
// "context canceled" (QA25 L1).
func TestSweepInterruptedToStdout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	a := &app{in: strings.NewReader(""), out: &out, err: &errOut, format: "csv"}
	o := sweepOpts{grids: []string{"parallelism.k=1,2"}, jobs: 1, shard: "0/1"}
	err := runSweep(ctx, a, o, "seed002-tiny", &out, &errOut)
	var f failure
	if !errors.As(err, &f) || f.msg != "sweep interrupted after 0 of 2 points (the rows on standard output are whole; rerun with --out FILE to resume one)" {
		t.Errorf("runSweep stopped: %v", err)
	}
}
