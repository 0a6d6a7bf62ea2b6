package scenarios

import (
	"strings"
	"testing"
)

// TestAutocast: training.autocast loads over fp32 parameters at ZeRO stage
// 0 and is refused, at the key with the fix, beside every setting whose
// engine does not run torch.autocast over an fp32 model.
func TestAutocast(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want DType  // the loaded value when err is ""
		err  string // "": loads
	}{
		{nil, BF16, ""},
		{[]string{"training.autocast=fp16"}, FP16, ""},
		{[]string{"training.autocast=none"}, AutocastNone, ""},
		{[]string{"stack=torchtitan"}, BF16, ""},
		{[]string{"stack=llm-foundry"}, BF16, ""},
		{[]string{"training.autocast=fp8"}, "", "autocast"},
		{[]string{"training.param_dtype=bf16"}, "", "set param_dtype: fp32"},
		{[]string{"parallelism.zero_stage=3"}, "", "zero_stage 3"},
		{[]string{"parallelism.zero_stage=1"}, "", "zero_stage 1"},
		{[]string{"stack=deepspeed"}, "", "DeepSpeed"},
		{[]string{"communication.boundary=deepspeed"}, "", "DeepSpeed"},
		{[]string{"stack=megatron"}, "", "megatron"},
		{[]string{"model.groups=[{name: dense, precision: bf16}]"}, "", `group "dense" in bf16`},
		{[]string{"model.groups=[{name: dense, precision: fp32}]"}, BF16, ""},
	} {
		sets := append([]string{"parallelism.zero_stage=0", "training.param_dtype=fp32", "training.autocast=bf16"}, c.sets...)
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.err == "" && (s.Training.Autocast != c.want || s.Training.Autocasts() != (c.want != AutocastNone)):
			t.Errorf("%v: autocast %q (Autocasts %t), want %q", c.sets, s.Training.Autocast, s.Training.Autocasts(), c.want)
		case c.err != "" && err == nil:
			t.Errorf("%v: loads, want an error naming %q", c.sets, c.err)
		case c.err != "" && (!strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "training.autocast")):
			t.Errorf("%v: %v, want it to name %q and training.autocast", c.sets, err, c.err)
		}
	}
	// Unset, nothing autocasts.
	s, err := Load("s.yaml", []byte(baseYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Training.Autocasts() {
		t.Errorf("unset autocast: Autocasts true (%q)", s.Training.Autocast)
	}
}

// TestAutocastOps: training.autocast bf16 over bf16 parameters is
// DeepSpeed's torch_autocast beside bf16.enabled (accepted by DeepSpeed
// since 39a682d79, PR #7700): it loads under stack deepspeed at ZeRO
// stages 1–3 as AutocastOps, casting no weight (Autocasts false), and is
// refused, at the key, wherever zerosim does not model it or DeepSpeed
// refuses it (zero_quantized_weights: torch_autocast.py's
// _validate_auto_cast_settings).
func TestAutocastOps(t *testing.T) {
	for _, c := range []struct {
		sets []string
		err  string // "": loads
	}{
		{nil, ""},
		{[]string{"parallelism.zero_stage=1"}, ""},
		{[]string{"parallelism.zero_stage=2"}, ""},
		{[]string{"parallelism.zero_stage=0"}, "zero_stage 1, 2 or 3"},
		{[]string{"stack=torchtitan"}, "stack deepspeed"},
		{[]string{"training.autocast=fp16"}, "not modelled"},
		{[]string{"training.param_dtype=fp16"}, "not modelled"},
		{[]string{"communication.zero_quantized_weights=true"}, "Cannot enable both torch autocast and zero quantized weights"},
		// Transformer Engine's fp8 (or torchao's) beside autocast is not
		// modelled: resolveAutocastOps refuses it, on an fp8 GPU too.
		{[]string{"cluster.gpu=H100-80GB", "training.fp8=te"}, "training.fp8"},
		{[]string{"cluster.gpu=H100-80GB", "training.fp8=te_current"}, "training.fp8"},
	} {
		sets := append([]string{"stack=deepspeed", "parallelism.zero_stage=3", "training.param_dtype=bf16", "training.autocast=bf16"}, c.sets...)
		s, err := Load("s.yaml", []byte(baseYAML), sets)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.err == "" && (!s.Training.AutocastOps() || s.Training.Autocasts()):
			t.Errorf("%v: AutocastOps %t, Autocasts %t, want true, false", c.sets, s.Training.AutocastOps(), s.Training.Autocasts())
		case c.err != "" && err == nil:
			t.Errorf("%v: loads, want an error naming %q", c.sets, c.err)
		case c.err != "" && (!strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "training.autocast")):
			t.Errorf("%v: %v, want it to name %q and training.autocast", c.sets, err, c.err)
		}
	}
}

// TestCrossEntropyAutocast: training.cross_entropy autocast (the loss on
// the 16-bit logits inside torch.autocast, CrossEntropyAutocast) needs
// training.autocast, and does not go with keep_logits fp32 (the loss
// would then see fp32 logits).
func TestCrossEntropyAutocast(t *testing.T) {
	ds := []string{"stack=deepspeed", "parallelism.zero_stage=3", "training.param_dtype=bf16", "training.autocast=bf16"}
	for _, c := range []struct {
		sets []string
		key  string // "": loads
	}{
		{append(ds, "training.cross_entropy=autocast"), ""},
		{append(ds, "training.cross_entropy=autocast", "training.keep_logits=bf16"), ""},
		{[]string{"parallelism.zero_stage=0", "training.param_dtype=fp32", "training.autocast=bf16", "training.cross_entropy=autocast"}, ""},
		{[]string{"training.cross_entropy=autocast"}, "training.cross_entropy"},
		{append(ds, "training.cross_entropy=autocast", "training.keep_logits=fp32"), "training.keep_logits"},
	} {
		s, err := Load("s.yaml", []byte(baseYAML), c.sets)
		switch {
		case c.key == "" && err != nil:
			t.Errorf("%v: %v", c.sets, err)
		case c.key == "" && !s.Training.LossAutocast():
			t.Errorf("%v: LossAutocast false", c.sets)
		case c.key != "" && err == nil:
			t.Errorf("%v: loads, want an error at %s", c.sets, c.key)
		case c.key != "" && !strings.Contains(err.Error(), c.key):
			t.Errorf("%v: %v, want it at %s", c.sets, err, c.key)
		}
	}
}
