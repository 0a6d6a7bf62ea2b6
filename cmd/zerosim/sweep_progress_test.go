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

// screenLines is what a terminal shows for b: each line the last of its
// carriage-return segments written over the ones before, trailing spaces
// trimmed.
func screenLines(b string) []string {
	var lines []string
	for _, line := range strings.Split(b, "\n") {
		var screen []rune
		for _, seg := range strings.Split(line, "\r") {
			for i, c := range []rune(seg) {
				if i < len(screen) {
					screen[i] = c
				} else {
					screen = append(screen, c)
				}
			}
		}
		lines = append(lines, strings.TrimRight(string(screen), " "))
	}
	return lines
}

// TestSweepRowsClearTheBar (QA25 M3): with the rows and the bar on one
// terminal, each row is written over the erased bar, which is drawn again
// below it, so every row shows on a line of its own; before, a row
// followed the bar on its line ("sweep   3% |█ … | (4/132) [0s] 4,2,1,…").
func TestSweepRowsClearTheBar(t *testing.T) {
	for _, clear := range []bool{false, true} {
		var b bytes.Buffer // the terminal: stdout and stderr
		em := &sweepEmitter{enc: sweep.NewEncoder(&b, sweep.CSV, []string{"k"}), bar: newSweepBar(&b, 4), shown: map[string]int{}, clear: clear}
		for i := range 3 {
			if err := em.emit(sweep.Row{Index: i, Values: []string{"1"}, Err: "x"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(150 * time.Millisecond) // past the bar's throttle: drawn after each row
		}
		em.finish(io.Discard)
		var glued []string
		for _, l := range screenLines(b.String()) {
			if strings.Contains(l, "| (") && strings.Contains(l, ",x") {
				glued = append(glued, l)
			}
		}
		if clear && len(glued) > 0 {
			t.Errorf("rows glued to the bar: %q", glued)
		}
		if want := "0,1,,,,,,,,,,,,,x|1,1,,,,,,,,,,,,,x|2,1,,,,,,,,,,,,,x|"; clear && strings.Join(screenLines(b.String()), "|") != want {
			t.Errorf("screen %q, want the rows alone, %q", screenLines(b.String()), want)
		}
		if !clear && len(glued) == 0 {
			t.Errorf("without clearing, no row is glued to the bar (the check cannot fail): %q", screenLines(b.String()))
		}
	}
}
