package numerics

import "fmt"

// DriftStep compares two runs after one step.
type DriftStep struct {
	Step int
	// MaxULP is the largest bf16 ULP distance between the runs' parameters,
	// Differ the number of parameters that differ, out of Total.
	// across zero the ULP distance counts every value in between, so
	// MaxAbsDiff is given too.
	MaxULP        int
	MaxAbsDiff    float64
	Differ, Total int
}

// denseParams returns the current bf16 parameters in parameter order, each
// element read from its owner in intra group 0.
func (s *sim) denseParams() []BF16 {
	out := make([]BF16, 0, s.lay.Numel)
	for k := range s.lay.Params {
		for _, sg := range s.lay.Segments(k) {
			for j := range sg.Numel {
				e := sg.Start + j
				owner := 0
				if s.cfg.Stage != 0 {
					b := sg.Bucket // the owner's position is the shard index inside the bucket
					n := s.lay.Buckets[b].Size / int64(s.S)
					owner = int((e - s.lay.Buckets[b].Start) / n)
				}
				out = append(out, s.ranks[owner].param[e])
			}
		}
	}
	return out
}

// Drift trains base in base.Mode (Exact is replaced by Native) once with K = ka and once with K = kb
// and reports, after every step, how far their bf16 parameters are apart.
// (In Exact mode the two runs are identical by construction.)
func Drift(base Config, ka, kb int) ([]DriftStep, error) {
	if base.Mode == Exact {
		base.Mode = Native
	}
	base.Corrupt = nil
	var sims [2]*sim
	for i, k := range []int{ka, kb} {
		c := base
		c.K = k
		s, err := newSim(c)
		if err != nil {
			return nil, fmt.Errorf("numerics: drift K %d: %w", k, err)
		}
		sims[i] = s
	}
	var out []DriftStep
	for step := 1; step <= base.Steps; step++ {
		for _, s := range sims {
			if err := s.runStep(); err != nil {
				return nil, err
			}
		}
		a, b := sims[0].denseParams(), sims[1].denseParams()
		d := DriftStep{Step: step, Total: len(a)}
		for i := range a {
			if a[i] != b[i] {
				d.Differ++
				d.MaxULP = max(d.MaxULP, ULPDistance(a[i], b[i]))
				d.MaxAbsDiff = max(d.MaxAbsDiff, absDiff(a[i].Float64(), b[i].Float64()))
			}
		}
		out = append(out, d)
	}
	return out, nil
}
