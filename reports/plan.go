package reports

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
)

// PlanReport is a plan ready to render: the search result and what the
// user asked on top of it.
type PlanReport struct {
	Plan *sweep.Plan
	// Tokens, if > 0, is the training run's length in tokens: the report
	// adds the time to train and the GPU-hours.
	Tokens int64
	// Top is how many distinct configurations the table lists (≤ 0: 10).
	Top int
	// Network, if set, is the bandwidth each stage needs (plan --network).
	Network *sweep.NetworkPlan
}

// kName names K as the user knows it.
func kName(c sweep.Candidate) string {
	switch {
	case c.EP > 1:
		return fmt.Sprintf("ep %d", c.EP)
	case c.Stage == 0:
		return "-"
	case c.K == 1:
		return "1"
	case c.Stage == 3:
		return fmt.Sprintf("%d HSDP", c.K)
	}
	return fmt.Sprintf("%d", c.K)
}

// commWords is the row's communication settings in words. auto names what
// timed it (zero.Result.Timing): NCCL's cost model (RCCL's on an AMD GPU)
// picks an algorithm and a protocol per collective
// (collectives.Model.Choose); the alpha–beta lowerings pick hierarchical or
// ring (collectives.Auto).
func commWords(r sweep.PlanRow) string {
	algo := algoLabel(r.Algorithm) + " collectives"
	if r.Algorithm == "auto" {
		algo = "collective algorithm auto (alpha–beta: hierarchical when the group spans nodes evenly, else ring)"
		if strings.HasPrefix(r.Timing, "NCCL's cost model") || strings.HasPrefix(r.Timing, "RCCL's cost model") {
			algo = "auto collectives (" + r.Timing + ")"
		}
	}
	if r.Stage == 3 {
		if r.Prefetch == 1 {
			return fmt.Sprintf("prefetch depth 1 (the next layer gathered ahead), %s", algo)
		}
		return fmt.Sprintf("prefetch depth %d (the next %d layers gathered ahead), %s", r.Prefetch, r.Prefetch, algo)
	}
	buckets := bucketWords(r.BucketSize) + " gradient buckets"
	if r.BucketSize == "" && r.BucketNote != "" {
		buckets = r.BucketNote
	}
	if r.ReduceNote != "" {
		buckets += ", " + r.ReduceNote
	}
	return buckets + ", " + algo
}

// bucketWords is a candidate's bucket size as a person reads it, in the
// unit the --set on the reproduce line takes: the file's exact bytes
// ("40000000B") print "40 MB", the searched 25MiB (PyTorch DDP's
// bucket_cap_mb=25) "25 MiB", not "26.21 MB"; a size no unit divides
// prints as a decimal figure.
func bucketWords(size string) string {
	b, err := units.ParseBytes(size)
	if err != nil {
		return size
	}
	e := b.Exact()
	if i := strings.IndexFunc(e, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && e[i:] != "B" {
		return e[:i] + " " + e[i:]
	}
	return strings.Replace(b.SI(), ".00 ", " ", 1)
}

// describe is the candidate in words, for the headline and the reason.
func describe(c sweep.Candidate, p *sweep.Plan) string {
	n := p.N
	s := fmt.Sprintf("ZeRO stage %d", c.Stage)
	switch ks := p.KSetting(c); {
	case ks != "":
		// The stack's own setting (scenarios.StackLayout).
		s += fmt.Sprintf(" with %d copies of %d-GPU shards (%s %s)", c.K, n/c.K, EscapeControl(p.Stack), ks)
	case c.Stage == 3 && c.K > 1:
		s += fmt.Sprintf(" with hybrid shard (HSDP: %d replicas of %d-GPU shards)", c.K, n/c.K)
	case c.Stage > 0 && c.K > 1:
		s += fmt.Sprintf(" with num_distributed_optimizer_instances=%d", c.K)
	}
	s += cpWords(c)
	if c.EP > 1 {
		s += fmt.Sprintf(", expert parallelism %d", c.EP)
	} else if c.EP == 1 {
		s += ", no expert parallelism"
	}
	s += fmt.Sprintf(", micro-batch %d", c.MicroBatch)
	if c.GradAccum > 1 {
		s += fmt.Sprintf(" × %d accumulation steps", c.GradAccum)
	}
	if c.Recompute == "none" {
		return s + ", no activation checkpointing"
	}
	return s + ", " + c.Recompute + " activation checkpointing"
}

// cpWords is the candidate's context parallelism, when the plan searched
// it: ring attention over cp GPUs (zero/ringattn.go), dp = GPUs/cp.
func cpWords(c sweep.Candidate) string {
	switch {
	case c.CP == 1:
		return fmt.Sprintf(", no context parallelism (dp %d)", c.DP)
	case c.CP > 1:
		return fmt.Sprintf(", context parallelism %d (ring attention, dp %d)", c.CP, c.DP)
	}
	return ""
}

func gib(b int64) string { return gibAt(b, 0) }

// gibAt is gib with extra decimals.
func gibAt(b int64, extra int) string {
	return fmt.Sprintf("%.*f GiB", 1+extra, float64(b)/float64(units.GiB))
}

// gibApart formats a and b in GiB with the fewest decimals (1 to 3) that
// tell them apart: a peak just over the GPU's memory does not read as
// equal to it ("3.260 GiB" and "3.278 GiB", not "3.3 GiB" twice).
func gibApart(a, b int64) (string, string) {
	d := apartDigits(gibAt, 0, 2, a, b)
	return gibAt(a, d), gibAt(b, d)
}

// overBy is an excess of memory: in GiB from 0.1 GiB, else in MiB.
func overBy(b int64) string {
	if b >= units.GiB/10 {
		return gib(b)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/float64(units.MiB))
}

// gbs is a byte count in GiB (binary units, like every memory figure):
// two decimals, none from 100 GiB on, so that the plan's network column
// stays within the table's 120 columns.
func gbs(b int64) string { return gbsAt(b, 0) }

// gbsAt is gbs with extra decimals.
func gbsAt(b int64, extra int) string {
	g := float64(b) / (1 << 30)
	if g >= 100 {
		return fmt.Sprintf("%.*f GiB", extra, g)
	}
	return fmt.Sprintf("%.*f GiB", 2+extra, g)
}
func planDur(ps int64) string { return planDurAt(ps, 0) }

// planDurAt is planDur with extra decimals.
func planDurAt(ps int64, extra int) string {
	d := units.Duration(ps)
	ms := float64(d) / float64(units.Millisecond)
	switch {
	case d >= units.Second:
		return fmt.Sprintf("%.*f s", 2+extra, d.Seconds())
	case ms >= 100:
		return fmt.Sprintf("%.*f ms", extra, ms)
	}
	return fmt.Sprintf("%.*f ms", 1+extra, ms)
}
func tps(v float64) string { return commas(int64(math.Round(v))) }

// distinct returns the indices of the rows to show: the first of each run
// of rows that differ only in communication settings with the same result.
func distinct(rows []sweep.PlanRow, top int) []int {
	var out []int
	for i, r := range rows {
		dup := false
		for _, j := range out {
			o := rows[j]
			if o.CP == r.CP && o.EP == r.EP && o.Stage == r.Stage && o.K == r.K && o.MicroBatch == r.MicroBatch && o.Recompute == r.Recompute &&
				o.StepTime == r.StepTime && o.PeakMemory == r.PeakMemory {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, i)
			if len(out) == top {
				break
			}
		}
	}
	return out
}

// PlanReason says why the winner wins, from the numbers: against the next
// best distinct configuration, which costs of the step it avoids (exposed
// communication, compute such as recomputation), and what it pays for it.
func PlanReason(p *sweep.Plan) string {
	if len(p.Rows) == 0 {
		return ""
	}
	w := p.Rows[0]
	next := -1
	for i, r := range p.Rows {
		if r.DeviceFit != w.DeviceFit {
			// A row that needs retries is no alternative to a winner with
			// room (the gives line names the fastest, fasterWithRetries).
			continue
		}
		if r.CP != w.CP || r.EP != w.EP || r.Stage != w.Stage || r.K != w.K || r.MicroBatch != w.MicroBatch || r.Recompute != w.Recompute {
			next = i
			break
		}
	}
	if next < 0 && w.DeviceFit && slices.ContainsFunc(p.Rows, overDevice) {
		return "only its communication settings vary among the configurations with room for the allocator's reserve"
	}
	if next < 0 {
		return "only its communication settings vary among the configurations that fit"
	}
	r := p.Rows[next]
	faster := 100 * (float64(r.StepTime)/float64(w.StepTime) - 1)
	var saves, pays []string
	// why, when given, says what makes the difference: after the two
	// figures, so that they read as the totals they are ("30.5 ms less
	// compute, the optimizer updating 1/32 vs 1/16 of the model (3.33 s
	// vs 3.37 s)" read as the optimizer's time).
	// f(v, extra) prints v with extra decimals; the difference is printed
	// with none, the two figures with as many as tell them apart
	// (apartDigits: "7.2 ms less compute (433.636 s vs 433.643 s)", not
	// "433.64 s vs 433.64 s", QA24 L5).
	diffWhy := func(name, why string, wv, rv int64, f func(int64, int) string, costly string) {
		switch {
		case noDigits(f(max(wv-rv, rv-wv), 0)):
			// A difference that prints as none ("0.0 GiB more memory")
			// is no reason.
		case wv < rv:
			if why != "" {
				why = ": " + strings.TrimPrefix(why, ", ")
			}
			x := apartDigits(f, 0, 9, wv, rv)
			saves = append(saves, fmt.Sprintf("%s less %s (%s vs %s%s)", f(rv-wv, 0), name, f(wv, x), f(rv, x), why))
		case wv > rv && costly != "":
			pays = append(pays, fmt.Sprintf("%s more %s%s", f(wv-rv, 0), costly, why))
		}
	}
	diff := func(name string, wv, rv int64, f func(int64, int) string, costly string) {
		diffWhy(name, "", wv, rv, f, costly)
	}
	diff("exposed communication", w.ExposedComm, r.ExposedComm, planDurAt, "exposed communication")
	diffWhy("compute at full speed", recomputeNote(w.Candidate, r.Candidate, p.N), w.Compute, r.Compute, planDurAt, "compute at full speed")
	// The figures of zerosim run: its step line's two compute times
	// (the busiest rank's compute and the same alone) and its waiting
	// column.
	diff("compute slowdown from collectives beside it", w.Slowed, r.Slowed, planDurAt, "")
	diff("waiting for peers", w.Wait, r.Wait, planDurAt, "")
	diff("network traffic per GPU", w.NetworkBusiest, r.NetworkBusiest, gbsAt, "")
	diff("memory", w.PeakMemory, r.PeakMemory, gibAt, "memory per GPU")
	s := fmt.Sprintf("%s faster than the best alternative (#%d: %s)", pctApart(faster), next+1, describe(r.Candidate, p))
	if faster < 1 {
		s = "a near tie, " + s
	}
	if len(saves) > 0 {
		s += ": " + strings.Join(saves, ", ")
	}
	if len(pays) > 0 {
		s += "; it pays " + strings.Join(pays, " and ")
	}
	return s
}

// recomputeNote names the compute difference when checkpointing, the
// context parallelism (ring attention's passes and the tokens per rank) or
// the optimizer's shard differs.
func recomputeNote(w, r sweep.Candidate, n int) string {
	if w.Recompute != r.Recompute {
		return fmt.Sprintf(", %s vs %s checkpointing", w.Recompute, r.Recompute)
	}
	if w.CP != r.CP {
		return fmt.Sprintf(", context parallelism %d vs %d", w.CP, r.CP)
	}
	if w.EP != r.EP {
		return fmt.Sprintf(", expert parallelism %d vs %d", w.EP, r.EP)
	}
	if (w.Stage != r.Stage || w.K != r.K) && shardsOf(w, n) != shardsOf(r, n) {
		return fmt.Sprintf(", the optimizer updating 1/%d vs 1/%d of the model", shardsOf(w, n), shardsOf(r, n))
	}
	if w.Stage != r.Stage { // the same optimizer shard: the stage's own work
		return fmt.Sprintf(", ZeRO stage %d vs %d", w.Stage, r.Stage)
	}
	return ""
}

// noDigits reports whether a formatted figure has no digit but 0: a
// difference that reads as none.
func noDigits(s string) bool { return !strings.ContainsAny(s, "123456789") }

// shardsOf is the number of ranks the optimizer state is sharded over.
func shardsOf(c sweep.Candidate, n int) int {
	if c.Stage == 0 {
		return 1
	}
	return n / c.K
}

// rankLegend explains the # column: when the table skips ranks (rows that
// tie the one listed above in step and peak and differ only in bucket,
// prefetch or algorithm: distinct), it says so (QA7 F9).
func (pr *PlanReport) rankLegend() string {
	for i, j := range pr.listed() {
		if i != j {
			return "rank of all that fit; a rank not listed ties the one above in step and peak (plan.csv has all)"
		}
	}
	return "rank of all that fit (plan.csv has all)"
}

// listed are the indices of the rows the table lists: the --top (10 by
// default) fastest distinct ones.
func (pr *PlanReport) listed() []int {
	top := pr.Top
	if top <= 0 {
		top = 10
	}
	return distinct(pr.Plan.Rows, top)
}

// shown are the rows the table lists.
func (pr *PlanReport) shown() []sweep.PlanRow {
	var out []sweep.PlanRow
	for _, i := range pr.listed() {
		out = append(out, pr.Plan.Rows[i])
	}
	return out
}

// planTable lists the fastest distinct configurations.
func (pr *PlanReport) planTable() *table {
	p := pr.Plan
	idx := pr.listed()
	// The figures are at the default efficiency when the gives line
	// quotes the published fits beside it: the title says so, as that
	// line does.
	title := fmt.Sprintf("the fastest of the %s configurations that fit, by tokens/s per GPU%s", commas(int64(len(p.Rows))), atDefault(p.PickAtFits))
	if slices.ContainsFunc(p.Rows, overDevice) && !overDevice(p.Rows[0]) {
		title += "; rows with retries (†) last"
	}
	t := &table{Title: title,
		// comm tells apart rows that differ only in bucket size or
		// prefetch depth (QA7 F9); the short names keep to 120 columns.
		Header: []string{"#", "ZeRO", "K", "mb×GA", "AC", "comm", "tok/s", "MFU", "step", "allocated", "free", "exposed", "network"},
		left:   []int{1, 2, 4, 5}}
	cp := p.SearchedCP != nil
	if cp { // a cp column after K, in place of free (the GPU's memory less the device peak)
		t.Header = slices.Insert(slices.Delete(t.Header, 10, 11), 3, "cp")
		t.left = []int{1, 2, 5, 6}
	}
	// free is the GPU's memory less the device peak, what nvidia-smi
	// would leave free (qauser29 #8: the allocated peak's headroom,
	// 53.0 GiB where nvidia-smi shows 36, invited a larger micro-batch
	// than the device takes); it carries † where that peak exceeds the
	// GPU: run warns "expect allocator retries" for it; the others get a
	// space so the figures align.
	dagger := slices.ContainsFunc(idx, func(i int) bool { return overDevice(p.Rows[i]) })
	for _, i := range idx {
		r := p.Rows[i]
		free := gib(deviceFree(p, r))
		switch {
		case overDevice(r):
			free += "†"
		case dagger:
			free += " "
		}
		mark := strconv.Itoa(i + 1)
		if r.Pareto {
			mark += "*"
		}
		if isBound(r) {
			mark += "‡"
		}
		row := []string{mark, strconv.Itoa(r.Stage), kName(r.Candidate), fmt.Sprintf("%d×%d", r.MicroBatch, r.GradAccum),
			r.Recompute, commCell(r), tps(r.TokensPerSecPerGPU), fmt.Sprintf("%.1f%%", 100*r.MFU), planDur(r.StepTime), gib(r.PeakMemory), free,
			planDur(r.ExposedComm), gbs(r.NetworkBusiest)}
		if cp {
			row = slices.Insert(slices.Delete(row, 10, 11), 3, strconv.Itoa(r.CP))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// deviceFree is the GPU's memory less r's device peak (the allocated
// peak with the caching allocator's reserve, the CUDA context and NCCL's
// buffers: run's "device" figure, what nvidia-smi shows in use): plan's
// free column. It is negative where the device peak exceeds the GPU (the
// † rows); a row fits by its Headroom, the same need without the reserve.
func deviceFree(p *sweep.Plan, r sweep.PlanRow) int64 { return p.GPUMemory - r.DevicePeak }

// gatherPool reports whether r's reserve holds a gather pool (DeepSpeed
// ZeRO-3's, or FSDP1's without its rate limiter), which fills what the GPU
// has free (memory.HoldsGatherPool).
func gatherPool(r sweep.PlanRow) bool {
	return memory.HoldsGatherPool(r.ReservedMode)
}

// gatherPoolFree says why such a row has nothing free.
const gatherPoolFree = "DeepSpeed ZeRO-3's gather pool holds the rest, up to its size"

// commCell is a row's communication setting in a few columns: the
// prefetch depth at stage 3 ("pf 2"), else the bucket size replayed
// ("25MB"), the scenario's or its stack's where plan searched none
// (PlanRow.BucketNote says which on the run: line).
func commCell(r sweep.PlanRow) string {
	if r.Stage == 3 {
		return fmt.Sprintf("pf %d", r.Prefetch)
	}
	size := r.BucketSize
	if size == "" {
		size = units.Bytes(r.ReplayedBucket).Exact()
	}
	return strings.ReplaceAll(bucketWords(size), " ", "")
}

// ReproduceArgs is the command that replays p's winner, as words: zerosim
// run on the plan's scenario with its --set overrides, then the winner's
// that change it (sweep.Plan.WinnerSets); nil when nothing fits.
func ReproduceArgs(p *sweep.Plan) []string {
	if p.Best() == nil {
		return nil
	}
	file := p.Scenario
	if file == scenarios.Stdin {
		file = "-"
	}
	args := []string{"zerosim", "run", file}
	for _, set := range append(slices.Clone(p.Sets), p.WinnerSets...) {
		args = append(args, "--set", set)
	}
	return args
}

// ShellQuote quotes a word for a POSIX shell where it needs it: single
// quotes, a ' inside written '\”.
func ShellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,/=:+@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// commandLines writes a command after label as a shell reads it: its words
// quoted, lines of at most 118 columns continued with " \\", a --set kept
// with its value.
func commandLines(label string, args []string) string {
	var words []string
	for i := 0; i < len(args); i++ {
		w := ShellQuote(EscapeControl(args[i]))
		if args[i] == "--set" && i+1 < len(args) {
			i++
			w += " " + ShellQuote(EscapeControl(args[i]))
		}
		words = append(words, w)
	}
	indent := strings.Repeat(" ", utf8.RuneCountInString(label))
	// 118 columns less the " \" that continues a line.
	return label + wrapWords(words, 116, indent, len(indent), " \\\n")
}

// timesWord is "once" or "N times".
func timesWord(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// overDevice reports whether r's device peak (zero.Result.DevicePeak: the
// caching allocator's reserve, the CUDA context and NCCL's buffers on top
// of the allocated peak) does not fit the GPU's memory (sweep.PlanRow's
// DeviceFit): the row fits as run judges it, and run warns that the
// allocator will retry.
func overDevice(r sweep.PlanRow) bool { return !r.DeviceFit }

// isBound reports whether r is timed by one of zerosim's alpha–beta
// lowerings (ring, hierarchical, tree asked for with --algorithms: not
// scenarios.Algorithm.NCCLModel), which
// no NCCL setting reproduces for reduce-scatter and all-gather: a bound,
// not a setting to run; auto is what a run does.
func isBound(r sweep.PlanRow) bool { return !scenarios.Algorithm(r.Algorithm).NCCLModel() }

// boundText says what a bound row is, in compare's words (timingName).
const boundText = "timed by " + "zerosim's alpha–beta lowering at the links' full speed" +
	", a bound that no NCCL setting reproduces for reduce-scatter and all-gather; auto is what a run does"

// boundAlternative is, for a winner timed by an alpha–beta lowering, the
// fastest auto row: what a run of it does.
func boundAlternative(p *sweep.Plan) string {
	best := p.Best()
	for i := range p.Rows {
		if r := &p.Rows[i]; !isBound(*r) {
			return fmt.Sprintf("; the fastest auto row is #%d, %s tokens/s per GPU (%.1f %% slower)", i+1, tps(r.TokensPerSecPerGPU),
				100*(1-r.TokensPerSecPerGPU/best.TokensPerSecPerGPU))
		}
	}
	if !slices.Contains(p.SearchedAlgorithms, "auto") {
		return "; auto was not searched"
	}
	return "; no auto row fits"
}

// planLegend explains the table's terms in one place, in its columns'
// order; the MFU line depends on the model (mfuLegend).
func (pr *PlanReport) planLegend() []string {
	p := pr.Plan
	l := []string{
		labelled("#: ", pr.rankLegend()+"; *: nothing faster fits in less memory. comm: bucket size, or pf: prefetch."),
		// One line for both, so that plan keeps to one screen (the run:
		// line names K: Megatron's num_distributed_optimizer_instances at
		// stages 1–2, HSDP's replicas at 3, or the stack's setting).
		labelled("ZeRO: ", "0 replicates all (DDP); 1 shards the optimizer state; 2 + gradients; 3 + parameters (FSDP). K: copies of it."),
		labelled("mb×GA: ", "sequences per GPU per micro-step × micro-steps per optimizer step. AC: activation checkpointing."),
		mfuLegend(p),
		labelled("tok/s: ", "tokens per second per GPU. network: bytes the busiest GPU sends between nodes per step. exposed: not hidden."),
	}
	if slices.ContainsFunc(p.Rows, isBound) {
		l = slices.Insert(l, 1, labelled("‡: ", strings.Replace(boundText, "timed", "the row's algorithm ("+
			strings.Join(labelAlgos(slices.DeleteFunc(slices.Clone(p.SearchedAlgorithms), func(a string) bool { return a == "auto" })), ", ")+") is timed", 1)+"."))
	}
	if p.SearchedCP == nil {
		// Free is the GPU's memory less the device peak (deviceFree);
		// "fits" is judged without the reserve (sweep.PlanRow.Headroom).
		v := VendorOf(p.GPU)
		free := "GPU memory less the device peak as " + v.smi() + " sees it (allocated, reserve, " + v.extras() + ")."
		if slices.ContainsFunc(pr.shown(), func(r sweep.PlanRow) bool { return overDevice(r) }) {
			// The row's device peak (the caching allocator's reserve on
			// top) exceeds the GPU: run's "expect allocator retries".
			free = "GPU memory less the device peak (" + v.smi() + "'s, with the reserve); †: the reserve does not fit: retries (ranked after the rows with room)."
		}
		if slices.ContainsFunc(pr.shown(), gatherPool) {
			// qauser32 L5: every DeepSpeed ZeRO-3 row read 0.0 GiB free.
			free += " " + gatherPoolFree + " (docs/memory-model.md)."
		}
		l = append(l, labelled("free: ", free))
	}
	if p.SearchedEP != nil {
		l = slices.Insert(l, 2, labelled("ep N: ", "K = 1 with expert parallelism, each MoE layer's routed experts split over N GPUs."))
	}
	if p.SearchedCP != nil {
		l = slices.Insert(l, 3, labelled("cp: ", "context parallelism: ring attention over cp GPUs, each keeping seq_len/cp of every sequence; "+
			"dp = GPUs/cp data-parallel ranks (the ZeRO group is dp·cp)."))
	}
	return l
}

// mfuLegend says how the plan's MFU counts FLOPs, as run does: per token
// for a transformer, 3× the forward FLOPs executed for other models.
func mfuLegend(p *sweep.Plan) string {
	if len(p.Rows) > 0 && p.Rows[0].MFUFromForward {
		return labelled("MFU: ", "model FLOPs utilisation, as run reports it: this model has no per-token count, so 3× the forward FLOPs executed (no recomputation) per second over the GPU's peak.")
	}
	return labelled("MFU: ", "run's: 6N + 12·L·H·Q·s per token (N without an untied embedding; full attention; no recompute) over the peak.")
}

// WritePlanTable writes the plan as one terminal screen: the question, the
// answer, why, the ranked table, the front and what to change when nothing
// fits.
func WritePlanTable(w io.Writer, pr *PlanReport) error {
	if err := writePlanSummary(w, pr); err != nil {
		return err
	}
	p := pr.Plan
	if len(p.Rows) > 0 {
		t := pr.planTable()
		t.Notes = pr.planLegend()
		if err := t.render(w); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w, labelled("front: ", "allocated peak vs tokens/s per GPU, least first: "+paretoText(p))); err != nil {
			return err
		}
	}
	if pr.Network != nil {
		return writeNetworkTable(w, pr.Network)
	}
	return nil
}

// writePlanSummary writes the question and the answer (or what to change).
func writePlanSummary(w io.Writer, pr *PlanReport) error {
	p := pr.Plan
	var b strings.Builder
	each := gib(p.GPUMemory) + " each"
	if p.GPUMemoryUsable {
		each = gib(p.GPUMemory) + " usable each" // what CUDA exposes (scenarios.GPUPreset.Usable)
	}
	fmt.Fprintf(&b, "# zerosim plan: %s (%s parameters) on %d node(s) × %d %s (%s)\n", EscapeControl(p.Model), humanCount(p.Params),
		p.Nodes, p.GPUsPerNode, gpuName(p), each)
	if p.NoSeqLen {
		fmt.Fprintf(&b, "global batch %s samples per step (no sequence length: a sample counts as one token)\n", commas(p.GlobalBatch))
	} else {
		hint := ""
		if p.TokensPerStep > 1e9 {
			// "1M" for a batch is often meant as tokens (qauser32 L1).
			hint = " (a batch in tokens takes the suffix: --global-batch 4Mitokens)"
		}
		fmt.Fprintf(&b, "global batch %s sequences × %s tokens = %s tokens per step%s\n", commas(p.GlobalBatch), commas(p.SeqLen), commas(p.TokensPerStep), hint)
	}
	fmt.Fprintf(&b, "%s\n", wrap(fmt.Sprintf("%s configurations searched%s%s: %s cannot fit in memory, %s replayed, %s fit",
		commas(int64(p.Searched)), cpSearched(p), epSearched(p), commas(int64(p.MemoryPruned)), commas(int64(p.Replayed)), commas(int64(len(p.Rows)))), 120, "  "))
	if len(p.SkippedCP) > 0 {
		fmt.Fprintf(&b, "%s\n", labelled("note:  ", "context-parallel degrees without a configuration to run: "+EscapeControl(strings.Join(p.SkippedCP, "; "))))
	}
	if p.ZeroPP {
		what := "only stage 3 with K = 1 is searched"
		if !slices.Equal(p.SearchedStages, []int{3}) {
			what = "K = 1 only is searched, and the other stages asked for are rejected"
		}
		fmt.Fprintf(&b, "%s\n", labelled("note:  ", "the scenario's ZeRO++ keys run at ZeRO stage 3 with K = 1 (DeepSpeed's rule): "+what))
	}
	if p.RequireDeviceFit {
		fmt.Fprintf(&b, "%s\n", labelled("note:  ", "--require-device-fit: only rows whose device peak (the caching allocator's reserve on top) fits the GPU are ranked"))
	}
	if len(p.Pinned) > 0 {
		fmt.Fprintf(&b, "%s\n", labelled("pinned: ", EscapeControl(strings.Join(p.Pinned, ", "))+" (--set of a key plan searches: searched at that value alone)"))
	}
	if p.SearchedEP == nil && p.EP > 1 {
		fmt.Fprintf(&b, "%s\n", labelled("note:  ", fmt.Sprintf("K fixed at 1 because parallelism.ep=%d (expert parallelism runs with K = 1); ep not searched: the --set pins it", p.EP)))
	}
	if p.Stack != "" {
		fmt.Fprintf(&b, "%s\n", labelled("stack: ", fmt.Sprintf("%s: searched only what it runs, %s", EscapeControl(p.Stack), p.StackRuns)))
	}
	if p.Invalid > 0 {
		fmt.Fprintf(&b, "%s\n", labelled("note:  ", fmt.Sprintf("%s rejected as input (not modelled or invalid), e.g. %s", countNoun(p.Invalid, "configuration is", "configurations are"), EscapeControl(p.FirstInvalid))))
	}
	if best := p.Best(); best != nil {
		// No blank line above: the answer, the command that replays it and
		// the table keep to one screen (TestPlanOneScreen).
		fmt.Fprintf(&b, "%s\n", labelled("run:   ", describe(best.Candidate, p)+"; "+commWords(*best)))
		// free as the table's column (deviceFree), where the device
		// peak fits; otherwise what the allocated peak leaves.
		free := gib(deviceFree(p, *best)) + " free"
		if best.DevicePeak > p.GPUMemory {
			free = gib(best.Headroom) + " free before the allocator's reserve"
		} else if gatherPool(*best) {
			free += ": " + gatherPoolFree
		}
		// The figure "free" is taken from leads (qauser33 M4: "peak 66.4
		// GiB of 79.1 GiB (3.1 GiB free)" was the allocated peak beside
		// the device's free): the device peak where it fits, then the
		// allocated peak, each named.
		fits := fmt.Sprintf("device %s of %s (%s), %s allocated", strings.TrimSuffix(gib(best.DevicePeak), " GiB"), gib(p.GPUMemory),
			strings.Replace(free, " GiB free", " free", 1), strings.TrimSuffix(gib(best.PeakMemory), " GiB"))
		if best.DevicePeak > p.GPUMemory || best.DevicePeak <= 0 {
			fits = fmt.Sprintf("yes, allocated peak %s of %s (%s)", gib(best.PeakMemory), gib(p.GPUMemory), free)
		}
		gives := fmt.Sprintf("%s tokens/s per GPU, MFU %.1f %%, step %s%s%s; fits: %s",
			tps(best.TokensPerSecPerGPU), 100*best.MFU, planDur(best.StepTime), atDefault(p.PickAtFits), planAtFits(p.PickAtFits), fits)
		if best.DevicePeak > p.GPUMemory {
			// The warning zerosim run gives the same configuration: it fits
			// (the device's need without the reserve is within the GPU),
			// the allocator's usual reserve does not.
			gives += fmt.Sprintf(", but the device needs %s as %s sees it: expect retries", gib(best.DevicePeak), VendorOf(p.GPU).smi()) + deviceAlternative(p)
		} else if n := best.SimulatedRetries; n != nil && *n > 0 {
			// The reserve is simulated within the GPU (zerosim run's
			// warning): the device holds it with retries.
			gives += fmt.Sprintf(", but the simulated caching allocator releases its cache %s a step to stay within it", timesWord(*n)) + deviceAlternative(p)
		} else {
			gives += fasterWithRetries(p)
		}
		repro := commandLines("reproduce: ", ReproduceArgs(p))
		if p.Scenario == scenarios.Stdin {
			// "zerosim run -" reads the scenario again: the same bytes
			// (plan.json's scenario_sha256) must be piped to it.
			repro += " (on the same standard input)"
		}
		fmt.Fprintf(&b, "%s\n", repro)
		fmt.Fprintf(&b, "%s\n", labelled("gives: ", gives))
		if isBound(*best) {
			fmt.Fprintf(&b, "%s\n", labelled("bound: ", algoLabel(best.Algorithm)+" collectives are "+boundText+boundAlternative(p)))
		}
		if e := efficiencyBrief(p.Efficiency, p.EfficiencyFrom, p.EfficiencyDefault, p.MFU, p.FP8, p.GPU); e != "" && p.PickAtFits == nil {
			// With the pick at the published fits the gives line says it.
			fmt.Fprintf(&b, "%s\n", labelled("speed: ", e))
		}
		if c := cpBrief(planCP(p, best)); c != "" && !p.NoSeqLen {
			fmt.Fprintf(&b, "%s\n", labelled("cp:    ", c+cpAlternative(p, planCP(p, best))))
		}
		fmt.Fprintf(&b, "%s\n", labelled("why:   ", PlanReason(p)))
		if pr.Tokens > 0 {
			fmt.Fprintf(&b, "%s\n", labelled("train: ", fmt.Sprintf("%s tokens take %s on %d GPUs, %s GPU-hours%s", humanCount(pr.Tokens), trainTime(pr.Tokens, p, best.StepTime),
				p.GPUs, commas(int64(math.Round(gpuHours(pr.Tokens, p, best)))), trainAtFits(pr.Tokens, p))))
		}
	} else {
		b.WriteString("\n" + NoFitText(p) + "\n")
	}
	_, err := io.WriteString(w, b.String()+"\n")
	return err
}

// pctApart is a percentage by which two rows differ as plan's gives and
// why lines write it: one decimal, two under 1 %, and "under 0.01 %" for
// a difference that would print as none ("0.0 % faster" read as no
// reason).
func pctApart(pct float64) string {
	switch {
	case pct < 0.005:
		return "under 0.01 %"
	case pct < 1:
		return fmt.Sprintf("%.2f %%", pct)
	}
	return fmt.Sprintf("%.1f %%", pct)
}

// deviceAlternative is, for a winner whose device peak (the caching
// allocator's reserve, the CUDA context and NCCL's buffers added:
// zero.Result.DevicePeak) passes the GPU's memory, the fastest
// configuration whose device peak fits: what to weigh the winner against,
// as fit names the least nodes with room on the device. The table's rank
// finds it (--top lists it).
func deviceAlternative(p *sweep.Plan) string {
	best := p.Best()
	for i := range p.Rows {
		r := &p.Rows[i]
		if r.DeviceFit {
			return fmt.Sprintf("; #%d has room, %s slower", i+1, pctApart(100*(1-r.TokensPerSecPerGPU/best.TokensPerSecPerGPU)))
		}
	}
	return "; none found has room"
}

// fasterWithRetries is, for a winner with room for the allocator's
// reserve, the fastest row that fits only without it (†: ranked after the
// rows with room, sweep's rankRows) when it is faster: what the reserve
// costs. "" otherwise.
func fasterWithRetries(p *sweep.Plan) string {
	best := p.Best()
	for i := range p.Rows {
		if r := &p.Rows[i]; overDevice(*r) {
			if r.StepTime >= best.StepTime {
				return ""
			}
			return fmt.Sprintf("; #%d is %s faster but needs allocator retries", i+1, pctApart(100*(r.TokensPerSecPerGPU/best.TokensPerSecPerGPU-1)))
		}
	}
	return ""
}

// cpAlternative is, when the winner's cp is one whose nearest published
// row ran more than 10 % slower than predicted (cpSlow), the fastest
// configuration at a cp that the published runs do not put in doubt (cp 1,
// or a cp whose nearest row was within 10 %): what to weigh the winner
// against. "" otherwise.
func cpAlternative(p *sweep.Plan, cp int) string {
	if !cpSlow(cp) {
		return ""
	}
	for i := range p.Rows {
		c := planCP(p, &p.Rows[i])
		if c <= 1 || !cpSlow(c) {
			return fmt.Sprintf("; expect cp %d slower: the fastest at cp %d ranks %d, %s tokens/s per GPU (--top %d lists it)", cp, c, i+1, tps(p.Rows[i].TokensPerSecPerGPU), i+1)
		}
	}
	return fmt.Sprintf("; expect cp %d slower", cp)
}

// planCP is the winner's context-parallel degree: its own when the plan
// searched cp, else the scenario's.
func planCP(p *sweep.Plan, best *sweep.PlanRow) int {
	if best.Candidate.CP > 0 {
		return best.Candidate.CP
	}
	return p.CP
}

// epSearched names the expert-parallel degrees searched, "" when the plan
// keeps the scenario's.
func epSearched(p *sweep.Plan) string {
	if p.SearchedEP == nil {
		return ""
	}
	if p.EPLeftOut {
		return fmt.Sprintf(" (expert parallelism %s: above 1 it runs K = 1 only, which the K searched leaves out)", strings.Join(mapSlice(p.SearchedEP, strconv.Itoa), ", "))
	}
	return fmt.Sprintf(" (expert parallelism %s, K = 1 above 1)", strings.Join(mapSlice(p.SearchedEP, strconv.Itoa), ", "))
}

// cpSearched names the context-parallel degrees searched, "" when the plan
// keeps the scenario's.
func cpSearched(p *sweep.Plan) string {
	if p.SearchedCP == nil {
		return ""
	}
	return fmt.Sprintf(" (context parallelism %s on the %s GPUs)", strings.Join(mapSlice(p.SearchedCP, strconv.Itoa), ", "), commas(int64(p.GPUs)))
}

func gpuName(p *sweep.Plan) string {
	if p.GPU != "" {
		return EscapeControl(p.GPU)
	}
	return "GPU"
}

// humanCount is a count with an SI prefix ("13.0 B", "1.0 T").
func humanCount(n int64) string {
	f := float64(n)
	for _, u := range []struct {
		s string
		v float64
	}{{"T", 1e12}, {"B", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if f >= u.v {
			return fmt.Sprintf("%.1f %s", f/u.v, u.s)
		}
	}
	return strconv.FormatInt(n, 10)
}

func stepsFor(tokens int64, p *sweep.Plan) float64 {
	return math.Ceil(float64(tokens) / float64(p.TokensPerStep))
}

func trainTime(tokens int64, p *sweep.Plan, step int64) string {
	secs := stepsFor(tokens, p) * float64(step) / 1e12
	if days := secs / 86400; days >= 1 {
		return fmt.Sprintf("%.1f days", days)
	}
	return fmt.Sprintf("%.1f hours", secs/3600)
}

// trainAtFits is the train line's time at the pick's published fits
// (sweep.Plan.PickAtFits), as the gives line quotes its step there: the
// default's days alone read as the time to budget. "" without them.
func trainAtFits(tokens int64, p *sweep.Plan) string {
	f := p.PickAtFits
	if f == nil {
		return ""
	}
	return "; " + fitsRange(trainTime(tokens, p, f.High.StepTime), trainTime(tokens, p, f.Low.StepTime)) + " at the published fits"
}

func gpuHours(tokens int64, p *sweep.Plan, r *sweep.PlanRow) float64 {
	return stepsFor(tokens, p) * float64(r.StepTime) / 1e12 / 3600 * float64(p.GPUs)
}

// paretoFront is the indices of the rows on the memory-vs-throughput
// front, least memory first (slower first on a tie): by memory, not by
// rank, as rows that need allocator retries rank after the others
// (sweep's rankRows) and may be on the front.
func paretoFront(p *sweep.Plan) []int {
	var front []int
	for i, r := range p.Rows {
		if r.Pareto {
			front = append(front, i)
		}
	}
	slices.SortStableFunc(front, func(i, j int) int {
		a, b := p.Rows[i], p.Rows[j]
		return cmp.Or(cmp.Compare(a.PeakMemory, b.PeakMemory), cmp.Compare(b.StepTime, a.StepTime))
	})
	return front
}

// paretoText lists the memory-vs-throughput front, least memory first.
func paretoText(p *sweep.Plan) string {
	front := paretoFront(p)
	// Each point's memory with the decimals that tell it from its
	// neighbours (apartDigits, as gibApart): two points of the front never
	// read as the same memory, the slower one then looking dominated. A
	// run of points that read alike takes one precision for all of them,
	// so none reads out of order (30.10, 30.12, then 30.1 GiB for 30.14).
	mem := make([]string, len(front))
	for k, i := range front {
		mem[k] = gib(p.Rows[i].PeakMemory)
	}
	for k := 0; k < len(front); {
		end := k + 1
		for end < len(front) && mem[end] == mem[k] {
			end++
		}
		if end-k > 1 {
			run := make([]int64, 0, end-k)
			for _, i := range front[k:end] {
				run = append(run, p.Rows[i].PeakMemory)
			}
			d := apartDigits(gibAt, 0, 2, run...)
			for j := k; j < end; j++ {
				mem[j] = gibAt(run[j-k], d)
			}
		}
		k = end
	}
	var parts []string
	for k, i := range front {
		parts = append(parts, fmt.Sprintf("%s → %s (#%d)", mem[k], tps(p.Rows[i].TokensPerSecPerGPU), i+1))
	}
	// One screen: the three least-memory and the three fastest points; the
	// table's * and plan.csv mark every point of the front.
	if len(parts) > 6 {
		parts = append(append(parts[:3:3], "…"), parts[len(parts)-3:]...)
	}
	return strings.Join(parts, ", ")
}

// glueUnits joins a unit to the number before it ("15.4 ms", "5.8 GiB"),
// so a line never breaks between them.
func glueUnits(words []string) []string {
	var out []string
	for _, w := range words {
		unit := strings.TrimRight(w, ",;:.)")
		switch unit {
		case "ms", "s", "µs", "GB", "GiB", "MB", "TB", "%", "GB/s", "Gb/s", "T", "B", "days", "hours":
			if n := len(out); n > 0 && strings.ContainsAny(out[n-1][len(out[n-1])-1:], "0123456789") {
				out[n-1] += " " + w
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// labelled writes "label text" wrapped at 118 columns, continuation lines
// indented under the text.
func labelled(label, text string) string {
	n := utf8.RuneCountInString(label) // "‡: " is three columns
	return label + wrap(text, 118-n, strings.Repeat(" ", n))
}

// wrap breaks s into lines of at most width columns at spaces, indenting
// continuation lines.
func wrap(s string, width int, indent string) string {
	return wrapWords(glueUnits(strings.Fields(s)), width, indent, 0, "\n")
}

// wrapWords joins words with spaces, starting at column col, breaking
// before a word that would pass width with brk and indent.
func wrapWords(words []string, width int, indent string, col int, brk string) string {
	var b strings.Builder
	for i, word := range words {
		n := utf8.RuneCountInString(word)
		if i > 0 && col+1+n > width {
			b.WriteString(brk + indent)
			col = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// cpHintShare is the activations' share of the least-memory peak from which
// NoFitText suggests searching context parallelism: then cp ≥ 2 can take
// an eighth or more of the peak off.
const cpHintShare = 0.25

// NoFitText says that nothing fits and what to change, from the numbers.
func NoFitText(p *sweep.Plan) string {
	c := p.Smallest
	capacity, peak := gibApart(p.GPUMemory, p.SmallestPeak)
	with := ""
	if p.RequireDeviceFit {
		with = " with the caching allocator's reserve (--require-device-fit)"
	}
	over := fmt.Sprintf("%s over", overBy(p.SmallestPeak-p.GPUMemory))
	switch need := max(p.SmallestPeak, p.SmallestNeed); {
	case need <= p.GPUMemory && p.SmallestAllocOOM:
		// Peak and need within the GPU: it does not fit because the
		// simulated caching allocator runs out of memory there
		// (memory.AllocSim.OOMReason), not by a negative excess.
		over = "within the GPU with the CUDA context and NCCL's buffers, but the simulated caching allocator runs out of memory there (fragmentation: a request finds no room even after it releases its cache; PyTorch raises OutOfMemoryError)"
	case p.SmallestNeed > p.SmallestPeak:
		// The peak may be within the GPU; what the device needs there
		// is not (qauser32/ux32: "peaks at 31.6 GiB, -411.1 MiB over").
		_, need := gibApart(p.GPUMemory, p.SmallestNeed)
		over = fmt.Sprintf("and with the CUDA context and NCCL's buffers the device needs %s, %s over",
			need, overBy(p.SmallestNeed-p.GPUMemory))
	}
	s := labelled("fits:  ", fmt.Sprintf("no. No configuration fits in %s per GPU%s; the one needing the least memory (%s) peaks at %s, %s.",
		capacity, with, describe(c, p), peak, over)) + "\n"
	return s + labelled("to fit: ", ToFit(p))
}

// ToFit is what to change when nothing of plan p fits, as plan's "to
// fit:" line says it and fit repeats it when no stage fits on any cluster
// it tried (QA34 L2): the least nodes, the stages, checkpointing and
// context parallelism to search, GPUs with more memory, and the CPU
// offload or loss kernel that make the least-memory configuration fit.
func ToFit(p *sweep.Plan) string {
	c := p.Smallest
	_, peak := gibApart(p.GPUMemory, p.SmallestPeak)
	var ways []string
	if perRank := c.MicroBatch * c.GradAccum; perRank > scenarios.MaxGradAccum && c.MicroBatch > 1 && !p.OneStep {
		// The batch, not the memory, sets the micro-batch: a rank's
		// sequences over at most MaxGradAccum micro-steps (qauser32 L1:
		// --global-batch 1M on 16 GPUs, micro-batch 20 × 3,125, was told
		// to use context parallelism or 419 GiB GPUs, where micro-batch 1
		// fits).
		dp := p.GlobalBatch / perRank
		ways = append(ways, fmt.Sprintf("a global batch of at most %s sequences (%s per GPU): zerosim models at most %s accumulation steps (training.grad_accum), so the %s sequences per GPU of %s need micro-batches of %d or more",
			commas(dp*scenarios.MaxGradAccum), commas(scenarios.MaxGradAccum), commas(scenarios.MaxGradAccum), commas(perRank), commas(p.GlobalBatch), c.MicroBatch))
	}
	if p.NodesToFit > 0 {
		w := fmt.Sprintf("%d nodes (the least that fit%s, %d more)", p.NodesToFit, pinnedWith(p), p.NodesToFit-p.Nodes)
		nc, sc := p.NodesCandidate, c
		nc.K, sc.K = 1, 1
		if nc != sc && nc.MicroBatch > 0 {
			// Another stage's configuration fits on fewer nodes than the
			// least-memory one (qauser32 M3).
			w = fmt.Sprintf("%d nodes with %s (the least that fit%s, %d more)", p.NodesToFit, describe(nc, p), pinnedWith(p), p.NodesToFit-p.Nodes)
		} else {
			nc = c
		}
		// The global batch must split over their dp (a plan there checks
		// it: CheckGlobalBatch); the configuration keeps its micro-batch ×
		// accumulation per GPU, so a multiple of dp sequences.
		cp := max(p.CP, 1)
		if nc.CP > 0 {
			cp = nc.CP
		}
		if dp := int64(p.NodesToFit*p.GPUsPerNode) / int64(cp); dp > 0 && p.GlobalBatch%dp != 0 {
			w += fmt.Sprintf(" with a global batch that is a multiple of their dp %d, such as %s sequences (%d × %d per GPU: the plan's %s does not split over them)",
				dp, commas(dp*nc.MicroBatch*nc.GradAccum), nc.MicroBatch, nc.GradAccum, commas(p.GlobalBatch))
		}
		if p.NodesToRoom > p.NodesToFit {
			// There zerosim run says "yes, but … expect allocator
			// retries"; fit's "leave room" is this count.
			w += fmt.Sprintf(", with allocator retries there (%d nodes leave room for the caching allocator's reserve)", p.NodesToRoom)
		}
		ways = append(ways, w)
	}
	if p.OneStep {
		ways = append(ways, fmt.Sprintf("fewer sequences per GPU: stack %s has no gradient accumulation, so each GPU's %s sequences are one micro-batch (a smaller --global-batch, or more GPUs; --set training.grad_accum=N models accumulation anyway)",
			EscapeControl(p.Stack), commas(c.MicroBatch)))
	}
	// Only the stages the stack runs are advised (plan refuses the others:
	// "--stages 2: stack megatron does not run ZeRO stage 2"); stage 3
	// under a stack that does not run it is another stack's (QA17 M4).
	stages := p.StackStages()
	if stages == nil {
		stages = []int{0, 1, 2, 3}
	}
	names := make([]string, len(stages))
	for i, st := range stages {
		names[i] = strconv.Itoa(st)
	}
	search := strings.Join(names, ",")
	switch {
	case slices.Contains(p.SearchedStages, 3):
	case slices.Contains(stages, 3):
		ways = append(ways, "ZeRO stage 3 ("+searchIt(p, "parallelism.zero_stage", "--stages "+search)+")")
	default:
		if top := stages[len(stages)-1]; !slices.Contains(p.SearchedStages, top) {
			ways = append(ways, fmt.Sprintf("ZeRO stage %d (%s)", top, searchIt(p, "parallelism.zero_stage", "--stages "+search)))
		}
		others := scenarios.StacksRunning(3)
		ways = append(ways, fmt.Sprintf("ZeRO stage 3, which stack %s does not run (it runs stages %s) and %s do (--set stack=%s)",
			p.Stack, scenarios.ListAnd(names), scenarios.ListAnd(others), others[0]))
	}
	if !slices.Contains(p.SearchedRecompute, "full") {
		ways = append(ways, "full activation checkpointing ("+searchIt(p, "training.recompute", "--recompute none,selective,full")+")")
	}
	// Without accumulation (OneStep) cp cannot help: dp falls as cp rises
	// and a rank's one micro-batch holds as many tokens.
	if p.SearchedCP == nil && p.ActivationShare >= cpHintShare && !p.OneStep {
		ways = append(ways, fmt.Sprintf("context parallelism (the activations are %.0f %% of that peak by the memory model, and a rank keeps those of seq_len/cp tokens per sequence; search it: --cp 1,2,4,8)",
			100*p.ActivationShare))
	}
	// What the device needs at that peak (the CUDA context and NCCL's
	// buffers added), not the peak alone; where both are within the GPU
	// and the simulated allocator runs out of memory there, only that
	// more is needed (NoFitText says why).
	if need := max(p.SmallestPeak, p.SmallestNeed); need > p.GPUMemory {
		_, peak = gibApart(p.GPUMemory, need)
		ways = append(ways, fmt.Sprintf("GPUs with at least %s", peak))
	} else if p.SmallestAllocOOM {
		ways = append(ways, fmt.Sprintf("GPUs with more than %s", gib(p.GPUMemory)))
	} else {
		ways = append(ways, fmt.Sprintf("GPUs with at least %s", peak))
	}
	offload := " (plan does not search CPU offload; none makes this configuration fit.)"
	if n := p.StackOffloadNote(); n != "" {
		offload = " (plan does not advise CPU offload: " + n + "; --set stack=deepspeed runs it.)"
	}
	if len(p.OffloadSets) > 0 {
		ways = append(ways, fmt.Sprintf("offload to the CPU, --set %s: peak %s, replayed (plan does not search offload)",
			strings.Join(p.OffloadSets, " --set "), gib(p.OffloadPeak)))
		offload = ""
	}
	if len(p.LossSets) > 0 {
		ways = append(ways, fmt.Sprintf("a fused cross-entropy loss in place of the fp32 one (flash-attn's, as llm-foundry's MPT runs), --set %s: peak %s, replayed (plan does not search the loss kernel)",
			strings.Join(p.LossSets, " --set "), gib(p.LossPeak)))
	}
	text := strings.Join(ways, "; or ") + "." + offload
	if len(p.Pinned) > 0 {
		// s28 L1: with --set training.grad_accum=1 the nodes were 4
		// against 3 without the pin, and nothing said why.
		text += fmt.Sprintf(" These hold under the pin %s: without that --set plan searches %s too, and may need less.",
			EscapeControl(strings.Join(p.Pinned, ", ")), map[bool]string{true: "those keys", false: "the key"}[len(p.Pinned) > 1])
	}
	return text
}

// pinnedWith is " with K=V pinned" for the plan's pinned keys (the
// --set of a key plan searches), "" without any.
func pinnedWith(p *sweep.Plan) string {
	if len(p.Pinned) == 0 {
		return ""
	}
	return " with " + EscapeControl(strings.Join(p.Pinned, ", ")) + " pinned"
}

// searchIt is the advice to search key with flags, which plan refuses
// beside a --set pinning key ("--set parallelism.zero_stage=0 pins
// parallelism.zero_stage, and --stages searches it"): then the pin is
// dropped first (qa19 L2).
func searchIt(p *sweep.Plan, key, flags string) string {
	for _, kv := range p.Pinned {
		if strings.HasPrefix(kv, key+"=") {
			return "search it: drop --set " + kv + ", add " + flags
		}
	}
	return "search it: " + flags
}

// WritePlanJSON writes the plan as JSON (exact integers; times in ps).
func WritePlanJSON(w io.Writer, pr *PlanReport) error {
	o := newPlanJSON(pr.Plan, pr.Network)
	o.Reason = PlanReason(pr.Plan)
	if best := pr.Plan.Best(); best == nil {
		o.NoFit = NoFitText(pr.Plan)
	} else if pr.Tokens > 0 {
		o.Tokens, o.Hours = pr.Tokens, gpuHours(pr.Tokens, pr.Plan, best)
	}
	return writeJSON(w, o)
}

// PlanCSVHeader is the header of plan.csv.
var PlanCSVHeader = []string{"rank", "zero_stage", "k", "micro_batch", "grad_accum", "recompute", "bucket_size_bytes", "prefetch_depth", "algorithm",
	"tokens_per_s_per_gpu", "mfu", "step_time_ps", "compute_ps", "exposed_comm_ps", "network_bytes", "network_busiest_bytes", "nvlink_bytes",
	"peak_memory_bytes", "headroom_bytes", "device_peak_bytes", "reserved_mode", "allocator_retries", "pareto"}

// WritePlanCSV writes every configuration that fits, fastest first.
func WritePlanCSV(w io.Writer, pr *PlanReport) error {
	cw := csv.NewWriter(w)
	cp, ep := pr.Plan.SearchedCP != nil, pr.Plan.SearchedEP != nil
	header := slices.Clone(PlanCSVHeader)
	if ep { // ep after the rank when the plan searched it
		header = slices.Insert(header, 1, "ep")
	}
	if cp { // cp and dp after the rank when the plan searched them
		header = slices.Insert(header, 1, "cp", "dp")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	for i, r := range pr.Plan.Rows {
		pf := ""
		if r.Prefetch >= 0 {
			pf = strconv.Itoa(r.Prefetch)
		}
		// The bucket size replayed, the stack's own too, in bytes as every
		// size in the file ("40MB" is 40000000).
		bucket := ""
		if r.ReplayedBucket > 0 {
			bucket = i64(r.ReplayedBucket)
		}
		rec := []string{strconv.Itoa(i + 1), strconv.Itoa(r.Stage), strconv.Itoa(r.K), i64(r.MicroBatch), i64(r.GradAccum), r.Recompute,
			bucket, pf, r.Algorithm, sweep.FormatTokensPerSec(r.TokensPerSecPerGPU), sweep.FormatMFU(r.MFU),
			i64(r.StepTime), i64(r.Compute), i64(r.ExposedComm), i64(r.NetworkBytes), i64(r.NetworkBusiest), i64(r.NVLinkBytes),
			i64(r.PeakMemory), i64(r.Headroom), i64(r.DevicePeak), r.ReservedMode, sweep.FormatRetries(r.SimulatedRetries), strconv.FormatBool(r.Pareto)}
		if ep {
			rec = slices.Insert(rec, 1, strconv.Itoa(r.EP))
		}
		if cp {
			rec = slices.Insert(rec, 1, strconv.Itoa(r.CP), strconv.Itoa(r.DP))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
