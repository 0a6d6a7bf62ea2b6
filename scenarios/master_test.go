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
		// FSDP's stage 2 keeps the fp32 shard as its stage 3 does; stage 2
		// outside FSDP keeps whole parameters, no shard.
		{[]string{"training.shard_dtype=fp32", "parallelism.zero_stage=2", "communication.boundary=fsdp1"}, "shard_dtype fp32"},
		{[]string{"training.shard_dtype=fp32", "parallelism.zero_stage=2", "communication.boundary=fsdp2"}, "shard_dtype fp32"},
		{[]string{"training.shard_dtype=fp32", "parallelism.zero_stage=2", "communication.boundary=reshard"}, ""},
		{[]string{"parallelism.zero_stage=2", "training.reduce_dtype=fp32"}, "reduce_dtype fp32 at zero_stage 2 with communication.boundary reshard: there reduce_dtype fp32 is Megatron-LM's fp32 main_grad"},
		// FSDP's stage 2 casts the fp32-reduced shard back, as its stage 3.
		{[]string{"parallelism.zero_stage=2", "training.reduce_dtype=fp32", "communication.boundary=fsdp1"}, ""},
		{[]string{"parallelism.zero_stage=2", "training.reduce_dtype=fp32", "communication.boundary=fsdp2"}, ""},
		{[]string{"parallelism.zero_stage=2", "training.reduce_dtype=fp32", "communication.boundary=fsdp2_head"}, ""},
		{[]string{"parallelism.zero_stage=1", "training.reduce_dtype=fp32", "communication.boundary=fsdp2"}, "reduce_dtype fp32 at zero_stage 1: there reduce_dtype fp32 is Megatron-LM's fp32 main_grad"},
		{[]string{"parallelism.zero_stage=0", "training.reduce_dtype=fp32"}, "reduce_dtype fp32 at zero_stage 0: there"},
		{[]string{"offload.optimizer=cpu"}, "master_dtype none does not go with offload.optimizer cpu: DeepSpeed's ZeRO-Offload always steps a separate master partition, fp32 or bf16 (bf16.bf16_master_weights_and_grads, DeepSpeed >= 0.18.3 (39a682d79)) (use master_dtype: fp32 or bf16, or drop offload to keep master_dtype none)"},
		{[]string{"offload.params=cpu"}, "with offload.params cpu: DeepSpeed's ZeRO-Offload always steps a separate master partition, fp32 or bf16"},
		{[]string{"communication.boundary=deepspeed"}, "DeepSpeed"},
		// boundary deepspeed is DeepSpeed below stage 3 too, as for no_sync.
		{[]string{"communication.boundary=deepspeed", "parallelism.zero_stage=2"}, "DeepSpeed"},
		{[]string{"communication.boundary=deepspeed", "parallelism.zero_stage=1"}, "DeepSpeed"},
		{[]string{"communication.zero_quantized_weights=true"}, "DeepSpeed"},
		{[]string{"stack=deepspeed"}, "DeepSpeed's ZeRO (stack deepspeed, boundary deepspeed or a ZeRO++ key): its optimizers always step a separate master partition, fp32 or bf16 (bf16.bf16_master_weights_and_grads, DeepSpeed >= 0.18.3 (39a682d79)) (use master_dtype: fp32, or master_dtype: bf16"},
		{[]string{"training.optimizer_state_dtype=fp32"}, "optimizer_state_dtype fp32 does not go with master_dtype none"},
		{[]string{"training.optimizer_state_dtype=bf16"}, ""}, // the parameters' dtype
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

// TestDeepSpeedOnePredicate: master_dtype none's refusal and no_sync's rule
// agree on what is DeepSpeed. A scenario runs DeepSpeed's engine when its
// stack or its boundary is deepspeed; master_dtype none is refused there at
// every stage (its ZeRO optimizers step an fp32 partition), and
// grad_sync: last is overridden there at stages 2 and 3 only (engine.no_sync
// asserts from stage 2). Elsewhere both are taken as written.
func TestDeepSpeedOnePredicate(t *testing.T) {
	for _, stack := range []string{"", "deepspeed"} {
		for _, boundary := range []string{"reshard", "fsdp1", "deepspeed"} {
			for stage := 0; stage <= 3; stage++ {
				ds := stack == "deepspeed" || boundary == "deepspeed"
				sets := []string{"parallelism.zero_stage=" + string(rune('0'+stage)), "communication.boundary=" + boundary,
					"training.grad_accum=4", "training.grad_sync=last"}
				if stack != "" {
					sets = append(sets, "stack="+stack)
				}
				s, err := Load("s.yaml", []byte(baseYAML), sets)
				if err != nil {
					t.Fatalf("%v: %v", sets, err)
				}
				if got, want := s.GradSyncEvery(), ds && stage >= 2; got != want {
					t.Errorf("%v: grad_sync last overridden %v, want %v", sets, got, want)
				}
				_, err = Load("s.yaml", []byte(baseYAML), append(sets, "training.master_dtype=none"))
				if refused := err != nil && strings.Contains(err.Error(), "DeepSpeed's ZeRO"); refused != ds {
					t.Errorf("%v, master_dtype none: %v, want refused as DeepSpeed %v", sets, err, ds)
				}
			}
		}
	}
}

// TestMasterBF16: training.master_dtype bf16 (DeepSpeed's
// bf16_master_weights_and_grads) loads where DeepSpeed takes it and is
// refused, at the key, where DeepSpeed refuses it (config.py and the ZeRO
// optimizers' _configure_master_weights at edaa7221, MasterBF16), with the
// optimizer-state dtype it implies.
func TestMasterBF16(t *testing.T) {
	for _, c := range []struct {
		sets  []string
		state DType  // StateDType when it loads
		err   string // "": loads
	}{
		{nil, BF16, ""},
		{[]string{"parallelism.zero_stage=1"}, BF16, ""},
		{[]string{"parallelism.zero_stage=2"}, BF16, ""},
		{[]string{"training.optimizer_state_dtype=bf16"}, BF16, ""},
		{[]string{"parallelism.zero_stage=0"}, "", "zero_stage 0: DeepSpeed takes bf16_master_weights_and_grads at ZeRO stages 1, 2 and 3 only"},
		// fp32 states beside a bf16 master: DeepSpeedCPUAdam only.
		{[]string{"training.optimizer_state_dtype=fp32"}, "", "needs offload.optimizer cpu or nvme"},
		{[]string{"training.optimizer_state_dtype=fp32", "offload.optimizer=cpu"}, FP32, ""},
		{[]string{"training.optimizer_state_dtype=fp32", "offload.optimizer=nvme"}, FP32, ""},
		{[]string{"offload.optimizer=cpu"}, BF16, ""}, // fp32_optimizer_states=False
		{[]string{"training.optimizer_state_dtype=fp16"}, "", "optimizer_state_dtype fp16 does not go with master_dtype bf16"},
		{[]string{"training.param_dtype=fp16"}, "", "param_dtype fp16"},
		{[]string{"stack=megatron", "parallelism.zero_stage=1", "communication.boundary=reshard"}, "", "modelled under DeepSpeed's ZeRO only"},
		{[]string{"model.groups=[{name: dense, precision: fp32}]"}, "", "model group \"dense\" in fp32"},
		// DeepSpeed's bf16 mode casts every parameter to bf16: an fp16
		// group is refused as an fp32 one is.
		{[]string{"model.groups=[{name: dense, precision: fp16}]"}, "", "model group \"dense\" in fp16"},
		{[]string{"training.optimizer_impl=seed"}, "", "optimizer_impl seed"},
	} {
		sets := append([]string{"stack=deepspeed", "parallelism.zero_stage=3", "training.master_dtype=bf16"}, c.sets...)
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.err == "" && (s.Training.MasterDType != MasterBF16 || s.Training.StateDType() != c.state):
			t.Errorf("%v: master %q states %q, want bf16 and %q", c.sets, s.Training.MasterDType, s.Training.StateDType(), c.state)
		case c.err != "" && err == nil:
			t.Errorf("%v: loads, want an error naming %q", c.sets, c.err)
		case c.err != "" && !strings.Contains(err.Error(), c.err):
			t.Errorf("%v: %v, want it to name %q", c.sets, err, c.err)
		}
	}
	// bf16 optimizer states need the bf16 master (config.py: "bf16_optimizer_states
	// requires bf16_master_weights_and_grads to be enabled"); the default
	// follows the master.
	if _, err := Load("s.yaml", []byte(baseYAML), []string{"stack=deepspeed", "training.optimizer_state_dtype=bf16"}); err == nil || !strings.Contains(err.Error(), "requires bf16_master_weights_and_grads") {
		t.Errorf("optimizer_state_dtype bf16 beside an fp32 master: %v, want refused", err)
	}
	s, err := Load("s.yaml", []byte(baseYAML), []string{"stack=deepspeed"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Training.StateDType(); got != FP32 {
		t.Errorf("fp32 master: states %q, want fp32", got)
	}
}
