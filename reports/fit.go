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

// scalingText describes a sweep.Fit scaling rule.
func scalingText(rule string) string {
	switch rule {
	case sweep.ScaleLayers:
		return "the model is scaled by its number of layers (other dimensions fixed)"
	case sweep.ScaleParams:
		return "the model is scaled by its parameter count (layer count fixed, largest_layer in proportion)"
	}
	return "the model is not scaled (explicit layer list or fixed shape)"
}

func gbOr(b int64, empty string) string {
	if b == 0 {
		return empty
	}
	return units.Bytes(b).IEC()
}

func intOr(v int64, empty string) string {
	if v == 0 {
		return empty
	}
	return strconv.FormatInt(v, 10)
}

// WriteFitTable writes the fit of every stage and K: the peak per GPU on
// the given cluster and whether it fits, the smallest data-parallel size
// that fits (GPUs, nodes, peak there) and the largest model that fits on
// the given cluster, then the rows' notes. The table keeps to 120 columns:
// the largest model's parameters read as a human count ("18.1 B") and the dp
// column is left out when it equals GPUs (cp 1); wide shows the dp column
// and the exact parameter count, thousands-separated.
func WriteFitTable(w io.Writer, f *sweep.Fit, wide bool, v Vendor) error {
	if _, err := fmt.Fprintf(w, "# fit: %s: %s params, N=%d (dp %d × cp %d) on nodes=%d × gpus_per_node=%d, %s per GPU, convention %s\n"+
		"# nodes: the fewest that fit, searched up to %d GPUs, as zerosim accepts a cluster: whole nodes of the same GPUs, dp·cp = nodes·gpus_per_node, K dividing it; %s\n",
		EscapeControl(f.Scenario), commas(f.Params), f.N, f.DP, f.CP, f.Nodes, f.GPUsPerNode, units.Bytes(f.GPUMemory).IEC(),
		f.Convention, f.MaxGPUs, scalingText(f.Scaling)); err != nil {
		return err
	}
	if f.Stack != "" {
		if _, err := fmt.Fprintf(w, "# stack %s: only what it runs, %s\n", EscapeControl(f.Stack), f.StackRuns); err != nil {
			return err
		}
	}
	below, plan := "", fitPlanText(f)
	if plan != "" {
		below = " (plan: below)"
	}
	if _, err := fmt.Fprintf(w, "# every row is at the file's settings: %s, and its bucket size and prefetch depth; zerosim plan searches them%s\n", fitSettings(f), below); err != nil {
		return err
	}
	if f.EP > 1 {
		if _, err := fmt.Fprintf(w, "# K=1 only: expert parallelism (ep %d) is not modelled with K > 1\n", f.EP); err != nil {
			return err
		}
	}
	if f.Replayed {
		if _, err := fmt.Fprintf(w, "# fits and peaks are the replayed step's, as zerosim run --require-fit judges them (the peak with %s within the GPU); a peak marked * is the memory model's, not replayed: the model rejects that layout, or its ranks differ (shard groups straddling nodes, overrides), which run replays rank by rank\n", v.extras()); err != nil {
			return err
		}
	}
	// dp = GPUs / cp: with cp 1 the column repeats GPUs.
	withDP := wide || f.CP != 1
	params, nodes := "largest model", "nodes"
	if wide {
		params, nodes = "largest model (params)", "least nodes"
	}
	head := []string{"stage", "K", "peak per GPU", "at rest", "fits", nodes, "GPUs", "dp", "peak there", params, "layers", "its peak"}
	if !withDP {
		head = slices.Delete(head, 7, 8)
	}
	t := newTable(w, len(head), 0)
	t.Header(head)
	retries := false
	for _, r := range f.Rows {
		// run's verdict on the given cluster (FitVerdict.Cell): "yes†"
		// where the device has no room for the allocator's reserve (QA
		// s31 L2).
		fits := fitCell(r.Fits, r.Room())
		retries = retries || r.Fits && !r.Room()
		// A peak the replay did not give is the model's: marked *.
		mark := func(s string, v int64, replayed bool) string {
			if f.Replayed && !replayed && v > 0 {
				return s + "*"
			}
			return s
		}
		peak := mark(units.Bytes(r.Peak).IEC(), r.Peak, r.PeakReplayed)
		maxParams := "none"
		if r.MaxParams != 0 && wide {
			maxParams = commas(r.MaxParams)
		} else if r.MaxParams != 0 {
			maxParams = humanCount(r.MaxParams)
		}
		row := []string{strconv.Itoa(r.Stage), strconv.Itoa(r.K), peak, units.Bytes(r.AtRest).IEC(), fits,
			intOr(int64(r.MinNodes), "none"), intOr(int64(r.MinGPUs), "-"), intOr(int64(r.MinDP), "-"), mark(gbOr(r.MinPeak, "-"), r.MinPeak, r.MinPeakReplayed),
			maxParams, intOr(r.MaxLayers, "-"), mark(gbOr(r.MaxPeak, "-"), r.MaxPeak, r.MaxPeakReplayed)}
		if !withDP {
			row = slices.Delete(row, 7, 8)
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if retries {
		if _, err := fmt.Fprintln(w, retriesLegend(v.smi())); err != nil {
			return err
		}
	}
	for _, n := range fitNotes(f.Rows) {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(w, leastNodesText(f, v)); err != nil {
		return err
	}
	if plan != "" {
		if _, err := fmt.Fprintln(w, plan); err != nil {
			return err
		}
	}
	if t := fitToFit(f); t != "" {
		_, err := fmt.Fprintln(w, labelled("to fit: ", t))
		return err
	}
	return nil
}

// fitSettings are the file's settings every fit row holds fixed, in plan's
// words (describe): "micro-batch 2, selective activation checkpointing, no
// expert parallelism" (ep only for a MoE model).
func fitSettings(f *sweep.Fit) string {
	s := fmt.Sprintf("micro-batch %d", f.MicroBatch)
	if f.GradAccum > 1 {
		s += fmt.Sprintf(" × %d accumulation steps", f.GradAccum)
	}
	if f.Recompute == "none" {
		s += ", no activation checkpointing"
	} else {
		s += ", " + f.Recompute + " activation checkpointing"
	}
	switch {
	case f.EP > 1:
		s += fmt.Sprintf(", expert parallelism %d", f.EP)
	case f.MoE:
		s += ", no expert parallelism"
	}
	return s
}

// fitPlanText is what zerosim plan's search on the given cluster
// (sweep.Fit.Plan) finds for the stages that do not fit there with room
// at the file's settings (sweep.Fit.PlanStages): for each, its fastest
// configuration that fits, with run's verdict, and the plan command that
// ranks them (QA s31 M1: fit said stages 1–2 fit no cluster of
// DeepSeek-V2-Lite while plan ran stage 1 on the same 2 nodes at ep 4,
// micro-batch 1). "" without a plan, or when nothing fits there either
// (fitToFit then says what to change).
func fitPlanText(f *sweep.Fit) string {
	p := f.Plan
	if p == nil || p.Best() == nil && f.NoneFits() {
		return ""
	}
	// What the plan varies beyond fit's stage and K; a --set pins a key
	// to its value (Plan.Pinned).
	var varied []string
	if len(p.SearchedMicroBatches) > 1 {
		varied = append(varied, fmt.Sprintf("the micro-batch and accumulation at the file's global batch, %s sequences", commas(p.GlobalBatch)))
	}
	for _, k := range []struct {
		n    int
		what string
	}{{len(p.SearchedRecompute), "checkpointing"}, {len(p.SearchedEP), "expert parallelism"}, {len(p.SearchedBuckets), "bucket size"}, {len(p.SearchedPrefetch), "prefetch depth"}} {
		if k.n > 1 {
			varied = append(varied, k.what)
		}
	}
	if len(varied) == 0 {
		return ""
	}
	var lines, none, names []string
	for _, st := range f.PlanStages() {
		names = append(names, strconv.Itoa(st))
		r, ok := planBestRow(p, st)
		if !ok {
			none = append(none, strconv.Itoa(st))
			continue
		}
		c := r.Candidate
		verdict := fmt.Sprintf("fits, peak %s, device %s of %s", gib(r.PeakMemory), gib(r.DevicePeak), gib(p.GPUMemory))
		if n := r.SimulatedRetries; !r.DeviceFit && n != nil && *n > 0 {
			// The reserve is simulated within the GPU, so the device
			// peak is capped there: run's words (FitVerdict.roomText).
			verdict = fmt.Sprintf("fits, peak %s, but the simulated caching allocator releases its cache %s a step to stay within the GPU's %s: %s",
				gib(r.PeakMemory), timesWord(*n), gib(p.GPUMemory), memory.ExpectRetries)
		} else if !r.DeviceFit {
			verdict = fmt.Sprintf("fits, peak %s, but with the caching allocator's reserve the device needs %s of %s: %s",
				gib(r.PeakMemory), gib(r.DevicePeak), gib(p.GPUMemory), memory.ExpectRetries)
		}
		lines = append(lines, describe(c, p)+": "+verdict)
	}
	searched := fmt.Sprintf("zerosim plan searches what the table holds fixed (%s)", strings.Join(varied, "; "))
	if len(lines) == 0 {
		return labelled("plan:  ", fmt.Sprintf("%s, and %s it finds nothing that fits %s either", searched, onNodes(p.Nodes), stagesWords(none)))
	}
	if len(none) > 0 {
		lines = append(lines, fmt.Sprintf("%s: nothing that plan searches fits", stagesWords(none)))
	}
	head := fmt.Sprintf("%s; %s, for the stages without a plain yes above, it finds:", searched, onNodes(p.Nodes))
	file := p.Scenario
	if file == scenarios.Stdin {
		file = "-"
	}
	args := []string{"zerosim", "plan", file}
	for _, set := range p.Sets {
		args = append(args, "--set", set)
	}
	if len(names) < 4 {
		args = append(args, "--stages", strings.Join(names, ","))
	}
	out := labelled("plan:  ", head)
	for _, l := range lines {
		out += "\n" + labelled("       - ", l)
	}
	return out + "\n" + commandLines("       ranks them: ", args)
}

// planBestRow is the fastest row of plan p that fits at ZeRO stage st
// (its first row at st, Plan.BestPerStage's candidate: rows are ranked),
// false when none does. fitPlanText and the JSON's plan_finds both read it.
func planBestRow(p *sweep.Plan, st int) (sweep.PlanRow, bool) {
	i := slices.IndexFunc(p.Rows, func(r sweep.PlanRow) bool { return r.Stage == st })
	if i < 0 {
		return sweep.PlanRow{}, false
	}
	return p.Rows[i], true
}

// fitToFit is plan's advice (ToFit) when no stage fits on any cluster
// fit tried (sweep.Fit.Plan, NoneFits), "" otherwise: the least-nodes line said
// only "none" (QA34 L2). Its flags are plan's.
func fitToFit(f *sweep.Fit) string {
	if f.Plan == nil || f.Plan.Best() != nil || !f.NoneFits() {
		return ""
	}
	p := f.Plan
	_, peak := gibApart(p.GPUMemory, p.SmallestPeak)
	return fmt.Sprintf("on this cluster, where the configuration needing the least memory (%s) peaks at %s, zerosim plan advises (its flags): %s",
		describe(p.Smallest, p), peak, ToFit(p))
}

// fitNotes says each distinct note of the rows once, in the order the
// notes first appear, after the rows it covers ("stage 1, K=1–16384;
// stage 2, K=1–8: …"); a figure that differs between those rows reads as
// their range ("331.26 GiB to 1.27 TiB").
func fitNotes(rows []sweep.FitRow) []string {
	type group struct {
		note     sweep.FitNote
		rows     []int
		min, max int64
	}
	var groups []*group
	byText := map[string]*group{}
	for i, r := range rows {
		for _, n := range r.Notes {
			g := byText[n.Text]
			if g == nil {
				g = &group{note: n, min: n.Peak, max: n.Peak}
				byText[n.Text] = g
				groups = append(groups, g)
			}
			g.rows = append(g.rows, i)
			g.min, g.max = min(g.min, n.Peak), max(g.max, n.Peak)
		}
	}
	var out []string
	for _, g := range groups {
		text := g.note.String()
		if g.min != g.max {
			text = g.note.WithPeak(units.Bytes(g.min).IEC() + " to " + units.Bytes(g.max).IEC())
		}
		out = append(out, fitRowsText(rows, g.rows)+": "+text)
	}
	return out
}

// fitRowsText names the rows at the indices idx (ascending): per stage, each
// run of consecutive rows as its first and last K.
func fitRowsText(rows []sweep.FitRow, idx []int) string {
	var parts []string
	for a := 0; a < len(idx); {
		b := a
		for b+1 < len(idx) && idx[b+1] == idx[b]+1 && rows[idx[b+1]].Stage == rows[idx[a]].Stage {
			b++
		}
		first, last := rows[idx[a]], rows[idx[b]]
		ks := fmt.Sprintf("K=%d", first.K)
		if b > a {
			ks = fmt.Sprintf("K=%d–%d (%d rows)", first.K, last.K, b-a+1)
		}
		if n := len(parts); n > 0 && strings.HasPrefix(parts[n-1], fmt.Sprintf("stage %d, ", first.Stage)) {
			parts[n-1] += ", " + ks
		} else {
			parts = append(parts, fmt.Sprintf("stage %d, %s", first.Stage, ks))
		}
		a = b + 1
	}
	return strings.Join(parts, "; ")
}

// leastNodesText says the fewest nodes on which the model fits with any
// stage and K, and the layout: of the layouts that fit on that many
// nodes, the first whose device has room there (the caching allocator's
// reserve, the runtime's context and the collectives' buffers added, and
// no allocator retries: memory.VerdictOf, as the search decided
// DeviceNodes), else the first (qa16 L7: stage 2 was named with "2 nodes
// leave room" while stage 3 fitted with room on the one node).
func leastNodesText(f *sweep.Fit, v Vendor) string {
	var best *sweep.FitRow
	// The search's verdict, not the device peak against the GPU: under the
	// simulated allocator the device peak stays within the GPU because it
	// releases its cache (qauser32 M1: "3 nodes" where plan and run say
	// 3 retry and 4 leave room).
	room := func(r *sweep.FitRow) bool { return r.DeviceNodes == r.MinNodes }
	for i := range f.Rows {
		r := &f.Rows[i]
		if r.MinNodes > 0 && (best == nil || r.MinNodes < best.MinNodes || r.MinNodes == best.MinNodes && !room(best) && room(r)) {
			best = r
		}
	}
	if best == nil {
		return fmt.Sprintf("least nodes at the file's settings: none: no stage fits on up to %d GPUs", f.MaxGPUs)
	}
	text := fmt.Sprintf("least nodes at the file's settings: %d (%d GPUs, dp %d × cp %d) with ZeRO stage %d, K=%d%s; this cluster has %d",
		best.MinNodes, best.MinGPUs, best.MinDP, f.CP, best.Stage, best.K, tieBreak(f, best, room), f.Nodes)
	if room(best) {
		return text
	}
	// The allocated peak fits there, the device's does not, or only by
	// the simulated allocator's releasing its cache: zerosim run warns of
	// allocator retries on that cluster.
	if best.MinDevice > f.GPUMemory {
		text += fmt.Sprintf("; but there the device needs %s of %s (the caching allocator's reserve, %s added, as zerosim run warns)",
			units.Bytes(best.MinDevice).IEC(), units.Bytes(f.GPUMemory).IEC(), v.extras())
	} else {
		text += fmt.Sprintf("; but there the simulated caching allocator releases its cache to stay within the GPU's %s with its reserve, %s added (as zerosim run warns: expect allocator retries)",
			units.Bytes(f.GPUMemory).IEC(), v.extras())
	}
	if best.DeviceNodes == 0 {
		return text + fmt.Sprintf(", and no cluster up to %d GPUs leaves room for them", f.MaxGPUs)
	}
	there := "not replayed: the memory model's verdict"
	if best.DevicePeak > 0 {
		there = "device " + units.Bytes(best.DevicePeak).IEC()
	}
	return text + fmt.Sprintf(": %d nodes (%d GPUs) leave room for them (%s)", best.DeviceNodes, best.DeviceNodes*f.GPUsPerNode, there)
}

// onNodes is "on this node" or "on these 4 nodes".
func onNodes(n int) string {
	if n == 1 {
		return "on this node"
	}
	return fmt.Sprintf("on these %d nodes", n)
}

// stagesWords names ZeRO stages: "ZeRO stage 0", "ZeRO stages 0, 1 and 2".
func stagesWords(stages []string) string {
	if len(stages) == 1 {
		return "ZeRO stage " + stages[0]
	}
	return "ZeRO stages " + scenarios.ListAnd(stages)
}

// tieBreak says why best was named where other layouts fit on as few
// nodes (QA s31 L7: stage 2 named among stages 1–3 at 1 node, unexplained):
// the first in the table's order (the lowest stage, then the least K)
// whose device has room there for the caching allocator's reserve, else
// the first; "" when best alone fits on that many nodes.
func tieBreak(f *sweep.Fit, best *sweep.FitRow, room func(*sweep.FitRow) bool) string {
	var before []string
	tied, seen := 0, false
	for i := range f.Rows {
		r := &f.Rows[i]
		if r.MinNodes != best.MinNodes {
			continue
		}
		tied++
		seen = seen || r == best
		if !seen {
			before = append(before, fmt.Sprintf("stage %d, K=%d", r.Stage, r.K))
		}
	}
	if tied <= 1 {
		return ""
	}
	text := fmt.Sprintf(" (of the %d layouts that fit on %s, the lowest stage, then K", tied, countNoun(best.MinNodes, "node", "nodes"))
	switch {
	case !room(best):
		return text + ": none has room there for the caching allocator's reserve)"
	case len(before) == 0:
		return text + ")"
	}
	verb := "have"
	if len(before) == 1 {
		verb = "has"
	}
	return text + fmt.Sprintf(", with room there for the caching allocator's reserve: %s %s none)", scenarios.ListAnd(before), verb)
}

// WriteFitJSON writes the fit as indented JSON (exact integers).
func WriteFitJSON(w io.Writer, f *sweep.Fit) error {
	return writeJSON(w, newFitJSON(f))
}

// WriteFitCSV writes one line per stage and K with exact integers.
func WriteFitCSV(w io.Writer, f *sweep.Fit) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"scenario", "stage", "k", "peak_bytes", "at_rest_bytes", "fits", "min_dp", "min_gpus", "min_nodes", "min_peak_bytes",
		"max_params", "max_layers", "max_peak_bytes", "peak_replayed", "min_peak_replayed", "max_peak_replayed", "note"}); err != nil {
		return err
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range f.Rows {
		if err := cw.Write([]string{f.Scenario, strconv.Itoa(r.Stage), strconv.Itoa(r.K), i(r.Peak), i(r.AtRest), strconv.FormatBool(r.Fits),
			strconv.Itoa(r.MinDP), strconv.Itoa(r.MinGPUs), strconv.Itoa(r.MinNodes), i(r.MinPeak), i(r.MaxParams), i(r.MaxLayers), i(r.MaxPeak), strconv.FormatBool(r.PeakReplayed),
			strconv.FormatBool(r.MinPeakReplayed), strconv.FormatBool(r.MaxPeakReplayed), r.Note()}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
