package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// This file imports a DeepSpeed config (ds_config.json) into the scenario
// keys it determines (zerosim import deepspeed). Every key, alias and
// default follows deepspeedai/DeepSpeed at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641 (dsCommit below):
// deepspeed/runtime/config.py (DeepSpeedConfig._initialize_params, the
// batch rule _set_batch_related_parameters and _batch_assertion),
// deepspeed/runtime/constants.py, deepspeed/runtime/precision_config.py,
// deepspeed/runtime/zero/config.py (DeepSpeedZeroConfig: its fields,
// aliases and defaults; extra="forbid" in runtime/config_utils.py, so an
// unknown zero_optimization key stops DeepSpeed), deepspeed/runtime/zero/
// offload_config.py and deepspeed/runtime/engine.py
// (_configure_basic_optimizer). The values the Hugging Face Trainer fills
// in for "auto" follow transformers'
// src/transformers/integrations/deepspeed.py at
// 02348331baea70aaedce3b76c18481b2b441fe2d (HfTrainerDeepSpeedConfig
// trainer_config_process and trainer_config_finalize).

// dsCommit is the DeepSpeed commit the import follows.
const dsCommit = "edaa7221"

// DeepSpeedOptions is what the caller knows beyond ds_config.json: zero
// values mean unknown.
type DeepSpeedOptions struct {
	// DP is the data-parallel size, DeepSpeed's world_size in the batch
	// rule train_batch_size = micro·accumulation·world_size.
	DP int64
	// Hidden is the model's hidden_size, from which the Hugging Face
	// Trainer fills "auto" bucket sizes.
	Hidden int64
	// Units is the model's unit list in forward order (the ZeRO-3 units:
	// embedding, block.i, experts.i, …, lm_head), whose parameters size
	// the prefetch depth (dsPrefetchDepth).
	Units []Layer
	// MicroBatch, GradAccum and ParamDType fill in "auto" (what the
	// Trainer's --per_device_train_batch_size, --gradient_accumulation_steps
	// and --bf16/--fp16 would) or absent values.
	MicroBatch, GradAccum int64
	ParamDType            DType
	// OutsideZeroInit says the model is built before deepspeed.initialize,
	// outside deepspeed.zero.Init, under a DeepSpeed older than 617061d6b
	// (PR #8189, 2026-07-31): its memory-efficient linear is then not
	// installed (memory/savedweights.go), whatever
	// zero_optimization.memory_efficient_linear says.
	OutsideZeroInit bool
	// Liger is the Hugging Face Trainer's --use_liger_kernel (as
	// AccelerateOptions.Liger): training.liger.
	Liger bool
}

// DeepSpeedImport is an imported ds_config.json.
type DeepSpeedImport struct {
	// Stage is zero_optimization.stage.
	Stage int64
	// Settings are the scenario keys in scenario order (parallelism,
	// communication, training, offload).
	Settings ImportSettings
	// Notes name what the import approximates or leaves out, one line each.
	Notes []string
}

// Setting returns the value of the scenario key, "" when the import does
// not set it.
func (d *DeepSpeedImport) Setting(key string) string { return d.Settings.Get(key) }

// ReadDeepSpeedConfig reads and imports the ds_config.json at path.
func ReadDeepSpeedConfig(path string, o DeepSpeedOptions) (*DeepSpeedImport, error) {
	data, err := readConfigFile(path, "the path of a ds_config.json", MaxHFConfigBytes)
	if err != nil {
		return nil, err
	}
	return ImportDeepSpeed(path, data, o)
}

// ImportDeepSpeed imports the bytes of a ds_config.json; file names it in
// errors. Every error is one line naming the file and the key's JSON path
// with the fix.
func ImportDeepSpeed(file string, data []byte, o DeepSpeedOptions) (*DeepSpeedImport, error) {
	if len(data) > MaxHFConfigBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for a ds_config.json (check the path)", file, MaxHFConfigBytes)
	}
	// DeepSpeedConfig reads the file with hjson.load(open(config, "r"))
	// (deepspeed/runtime/config.py line 699 at dsCommit), whose decoder
	// skips a leading byte-order mark (HjsonDecoder.raw_decode, "strip
	// UTF-8 bom", hjson/decoder.py in hjson-py 9351a277df1a): so does the
	// import, with a note, as Accelerate and the HF Trainer read it with
	// json.load, which refuses it (before: "invalid character 'ï'", QA17
	// L7).
	bom := bytes.HasPrefix(data, []byte(utf8BOM))
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(file, data, err, "give the DeepSpeed config file")
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: not valid JSON: a second value after the first (give the DeepSpeed config file: one object)", jsonPos(file, data, nextValue(data, dec.InputOffset())))
	}
	if k := duplicateKey(data); k != nil {
		// DeepSpeedConfig, given the file's path, loads it with
		// object_pairs_hook=dict_raise_error_on_duplicate_keys
		// (deepspeed/runtime/config.py, the function in
		// deepspeed/runtime/config_utils.py, at dsCommit): "Duplicate keys
		// in DeepSpeed config". Given a dict it does not check, and
		// Accelerate and the HF Trainer load the file with json.load
		// (accelerate/utils/deepspeed.py at 0059501736ae1d285b1602fcd9ae0d54c90e16fa), which keeps the
		// last: which value ran depends on the launcher, so neither is
		// taken.
		line, col := lineCol(data, k.First)
		return nil, fmt.Errorf("%s: %s appears a second time (first at %d:%d): DeepSpeed refuses such a config when it reads the file (\"Duplicate keys in DeepSpeed config\", deepspeed/runtime/config_utils.py dict_raise_error_on_duplicate_keys at %s), Accelerate and the HF Trainer keep the last value: keep one of them",
			jsonPos(file, data, k.Second), clip(k.Path), line, col, dsCommit)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the file holds %s, not a JSON object (give the DeepSpeed config file)", file, describeJSON(v))
	}
	if o.DP < 0 || o.Hidden < 0 || o.MicroBatch < 0 || o.GradAccum < 0 {
		return nil, fmt.Errorf("%s: negative option", file)
	}
	for _, u := range o.Units {
		if u.Params < 0 {
			return nil, fmt.Errorf("%s: negative option", file)
		}
	}
	d := &dsReader{file: file, keys: newJSONKeys(data), o: o, out: &DeepSpeedImport{}}
	if bom {
		d.note("the file starts with a UTF-8 byte-order mark: DeepSpeed's hjson.load skips it, but Accelerate and the HF Trainer read the file with json.load, which refuses it (\"Unexpected UTF-8 BOM\"): save it without the mark to launch it through them")
	}
	if err := d.read(m); err != nil {
		return nil, err
	}
	return d.out, nil
}

// dsReader holds one import.
type dsReader struct {
	file string
	// keys places the keys of the file for errors (jsonKeys.where).
	keys *jsonKeys
	o    DeepSpeedOptions
	out  *DeepSpeedImport
	// autoOpt lists optimizer.params keys left out because they are "auto".
	autoOpt []string
	// pending holds the offload keys until the training keys are set.
	pending ImportSettings
}

// errorf is an error about the key the message starts with, at its
// FILE:LINE:COL.
func (d *dsReader) errorf(format string, a ...any) error {
	msg := oneLine(fmt.Sprintf(format, a...))
	return fmt.Errorf("%s: %s", d.keys.where(d.file, msg), msg)
}

func (d *dsReader) set(key, value, from string) {
	d.out.Settings = append(d.out.Settings, ImportSetting{Key: key, Value: value, From: oneLine(from)})
}

func (d *dsReader) note(format string, a ...any) {
	d.out.Notes = append(d.out.Notes, oneLine(fmt.Sprintf(format, a...)))
}

// isAuto reports whether v is the string "auto".
func isAuto(v any) bool { s, ok := v.(string); return ok && s == "auto" }

// dsNumber reads a JSON number as a float64.
func (d *dsReader) number(path string, v any, eg string) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, d.errorf("%s is %s, not a number (%s)", path, describeJSON(v), numberFix(v, eg))
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, d.errorf("%s=%s is not a finite number (use a number such as %s)", path, clip(n.String()), eg)
	}
	return f, nil
}

// whole reads a whole number in [lo, hi] (1e7 counts: DeepSpeed's pydantic
// int fields take whole floats).
func (d *dsReader) whole(path string, v any, lo, hi int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, d.errorf("%s is %s, not a whole number (%s)", path, describeJSON(v), numberFix(v, strconv.FormatInt(max(lo, 1), 10)))
	}
	i, whole, tooLarge := jsonWhole(n, 1<<62)
	if tooLarge {
		// 1e30 is whole: "is not a whole number in range" before.
		return 0, d.errorf("%s=%s is out of range (use %d to %d)", path, clip(n.String()), lo, hi)
	}
	if !whole {
		return 0, d.errorf("%s=%s is not a whole number (%s)", path, clip(n.String()), wholeFix(n, lo, hi))
	}
	if i < lo || i > hi {
		return 0, d.errorf("%s=%d is out of range (use %d to %d)", path, i, lo, hi)
	}
	return i, nil
}

func (d *dsReader) boolean(path string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, d.errorf("%s is %s, not a boolean (use true or false)", path, describeJSON(v))
	}
	return b, nil
}

// object reads an optional JSON object (nil when absent or null).
func (d *dsReader) object(path string, v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, d.errorf("%s is %s, not an object (use {...} as DeepSpeed's config documents it)", path, describeJSON(v))
	}
	return o, nil
}

// Keys zerosim leaves alone because they change neither time nor memory
// (logging, monitoring, checkpoint files, the LR schedule, numerics of the
// gradient average).
var dsIgnored = map[string]bool{
	"steps_per_print": true, "wall_clock_breakdown": true, "dump_state": true, "memory_breakdown": true,
	"tensorboard": true, "wandb": true, "csv_monitor": true, "comet": true, "monitor": true, "comms_logger": true,
	"flops_profiler": true, "checkpoint": true, "nebula": true, "datastates": true, "scheduler": true,
	"prescale_gradients": true, "gradient_predivide_factor": true, "zero_allow_untested_optimizer": true,
	"zero_force_ds_cpu_optimizer": true, "dataloader_drop_last": true, "log_level": true, "logging": true,
	"autotuning": true, "timers": true, "graph_harvesting": true, "gradient_allreduce_op": true,
	"use_data_before_expert_parallel_": true, "vocabulary_size": true, "seed": true,
}

// Keys that change time or memory in ways zerosim does not model: each
// present one is a note.
var dsUnmodelled = map[string]string{
	"pipeline":                      "pipeline parallelism is not modelled (zerosim simulates pure data parallelism)",
	"tensor_parallel":               "tensor parallelism (AutoTP) is not modelled (zerosim simulates pure data parallelism)",
	"sequence_parallel_size":        "sequence parallelism is not modelled (parallelism.cp is ring attention, not DeepSpeed-Ulysses)",
	"expert_parallel":               "DeepSpeed's expert parallelism settings are not read (use parallelism.ep)",
	"sparse_attention":              "sparse attention is not modelled: zerosim times dense attention",
	"sparse_gradients":              "sparse embedding gradients are not modelled",
	"compression_training":          "compression training (quantization-aware training, pruning) is not modelled",
	"weight_quantization":           "weight quantization is not modelled",
	"curriculum_learning":           "curriculum learning (a varying sequence length) is not modelled: set model.seq_len to the length you time",
	"data_efficiency":               "data efficiency (curriculum, random-LTD) is not modelled",
	"progressive_layer_drop":        "progressive layer drop is not modelled: every step runs every layer",
	"eigenvalue":                    "the eigenvalue computation is not modelled",
	"hybrid_engine":                 "the hybrid engine (RLHF generation) is not modelled",
	"elasticity":                    "elastic training's batch sizes are not read (the batch keys are)",
	"communication_data_type":       "not modelled: gradients are reduced in param_dtype",
	"data_types":                    "grad_accum_dtype and param_dtype are not modelled: gradients are kept in param_dtype",
	"amp":                           "apex AMP is not modelled (training.param_dtype sets one dtype for parameters and compute)",
	"compile":                       "DeepSpeed's compile (deepcompile) is not modelled: set training.compile if the model is compiled",
	"activation_checkpointing":      "configures deepspeed.checkpointing, which recomputes only where the model code calls it: set training.recompute yourself",
	"aio":                           "NVMe I/O settings are not read: set cluster.host.nvme_bandwidth to what your drives reach",
	"disable_allgather":             "not modelled",
	"managed_gradient_accumulation": "not modelled",
}

// read imports the top-level object.
func (d *dsReader) read(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	known := map[string]bool{"train_batch_size": true, "train_micro_batch_size_per_gpu": true, "gradient_accumulation_steps": true,
		"optimizer": true, "fp16": true, "bf16": true, "bfloat16": true, "gradient_clipping": true, "zero_optimization": true, "torch_autocast": true}

	// Precision first: the bucket sizes are in bytes of param_dtype.
	dtype, err := d.precision(m)
	if err != nil {
		return err
	}
	zc, stage, err := d.zeroSection(m)
	if err != nil {
		return err
	}
	d.out.Stage = stage
	micro, accum, err := d.batch(m)
	if err != nil {
		return err
	}
	d.set("parallelism.zero_stage", strconv.FormatInt(stage, 10), zeroFrom(m, "stage"))
	offOpt, err := d.zero(zc, stage, dtype)
	if err != nil {
		return err
	}
	d.set("training.micro_batch", strconv.FormatInt(micro.v, 10), micro.from)
	d.set("training.grad_accum", strconv.FormatInt(accum.v, 10), accum.from)
	d.set("training.param_dtype", string(dtype.v), dtype.from)
	if err := d.masterWeights(m, dtype, stage, offOpt); err != nil {
		return err
	}
	if err := d.torchAutocast(m, dtype, stage); err != nil {
		return err
	}
	if err := d.optimizer(m, offOpt); err != nil {
		return err
	}
	if err := d.clipping(m); err != nil {
		return err
	}
	if d.o.Liger {
		d.set("training.liger", "true", "--liger (the Hugging Face Trainer's --use_liger_kernel: Liger Kernel's default patch of the model; not in the DeepSpeed config)")
	}
	d.moveOffload()
	if len(d.autoOpt) > 0 {
		d.note("optimizer.params %s are \"auto\" (the Hugging Face Trainer fills them in): left at zerosim's defaults, which change no time or memory", strings.Join(d.autoOpt, ", "))
	}
	for _, k := range keys {
		switch {
		case known[k] || dsIgnored[k]:
		case dsUnmodelled[k] != "":
			if v := m[k]; v == nil || v == false {
				continue
			}
			if o, ok := m[k].(map[string]any); ok && o["enabled"] == false {
				// A section switched off ({"enabled": false}, as
				// DeepSpeedExamples' bf16_master_weight baseline.json
				// writes torch_autocast) changes nothing.
				continue
			}
			if k == "tensor_parallel" {
				// AutoTP splits each layer over autotp_size GPUs (0 or 1:
				// off; TPTrainingConfig.autotp_size,
				// deepspeed/runtime/tensor_parallel/config.py at dsCommit),
				// and the data-parallel size becomes the GPUs over it: a
				// pure data-parallel scenario of all the GPUs would be
				// that many times off, as Megatron's importer refuses TP.
				// The int as pydantic reads it: 4, 4.0 or "4".
				if tp, ok := m[k].(map[string]any); ok {
					raw := ""
					switch v := tp["autotp_size"].(type) {
					case json.Number:
						raw = v.String()
					case string:
						raw = v
					}
					if v, ok := pydanticLaxInt(raw); ok {
						if v > 1 {
							return d.errorf("tensor_parallel.autotp_size %d: tensor parallelism (AutoTP) is not modelled (zerosim simulates pure data parallelism, and the data-parallel size would be the GPUs over %d); set autotp_size 1, or remove tensor_parallel, to import the run without it", v, v)
						}
						if len(tp) == 1 {
							continue // AutoTP off, nothing else set
						}
					}
				}
			}
			if k == "data_types" && d.dataTypesMatch(m[k], dtype.v) {
				continue
			}
			if k == "sequence_parallel_size" {
				if n, ok := m[k].(json.Number); ok && n.String() == "1" {
					continue
				}
			}
			d.note("%s: %s", k, dsUnmodelled[k])
		default:
			d.note("%s is not a DeepSpeed key zerosim reads (DeepSpeed ignores unknown top-level keys): left out", strconv.Quote(clip(k)))
		}
	}
	return nil
}

// dataTypesMatch reports whether a data_types section only names the
// param dtype (grad_accum_dtype defaults to the model's dtype: engine.py
// get_data_types at dsCommit), so it changes nothing zerosim models.
func (d *dsReader) dataTypesMatch(v any, dt DType) bool {
	o, ok := v.(map[string]any)
	if !ok {
		return false
	}
	names := map[DType][]string{BF16: {"bf16", "bfloat16", "torch.bfloat16"}, FP16: {"fp16", "float16", "half", "torch.float16"},
		FP32: {"fp32", "float32", "float", "torch.float32"}}
	for _, x := range o {
		str, isStr := x.(string)
		if x != nil && (!isStr || !slices.Contains(names[dt], str)) {
			return false
		}
	}
	return true
}

// zeroFrom names the zero_optimization key a setting came from, or its
// default.
func zeroFrom(m map[string]any, key string) string {
	z, _ := m["zero_optimization"].(map[string]any)
	if v, ok := z[key]; ok && v != nil {
		switch v.(type) {
		case string, bool:
			if key == "stage" {
				return "zero_optimization.stage " + describeJSON(v) + " (DeepSpeed's pydantic config reads it as a lax int)"
			}
		}
		return "zero_optimization." + key + " " + describeJSON(v)
	}
	if key == "stage" {
		if b, ok := m["zero_optimization"].(bool); ok {
			return fmt.Sprintf("zero_optimization %v (the deprecated form: true is stage 1)", b)
		}
	}
	return "zero_optimization." + key + " absent: DeepSpeed's default (zero/config.py at " + dsCommit + ")"
}

type dsInt struct {
	v    int64
	from string
}

type dsDType struct {
	v    DType
	from string
	// bfKey is the config's bf16 section ("bf16", or the old "bfloat16")
	// and bfEnabled its enabled flag.
	bfKey     string
	bfEnabled bool
}

// precision reads fp16.enabled and bf16.enabled ("bfloat16" is the old
// name, read when "bf16" is absent: precision_config.py
// get_bfloat16_config). Both default to false: fp32 training. DeepSpeed
// asserts that not both are on (config.py _initialize_params).
func (d *dsReader) precision(m map[string]any) (dsDType, error) {
	enabled := func(section string) (bool, bool, error) { // on, auto
		s, err := d.object(section, m[section])
		if err != nil || s == nil {
			return false, false, err
		}
		v, ok := s["enabled"]
		if !ok || v == nil {
			return false, false, nil
		}
		if isAuto(v) {
			return false, true, nil
		}
		b, err := d.boolean(section+".enabled", v)
		return b, false, err
	}
	bfKey := "bf16"
	if _, ok := m["bf16"]; !ok {
		if _, old := m["bfloat16"]; old {
			bfKey = "bfloat16"
		}
	}
	fp16, fpAuto, err := enabled("fp16")
	if err != nil {
		return dsDType{}, err
	}
	bf16, bfAuto, err := enabled(bfKey)
	if err != nil {
		return dsDType{}, err
	}
	if fp16 && bf16 {
		return dsDType{}, d.errorf("fp16.enabled and %s.enabled are both true, which DeepSpeed refuses (set one to false)", bfKey)
	}
	var got dsDType
	switch {
	case fpAuto || bfAuto:
		if d.o.ParamDType == "" {
			k := "fp16.enabled"
			if bfAuto {
				k = bfKey + ".enabled"
			}
			return dsDType{}, d.errorf("%s is \"auto\" (the Hugging Face Trainer fills it in from --bf16/--fp16): give true or false, or pass --dtype bf16, fp16 or fp32", k)
		}
		if (fp16 && d.o.ParamDType != FP16) || (bf16 && d.o.ParamDType != BF16) {
			return dsDType{}, d.errorf("--dtype %s contradicts the precision the config enables (drop the flag or change the config)", d.o.ParamDType)
		}
		got = dsDType{v: d.o.ParamDType, from: "--dtype (fp16/" + bfKey + ".enabled \"auto\")"}
	case bf16:
		got = dsDType{v: BF16, from: bfKey + ".enabled true"}
	case fp16:
		got = dsDType{v: FP16, from: "fp16.enabled true"}
	default:
		got = dsDType{v: FP32, from: "fp16.enabled and bf16.enabled absent or false: DeepSpeed trains in fp32 (precision_config.py at " + dsCommit + ")"}
	}
	if got.v == FP16 {
		d.note("fp16: dynamic loss scaling (loss_scale, initial_scale_power, hysteresis) is not modelled: zerosim times every step as applied, DeepSpeed skips a step whose gradients overflow")
	}
	if d.o.ParamDType != "" && d.o.ParamDType != got.v {
		return dsDType{}, d.errorf("--dtype %s contradicts the config's %s (drop the flag or change the config)", d.o.ParamDType, got.v)
	}
	got.bfKey, got.bfEnabled = bfKey, bf16 || bfAuto && got.v == BF16
	return got, nil
}

// masterWeights reads bf16.bf16_master_weights_and_grads and
// bf16.bf16_optimizer_states (DeepSpeed >= 0.18.3, 39a682d79;
// precision_config.py DeepSpeedBF16Config at dsCommit) into
// training.master_dtype and training.optimizer_state_dtype, refusing what
// DeepSpeed refuses (scenarios.MasterBF16 cites config.py's and the ZeRO
// optimizers' assertions). offOpt says the optimizer is offloaded. Both
// keys are pydantic bools; fp16.fp16_master_weights_and_grads, the fp16
// master ZeRO-Offload keeps, is not modelled.
func (d *dsReader) masterWeights(m map[string]any, dtype dsDType, stage int64, offOpt bool) error {
	if f, _ := m["fp16"].(map[string]any); f != nil && f["fp16_master_weights_and_grads"] == true {
		d.note("fp16.fp16_master_weights_and_grads: an fp16 master partition (ZeRO-Offload with DeepSpeedCPUAdam) is not modelled: zerosim keeps an fp32 master")
	}
	b, _ := m[dtype.bfKey].(map[string]any)
	if b == nil {
		return nil
	}
	read := func(k string) (bool, error) {
		v, ok := b[k]
		if !ok || v == nil {
			return false, nil
		}
		return d.boolean(dtype.bfKey+"."+k, v)
	}
	const mk, sk = "bf16_master_weights_and_grads", "bf16_optimizer_states"
	master, err := read(mk)
	if err != nil {
		return err
	}
	states, err := read(sk)
	if err != nil {
		return err
	}
	switch {
	case !master && !states:
		return nil
	case !dtype.bfEnabled:
		d.note("%s.%s with %s.enabled not true: a bf16 master beside %s parameters is not modelled: zerosim keeps an fp32 master", dtype.bfKey, mk, dtype.bfKey, dtype.v)
		return nil
	case states && !master:
		return d.errorf("%s.%s true without %s.%s, which DeepSpeed refuses (\"bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled\", config.py at %s): set both, or neither", dtype.bfKey, sk, dtype.bfKey, mk, dsCommit)
	case stage == 0:
		return d.errorf("%s.%s true at zero_optimization.stage 0, which DeepSpeed refuses (\"Bf16_master_weights_and_grads is only supported with ZeRO Stage 1, 2, or 3\", config.py at %s): use stage 1, 2 or 3", dtype.bfKey, mk, dsCommit)
	case !states && !offOpt:
		return d.errorf("%s.%s true with %s.%s false keeps fp32 optimizer states beside a bf16 master, which DeepSpeed takes only with zero_optimization.offload_optimizer and DeepSpeedCPUAdam (\"Master weights feature requires ZeRO-3 Offload with DeepSpeedCPUAdam\", stage3.py and stage_1_and_2.py at %s): set %s.%s true, or offload the optimizer", dtype.bfKey, mk, dtype.bfKey, sk, dsCommit, dtype.bfKey, sk)
	}
	from := dtype.bfKey + "." + mk + " true: a bf16 master partition, a copy of the bf16 one (DeepSpeed >= 0.18.3, 39a682d79)"
	d.set("training.master_dtype", string(MasterBF16), from)
	if states {
		d.set("training.optimizer_state_dtype", string(BF16), dtype.bfKey+"."+sk+" true: Adam's moments in bf16")
	} else {
		d.set("training.optimizer_state_dtype", string(FP32), dtype.bfKey+"."+sk+" absent or false: DeepSpeedCPUAdam keeps fp32 moments on the host (fp32_optimizer_states, engine.py at "+dsCommit+")")
	}
	return nil
}

// torchAutocast reads the torch_autocast section into training.autocast
// (scenarios.Training.AutocastOps): enabled (a bool, False by default:
// get_torch_autocast_enabled and TORCH_AUTOCAST_ENABLED_DEFAULT in
// deepspeed/runtime/config.py and constants.py at dsCommit) and dtype
// (DtypeEnum: "torch.bfloat16", "bf16" or "bfloat16" for bf16; absent,
// torch.autocast's own CUDA default, fp16). zerosim models it beside
// bf16.enabled at ZeRO stages 1–3, where the engine keeps the module's
// parameters bf16 and autocast changes only the ops on its fp32 lists;
// it refuses what DeepSpeed refuses (zero_quantized_weights:
// _validate_auto_cast_settings in torch_autocast.py at dsCommit) and,
// with a line naming the gap, what it does not model.
func (d *dsReader) torchAutocast(m map[string]any, dtype dsDType, stage int64) error {
	const k = "torch_autocast"
	s, err := d.object(k, m[k])
	if err != nil || s == nil {
		return err
	}
	on := false
	if v, ok := s["enabled"]; ok && v != nil {
		if on, err = d.boolean(k+".enabled", v); err != nil {
			return err
		}
	}
	if !on {
		return nil
	}
	if z, _ := m["zero_optimization"].(map[string]any); z != nil && z["zero_quantized_weights"] == true {
		return d.errorf("%s.enabled true with zero_optimization.zero_quantized_weights true, which DeepSpeed refuses (\"Cannot enable both torch autocast and zero quantized weights\", torch_autocast.py at %s): drop one", k, dsCommit)
	}
	raw, isStr := s["dtype"].(string)
	if v, ok := s["dtype"]; ok && v != nil && !isStr {
		return d.errorf("%s.dtype is %s, not a dtype name, which DeepSpeed refuses (\"Invalid dtype for torch autocast\", config.py at %s): use \"torch.bfloat16\"", k, describeJSON(v), dsCommit)
	}
	switch raw {
	case "torch.bfloat16", "bf16", "bfloat16":
	case "":
		return d.errorf("%s.dtype absent: DeepSpeed passes None and torch.autocast runs CUDA's default, fp16, which zerosim does not model (set \"dtype\": \"torch.bfloat16\")", k)
	case "torch.float16", "fp16", "float16", "half", "torch.float32", "fp32", "float32", "float", "torch.int8", "int8":
		// DtypeEnum's other names (config.py at dsCommit).
		return d.errorf("%s.dtype %q is not modelled: zerosim models torch_autocast bf16 beside bf16.enabled (set \"dtype\": \"torch.bfloat16\")", k, clip(raw))
	default:
		return d.errorf("%s.dtype %q is no dtype DeepSpeed knows (\"Invalid dtype for torch autocast\", config.py at %s): use \"torch.bfloat16\"", k, clip(raw), dsCommit)
	}
	if dtype.v != BF16 {
		return d.errorf("%s.enabled true over %s parameters (%s.enabled not true) is not modelled: DeepSpeed then keeps the parameters %s and gathers and reduces the Linear weights in bf16 (their comm_dtype, torch_autocast.py at %s); enable %s, or drop %s", k, dtype.v, dtype.bfKey, dtype.v, dsCommit, dtype.bfKey, k)
	}
	if v, ok := s["lower_precision_safe_modules"]; ok && v != nil {
		// get_lower_precision_safe_modules (config.py at dsCommit)
		// wants a list of class names; over bf16 parameters the comm_dtype
		// it gives their weights is their own dtype, which changes nothing.
		l, isList := v.([]any)
		for _, e := range l {
			if _, str := e.(string); !str {
				isList = false
			}
		}
		if !isList {
			return d.errorf("%s.lower_precision_safe_modules is %s, not a list of class names, which DeepSpeed refuses (\"Invalid module names for torch autocast\", config.py at %s): use [\"torch.nn.Linear\", ...]", k, describeJSON(v), dsCommit)
		}
	}
	if stage == 0 {
		return d.errorf("%s.enabled true at zero_optimization.stage 0 is not modelled: zerosim models torch_autocast with the ZeRO optimizers of stages 1, 2 and 3 (use one, or drop %s)", k, k)
	}
	d.set("training.autocast", string(BF16), k+".enabled true, dtype "+raw+": DeepSpeed (>= 39a682d79) enters torch.autocast(bfloat16) around the bf16 module's forward (autocast_if_enabled, torch_autocast.py at "+dsCommit+")")
	return nil
}

// batch applies DeepSpeed's batch rule (config.py
// _set_batch_related_parameters and _batch_assertion at dsCommit): any
// two of train_batch_size, train_micro_batch_size_per_gpu and
// gradient_accumulation_steps give the third through
// train_batch_size = micro·accumulation·world_size (integer division); the
// batch alone gives micro = batch/world_size with accumulation 1; the micro
// batch alone gives accumulation 1; and the three must agree.
func (d *dsReader) batch(m map[string]any) (micro, accum dsInt, err error) {
	const tbK, mbK, gaK = "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"
	froms := map[string]string{}
	read := func(k string, flag int64, flagName string, autoOK bool) (int64, bool, error) {
		v, ok := m[k]
		if !ok || v == nil {
			if flag > 0 {
				froms[k] = fmt.Sprintf("%s %d (%s absent)", flagName, flag, k)
				return flag, true, nil
			}
			return 0, false, nil
		}
		if isAuto(v) {
			if flag > 0 {
				froms[k] = fmt.Sprintf("%s %d (%s \"auto\")", flagName, flag, k)
				return flag, true, nil
			}
			if autoOK {
				return 0, false, nil
			}
			return 0, false, d.errorf("%s is \"auto\" (the Hugging Face Trainer fills it in): give a number, or pass %s N", k, flagName)
		}
		n, err := d.whole(k, v, 1, 1<<40)
		if err != nil {
			return 0, false, err
		}
		if flag > 0 && flag != n {
			return 0, false, d.errorf("%s=%d but %s is %d (drop the flag or change the config)", k, n, flagName, flag)
		}
		froms[k] = k + " " + describeJSON(v)
		return n, true, nil
	}
	// train_batch_size "auto" is the product the Trainer computes from the
	// other two, so it is the same as absent.
	tb, hasTB, err := read(tbK, 0, "", true)
	if err != nil {
		return
	}
	mb, hasMB, err := read(mbK, d.o.MicroBatch, "--micro-batch", false)
	if err != nil {
		return
	}
	ga, hasGA, err := read(gaK, d.o.GradAccum, "--grad-accum", false)
	if err != nil {
		return
	}
	w := d.o.DP
	rule := "DeepSpeed's batch rule (config.py _set_batch_related_parameters at " + dsCommit + ")"
	// misspelled names a key of m within two edits of a batch key that is
	// absent (train_micro_batch_size_per_gpus): DeepSpeed ignores unknown
	// keys, so the error about the batch key was about a key the user had
	// typed.
	misspelled := func() string {
		keys := sortedKeys(m)
		for _, want := range []string{tbK, mbK, gaK} {
			if _, ok := m[want]; ok {
				continue
			}
			for _, k := range keys {
				if nearKey(k, []string{want}) == want {
					return fmt.Sprintf(" (%s is not a DeepSpeed config key: did you mean %s?)", clip(k), want)
				}
			}
		}
		return ""
	}
	needW := func(what string) error {
		return d.errorf("%s needs the data-parallel size (%s): pass --nodes and --gpus-per-node, or give %s%s", what, rule, what, misspelled())
	}
	micro = dsInt{mb, froms[mbK]}
	accum = dsInt{ga, froms[gaK]}
	switch {
	case hasTB && hasMB && hasGA:
	case hasTB && hasMB:
		if w == 0 {
			return micro, accum, needW(gaK)
		}
		accum = dsInt{tb / mb / w, fmt.Sprintf("%s %d / (%s %d · dp %d), %s", tbK, tb, mbK, mb, w, rule)}
	case hasTB && hasGA:
		if w == 0 {
			return micro, accum, needW(mbK)
		}
		micro = dsInt{tb / w / ga, fmt.Sprintf("%s %d / (dp %d · %s %d), %s", tbK, tb, w, gaK, ga, rule)}
	case hasMB && hasGA:
	case hasTB:
		if w == 0 {
			return micro, accum, needW(mbK)
		}
		micro = dsInt{tb / w, fmt.Sprintf("%s %d / dp %d, %s", tbK, tb, w, rule)}
		accum = dsInt{1, gaK + " absent: 1, " + rule}
	case hasMB:
		accum = dsInt{1, gaK + " absent: 1, " + rule}
	default:
		return micro, accum, d.errorf("%s is missing (DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu): give it, or pass --micro-batch N%s", mbK, misspelled())
	}
	if micro.v < 1 {
		return micro, accum, d.errorf("%s comes to %d (%s): DeepSpeed asserts it is at least 1 (raise %s)", mbK, micro.v, micro.from, tbK)
	}
	if accum.v < 1 {
		return micro, accum, d.errorf("%s comes to %d (%s): DeepSpeed asserts it is at least 1 (raise %s)", gaK, accum.v, accum.from, tbK)
	}
	if hasTB && w > 0 {
		if p, ok := mulExact(micro.v, accum.v, w); !ok || p != tb {
			return micro, accum, d.errorf("%s=%d is not %s·%s·dp = %d·%d·%d, as DeepSpeed asserts (config.py _batch_assertion at %s): fix one of them, or the cluster flags", tbK, tb, mbK, gaK, micro.v, accum.v, w, dsCommit)
		}
	}
	if micro.v > 1<<20 {
		return micro, accum, d.errorf("%s comes to %d, above zerosim's training.micro_batch limit 1048576 (lower it)", mbK, micro.v)
	}
	if accum.v > 4096 {
		return micro, accum, d.errorf("%s comes to %d, above zerosim's training.grad_accum limit 4096 (lower it)", gaK, accum.v)
	}
	return micro, accum, nil
}

// mulExact multiplies positive numbers, false on overflow.
func mulExact(xs ...int64) (int64, bool) {
	p := int64(1)
	for _, x := range xs {
		if x != 0 && p > math.MaxInt64/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// zeroSection reads zero_optimization and its stage. Absent, ZeRO is off
// (stage 0); the deprecated boolean form is stage 1 when true
// (zero/config.py get_zero_config and read_zero_config_deprecated).
func (d *dsReader) zeroSection(m map[string]any) (map[string]any, int64, error) {
	v, ok := m["zero_optimization"]
	if !ok || v == nil {
		return nil, 0, nil
	}
	if b, isBool := v.(bool); isBool {
		if b {
			return nil, 1, nil
		}
		return nil, 0, nil
	}
	z, err := d.object("zero_optimization", v)
	if err != nil {
		return nil, 0, err
	}
	s, ok := z["stage"]
	if !ok || s == nil {
		return z, 0, nil
	}
	if isAuto(s) {
		return nil, 0, d.errorf("zero_optimization.stage is \"auto\": give 0, 1, 2 or 3")
	}
	switch x := s.(type) {
	case string:
		// DeepSpeedZeroConfig.stage is a ZeroStageEnum(int, Enum) on a
		// lax pydantic model (zero/config.py and runtime/config_utils.py
		// at dsCommit): pydantic-core validates an int enum from a string
		// as a lax int, then looks the int up among the members.
		i, ok := pydanticLaxInt(x)
		if !ok {
			return nil, 0, d.errorf("zero_optimization.stage is %s, not a whole number (use 0, 1, 2 or 3)", describeJSON(s))
		}
		if i < 0 || i > 3 {
			return nil, 0, d.errorf("zero_optimization.stage=%s is out of range (use 0 to 3)", describeJSON(s))
		}
		return z, i, nil
	case bool:
		// A bool is a lax int too (true is 1), as DeepSpeed reads it.
		if x {
			return z, 1, nil
		}
		return z, 0, nil
	}
	stage, err := d.whole("zero_optimization.stage", s, 0, 3)
	return z, stage, err
}

// pydanticLaxInt reads s as pydantic's lax int validation reads a string:
// pydantic-core's str_as_int and clean_int_str (src/input/shared.rs at
// pydantic/pydantic-core 383eb95a19433754c0cecf7025b50c26b6d97a36,
// v2.41.5+2, the one reached through IntEnumValidator in
// src/validators/enum_.rs). Surrounding white space goes (Rust's
// str::trim, the Unicode White_Space set Go's unicode.IsSpace also
// holds), then one sign, leading zeros, a fraction of zeros only (3.0,
// 3.00) and single underscores between digits (1_0); "three", "3e0",
// "0x3", "3." and "3.5" are not ints. False when s is not one or does
// not fit an int64.
func pydanticLaxInt(s string) (int64, bool) {
	if i, ok := jsonInt(s); ok {
		return i, true
	}
	n := len(s)
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		if strings.HasPrefix(rest, "-") {
			return 0, false
		}
		s = rest
	}
	neg := false
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return 0, false
		}
		neg, s = true, rest
	}
	s, ok := stripLeadingZeros(s)
	if !ok {
		return 0, false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if frac := s[i+1:]; frac != "" && strings.Trim(frac, "0") == "" {
			s = s[:i]
		}
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && strings.Contains(s, "_") && !strings.Contains(s, "__") {
		return jsonInt(sign + strings.ReplaceAll(s, "_", ""))
	}
	if len(s) == n {
		return 0, false // nothing was cleaned: not an int
	}
	return jsonInt(sign + s)
}

// stripLeadingZeros is pydantic-core's strip_leading_zeros: "000" is
// "0", "00.0" is "0.0", "0_03" is "3"; false for what does not start
// with a digit or "-".
func stripLeadingZeros(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	switch c := s[0]; {
	case c == '0':
	case c >= '1' && c <= '9' || c == '-':
		return s, true
	default:
		return "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '0' || c == '_':
		case c >= '1' && c <= '9' || c == '-':
			return s[i:], true
		case c == '.':
			return s[i-1:], true
		default:
			return "", false
		}
	}
	return s[len(s)-1:], true
}

// jsonInt reads s as a JSON integer (-?(0|[1-9][0-9]*)), as jiter's
// NumberInt does, within int64.
func jsonInt(s string) (int64, bool) {
	d := strings.TrimPrefix(s, "-")
	if d == "" || strings.Trim(d, "0123456789") != "" || (len(d) > 1 && d[0] == '0') {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// dsZeroKeys are DeepSpeedZeroConfig's fields and aliases (zero/config.py
// at dsCommit): what each does here. "map" keys are read below; "ignore"
// keys change neither time nor memory; any other value is the note a
// non-default setting gets, with the default it is compared with.
type dsZeroKey struct {
	def  any // DeepSpeed's default: bool, float64, or nil (note whenever set)
	note string
	// stages the key is read at ("12": the stage 1–2 optimizer, "3": the
	// stage-3 engine, "": any stage above 0).
	stages string
	// always: a key that sizes memory and is not modelled gets its note
	// even at DeepSpeed's default, when the config gives it (QA8 F9:
	// sub_group_size until session 33, when its default was modelled;
	// contiguous_gradients, stage3_max_reuse_distance and sub_group_size
	// are modelled at their defaults, and noted when they differ).
	always bool
}

var dsZeroKeys = map[string]dsZeroKey{
	"stage": {note: "map"}, "reduce_bucket_size": {note: "map"}, "overlap_comm": {note: "map"},
	"prefetch_bucket_size": {note: "map"}, "stage3_prefetch_bucket_size": {note: "map"},
	"max_live_parameters": {note: "map"}, "stage3_max_live_parameters": {note: "map"},
	"offload_param": {note: "map"}, "offload_optimizer": {note: "map"}, "cpu_offload": {note: "map"}, "cpu_offload_param": {note: "map"},
	"zero_hpz_partition_size": {note: "map"}, "zero_quantized_weights": {note: "map"}, "zero_quantized_gradients": {note: "map"},
	"memory_efficient_linear": {note: "map"},

	"load_from_fp32_weights": {note: "ignore"}, "elastic_checkpoint": {note: "ignore"},
	"gather_16bit_weights_on_model_save": {note: "ignore"}, "stage3_gather_16bit_weights_on_model_save": {note: "ignore"},
	"stage3_gather_fp16_weights_on_model_save": {note: "ignore"}, "cpu_offload_use_pin_memory": {note: "ignore"},
	"ignore_unused_parameters": {note: "ignore"}, "legacy_stage1": {note: "ignore"}, "pipeline_loading_checkpoint": {note: "ignore"},
	"override_module_apply": {note: "ignore"}, "log_trace_cache_warnings": {note: "ignore"}, "enable_sanity_checks": {note: "ignore"},
	"save_muon_momentum_buffer_in_memory": {note: "ignore"},

	// sub_group_size (zero/config.py:175 at dsCommit, default 1e9):
	// DeepSpeedZeroOptimizer_Stage3._create_fp16_sub_groups
	// (runtime/zero/stage3.py:1160-1183 at dsCommit) cuts each parameter
	// group into sub-groups of at least this many partition elements, and
	// step (stage3.py:2628-2644) updates them one at a time:
	// _prepare_sub_group swaps a sub-group's optimizer state in under an
	// NVMe offload_optimizer (stage3.py:2420-2426), _optimizer_step runs
	// the optimizer on that sub-group's fp32 partition alone, on the CPU
	// under offload_optimizer (1185-1212), _release_sub_group frees its
	// fp32 gradient or swaps it out (2448-2457). zerosim models the
	// default (memory.largestSubGroup) and notes another value.
	// max_reuse_distance (zero/config.py:244 at dsCommit, default 1e9,
	// passed by parameter_offload.py:187-208 as max_reuse_distance_in_numel):
	// PartitionedParameterCoordinator.__params_to_release
	// (runtime/zero/partitioned_param_coordinator.py:653-662 at dsCommit)
	// keeps a parameter gathered when it is used again by a module within
	// this many parameter elements of the current step.
	"contiguous_gradients":                   {true, "zerosim counts DeepSpeed's default contiguous gradient buffer", "", false},
	"reduce_scatter":                         {true, "zerosim reduce-scatters the gradients as DeepSpeed's default does", "", false},
	"use_multi_rank_bucket_allreduce":        {true, "zerosim models the default", "12", false},
	"allgather_partitions":                   {true, "zerosim all-gathers the updated partitions as DeepSpeed's default does", "12", false},
	"allgather_bucket_size":                  {5e8, "zerosim does not bucket the stage 1–2 parameter all-gather", "12", false},
	"sub_group_size":                         {1e9, "zerosim steps DeepSpeed's default sub-groups of 1e9 partition elements (memory.DefaultSubGroupSize: the step's gradient copies are one sub-group's), not this size's", "3", false},
	"param_persistence_threshold":            {1e5, "zerosim partitions every parameter (DeepSpeed keeps parameters under this many elements whole)", "3", false},
	"stage3_param_persistence_threshold":     {1e5, "zerosim partitions every parameter (DeepSpeed keeps parameters under this many elements whole)", "3", false},
	"model_persistence_threshold":            {nil, "zerosim does not model persistent parameters", "3", false},
	"stage3_model_persistence_threshold":     {nil, "zerosim does not model persistent parameters", "3", false},
	"max_reuse_distance":                     {1e9, "communication.boundary: deepspeed models DeepSpeed's default 1e9 (a gathered parameter reused within this many elements is kept, not released)", "3", false},
	"stage3_max_reuse_distance":              {1e9, "communication.boundary: deepspeed models DeepSpeed's default 1e9 (a gathered parameter reused within this many elements is kept, not released)", "3", false},
	"module_granularity_threshold":           {0.0, "zerosim gathers each unit as a whole", "3", false},
	"stage3_module_granularity_threshold":    {0.0, "zerosim gathers each unit as a whole", "3", false},
	"use_all_reduce_for_fetch_params":        {false, "zerosim gathers parameters with all-gathers", "3", false},
	"stage3_use_all_reduce_for_fetch_params": {false, "zerosim gathers parameters with all-gathers", "3", false},
	"allgather_sequential":                   {false, "zerosim gathers each unit in one all-gather", "3", false},
	"stage3_allgather_sequential":            {false, "zerosim gathers each unit in one all-gather", "3", false},
	"round_robin_gradients":                  {false, "not modelled", "12", false},
	"zero_quantized_nontrainable_weights":    {false, "not modelled", "3", false},
	"zeropp_loco_param":                      {nil, "LoCo-ZeRO++'s error feedback is not modelled", "3", false},
	"mics_shard_size":                        {-1.0, "MiCS is not modelled (parallelism.k is the closest: shards over N/k GPUs)", "3", false},
	"mics_hierarchical_params_gather":        {false, "MiCS is not modelled", "3", false},
	"zenflow":                                {nil, "ZenFlow is not modelled", "", false},
	"leaf_module":                            {nil, "ZeRO-3 leaf modules are not modelled: zerosim's unit is a block", "3", false},
}

// zkey returns the first present, non-null key among names (a field and
// its alias).
func zkey(z map[string]any, names ...string) (string, any, bool) {
	for _, n := range names {
		if v, ok := z[n]; ok && v != nil {
			return n, v, true
		}
	}
	return names[0], nil, false
}

// zero reads the communication and offload keys of zero_optimization; it
// reports whether the optimizer is offloaded.
func (d *dsReader) zero(z map[string]any, stage int64, dtype dsDType) (bool, error) {
	zk := make([]string, 0, len(z))
	for k := range z {
		zk = append(zk, k)
	}
	sort.Strings(zk)
	for _, k := range zk {
		e, ok := dsZeroKeys[k]
		if !ok {
			fix := "check the spelling or remove it"
			if near := nearKey(k, sortedKeys(dsZeroKeys)); near != "" {
				fix = "did you mean " + near + "?"
			}
			return false, d.errorf("zero_optimization.%s is not a key of DeepSpeedZeroConfig, which refuses unknown keys (zero/config.py at %s): %s", clip(k), dsCommit, fix)
		}
		if e.note == "map" || e.note == "ignore" {
			continue
		}
		v := z[k]
		if v == nil || stage == 0 || (e.stages == "12" && stage == 3) || (e.stages == "3" && stage != 3) {
			continue
		}
		if dsIsDefault(v, e.def) {
			if e.always {
				d.note("zero_optimization.%s %s (DeepSpeed's default): %s", k, describeJSON(v), e.note)
			}
			continue
		}
		d.note("zero_optimization.%s %s: %s", k, describeJSON(v), e.note)
	}
	elem := int64(2)
	if dtype.v == FP32 {
		elem = 4
	}
	// Gradient buckets. Stage 0 all-reduces in buffers of
	// MEMORY_OPT_ALLREDUCE_SIZE = 5e8 elements (engine.py allreduce_gradients
	// and buffered_allreduce_fallback); stages 1–3 in reduce_bucket_size
	// elements, default 5e8 (zero/config.py).
	var elems int64 = 5e8
	from := "DeepSpeed's default 5e8 elements (zero/config.py at " + dsCommit + ")"
	if stage == 0 {
		from = "stage 0 all-reduces in buckets of 5e8 elements (engine.py MEMORY_OPT_ALLREDUCE_SIZE at " + dsCommit + ")"
	} else if k, v, ok := zkey(z, "reduce_bucket_size"); ok {
		if isAuto(v) {
			if d.o.Hidden == 0 {
				return false, d.errorf("zero_optimization.%s is \"auto\" (the Hugging Face Trainer sets hidden_size²): give a number of elements, or pass --hf config.json", k)
			}
			var okm bool
			if elems, okm = mulExact(d.o.Hidden, d.o.Hidden); !okm {
				return false, d.errorf("zero_optimization.%s \"auto\": hidden_size² overflows", k)
			}
			from = fmt.Sprintf("zero_optimization.%s \"auto\": hidden_size² = %d elements, as the Hugging Face Trainer fills it (transformers integrations/deepspeed.py at 02348331)", k, elems)
		} else {
			n, err := d.whole("zero_optimization."+k, v, 1, 1<<60)
			if err != nil {
				return false, err
			}
			elems = n
			from = fmt.Sprintf("zero_optimization.%s %s elements", k, describeJSON(v))
		}
	}
	bytes, ok := mulExact(elems, elem)
	if !ok || bytes > 1<<60 {
		return false, d.errorf("zero_optimization.reduce_bucket_size=%d elements is out of range (use at most %d)", elems, int64(1<<60)/elem)
	}
	d.set("communication.bucket_size", dsBytes(bytes), fmt.Sprintf("%s × %d bytes (%s gradients)", from, elem, dtype.v))

	// overlap_comm: default True at stage 3, False below (zero/config.py
	// overlap_comm_valid); stage 0 all-reduces after the backward.
	overlap := stage == 3
	ofrom := zeroFromZ(z, "overlap_comm", "absent: DeepSpeed's default, true at stage 3 only (zero/config.py overlap_comm_valid at "+dsCommit+")")
	if v, ok := z["overlap_comm"]; ok && v != nil {
		b, err := d.boolean("zero_optimization.overlap_comm", v)
		if err != nil {
			return false, err
		}
		overlap = b
	}
	if stage == 0 {
		overlap = false
		ofrom = "stage 0 all-reduces the gradients after the backward (engine.py allreduce_gradients at " + dsCommit + ")"
	}
	d.set("communication.overlap", strconv.FormatBool(overlap), ofrom)

	if stage == 3 {
		if err := d.prefetch(z); err != nil {
			return false, err
		}
	}
	if err := d.zeroPP(z, stage); err != nil {
		return false, err
	}
	if err := d.memoryEfficientLinear(z, stage); err != nil {
		return false, err
	}
	return d.offload(z, stage)
}

func zeroFromZ(z map[string]any, key, absent string) string {
	if v, ok := z[key]; ok && v != nil {
		return "zero_optimization." + key + " " + describeJSON(v)
	}
	return "zero_optimization." + key + " " + absent
}

// dsIsDefault reports whether v equals DeepSpeed's default def.
func dsIsDefault(v, def any) bool {
	switch x := def.(type) {
	case bool:
		return v == x
	case float64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		return err == nil && f == x
	}
	return false
}

// prefetch sizes communication.prefetch_depth from
// stage3_prefetch_bucket_size and stage3_max_live_parameters. DeepSpeed's
// PartitionedParameterCoordinator.fetch_sub_module
// (zero/partitioned_param_coordinator.py at dsCommit) prefetches nothing
// when prefetch_bucket_size is 0, else, at every module it runs, up to
// min(max_live_parameters − available, prefetch_bucket_size) elements more
// in trace order; zerosim's unit is a whole unit of the list, so the depth
// is a count of units (dsPrefetchDepth), at least 1.
func (d *dsReader) prefetch(z map[string]any) error {
	read := func(def int64, hfFactor float64, names ...string) (int64, string, error) {
		k, v, ok := zkey(z, names...)
		if !ok {
			return def, fmt.Sprintf("%s absent: %d, DeepSpeed's default", names[len(names)-1], def), nil
		}
		if isAuto(v) {
			if hfFactor == 0 {
				return 0, "", d.errorf("zero_optimization.%s is \"auto\": give a number of parameters", k)
			}
			if d.o.Hidden == 0 {
				return 0, "", d.errorf("zero_optimization.%s is \"auto\" (the Hugging Face Trainer sets 0.9·hidden_size²): give a number of elements, or pass --hf config.json", k)
			}
			h := float64(d.o.Hidden)
			n := int64(hfFactor * h * h)
			return n, fmt.Sprintf("%s \"auto\": 0.9·hidden_size² = %d, as the Hugging Face Trainer fills it", k, n), nil
		}
		n, err := d.whole("zero_optimization."+k, v, 0, 1<<62)
		return n, fmt.Sprintf("%s %s", k, describeJSON(v)), err
	}
	pb, pfrom, err := read(5e7, 0.9, "prefetch_bucket_size", "stage3_prefetch_bucket_size")
	if err != nil {
		return err
	}
	ml, mfrom, err := read(1e9, 0, "max_live_parameters", "stage3_max_live_parameters")
	if err != nil {
		return err
	}
	e := min(pb, ml)
	from := "zero_optimization." + pfrom + ", " + mfrom
	var depth int64
	switch {
	case e == 0:
		from += ": DeepSpeed prefetches nothing"
	case len(d.o.Units) > 1:
		var w dsWindow
		depth, w = dsPrefetchDepth(d.o.Units, pb, ml)
		refill := fmt.Sprintf(": DeepSpeed refills its prefetch by up to %d elements at each module and holds at most %d", pb, ml)
		if w.at < 0 {
			from += fmt.Sprintf("%s; once that window settles it holds all that follows any unit, up to %d units", refill, depth)
			break
		}
		list := d.o.Units
		after := "after"
		if w.backward {
			list, after = slices.Clone(list), "in the backward, after"
			slices.Reverse(list)
		}
		if w.n == 0 && w.ahead <= 0 {
			// max_params_to_prefetch = min(max_live − available, bucket)
			// is not positive there: nothing is prefetched, and the next
			// unit is gathered when it runs. It said "holds 0 elements
			// ahead, part of block.0, so the next unit" (QA17 L8).
			why := fmt.Sprintf("what it holds fills stage3_max_live_parameters %d", ml)
			if p := int64(list[w.at].Params); p >= ml {
				why = fmt.Sprintf("%s's own %d parameters fill stage3_max_live_parameters %d", list[w.at].Name, p, ml)
			}
			from += fmt.Sprintf("%s; once that window settles, %s %s it prefetches nothing (%s), so %s is gathered when it runs: 1, the least depth zerosim models, prefetches it, more than DeepSpeed there", refill, after, list[w.at].Name, why, list[w.at+1].Name)
			break
		}
		if w.n == 0 {
			from += fmt.Sprintf("%s; once that window settles, %s %s it holds %d elements ahead, part of %s (%d parameters), so the next unit", refill, after, list[w.at].Name, w.ahead, list[w.at+1].Name, int64(list[w.at+1].Params))
			break
		}
		var sum int64
		for _, u := range list[w.at+1 : w.at+w.n+1] {
			sum += int64(u.Params)
		}
		span := list[w.at+1].Name
		if w.n > 1 {
			span += " … " + list[w.at+w.n].Name
		}
		from += fmt.Sprintf("%s; once that window settles, %s %s it holds %d elements ahead, %d whole unit%s (%s, %d parameters), the fewest after any unit, so no unit holds more than DeepSpeed", refill, after, list[w.at].Name, w.ahead, w.n, plural(int64(w.n)), span, sum)
	default:
		depth = 1
		from += ": at least the next block"
		d.note("communication.prefetch_depth 1 stands for DeepSpeed's prefetch of %d elements: right when a transformer block holds at least that many parameters (pass --hf config.json to size it)", e)
	}
	d.set("communication.prefetch_depth", strconv.FormatInt(depth, 10), from)
	return nil
}

// dsWindow is where dsPrefetchDepth's least count is reached: after unit
// at (of the list reversed when backward; -1 when no unit bounds it), n
// whole units, ahead the elements DeepSpeed has gathered beyond at.
type dsWindow struct {
	at, n    int
	ahead    int64
	backward bool
}

// dsPrefetchDepth is the one prefetch depth, in units, that stands for
// DeepSpeed's prefetch with prefetch_bucket_size bucket and
// max_live_parameters maxLive over units (forward order).
//
// fetch_sub_module at dsCommit (the function is cited at prefetch), run at
// every module's forward (and backward), gathers the module's own
// parameters, then pops the trace queue while "numel_prefetching <
// max_params_to_prefetch", where max_params_to_prefetch =
// min(max_n_available_params − n_available_params, prefetch_bucket_size).
// numel_prefetching starts at 0 in every call, but the queue carries on
// where the previous call stopped, and __n_available_params counts every
// parameter gathered (or in flight) and not yet released
// (__all_gather_params_ adds, __release_param subtracts). So each call
// adds up to a bucket beyond what is already ahead, and only
// max_live_parameters bounds the look-ahead across calls. Per unit u, with
// A the elements gathered beyond the unit before it (so including u):
//
//	G = max(A, P(u)) + min(bucket, maxLive − max(A, P(u)))  (the refill, when positive)
//	A(u) = min(G, what remains from u) − P(u)
//
// When the bucket covers what a unit consumes (P ≤ bucket), A grows
// step by step until maxLive binds: A(u) = maxLive − P(u) where that
// leaves room for a bucket, else the previous A plus a bucket. When it
// does not, A stays near one bucket: A(u) = min(bucket, maxLive − P(u)),
// part of the next unit. zerosim runs A from 0 (as each forward starts)
// and from maxLive (the most it can be), which agree from the first unit
// where they meet. When maxLive binds there, or the window there holds
// all that follows and more than a bucket, the one from 0 grew to it and
// the settled A is the one from maxLive (a MoE list's attention and
// experts units grow together when their sum is under two buckets:
// Qwen3-30B-A3B's 19,140,864 and 603,979,776 against 5e8); otherwise the
// one from maxLive shrank to it and the settled A is the one from 0 (one
// bucket after the first unit; Llama 2 7B's 202,383,360-parameter blocks
// against 2e8, the one from maxLive losing 2,383,360 a block).
//
// The readings that make zerosim hold no more than DeepSpeed once the
// window has settled: one refill per unit (DeepSpeed refills at each
// module of it, several per transformer block, and releases a unit's
// modules as they finish, so it holds at least A(u)); the units'
// parameters all counted in n_available (DeepSpeed's persistent
// parameters, below param_persistence_threshold, are never gathered and
// not counted, which leaves it more room); and only whole units, those
// whose parameters all lie within A(u). zerosim's depth d gathers the d
// units that follow everywhere, so the depth is the least whole-unit
// count over the units with a unit beyond their window, on the list and
// on the list reversed (the backward, which the deepspeed stack's
// backward_prefetch_depth follows), at least 1 (DeepSpeed gathers part of
// the next unit when the bucket is under a unit) and at most maxPrefetch.
//
// Not modelled: at the start of each forward (reset_step empties the
// queue) the growing look-ahead starts from one bucket, so the first
// units hold less in DeepSpeed than the depth gives. Open: how many
// refills a unit gets (its module count) is not in the unit list, so
// where the bucket is below a unit's parameters but above what its
// modules pop per call, DeepSpeed's window can grow to maxLive while
// zerosim keeps one bucket (HF "auto" on Llama 3.1 8B: 0.9·4096² =
// 15,099,494, each call pops q_proj's 16,777,216 or gate_proj's
// 58,720,256 whole, so the block's seven weights take about 5 of its 13
// module calls); a DeepSpeed debug log ("-prefetch:" lines) would settle
// it.
func dsPrefetchDepth(units []Layer, bucket, maxLive int64) (depth int64, w dsWindow) {
	ps := make([]int64, len(units))
	for i, u := range units {
		ps[i] = int64(u.Params)
	}
	w = dsLeastWindow(ps, bucket, maxLive)
	rev := slices.Clone(ps)
	slices.Reverse(rev)
	if b := dsLeastWindow(rev, bucket, maxLive); b.n < w.n || w.at < 0 && b.at >= 0 && b.n == w.n {
		w, w.backward = b, true
	}
	return int64(max(w.n, 1)), w
}

// dsLeastWindow is dsPrefetchDepth on one order of the list.
func dsLeastWindow(ps []int64, bucket, maxLive int64) dsWindow {
	L := len(ps)
	// The regime: the look-ahead from 0 (each forward's start) and the one
	// from maxLive (the most it can be) run the same from the first unit
	// where they meet. The one from 0 grew to it when there maxLive binds,
	// or it holds all that follows and more than one bucket: the settled
	// window is then the one from maxLive. Otherwise the one from maxLive
	// shrank to the one from 0 (one bucket), the settled window.
	rest := dsRest(ps)
	cold, warm := dsAhead(ps, rest, bucket, maxLive, 0), dsAhead(ps, rest, bucket, maxLive, maxLive)
	ahead := cold
	for u := L - 1; u >= 0; u-- {
		if cold[u] == warm[u] && (u == 0 || cold[u-1] != warm[u-1]) {
			if cold[u]+ps[u] == maxLive || cold[u] == rest[u+1] && cold[u] > bucket {
				ahead = warm
			}
			break
		}
	}
	w := dsWindow{at: -1, n: min(L-1, maxPrefetch)}
	for u := range L {
		n, sum := 0, int64(0)
		for j := u + 1; j < L && n < maxPrefetch && ps[j] <= ahead[u]-sum; j++ {
			sum += ps[j]
			n++
		}
		if n < maxPrefetch && u+n+1 < L && (w.at < 0 || n < w.n) {
			w = dsWindow{at: u, n: n, ahead: ahead[u]}
		}
	}
	return w
}

// dsRest is what remains of ps from each unit on: rest[u] = ps[u] + … +
// ps[len-1] (rest[len] = 0), capped at math.MaxInt64.
func dsRest(ps []int64) []int64 {
	rest := make([]int64, len(ps)+1)
	for u := len(ps) - 1; u >= 0; u-- {
		rest[u] = rest[u+1] + min(ps[u], math.MaxInt64-rest[u+1])
	}
	return rest
}

// dsAhead is A(u) of dsPrefetchDepth for every unit, starting from a0
// ahead; rest is dsRest(ps). Every sum stays within maxLive or what
// remains of the list.
func dsAhead(ps, rest []int64, bucket, maxLive, a0 int64) []int64 {
	out := make([]int64, len(ps))
	a := a0
	for u, p := range ps {
		g := max(a, p)
		if g < maxLive {
			g += min(bucket, maxLive-g)
		}
		g = min(g, rest[u])
		out[u] = g - p
		a = out[u]
	}
	return out
}

// zeroPP reads the ZeRO++ keys, which only the stage-3 engine reads
// (scenarios/zeropp.go).
func (d *dsReader) zeroPP(z map[string]any, stage int64) error {
	for _, k := range []string{"zero_quantized_weights", "zero_quantized_gradients"} {
		v, ok := z[k]
		if !ok || v == nil {
			continue
		}
		b, err := d.boolean("zero_optimization."+k, v)
		if err != nil {
			return err
		}
		if !b {
			continue
		}
		if stage != 3 {
			d.note("zero_optimization.%s: ZeRO++ runs at stage 3 only, so DeepSpeed ignores it at stage %d", k, stage)
			continue
		}
		d.set("communication."+k, "true", "zero_optimization."+k+" true")
	}
	if v, ok := z["zero_hpz_partition_size"]; ok && v != nil {
		n, err := d.whole("zero_optimization.zero_hpz_partition_size", v, 0, 1<<22)
		if err != nil {
			return err
		}
		switch {
		case n <= 1:
		case stage != 3:
			d.note("zero_optimization.zero_hpz_partition_size: ZeRO++ runs at stage 3 only, so DeepSpeed ignores it at stage %d", stage)
		default:
			d.set("communication.zero_hpz_partition_size", strconv.FormatInt(n, 10), "zero_optimization.zero_hpz_partition_size "+describeJSON(v))
		}
	}
	return nil
}

// memoryEfficientLinear reads zero_optimization.memory_efficient_linear
// (zero/config.py at dsCommit, default true), which only the stage-3 engine
// reads: false leaves every nn.Linear on aten's path, which keeps the
// gathered weights to their backward (memory/savedweights.go). Before
// DeepSpeed 617061d6b (2026-07-31) a model built outside
// deepspeed.zero.Init never got the wrapper either (OutsideZeroInit).
func (d *dsReader) memoryEfficientLinear(z map[string]any, stage int64) error {
	on, from, key := true, "", "zero_optimization.memory_efficient_linear false"
	if v, ok := z["memory_efficient_linear"]; ok && v != nil {
		b, err := d.boolean("zero_optimization.memory_efficient_linear", v)
		if err != nil {
			return err
		}
		on, from = b, "zero_optimization.memory_efficient_linear false: DeepSpeed's ZeRO-3 leaves torch.nn.functional.linear alone, and autograd keeps each released nn.Linear weight through its weight.t() view to the backward"
	}
	if on && d.o.OutsideZeroInit {
		on, key = false, "--outside-zero-init"
		from = "--outside-zero-init: the model is built outside deepspeed.zero.Init, where a DeepSpeed before 617061d6b (2026-07-31) does not install its memory-efficient linear (partition_parameters.py patch_init_and_builtins)"
	}
	if on {
		return nil
	}
	if stage != 3 {
		d.note("%s: only DeepSpeed's ZeRO-3 installs its linear wrapper, so it changes nothing at stage %d", key, stage)
		return nil
	}
	d.set("communication.memory_efficient_linear", "false", from)
	return nil
}

// offload reads offload_optimizer and offload_param (and the deprecated
// cpu_offload, cpu_offload_param: zero/config.py at dsCommit). DeepSpeed
// offloads the optimizer at stages 1–3 and parameters at stage 3 only
// (offload_config.py).
func (d *dsReader) offload(z map[string]any, stage int64) (bool, error) {
	device := func(section, deprecated string) (OffloadDevice, string, error) {
		s, err := d.object("zero_optimization."+section, z[section])
		if err != nil {
			return "", "", err
		}
		if s == nil {
			v, ok := z[deprecated]
			if !ok || v == nil {
				return "", "", nil
			}
			b, err := d.boolean("zero_optimization."+deprecated, v)
			if err != nil || !b {
				return "", "", err
			}
			return OffloadCPU, "zero_optimization." + deprecated + " true (deprecated: device cpu)", nil
		}
		path := "zero_optimization." + section + ".device"
		v, ok := s["device"]
		if !ok || v == nil {
			return "", "", nil
		}
		str, isStr := v.(string)
		switch {
		case !isStr:
			return "", "", d.errorf("%s is %s, not a device (use none, cpu or nvme)", path, describeJSON(v))
		case str == "none":
			return "", "", nil
		case str == "cpu":
			return OffloadCPU, path + " cpu", nil
		case str == "nvme":
			return OffloadNVMe, path + " nvme", nil
		}
		return "", "", d.errorf("%s %s is unknown (use none, cpu or nvme)", path, describeJSON(v))
	}
	opt, ofrom, err := device("offload_optimizer", "cpu_offload")
	if err != nil {
		return false, err
	}
	par, pfrom, err := device("offload_param", "cpu_offload_param")
	if err != nil {
		return false, err
	}
	if opt != "" {
		if stage == 0 {
			d.note("zero_optimization.offload_optimizer: DeepSpeed offloads the optimizer at ZeRO stages 1–3 only, so it is ignored at stage 0")
			opt = ""
		} else {
			d.pending = append(d.pending, ImportSetting{"offload.optimizer", string(opt), ofrom})
		}
		if s, _ := z["offload_optimizer"].(map[string]any); s != nil && opt != "" {
			if r, ok := s["ratio"].(json.Number); ok && r.String() != "1" && r.String() != "1.0" {
				d.note("zero_optimization.offload_optimizer.ratio %s: partial optimizer offload is not modelled: zerosim offloads all of it", r)
			}
			if s["super_offload"] == true {
				d.note("zero_optimization.offload_optimizer.super_offload: SuperOffload is not modelled")
			}
			if s["pin_memory"] == false {
				d.note("zero_optimization.offload_optimizer.pin_memory false: pageable copies are not modelled (zerosim's PCIe transfers run at the pinned rate)")
			}
		}
	}
	if par != "" {
		if stage != 3 {
			d.note("zero_optimization.offload_param: DeepSpeed offloads parameters at ZeRO stage 3 only, so it is ignored at stage %d", stage)
		} else {
			d.pending = append(d.pending, ImportSetting{"offload.params", string(par), pfrom})
		}
	}
	return opt != "", nil
}

// moveOffload appends the offload keys after the training ones, so the
// settings stay in scenario order.
func (d *dsReader) moveOffload() {
	d.out.Settings = append(d.out.Settings, d.pending...)
	d.pending = nil
}

// optimizer reads the optimizer section. DeepSpeed lowercases the names it
// knows (config.py DEEPSPEED_OPTIMIZERS) and builds Adam and AdamW in
// engine.py _configure_basic_optimizer (at dsCommit): AdamW logic unless
// type is "Adam" with adam_w_mode false (ADAM_W_MODE_DEFAULT True);
// torch.optim.Adam/AdamW when params.torch_adam is true, DeepSpeedCPUAdam
// when the optimizer is offloaded, else FusedAdam.
func (d *dsReader) optimizer(m map[string]any, offloaded bool) error {
	o, err := d.object("optimizer", m["optimizer"])
	if err != nil {
		return err
	}
	if o == nil {
		d.note("no optimizer section: DeepSpeed steps the optimizer the training script builds and passes to deepspeed.initialize; the deepspeed stack's AdamW (FusedAdam) stands for it")
		return nil
	}
	tv, ok := o["type"]
	if !ok || tv == nil {
		d.note("optimizer has no type: DeepSpeed then steps the training script's optimizer; the deepspeed stack's AdamW (FusedAdam) stands for it")
		return nil
	}
	name, isStr := tv.(string)
	if !isStr {
		return d.errorf("optimizer.type is %s, not a name (use \"AdamW\" or \"Adam\")", describeJSON(tv))
	}
	params, err := d.object("optimizer.params", o["params"])
	if err != nil {
		return err
	}
	lower := strings.ToLower(name)
	if lower != "adam" && lower != "adamw" {
		d.note("optimizer.type %s is not modelled (zerosim models Adam and AdamW): the deepspeed stack's AdamW stands for it", strconv.Quote(clip(name)))
		return nil
	}
	if _, ok := params["max_grad_norm"]; ok {
		return d.errorf("optimizer.params.max_grad_norm is refused by DeepSpeed (engine.py _configure_basic_optimizer at %s): use the top-level gradient_clipping", dsCommit)
	}
	wMode := true
	if v, ok := params["adam_w_mode"]; ok && v != nil {
		if wMode, err = d.boolean("optimizer.params.adam_w_mode", v); err != nil {
			return err
		}
	}
	torchAdam := false
	if v, ok := params["torch_adam"]; ok && v != nil {
		if torchAdam, err = d.boolean("optimizer.params.torch_adam", v); err != nil {
			return err
		}
	}
	opt, ofrom := OptimizerAdamW, "optimizer.type "+strconv.Quote(name)
	if lower == "adam" {
		if wMode {
			ofrom += " with adam_w_mode true (DeepSpeed's default: AdamW, engine.py _configure_basic_optimizer at " + dsCommit + ")"
		} else {
			opt, ofrom = OptimizerAdam, ofrom+" with adam_w_mode false"
		}
	}
	d.set("training.optimizer", string(opt), ofrom)
	switch {
	case offloaded:
		// DeepSpeedCPUAdam steps on the host (offload.optimizer).
	case torchAdam:
		d.set("training.optimizer_impl", string(OptimizerForeach), "optimizer.params.torch_adam true: torch.optim.Adam/AdamW, foreach by default on CUDA")
	default:
		d.set("training.optimizer_impl", string(OptimizerFused), "DeepSpeed builds Adam and AdamW as FusedAdam (engine.py _configure_basic_optimizer at "+dsCommit+")")
	}
	if params == nil {
		return nil
	}
	float := func(key, yamlKey string, lo float64, loOpen bool, hi float64) error {
		v, ok := params[key]
		if !ok || v == nil {
			return nil
		}
		if isAuto(v) {
			d.autoOpt = append(d.autoOpt, key)
			return nil
		}
		f, err := d.number("optimizer.params."+key, v, "0.1")
		if err != nil {
			return err
		}
		if f < lo || (loOpen && f == lo) || f > hi {
			return d.errorf("optimizer.params.%s=%s is out of zerosim's range for training.%s (%s)", key, clip(v.(json.Number).String()), yamlKey, dsRange(lo, loOpen, hi))
		}
		d.set("training."+yamlKey, strconv.FormatFloat(f, 'g', -1, 64), "optimizer.params."+key+" "+describeJSON(v))
		return nil
	}
	if err := float("lr", "lr", 0, true, math.MaxFloat64); err != nil {
		return err
	}
	if v, ok := params["betas"]; ok && v != nil {
		if isAuto(v) {
			d.autoOpt = append(d.autoOpt, "betas")
		} else {
			bs, isList := v.([]any)
			if !isList || len(bs) != 2 {
				return d.errorf("optimizer.params.betas is %s, not a list of two numbers (use [0.9, 0.999])", describeJSON(v))
			}
			for i, b := range bs {
				f, err := d.number(fmt.Sprintf("optimizer.params.betas[%d]", i), b, "0.9")
				if err != nil {
					return err
				}
				if f < 0 || f >= 1 {
					return d.errorf("optimizer.params.betas[%d]=%s is out of range (use [0, 1))", i, clip(b.(json.Number).String()))
				}
				d.set(fmt.Sprintf("training.beta%d", i+1), strconv.FormatFloat(f, 'g', -1, 64), fmt.Sprintf("optimizer.params.betas[%d] %s", i, describeJSON(b)))
			}
		}
	}
	if err := float("eps", "eps", 0, true, math.MaxFloat64); err != nil {
		return err
	}
	if err := float("weight_decay", "weight_decay", 0, false, math.MaxFloat64); err != nil {
		return err
	}
	if params["amsgrad"] == true {
		d.note("optimizer.params.amsgrad: AMSGrad's extra state is not modelled")
	}
	return nil
}

func dsRange(lo float64, loOpen bool, hi float64) string {
	if hi == math.MaxFloat64 {
		if loOpen {
			return fmt.Sprintf("> %g", lo)
		}
		return fmt.Sprintf("≥ %g", lo)
	}
	return fmt.Sprintf("%g to %g", lo, hi)
}

// clipping reads gradient_clipping: DeepSpeed clips by the global norm
// when it is > 0 (engine.py); absent it is GRADIENT_CLIPPING_DEFAULT,
// 1.0 since 442166559 (v0.19.3; 0, no clipping, before: constants.py at
// dsCommit). "auto" is the Trainer's --max_grad_norm, default 1.0.
func (d *dsReader) clipping(m map[string]any) error {
	v, ok := m["gradient_clipping"]
	switch {
	case !ok || v == nil:
		d.set("training.grad_clip", string(GradClipNorm), "gradient_clipping absent: DeepSpeed's default 1.0 (constants.py at "+dsCommit+")")
		d.note("gradient_clipping absent: DeepSpeed clips at 1.0 by default since v0.19.3 (442166559), and not at all before it: set training.grad_clip: none for an older DeepSpeed")
		return nil
	case isAuto(v):
		d.set("training.grad_clip", string(GradClipNorm), "gradient_clipping \"auto\": the Hugging Face Trainer's max_grad_norm, default 1.0")
		d.note("gradient_clipping \"auto\" is taken as the Trainer's default max_grad_norm 1.0: set training.grad_clip: none if you pass --max_grad_norm 0")
		return nil
	}
	f, err := d.number("gradient_clipping", v, "1.0")
	if err != nil {
		return err
	}
	c := GradClipNone
	if f > 0 {
		c = GradClipNorm
	}
	d.set("training.grad_clip", string(c), "gradient_clipping "+describeJSON(v))
	if f > 0 && f != DefaultMaxGradNorm {
		d.set("training.max_grad_norm", fmtFloat(f), "gradient_clipping "+describeJSON(v))
	}
	return nil
}

// dsBytes writes a byte count in the largest SI unit that holds it
// exactly, else the largest binary one, else in bytes.
func dsBytes(b int64) string {
	for _, u := range []struct {
		n   int64
		suf string
	}{{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.suf
		}
	}
	for _, u := range []struct {
		n   int64
		suf string
	}{{1 << 50, "PiB"}, {1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.suf
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}
