package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// hfSource is a scenario of config (a file under
// ../scenarios/testdata/hf-extra, the published config.json) on one node of
// 8 gpu at ZeRO-3 with ep, the config changed by edit (when not nil) and
// written to a temporary directory.
func hfSource(t *testing.T, config, gpu string, ep int, edit func(map[string]any)) Source {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "scenarios", "testdata", "hf-extra", config))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		if data, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), config)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return Source{File: "m.yaml", Data: []byte(fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: %s}\nmodel: {hf_config: %s, seq_len: 1024}\nparallelism: {dp: 8, zero_stage: 3, ep: %d}\n", gpu, path, ep))}
}

// maverickLayers makes Llama 4 Scout's text config interleave its MoE
// blocks as Maverick's does: interleave_moe_layer_step 2 and moe_layers
// 1, 3, …, 47 (Llama-4-Maverick-17B-128E's config.json).
func maverickLayers(doc map[string]any) {
	tc := doc["text_config"].(map[string]any)
	var odd []int
	for i := 1; i < 48; i += 2 {
		odd = append(odd, i)
	}
	tc["interleave_moe_layer_step"], tc["moe_layers"] = 2, odd
}

// TestFewestLayers: the largest-model search starts at the fewest layers
// that hold a MoE block when ep > 1 (QA24 H1: fit of DeepSeek-V3 at ep 8
// cut the model to its first block, dense, and exited 2 blaming the
// file's ep). The expected counts follow from each config's own keys and
// the modelling code's rule for which block is MoE:
//   - DeepSeek-V3: first_k_dense_replace 3, moe_layer_freq 1, MoE where
//     i >= 3 (modeling_deepseek.py): 3 + 1 = 4 layers;
//   - Llama 4 with Maverick's interleaving (maverickLayers; Scout's file
//     otherwise): MoE at the odd blocks, first at i = 1: 2 layers; Scout's
//     own (every block MoE): 1;
//   - Mixtral: every block MoE: 1; a dense Llama without ep: 1.
func TestFewestLayers(t *testing.T) {
	var dsv3 struct {
		FirstDense int64 `json:"first_k_dense_replace"`
		Freq       int64 `json:"moe_layer_freq"`
		Layers     int64 `json:"num_hidden_layers"`
	}
	data, _ := os.ReadFile(filepath.Join("..", "scenarios", "testdata", "hf-extra", "deepseek-v3.json"))
	if err := json.Unmarshal(data, &dsv3); err != nil || dsv3.FirstDense != 3 || dsv3.Freq != 1 {
		t.Fatalf("deepseek-v3.json: %+v, %v", dsv3, err)
	}
	for _, tc := range []struct {
		name string
		src  Source
		want int64
	}{
		{"deepseek-v3 ep 8", hfSource(t, "deepseek-v3.json", "MI355X", 8, nil), dsv3.FirstDense + 1},
		{"llama 4 step 2 ep 8", hfSource(t, "llama-4-scout-17b-16e.json", "H100-80GB", 8, maverickLayers), 2},
		{"llama 4 scout ep 8", hfSource(t, "llama-4-scout-17b-16e.json", "H100-80GB", 8, nil), 1},
		{"mixtral ep 8", hfSource(t, "mixtral-8x22b.json", "H100-80GB", 8, nil), 1},
		{"llama 3.1 70b", hfSource(t, "llama-3.1-70b.json", "H100-80GB", 1, nil), 1},
	} {
		s, err := tc.src.Load()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		base := layoutSets(3, 1)
		if got := fewestLayers(tc.src, base, s.Model.Layers); got != tc.want {
			t.Errorf("%s: fewest layers %d, want %d", tc.name, got, tc.want)
		}
		if tc.want > 1 {
			if _, err := tc.src.Load(append(base, fmt.Sprintf("model.layers=%d", tc.want-1))...); err == nil || !strings.Contains(err.Error(), "needs routed experts") {
				t.Errorf("%s at %d layers: %v; want the ep refusal", tc.name, tc.want-1, err)
			}
		}
	}
}

// TestFitDenseFirstMoE (QA24 H1): fit of DeepSeek-V3 at ep 8 answers every
// row. The largest model is checked against direct verdicts (it fits, one
// layer more does not), and on a GPU too small for its 4-layer model the
// note names the 4 layers the search began at (first_k_dense_replace 3 +
// 1) instead of a loader error about the file's ep.
func TestFitDenseFirstMoE(t *testing.T) {
	src := hfSource(t, "deepseek-v3.json", "MI355X", 8, nil)
	f, err := FitSearch(src, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jd := judge{}
	for _, r := range f.Rows {
		if r.Stage != 3 {
			continue
		}
		if r.MaxLayers < 4 {
			t.Fatalf("stage 3: largest %d layers, note %q", r.MaxLayers, r.Note())
		}
		for _, c := range []struct {
			layers int64
			fits   bool
		}{{r.MaxLayers, true}, {r.MaxLayers + 1, false}} {
			s, err := src.Load(append(layoutSets(3, 1), fmt.Sprintf("model.layers=%d", c.layers))...)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := jd.decide(s); err != nil || v.Fits != c.fits {
				t.Errorf("stage 3 at %d layers: fits %v (%v); want %v", c.layers, v.Fits, err, c.fits)
			}
		}
	}
	small := src
	small.Sets = []string{"cluster.gpu_memory=20GiB"}
	f, err = FitSearch(small, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Rows {
		if r.MaxLayers != 0 || !strings.Contains(r.Note(), "even the smallest model of this shape that zerosim runs with the file's settings (4 layers; fewer are refused) does not fit") {
			t.Errorf("20 GiB, stage %d: largest %d layers, note %q", r.Stage, r.MaxLayers, r.Note())
		}
	}
}

// A scaled model the loader still refuses is zerosim's error, not the
// file's: its message names the scaled model and carries no position of the
// file, which loads as given.
func TestScaledModelErrorIsZerosims(t *testing.T) {
	src := hfSource(t, "deepseek-v3.json", "MI355X", 8, nil)
	_, err := scaledModel(src, layoutSets(3, 1), "model.layers=1")
	want := "zerosim refuses the model the largest-model search scaled (model.layers=1), though the file loads as given: ep=8 needs routed experts"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "m.yaml") || errors.As(err, new(*scenarios.Error)) {
		t.Errorf("error %v; want %q without the file", err, want)
	}
}
