package sweep

import (
	"bytes"
	"fmt"
	"io"
	"slices"
)

// Partial is what an interrupted sweep output holds.
type Partial struct {
	// Keep is the length of the complete lines; anything after it is a
	// partial last line to truncate before appending.
	Keep int64
	// HasHeader reports whether the kept part starts with the CSV header
	// (always true for JSONL, which has none).
	HasHeader bool
	// Done lists the point indices already present, ascending.
	Done []int
}

// IsDone reports whether point i is in Done.
func (p *Partial) IsDone(i int) bool {
	_, ok := slices.BinarySearch(p.Done, i)
	return ok
}

// ScanPartial reads an existing output of the sweep over sp (format f,
// shard sh) for --resume. It checks that the header matches the sweep's keys
// and that every row belongs to the sweep and shard; a row seen twice or a
// malformed complete line is an error.
func ScanPartial(r io.Reader, f Format, sp *Space, sh Shard) (*Partial, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sweep: reading the partial output: %w", err)
	}
	p := &Partial{HasHeader: f == JSONL}
	end := bytes.LastIndexByte(data, '\n') + 1
	p.Keep = int64(end)
	lines := bytes.SplitAfter(data[:end], []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if end > 0 && DetectFormat(data) != f {
		return nil, fmt.Errorf("sweep: the existing output is %s, not %s (resume with the same --format)", DetectFormat(data), f)
	}
	if f == CSV && len(lines) > 0 {
		if want := Header(CSV, sp.Keys()); string(lines[0]) != want {
			return nil, fmt.Errorf("sweep: the existing output's header %q is not this sweep's %q (resume with the same --grid flags in the same order)",
				bytes.TrimSpace(lines[0]), want[:len(want)-1])
		}
		p.HasHeader = true
		lines = lines[1:]
	}
	for n, ln := range lines {
		line := bytes.TrimRight(ln, "\r\n")
		if len(line) == 0 {
			continue
		}
		i, err := lineIndex(f, line)
		if err != nil {
			return nil, fmt.Errorf("sweep: the existing output's row %d: %v", n+1, err)
		}
		if i >= sp.Len() || !sh.Has(i) {
			return nil, fmt.Errorf("sweep: the existing output holds point %d, which is not in this sweep's shard %s of %d points (was it written by another sweep?)", i, sh, sp.Len())
		}
		p.Done = append(p.Done, i)
	}
	slices.Sort(p.Done)
	for k := 1; k < len(p.Done); k++ {
		if p.Done[k] == p.Done[k-1] {
			return nil, fmt.Errorf("sweep: the existing output holds point %d twice", p.Done[k])
		}
	}
	return p, nil
}
