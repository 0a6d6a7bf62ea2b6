package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// stackYAML is a stage-3 scenario with no stack behaviour keys of its own.
const stackYAML = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama3.1-8b}
parallelism: {dp: 8, zero_stage: 3}
`

// TestStackPresets: each preset resolves exactly as its keys set by hand
// (the Stack field aside), and a key the file or a --set gives beats it.
func TestStackPresets(t *testing.T) {
	if len(StackNames()) != len(stackPresets) {
		t.Fatalf("StackNames lists %d stacks, stackPresets has %d", len(StackNames()), len(stackPresets))
	}
	for _, name := range StackNames() {
		keys, ok := stackPresets[name]
		if !ok || len(keys) == 0 {
			t.Fatalf("stack %q: no preset", name)
		}
		got, err := Load("s.yaml", []byte(stackYAML+"stack: "+name+"\n"), nil)
		if err != nil {
			t.Fatalf("stack %s: %v", name, err)
		}
		var sets []string
		for _, k := range keys {
			if strings.HasPrefix(k.path, "parallelism.") {
				t.Errorf("stack %s sets %s: presets leave parallelism to the user", name, k.path)
			}
			if !k.applies(3) {
				continue // stackYAML is at stage 3 (TestStackPresetStages)
			}
			sets = append(sets, k.path+"="+k.value) // stackYAML's param_dtype is the default bf16
		}
		want, err := Load("s.yaml", []byte(stackYAML), sets)
		if err != nil {
			t.Fatalf("stack %s by hand: %v", name, err)
		}
		if got.Stack != name {
			t.Errorf("stack %s: Stack = %q", name, got.Stack)
		}
		got.Stack = ""
		if w := got.LayoutWarning; w != "" {
			// Stage 3 is no layout of Megatron's (stacklayout.go): the one
			// warning the preset adds.
			if name != "megatron" || len(got.Warnings) != 1 || got.Warnings[0] != w {
				t.Errorf("stack %s: warnings %q", name, got.Warnings)
			}
			got.Warnings, got.LayoutWarning = nil, ""
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stack %s resolves otherwise than its keys set by hand", name)
		}
	}
	// The file's key and a --set beat the preset.
	s, err := Load("s.yaml", []byte(stackYAML+"stack: torchtitan\ntraining: {shard_dtype: bf16}\n"), []string{"communication.boundary=reshard"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Training.ShardDType != BF16 || s.Communication.Boundary != "reshard" || s.Training.ReduceDType != ReduceFP32 {
		t.Errorf("explicit keys: shard %q, boundary %q, reduce %q; want bf16, reshard and the preset's fp32", s.Training.ShardDType, s.Communication.Boundary, s.Training.ReduceDType)
	}
}

// TestStackPresetStages: the keys whose stack default depends on the
// stage. DeepSpeed's overlap_comm is true at stage 3 only (zero/config.py
// overlap_comm_valid at edaa7221; qa27 M1); torchtitan's DDP (stage 0)
// has 100 MiB buckets (parallelize.py:372 at 238fa99; qa27 L4), its FSDP2
// stages keep zerosim's default. An explicit key still wins.
func TestStackPresetStages(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 3}\n"
	for _, c := range []struct {
		stack   string
		sets    []string
		overlap bool
		bucket  units.Bytes
	}{
		{"deepspeed", []string{"parallelism.zero_stage=0"}, false, 20 * units.MB},
		{"deepspeed", []string{"parallelism.zero_stage=1"}, false, 20 * units.MB},
		{"deepspeed", []string{"parallelism.zero_stage=2"}, false, 20 * units.MB},
		{"deepspeed", nil, true, 20 * units.MB},
		{"deepspeed", []string{"parallelism.zero_stage=2", "communication.overlap=true"}, true, 20 * units.MB},
		{"torchtitan", []string{"parallelism.zero_stage=0"}, true, 100 * units.MiB},
		{"torchtitan", []string{"parallelism.zero_stage=0", "communication.bucket_size=25MB"}, true, 25 * units.MB},
		{"torchtitan", []string{"parallelism.zero_stage=2"}, true, DefaultBucketSize},
		{"torchtitan", nil, true, DefaultBucketSize},
		{"megatron", []string{"parallelism.zero_stage=0"}, false, DefaultBucketSize},
		// The stage as the loader reads it: YAML's 0x2 and 0o0 are 2 and 0.
		{"deepspeed", []string{"parallelism.zero_stage=0x2"}, false, 20 * units.MB},
		{"torchtitan", []string{"parallelism.zero_stage=0o0"}, true, 100 * units.MiB},
	} {
		s, err := Load("s.yaml", []byte(base+"stack: "+c.stack+"\n"), c.sets)
		if err != nil {
			t.Fatalf("%s %v: %v", c.stack, c.sets, err)
		}
		if got := s.Communication.Overlap == nil || *s.Communication.Overlap; got != c.overlap || s.Communication.BucketSize != c.bucket {
			t.Errorf("stack %s %v: overlap %v, bucket %d B; want %v, %d B", c.stack, c.sets, got, s.Communication.BucketSize, c.overlap, c.bucket)
		}
	}
}

// TestStackKeepLogits: stack llm-foundry keeps the logits Composer holds in
// self.state.outputs through the backward (trainer.py lines 2398-2470 at
// 784f50be) in the dtype the model returns them: param_dtype's bf16 or
// fp16, 2 bytes an element, or under training.autocast autocast's dtype;
// with fp32 parameters and no autocast it leaves the key unset (keep_logits
// fp32 does not go with the preset's fused loss), and the file's own value
// wins.
func TestStackKeepLogits(t *testing.T) {
	for _, c := range []struct {
		sets  []string
		want  KeepLogits
		bytes int64
	}{
		{nil, "bf16", 2},
		{[]string{"training.param_dtype=bf16"}, "bf16", 2},
		{[]string{"training.param_dtype=fp16"}, "fp16", 2},
		{[]string{"training.param_dtype=fp32", "training.shard_dtype=fp32"}, "", 0},
		{[]string{"training.keep_logits=none"}, "none", 0},
		// Composer's DDP under amp_bf16: fp32 parameters, but the model
		// runs under torch.autocast and returns its logits in bf16 (the
		// head's F.linear is on autocast's lower-precision list), which
		// Composer keeps all the same.
		{[]string{"parallelism.zero_stage=0", "training.param_dtype=fp32", "training.autocast=bf16"}, "bf16", 2},
		{[]string{"parallelism.zero_stage=0", "training.param_dtype=fp32", "training.autocast=fp16"}, "fp16", 2},
		{[]string{"parallelism.zero_stage=0", "training.param_dtype=fp32", "training.autocast=bf16", "training.keep_logits=bf16"}, "bf16", 2},
	} {
		s, err := Load("s.yaml", []byte(stackYAML+"stack: llm-foundry\n"), c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		if s.Training.KeepLogits != c.want || s.Training.KeptLogitsBytes() != c.bytes {
			t.Errorf("stack llm-foundry %v: keep_logits %q (%d B an element), want %q (%d B)", c.sets, s.Training.KeepLogits, s.Training.KeptLogitsBytes(), c.want, c.bytes)
		}
	}
	// Other stacks keep none (torchtitan deletes pred before backward).
	s, err := Load("s.yaml", []byte(stackYAML+"stack: torchtitan\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Training.KeepLogits != "" {
		t.Errorf("stack torchtitan: keep_logits %q, want unset", s.Training.KeepLogits)
	}
}

// TestStackTrainMetrics: stack llm-foundry counts the two train metrics
// ComposerMPTCausalLM updates every micro-batch, LanguageCrossEntropy and
// LanguagePerplexity (llmfoundry/models/mpt/modeling_mpt.py lines 697-699
// at 061f2c7c; Composer's _train_microbatch -> _eval_train_metrics), and a
// file's own value wins; other stacks leave the default 0. (Every
// validation template that runs Composer also sets the key itself, so
// without this the preset's value could change unseen.)
func TestStackTrainMetrics(t *testing.T) {
	for _, c := range []struct {
		stack string
		sets  []string
		want  int64
	}{
		{"llm-foundry", nil, 2},
		{"llm-foundry", []string{"training.train_metrics=0"}, 0},
		{"torchtitan", nil, 0},
		{"fms-fsdp", nil, 0},
		{"deepspeed", nil, 0},
	} {
		s, err := Load("s.yaml", []byte(stackYAML+"stack: "+c.stack+"\n"), c.sets)
		if err != nil {
			t.Fatalf("stack %s %v: %v", c.stack, c.sets, err)
		}
		if s.Training.TrainMetrics != c.want {
			t.Errorf("stack %s %v: train_metrics %d, want %d", c.stack, c.sets, s.Training.TrainMetrics, c.want)
		}
	}
}

// TestStackErrors: an unknown stack names the file position and the
// stacks; an error about a key the preset filled in names the preset.
func TestStackErrors(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"unknown", stackYAML + "stack: torchtitn\n",
			`s.yaml:5:8: stack "torchtitn" is unknown (use one of torchtitan, llm-foundry, fms-fsdp, deepspeed, megatron, or none; docs/stacks.md)`},
		{"not a name", stackYAML + "stack: [torchtitan]\n",
			`s.yaml:5:8: stack is a list, not a name (use one of torchtitan, llm-foundry, fms-fsdp, deepspeed, megatron, or none; docs/stacks.md)`},
		{"preset key against the file", stackYAML + "stack: megatron\ncommunication: {zero_quantized_gradients: true}\n",
			`s.yaml: stack megatron (training.reduce_dtype=fp32): reduce_dtype fp32 and communication.zero_quantized_gradients exclude each other: qgZ reduces quantized gradients (drop one)`},
	} {
		_, err := Load("s.yaml", []byte(c.doc), nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// TestDeepSpeedStage0OverlapWarns: an explicit overlap: true under stack
// deepspeed at stage 0 is modelled as asked, with a warning, since
// DeepSpeed's stage 0 all-reduces after the backward whatever overlap_comm
// says; at stage 2 overlap_comm is DeepSpeed's own setting, no warning.
func TestDeepSpeedStage0OverlapWarns(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 3}\nstack: deepspeed\n"
	for _, c := range []struct {
		stage string
		warn  bool
	}{{"0", true}, {"2", false}} {
		s, err := Load("s.yaml", []byte(base), []string{"parallelism.zero_stage=" + c.stage, "communication.overlap=true"})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(s.Warnings, "\n"), "DeepSpeed's stage 0 all-reduces the gradients after the backward")
		if got != c.warn {
			t.Errorf("stage %s: warning %v, want %v (%q)", c.stage, got, c.warn, s.Warnings)
		}
	}
}
