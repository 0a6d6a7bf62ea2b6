package main

import (
	"strings"
	"testing"
)

// TestPlanAdviceDropsThePin: plan's "to fit" advice to search a key that a
// --set pinned says to drop the pin, as plan refuses the pin beside the
// search flag (qa19 L2: "search it: --stages 0,1,2,3" was then refused with
// "--set parallelism.zero_stage=0 pins parallelism.zero_stage, and --stages
// searches it"); the advised command runs.
func TestPlanAdviceDropsThePin(t *testing.T) {
	out, _, _ := runCLI("plan", "--set", "parallelism.zero_stage=0")
	flat := strings.Join(strings.Fields(out), " ")
	want := "ZeRO stage 3 (search it: drop --set parallelism.zero_stage=0, add --stages 0,1,2,3)"
	if !strings.Contains(flat, want) {
		t.Fatalf("plan --set parallelism.zero_stage=0 advises:\n%s\nwant %q", out, want)
	}
	if _, errOut, code := runCLI("plan", "--stages", "0,1,2,3"); code == 2 {
		t.Errorf("the advised plan --stages 0,1,2,3: exit 2, %s", errOut)
	}
}

// TestPlanAdvisesOnlyTheStacksOffload (qa19 L15): with nothing fitting,
// plan advises DeepSpeed's offload under stack deepspeed, and under a stack
// that does not run it (torchtitan: FSDP2's CPUOffloadPolicy only) says so
// instead of advising it.
func TestPlanAdvisesOnlyTheStacksOffload(t *testing.T) {
	for _, c := range []struct{ stack, want, not string }{
		{"deepspeed", "offload to the CPU, --set offload.optimizer=cpu: peak", "does not advise CPU offload"},
		{"torchtitan", "(plan does not advise CPU offload: stack torchtitan does not run DeepSpeed's CPU offload (offload_optimizer, offload_param): it offers only FSDP2's CPUOffloadPolicy", "offload.optimizer=cpu"},
	} {
		out, _, _ := runCLI("plan", "--set", "stack="+c.stack, "--set", "parallelism.zero_stage=3", "--set", "cluster.gpu_memory=8GiB")
		flat := strings.Join(strings.Fields(out), " ")
		if !strings.Contains(flat, c.want) || strings.Contains(flat, c.not) {
			t.Errorf("stack %s:\n%s\nwant %q and no %q", c.stack, out, c.want, c.not)
		}
	}
}
