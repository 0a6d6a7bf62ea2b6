package scenarios

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigKeyNearMiss: a key an Accelerate config or a torchtitan job
// config may not have is an error at the key, as accelerate launch and
// torchtitan (from eadca48; an older one ignored it, and a file its keys
// date so is warned: TestImportTorchtitanUnknownKeyEra) refuse it, named
// with the key meant when one is within two edits. Before, a misspelled optional key was only noted and left out: a
// mixed_precison: bf16 imported fp32 (the step 7.825 s -> 15.509 s, 70B
// on 8 GPUs) and a local_batch_sise = 2 the default 8 (qa17 M3).
func TestConfigKeyNearMiss(t *testing.T) {
	const accWhy = " accelerate launch refuses unknown keys: commands/config/config_args.py:154-159 at 16cb6eb8)"
	for _, c := range []struct{ in, want string }{
		{"distributed_type: FSDP\nnum_proceses: 8\n", `c.yaml:2:1: "num_proceses" is not an Accelerate config key (did you mean num_processes?` + accWhy},
		{"distributed_typ: FSDP\nnum_processes: 8\n", `c.yaml:1:1: "distributed_typ" is not an Accelerate config key (did you mean distributed_type?` + accWhy},
		{"distributed_type: FSDP\nnum_processes: 8\nmixed_precison: bf16\n", `c.yaml:3:1: "mixed_precison" is not an Accelerate config key (did you mean mixed_precision?` + accWhy},
		// The first in the file's order, nothing near it.
		{"distributed_type: FSDP\nwibble: 1\nnum_processes: 8\nmixed_precison: bf16\n", `c.yaml:2:1: "wibble" is not an Accelerate config key (remove it or fix its spelling;` + accWhy},
		// Nothing misspelled: as before.
		{"distributed_type: FSDP\n", "c.yaml:1:1: no num_processes"},
	} {
		_, err := ImportAccelerate("c.yaml", []byte(c.in), AccelerateOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	// A nested fsdp_config key is not checked by accelerate launch: still
	// a note.
	acc, err := ImportAccelerate("c.yaml", []byte("distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_backward_prefech: BACKWARD_PRE\n"), AccelerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `fsdp_config: "fsdp_backward_prefech" is not a key zerosim reads: left out (did you mean fsdp_backward_prefetch?)`; !slices.Contains(acc.Notes, want) {
		t.Errorf("accelerate notes %q lack %q", acc.Notes, want)
	}

	// 238fa99's file, which no key dates before eadca48: refused, as
	// torchtitan from eadca48 refuses it.
	const ttWhy = ` torchtitan refuses unknown keys: ValueError "Invalid field names", torchtitan/config/manager.py:160-171 at 238fa99, since eadca48 (2025-08-28); before it torchtitan dropped them unread, _dict_to_dataclass in torchtitan/config_manager.py lines 740-753 at e7c0cae, but no key of the file dates it so)`
	for _, c := range []struct{ old, new, want string }{
		{"local_batch_size = 1", "local_batch_sze = 1", "j.toml:32:1: training.local_batch_sze is not a torchtitan job config key (did you mean training.local_batch_size?" + ttWhy},
		{"local_batch_size = 1", "wibble = 1", "j.toml:32:1: training.wibble is not a torchtitan job config key (remove it or fix its spelling;" + ttWhy},
		{"[training]", "[trainng]", "j.toml:31:1: trainng is not a torchtitan job config table (did you mean training?" + ttWhy},
		{"[training]", "[training.dataloadr]", "j.toml:31:1: training.dataloadr is not a torchtitan job config table (did you mean training.dataloader?" + ttWhy},
		{"[metrics]", "[metrics]\nlog_freqq = 1", "j.toml:13:1: metrics.log_freqq is not a torchtitan job config key (did you mean metrics.log_freq?" + ttWhy},
		// A key given a table's keys, in any era.
		{"[training]", "[training.gc_freq]\nx = 1\n[training]", "j.toml:31:1: training.gc_freq is a torchtitan job config key, not a table (give it a value: gc_freq = ...)"},
	} {
		_, err := ImportTorchtitan("j.toml", ttFile(t, "llama3_8b.toml", c.old, c.new), TorchtitanCluster{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.new, err, c.want)
		}
	}
	data, err := os.ReadFile("testdata/torchtitan/llama3_8b-e7c0cae.toml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	// A key of an older torchtitan that zerosim does not read, a known
	// key of a table that changes nothing of a step, and a key a
	// job.custom_config_module may add are notes, not errors.
	for _, c := range []struct{ old, new, want string }{
		{"[training]", "[quantize.dense.float8]\nrecipe_name = \"rowwise\"\n[training]", "quantize.dense.float8.recipe_name is a job config key of an older torchtitan, not of 238fa99, that zerosim does not read: ignored"},
		{"[training]", "[training.dataloader]\nnum_workers = 4\n[training]", ""},
		{"[profiling]", "custom_config_module = \"my.ext\"\n[my_ext]\nx = 1\n[profiling]", "my_ext.x is not a key of torchtitan's JobConfig; job.custom_config_module my.ext may add it: ignored"},
	} {
		tt, err := ImportTorchtitan("j.toml", []byte(strings.Replace(src, c.old, c.new, 1)), TorchtitanCluster{})
		if err != nil {
			t.Errorf("%s: %v", c.new, err)
			continue
		}
		if c.want != "" && !slices.Contains(tt.Notes, c.want) {
			t.Errorf("%s: notes %q lack %q", c.new, tt.Notes, c.want)
		}
	}
}

// TestAccelerateTopKeys: the top-level keys zerosim takes from an
// Accelerate config are exactly those accelerate launch accepts:
// BaseConfig's and ClusterConfig's fields (commands/config/config_args.py
// lines 76-81 and 179-215 at 16cb6eb8) and the two older keys
// process_config converts (fp16, dynamo_backend, lines 113-119).
func TestAccelerateTopKeys(t *testing.T) {
	want := strings.Fields(`command_file commands compute_environment debug deepspeed_config distributed_type downcast_bf16
		dynamo_config enable_cpu_affinity fp8_config fsdp_config gpu_ids machine_rank main_process_ip main_process_port
		main_training_function megatron_lm_config mixed_precision mpirun_config num_machines num_processes parallelism_config
		rdzv_backend same_network tpu_env tpu_name tpu_use_cluster tpu_use_sudo tpu_vm tpu_zone use_cpu fp16 dynamo_backend`)
	slices.Sort(want)
	got := slices.Sorted(slices.Values(accTopKeys()))
	if !slices.Equal(got, want) {
		t.Errorf("accTopKeys %q, want %q", got, want)
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
		// Within readKeys' reach (edit distance 2 or less), a required
		// key's misspelling is still its reader's error, which says the key
		// is required, not readKeys' "refuses it".
		{"\nmax_seq_len:", "\nmax_seq_lenn:", "mpt.yaml:10:1: max_seq_lenn is not a TrainConfig key (did you mean max_seq_len? TrainConfig requires it)"},
		// device_train_grad_accum is a TrainConfig field (config_utils.py at
		// 8c8dd48, "calculated automatically"): its misspelling is refused
		// with it as the suggestion.
		{"\ndevice_train_microbatch_size: 8", "\ndevice_train_microbatch_size: 8\ndevice_train_grad_acum: 2", "mpt.yaml:87:1: device_train_grad_acum is not a TrainConfig key (did you mean device_train_grad_accum? llm-foundry 8c8dd48 refuses it: \"Unused parameters ... found in cfg\")"},
		// llm-foundry 8c8dd48 refuses any top-level key TrainConfig does not
		// have (config_utils.py 350-359); before, the missing key read as
		// "auto" with no position and --micro-batch then hid the typo.
		{"\ndevice_train_microbatch_size: 8", "\ndevice_train_micro_batch_size: 8", "mpt.yaml:86:1: device_train_micro_batch_size is not a TrainConfig key (did you mean device_train_microbatch_size? llm-foundry 8c8dd48 refuses it: \"Unused parameters ... found in cfg\")"},
		// Composer v0.32.1's FSDPConfig keeps an unknown key as an attribute
		// (parallelism.py 47-53): the run goes without checkpointing; before,
		// the import said so silently (11.96 -> 58.23 GiB on A100-40GB).
		{"  activation_checkpointing: true", "  activation_checkpointng: true", "mpt.yaml:94:3: fsdp_config.activation_checkpointng is not an FSDPConfig field (did you mean activation_checkpointing? Composer v0.32.1 keeps an unknown key as an attribute and runs with activation_checkpointing's default)"},
		{"  sharding_strategy: FULL_SHARD", "  sharding_stratgy: SHARD_GRAD_OP", "mpt.yaml:92:3: fsdp_config.sharding_stratgy is not an FSDPConfig field (did you mean sharding_strategy? Composer v0.32.1 keeps an unknown key as an attribute and runs with sharding_strategy's default)"},
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
	// An fsdp_config key no FSDPConfig field is near is noted, not refused.
	lf, err = ImportLLMFoundry("mpt.yaml", []byte(strings.Replace(src, "  sharding_strategy: FULL_SHARD", "  sharding_strategy: FULL_SHARD\n  my_flag: 1", 1)), LLMFoundryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = "fsdp_config.my_flag is not an FSDPConfig field: Composer v0.32.1 keeps it as an attribute and ignores it"
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

// TestLLMFoundryKeysRead: every fsdp_config key and top-level key the
// importer reads is a field of Composer's FSDPConfig or llm-foundry's
// TrainConfig as lfFSDPKeys and lfTrainKeys list them, so readKeys never
// refuses a key the importer itself reads.
func TestLLMFoundryKeysRead(t *testing.T) {
	src, err := os.ReadFile("llmfoundry.go")
	if err != nil {
		t.Fatal(err)
	}
	reads := regexp.MustCompile(`d\.(?:has|str|int|bool)\("([a-z_]+)(?:\.([a-z_]+))?`).FindAllStringSubmatch(string(src), -1)
	if len(reads) < 20 {
		t.Fatalf("%d reads found: the pattern no longer matches the importer", len(reads))
	}
	for _, m := range reads {
		if !slices.Contains(lfTrainKeys, m[1]) {
			t.Errorf("the importer reads %s, not in lfTrainKeys", m[1])
		}
		if m[1] == "fsdp_config" && m[2] != "" && !slices.Contains(lfFSDPKeys, m[2]) {
			t.Errorf("the importer reads fsdp_config.%s, not in lfFSDPKeys", m[2])
		}
	}
}
