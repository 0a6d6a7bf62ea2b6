package numerics

import (
	"math"
	"testing"
)

func toF64(p [][]float32) [][]float64 {
	out := make([][]float64, len(p))
	for k, v := range p {
		out[k] = make([]float64, len(v))
		for i, x := range v {
			out[k][i] = float64(x)
		}
	}
	return out
}

// TestGradientCheck compares the hand-written float64 backward pass of both
// toy models with central finite differences of the same float64 forward
// pass, for every parameter element.
func TestGradientCheck(t *testing.T) {
	for _, tc := range gradientChecks {
		t.Run(tc.name, func(t *testing.T) {
			checked, worst := gradientCheck(t, tc.kind, tc.hidden, tc.layer, tc.scale)
			t.Logf("%d elements, worst relative error %.3g", checked, worst)
		})
	}
}

// gradientChecks are TestGradientCheck's models (docs/numerics.md quotes
// their worst relative error, TestNumericsDocFigures).
var gradientChecks = []struct {
	name          string
	kind          ModelKind
	hidden, layer int
	scale         float64
}{
	{"mlp h3 l2", ResidualMLP, 3, 2, 1},
	{"mlp h5 l1 scaled", ResidualMLP, 5, 1, 0.25},
	{"tiny-transformer", TinyTransformer, 0, 0, 1},
	{"tiny-transformer scaled", TinyTransformer, 0, 0, 0.5},
}

// gradientCheck compares the model's float64 backward pass with central
// finite differences for every parameter element, failing t on an element
// off by more than 1e-7 + 1e-6·|analytic|, and returns the number of
// elements and the worst |error| / (1e-3 + |analytic|).
func gradientCheck(t *testing.T, kind ModelKind, hidden, layers int, scale float64) (checked int, worst float64) {
	t.Helper()
	m, err := newModel(kind, hidden, layers)
	if err != nil {
		t.Fatal(err)
	}
	p := toF64(m.init(7))
	b := m.makeBatch(7, 1, 0)
	env := newDenseEnv(p)
	forwardBackward(m, f64Arith(), env, b, scale)
	lossAt := func() float64 {
		return forwardBackward(m, f64Arith(), newDenseEnv(p), b, scale)
	}
	for k := range p {
		if len(env.g[k]) != len(p[k]) {
			t.Fatalf("%s: gradient has %d elements, want %d", m.params[k].Name, len(env.g[k]), len(p[k]))
		}
		for i := range p[k] {
			x := p[k][i]
			h := 1e-6 * max(1, math.Abs(x))
			p[k][i] = x + h
			lp := lossAt()
			p[k][i] = x - h
			lm := lossAt()
			p[k][i] = x
			num := (lp - lm) / (2 * h)
			ana := env.g[k][i]
			err := math.Abs(num - ana)
			worst = max(worst, err/(1e-3+math.Abs(ana)))
			if err > 1e-7+1e-6*math.Abs(ana) {
				t.Errorf("%s[%d]: analytic %.10g, finite difference %.10g", m.params[k].Name, i, ana, num)
			}
			checked++
		}
	}
	if int64(checked) != m.numel() {
		t.Errorf("checked %d elements, model has %d", checked, m.numel())
	}
	return checked, worst
}

// TestModelShapes checks parameter counts against the seeds: seed 002's
// tiny transformer has 260 parameters in units of 8, 64, 8, 148 and 32;
// seed 000's MLP has 8H²+5H per layer (hidden 13: 1417).
func TestModelShapes(t *testing.T) {
	tt, err := newModel(TinyTransformer, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := tt.numel(); n != 260 {
		t.Errorf("tiny transformer: %d params, want 260", n)
	}
	units := make([]int64, 5)
	for _, p := range tt.params {
		units[p.Unit] += p.Numel
	}
	for u, want := range []int64{8, 64, 8, 148, 32} {
		if units[u] != want {
			t.Errorf("tiny transformer unit %d: %d params, want %d", u, units[u], want)
		}
	}
	for _, tc := range []struct{ h, l int }{{13, 3}, {16, 3}, {4, 1}} {
		m, err := newModel(ResidualMLP, tc.h, tc.l)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(tc.l * (8*tc.h*tc.h + 5*tc.h)); m.numel() != want {
			t.Errorf("mlp h%d l%d: %d params, want %d", tc.h, tc.l, m.numel(), want)
		}
	}
	for _, tc := range []struct {
		kind ModelKind
		h, l int
	}{{ResidualMLP, 0, 3}, {ResidualMLP, 4, 0}, {ModelKind(9), 4, 1}} {
		if _, err := newModel(tc.kind, tc.h, tc.l); err == nil {
			t.Errorf("newModel(%v, %d, %d): no error", tc.kind, tc.h, tc.l)
		}
	}
}
