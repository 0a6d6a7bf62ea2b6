package numerics

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/memory"
)

// rank is one simulated data-parallel rank.
type rank struct {
	id, group, pos int
	param, grad    []BF16 // flat padded buffers (Layout.Size); flushed storage holds NaN
	master, m, v   []float32
	// own is the rank's exact shard of a unit gathered under qwZ, restored
	// when the unit is released (bucket → values).
	own map[int][]BF16
}

// sim is one sharded training run.
type sim struct {
	cfg    Config
	hyper  Hyper
	model  *model
	lay    *memory.Layout
	S      int       // shards per intra group, N/K
	where  []int32   // flat element → parameter index, −1 for padding
	elem   []int64   // flat element → index inside its parameter
	own    [][]int64 // position in group → the flat elements it owns, in master order
	unitB  []int     // unit → bucket (stage 3)
	ranks  []*rank
	ledger ledger
	step   int
}

func newSim(cfg Config) (*sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newModel(cfg.Model, cfg.Hidden, cfg.Layers)
	if err != nil {
		return nil, err
	}
	s := &sim{cfg: cfg, hyper: cfg.AdamHyper(), model: m, S: cfg.N / cfg.K}
	s.lay, err = memory.NewLayout(memory.StageSpec(m.params, cfg.Stage, s.S, cfg.BucketElems, cfg.Padding))
	if err != nil {
		return nil, fmt.Errorf("numerics: %w", err)
	}
	l := s.lay
	if l.Size > 1<<26 {
		return nil, fmt.Errorf("numerics: padded buffer of %d elements is too large for a check", l.Size)
	}
	s.where = make([]int32, l.Size)
	s.elem = make([]int64, l.Size)
	for i := range s.where {
		s.where[i] = -1
	}
	for k := range l.Params {
		for _, sg := range l.Segments(k) {
			for j := range sg.Numel {
				s.where[sg.Start+j] = int32(k)
				s.elem[sg.Start+j] = sg.Offset + j
			}
		}
	}
	s.own = make([][]int64, s.S)
	for p := range s.S {
		if cfg.Stage == 0 {
			break
		}
		for b := range l.Buckets {
			lo, hi := l.Shard(b, p)
			for e := lo; e < hi; e++ {
				s.own[p] = append(s.own[p], e)
			}
		}
	}
	if cfg.Stage == 0 {
		all := make([]int64, l.Size)
		for i := range all {
			all[i] = int64(i)
		}
		for p := range s.own {
			s.own[p] = all
		}
	}
	if c := cfg.Corrupt; c != nil {
		own := s.own[c.Rank%s.S]
		if c.Index >= int64(len(own)) {
			if len(own) == 0 {
				return nil, fmt.Errorf("numerics: corrupt index %d: rank %d's master shard is empty (corrupt another rank)", c.Index, c.Rank)
			}
			return nil, fmt.Errorf("numerics: corrupt index %d: rank %d's master shard has %d elements (use an index in 0–%d)", c.Index, c.Rank, len(own), len(own)-1)
		}
		if s.where[own[c.Index]] < 0 {
			return nil, fmt.Errorf("numerics: corrupt index %d of rank %d is padding (never read by Adam or written back)", c.Index, c.Rank)
		}
	}
	if cfg.Stage == 3 {
		units := 0
		for _, p := range l.Params {
			units = max(units, p.Unit+1)
		}
		s.unitB = make([]int, units)
		for _, p := range l.Params {
			s.unitB[p.Unit] = p.Bucket
		}
	}
	init := m.init(cfg.Seed)
	for r := range cfg.N {
		rk := &rank{id: r, group: r / s.S, pos: r % s.S,
			param: make([]BF16, l.Size), grad: make([]BF16, l.Size)}
		own := s.own[rk.pos]
		rk.master = make([]float32, len(own))
		rk.m = make([]float32, len(own))
		rk.v = make([]float32, len(own))
		for e := range rk.param {
			if k := s.where[e]; k >= 0 {
				rk.param[e] = ToBF16(init[k][s.elem[e]])
			}
		}
		for i, e := range own {
			rk.master[i] = rk.param[e].Float32()
		}
		if cfg.Stage == 3 {
			s.flushParams(rk, -1)
		}
		s.ranks = append(s.ranks, rk)
	}
	return s, nil
}

// flushParams fills rk's parameter storage outside its own shard with NaN,
// for bucket b (or every bucket when b < 0).
func (s *sim) flushParams(rk *rank, b int) {
	for bi, bk := range s.lay.Buckets {
		if b >= 0 && bi != b {
			continue
		}
		lo, hi := s.lay.Shard(bi, rk.pos)
		for e := bk.Start; e < bk.Start+bk.Size; e++ {
			if e < lo || e >= hi {
				rk.param[e] = bf16NaN
			}
		}
	}
}

// gatherParams is the intra-group all-gather of bucket b into rk's storage:
// it copies every group mate's own shard.
func (s *sim) gatherParams(rk *rank, b int) {
	for p := range s.S {
		if p == rk.pos {
			continue
		}
		src := s.ranks[rk.group*s.S+p]
		lo, hi := s.lay.Shard(b, p)
		copy(rk.param[lo:hi], src.param[lo:hi])
	}
}

// bucketBytes is the bf16 size in bytes of bucket b.
func (s *sim) bucketBytes(b int) int64 { return 2 * s.lay.Buckets[b].Size }

// rankEnv serves one rank's forward/backward pass from its flat buffers.
type rankEnv struct {
	s  *sim
	rk *rank
}

func (e *rankEnv) enter(unit int, backward bool) {
	if e.s.cfg.Stage != 3 {
		return
	}
	b := e.s.unitB[unit]
	e.s.gatherParams(e.rk, b)
	if e.s.cfg.QuantWeights {
		e.s.quantizeGathered(e.rk, b)
	}
	if e.rk.id == 0 && e.s.step == 1 {
		phase := "forward"
		if backward {
			phase = "backward"
		}
		e.s.ledger.add(phase, "all-gather", "intra", e.s.S, e.s.bucketBytes(b))
	}
}

func (e *rankEnv) leave(unit int, backward bool) {
	if e.s.cfg.Stage == 3 {
		b := e.s.unitB[unit]
		e.s.flushParams(e.rk, b)
		if own, ok := e.rk.own[b]; ok {
			lo, _ := e.s.lay.Shard(b, e.rk.pos)
			copy(e.rk.param[lo:], own)
			delete(e.rk.own, b)
		}
	}
}

// quantizeGathered replaces rk's gathered bucket b by what qwZ delivers:
// every partition quantized to int8 by its owner and dequantized, the
// rank's own included; its exact shard is kept for the release.
func (s *sim) quantizeGathered(rk *rank, b int) {
	if rk.own == nil {
		rk.own = map[int][]BF16{}
	}
	lo, hi := s.lay.Shard(b, rk.pos)
	rk.own[b] = append([]BF16(nil), rk.param[lo:hi]...)
	for p := range s.S {
		lo, hi := s.lay.Shard(b, p)
		part := make([]float32, hi-lo)
		for i := range part {
			part[i] = rk.param[lo+int64(i)].Float32()
		}
		for i, v := range qwzPartition(part) {
			rk.param[lo+int64(i)] = ToBF16(v)
		}
	}
}

func (e *rankEnv) param(k int) []float32 {
	l := e.s.lay
	v := make([]float32, l.Params[k].Numel)
	for _, sg := range l.Segments(k) {
		for j := range sg.Numel {
			v[sg.Offset+j] = e.rk.param[sg.Start+j].Float32()
		}
	}
	return v
}

func (e *rankEnv) grad(k int, g []float32) {
	for _, sg := range e.s.lay.Segments(k) {
		for j := range sg.Numel {
			e.rk.grad[sg.Start+j] = ToBF16(g[sg.Offset+j])
		}
	}
}

// dataRank returns whose data rank r trains on.
func (s *sim) dataRank(r int) int {
	if s.cfg.perm != nil {
		return s.cfg.perm[r]
	}
	return r
}

// runStep runs training step s.step+1 on every rank.
func (s *sim) runStep() error {
	s.backwardAll()
	return s.finishStep()
}

// backwardAll starts step s.step+1: forward and backward on every rank.
func (s *sim) backwardAll() {
	s.step++
	cfg := &s.cfg
	scale := float32(1)
	if cfg.SameData {
		scale = RoundBF16(1 / float32(cfg.N))
	}
	// Forward and backward on every rank (gradients stay in each rank's
	// full grad buffer until the reduction below).
	for _, rk := range s.ranks {
		clear(rk.grad)
		dr := s.dataRank(rk.id)
		if cfg.SameData {
			dr = 0
		}
		b := s.model.makeBatch(cfg.Seed, s.step, dr)
		forwardBackward(s.model, bf16Arith(), &rankEnv{s: s, rk: rk}, b, scale)
	}
}

// finishStep reduces the gradients, runs the optimizer and syncs the
// parameters of the current step.
func (s *sim) finishStep() error {
	cfg := &s.cfg
	s.reduceGrads()
	if cfg.ClipNorm > 0 {
		s.clipGrads()
	}
	// Optimizer on each rank's shard (stage 0: the whole buffer), real
	// elements only: padding never reaches Adam.
	coef := newAdamCoef(s.hyper, s.step)
	for _, rk := range s.ranks {
		own := s.own[rk.pos]
		for i, e := range own {
			if s.where[e] < 0 {
				continue
			}
			rk.master[i], rk.m[i], rk.v[i] = coef.update(rk.master[i], rk.grad[e].Float32(), rk.m[i], rk.v[i])
		}
		if c := cfg.Corrupt; c != nil && c.Rank == rk.id && c.Step == s.step {
			rk.master[c.Index] = math.Float32frombits(math.Float32bits(rk.master[c.Index]) ^ 1<<CorruptBit)
		}
		for i, e := range own {
			if s.where[e] >= 0 {
				rk.param[e] = ToBF16(rk.master[i])
			}
		}
	}
	// Parameter sync: stages 1 and 2 all-gather within each intra group;
	// stage 0 updated everything everywhere; stage 3 stays sharded.
	if cfg.Stage == 1 || cfg.Stage == 2 {
		for b := range s.lay.Buckets {
			for _, rk := range s.ranks {
				s.gatherParams(rk, b)
			}
			if s.step == 1 {
				s.ledger.add("post-optim", "all-gather", "intra", s.S, s.bucketBytes(b))
			}
		}
	}
	return nil
}
