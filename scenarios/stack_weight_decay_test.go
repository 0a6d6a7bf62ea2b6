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
		yaml          string // the file, stackYAML when ""
	}{
		{"stage 0: DDP under autocast", []string{"parallelism.zero_stage=0"}, FP32, "", BF16, ""},
		{"stage 3: FSDP2", nil, BF16, FP32, "", ""},
		{"stage 2: FSDP2", []string{"parallelism.zero_stage=2"}, BF16, FP32, "", ""},
		{"stage 0, param_dtype given", []string{"parallelism.zero_stage=0", "training.param_dtype=bf16"}, BF16, FP32, "", ""},
		{"stage 0, pure bf16 (master_dtype none)", []string{"parallelism.zero_stage=0", "training.master_dtype=none", "training.reduce_dtype=param_dtype"}, BF16, "", "", ""},
		// Model groups with their own precision, and expert parallelism,
		// do not go with autocast's fp32 parameters: the loader's default.
		{"stage 0, model groups", nil, BF16, FP32, "", "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}\nmodel:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n    - {name: l0, params: 1000, fwd: 1ms, bwd: 2ms}\nparallelism: {dp: 2, zero_stage: 0}\n"},
		{"stage 0, ep 8", nil, BF16, FP32, "", "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b, layers: 2, seq_len: 1024}\nparallelism: {dp: 8, zero_stage: 0, ep: 8}\n"},
		{"stage 0, ep 1", []string{"parallelism.ep=1"}, FP32, "", BF16, "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b, layers: 2, seq_len: 1024}\nparallelism: {dp: 8, zero_stage: 0}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := tc.yaml
			if y == "" {
				y = stackYAML
			}
			s, err := Load("s.yaml", []byte(y+"stack: torchtitan\n"), tc.sets)
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
