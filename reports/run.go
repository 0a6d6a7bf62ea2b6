package reports

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// Run is one replayed step with the scenario it came from: what `zerosim
// run` reports. Stages, when set, holds the memory of stages 0–3 for the
// memory plot (memory.Stages), the allocated figures alone (the plot reads
// no reserve: memory.ReserveNone); NewRun fills it.
type Run struct {
	Scenario *scenarios.Scenario
	Result   *zero.Result
	Stages   []*memory.Report
	// AllRanks makes result.json list every rank on the symmetric fast
	// path too, instead of each distinct record once with the ranks it
	// stands for.
	AllRanks bool
	// Style is how the terminal tables show bytes: GiB or GB, and with
	// Wide every column in exact bytes (thousands separated).
	Style MemoryStyle
	// Levers are the changes replayed to cut a latency-bound step's
	// per-collective latency (sweep.LatencyLevers), named by its finding.
	Levers []sweep.Lever
	// AtFits is the step replayed at the published runs' fits on its GPU
	// (sweep.AtPublishedFits), set when the scenario runs at zerosim's
	// default GEMM efficiency: the headline's figures then read as a range.
	AtFits *sweep.PublishedFits
	// WithoutLinks is the scenario replayed without its link overrides
	// (sweep.WithoutLinkOverrides), set when it has degraded links
	// (zero.Result.Degraded): the finding on them compares the two steps.
	WithoutLinks *sweep.Lever
	// File is the scenario's file as the command names it: an unnamed
	// scenario (name: is optional) is named by its base name (name).
	File string
}

// name is the scenario's name, or its file's base name without the
// extension when it has none: the report, result.json and report.html
// said "zerosim run: " (QA25 L9). The digest covers the scenario, not this.
func (run *Run) name() string {
	if run.Scenario.Name != "" || run.File == "" {
		return run.Scenario.Name
	}
	base := filepath.Base(run.File)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// NewRun bundles a scenario and its replay and analyzes the memory of
// stages 0–3 at the scenario's K.
// at, when not nil, gives s at another stage as the loader reads it
// (memory.EstimateStages).
func NewRun(s *scenarios.Scenario, r *zero.Result, at func(stage int) *scenarios.Scenario) (*Run, error) {
	if s == nil || r == nil || r.Schedule == nil {
		return nil, fmt.Errorf("reports: run needs a scenario and a replay result with its schedule")
	}
	st, err := runStages(s, at)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	return &Run{Scenario: s, Result: r, Stages: st}, nil
}

// runStages is memory.EstimateStages of s at stages 0–3 for the memory
// plot, without another stage that has no figures (NotLaidOut): one the
// stack does not run (qauser32 L10), one the stack refuses, or one whose
// groups s's bucket size cuts into more than memory.MaxBuckets buckets.
// Stage 3 lays out a bucket per unit whatever the size, so a ZeRO-3 step
// that validates and replays may have a bucket size stages 0–2 cannot lay
// out (default example at stage 3 with 30KB buckets: run refused the
// replayed step, "default: communication.bucket_size 30000 B cuts group
// \"dense\" …", and validate said ok). The plot leaves that stage's bar
// out.
func runStages(s *scenarios.Scenario, at func(int) *scenarios.Scenario) ([]*memory.Report, error) {
	noReason := func(int, error) string { return "" } // the bar is left out, with no note
	rs, err := memory.EstimateStages(s, []int{0, 1, 2, 3}, []memory.Estimator{memory.EstimatorZerosim}, memory.Options{Reserve: memory.ReserveNone}, noReason, at)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rs, func(r *memory.Report) bool { return r.NotLaidOut }), nil
}

// runTableRows is the cap on per-rank rows: above it the time table shows
// min / median / max over ranks.
const runTableRows = 16

// taskName names task t of a schedule the way traces and tables show it:
// the kind, then the layer name for compute, "unit u" for ZeRO-3 gathers
// and reductions, "bucket b" for bucketed collectives ("forward ffn",
// "all-gather unit 3", "reduce-scatter bucket 2", "optimizer").
func taskName(sc *zero.Schedule, t int32) string {
	if sc == nil || t < 0 || int(t) >= len(sc.Tasks) {
		return fmt.Sprintf("task %d", t)
	}
	task := &sc.Tasks[t]
	name := task.Kind.String()
	switch {
	case task.Unit >= 0:
		// A collective is named by the unit it gathers or reduces, as the
		// unit's compute is ("reduce-scatter experts.60", not "unit 119").
		if task.Unit < len(sc.Costs) && sc.Costs[task.Unit].Name != "" {
			return name + " " + sc.Costs[task.Unit].Name
		}
		return name + " unit " + strconv.Itoa(task.Unit)
	case task.Bucket >= 0:
		return name + " bucket " + strconv.Itoa(task.Bucket)
	}
	return name
}

// percent formats 100·num/den with one decimal, exactly rounded ("31.4").
func percent(num, den int64) string {
	if den == 0 {
		return "0.0"
	}
	n := new(big.Int).Mul(big.NewInt(num), big.NewInt(100))
	return new(big.Rat).SetFrac(n, big.NewInt(den)).FloatString(1)
}

func dur(ps units.Duration) string { return ps.String() }

func iec(b int64) string { return units.Bytes(b).IEC() }

// modelText is the model's name and parameter count ("llama2-7b, 6,738,415,616 params").
func modelText(s *scenarios.Scenario) string {
	name := s.Model.Label()
	active := ""
	if a, t := s.Model.ActiveParams(), s.Model.TotalParams(); a != t {
		active = ", " + commas(a) + " active per token" + ActiveIncludes(s.Model.LayerList)
	}
	return fmt.Sprintf("%s, %s params%s (%s)", name, commas(s.Model.TotalParams()), active, countNoun(len(s.Model.LayerList), "layer/unit", "layers/units"))
}

// ActiveIncludes says what an active-parameter count of layers holds
// beside the blocks, since model cards differ (Mistral and Qwen count the
// input embedding, OpenAI's gpt-oss and DeepSeek do not; DeepSeek-V3's 37B
// leaves out its multi-token-prediction module): " incl. the input
// embedding" when a unit named embedding has parameters, " and the MTP
// module" after it when a block is one; "" otherwise.
func ActiveIncludes(layers []scenarios.Layer) string {
	emb, mtp := false, false
	for _, l := range layers {
		emb = emb || l.Name == "embedding" && l.Params > 0
		mtp = mtp || l.Dims != nil && l.Dims.MTP
	}
	switch {
	case emb && mtp:
		return " incl. the input embedding and the MTP module"
	case emb:
		return " incl. the input embedding"
	case mtp:
		return " incl. the MTP module"
	}
	return ""
}

// Commas groups the digits of n by thousands (1,234,567).
func Commas(n int64) string { return commas(n) }

// commas groups the digits of n by thousands.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func clusterText(s *scenarios.Scenario, u MemoryUnits) string {
	c := &s.Cluster
	gpu := c.GPU
	if gpu == "" {
		gpu = "GPU"
	}
	capacity := u.format(int64(c.GPUMemory))
	if c.GPUMemoryUsable {
		capacity += " usable" // what CUDA exposes (scenarios.GPUPreset.Usable)
	}
	t := fmt.Sprintf("%s × %d %s (%s)", countNoun(c.Nodes, "node", "nodes"), c.GPUsPerNode, gpu, capacity)
	if c.Intra.Bandwidth > 0 {
		t += fmt.Sprintf(", intra %v %v", c.Intra.Bandwidth, c.Intra.Latency)
	}
	if c.Nodes > 1 && c.Inter.Bandwidth > 0 {
		t += fmt.Sprintf(", inter %v %v", c.Inter.Bandwidth, c.Inter.Latency)
		// Shared NICs: the bandwidth is a NIC's, not a GPU's (seed
		// 001's Azure cluster: one 40 Gb/s NIC for 4 GPUs read as 5 GB/s
		// per GPU).
		// One NIC per GPU says so too: "inter 12.50 GB/s" read the same
		// for per_gpu and per_node, 8× apart on 8 GPUs (qauser s28 M5).
		if c.NICs == scenarios.NICPerNode {
			t += fmt.Sprintf(" per NIC, %s per node shared by its %d GPUs", countNoun(c.NICsPerNode, "NIC", "NICs"), c.GPUsPerNode)
		} else {
			t += fmt.Sprintf(" per NIC, 1 NIC per GPU (%d per node)", c.GPUsPerNode)
		}
		// The host CPU enters the tuner's cost across nodes
		// (cluster.host.cpu; collectives.netOverhead). Offload fills
		// cluster.host.cpu with the GPU's system's CPU, so a filled key
		// is the user's only when it differs from that (QA14 #6); a
		// given key equal to the default is the GPU's system's CPU too.
		from := "cluster.host.cpu"
		if c.Host.CPU == "" || c.Host.CPU == scenarios.DefaultHostCPU(c.HostPreset()) {
			from = "the GPU's system"
		}
		t += fmt.Sprintf(", %s host CPU (%s)", c.CPU(), from)
	}
	return t
}

func algorithmText(s *scenarios.Scenario) string {
	return string(s.Communication.Algorithm)
}

// pinsText names what communication.nccl_algo and nccl_proto pin NCCL's
// tuner to, as a job's NCCL_ALGO and NCCL_PROTO would (QA18 M2: a pinned
// protocol doubled the default step and nothing said so); "" when
// neither is set.
func pinsText(s *scenarios.Scenario) string {
	var pins []string
	if v := s.Communication.NCCLAlgo; v != "" {
		pins = append(pins, "NCCL_ALGO="+v+" (communication.nccl_algo)")
	}
	if v := s.Communication.NCCLProto; v != "" {
		pins = append(pins, "NCCL_PROTO="+v+" (communication.nccl_proto)")
	}
	if len(pins) == 0 {
		return ""
	}
	return ", pinned: " + strings.Join(pins, ", ")
}

func timingText(t string) string {
	if t == "" {
		return ""
	}
	return " (" + t + ")"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// kText is the headline's K: the shard groups' size, except at stage 0,
// which shards nothing (every rank holds the whole state, as the memory
// table's "sharded over 1" says), so a K above 1 there changes nothing.
func kText(stage, k, n int) string {
	switch {
	case stage == 0 && k > 1:
		return fmt.Sprintf("%d (no effect: stage 0 shards nothing)", k)
	case stage == 0:
		return fmt.Sprintf("%d (stage 0 shards nothing)", k)
	}
	return fmt.Sprintf("%d (shard groups of %d)", k, n/k)
}

// Headline lists the run's headline as label/value pairs.
func (run *Run) headline() [][2]string {
	s, r := run.Scenario, run.Result
	at, fits := atDefault(run.AtFits), publishedSpread(run.AtFits)
	sym := "no (every rank simulated)"
	if r.Asymmetry != "" {
		sym = "no (every rank simulated: " + r.Asymmetry + ")"
	}
	if r.Symmetric {
		sym = "yes (one representative rank stands for all)"
	}
	rows := [][2]string{
		{"scenario", run.name() + scenarioDigest(s)},
		{"model", modelText(s)},
		{"cluster", clusterText(s, run.Style.Units)},
		{"ZeRO stage", strconv.Itoa(r.Stage)},
		{"N (dp·cp)", groupText(s, r.N)},
		{"K", kText(r.Stage, r.K, r.N)},
		{"algorithm", algorithmText(s) + timingText(r.Timing) + pinsText(s)},
		{"overlap", yesNo(r.Overlap)},
		{"symmetric fast path", sym},
		{"step time", stepText(r, s, at) + fits.step},
		{"tokens/s per GPU", tokensText(r, s, at) + fits.tokens},
		{"utilization", utilizationText(r.Utilization, at) + fits.util + windowUtilization(s, r.Utilization) + fp8Utilization(s, r.Utilization)},
		{"fits in GPU memory", run.Fit().String()},
		{"zerosim", ReadBuild().String()},
	}
	if e := efficiencyText(s, run.AtFits != nil); e != "" {
		// Where the step's speed came from, next to the step time.
		at := slices.IndexFunc(rows, func(r [2]string) bool { return r[0] == "step time" })
		rows = slices.Insert(rows, at, [2]string{"compute efficiency", e})
	}
	if a := attentionText(s); a != "" {
		at := slices.IndexFunc(rows, func(r [2]string) bool { return r[0] == "step time" })
		rows = slices.Insert(rows, at, [2]string{"attention", a})
	}
	if c := cpText(s.Parallelism.CP); c != "" && s.Model.SeqLen > 0 && s.Model.Heads > 0 {
		// Context parallelism's ring splits attention; a model without it
		// (seed 000's MLP) only shards over dp·cp.
		at := slices.IndexFunc(rows, func(r [2]string) bool { return r[0] == "step time" })
		rows = slices.Insert(rows, at, [2]string{"context parallel", c})
	}
	return rows
}

// publishedCPRuns is zero.PublishedCPRuns, a variable so that tests can
// give every wording its case.
var publishedCPRuns = zero.PublishedCPRuns

// cpText sets a step with context parallelism cp > 1 beside the published
// runs with it (docs/validation.md): how far zerosim's prediction was from
// each, and, when the row nearest in cp ran more than 10 % slower than
// predicted, that this step should be expected slower too. "" for cp ≤ 1.
func cpText(cp int) string {
	if cp <= 1 {
		return ""
	}
	head := fmt.Sprintf("cp %d (ring attention over %d GPUs)", cp, cp)
	errs, sources := cpErrors()
	if errs == "" {
		return head + "; no published run with context parallelism in docs/validation.md to set it beside"
	}
	t := fmt.Sprintf("%s; published runs with it (%s): predicted tokens/s %s against measured (docs/validation.md, docs/compute-model.md)",
		head, sources, errs)
	if cpSlow(cp) {
		t += ", so expect a slower step"
	}
	return t
}

// cpBrief is cpText in one line of plan's summary, for the winner's cp.
func cpBrief(cp int) string {
	if cp <= 1 {
		return ""
	}
	errs, sources := cpErrors()
	if errs == "" {
		return ""
	}
	return fmt.Sprintf("published runs with it (%s): predicted tokens/s %s against measured", sources, errs)
}

// cpSlow reports whether the published row nearest to cp (the worse of
// two as near) ran more than 10 % slower than zerosim predicted: the bound
// past which docs/validation.md lists a row as "more than 10 % off" (a
// project threshold, not a measured one).
func cpSlow(cp int) bool {
	best, near := -1, 0.0
	for _, r := range publishedCPRuns() {
		d := abs(r.CP - cp)
		if best < 0 || d < best || (d == best && r.Error > near) {
			best, near = d, r.Error
		}
	}
	return near > 0.10
}

// cpErrors lists the published rows with context parallelism as "+3.2 %
// at cp 2, +50.1 % at cp 4" and names their sources.
func cpErrors() (errs, sources string) {
	var parts, srcs []string
	for _, r := range publishedCPRuns() {
		parts = append(parts, fmt.Sprintf("%+.1f %% at cp %d", 100*r.Error, r.CP))
		if !slices.Contains(srcs, r.Source) {
			srcs = append(srcs, r.Source)
		}
	}
	return strings.Join(parts, ", "), strings.Join(srcs, ", ")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// groupText is the ZeRO group's size, with the degrees that make it when
// they are not plain data parallelism: cp > 1 splits every sequence, and
// ep > 1 splits the routed experts over ep ranks (each expert unit sharded
// over the N/ep holding the same experts). Without them it is N alone.
func groupText(s *scenarios.Scenario, n int) string {
	p := s.Parallelism
	txt := strconv.Itoa(n)
	var parts []string
	if p.CP > 1 {
		parts = append(parts, fmt.Sprintf("dp %d × cp %d", p.DP, p.CP))
	}
	if p.EP > 1 {
		parts = append(parts, fmt.Sprintf("routed experts split over ep %d, each expert sharded over %d", p.EP, n/p.EP))
	}
	if len(parts) > 0 {
		txt += " (" + strings.Join(parts, "; ") + ")"
	}
	return txt
}

// efficiencyText says where the GEMM efficiency came from: a calibration
// file, or zerosim's default or the scenario's training.compute_efficiency,
// which it sets beside what the published runs of docs/validation.md
// fitted on the same GPU (zero.PublishedRange): a value above them makes
// the step optimistic. An efficiency the replay fits to training.mfu
// needs no line: "". atFits says that the headline's lines below it give
// the step at the published fits too (sweep.AtPublishedFits).
func efficiencyText(s *scenarios.Scenario, atFits bool) string {
	t := &s.Training
	line := efficiencyLine(t.ComputeEfficiency, t.ComputeEfficiencyFrom, t.ComputeEfficiencyDefault, t.MFU > 0, t.FP8, s.Cluster.GPU, atFits)
	if line == "" {
		return ""
	}
	return line + calibratedHigh(s) + fp8RatioText(s)
}

// fp8RatioText is, under an fp8 recipe, what fp8 GEMMs reach of that
// efficiency (cluster.fp8_gemm_ratio) and where the figure comes from:
// the file, the GPU's published GEMM figures, or none published (then 1,
// said so). "" without an fp8 recipe.
func fp8RatioText(s *scenarios.Scenario) string {
	c := &s.Cluster
	if s.Training.FP8 == scenarios.FP8None {
		return ""
	}
	if c.FP8GEMMRatio > 0 {
		return fmt.Sprintf("; fp8 GEMMs reach %s of that efficiency (cluster.fp8_gemm_ratio)", fmtEff(c.FP8GEMMRatio))
	}
	if r, from, ok := scenarios.DefaultFP8GEMMRatio(c.GPU); ok {
		return fmt.Sprintf("; fp8 GEMMs reach %s of that efficiency (cluster.fp8_gemm_ratio, from %s)", fmtEff(r), from)
	}
	gpu := c.GPU
	if gpu == "" {
		gpu = "this GPU"
	}
	return fmt.Sprintf("; fp8 GEMMs are taken to reach all of that efficiency (cluster.fp8_gemm_ratio 1: no published bf16 and fp8 GEMM throughput for %s; set it if you measured yours)", gpu)
}

// calibratedHigh is the note on a calibrated compute efficiency above what
// the GPU plausibly reaches (zero.EfficiencyCeiling), as a typed one is
// noted (qa20 M1: "0.9943 … from calibration hi.yaml" had no comment). ""
// otherwise.
func calibratedHigh(s *scenarios.Scenario) string {
	t := &s.Training
	cal := s.Communication.CalibrationData
	if t.ComputeEfficiencyFrom == "" || t.MFU > 0 || cal == nil || cal.Compute == nil {
		return ""
	}
	ceiling, what, ok := zero.EfficiencyCeiling(s.Cluster.GPU, t.FP8, cal.Compute.Method == scenarios.CalMethodTrace)
	if !ok || t.ComputeEfficiency <= ceiling {
		return ""
	}
	// A calibration fitted on the user's own measured step: its step is
	// not to be expected slower, its measurement is to be checked, as
	// calibrate's own warning says (QA s28 L5).
	return "; above " + what + ": check the calibration's measurement (a smaller run, or one micro-step?)"
}

// efficiencyLine is efficiencyText (run's headline, plan's summary) of
// eff from a calibration (from), zerosim's default (byDefault) or the
// scenario's training.compute_efficiency, fitted to training.mfu or not,
// of the fp8 or the bf16 peak, on gpu; atFits as efficiencyText's.
func efficiencyLine(eff float64, from string, byDefault, mfu bool, fp8 scenarios.FP8Recipe, gpu string, atFits bool) string {
	switch {
	case from != "":
		return fmtEff(eff) + " of the dense peak for large GEMMs, from " + from
	case mfu || eff <= 0:
		return ""
	}
	return publishedEfficiencyText(eff, byDefault, fp8, gpu, atFits)
}

// efficiencyBrief is efficiencyLine in one line of plan's summary: the
// efficiency, who set it, and the range the published runs fitted.
func efficiencyBrief(eff float64, from string, byDefault, mfu bool, fp8 scenarios.FP8Recipe, gpu string) string {
	switch {
	case from != "":
		return "GEMMs at " + fmtEff(eff) + " of the dense peak, from " + from
	case mfu || eff <= 0:
		return ""
	}
	c := comparePublished(eff, byDefault, fp8, gpu)
	if byDefault {
		c.who = defaultBrief(gpu)
	}
	head := fmt.Sprintf("GEMMs at %s of peak (%s)", fmtEff(eff), c.who)
	switch {
	case c.runs == "":
		return fmt.Sprintf("%s; %s to compare (docs/validation.md)", head, c.none())
	case c.side > 0:
		return fmt.Sprintf("%s; %s fitted %s (expect slower)", head, c.runs, c.fitted)
	case c.side < 0:
		return fmt.Sprintf("%s; %s fitted %s (expect faster)", head, c.runs, c.fitted)
	}
	return fmt.Sprintf("%s; %s fitted %s", head, c.runs, c.fitted)
}

// publishedEfficiencyText is efficiencyLine for eff on gpu beside the
// published runs. With atFits (the headline's step time, tokens/s and
// utilization lines give the step at the runs' fits too) it points at
// those lines rather than saying which way to expect the step.
func publishedEfficiencyText(eff float64, byDefault bool, fp8 scenarios.FP8Recipe, gpu string, atFits bool) string {
	const calibrate = "calibrate: zerosim calibrate --train-log or --step-time"
	c := comparePublished(eff, byDefault, fp8, gpu)
	if byDefault {
		c.who = defaultWho(gpu)
	}
	head := fmt.Sprintf("%s of the dense peak for large GEMMs (%s)", fmtEff(eff), c.who)
	switch {
	case c.runs == "":
		return fmt.Sprintf("%s; %s in docs/validation.md to set it beside; %s", head, c.none(), calibrate)
	case c.side != 0:
		side, then := "above", ", so expect a slower step"
		if c.side < 0 {
			side, then = "below", ", so expect a faster step"
		}
		if atFits {
			then = ": the lines below give the step at those fits"
		}
		return fmt.Sprintf("%s: %s %s%s; %s", head, side, c.rangeText(), then, calibrate)
	}
	return fmt.Sprintf("%s: %s fitted %s (docs/validation.md); %s", head, c.runs, c.fitted, calibrate)
}

// defaultWho is who set a default efficiency on gpu and from what, as
// run's headline names it (scenarios.DefaultComputeEfficiencyOf): on the
// H100, whose measured figure the default is, "zerosim's default" alone;
// on another GPU with a measured maximum matmul throughput, how it stands
// to the H100's; on one without, that the H100's 0.8 is kept.
func defaultWho(gpu string) string {
	if gpu == "H100-80GB" {
		return "zerosim's default"
	}
	_, from, ok := scenarios.DefaultComputeEfficiencyOf(gpu)
	if !ok {
		return "zerosim's default: " + scenarios.NoMatmulCeiling(gpu)
	}
	return "zerosim's default for " + gpu + ": " + from
}

// defaultBrief is defaultWho in a few words, for plan's summary and
// compare's caveat.
func defaultBrief(gpu string) string {
	_, _, ok := scenarios.DefaultComputeEfficiencyOf(gpu)
	switch {
	case gpu == "H100-80GB":
		return "zerosim's default"
	case !ok && gpu == "":
		return "zerosim's default, the H100's: no measured matmul maximum for this GPU"
	case !ok:
		return "zerosim's default, the H100's: no measured matmul maximum for " + gpu
	}
	return "zerosim's default from " + gpu + "'s measured matmul maximum"
}

// rangeText is the published runs' range as run's headline quotes it:
// "the 0.29–0.85 that 33 published bf16 runs on other GPUs (carried to
// L40S) fitted (docs/validation.md)".
func (c published) rangeText() string {
	return fmt.Sprintf("the %s that %s fitted (docs/validation.md)", c.fitted, c.runs)
}

// PublishedFit sets a compute efficiency eff of the fp8 or the bf16 peak
// on gpu beside the range the published runs fitted, in the words of
// run's headline (efficiencyText), for calibrate's warning on a fit
// outside it: text is that range ("" when no published run has that
// kind), side 1 when eff is above it, -1 below, 0 within.
func PublishedFit(eff float64, fp8 scenarios.FP8Recipe, gpu string) (text string, side int) {
	c := comparePublished(eff, false, fp8, gpu)
	if c.runs == "" {
		return "", 0
	}
	return c.rangeText(), c.side
}

// published is an efficiency set beside the published runs' fits: who set
// it, bf16 or fp8, the runs ("" when none has that kind), their range, and
// which side of it the efficiency is on (1 above, -1 below, 0 within).
type published struct {
	who, kind, runs, fitted string
	// recipe names the fp8 recipe when no run of it was published.
	recipe string
	side   int
}

// none says that no published run has the efficiency's kind: "no
// published bf16 run", "no published fp8 run with training.fp8 te".
func (c published) none() string { return "no published " + c.kind + " run" + c.recipe }

// publishedFits is zero.PublishedRange, and publishedWhere zero.OnGPU,
// variables so that tests can give every wording its case.
var (
	publishedFits  = zero.PublishedRange
	publishedWhere = zero.OnGPU
)

// comparePublished sets eff beside the published runs; byDefault says
// that zerosim's default set it, not training.compute_efficiency (it went
// by the value: an explicit 0.8 was "zerosim's default", QA17 L9).
func comparePublished(eff float64, byDefault bool, fp8 scenarios.FP8Recipe, gpu string) published {
	c := published{who: "training.compute_efficiency", kind: "bf16"}
	if byDefault {
		c.who = "zerosim's default"
	}
	if fp8.FP8() {
		c.kind = "fp8"
	}
	lo, hi, n, onGPU := publishedFits(gpu, fp8)
	if n == 0 {
		if fp8.FP8() {
			// Only runs of the same recipe are compared
			// (zero.PublishedRange): "no published fp8 run with
			// training.fp8 te", though torchao's ran.
			c.recipe = " with training.fp8 " + string(fp8)
		}
		return c
	}
	where := publishedWhere(gpu, fp8)
	if !onGPU {
		where = zero.OnOtherGPUs(gpu)
	}
	c.runs, c.fitted = zero.PublishedRuns(n, fp8.FP8(), where), zero.FittedRange(lo, hi)
	switch {
	case eff > hi:
		c.side = 1
	case eff < lo:
		c.side = -1
	}
	return c
}

// attentionText is the attention kernel and the fraction of the peak it
// runs at, and where that fraction comes from: the attention-heavy share
// of a long-sequence step rests on it ("" for a model without attention
// dimensions).
func attentionText(s *scenarios.Scenario) string {
	t := &s.Training
	if s.Model.SeqLen == 0 || s.Model.Heads == 0 || t.AttentionKernel == "" {
		return ""
	}
	if t.AttentionKernel == scenarios.KernelEager {
		return "eager: QKᵀ and PV at the GEMM efficiency, the s² softmax on HBM" + windowText(s) + documentText(s) + linearText(s)
	}
	from := fmt.Sprintf("the kernel's published rate on %s, docs/compute-model.md", s.Cluster.GPU)
	if part := zero.AttentionRatePart(s.Cluster.GPU, t.AttentionKernel); !strings.HasPrefix(s.Cluster.GPU, part) {
		// A part of the same family: the GB200 runs FlashAttention-2 at
		// the B200's measured rate, the B200 cuDNN at the GB200's (QA13 F10).
		from = fmt.Sprintf("the kernel's published rate on the %s, taken for %s of the same family; docs/compute-model.md", part, s.Cluster.GPU)
	}
	if part := zero.AttentionRatePart(s.Cluster.GPU, t.AttentionKernel); t.AttentionKernel == scenarios.KernelFlex && part == "MI300X" {
		// No FlexAttention figure on AMD: FlashAttention-2's measured
		// MI300X rate times FlexAttention's fraction of it on the A100
		// (zero.FlexAmpereOverFA2).
		from = fmt.Sprintf("FlashAttention-2's published rate on the MI300X × %s, FlexAttention's fraction of FlashAttention-2 on the A100; docs/compute-model.md", fmtEff(zero.FlexAmpereOverFA2))
	}
	switch {
	case s.Cluster.GPU == "" && s.Cluster.GFX != "":
		// An AMD GPU described by its figures: as on the MI300X preset,
		// the rate is another GPU's (the A100's for fa2).
		from = fmt.Sprintf("the kernel's published rate on the %s, taken for this %s GPU (cluster.gfx), which has none; docs/compute-model.md",
			zero.AttentionRatePart("", t.AttentionKernel), s.Cluster.GFX)
	case s.Cluster.GPU == "":
		from = "the kernel's published rate, docs/compute-model.md"
	case scenarios.VoltaGPU(s.Cluster.GPU) && (t.AttentionKernel == scenarios.KernelFA2 || t.AttentionKernel == scenarios.KernelCuDNN):
		// Neither kernel runs there: the step is timed at a rate no
		// kernel reaches on this GPU.
		from = fmt.Sprintf("%s does not run on %s, where PyTorch's SDPA runs its memory-efficient kernel: the A100's rate, taken for want of one; "+
			"set training.attention_efficiency, or attention: eager for unfused attention; docs/compute-model.md", t.AttentionKernel, s.Cluster.GPU)
	case !zero.AttentionRateOwn(s.Cluster.GPU) && zero.AttentionRatePart(s.Cluster.GPU, t.AttentionKernel) == "A100":
		// V100, MI355X, RTX4090, triton on an MI300X …: the rate is the A100's, not one
		// published for this GPU (FlashAttention-2 does not even run on
		// a V100).
		from = fmt.Sprintf("the kernel's published rate on the A100, taken for %s, which has none; docs/compute-model.md", s.Cluster.GPU)
	}
	from += headDimText(s) + seqLenText(s)
	if rate, _, capped := zero.AttentionRateCapped(s.Cluster.GPU, t.AttentionKernel, zero.ModelHeadDim(s)); capped {
		// QA s29: the A100's 0.6 taken for an MI300X whose matmuls reach
		// 0.51 ran attention faster than its GEMMs.
		from = fmt.Sprintf("capped at %s's GEMM default: attention, two GEMMs and a softmax, runs no faster than the GPU's matmuls; uncapped %s, %s", s.Cluster.GPU, fmtEff(rate), from)
	}
	switch {
	case t.AttentionEfficiencyFrom != "":
		// qa20 L3: "set or calibrated" hid which, and which file.
		from = "from calibration " + t.AttentionEfficiencyFrom + calibratedHeadDimText(s) + attentionHigh(s)
	case t.AttentionEfficiency > 0:
		from = "training.attention_efficiency"
	}
	// Under sdpa the memory is SDPA's (training.attention) and the time
	// attention_kernel's rate: the line names both, so that "fa2" does not
	// read as the attention the scenario asked for.
	kernel := string(t.AttentionKernel)
	if t.Attention == scenarios.AttentionSDPA {
		kernel = "sdpa, timed as " + kernel + " (training.attention_kernel)"
	}
	return fmt.Sprintf("%s at %s of the dense peak (%s)", kernel, fmtEff(zero.AttentionEfficiencyOf(s)), from) + windowText(s) + documentText(s) + linearText(s) + sinksText(s) + torchtitanKernel(s)
}

// torchtitanKernel is the attention line's note under stack torchtitan:
// with flash and fa2, that FlexAttention is timed as flex; with its
// preset's fa2: the preset is torchtitan 9dec370's (Dec 2024,
// the validated runs'), whose SDPA ran FlashAttention-2; later torchtitans
// differ (docs/stacks.md, "Attention by torchtitan era"; attentionFinding
// gives the figures). "" otherwise, and on an AMD GPU, where PyTorch's
// ROCm build has no cuDNN attention and SDPA's flash backend (fa2's
// class) runs in every era (scenarios.AttentionKernelRuns: sdp_utils.cpp,
// can_use_cudnn_attention, at pytorch/pytorch 001f694a). Kept short (qauser
// s28 L4: the line had grown to 500 characters).
func torchtitanKernel(s *scenarios.Scenario) string {
	t := &s.Training
	if s.Stack == "torchtitan" && t.Attention == scenarios.AttentionFlash && t.AttentionKernel == scenarios.KernelFA2 && t.AttentionEfficiency <= 0 && cuDNNRuns(s) {
		// How zerosim import torchtitan wrote a FlexAttention flavor
		// before FlexAttention had a rate of its own (session 29); it
		// now writes attention_kernel: flex (Torchtitan.flexKernel).
		return "; torchtitan's FlexAttention is timed as attention_kernel: flex"
	}
	if !torchtitanPresetFA2(s) {
		return ""
	}
	since := "6a3a9da"
	if scenarios.BlackwellGPU(s.Cluster.GPU) {
		since = "3b85aa3"
	}
	return "; stack torchtitan is torchtitan 9dec370 (Dec 2024), whose SDPA ran fa2: cudnn from " + since + ", FlexAttention from 1695457 (docs/stacks.md)"
}

// torchtitanPresetFA2 reports whether s times attention with stack
// torchtitan's fa2 (its preset's, or the same set by hand) on a GPU where
// a later torchtitan's SDPA would run cuDNN's attention instead.
func torchtitanPresetFA2(s *scenarios.Scenario) bool {
	t := &s.Training
	return s.Stack == "torchtitan" && t.Attention == scenarios.AttentionSDPA && t.AttentionKernel == scenarios.KernelFA2 &&
		t.AttentionEfficiency <= 0 && cuDNNRuns(s)
}

// cuDNNRuns reports whether cuDNN's fused attention runs on s's GPU:
// not on an AMD GPU (scenarios.AttentionKernelRuns) nor on a Volta one
// (sm80 on: scenarios.VoltaGPU).
func cuDNNRuns(s *scenarios.Scenario) bool {
	return !s.Cluster.AMD() && !scenarios.VoltaGPU(s.Cluster.GPU) && scenarios.AttentionKernelRuns(scenarios.KernelCuDNN, &s.Cluster)
}

// attentionHigh is the note on a calibrated attention efficiency above
// what the kernel plausibly reaches on the GPU (zero.AttentionCeiling,
// qa20 M1), "" otherwise.
func attentionHigh(s *scenarios.Scenario) string {
	t := &s.Training
	ceiling, rate, ok := zero.AttentionCeiling(s.Cluster.GPU, t.AttentionKernel)
	if !ok || t.AttentionEfficiency <= ceiling {
		return ""
	}
	return fmt.Sprintf("; above %.2f, %g× the kernel's published %.3g on %s: check the calibration's trace", ceiling, zero.AttentionCeilingFactor, rate, s.Cluster.GPU)
}

// sinksText is the attention line's note on gpt-oss, whose attention adds
// a learned sink column to every softmax (models/gpt_oss/modeling_gpt_oss.py
// at 6edf5b31): a fused kernel's rate stands in for one that takes the
// sinks (FlashAttention-2 takes none, Dao-AILab/flash-attention#1797), and
// the column itself is not modelled (scenarios' sdpa refusal says the same).
func sinksText(s *scenarios.Scenario) string {
	if s.Model.Architecture != "GptOssForCausalLM" {
		return ""
	}
	return "; gpt-oss's attention sinks not modelled: the rate stands in for a kernel that takes them (FlashAttention-2 takes none)"
}

// linearText is the attention line's note on linear-attention blocks
// (dims.linear_attention: Qwen3-Next's Gated DeltaNet), which run no
// softmax attention: how many, and that their delta rule is timed at the
// GEMM efficiency (zero.Costs). "" when there are none.
func linearText(s *scenarios.Scenario) string {
	var n int64
	kind := ""
	for _, l := range s.Model.LayerList {
		if x := l.Dims; x != nil && x.LinearAttention != "" {
			n, kind = n+1, x.LinearAttention
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of %d blocks are linear attention (%s), their delta rule at the GEMM efficiency", n, s.Model.BlockCount(), kind)
}

// windowText is the attention line's note on blocks that attend over a
// sliding window or within chunks shorter than seq_len (dims.window,
// dims.attention_chunk): how many, and whether the kernel's count keeps
// to the window (flash without context parallelism, zero's blockMask) or
// computes every score (sdpa, which transformers hands the mask; eager).
// "" when no block is windowed below seq_len; under sdpa without context
// parallelism a window of exactly seq_len counts too, as blockMask counts
// every score there (transformers hands SDPA the mask from kv_length =
// window on).
func windowText(s *scenarios.Scenario) string {
	var n, w int64
	chunked := false
	upTo := s.Model.SeqLen - 1
	if s.Parallelism.CP <= 1 && s.Training.Attention == scenarios.AttentionSDPA {
		upTo = s.Model.SeqLen
	}
	for _, l := range s.Model.LayerList {
		if x := l.Dims; x != nil {
			if k := max(x.Window, x.AttentionChunk); k > 0 && k <= upTo {
				n, w, chunked = n+1, max(w, k), x.AttentionChunk > 0
			}
		}
	}
	if n == 0 {
		return ""
	}
	what := fmt.Sprintf("over a %s-token sliding window", commas(w))
	if chunked {
		what = fmt.Sprintf("within %s-token chunks", commas(w))
	}
	how := "counted over the window"
	switch {
	case s.Parallelism.CP > 1:
		how = "counted over all keys under context parallelism"
	case s.Training.Attention != scenarios.AttentionFlash:
		how = fmt.Sprintf("every score computed under %s", s.Training.Attention)
	}
	return fmt.Sprintf("; %d of %d blocks attend %s, %s", n, s.Model.BlockCount(), what, how)
}

// attentionFindingShare and attentionFindingGain are when attentionFinding
// names a faster attention kernel: attention at least attentionFindingShare
// (a tenth) of a rank's compute, and the other kernel's rate at least
// attentionFindingGain (a quarter more) times the current one. Both are
// display choices (fef8250a, which added the finding), not published or
// measured figures: below them the finding is left out as not worth a line.
const (
	attentionFindingShare = 0.1
	attentionFindingGain  = 1.25
)

// attentionFinding says how much of a rank's compute attention takes, when
// it is a tenth or more and another kernel that runs on this GPU reaches a
// rate at least a quarter higher by its published default
// (attentionFindingShare, attentionFindingGain;
// zero.AttentionEfficiency; docs/compute-model.md): which, and how much
// compute a step that would save in the model (attention's time scales
// with the inverse of its rate). "" otherwise, and when the scenario sets
// its own attention efficiency.
//
// Under PyTorch's SDPA (training.attention: sdpa, or stack torchtitan,
// whose attention goes through SDPA or FlexAttention in every era) the
// kernel named is one SDPA can run, fa2 (its flash backend) or cudnn
// (CUDNN_ATTENTION): FlashAttention-3 is none of SDPA's backends
// (SDPBackend math, flash_attention, efficient_attention, cudnn_attention,
// overrideable in aten/src/ATen/native/transformers/sdp_utils_cpp.h, a
// copy found without its commit) nor in torchtitan's sdpa_kernel lists
// (CUDNN_ATTENTION, FLASH_ATTENTION, EFFICIENT_ATTENTION at 6a3a9da9,
// MATH in place of the last at b5bcd76c), so a faster fa3 is named beside
// it as a kernel called directly (qauser29 F10: the finding named fa3
// while the attention line named cudnn). Under stack torchtitan with its preset's fa2 the finding says
// which torchtitan that is.
func attentionFinding(s *scenarios.Scenario) string {
	t := &s.Training
	if t.AttentionEfficiency > 0 || t.AttentionKernel == "" || t.AttentionKernel == scenarios.KernelEager {
		return ""
	}
	cls, err := zero.ComputeClasses(s)
	if err != nil || !cls.Separate || cls.Total() <= 0 || cls.Attention < attentionFindingShare*cls.Total() {
		return ""
	}
	gpu, cur := s.Cluster.GPU, zero.AttentionEfficiencyOf(s)
	sdpa := t.Attention == scenarios.AttentionSDPA || s.Stack == "torchtitan"
	rate := func(k scenarios.AttentionKernel) float64 {
		// (The GEMM efficiency argument matters to eager attention only.)
		if !scenarios.AttentionKernelRuns(k, &s.Cluster) {
			return 0
		}
		return zero.AttentionEfficiencyAt(gpu, k, t.ComputeEfficiency, zero.ModelHeadDim(s))
	}
	// Megatron's transformer_impl: local runs eager attention or fa2
	// only (the loader refuses another kernel beside it: scenarios'
	// localAttention), so no faster kernel is named there.
	local := t.TransformerImpl == scenarios.TransformerLocal
	best, bestEff := scenarios.AttentionKernel(""), cur
	for _, k := range []scenarios.AttentionKernel{scenarios.KernelFA2, scenarios.KernelCuDNN, scenarios.KernelFA3} {
		if local && k != scenarios.KernelFA2 {
			continue
		}
		if e := rate(k); e > bestEff && !(sdpa && k == scenarios.KernelFA3) {
			best, bestEff = k, e
		}
	}
	fa3 := ""
	if e := rate(scenarios.KernelFA3); !local && sdpa && e > bestEff && e >= attentionFindingGain*cur && t.AttentionKernel != scenarios.KernelFA3 {
		fa3 = fmt.Sprintf(" fa3 reaches %s where a model calls FlashAttention-3 directly, not through SDPA.", fmtEff(e))
	}
	if best == "" || bestEff < attentionFindingGain*cur {
		if fa3 == "" {
			return ""
		}
		return fmt.Sprintf("Attention is %s %% of the compute (%v a step) at %s's %s of the dense peak on %s;%s",
			percent(int64(cls.Attention*1e12), int64(cls.Total()*1e12)), units.Duration(math.Round(cls.Attention*1e12)),
			t.AttentionKernel, fmtEff(cur), gpu, fa3)
	}
	saved := units.Duration(math.Round(cls.Attention * (1 - cur/bestEff) * 1e12))
	if t.AttentionKernel == scenarios.KernelFlex {
		// FlexAttention (compiled flex_attention: torchtitan's language
		// models from 16954571, torchtitan/models/common/attention.py at
		// b5bcd76c) runs Inductor's Triton template and no SDPA kernel:
		// the faster kernel is SDPA's, which the model calls only with
		// its attention backend switched (torchtitan's attn_backend
		// "sdpa"), so the finding says so rather than "switch".
		return fmt.Sprintf("Attention is %s %% of the compute (%v a step) at FlexAttention's %s of the dense peak on %s; %s reaches %s there under SDPA (training.attention_kernel: %s), %v less compute a step, which a FlexAttention model gets only with its attention backend set to SDPA.",
			percent(int64(cls.Attention*1e12), int64(cls.Total()*1e12)), units.Duration(math.Round(cls.Attention*1e12)),
			fmtEff(cur), gpu, best, fmtEff(bestEff), best, saved)
	}
	head := fmt.Sprintf("Attention is %s %% of the compute (%v a step) at %s's %s of the dense peak on %s",
		percent(int64(cls.Attention*1e12), int64(cls.Total()*1e12)), units.Duration(math.Round(cls.Attention*1e12)),
		t.AttentionKernel, fmtEff(cur), gpu)
	if torchtitanPresetFA2(s) && best == scenarios.KernelCuDNN {
		// torchtitan's eras (docs/stacks.md, "Attention by torchtitan
		// era"): ScaledDotProductAttention under sdpa_kernel with
		// CUDNN_ATTENTION first from 3b85aa31 (2025-05-14) on compute
		// capability 10.0 and up and from 6a3a9da9 (2025-10-09) on every
		// GPU (torchtitan/models/attention.py lines 86-93 at 6a3a9da9);
		// FlexAttention the language models' default from 16954571
		// (2026-06-09, attn_backend "flex" in model_registry,
		// torchtitan/models/llama3/__init__.py at b5bcd76c).
		return fmt.Sprintf("%s, stack torchtitan's kernel (torchtitan 9dec370, Dec 2024). A torchtitan from 6a3a9da (2025-10-09; on Blackwell from 3b85aa3) to 1695457 (2026-06-09) runs SDPA with cuDNN's attention first: cudnn reaches %s there (training.attention_kernel: cudnn, docs/compute-model.md), %v less compute a step. From 1695457 its language models run FlexAttention (training.attention_kernel: flex, %s there).%s",
			head, fmtEff(bestEff), saved, fmtEff(zero.AttentionEfficiencyAt(gpu, scenarios.KernelFlex, t.ComputeEfficiency, zero.ModelHeadDim(s))), fa3)
	}
	return fmt.Sprintf("%s; %s reaches %s there (training.attention_kernel: %s, docs/compute-model.md): %v less compute a step.%s",
		head, best, fmtEff(bestEff), best, saved, fa3)
}

// calibratedHeadDimText says how a calibrated attention efficiency was
// rescaled to the model's head_dim (zero.CalibratedHeadDimScale): "" when
// it was not.
func calibratedHeadDimText(s *scenarios.Scenario) string {
	f := zero.CalibratedHeadDimScale(s)
	if f == 1 {
		return ""
	}
	_, part := zero.HeadDimRates(s.Cluster.GPU, s.Training.AttentionKernel)
	return fmt.Sprintf(", fitted at head_dim %d, ×%s at head_dim %d: the kernel's published rates' ratio, on the %s",
		s.Training.AttentionEfficiencyHeadDim, fmtEff(f), zero.ModelHeadDim(s), part)
}

// headDimText is "; ×F at head_dim D (…)" when the model's head_dim scales
// the kernel's published rate (zero.HeadDimScale; qatput31 F1: every rate
// is measured at head_dim 128, and a head_dim 64 model ran 6.7 % slower
// than a head_dim 128 fit predicted), naming the published head_dims the
// factor comes from; "" when it does not.
func headDimText(s *scenarios.Scenario) string {
	gpu, k, hd := s.Cluster.GPU, s.Training.AttentionKernel, zero.ModelHeadDim(s)
	f := zero.HeadDimScale(gpu, k, hd)
	if f == 1 {
		return ""
	}
	pts, part := zero.HeadDimRates(gpu, k)
	ds := []int64{128}
	for _, p := range pts {
		ds = append(ds, p.HeadDim)
	}
	slices.Sort(ds)
	var basis string
	switch {
	case slices.Contains(ds, hd):
		basis = "its published rate there over its rate at 128"
	case hd < ds[0]:
		basis = fmt.Sprintf("its published rate at head_dim %d, the nearest, over 128", ds[0])
	case hd > ds[len(ds)-1]:
		basis = fmt.Sprintf("its published rate at head_dim %d, the nearest, over 128", ds[len(ds)-1])
	default:
		i, _ := slices.BinarySearch(ds, hd)
		basis = fmt.Sprintf("between its published rates at head_dim %d and %d, linear", ds[i-1], ds[i])
	}
	return fmt.Sprintf("; ×%s at head_dim %d: %s, on the %s", fmtEff(f), hd, basis, part)
}

// seqLenText is "; ×F at N tokens (…)" when the kernel's rate is scaled by
// the length each attention call runs over (zero.SeqLenScale:
// FlashAttention-1, whose published rate rises with the sequence); ""
// when it is not.
func seqLenText(s *scenarios.Scenario) string {
	gpu, k, hd, n := s.Cluster.GPU, s.Training.AttentionKernel, zero.ModelHeadDim(s), zero.AttentionSeqLen(s)
	f := zero.SeqLenScale(gpu, k, hd, n)
	if f == 1 {
		return ""
	}
	return fmt.Sprintf("; ×%s at %s tokens: its published rate there over its rate at 8,192, on the A100", fmtEff(f), commas(n))
}

// fmtEff is an efficiency with up to four decimals.
func fmtEff(e float64) string { return strconv.FormatFloat(math.Round(e*1e4)/1e4, 'f', -1, 64) }

// tokensText is the throughput line: tokens/s per GPU and what makes a
// step's tokens. A model without a sequence length (a bare parameter
// count, an MLP) counts one token per sample.
func tokensText(r *zero.Result, s *scenarios.Scenario, at string) string {
	rate := commas(int64(math.Round(r.TokensPerSecPerGPU()))) + at
	ga := max(s.Training.GradAccum, 1)
	if s.Model.SeqLen == 0 {
		return fmt.Sprintf("%s (%s samples per step: micro-batch %d × %d accumulation × dp %d; no sequence length, so a sample counts as one token)",
			rate, commas(r.Tokens), s.Training.MicroBatch, ga, s.Parallelism.DP)
	}
	return fmt.Sprintf("%s (%s tokens per step: micro-batch %d × %d accumulation × dp %d × %s tokens)",
		rate, commas(r.Tokens), s.Training.MicroBatch, ga, s.Parallelism.DP, commas(s.Model.SeqLen))
}

// utilizationText is MFU and HFU as percentages of the dense peak. Both
// count FLOPs as PaLM, llm-foundry and torchtitan do (attention over the
// full s², whatever the causal kernel skips), which the line says, so that
// HFU ≥ MFU reads as it should: HFU adds the recomputed forward.
func utilizationText(u zero.Utilization, at string) string {
	switch {
	case u.MFU == 0:
		return utilizationShort(u) + at + " (FLOPs executed, recompute included)"
	case u.FromForward:
		return utilizationShort(u) + at + " (no per-token count for this model: MFU is 3× the forward FLOPs executed; HFU adds recompute)"
	}
	return utilizationShort(u) + at + " (6N + 12·L·H·Q·s per token as llm-foundry and torchtitan (since 0c6ca903f, 2024-04-26) count it: N without an untied input embedding, attention not halved; HFU adds recompute)"
}

// documentText is, for a scenario that packs documents shorter than the
// sequence (model.document_len), how its attention kernel counts them
// (zero.PackedAttentionFLOPs); "" otherwise.
func documentText(s *scenarios.Scenario) string {
	d := s.Model.DocumentLen
	if d <= 0 || d >= s.Model.SeqLen {
		return ""
	}
	how := "each document its own causal sequence (flash varlen, Transformer Engine's THD)"
	switch {
	case s.Training.Attention != scenarios.AttentionFlash:
		how = fmt.Sprintf("every score computed under %s", s.Training.Attention)
	case s.Training.AttentionKernel == scenarios.KernelFlex:
		how = fmt.Sprintf("FlexAttention's non-empty %d×%d tiles computed whole", zero.DefaultFlexBlock, zero.DefaultFlexBlock)
	}
	tokens := "tokens"
	if d == 1 {
		tokens = "token"
	}
	return fmt.Sprintf("; packed documents of %s %s, attention confined to each: %s", commas(d), tokens, how)
}

// windowUtilization is, for a model whose blocks attend over a sliding
// window or within chunks shorter than the sequence (windowText), what its
// kernels execute: MFU and HFU count full attention, as PaLM, llm-foundry
// and torchtitan do, so at long sequences they count attention no kernel
// runs (Mistral 7B at 32,768 tokens: HFU above 100 %). "" otherwise.
func windowUtilization(s *scenarios.Scenario, u zero.Utilization) string {
	if windowText(s)+documentText(s) == "" || u.Executed <= 0 || u.FromForward {
		return ""
	}
	over := "over the windows"
	switch {
	case windowText(s) == "":
		over = "within each document"
	case documentText(s) != "":
		over = "over the windows, within each document"
	}
	return fmt.Sprintf("; counting attention as the kernels run it (the causal half, %s), the GPU executes %.1f %% of its peak", over, 100*u.Executed)
}

// fp8Utilization is, under an fp8 recipe, what MFU is over: the bf16 peak,
// as torchtitan reports it whatever the float8 setting (get_peak_flops in
// torchtitan/tools/utils.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1 returns the bf16 peak), so fp8
// GEMMs can take it past 100 %; and MFU and HFU over cluster.peak_fp8.
// HFU is over the same peak as MFU (QA24 L6: HFU 113.9 % on an MI300X
// under fp8 read as an error), on every vendor. "" otherwise.
func fp8Utilization(s *scenarios.Scenario, u zero.Utilization) string {
	r, ok := fp8PeakRatio(s)
	if !ok || u.MFU == 0 {
		return ""
	}
	return fmt.Sprintf("; %s; over peak_fp8 they are %.1f %% and %.1f %%", fp8UtilizationWhy, 100*u.MFU*r, 100*u.HFU*r)
}

// fp8UtilizationWhy says what MFU and HFU are over under an fp8 recipe:
// run's utilization line and calibrate's (fp8CalibrationNote) give it in
// the same words.
const fp8UtilizationWhy = "with fp8 GEMMs MFU and HFU are over the bf16 peak, as torchtitan reports MFU"

// fp8PeakRatio is the bf16 peak over peak_fp8, the factor that takes MFU
// and HFU from the bf16 peak to the fp8 one, when s runs an fp8 recipe on
// a GPU that gives both peaks (fp8Utilization).
func fp8PeakRatio(s *scenarios.Scenario) (float64, bool) {
	if s == nil || s.Training.FP8 == scenarios.FP8None || s.Cluster.PeakFP8 <= 0 || s.Cluster.PeakBF16 <= 0 {
		return 0, false
	}
	return float64(s.Cluster.PeakBF16) / float64(s.Cluster.PeakFP8), true
}

// table is a header and rows of cells, rendered as a terminal table or as
// HTML; left marks the left-aligned (text) columns.
type table struct {
	Title  string
	Header []string
	Rows   [][]string
	Footer []string
	Notes  []string
	left   []int
	// wrap wraps columns at spaces: column → runes (wrapColumns).
	wrap map[int]int
}

func (t *table) render(w io.Writer) error {
	if t.Title != "" {
		if _, err := fmt.Fprintf(w, "# %s\n", EscapeControl(t.Title)); err != nil {
			return err
		}
	}
	if len(t.Rows) == 0 {
		return t.notes(w) // an empty table says nothing its notes don't
	}
	tab := newTable(w, len(t.Header), t.left...)
	wrapColumns(tab, t.wrap)
	tab.Header(t.Header)
	for _, r := range t.Rows {
		if err := tab.Append(r); err != nil {
			return err
		}
	}
	if t.Footer != nil {
		tab.Footer(t.Footer)
	}
	if err := tab.Render(); err != nil {
		return err
	}
	return t.notes(w)
}

func (t *table) notes(w io.Writer) error {
	for _, n := range t.Notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) isLeft(c int) bool { return slices.Contains(t.left, c) }

// timeTable splits the step of each rank (N ≤ 16) or summarizes the ranks
// (min / median / max) with the straggler; ranks that are all alike take
// one row.
func (run *Run) timeTable() *table {
	r := run.Result
	t := &table{Title: fmt.Sprintf("step time %v: compute, exposed communication, waiting for peers, idle", r.StepTime),
		Header: []string{"rank", "end", "compute", "exposed comm", "of which all-gather", "waiting", "idle"}, left: []int{0}}
	row := func(label string, s zero.RankStats) []string {
		return []string{label, dur(s.End), dur(s.Compute), dur(s.ExposedComm), dur(s.ExposedAllGather), dur(s.Wait), dur(s.Idle)}
	}
	switch {
	case len(r.Ranks) > 1 && ranksAlike(r.Ranks):
		// One row says it: the symmetric fast path's ranks, or any
		// replay where no rank differs.
		t.Rows = append(t.Rows, row(fmt.Sprintf("all %d", len(r.Ranks)), r.Ranks[0]))
	case len(r.Ranks) <= runTableRows:
		for _, s := range r.Ranks {
			t.Rows = append(t.Rows, row(strconv.Itoa(s.Rank), s))
		}
	default:
		col := func(f func(zero.RankStats) units.Duration) []units.Duration {
			v := make([]units.Duration, len(r.Ranks))
			for i, s := range r.Ranks {
				v[i] = f(s)
			}
			slices.Sort(v)
			return v
		}
		cols := [][]units.Duration{
			col(func(s zero.RankStats) units.Duration { return s.End }),
			col(func(s zero.RankStats) units.Duration { return s.Compute }),
			col(func(s zero.RankStats) units.Duration { return s.ExposedComm }),
			col(func(s zero.RankStats) units.Duration { return s.ExposedAllGather }),
			col(func(s zero.RankStats) units.Duration { return s.Wait }),
			col(func(s zero.RankStats) units.Duration { return s.Idle }),
		}
		for _, q := range []struct {
			name string
			at   func(n int) int
		}{{"min", func(int) int { return 0 }}, {"median", func(n int) int { return n / 2 }}, {"max", func(n int) int { return n - 1 }}} {
			cells := []string{fmt.Sprintf("%s of %d", q.name, len(r.Ranks))}
			for _, c := range cols {
				cells = append(cells, dur(c[q.at(len(c))]))
			}
			t.Rows = append(t.Rows, cells)
		}
		// Each cell is its own column's statistic, so a row need not add
		// up as a rank's does (QA28 L2).
		t.Notes = append(t.Notes, fmt.Sprintf("min, median and max: each column over the %d ranks separately (a row is not one rank's)", len(r.Ranks)))
	}
	// A straggler is named once, among the run's warnings. Without one,
	// the note says where the waiting comes from.
	if r.Straggler == nil {
		straddle := run.Scenario.StraddlingGroups()
		var wait units.Duration
		for _, st := range r.Ranks {
			wait += st.Wait
		}
		switch {
		case wait == 0:
			t.Notes = append(t.Notes, "no straggler: no rank kept another waiting at a collective")
		case len(r.Degraded) > 0:
			t.Notes = append(t.Notes, fmt.Sprintf("no straggler: no rank's compute alone is slower than the others'; the %v of waiting in total is for collectives over the degraded %s (see the warnings)", wait, linkNames(r.Degraded)))
		case len(straddle) > 0:
			// Groups over unequal nodes take unequal times (QA17 M2):
			// the ranks of one wait at the next collective they share
			// with another.
			t.Notes = append(t.Notes, fmt.Sprintf("no straggler: no rank's compute alone is slower than the others'; the %v of waiting in total is for collectives of groups that spread over nodes unevenly (%s; see the warnings), which finish at different times", wait, strings.Join(straddle, ", ")))
		default:
			t.Notes = append(t.Notes, fmt.Sprintf("no straggler: no rank's compute alone is slower than the others' (the ranks wait %v in total at collectives)", wait))
		}
	}
	return t
}

// ranksAlike reports whether every rank's step splits as the first's.
func ranksAlike(rs []zero.RankStats) bool {
	for _, s := range rs[1:] {
		s.Rank = rs[0].Rank
		if s != rs[0] {
			return false
		}
	}
	return true
}

// linkNames names degraded links: "inter link at node 1 gpu 2", "links at
// node 1 (inter) and node 0 gpu 3 (intra)".
func linkNames(d []scenarios.DegradedLink) string {
	return joinLinks(d, func(scenarios.DegradedLink) string { return "" }, func(x scenarios.DegradedLink) string { return fmt.Sprintf("%s (%s)", x.Where(), x.Class) })
}

// joinLinks names degraded links: one as "CLASS link at WHERE" and what
// tail gives it, several as "links at A, B and C", each as item gives it.
func joinLinks(d []scenarios.DegradedLink, tail, item func(scenarios.DegradedLink) string) string {
	switch len(d) {
	case 0:
		return "overridden links"
	case 1:
		return fmt.Sprintf("%s link at %s%s", d[0].Class, d[0].Where(), tail(d[0]))
	}
	names := make([]string, len(d))
	for i, x := range d {
		names[i] = item(x)
	}
	return "links at " + scenarios.ListAnd(names)
}

// oneOrMany is one when n is 1, else many: a verb's or pronoun's number.
func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// phaseTable is the communication of each phase: the algorithms its
// collectives ran (NCCL's choice under auto), bytes in human units
// within 120 columns, or with Style.Wide exact bytes and the busiest rank's
// wire bytes too.
func (run *Run) phaseTable() *table {
	u := run.Style.Units
	r := run.Result
	wide := run.Style.Wide
	b := run.Style.bytes
	t := &table{Title: "communication per phase, bytes per step: logical and sent per rank, wire bytes per link class over all ranks", left: []int{0}}
	if wide {
		t.Title += " and from the busiest rank"
	}
	t.Header = []string{"phase", "collectives", "algorithm", "logical/rank", "sent/rank"}
	t.left = append(t.left, 2)
	classes := topology.Classes()
	vendor := run.vendor()
	for _, c := range classes {
		t.Header = append(t.Header, vendor.ClassName(c)+" wire")
	}
	if wide {
		for _, c := range classes {
			t.Header = append(t.Header, vendor.ClassName(c)+" busiest rank")
		}
	}
	var coll int
	var logical, sent int64
	var wire [topology.NumClasses]int64
	for _, p := range r.Phases {
		row := []string{phaseName(p), commas(int64(p.Collectives)), algoNames(p.Algos), b(p.Logical), b(p.Sent)}
		for _, c := range classes {
			row = append(row, b(p.Wire[c]))
			wire[c] += p.Wire[c]
		}
		if wide {
			for _, c := range classes {
				row = append(row, b(p.MaxRankWire[c]))
			}
		}
		coll += p.Collectives
		logical += p.Logical
		sent += p.Sent
		t.Rows = append(t.Rows, row)
	}
	// The total names an algorithm only when every phase's cell names
	// that one alone.
	all1 := ""
	if len(t.Rows) > 0 {
		all1 = t.Rows[0][2]
		for _, r := range t.Rows {
			if r[2] != all1 || strings.Contains(all1, ", ") {
				all1 = ""
				break
			}
		}
	}
	foot := []string{"total", commas(int64(coll)), all1, b(logical), b(sent)}
	// Two names in a row wrap, within maxColumns beside the longest
	// phase names.
	if slices.ContainsFunc(t.Rows, func(r []string) bool { return strings.Contains(r[2], ", ") }) {
		t.wrap = map[int]int{2: 13}
	}
	var all int64
	for _, c := range classes {
		foot = append(foot, b(wire[c]))
		all += wire[c]
	}
	if wide {
		for range classes {
			foot = append(foot, "")
		}
	}
	t.Footer = foot
	if len(r.Phases) == 0 {
		t.Notes = append(t.Notes, "no communication: one rank has nothing to reduce or gather (N = 1)")
	} else {
		t.Notes = append(t.Notes, "algorithm: what rank 0's collectives ran (under auto, "+vendor.lib()+"'s choice at each size)")
		legend := "logical: the buffers the rank's collectives reduce or gather"
		if slices.ContainsFunc(r.Phases, func(p zero.PhaseBytes) bool { return p.Phase == zero.PhaseBackwardAR || p.Phase == zero.PhaseInterAR }) {
			// zero.Logical: 2S for an all-reduce of S, as the seeds count
			// (QA s28 L9: the inter-group all-reduce read as twice its
			// buffer with nothing said).
			legend += " (an all-reduce's twice: a reduce-scatter and an all-gather of it, as the seeds count)"
		}
		t.Notes = append(t.Notes, legend+"; sent: the bytes it puts on the wire")
		t.Notes = append(t.Notes, fmt.Sprintf("per rank: %s logical, %s sent; wire: %s",
			u.format(logical), u.format(sent), wireShares(wire, all, u, vendor)))
	}
	if slices.ContainsFunc(r.Phases, func(p zero.PhaseBytes) bool { return p.Phase == zero.PhaseCPRing }) {
		t.Notes = append(t.Notes, "context-parallel ring: ring attention's k/v all-gathers and dk/dv sends (point to point); their time is in the blocks' compute")
	}
	return t
}

// algoNames names the algorithms a phase's collectives ran ("ring",
// "ring, tree"); result.json counts them. Point-to-point sends beside
// another algorithm (the context-parallel ring's dk/dv sends beside its
// all-gathers) are the table note's, which keeps the cell to one name.
func algoNames(list []zero.AlgoCount) string {
	var names []string
	for _, a := range list {
		if a.Algo != collectives.PointToPoint || len(list) == 1 {
			names = append(names, a.Algo.String())
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

func wireShares(wire [topology.NumClasses]int64, all int64, u MemoryUnits, v Vendor) string {
	var parts []string
	for _, c := range topology.Classes() {
		parts = append(parts, fmt.Sprintf("%s %s (%s %%)", v.ClassName(c), u.format(wire[c]), percent(wire[c], all)))
	}
	return strings.Join(parts, ", ")
}

func at(v []int64, i int) int64 {
	if i < 0 || i >= len(v) {
		return 0
	}
	return v[i]
}

// criticalTop is how many of the longest critical-path tasks are listed.
const criticalTop = 8

// pathTable summarizes the critical path: time per kind, then its longest
// tasks.
func (run *Run) pathTable() *table {
	r := run.Result
	sc := r.Schedule
	t := &table{Header: []string{"rank", "task", "start", "duration", "on the path"}, left: []int{1}}
	// Each task counts the part of its time before the next task on the
	// path starts (PathStep.OnPath), so the kinds add up to the step.
	byKind := map[zero.Kind]units.Duration{}
	var kinds []zero.Kind
	for _, p := range r.CriticalPath {
		k := sc.Tasks[p.Task].Kind
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] += p.OnPath
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %v (%s %%)", k, byKind[k], percent(int64(byKind[k]), int64(r.StepTime))))
	}
	// The critical path is the chain of tasks that sets the step time; the
	// table lists its longest tasks, and says so.
	steps := slices.Clone(r.CriticalPath)
	slices.SortStableFunc(steps, func(a, b zero.PathStep) int { return cmp.Compare(b.OnPath, a.OnPath) })
	t.Title = "the " + countNoun(len(steps), "task", "tasks") + " on the critical path"
	if len(steps) > criticalTop {
		t.Title = fmt.Sprintf("the %d longest of the %s tasks on the critical path", criticalTop, commas(int64(len(steps))))
		steps = steps[:criticalTop]
	}
	t.Notes = append(t.Notes, "critical path: the chain of tasks that sets the step time; each task counts until the next one on the path starts; by kind: "+strings.Join(parts, ", "))
	for _, p := range steps {
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Rank), taskName(sc, p.Task), dur(p.Start), dur(p.End - p.Start), dur(p.OnPath)})
	}
	return t
}

// peakText describes the replay's memory peak of the memory rank.
func (run *Run) peakText() string {
	u := run.Style.Units
	m := run.Result.Memory
	where := "at rest"
	if m.PeakTask >= 0 {
		where = "during " + taskName(run.Result.Schedule, m.PeakTask)
	}
	s := fmt.Sprintf("replay peak on rank %d: %s (%s B) at %v, %s", m.Rank, u.format(m.Peak), commas(m.Peak), m.PeakTime, where)
	if c := int64(run.Scenario.Cluster.GPUMemory); c > 0 {
		s += fmt.Sprintf("; %s %% of %s", percent(m.Peak, c), u.format(c))
	}
	if r := run.Result; r.ReservedPeak > 0 {
		v := run.vendor()
		how := ""
		if r.MemoryModel != nil && r.MemoryModel.AllocSim != nil {
			how = "; " + r.MemoryModel.AllocSim.Describe()
		}
		// A reserve the GPU cannot hold is shown at the GPU, as the
		// allocator keeps it by releasing its cache and retrying
		// (memory.SeenPeaks, qamem33 M1); the demand is named.
		reserved, device, capped := r.SeenPeaks(int64(run.Scenario.Cluster.GPUMemory))
		if capped {
			how += fmt.Sprintf("; capped at the GPU: its usual reserve would need %s, so it releases its cache and retries", u.format(r.ReservedPeak))
		}
		s += fmt.Sprintf("\nbusiest rank as a profiler sees it: reserved %s (caching allocator%s), device %s (%s: + %s, %s buffers%s)",
			u.format(reserved), how, u.format(device), v.smi(), v.context(), v.lib(), v.contextSource(run.Scenario.Memory.RuntimeContext > 0))
		if o := overheadLine(r.MemoryModel); o != "" {
			s += "\n" + o
		}
	}
	return s
}

// exposedGather returns the exposed and the busy all-gather time summed
// over ranks; ok is false when the step has no all-gather.
func (run *Run) exposedGather() (exposed, busy units.Duration, ok bool) {
	for _, st := range run.Result.Ranks {
		exposed += st.ExposedAllGather
		busy += st.AllGather
	}
	return exposed, busy, busy > 0
}

// latencyFinding says that NCCL's per-collective latency makes most of the
// exposed communication, and what each lever replayed gives.
func latencyFinding(lt *zero.LatencyTerm, levers []sweep.Lever, u MemoryUnits) string {
	s := fmt.Sprintf("Per-collective latency dominates the exposed communication: NCCL's model charges rank %d's %s %v of latency, %s %% of their %v alone on the links, over groups of up to %s ranks.",
		lt.Rank, countNoun(lt.Collectives, "collective", "collectives"), lt.Latency,
		percent(int64(lt.Latency), int64(lt.Modelled)), lt.Modelled, commas(int64(lt.MaxRanks)))
	var parts, how []string
	for _, l := range levers {
		switch {
		case strings.HasPrefix(l.Set, "communication.bucket_size="):
			how = append(how, "fewer, larger collectives")
		case strings.HasPrefix(l.Set, "parallelism.k="):
			how = append(how, "smaller groups")
		}
		p := fmt.Sprintf("--set %s gives a step of %v (peak %s", l.Set, l.Step, u.format(l.Peak))
		if l.Latency != nil {
			p += fmt.Sprintf("; latency %v over %s collectives", l.Latency.Latency, commas(int64(l.Latency.Collectives)))
		}
		parts = append(parts, p+")")
	}
	if len(parts) > 0 {
		h := strings.Join(how, " or ")
		s += " " + strings.ToUpper(h[:1]) + h[1:] + " cut it, replayed: " + strings.Join(parts, "; ") + "."
	}
	return s
}

// Findings states the key figures of the run in words, computed from the
// result.
func (run *Run) findings() []string {
	u := run.Style.Units
	s, r := run.Scenario, run.Result
	var out []string
	var exposed, wait, compute units.Duration
	for _, st := range r.Ranks {
		exposed += st.ExposedComm
		wait += st.Wait
		compute += st.Compute
	}
	if n := int64(len(r.Ranks)); n > 0 {
		out = append(out, fmt.Sprintf("The step takes %v; compute %s %%, exposed communication %s %% and waiting for peers %s %% of the step (average over %s).",
			r.StepTime, percent(int64(compute), n*int64(r.StepTime)),
			percent(int64(exposed), n*int64(r.StepTime)), percent(int64(wait), n*int64(r.StepTime)), countNoun(int(n), "rank", "ranks")))
	}
	if f := run.linkFinding(); f != "" {
		out = append(out, f)
	}
	if e, busy, ok := run.exposedGather(); ok {
		n := units.Duration(max(len(r.Ranks), 1))
		out = append(out, fmt.Sprintf("ZeRO-%d exposes %s %% of its all-gather time (%v of %v per rank on average).", r.Stage, percent(int64(e), int64(busy)), e/n, busy/n))
	}
	if r.LatencyBound() {
		out = append(out, latencyFinding(r.Latency, run.Levers, u))
	}
	var all int64
	var wire [topology.NumClasses]int64
	for _, p := range r.Phases {
		for _, c := range topology.Classes() {
			wire[c] += p.Wire[c]
			all += p.Wire[c]
		}
	}
	if all > 0 {
		if net := wire[topology.Inter]; net > 0 {
			// "Slow" unless an NVLink port is degraded: then the network
			// is not the slow link (QA4 s16 F12g).
			which := "The slow network"
			if slices.ContainsFunc(r.Degraded, func(d scenarios.DegradedLink) bool { return d.Class == scenarios.LinkIntra }) {
				which = "The network (inter-node links)"
			}
			out = append(out, fmt.Sprintf("%s carries %s %% of the wire bytes (%s of %s per step).", which, percent(net, all), u.format(net), u.format(all)))
		} else {
			out = append(out, fmt.Sprintf("All %s of wire traffic stays on the fast intra-node links.", u.format(all)))
		}
		var big zero.PhaseBytes
		for _, p := range r.Phases {
			if p.Sent > big.Sent {
				big = p
			}
		}
		logical, sent := r.PhaseTotal()
		out = append(out, fmt.Sprintf("Each rank sends %s per step (%s logical); the largest phase is the %s (%s).", u.format(sent), u.format(logical), big.Phase, u.format(big.Sent)))
	}
	if a := attentionFinding(s); a != "" {
		out = append(out, a)
	}
	m := r.Memory
	peak := fmt.Sprintf("Peak memory %s", u.format(m.Peak))
	if c := int64(s.Cluster.GPUMemory); c > 0 {
		peak += " of " + u.format(c)
		if s.Cluster.GPUMemoryUsable {
			peak += " usable"
		}
	}
	if m.PeakTask >= 0 {
		peak += " at " + taskName(r.Schedule, m.PeakTask)
	} else {
		peak += " at rest"
	}
	peak += fmt.Sprintf(" (rank %d, %v into the step).", m.Rank, m.PeakTime)
	if c := int64(s.Cluster.GPUMemory); c > 0 && !r.Fits(c) {
		peak += " It does NOT fit."
	}
	out = append(out, peak)
	return out // a straggler is among the warnings
}

// linkFinding ties the step to the degraded links (QA4 s16 F8): the step
// against the same scenario without cluster.link_overrides, replayed
// (Run.WithoutLinks), what a planner weighs against fixing or avoiding
// the link; "" without degraded links or that replay.
func (run *Run) linkFinding() string {
	r, w := run.Result, run.WithoutLinks
	if len(r.Degraded) == 0 || w == nil || w.Step <= 0 {
		return ""
	}
	what := "The degraded " + linkChanges(r.Degraded)
	if r.StepTime <= w.Step {
		return fmt.Sprintf("%s cost%s nothing here: the step is %v without cluster.link_overrides too.",
			what, oneOrMany(len(r.Degraded), "s", ""), w.Step)
	}
	d := r.StepTime - w.Step
	return fmt.Sprintf("%s add%s %v to the step (%s %% of it): %v against %v without cluster.link_overrides (%.2f×), through the collectives crossing %s.",
		what, oneOrMany(len(r.Degraded), "s", ""), d, percent(int64(d), int64(r.StepTime)), r.StepTime, w.Step,
		float64(r.StepTime)/float64(w.Step), oneOrMany(len(r.Degraded), "it", "them"))
}

// linkChanges names degraded links with what is slower: "inter link at
// node 1 gpu 7 (1.00 GB/s instead of 50.00 GB/s)", "links at … and …".
func linkChanges(d []scenarios.DegradedLink) string {
	return joinLinks(d, func(x scenarios.DegradedLink) string { return " (" + x.Change() + ")" },
		func(x scenarios.DegradedLink) string {
			return fmt.Sprintf("%s %s (%s)", x.Where(), x.Class, x.Change())
		})
}

// WriteRunTable writes the terminal report of a run: the headline, the
// step time per rank, the communication per phase, the memory of the
// scenario's stage (WriteMemoryTable) with the replay's peak, the top of the
// critical path and the key findings (the replay's warnings are cmd's to
// print, on stderr).
func WriteRunTable(w io.Writer, run *Run) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "# zerosim run: %s\n", EscapeControl(run.name()))
	for _, kv := range run.headline() {
		fmt.Fprintf(ew, "%-20s %s\n", kv[0]+":", EscapeControl(kv[1]))
	}
	if ew.err != nil {
		return ew.err
	}
	for _, t := range []*table{run.timeTable(), run.phaseTable()} {
		fmt.Fprintln(ew)
		if err := t.render(ew); err != nil {
			return err
		}
	}
	fmt.Fprintln(ew)
	if mm := run.Result.MemoryModel; mm != nil {
		st := run.Style
		st.Replayed, st.ReplayPeak = true, run.Result.Memory.Peak
		st.Vendor = run.vendor()
		if err := WriteMemoryReport(ew, []*memory.Report{mm}, st, true); err != nil {
			return err
		}
	}
	fmt.Fprintln(ew, run.peakText())
	writeHostSide(ew, run.Result.Host, &run.Scenario.Cluster)
	fmt.Fprintln(ew)
	if err := run.pathTable().render(ew); err != nil {
		return err
	}
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, "# findings")
	for _, f := range run.findings() {
		fmt.Fprintln(ew, "- "+EscapeControl(f))
	}
	// The replay's warnings go on stderr (cmd prints Run.Warnings there),
	// as every command's do; the memory section keeps its own inline, as
	// zerosim memory's table does.
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// stepText is the headline's step time with the compute it holds, as the
// busiest rank ran it (the per-rank table's figure) and, when collectives
// beside it slowed it (communication.compute_interference), the same rank's
// without them. When that rank's GPU runs at another speed
// (cluster.gpu_overrides), its compute is not the nominal one
// (Result.Compute, "at full speed"): the text names the rank.
func stepText(r *zero.Result, s *scenarios.Scenario, at string) string {
	b := r.Busiest()
	ran, alone := b.Compute, b.Alone
	if alone == r.Compute {
		if ran <= alone {
			return fmt.Sprintf("%v%s (compute %v, %s %% of the step)", r.StepTime, at, r.Compute, percent(int64(r.Compute), int64(r.StepTime)))
		}
		return fmt.Sprintf("%v%s (compute %v, %s %% of the step; %v at full speed)",
			r.StepTime, at, ran, percent(int64(ran), int64(r.StepTime)), alone)
	}
	// Another speed (cluster.gpu_overrides), or a context-parallel ring
	// over a degraded link (cluster.link_overrides), which runs inside the
	// blocks' compute.
	cause := "at its cluster.gpu_overrides speed"
	if !slices.ContainsFunc(s.Cluster.GPUOverrides, func(g scenarios.GPUOverride) bool { return g.Rank == b.Rank && g.Speed != 1 }) {
		cause = "with its context-parallel ring over a cluster.link_overrides link"
	}
	text := fmt.Sprintf("%v%s (rank %d's compute %v %s, %s %% of the step", r.StepTime, at, b.Rank, ran, cause, percent(int64(ran), int64(r.StepTime)))
	if ran > alone {
		text += fmt.Sprintf("; %v without collectives beside it", alone)
	}
	return text + ")"
}

// phaseName is p's name, with the MoE token dispatcher of an all-to-all
// phase under a deduplicating one ("forward all-to-all (deepep)").
func phaseName(p zero.PhaseBytes) string {
	if p.Dispatcher != "" {
		return p.Phase.String() + " (" + string(p.Dispatcher) + ")"
	}
	return p.Phase.String()
}
