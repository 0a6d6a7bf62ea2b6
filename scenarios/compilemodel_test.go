package scenarios

import (
	"strings"
	"testing"
)

// TestCompileModelScope: training.compile model loads where the source
// says what its graphs are (one GPU at stage 0: one graph; PyTorch FSDP at
// stage 3: a graph per unit) and is refused elsewhere at the key, with
// the fix.
func TestCompileModelScope(t *testing.T) {
	one := []string{"cluster.nodes=1", "cluster.gpus_per_node=1", "parallelism.dp=1"}
	for _, c := range []struct {
		sets     []string
		err      string // "": loads
		oneGraph bool
	}{
		{append(one, "parallelism.zero_stage=0"), "", true},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp2"}, "", false},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp2_head"}, "", false},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp1"}, "", false},
		{[]string{"parallelism.zero_stage=0"}, "one GPU at zero_stage 0", false}, // DDP over 8
		{[]string{"parallelism.zero_stage=1"}, "for DDP or ZeRO 1-2 use compile: blocks", false},
		{[]string{"parallelism.zero_stage=2"}, "for DDP or ZeRO 1-2 use compile: blocks", false},
		{[]string{"parallelism.zero_stage=3"}, "communication.boundary fsdp1, fsdp2 or fsdp2_head", false}, // reshard
		{[]string{"parallelism.zero_stage=3", "communication.boundary=deepspeed"}, "communication.boundary fsdp1", false},
		{append(one, "parallelism.zero_stage=1"), "for DDP or ZeRO 1-2", false},
		{append(one, "parallelism.zero_stage=0", "stack=megatron"), "stack megatron", false},
	} {
		s, err := Load("s.yaml", []byte(baseYAML), append([]string{"training.compile=model"}, c.sets...))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.err == "" && s.OneGraph() != c.oneGraph:
			t.Errorf("%v: OneGraph %v, want %v", c.sets, s.OneGraph(), c.oneGraph)
		case c.err == "" && !s.Training.Compile.Blocks():
			t.Errorf("%v: compile model does not compile the blocks", c.sets)
		case c.err != "" && err == nil:
			t.Errorf("%v: loads, want an error naming %q", c.sets, c.err)
		case c.err != "" && (!strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "training.compile")):
			t.Errorf("%v: %v, want it to name %q and training.compile", c.sets, err, c.err)
		}
	}
	// Blocks is the per-block compile alone: one graph only under model.
	s, err := Load("s.yaml", []byte(baseYAML), append(one, "parallelism.zero_stage=0", "training.compile=blocks"))
	if err != nil {
		t.Fatal(err)
	}
	if s.OneGraph() {
		t.Error("compile blocks is one graph")
	}
}
