package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
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
	s := fmt.Sprintf("# %s: ZeRO stage %d, N=%d K=%d (sharded over %d)", r.Scenario, r.Stage, r.N, r.K, r.Shards)
	// The estimator, the seeds' conventions and the padding rules are named
	// only when they are not the default.
	if r.Estimator != "zerosim" {
		s += ", estimator " + r.Estimator
	}
	switch {
	case r.Estimator != "zerosim":
		s += ", counting " + r.ConventionName
	case r.ConventionName != "zerosim":
		s += ", convention " + r.ConventionName
	}
	if r.Estimator == "zerosim" {
		if r.Padding != "toy" {
			s += ", " + r.Padding + " padding"
		}
		s += fmt.Sprintf(", rank %d", r.Rank)
	}
	return s
}

func fitsText(r *memory.Report, u MemoryUnits, v Vendor) string {
	if r.GPUMemory <= 0 {
		return "unknown (no gpu_memory)"
	}
	capacity := u.format(r.GPUMemory)
	if r.GPUMemoryUsable {
		// The capacity CUDA exposes (scenarios.GPUPreset.Usable), not
		// the driver's total.
		capacity += " usable"
	}
	if r.Fits {
		return "yes, in " + capacity
	}
	if fragmentationOOM(r.AllocSim, r.Peak, r.Need, r.GPUMemory) {
		return fmt.Sprintf("NO, in %s the simulated caching allocator runs out of memory (fragmentation: a request of %s, see the warning)", capacity, u.format(r.AllocSim.OOM.Size))
	}
	if r.Peak <= r.GPUMemory && r.Need > r.GPUMemory {
		return fmt.Sprintf("NO, the device needs %s of %s (the allocated peak with %s)", u.format(r.Need), capacity, v.extras())
	}
	return "NO, exceeds " + capacity
}

// WriteMemoryTable writes the reports in human units u within 120
// columns, every report's table (WriteMemoryReport with detail).
func WriteMemoryTable(w io.Writer, rs []*memory.Report, u MemoryUnits) error {
	return WriteMemoryReport(w, rs, MemoryStyle{Units: u}, true)
}

// WriteMemoryReport writes, for more than one report, a summary first
// (peak and at rest per stage and estimator); then, with detail or for a
// single report, one table per report: every component at rest and at peak,
// the phase of each peak, the totals, whether the peak fits in the GPU
// memory, and the report's warnings. st.Wide adds the exact bytes.
func WriteMemoryReport(w io.Writer, rs []*memory.Report, st MemoryStyle, detail bool) error {
	ew := &errWriter{w: w}
	if len(rs) > 1 {
		if err := writeMemorySummary(ew, rs, st); err != nil {
			return err
		}
		if !detail {
			// The tables that would say why a stage is not laid out
			// are not printed: the summary says it.
			for _, r := range rs {
				if r.NotLaidOut {
					fmt.Fprintf(ew, "n/a: %s\n", EscapeControl(r.NotApplicable))
				}
			}
			fmt.Fprintf(ew, "(%d tables, one per stage and estimator, with --detail)\n", len(rs))
			return ew.err
		}
		fmt.Fprintln(ew)
	}
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		if err := writeOneMemoryTable(ew, r, st); err != nil {
			return err
		}
	}
	return ew.err
}

// memoryNoteWidth wraps the note column so the table keeps to 120 columns.
const memoryNoteWidth = 44

func writeOneMemoryTable(w io.Writer, r *memory.Report, st MemoryStyle) error {
	u := st.Units
	if _, err := fmt.Fprintln(w, EscapeControl(memoryTitle(r))); err != nil {
		return err
	}
	if r.NotApplicable != "" {
		_, err := fmt.Fprintf(w, "n/a: %s\n", r.NotApplicable)
		return err
	}
	head := []string{"component", "at rest", "peak", "peak phase", "note"}
	row := func(name string, atRest, peak int64, phase string, atTotal int64, note string) []string {
		return []string{name, u.format(atRest), u.format(peak), phase, note}
	}
	if st.Wide {
		head = []string{"component", "at rest (B)", "at rest", "peak (B)", "peak", "peak phase", "at total peak (B)", "note"}
		row = func(name string, atRest, peak int64, phase string, atTotal int64, note string) []string {
			return []string{name, commas(atRest), u.format(atRest), commas(peak), u.format(peak), phase, commas(atTotal), note}
		}
	}
	t := newTable(w, len(head), 0, len(head)-3, len(head)-1)
	if !st.Wide {
		t = newTable(w, len(head), 0, 3, 4)
		wrapColumn(t, 4, memoryNoteWidth)
	}
	t.Header(head)
	for _, c := range r.Components {
		phase := c.PeakPhase.String()
		if c.Peak == 0 {
			phase = "-"
		}
		if err := t.Append(row(st.Vendor.compName(c.Name), c.AtRest, c.Peak, phase, c.AtTotalPeak, c.Note)); err != nil {
			return err
		}
	}
	total := ""
	if st.Replayed {
		total = walkVsReplay(r.Peak, st.ReplayPeak, u)
	}
	t.Footer(row("total", r.AtRest, r.Peak, r.PeakPhase.String(), r.Peak, total))
	if err := t.Render(); err != nil {
		return err
	}
	peakAt := "in " + r.PeakPhase.String()
	if r.PeakPhase == memory.PhaseRest {
		peakAt = r.PeakPhase.String() // "at rest", not "in at rest"
	}
	if r.PeakUnit >= 0 && r.PeakUnit < len(r.Units) {
		peakAt += fmt.Sprintf(", unit %d %q", r.PeakUnit, r.Units[r.PeakUnit].Name)
	}
	notes := memoryNotes(r, u, st.Vendor, !st.Replayed)
	if st.Replayed {
		notes = replayedNotes(fmt.Sprintf("%s (%s B) %s", u.format(r.Peak), commas(r.Peak), peakAt), notes)
	} else {
		notes = append([]string{fmt.Sprintf("peak %s (%s B) %s; fits: %s", u.format(r.Peak), commas(r.Peak), peakAt, fitsText(r, u, st.Vendor))}, notes...)
	}
	for _, l := range notes {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	if err := writeHostMemory(w, r, u); err != nil {
		return err
	}
	for _, msg := range r.Warnings {
		if st.Replayed && msg == r.RoomWarning {
			continue // the run's verdict says it by the replay's figures (FitVerdict)
		}
		if _, err := fmt.Fprintf(w, "warning: %s\n", EscapeControl(msg)); err != nil {
			return err
		}
	}
	return writeDeepSpeedOffload(w, r, st)
}

// overheadLine names the allocator overhead a report's reserved peak takes
// and where it came from, when the scenario or a calibration set it:
// "allocator overhead 0.2, from memory.allocator_overhead"; "" for the
// default or a simulated reserve.
func overheadLine(r *memory.Report) string {
	if r == nil || r.OverheadFrom == "" {
		return ""
	}
	return fmt.Sprintf("allocator overhead %s, from %s", strconv.FormatFloat(r.Overhead, 'f', -1, 64), r.OverheadFrom)
}

// memoryNotes are the lines under a memory table, in the text report and
// on the HTML page alike: with profiler, the peak as a profiler sees it
// (allocated, reserved, device) and the allocator overhead's source, which
// a replay that follows the table gives instead (run's header); and the
// peak of each phase.
func memoryNotes(r *memory.Report, u MemoryUnits, v Vendor, profiler bool) []string {
	var l []string
	if profiler && r.Reserved > 0 {
		pool := ""
		if r.AllocSim != nil {
			pool = "; " + r.AllocSim.Describe()
		}
		if r.GatherPoolHeld > 0 {
			pool = fmt.Sprintf("; %s of it %s, memory.host_lead", u.format(r.GatherPoolHeld), r.GatherPoolName)
			if r.GatherPoolOneLayer {
				pool = fmt.Sprintf("; %s of it %s, one layer: the host syncs in every attention layer (%s)", u.format(r.GatherPoolHeld), r.GatherPoolName, r.GatherPoolOneLayerWhy)
			}
		}
		// Capped at the GPU when only the reserve exceeds it
		// (memory.SeenPeaks, qamem33 M1).
		reserved, device := r.Reserved, r.Device
		if r.Need > 0 {
			var capped bool
			if reserved, device, capped = memory.SeenPeaks(r.Reserved, r.Device, r.Need, r.GPUMemory); capped {
				pool += fmt.Sprintf("; capped at the GPU: its usual reserve would need %s, so it releases its cache and retries", u.format(r.Reserved))
			}
		}
		l = append(l, fmt.Sprintf("as a profiler sees it: allocated %s, reserved %s (caching allocator%s), device %s (+ %s, %s buffers%s)",
			u.format(r.Peak), u.format(reserved), pool, u.format(device), v.context(), v.lib(), v.contextSource(r.Component(memory.CompRuntime).AtRest > 0)))
		if o := overheadLine(r); o != "" {
			l = append(l, o)
		}
	}
	var phases []string
	for _, pp := range r.PhasePeaks {
		if pp.Phase != memory.PhaseRest && r.Estimator == "zerosim" {
			phases = append(phases, fmt.Sprintf("%s %s", pp.Phase, u.format(pp.Bytes)))
		}
	}
	if len(phases) > 0 {
		l = append(l, "phase peaks: "+strings.Join(phases, ", "))
	}
	return l
}

// walkVsReplay is the total row's note where a replay follows the table:
// how the replay's peak, which the headline gives, stands to the walked
// one, within the note column's width (QA s28 L7: 48.33 GiB here,
// 48.16 GiB in the headline, unrelated on the page).
func walkVsReplay(walked, replayed int64, u MemoryUnits) string {
	switch d := replayed - walked; {
	case d < 0:
		return "replay peak (headline): " + u.format(-d) + " lower"
	case d > 0:
		return "replay peak (headline): " + u.format(d) + " higher"
	}
	return "replay peak (headline): the same"
}

// replayedNotes are the lines under the memory model's table where a
// replay follows it (zerosim run): the walked peak, named as the model's
// and without a verdict, then notes, memoryNotes without the profiler's
// lines, which the replay gives.
// The walk is a bound the replay can pass or stay under
// (docs/memory-model.md), so the replay's peak alone decides fits and
// gives the profiler's figures; two verdicts could disagree.
func replayedNotes(peak string, notes []string) []string {
	return append([]string{"memory model's peak " + peak + ", walked in order as zerosim memory reports it (the headline's fits is the replay's, below)"}, notes...)
}

// memoryTable is the run's memory model as a table for the HTML page: every column,
// exact bytes thousands-separated beside u, the totals, and the walked peak
// and phase peaks as notes (replayedNotes), in vendor v's words.
func memoryTable(r *memory.Report, u MemoryUnits, v Vendor, replayPeak int64) *table {
	t := &table{Title: strings.TrimPrefix(memoryTitle(r), "# "), left: []int{0, 5, 7},
		Header: []string{"component", "at rest (B)", "at rest", "peak (B)", "peak", "peak phase", "at total peak (B)", "note"}}
	if r.NotApplicable != "" {
		t.Notes = append(t.Notes, "n/a: "+r.NotApplicable)
		return t
	}
	for _, c := range r.Components {
		phase := c.PeakPhase.String()
		if c.Peak == 0 {
			phase = "-"
		}
		t.Rows = append(t.Rows, []string{v.compName(c.Name), commas(c.AtRest), u.format(c.AtRest), commas(c.Peak), u.format(c.Peak), phase, commas(c.AtTotalPeak), c.Note})
	}
	t.Footer = []string{"total", commas(r.AtRest), u.format(r.AtRest), commas(r.Peak), u.format(r.Peak), r.PeakPhase.String(), commas(r.Peak), walkVsReplay(r.Peak, replayPeak, u)}
	t.Notes = append(t.Notes, replayedNotes(fmt.Sprintf("%s in %s", u.format(r.Peak), r.PeakPhase), memoryNotes(r, u, v, false))...)
	t.Notes = append(t.Notes, r.Warnings...)
	return t
}

func writeMemorySummary(w io.Writer, rs []*memory.Report, st MemoryStyle) error {
	u := st.Units
	if _, err := fmt.Fprintln(w, "# summary: memory per GPU"); err != nil {
		return err
	}
	conv, estimators := false, map[string]bool{}
	for _, r := range rs {
		// Other estimators name what they count as their convention; the
		// column shows only when zerosim's own counting was changed.
		conv = conv || (r.Estimator == "zerosim" && r.ConventionName != "zerosim")
		estimators[r.Estimator] = true
	}
	head := []string{"stage", "estimator"}
	if conv {
		head = append(head, "convention")
	}
	if st.Wide {
		head = append(head, "at rest (B)", "at rest", "peak (B)", "peak", "peak phase", "fits")
	} else {
		head = append(head, "at rest", "peak", "peak phase", "fits")
	}
	t := newTable(w, len(head), 1, len(head)-2, len(head)-1)
	if conv {
		t = newTable(w, len(head), 1, 2, len(head)-2, len(head)-1)
	}
	t.Header(head)
	for _, r := range rs {
		row := []string{strconv.Itoa(r.Stage), r.Estimator}
		if conv {
			row = append(row, r.ConventionName)
		}
		n := len(head) - len(row) - 2
		if r.NotApplicable != "" {
			for range n {
				row = append(row, "n/a")
			}
			row = append(row, "-", "-")
		} else {
			fits := "no"
			switch {
			case r.GPUMemory <= 0:
				fits = "?"
			case r.Fits:
				fits = "yes"
			}
			if st.Wide {
				row = append(row, commas(r.AtRest), u.format(r.AtRest), commas(r.Peak), u.format(r.Peak))
			} else {
				row = append(row, u.format(r.AtRest), u.format(r.Peak))
			}
			row = append(row, r.PeakPhase.String(), fits)
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if estimators["zerosim"] && (estimators["deepspeed"] || estimators["megatron"]) {
		_, err := fmt.Fprintln(w, "note: DeepSpeed's and Megatron's estimates count model states only (parameters, gradients, "+
			"optimizer states); zerosim's peak adds activations, buckets, gathered units and temporaries, so it is higher.")
		return err
	}
	return nil
}

// memoryFileJSON is `zerosim memory --format json`: the build and the
// resolved scenario that made the reports, as every other JSON output
// carries them (it was a bare array, QA25 M6), and the reports, one per
// stage and estimator (docs/memory.schema.json).
type memoryFileJSON struct {
	Zerosim        Build         `json:"zerosim"`
	ScenarioSHA256 string        `json:"scenario_sha256"`
	Reports        []*memoryJSON `json:"reports"`
}

// WriteMemoryJSON writes the reports of scenario s as an indented JSON
// object with exact integer bytes (memoryFileJSON).
func WriteMemoryJSON(w io.Writer, s *scenarios.Scenario, rs []*memory.Report) error {
	out := &memoryFileJSON{Zerosim: ReadBuild(), ScenarioSHA256: ScenarioSHA256(s), Reports: make([]*memoryJSON, len(rs))}
	for i, r := range rs {
		out.Reports[i] = newMemoryJSON(r)
	}
	return writeJSON(w, out)
}

// WriteMemoryCSV writes one row per report and component with exact bytes.
// The total's row also gives the peak as a profiler and the device monitor
// see it (reserved_bytes, device_bytes), how the reserve was obtained
// (reserved_mode) and the simulated allocator's retries a step
// (allocator_retries); those are empty on the components' rows and where
// the report has no reserve (a seed's convention, another estimator). A
// report without figures (memory.Report.NotApplicable: an estimator
// without a formula for the stage, a stage the bucket size cannot lay
// out) is one total row whose figures are empty and whose
// not_applicable says why; that column is empty on every other row.
func WriteMemoryCSV(w io.Writer, rs []*memory.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"scenario", "stage", "estimator", "convention", "component", "at_rest_bytes", "peak_bytes", "peak_phase", "at_total_peak_bytes",
		"reserved_bytes", "device_bytes", "reserved_mode", "allocator_retries", "not_applicable"}); err != nil {
		return err
	}
	none := []string{"", "", "", "", ""}
	for _, r := range rs {
		base := []string{r.Scenario, strconv.Itoa(r.Stage), r.Estimator, r.ConventionName}
		if r.NotApplicable != "" {
			if err := cw.Write(slices.Concat(base, []string{"total", "", "", "", ""}, none[1:], []string{r.NotApplicable})); err != nil {
				return err
			}
			continue
		}
		for _, c := range r.Components {
			if err := cw.Write(slices.Concat(base, []string{c.Name, exact(c.AtRest), exact(c.Peak), c.PeakPhase.String(), exact(c.AtTotalPeak)}, none)); err != nil {
				return err
			}
		}
		profiler := none
		if r.Reserved > 0 {
			profiler = []string{exact(r.Reserved), exact(r.Device), r.ReservedMode, sweep.FormatRetries(r.AllocSim.SimulatedRetries()), ""}
		}
		if err := cw.Write(slices.Concat(base, []string{"total", exact(r.AtRest), exact(r.Peak), r.PeakPhase.String(), exact(r.Peak)}, profiler)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
