package sweep

import (
	"bufio"
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

// Range is the points Lo to Hi, both included.
type Range struct{ Lo, Hi int }

// MergeReport says what Merge found.
type MergeReport struct {
	Format Format
	// Meta is the sweep every input belongs to.
	Meta Meta
	// Points is the sweep's number of points (from the meta line's grids).
	Points int
	Rows   int
	// Duplicates are points present more than once with identical rows
	// (kept once); Conflicts points present more than once with different
	// rows (the first file's row is kept).
	Duplicates []int
	Conflicts  []int
	// Missing are the runs of points of [0, Points) absent from every
	// input, MissingPoints how many points they hold.
	Missing       []Range
	MissingPoints int
	// Partial names inputs whose last line was incomplete and ignored.
	Partial []string
}

// OK reports whether the merge is complete and consistent.
func (m *MergeReport) OK() bool { return m.MissingPoints == 0 && len(m.Conflicts) == 0 }

type mergeLine struct {
	index int
	line  []byte
}

// Merge joins sweep outputs (shards, or pieces of a resumed run) into one
// output sorted by point index, written to w. Every input must start with
// the same meta line (one scenario, one set of --set and --grid flags) and
// format; every row must be a point of that sweep with all its columns.
// points, when > 0, is the number of points the caller expects (zerosim
// sweep --count); it must match the sweep's.
func Merge(w io.Writer, inputs []Input, points int) (*MergeReport, error) {
	rep := &MergeReport{}
	var sp *Space
	var lines []mergeLine
	for _, input := range inputs {
		br := bufio.NewReaderSize(input.R, 64<<10)
		var ln []byte
		for n := 1; ; n++ {
			var err error
			ln, err = readLine(br, ln)
			if err == io.EOF && n == 1 {
				// Not even the meta line, which a sweep writes first and
				// whole: merging such files alone printed nothing, exit 0.
				if len(bytes.TrimSpace(ln)) == 0 {
					return nil, fmt.Errorf("sweep: %s is empty, not a zerosim sweep output (give the --out files of zerosim sweep)", input.Name)
				}
				return nil, fmt.Errorf("sweep: %s is not a zerosim sweep output (it has no complete first line)", input.Name)
			}
			if err == io.EOF {
				if len(bytes.TrimSpace(ln)) > 0 {
					rep.Partial = append(rep.Partial, input.Name)
				}
				break
			}
			if err == errLongLine {
				return nil, fmt.Errorf("sweep: %s: line %d is longer than %d bytes (is it a sweep output?)", input.Name, n, MaxLineSize)
			}
			if err != nil {
				return nil, fmt.Errorf("sweep: reading %s: %w", input.Name, err)
			}
			line := bytes.TrimRight(ln, "\r\n")
			switch {
			case n == 1:
				m, f, ok := parseMeta(line)
				if !ok {
					return nil, fmt.Errorf("sweep: %s is not a zerosim sweep output (its first line is not a sweep's meta line)", input.Name)
				}
				if sp == nil {
					if sp, err = m.Space(); err != nil {
						return nil, fmt.Errorf("sweep: %s: the meta line's grids: %v", input.Name, err)
					}
					if points > 0 && points != sp.Len() {
						return nil, fmt.Errorf("sweep: %s holds a sweep of %d points, not %d", input.Name, sp.Len(), points)
					}
					rep.Meta, rep.Format, rep.Points = m, f, sp.Len()
					continue
				}
				if f != rep.Format {
					return nil, fmt.Errorf("sweep: %s is %s but the files before it are %s", input.Name, f, rep.Format)
				}
				if !m.Equal(rep.Meta) {
					return nil, fmt.Errorf("sweep: %s comes from another sweep than %s (%s); merge outputs of one sweep only", input.Name, inputs[0].Name, rep.Meta.differs(m))
				}
				if rep.Meta.BuildDiffers(m) {
					return nil, fmt.Errorf("sweep: %s was written by %s, %s by %s: their rows may differ for one point (%s)", input.Name, m.Zerosim, inputs[0].Name, rep.Meta.Zerosim, m.mergeBuildFix(rep.Meta))
				}
			case n == 2 && rep.Format == CSV:
				if want := Header(CSV, sp.Keys()); string(ln) != want {
					return nil, fmt.Errorf("sweep: %s: the column header %q is not the sweep's %q (an output of another zerosim version, or edited)", input.Name, line, strings.TrimSpace(want))
				}
			case len(line) > 0:
				i, err := parseRow(rep.Format, line, sp)
				if err != nil {
					return nil, fmt.Errorf("sweep: %s: line %d: %v", input.Name, n, err)
				}
				lines = append(lines, mergeLine{i, append(line[:len(line):len(line)], '\n')})
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b mergeLine) int { return cmp.Compare(a.index, b.index) })
	out := lines[:0:0]
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
	if sp == nil {
		return rep, nil // only empty inputs: nothing to write
	}
	next := 0 // the first point not yet accounted for
	for _, l := range append(out, mergeLine{index: rep.Points}) {
		if l.index > next {
			rep.Missing = append(rep.Missing, Range{next, l.index - 1})
			rep.MissingPoints += l.index - next
		}
		next = l.index + 1
	}
	if _, err := io.WriteString(w, Prelude(rep.Format, rep.Meta, sp.Keys())); err != nil {
		return nil, fmt.Errorf("sweep: writing the merged output: %w", err)
	}
	for _, l := range out {
		if _, err := w.Write(l.line); err != nil {
			return nil, fmt.Errorf("sweep: writing the merged output: %w", err)
		}
	}
	rep.Rows = len(out)
	return rep, nil
}

// maxRangesShown bounds how many runs Ranges and RangesOf write.
const maxRangesShown = 20

// Ranges writes ascending indices compactly: "3, 5-9, 12".
func Ranges(xs []int) string {
	var rs []Range
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		rs = append(rs, Range{xs[i], xs[j]})
		i = j + 1
	}
	return RangesOf(rs)
}

// RangesOf writes runs of points compactly: "3, 5-9, 12", the first 20
// runs and then how many more there are.
func RangesOf(rs []Range) string {
	var b strings.Builder
	for k, r := range rs {
		if k == maxRangesShown {
			b.WriteString(" and " + strconv.Itoa(len(rs)-k) + " more runs")
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r.Lo))
		if r.Hi > r.Lo {
			b.WriteString("-" + strconv.Itoa(r.Hi))
		}
	}
	return b.String()
}
