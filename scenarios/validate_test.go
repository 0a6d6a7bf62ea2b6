package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// Resolve on a loaded scenario changes nothing, for every embedded example:
// files and Go values go through one validation.
func TestResolveIsIdempotent(t *testing.T) {
	for _, name := range ExampleNames() {
		data, _ := Example(name)
		s, err := Load(name+".yaml", data, nil)
		if err != nil {
			t.Fatal(err)
		}
		again := *s
		if err := Resolve(&again); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(*s, again) {
			t.Errorf("%s: Resolve changed the loaded scenario:\n%+v\n%+v", name, *s, again)
		}
	}
}

// A Go value gets the defaults Load fills, and an invalid edit is an error
// that names the key (no file position to give).
func TestResolveGoValue(t *testing.T) {
	s := &Scenario{
		Cluster:     Cluster{Nodes: 1, GPUsPerNode: 4, GPU: "H100-80GB"},
		Model:       Model{Preset: "gpt3-125m"},
		Parallelism: Parallelism{DP: 4, Stage: 3},
	}
	if err := Resolve(s); err != nil {
		t.Fatal(err)
	}
	if s.Parallelism.K != 1 || s.Training.ComputeEfficiency != DefaultComputeEfficiency || s.Communication.Padding != PaddingToy ||
		s.Communication.Algorithm != AlgoAuto || s.Cluster.NICs != NICPerGPU || s.Training.Recompute != RecomputeNone ||
		!reflect.DeepEqual(s.Cluster.Placement, []Axis{AxisCP, AxisDP}) || len(s.Model.LayerList) != 14 {
		t.Errorf("defaults not filled: %+v", s)
	}
	// A target MFU leaves the efficiency unset, so the scenario resolves
	// again unchanged.
	m := *s
	m.Model.LayerList, m.Training.ComputeEfficiency, m.Training.MFU = nil, 0, 0.4
	if err := Resolve(&m); err != nil || m.Training.ComputeEfficiency != 0 || m.Training.MFU != 0.4 {
		t.Errorf("mfu 0.4: %v, efficiency %g", err, m.Training.ComputeEfficiency)
	} else if err := Resolve(&m); err != nil {
		t.Errorf("resolving a resolved mfu scenario: %v", err)
	}
	for _, tc := range []struct {
		edit func(*Scenario)
		want string
	}{
		{func(s *Scenario) { s.Parallelism.K = 3 }, "scenario: parallelism.k: k=3 does not divide dp·cp=4"},
		{func(s *Scenario) { s.Communication.Padding = "fancy" }, `communication.padding: padding "fancy" is unknown (use toy or megatron)`},
		{func(s *Scenario) { s.Training.MFU = 2 }, "training.mfu: mfu=2 is out of range"},
		{func(s *Scenario) { s.Training.MFU = 0.4 }, "training.mfu: give training.mfu (the model FLOPs utilization to reach) or training.compute_efficiency"},
		{func(s *Scenario) { s.Model.Layers = MaxLayers + 1 }, "model.layers"},
	} {
		c := *s
		c.Model.LayerList = nil
		tc.edit(&c)
		err := Validate(&c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to contain %q", err, tc.want)
		}
	}
}

// Layer.Block is decided once, here: the blocks of presets and derived
// layer lists by name, an explicit transformer layer list by its most
// common size; no other kind has transformer blocks.
func TestBlocks(t *testing.T) {
	blocks := func(s *Scenario) (out []string) {
		for _, l := range s.Model.LayerList {
			if l.Block {
				out = append(out, l.Name)
			}
		}
		return out
	}
	s := &Scenario{Cluster: Cluster{Nodes: 1, GPUsPerNode: 1, GPU: "H100-80GB"}, Parallelism: Parallelism{DP: 1},
		Model: Model{Preset: "llama2-7b", Layers: 2}}
	if err := Resolve(s); err != nil {
		t.Fatal(err)
	}
	if got := blocks(s); !reflect.DeepEqual(got, []string{"block.0", "block.1"}) {
		t.Errorf("llama blocks %v", got)
	}
	s.Model = Model{Kind: KindTransformer, Hidden: 64, Heads: 4, SeqLen: 32, Layers: 2, LayerList: []Layer{
		{Name: "emb", Params: 1000}, {Name: "a", Params: 4096}, {Name: "b", Params: 4096}, {Name: "c", Params: 4096}, {Name: "head", Params: 1000}}}
	if err := Resolve(s); err != nil {
		t.Fatal(err)
	}
	if got := blocks(s); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("explicit transformer list: blocks %v, want the first model.layers=2 of the most common size", got)
	}
	s.Model = Model{Params: 7e9}
	if err := Resolve(s); err != nil {
		t.Fatal(err)
	}
	if got := blocks(s); got != nil {
		t.Errorf("generic model: blocks %v", got)
	}
}
