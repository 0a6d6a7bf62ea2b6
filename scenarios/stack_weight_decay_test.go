package scenarios

import "testing"

// TestStackWeightDecay: the stacks' AdamW weight decay is the one their
// training scripts pass, not the preset's own keys read back: fms-fsdp's
// main_training.py:118-120 calls optim.AdamW(..., betas=(0.9, 0.95),
// weight_decay=0.1), torchtitan's build_optimizers passes weight_decay 0.1
// (torchtitan/optimizer.py:136); 0.1 under both.
func TestStackWeightDecay(t *testing.T) {
	for _, stack := range []string{"fms-fsdp", "torchtitan"} {
		s, err := Load("s.yaml", []byte(stackYAML+"stack: "+stack+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Training.WeightDecay != 0.1 {
			t.Errorf("stack %s: weight decay %g, want 0.1", stack, s.Training.WeightDecay)
		}
	}
}

// TestStackTorchtitanDDPPrecision (qauser32 L2): torchtitan's DDP (stage
// 0) is torch.autocast over the fp32 model (maybe_enable_amp,
// torchtitan/distributed/utils.py lines 243-263 at 238fa99), so the
// preset gives fp32 parameters under bf16 autocast there, as zerosim
// import torchtitan writes it; FSDP2's stages keep 16-bit parameters over
// an fp32 shard, and a file or --set that gives the precision keeps it.
func TestStackTorchtitanDDPPrecision(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sets          []string
		param, master DType
		autocast      DType
	}{
		{"stage 0: DDP under autocast", []string{"parallelism.zero_stage=0"}, FP32, "", BF16},
		{"stage 3: FSDP2", nil, BF16, FP32, ""},
		{"stage 2: FSDP2", []string{"parallelism.zero_stage=2"}, BF16, FP32, ""},
		{"stage 0, param_dtype given", []string{"parallelism.zero_stage=0", "training.param_dtype=bf16"}, BF16, FP32, ""},
		{"stage 0, pure bf16 (master_dtype none)", []string{"parallelism.zero_stage=0", "training.master_dtype=none", "training.reduce_dtype=param_dtype"}, BF16, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load("s.yaml", []byte(stackYAML+"stack: torchtitan\n"), tc.sets)
			if err != nil {
				t.Fatal(err)
			}
			master := s.Training.MasterDType
			if master == "none" {
				master = ""
			}
			if s.Training.ParamDType != tc.param || s.Training.Autocast != tc.autocast || tc.master != "" && master != tc.master {
				t.Errorf("param_dtype %q, master_dtype %q, autocast %q; want %q, %q, %q", s.Training.ParamDType, s.Training.MasterDType, s.Training.Autocast, tc.param, tc.master, tc.autocast)
			}
		})
	}
}
