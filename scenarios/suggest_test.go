package scenarios

import (
	"strings"
	"testing"
)

// TestUnknownValueSuggests: a preset or enum value that differs from an
// allowed one only in case or separators, or is the start of at most
// three, is answered "did you mean …?" as a misspelled key is; before,
// every row below listed all the allowed names (31 model presets). A
// value near nothing still gets the list, and spelling is not guessed at
// (A200 is not H200).
func TestUnknownValueSuggests(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 8, zero_stage: 1}\n"
	for _, c := range []struct{ set, want string }{
		{"cluster.gpu=h100-80gb", `gpu "h100-80gb" is unknown (did you mean H100-80GB?)`},
		{"cluster.gpu=H100", `gpu "H100" is unknown (did you mean H100-80GB?)`},
		{"cluster.gpu=a100", `gpu "a100" is unknown (did you mean A100-40GB or A100-80GB?)`},
		{"model.preset=llama-2-7b", `preset "llama-2-7b" is unknown (did you mean llama2-7b?)`},
		{"model.preset=Llama2-7B", `preset "Llama2-7B" is unknown (did you mean llama2-7b?)`},
		{"model.preset=llama2", `preset "llama2" is unknown (did you mean llama2-7b, llama2-13b or llama2-70b?)`},
		{"cluster.inter.preset=ndr", `preset "ndr" is unknown (did you mean NDR?)`},
		{"cluster.nics=per-gpu", `nics "per-gpu" is unknown (did you mean per_gpu?)`},
		{"training.optimizer=AdamW", `optimizer "AdamW" is unknown (did you mean adamw?)`},
		{"training.recompute=Full", `recompute "Full" is unknown (did you mean full?)`},
		{"offload.optimizer=CPU", `optimizer "CPU" is unknown (did you mean cpu?)`},
		// Unicode's dashes and spaces are separators (qauser s28 L13:
		// a hyphen pasted from a document got the whole list).
		{"cluster.gpu=H100\u201080GB", `is unknown (did you mean H100-80GB?)`},
		{"cluster.gpu=H100\u201380GB", `is unknown (did you mean H100-80GB?)`},
		{"cluster.gpu=A100\u221280G", `is unknown (did you mean A100-80GB?)`},
		{"cluster.gpu=H100\u00a080GB", `is unknown (did you mean H100-80GB?)`},
		{"model.preset=llama2\u20117b", `is unknown (did you mean llama2-7b?)`},
		// Unchanged: no near miss.
		{"cluster.gpu=A200", `gpu "A200" is unknown (use V100-16GB, `},
		{"model.preset=llama3-8b", `preset "llama3-8b" is unknown (use gpt3-125m, `},
		{"cluster.nics=per_rack", `nics "per_rack" is unknown (use per_gpu or per_node)`},
	} {
		_, err := Load("s.yaml", []byte(base), []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: %v, want %q", c.set, err, c.want)
		}
	}
}

// TestNearExample: a missing file named like an embedded example is
// answered with the example's name; before, "(check the path, or name an
// embedded example: zerosim scenarios)" for all.
func TestNearExample(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"defualt", "(did you mean the embedded example default? otherwise check the path)"},
		{"Default", "(did you mean the embedded example default?"},
		{"seed002-tny", "(did you mean the embedded example seed002-tiny?"},
		{"seed002-tiny.yml", "(did you mean the embedded example seed002-tiny?"},
		{"seed002", "(did you mean the embedded example seed002-7b or seed002-tiny?"},
		{"gpt3-175b", "(did you mean the embedded example gpt3-175b-16k?"},
		// A path, or near nothing: the list.
		{"testdata/defualt", "(check the path, or name an embedded example: zerosim scenarios)"},
		{"nofile.yaml", "(check the path, or name an embedded example: zerosim scenarios)"},
	} {
		_, err := ReadInput(c.arg, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadInput(%q): %v, want %q", c.arg, err, c.want)
		}
	}
}

// TestSetSeveralValues: a --set value that is a comma list the key's type
// refuses says that --set takes one value and names compare --vary and
// sweep --grid, which take several; before, only "k: \"2,4\" is not an
// integer (use a whole number)". A value that is a comma list of the key's
// type (a string) or a YAML list is unchanged.
func TestSetSeveralValues(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"parallelism.k=2,4", `s.yaml: --set parallelism.k=2,4: k: "2,4" is not an integer (use a whole number; --set takes one value: for several, zerosim compare FILE --vary parallelism.k=2,4 or zerosim sweep FILE --grid parallelism.k=2,4)`},
		{"communication.overlap=true,false", `overlap: "true,false" is not a boolean (use true or false; --set takes one value: for several, zerosim compare FILE --vary communication.overlap=true,false`},
		{"parallelism.k=[2,4]", `s.yaml: --set parallelism.k=[2,4]: k: a list is not an integer (use a whole number)`},
	} {
		_, err := Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 8, zero_stage: 1}\n"), []string{c.set})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) && !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: %v, want %q", c.set, err, c.want)
		}
	}
	if _, err := Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 8, zero_stage: 1}\n"), []string{"name=a,b"}); err != nil {
		t.Errorf("--set name=a,b: %v", err)
	}
	if got := NearExample("defualt"); got != "default" {
		t.Errorf(`NearExample("defualt") = %q, want "default" (zerosim scenarios show)`, got)
	}
}

// TestCalibrationAsScenario: a calibration file given where a scenario
// goes is named as one, with where it belongs; before, `unknown key
// "compute" at the top level (allowed: …)` or `unknown key "method" in
// memory`. A scenario with a stray top-level key is unchanged.
func TestCalibrationAsScenario(t *testing.T) {
	const want = "c.yaml: a calibration file (zerosim calibrate writes it), not a scenario: name it in a scenario as communication.calibration: c.yaml"
	for _, c := range []struct{ in, want string }{
		{"version: 1\ncompute:\n  compute_efficiency: 0.5\n  method: step-time\n  measured_ms: 100\n", want},
		{"version: 1\nmemory:\n  allocator_overhead: 0.4\n  method: reserved\n  measured_bytes: 82400000000\n", want},
		{"version: 1\nhardware:\n  nodes: 2\nparams:\n  alpha_us: 5\n", want},
		{"version: 1\ncompute: 1\ncluster: {nodes: 1}\n", `c.yaml:2:1: unknown key "compute" at the top level`},
	} {
		_, err := Load("c.yaml", []byte(c.in), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
		if err := CheckSyntax("c.yaml", []byte(c.in)); c.want == want && (err == nil || err.Error() != want) {
			t.Errorf("CheckSyntax(%q) = %v, want %q (sweep checks it once)", c.in, err, want)
		}
	}
}

// TestForeignConfigAsScenario: another tool's config given where a
// scenario goes names the import that reads it; before, hf.json said
// "rope_scaling has no value" (its first null), ds_config.json and
// Accelerate's YAML "version is missing", a torchtitan TOML "invalid YAML:
// did not find expected <document start>", a launch script "the document
// is a string, not a mapping".
func TestForeignConfigAsScenario(t *testing.T) {
	for _, c := range []struct{ file, in, want string }{
		{"config.json", `{"architectures": ["LlamaForCausalLM"], "rope_scaling": null}`, `config.json: a Hugging Face config.json, not a scenario (it has "architectures"): run zerosim import hf config.json`},
		{"ds.json", `{"train_batch_size": 8, "zero_optimization": {"stage": 3}}`, `ds.json: a DeepSpeed config, not a scenario (it has "zero_optimization"): run zerosim import deepspeed ds.json`},
		{"acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n", `acc.yaml: an Accelerate config, not a scenario (it has "distributed_type"): run zerosim import accelerate acc.yaml`},
		{"mpt.yaml", "max_seq_len: 2048\nglobal_train_batch_size: 256\n", `mpt.yaml: an llm-foundry training YAML, not a scenario (it has "global_train_batch_size"): run zerosim import llm-foundry mpt.yaml`},
		{"llama3_8b.toml", "[job]\ndump_folder = \"./outputs\"\n\n[model]\nname = \"llama3\"\n", "llama3_8b.toml: a torchtitan job config, not a scenario (it has a [model] or [job] table): run zerosim import torchtitan llama3_8b.toml"},
		{"train.sh", "#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 32\n", "train.sh: a Megatron-LM launch script, not a scenario (it runs pretrain_gpt.py or passes --num-layers): run zerosim import megatron train.sh"},
		// A scenario with a version is a scenario, whatever else it has.
		{"s.yaml", "version: 1\narchitectures: [x]\n", `s.yaml:2:1: unknown key "architectures" at the top level`},
	} {
		_, err := Load(c.file, []byte(c.in), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}

// TestCheckSetType: only errors of the value's type, which no other key
// can change, are reported; range, enum and consistency errors are not.
func TestCheckSetType(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"parallelism.k=x", `k: "x" is not an integer (use a whole number)`},
		// A bare bucket size reads as megabytes (QA28 L3), a bare GPU
		// memory as gigabytes, and a bare number above 2^20 as bytes.
		{"communication.bucket_size=25", "bucket_size: 25 what? use 25MB or 25MiB (a bucket size needs a unit; 25B for bytes)"},
		// A bucket size is a positive whole number of bytes: no -5MB, no 1.5B.
		{"communication.bucket_size=-5", "bucket_size: -5 is negative: a bucket size is a positive size with a unit, such as 25MB or 25MiB"},
		{"communication.bucket_size=1.5", "bucket_size: 1.5 what? use 1.5MB or 1.5MiB (a bucket size needs a unit)"},
		{"communication.bucket_size=3e8", "bucket_size: 3e8 what? use 3e8B (286.10 MiB) (a size needs a unit)"},
		{"cluster.gpu_memory=80", "gpu_memory: 80 what? use 80GiB or 80GB (a size needs a unit; 80B for bytes)"},
		{"communication.overlap=maybe", `overlap: "maybe" is not a boolean (use true or false)`},
		{"parallelism.kk=2", `--set parallelism.kk=2: key path "parallelism.kk": unknown key "kk" in parallelism (did you mean "k"?)`},
		{"parallelism.k=3", ""},
		{"parallelism.zero_stage=7", ""},
		{"cluster.gpu=H100", ""},
		{"training.micro_batch=0", ""},
	} {
		err := CheckSetType(c.set)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("CheckSetType(%q) = %q, want %q", c.set, got, c.want)
		}
	}
}

// TestKeyInWrongSection: a key of the format written in the wrong section
// names the section it belongs under; before, the nearest key of the
// section it was in ("nodes" at the top level: did you mean "model"?) or
// that section's whole list (zero_stage under training: 30 keys).
func TestKeyInWrongSection(t *testing.T) {
	base := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 8, zero_stage: 1}\n"
	for _, c := range []struct{ in, want string }{
		{"version: 1\nnodes: 2\n", `s.yaml:2:1: unknown key "nodes" at the top level (it belongs under cluster)`},
		{base + "training:\n  zero_stage: 2\n", `s.yaml:6:3: unknown key "zero_stage" in training (it belongs under parallelism)`},
		{base + "communication:\n  dp: 8\n", `s.yaml:6:3: unknown key "dp" in communication (it belongs under parallelism)`},
		// A misspelling keeps its suggestion; a key in many sections keeps the list.
		{base + "training:\n  microbatch: 2\n", `s.yaml:6:3: unknown key "microbatch" in training (did you mean "micro_batch"?)`},
		{"version: 1\ncluster:\n  preset: NDR\n", `s.yaml:3:3: unknown key "preset" in cluster (allowed: nodes, `},
	} {
		_, err := Load("s.yaml", []byte(c.in), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	if err := CheckKeyPath("training.k"); err == nil || !strings.Contains(err.Error(), `unknown key "k" in training (it belongs under parallelism)`) {
		t.Errorf("CheckKeyPath(training.k) = %v", err)
	}
}
