package sweep

import (
	"bytes"
	"testing"
)

// TestScanPartialNeedsSort: a kept file needs sorting once every point is
// in exactly when its rows are not the first points in grid order: two
// neighbouring rows swapped (points 0, 2, 1: every point up to the last
// row is there, so only the order tells), a row missing before the last
// one, or a row after a later one; the first rows in grid order, or a
// prefix of them, do not.
func TestScanPartialNeedsSort(t *testing.T) {
	src := tinySource(t)
	sp := space(t, "parallelism.zero_stage=0,1,2,3")
	for _, f := range []Format{CSV, JSONL} {
		full := sweepTo(t, src, sp, All, 1, f)
		lines := bytes.SplitAfter(full, []byte("\n"))
		header := 1 // CSV: the meta comment and the column names
		if f == CSV {
			header = 2
		}
		head, rows := bytes.Join(lines[:header], nil), lines[header:len(lines)-1]
		if len(rows) != 4 {
			t.Fatalf("%s: %d rows, want 4", f, len(rows))
		}
		for _, c := range []struct {
			name  string
			order []int
			sort  bool
		}{
			{"in grid order", []int{0, 1, 2, 3}, false},
			{"a prefix", []int{0, 1}, false},
			{"neighbours swapped", []int{0, 2, 1}, true},
			{"the first two swapped", []int{1, 0}, true},
			{"a gap", []int{0, 2}, true},
			{"a later row first", []int{3, 0, 1, 2}, true},
		} {
			file := append([]byte(nil), head...)
			for _, i := range c.order {
				file = append(file, rows[i]...)
			}
			p, err := ScanPartial(bytes.NewReader(file), f, metaOf(src, sp), sp, All)
			if err != nil {
				t.Fatalf("%s %s: %v", f, c.name, err)
			}
			if p.NeedsSort != c.sort || len(p.Done) != len(c.order) {
				t.Errorf("%s, rows %v (%s): NeedsSort %v with %d done, want %v with %d", f, c.order, c.name, p.NeedsSort, len(p.Done), c.sort, len(c.order))
			}
		}
	}
}
