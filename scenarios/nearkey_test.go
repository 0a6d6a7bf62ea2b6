package scenarios

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestConfigKeyNearMiss: a misspelled key in an Accelerate config or a
// torchtitan job config is named with the key meant. A required key that
// is missing because it is misspelled is an error at the misspelling
// (before: "c.yaml:1:1: no num_processes …"); a misspelled optional key,
// which the import leaves out and which changes the step (an
// fsdp_backward_prefech left out models no prefetch), says "did you mean"
// in its note (before: only "is not a key zerosim reads: left out").
func TestConfigKeyNearMiss(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"distributed_type: FSDP\nnum_proceses: 8\n", `c.yaml:2:1: "num_proceses" is not an Accelerate config key (did you mean num_processes? accelerate launch refuses unknown keys)`},
		{"distributed_typ: FSDP\nnum_processes: 8\n", `c.yaml:1:1: "distributed_typ" is not an Accelerate config key (did you mean distributed_type?`},
		// Nothing near: as before.
		{"distributed_type: FSDP\n", "c.yaml:1:1: no num_processes"},
	} {
		_, err := ImportAccelerate("c.yaml", []byte(c.in), AccelerateOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	acc, err := ImportAccelerate("c.yaml", []byte("distributed_type: FSDP\nnum_processes: 8\nmixed_precison: bf16\nfsdp_config:\n  fsdp_backward_prefech: BACKWARD_PRE\n"), AccelerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`fsdp_config: "fsdp_backward_prefech" is not a key zerosim reads: left out (did you mean fsdp_backward_prefetch?)`,
		`"mixed_precison" is not an Accelerate config key zerosim reads (accelerate launch refuses unknown keys): left out (did you mean mixed_precision?)`,
	} {
		if !slices.Contains(acc.Notes, want) {
			t.Errorf("accelerate notes %q lack %q", acc.Notes, want)
		}
	}
	data, err := os.ReadFile("testdata/torchtitan/llama3_8b-e7c0cae.toml")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := ImportTorchtitan("j.toml", []byte(strings.Replace(string(data), "local_batch_size = 1", "local_batch_sze = 1", 1)), TorchtitanCluster{})
	if err != nil {
		t.Fatal(err)
	}
	want := "training.local_batch_sze is not a torchtitan 238fa99 job config key; ignored (did you mean training.local_batch_size?)"
	if !slices.Contains(tt.Notes, want) {
		t.Errorf("torchtitan notes %q lack %q", tt.Notes, want)
	}
}

// TestLLMFoundryKeyNearMiss: llm-foundry's required keys misspelled are
// errors at the misspelling (before: "max_seq_len is missing", no
// position), and a misspelled MPTConfig key, which MPTConfig keeps as an
// attribute while the default is used (d_modle: a 1.7B model for 6.7B),
// is noted; before, nothing was said.
func TestLLMFoundryKeyNearMiss(t *testing.T) {
	data, err := os.ReadFile("testdata/llmfoundry/mpt-7b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, c := range []struct{ old, new, want string }{
		{"\nglobal_train_batch_size:", "\nglobal_train_batch_sz:", "mpt.yaml:81:1: global_train_batch_sz is not a TrainConfig key (did you mean global_train_batch_size? llm-foundry needs it to size the batch)"},
		{"\nmax_seq_len:", "\nmax_seq_length:", "mpt.yaml:10:1: max_seq_length is not a TrainConfig key (did you mean max_seq_len? TrainConfig requires it)"},
	} {
		if !strings.Contains(src, c.old) {
			t.Fatalf("mpt-7b.yaml has no %q", c.old)
		}
		_, err := ImportLLMFoundry("mpt.yaml", []byte(strings.Replace(src, c.old, c.new, 1)), LLMFoundryOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.new, err, c.want)
		}
	}
	lf, err := ImportLLMFoundry("mpt.yaml", []byte(strings.Replace(src, "  d_model:", "  d_modle:", 1)), LLMFoundryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "model.d_modle is not an MPTConfig key (did you mean d_model? MPTConfig keeps it as an attribute and uses d_model's default)"
	if !slices.Contains(lf.Notes, want) {
		t.Errorf("notes %q lack %q", lf.Notes, want)
	}
	// norm_eps, attention_bias and final_logit_softcapping are MPTConfig
	// arguments at LLMFoundryCommit too (configuration_mpt.py): their
	// misspellings are noted, the keys themselves are not.
	lf, err = ImportLLMFoundry("mpt.yaml", []byte(strings.Replace(src, "  d_model:",
		"  norm_epss: 1.0e-05\n  attention_bias: false\n  final_logit_softcapping: 30.0\n  d_model:", 1)), LLMFoundryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = "model.norm_epss is not an MPTConfig key (did you mean norm_eps? MPTConfig keeps it as an attribute and uses norm_eps's default)"
	if !slices.Contains(lf.Notes, want) {
		t.Errorf("notes %q lack %q", lf.Notes, want)
	}
	for _, n := range lf.Notes {
		if strings.Contains(n, "attention_bias") || strings.Contains(n, "final_logit_softcapping") {
			t.Errorf("note about an MPTConfig argument: %q", n)
		}
	}
}

// TestDeepSpeedKeyNearMiss: a misspelled batch key (DeepSpeed ignores
// unknown top-level keys) made the error about the key it should have
// been; the error now names the misspelling. A misspelled
// zero_optimization key (DeepSpeedZeroConfig refuses it) says which key
// was meant instead of "check the spelling or remove it".
func TestDeepSpeedKeyNearMiss(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"train_micro_batch_size_per_gpus": 2}`, "(train_micro_batch_size_per_gpus is not a DeepSpeed config key: did you mean train_micro_batch_size_per_gpu?)"},
		{`{"train_batch_size": 64, "gradient_accumulation_step": 4, "train_micro_batch_size_per_gpu": 2}`, "(gradient_accumulation_step is not a DeepSpeed config key: did you mean gradient_accumulation_steps?)"},
		{`{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2, "overlap_com": true}}`, "zero_optimization.overlap_com is not a key of DeepSpeedZeroConfig, which refuses unknown keys (zero/config.py at edaa7221): did you mean overlap_comm?"},
		{`{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2, "wibble": true}}`, "refuses unknown keys (zero/config.py at edaa7221): check the spelling or remove it"},
	} {
		_, err := ImportDeepSpeed("ds.json", []byte(c.in), DeepSpeedOptions{})
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to end %q", c.in, err, c.want)
		}
	}
}

// TestHFHubID: a Hub model id given to import hf, which reads no network,
// says how to get the file; before, "meta-llama/Llama-2-7b-hf: cannot read
// the file: no such file or directory (check the path)". A missing path
// to a .json is unchanged.
func TestHFHubID(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf: no such file or directory; if it is a Hugging Face Hub id, zerosim reads no network: download its config.json (huggingface-cli download meta-llama/Llama-2-7b-hf config.json) and give the file"},
		{"Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B: no such file or directory; if it is a Hugging Face Hub id"},
		{"nodir/config.json", "nodir/config.json: cannot read the file: no such file or directory (check the path)"},
	} {
		_, err := ReadHFConfig(c.path)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}
