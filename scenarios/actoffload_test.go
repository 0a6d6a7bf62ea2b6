package scenarios

import (
	"strconv"
	"strings"
	"testing"
)

// TestActivationOffloadRefusals: training.activation_offload_layers is
// Megatron-Core's --cpu-offloading-num-layers; what Megatron-Core or
// Transformer Engine refuse (num_layers ≥ the model's, any recompute
// granularity) and what zerosim does not model (another stack, DeepSpeed's
// offload beside it) get one line naming the key; a Megatron scenario
// with 1 … L − 1 layers loads.
func TestActivationOffloadRefusals(t *testing.T) {
	def, _ := Example("default")
	base := []string{"stack=megatron", "parallelism.zero_stage=1", "training.recompute=none"}
	for _, c := range []struct {
		sets []string
		want string // "" loads
	}{
		{[]string{"training.activation_offload_layers=1"}, ""},
		{[]string{"training.activation_offload_layers=0"}, ""},
		{[]string{"training.activation_offload_layers=-1"}, "activation_offload_layers=-1 is out of range"},
		{[]string{"stack=torchtitan", "parallelism.zero_stage=3", "training.activation_offload_layers=2"}, "set stack: megatron"},
		{[]string{"stack=none", "training.activation_offload_layers=2"}, "set stack: megatron"},
		{[]string{"training.recompute=full", "training.activation_offload_layers=2"}, "refuses cpu_offloading with any recompute_granularity"},
		{[]string{"training.recompute=selective", "training.activation_offload_layers=2"}, "refuses cpu_offloading with any recompute_granularity"},
		{[]string{"offload.optimizer=cpu", "training.activation_offload_layers=2"}, "with offload.optimizer or offload.params"},
	} {
		s, err := Load("default.yaml", def, append(append([]string{}, base...), c.sets...))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "activation_offload_layers") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%v: error %v, want one line with %q", c.sets, err, c.want)
		case c.want == "" && s.OffloadsActivations() != (s.Training.ActivationOffloadLayers > 0):
			t.Errorf("%v: OffloadsActivations %v", c.sets, s.OffloadsActivations())
		}
	}
	// The block count bounds it: L − 1 loads, L is refused.
	s, err := Load("default.yaml", def, base)
	if err != nil {
		t.Fatal(err)
	}
	var L int64
	for _, l := range s.Model.LayerList {
		if l.Block {
			L++
		}
	}
	if _, err := Load("default.yaml", def, append(base, "training.activation_offload_layers="+strconv.FormatInt(L-1, 10))); err != nil {
		t.Errorf("L−1 = %d: %v", L-1, err)
	}
	if _, err := Load("default.yaml", def, append(base, "training.activation_offload_layers="+strconv.FormatInt(L, 10))); err == nil || !strings.Contains(err.Error(), "use 1 to "+strconv.FormatInt(L-1, 10)) {
		t.Errorf("L = %d: %v", L, err)
	}
}

// TestImportMegatronActivationOffload: --cpu-offloading-num-layers N
// (which turns --cpu-offloading on, arguments.py:1950-1951 at d98e8a64)
// imports as training.activation_offload_layers: N, and the scenario
// loads with it; --cpu-offloading alone and activations switched off
// offload nothing (a note); N ≥ the model's layers is refused at the flag.
func TestImportMegatronActivationOffload(t *testing.T) {
	args := "torchrun pretrain_gpt.py --num-layers 8 --hidden-size 256 --num-attention-heads 4 --seq-length 512 --max-position-embeddings 512 --micro-batch-size 2 --global-batch-size 16 --tokenizer-type NullTokenizer --vocab-size 1000 --bf16 "
	for _, c := range []struct {
		flags, want, err string
	}{
		{"--cpu-offloading --cpu-offloading-num-layers 3", "activation_offload_layers: 3  # --cpu-offloading-num-layers 3", ""},
		{"--cpu-offloading-num-layers 7", "activation_offload_layers: 7", ""},
		{"--cpu-offloading", "# note: --cpu-offloading without --cpu-offloading-num-layers offloads no layer", ""},
		{"--cpu-offloading-num-layers 2 --no-cpu-offloading-activations", "# note: --no-cpu-offloading-activations", ""},
		{"--cpu-offloading-num-layers 8", "", "--cpu-offloading-num-layers 8 is not an integer in 0 to 7"},
	} {
		m, err := ImportMegatron("a.sh", []byte(args+c.flags), MegatronOptions{Nodes: 1, GPU: "H100-80GB"})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.flags, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.flags, err)
		}
		out := m.Scenario()
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: no %q in\n%s", c.flags, c.want, out)
		}
		s, err := Load("imported.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: the import does not load: %v", c.flags, err)
		}
		if want := strings.Contains(c.want, "activation_offload_layers"); s.OffloadsActivations() != want {
			t.Errorf("%s: offloads %v", c.flags, s.OffloadsActivations())
		}
	}
}
