package numerics

import (
	"fmt"
	"math"
)

// Hyper holds Adam's hyper-parameters. With Decoupled set the weight decay is
// AdamW's (p ← p·(1 − lr·wd)); otherwise a non-zero WeightDecay is Adam's L2
// term (g ← g + wd·p).
type Hyper struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
	Decoupled                          bool
}

// DefaultHyper is torch.optim.Adam's default: lr 1e-3, betas (0.9, 0.999),
// eps 1e-8, no weight decay (Adam.__init__'s keyword defaults,
// torch/optim/adam.py at pytorch/pytorch
// dc80ccded5385cca3e777472d64cfe3d874fad89).
var DefaultHyper = Hyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}

// Validate checks the ranges PyTorch checks.
func (h Hyper) Validate() error {
	switch {
	case !(h.LR >= 0) || math.IsInf(h.LR, 0):
		return fmt.Errorf("numerics: adam: lr %v: must be finite and ≥ 0", h.LR)
	case !(h.Beta1 >= 0 && h.Beta1 < 1):
		return fmt.Errorf("numerics: adam: beta1 %v: must be in [0, 1)", h.Beta1)
	case !(h.Beta2 >= 0 && h.Beta2 < 1):
		return fmt.Errorf("numerics: adam: beta2 %v: must be in [0, 1)", h.Beta2)
	case !(h.Eps > 0) || math.IsInf(h.Eps, 0):
		return fmt.Errorf("numerics: adam: eps %v: must be finite and > 0", h.Eps)
	case !(h.WeightDecay >= 0) || math.IsInf(h.WeightDecay, 0):
		return fmt.Errorf("numerics: adam: weight decay %v: must be finite and ≥ 0", h.WeightDecay)
	}
	return nil
}

// fma32 is a float32 fused multiply-add: a·b + c with one rounding to
// float64 and one to float32 (the double rounding changes no value in the
// reference files testdata/reference/*.json, which TestReferenceFiles
// checks bit for bit).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// adamCoef holds the per-step scalars, computed once per step exactly as
// PyTorch 1.13's _single_tensor_adam does (Python float64, rounded to
// float32 where they meet a tensor).
type adamCoef struct {
	decay, wd, b1, omb1, b2, omb2, bc2sqrt, eps, negStep float32
	decoupled, l2                                        bool
}

func newAdamCoef(h Hyper, step int) adamCoef {
	bc1 := 1 - math.Pow(h.Beta1, float64(step))
	bc2 := 1 - math.Pow(h.Beta2, float64(step))
	return adamCoef{
		decay:     float32(1 - float64(h.LR*h.WeightDecay)),
		wd:        float32(h.WeightDecay),
		b1:        float32(h.Beta1),
		omb1:      float32(1 - h.Beta1),
		b2:        float32(h.Beta2),
		omb2:      float32(1 - h.Beta2),
		bc2sqrt:   float32(math.Sqrt(bc2)),
		eps:       float32(h.Eps),
		negStep:   float32(-h.LR / bc1),
		decoupled: h.Decoupled,
		l2:        !h.Decoupled && h.WeightDecay != 0,
	}
}

// AdamStep applies step number step (counting from 1) of Adam/AdamW to the
// float32 parameters p with gradients g and moments m and v (all updated in
// place except g), in PyTorch 1.13's float32 operation order (foreach=False,
// CPU):
//
//	if decoupled: p = p * f32(1 - lr*wd)
//	elif wd != 0: g = fma(p, f32(wd), g)
//	m = fma(g, f32(1-beta1), m * f32(beta1))
//	v = fma(f32(1-beta2) * g, g, v * f32(beta2))
//	denom = sqrt(v) / f32(sqrt(1 - beta2**step)) + f32(eps)
//	p = p + (f32(-lr/(1 - beta1**step)) * m) / denom
//
// It panics if the slices differ in length or step < 1 (caller bugs).
func AdamStep(h Hyper, step int, p, g, m, v []float32) {
	if len(g) != len(p) || len(m) != len(p) || len(v) != len(p) {
		panic("numerics: AdamStep: slices differ in length")
	}
	if step < 1 {
		panic("numerics: AdamStep: step must be ≥ 1")
	}
	c := newAdamCoef(h, step)
	for i := range p {
		p[i], m[i], v[i] = c.update(p[i], g[i], m[i], v[i])
	}
}

func (c *adamCoef) update(p, g, m, v float32) (float32, float32, float32) {
	if c.decoupled {
		p = p * c.decay
	} else if c.l2 {
		g = fma32(p, c.wd, g)
	}
	m = fma32(g, c.omb1, float32(m*c.b1))
	// Explicit float32 conversions forbid the compiler from fusing a
	// multiply and an add that PyTorch rounds separately.
	v = fma32(float32(c.omb2*g), g, float32(v*c.b2))
	denom := float32(float32(math.Sqrt(float64(v)))/c.bc2sqrt) + c.eps
	p = p + float32(float32(c.negStep*m)/denom)
	return p, m, v
}
