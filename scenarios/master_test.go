package scenarios

import (
	"strings"
	"testing"
)

// TestMasterNone: training.master_dtype none loads where the optimizer can
// step the param_dtype parameters, and is refused, at the key, beside every
// setting that keeps an fp32 master or an fp32 gradient for one.
func TestMasterNone(t *testing.T) {
	for _, c := range []struct {
		sets []string
		err  string // "": loads
	}{
		{nil, ""},
		{[]string{"parallelism.zero_stage=0"}, ""},
		{[]string{"training.reduce_dtype=fp32"}, ""}, // stage 3: FSDP casts the reduced shard back
		{[]string{"training.param_dtype=fp32"}, ""},
		{[]string{"stack=torchtitan", "training.shard_dtype=bf16"}, ""},
		{[]string{"training.shard_dtype=fp32"}, "shard_dtype fp32"},
		{[]string{"stack=torchtitan"}, "shard_dtype fp32"},                      // the preset's fp32 shard
		{[]string{"training.shard_dtype=fp32", "parallelism.zero_stage=1"}, ""}, // no shard below stage 3
		{[]string{"parallelism.zero_stage=2", "training.reduce_dtype=fp32"}, "reduce_dtype fp32 at zero_stage 2"},
		{[]string{"offload.optimizer=cpu"}, "DeepSpeed"},
		{[]string{"offload.params=cpu"}, "DeepSpeed"},
		{[]string{"communication.boundary=deepspeed"}, "DeepSpeed"},
		{[]string{"stack=deepspeed"}, "DeepSpeed"},
		{[]string{"stack=megatron", "parallelism.zero_stage=1"}, "stack megatron"},
		{[]string{"model.groups=[{name: dense, precision: fp8}]"}, "fp8"},
		{[]string{"training.optimizer_impl=seed"}, "optimizer_impl seed"},
		{[]string{"training.optimizer_impl=composer"}, ""},
	} {
		sets := append([]string{"parallelism.zero_stage=3", "training.master_dtype=none"}, c.sets...)
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.err == "" && !s.Training.NoMaster():
			t.Errorf("%v: loads with master_dtype %q", c.sets, s.Training.MasterDType)
		case c.err != "" && err == nil:
			t.Errorf("%v: loads, want an error naming %q", c.sets, c.err)
		case c.err != "" && (!strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "master_dtype")):
			t.Errorf("%v: %v, want it to name %q and master_dtype", c.sets, err, c.err)
		}
	}
}
