package sweep

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestFitAgainstNaive checks every row of FitSearch against direct
// analyses: the layout it proposes loads (zerosim accepts it) and fits, no
// smaller node count that zerosim accepts fits,
// and the largest model fits while one more layer (layers rule, seed000-k4's
// residual MLP) or one more parameter (params rule, seed002-7b) does not.
func TestFitAgainstNaive(t *testing.T) {
	for _, tc := range []struct {
		example string
		scaling string
		rows    int
	}{
		{"seed000-k4", ScaleLayers, 13},
		{"seed002-7b", ScaleParams, 13},
		{"seed002-tiny", ScaleNone, 7},
	} {
		data, _ := scenarios.Example(tc.example)
		src := Source{File: tc.example + ".yaml", Data: data}
		f, err := FitSearch(src, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if f.Scaling != tc.scaling || len(f.Rows) != tc.rows {
			t.Fatalf("%s: scaling %s, %d rows; want %s, %d", tc.example, f.Scaling, len(f.Rows), tc.scaling, tc.rows)
		}
		s, _ := src.Load()
		conv := memory.ConventionZerosim
		for _, r := range f.Rows {
			name := tc.example
			if r.MinNodes > 0 {
				checkLeastNodes(t, src, f, r)
			}
			if r.MaxParams == 0 {
				if tc.scaling != ScaleNone {
					t.Errorf("%s stage %d K=%d: no largest model", name, r.Stage, r.K)
				}
				continue
			}
			var fit, more []string
			switch tc.scaling {
			case ScaleLayers:
				fit = []string{"model.layers=" + itoa(r.MaxLayers)}
				more = []string{"model.layers=" + itoa(r.MaxLayers+1)}
			case ScaleParams:
				ll := int64(s.Model.LargestLayer)
				scale := func(x int64) []string {
					return []string{"model.params=" + itoa(x), "model.largest_layer=" + itoa(roundScale(ll, x, f.Params))}
				}
				fit, more = scale(r.MaxParams), scale(r.MaxParams+1)
			}
			if ms, rep, ok, err := scaledFits(src, r.Stage, r.K, conv, fit...); err != nil || !ok || ms.Model.TotalParams() != r.MaxParams || rep.Peak != r.MaxPeak {
				t.Errorf("%s stage %d K=%d: the largest model %d does not fit (%v)", name, r.Stage, r.K, r.MaxParams, err)
			}
			if r.MaxLayers == scenarios.MaxLayers {
				continue // no larger model to try
			}
			if _, _, ok, err := scaledFits(src, r.Stage, r.K, conv, more...); err != nil || ok {
				t.Errorf("%s stage %d K=%d: a larger model than %d fits", name, r.Stage, r.K, r.MaxParams)
			}
		}
	}
}

// Issue 13: gpt3-125m on 64 H100 at ZeRO-3 (model states only, 4.8 GiB
// at 1024 layers) fits at every layer count the
// scenario allows; fit used its own limit (4096) and took the loader's
// rejection of 1025+ layers for "does not fit", reporting 1024 as the
// largest model without saying it is the limit.
func TestFitLayerLimitIsTheScenarios(t *testing.T) {
	src := Source{File: "gpt3.yaml", Data: []byte(`version: 1
cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 64, zero_stage: 3}
memory: {activations: false}
`)}
	f, err := FitSearch(src, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Rows {
		if r.Stage != 3 || r.K != 1 {
			continue
		}
		want := fmt.Sprintf("fits even at the scenario limit of %d layers", scenarios.MaxLayers)
		if r.MaxLayers != scenarios.MaxLayers || !strings.Contains(r.Note, want) {
			t.Errorf("stage 3 K=1: largest %d layers, note %q; want %d and %q", r.MaxLayers, r.Note, scenarios.MaxLayers, want)
		}
		return
	}
	t.Fatal("no stage 3, K=1 row")
}

// A scaled model the loader rejects is an error, not a memory verdict.
func TestFitLoaderRejectionIsAnError(t *testing.T) {
	src := Source{File: "bad.yaml", Data: []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 8, zero_stage: 3}
`)}
	if _, _, _, err := scaledFits(src, 3, 1, memory.ConventionZerosim, fmt.Sprintf("model.layers=%d", scenarios.MaxLayers+1)); err == nil {
		t.Error("layers beyond the limit: no error")
	}
}

// checkLeastNodes loads the proposed layout through the loader (so zerosim
// accepts it: whole nodes, dp·cp = nodes · GPUs per node, K dividing it),
// checks it fits with the reported peak, and scans every smaller node count
// the loader accepts: none fits.
func checkLeastNodes(t *testing.T, src Source, f *Fit, r FitRow) {
	t.Helper()
	load := func(nodes int) (*memory.Report, error) {
		s, err := src.Load("cluster.nodes="+itoa(int64(nodes)), "parallelism.dp="+itoa(int64(nodes*f.GPUsPerNode/f.CP)),
			"parallelism.zero_stage="+itoa(int64(r.Stage)), "parallelism.k="+itoa(int64(r.K)))
		if err != nil {
			return nil, err
		}
		return memory.Analyze(s, memory.Options{})
	}
	if r.MinGPUs != r.MinNodes*f.GPUsPerNode || r.MinDP*f.CP != r.MinGPUs {
		t.Errorf("stage %d K=%d: %d nodes, %d GPUs, dp %d: not a whole-node layout", r.Stage, r.K, r.MinNodes, r.MinGPUs, r.MinDP)
	}
	rep, err := load(r.MinNodes)
	if err != nil || !rep.Fits || rep.Peak != r.MinPeak {
		t.Errorf("stage %d K=%d: %d nodes: %v, %v; want a layout zerosim accepts that fits with peak %d", r.Stage, r.K, r.MinNodes, rep, err, r.MinPeak)
	}
	for n := 1; n < r.MinNodes; n++ {
		if n*f.GPUsPerNode%f.CP != 0 {
			continue
		}
		if rep, err := load(n); err == nil && rep.Fits {
			t.Errorf("stage %d K=%d: %d nodes fit too, least is not %d", r.Stage, r.K, n, r.MinNodes)
		}
	}
}
