package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// CollectiveReport is the result of `zerosim collective`: one row per
// buffer size, in nccl-tests' conventions.
type CollectiveReport struct {
	// Zerosim and ScenarioSHA256 say what made the report (the scenario
	// gives the cluster), as plan.json does (QA25 M3).
	Zerosim        Build  `json:"zerosim"`
	ScenarioSHA256 string `json:"scenario_sha256,omitempty"`
	Op             string `json:"op"`
	Algorithm      string `json:"algorithm"` // as requested (auto, ring, …)
	// Timing names what timed an auto collective (collectives.Model.Tuner:
	// NCCL's or RCCL's cost model); "" for an explicit algorithm.
	Timing string `json:"timing,omitempty"`
	// Cluster describes the links in one line.
	Cluster string `json:"cluster"`
	Group   []int  `json:"group"`
	// Nodes[i] is the node of Group[i]; Local[i] its GPU index there.
	Nodes []int `json:"nodes,omitempty"`
	Local []int `json:"local,omitempty"`
	// Groups is how many groups like Group ran at once (1 unless
	// --concurrent); times are the last one's, bytes the sum.
	Groups int `json:"groups"`
	// GPUsPerThread is how many GPUs one host thread drove
	// (--gpus-per-thread, nccl-tests -g); 0 or 1: one per process.
	GPUsPerThread int `json:"gpus_per_thread,omitempty"`
	// Classes names the link classes of the byte columns, in order.
	Classes []string `json:"classes"`
	// Vendor is the GPU's maker: the byte columns name the intra-node
	// class in its words ("xgmi wire" on AMD, Vendor.class); Classes and
	// the CSV and JSON keys keep topology's names.
	Vendor Vendor          `json:"-"`
	Rows   []CollectiveRow `json:"rows"`
	// Notes are said under the table (a size where NCCL's choice is not
	// the fastest the model times).
	Notes []string `json:"notes,omitempty"`
	// Wide makes the terminal table show the busiest rank's bytes and every
	// byte count exact (--wide); by default the wire bytes are in human
	// units and the table keeps to 120 columns.
	Wide bool `json:"-"`
}

// CollectiveRow is one collective run.
type CollectiveRow struct {
	// Size is nccl-tests' size in bytes (all-gather output, reduce-scatter
	// input); Count is elements of 2 bytes.
	Size      int64  `json:"size_bytes"`
	Count     int64  `json:"count"`
	Algorithm string `json:"algorithm"` // resolved
	// TimePS is the simulated time in picoseconds.
	TimePS int64 `json:"time_ps"`
	// ClosedFormPS is the alpha–beta time of one group alone (equal to
	// TimePS unless concurrent groups contend).
	ClosedFormPS int64 `json:"closed_form_ps"`
	// AlgBW = Size/time and BusBW = AlgBW·(n−1)/n (reduce-scatter,
	// all-gather) or ·2(n−1)/n (all-reduce), both in GB/s (1e9 B/s).
	AlgBW float64 `json:"algbw_gbps"`
	BusBW float64 `json:"busbw_gbps"`
	// Bytes per link class, in Classes order.
	Bytes []ClassBytes `json:"bytes"`
	// Channels is NCCL's channel{Lo..Hi} of the collective, for the
	// nccl-tests format's TUNING lines; nil where the model does not know
	// it.
	Channels []int `json:"-"`
}

// ClassBytes is the wire bytes of one link class.
type ClassBytes struct {
	Class string `json:"class"`
	// Total is every byte sent over links of the class.
	Total int64 `json:"total"`
	// MaxPerRank is the busiest rank's bytes sent over the class.
	MaxPerRank int64 `json:"max_per_rank"`
}

// Micros formats picoseconds as microseconds with 2 decimals, exactly.
func Micros(ps int64) string {
	neg := ps < 0
	if neg {
		ps = -ps
	}
	q, r := ps/1e6, ps%1e6
	// round half up to 2 decimals: r is in millionths of a µs.
	cents := (r + 5000) / 10000
	if cents == 100 {
		q, cents = q+1, 0
	}
	s := fmt.Sprintf("%d.%02d", q, cents)
	if neg {
		s = "-" + s
	}
	return s
}

func gbps(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func (r *CollectiveReport) header() []string {
	h := []string{"size (B)", "count", "algo", "time (us)", "algbw (GB/s)", "busbw (GB/s)"}
	for _, c := range r.Classes {
		c = r.Vendor.classKey(c)
		if r.Wide {
			h = append(h, c+" B", c+" B/rank")
		} else {
			h = append(h, c+" wire")
		}
	}
	return h
}

// cells is one table row: size and count as nccl-tests prints them, the
// wire bytes exact with separators (wide) or in binary units.
func (row *CollectiveRow) cells(wide bool) []string {
	c := []string{
		strconv.FormatInt(row.Size, 10), strconv.FormatInt(row.Count, 10), row.Algorithm,
		Micros(row.TimePS), gbps(row.AlgBW), gbps(row.BusBW),
	}
	for _, b := range row.Bytes {
		if wide {
			c = append(c, commas(b.Total), commas(b.MaxPerRank))
		} else {
			c = append(c, iec(b.Total))
		}
	}
	return c
}

// algorithmText is the algorithm as asked, with what timed it under auto.
func (r *CollectiveReport) algorithmText() string {
	if r.Timing != "" {
		return r.Algorithm + ": " + r.Timing
	}
	return r.Algorithm
}

// WriteCollectiveTable writes r as a terminal table after a one-line
// description of the run.
func WriteCollectiveTable(w io.Writer, r *CollectiveReport) error {
	at := ""
	if r.Groups > 1 {
		at = fmt.Sprintf(" (%d groups at once)", r.Groups)
	}
	if _, err := fmt.Fprintf(w, "# %s (%s) over %d ranks%s on %s\n", r.Op, r.algorithmText(), len(r.Group), at, r.Cluster); err != nil {
		return err
	}
	t := newTable(w, len(r.header()), 2)
	t.Header(r.header())
	for i := range r.Rows {
		if err := t.Append(r.Rows[i].cells(r.Wide)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// WriteCollectiveJSON writes r as indented JSON.
func WriteCollectiveJSON(w io.Writer, r *CollectiveReport) error {
	return writeJSON(w, r)
}

// WriteCollectiveCSV writes one CSV row per size with exact integers
// (time in picoseconds).
func WriteCollectiveCSV(w io.Writer, r *CollectiveReport) error {
	cw := csv.NewWriter(w)
	h := []string{"op", "size_bytes", "count", "algorithm", "time_ps", "closed_form_ps", "algbw_gbps", "busbw_gbps"}
	for _, c := range r.Classes {
		h = append(h, c+"_bytes", c+"_bytes_max_per_rank")
	}
	if err := cw.Write(h); err != nil {
		return err
	}
	for _, row := range r.Rows {
		rec := []string{r.Op, strconv.FormatInt(row.Size, 10), strconv.FormatInt(row.Count, 10), row.Algorithm,
			strconv.FormatInt(row.TimePS, 10), strconv.FormatInt(row.ClosedFormPS, 10), gbps(row.AlgBW), gbps(row.BusBW)}
		for _, b := range row.Bytes {
			rec = append(rec, strconv.FormatInt(b.Total, 10), strconv.FormatInt(b.MaxPerRank, 10))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
