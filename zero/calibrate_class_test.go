package zero

import (
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestComputeClasses: the classes add up to the forward and backward the
// schedule runs (ComputeByKind), to the picosecond rounding of each task;
// attention is separate under a fused kernel and folded into GEMM under
// eager attention and for models without the per-operation plan.
func TestComputeClasses(t *testing.T) {
	for _, c := range []struct {
		name     string
		sets     []string
		separate bool
	}{
		{"default", nil, true},
		{"default", []string{"training.recompute=full"}, true},
		{"default", []string{"training.attention=eager"}, false},
		{"default", []string{"parallelism.cp=2", "parallelism.dp=8"}, true},
		{"llama2-13b-a100-eth", nil, true},
		{"seed000-mlp", nil, false},
	} {
		s := example(t, c.name, c.sets...)
		cl, err := ComputeClasses(s)
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, c.sets, err)
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fwd, bwd, _ := ComputeByKind(r)
		want := (fwd + bwd).Seconds()
		tasks := float64(len(r.Schedule.Tasks))
		if got := cl.Total(); math.Abs(got-want) > tasks*1e-12 || cl.Separate != c.separate || (c.separate && cl.Attention <= 0) || cl.GEMM <= 0 {
			t.Errorf("%s %v: classes %+v (sum %.9g s), schedule %.9g s; separate %v, want %v", c.name, c.sets, cl, got, want, cl.Separate, c.separate)
		}
	}
}

// TestBlockClassSeconds: the classes of a block add up to blockSeconds,
// with and without recompute.
func TestBlockClassSeconds(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 128256, Causal: true}
	g := GPUShape{Peak: 989e12, HBM: 3.35e12, SMs: 132}
	e := Efficiency{GEMM: 0.7, Attention: 0.3, HBM: 0.88}
	for _, re := range []int64{0, 1e12} {
		f, b, err := blockSeconds(d, g, e, 3e9, re)
		if err != nil {
			t.Fatal(err)
		}
		fc, bc, err := blockClassSeconds(d, g, e, 3e9, re)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fc.Total()-f) > 1e-12*f || math.Abs(bc.Total()-b) > 1e-12*b || fc.Attention <= 0 || fc.Other <= 0 {
			t.Errorf("recompute %d: classes %+v / %+v, blockSeconds %g / %g", re, fc, bc, f, b)
		}
	}
}

// TestCalibrateClassEfficiencies: kernel times made from a scenario's own
// classes at GEMM efficiency g and attention efficiency a give both back,
// under selective and full recompute, gradient accumulation and context
// parallelism; eager attention fits the GEMM efficiency alone.
func TestCalibrateClassEfficiencies(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
		g, a float64
	}{
		{"default", nil, 0.6, 0.25},
		{"default", []string{"training.recompute=full"}, 0.75, 0.5},
		{"llama2-13b-a100-eth", nil, 0.5, 0.3},
		{"default", []string{"parallelism.cp=2", "parallelism.dp=8"}, 0.65, 0.25},
		{"default", []string{"training.attention=eager"}, 0.55, 0},
	} {
		sets := append([]string{fmt.Sprintf("training.compute_efficiency=%g", c.g)}, c.sets...)
		if c.a > 0 {
			sets = append(sets, fmt.Sprintf("training.attention_efficiency=%g", c.a))
		}
		s := example(t, c.name, sets...)
		cl, k, err := ModelledClasses(s)
		if err != nil {
			t.Fatal(err)
		}
		d := func(secs float64) units.Duration { return units.Duration(math.Round(secs * k * float64(units.Second))) }
		m := ClassMeasurement{GEMM: d(cl.GEMM), Attention: d(cl.Attention), Other: d(cl.Other)}
		// Fit from the defaults.
		s.Training.ComputeEfficiency, s.Training.AttentionEfficiency = 0.8, 0
		fit, err := CalibrateClassEfficiencies(s, m, 1e-8)
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, c.sets, err)
		}
		if math.Abs(fit.GEMM-c.g) > 1e-5 || math.Abs(fit.Attention-c.a) > 1e-5 || (c.a == 0) != (fit.AttentionNote != "" || m.Attention == 0) {
			t.Errorf("%s %v: fitted %+v, want GEMM %g, attention %g", c.name, c.sets, fit, c.g, c.a)
		}
		if s.Training.ComputeEfficiency != 0.8 || s.Training.AttentionEfficiency != 0 {
			t.Errorf("%s: the scenario was changed: %+v", c.name, s.Training)
		}
	}
}
