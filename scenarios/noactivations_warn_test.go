package scenarios

import (
	"strings"
	"testing"
)

// TestBareParamsWarnsOfWhatItLeavesOut: a bare model.params has no
// transformer dimensions, so zerosim counts no activations, attention or
// logits, and without seq_len a sample is one token; load says so at the
// key with the fix (qauser s28 H1: stderr was empty and plan recommended a
// micro-batch that would run out of memory). A preset, a layer list that
// gives activation_bytes and seed 002's toys do not warn.
func TestBareParamsWarnsOfWhatItLeavesOut(t *testing.T) {
	const cluster = "version: 1\nname: x\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\n"
	tiny, _ := Example("seed002-tiny")
	for _, c := range []struct {
		name     string
		data     string
		at, want string // the key, the position and a part of the warning; "" none
		oneToken bool
	}{
		{"params and seq_len", cluster + "model: {params: 13B, seq_len: 4096}\n", "model.params", "s.yaml:5:9: model.params alone has no transformer dimensions: activations, attention and the output logits are not counted, so memory and step time are lower bounds (give model.preset, model.hf_config, or kind: transformer with hidden, layers and heads", false},
		{"params alone", cluster + "model: {params: 13B}\n", "model.params", "and without model.seq_len a sample is one token", true},
		{"layer list", cluster + "model:\n  layer_list:\n    - {name: a, params: 1000}\n", "model.layer_list", "s.yaml:6:3: model.layer_list gives no layer dims or activation_bytes", true},
		{"layer list with activation_bytes", cluster + "memory: {activations: true}\nmodel:\n  layer_list:\n    - {name: a, params: 1000, activation_bytes: 1MB}\n", "", "", false},
		{"preset", cluster + "model: {preset: llama2-13b}\n", "", "", false},
		{"seed002-tiny", string(tiny), "", "", false},
	} {
		s, err := Load("s.yaml", []byte(c.data), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.ActivationsKey() != c.at {
			t.Errorf("%s: key %q, want %q", c.name, s.ActivationsKey(), c.at)
		}
		got := s.ActivationsWarning
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: warning %q, want one with %q", c.name, got, c.want)
		}
		if got != "" && !strings.Contains(strings.Join(s.Warnings, "\n"), got) {
			t.Errorf("%s: %q is not among the load's warnings %q", c.name, got, s.Warnings)
		}
		if strings.Contains(got, "one token") != c.oneToken {
			t.Errorf("%s: %q says a sample is one token: %v, want %v", c.name, got, !c.oneToken, c.oneToken)
		}
	}
}
