package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Stack presets: `stack: NAME` fills in the keys that describe how a
// training stack runs ZeRO (the forward/backward boundary, the shard and
// reduction dtypes, the optimizer step, the attention and loss kernels,
// checkpointing's early stop) wherever the file and --set leave them
// unset, as a model preset fills in a model's dimensions. The values are
// docs/stacks.md's fragments without their parallelism keys: those of the
// first four stacks are the validation templates' (testdata/validation,
// each key cited there from the stack's source), Megatron-LM's come from
// its code (docs/stacks.md); TestStacksDoc holds all three together.
// Parallelism (stage, dp, k, cp) stays the user's.

// stackKey is one key a stack preset fills in: its dotted path and YAML
// value, and the ZeRO stages it applies at (nil: every stage), for a stack
// whose default depends on the stage.
type stackKey struct {
	path, value string
	stages      []int
	// unless are keys whose presence in the file or a --set leaves this
	// one unset too: the keys that describe one precision together
	// (param_dtype with autocast under DDP).
	unless []string
	// notWithEP leaves the key unset under expert parallelism
	// (parallelism.ep > 1): autocast does not go with it
	// (resolveAutocast: which routed experts a rank casts is not
	// modelled), so there the precision stays the loader's default.
	notWithEP bool
	// valueOf, when set, is the value the file's (or --set's) other keys
	// make of value; "" leaves the key unset.
	valueOf func(root *yaml.Node, value string) string
}

// applies reports whether k fills in its key at ZeRO stage stage (-1: the
// stage is unknown or invalid, and the loader refuses it anyway).
func (k stackKey) applies(stage int) bool {
	return k.stages == nil || slices.Contains(k.stages, stage)
}

// stackPresets are the stack presets, by name.
var stackPresets = map[string][]stackKey{
	// PyTorch FSDP2 as torchtitan 9dec370 runs it
	// (testdata/validation/torchtitan-llama3.1-8b-h100.yaml). Files are
	// pytorch/torchtitan's at 9dec370ad26b5f8e9a7333a0e36165018262644b. Current
	// torchtitan differs in three keys the preset leaves to the user
	// (docs/stacks.md): communication.boundary fsdp2_head since 83e6941;
	// since 786e26f8e, training.loss_chunks 8 for its Llama 3 configs
	// (ChunkedLossWrapper, scenarios/losschunks.go); and, on PyTorch 2.9
	// or later, training.norm_impl aten_fused for its nn.RMSNorm (from
	// 3b39d7ab0; 9dec370's own RMSNorm is the preset's fp32:
	// scenarios.NormATen); and in one it sets, training.op_save_abs,
	// false since 88247277c.
	"torchtitan": {
		// torchtitan/parallelisms/parallelize_llama.py:309-339, apply_fsdp:
		// fully_shard (FSDP2) on each block and the root, with
		// MixedPrecisionPolicy(param_dtype, reduce_dtype) over fp32
		// parameters; --training.mixed_precision_reduce defaults to
		// float32 (torchtitan/config_manager.py:389-391).
		{path: "communication.boundary", value: "fsdp2"},
		{path: "training.shard_dtype", value: "fp32"},
		{path: "training.reduce_dtype", value: "fp32"},
		// build_optimizers: torch.optim.AdamW with "fused": fused,
		// "foreach": not fused (torchtitan/optimizer.py:132-138), and
		// --optimizer.fused a store_true flag, off by default
		// (config_manager.py:194).
		{path: "training.optimizer", value: "adamw"},
		{path: "training.optimizer_impl", value: "foreach"},
		// build_optimizers' weight_decay 0.1 (torchtitan/optimizer.py:136).
		{path: "training.weight_decay", value: "0.1"},
		// utils.clip_grad_norm_ every step (train.py:311), --training.
		// max_norm 1.0 (config_manager.py:231-234).
		{path: "training.grad_clip", value: "norm"},
		// F.scaled_dot_product_attention(xq, xk, xv, is_causal=True)
		// (torchtitan/models/llama/model.py:209): its flash backend,
		// FlashAttention-2. Kept with the preset's other 9dec370 keys:
		// later torchtitans asked SDPA for cuDNN's attention first
		// (3b85aa31 on Blackwell, 6a3a9da9 everywhere) and from 16954571
		// (2026-06-09) run FlexAttention (attention_kernel: flex)
		// (docs/stacks.md, "Attention by torchtitan era"; run's attention
		// line and compare's attention note say which).
		{path: "training.attention", value: "sdpa"},
		{path: "training.attention_kernel", value: "fa2"},
		// ptd_checkpoint_wrapper(module, preserve_rng_state=False)
		// (parallelize_llama.py:234, 272-283): torch's non-reentrant
		// checkpoint_wrapper, whose early stop zero/computeplan.go cites.
		{path: "training.recompute_early_stop", value: "true"},
		// The op policy's _save_list holds torch.ops.aten.abs.default
		// (parallelize_llama.py:214-223), from 87e2c09c4 (2024-11-26) to
		// 88247277c (2025-02-06): under eager torchao float8 it keeps
		// the 16-bit abs of every tensor the Float8Linears cast
		// (Training.OpSaveAbs; nothing otherwise).
		{path: "training.op_save_abs", value: "true"},
		// torchtitan's launcher sets PYTORCH_CUDA_ALLOC_CONF=
		// "expandable_segments:True" since a5e57e4a9 (pytorch/torchtitan#643,
		// run_llama_train.sh at 9dec370, run_train.sh at e7c0cae934df).
		{path: "memory.expandable_segments", value: "true"},
		// Stage 0 is DDP: torchtitan's apply_ddp calls replicate(model,
		// device_mesh=dp_mesh, bucket_cap_mb=100)
		// (torchtitan/models/llama3/infra/parallelize.py:372 at
		// 238fa9953e4aec2a62582121564273d7cbb1e9f1): 100 MiB buckets.
		// FSDP2 (stages 2 and 3) reduces one parameter group per
		// post-backward and has no bucket size.
		{path: "communication.bucket_size", value: "100MiB", stages: []int{0}},
		// DDP's mixed precision is torch.autocast over the fp32 model:
		// maybe_enable_amp returns torch.autocast(dtype=
		// mixed_precision_param) when FSDP is not enabled
		// (torchtitan/distributed/utils.py lines 243-263 at
		// 238fa9953e4aec2a62582121564273d7cbb1e9f1), so fp32 parameters,
		// gradients and AdamW states, no master, as zerosim import
		// torchtitan writes it (docs/stacks.md; qauser32 L2: the preset
		// left stage 0 at bf16 parameters beside an fp32 master, 2 B a
		// parameter more at rest). A file that gives the precision itself
		// (training.dtype bfloat16 is master_dtype: none) keeps it.
		{path: "training.param_dtype", value: "fp32", stages: []int{0}, unless: ddpPrecisionKeys, notWithEP: true},
		{path: "training.autocast", value: "bf16", stages: []int{0}, unless: ddpPrecisionKeys, notWithEP: true},
	},
	// PyTorch FSDP1 under Composer, llm-foundry's trainer, on torch 2.1 or
	// later (testdata/validation/llm-foundry-mpt-a100-80gb.yaml: the
	// benchmark sweep of mosaicml/llm-foundry
	// 061f2c7ce64e655100286584a7629e2a09f827ba with Composer
	// 784f50be7fa8617ed562704c0207316ca2284e71).
	"llm-foundry": {
		// composer/trainer/dist_strategy.py at 784f50be: prepare_fsdp_module
		// wraps each block in torch's FullyShardedDataParallel (FSDP1).
		{path: "communication.boundary", value: "fsdp1"},
		// Composer's FSDPConfig defaults backward_prefetch 'BACKWARD_POST'
		// and forward_prefetch False (composer/utils/parallelism.py:21,26
		// at 008dac709c5da87a4d3e425fea6743c992fc5331; setdefault of the
		// same in dist_strategy.py:131,134 at 784f50be): one block gathered
		// ahead in forward, none issued early in backward.
		{path: "communication.prefetch_depth", value: "1"},
		{path: "communication.backward_prefetch_depth", value: "0"},
		// get_mixed_precision DEFAULT (composer/trainer/mosaic_fsdp.py:85 at
		// 784f50be): the flat parameter stays in the model's fp32.
		{path: "training.shard_dtype", value: "fp32"},
		// decoupled_adamw (composer/optim/decoupled_weight_decay.py at
		// 784f50be) with the gradient_clipping algorithm, clipping_type norm
		// (composer/algorithms/gradient_clipping/gradient_clipping.py at
		// 784f50be), as the yamls scripts/train/yamls/pretrain/mpt-*.yaml
		// at 061f2c7c set them.
		{path: "training.optimizer_impl", value: "composer"},
		{path: "training.grad_clip", value: "norm"},
		// FSDP1's FlatParameter: each unit's parameters are views of it.
		{path: "training.flat_param_views", value: "true"},
		// ComposerMPTCausalLM's loss_fn default 'fused_crossentropy'
		// (llmfoundry/models/mpt/modeling_mpt.py:723 at 061f2c7c).
		{path: "training.cross_entropy", value: "fused"},
		// checkpoint_wrapper with CheckpointImpl.NO_REENTRANT when
		// activation_checkpointing_reentrant is false
		// (dist_strategy.py:491-499 at 784f50be), non-reentrant
		// checkpointing, whose early stop zero/computeplan.go cites.
		{path: "training.recompute_early_stop", value: "true"},
		// Composer keeps the model's outputs (the logits) through the
		// backward: _train_microbatch assigns self.state.outputs =
		// self.state.model(self.state.batch) before
		// microbatch_loss.backward() and hands them to
		// _eval_train_metrics after it, and nothing clears them until the
		// next micro-batch's forward rebinds the attribute
		// (composer/trainer/trainer.py lines 2398, 2463, 2470 at
		// 784f50be; 2286, 2336, 2343 at v0.13.4, d80c37dc; 2403, 2468,
		// 2475 at v0.16.3, c82da77f; 2927, 2991, 3006 at v0.32.1,
		// 4bfb5fc4, and at 6405188805a0054b4551ec49e4919c54c971d0e8,
		// 2026-04-29). The model returns them in param_dtype: bf16 by
		// default, the file's 16-bit dtype by logitsDType.
		{path: "training.keep_logits", value: "bf16", valueOf: logitsDType},
		// Composer updates the model's train metrics on every micro-batch
		// after its backward (_train_microbatch → _eval_train_metrics,
		// composer/trainer/trainer.py lines 2157-2169 and 2470 at
		// 784f50be), and ComposerMPTCausalLM has two,
		// LanguageCrossEntropy and LanguagePerplexity, unless
		// use_train_metrics is false (llmfoundry/models/mpt/
		// modeling_mpt.py lines 697-699 at 061f2c7c): two cross-entropies
		// over the logits (scenarios/trainmetrics.go).
		{path: "training.train_metrics", value: "2"},
	},
	// PyTorch FSDP1 as IBM's fms-fsdp runs it
	// (testdata/validation/fms-fsdp-llama2-a100.yaml). Files are
	// foundation-model-stack/fms-fsdp's at
	// 4ffb9bdfa30e957e339ccfbb617a589fd07c495e (the README the template's
	// rows come from).
	"fms-fsdp": {
		// main_training.py:82-96 wraps the model in torch's
		// FullyShardedDataParallel (FSDP1) with limit_all_gathers=True and
		// neither backward_prefetch nor forward_prefetch: torch's defaults,
		// BACKWARD_PRE (one unit ahead in backward) and False (the host one
		// unit ahead in forward); limit_all_gathers' rate limiter allows
		// two all-gathers in flight (DefaultPrefetchDepth and
		// DefaultMaxInflightAllGathers cite torch's lines).
		{path: "communication.boundary", value: "fsdp1"},
		{path: "communication.prefetch_depth", value: "1"},
		{path: "communication.backward_prefetch_depth", value: "1"},
		{path: "communication.max_inflight_allgathers", value: "2"},
		// The model is built in fp32 (main_training.py:58-64) and
		// get_policies picks bfSixteen (fms_fsdp/utils/train_utils.py:172;
		// fms_fsdp/policies/mixed_precision.py:11-15): the flat parameter
		// stays fp32, gathered in bf16.
		{path: "training.shard_dtype", value: "fp32"},
		// optim.AdamW(..., betas=(0.9, 0.95), weight_decay=0.1) with no
		// foreach or fused argument (main_training.py:118-120; the same
		// in main_training_llama.py at 5a296afe42f9, the latest read):
		// torch's foreach implementation on CUDA, weight decay 0.1 on
		// every run.
		{path: "training.optimizer", value: "adamw"},
		{path: "training.optimizer_impl", value: "foreach"},
		{path: "training.weight_decay", value: "0.1"},
		// model.clip_grad_norm_(cfg.grad_clip_thresh) every step
		// (fms_fsdp/utils/train_utils.py:73; grad_clip_thresh 1.0,
		// fms_fsdp/config/training.py:32).
		{path: "training.grad_clip", value: "norm"},
		{path: "training.flat_param_views", value: "true"},
		// README.md:5: "SDPA implementation of Flash attention v2" (ibm-fms'
		// MultiHeadAttention calls F.scaled_dot_product_attention, whose
		// flash backend is FlashAttention-2).
		{path: "training.attention", value: "sdpa"},
		{path: "training.attention_kernel", value: "fa2"},
		// ibm-fms v0.0.3's RotaryEmbedding.adjusted_qk (fms/modules/
		// positions.py at 47bc1850; fms_fsdp/requirements.txt asks for
		// ibm-fms>=0.0.3): the template says more.
		{path: "training.rope_impl", value: "rotation"},
		// fms_fsdp/policies/ac_handler.py:11-14: checkpoint_wrapper with
		// CheckpointImpl.NO_REENTRANT.
		{path: "training.recompute_early_stop", value: "true"},
	},
	// DeepSpeed's ZeRO-3 engine as FlagPerf ran it
	// (testdata/validation/flagperf-llama2-7b-deepspeed-a800.yaml): the
	// values are FlagOpen/FlagPerf's
	// training/benchmarks/llama2_7b/deepspeed/ds_config.json at
	// 6035339a8a745bd8707552286ead48b12432482c, not DeepSpeed's own
	// defaults, where the two differ. `zerosim import deepspeed` writes a
	// run's own ds_config.json with DeepSpeed's defaults for what it leaves
	// out (deepspeed.go).
	"deepspeed": {
		{path: "communication.boundary", value: "deepspeed"},
		// reduce_bucket_size 1e7 elements (ds_config.json:26), 2e7 bytes of
		// bf16 gradients. DeepSpeed's own default is 5e8 elements
		// (DeepSpeedZeroConfig.reduce_bucket_size, deepspeed/runtime/zero/
		// config.py:113 at edaa7221267243c7be7fb49c5d5f5c4fb97b4641): 1 GB
		// of bf16 gradients.
		{path: "communication.bucket_size", value: "20MB"},
		// stage3_prefetch_bucket_size 1e7 elements (ds_config.json:22;
		// DeepSpeed's default 5e7, zero/config.py:215 at edaa7221): at
		// least the next parameter, a whole block here (the template
		// says why one unit ahead is the nearest depth).
		{path: "communication.prefetch_depth", value: "1"},
		// optimizer AdamW (ds_config.json:6-17), which DeepSpeed builds as
		// FusedAdam with adam_w_mode (engine.py _configure_basic_optimizer,
		// 2085-2135 at edaa7221); gradient_clipping 1.0
		// (ds_config.json:31), DeepSpeed's default too (runtime/
		// constants.py:261 GRADIENT_CLIPPING_DEFAULT at edaa7221 is 1.0).
		{path: "training.optimizer", value: "adamw"},
		{path: "training.optimizer_impl", value: "fused"},
		{path: "training.grad_clip", value: "norm"},
		// zero_optimization.overlap_comm defaults to true at stage 3
		// only (DeepSpeedZeroConfig.overlap_comm_valid, "self.overlap_comm
		// = self.stage == ZeroStageEnum.weights", deepspeed/runtime/zero/
		// config.py:383-385 at edaa7221267243c7be7fb49c5d5f5c4fb97b4641),
		// and stage 0 all-reduces after the backward whatever it says
		// (engine.py allreduce_gradients): what `zerosim import deepspeed`
		// writes (deepspeed.go). qa27 M1: the preset left zerosim's
		// overlap on at stages 0-2.
		{path: "communication.overlap", value: "false", stages: []int{0, 1, 2}},
	},
	// Megatron-LM's DDP and distributed optimizer with its defaults
	// (NVIDIA/Megatron-LM core_v0.12.0, d580efc6: docs/stacks.md).
	"megatron": {
		{path: "communication.padding", value: "megatron"},
		{path: "communication.overlap", value: "false"},
		{path: "training.reduce_dtype", value: "fp32"},
		// --optimizer adam is Transformer Engine's (or Apex's) FusedAdam
		// with its default adam_w_mode=True, decoupled weight decay, at
		// --weight-decay 0.01, and --clip-grad 1.0 clips the global norm
		// every step (megatron/core/optimizer/__init__.py and
		// megatron/training/arguments.py at d580efc6): what `zerosim import
		// megatron` writes (readOptimizer). qa20 L6: the preset left
		// zerosim's adam with weight decay 0, so verify checked another
		// optimizer than Megatron's.
		{path: "training.optimizer", value: "adamw"},
		{path: "training.weight_decay", value: "0.01"},
		{path: "training.grad_clip", value: "norm"},
		// --transformer-impl transformer_engine and --attention-backend
		// auto by default (megatron/training/arguments.py at d580efc6):
		// Transformer Engine's choice (zero.RunsAs); under
		// transformer_impl: local, local's kernel (localAttentionOr).
		{path: "training.attention_kernel", value: "te", valueOf: localAttentionOr},
	},
}

// StackNone is the stack key's value for no preset, as absent: what a
// calibration file records for a scenario without one (CalSetupOf).
const StackNone = "none"

// StackNames lists the stack presets in the order the docs give them.
func StackNames() []string {
	return []string{"torchtitan", "llm-foundry", "fms-fsdp", "deepspeed", "megatron"}
}

// stackOrigin prefixes the origin the loader records for a key a stack
// preset filled in, so an error about it names the preset, not a --set.
const stackOrigin = "\x00stack:"

// applyStack fills in the keys of the file's stack preset that neither the
// file nor a --set gave.
func (l *loader) applyStack(root *yaml.Node) error {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	i := findKey(root, "stack")
	if i < 0 {
		return nil
	}
	v := root.Content[i+1]
	names := strings.Join(StackNames(), ", ") + ", or none"
	if v.Kind != yaml.ScalarNode {
		return l.errAt(v, fmt.Sprintf("stack is %s, not a name (use one of %s; docs/stacks.md)", describe(v), names))
	}
	if v.Tag == "!!str" && v.Value == StackNone {
		// No preset, as if the key were absent: --set stack=none takes
		// a file's stack away, so compare --vary stack=none,torchtitan
		// can hold the plain run (qauser s28 L8: no --set could).
		root.Content = slices.Delete(root.Content, i, i+2)
		return nil
	}
	keys, ok := stackPresets[v.Value]
	if !ok {
		// Wrong whatever the other keys hold (QA25 H2).
		e := l.errAt(v, fmt.Sprintf("stack %s is unknown (use one of %s; docs/stacks.md)", describe(v), names))
		e.Path, e.Alone = "stack", true
		return e
	}
	stage := presetStage(root)
	given := map[string]bool{} // the keys the file and --set give
	for _, k := range keys {
		for _, p := range append([]string{k.path}, k.unless...) {
			given[p] = hasPath(root, p)
		}
	}
	ep := presetInt(root, "parallelism", "ep")
	for _, k := range keys {
		if given[k.path] || !k.applies(stage) || slices.ContainsFunc(k.unless, func(p string) bool { return given[p] }) || k.notWithEP && ep > 1 {
			continue
		}
		value := k.value
		if k.valueOf != nil {
			if value = k.valueOf(root, value); value == "" {
				continue
			}
		}
		if err := l.applySet(root, k.path+"="+value); err != nil {
			return err
		}
		l.markStack(root, k.path, "stack "+v.Value+" ("+k.path+"="+value+")")
	}
	return nil
}

// ddpPrecisionKeys are the keys that, given, leave torchtitan's DDP
// precision (fp32 parameters under bf16 autocast) to the file: the
// precision keys, and those modelled over 16-bit parameters only, which
// the loader refuses beside autocast: model groups with their own
// precisions (resolveAutocast), norm_impl aten_fused and liger.
var ddpPrecisionKeys = []string{"training.param_dtype", "training.autocast", "training.master_dtype", "training.fp8",
	"model.groups", "training.norm_impl", "training.liger"}

// logitsDType is the stackKey.valueOf of training.keep_logits: the
// dtype the model returns its logits in, presetParamDType (value, the
// default param_dtype's bf16, aside).
func logitsDType(root *yaml.Node, _ string) string { return presetParamDType(root) }

// localAttentionOr is the stackKey.valueOf of megatron's
// training.attention_kernel: under transformer_impl: local, which never
// runs Transformer Engine's attention (resolveTransformerImpl notes what
// it runs), presetLocalAttention's kernel; value otherwise.
func localAttentionOr(root *yaml.Node, value string) string {
	if k, ok := presetLocalAttention(root); ok {
		return string(k)
	}
	return value
}

// presetParamDType is the file's (or --set's) training.param_dtype for
// logitsDType, bf16 when unset (the loader's default), or
// training.autocast's bf16 or fp16 over fp32 parameters (the dtype the
// model returns its logits in: Training.LogitsDType); "" for fp32 without
// autocast or a value the loader refuses, where the preset leaves the key
// unset: training.keep_logits fp32 does not go with the fused loss
// (resolveStack).
func presetParamDType(root *yaml.Node) string {
	sixteen := func(n *yaml.Node) bool {
		return n != nil && n.Kind == yaml.ScalarNode && (n.Value == string(BF16) || n.Value == string(FP16))
	}
	pd, ok := trainingKey(root, "param_dtype")
	switch {
	case !ok:
		return ""
	case pd == nil:
		return string(BF16)
	case sixteen(pd):
		return pd.Value
	case pd.Kind == yaml.ScalarNode && pd.Value == string(FP32):
		if ac, _ := trainingKey(root, "autocast"); sixteen(ac) {
			return ac.Value
		}
	}
	return ""
}

// trainingKey is the value node of training.key in root, nil when the
// file (or --set) does not give it; ok is false when root or its training
// is not a mapping.
func trainingKey(root *yaml.Node, key string) (n *yaml.Node, ok bool) {
	cur := root
	for _, part := range []string{"training", key} {
		if cur.Kind != yaml.MappingNode {
			return nil, false
		}
		i := findKey(cur, part)
		if i < 0 {
			return nil, true
		}
		cur = cur.Content[i+1]
	}
	return cur, true
}

// presetStage is the file's (or --set's) parallelism.zero_stage for the
// stage-dependent preset keys, -1 when it is missing or no stage (the
// loader then refuses it).
func presetStage(root *yaml.Node) int {
	if n := presetInt(root, "parallelism", "zero_stage"); n <= 3 {
		return n
	}
	return -1
}

// presetInt is the file's (or --set's) integer at path, decoded as the
// loader decodes it (0x2 and 0o2 are 2 too); -1 when absent, not an
// integer, or negative.
func presetInt(root *yaml.Node, path ...string) int {
	cur := root
	for _, part := range path {
		if cur.Kind != yaml.MappingNode {
			return -1
		}
		i := findKey(cur, part)
		if i < 0 {
			return -1
		}
		cur = cur.Content[i+1]
	}
	if cur.Kind != yaml.ScalarNode || cur.Tag != "!!int" {
		return -1
	}
	var n int
	if err := cur.Decode(&n); err != nil || n < 0 {
		return -1
	}
	return n
}

// markStack re-marks the nodes applySet created for path as the stack
// preset's.
func (l *loader) markStack(root *yaml.Node, path, origin string) {
	cur := root
	for _, part := range strings.Split(path, ".") {
		i := findKey(cur, part)
		if i < 0 {
			return
		}
		for _, n := range []*yaml.Node{cur.Content[i], cur.Content[i+1]} {
			if _, ok := l.setOf[n]; ok {
				l.setOf[n] = stackOrigin + origin
			}
		}
		cur = cur.Content[i+1]
	}
}

// hasPath reports whether the mapping tree root holds the dotted path.
func hasPath(root *yaml.Node, path string) bool {
	cur := root
	for _, part := range strings.Split(path, ".") {
		if cur.Kind != yaml.MappingNode {
			return false
		}
		i := findKey(cur, part)
		if i < 0 {
			return false
		}
		cur = cur.Content[i+1]
	}
	return true
}
