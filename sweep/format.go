package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Format is the encoding of sweep rows: CSV with a header line, or JSON
// Lines. Every row is exactly one line, written with one Write call, so a
// killed sweep leaves at most one partial line.
type Format int

const (
	CSV Format = iota
	JSONL
)

// Name is the format's name in messages: "CSV", "JSON Lines".
func (f Format) Name() string {
	if f == JSONL {
		return "JSON Lines"
	}
	return "CSV"
}

func (f Format) String() string {
	if f == JSONL {
		return "jsonl"
	}
	return "csv"
}

// measureColumns are the CSV columns after the point's key values: the
// whole numbers (up to peak_memory_bytes and device_peak_bytes), the two
// rates, the two verdicts, how the reserve was obtained and the simulated
// allocator's retries (empty where it is not simulated), and the error.
var measureColumns = []string{"step_time_ps", "exposed_comm_ps", "network_bytes", "nvlink_bytes", "peak_memory_bytes", "device_peak_bytes",
	"tokens_per_s_per_gpu", "mfu", "fits", "device_fits", "reserved_mode", "allocator_retries", "error"}

// intColumns is how many of measureColumns are whole numbers.
const intColumns = 6

// Header returns the CSV header line (with its newline) for keys, or "" for
// JSONL.
func Header(f Format, keys []string) string {
	if f == JSONL {
		return ""
	}
	cols := append(append([]string{"index"}, keys...), measureColumns...)
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(cols)
	w.Flush()
	return b.String()
}

// jsonRow is the JSON Lines form of a row. An invalid point's figures
// are null (its CSV cells empty): written as 0 they sorted as the fastest
// rows in a spreadsheet (QA22 L11); a null or empty cell sorts last in
// pandas, R and spreadsheets.
type jsonRow struct {
	Index        int               `json:"index"`
	Point        map[string]string `json:"point"`
	StepTime     *int64            `json:"step_time_ps"`
	ExposedComm  *int64            `json:"exposed_comm_ps"`
	NetworkBytes *int64            `json:"network_bytes"`
	NVLinkBytes  *int64            `json:"nvlink_bytes"`
	PeakMemory   *int64            `json:"peak_memory_bytes"`
	DevicePeak   *int64            `json:"device_peak_bytes"`
	TokensPerSec *float64          `json:"tokens_per_s_per_gpu"`
	MFU          *float64          `json:"mfu"`
	Fits         *bool             `json:"fits"`
	DeviceFits   *bool             `json:"device_fits"`
	ReservedMode string            `json:"reserved_mode,omitempty"`
	AllocRetries *int              `json:"allocator_retries,omitempty"`
	Error        string            `json:"error,omitempty"`
}

// TokensPerSec rounds a rate to 3 decimals, as every output of zerosim
// gives it, so rows print the same on every platform.
func TokensPerSec(v float64) float64 { return math.Round(v*1000) / 1000 }

// FormatTokensPerSec is a tokens/s per GPU as every CSV of zerosim writes
// it (sweep's rows, plan.csv, compare's): 3 decimals, trailing zeros kept,
// so a join on the text of two files matches (sweep wrote 10747.83 where
// plan.csv wrote 10747.830).
func FormatTokensPerSec(v float64) string {
	return strconv.FormatFloat(TokensPerSec(v), 'f', 3, 64)
}

// MFUDecimals is the decimals of an MFU in every CSV zerosim writes
// (sweep's rows, plan.csv, compare's), so one configuration's MFU reads the
// same in each.
const MFUDecimals = 5

// mfu rounds an MFU to MFUDecimals decimals, so rows print the same on
// every platform.
func mfu(v float64) float64 { return math.Round(v*1e5) / 1e5 }

// FormatMFU is an MFU as every CSV of zerosim writes it: MFUDecimals
// decimals.
func FormatMFU(v float64) string { return strconv.FormatFloat(mfu(v), 'f', MFUDecimals, 64) }

// Encoder writes rows.
type Encoder struct {
	w    io.Writer
	f    Format
	keys []string
	buf  bytes.Buffer
}

// NewEncoder returns an encoder of rows whose Values follow keys.
func NewEncoder(w io.Writer, f Format, keys []string) *Encoder {
	return &Encoder{w: w, f: f, keys: keys}
}

// WriteHeader writes the prelude of an output: the meta line m (which
// sweep the rows belong to) and, for CSV, the column header.
func (e *Encoder) WriteHeader(m Meta) error {
	if _, err := io.WriteString(e.w, Prelude(e.f, m, e.keys)); err != nil {
		return fmt.Errorf("sweep: writing the header: %w", err)
	}
	return nil
}

// Line returns the encoded line of r, newline included.
func (e *Encoder) Line(r Row) ([]byte, error) {
	if len(r.Values) != len(e.keys) {
		return nil, fmt.Errorf("sweep: row %d has %d values for %d keys", r.Index, len(r.Values), len(e.keys))
	}
	e.buf.Reset()
	valid := r.Err == ""
	i64 := func(v int64) *int64 {
		if !valid {
			return nil
		}
		return &v
	}
	f64 := func(v float64) *float64 {
		if !valid {
			return nil
		}
		return &v
	}
	// An invalid point was not evaluated: its fits and device_fits are
	// null (empty in CSV), not false, which a filter on fits == false read
	// as "does not fit" (QA29 #9).
	bp := func(v bool) *bool {
		if !valid {
			return nil
		}
		return &v
	}
	if e.f == JSONL {
		jr := jsonRow{Index: r.Index, Point: map[string]string{}, StepTime: i64(r.StepTime), ExposedComm: i64(r.ExposedComm),
			NetworkBytes: i64(r.NetworkBytes), NVLinkBytes: i64(r.NVLinkBytes), PeakMemory: i64(r.PeakMemory), DevicePeak: i64(r.DevicePeak),
			TokensPerSec: f64(TokensPerSec(r.TokensPerSecPerGPU)), MFU: f64(mfu(r.MFU)), Fits: bp(r.Fits), DeviceFits: bp(r.DeviceFits),
			ReservedMode: r.ReservedMode, AllocRetries: r.AllocRetries, Error: oneLine(r.Err)}
		for i, k := range e.keys {
			jr.Point[k] = r.Values[i]
		}
		enc := json.NewEncoder(&e.buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(jr); err != nil {
			return nil, fmt.Errorf("sweep: row %d: %w", r.Index, err)
		}
		return e.buf.Bytes(), nil
	}
	cols := make([]string, 0, 1+len(r.Values)+len(measureColumns))
	cols = append(cols, strconv.Itoa(r.Index))
	for _, v := range r.Values {
		cols = append(cols, oneLine(v))
	}
	figures := []string{"", "", "", "", "", "", "", ""} // an invalid point's
	if valid {
		is := func(v int64) string { return strconv.FormatInt(v, 10) }
		figures = []string{is(r.StepTime), is(r.ExposedComm), is(r.NetworkBytes), is(r.NVLinkBytes), is(r.PeakMemory), is(r.DevicePeak),
			FormatTokensPerSec(r.TokensPerSecPerGPU), FormatMFU(r.MFU)}
	}
	cols = append(cols, figures...)
	fits := []string{"", ""}
	if valid {
		fits = []string{strconv.FormatBool(r.Fits), strconv.FormatBool(r.DeviceFits)}
	}
	cols = append(cols, fits...)
	cols = append(cols, r.ReservedMode, FormatRetries(r.AllocRetries), oneLine(r.Err))
	w := csv.NewWriter(&e.buf)
	if err := w.Write(cols); err != nil {
		return nil, fmt.Errorf("sweep: row %d: %w", r.Index, err)
	}
	w.Flush()
	return e.buf.Bytes(), w.Error()
}

// FormatRetries is an allocator_retries column as every CSV of zerosim
// writes it (sweep's rows, plan.csv, memory's): the count, or empty where
// the reserve is not simulated.
func FormatRetries(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// Write writes one row as one line.
func (e *Encoder) Write(r Row) error {
	line, err := e.Line(r)
	if err != nil {
		return err
	}
	if _, err := e.w.Write(line); err != nil {
		return fmt.Errorf("sweep: writing row %d: %w", r.Index, err)
	}
	return nil
}

// parseRow checks one complete row line (no newline) of the sweep over sp
// and returns its point index: every column present, the index a point of
// the sweep, the values that point's, the measures numbers.
func parseRow(f Format, line []byte, sp *Space) (int, error) {
	var idx string
	var values, measures, rates []string
	var retries string
	// invalid: an error row, whose figures are empty (null); rows written
	// before (0s) read too.
	invalid := false
	if f == JSONL {
		var v struct {
			Index        *json.Number      `json:"index"`
			Point        map[string]string `json:"point"`
			StepTime     *json.Number      `json:"step_time_ps"`
			ExposedComm  *json.Number      `json:"exposed_comm_ps"`
			NetworkBytes *json.Number      `json:"network_bytes"`
			NVLinkBytes  *json.Number      `json:"nvlink_bytes"`
			PeakMemory   *json.Number      `json:"peak_memory_bytes"`
			DevicePeak   *json.Number      `json:"device_peak_bytes"`
			TokensPerSec *json.Number      `json:"tokens_per_s_per_gpu"`
			MFU          *json.Number      `json:"mfu"`
			Fits         *bool             `json:"fits"`
			DeviceFits   *bool             `json:"device_fits"`
			ReservedMode string            `json:"reserved_mode"`
			AllocRetries *json.Number      `json:"allocator_retries"`
			Error        string            `json:"error"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return 0, fmt.Errorf("not a JSON row: %v", err)
		}
		if v.Index == nil {
			return 0, fmt.Errorf("no \"index\" field")
		}
		invalid = v.Error != ""
		for _, n := range []*json.Number{v.StepTime, v.ExposedComm, v.NetworkBytes, v.NVLinkBytes, v.PeakMemory, v.DevicePeak, v.TokensPerSec, v.MFU} {
			if !invalid && (n == nil || v.Fits == nil || v.DeviceFits == nil) {
				return 0, fmt.Errorf("a field is missing (a row has index, point, %s)", strings.Join(measureColumns[:intColumns+4], ", "))
			}
		}
		str := func(n *json.Number) string {
			if n == nil {
				return ""
			}
			return n.String()
		}
		for _, n := range []*json.Number{v.StepTime, v.ExposedComm, v.NetworkBytes, v.NVLinkBytes, v.PeakMemory, v.DevicePeak} {
			measures = append(measures, str(n))
		}
		rates = []string{str(v.TokensPerSec), str(v.MFU)}
		if v.AllocRetries != nil {
			retries = v.AllocRetries.String()
		}
		idx = v.Index.String()
		if len(v.Point) != len(sp.Grids) {
			return 0, fmt.Errorf("the point has %d values for %d grids", len(v.Point), len(sp.Grids))
		}
		for _, g := range sp.Grids {
			val, ok := v.Point[g.Key]
			if !ok {
				return 0, fmt.Errorf("the point has no value for %s", g.Key)
			}
			values = append(values, val)
		}
	} else {
		rec, err := csv.NewReader(bytes.NewReader(line)).Read()
		if err != nil {
			return 0, fmt.Errorf("not a CSV row: %v", err)
		}
		if want := 1 + len(sp.Grids) + len(measureColumns); len(rec) != want {
			return 0, fmt.Errorf("%d columns, want %d", len(rec), want)
		}
		idx, values = rec[0], rec[1:1+len(sp.Grids)]
		m := rec[1+len(sp.Grids):]
		measures, rates = m[:intColumns], m[intColumns:intColumns+2]
		retries = m[intColumns+5]
		invalid = m[intColumns+6] != ""
		for _, c := range []int{intColumns + 2, intColumns + 3} {
			// An invalid point's are empty (rows written before: false).
			if invalid && m[c] == "" {
				continue
			}
			if _, err := strconv.ParseBool(m[c]); err != nil {
				return 0, fmt.Errorf("%s %q is not true or false", measureColumns[c], m[c])
			}
		}
	}
	i, err := strconv.Atoi(strings.TrimSpace(idx))
	if err != nil || i < 0 {
		return 0, fmt.Errorf("index %q is not a point index", idx)
	}
	if i >= sp.Len() {
		return 0, fmt.Errorf("index %d is not a point of this sweep of %d points", i, sp.Len())
	}
	for _, m := range measures {
		if m == "" && invalid {
			continue
		}
		if _, err := strconv.ParseInt(m, 10, 64); err != nil {
			return 0, fmt.Errorf("point %d: %q is not a whole number", i, m)
		}
	}
	if n, err := strconv.Atoi(retries); retries != "" && (err != nil || n < 0) {
		return 0, fmt.Errorf("point %d: allocator_retries %q is not a count", i, retries)
	}
	for k, rate := range rates {
		if rate == "" && invalid {
			continue
		}
		if r, err := strconv.ParseFloat(rate, 64); err != nil || r < 0 || math.IsInf(r, 0) {
			return 0, fmt.Errorf("point %d: %s %q is not a rate", i, []string{"tokens/s", "mfu"}[k], rate)
		}
	}
	if want := sp.Point(i).Values; !slices.Equal(values, want) {
		return 0, fmt.Errorf("point %d holds values %q, but this sweep's point %d is %q", i, values, i, want)
	}
	return i, nil
}
