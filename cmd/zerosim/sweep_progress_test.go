package main

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zerosim/zerosim/sweep"
)

// TestSweepBarRateWaits (QA19 L14): the bar's first rate divided the first
// point by almost no time ("(1/8, 216123 points/s)" for points of about
// 100 ms); now it shows the count alone until the sweep has run
// rateAfter, then the rate over that time and the time left.
func TestSweepBarRateWaits(t *testing.T) {
	var b bytes.Buffer
	em := &sweepEmitter{enc: sweep.NewEncoder(io.Discard, sweep.CSV, []string{"k"}), bar: newSweepBar(&b, 8), shown: map[string]int{}}
	if err := em.emit(sweep.Row{Index: 0, Values: []string{"1"}}); err != nil {
		t.Fatal(err)
	}
	if first := b.String(); !strings.Contains(first, "(1/8)") || strings.Contains(first, "points/") {
		t.Errorf("first point: %q, want the count without a rate", first)
	}
	time.Sleep(rateAfter + 50*time.Millisecond)
	b.Reset()
	if err := em.emit(sweep.Row{Index: 1, Values: []string{"2"}}); err != nil {
		t.Fatal(err)
	}
	// Two points in a little over a second, or more on a loaded machine
	// (final read R2: a stall made it 1): a rate of 2 or less, not one of
	// thousands.
	if m := regexp.MustCompile(`\(2/8, ([0-9]+) points/s\)`).FindStringSubmatch(b.String()); m == nil || m[1] != "2" && m[1] != "1" && m[1] != "0" {
		t.Errorf("after %v: %q, want (2/8, 2 points/s) or less", rateAfter, b.String())
	}
}
