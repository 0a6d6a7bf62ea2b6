package numerics

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// FromScenario maps a scenario onto the configuration verify starts from:
// N = dp·cp ranks, the toy model of the scenario's model kind ("mlp": seed
// 000's residual MLP at hidden 16, 3 layers; any other kind: seed 002's
// 260-parameter tiny transformer), its seed and steps, its Adam
// hyper-parameters (when it sets a learning rate), its padding and its
// gradient clipping (training.grad_clip norm at training.max_grad_norm).
func FromScenario(s *scenarios.Scenario) (Config, error) {
	n := s.N()
	if n < 1 || n > MaxRanks {
		return Config{}, fmt.Errorf("verify simulates every rank: N = dp·cp = %d must be in [1, %d] (use a cluster of at most %d GPUs: --set cluster.nodes=… --set parallelism.dp=auto)", n, MaxRanks, MaxRanks)
	}
	if st := s.Training.Steps; st < 1 || st > MaxSteps {
		// Said "verify tiny-transformer N16 stage 0 K 1 bucket one exact:
		// steps 100000: must be in [1, 1000]", naming a configuration
		// instead of the key (QA15).
		return Config{}, fmt.Errorf("training.steps %d: verify runs 1 to %d steps (use --set training.steps=%d)", st, MaxSteps, min(max(st, 1), MaxSteps))
	}
	pad := memory.PaddingOf(s.Communication.Padding)
	c := Config{Model: TinyTransformer, N: n, K: 1, Steps: s.Training.Steps,
		Seed: uint64(s.Training.Seed), Padding: pad}
	if s.Model.Kind == scenarios.KindMLP {
		c.Model, c.Hidden, c.Layers = ResidualMLP, 16, 3
	}
	if cm := s.Communication; cm.ZeroQuantizedWeights || cm.ZeroQuantizedGradients {
		// ZeRO++ (scenario keys mirroring DeepSpeed's): stage 3, K 1.
		c.Stage, c.QuantWeights, c.QuantGrads, c.Local = 3, cm.ZeroQuantizedWeights, cm.ZeroQuantizedGradients, s.Cluster.GPUsPerNode
		c.Steps = max(c.Steps, MatrixSteps)
	}
	t := s.Training
	if t.GradClip == scenarios.GradClipNorm {
		c.ClipNorm = t.MaxGradNorm
		if c.ClipNorm == 0 {
			c.ClipNorm = scenarios.DefaultMaxGradNorm
		}
	}
	if t.LR > 0 {
		c.Hyper = Hyper{LR: t.LR, Beta1: t.Beta1, Beta2: t.Beta2, Eps: t.Eps, WeightDecay: t.WeightDecay, Decoupled: t.Optimizer == scenarios.OptimizerAdamW}
		if err := c.Hyper.Validate(); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// Unfollowed is a scenario setting verify reads past: the scenario sets it
// away from what verify runs, and verify runs its own (reports words it).
type Unfollowed struct {
	// Key is the scenario key, Value the scenario's value.
	Key, Value string
	// Rows and SeqTokens are, for training.micro_batch, the toy model's
	// batch per rank that verify runs instead: Rows sequences of SeqTokens
	// tokens (inputs and targets) for the transformer, Rows input rows
	// (SeqTokens 0) for the MLP; 0 for the other keys.
	Rows, SeqTokens int
}

// NotFollowed lists the settings of s that change a real run's numerics
// but not verify's. It walks every key of the scenario's parallelism,
// training, communication and offload sections (scenarioKeys) and decides
// each by verifyKeys: a followed key (N = dp·cp, the stage and K the
// matrix covers, the seed, steps, the optimizer and its hyper-parameters,
// gradient clipping, padding, ZeRO++'s quantization) or one that changes no value (timing,
// memory, placement, the real model's kernels that the toy replaces) is
// never listed; a key with a toy value is listed when s sets it away from
// it (gradient accumulation: verify runs one micro-step per step, where
// ZeRO-2/3 add each micro-step's reduced shard into a kept partition; the
// toy's own batch; fp32 reduction or parameter shard; fp16 parameters;
// fp8 GEMMs; dropout; a loss on the 16-bit logits without the upcast;
// an optimizer kernel other than foreach=False Adam;
// the optimizer on the CPU; expert parallelism). A key verifyKeys does not
// name is listed whenever it is set: a new key is not followed until
// someone decides otherwise. micro_batch 1, the default, stands for the
// toy's batch.
func NotFollowed(s *scenarios.Scenario) []Unfollowed {
	var out []Unfollowed
	for _, k := range scenarioKeys(s) {
		rule, known := verifyKeys[k.key]
		switch {
		case known && rule.runs == nil:
			continue // followed, or changes no value
		case known && rule.runs(s):
			continue
		case !known && k.val.IsZero():
			continue
		}
		u := Unfollowed{Key: k.key, Value: keyValue(k.val)}
		if k.key == "training.micro_batch" {
			u.Rows, u.SeqTokens = ttBatch, ttT+1
			if s.Model.Kind == scenarios.KindMLP {
				u.Rows, u.SeqTokens = mlpBatch, 0
			}
		}
		out = append(out, u)
	}
	return out
}

// KeyClass is verify's decision on one scenario key.
type KeyClass int

const (
	// Unknown: no decision; NotFollowed lists the key whenever it is set.
	Unknown KeyClass = iota
	// Followed: verify runs the scenario's value (or every value of it:
	// the matrix's stages and K).
	Followed
	// NoValueChange: the key changes when, where or how fast values are
	// computed, not which (timing, memory, placement), or picks a kernel
	// of the real model that the toy model replaces.
	NoValueChange
	// ToyValue: verify runs one value of it; NotFollowed lists the key
	// when the scenario sets another.
	ToyValue
)

// keyRule is verify's decision on one key: runs, for a ToyValue key,
// reports whether s's value is the one verify runs.
type keyRule struct {
	class KeyClass
	runs  func(s *scenarios.Scenario) bool
}

func followed() keyRule { return keyRule{class: Followed} }
func noChange() keyRule { return keyRule{class: NoValueChange} }
func toy(runs func(s *scenarios.Scenario) bool) keyRule {
	return keyRule{class: ToyValue, runs: runs}
}

// verifyKeys is the whitelist NotFollowed decides by (docs/numerics.md's
// table; TestNotFollowed checks every scenario key is in it).
var verifyKeys = map[string]keyRule{
	"parallelism.dp":         followed(),
	"parallelism.cp":         followed(),
	"parallelism.zero_stage": followed(),
	"parallelism.k":          followed(),
	"parallelism.ep":         toy(func(s *scenarios.Scenario) bool { return s.Parallelism.EP <= 1 }),

	"training.micro_batch": toy(func(s *scenarios.Scenario) bool { return s.Training.MicroBatch <= 1 }),
	"training.grad_accum":  toy(func(s *scenarios.Scenario) bool { return s.Training.GradAccum <= 1 }),
	// Which micro-steps reduce: verify runs one micro-step (grad_accum
	// above is its toy value), where every and last are the same step.
	"training.grad_sync":    noChange(),
	"training.param_dtype":  toy(func(s *scenarios.Scenario) bool { return isOneOf(s.Training.ParamDType, "", scenarios.BF16) }),
	"training.master_dtype": toy(func(s *scenarios.Scenario) bool { return isOneOf(s.Training.MasterDType, "", scenarios.FP32) }),
	// bf16 moments (DeepSpeed's bf16_optimizer_states) round every
	// update: the toy's Adam keeps fp32 moments. Unset, the moments
	// follow the master, which training.master_dtype lists.
	"training.optimizer_state_dtype": toy(func(s *scenarios.Scenario) bool {
		return isOneOf(s.Training.OptimizerStateDType, "", scenarios.FP32)
	}),
	// The remainders rebuild the fp32 master bit for bit, but the bf16
	// param they leave rounds a tie up in magnitude (Apex's "if
	// (local_p_rem < 0) local_p_bf16++", multi_tensor_distopt_adam_kernel.cu
	// at NVIDIA/apex 6424da3b), not to even as the toy's cast does.
	"training.store_param_remainders": toy(func(s *scenarios.Scenario) bool { return !s.Training.StoreParamRemainders }),
	"training.shard_dtype":            toy(func(s *scenarios.Scenario) bool { return s.Training.ShardDType != scenarios.ShardFP32 }),
	// torch.autocast over fp32 parameters casts per op; the toy trains
	// bf16 parameters beside an fp32 master.
	"training.autocast":     toy(func(s *scenarios.Scenario) bool { return !s.Training.Autocasts() && !s.Training.AutocastOps() }),
	"training.reduce_dtype": toy(func(s *scenarios.Scenario) bool { return s.Training.ReduceDType != scenarios.ReduceFP32 }),
	"training.optimizer":    followed(),
	"training.lr":           followed(),
	"training.beta1":        followed(),
	"training.beta2":        followed(),
	"training.eps":          followed(),
	"training.weight_decay": followed(),
	"training.steps":        followed(),
	"training.seed":         followed(),
	"training.fp8":          toy(func(s *scenarios.Scenario) bool { return isOneOf(s.Training.FP8, "", scenarios.FP8None) }),
	"training.dropout":      toy(func(s *scenarios.Scenario) bool { return s.Training.Dropout == 0 }),
	// torch.optim.Adam(foreach=False)'s order (AdamStep); fused=True and
	// foreach=True run other kernels, Composer's DecoupledAdamW another
	// formula.
	"training.optimizer_impl": toy(func(s *scenarios.Scenario) bool {
		return isOneOf(s.Training.OptimizerImpl, "", scenarios.OptimizerSeed)
	}),
	"training.grad_clip":     followed(),
	"training.max_grad_norm": followed(),
	// Only under training.fp8 (listed there).
	"training.fp8_all_gather":         noChange(),
	"training.fp8_params":             noChange(),
	"training.recompute":              noChange(),
	"training.recompute_early_stop":   noChange(),
	"training.recompute_every":        noChange(),
	"training.recompute_fraction":     noChange(),
	"training.op_force_recompute":     noChange(),
	"training.op_recompute_attention": noChange(),
	"training.op_save_all_to_all":     noChange(),
	// Activation offloading copies the saved tensors to the host and
	// back unchanged (copy_ both ways, TE's cpu_offload.py).
	"training.activation_offload_layers": noChange(),
	"training.op_save_abs":               noChange(),
	"training.mfu":                       noChange(),
	"training.compute_efficiency":        noChange(),
	"training.attention_efficiency":      noChange(),
	"training.attention_kernel":          noChange(),
	"training.attention":                 noChange(),
	// flash-attn's unpad_input and pad_input gather and scatter rows
	// unchanged (bert_padding.py at v0.2.8): the same attention values.
	"training.attention_unpad": noChange(),
	// Every compile setting, model included, changes what is kept and
	// when gradients are accumulated, not a value: AccumulateGrad adds
	// the same gradients into .grad once per micro-step either way.
	"training.compile":   noChange(),
	"training.rope_impl": noChange(),
	// Kernel choices, one rule for norm_impl, transformer_impl and liger:
	// a kernel that computes in fp32 inside and rounds its result once is
	// the real model's kernel the toy replaces (its own layerNorm,
	// attention and float64 loss, model.go), whatever order it sums in;
	// a setting that keeps a partial sum in 16
	// bits where the toy does not changes values, and is listed (as
	// cross_entropy's 16-bit loss is). Every norm_impl upcasts x and keeps
	// the rstd in fp32 (scenarios/normimpl.go cites each kernel), and
	// transformer_impl swaps TE's modules for Megatron-core's own over the
	// same block (torch.nn.RMSNorm's composite rms_norm upcasts too,
	// memory/tensors.go MegatronLocal): not listed.
	"training.norm_impl": noChange(),
	// Liger's fused linear cross-entropy sums the head's bf16 grad_weight
	// chunk by chunk by addmm into a bf16 tensor (Liger-Kernel
	// ops/fused_linear_cross_entropy.py at c3c2d4fa lines 126-135), a
	// 16-bit partial sum: listed; verify runs the unpatched model.
	"training.liger": toy(func(s *scenarios.Scenario) bool { return !s.Training.Liger }),
	// Megatron's Transformer Engine or own modules compute the same
	// block in fp32 inside (the rule above); the choice sets what is kept
	// and the traffic.
	"training.transformer_impl": noChange(),
	// A 16-bit loss (cross_entropy: bf16 or fp16, F.cross_entropy on the
	// 16-bit logits without the upcast) writes 16-bit log-probabilities
	// and gradients, which changes values; the toy's loss is a softmax
	// in float64 from the stored logits (model.go), as the fp32 loss and
	// flash-attn's fused one (fp32 inside) compute it.
	"training.cross_entropy": toy(func(s *scenarios.Scenario) bool { return !s.Training.Loss16() && !s.Training.LossAutocast() }),
	"training.keep_logits":   noChange(),
	// Hugging Face's KV cache in training is returned beside the loss and
	// read by nothing in the step: memory only.
	"training.hf_use_cache": noChange(),
	// torchtitan's ChunkedLossWrapper sums the chunks' summed losses and
	// assembles each token's hidden-state gradient from its own chunk
	// (torchtitan/components/loss.py lines 676-711 at b5bcd76c6): the
	// same per-token terms, in the exact sums order does not change.
	"training.loss_chunks": noChange(),
	// Composer's train metrics read the logits under torch.no_grad()
	// (scenarios/trainmetrics.go): time only.
	"training.train_metrics":    noChange(),
	"training.flat_param_views": noChange(),

	// Exact sums depend on no order or grouping: the bucket size, the
	// algorithm and NCCL's choices change no value (--drift shows what
	// per-hop rounding does).
	"communication.bucket_size":              noChange(),
	"communication.algorithm":                noChange(),
	"communication.nccl_algo":                noChange(),
	"communication.nccl_proto":               noChange(),
	"communication.nccl_version":             noChange(),
	"communication.calibration":              noChange(),
	"communication.overlap":                  noChange(),
	"communication.prefetch_depth":           noChange(),
	"communication.backward_prefetch_depth":  noChange(),
	"communication.max_inflight_allgathers":  noChange(),
	"communication.limit_all_gathers":        noChange(),
	"communication.zero1_allreduce":          noChange(),
	"communication.overlap_param_gather":     noChange(),
	"communication.boundary":                 noChange(),
	"communication.compute_interference":     noChange(),
	"communication.collective_interference":  noChange(),
	"communication.padding":                  followed(),
	"communication.zero_quantized_weights":   followed(),
	"communication.zero_hpz_partition_size":  noChange(), // a second copy of the same bf16 shards
	"communication.zero_quantized_gradients": followed(),
	"communication.moe_dispatcher":           noChange(),
	// What autograd keeps of a gathered weight, memory only: DeepSpeed's
	// wrapper and aten's linear compute the same products.
	"communication.memory_efficient_linear": noChange(),

	// DeepSpeed's CPUAdam is its own kernel; offloaded parameters are the
	// same bf16 values copied.
	"offload.optimizer": toy(func(s *scenarios.Scenario) bool { return isOneOf(s.Offload.Optimizer, "", scenarios.OffloadNone) }),
	"offload.params":    noChange(),
}

func isOneOf[T ~string](v T, allowed ...T) bool { return slices.Contains(allowed, v) }

// KeyClassOf is verify's decision on scenario key k (Unknown when none).
func KeyClassOf(k string) KeyClass { return verifyKeys[k].class }

// scenarioKey is one key of a scenario section and its value.
type scenarioKey struct {
	key string
	val reflect.Value
}

// keySections are the scenario sections NotFollowed walks; the model is
// the toy of model.kind's, and the cluster, memory and stack change no
// value (a stack preset's keys are walked with the sections).
var keySections = []string{"parallelism", "training", "communication", "offload"}

// scenarioKeys lists every key of s's keySections, in field order.
func scenarioKeys(s *scenarios.Scenario) []scenarioKey {
	var out []scenarioKey
	sv := reflect.ValueOf(s).Elem()
	for i := range sv.NumField() {
		name := yamlName(sv.Type().Field(i))
		if !slices.Contains(keySections, name) {
			continue
		}
		out = appendKeys(out, name, sv.Field(i))
	}
	return out
}

func appendKeys(out []scenarioKey, prefix string, v reflect.Value) []scenarioKey {
	for i := range v.NumField() {
		name := yamlName(v.Type().Field(i))
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			out = appendKeys(out, prefix+"."+name, f)
			continue
		}
		out = append(out, scenarioKey{prefix + "." + name, f})
	}
	return out
}

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// ScenarioKeys lists the keys NotFollowed decides (tests, docs).
func ScenarioKeys() []string {
	var out []string
	for _, k := range scenarioKeys(&scenarios.Scenario{}) {
		out = append(out, k.key)
	}
	return out
}

// keyValue words a key's value: pointers followed, nil as unset.
func keyValue(v reflect.Value) string {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "unset"
		}
		v = v.Elem()
	}
	return fmt.Sprint(v.Interface())
}

// ScenarioConfigs are the configurations verify checks for a scenario: the
// whole Matrix (for ZeRO++ the one quantized configuration), or with a
// corruption only the scenario's own stage and K, run long enough to reach
// the corrupted step. base is FromScenario's.
func ScenarioConfigs(s *scenarios.Scenario, corrupt *Corruption) (base Config, cfgs []Config, err error) {
	base, err = FromScenario(s)
	if err != nil {
		return Config{}, nil, err
	}
	if corrupt == nil {
		if base.Quantized() {
			// ZeRO++ runs at stage 3 with K 1 only: one configuration,
			// checked against its quantizing reference.
			return base, []Config{base}, nil
		}
		return base, Matrix(base), nil
	}
	one := base
	one.Stage, one.K, one.Steps = s.Parallelism.Stage, s.Parallelism.K, max(base.Steps, corrupt.Step)
	one.Corrupt = corrupt
	one.BucketElems = toyBucket(base, int64(s.Communication.BucketSize))
	return base, []Config{one}, nil
}

// toyBucket is communication.bucket_size in bf16 elements when it cuts the
// toy model's buffer (QA23 L9: --corrupt-shard ran one bucket whatever the
// scenario's), else 0: one bucket, which a bucket at least the buffer's
// size is.
func toyBucket(c Config, bytes int64) int64 {
	m, err := newModel(c.Model, c.Hidden, c.Layers)
	if err != nil || bytes < 2 {
		return 0
	}
	var numel int64
	for _, p := range m.params {
		numel += p.Numel
	}
	if e := bytes / 2; e < numel {
		return e
	}
	return 0
}

// ModeDrift is the drift between K = KA and K = KB under one native
// reduction mode, after every step.
type ModeDrift struct {
	Mode   ReduceMode
	KA, KB int
	Steps  []DriftStep
}

// DriftModes compares K = 1 with the largest K ≤ 4 dividing base.N, at
// stage 1, under NCCL-like fp32 and bf16-per-hop ring reductions.
func DriftModes(base Config) ([]ModeDrift, error) {
	kb := 1
	for k := 2; k <= 4; k++ {
		if base.N%k == 0 {
			kb = k
		}
	}
	dc := base
	dc.Stage = 1
	var out []ModeDrift
	for _, mode := range []ReduceMode{Native, NativeBF16} {
		dc.Mode = mode
		d, err := Drift(dc, 1, kb)
		if err != nil {
			return nil, fmt.Errorf("drift: %w", err)
		}
		out = append(out, ModeDrift{Mode: mode, KA: 1, KB: kb, Steps: d})
	}
	return out, nil
}
