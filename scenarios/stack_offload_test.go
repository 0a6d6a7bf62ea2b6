package scenarios

import (
	"strings"
	"testing"
)

// TestStackOffloadWarns (qa19 L15): DeepSpeed's CPU offload under a stack
// that does not run it is modelled as asked with a warning at the key, as
// a stage the stack does not run is; under deepspeed, or with no stack, or
// without offload, nothing is said. Under a stack whose boundary is PyTorch
// FSDP's (torchtitan, llm-foundry, fms-fsdp) it is refused at the key
// instead, as beside any FSDP boundary (qamem32 N2: it was modelled as
// DeepSpeed's ZeRO-Offload, FSDPOffloadNotModelled).
func TestStackOffloadWarns(t *testing.T) {
	def, _ := Example("default")
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"stack=torchtitan", "parallelism.zero_stage=3", "offload.optimizer=cpu"}, "error: default.yaml: --set offload.optimizer=cpu: offload.optimizer cpu beside communication.boundary fsdp2: " + FSDPOffloadNotModelled},
		{[]string{"stack=megatron", "offload.optimizer=cpu"}, "stack megatron does not run DeepSpeed's CPU offload (offload_optimizer, offload_param): it offers --optimizer-cpu-offload"},
		{[]string{"stack=llm-foundry", "parallelism.zero_stage=3", "offload.optimizer=cpu"}, "error: default.yaml: --set offload.optimizer=cpu: offload.optimizer cpu beside communication.boundary fsdp1: " + FSDPOffloadNotModelled},
		{[]string{"stack=fms-fsdp", "parallelism.zero_stage=3", "offload.optimizer=cpu"}, "error: default.yaml: --set offload.optimizer=cpu: offload.optimizer cpu beside communication.boundary fsdp1: " + FSDPOffloadNotModelled},
		{[]string{"stack=deepspeed", "offload.optimizer=cpu"}, ""},
		{[]string{"offload.optimizer=cpu"}, ""},
		{[]string{"stack=torchtitan", "parallelism.zero_stage=3"}, ""},
	} {
		s, err := Load("default.yaml", def, c.sets)
		if strings.HasPrefix(c.want, "error: ") {
			if err == nil || !strings.HasPrefix(err.Error(), strings.TrimPrefix(c.want, "error: ")) {
				t.Errorf("%v: error %v, want %q", c.sets, err, strings.TrimPrefix(c.want, "error: "))
			}
			continue
		}
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
