package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"

	"github.com/zerosim/zerosim/units"
)

// Scenario is one scenario file, version 1. After Load it is resolved:
// presets are expanded, defaults filled in and Model.Layers holds the explicit
// layer list, so downstream packages never look at presets.
type Scenario struct {
	Version     int    `yaml:"version"`
	Name        string `yaml:"name,omitempty"`
	Description string `yaml:"description,omitempty"`
	// Stack names a training stack whose behaviour keys Load fills in
	// where the file leaves them unset (stackpreset.go, docs/stacks.md).
	Stack         string        `yaml:"stack,omitempty"`
	Cluster       Cluster       `yaml:"cluster"`
	Model         Model         `yaml:"model"`
	Parallelism   Parallelism   `yaml:"parallelism"`
	Training      Training      `yaml:"training,omitempty"`
	Communication Communication `yaml:"communication,omitempty"`
	Memory        MemoryConfig  `yaml:"memory,omitempty"`
	// Offload places optimizer states and parameters on the host (see
	// offload.go).
	Offload Offload `yaml:"offload,omitempty"`
	// Warnings are Load's remarks on likely mistakes that are not errors
	// ("file:line:col: message"), for the CLI to print on stderr.
	Warnings []string `yaml:"-"`
	// importNotes are the warnings Load's import of model.hf_config or an
	// hf preset gave (applyHF), at index importAt of Warnings, and
	// seqLenNote the one of them that says seq_len is zerosim's default,
	// defaultSeqLen: a resolved scenario re-resolved keeps its layer list
	// and is not imported again, so Resolve puts them back (without
	// seqLenNote once seq_len is no longer defaultSeqLen).
	importNotes   []string
	importAt      int
	seqLenNote    string
	defaultSeqLen int64
	// LayoutWarning is the one of Warnings that says the stack preset does
	// not run parallelism's stage and K (StackLayout), "" when it runs
	// them: a command that searches the stage and K (plan, fit) drops it.
	LayoutWarning string `yaml:"-"`
	// ActivationsWarning is the one of Warnings that says the model counts
	// no activations (CountsNoActivations), "" when it does: a command that
	// counts model states only (memory and fit under a seed's convention,
	// the published estimators, verify's numerics) drops it.
	ActivationsWarning string `yaml:"-"`
	// activationsKey is the key ActivationsWarning is placed at
	// (ActivationsKey).
	activationsKey string
	// ReadFiles are the files Load read besides the scenario (model.hf_config,
	// communication.calibration), in the order it read them, each with the
	// SHA-256 of the bytes read: what a sweep's meta records so --resume
	// can name the file that changed.
	ReadFiles []ReadFile `yaml:"-"`
}

// ReadFile is a file Load read for a key of the scenario.
type ReadFile struct {
	// Key is the scenario key that names the file (model.hf_config).
	Key string `json:"key"`
	// Path is the key's value as the scenario gives it (relative to the
	// scenario file).
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of the bytes read.
	SHA256 string `json:"sha256"`
	// Opened is the absolute path Load opened (Path resolved against the
	// scenario file's directory, or the working directory for a scenario
	// without one), "" when it has none: what Replayable writes for the
	// key, so the resolved scenario reads the same file from any
	// directory.
	Opened string `json:"-"`
}

// readFile records a file Load read for key at opened (Scenario.ReadFiles).
func (s *Scenario) readFile(key, path, opened string, data []byte) {
	sum := sha256.Sum256(data)
	abs, err := filepath.Abs(opened)
	if err != nil {
		abs = ""
	}
	s.ReadFiles = append(s.ReadFiles, ReadFile{Key: key, Path: path, SHA256: hex.EncodeToString(sum[:]), Opened: abs})
}

// Cluster describes the machines: nodes × GPUs, the links inside a node and
// between nodes, and where each rank sits.
type Cluster struct {
	Nodes       int `yaml:"nodes"`
	GPUsPerNode int `yaml:"gpus_per_node"`
	// GPU names a preset (see GPUPresets); the fields below override it.
	GPU       string      `yaml:"gpu,omitempty"`
	GPUMemory units.Bytes `yaml:"gpu_memory,omitempty"`
	// GPUMemoryUsable is set when GPUMemory is the capacity CUDA exposes
	// that the GPU preset gives (GPUPreset.Usable), not a figure the file
	// or a --set gave nor the driver's total: reports then say "usable".
	GPUMemoryUsable bool        `yaml:"-" json:"-"`
	PeakBF16        units.FLOPS `yaml:"peak_bf16,omitempty"`
	// PeakFP8 is the dense fp8 tensor-core peak (0: none), used by
	// training.fp8.
	PeakFP8 units.FLOPS `yaml:"peak_fp8,omitempty"`
	// FP8GEMMRatio is the fraction of training.compute_efficiency that fp8
	// GEMMs reach of peak_fp8 (fp8 GEMMs run at peak_fp8 ·
	// compute_efficiency · fp8_gemm_ratio): a GEMM efficiency of fp8
	// relative to bf16, measured on the GPU, that calibrating on a bf16
	// step leaves alone. 0 (unset): the GPU's published figure
	// (FP8GEMMRatioOf, DefaultFP8GEMMRatio), 1 for a GPU without one.
	FP8GEMMRatio float64         `yaml:"fp8_gemm_ratio,omitempty"`
	HBMBandwidth units.Bandwidth `yaml:"hbm_bandwidth,omitempty"`
	// GFX is an AMD GPU's LLVM target (gfx942, gfx950): it makes a GPU
	// described by its figures an AMD one (RCCL's cost model, the AMD
	// host, HIP's and RCCL's words). An AMD preset has its own (Target);
	// an NVIDIA preset takes none.
	GFX   string `yaml:"gfx,omitempty"`
	Intra Link   `yaml:"intra,omitempty"`
	Inter Link   `yaml:"inter,omitempty"`
	// NICs is "per_gpu" (rail-optimized: one NIC per GPU, default) or
	// "per_node" (NICsPerNode NICs shared by the node's GPUs).
	NICs        NICSharing `yaml:"nics,omitempty"`
	NICsPerNode int        `yaml:"nics_per_node,omitempty"`
	// Placement lists the parallel axes from fastest-varying (neighbouring
	// GPUs of one node) to slowest; default [cp, dp] as in seed 000.
	Placement     []Axis         `yaml:"placement,omitempty"`
	LinkOverrides []LinkOverride `yaml:"link_overrides,omitempty"`
	GPUOverrides  []GPUOverride  `yaml:"gpu_overrides,omitempty"`
	// Host is each node's host side: RAM, PCIe, CPU memory bandwidth and
	// NVMe (see offload.go).
	Host Host `yaml:"host,omitempty"`
}

// Link is one link class: a preset name and/or explicit bandwidth and
// latency (per direction, per GPU for intra-node links, per NIC for
// inter-node links).
type Link struct {
	Preset    string          `yaml:"preset,omitempty"`
	Bandwidth units.Bandwidth `yaml:"bandwidth,omitempty"`
	Latency   units.Duration  `yaml:"latency,omitempty"`
}

// LinkOverride changes the bandwidth (and optionally latency) of one node's
// NIC (GPU < 0 or NICs shared) or one GPU's NIC or intra-node port.
type LinkOverride struct {
	Node int `yaml:"node"`
	// GPU is the GPU index in the node; -1 (default) means every NIC of the node.
	GPU       *int            `yaml:"gpu,omitempty"`
	Class     LinkClass       `yaml:"class"` // "intra" or "inter"
	Bandwidth units.Bandwidth `yaml:"bandwidth,omitempty"`
	Latency   units.Duration  `yaml:"latency,omitempty"`
}

// GPUOverride slows (or speeds up) the GPU that holds one rank: its compute
// times are divided by Speed (1 = nominal, 0.8 = 20 % slower).
type GPUOverride struct {
	Rank  int     `yaml:"rank"`
	Speed float64 `yaml:"speed"`
}

// Model is the network being trained: a preset, a bare parameter count, or
// explicit dimensions/layers. After Load, Layers is always filled.
type Model struct {
	Preset string `yaml:"preset,omitempty"`
	// Kind is "transformer" (blocks of attention + FFN, see Arch), "mlp"
	// (seed 000's residual MLP), "tiny-transformer" (seed 002) or "generic"
	// (a bare parameter count or an explicit layer list without dimensions).
	Kind string `yaml:"kind,omitempty"`
	// Arch is the transformer block layout: "gpt" (GPT-2/3: LayerNorm,
	// biases, learned positions, output tied to the embedding; default) or
	// "llama" (RMSNorm, no biases, gated FFN, untied lm_head). Empty for
	// other kinds.
	Arch   string      `yaml:"arch,omitempty"`
	Params units.Count `yaml:"params,omitempty"`
	Hidden int64       `yaml:"hidden,omitempty"`
	Layers int64       `yaml:"layers,omitempty"`
	FFN    int64       `yaml:"ffn,omitempty"`
	Heads  int64       `yaml:"heads,omitempty"`
	// KVHeads is the number of key/value heads (grouped-query attention,
	// llama2-70b); 0 before Load means Heads.
	KVHeads int64 `yaml:"kv_heads,omitempty"`
	Vocab   int64 `yaml:"vocab,omitempty"`
	SeqLen  int64 `yaml:"seq_len,omitempty"`
	// DocumentLen is the length of the documents packed into each
	// sequence when attention is confined to each document (packed
	// sequences: NeMo's packed SFT with THD/cu_seqlens, torchtune's packed
	// datasets, torchtitan's block-causal document mask, transformers'
	// padding_free with flash varlen); 0 (default): one causal sequence of
	// SeqLen. Documents are taken as equal-length: seq_len/document_len
	// whole documents and the remainder one shorter document, so a mean
	// length stands for a varied mix only as far as Σd² over the sequence
	// equals s·d (zero.PackedAttentionFLOPs). Resolve refuses it above SeqLen,
	// with context parallelism and with training.attention sdpa.
	DocumentLen int64 `yaml:"document_len,omitempty"`
	// LargestLayer is the largest single module's own parameter count
	// (DeepSpeed's model_to_params, memory.DeepSpeedLargestModule): with
	// params, the first unit "embedding"; always DeepSpeed's ZeRO-3 L when
	// set.
	LargestLayer units.Count `yaml:"largest_layer,omitempty"`
	// LayerList is an explicit list of units (FSDP units / layers) in forward
	// order. When empty, Load derives it from the fields above.
	LayerList []Layer `yaml:"layer_list,omitempty"`
	// Groups declares parameter groups with their own precision and buffer
	// (seed 000: dense bf16, MoE bf16, fp32 router; fp8 weights).
	Groups []ParamGroup `yaml:"groups,omitempty"`
	// HFConfig is a Hugging Face config.json, relative to the scenario
	// file; the layer list and dimensions are imported from it.
	HFConfig string `yaml:"hf_config,omitempty"`
	// MTPLayers is the multi-token-prediction modules (DeepSeek-V3's, GLM-4.5's,
	// Qwen3-Next's) the stack builds beside hf_config's decoder:
	// transformers' modeling code builds none, so neither does an hf_config
	// without it (the HF Trainer, Accelerate and llm-foundry train what
	// transformers builds); a stack that trains them (Megatron
	// --mtp-num-layers, Megatron-Bridge) sets it.
	MTPLayers int64 `yaml:"mtp_layers,omitempty"`
	// Architecture is the imported config's class (LlamaForCausalLM), set
	// by Load for hf_config and presets built from a config.json. Besides
	// naming the model it says whose eager attention runs
	// (HFEagerSoftmaxFP32).
	Architecture string `yaml:"architecture,omitempty"`
	// LogitSoftcap marks an output head whose logits pass through
	// cap·tanh(logits/cap) before the loss (Gemma 2's
	// final_logit_softcapping; set by the import from config.json): tanh
	// keeps its 16-bit output until the head's backward
	// (memory.HeadActivation).
	LogitSoftcap bool `yaml:"logit_softcap,omitempty"`
}

// Layer is one unit of the model in forward order: the unit of ZeRO-3
// gathering and of compute timing.
type Layer struct {
	Name   string      `yaml:"name"`
	Params units.Count `yaml:"params"`
	// Group names the parameter group (default "dense").
	Group string `yaml:"group,omitempty"`
	// FwdFLOPs is the forward FLOPs per micro-batch; 0 means derive from
	// 2·params·tokens (+ attention for transformer blocks).
	FwdFLOPs units.Count `yaml:"fwd_flops,omitempty"`
	// Fwd and Bwd are explicit compute times; 0 means derive from FLOPs.
	Fwd units.Duration `yaml:"fwd,omitempty"`
	Bwd units.Duration `yaml:"bwd,omitempty"`
	// ActivationBytes per micro-batch kept for backward; 0 = derived.
	ActivationBytes units.Bytes `yaml:"activation_bytes,omitempty"`
	// Tensors optionally lists the unit's parameter tensors in flat order.
	Tensors []Tensor `yaml:"tensors,omitempty"`
	// Block is set by resolution on the transformer blocks (attention +
	// FFN) of a kind transformer model: the one decision, used by the
	// activation memory and the attention FLOPs. See markBlocks.
	Block bool `yaml:"-" json:"-"`
	// ActiveParams is the part of Params one token goes through (the top-k
	// routed experts of a MoE unit); 0 means all of Params.
	ActiveParams units.Count `yaml:"active_params,omitempty"`
	// Dims are the transformer block's dimensions when known (imported
	// Hugging Face models); the FLOP and activation models use them.
	Dims *BlockDims `yaml:"dims,omitempty"`
}

// Tensor is one named parameter tensor.
type Tensor struct {
	Name  string  `yaml:"name"`
	Shape []int64 `yaml:"shape"`
}

// ParamGroup is a set of layers whose parameters share a precision and live
// in their own buffer.
type ParamGroup struct {
	Name string `yaml:"name"`
	// Precision is bf16, fp16, fp32 or fp8.
	Precision DType `yaml:"precision"`
}

// Parallelism is the data-parallel layout. N = DP·CP is the ZeRO group.
type Parallelism struct {
	DP    int `yaml:"dp"`
	CP    int `yaml:"cp,omitempty"`
	Stage int `yaml:"zero_stage"`
	// K is num_distributed_optimizer_instances: the N ranks are split into K
	// intra groups of N/K ranks that each shard the optimizer (default 1).
	K int `yaml:"k,omitempty"`
	// EP is the expert-parallel degree (default 1): routed experts are split
	// over ep ranks with an all-to-all of tokens around every MoE layer.
	EP int `yaml:"ep,omitempty"`
}

// Training holds the per-step workload and the optimizer.
type Training struct {
	MicroBatch int64 `yaml:"micro_batch,omitempty"`
	// GradAccum is the number of micro-steps (forward and backward of one
	// micro-batch each) per optimizer step, gradient accumulation
	// (default 1). Which micro-steps reduce gradients depends on the stage:
	// see zero's package doc.
	GradAccum int64 `yaml:"grad_accum,omitempty"`
	// GradSync says which micro-steps reduce the gradients: every (the
	// trainer never enters no_sync) or last (no_sync until the last
	// micro-batch; at stages 2 and 3 FSDP's, which keeps whole unsharded
	// gradients in between, Scenario.HoldsUnshardedGrads); "" (default): by
	// stack (Scenario.GradSyncEvery). DeepSpeed's stages 2 and 3 reduce
	// every micro-step whatever it says (Scenario.NoSyncRefused).
	GradSync GradSync `yaml:"grad_sync,omitempty"`
	// ParamDType is bf16 (default), fp16 or fp32; MasterDType is fp32
	// (default: an fp32 master copy and fp32 Adam states), bf16 (a bf16
	// master copy, DeepSpeed's bf16_master_weights_and_grads: MasterBF16)
	// or none (the optimizer steps the param_dtype parameters and keeps
	// its states in their dtype: MasterNone).
	ParamDType  DType `yaml:"param_dtype,omitempty"`
	MasterDType DType `yaml:"master_dtype,omitempty"`
	// OptimizerStateDType is the dtype of Adam's exp_avg and exp_avg_sq:
	// unset (the master's: fp32 beside an fp32 master, bf16 beside a bf16
	// one, param_dtype under master_dtype none), fp32 or bf16 (DeepSpeed's
	// bf16_optimizer_states); Training.StateDType resolves it.
	OptimizerStateDType DType `yaml:"optimizer_state_dtype,omitempty"`
	// StoreParamRemainders (stack megatron, zero_stage 1, bf16 params
	// beside an fp32 master) keeps only the low 16 bits of each fp32
	// master element, an int16 remainder, beside the bf16 parameter that
	// is its top half: Apex's DistributedFusedAdam store_param_remainders
	// (NeMo's distributed_fused_adam under megatron_amp_O2 with bf16) and
	// Transformer Engine's FusedAdam under Megatron-Core's
	// --use-precision-aware-optimizer (resolveParamRemainders cites them).
	StoreParamRemainders bool      `yaml:"store_param_remainders,omitempty"`
	Optimizer            Optimizer `yaml:"optimizer,omitempty"` // adam (default) or adamw
	LR                   float64   `yaml:"lr,omitempty"`
	Beta1                float64   `yaml:"beta1,omitempty"`
	Beta2                float64   `yaml:"beta2,omitempty"`
	Eps                  float64   `yaml:"eps,omitempty"`
	WeightDecay          float64   `yaml:"weight_decay,omitempty"`
	// Recompute is none (default), selective (Korthikanti et al. 2022),
	// op (torchtitan's op-level policy) or full.
	Recompute Recompute `yaml:"recompute,omitempty"`
	// ActivationOffloadLayers is Megatron-Core's activation CPU offloading
	// (--cpu-offloading --cpu-offloading-num-layers N, TransformerConfig's
	// cpu_offloading_num_layers): the saved tensors of the first N
	// transformer blocks go to pinned host memory after their forward and
	// come back before their backward (actoffload.go). 0 (default): none.
	ActivationOffloadLayers int64 `yaml:"activation_offload_layers,omitempty"`
	// FP8 is the fp8 recipe: none (default), te (Transformer Engine) or
	// torchao (float8 with FSDP2 fp8 all-gather); see FP8TE, FP8TorchAO.
	FP8 FP8Recipe `yaml:"fp8,omitempty"`
	// FP8AllGather (torchao only) is torchao's
	// enable_fsdp_float8_all_gather: FSDP2 gathers the block weights in
	// fp8. false: the GEMMs run in fp8, the weights are gathered and held
	// in bf16 (FP8Gather). Its default here, true, keeps what fp8: torchao
	// has meant (the validation rows' float8 runs gather in fp8); torchao's
	// Float8LinearConfig and torchtitan default to false (torchao/float8/
	// config.py @ 11ce634705af1972320a8488d3e2ca223dcb0372), which zerosim
	// import torchtitan writes.
	FP8AllGather *bool `yaml:"fp8_all_gather,omitempty"`
	// FP8Params (te, te_current; stack megatron at zero_stage 1) keeps the
	// transformer blocks' weights as fp8 primary weights: Transformer
	// Engine's fp8_model_init, which NeMo's model.fp8_params and
	// Megatron-LM's --fp8-param-gather turn on. The blocks go to their own
	// fp8 parameter group (FP8ParamsGroup): a 1-byte param buffer
	// all-gathered in fp8, bf16 gradients, the fp32 master; TE keeps a
	// 1-byte transpose beside each weight and no other fp8 copy
	// (resolveFP8Params cites the sources).
	FP8Params bool `yaml:"fp8_params,omitempty"`
	// MFU, when given, is the model FLOPs utilization the step must reach
	// (PaLM's 6N + 12·L·H·Q·s per token over the peak): the replay fits the
	// compute efficiency to it. Give it or compute_efficiency, not both.
	MFU float64 `yaml:"mfu,omitempty"`
	// ComputeEfficiency is the fraction of cluster.peak_bf16 that large
	// weight matmuls reach (default DefaultComputeEfficiencyOf the GPU); attention
	// and memory-bound work have their own published rates
	// (zero/efficiency.go, docs/compute-model.md).
	ComputeEfficiency float64 `yaml:"compute_efficiency,omitempty"`
	// ComputeEfficiencyFrom names where ComputeEfficiency came from when a
	// calibration file set it (communication.calibration's compute part,
	// with training.compute_efficiency and training.mfu unset); empty
	// otherwise.
	ComputeEfficiencyFrom string `yaml:"-"`
	// ComputeEfficiencyDefault is set when Load filled ComputeEfficiency
	// in with DefaultComputeEfficiencyOf the GPU (no training.compute_efficiency,
	// training.mfu or calibration gave it), so that a report tells
	// zerosim's default from a file's 0.8.
	ComputeEfficiencyDefault bool `yaml:"-"`
	// AttentionEfficiency is the fraction of cluster.peak_bf16 the
	// attention kernel reaches; 0 (unset) takes the published rate of
	// AttentionKernel on the GPU (zero.AttentionEfficiency).
	AttentionEfficiency float64 `yaml:"attention_efficiency,omitempty"`
	// AttentionEfficiencyFrom names the calibration file that set
	// AttentionEfficiency (its compute part, with
	// training.attention_efficiency unset); empty otherwise.
	AttentionEfficiencyFrom string `yaml:"-"`
	// AttentionEfficiencyHeadDim is the head_dim of the model the
	// calibration's attention efficiency was fitted on (CalCompute.HeadDim),
	// with AttentionEfficiencyFrom; 0 for a rate of the scenario's own or a
	// file that does not say. zero.AttentionEfficiencyOf rescales the rate
	// to the model's head_dim by the kernel's published rates.
	AttentionEfficiencyHeadDim int64 `yaml:"-"`
	// AttentionEfficiencyGPU is the cluster.gpu the calibration's
	// attention efficiency was fitted on (CalCompute.GPU), with
	// AttentionEfficiencyFrom; "" for a rate of the scenario's own or a
	// file that does not say. zero.AttentionEfficiencyOf carries a rate
	// fitted on another GPU by the kernel's default rates on the two.
	AttentionEfficiencyGPU string `yaml:"-"`
	// AttentionKernel is the kernel that runs attention: fa2 (default),
	// fa3, triton or eager; it sets attention's default efficiency.
	AttentionKernel AttentionKernel `yaml:"attention_kernel,omitempty"`
	// Attention is the attention kernel: flash (default: no s² scores),
	// sdpa (PyTorch's, with repeat_kv for GQA) or eager.
	Attention Attention `yaml:"attention,omitempty"`
	// AttentionUnpad is flash-attn's padding wrapper around the kernel in
	// every block: the model passes a key_padding_mask, so flash_attn's
	// FlashAttention module gathers the packed qkv to its unpadded rows
	// (bert_padding.unpad_input) and scatters the output back
	// (pad_input), forward and backward (zero/unpad.go).
	AttentionUnpad bool `yaml:"attention_unpad,omitempty"`
	// Compile is what runs under torch.compile: none (unset), blocks, loss,
	// blocks+loss or model (scenarios/compile.go); it changes the activations
	// autograd keeps and, for model on one GPU, when the gradients are
	// accumulated (docs/memory-model.md).
	Compile Compile `yaml:"compile,omitempty"`
	// RoPEImpl is how an eager Llama block applies RoPE: complex (unset),
	// rotation (ibm-fms) or fused (scenarios/rope.go); it sets the
	// block's memory-bound traffic (docs/compute-model.md).
	RoPEImpl RoPEImpl `yaml:"rope_impl,omitempty"`
	// NormImpl is how an eager Llama block runs its RMSNorms: fp32
	// (unset: the eager fp32 chain) or fused (torchtitan's fused_rmsnorm
	// Triton kernel, scenarios/normimpl.go); it sets what each norm keeps
	// for backward (docs/memory-model.md) and its memory-bound traffic
	// (docs/compute-model.md).
	NormImpl NormImpl `yaml:"norm_impl,omitempty"`
	// Liger is Liger Kernel's patch of a Hugging Face Llama-family model
	// (use_liger_kernel in transformers' TrainingArguments, axolotl,
	// LLaMA-Factory's enable_liger_kernel, ms-swift, TRL): its RMSNorm,
	// SwiGLU and RoPE kernels in every block and its fused linear
	// cross-entropy in place of the output head and loss
	// (scenarios/liger.go); it sets what the blocks and the head keep
	// for backward (docs/memory-model.md) and their memory-bound traffic
	// (docs/compute-model.md).
	Liger bool `yaml:"liger,omitempty"`
	// TransformerImpl is Megatron-LM's --transformer-impl under stack:
	// megatron: transformer_engine (unset) or local (Megatron-core's own
	// modules, scenarios/transformerimpl.go); it sets what a Llama
	// block's norms keep for backward (docs/memory-model.md).
	TransformerImpl TransformerImpl `yaml:"transformer_impl,omitempty"`
	// CrossEntropy is the loss kernel: fp32 (unset: cross_entropy on the
	// logits upcast to fp32) or fused (flash-attn's fused kernel,
	// llm-foundry's MPT); scenarios/stack.go.
	CrossEntropy CrossEntropy `yaml:"cross_entropy,omitempty"`
	// LossChunks is the number of chunks torchtitan's ChunkedLossWrapper
	// splits a micro-batch's tokens into for the output head and its
	// loss (unset or 1: one pass over all tokens); scenarios/losschunks.go.
	LossChunks int64 `yaml:"loss_chunks,omitempty"`
	// KeepLogits is whether the training loop keeps the logits the model
	// returns referenced through backward: none (unset: freed before
	// backward, torchtitan since e29b6b4d418a), param_dtype's name or fp32 (the
	// dtype the model returns them in, torchtitan at 83c879f18763: fp32);
	// scenarios/stack.go.
	KeepLogits KeepLogits `yaml:"keep_logits,omitempty"`
	// TrainMetrics is the number of train metrics the training loop
	// updates on every micro-batch by a cross-entropy of its own over the
	// logits, outside the graph (unset or 0: none; Composer's language
	// models: 2); scenarios/trainmetrics.go.
	TrainMetrics int64 `yaml:"train_metrics,omitempty"`
	// HFUseCache is whether a Hugging Face model checkpointed by torch's
	// checkpoint wrapper (not HF's own gradient checkpointing, which turns
	// use_cache off) builds its KV cache in training, and how long the
	// loop keeps it: none (unset), forward (freed with the outputs once
	// the loss is taken, before backward) or kept (held by the loop until
	// the next forward returns); scenarios/stack.go.
	HFUseCache HFUseCache `yaml:"hf_use_cache,omitempty"`
	// ShardDType is the dtype of the rank's parameter shard at stage 3:
	// unset (param_dtype, beside an fp32 master copy: DeepSpeed) or fp32
	// (the shard is the optimizer's parameter and no master copy exists:
	// PyTorch FSDP with a mixed-precision policy); scenarios/stack.go.
	ShardDType DType `yaml:"shard_dtype,omitempty"`
	// ReduceDType is the dtype gradients are reduced in: unset
	// (param_dtype) or fp32 (Megatron-LM's default with bf16,
	// grad_reduce_in_fp32: an fp32 grad buffer at stages 0–2; FSDP's
	// MixedPrecisionPolicy reduce_dtype: an fp32 reduce-scatter input per
	// unit at stage 3); scenarios/stack.go.
	ReduceDType ReduceDType `yaml:"reduce_dtype,omitempty"`
	// Autocast is the dtype torch.autocast runs an fp32 model's matmuls
	// in: none (unset) or bf16 or fp16 with param_dtype fp32 at ZeRO stage
	// 0 (torch DDP) or under PyTorch FSDP (zero_stage 2 or 3 with
	// communication.boundary fsdp1, fsdp2 or fsdp2_head). The fp32
	// parameters are the optimizer's own (no master copy); each weight's
	// 16-bit cast lives from its forward to its backward
	// (scenarios/autocast.go, scenarios/autocast_fsdp.go).
	// bf16 over bf16 parameters under stack deepspeed at stages 1–3 is
	// DeepSpeed's torch_autocast beside bf16.enabled
	// (Training.AutocastOps): no weight is cast, the ops on autocast's
	// fp32 lists keep fp32 copies (memory/tensors.go).
	Autocast DType `yaml:"autocast,omitempty"`
	// OptimizerImpl is how the optimizer's update runs on the GPU: seed
	// (unset: seed 000's traffic), fused, foreach or composer; it sets the
	// optimizer's HBM bytes per shard element (zero.OptimizerBytesPerElem).
	OptimizerImpl OptimizerImpl `yaml:"optimizer_impl,omitempty"`
	// GradClip is gradient clipping per optimizer step: none (unset) or
	// norm (one more read, and a read and write, of the gradient shard).
	GradClip GradClip `yaml:"grad_clip,omitempty"`
	// MaxGradNorm is grad_clip norm's max_norm (clip_grad_norm_'s
	// argument); 0 (unset) is DefaultMaxGradNorm. Only zerosim verify's
	// numerics read it: the step's cost does not depend on it.
	MaxGradNorm float64 `yaml:"max_grad_norm,omitempty"`
	// FlatParamViews is PyTorch FSDP1's flat parameter: a unit's
	// parameters are views of it (torch.split), so in every micro-step's
	// backward autograd copies the unit's unsharded gradients into one flat
	// gradient (zero/archspec.go, flatGradCopyBytes).
	FlatParamViews bool `yaml:"flat_param_views,omitempty"`
	// Dropout is the dropout probability; masks are kept only when > 0.
	Dropout float64 `yaml:"dropout,omitempty"`
	// RecomputeEarlyStop is PyTorch's early stop of non-reentrant
	// checkpointing (the default of torch.utils.checkpoint with
	// use_reentrant=False since PyTorch 2.1): a fully recomputed block does
	// not rerun its MLP down projection. false (default): the whole block
	// reruns (reentrant checkpointing: DeepSpeed, Megatron; PyTorch < 2.1).
	RecomputeEarlyStop bool `yaml:"recompute_early_stop,omitempty"`
	// RecomputeEvery applies training.recompute to every N-th block only
	// (torchtitan's selective_ac_option = N); 1 (default): every block.
	RecomputeEvery int `yaml:"recompute_every,omitempty"`
	// RecomputeFraction applies training.recompute to a fraction p of the
	// blocks, placed as fms-fsdp places them (memory.Placement), written
	// as fms-fsdp's selective_checkpointing is: "1/2", "2/3" or a decimal
	// such as 0.5, in (0, 1]. Exclusive with recompute_every; "" (default):
	// recompute_every decides.
	RecomputeFraction string `yaml:"recompute_fraction,omitempty"`
	// RecomputeFractionP is RecomputeFraction's value, set by Resolve; 0
	// when none is given.
	RecomputeFractionP float64 `yaml:"-" json:"-"`
	// OpForceRecompute is torchtitan's
	// activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns,
	// read under recompute: op only: FQN fragments; every Linear of a
	// block whose FQN below the block (BlockLinearFQNs) holds one gives its
	// (in, out) weight shape, and every mm of the block with a weight of
	// one of those shapes is recomputed and left out of the policy's
	// every-other-mm count (memory's forceShapes). Unset (nil) is
	// torchtitan's default, DefaultOpForceRecompute (["moe.router.gate"]);
	// an empty list forces nothing.
	OpForceRecompute *[]string `yaml:"op_force_recompute,omitempty"`
	// OpRecomputeAttention, under recompute: op with attention_kernel
	// cudnn, is torchtitan's op policy before b39377f (2025-12-01, "add
	// all SDPA backends to op_sac_save_list"): its _save_list held
	// _scaled_dot_product_flash_attention and _efficient_attention but not
	// _scaled_dot_product_cudnn_attention (torchtitan/models/llama3/infra/
	// parallelize.py lines 234-243 at 6fc499f6f), which its
	// ScaledDotProductAttention asked for first on compute capability
	// 10.0 and up from 3b85aa3 (2025-05-14; torchtitan/models/attention.py
	// lines 210-211 at 6fc499f6f) and on every GPU from 6a3a9da
	// (2025-10-09). The attention's output and log-sum-exp are then not
	// kept, and its forward reruns in backward (memory.BlockDims.
	// OpRecomputeAttention, zero.PlanCompute). false (default): the
	// attention's outputs are kept, as torchtitan since b39377f.
	OpRecomputeAttention bool `yaml:"op_recompute_attention,omitempty"`
	// OpSaveAllToAll, under recompute: op with expert parallelism, is
	// torchtitan's op policy from c4e2291155a4 (2025-09-06, "Save _to_copy
	// and a2a in selective AC policy", pytorch/torchtitan#1672), which put
	// torch.ops._c10d_functional.all_to_all_single.default in deepseek_v3's
	// and llama4's _save_list (torchtitan/models/deepseek_v3/infra/
	// parallelize.py line 38 at c4e2291155a4785bbef1d87dc64561a5ad54c121;
	// gpt_oss's list had it from its first commit, de335b321, 2025-10-22;
	// qwen3's not up to 238fa9953e4a). The caching dispatch mode then keeps
	// the dispatch's and the combine's received tokens, and backward sends
	// neither again (memory.OpSavesAllToAll). false (default): they are
	// rerun in backward, as every torchtitan before c4e2291 did, whose MoE
	// policy was llama3's list without it (deepseek_v3/infra/parallelize.py
	// line 27 at 8a749c618: apply_ac from llama3), and as the stack preset's
	// torchtitan 9dec370 (no MoE) counts nothing for.
	OpSaveAllToAll bool `yaml:"op_save_all_to_all,omitempty"`
	// OpSaveAbs, under recompute: op with fp8: torchao and the blocks
	// not compiled, is torchtitan's op policy from 87e2c09c4 (2024-11-26,
	// pytorch/torchtitan#704, fixing #701) to 88247277c (2025-02-06,
	// #820), whose _save_list held torch.ops.aten.abs.default
	// (torchtitan/parallelisms/parallelize_llama.py lines 234-243 at
	// 87e2c09c45c138c46f52ab624969fb7bf20bf92b, lines 214-223 at
	// 9dec370ad26b5f8e9a7333a0e36165018262644b; gone at
	// 88247277c6b91b3490838dff08b0649c64c62e08). torchao's tensorwise
	// cast takes each scale from torch.max(torch.abs(x)), so the caching
	// dispatch mode keeps a 16-bit |x| of every tensor a Float8Linear
	// casts in forward until the block's recompute
	// (memory.OpSavesAbs). false: torchtitan before 87e2c09c4 and from
	// 88247277c, and whatever the list under compiled blocks. The stack
	// preset's torchtitan 9dec370 is inside the window (true). A fact of
	// the torchtitan version, it counts nothing, and draws no warning,
	// elsewhere (the preset sets it for every run).
	OpSaveAbs bool `yaml:"op_save_abs,omitempty"`
	// Steps is how many steps verify runs (default 5); Seed seeds toy data.
	Steps int   `yaml:"steps,omitempty"`
	Seed  int64 `yaml:"seed,omitempty"`
}

// Communication configures buckets, algorithms, overlap and prefetch.
type Communication struct {
	BucketSize units.Bytes `yaml:"bucket_size,omitempty"`
	// Algorithm is auto (default: NCCL's choice per size), nvls,
	// nvlstree, or zerosim's alpha-beta ring, hierarchical or tree.
	Algorithm Algorithm `yaml:"algorithm,omitempty"`
	// NCCLAlgo and NCCLProto are NCCL_ALGO and NCCL_PROTO (NCCL's lists:
	// "Ring", "Ring,Tree", "^NVLS"; ParseNCCLList) as the training job
	// sets them, restricting NCCL's tuner under algorithm auto, nvls or
	// nvlstree; empty: the link preset's (TCPXO), else NCCL's default.
	NCCLAlgo  string `yaml:"nccl_algo,omitempty"`
	NCCLProto string `yaml:"nccl_proto,omitempty"`
	// NCCLVersion is the NCCL version the cluster runs ("2.26", "2.26.2";
	// ParseNCCLVersion), whose tuner's constants the model takes (they
	// changed between releases); empty: DefaultNCCLRelease.
	NCCLVersion string `yaml:"nccl_version,omitempty"`
	// Calibration names a calibration file (zerosim calibrate), relative
	// to the scenario file; CalibrationData is its content after Load.
	Calibration     string       `yaml:"calibration,omitempty"`
	CalibrationData *Calibration `yaml:"-"`
	// Overlap defaults to true.
	Overlap *bool `yaml:"overlap,omitempty"`
	// PrefetchDepth is how many ZeRO-3 units are gathered ahead (default 1).
	PrefetchDepth *int `yaml:"prefetch_depth,omitempty"`
	// BackwardPrefetchDepth is the prefetch depth in backward; nil (unset)
	// means prefetch_depth. 0 is PyTorch FSDP's BACKWARD_POST: the next
	// unit's all-gather starts when the current unit's backward ends.
	BackwardPrefetchDepth *int `yaml:"backward_prefetch_depth,omitempty"`
	// MaxInflightAllGathers caps concurrent ZeRO-3 all-gathers (default 2).
	MaxInflightAllGathers int `yaml:"max_inflight_allgathers,omitempty"`
	// LimitAllGathers is FSDP1's limit_all_gathers (communication.boundary:
	// fsdp1 only; default true, torch's since 2.1). False turns its rate
	// limiter off: the host then issues every unit's all-gather as it
	// reaches the unit, and the caching allocator holds the blocks of the
	// units it released ahead of the GPU (memory.host_lead; see
	// scenarios.HostRunsAhead and memory/profiler.go, GatherPool).
	LimitAllGathers *bool `yaml:"limit_all_gathers,omitempty"`
	// Zero1AllReduce selects seed 001's original ZeRO-1: all-reduce of the
	// gradients instead of reduce-scatter.
	Zero1AllReduce bool `yaml:"zero1_allreduce,omitempty"`
	// OverlapParamGather overlaps the parameter all-gather with the next
	// forward (seed 000's pre-hook), stages 1 and 2: nothing is gathered
	// after the optimizer, and each bucket's gather is dispatched by the
	// pre-hook of the module before it, as Megatron-Core does
	// (zero/paramgather.go).
	OverlapParamGather bool `yaml:"overlap_param_gather,omitempty"`
	// Boundary is how ZeRO-3 units cross from forward to backward: reshard
	// (default: every unit gathers again), fsdp1, fsdp2 or deepspeed (see
	// memory/boundary.go).
	Boundary Boundary `yaml:"boundary,omitempty"`
	// ComputeInterference is the fraction by which compute slows while a
	// collective runs on its GPU (default 0.189, Lee et al. 2025).
	ComputeInterference *float64 `yaml:"compute_interference,omitempty"`
	// CollectiveInterference is the fraction by which a collective's
	// transfers slow while compute runs on a GPU of its group (default 0:
	// no published figure; see DefaultCollectiveInterference).
	CollectiveInterference *float64 `yaml:"collective_interference,omitempty"`
	// Padding is "toy" (one buffer padded to a multiple of the shard group,
	// default) or "megatron" (Megatron-Core's param-and-grad buffer rules).
	Padding Padding `yaml:"padding,omitempty"`
	// ZeRO++ (DeepSpeed's zero_optimization keys, stage 3 only; see
	// zeropp.go): qwZ, hpZ and qgZ.
	ZeroQuantizedWeights   bool `yaml:"zero_quantized_weights,omitempty"`
	ZeroHPZPartitionSize   int  `yaml:"zero_hpz_partition_size,omitempty"`
	ZeroQuantizedGradients bool `yaml:"zero_quantized_gradients,omitempty"`
	// MemoryEfficientLinear is whether DeepSpeed's ZeRO-3 memory-efficient
	// linear covers the model's linear layers (stage 3 under
	// communication.boundary: deepspeed only; default true). false counts,
	// from each unit's forward to its backward, the gathered weights that
	// autograd still references after DeepSpeed has released them: set it
	// when zero_optimization.memory_efficient_linear is false, or when the
	// model was built before deepspeed.initialize, outside
	// deepspeed.zero.Init, under a DeepSpeed before 617061d6b (2026-07-31,
	// PR #8189). See memory/savedweights.go.
	MemoryEfficientLinear *bool `yaml:"memory_efficient_linear,omitempty"`
	// MoEDispatcher is the expert-parallel token dispatcher (moe.go):
	// alltoall (empty when unset: Megatron's MoEAlltoAllTokenDispatcher,
	// every token's top-k copies) or deepep, flex, hybridep (a token once
	// per destination node over the network, then once per destination
	// GPU over NVLink).
	MoEDispatcher MoEDispatcher `yaml:"moe_dispatcher,omitempty"`
}

// MemoryConfig holds fixed per-rank overheads shown as separate items.
type MemoryConfig struct {
	RuntimeContext units.Bytes `yaml:"runtime_context,omitempty"`
	NCCLBuffers    units.Bytes `yaml:"nccl_buffers,omitempty"`
	// Activations toggles activation memory (default true when the model
	// has transformer dimensions).
	Activations *bool `yaml:"activations,omitempty"`
	// AllocatorOverhead is the caching allocator's reserved peak over the
	// allocated peak. Unset (nil), the reserved peak is simulated under
	// PyTorch FSDP at stage 3 (memory/allocseq.go) and
	// DefaultAllocatorOverhead applies elsewhere (memory/profiler.go);
	// set, it applies everywhere.
	AllocatorOverhead *float64 `yaml:"allocator_overhead,omitempty"`
	// ExpandableSegments is PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
	// for the caching allocator the reserved peak is simulated with
	// (default false, PyTorch's default; memory/allocator.go).
	ExpandableSegments *bool `yaml:"expandable_segments,omitempty"`
	// FSDP2RSOwnStream is FSDP2 as PyTorch ran it before 2.5: its
	// reduce-scatter input allocated on the reduce-scatter stream, until
	// pytorch/pytorch#129721 (2024-06-27) allocated it on the default
	// stream "to avoid fragmenting that memory across stream memory
	// pools" (default false, today's FSDP2; the output stays on the
	// reduce-scatter stream in every version: memory/allocseq.go).
	FSDP2RSOwnStream *bool `yaml:"fsdp2_rs_own_stream,omitempty"`
	// AllocatorOverheadFrom names where AllocatorOverhead came from when a
	// calibration file set it (communication.calibration's memory part,
	// with memory.allocator_overhead unset); empty otherwise.
	AllocatorOverheadFrom string `yaml:"-"`
	// HostLead is, under DeepSpeed ZeRO-3 (communication.boundary:
	// deepspeed) or FSDP1 without its rate limiter
	// (communication.limit_all_gathers false), the fraction of the
	// parameters gathered and released in forward that the caching
	// allocator still holds when backward begins, because the host ran
	// ahead of the GPU (default 1; see memory/profiler.go).
	HostLead *float64 `yaml:"host_lead,omitempty"`
}

// SeqLenNote is the one of Warnings that says model.seq_len is not given
// and the imported model trains at zerosim's default, "" when there is
// none: a command whose every point or variant sets model.seq_len (sweep
// --grid, compare --vary) drops it from the file's own load.
func (s *Scenario) SeqLenNote() string { return s.seqLenNote }

// CountsNoActivations reports a model zerosim counts no activations,
// attention or output logits for: a generic model (a bare model.params,
// or a layer list without dims) none of whose units gives
// activation_bytes. Its memory and step time are lower bounds, and no
// micro-batch or checkpointing choice can be judged on it
// (ActivationsWarning).
func (s *Scenario) CountsNoActivations() bool {
	return s.Model.Kind == KindGeneric && !slices.ContainsFunc(s.Model.LayerList, func(l Layer) bool { return l.ActivationBytes > 0 })
}

// ActivationsKey is the key that gives a model counting no activations
// (CountsNoActivations) its size, where ActivationsWarning is placed:
// model.params, model.layer_list or model; "" for a model that counts
// them.
func (s *Scenario) ActivationsKey() string { return s.activationsKey }

// N is the size of the ZeRO group, dp·cp.
func (s *Scenario) N() int { return s.Parallelism.DP * max(s.Parallelism.CP, 1) }

// RankSeqLen is the tokens of each sequence one rank holds under context
// parallelism, ceil(seq_len/cp) (seq_len itself at cp = 1, 0 for a model
// without a sequence). The ceiling never rounds a transformer's sequence:
// resolveCPAttention, like torchtitan's head-tail load balancer it cites,
// refuses a seq_len that 2·cp does not divide.
func (s *Scenario) RankSeqLen() int64 {
	cp := int64(max(s.Parallelism.CP, 1))
	return (s.Model.SeqLen + cp - 1) / cp
}

// GPUs is the number of GPUs in the cluster.
func (s *Scenario) GPUs() int { return s.Cluster.Nodes * s.Cluster.GPUsPerNode }

// Label names the resolved model as run's header does: its preset, else
// its kind ("model" for neither), with the imported config's class when
// there is one: "llama2-7b", "transformer (LlamaForCausalLM)".
func (m *Model) Label() string {
	name := m.Preset
	if name == "" {
		name = m.Kind
	}
	if name == "" {
		name = "model"
	}
	if m.Architecture != "" {
		name += " (" + m.Architecture + ")"
	}
	return name
}

// TotalParams sums the parameters of the resolved layer list.
func (m *Model) TotalParams() int64 {
	var t int64
	for _, l := range m.LayerList {
		t += int64(l.Params)
	}
	return t
}

// Prefetch is communication.prefetch_depth, DefaultPrefetchDepth where it
// is unset (Load sets it; a scenario built or edited in code may not).
func (c Communication) Prefetch() int {
	if c.PrefetchDepth != nil {
		return *c.PrefetchDepth
	}
	return DefaultPrefetchDepth
}
