package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

// TestComparePlotOwnGPUAndTokens (QA s28 M3): the compare plot drew one
// "GPU memory" line across variants on GPUs of different memory, and raw
// step times for steps of different tokens. On the default example
// (Llama 2 7B on 16 GPUs):
//   - varying cluster.gpu over H100-80GB (79.11 GiB usable) and H200
//     (139.81 GiB) gives each bar its own capacity and no shared line;
//     the same GPU keeps the one line;
//   - varying training.grad_accum over 1 and 2 (the second step trains
//     twice the tokens) plots time per token, step time / tokens per step
//     in µs, which puts the two within their throughput ratio rather than
//     about 2× apart; the same tokens keep milliseconds per step.
func TestComparePlotOwnGPUAndTokens(t *testing.T) {
	data, _ := scenarios.Example("default")
	src := sweep.Source{File: "default.yaml", Data: data}
	plotOf := func(key string, vals ...string) (*Comparison, comparePlot) {
		runs, err := sweep.Compare(sweep.Vary(src, key, vals), sweep.CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := NewComparison("default", runs, false)
		return c, c.Plot
	}
	c, p := plotOf("cluster.gpu", "H100-80GB", "H200")
	mem := p.Panels[2]
	if mem.Capacity != 0 || len(mem.Capacities) != 2 || mem.CapacityLabel != "GPU memory, each variant's own" {
		t.Fatalf("GPUs differ: capacity %g, capacities %v, label %q", mem.Capacity, mem.Capacities, mem.CapacityLabel)
	}
	for i, v := range c.Variants {
		if math.Abs(mem.Capacities[i]-float64(v.GPUMemory)/(1<<30)) > 1e-9 {
			t.Errorf("%s: capacity %g GiB, GPU %d B", v.Label, mem.Capacities[i], v.GPUMemory)
		}
	}
	if mem.Capacities[1] < 139 || mem.Capacities[0] > 80 {
		t.Errorf("capacities %v GiB, want 79.11 and 139.81 (the CUDA capacities, scenarios.cudaCapacity)", mem.Capacities)
	}
	if _, err := p.files(); err != nil {
		t.Fatal(err)
	}
	if _, p := plotOf("parallelism.k", "1", "2"); p.Panels[2].Capacities != nil || p.Panels[2].Capacity == 0 ||
		p.Panels[0].YLabel != "time per step (ms)" {
		t.Errorf("one GPU, same tokens: capacity %g, capacities %v, time axis %q", p.Panels[2].Capacity, p.Panels[2].Capacities, p.Panels[0].YLabel)
	}
	c, p = plotOf("training.grad_accum", "1", "2")
	tp := p.Panels[0]
	if tp.YLabel != "time per token, step time / tokens per step (µs)" || !strings.HasPrefix(tp.Title, "time per token") {
		t.Fatalf("tokens differ: time panel %q, axis %q", tp.Title, tp.YLabel)
	}
	for i, v := range c.Variants {
		if want := float64(v.StepTimePS) / 1e6 / float64(v.Tokens); math.Abs(tp.Series[0].Values[i]-want) > 1e-9*want {
			t.Errorf("%s: %g µs per token, want %g", v.Label, tp.Series[0].Values[i], want)
		}
	}
	tps := func(v compareVariant) float64 { return float64(v.Tokens) / float64(v.StepTimePS) }
	if got, want := tp.Series[0].Values[0]/tp.Series[0].Values[1], tps(c.Variants[1])/tps(c.Variants[0]); math.Abs(got-want) > 1e-9 || got > 1.5 {
		t.Errorf("time per token ratio %g, throughput ratio %g", got, want)
	}
	if _, err := p.files(); err != nil {
		t.Fatal(err)
	}
}
