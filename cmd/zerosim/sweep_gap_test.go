package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSweepResumeFillsGap: a --resume of an output with rows missing
// before its last row (a shard that died, an edited file, QA25 L14), or
// with its rows out of grid order, leaves the bytes of an uninterrupted
// run: the missing points are replayed and the file is sorted into grid
// order, atomically (no temporary file left). Before, the missing points
// were appended after the last row. The uninterrupted file is a run of
// its own into a fresh --out; rows are named by their line (0 is the
// first row, after the meta line and the CSV header).
func TestSweepResumeFillsGap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format string
		shard  string
		drop   []int // rows deleted
		last   []int // rows moved to the end, in this order
		cut    int   // bytes cut from the end (a partial last line)
	}{
		{"one middle row", "csv", "", []int{20}, nil, 0},
		{"the first row and two runs", "csv", "", []int{0, 7, 8, 9, 30}, nil, 0},
		{"a gap and a partial last line", "csv", "", []int{11}, nil, 5},
		{"a shard's middle row", "csv", "1/3", []int{4}, nil, 0},
		{"JSON Lines", "json", "", []int{1, 46}, nil, 0},
		{"complete but out of order", "csv", "", nil, []int{3, 2}, 0},
		{"a gap and rows out of order", "json", "2/3", []int{5}, []int{0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"sweep", "seed002-tiny", "--format", tc.format}, smallGrids...)
			if tc.shard != "" {
				args = append(args, "--shard", tc.shard)
			}
			whole := filepath.Join(dir, "whole")
			if _, e, code := sweepCLI(t, append(args, "--out", whole)...); code != 0 {
				t.Fatalf("sweep: exit %d: %s", code, e)
			}
			full, err := os.ReadFile(whole)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(full), "\n")
			pre := 2 // the meta line and the header
			if tc.format == "json" {
				pre = 1
			}
			rows := lines[pre : len(lines)-1]
			var kept, moved []string
			for i, r := range rows {
				if !slices.Contains(tc.drop, i) && !slices.Contains(tc.last, i) {
					kept = append(kept, r)
				}
			}
			for _, i := range tc.last {
				moved = append(moved, rows[i])
			}
			partial := strings.Join(lines[:pre], "") + strings.Join(kept, "") + strings.Join(moved, "")
			partial = partial[:len(partial)-tc.cut]
			p := filepath.Join(dir, "partial")
			if err := os.WriteFile(p, []byte(partial), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, e, code := sweepCLI(t, append(args, "--out", p, "--resume")...); code != 0 {
				t.Fatalf("resume: exit %d: %s", code, e)
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(full) {
				t.Errorf("resumed file differs from the uninterrupted one:\n%s\nwant:\n%s", got, full)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
				t.Errorf("temporary files left: %q", left)
			}
		})
	}
}
