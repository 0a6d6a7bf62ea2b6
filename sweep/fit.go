package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
	"gopkg.in/yaml.v3"
)

// FitOptions tune FitSearch.
type FitOptions struct {
	Convention memory.Convention
	// MaxGPUs bounds the data-parallel search (default 65,536 GPUs).
	MaxGPUs int
	// Jobs is how many rows are searched at once (≤ 0: runtime.GOMAXPROCS(0); at
	// most MaxJobs).
	Jobs int
	// Progress, if not nil, is called with the rows searched so far and
	// their number after each row, from the searching goroutines one at a
	// time.
	Progress func(done, total int)
}

// Scaling rules for the largest model that fits.
const (
	// ScaleLayers: a model with dimensions (a preset or kind with
	// hidden/layers) grows or shrinks by its number of blocks, all other
	// dimensions fixed; the answer is the largest layer count (up to
	// scenarios.MaxLayers) and its parameter count.
	ScaleLayers = "layers"
	// ScaleParams: a bare parameter count grows or shrinks as a whole, the
	// number of layers fixed and largest_layer (when given) scaled in
	// proportion; the answer is the largest parameter count.
	ScaleParams = "params"
	// ScaleNone: an explicit layer list (or the fixed tiny transformer) is
	// not scaled.
	ScaleNone = "none"
)

// Fit is the memory fit of a scenario on its cluster, for every stage and K.
type Fit struct {
	Scenario string
	// ScenarioSHA256 is scenarios.Digest of the scenario fitted, as
	// Plan's (QA25 M3).
	ScenarioSHA256 string
	Params         int64
	N              int
	DP             int
	CP             int
	GPUs           int
	Nodes          int
	GPUsPerNode    int
	GPUMemory      int64
	Convention     string
	// Scaling is the rule used for the largest model (ScaleLayers,
	// ScaleParams or ScaleNone).
	Scaling string
	MaxGPUs int
	// Replayed is set when the replayed step decides (zerosim's
	// convention, as zerosim run --require-fit judges); under a seed's
	// convention the memory model does.
	Replayed bool
	// EP is the scenario's expert-parallel degree: above 1 only K = 1 is
	// searched (scenarios refuses k > 1 with ep, not modelled).
	EP int
	// Stack is the scenario's stack preset ("" without one) and StackRuns
	// the stages and K it runs (scenarios.StackLayout.Runs): the only rows
	// searched.
	Stack, StackRuns string
	Rows             []FitRow
	// MicroBatch, GradAccum and Recompute are the file's, which every row
	// holds fixed (as EP, and the bucket size and prefetch depth): fit
	// judges the layouts (stage, K, nodes) at the file's settings, where
	// zerosim plan searches these too (QA s31 M1: fit said ZeRO-1 fitted
	// no cluster of DeepSeek-V2-Lite at micro-batch 2 while plan ran it on
	// the same 2 nodes at ep 4, micro-batch 1). MoE is set when the model
	// has routed experts (plan searches ep: Scenario.EPDegrees).
	MicroBatch, GradAccum int64
	Recompute             string
	MoE                   bool
	// Plan is zerosim plan's search of the scenario on its own cluster at
	// its global batch (PlanSearch) over the stages PlanStages names: what
	// the settings fit holds fixed change. Where no row fits on any
	// cluster tried (NoneFits) its advice says what else to change
	// (context parallelism, GPUs with more memory, offload, the loss
	// kernel: plan's "to fit:"). nil when every stage fits here with room,
	// or when plan refuses the scenario (the caller sets it: FitSearch does
	// not plan).
	Plan *Plan
}

// Room reports whether the row fits on the given cluster with room on
// the device for the caching allocator's reserve (zero.Result.DeviceFits,
// run's "yes" without "expect allocator retries"); a peak the memory model
// decided (not replayed) has no device peak and is taken at its verdict.
func (r *FitRow) Room() bool { return r.Fits && (r.DeviceFit || !r.PeakReplayed) }

// PlanStages are the stages searched whose rows do not fit the given
// cluster with room (FitRow.Room), in order: those a plan search (Plan)
// can answer with other settings. Every searched stage when no row fits
// on any cluster.
func (f *Fit) PlanStages() []int {
	room := map[int]bool{}
	var stages []int
	for _, r := range f.Rows {
		if !slices.Contains(stages, r.Stage) {
			stages = append(stages, r.Stage)
		}
		room[r.Stage] = room[r.Stage] || r.Room()
	}
	return slices.DeleteFunc(stages, func(st int) bool { return room[st] && !f.NoneFits() })
}

// NoneFits reports whether no row fits on any cluster the search tried.
func (f *Fit) NoneFits() bool {
	return !slices.ContainsFunc(f.Rows, func(r FitRow) bool { return r.MinNodes > 0 })
}

// FitRow is one stage and K.
type FitRow struct {
	Stage int
	K     int
	// Peak is the per-GPU peak on the given cluster; Fits whether it is
	// within GPU memory.
	// Under zerosim's convention the peak is the replayed step's, as
	// zerosim run reports it (PeakReplayed), where the memory model fits;
	// where the model does not, it is the model's and nothing is replayed.
	Peak         int64
	AtRest       int64
	Fits         bool
	PeakReplayed bool
	// Device is the replayed device peak on the given cluster (the caching
	// allocator's reserve, the CUDA context and NCCL's buffers added, 0
	// when not replayed) and DeviceFit the replay's zero.Result.DeviceFits
	// there: Room.
	Device    int64
	DeviceFit bool
	// MinNodes is the least number of whole nodes (same GPUs per node) on
	// which the model fits, as zerosim accepts the layout: dp·cp =
	// MinGPUs = nodes · GPUs per node, cp and K kept, K dividing dp·cp;
	// MinDP and MinPeak are its dp and peak. 0 when none up to MaxGPUs
	// does.
	// MinPeakReplayed says MinPeak is the replayed step's (else the
	// model's: a layout whose ranks differ is not replayed, judge.decide).
	MinDP           int
	MinGPUs         int
	MinNodes        int
	MinPeak         int64
	MinPeakReplayed bool
	// MinDevice is the replayed device peak at MinNodes (the caching
	// allocator's reserve, the CUDA context and NCCL's buffers added, as
	// zerosim run reports it; 0 when not replayed); DeviceNodes the least
	// nodes from MinNodes on where that fits the GPU too (MinNodes when
	// it does there, 0 when none up to MaxGPUs does), DevicePeak its
	// device peak.
	MinDevice   int64
	DeviceNodes int
	DevicePeak  int64
	// MaxParams is the largest model (by the Fit's scaling rule) whose peak
	// fits on the given cluster, MaxLayers its layer count with
	// ScaleLayers, MaxPeak its peak; 0 when even the smallest does not fit
	// or the model is not scaled.
	// MaxPeakReplayed says MaxPeak is the replayed step's.
	MaxParams       int64
	MaxLayers       int64
	MaxPeak         int64
	MaxPeakReplayed bool
	// Notes explain an empty answer (Note joins them).
	Notes []FitNote
}

// Note is the row's notes' texts, joined with "; ".
func (r *FitRow) Note() string {
	texts := make([]string, len(r.Notes))
	for i, n := range r.Notes {
		texts[i] = n.String()
	}
	return strings.Join(texts, "; ")
}

// FitNote is one remark on a FitRow. Text holds "{peak}" where the row's
// own figure, Peak (0: none), goes ("no cluster up to 8192 nodes (65536 GPUs) fits
// ({peak} at 65536 by the memory model)"), so that rows whose notes differ
// only in that figure can be told apart from rows that say something else.
type FitNote struct {
	Text string
	Peak int64
}

// peakMark is where a FitNote's Peak goes in its Text.
const peakMark = "{peak}"

// String is the note with its figure.
func (n FitNote) String() string { return n.WithPeak(fmtGB(n.Peak)) }

// WithPeak is the note with s in place of its figure (a note without one,
// Peak 0, as it is).
func (n FitNote) WithPeak(s string) string {
	if n.Peak == 0 {
		return n.Text
	}
	return strings.Replace(n.Text, peakMark, s, 1)
}

// scaling decides how the model of src grows: ScaleLayers for dimensions,
// ScaleParams for a bare count, ScaleNone for an explicit layer list.
func scaling(src Source, s *scenarios.Scenario) string {
	var doc struct {
		Model struct {
			LayerList []any `yaml:"layer_list"`
		} `yaml:"model"`
	}
	_ = yaml.Unmarshal(src.Data, &doc)
	switch {
	case len(doc.Model.LayerList) > 0:
		return ScaleNone
	case s.Model.Kind == scenarios.KindGeneric:
		return ScaleParams
	case s.Model.Kind == scenarios.KindTinyTransformer || s.Model.Layers <= 0:
		return ScaleNone
	}
	return ScaleLayers
}

// FitSearch answers, for every ZeRO stage 0–3 and every K dividing N
// (stage 0 shards nothing, so only K=1): does the model fit per GPU; the
// least whole nodes that make it fit; the largest model that fits on the
// given cluster. Under zerosim's convention each answer is zerosim run's
// (--require-fit): the replayed step's peak decides, the memory model
// finding where the replays start (leastNodes, largestFrom); under a seed's
// convention the model decides (judge). The searches take the peak not to
// grow with dp nor to shrink with the model. Rows are searched in parallel
// (opt.Jobs) and listed in order.
func FitSearch(src Source, opt FitOptions) (*Fit, error) {
	s, err := src.Load()
	if err != nil {
		return nil, err
	}
	if opt.MaxGPUs <= 0 {
		opt.MaxGPUs = 1 << 16
	}
	cp := s.Parallelism.CP
	digest, _ := scenarios.Digest(s)
	f := &Fit{Scenario: src.File, ScenarioSHA256: digest, Params: s.Model.TotalParams(), N: s.N(), DP: s.Parallelism.DP, CP: cp, GPUs: s.GPUs(),
		Nodes: s.Cluster.Nodes, GPUsPerNode: s.Cluster.GPUsPerNode, GPUMemory: int64(s.Cluster.GPUMemory),
		Convention: opt.Convention.String(), Scaling: scaling(src, s), MaxGPUs: opt.MaxGPUs, Replayed: judge{opt.Convention}.replays(),
		EP: max(s.Parallelism.EP, 1), MicroBatch: s.Training.MicroBatch, GradAccum: max(s.Training.GradAccum, 1),
		Recompute: string(s.Training.Recompute), MoE: s.EPDegrees() != nil}
	if f.Recompute == "" {
		f.Recompute = string(scenarios.RecomputeNone)
	}
	st, stack := s.StackLayout()
	if stack {
		f.Stack, f.StackRuns = st.Name, st.Runs(s.Cluster.Nodes)
	}
	for stage := 0; stage <= 3; stage++ {
		ks := searchKs(s, stage, s.Parallelism.EP, s.Communication.ZeroPP())
		if stack {
			ks = st.Ks(stage, s.Cluster.Nodes, ks)
		}
		for _, k := range ks {
			f.Rows = append(f.Rows, FitRow{Stage: stage, K: k})
		}
	}
	errs := make([]error, len(f.Rows))
	var mu sync.Mutex
	done := 0
	_ = parallel(context.Background(), len(f.Rows), opt.Jobs, func(i int) error {
		r := &f.Rows[i]
		*r, errs[i] = fitRow(src, s, r.Stage, r.K, opt)
		if opt.Progress != nil {
			mu.Lock()
			done++
			opt.Progress(done, len(f.Rows))
			mu.Unlock()
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			return nil, &FitRowError{Stage: f.Rows[i].Stage, K: f.Rows[i].K, Err: err}
		}
	}
	return f, nil
}

// PlanFit is zerosim plan's search (PlanSearch at the scenario's global
// batch) on f's cluster of the stages f.PlanStages names, for Fit.Plan:
// the micro-batch, checkpointing and expert parallelism fit holds fixed,
// each stage's fastest configuration that fits there. The bucket size and
// prefetch depth stay the file's (they move the peak little, and each
// would multiply the replays: DeepSeek-V3's fit took 2 s alone, 10 s with
// them). nil when every stage fits with room, under a seed's convention
// (nothing is replayed), or when plan refuses the scenario.
func PlanFit(ctx context.Context, src Source, f *Fit, progress func(done, total int)) *Plan {
	stages := f.PlanStages()
	if !f.Replayed || len(stages) == 0 {
		return nil
	}
	s, err := src.Load()
	if err != nil {
		return nil
	}
	opt := PlanOptions{Stages: stages, Progress: progress}
	if slices.ContainsFunc(stages, func(st int) bool { return st < 3 }) {
		opt.BucketSizes = []string{units.Bytes(s.Communication.BucketSize).Exact()}
	}
	if slices.Contains(stages, 3) {
		opt.Prefetch = []int{s.Communication.Prefetch()}
	}
	p, err := PlanSearch(ctx, src, opt)
	if err != nil {
		return nil
	}
	return p
}

// FitRowError is an error of the search of one fit row: the layout (ZeRO
// stage and K) fit tried when it met Err, so that cmd can place Err (a
// bucket size over the replay's limits goes at its key or --set, as run
// places it) without the layout's words.
type FitRowError struct {
	Stage, K int
	Err      error
}

func (e *FitRowError) Error() string { return fmt.Sprintf("stage %d, K=%d: %v", e.Stage, e.K, e.Err) }
func (e *FitRowError) Unwrap() error { return e.Err }

// layoutSets are the overrides of a row's layout: its stage and K.
func layoutSets(stage, k int) []string {
	return []string{"parallelism.zero_stage=" + strconv.Itoa(stage), "parallelism.k=" + strconv.Itoa(k)}
}

func fitRow(src Source, s *scenarios.Scenario, stage, k int, opt FitOptions) (FitRow, error) {
	row := FitRow{Stage: stage, K: k}
	jd := judge{opt.Convention}
	base := layoutSets(stage, k)
	ls, err := src.Load(base...)
	if err != nil {
		row.Notes = []FitNote{{Text: "zerosim does not run this layout: " + err.Error()}}
		return row, nil
	}
	rep, err := jd.model(ls)
	if err != nil {
		return row, err
	}
	row.AtRest = rep.AtRest
	// The model screens, as plan's does: a layout it rejects is not
	// replayed (zerosim run of gpt3-175b-16k at ZeRO-1, K=2, 657 GiB per
	// GPU, takes 42 s), and its peak is the model's.
	v, err := jd.decideWith(ls, rep)
	if err != nil {
		return row, err
	}
	row.Peak, row.Fits, row.PeakReplayed = v.Peak, v.Fits, v.Replayed
	row.Device, row.DeviceFit = v.Device, v.DeviceFit
	if rep.GPUMemory <= 0 {
		row.Notes = []FitNote{{Text: "no gpu_memory: nothing fits"}}
		return row, nil
	}
	var notes []FitNote
	// Smallest cluster zerosim accepts: whole nodes of the same GPUs, a
	// multiple of nodeStep.
	gpn := s.Cluster.GPUsPerNode
	step := nodeStep(s, k)
	if st, ok := s.StackLayout(); ok && k > 1 && !st.RunsK(stage, k, s.Cluster.Nodes+step) {
		// fms-fsdp's hsdp: K is the node count, so a search over node
		// counts at this K is of layouts the stack does not run (review
		// s18 B5: a K=4 row fitted 'from 453 nodes').
		notes = append(notes, FitNote{Text: fmt.Sprintf("fewest nodes not searched: at K=%d %s runs only on %d nodes (%s)", k, st.Name, s.Cluster.Nodes, st.Runs(s.Cluster.Nodes))})
	} else if jmax := opt.MaxGPUs / (step * gpn); jmax >= 1 {
		ns, err := leastNodes(jmax, func(j int) (*scenarios.Scenario, error) {
			return src.Load(append(slices.Clone(base), nodeSets(s, j*step)...)...)
		}, jd)
		switch {
		case PinError(err):
			// The pins run this layout on the given cluster but not on
			// every one the search takes (final read R2: NVLS,Tree at
			// K=2 over 4,096 nodes aborted fit, naming nodes the user
			// never gave).
			notes = append(notes, FitNote{Text: "fewest nodes not searched: the NCCL pins leave a collective no algorithm on a larger cluster: " + err.Error()})
		case err != nil:
			return row, err
		case ns.J == 0:
			by := ""
			switch {
			case ns.TopReplayed:
				by = " replayed" // the model fits there, the replay does not
			case jd.replays():
				by = " by the memory model"
			}
			notes = append(notes, FitNote{Text: fmt.Sprintf("no cluster up to %d nodes (%d GPUs) fits at the file's settings (%s at %d%s)", jmax*step, jmax*step*gpn, peakMark, jmax*step*gpn, by), Peak: ns.TopPeak})
		default:
			row.MinNodes = ns.J * step
			row.MinGPUs = row.MinNodes * gpn
			row.MinDP = row.MinGPUs / s.Parallelism.CP
			row.MinPeak, row.MinPeakReplayed = ns.Peak, ns.Replayed
			row.MinDevice, row.DeviceNodes, row.DevicePeak = ns.Device, ns.DeviceJ*step, ns.DevicePeak
		}
	}
	// Largest model on the given cluster.
	var limit string
	switch scaling(src, s) {
	case ScaleLayers:
		if limit, err = largestByLayers(src, base, s.Model.Layers, jd, &row); err != nil {
			return row, err
		}
	case ScaleParams:
		if limit, err = largestByParams(src, s, base, jd, &row); err != nil {
			return row, err
		}
	}
	if row.MaxParams == 0 && scaling(src, s) != ScaleNone && limit == "" {
		notes = append(notes, FitNote{Text: "even the smallest model of this shape does not fit"})
	}
	if limit != "" {
		notes = append([]FitNote{{Text: limit}}, notes...)
	}
	row.Notes = notes
	return row, nil
}

// roundScale returns ll·x/p0 rounded, at least 1.
func roundScale(ll, x, p0 int64) int64 {
	return max(int64(math.Round(float64(ll)*(float64(x)/float64(p0)))), 1)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fmtGB writes memory in GiB, the unit of every memory figure zerosim prints.
func fmtGB(b int64) string { return units.Bytes(b).IEC() }

// scaledModel loads src's layout (base) with the model overrides of a
// scaled model. A model the loader rejects is an error, not a "does not
// fit" verdict: the searches stay inside the scenario limits and start at
// the fewest layers the file runs with (fewestLayers). The error is
// zerosim's, not the file's (exit 1): it names the model fit built and the
// loader's reason without the file's position, since the file loads as
// given (QA24 H1: "dsv3.yaml:5:39: ep=8 needs routed experts, and the
// model has none (... delete ep)" blamed the user's ep for the dense first
// layer fit had cut DeepSeek-V3 down to).
func scaledModel(src Source, base []string, model ...string) (*scenarios.Scenario, error) {
	s, err := src.Load(append(slices.Clone(base), model...)...)
	if err != nil {
		msg := err.Error()
		if e := (*scenarios.Error)(nil); errors.As(err, &e) {
			msg = e.Msg
		}
		return nil, fmt.Errorf("zerosim refuses the model the largest-model search scaled (%s), though the file loads as given: %s", strings.Join(model, ", "), msg)
	}
	return s, nil
}

// fewestLayers is the fewest layers, from 1 up to the scenario's own l0
// (which loads), at which src's layout (base) loads with model.layers set:
// the smallest model of its shape that zerosim runs. Where the file's
// settings need layers the first blocks lack, fewer are refused: an ep > 1
// needs a MoE layer, and DeepSeek-V3, Kimi K2 and GLM-4.6 begin with
// first_k_dense_replace dense blocks (DeepSeek's modeling_deepseek.py:
// MoE where layer_idx >= first_k_dense_replace and layer_idx %
// moe_layer_freq == 0), Llama 4 Maverick's first MoE block is its second
// (MoE where (layer_id + 1) % interleave_moe_layer_step == 0). Each block's
// kind depends on its index alone, so a model that loads at l loads at
// l+1, and the least is found by bisection.
func fewestLayers(src Source, base []string, l0 int64) int64 {
	loads := func(l int64) bool {
		_, err := src.Load(append(slices.Clone(base), fmt.Sprintf("model.layers=%d", l))...)
		return err == nil
	}
	if l0 <= 1 || loads(1) {
		return 1
	}
	return leastTrue(2, l0, loads)
}

// modelSearch is the largest model of a scaling rule: load gives the
// scenario at each size x, the model's verdict finds where the search
// starts and jd decides (probes: each size loaded and analyzed once).
type modelSearch[T int | int64] struct {
	probes[T]
	peaks  map[T]int64
	params map[T]int64
	// replayed[x]: peaks[x] is the replayed step's.
	replayed map[T]bool
}

// decide is the judge's verdict at x, its peak and parameters kept.
func (m *modelSearch[T]) decide(x T) bool {
	v := m.probes.decide(x)
	q := m.get(x)
	if m.failed != nil || q == nil {
		return false
	}
	if m.peaks == nil {
		m.peaks, m.params, m.replayed = map[T]int64{}, map[T]int64{}, map[T]bool{}
	}
	m.peaks[x], m.params[x], m.replayed[x] = v.Peak, q.s.Model.TotalParams(), v.Replayed
	return v.Fits
}

// largest is the greatest x in [lo, hi] that fits as the judge decides,
// given guess, the model's greatest (lo-1 when none); under zerosim's
// convention replays start there (largestFrom), else guess is the answer.
// ok is false when none fits.
func (m *modelSearch[T]) largest(lo, hi, guess T) (T, bool) {
	if m.failed != nil {
		return 0, false
	}
	if !m.jd.replays() {
		if guess < lo || !m.decide(guess) {
			return 0, false
		}
		return guess, true
	}
	return largestFrom(lo, hi, guess, m.decide)
}

// largestFrom is the greatest x in [lo, hi] with fits(x), for fits true up
// to some point and false beyond, starting from guess (leastFrom on its
// negation); false when fits(lo) is false.
func largestFrom[T int | int64](lo, hi, guess T, fits func(T) bool) (T, bool) {
	first, ok := leastFrom(lo, hi, guess+1, func(x T) bool { return !fits(x) })
	switch {
	case !ok:
		return hi, true
	case first == lo:
		return 0, false
	}
	return first - 1, true
}

// greatestTrue is the greatest x in [lo, hi] with f(x), for f true up to
// some point and false beyond, given f(lo) (leastTrue on its negation).
func greatestTrue[T int | int64](lo, hi T, f func(T) bool) T {
	return leastTrue(lo+1, hi+1, func(x T) bool { return x > hi || !f(x) }) - 1
}

// largestByLayers finds the most layers (up to scenarios.MaxLayers) that
// fit; it returns a note when that is the limit.
func largestByLayers(src Source, base []string, l0 int64, jd judge, row *FitRow) (string, error) {
	m := &modelSearch[int64]{probes: probes[int64]{jd: jd, load: func(l int64) (*scenarios.Scenario, error) {
		return scaledModel(src, base, fmt.Sprintf("model.layers=%d", l))
	}}}
	lo := fewestLayers(src, base, l0)
	guess := lo - 1 // the model's most layers, lo-1 when lo does not fit
	if m.model(lo) {
		guess = greatestTrue(lo, scenarios.MaxLayers, m.model)
	}
	l, ok := m.largest(lo, scenarios.MaxLayers, guess)
	if m.failed != nil {
		return "", m.failed
	}
	if !ok {
		if lo > 1 {
			return fmt.Sprintf("even the smallest model of this shape that zerosim runs with the file's settings (%d layers; fewer are refused) does not fit", lo), nil
		}
		return "", nil
	}
	row.MaxLayers, row.MaxParams, row.MaxPeak, row.MaxPeakReplayed = l, m.params[l], m.peaks[l], m.replayed[l]
	if l == scenarios.MaxLayers {
		return fmt.Sprintf("fits even at the scenario limit of %d layers", scenarios.MaxLayers), nil
	}
	if err := m.limitAbove(l); err != nil {
		return overLimitNote(fmt.Sprintf("%d layers", l+1), err), nil
	}
	return "", nil
}

// overLimitNote says that the largest model is where the next size is over
// a replay's limits (zero.LimitError), not where memory runs out: the
// search stops there instead of failing (fit of Llama 3.1 405B with a 4 MB
// bucket_size exited 1 at 1,024 layers, qa19 M5).
func overLimitNote(next string, err error) string {
	return fmt.Sprintf("largest within zerosim's replay limits: at %s, %s", next, plainLimit(err))
}

// plainLimit is a limit error's text without the package prefixes.
func plainLimit(err error) string {
	var le *zero.LimitError
	if errors.As(err, &le) {
		err = le
	}
	return strings.TrimPrefix(err.Error(), "zero: ")
}

// maxModelParams bounds the params search (2^50 ≈ 1.1e15 parameters).
const maxModelParams = int64(1) << 50

func largestByParams(src Source, s *scenarios.Scenario, base []string, jd judge, row *FitRow) (string, error) {
	p0, ll := s.Model.TotalParams(), int64(s.Model.LargestLayer)
	layers := int64(len(s.Model.LayerList))
	if ll > 0 {
		layers-- // the embedding
	}
	m := &modelSearch[int64]{probes: probes[int64]{jd: jd, load: func(x int64) (*scenarios.Scenario, error) {
		sets := []string{fmt.Sprintf("model.params=%d", x)}
		if ll > 0 {
			sets = append(sets, "model.largest_layer="+itoa(roundScale(ll, x, p0)))
		}
		return scaledModel(src, base, sets...)
	}}}
	minP := max(layers, 1)
	if ll > 0 {
		minP = 2 * layers // room for a scaled largest layer of ≥ 1 and one param per layer
	}
	// The model's largest: bracketed by doubling from the scenario's own
	// count (lo fits, hi does not or is the cap), then a binary search.
	guess := minP - 1
	if m.model(minP) {
		lo, hi := minP, p0
		if m.model(p0) {
			lo, hi = p0, p0
			for hi < maxModelParams {
				hi = min(hi*2, maxModelParams)
				if !m.model(hi) {
					break
				}
				lo = hi
			}
		}
		guess = greatestTrue(lo, hi, m.model)
	}
	x, ok := m.largest(minP, maxModelParams, guess)
	if m.failed != nil || !ok {
		return "", m.failed
	}
	row.MaxParams, row.MaxPeak, row.MaxPeakReplayed = x, m.peaks[x], m.replayed[x]
	if err := m.limitAbove(x); err != nil {
		return overLimitNote(fmt.Sprintf("%d parameters", x+1), err), nil
	}
	return "", nil
}

// searchKs is the K a search tries at stage with expert-parallel degree
// ep, ZeRO++ on or off: every divisor of N, or 1 alone where K > 1 means
// nothing or is not modelled (scenarios.KOne).
func searchKs(s *scenarios.Scenario, stage, ep int, zeroPP bool) []int {
	if scenarios.KOne(stage, ep, zeroPP) {
		return []int{1}
	}
	return Divisors(s.N())
}
