package sweep

import (
	"fmt"
	"github.com/zerosim/zerosim/units"
	"math"
	"strconv"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"gopkg.in/yaml.v3"
)

// FitOptions tune FitSearch.
type FitOptions struct {
	Convention memory.Convention
	// MaxGPUs bounds the data-parallel search (default 65,536 GPUs).
	MaxGPUs int
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
	Scenario    string
	Params      int64
	N           int
	DP          int
	CP          int
	GPUs        int
	Nodes       int
	GPUsPerNode int
	GPUMemory   int64
	Convention  string
	// Scaling is the rule used for the largest model (ScaleLayers,
	// ScaleParams or ScaleNone).
	Scaling string
	MaxGPUs int
	Rows    []FitRow
}

// FitRow is one stage and K.
type FitRow struct {
	Stage int
	K     int
	// Peak is the per-GPU peak on the given cluster; Fits whether it is
	// within GPU memory.
	Peak   int64
	AtRest int64
	Fits   bool
	// MinNodes is the least number of whole nodes (same GPUs per node) on
	// which the model fits, as zerosim accepts the layout: dp·cp =
	// MinGPUs = nodes · GPUs per node, cp and K kept, K dividing dp·cp;
	// MinDP and MinPeak are its dp and peak. 0 when none up to MaxGPUs
	// does.
	MinDP    int
	MinGPUs  int
	MinNodes int
	MinPeak  int64
	// MaxParams is the largest model (by the Fit's scaling rule) whose peak
	// fits on the given cluster, MaxLayers its layer count with
	// ScaleLayers, MaxPeak its peak; 0 when even the smallest does not fit
	// or the model is not scaled.
	MaxParams int64
	MaxLayers int64
	MaxPeak   int64
	// Note explains an empty answer.
	Note string
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
// smallest data-parallel size that makes it fit; the largest model that
// fits on the given cluster. Both searches are binary searches that assume
// the peak does not grow with dp and does not shrink with the model.
func FitSearch(src Source, opt FitOptions) (*Fit, error) {
	s, err := src.Load()
	if err != nil {
		return nil, err
	}
	if opt.MaxGPUs <= 0 {
		opt.MaxGPUs = 1 << 16
	}
	cp := s.Parallelism.CP
	f := &Fit{Scenario: src.File, Params: s.Model.TotalParams(), N: s.N(), DP: s.Parallelism.DP, CP: cp, GPUs: s.GPUs(),
		Nodes: s.Cluster.Nodes, GPUsPerNode: s.Cluster.GPUsPerNode, GPUMemory: int64(s.Cluster.GPUMemory),
		Convention: opt.Convention.String(), Scaling: scaling(src, s), MaxGPUs: opt.MaxGPUs}
	for stage := 0; stage <= 3; stage++ {
		ks := Divisors(s.N())
		if stage == 0 {
			ks = []int{1}
		}
		for _, k := range ks {
			if ep := s.Parallelism.EP; ep > 1 && (s.N()/k)%ep != 0 {
				continue // the experts cannot be split over ep ranks of a shard group of N/K
			}
			row, err := fitRow(src, s, stage, k, opt)
			if err != nil {
				return nil, fmt.Errorf("stage %d, K=%d: %w", stage, k, err)
			}
			f.Rows = append(f.Rows, row)
		}
	}
	return f, nil
}

// analyze returns the report of s at stage and K with dp data-parallel
// ranks (0 keeps s's) on the nodes they fill.
func analyze(s *scenarios.Scenario, stage, k, dp int, conv memory.Convention) (*memory.Report, error) {
	c := *s
	c.Parallelism.Stage, c.Parallelism.K = stage, k
	if dp > 0 {
		c.Parallelism.DP = dp
		gpus := dp * c.Parallelism.CP
		c.Cluster.Nodes = (gpus + c.Cluster.GPUsPerNode - 1) / c.Cluster.GPUsPerNode
	}
	return memory.Analyze(&c, memory.Options{Convention: conv})
}

func fitRow(src Source, s *scenarios.Scenario, stage, k int, opt FitOptions) (FitRow, error) {
	row := FitRow{Stage: stage, K: k}
	rep, err := analyze(s, stage, k, 0, opt.Convention)
	if err != nil {
		return row, err
	}
	row.Peak, row.AtRest, row.Fits = rep.Peak, rep.AtRest, rep.Fits
	if rep.GPUMemory <= 0 {
		row.Note = "no gpu_memory: nothing fits"
		return row, nil
	}
	var notes []string
	// Smallest cluster zerosim accepts: whole nodes of the same GPUs, dp·cp
	// = nodes · GPUs per node, K dividing it (K·ep with expert parallelism:
	// ep ranks in every shard group). The node count steps by the least
	// multiple that keeps cp and K·ep dividing the GPUs.
	cp, gpn := s.Parallelism.CP, s.Cluster.GPUsPerNode
	kep := k * s.Parallelism.EP
	l := cp / gcd(cp, kep) * kep // lcm(cp, K·ep) divides nodes·gpn
	step := l / gcd(l, gpn)
	jmax := opt.MaxGPUs / (step * gpn)
	fitsAt := func(j int) (*memory.Report, bool, error) {
		r, err := analyze(s, stage, k, j*step*gpn/cp, opt.Convention)
		if err != nil {
			return nil, false, err
		}
		return r, r.Fits, nil
	}
	if jmax >= 1 {
		top, ok, err := fitsAt(jmax)
		if err != nil {
			return row, err
		}
		if !ok {
			notes = append(notes, fmt.Sprintf("no cluster up to %d nodes (%d GPUs) fits (%s at %d)", jmax*step, jmax*step*gpn, fmtGB(top.Peak), jmax*step*gpn))
		} else {
			lo, hi, best := 1, jmax, top
			for lo < hi {
				mid := lo + (hi-lo)/2
				r, ok, err := fitsAt(mid)
				if err != nil {
					return row, err
				}
				if ok {
					hi, best = mid, r
				} else {
					lo = mid + 1
				}
			}
			if lo == jmax {
				best = top
			}
			row.MinNodes = lo * step
			row.MinGPUs = row.MinNodes * gpn
			row.MinDP = row.MinGPUs / cp
			row.MinPeak = best.Peak
		}
	}
	// Largest model on the given cluster.
	switch scaling(src, s) {
	case ScaleLayers:
		if err := largestByLayers(src, s, stage, k, opt, &row); err != nil {
			return row, err
		}
	case ScaleParams:
		if err := largestByParams(src, s, stage, k, opt, &row); err != nil {
			return row, err
		}
	}
	if row.MaxParams == 0 && scaling(src, s) != ScaleNone {
		notes = append(notes, "even the smallest model of this shape does not fit")
	}
	for i, n := range notes {
		if i > 0 {
			row.Note += "; "
		}
		row.Note += n
	}
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

// scaledFits loads src at stage and K with the model overrides and reports
// the peak and whether it fits. A model the loader rejects is an error, not
// a "does not fit" verdict: the searches stay inside the scenario limits.
func scaledFits(src Source, stage, k int, conv memory.Convention, sets ...string) (*scenarios.Scenario, *memory.Report, bool, error) {
	s, err := src.Load(sets...)
	if err != nil {
		return nil, nil, false, fmt.Errorf("scaled model %v: %w", sets, err)
	}
	r, err := analyze(s, stage, k, 0, conv)
	if err != nil {
		return nil, nil, false, fmt.Errorf("scaled model %v: %w", sets, err)
	}
	return s, r, r.Fits, nil
}

func largestByLayers(src Source, s *scenarios.Scenario, stage, k int, opt FitOptions, row *FitRow) error {
	try := func(l int64) (*scenarios.Scenario, *memory.Report, bool, error) {
		return scaledFits(src, stage, k, opt.Convention, fmt.Sprintf("model.layers=%d", l))
	}
	if _, _, ok, err := try(1); err != nil || !ok {
		return err
	}
	lo, hi := int64(1), int64(scenarios.MaxLayers)
	_, _, ok, err := try(hi)
	if err != nil {
		return err
	}
	if ok {
		lo = hi
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		_, _, ok, err := try(mid)
		if err != nil {
			return err
		}
		if ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	ms, r, _, err := try(lo)
	if err != nil {
		return err
	}
	row.MaxLayers, row.MaxParams, row.MaxPeak = lo, ms.Model.TotalParams(), r.Peak
	if lo == scenarios.MaxLayers {
		row.Note = fmt.Sprintf("fits even at the scenario limit of %d layers", scenarios.MaxLayers)
	}
	return nil
}

// maxModelParams bounds the params search (2^50 ≈ 1.1e15 parameters).
const maxModelParams = int64(1) << 50

func largestByParams(src Source, s *scenarios.Scenario, stage, k int, opt FitOptions, row *FitRow) error {
	p0, ll := s.Model.TotalParams(), int64(s.Model.LargestLayer)
	layers := int64(len(s.Model.LayerList))
	if ll > 0 {
		layers-- // the embedding
	}
	var failed error
	try := func(x int64) (*memory.Report, bool) {
		sets := []string{fmt.Sprintf("model.params=%d", x)}
		if ll > 0 {
			sets = append(sets, "model.largest_layer="+itoa(roundScale(ll, x, p0)))
		}
		_, r, ok, err := scaledFits(src, stage, k, opt.Convention, sets...)
		if err != nil && failed == nil {
			failed = err
		}
		return r, ok
	}
	minP := max(layers, 1)
	if ll > 0 {
		minP = 2 * layers // room for a scaled largest layer of ≥ 1 and one param per layer
	}
	if _, ok := try(minP); !ok {
		return failed
	}
	// Bracket: lo fits, hi does not (or is the cap).
	lo, hi := minP, p0
	if _, ok := try(p0); ok {
		lo, hi = p0, p0
		for hi < maxModelParams {
			hi = min(hi*2, maxModelParams)
			if _, ok := try(hi); !ok {
				break
			}
			lo = hi
		}
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if _, ok := try(mid); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	r, _ := try(lo)
	if failed != nil {
		return failed
	}
	row.MaxParams, row.MaxPeak = lo, r.Peak
	return nil
}
