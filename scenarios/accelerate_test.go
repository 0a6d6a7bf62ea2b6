package scenarios

import (
	"os"
	"strings"
	"testing"
)

const accDir = "testdata/accelerate/"

// accFile reads a config of testdata/accelerate (README.md there cites
// each file's commit).
func accFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(accDir + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportAccelerate: real Accelerate configs and small ones reaching
// each rule import to the scenario keys the YAML says, read as Accelerate
// 16cb6eb8 and its launcher read them: FULL_SHARD is ZeRO-3 (HYBRID_SHARD
// with k = the machines), SHARD_GRAD_OP and FSDP2's
// reshard_after_forward false stage 2, NO_SHARD and MULTI_GPU stage 0;
// num_processes is the total over num_machines; BACKWARD_PRE is backward
// depth 1, anything else 0; mixed precision keeps fp32 shards.
func TestImportAccelerate(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		o    AccelerateOptions
		want map[string]string // scenario key → value; "" must be unset
		note string            // a substring of some note, or ""
	}{
		{"accelerate fsdp.yaml", accFile(t, "accelerate-fsdp.yaml"), AccelerateOptions{}, map[string]string{
			"cluster.nodes": "1", "cluster.gpus_per_node": "2", "parallelism.dp": "2", "parallelism.zero_stage": "3", "parallelism.k": "",
			"communication.boundary": "fsdp1", "communication.prefetch_depth": "1", "communication.backward_prefetch_depth": "1",
			"communication.max_inflight_allgathers": "2", "training.param_dtype": "bf16", "training.shard_dtype": "fp32",
			"training.reduce_dtype": "param_dtype", "training.flat_param_views": "true", "training.recompute": "none",
			"training.micro_batch": "8", "training.grad_accum": "1", "training.optimizer_impl": "fused", "training.grad_clip": "norm",
			"training.grad_sync": "last"}, ""},
		{"alignment-handbook fsdp.yaml", accFile(t, "alignment-handbook-fsdp.yaml"), AccelerateOptions{MicroBatch: 4, GradAccum: 2, Recompute: RecomputeFull}, map[string]string{
			"cluster.nodes": "1", "cluster.gpus_per_node": "8", "parallelism.dp": "8", "parallelism.zero_stage": "3",
			"communication.boundary": "fsdp1", "communication.backward_prefetch_depth": "1", "training.shard_dtype": "fp32",
			"training.micro_batch": "4", "training.grad_accum": "2", "training.recompute": "full", "training.recompute_early_stop": ""}, "use_reentrant"},
		{"trl fsdp2.yaml", accFile(t, "trl-fsdp2.yaml"), AccelerateOptions{}, map[string]string{
			"cluster.gpus_per_node": "8", "parallelism.dp": "8", "parallelism.zero_stage": "3", "communication.boundary": "fsdp2",
			"communication.backward_prefetch_depth": "", "communication.max_inflight_allgathers": "", "training.param_dtype": "bf16",
			"training.shard_dtype": "fp32", "training.flat_param_views": "", "training.recompute": "none"}, "final norm and lm_head"},
		{"HYBRID_SHARD by number over 2 machines, BACKWARD_POST, checkpointing", []byte(
			"distributed_type: FSDP\nmixed_precision: fp16\nnum_machines: 2\nnum_processes: 16\nfsdp_config:\n  fsdp_sharding_strategy: 4\n" +
				"  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_backward_prefetch: BACKWARD_POST\n  fsdp_activation_checkpointing: yes\n"), AccelerateOptions{},
			map[string]string{"cluster.nodes": "2", "cluster.gpus_per_node": "8", "parallelism.dp": "16", "parallelism.zero_stage": "3", "parallelism.k": "2",
				"communication.backward_prefetch_depth": "0", "training.param_dtype": "fp16", "training.recompute": "full", "training.recompute_early_stop": "true", "training.hf_use_cache": ""}, "training.hf_use_cache: forward"},
		{"HYBRID_SHARD_ZERO2", []byte("distributed_type: FSDP\nnum_machines: 4\nnum_processes: 32\nfsdp_config:\n  fsdp_sharding_strategy: hybrid_shard_zero2\n"), AccelerateOptions{},
			map[string]string{"parallelism.zero_stage": "2", "parallelism.k": "4", "training.param_dtype": "fp32", "training.shard_dtype": "", "communication.boundary": "fsdp1", "training.grad_sync": "last"}, "NO_WRAP"},
		{"SHARD_GRAD_OP", []byte("distributed_type: FSDP\nnum_processes: 8\nmixed_precision: bf16\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"), AccelerateOptions{},
			map[string]string{"parallelism.zero_stage": "2", "training.shard_dtype": "", "training.reduce_dtype": "param_dtype", "training.flat_param_views": "true", "communication.boundary": "fsdp1"}, "SHARD_GRAD_OP keeps only the parameter shard"},
		{"NO_SHARD", []byte("distributed_type: FSDP\nnum_processes: 4\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n"), AccelerateOptions{},
			map[string]string{"parallelism.zero_stage": "0", "parallelism.dp": "4", "communication.boundary": "fsdp1"}, ""},
		{"FSDP1 strategy written as fsdp_reshard_after_forward: the launcher's FULL_SHARD wins", []byte(
			"distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 1\n  fsdp_reshard_after_forward: SHARD_GRAD_OP\n"), AccelerateOptions{},
			map[string]string{"parallelism.zero_stage": "3", "communication.backward_prefetch_depth": "0"}, "exports FSDP_SHARDING_STRATEGY=FULL_SHARD"},
		{"unprefixed keys, FSDP2 reshard false, HSDP replicas", []byte(
			"distributed_type: FSDP\nmixed_precision: bf16\nnum_machines: 4\nnum_processes: 32\nfsdp_config:\n  version: 2\n  reshard_after_forward: false\n" +
				"parallelism_config:\n  parallelism_config_dp_replicate_size: 2\n  parallelism_config_dp_shard_size: 16\n"), AccelerateOptions{},
			map[string]string{"parallelism.zero_stage": "2", "parallelism.k": "2", "parallelism.dp": "32", "communication.boundary": "fsdp2", "training.flat_param_views": "", "training.grad_sync": "last"}, "modelled as ZeRO stage 2"},
		{"FSDP2 context parallel", []byte(
			"distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\nparallelism_config:\n  parallelism_config_cp_size: 2\n"), AccelerateOptions{},
			map[string]string{"parallelism.dp": "4", "parallelism.cp": "2", "parallelism.zero_stage": "3"}, ""},
		{"MULTI_GPU is DDP", []byte("distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 8\nmixed_precision: bf16\n"), AccelerateOptions{},
			map[string]string{"cluster.gpus_per_node": "4", "parallelism.dp": "8", "parallelism.zero_stage": "0", "communication.bucket_size": "25MiB",
				"training.param_dtype": "fp32", "training.autocast": "bf16", "training.shard_dtype": "", "training.reduce_dtype": "", "communication.boundary": ""}, ""},
		{"MULTI_GPU without mixed precision", []byte("distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: 'no'\n"), AccelerateOptions{},
			map[string]string{"parallelism.zero_stage": "0", "training.param_dtype": "fp32", "training.autocast": ""}, ""},
	} {
		a, err := ImportAccelerate("c.yaml", c.data, c.o)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for k, v := range c.want {
			if got := a.Setting(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got, v)
			}
		}
		if c.note != "" && !strings.Contains(strings.Join(a.Notes, "\n"), c.note) {
			t.Errorf("%s: no note mentions %q: %q", c.name, c.note, a.Notes)
		}
	}
}

// TestImportAccelerateErrors: every refusal is one line at the key's
// line:column with the fix.
func TestImportAccelerateErrors(t *testing.T) {
	fsdp := "distributed_type: FSDP\nnum_processes: 8\n"
	for _, c := range []struct {
		data string
		o    AccelerateOptions
		want string
	}{
		{"num_processes: 8\n", AccelerateOptions{}, "c.yaml:1:1: no distributed_type"},
		{"distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n", AccelerateOptions{}, `c.yaml:1:19: distributed_type DEEPSPEED: DeepSpeed's settings are in its ds_config.json; run zerosim import deepspeed "ds.json"`},
		{"distributed_type: NO\n", AccelerateOptions{}, "c.yaml:1:19: distributed_type NO trains on one device"},
		{"distributed_type: XLA\nnum_processes: 8\n", AccelerateOptions{}, `c.yaml:1:19: distributed_type "XLA" is not read`},
		{"distributed_type: FSDP\n", AccelerateOptions{}, "c.yaml:1:1: no num_processes: the config leaves the count to accelerate launch --num_processes (ClusterConfig's -1, as a SLURM config does: commands/config/config_args.py:180 at 16cb6eb8); pass --gpus-per-node (and --nodes)"},
		{"distributed_type: FSDP\n", AccelerateOptions{Nodes: 2}, "c.yaml:1:1: no num_processes"},
		{"distributed_type: FSDP\nnum_processes: -1\n", AccelerateOptions{}, "c.yaml:2:16: num_processes -1 leaves the count to accelerate launch --num_processes"},
		{"distributed_type: FSDP\nnum_machines: 3\nnum_processes: 8\n", AccelerateOptions{}, "c.yaml:3:16: num_processes 8 does not divide over num_machines 3"},
		{"distributed_type: FSDP\nnum_processes: 8\n", AccelerateOptions{Nodes: 3}, "c.yaml: --nodes 3 does not divide num_processes 8 (line 2, the total number of processes over all machines): pass a --nodes that divides 8, or --gpus-per-node N to run N processes on each of the 3 machines"},
		{fsdp + "mixed_precision: int8\n", AccelerateOptions{}, `c.yaml:3:18: mixed_precision "int8" is not a mode`},
		{fsdp + "fsdp_config:\n  fsdp_offload_params: true\n", AccelerateOptions{}, "c.yaml:4:24: fsdp_offload_params true: FSDP's CPU offload"},
		{fsdp + "fsdp_config:\n  fsdp_sharding_strategy: ZERO3\n", AccelerateOptions{}, `c.yaml:4:27: fsdp_sharding_strategy "ZERO3" is not a sharding strategy`},
		{fsdp + "fsdp_config:\n  fsdp_version: 3\n", AccelerateOptions{}, "c.yaml:4:17: fsdp_version 3 is out of range (use 1 to 2)"},
		{fsdp + "fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: FULL_SHARD\n", AccelerateOptions{}, "c.yaml:5:31: fsdp_reshard_after_forward \"FULL_SHARD\": FSDP2 takes a boolean"},
		{fsdp + "fsdp_config:\n  fsdp_version: 2\n  fsdp_forward_prefetch: true\n", AccelerateOptions{}, "c.yaml:5:26: fsdp_forward_prefetch true: Accelerate raises"},
		{fsdp + "fsdp_config:\n  fsdp_backward_prefetch: EARLY\n", AccelerateOptions{}, `c.yaml:4:27: fsdp_backward_prefetch "EARLY" is not a prefetch`},
		{fsdp + "fsdp_config:\n  fsdp_auto_wrap_policy: LAYER\n", AccelerateOptions{}, `c.yaml:4:26: fsdp_auto_wrap_policy "LAYER" is not a policy`},
		{fsdp + "fsdp_config:\n  fsdp_activation_checkpointing: maybe\n", AccelerateOptions{}, `c.yaml:4:34: fsdp_activation_checkpointing "maybe" is not a boolean`},
		{fsdp + "fsdp_config:\n  fsdp_activation_checkpointing: true\n", AccelerateOptions{Recompute: RecomputeFull}, "c.yaml: fsdp_activation_checkpointing true and --recompute both checkpoint"},
		{fsdp + "fsdp_config: [1]\n", AccelerateOptions{}, "c.yaml:3:14: fsdp_config is a list, not a mapping"},
		{fsdp + "fsdp_config:\n  version: 2\n  fsdp_version: 2\n", AccelerateOptions{}, `c.yaml:4:3: "version" and fsdp_version are the same key to the launcher (keep one)`},
		{fsdp + "num_processes: 4\n", AccelerateOptions{}, `c.yaml:3:1: "num_processes" is given twice`},
		{fsdp + "parallelism_config:\n  parallelism_config_tp_size: 2\n", AccelerateOptions{}, "c.yaml:4:3: parallelism_config_tp_size 2: tensor parallelism is not modelled"},
		{fsdp + "parallelism_config:\n  parallelism_config_dp_replicate_size: 2\n", AccelerateOptions{}, "c.yaml:4:3: parallelism_config needs FSDP2"},
		{fsdp + "fsdp_config:\n  fsdp_version: 2\nparallelism_config:\n  parallelism_config_dp_replicate_size: 3\n", AccelerateOptions{}, "c.yaml:6:3: parallelism_config: dp_replicate_size 3 × cp_size 1 does not divide num_processes 8"},
		// QA29 #6: the fix names the value, 8 / (1 × 2) = 4.
		{fsdp + "fsdp_config:\n  fsdp_version: 2\nparallelism_config:\n  parallelism_config_dp_shard_size: 1\n  parallelism_config_cp_size: 2\n", AccelerateOptions{},
			"c.yaml:6:3: parallelism_config: dp_replicate_size 1 × dp_shard_size 1 × cp_size 2 is not num_processes 8 (Accelerate requires the product to be the world size): set parallelism_config_dp_shard_size: 4 (8 / (1 × 2))"},
		{fsdp + "use_cpu: true\n", AccelerateOptions{}, "c.yaml:3:10: use_cpu true trains on CPUs"},
		{"distributed_type: [FSDP\n", AccelerateOptions{}, "c.yaml:1:19: not valid YAML"},
		{"", AccelerateOptions{}, "c.yaml: the file is empty"},
		{"- FSDP\n", AccelerateOptions{}, "c.yaml:1:1: the file is a list, not a mapping"},
	} {
		_, err := ImportAccelerate("c.yaml", []byte(c.data), c.o)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%q: error %v, want one line starting %q", c.data, err, c.want)
		}
	}
}

// TestImportAccelerateInlineDeepSpeed: `accelerate config` without a JSON
// writes DeepSpeed's settings inline (QA2 finding 6). The import derives
// the ds_config Accelerate's DeepSpeedPlugin builds from them
// (dataclasses.py __post_init__ at 0059501736ae1d285b1602fcd9ae0d54c90e16fa:
// batch sizes "auto", gradient_accumulation_steps, zero_optimization.stage
// and the two offload devices, gradient_clipping when set;
// set_mixed_precision: bf16.enabled) and, since qauser29 #5, imports it in
// place as import deepspeed reads it (before: it printed the ds_config and
// refused, asking to save it and run import deepspeed), with a note giving
// it.
func TestImportAccelerateInlineDeepSpeed(t *testing.T) {
	cfg := "compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n  gradient_clipping: 1.0\n  offload_optimizer_device: cpu\n  offload_param_device: none\n  zero3_init_flag: true\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 2\nnum_processes: 16\n"
	ai, err := ImportAccelerate("acc.yaml", []byte(cfg), AccelerateOptions{MicroBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 4, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "none"}}, "gradient_clipping": 1.0, "bf16": {"enabled": true}}`
	if ai.DSConfig != want || ai.DeepSpeed == nil || ai.DeepSpeed.Stage != 3 || ai.DistributedType != "DEEPSPEED" {
		t.Fatalf("ds_config %s, want %s", ai.DSConfig, want)
	}
	if len(ai.Notes) == 0 || !strings.Contains(ai.Notes[0], "derives the ds_config "+want+" from it") {
		t.Errorf("notes %q: want the derived ds_config first", ai.Notes)
	}
	for k, v := range map[string]string{"cluster.nodes": "2", "cluster.gpus_per_node": "8", "parallelism.dp": "16", "parallelism.zero_stage": "3",
		"training.grad_accum": "4", "training.param_dtype": "bf16", "training.micro_batch": "2", "offload.optimizer": "cpu", "training.recompute": "none"} {
		if got := ai.Setting(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// The same ds_config through import deepspeed gives the same keys.
	ds, err := ImportDeepSpeed("ds_config.json", []byte(want), DeepSpeedOptions{DP: 16, MicroBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ds.Settings {
		if got := ai.Setting(s.Key); got != s.Value {
			t.Errorf("%s = %q, import deepspeed gives %q", s.Key, got, s.Value)
		}
	}
	// Without gradient_accumulation_steps the plugin's default, "auto",
	// stays, and the Trainer's defaults fill both batch keys.
	ai, err = ImportAccelerate("acc.yaml", []byte(strings.Replace(cfg, "  gradient_accumulation_steps: 4\n", "", 1)), AccelerateOptions{})
	if err != nil || !strings.Contains(ai.DSConfig, `"gradient_accumulation_steps": "auto"`) || ai.Setting("training.micro_batch") != "8" || ai.Setting("training.grad_accum") != "1" {
		t.Errorf("without gradient_accumulation_steps: %v %+v", err, ai)
	}
	// A value the ds_config contradicts: one line at deepspeed_config,
	// naming the flag.
	_, err = ImportAccelerate("acc.yaml", []byte(cfg), AccelerateOptions{GradAccum: 2})
	if err == nil || !strings.HasPrefix(err.Error(), "acc.yaml:2:1: deepspeed_config, read as the ds_config Accelerate's DeepSpeedPlugin derives from it (") ||
		!strings.HasSuffix(err.Error(), "): gradient_accumulation_steps=4 but --grad-accum is 2 (drop the flag or change the config)") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--grad-accum against the config: %v", err)
	}
}

// TestAccelerateLaunchCluster (QA8 F7): Accelerate's SLURM example config
// (testdata/accelerate/slurm-fsdp.yaml) has no num_processes: its launcher
// passes --num_processes $((SLURM_NNODES * GPUS_PER_NODE)) and
// --num_machines $SLURM_NNODES (examples/slurm/submit_multinode_fsdp.sh:29-30
// at 16cb6eb8), which Nodes and GPUsPerNode stand for; on a config that
// has them, they override num_machines and num_processes as accelerate
// launch's flags do, with a note.
func TestAccelerateLaunchCluster(t *testing.T) {
	data, err := os.ReadFile("testdata/accelerate/slurm-fsdp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ai, err := ImportAccelerate("slurm-fsdp.yaml", data, AccelerateOptions{Nodes: 2, GPUsPerNode: 8})
	if err != nil {
		t.Fatal(err)
	}
	if ai.Nodes != 2 || ai.GPUsPerNode != 8 || ai.Setting("parallelism.dp") != "16" || ai.Setting("parallelism.zero_stage") != "3" {
		t.Errorf("nodes %d, gpus per node %d, dp %s, stage %s", ai.Nodes, ai.GPUsPerNode, ai.Setting("parallelism.dp"), ai.Setting("parallelism.zero_stage"))
	}
	ai, err = ImportAccelerate("c.yaml", []byte("distributed_type: FSDP\nnum_machines: 2\nnum_processes: 16\n"), AccelerateOptions{Nodes: 4, GPUsPerNode: 4})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(ai.Notes, "\n")
	if ai.Nodes != 4 || ai.GPUsPerNode != 4 || !strings.Contains(notes, "--nodes 4 replaces num_machines 2") || strings.Contains(notes, "replaces num_processes") {
		t.Errorf("nodes %d, gpus per node %d, notes %q", ai.Nodes, ai.GPUsPerNode, ai.Notes)
	}
	ai, err = ImportAccelerate("c.yaml", []byte("distributed_type: FSDP\nnum_processes: 8\n"), AccelerateOptions{GPUsPerNode: 4})
	if err != nil || ai.GPUsPerNode != 4 || !strings.Contains(strings.Join(ai.Notes, "\n"), "--gpus-per-node 4 replaces num_processes 8") {
		t.Errorf("%v: %+v", err, ai)
	}
}

// TestAccelerateSageMaker (review rev23 LOW-4): a SageMaker config is
// refused for what it is (an instance type, not processes) at its
// compute_environment, not for SageMakerConfig's own keys as unknown.
func TestAccelerateSageMaker(t *testing.T) {
	data := []byte("compute_environment: AMAZON_SAGEMAKER\ndistributed_type: FSDP\nec2_instance_type: ml.p4d.24xlarge\nnum_machines: 1\n")
	_, err := ImportAccelerate("sm.yaml", data, AccelerateOptions{})
	if err == nil || !strings.Contains(err.Error(), "sm.yaml:1:22: compute_environment AMAZON_SAGEMAKER: a SageMaker config names an instance type") {
		t.Errorf("%v", err)
	}
}
