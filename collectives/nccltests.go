package collectives

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zerosim/zerosim/units"
)

// A Log is one run of an nccl-tests binary (all_reduce_perf,
// all_gather_perf, reduce_scatter_perf) read from its stdout: the
// collective, the communicator's shape and one Row per size.
type Log struct {
	File string
	Line int // line of the run's column header
	Op   Op
	// Ranks and Nodes: from the "# Using devices" block (ranks and distinct
	// hosts), else Ranks from the rows' busbw/algbw when they tell one
	// count (RanksMin = RanksMax), else from the caller's flags; 0 when
	// unknown.
	Ranks, Nodes int
	// DevicesLine is the line of the "# Using devices" block Ranks and
	// Nodes come from, 0 when the run has none.
	DevicesLine int
	// RanksMin and RanksMax are the rank counts the rows' busbw/algbw
	// allow as printed (ranksBounds; RanksMax MaxRanks when no row bounds
	// it from above), RanksMinLine and RanksMaxLine the rows that give
	// each bound; all 0 when no row tells (no bandwidth printed).
	RanksMin, RanksMax         int
	RanksMinLine, RanksMaxLine int
	// Threads and GPUsPerThread: the run's "# nThread T nGpus G" line
	// (nccl-tests -t and -g: each of T threads per process drives G GPUs);
	// 0 when the log lacks it.
	Threads, GPUsPerThread int
	// Device is the name the "# Using devices" block gives rank 0's GPU
	// ("A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"), "" when it has none.
	Device string
	// RankHost and RankDevice are each rank's host (numbered in the order
	// the devices block first names them) and its "device N", the CUDA
	// ordinal of its GPU, from the "# Using devices" block; nil when the
	// run has none or a line of it names no device.
	RankHost, RankDevice []int
	Rows                 []Row
	// Unfinished marks a run with rows and no "Avg bus bandwidth" line
	// after them: nccl-tests' run() prints it once every size has printed
	// its row (src/common.cu at NVIDIA/nccl-tests
	// d2d40cc8249378efa4d7e2c949528c15eeb7d8e7, "# Out of bounds values"
	// then "# Avg bus bandwidth"), so the log was cut or the run stopped
	// before its last sizes.
	Unfinished bool
}

// Row is one size of a run: nccl-tests' out-of-place columns (the in-place
// ones are kept for reference).
type Row struct {
	Line         int
	Size         units.Bytes
	Count        int64
	Type, Redop  string
	Time         float64 // µs, out of place
	AlgBW, BusBW float64 // GB/s, out of place
	InTime       float64 // µs, in place (0 when the log has none)
	// ratio holds the bounds of busbw/algbw as printed, out of place and
	// in place (ratioBounds; lo > hi when a place prints no bandwidth).
	ratio [2][2]float64
}

// ErrLog is a log that cannot be read; its message names file:line.
var ErrLog = errors.New("bad nccl-tests log")

type logError struct {
	file      string
	line, col int // col 0: the line as a whole
	msg       string
}

// failAt is the error at file:line:col (col 0: the line as a whole).
func failAt(file string, line, col int, format string, a ...any) error {
	return &logError{file, line, col, fmt.Sprintf(format, a...)}
}

func (e *logError) Error() string {
	if e.col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.file, e.line, e.col, e.msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
}

// fieldError is parseRow's error at the row's field i (len(fields): past
// the last one, where a missing column would be).
type fieldError struct {
	field int
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// fieldColumn is the 1-based byte column of field i of raw's
// strings.Fields (i = the number of fields: just past the last one).
func fieldColumn(raw string, i int) int {
	n, in := 0, false
	for j, r := range raw {
		sp := unicode.IsSpace(r)
		if !sp && !in {
			if n == i {
				return j + 1
			}
			n++
		}
		in = !sp
	}
	return len(raw) + 1
}
func (e *logError) Unwrap() error { return ErrLog }

// maxLogLine bounds one line of a log (bufio.Scanner's buffer).
const maxLogLine = 1 << 16

// ParseLogs reads every run in an nccl-tests stdout. Lines that are not
// part of a table (MPI or scheduler noise, NCCL INFO lines, comments) are
// skipped; a run is a column header followed by rows. It fails, naming
// file:line (file:line:column, 1-based bytes, for a row's field or a
// test's name), on a file that is not text, a run of a test zerosim does
// not model, a truncated or malformed row, a size column that decreases, a
// row with #wrong ≠ 0, or no rows at all.
func ParseLogs(name string, r io.Reader) ([]Log, error) {
	return ParseLogsWith(name, r, ParseOptions{})
}

// ParseOptions narrows ParseLogsWith to the runs a caller uses.
type ParseOptions struct {
	// Ops, when not empty, are the tests the caller uses: a run of another
	// is refused at the line that names its test ("# Collective test
	// starting: NAME"), as a test zerosim does not model is, with Uses
	// in the message ("calibrate fits all_reduce_perf, ...").
	Ops  []Op
	Uses string
	// Check, when set, is called with each run with rows once its table is
	// complete (op, ranks and bounds filled in), in file order and before
	// the error of any later line is returned: the error returned is
	// always the first offending line of the file.
	Check func(*Log) error
}

// ParseLogsWith is ParseLogs with the caller's narrowing (ParseOptions).
// Its errors come in file order: a run's Check before the refusal or
// malformed row of a later run (a run whose own table has the error is
// not checked).
func ParseLogsWith(name string, r io.Reader, o ParseOptions) ([]Log, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLogLine)
	lp := &logParser{name: name, op: -1, hosts: map[string]bool{}, opts: o}
	return lp.parse(sc)
}

// parse runs lp over sc's lines; an error of a line comes after the
// checks of the runs complete before it (stop).
func (lp *logParser) parse(sc *bufio.Scanner) ([]Log, error) {
	for sc.Scan() {
		lp.ln++
		raw := sc.Bytes()
		lp.raw = raw
		if bytes.IndexByte(raw, 0) >= 0 || !utf8.Valid(raw) {
			return nil, lp.stop(lp.fail(lp.ln, "not a text file (nccl-tests prints text; pass its stdout)"))
		}
		line := strings.TrimSpace(untag(string(raw)))
		// Web pages that render a terminal (mkdocs' termy, as dstack's
		// docs use) drop nccl-tests' leading "#": a bare column header
		// still starts a run.
		if strings.HasPrefix(line, "#") || isHeader(line) {
			if err := lp.comment(line); err != nil {
				return nil, lp.stop(err)
			}
			continue
		}
		// The row's fields are those of raw from the untagged line's start
		// (untag keeps a suffix of raw), for the columns of errors.
		lp.rowAt = len(raw) - len(strings.TrimLeftFunc(untag(string(raw)), unicode.IsSpace))
		if err := lp.row(line); err != nil {
			return nil, lp.stop(err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, lp.stop(lp.fail(lp.ln+1, "%v", err))
	}
	return lp.finish()
}

// stop is the error to return for err, an error at the line being read:
// the first error of the runs complete before that line (their ops
// guessed, their ranks bounded, opts.Check), else err.
func (lp *logParser) stop(err error) error {
	if e := lp.flush(lp.done); e != nil {
		return e
	}
	return err
}

// flush completes runs lp.checked up to upto in file order: each run with
// rows gets its op (guessOp, when no "Collective test starting" line named
// it), its rank bounds (ranksBounds) and ranks when the rows tell one
// count, then opts.Check; the first error stops it.
func (lp *logParser) flush(upto int) error {
	for ; lp.checked < upto; lp.checked++ {
		l := &lp.logs[lp.checked]
		if len(l.Rows) == 0 {
			continue
		}
		if l.Op < 0 {
			o, err := guessOp(l)
			if err != nil {
				return lp.fail(l.Line, "%v", err)
			}
			l.Op = o
		}
		ranksBounds(l)
		if l.Ranks == 0 && l.RanksMin > 0 && l.RanksMin == l.RanksMax {
			l.Ranks = l.RanksMin
		}
		if lp.opts.Check != nil {
			if err := lp.opts.Check(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// logParser is the state of one ParseLogs.
type logParser struct {
	name  string
	ln    int
	raw   []byte // the line being read
	rowAt int    // byte offset in raw of the row's first field
	logs  []Log
	ranks int
	hosts map[string]bool // looked up and counted, never iterated
	// hostOf and devOf: each rank's host number and device of the last
	// devices block; devOK false once a line of it names no device.
	hostNum       map[string]int
	hostOf, devOf []int
	devOK         bool
	op            Op
	inDevs        bool
	devLine       int // line of the last "# Using devices"
	lastRow       int
	// threads and gpus: the last "# nThread T nGpus G" line.
	threads, gpus int
	device        string // rank 0's GPU in the last devices block
	// open: the last run's table has not reached its "Avg bus
	// bandwidth" line; perElt its rows' size over count × type size.
	open   bool
	perElt int64
	opts   ParseOptions
	// done is the number of runs whose tables are complete (a later run's
	// test line, devices block or header, or their "Avg bus bandwidth"
	// line, was read), checked the number flush has completed.
	done, checked int
}

func (lp *logParser) fail(line int, format string, a ...any) error {
	return failAt(lp.name, line, 0, format, a...)
}

// comment reads a "#" line: the test's name, the devices block, a column
// header (a new run); anything else is skipped. A test zerosim does not
// model is the error.
func (lp *logParser) comment(line string) error {
	body := strings.TrimSpace(strings.TrimLeft(line, "#"))
	switch {
	case strings.HasPrefix(line, "##"):
		// provenance comments of the shared logs
	case strings.Contains(body, "Collective test starting:"):
		// Every run names its test, so the op is this run's alone: an
		// unknown name kept the previous run's, and a sendrecv_perf run
		// was read as an all-reduce, or after an all_gather_perf run
		// blamed as edited rows (qanccl s28).
		lp.done = len(lp.logs)
		name, _, _ := strings.Cut(strings.TrimSpace(body[strings.Index(body, ":")+1:]), " ")
		o, ok := opOfTest(name)
		if name != "" && (!ok || len(lp.opts.Ops) > 0 && !slices.Contains(lp.opts.Ops, o)) {
			uses := "zerosim models all_reduce_perf, all_gather_perf, reduce_scatter_perf and alltoall_perf"
			if len(lp.opts.Ops) > 0 {
				uses = lp.opts.Uses
			}
			// The name's column in the raw line (after a launcher's tag).
			col := 0
			if i := bytes.Index(lp.raw, []byte("Collective test starting:")); i >= 0 {
				if j := bytes.Index(lp.raw[i:], []byte(name)); j >= 0 {
					col = i + j + 1
				}
			}
			return failAt(lp.name, lp.ln, col, "a run of %.60s: %s, not this test (remove this run from the log)", name, uses)
		}
		lp.op = -1
		if ok {
			lp.op = o
		}
	case strings.HasPrefix(body, "nThread "):
		// "nThread 1 nGpus 8 minBytes 8 maxBytes ..." (src/common.cu run)
		lp.threads, lp.gpus = 0, 0
		f := strings.Fields(body)
		for i := 0; i+1 < len(f); i += 2 {
			n, err := strconv.Atoi(f[i+1])
			if err != nil || n < 1 || n > 1<<20 {
				continue
			}
			switch f[i] {
			case "nThread":
				lp.threads = n
			case "nGpus":
				lp.gpus = n
			}
		}
	case strings.HasPrefix(body, "Using devices"):
		lp.done = len(lp.logs)
		lp.inDevs, lp.ranks, lp.devLine = true, 0, lp.ln
		clear(lp.hosts)
		lp.hostNum, lp.hostOf, lp.devOf, lp.devOK = map[string]int{}, nil, nil, true
	case lp.inDevs && strings.HasPrefix(body, "Rank"):
		// "Rank  0 Group  0 Pid  1234 on  host1 device  0 [0x..] NAME"
		// (NVIDIA/nccl-tests src/common.cu at d2d40cc8: "#  Rank %2d
		// Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s", the
		// last cudaDeviceProp's name; older versions print "[0x%02x]"
		// and no Group).
		f := strings.Fields(body)
		host, dev := -1, -1
		for i := range f {
			if f[i] == "on" && i+1 < len(f) {
				lp.hosts[f[i+1]] = true
				if _, ok := lp.hostNum[f[i+1]]; !ok {
					lp.hostNum[f[i+1]] = len(lp.hostNum)
				}
				host = lp.hostNum[f[i+1]]
			}
			if f[i] == "device" && i+1 < len(f) {
				if d, err := strconv.Atoi(f[i+1]); err == nil && d >= 0 && d < 1<<16 {
					dev = d
				}
			}
		}
		lp.devOK = lp.devOK && host >= 0 && dev >= 0
		lp.hostOf, lp.devOf = append(lp.hostOf, host), append(lp.devOf, dev)
		if lp.ranks == 0 {
			lp.device = ""
			if _, name, ok := strings.Cut(body, "] "); ok {
				lp.device = strings.TrimSpace(name)
			}
		}
		lp.ranks++
	case isHeader(body):
		lp.done = len(lp.logs)
		lp.inDevs = false
		l := Log{File: lp.name, Line: lp.ln, Op: lp.op, Threads: lp.threads, GPUsPerThread: lp.gpus}
		if lp.ranks > 0 {
			l.Ranks, l.Nodes, l.Device, l.DevicesLine = lp.ranks, len(lp.hosts), lp.device, lp.devLine
			if lp.devOK {
				l.RankHost, l.RankDevice = slices.Clone(lp.hostOf), slices.Clone(lp.devOf)
			}
		}
		lp.logs = append(lp.logs, l)
		lp.lastRow, lp.open, lp.perElt = 0, true, 0
	default:
		lp.inDevs = lp.inDevs && !strings.HasPrefix(body, "Avg bus")
		lp.endRun(body)
	}
	return nil
}

// endRun closes the run's table at its "Avg bus bandwidth" line (body,
// without the "#" a web page's copy may have dropped).
func (lp *logParser) endRun(body string) {
	if strings.HasPrefix(body, "Avg bus bandwidth") {
		lp.open = false
		lp.done = len(lp.logs)
	}
}

// damagedSize is the error of a line of an open table shaped as a row
// (seven or more fields ending in time, algbw, busbw and #wrong) whose
// size does not parse: it was dropped as noise ("6710886x4", a size past
// int64, "16e384"), and the fit lost the row without a word (qa22 M4).
func (lp *logParser) damagedSize(f []string) error {
	if !lp.open || len(f) < 7 {
		return nil
	}
	for _, x := range f[len(f)-4 : len(f)-1] {
		if _, err := strconv.ParseFloat(x, 64); err != nil {
			return nil
		}
	}
	if w := f[len(f)-1]; w != "N/A" {
		if _, err := strconv.ParseFloat(w, 64); err != nil {
			return nil
		}
	}
	return failAt(lp.name, lp.ln, lp.rowAt+1, "size %q is not a byte count (a damaged row: fix or remove it)", f[0])
}

// typeSizes are the bytes of each type nccl-tests names in its type
// column: test_typenames in src/common.cu (int8 … bfloat16 at d2d40cc8;
// "char" and "int" before NCCL 2; f8e4m3 and f8e5m2 in releases that test
// NCCL's fp8).
var typeSizes = map[string]int64{"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2, "float": 4, "double": 8,
	"bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1, "char": 1, "int": 4}

// typeNames lists typeSizes' names for messages, in test_typenames' order.
const typeNames = "int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2, char, int"

// checkCount refuses a row whose size is not its count of its type: the
// count (nccl-tests' paramcount, one rank's elements) times the type's
// bytes is the size for all-reduce, and times the ranks for all-gather,
// reduce-scatter and all-to-all (src/common.cu at NVIDIA/nccl-tests
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432, the commit BenchCount cites:
// setupArgs sets sendBytes and expectedBytes, and TimeTest prints
// max(sendBytes, expectedBytes) as the size column), as BenchSize
// multiplies; every row of a run has the same factor.
// It was taken unchecked ("32768 38192 float ...").
func (lp *logParser) checkCount(r Row, f []string) error {
	ts, ok := typeSizes[r.Type]
	col := func(i int) int { return lp.rowAt + fieldColumn(string(lp.raw[lp.rowAt:]), i) }
	if !ok {
		return failAt(lp.name, lp.ln, col(2), "type %q is not one nccl-tests prints (%s)", r.Type, typeNames)
	}
	if r.Size == 0 {
		return nil
	}
	want := lp.perElt
	switch {
	case lp.op == AllReduce:
		want = 1
	case lp.op >= 0 && lp.ranks > 0:
		want = int64(lp.ranks)
	}
	bytes := r.Count * ts
	if r.Count > 0 && bytes/ts == r.Count && int64(r.Size)%bytes == 0 && (want == 0 || int64(r.Size)/bytes == want) {
		lp.perElt = int64(r.Size) / bytes
		return nil
	}
	what := fmt.Sprintf("%d B", bytes)
	if want > 1 {
		what = fmt.Sprintf("%d B × %d ranks = %d B", bytes, want, bytes*want)
	}
	return failAt(lp.name, lp.ln, col(1), "count %d of %s (%d B) is %s, not the size %d B (the row was edited or is not nccl-tests' output: fix or remove it)", r.Count, r.Type, ts, what, int64(r.Size))
}

// row reads a line that is not a comment: a row of the current run when it
// starts with a number, else noise.
func (lp *logParser) row(line string) error {
	f := strings.Fields(line)
	if len(f) == 0 || len(lp.logs) == 0 {
		return nil
	}
	if _, err := strconv.ParseInt(f[0], 10, 64); err != nil {
		lp.endRun(line)
		return lp.damagedSize(f) // else noise from MPI, the scheduler or NCCL
	}
	r, err := parseRow(f)
	if err != nil {
		col := 0
		if fe := (*fieldError)(nil); errors.As(err, &fe) {
			col = lp.rowAt + fieldColumn(string(lp.raw[lp.rowAt:]), fe.field)
		}
		// A complete row that reports wrong results or was edited:
		// "(truncated log?)" pointed the user at the file instead of the
		// cluster.
		hint := " (truncated log?)"
		if errors.Is(err, errWrongResults) || errors.Is(err, errEditedRow) {
			hint = ""
		}
		return failAt(lp.name, lp.ln, col, "%v%s", err, hint)
	}
	r.Line = lp.ln
	if err := lp.checkCount(r, f); err != nil {
		return err
	}
	if r.Size == 0 {
		// nccl-tests prints a row of 0 bytes for every size below one
		// element per rank (all_gather_perf and reduce_scatter_perf from
		// -b 1, or -b 8 on 16 ranks): no data moved, nothing to fit
		// (parseRow takes its time unchecked, 0 included).
		return nil
	}
	cur := &lp.logs[len(lp.logs)-1]
	if n := len(cur.Rows); n > 0 && r.Size <= cur.Rows[n-1].Size {
		return failAt(lp.name, lp.ln, lp.rowAt+1, "size %d does not increase after %d on line %d (one run per header; are two logs interleaved?)", r.Size, cur.Rows[n-1].Size, lp.lastRow)
	}
	lp.lastRow = lp.ln
	cur.Rows = append(cur.Rows, r)
	return nil
}

// finish keeps the runs with rows and fills what their header left out
// (flush).
func (lp *logParser) finish() ([]Log, error) {
	if n := len(lp.logs); n > 0 && lp.open {
		lp.logs[n-1].Unfinished = true
	}
	if !slices.ContainsFunc(lp.logs, func(l Log) bool { return len(l.Rows) > 0 }) {
		return nil, lp.fail(max(lp.ln, 1), "no nccl-tests rows (is this all_reduce_perf, all_gather_perf or reduce_scatter_perf output?)")
	}
	if err := lp.flush(len(lp.logs)); err != nil {
		return nil, err
	}
	var out []Log
	for _, l := range lp.logs {
		if len(l.Rows) > 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

// untag strips the tag a launcher puts before every line of a rank's
// output: Open MPI's --tag-output "[1,0]<stdout>:" and srun --label's
// "0: ". nccl-tests prints its table from rank 0 only, so the tag is the
// same on every line of it.
func untag(line string) string {
	t := strings.TrimLeft(line, " ")
	if strings.HasPrefix(t, "[") {
		if i := strings.Index(t, "]<std"); i > 0 && strings.Trim(t[1:i], "0123456789,") == "" {
			if j := strings.Index(t[i:], ">:"); j > 0 {
				return t[i+j+2:]
			}
		}
		return line
	}
	if i := strings.Index(t, ": "); i > 0 && strings.Trim(t[:i], "0123456789") == "" {
		return t[i+2:]
	}
	return line
}

// opOfTest is the op of the nccl-tests binary s names (its
// program_invocation_short_name, "all_reduce_perf" or a build's
// "all_reduce_perf_mpi"); false for the tests zerosim does not model:
// broadcast, reduce, alltoallv, scatter, gather, sendrecv, hypercube
// (BIN_FILES_LIST in src/Makefile of NVIDIA/nccl-tests at
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432; src/util.cu line 624 prints
// the name as "# Collective test starting: %s").
func opOfTest(s string) (Op, bool) {
	switch {
	case strings.HasPrefix(s, "all_reduce"):
		return AllReduce, true
	case strings.HasPrefix(s, "all_gather"):
		return AllGather, true
	case strings.HasPrefix(s, "reduce_scatter"):
		return ReduceScatter, true
	case strings.HasPrefix(s, "alltoall_"): // not alltoallv_perf
		return AllToAll, true
	}
	return 0, false
}

func isHeader(body string) bool {
	f := strings.Fields(body)
	return len(f) >= 4 && f[0] == "size" && f[1] == "count" && strings.Contains(body, "time") && strings.Contains(body, "busbw")
}

// errWrongResults is a row's #wrong (or error) column saying the
// collective's results were wrong.
var errWrongResults = errors.New("the collective gave wrong results (fix the cluster before calibrating on it)")

// parseRow reads "size count type [redop [root]] time algbw busbw #wrong
// [time algbw busbw #wrong]".
func parseRow(f []string) (Row, error) {
	var r Row
	at := func(i int, err error) error { return &fieldError{i, err} }
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || size < 0 {
		return r, at(0, fmt.Errorf("size %q is not a byte count", f[0]))
	}
	r.Size = units.Bytes(size)
	if len(f) < 7 {
		return r, at(len(f), fmt.Errorf("row has %d columns, want size, count, type, time, algbw, busbw and #wrong", len(f)))
	}
	if r.Count, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return r, at(1, fmt.Errorf("count %q is not a number", f[1]))
	}
	r.Type = f[2]
	rest := f[3:]
	// Optional redop and root: the columns before the numbers.
	if len(rest) > 0 {
		if _, err := strconv.ParseFloat(rest[0], 64); err != nil {
			r.Redop, rest = rest[0], rest[1:]
			if len(rest) == 5 || len(rest) == 9 {
				rest = rest[1:] // the root (-1 for collectives without one)
			}
		}
	}
	base := len(f) - len(rest) // rest[k] is f[base+k]
	if len(rest) != 4 && len(rest) != 8 {
		return r, at(len(f), fmt.Errorf("row has %d time/algbw/busbw/#wrong columns, want 4 or 8", len(rest)))
	}
	num := func(s, what string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, fmt.Errorf("%s %q is not a non-negative number", what, s)
		}
		return v, nil
	}
	wrong := func(s string) error {
		if s == "N/A" || s == "0" {
			return nil
		}
		if strings.ContainsAny(s, ".e") {
			// nccl-tests before 2.10 printed the largest relative error
			// ("error" column, "5e-07"), not a count of wrong elements:
			// rounding of a float sum stays far below 1e-3.
			if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v < 1e-3 {
				return nil
			}
			return fmt.Errorf("error %q is not a rounding error: %w", s, errWrongResults)
		}
		if n, err := strconv.ParseUint(s, 10, 64); err != nil || n == 0 {
			return fmt.Errorf("#wrong %q is not a count", s)
		}
		return fmt.Errorf("#wrong is %s: %w", s, errWrongResults)
	}
	if r.Time, err = num(rest[0], "time"); err != nil {
		return r, at(base, err)
	}
	if r.AlgBW, err = num(rest[1], "algbw"); err != nil {
		return r, at(base+1, err)
	}
	if r.BusBW, err = num(rest[2], "busbw"); err != nil {
		return r, at(base+2, err)
	}
	if err := wrong(rest[3]); err != nil {
		return r, at(base+3, err)
	}
	if len(rest) == 8 {
		if r.InTime, err = num(rest[4], "in-place time"); err != nil {
			return r, at(base+4, err)
		}
		for i, w := range []string{"in-place algbw", "in-place busbw"} {
			if _, err := num(rest[5+i], w); err != nil {
				return r, at(base+5+i, err)
			}
		}
		if err := wrong(rest[7]); err != nil {
			return r, at(base+7, err)
		}
	}
	// A row of 0 bytes (below one element per rank) carries no time to
	// fit: NCCL discards an empty collective before it launches anything
	// (src/enqueue.cc taskAppend, "Empty collectives can be discarded",
	// line 3023 at NVIDIA/nccl 5067397c2676d5aed50042fc39e5c8ee96eb0027),
	// so nccl-tests' time there is its host loop's (src/common.cu lines
	// 727–772 at NVIDIA/nccl-tests a0b82b2260cf5152b9f8c061bbf7eaf0ba096432,
	// a wall-clock timer around startColl), and zerosim collective, which
	// does not model that loop, printed 0.00 (qauser33 M5: its own log was
	// refused as "truncated"). row skips it whatever its time.
	if r.Time == 0 && r.Size > 0 {
		return r, at(base, errors.New("time is 0"))
	}
	if err := timeMatchesAlgBW(r.Size, rest[0], rest[1], ""); err != nil {
		return r, at(base+1, err)
	}
	if len(rest) == 8 {
		if err := timeMatchesAlgBW(r.Size, rest[4], rest[5], "in-place "); err != nil {
			return r, at(base+5, err)
		}
	}
	r.ratio[0] = ratioBounds(rest[1], rest[2])
	r.ratio[1] = [2]float64{1, 0}
	if len(rest) == 8 {
		r.ratio[1] = ratioBounds(rest[5], rest[6])
	}
	return r, nil
}

// errEditedRow is a row whose time and algbw nccl-tests cannot have
// printed together.
var errEditedRow = errors.New("the row was edited or is not nccl-tests' output: fix or remove it")

// timeMatchesAlgBW checks that a row's algbw is its size over its time as
// printed: nccl-tests computes both from one measured deltaSec (algbw =
// bytes / 1e9 / deltaSec, src/*.cu GetBw) and prints each rounded by
// getFloatStr (2, 1 or 0 decimals, else exponent notation: src/util.cu
// at NVIDIA/nccl-tests a0b82b2260cf5152b9f8c061bbf7eaf0ba096432), so the
// two agree to within their last printed digits. A size of 0 (rows below
// one element per rank) has no bandwidth to check.
func timeMatchesAlgBW(size units.Bytes, timeStr, bwStr, what string) error {
	if size == 0 {
		return nil
	}
	t, err1 := strconv.ParseFloat(timeStr, 64)
	a, err2 := strconv.ParseFloat(bwStr, 64)
	if err1 != nil || err2 != nil || t <= 0 {
		return nil // checked by the caller
	}
	dt, da := halfULP(timeStr), halfULP(bwStr)
	// algbw in GB/s of size bytes in t µs: size / t / 1e3.
	lo := float64(size) / 1e3 / (t + dt)
	hi := math.Inf(1)
	if t > dt {
		hi = float64(size) / 1e3 / (t - dt)
	}
	const slack = 1e-9
	if a+da < lo*(1-slack) || a-da > hi*(1+slack) {
		return fmt.Errorf("%stime %s µs and %salgbw %s GB/s disagree: %d B in %s µs is %.4g GB/s: %w",
			what, timeStr, what, bwStr, int64(size), timeStr, float64(size)/1e3/t, errEditedRow)
	}
	return nil
}

// halfULP is half the unit of a printed number's last digit (0.005 for
// "12.34", 0.5 for "123", 5e+02 for "1.2e+04").
func halfULP(s string) float64 {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return 0
		}
		exp = e
	}
	dec := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		dec = len(mant) - i - 1
	}
	return 0.5 * math.Pow(10, float64(exp-dec))
}

// guessOp tells the collective of a log that does not name its test: no
// reduction op is an all-gather; with one, busbw/algbw is 2(n−1)/n ≥ 1 for
// an all-reduce and (n−1)/n < 1 for a reduce-scatter.
func guessOp(l *Log) (Op, error) {
	r := l.Rows[len(l.Rows)-1]
	if r.Redop == "none" || r.Redop == "" {
		return AllGather, nil
	}
	if r.AlgBW <= 0 {
		return 0, errors.New("cannot tell all-reduce from reduce-scatter (no bandwidth in the last row); keep the \"Collective test starting\" line")
	}
	if r.BusBW/r.AlgBW >= 1 {
		return AllReduce, nil
	}
	return ReduceScatter, nil
}

// ratioBounds is the interval busbw/algbw lies in given the two as
// printed (each rounded to its last digit, getFloatStr), {1, 0} (empty)
// when algbw may be 0.
func ratioBounds(algStr, busStr string) [2]float64 {
	a, err1 := strconv.ParseFloat(algStr, 64)
	b, err2 := strconv.ParseFloat(busStr, 64)
	da, db := halfULP(algStr), halfULP(busStr)
	if err1 != nil || err2 != nil || a-da <= 0 {
		return [2]float64{1, 0}
	}
	const slack = 1e-9
	return [2]float64{max(b-db, 0) / (a + da) * (1 - slack), (b + db) / (a - da) * (1 + slack)}
}

// MaxRanks is RanksMax when no row bounds the ranks from above.
const MaxRanks = 1 << 20

// ranksBounds sets l's RanksMin and RanksMax: the rank counts n whose
// busbw/algbw factor, 2(n−1)/n for an all-reduce and (n−1)/n for an
// all-gather or a reduce-scatter (nccl-tests src/all_reduce.cu
// AllReduceGetBw, src/all_gather.cu AllGatherGetBw, src/reduce_scatter.cu
// ReduceScatterGetBw at NVIDIA/nccl-tests
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432: busBw = algBw × factor, each
// printed rounded by getFloatStr, src/util.cu), lies within every row's
// printed ratio. The factor's steps shrink as 1/n², so one row of
// 2-decimal bandwidths near 20 GB/s allows 230 to 276 ranks
// (TestParseLogsRanksOfBusBW's 40.00/20.08 rows): the largest
// row alone, rounded (as read before), took 250 for a 256-rank log.
func ranksBounds(l *Log) {
	k := 1.0
	if l.Op == AllReduce {
		k = 2
	}
	lo, hi := 0.0, math.Inf(1)
	loLine, hiLine := 0, 0
	for _, r := range l.Rows {
		for _, b := range r.ratio {
			if b[0] > b[1] {
				continue
			}
			if b[0] > lo {
				lo, loLine = b[0], r.Line
			}
			if b[1] < hi {
				hi, hiLine = b[1], r.Line
			}
		}
	}
	if loLine == 0 && hiLine == 0 {
		return
	}
	// n = 1/(1 − ratio/k) grows with the ratio; n ≥ 2 has a ratio > 0.
	nOf := func(ratio float64) float64 {
		x := ratio / k
		if x >= 1 {
			return math.Inf(1)
		}
		return 1 / (1 - x)
	}
	nMin := max(2, int(math.Ceil(nOf(lo)-1e-9)))
	nMax := MaxRanks
	if n := nOf(hi); n < MaxRanks {
		nMax = int(math.Floor(n + 1e-9))
	}
	if nMin > nMax {
		return // no count fits every row: the ratio tells nothing
	}
	l.RanksMin, l.RanksMax, l.RanksMinLine, l.RanksMaxLine = nMin, nMax, loLine, hiLine
	if loLine == 0 {
		l.RanksMinLine = hiLine
	}
	if hiLine == 0 {
		l.RanksMaxLine = loLine
	}
}
