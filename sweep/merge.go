package sweep

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Input is one shard output to merge.
type Input struct {
	Name string
	R    io.Reader
}

// MergeReport says what Merge found.
type MergeReport struct {
	Format Format
	Rows   int
	// Duplicates are points present more than once with identical rows
	// (kept once); Conflicts points present more than once with different
	// rows (the first file's row is kept).
	Duplicates []int
	Conflicts  []int
	// Missing are the points of [0, points) absent from every input (up to
	// the largest index seen when the number of points is not known).
	Missing []int
	// Partial names inputs whose last line was incomplete and ignored.
	Partial []string
}

// OK reports whether the merge is complete and consistent.
func (m *MergeReport) OK() bool { return len(m.Missing) == 0 && len(m.Conflicts) == 0 }

type mergeLine struct {
	index int
	input int
	line  []byte
}

// Merge joins sweep outputs (shards, or pieces of a resumed run) into one
// output sorted by point index, written to w. All inputs must share one
// format and, for CSV, one header. points is the sweep's number of points,
// used to find missing points at the end; ≤ 0 means unknown.
func Merge(w io.Writer, inputs []Input, points int) (*MergeReport, error) {
	rep := &MergeReport{}
	var header []byte
	var lines []mergeLine
	formatSet := false
	for in, input := range inputs {
		data, err := io.ReadAll(input.R)
		if err != nil {
			return nil, fmt.Errorf("sweep: reading %s: %w", input.Name, err)
		}
		end := bytes.LastIndexByte(data, '\n') + 1
		if end < len(data) && len(bytes.TrimSpace(data[end:])) > 0 {
			rep.Partial = append(rep.Partial, input.Name)
		}
		data = data[:end]
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		f := DetectFormat(data)
		if !formatSet {
			rep.Format, formatSet = f, true
		} else if f != rep.Format {
			return nil, fmt.Errorf("sweep: %s is %s but the files before it are %s", input.Name, f, rep.Format)
		}
		rows := bytes.SplitAfter(data, []byte("\n"))
		if f == CSV {
			h := rows[0]
			if !bytes.HasPrefix(h, []byte("index,")) {
				return nil, fmt.Errorf("sweep: %s: the first line is not a sweep CSV header", input.Name)
			}
			if header == nil {
				header = h
			} else if !bytes.Equal(h, header) {
				return nil, fmt.Errorf("sweep: %s: header %q differs from %q (merge outputs of one sweep only)",
					input.Name, bytes.TrimSpace(h), bytes.TrimSpace(header))
			}
			rows = rows[1:]
		}
		for n, ln := range rows {
			line := bytes.TrimRight(ln, "\r\n")
			if len(line) == 0 {
				continue
			}
			i, err := lineIndex(f, line)
			if err != nil {
				return nil, fmt.Errorf("sweep: %s: row %d: %v", input.Name, n+1, err)
			}
			if points > 0 && i >= points {
				return nil, fmt.Errorf("sweep: %s: row %d holds point %d but the sweep has %d points", input.Name, n+1, i, points)
			}
			lines = append(lines, mergeLine{i, in, append(line, '\n')})
		}
	}
	slices.SortStableFunc(lines, func(a, b mergeLine) int { return cmp.Compare(a.index, b.index) })
	var out []mergeLine
	for _, l := range lines {
		if n := len(out); n > 0 && out[n-1].index == l.index {
			if bytes.Equal(out[n-1].line, l.line) {
				if len(rep.Duplicates) == 0 || rep.Duplicates[len(rep.Duplicates)-1] != l.index {
					rep.Duplicates = append(rep.Duplicates, l.index)
				}
			} else if len(rep.Conflicts) == 0 || rep.Conflicts[len(rep.Conflicts)-1] != l.index {
				rep.Conflicts = append(rep.Conflicts, l.index)
			}
			continue
		}
		out = append(out, l)
	}
	upto := points
	if upto <= 0 && len(out) > 0 {
		upto = out[len(out)-1].index + 1
	}
	j := 0
	for i := 0; i < upto; i++ {
		for j < len(out) && out[j].index < i {
			j++
		}
		if j >= len(out) || out[j].index != i {
			rep.Missing = append(rep.Missing, i)
		}
	}
	if header != nil {
		if _, err := w.Write(header); err != nil {
			return nil, fmt.Errorf("sweep: writing the merged output: %w", err)
		}
	}
	for _, l := range out {
		if _, err := w.Write(l.line); err != nil {
			return nil, fmt.Errorf("sweep: writing the merged output: %w", err)
		}
	}
	rep.Rows = len(out)
	return rep, nil
}

// Ranges writes ascending indices compactly: "3, 5-9, 12".
func Ranges(xs []int) string {
	var b strings.Builder
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(xs[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(xs[j]))
		}
		i = j + 1
	}
	return b.String()
}
