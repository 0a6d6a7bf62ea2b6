package scenarios

import (
	"strings"
	"testing"
)

// TestGradSync checks training.grad_sync's validation and warnings, the
// stack defaults GradSyncEvery resolves, fms-fsdp's no-accumulation
// warning and recompute keys under recompute: none.
func TestGradSync(t *testing.T) {
	data, _ := Example("default")
	for _, c := range []struct {
		sets      []string
		every     bool
		warn, err string
	}{
		{[]string{"parallelism.zero_stage=0"}, false, "", ""},
		{[]string{"parallelism.zero_stage=0", "stack=torchtitan"}, true, "", ""},
		{[]string{"parallelism.zero_stage=0", "stack=llm-foundry", "training.grad_sync=last"}, false, "", ""},
		{[]string{"parallelism.zero_stage=0", "stack=deepspeed"}, false, "", ""},
		{[]string{"parallelism.zero_stage=1", "training.grad_sync=every"}, true, "", ""},
		// torchtitan's every is its DDP's (stage 0); at stage 1, which no
		// setting of the stack runs, the rule of the other stacks: last.
		{[]string{"parallelism.zero_stage=1", "stack=torchtitan"}, false, "stack torchtitan does not run ZeRO stage 1", ""},
		// Stages 2 and 3: every unset, whatever the stack; last is FSDP's
		// no_sync, modelled, but DeepSpeed's engine refuses it (boundary
		// deepspeed, its preset, or a ZeRO++ key) and warns.
		{[]string{"parallelism.zero_stage=3"}, true, "", ""},
		{[]string{"parallelism.zero_stage=2", "stack=torchtitan"}, true, "", ""},
		{[]string{"parallelism.zero_stage=3", "training.grad_sync=last"}, false, "", ""},
		{[]string{"parallelism.zero_stage=2", "training.grad_sync=last", "communication.boundary=fsdp1"}, false, "", ""},
		{[]string{"parallelism.zero_stage=3", "training.grad_sync=last", "stack=deepspeed"}, true, "grad_sync: last has no effect under DeepSpeed's ZeRO stage 3", ""},
		{[]string{"parallelism.zero_stage=2", "training.grad_sync=last", "communication.boundary=deepspeed"}, true, "grad_sync: last has no effect under DeepSpeed's ZeRO stage 2", ""},
		{[]string{"parallelism.zero_stage=3", "training.grad_sync=last", "communication.zero_quantized_gradients=true"}, true, "grad_sync: last has no effect under DeepSpeed's ZeRO stage 3", ""},
		// Each ZeRO++ key is DeepSpeed's engine, which has no no_sync at
		// stage 3 (engine.no_sync's assert, engine.py lines 3041-3042 at
		// edaa7221); a partition size of 1 is hpZ off (ZeroPP), not DeepSpeed.
		{[]string{"parallelism.zero_stage=3", "training.grad_sync=last", "communication.zero_quantized_weights=true"}, true, "grad_sync: last has no effect under DeepSpeed's ZeRO stage 3", ""},
		{[]string{"parallelism.zero_stage=3", "training.grad_sync=last", "communication.zero_hpz_partition_size=8"}, true, "grad_sync: last has no effect under DeepSpeed's ZeRO stage 3", ""},
		{[]string{"parallelism.zero_stage=3", "training.grad_sync=last", "communication.zero_hpz_partition_size=1"}, false, "", ""},
		{[]string{"parallelism.zero_stage=1", "training.grad_sync=last", "stack=deepspeed"}, false, "", ""},
		{[]string{"parallelism.zero_stage=0", "stack=fms-fsdp", "training.grad_accum=4"}, true, "fms-fsdp 078c29e steps the optimizer after every batch", ""},
		{[]string{"training.recompute=none", "training.recompute_fraction=0.5"}, false, "recompute_fraction=0.5 counts nothing here", ""},
		{[]string{"training.recompute=none", "training.recompute_every=2"}, false, "recompute_every=2 counts nothing here", ""},
		{[]string{"training.grad_sync=sometimes"}, false, "", "grad_sync \"sometimes\" is unknown"},
	} {
		t.Run(strings.Join(c.sets, " "), func(t *testing.T) {
			s, err := Load("default.yaml", data, c.sets)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--set training.grad_sync") && !strings.Contains(err.Error(), "grad_sync") {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.GradSyncEvery(); got != c.every {
				t.Errorf("GradSyncEvery %v, want %v", got, c.every)
			}
			all := strings.Join(s.Warnings, "\n")
			if c.warn != "" && !strings.Contains(all, c.warn) {
				t.Errorf("warnings %q, want %q", all, c.warn)
			}
			if c.warn == "" && (strings.Contains(all, "grad_sync") || strings.Contains(all, "no gradient accumulation") || strings.Contains(all, "counts nothing here")) {
				t.Errorf("unexpected warning %q", all)
			}
		})
	}
}
