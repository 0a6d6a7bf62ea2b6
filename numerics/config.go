package numerics

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/zerosim/zerosim/memory"
)

// ReduceMode selects how gradients are summed over ranks.
type ReduceMode int

const (
	// Exact sums every element exactly (fixed-point partial sums of the
	// bf16 gradients, wideSum) and rounds once to bf16: the result
	// depends neither on the order of the ranks nor on K, so sharded and
	// unsharded training compare bit for bit.
	Exact ReduceMode = iota
	// Native reduces like NCCL's rings: fp32 partial sums rounded at every
	// hop, in ring order within each intra group and across the K groups,
	// then rounded to bf16. Different K give different orders and so drift
	// apart (see Drift). Sums of a few bf16 values are mostly exact in
	// fp32, so the drift is small.
	Native
	// NativeBF16 is Native with every hop rounded to bf16, as NCCL does when
	// it reduces a bf16 buffer.
	NativeBF16
)

// String returns "exact" or "native".
func (m ReduceMode) String() string {
	switch m {
	case Exact:
		return "exact"
	case Native:
		return "native"
	case NativeBF16:
		return "native-bf16"
	}
	return fmt.Sprintf("ReduceMode(%d)", int(m))
}

// CorruptBit is the bit of the fp32 master flipped by a Corruption: bit 16,
// the lowest bit that survives rounding to bf16, so the flip always changes
// the written-back bf16 parameter by one ULP.
const CorruptBit = 16

// Corruption flips CorruptBit of element Index of rank Rank's fp32 master
// shard after Adam of step Step (from 1), before the bf16 write-back.
type Corruption struct {
	Rank  int
	Index int64
	Step  int
}

// Config is one sharded training run to verify.
type Config struct {
	Model ModelKind
	// Hidden and Layers size the residual MLP (ignored by the transformer).
	Hidden, Layers int
	// N ranks form the ZeRO group, split into K intra groups of N/K
	// contiguous ranks; Stage is the ZeRO stage 0–3.
	N, K, Stage int
	// BucketElems is the bucket size in elements (0 = one bucket); stage 3
	// uses one bucket per unit instead.
	BucketElems int64
	Padding     memory.Padding
	Steps       int
	Seed        uint64
	Mode        ReduceMode
	// Hyper is Adam's setting; the zero value means DefaultHyper.
	Hyper Hyper
	// ClipNorm, when > 0, clips the reduced gradients by their global
	// 2-norm to at most ClipNorm before Adam (clip_grad_norm_'s max_norm;
	// clip.go).
	ClipNorm float64
	// SameData is seed 000's own test: every rank trains on the same batch
	// with loss/N, and the reference is one process on that batch with the
	// plain loss. Bit-exact only when N is a power of two (then g/N is
	// exact), so other N are rejected.
	SameData bool
	Corrupt  *Corruption
	// ZeRO++ (quant.go), stage 3 with K = 1 only: QuantWeights is qwZ
	// (int8 parameter gathers), QuantGrads qgZ (the two-stage int4
	// gradient all-to-all across Local-rank nodes; with one node DeepSpeed
	// reduce-scatters as usual). Verify then checks the sharded run bit for
	// bit against an unsharded reference that quantizes the same way, and
	// reports the drift from unquantized training.
	QuantWeights, QuantGrads bool
	Local                    int

	// perm, if set, gives rank r the data of data-rank perm[r] (tests).
	perm []int
	// localNorm (tests) clips by each rank's local-shard norm, without
	// the all-reduce: the bug verify must catch.
	localNorm bool
}

// Limits keep a run small enough to be a check, not a benchmark.
const (
	MaxRanks = 256
	MaxSteps = 1000
)

// AdamHyper is the Adam setting c runs: Hyper, or DefaultHyper when zero.
func (c *Config) AdamHyper() Hyper {
	if c.Hyper == (Hyper{}) {
		return DefaultHyper
	}
	return c.Hyper
}

// Validate checks c; every problem a scenario or flag can cause is an
// error.
func (c *Config) Validate() error {
	switch {
	case c.N < 1 || c.N > MaxRanks:
		return fmt.Errorf("numerics: N %d: must be in [1, %d]", c.N, MaxRanks)
	case c.K < 1 || c.N%c.K != 0:
		return fmt.Errorf("numerics: K %d: must be ≥ 1 and divide N %d", c.K, c.N)
	case c.Stage < 0 || c.Stage > 3:
		return fmt.Errorf("numerics: stage %d: must be 0, 1, 2 or 3", c.Stage)
	case c.BucketElems < 0:
		return fmt.Errorf("numerics: bucket %d elements: must be ≥ 0", c.BucketElems)
	case c.Steps < 1 || c.Steps > MaxSteps:
		return fmt.Errorf("numerics: steps %d: must be in [1, %d]", c.Steps, MaxSteps)
	case c.Mode < Exact || c.Mode > NativeBF16:
		return fmt.Errorf("numerics: unknown reduce mode %d", int(c.Mode))
	case !(c.ClipNorm >= 0) || math.IsInf(c.ClipNorm, 0):
		return fmt.Errorf("numerics: clip norm %v: must be finite and ≥ 0 (0: no clipping)", c.ClipNorm)
	case c.SameData && bits.OnesCount(uint(c.N)) != 1:
		return fmt.Errorf("numerics: same-data check needs N a power of two (g/N exact in bf16), got %d", c.N)
	}
	if err := c.AdamHyper().Validate(); err != nil {
		return err
	}
	if c.Quantized() {
		switch {
		case c.Stage != 3 || c.K != 1:
			return fmt.Errorf("numerics: qwZ/qgZ are ZeRO++, stage 3 with K 1 (got stage %d, K %d)", c.Stage, c.K)
		case c.SameData:
			return errors.New("numerics: qwZ/qgZ are not bit-exact against one process: no same-data check")
		case c.QuantGrads && (c.Local < 1 || c.N%c.Local != 0):
			return fmt.Errorf("numerics: qgZ: %d ranks per node must be ≥ 1 and divide N %d", c.Local, c.N)
		}
	}
	if c.perm != nil {
		if len(c.perm) != c.N {
			return errors.New("numerics: permutation length differs from N")
		}
		seen := make([]bool, c.N)
		for _, p := range c.perm {
			if p < 0 || p >= c.N || seen[p] {
				return errors.New("numerics: invalid permutation")
			}
			seen[p] = true
		}
	}
	if k := c.Corrupt; k != nil {
		if k.Rank < 0 || k.Rank >= c.N {
			return fmt.Errorf("numerics: corrupt rank %d: must be in [0, %d)", k.Rank, c.N)
		}
		if k.Step < 1 || k.Step > c.Steps {
			return fmt.Errorf("numerics: corrupt step %d: must be in [1, %d]", k.Step, c.Steps)
		}
		if k.Index < 0 {
			return fmt.Errorf("numerics: corrupt index %d: must be ≥ 0", k.Index)
		}
	}
	return nil
}

// Name is a short label: "mlp-h13 N16 stage 2 K 4 bucket 97 exact".
func (c Config) Name() string {
	m := c.Model.String()
	if c.Model == ResidualMLP {
		m = fmt.Sprintf("mlp-h%d-l%d", c.Hidden, c.Layers)
	}
	b := "one"
	switch {
	case c.Stage == 3:
		b = "per-unit"
	case c.BucketElems > 0:
		b = fmt.Sprint(c.BucketElems)
	}
	s := fmt.Sprintf("%s N%d stage %d K %d bucket %s %s", m, c.N, c.Stage, c.K, b, c.Mode)
	if c.Padding != memory.PadToy {
		s += " " + c.Padding.String()
	}
	if c.SameData {
		s += " same-data"
	}
	if c.ClipNorm > 0 {
		s += fmt.Sprintf(" clip %g", c.ClipNorm)
	}
	if c.QuantWeights {
		s += " qwZ"
	}
	if c.QuantGrads {
		s += fmt.Sprintf(" qgZ(%d/node)", c.Local)
	}
	return s
}

// Quantized reports whether c uses ZeRO++'s quantized communication.
func (c Config) Quantized() bool { return c.QuantWeights || c.QuantGrads }

// qgzActive reports whether qgZ's all-to-all runs: qgZ on more than one
// node (stage3.py:1806).
func (c Config) qgzActive() bool { return c.QuantGrads && c.N/c.Local > 1 }

// SplitBucketElems is the bucket size of the matrix's split-bucket
// configurations: a prime, so buckets cut parameters and the shards of one
// bucket cut them again.
const SplitBucketElems = 97

// MatrixSteps is the minimum number of steps of a matrix configuration.
const MatrixSteps = 5

// Matrix builds the verify matrix around base (which supplies N, the model,
// seed, steps and hyper-parameters): stages 0–3 × every K dividing N ×
// buckets {one, SplitBucketElems} (stage 3 buckets per unit, so once) ×
// models (the residual MLP at base.Hidden and at seed 000's hidden 13, whose
// size is not divisible by most N; the tiny transformer alone) × at least
// MatrixSteps steps, in exact mode without corruption; plus seed 000's
// same-data check (stage 1, K 1) when N is a power of two.
func Matrix(base Config) []Config {
	base.Steps = max(base.Steps, MatrixSteps)
	base.Mode, base.Corrupt, base.SameData = Exact, nil, false
	models := []Config{base}
	if base.Model == ResidualMLP && base.Hidden != 13 {
		m := base
		m.Hidden = 13
		models = append(models, m)
	}
	var out []Config
	for _, m := range models {
		for stage := range 4 {
			for k := 1; k <= base.N; k++ {
				if base.N%k != 0 {
					continue
				}
				for _, b := range []int64{0, SplitBucketElems} {
					if stage == 3 && b != 0 {
						continue
					}
					c := m
					c.Stage, c.K, c.BucketElems = stage, k, b
					out = append(out, c)
				}
			}
		}
	}
	if base.N > 0 && bits.OnesCount(uint(base.N)) == 1 {
		c := models[len(models)-1]
		c.Stage, c.K, c.BucketElems, c.SameData = 1, 1, 0, true
		out = append(out, c)
	}
	return out
}
