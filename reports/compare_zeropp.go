package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
)

// ZeroPPSection compares ZeRO-3, ZeRO-3 with K raised to the node count,
// and ZeRO++ (compare --zeropp) and says, from the replays, which wins and
// why.
type ZeroPPSection struct {
	// M is 2P, the bf16 bytes of the model: the unit of ZeRO++'s volumes.
	M       int64       `json:"m_bytes"`
	Rows    []zeroPPRow `json:"rows"`
	Verdict string      `json:"verdict"`
	// Winner is the fastest variant that fits the GPU's memory, "" when
	// none fits.
	Winner  string          `json:"winner"`
	Reasons []zeroPPReasons `json:"reasons"`
	// smi names the device monitor, for the table's † legend.
	smi string
}

// zeroPPRow is one variant.
type zeroPPRow struct {
	Label string `json:"label"`
	K     int    `json:"k"`
	// NetworkPerNode is the network bytes per node per step; NetworkM the
	// same in units of M (rounded to 0.001).
	NetworkPerNode int64   `json:"network_per_node_bytes"`
	NetworkM       float64 `json:"network_per_node_m"`
	StepTimePS     int64   `json:"step_time_ps"`
	ExposedCommPS  int64   `json:"exposed_comm_ps"`
	PeakMemory     int64   `json:"peak_memory_bytes"`
	Fits           bool    `json:"fits"`
	// DeviceFits: it fits with room for the caching allocator's reserve
	// (zero.Result.DeviceFits; the table's "yes†" without).
	DeviceFits bool `json:"device_fits"`
	// compute and alone are the busiest rank's compute, slowed where
	// collectives ran beside it, and without them: compare's first
	// verdict splits a step's change into exposed communication and the
	// former.
	compute, alone int64
}

// zeroPPReasons names the figure that decided one comparison.
type zeroPPReasons struct {
	Against string `json:"against"`
	// SpeedupPct is how much faster ZeRO++ is (negative: slower), 0.1 %.
	SpeedupPct float64 `json:"speedup_pct"`
	Why        string  `json:"why"`
}

// NewZeroPPSection builds the section from the outcomes of
// sweep.ZeroPPVariants (ZeRO-3 first, ZeRO++ last, the K variant between
// when there is one).
func NewZeroPPSection(os []*sweep.Outcome) *ZeroPPSection {
	if len(os) < 2 {
		return nil
	}
	sec := &ZeroPPSection{M: sweep.BufferBytes(os[0].Scenario)}
	capacity := int64(os[0].Scenario.Cluster.GPUMemory)
	for _, o := range os {
		r := o.Result
		row := zeroPPRow{Label: o.Label, K: r.K, NetworkPerNode: sweep.NetworkPerNode(o), StepTimePS: int64(r.StepTime)}
		for _, rk := range r.Ranks {
			row.ExposedCommPS = max(row.ExposedCommPS, int64(rk.ExposedComm))
		}
		b := r.Busiest()
		row.compute, row.alone = int64(b.Compute), int64(b.Alone)
		row.PeakMemory, _ = r.Peak()
		row.Fits = r.Fits(capacity)
		row.DeviceFits = row.Fits && r.DeviceFits(capacity)
		sec.smi = ClusterVendor(&o.Scenario.Cluster).smi()
		if sec.M > 0 {
			row.NetworkM = round(float64(row.NetworkPerNode)/float64(sec.M), 3)
		}
		sec.Rows = append(sec.Rows, row)
	}
	z3, zpp := sec.Rows[0], sec.Rows[len(sec.Rows)-1]
	speed := func(a, b zeroPPRow) float64 { return round((float64(a.StepTimePS)/float64(b.StepTimePS)-1)*100, 1) }
	d := durText
	share := func(r zeroPPRow) float64 { return round(float64(r.ExposedCommPS)/float64(r.StepTimePS)*100, 1) }
	gib := func(b int64) string { return units.Bytes(b).IEC() }

	// Against ZeRO-3.
	var why string
	sp := speed(z3, zpp)
	switch {
	case sp >= 1 && z3.ExposedCommPS-zpp.ExposedCommPS >= z3.compute-zpp.compute:
		why = fmt.Sprintf("ZeRO-3 waits on the network: %s of its %s step (%.1f %%) is exposed communication; ZeRO++ cuts the network bytes per node from %.3f M to %.3f M (int8 weight gathers, the backward gathers kept inside the node, int4 gradients), leaving %s exposed",
			d(z3.ExposedCommPS), d(z3.StepTimePS), share(z3), z3.NetworkM, zpp.NetworkM, d(zpp.ExposedCommPS))
		if dc := z3.compute - zpp.compute; dc > 0 {
			why += fmt.Sprintf("; ZeRO++'s compute, slowed less by the collectives beside it, is %s shorter too", d(dc))
		}
	case sp >= 1:
		// The split of compare's first verdict: most of the gain is the
		// busiest rank's compute, which ZeRO-3's collectives slow beside
		// it (compute_interference), not the exposed communication (QA
		// s28 L10: "waits on the network" for 37 ms of a 101 ms gain).
		why = fmt.Sprintf("ZeRO-3's compute is slowed by the collectives beside it: of its %s longer step, %s is compute (%s vs %s; %s vs %s at full speed) and %s exposed communication (%s vs %s); ZeRO++ cuts the network bytes per node from %.3f M to %.3f M (int8 weight gathers, the backward gathers kept inside the node, int4 gradients)",
			d(z3.StepTimePS-zpp.StepTimePS), d(z3.compute-zpp.compute), d(z3.compute), d(zpp.compute), d(z3.alone), d(zpp.alone),
			d(z3.ExposedCommPS-zpp.ExposedCommPS), d(z3.ExposedCommPS), d(zpp.ExposedCommPS), z3.NetworkM, zpp.NetworkM)
	case sp > -1:
		why = fmt.Sprintf("ZeRO-3's communication is already hidden behind compute (%.1f %% of the step exposed), so ZeRO++'s %.3f M instead of %.3f M per node buys little",
			share(z3), zpp.NetworkM, z3.NetworkM)
	default:
		why = fmt.Sprintf("the network is not the bottleneck (ZeRO-3 exposes %.1f %% of its step), and ZeRO++'s quantize and dequantize kernels on the compute and gradient streams cost more than the %.3f M per node it saves",
			share(z3), z3.NetworkM-zpp.NetworkM)
	}
	sec.Reasons = append(sec.Reasons, zeroPPReasons{Against: z3.Label, SpeedupPct: sp, Why: why})
	// Against raising K.
	if len(sec.Rows) == 3 {
		k := sec.Rows[1]
		spk := speed(k, zpp)
		var w string
		switch {
		case !k.Fits && zpp.Fits:
			w = fmt.Sprintf("raising K to %d shards the model over one node only: its peak %s does not fit, ZeRO++'s %s does", k.K, units.Bytes(k.PeakMemory).IEC(), units.Bytes(zpp.PeakMemory).IEC())
		case k.Fits && !zpp.Fits:
			w = fmt.Sprintf("raising K to %d fits (%s per GPU) where ZeRO++ does not (%s of the GPU's %s)", k.K, gib(k.PeakMemory), gib(zpp.PeakMemory), gib(capacity))
		case spk >= 0:
			w = fmt.Sprintf("raising K to %d also keeps the gathers inside the node (%.3f M per node: the gradient all-reduce across nodes) but holds %s per GPU instead of %s; ZeRO++ moves %.3f M and is faster",
				k.K, k.NetworkM, units.Bytes(k.PeakMemory).IEC(), units.Bytes(zpp.PeakMemory).IEC(), zpp.NetworkM)
			if !k.Fits && !zpp.Fits {
				w = strings.TrimSuffix(w, "and is faster") + fmt.Sprintf("and would be faster, but neither fits the GPU's %s", gib(capacity))
			}
		default:
			kd, zd := durPair(k.StepTimePS, zpp.StepTimePS)
			w = fmt.Sprintf("raising K to %d is faster here (%s vs %s): its %.3f M per node all-reduce costs less than ZeRO++'s kernels, at %s instead of %s per GPU",
				k.K, kd, zd, k.NetworkM, units.Bytes(k.PeakMemory).IEC(), units.Bytes(zpp.PeakMemory).IEC())
		}
		sec.Reasons = append(sec.Reasons, zeroPPReasons{Against: k.Label, SpeedupPct: spk, Why: w})
	}
	// The winner is the fastest variant that fits (QA19 M1: a faster
	// ZeRO++ that does not fit is no winner).
	var best *zeroPPRow
	for i := range sec.Rows {
		if r := &sec.Rows[i]; r.Fits && (best == nil || r.StepTimePS < best.StepTimePS) {
			best = r
		}
	}
	var parts []string
	for _, r := range sec.Reasons {
		rel := fmt.Sprintf("%.1f %% faster than", r.SpeedupPct)
		if r.SpeedupPct < 0 {
			rel = fmt.Sprintf("%.1f %% slower than", -r.SpeedupPct)
		}
		parts = append(parts, fmt.Sprintf("ZeRO++ is %s %s: %s.", rel, r.Against, r.Why))
	}
	sec.Verdict = zeroPPLead(sec.Rows, best, capacity) + " " + strings.Join(parts, " ")
	if best != nil {
		sec.Winner = best.Label
	}
	return sec
}

// zeroPPLead is the verdict's first sentence: the fastest variant that
// fits wins, and a faster ZeRO++ that does not fit is named with its peak.
func zeroPPLead(rows []zeroPPRow, best *zeroPPRow, capacity int64) string {
	gib := func(b int64) string { return units.Bytes(b).IEC() }
	zpp := rows[len(rows)-1]
	switch {
	case best == nil:
		var peaks []string
		for _, r := range rows {
			peaks = append(peaks, r.Label+" "+gib(r.PeakMemory))
		}
		return fmt.Sprintf("No variant wins: none fits the GPU's %s (peaks: %s).", gib(capacity), strings.Join(peaks, ", "))
	case best.Label == zpp.Label:
		return "ZeRO++ wins."
	case zpp.StepTimePS < best.StepTimePS:
		return fmt.Sprintf("%s wins: ZeRO++ would be %.1f %% faster but peaks at %s of the GPU's %s.",
			best.Label, round((float64(best.StepTimePS)/float64(zpp.StepTimePS)-1)*100, 1), gib(zpp.PeakMemory), gib(capacity))
	}
	return best.Label + " wins."
}

// WriteZeroPPSection writes the ZeRO++ section of compare --zeropp.
func WriteZeroPPSection(w io.Writer, sec *ZeroPPSection) error {
	if sec == nil {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\n# ZeRO++ vs ZeRO-3 vs raising K: network bytes per node per step in M = 2P = %s B\n", commas(sec.M)); err != nil {
		return err
	}
	t := newTable(w, 7, 0)
	t.Header([]string{"variant", "K", "network/node", "in M", "step time", "exposed comm", "peak memory (fits)"})
	// Each time column at one precision (durs).
	var steps, exposed []int64
	for _, r := range sec.Rows {
		steps, exposed = append(steps, r.StepTimePS), append(exposed, r.ExposedCommPS)
	}
	stepCells, exposedCells := durs(steps...), durs(exposed...)
	retries := false
	for i, r := range sec.Rows {
		// run's one verdict (fitCell), "NO" in capitals.
		fits := fitCell(r.Fits, r.DeviceFits)
		if !r.Fits {
			fits = "NO"
		}
		retries = retries || r.Fits && !r.DeviceFits
		if err := t.Append([]string{r.Label, fmt.Sprint(r.K), units.Bytes(r.NetworkPerNode).IEC(), fmt.Sprintf("%.3f M", r.NetworkM),
			stepCells[i], exposedCells[i], units.Bytes(r.PeakMemory).IEC() + " (" + fits + ")"}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if retries {
		if _, err := fmt.Fprintln(w, retriesLegend(sec.smi)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, sec.Verdict)
	return err
}
