package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// importKind guesses which import reads the file at path, from the keys
// each tool's config has and the others lack, for the error of `zerosim
// import FILE` without a command. It returns the command and the keys
// that decided it ("" when the file is not one zerosim imports, or cannot
// be read). It guesses, never imports: the message names the command to
// run.
func importKind(path string) (command, because string) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "", ""
	}
	data, err := readFileBounded(path, 4<<20)
	if err != nil {
		return "", ""
	}
	var obj map[string]any
	// A leading byte-order mark is DeepSpeed's to skip (ImportDeepSpeed)
	// or config.json's to refuse (ImportHF): either way the keys decide.
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &obj) == nil {
		for _, k := range []string{"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size", "gradient_accumulation_steps"} {
			if _, ok := obj[k]; ok {
				return "deepspeed", fmt.Sprintf("it has DeepSpeed's %q", k)
			}
		}
		for _, k := range []string{"architectures", "model_type"} {
			if _, ok := obj[k]; ok {
				return "hf", fmt.Sprintf("it has a Hugging Face config's %q", k)
			}
		}
		return "", ""
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".toml" && bytes.Contains(data, []byte("[model]")) {
		return "torchtitan", "it is a TOML job config with a [model] table"
	}
	if (ext == ".sh" || ext == "" || ext == ".txt") && (bytes.Contains(data, []byte("pretrain_gpt.py")) || bytes.Contains(data, []byte("--num-layers"))) {
		return "megatron", "it runs pretrain_gpt.py or passes --num-layers"
	}
	if ext != ".yaml" && ext != ".yml" {
		return "", ""
	}
	var y map[string]any
	if yaml.Unmarshal(data, &y) == nil {
		for _, k := range []string{"distributed_type", "compute_environment"} {
			if _, ok := y[k]; ok {
				return "accelerate", fmt.Sprintf("it has Accelerate's %q", k)
			}
		}
		for _, k := range []string{"device_train_microbatch_size", "global_train_batch_size", "fsdp_config"} {
			if _, ok := y[k]; ok {
				return "llm-foundry", fmt.Sprintf("it has llm-foundry's %q", k)
			}
		}
	}
	return "", ""
}

// importWhat names what each import command reads, for otherImporter.
var importWhat = map[string]string{
	"hf": "a Hugging Face config.json", "deepspeed": "a DeepSpeed config", "torchtitan": "a torchtitan job config",
	"accelerate": "an Accelerate config", "llm-foundry": "an llm-foundry train YAML", "megatron": "a Megatron-LM launch script or arguments",
}

// otherImporter is the input error for `zerosim import sub path` failing
// with err: when importKind says another import reads the file, the
// importer's own fix ("architectures is missing", "train_micro_batch_size_per_gpu
// is missing") would send the user to edit a file that is not wrong, so the
// error names the import to run instead (QA2 finding 10).
func otherImporter(sub, path string, err error) error {
	kind, why := importKind(path)
	if kind == "" || kind == sub {
		return inputError{err}
	}
	return inputError{fmt.Errorf("%s: not %s: %s, so run: zerosim import %s %s", path, importWhat[sub], why, kind, path)}
}
