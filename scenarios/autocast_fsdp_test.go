package scenarios

import (
	"strings"
	"testing"
)

// TestAutocastFSDP: training.autocast over fp32 parameters loads under
// PyTorch FSDP (zero_stage 2 or 3 with an FSDP boundary) and is refused,
// at the key with the fix, at the stages and boundaries of the stacks that
// run their own mixed precision. AutocastCached tells FSDP1 (views of the
// flat parameter, no cache) from DDP and FSDP2 (leaf parameters, cached).
func TestAutocastFSDP(t *testing.T) {
	for _, c := range []struct {
		sets   []string
		err    string // "": loads
		cached bool
	}{
		{[]string{"parallelism.zero_stage=0"}, "", true},
		{[]string{"parallelism.zero_stage=0", "communication.boundary=fsdp1"}, "", false}, // NO_SHARD
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp1"}, "", false},
		{[]string{"parallelism.zero_stage=2", "communication.boundary=fsdp1"}, "", false},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp2"}, "", true},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp2_head"}, "", true},
		{[]string{"parallelism.zero_stage=3"}, "boundary reshard", false},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=deepspeed"}, "zero_stage 3", false},
		{[]string{"parallelism.zero_stage=1", "communication.boundary=fsdp1"}, "zero_stage 1", false},
		{[]string{"parallelism.zero_stage=3", "communication.boundary=fsdp1", "stack=megatron"}, "training.autocast", false},
	} {
		sets := append([]string{"training.param_dtype=fp32", "training.autocast=bf16"}, c.sets...)
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.err == "" && s.AutocastCached() != c.cached:
			t.Errorf("%v: AutocastCached %t, want %t", c.sets, s.AutocastCached(), c.cached)
		case c.err != "" && err == nil:
			t.Errorf("%v: loads, want an error naming %q", c.sets, c.err)
		case c.err != "" && (!strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "training.autocast")):
			t.Errorf("%v: %v, want it to name %q and training.autocast", c.sets, err, c.err)
		}
	}
}

// TestImportLLMFoundryFULLAutocast: fsdp_config.mixed_precision FULL under
// precision amp_bf16 gathers fp32 parameters that Composer's
// torch.autocast casts: the import writes training.autocast bf16 over
// param_dtype fp32, which loads at FSDP1's zero_stage 3 with its casts
// uncached; PURE writes no autocast.
func TestImportLLMFoundryFULLAutocast(t *testing.T) {
	for _, c := range []struct {
		mp   string
		want DType
	}{{"FULL", BF16}, {"PURE", ""}} {
		f, err := ImportLLMFoundry("mpt-7b.yaml", lfFile(t, "mpt-7b.yaml", "mixed_precision: PURE", "mixed_precision: "+c.mp), LLMFoundryOptions{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB"})
		if err != nil {
			t.Fatalf("%s: %v", c.mp, err)
		}
		s, err := Load("mpt-7b.yaml", f.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.mp, err)
		}
		if s.Training.Autocast != c.want || s.Parallelism.Stage != 3 || s.Communication.Boundary != BoundaryFSDP1 {
			t.Errorf("%s: autocast %q at stage %d, boundary %s; want %q at 3, fsdp1", c.mp, s.Training.Autocast, s.Parallelism.Stage, s.Communication.Boundary, c.want)
		}
		if c.want != "" && s.AutocastCached() {
			t.Errorf("%s: AutocastCached under FSDP1", c.mp)
		}
	}
}
