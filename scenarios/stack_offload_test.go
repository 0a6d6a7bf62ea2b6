package scenarios

import (
	"strings"
	"testing"
)

// TestStackOffloadWarns (qa19 L15): DeepSpeed's CPU offload under a stack
// that does not run it is modelled as asked with a warning at the key, as
// a stage the stack does not run is; under deepspeed, or with no stack, or
// without offload, nothing is said.
func TestStackOffloadWarns(t *testing.T) {
	def, _ := Example("default")
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"stack=torchtitan", "parallelism.zero_stage=3", "offload.optimizer=cpu"}, "default.yaml: --set offload.optimizer=cpu: stack torchtitan does not run DeepSpeed's CPU offload (offload_optimizer, offload_param): it offers only FSDP2's CPUOffloadPolicy"},
		{[]string{"stack=megatron", "offload.optimizer=cpu"}, "stack megatron does not run DeepSpeed's CPU offload (offload_optimizer, offload_param): it offers --optimizer-cpu-offload"},
		{[]string{"stack=llm-foundry", "parallelism.zero_stage=3", "offload.optimizer=cpu"}, "Composer v0.32.1 has no CPU offload"},
		{[]string{"stack=fms-fsdp", "parallelism.zero_stage=3", "offload.optimizer=cpu"}, "fms-fsdp 078c29e has no CPU offload setting"},
		{[]string{"stack=deepspeed", "offload.optimizer=cpu"}, ""},
		{[]string{"offload.optimizer=cpu"}, ""},
		{[]string{"stack=torchtitan", "parallelism.zero_stage=3"}, ""},
	} {
		s, err := Load("default.yaml", def, c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		var got string
		for _, w := range s.Warnings {
			if strings.Contains(w, "CPU offload") {
				got = w
			}
		}
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%v: warning %q, want %q", c.sets, got, c.want)
		}
	}
}
