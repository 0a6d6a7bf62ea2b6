package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// TestFP8Params: training.fp8_params moves the transformer blocks into the
// fp8 group and leaves the embedding, final norm and output layer in the
// bf16 one; it is refused, at the key, where no source runs it.
func TestFP8Params(t *testing.T) {
	const base = "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 1}\n"
	const train = "training: {fp8: te, fp8_params: true}\n"
	s, err := Load("a.yaml", []byte(base+train), nil)
	if err != nil {
		t.Fatal(err)
	}
	var blocks, dense int
	for _, l := range s.Model.LayerList {
		switch {
		case l.Block && FP8Primary(l):
			blocks++
		case !l.Block && l.Group == "dense":
			dense++
		default:
			t.Errorf("unit %s in group %q (block %v)", l.Name, l.Group, l.Block)
		}
	}
	if blocks != 32 || dense != 3 || len(s.Model.Groups) != 2 || s.Model.Groups[1] != (ParamGroup{Name: FP8ParamsGroup, Precision: FP8}) {
		t.Errorf("%d blocks in fp8, %d units in dense, groups %v: want 32, 3 (embedding, final norm, output), dense and fp8", blocks, dense, s.Model.Groups)
	}
	// A preset's layer list is not changed under another scenario.
	if s2, err := Load("b.yaml", []byte(base+"training: {fp8: te}\n"), nil); err != nil || FP8Primary(s2.Model.LayerList[1]) {
		t.Errorf("without fp8_params: %v, unit 1 group %q", err, s2.Model.LayerList[1].Group)
	}
	const what = "fp8_params is Transformer Engine's fp8 primary weights (fp8_model_init: NeMo's model.fp8_params, Megatron-LM's --fp8-param-gather)"
	for _, tc := range []struct {
		name, doc, train, want string
	}{
		{"no fp8", base, "training: {fp8: none, fp8_params: true}\n", what + ", and training.fp8 is none (set fp8: te or te_current, or delete the key)"},
		{"torchao", strings.Replace(base, "stack: megatron", "stack: torchtitan", 1), "training: {fp8: torchao, fp8_params: true}\n", what + ", and training.fp8 is torchao (set fp8: te or te_current, or delete the key)"},
		{"stack", strings.Replace(base, "stack: megatron", "stack: torchtitan", 1), train, what + ", modelled with Megatron's distributed optimizer, and stack is \"torchtitan\" (set stack: megatron, or delete the key)"},
		{"stage 0", strings.Replace(base, "zero_stage: 1", "zero_stage: 0", 1), train, what + ", which Megatron-LM takes only with the distributed optimizer (arguments.py: \"--fp8-param-gather only supported with distributed optimizer\"), and zero_stage is 0 (set zero_stage: 1, or delete the key)"},
	} {
		_, err := Load("a.yaml", []byte(tc.doc+tc.train), nil)
		want := fmt.Sprintf("a.yaml:6:%d: %s", strings.Index(tc.train, "fp8_params")+1, tc.want)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, want)
		}
	}
}
