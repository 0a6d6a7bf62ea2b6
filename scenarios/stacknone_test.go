package scenarios

import (
	"strings"
	"testing"
)

// TestStackNoneUnsetsTheStack: stack: none (in a file or --set stack=none)
// is no stack preset, the scenario the file gives without the key, so
// compare --vary stack=none,torchtitan holds the plain run; an empty or
// null --set names that spelling (qauser s28 L8: stack=none, stack= and
// stack=null were all refused, with no way to drop a file's stack).
func TestStackNoneUnsetsTheStack(t *testing.T) {
	const plain = "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 16, zero_stage: 3}\n"
	want, err := Load("s.yaml", []byte(plain), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSum, err := Digest(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data string
		sets []string
	}{
		{"stack: torchtitan\n" + plain, []string{"stack=none"}},
		{"stack: none\n" + plain, nil},
		{plain, []string{"stack=torchtitan", "stack=none"}},
	} {
		s, err := Load("s.yaml", []byte(c.data), c.sets)
		if err != nil {
			t.Fatalf("%q %v: %v", c.data[:20], c.sets, err)
		}
		sum, err := Digest(s)
		if err != nil {
			t.Fatal(err)
		}
		if s.Stack != "" || sum != wantSum {
			t.Errorf("%q %v: stack %q, digest %s; want none and %s", c.data[:20], c.sets, s.Stack, sum, wantSum)
		}
	}
	// The preset it replaces is really gone: torchtitan's keys are not filled.
	if s, _ := Load("s.yaml", []byte("stack: torchtitan\n"+plain), nil); s.Training.ReduceDType == want.Training.ReduceDType && s.Communication.Boundary == want.Communication.Boundary {
		t.Fatalf("stack torchtitan fills nothing the plain file lacks: the test proves nothing")
	}
	for _, c := range []struct{ set, want string }{
		{"stack=", `no value after "=" (use --set stack=VALUE; stack=none runs without a stack preset)`},
		{"stack=null", "null is not a value (give stack=VALUE; stack=none runs without a stack preset)"},
		{"stack=nonee", `stack "nonee" is unknown (use one of torchtitan, llm-foundry, fms-fsdp, deepspeed, megatron, or none; docs/stacks.md)`},
	} {
		_, err := Load("s.yaml", []byte(plain), []string{c.set})
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("--set %s: %v, want one ending %q", c.set, err, c.want)
		}
		if cerr := CheckSet(c.set); c.set == "stack=" && (cerr == nil || !strings.HasSuffix(cerr.Error(), c.want)) {
			t.Errorf("CheckSet(%s): %v, want one ending %q", c.set, cerr, c.want)
		}
	}
}
