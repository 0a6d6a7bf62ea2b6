package sweep

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
)

// MaxLineSize bounds one line of a sweep output (a row is ~100 bytes plus
// its values and error message).
const MaxLineSize = 1 << 20

var errLongLine = errors.New("line longer than MaxLineSize")

// readLine reads one line into buf (reused), newline included; at the end
// of the input it returns what is left with io.EOF, and errLongLine past
// MaxLineSize bytes.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		frag, err := br.ReadSlice('\n')
		buf = append(buf, frag...)
		if err != bufio.ErrBufferFull {
			return buf, err
		}
		if len(buf) > MaxLineSize {
			return buf, errLongLine
		}
	}
}

// Partial is what an interrupted sweep output holds.
type Partial struct {
	// Keep is the length of the complete lines to keep; anything after it
	// (a partial last line, or a prelude cut short) is truncated before
	// appending.
	Keep int64
	// HasHeader reports whether the kept part holds the whole prelude (meta
	// line and, for CSV, the column header).
	HasHeader bool
	// Done lists the point indices already present, ascending.
	Done []int
	// NeedsSort reports that the rows kept are not the shard's first
	// len(Done) points in grid order: a point before the last row is
	// missing (a row lost or deleted, QA25 L14) or the rows are out of
	// order (a resume appended such a point). Appending the rest then
	// leaves the file out of grid order; the caller sorts it once every
	// point is in (Merge of the file alone), so it is the file an
	// uninterrupted run writes.
	NeedsSort bool
}

// IsDone reports whether point i is in Done.
func (p *Partial) IsDone(i int) bool {
	_, ok := slices.BinarySearch(p.Done, i)
	return ok
}

// ScanPartial reads an existing output of the sweep m over sp (format f,
// shard sh) for --resume. A file that does not start with this sweep's
// prelude (meta line and header) is refused, whether it is another sweep's
// output or no sweep output at all; so is a row that is malformed, not of the
// sweep and shard, or present twice.
func ScanPartial(r io.Reader, f Format, m Meta, sp *Space, sh Shard) (*Partial, error) {
	pre := []byte(Prelude(f, m, sp.Keys()))
	br := bufio.NewReaderSize(r, 64<<10)
	head := make([]byte, len(pre))
	n, err := io.ReadFull(br, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("sweep: reading the partial output: %w", err)
	}
	if !bytes.Equal(head[:n], pre[:n]) {
		more, _ := br.Peek(64 << 10)
		return nil, preludeMismatch(append(head[:n], more...), f, m)
	}
	if n < len(pre) {
		return &Partial{}, nil // a prelude cut short: write it again
	}
	p := &Partial{Keep: int64(n), HasHeader: true}
	var ln []byte
	last := -1 // the index of the row before
	for row := 1; ; row++ {
		ln, err = readLine(br, ln)
		if err == io.EOF {
			break // a partial last line (or none): truncated
		}
		if err == errLongLine {
			return nil, fmt.Errorf("sweep: the existing output's row %d is longer than %d bytes (is it a sweep output?)", row, MaxLineSize)
		}
		if err != nil {
			return nil, fmt.Errorf("sweep: reading the partial output: %w", err)
		}
		p.Keep += int64(len(ln))
		line := bytes.TrimRight(ln, "\r\n")
		if len(line) == 0 {
			continue
		}
		i, err := parseRow(f, line, sp)
		if err != nil {
			return nil, fmt.Errorf("sweep: the existing output's row %d: %v", row, err)
		}
		if !sh.Has(i) {
			return nil, fmt.Errorf("sweep: the existing output holds point %d, which is not in this sweep's shard %s of %d points (was it written by another sweep?)", i, sh, sp.Len())
		}
		p.Done = append(p.Done, i)
		p.NeedsSort = p.NeedsSort || i < last
		last = i
	}
	slices.Sort(p.Done)
	for k := 1; k < len(p.Done); k++ {
		if p.Done[k] == p.Done[k-1] {
			return nil, fmt.Errorf("sweep: the existing output holds point %d twice", p.Done[k])
		}
	}
	// A gap: fewer rows than the shard has points up to the last row.
	if n := len(p.Done); n > 0 && sh.Count(p.Done[n-1]+1) != n {
		p.NeedsSort = true
	}
	return p, nil
}

// preludeMismatch explains why data does not start with the prelude of
// sweep m in format f.
func preludeMismatch(data []byte, f Format, m Meta) error {
	first, _, complete := bytes.Cut(data, []byte("\n"))
	om, of, ok := parseMeta(bytes.TrimRight(first, "\r"))
	switch {
	case !ok || !complete:
		return fmt.Errorf("sweep: the existing file is not a zerosim sweep output (its first line is not a sweep's meta line); refusing to overwrite it")
	case of != f:
		return fmt.Errorf("sweep: the existing output is %s, not %s (resume with the same --format)", of, f)
	case !om.Equal(m):
		return fmt.Errorf("sweep: the existing output comes from another sweep (%s); %s", m.differs(om), m.resumeFix(om))
	case m.BuildDiffers(om):
		return fmt.Errorf("sweep: the existing output was written by %s, this is %s: their rows may differ for one point (%s)", om.Zerosim, m.Zerosim, m.resumeBuildFix(om))
	}
	// The meta line names the same grids in the same order: the columns
	// after them differ, those of another version (rows gained
	// device_peak_bytes, mfu and device_fits), or the header was edited.
	return fmt.Errorf("sweep: the existing output's column header is not this sweep's: its measure columns differ (an output of another zerosim version; run the sweep again into a new --out file)")
}
