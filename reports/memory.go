package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/units"
)

// MemoryUnits selects the human unit of the memory tables.
type MemoryUnits int

const (
	// MemoryGiB prints binary prefixes (GiB = 2^30 B), the default.
	MemoryGiB MemoryUnits = iota
	// MemoryGB prints decimal prefixes (GB = 1e9 B).
	MemoryGB
)

// ParseMemoryUnits parses "gib" or "gb".
func ParseMemoryUnits(s string) (MemoryUnits, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "gib":
		return MemoryGiB, nil
	case "gb":
		return MemoryGB, nil
	}
	return 0, fmt.Errorf("units %q: use gib or gb", s)
}

func (u MemoryUnits) format(b int64) string {
	if u == MemoryGB {
		return units.Bytes(b).SI()
	}
	return units.Bytes(b).IEC()
}

func exact(b int64) string { return strconv.FormatInt(b, 10) }

func memoryTitle(r *memory.Report) string {
	s := fmt.Sprintf("# %s: ZeRO stage %d, N=%d K=%d (sharded over %d), estimator %s, convention %s",
		r.Scenario, r.Stage, r.N, r.K, r.Shards, r.Estimator, r.ConventionName)
	if r.Estimator == "zerosim" {
		s += fmt.Sprintf(", %s padding, rank %d", r.Padding, r.Rank)
	}
	return s
}

func fitsText(r *memory.Report, u MemoryUnits) string {
	if r.GPUMemory <= 0 {
		return "unknown (no gpu_memory)"
	}
	if r.Fits {
		return "yes, in " + u.format(r.GPUMemory)
	}
	return "NO, exceeds " + u.format(r.GPUMemory)
}

// WriteMemoryTable writes one table per report: every component at rest
// and at peak in exact bytes and in human units (u), the phase of each peak,
// the totals, whether the peak fits in the GPU memory, and the report's
// warnings. When there is more than one report a summary table follows.
func WriteMemoryTable(w io.Writer, rs []*memory.Report, u MemoryUnits) error {
	for i, r := range rs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := writeOneMemoryTable(w, r, u); err != nil {
			return err
		}
	}
	if len(rs) > 1 {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		return writeMemorySummary(w, rs, u)
	}
	return nil
}

func writeOneMemoryTable(w io.Writer, r *memory.Report, u MemoryUnits) error {
	if _, err := fmt.Fprintln(w, escapeControl(memoryTitle(r))); err != nil {
		return err
	}
	if r.NotApplicable != "" {
		_, err := fmt.Fprintf(w, "n/a: %s\n", r.NotApplicable)
		return err
	}
	t := newTable(w, 9, 0, 5, 7)
	t.Header([]string{"component", "at rest (B)", "at rest", "peak (B)", "peak", "peak phase", "at total peak (B)", "note"})
	for _, c := range r.Components {
		phase := c.PeakPhase.String()
		if c.Peak == 0 {
			phase = "-"
		}
		if err := t.Append([]string{c.Name, exact(c.AtRest), u.format(c.AtRest), exact(c.Peak), u.format(c.Peak),
			phase, exact(c.AtTotalPeak), c.Note}); err != nil {
			return err
		}
	}
	t.Footer([]string{"total", exact(r.AtRest), u.format(r.AtRest), exact(r.Peak), u.format(r.Peak), r.PeakPhase.String(), exact(r.Peak), ""})
	if err := t.Render(); err != nil {
		return err
	}
	peakAt := r.PeakPhase.String()
	if r.PeakUnit >= 0 && r.PeakUnit < len(r.Units) {
		peakAt += fmt.Sprintf(", unit %d %q", r.PeakUnit, r.Units[r.PeakUnit].Name)
	}
	if _, err := fmt.Fprintf(w, "peak %s (%s B) in %s; fits: %s\n", u.format(r.Peak), exact(r.Peak), peakAt, fitsText(r, u)); err != nil {
		return err
	}
	if r.Reserved > 0 {
		if _, err := fmt.Fprintf(w, "as a profiler sees it: allocated %s, reserved %s (caching allocator), device %s (+ CUDA context, NCCL buffers)\n",
			u.format(r.Peak), u.format(r.Reserved), u.format(r.Device)); err != nil {
			return err
		}
	}
	var phases []string
	for _, pp := range r.PhasePeaks {
		if pp.Phase != memory.PhaseRest && r.Estimator == "zerosim" {
			phases = append(phases, fmt.Sprintf("%s %s", pp.Phase, u.format(pp.Bytes)))
		}
	}
	if len(phases) > 0 {
		if _, err := fmt.Fprintf(w, "phase peaks: %s\n", strings.Join(phases, ", ")); err != nil {
			return err
		}
	}
	if err := writeHostMemory(w, r, u); err != nil {
		return err
	}
	for _, msg := range r.Warnings {
		if _, err := fmt.Fprintf(w, "warning: %s\n", escapeControl(msg)); err != nil {
			return err
		}
	}
	return writeDeepSpeedOffload(w, r, u)
}

func writeMemorySummary(w io.Writer, rs []*memory.Report, u MemoryUnits) error {
	if _, err := fmt.Fprintln(w, "# summary (bytes per GPU)"); err != nil {
		return err
	}
	t := newTable(w, 9, 1, 2, 7, 8)
	t.Header([]string{"stage", "estimator", "convention", "at rest (B)", "at rest", "peak (B)", "peak", "peak phase", "fits"})
	for _, r := range rs {
		row := []string{strconv.Itoa(r.Stage), r.Estimator, r.ConventionName}
		if r.NotApplicable != "" {
			row = append(row, "n/a", "n/a", "n/a", "n/a", "-", "-")
		} else {
			fits := "no"
			switch {
			case r.GPUMemory <= 0:
				fits = "?"
			case r.Fits:
				fits = "yes"
			}
			row = append(row, exact(r.AtRest), u.format(r.AtRest), exact(r.Peak), u.format(r.Peak), r.PeakPhase.String(), fits)
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// WriteMemoryJSON writes the reports as an indented JSON array with exact
// integer bytes (memoryJSON).
func WriteMemoryJSON(w io.Writer, rs []*memory.Report) error {
	out := make([]*memoryJSON, len(rs))
	for i, r := range rs {
		out[i] = newMemoryJSON(r)
	}
	return writeJSON(w, out)
}

// WriteMemoryCSV writes one row per report and component with exact bytes.
func WriteMemoryCSV(w io.Writer, rs []*memory.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"scenario", "stage", "estimator", "convention", "component", "at_rest_bytes", "peak_bytes", "peak_phase", "at_total_peak_bytes"}); err != nil {
		return err
	}
	for _, r := range rs {
		base := []string{r.Scenario, strconv.Itoa(r.Stage), r.Estimator, r.ConventionName}
		for _, c := range r.Components {
			if err := cw.Write(append(append([]string{}, base...), c.Name, exact(c.AtRest), exact(c.Peak), c.PeakPhase.String(), exact(c.AtTotalPeak))); err != nil {
				return err
			}
		}
		if err := cw.Write(append(append([]string{}, base...), "total", exact(r.AtRest), exact(r.Peak), r.PeakPhase.String(), exact(r.Peak))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
