package scenarios

import (
	"strings"
	"testing"
)

// TestExpandableSegmentsWarnsWhereNothingIsSimulated: memory.
// expandable_segments is read only by the simulated caching allocator
// (PyTorch FSDP at stage 3, nothing offloaded, no allocator_overhead), so
// elsewhere it warns, naming the key's position and why (qa16 M1: it was
// ignored silently); a stack preset's value (stack: torchtitan at stage 2)
// draws no warning.
func TestExpandableSegmentsWarnsWhereNothingIsSimulated(t *testing.T) {
	file := []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 8, zero_stage: 3}
communication: {boundary: fsdp2}
memory:
  expandable_segments: true
`)
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, ""},
		{[]string{"communication.boundary=fsdp1"}, ""},
		{[]string{"communication.boundary=deepspeed"}, "s.yaml:7:3: expandable_segments has no effect here: communication.boundary is deepspeed"},
		{[]string{"communication.boundary=reshard"}, "communication.boundary is reshard"},
		{[]string{"parallelism.zero_stage=2"}, "parallelism.zero_stage is 2"},
		{[]string{"memory.allocator_overhead=0.2"}, "memory.allocator_overhead"},
		{[]string{"memory.expandable_segments=false", "parallelism.zero_stage=1"}, "--set memory.expandable_segments=false: expandable_segments has no effect here"},
	} {
		s, err := Load("s.yaml", file, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range s.Warnings {
			if strings.Contains(w, "expandable_segments has no effect") {
				got = w
			}
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%q: warning %q, want one with %q", c.sets, got, c.want)
		}
	}
	// The stack fills the key in: no warning where it does not apply.
	s, err := Load("tt.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b, seq_len: 2048}\nparallelism: {dp: 8, zero_stage: 2}\nstack: torchtitan\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory.ExpandableSegments == nil || !*s.Memory.ExpandableSegments {
		t.Fatal("stack torchtitan did not set memory.expandable_segments")
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "expandable_segments") {
			t.Errorf("stack torchtitan at stage 2: %q", w)
		}
	}
}
