package scenarios

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file imports a Hugging Face Accelerate config (the YAML that
// `accelerate config` writes and `accelerate launch --config_file` reads)
// into the scenario keys it determines (zerosim import accelerate). Keys,
// spellings and defaults follow huggingface/accelerate at
// 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83 (AccelerateCommit):
//   - src/accelerate/commands/config/config_args.py (ClusterConfig: the
//     top-level keys; num_processes counts the processes of every machine),
//     commands/config/cluster.py (what `accelerate config` writes: FSDP1's
//     strategy as fsdp_reshard_after_forward, FSDP2's as a bool,
//     parallelism_config_* keys);
//   - src/accelerate/commands/launch.py (the launcher's defaults, which
//     stand in for every key the file leaves out: --fsdp_version 1,
//     --fsdp_sharding_strategy FULL_SHARD, --fsdp_reshard_after_forward
//     true, --fsdp_backward_prefetch None, --fsdp_forward_prefetch false,
//     --fsdp_activation_checkpointing false; _validate_launch_command copies
//     fsdp_config.x to --fsdp_x) and utils/launch.py (the FSDP_* environment
//     it exports);
//   - src/accelerate/utils/dataclasses.py (FullyShardedDataParallelPlugin
//     __post_init__: how each FSDP_* value is read and spelled;
//     set_mixed_precision: param_dtype = reduce_dtype = the mixed-precision
//     dtype; limit_all_gathers True);
//   - src/accelerate/accelerator.py (prepare_model: FSDP1's wrapping, the
//     fp32 upcast of the flat parameter under mixed precision,
//     checkpoint_wrapper NO_REENTRANT) and utils/fsdp_utils.py
//     (fsdp2_prepare_model: fully_shard per block, the fp32 upcast,
//     fsdp2_apply_ac).
// The training keys the config does not hold follow the Hugging Face
// Trainer's defaults in transformers' src/transformers/training_args.py at
// 00349ae87eddc872ffa21a8a54f264375a0056a8 (TrainerCommit).

// AccelerateCommit is the Accelerate commit the import follows.
const AccelerateCommit = "16cb6eb80dd9aa8b4df1a63ef57863e455d53b83"

// TrainerCommit is the transformers commit whose TrainingArguments defaults
// stand in for the training keys an Accelerate config does not hold.
const TrainerCommit = "00349ae87eddc872ffa21a8a54f264375a0056a8"

const accCommit, trCommit = "16cb6eb8", "00349ae8"

// MaxAccelerateBytes bounds the config read (`accelerate config` writes
// well under 1 KiB).
const MaxAccelerateBytes = 1 << 20

// AccelerateOptions are the per-run training keys a Trainer's arguments
// give and the config does not hold: zero values mean not given.
type AccelerateOptions struct {
	// MicroBatch is --per_device_train_batch_size; GradAccum is
	// --gradient_accumulation_steps.
	MicroBatch, GradAccum int64
	// Recompute stands for the Trainer's --gradient_checkpointing.
	Recompute Recompute
	// Liger is the Trainer's --use_liger_kernel (TrainingArguments.
	// use_liger_kernel: Trainer.__init__ calls Liger's
	// _apply_liger_kernel_to_instance(model=model), the model type's
	// default patch): training.liger.
	Liger bool
	// Nodes and GPUsPerNode are accelerate launch's --num_machines and
	// --num_processes / --num_machines, which take precedence over the
	// config's num_machines and num_processes (commands/launch.py at
	// 16cb6eb8: the config fills only what the command line leaves
	// unset). A config meant for SLURM leaves num_processes out
	// (ClusterConfig.num_processes = -1, "For instance if we use SLURM and
	// the user manually passes it in", commands/config/config_args.py:180)
	// and its launcher passes --num_processes $((SLURM_NNODES *
	// GPUS_PER_NODE)) (examples/slurm/submit_multinode_fsdp.sh:29).
	Nodes, GPUsPerNode int64
	// Hidden and Units are the model's (--hf) for distributed_type
	// DEEPSPEED: the DeepSpeed import sizes the Trainer's "auto" bucket
	// sizes and the prefetch depth from them (DeepSpeedOptions).
	Hidden int64
	Units  []Layer
}

// AccelerateImport is an imported Accelerate config.
type AccelerateImport struct {
	// DistributedType is distributed_type (FSDP or MULTI_GPU).
	DistributedType string
	// FSDPVersion is fsdp_config.fsdp_version (1 or 2), 0 without FSDP.
	FSDPVersion int64
	// Nodes and GPUsPerNode are num_machines and num_processes/num_machines.
	Nodes, GPUsPerNode int64
	// Settings are the scenario keys in scenario order (cluster,
	// parallelism, communication, training).
	Settings ImportSettings
	// Notes name what the import approximates or leaves out, one line each.
	Notes []string
	// DSConfig is, for distributed_type DEEPSPEED with deepspeed_config
	// inline, the ds_config Accelerate's DeepSpeedPlugin derives from it
	// (one line of JSON), which the import read as import deepspeed does;
	// DeepSpeed is that import (its settings are in Settings).
	DSConfig  string
	DeepSpeed *DeepSpeedImport
}

// Setting returns the value of the scenario key, "" when unset.
func (a *AccelerateImport) Setting(key string) string { return a.Settings.Get(key) }

// ReadAccelerateConfig reads and imports the Accelerate config at path.
func ReadAccelerateConfig(path string, o AccelerateOptions) (*AccelerateImport, error) {
	data, err := readConfigFile(path, "the path of an Accelerate config YAML", MaxAccelerateBytes)
	if err != nil {
		return nil, err
	}
	return ImportAccelerate(path, data, o)
}

// accReader holds one import.
type accReader struct {
	file string
	root *yaml.Node // the top-level mapping, where a missing key is reported
	o    AccelerateOptions
	out  *AccelerateImport
}

// accField is a key of a mapping with its key and value nodes.
type accField struct {
	key, val *yaml.Node
}

func (r *accReader) errAt(n *yaml.Node, format string, a ...any) error {
	msg := oneLine(fmt.Sprintf(format, a...))
	if n == nil || n.Line == 0 {
		return fmt.Errorf("%s: %s", r.file, msg)
	}
	return fmt.Errorf("%s:%d:%d: %s", r.file, n.Line, n.Column, msg)
}

func (r *accReader) set(key, value, from string) {
	r.out.Settings = append(r.out.Settings, ImportSetting{Key: key, Value: value, From: oneLine(from)})
}

func (r *accReader) note(format string, a ...any) {
	r.out.Notes = append(r.out.Notes, oneLine(fmt.Sprintf(format, a...)))
}

// mapping reads a YAML mapping into its fields by key, refusing duplicate
// keys (yaml.safe_load keeps the last silently; which one Accelerate sees
// is then unclear to the reader).
func (r *accReader) mapping(n *yaml.Node, what string) (map[string]accField, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, r.errAt(n, "%s is %s, not a mapping (write key: value lines as `accelerate config` does)", what, accDescribe(n))
	}
	m := map[string]accField{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, r.errAt(k, "%s has a key that is %s, not a name (use names such as fsdp_version)", what, accDescribe(k))
		}
		if _, dup := m[k.Value]; dup {
			return nil, r.errAt(k, "%s is given twice (keep one)", strconv.Quote(clip(k.Value)))
		}
		m[k.Value] = accField{k, v}
	}
	return m, nil
}

// accDescribe names a node's kind for errors.
func accDescribe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "empty"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return "null"
	case n.Kind == yaml.ScalarNode:
		return strconv.Quote(clip(n.Value))
	}
	return "not a value"
}

// scalar returns a scalar's text, or an error naming the key.
func (r *accReader) scalar(f accField, eg string) (string, error) {
	if f.val.Kind != yaml.ScalarNode || f.val.Tag == "!!null" {
		return "", r.errAt(f.val, "%s is %s, not a value (use %s)", f.key.Value, accDescribe(f.val), eg)
	}
	return f.val.Value, nil
}

// boolean reads a bool as Accelerate does: the launcher exports
// str(value).lower() and the plugin reads it with str_to_bool
// (utils/environment.py at accCommit: y, yes, t, true, on, 1 and n, no,
// f, false, off, 0).
func (r *accReader) boolean(f accField) (bool, error) {
	s, err := r.scalar(f, "true or false")
	if err != nil {
		return false, err
	}
	switch strings.ToLower(s) {
	case "y", "yes", "t", "true", "on", "1":
		return true, nil
	case "n", "no", "f", "false", "off", "0":
		return false, nil
	}
	return false, r.errAt(f.val, "%s %s is not a boolean (use true or false)", f.key.Value, strconv.Quote(clip(s)))
}

// integer reads a whole number in [lo, hi].
func (r *accReader) integer(f accField, lo, hi int64) (int64, error) {
	s, err := r.scalar(f, fmt.Sprintf("a whole number such as %d", max(lo, 1)))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, r.errAt(f.val, "%s %s is not a whole number (use %d to %d)", f.key.Value, strconv.Quote(clip(s)), lo, hi)
	}
	if n < lo || n > hi {
		return 0, r.errAt(f.val, "%s %d is out of range (use %d to %d)", f.key.Value, n, lo, hi)
	}
	return n, nil
}

// Top-level keys that change neither time nor memory: where the processes
// rendezvous, logging, TPU and SageMaker settings.
var accIgnored = map[string]bool{
	"compute_environment": true, "machine_rank": true, "gpu_ids": true, "main_process_ip": true, "main_process_port": true,
	"rdzv_backend": true, "same_network": true, "main_training_function": true, "enable_cpu_affinity": true, "debug": true,
	"downcast_bf16": true, "tpu_name": true, "tpu_zone": true, "tpu_use_cluster": true, "tpu_use_sudo": true,
	"command_file": true, "commands": true, "tpu_vm": true, "tpu_env": true, "mpirun_config": true,
	"deepspeed_config": true, "megatron_lm_config": true, "fp16": true, "dynamo_backend": true,
}

// accTopKeys are the top-level keys an Accelerate config may have that
// zerosim knows: the ones it reads and the ones it ignores.
func accTopKeys() []string {
	return append([]string{"distributed_type", "num_machines", "num_processes", "mixed_precision", "use_cpu", "fsdp_config", "parallelism_config",
		"dynamo_config", "fp8_config"}, sortedKeys(accIgnored)...)
}

// accFSDPKeys are the fsdp_config keys zerosim knows.
func accFSDPKeys() []string {
	return append([]string{"fsdp_version", "fsdp_sharding_strategy", "fsdp_reshard_after_forward", "fsdp_backward_prefetch", "fsdp_forward_prefetch",
		"fsdp_auto_wrap_policy", "fsdp_offload_params", "fsdp_ignored_modules", "fsdp_activation_checkpointing"}, sortedKeys(accFSDPIgnored)...)
}

// unknownTop is the error for the first top-level key, in the file's
// order, that Accelerate's ClusterConfig does not have: accelerate launch
// refuses it ("The config file at … had unknown keys", from_yaml_file and
// from_json_file in commands/config/config_args.py lines 134-139 and
// 154-159 at accCommit, after process_config lines 103-129 has turned the
// old fp16 and dynamo_backend keys into mixed_precision and
// dynamo_config). Before, the key was only noted and left out, so a typo
// (mixed_precison: bf16) imported fp32 and doubled the step's time.
func (r *accReader) unknownTop(top map[string]accField) error {
	known := accTopKeys()
	var bad []accField
	for k, f := range top {
		if !slices.Contains(known, k) {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.SortFunc(bad, func(a, b accField) int {
		if a.key.Line != b.key.Line {
			return a.key.Line - b.key.Line
		}
		return a.key.Column - b.key.Column
	})
	k := bad[0].key.Value
	fix := unknownKeyFix(k, known)
	return r.errAt(bad[0].key, "%s is not an Accelerate config key (%s accelerate launch refuses unknown keys: commands/config/config_args.py:154-159 at %s)", strconv.Quote(clip(k)), fix, accCommit)
}

// fsdp_config keys that change neither time nor memory of a training step:
// checkpoint format, initialisation and loading.
var accFSDPIgnored = map[string]bool{
	"fsdp_state_dict_type": true, "fsdp_sync_module_states": true, "fsdp_cpu_ram_efficient_loading": true,
	"fsdp_use_orig_params": true, "fsdp_transformer_layer_cls_to_wrap": true, "fsdp_min_num_params": true,
}

// ImportAccelerate imports the bytes of an Accelerate config; file names
// it in errors. Every error is one line, file:line:column where a key is
// at fault, with the fix.
func ImportAccelerate(file string, data []byte, o AccelerateOptions) (*AccelerateImport, error) {
	if len(data) > MaxAccelerateBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for an Accelerate config (check the path)", file, MaxAccelerateBytes)
	}
	if o.MicroBatch < 0 || o.MicroBatch > MaxMicroBatch || o.GradAccum < 0 || o.GradAccum > MaxGradAccum {
		return nil, fmt.Errorf("%s: micro-batch %d or grad-accum %d out of range", file, o.MicroBatch, o.GradAccum)
	}
	r := &accReader{file: file, o: o, out: &AccelerateImport{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntax(file, data, err, "give the config file `accelerate config` writes")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s: the file is empty (give the config file `accelerate config` writes)", file)
	}
	r.root = doc.Content[0]
	top, err := r.mapping(r.root, "the file")
	if err != nil {
		return nil, err
	}
	if err := r.read(top); err != nil {
		return nil, err
	}
	return r.out, nil
}

// read imports the top-level mapping.
func (r *accReader) read(top map[string]accField) error {
	// A SageMaker config has keys of its own (SageMakerConfig's
	// ec2_instance_type, …): say what it is before calling them unknown
	// (review rev23 LOW-4).
	if ce, ok := top["compute_environment"]; ok && ce.val.Value == "AMAZON_SAGEMAKER" {
		return r.errAt(ce.val, "compute_environment AMAZON_SAGEMAKER: a SageMaker config names an instance type, not the processes; write a LOCAL_MACHINE config with num_machines and num_processes")
	}
	if err := r.unknownTop(top); err != nil {
		return err
	}
	dt, ok := top["distributed_type"]
	if !ok {
		return r.errAt(r.root, "no distributed_type (Accelerate requires it: config_args.py process_config at %s; use distributed_type: FSDP)", accCommit)
	}
	kind, err := r.scalar(dt, "FSDP")
	if err != nil {
		return err
	}
	if uc, ok := top["use_cpu"]; ok {
		if on, err := r.boolean(uc); err != nil {
			return err
		} else if on {
			return r.errAt(uc.val, "use_cpu true trains on CPUs, which zerosim does not model (set it false)")
		}
	}
	switch kind {
	case "FSDP", "MULTI_GPU":
	case "DEEPSPEED":
		// The inline settings are imported after the cluster, whose
		// world size DeepSpeed's batch rule needs.
		if err := r.deepspeedFile(top, dt); err != nil {
			return err
		}
	case "NO":
		return r.errAt(dt.val, "distributed_type NO trains on one device without data parallelism: nothing to import (zerosim simulates data-parallel training)")
	default:
		return r.errAt(dt.val, "distributed_type %s is not read (zerosim imports FSDP and MULTI_GPU, DDP, on NVIDIA GPUs)", strconv.Quote(clip(kind)))
	}
	r.out.DistributedType = kind

	// The cluster: num_processes is the total over the machines
	// (commands/launch.py: "The total number of processes to be launched
	// in parallel"; multi_node.yaml: "the *total* number of processes").
	machines := int64(1)
	mfrom := "num_machines absent: 1 (ClusterConfig's default)"
	if f, ok := top["num_machines"]; ok {
		if machines, err = r.integer(f, 1, 65536); err != nil {
			return err
		}
		mfrom = fmt.Sprintf("num_machines %d", machines)
	}
	if r.o.Nodes > 0 {
		if _, ok := top["num_machines"]; ok && machines != r.o.Nodes {
			r.note("--nodes %d replaces num_machines %d (accelerate launch --num_machines overrides the config)", r.o.Nodes, machines)
		}
		machines, mfrom = r.o.Nodes, fmt.Sprintf("--nodes %d (accelerate launch --num_machines)", r.o.Nodes)
	}
	np, ok := top["num_processes"]
	var procs int64
	pfrom := ""
	switch {
	case r.o.GPUsPerNode > 0:
		procs = machines * r.o.GPUsPerNode
		if ok {
			if cfg, err := r.integer(np, -1, 1<<26); err == nil && cfg > 0 && cfg != procs {
				r.note("--gpus-per-node %d replaces num_processes %d: accelerate launch --num_processes %d overrides the config", r.o.GPUsPerNode, cfg, procs)
			}
		}
		pfrom = fmt.Sprintf("--gpus-per-node %d (accelerate launch --num_processes %d = %d machines × %d)", r.o.GPUsPerNode, procs, machines, r.o.GPUsPerNode)
	case !ok:
		return r.errAt(r.root, "no num_processes: the config leaves the count to accelerate launch --num_processes (ClusterConfig's -1, as a SLURM config does: commands/config/config_args.py:180 at %s); pass --gpus-per-node (and --nodes), or add num_processes, the total number of GPUs over all machines", accCommit)
	default:
		if procs, err = r.integer(np, -1, 1<<26); err != nil {
			return err
		}
		if procs < 1 {
			return r.errAt(np.val, "num_processes %d leaves the count to accelerate launch --num_processes (commands/launch.py at %s): pass --gpus-per-node (and --nodes), or set it to the total number of GPUs over all machines", procs, accCommit)
		}
	}
	if procs%machines != 0 && r.o.Nodes > 0 {
		// procs is the file's (--gpus-per-node makes it a multiple):
		// the flag is what does not fit.
		return r.errAt(nil, "--nodes %d does not divide num_processes %d (line %d, the total number of processes over all machines): pass a --nodes that divides %d, or --gpus-per-node N to run N processes on each of the %d machines", machines, procs, np.val.Line, procs, machines)
	}
	if procs%machines != 0 {
		return r.errAt(np.val, "num_processes %d does not divide over num_machines %d (num_processes is the total over the machines: use a multiple of %d)", procs, machines, machines)
	}
	gpn := procs / machines
	if gpn > 1024 {
		return r.errAt(np.val, "num_processes %d over num_machines %d is %d GPUs per machine, more than zerosim models (at most 1024)", procs, machines, gpn)
	}
	r.out.Nodes, r.out.GPUsPerNode = machines, gpn
	r.set("cluster.nodes", strconv.FormatInt(machines, 10), mfrom)
	if pfrom == "" {
		pfrom = fmt.Sprintf("num_processes %d / num_machines %d (num_processes counts the processes of every machine: commands/launch.py at %s)", procs, machines, accCommit)
	}
	r.set("cluster.gpus_per_node", strconv.FormatInt(gpn, 10), pfrom)
	if kind == "DEEPSPEED" {
		if err := r.deepspeedPlugin(top, procs); err != nil {
			return err
		}
		return r.rest(top, kind)
	}

	dtype, dfrom, err := r.precision(top)
	if err != nil {
		return err
	}
	if kind == "MULTI_GPU" {
		r.set("parallelism.dp", strconv.FormatInt(procs, 10), fmt.Sprintf("num_processes %d: one DDP replica per process", procs))
		r.set("parallelism.zero_stage", "0", "distributed_type MULTI_GPU: PyTorch DDP, every rank holds the whole model and all-reduces the gradients")
		r.set("communication.bucket_size", "25MiB", "DDP's bucket_cap_mb 25 (Accelerate's DistributedDataParallelKwargs default: utils/dataclasses.py at "+accCommit+")")
		// Under DDP the mixed precision is torch.autocast: prepare_model
		// wraps the model's forward in it (model.forward =
		// convert_outputs_to_fp32(autocast_context(model_forward_func)),
		// src/accelerate/accelerator.py at huggingface/accelerate
		// 00093722ddcbe5d28a9798710c9c7bc2cfe592cc) and leaves the
		// parameters fp32: training.autocast over param_dtype fp32.
		pd, pfrom := dtype, dfrom
		if dtype != FP32 {
			pd, pfrom = FP32, dfrom+": the model stays fp32 under DDP"
		}
		if err := r.training(pd, pfrom, 0, false, false); err != nil {
			return err
		}
		if dtype != FP32 {
			r.set("training.autocast", string(dtype), dfrom+": Accelerator.prepare_model runs the forward under torch.autocast("+string(dtype)+") (accelerator.py at 00093722)")
		}
	} else if err := r.fsdp(top, procs, machines, dtype, dfrom); err != nil {
		return err
	}
	return r.rest(top, kind)
}

// deepspeedFile refuses distributed_type DEEPSPEED without inline
// settings: zerosim imports DeepSpeed's own config, which
// deepspeed_config_file names.
func (r *accReader) deepspeedFile(top map[string]accField, dt accField) error {
	dc, ok := top["deepspeed_config"]
	if !ok || dc.val.Kind != yaml.MappingNode {
		return r.errAt(dt.val, "distributed_type DEEPSPEED: DeepSpeed's settings are in its ds_config.json; run zerosim import deepspeed DS_CONFIG.json")
	}
	for i := 0; i+1 < len(dc.val.Content); i += 2 {
		if v := dc.val.Content[i+1]; v.Kind == yaml.ScalarNode && dc.val.Content[i].Value == "deepspeed_config_file" {
			return r.errAt(dt.val, "distributed_type DEEPSPEED: DeepSpeed's settings are in its ds_config.json; run zerosim import deepspeed %s", strconv.Quote(clip(v.Value)))
		}
	}
	return nil
}

// dsPrefix matches the position an ImportDeepSpeed error starts with.
var dsPrefix = regexp.MustCompile(`^(:\d+:\d+)?: `)

// deepspeedPlugin imports distributed_type DEEPSPEED with its settings
// inline, as `accelerate config` writes them without a JSON: Accelerate's
// DeepSpeedPlugin builds the ds_config from them
// (src/accelerate/utils/dataclasses.py DeepSpeedPlugin.__post_init__ and
// set_mixed_precision at 0059501736ae1d285b1602fcd9ae0d54c90e16fa):
// train_batch_size and train_micro_batch_size_per_gpu "auto" (the
// script's batch), gradient_accumulation_steps, zero_optimization's stage,
// offload_optimizer.device and offload_param.device (and
// stage3_gather_16bit_weights_on_model_save, a checkpoint setting zerosim
// does not read: left out), gradient_clipping when set, and bf16 or fp16
// enabled from mixed_precision. That ds_config goes through the DeepSpeed
// import with the world size num_processes (procs) and the Trainer's
// values for "auto": --per_device_train_batch_size (--micro-batch, default
// 8) and --gradient_accumulation_steps (--grad-accum, default 1), which
// the Trainer writes into the "auto" keys (HfTrainerDeepSpeedConfig
// trainer_config_process in transformers
// src/transformers/integrations/deepspeed.py at trCommit). A note gives
// the ds_config; an error of the DeepSpeed import is reported at
// deepspeed_config.
func (r *accReader) deepspeedPlugin(top map[string]accField, procs int64) error {
	dc := top["deepspeed_config"] // deepspeedFile checked it is a mapping
	inline := map[string]string{}
	for i := 0; i+1 < len(dc.val.Content); i += 2 {
		if v := dc.val.Content[i+1]; v.Kind == yaml.ScalarNode {
			inline[dc.val.Content[i].Value] = v.Value
		}
	}
	num := func(key, def string) string {
		if v, ok := inline[key]; ok {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				return v
			}
		}
		return def
	}
	dev := func(key string) string {
		if v := inline[key]; v == "cpu" || v == "nvme" {
			return v
		}
		return "none"
	}
	zero := fmt.Sprintf(`"stage": %s, "offload_optimizer": {"device": %q}, "offload_param": {"device": %q}`,
		num("zero_stage", "2"), dev("offload_optimizer_device"), dev("offload_param_device"))
	// An unset gradient_accumulation_steps stays "auto", DeepSpeedPlugin's
	// default (utils/dataclasses.py at 0059501736ae1d285b1602fcd9ae0d54c90e16fa), filled from the script.
	ga := num("gradient_accumulation_steps", `"auto"`)
	cfg := fmt.Sprintf(`{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": %s, "zero_optimization": {%s}`,
		ga, zero)
	if g := num("gradient_clipping", "0"); g != "0" && g != "0.0" {
		cfg += `, "gradient_clipping": ` + g
	}
	if mp, ok := top["mixed_precision"]; ok && (mp.val.Value == "bf16" || mp.val.Value == "fp16") {
		cfg += fmt.Sprintf(`, %q: {"enabled": true}`, mp.val.Value)
	}
	cfg += "}"
	o := DeepSpeedOptions{DP: procs, Hidden: r.o.Hidden, Units: r.o.Units, MicroBatch: r.o.MicroBatch, GradAccum: r.o.GradAccum}
	microDefault := o.MicroBatch == 0
	if microDefault {
		o.MicroBatch = 8
	}
	accumDefault := o.GradAccum == 0 && ga == `"auto"`
	if accumDefault {
		o.GradAccum = 1
	}
	const name = "\x00"
	ds, err := ImportDeepSpeed(name, []byte(cfg), o)
	if err != nil {
		msg := dsPrefix.ReplaceAllString(strings.TrimPrefix(err.Error(), name), "")
		return r.errAt(dc.key, "deepspeed_config, read as the ds_config Accelerate's DeepSpeedPlugin derives from it (%s): %s", cfg, msg)
	}
	r.out.DistributedType, r.out.DSConfig, r.out.DeepSpeed = "DEEPSPEED", cfg, ds
	r.note("distributed_type DEEPSPEED with deepspeed_config inline (line %d): Accelerate's DeepSpeedPlugin derives the ds_config %s from it (utils/dataclasses.py __post_init__ at 0059501); the keys below are what zerosim import deepspeed reads from it", dc.key.Line, cfg)
	r.out.Notes = append(r.out.Notes, ds.Notes...)
	r.set("parallelism.dp", strconv.FormatInt(procs, 10), fmt.Sprintf("num_processes %d: DeepSpeed's data-parallel world size", procs))
	for _, s := range ds.Settings {
		switch {
		case s.Key == "training.micro_batch" && microDefault:
			s.From = "the Trainer's --per_device_train_batch_size default 8 fills train_micro_batch_size_per_gpu \"auto\" (transformers integrations/deepspeed.py at " + trCommit + "); pass --micro-batch"
		case s.Key == "training.grad_accum" && accumDefault:
			s.From = "the Trainer's --gradient_accumulation_steps default 1 fills gradient_accumulation_steps \"auto\"; pass --grad-accum"
		}
		r.out.Settings = append(r.out.Settings, s)
	}
	if r.o.Recompute != "" {
		r.set("training.recompute", string(r.o.Recompute), "--recompute (the Trainer's --gradient_checkpointing; not in the Accelerate config)")
	} else {
		r.set("training.recompute", string(RecomputeNone), "the Trainer's --gradient_checkpointing is not in this file: pass --recompute full")
	}
	r.out.Settings = r.out.Settings.InOrder("cluster", "parallelism", "communication", "training", "offload")
	return nil
}

// precision reads mixed_precision: "no" (the launcher's default when the
// file has none: commands/launch.py _validate_launch_command), "fp16",
// "bf16" or "fp8" (FSDP's policy then takes bf16: set_mixed_precision's
// mapping in utils/dataclasses.py at accCommit).
func (r *accReader) precision(top map[string]accField) (DType, string, error) {
	f, ok := top["mixed_precision"]
	if !ok || f.val.Tag == "!!null" {
		return FP32, "mixed_precision absent: \"no\", the launcher's default (fp32 training)", nil
	}
	s, err := r.scalar(f, "no, fp16, bf16 or fp8")
	if err != nil {
		return "", "", err
	}
	switch strings.ToLower(s) {
	case "no":
		return FP32, "mixed_precision no: fp32 training", nil
	case "bf16":
		return BF16, "mixed_precision bf16", nil
	case "fp16":
		return FP16, "mixed_precision fp16", nil
	case "fp8":
		r.note("mixed_precision fp8 runs the GEMMs in fp8 through Transformer Engine or torchao (fp8_config): modelled as bf16; set training.fp8 (te or torchao) on a GPU with peak_fp8")
		return BF16, "mixed_precision fp8: FSDP's policy takes bf16 (set_mixed_precision in utils/dataclasses.py at " + accCommit + ")", nil
	}
	return "", "", r.errAt(f.val, "mixed_precision %s is not a mode Accelerate knows (use no, fp16, bf16 or fp8)", strconv.Quote(clip(s)))
}

// FSDP1's ShardingStrategy, in the order of FSDP_SHARDING_STRATEGY
// (utils/constants.py at accCommit): the value n is index+1.
var accStrategies = []string{"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"}

// strategy reads an FSDP1 sharding strategy as the plugin does: a name in
// any case, or its number 1–5.
func (r *accReader) strategy(f accField) (string, error) {
	s, err := r.scalar(f, "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2")
	if err != nil {
		return "", err
	}
	u := strings.ToUpper(strings.TrimSpace(s))
	for i, name := range accStrategies {
		if u == name || u == strconv.Itoa(i+1) {
			return name, nil
		}
	}
	return "", r.errAt(f.val, "%s %s is not a sharding strategy (use FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2, or 1 to 5)", f.key.Value, strconv.Quote(clip(s)))
}

// fsdp imports fsdp_config and parallelism_config.
func (r *accReader) fsdp(top map[string]accField, procs, machines int64, dtype DType, dfrom string) error {
	fc := map[string]accField{}
	if f, ok := top["fsdp_config"]; ok && f.val.Tag != "!!null" {
		raw, err := r.mapping(f.val, "fsdp_config")
		if err != nil {
			return err
		}
		// The launcher prefixes fsdp_ to keys without it
		// (commands/launch.py _validate_launch_command at accCommit).
		for _, k := range sortedKeys(raw) {
			v, name := raw[k], k
			if !strings.HasPrefix(k, "fsdp") {
				name = "fsdp_" + k
			}
			if _, dup := fc[name]; dup {
				return r.errAt(v.key, "%s and %s are the same key to the launcher (keep one)", strconv.Quote(clip(k)), name)
			}
			fc[name] = v
		}
	}
	version := int64(1)
	vfrom := "fsdp_version absent: 1, the launcher's default"
	if f, ok := fc["fsdp_version"]; ok {
		v, err := r.integer(f, 1, 2)
		if err != nil {
			return err
		}
		version, vfrom = v, fmt.Sprintf("fsdp_version %d", v)
	}
	r.out.FSDPVersion = version

	// HSDP and the other dimensions of Accelerate's ParallelismConfig.
	var pc map[string]accField
	if f, ok := top["parallelism_config"]; ok && f.val.Tag != "!!null" {
		var err error
		if pc, err = r.mapping(f.val, "parallelism_config"); err != nil {
			return err
		}
	}
	size := func(name string) (int64, *yaml.Node, error) {
		f, ok := pc["parallelism_config_"+name]
		if !ok {
			return 1, nil, nil
		}
		n, err := r.integer(f, 1, 1<<26)
		return n, f.key, err
	}
	tp, tk, err := size("tp_size")
	if err != nil {
		return err
	}
	if tp > 1 {
		return r.errAt(tk, "parallelism_config_tp_size %d: tensor parallelism is not modelled (zerosim simulates data parallelism; set it to 1)", tp)
	}
	replicate, rk, err := size("dp_replicate_size")
	if err != nil {
		return err
	}
	cp, ck, err := size("cp_size")
	if err != nil {
		return err
	}
	shard, sk, err := size("dp_shard_size")
	if err != nil {
		return err
	}
	if (replicate > 1 || cp > 1) && version == 1 {
		at := rk
		if cp > 1 {
			at = ck
		}
		return r.errAt(at, "parallelism_config needs FSDP2 (Accelerate refuses cp_size > 1 with fsdp_version 1: state.py at %s; for HSDP under FSDP1 use fsdp_sharding_strategy HYBRID_SHARD)", accCommit)
	}
	if procs%(replicate*cp) != 0 {
		return r.errAt(rk, "parallelism_config: dp_replicate_size %d × cp_size %d does not divide num_processes %d (use sizes whose product is %d)", replicate, cp, procs, procs)
	}
	if sk != nil && replicate*cp*shard != procs {
		return r.errAt(sk, "parallelism_config: dp_replicate_size %d × dp_shard_size %d × cp_size %d is not num_processes %d (Accelerate requires the product to be the world size): set parallelism_config_dp_shard_size: %d (%d / (%d × %d))", replicate, shard, cp, procs, procs/(replicate*cp), procs, replicate, cp)
	}
	if len(pc) > 0 {
		keys := sortedKeys(pc)
		for _, k := range keys {
			switch k {
			case "parallelism_config_dp_replicate_size", "parallelism_config_dp_shard_size", "parallelism_config_tp_size", "parallelism_config_cp_size", "parallelism_config_cp_backend":
			case "parallelism_config_cp_comm_strategy":
				if s := pc[k].val.Value; cp > 1 && s != "allgather" {
					r.note("parallelism_config_cp_comm_strategy %s: zerosim's context parallelism is ring attention passing K and V (allgather's traffic)", strconv.Quote(clip(s)))
				}
			default:
				r.note("parallelism_config: %s is not a key zerosim reads: left out", strconv.Quote(clip(k)))
			}
		}
	}
	dp := procs / cp
	r.set("parallelism.dp", strconv.FormatInt(dp, 10), fmt.Sprintf("num_processes %d / context-parallel %d", procs, cp))
	if cp > 1 {
		r.set("parallelism.cp", strconv.FormatInt(cp, 10), "parallelism_config_cp_size "+strconv.FormatInt(cp, 10))
	}

	// The sharding: FSDP1's strategy, FSDP2's reshard_after_forward.
	var stage, k int64
	var sfrom, kfrom string
	if version == 1 {
		name, from := "FULL_SHARD", "fsdp_sharding_strategy absent: FULL_SHARD, the launcher's --fsdp_sharding_strategy default"
		if f, ok := fc["fsdp_sharding_strategy"]; ok {
			if name, err = r.strategy(f); err != nil {
				return err
			}
			from = "fsdp_sharding_strategy " + name
		}
		if f, ok := fc["fsdp_reshard_after_forward"]; ok {
			s, err := r.strategy(f)
			if err != nil {
				r.note("fsdp_reshard_after_forward %s is not an FSDP1 strategy, and FSDP1 under accelerate launch shards by fsdp_sharding_strategy: left out", accDescribe(f.val))
			} else if _, both := fc["fsdp_sharding_strategy"]; !both && s != name {
				// accelerate launch always exports FSDP_SHARDING_STRATEGY
				// (utils/launch.py), which the FSDP1 plugin reads first.
				r.note("fsdp_reshard_after_forward %s (how `accelerate config` writes FSDP1's strategy): accelerate launch at %s exports FSDP_SHARDING_STRATEGY=FULL_SHARD, its --fsdp_sharding_strategy default, which the FSDP1 plugin reads first, so the run shards FULL_SHARD; add fsdp_sharding_strategy: %s to run %s", s, accCommit, s, s)
			}
		}
		switch name {
		case "FULL_SHARD":
			stage = 3
		case "SHARD_GRAD_OP":
			stage = 2
			r.note("SHARD_GRAD_OP keeps only the parameter shard between steps and each unit gathered from its forward to its post-backward: ZeRO stage 2 under communication.boundary fsdp1 models both (memory.FSDPStage2)")
		case "NO_SHARD":
			stage = 0
			// FSDP1 wraps the model all the same: no gradient buffer
			// (Scenario.FSDP1NoShard), each unit's flat_param.grad
			// all-reduced in place in its post-backward.
			r.set("communication.boundary", "fsdp1", from+": FSDP1's NO_SHARD, each unit's flat_param.grad all-reduced in place by its post-backward hook (torch/distributed/fsdp/_runtime_utils.py at 3ade90a6) and dropped by the Trainer's model.zero_grad() after the step (transformers trainer.py _inner_training_loop at 000945a9): no gradient buffer")
		case "HYBRID_SHARD":
			stage, k = 3, machines
		case "HYBRID_SHARD_ZERO2":
			stage, k = 2, machines
		}
		sfrom = from + ": ZeRO stage " + strconv.FormatInt(stage, 10)
		if k > 0 {
			kfrom = fmt.Sprintf("%s shards within a machine and replicates over the %d machines (FSDP1's intra-node process group of the machine's GPUs, torch/distributed/fsdp/_init_utils.py)", name, machines)
		}
	} else {
		reshard, from := true, "fsdp_reshard_after_forward absent: true, the launcher's default"
		if f, ok := fc["fsdp_reshard_after_forward"]; ok {
			if reshard, err = r.boolean(f); err != nil {
				return r.errAt(f.val, "fsdp_reshard_after_forward %s: FSDP2 takes a boolean (Accelerate raises for a strategy name with fsdp_version 2; use true for FULL_SHARD, false for SHARD_GRAD_OP)", accDescribe(f.val))
			}
			from = "fsdp_reshard_after_forward " + strconv.FormatBool(reshard)
		}
		if f, ok := fc["fsdp_sharding_strategy"]; ok {
			r.note("fsdp_sharding_strategy %s: FSDP2 ignores it (the plugin reads it for fsdp_version 1 only); fsdp_reshard_after_forward decides", accDescribe(f.val))
		}
		stage = 3
		if !reshard {
			stage = 2
			r.note("fsdp_reshard_after_forward false keeps every unit gathered from its forward to its backward; modelled as ZeRO stage 2 under an FSDP boundary (the parameter shard between steps, freed unit by unit in the backward; sharded gradients and optimizer state)")
		}
		sfrom = from + ": ZeRO stage " + strconv.FormatInt(stage, 10) + " (fully_shard in utils/fsdp_utils.py fsdp2_prepare_model at " + accCommit + ")"
		if replicate > 1 {
			k, kfrom = replicate, fmt.Sprintf("parallelism_config_dp_replicate_size %d: HSDP, %d replicas of the sharded state", replicate, replicate)
		}
	}
	r.set("parallelism.zero_stage", strconv.FormatInt(stage, 10), sfrom)
	if k > 1 {
		if (dp*cp)%k != 0 {
			return r.errAt(rk, "HSDP's %d replicas do not divide the %d GPUs (use a divisor)", k, dp*cp)
		}
		r.set("parallelism.k", strconv.FormatInt(k, 10), kfrom)
	} else if k == 1 {
		r.note("HYBRID_SHARD on one machine shards over its GPUs with no replica: the same as FULL_SHARD (SHARD_GRAD_OP for HYBRID_SHARD_ZERO2)")
	}

	// The wrapping: zerosim's unit is a transformer block.
	wrap, wf := "NO_WRAP", "fsdp_auto_wrap_policy absent"
	if f, ok := fc["fsdp_auto_wrap_policy"]; ok {
		s, err := r.scalar(f, "TRANSFORMER_BASED_WRAP")
		if err != nil {
			return err
		}
		wrap, wf = strings.ToUpper(s), "fsdp_auto_wrap_policy "+s
		switch wrap {
		case "TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP":
		default:
			return r.errAt(f.val, "fsdp_auto_wrap_policy %s is not a policy Accelerate knows (use TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP)", strconv.Quote(clip(s)))
		}
	}
	switch {
	case stage == 0:
	case wrap == "NO_WRAP":
		r.note("%s: NO_WRAP makes the whole model one FSDP unit, gathered whole in forward and in backward; zerosim gathers one transformer block at a time, so it underestimates the peak memory and the exposed all-gathers (use TRANSFORMER_BASED_WRAP)", wf)
	case wrap == "SIZE_BASED_WRAP":
		r.note("%s: units of at least fsdp_min_num_params parameters (1e8 unless set) are modelled as one unit per transformer block", wf)
	}

	if stage == 2 {
		// FSDP's ZeRO-2 all-gathers again in the forward after each
		// backward that reshards (zero's builder.regathers), and keeps
		// no_sync's gradients in its own dtype (memory's heldGradBytes):
		// both read the boundary.
		r.set("communication.boundary", map[int64]string{1: "fsdp1", 2: "fsdp2"}[version], vfrom+": PyTorch FSDP's ZeRO-2, which reshards after a backward that reduces and all-gathers again in the next forward")
	}
	if stage == 3 {
		if version == 1 {
			r.set("communication.boundary", "fsdp1", vfrom+": PyTorch FSDP (FullyShardedDataParallel in accelerator.py prepare_model at "+accCommit+") keeps the root unit gathered from forward to backward")
			bp, bfrom := int64(0), "fsdp_backward_prefetch absent: None, the launcher's default (no backward prefetch)"
			if f, ok := fc["fsdp_backward_prefetch"]; ok && f.val.Tag != "!!null" {
				s, err := r.scalar(f, "BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH")
				if err != nil {
					return err
				}
				switch strings.ToUpper(s) {
				case "BACKWARD_PRE", "1":
					bp, bfrom = 1, "fsdp_backward_prefetch BACKWARD_PRE: the next unit's all-gather is issued before the current unit's gradients are computed"
				case "BACKWARD_POST", "2":
					bfrom = "fsdp_backward_prefetch BACKWARD_POST: the next unit's all-gather starts when the current unit's backward ends"
				case "NO_PREFETCH":
					bfrom = "fsdp_backward_prefetch NO_PREFETCH (None to FSDP)"
				default:
					return r.errAt(f.val, "fsdp_backward_prefetch %s is not a prefetch Accelerate knows (use BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH)", strconv.Quote(clip(s)))
				}
			}
			if bp == 0 && !strings.Contains(bfrom, "BACKWARD_POST") {
				r.note("without backward prefetch FSDP1 issues a unit's all-gather when its backward begins, after the reduce-scatter of the unit before; modelled as BACKWARD_POST (backward_prefetch_depth 0)")
			}
			ffrom := "fsdp_forward_prefetch absent: false, the launcher's default (the CPU runs one unit ahead)"
			if f, ok := fc["fsdp_forward_prefetch"]; ok {
				on, err := r.boolean(f)
				if err != nil {
					return err
				}
				ffrom = "fsdp_forward_prefetch " + strconv.FormatBool(on)
				if on {
					ffrom += ": FSDP issues the next unit's all-gather before the current forward"
				} else {
					ffrom += ": the CPU runs one unit ahead"
				}
			}
			r.set("communication.prefetch_depth", "1", ffrom)
			r.set("communication.backward_prefetch_depth", strconv.FormatInt(bp, 10), bfrom)
			r.set("communication.max_inflight_allgathers", "2", "limit_all_gathers True, the plugin's default (utils/dataclasses.py at "+accCommit+"): two all-gathers in flight")
		} else {
			r.set("communication.boundary", "fsdp2", vfrom+": FSDP2's fully_shard, the root kept gathered (utils/fsdp_utils.py fsdp2_prepare_model at "+accCommit+")")
			r.note("Accelerate's FSDP2 (since 60b5c258, 2026-04-24) keeps the final norm and lm_head gathered from forward to backward and reshards the last block; zerosim's fsdp2 boundary keeps the root's units and the last block (one block's all-gather fewer in backward)")
			if f, ok := fc["fsdp_backward_prefetch"]; ok && f.val.Tag != "!!null" && !strings.EqualFold(f.val.Value, "NO_PREFETCH") {
				r.note("fsdp_backward_prefetch: FSDP2 ignores it (the plugin sets it to None for fsdp_version 2) and prefetches implicitly")
			}
			if f, ok := fc["fsdp_forward_prefetch"]; ok {
				if on, err := r.boolean(f); err != nil {
					return err
				} else if on {
					return r.errAt(f.val, "fsdp_forward_prefetch true: Accelerate raises for it with fsdp_version 2 (utils/dataclasses.py at %s; set it false)", accCommit)
				}
			}
		}
	}

	// Offload: FSDP's CPU offload moves parameters and gradients to the
	// host and steps the optimizer there, which zerosim does not model.
	if f, ok := fc["fsdp_offload_params"]; ok {
		on, err := r.boolean(f)
		if err != nil {
			return err
		}
		if on {
			return r.errAt(f.val, "fsdp_offload_params true: %s; set it false to import the run on the GPUs", FSDPOffloadNotModelled)
		}
	}
	if f, ok := fc["fsdp_ignored_modules"]; ok && f.val.Tag != "!!null" {
		r.note("fsdp_ignored_modules: modules FSDP leaves unsharded are modelled as sharded")
	}
	for _, k := range sortedKeys(fc) {
		switch k {
		case "fsdp_version", "fsdp_sharding_strategy", "fsdp_reshard_after_forward", "fsdp_backward_prefetch", "fsdp_forward_prefetch",
			"fsdp_auto_wrap_policy", "fsdp_offload_params", "fsdp_ignored_modules", "fsdp_activation_checkpointing":
		default:
			if !accFSDPIgnored[k] {
				r.note("fsdp_config: %s is not a key zerosim reads: left out%s", strconv.Quote(clip(k)), didYouMean(k, accFSDPKeys()))
			}
		}
	}

	ac := false
	if f, ok := fc["fsdp_activation_checkpointing"]; ok {
		if ac, err = r.boolean(f); err != nil {
			return err
		}
	}
	return r.training(dtype, dfrom, stage, version == 1, ac)
}

// training sets the training keys: the batch, the dtypes, checkpointing
// and the Trainer's optimizer.
func (r *accReader) training(dtype DType, dfrom string, stage int64, fsdp1, ac bool) error {
	if r.o.MicroBatch > 0 {
		r.set("training.micro_batch", strconv.FormatInt(r.o.MicroBatch, 10), "--micro-batch (the Trainer's --per_device_train_batch_size)")
	} else {
		r.set("training.micro_batch", "8", "the Trainer's --per_device_train_batch_size default 8 (transformers training_args.py at "+trCommit+"); pass --micro-batch")
	}
	if r.o.GradAccum > 0 {
		r.set("training.grad_accum", strconv.FormatInt(r.o.GradAccum, 10), "--grad-accum (the Trainer's --gradient_accumulation_steps)")
	} else {
		r.set("training.grad_accum", "1", "the Trainer's --gradient_accumulation_steps default 1; pass --grad-accum")
	}
	// The Trainer wraps every micro-batch but the last in
	// accelerator.no_sync unless DeepSpeed or sync_each_batch
	// (_inner_training_loop in src/transformers/trainer.py at
	// huggingface/transformers 00349ae8; sync_each_batch is
	// --accelerator_config's gradient_accumulation_kwargs), and
	// Accelerator.no_sync enters DDP's or FSDP1's no_sync or FSDP2's
	// set_requires_gradient_sync(False), and for DeepSpeed below stage 2
	// the engine's no_sync (src/accelerate/accelerator.py no_sync at
	// huggingface/accelerate 16cb6eb8). Under FSDP at stages 2 and 3 that
	// is one reduce-scatter per step with whole unsharded gradients kept
	// in between (scenarios.Scenario.HoldsUnshardedGrads); DeepSpeed at
	// stages 2 and 3 gets a nullcontext and reduces every micro-step, the
	// default there.
	switch {
	case r.out.DistributedType != "DEEPSPEED" && stage <= 1:
		r.set("training.grad_sync", "last", "the Trainer runs every micro-batch but the last under accelerator.no_sync (transformers trainer.py _inner_training_loop at "+trCommit+"); set every for --accelerator_config gradient_accumulation_kwargs sync_each_batch")
	case r.out.DistributedType == "FSDP":
		r.set("training.grad_sync", "last", "the Trainer runs every micro-batch but the last under accelerator.no_sync, FSDP1's no_sync or FSDP2's set_requires_gradient_sync(False) (transformers trainer.py _inner_training_loop at "+trCommit+", accelerator.py no_sync at "+accCommit+"): one reduce-scatter per step, whole unsharded gradients kept in between; set every for --accelerator_config gradient_accumulation_kwargs sync_each_batch")
	}
	r.set("training.param_dtype", string(dtype), dfrom)
	if dtype != FP32 && r.out.DistributedType == "FSDP" {
		if stage == 3 {
			r.set("training.shard_dtype", "fp32", "under mixed precision Accelerate upcasts the sharded parameters to fp32, the optimizer's own (accelerator.py prepare_model and fsdp_utils.py fsdp2_prepare_model at "+accCommit+"), and gathers them in "+string(dtype))
		}
		r.set("training.reduce_dtype", "param_dtype", "FSDP's MixedPrecision reduce_dtype is the mixed-precision dtype too (set_mixed_precision in utils/dataclasses.py at "+accCommit+")")
	}
	if fsdp1 {
		r.set("training.flat_param_views", "true", "fsdp_version 1: FSDP1's flat parameter, whose views make every backward copy each unit's gradient once more")
	}
	switch {
	case ac && r.o.Recompute != "" && r.o.Recompute != RecomputeNone:
		return r.errAt(nil, "fsdp_activation_checkpointing true and --recompute both checkpoint (the Trainer raises for FSDP activation_checkpointing with --gradient_checkpointing: trainer.py create_accelerator_and_postprocess): drop --recompute")
	case ac:
		r.set("training.recompute", string(RecomputeFull), "fsdp_activation_checkpointing true: checkpoint_wrapper on every wrapped block (accelerator.py prepare_model, fsdp_utils.py fsdp2_apply_ac at "+accCommit+")")
		r.set("training.recompute_early_stop", "true", "checkpoint_wrapper's NO_REENTRANT checkpointing stops the rerun forward early")
		// torch's checkpoint_wrapper, not HF's gradient checkpointing, so
		// transformers leaves use_cache on (scenarios.HFUseCache); whether
		// the loop keeps the outputs is not in this file.
		r.note("fsdp_activation_checkpointing is torch's checkpoint_wrapper, not Hugging Face's gradient checkpointing, so a transformers model with config.use_cache true (Llama's default) builds a KV cache in every training forward: set training.hf_use_cache: forward (the Trainer's compute_loss keeps only the loss) or kept (a loop that holds outputs until the next forward), or none if the model sets use_cache=False (docs/memory-model.md)")
	case r.o.Recompute != "":
		r.set("training.recompute", string(r.o.Recompute), "--recompute (the Trainer's --gradient_checkpointing; not in the Accelerate config)")
		if r.o.Recompute != RecomputeNone {
			r.note("--recompute: the Trainer's gradient checkpointing follows gradient_checkpointing_kwargs' use_reentrant; training.recompute_early_stop stays false (reentrant): set it true for use_reentrant: false")
		}
	default:
		r.set("training.recompute", string(RecomputeNone), "fsdp_activation_checkpointing absent or false (the Trainer's --gradient_checkpointing is not in this file: pass --recompute full)")
	}
	r.set("training.optimizer", string(OptimizerAdamW), "the Trainer's --optim default adamw_torch_fused (training_args.py at "+trCommit+", torch >= 2.8)")
	r.set("training.optimizer_impl", string(OptimizerFused), "adamw_torch_fused: torch.optim.AdamW(fused=True)")
	r.set("training.weight_decay", "0", "the Trainer's --weight_decay default 0.0")
	r.set("training.grad_clip", string(GradClipNorm), "the Trainer's --max_grad_norm default 1.0")
	r.note("the optimizer, weight decay and clipping are the Hugging Face Trainer's defaults (transformers %s); a script with its own loop steps its own optimizer", trCommit)
	return nil
}

// rest notes the top-level keys Accelerate has that change the step
// but are not read.
func (r *accReader) rest(top map[string]accField, kind string) error {
	if r.o.Liger {
		if kind == "MULTI_GPU" {
			return r.errAt(nil, "--liger under distributed_type MULTI_GPU: Liger's kernels are modelled over 16-bit parameters, not DDP's torch.autocast over fp32 ones (drop --liger)")
		}
		r.set("training.liger", "true", "--liger (the Trainer's --use_liger_kernel: Liger Kernel's default patch of the model; not in the Accelerate config)")
		r.out.Settings = r.out.Settings.InOrder("cluster", "parallelism", "communication", "training", "offload")
	}
	for _, k := range sortedKeys(top) {
		f := top[k]
		switch {
		case k == "distributed_type" || k == "num_machines" || k == "num_processes" || k == "mixed_precision" || k == "use_cpu" || accIgnored[k]:
		case k == "fsdp_config" || k == "parallelism_config":
			if kind != "FSDP" && f.val.Kind == yaml.MappingNode && len(f.val.Content) > 0 {
				r.note("%s: Accelerate reads it with distributed_type FSDP only: left out", k)
			}
		case k == "dynamo_config":
			if f.val.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(f.val.Content); i += 2 {
					if f.val.Content[i].Value == "dynamo_backend" && !strings.EqualFold(f.val.Content[i+1].Value, "NO") {
						r.note("dynamo_config.dynamo_backend %s: torch.compile is not set from the config; set training.compile (blocks for use_regional_compilation)", accDescribe(f.val.Content[i+1]))
					}
				}
			}
		case k == "fp8_config":
			// Any other key is not Accelerate's: unknownTop refused it.
		}
	}
	return nil
}

// sortedKeys is the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
