package numerics

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/memory"
)

// Mismatch locates one element where a sharded run differs from the
// unsharded reference.
type Mismatch struct {
	Step, Rank int
	// Buffer is "fp32 master", "adam exp_avg", "adam exp_avg_sq", "bf16
	// param", "master padding", "adam exp_avg padding", "adam exp_avg_sq
	// padding", "param padding" or "flushed param" (stage 3 storage outside
	// the rank's shard that is not NaN at rest).
	Buffer string
	// Param is the parameter name and Element the index inside it ("" and
	// −1 for padding); Flat is the offset in the padded flat buffer.
	Param   string
	Element int64
	Flat    int64
	// Got and Want are the values (float64 of the float32 or bf16).
	Got, Want float64
}

func (m Mismatch) String() string {
	where := fmt.Sprintf("%s[%d]", m.Param, m.Element)
	if m.Element < 0 {
		where = fmt.Sprintf("flat %d", m.Flat)
	}
	return fmt.Sprintf("step %d rank %d %s %s: got %.9g, want %.9g", m.Step, m.Rank, m.Buffer, where, m.Got, m.Want)
}

// StepStat summarises one step's comparison over all ranks.
type StepStat struct {
	Step int
	// Loss is the reference's loss summed over the data ranks.
	Loss float64
	// MaxAbsDiff is the largest |sharded − reference| over masters and bf16
	// params (+Inf when a NaN or Inf differs); MaxULP the largest bf16 ULP
	// distance of the params; Mismatches counts differing elements over all
	// ranks and buffers.
	MaxAbsDiff float64
	MaxULP     int
	Mismatches int
}

// Result is the outcome of Verify.
type Result struct {
	Config Config
	Pass   bool
	// MaxAbsDiff, MaxULP and Mismatches are the maxima and total over steps.
	MaxAbsDiff float64
	MaxULP     int
	Mismatches int
	// First is the first mismatch: lowest step, then masters before params,
	// then lowest rank and flat offset (so a corrupted master names its own
	// rank, not the group mates that gathered the bad value).
	First *Mismatch
	Steps []StepStat
	// QuantDrift is, under qwZ/qgZ, the drift of the quantized training
	// (checked bit for bit against its quantizing reference above) from
	// unquantized training after every step.
	QuantDrift []QuantDriftStep
	// CollectiveBytes lists the numeric collectives of one step.
	CollectiveBytes []CollectiveBytes
	// Layout figures: real and padded elements, buckets, elements per shard.
	Numel, Size, ShardElems int64
	Buckets                 int
}

// reference is unsharded training: one process, dense tensors, the sum of
// the N ranks' gradients (exact in a wideSum, one rounding to bf16) and Adam on the
// whole fp32 master.
type reference struct {
	cfg          Config
	model        *model
	hyper        Hyper
	params       [][]float32 // bf16 values
	master, m, v []float32   // all parameters, in parameter order
	off          []int64     // parameter k's offset in master
	step         int
	loss         float64
	gradNorm     float32 // the last step's global gradient norm, under clipping
	// lay is the stage-3 layout, set under qwZ/qgZ: the partitions qwZ
	// quantizes.
	lay *memory.Layout
}

func newReference(cfg Config) (*reference, error) {
	m, err := newModel(cfg.Model, cfg.Hidden, cfg.Layers)
	if err != nil {
		return nil, err
	}
	r := &reference{cfg: cfg, model: m, hyper: cfg.AdamHyper(), params: m.init(cfg.Seed)}
	for _, p := range r.params {
		r.off = append(r.off, int64(len(r.master)))
		r.master = append(r.master, p...)
	}
	r.m = make([]float32, len(r.master))
	r.v = make([]float32, len(r.master))
	if cfg.Quantized() {
		r.lay, err = memory.NewLayout(memory.StageSpec(m.params, cfg.Stage, cfg.N/cfg.K, cfg.BucketElems, cfg.Padding))
		if err != nil {
			return nil, fmt.Errorf("numerics: %w", err)
		}
	}
	return r, nil
}

func (r *reference) runStep() error {
	r.step++
	g := make([]wideSum, len(r.master))
	r.loss = 0
	ranks := r.cfg.N
	if r.cfg.SameData {
		ranks = 1
	}
	params := r.params
	if r.cfg.QuantWeights {
		params = r.qwzParams()
	}
	var perRank [][][]float32 // qgZ: rank → param → gradient
	for d := range ranks {
		env := newDenseEnv(params)
		r.loss += float64(forwardBackward(r.model, bf16Arith(), env, r.model.makeBatch(r.cfg.Seed, r.step, d), 1))
		if r.cfg.qgzActive() {
			perRank = append(perRank, env.g)
		}
		for k, gk := range env.g {
			for i, v := range gk {
				g[r.off[k]+int64(i)].addFloat32(v)
			}
		}
	}
	g32 := make([]float32, len(g))
	for i := range g {
		g32[i] = BF16FromFloat64(g[i].float64()).Float32()
	}
	if r.cfg.qgzActive() {
		r.qgzGrads(perRank, g32)
	}
	if r.cfg.ClipNorm > 0 {
		var sq wideSq
		for _, v := range g32 {
			sq.addSquare(ToBF16(v))
		}
		r.gradNorm = sq.norm()
		coef := clipCoef(r.cfg.ClipNorm, r.gradNorm)
		for i, v := range g32 {
			g32[i] = clipBF16(ToBF16(v), coef).Float32()
		}
	}
	AdamStep(r.hyper, r.step, r.master, g32, r.m, r.v)
	for k, p := range r.params {
		for i := range p {
			p[i] = RoundBF16(r.master[r.off[k]+int64(i)])
		}
	}
	return nil
}

// Verify trains cfg's toy model for cfg.Steps steps on N simulated ranks
// with the requested ZeRO stage, K, buckets and padding, and after every
// step compares every rank's fp32 master shard, Adam's exp_avg and
// exp_avg_sq shards and bf16 parameters (its shard at stage 3, whose other
// storage must be NaN at rest) with unsharded training, bit for bit. Padding must stay zero. An invalid cfg
// is an error; a mismatch is a Result with Pass false.
func Verify(cfg Config) (*Result, error) { return VerifySteps(cfg, nil) }

// VerifySteps is Verify calling stepDone, if set, after each step it has
// trained and checked (a progress bar's callback: verify ran 36 s at 1,000
// steps with none, QA22 M6).
func VerifySteps(cfg Config, stepDone func()) (*Result, error) {
	s, err := newSim(cfg)
	if err != nil {
		return nil, err
	}
	ref, err := newReference(cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Numel: s.lay.Numel, Size: s.lay.Size, ShardElems: s.lay.Size / int64(s.S), Buckets: len(s.lay.Buckets)}
	if cfg.Stage == 0 {
		res.ShardElems = s.lay.Size
	}
	var plain *reference // unquantized training, for the drift
	if cfg.Quantized() {
		pc := cfg
		pc.QuantWeights, pc.QuantGrads, pc.Corrupt = false, false, nil
		if plain, err = newReference(pc); err != nil {
			return nil, err
		}
	}
	for range cfg.Steps {
		if err := s.runStep(); err != nil {
			return nil, err
		}
		if err := ref.runStep(); err != nil {
			return nil, err
		}
		if plain != nil {
			if err := plain.runStep(); err != nil {
				return nil, err
			}
			res.QuantDrift = append(res.QuantDrift, quantDrift(ref, plain))
		}
		st := s.compare(ref, res)
		res.Steps = append(res.Steps, st)
		res.MaxAbsDiff = max(res.MaxAbsDiff, st.MaxAbsDiff)
		res.MaxULP = max(res.MaxULP, st.MaxULP)
		res.Mismatches += st.Mismatches
		if stepDone != nil {
			stepDone()
		}
	}
	res.CollectiveBytes = s.ledger
	res.Pass = res.Mismatches == 0
	return res, nil
}

func absDiff(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		if math.Float64bits(a) == math.Float64bits(b) {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(a - b)
}

// compare checks every rank against ref after a step and records the
// first mismatch in res.
func (s *sim) compare(ref *reference, res *Result) StepStat {
	st := StepStat{Step: s.step, Loss: ref.loss}
	var firstMaster, firstParam *Mismatch
	note := func(first **Mismatch, m Mismatch) {
		st.Mismatches++
		st.MaxAbsDiff = max(st.MaxAbsDiff, absDiff(m.Got, m.Want))
		if *first == nil {
			*first = &m
		}
	}
	mk := func(rk *rank, buf string, e int64, got, want float64) Mismatch {
		m := Mismatch{Step: s.step, Rank: rk.id, Buffer: buf, Element: -1, Flat: e, Got: got, Want: want}
		if k := s.where[e]; k >= 0 {
			m.Param, m.Element = s.lay.Params[k].Name, s.elem[e]
		}
		return m
	}
	for _, rk := range s.ranks {
		// fp32 master shard.
		for i, e := range s.own[rk.pos] {
			got := rk.master[i]
			want := float32(0)
			buf := "master padding"
			if k := s.where[e]; k >= 0 {
				want, buf = ref.master[ref.off[k]+s.elem[e]], "fp32 master"
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				note(&firstMaster, mk(rk, buf, e, float64(got), float64(want)))
			}
			// Adam's moments: a write-back error at the last step would
			// show nowhere else (QA23 M2).
			for _, mv := range [2]struct {
				buf, pad  string
				got, want []float32
			}{{"adam exp_avg", "adam exp_avg padding", rk.m, ref.m}, {"adam exp_avg_sq", "adam exp_avg_sq padding", rk.v, ref.v}} {
				got, want, buf := mv.got[i], float32(0), mv.pad
				if k := s.where[e]; k >= 0 {
					want, buf = mv.want[ref.off[k]+s.elem[e]], mv.buf
				}
				if math.Float32bits(got) != math.Float32bits(want) {
					note(&firstMaster, mk(rk, buf, e, float64(got), float64(want)))
				}
			}
		}
		// bf16 parameters: the whole buffer, or the own shard at stage 3.
		lo, hi := int64(0), s.lay.Size
		owned := func(e int64) bool { return true }
		if s.cfg.Stage == 3 {
			own := s.own[rk.pos]
			idx := 0
			owned = func(e int64) bool {
				for idx < len(own) && own[idx] < e {
					idx++
				}
				return idx < len(own) && own[idx] == e
			}
		}
		for e := lo; e < hi; e++ {
			got := rk.param[e]
			var want BF16
			buf := "param padding"
			if !owned(e) {
				if !got.IsNaN() {
					note(&firstParam, mk(rk, "flushed param", e, got.Float64(), math.NaN()))
				}
				continue
			}
			if k := s.where[e]; k >= 0 {
				want, buf = ToBF16(ref.params[k][s.elem[e]]), "bf16 param"
			}
			if got != want {
				note(&firstParam, mk(rk, buf, e, got.Float64(), want.Float64()))
				if !got.IsNaN() {
					st.MaxULP = max(st.MaxULP, ULPDistance(got, want))
				}
			}
		}
	}
	if res.First == nil {
		if firstMaster != nil {
			res.First = firstMaster
		} else {
			res.First = firstParam
		}
	}
	return st
}
