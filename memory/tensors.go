package memory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// This file derives activation memory tensor by tensor: for one transformer
// block (and the output head with its loss) it lists every tensor autograd
// keeps from forward for backward, with its size formula, and then applies a
// checkpointing policy. docs/memory-model.md documents each tensor.
//
// Notation (all counts, bytes follow): t = s·b tokens of the micro-batch
// (s the sequence length on this rank, b the micro-batch), h the hidden size,
// a the attention heads, kv = kv_heads·h/a the key/value width, f the FFN
// width, V the vocabulary. Activations are 16-bit (e = 2 bytes); norm
// statistics, the attention log-sum-exp and the loss are fp32.

// Attention kernels (training.attention).
const (
	// AttentionFlash is FlashAttention (Dao et al., flash-attn): it keeps q,
	// k, v, the output and a fp32 log-sum-exp per row; no s² scores; GQA
	// natively (k, v at kv width); its output is the out-projection's input.
	AttentionFlash = "flash"
	// AttentionSDPA is torch.nn.functional.scaled_dot_product_attention as
	// torchtitan calls it (torchtitan/models/llama/model.py at 9dec370ad26b:
	// repeat_kv expands k and v to every head before the call). Its output
	// is the out-projection's input with no copy: the flash and efficient
	// backends write it as [b, s, heads, d] and return a transposed view
	// (pytorch aten/src/ATen/native/transformers/cuda/attention.cu at
	// 007ae17e, _scaled_dot_product_flash_attention_cuda and
	// _scaled_dot_product_efficient_attention_cuda), so the model's
	// transpose(1, 2).contiguous() before wo is a view.
	AttentionSDPA = "sdpa"
	// AttentionEager is softmax(QKᵀ/√d)·V written out: the s² scores are
	// kept (Korthikanti et al. 2022, §4.1).
	AttentionEager = "eager"
)

// Checkpointing policies (training.recompute).
const (
	PolicyNone      = "none"
	PolicyFull      = "full"
	PolicySelective = "selective"
	PolicyOp        = "op"
)

// BlockDims are the dimensions the activation model needs.
type BlockDims struct {
	// Arch is "gpt" (LayerNorm, GeLU MLP, fused QKV, biases, learned
	// positions) or "llama" (RMSNorm, SwiGLU, separate q/k/v, RoPE).
	Arch                   string
	Seq, Batch             int64
	Hidden, Heads, KVHeads int64
	FFN, Vocab             int64
	Dropout                bool   // dropout > 0: masks are kept
	Attention              string // AttentionFlash (default), AttentionSDPA or AttentionEager
	HeadDim                int64  // 0 means Hidden/Heads
	LossFP32               bool   // the loss upcasts the logits to fp32 (torchtitan, HF)
	// KeepLogits is the element size of the logits the model returns when
	// the training loop keeps them referenced (training.keep_logits: 2
	// for param_dtype, 4 for fp32), 0 when it frees them before backward.
	// They are counted by KeptLogits, not HeadActivation.
	KeepLogits int64
	// Compiled: the block runs under torch.compile (training.compile:
	// blocks), so AOTAutograd's min-cut partitioner, not eager autograd,
	// decides what is kept (see compiledRules below).
	Compiled bool
	// NormFused: the block's two RMSNorms and the final norm are
	// torchtitan's fused_rmsnorm (training.norm_impl: fused,
	// scenarios.NormFused): each keeps its 16-bit input and the fp32 rstd
	// per row, not the fp32 upcast and the normalized tensor (see
	// BlockTensors' norm).
	NormFused bool
	// LossCompiled: the loss runs under torch.compile (training.compile:
	// loss): HeadActivation keeps the 16-bit logits instead of the fp32
	// log-probabilities (see HeadActivation).
	LossCompiled bool
	// LossAutocast: the loss is cross-entropy on the 16-bit logits
	// inside torch.autocast (training.cross_entropy: autocast,
	// scenarios.CrossEntropyAutocast): it saves 16-bit log-probabilities
	// and nll_loss's fp32 copy of them, and its backward starts with an
	// fp32 dense gradient (headParts).
	LossAutocast bool
	// LossFused: the loss is flash-attn's fused cross-entropy
	// (training.cross_entropy: fused): see HeadActivation.
	LossFused bool
	// Liger is Liger Kernel's patch of a Hugging Face Llama-family model
	// (training.liger, scenarios/liger.go, which cites each kernel at
	// linkedin/Liger-Kernel v0.5.6 c3c2d4fa): its RMSNorms keep what
	// NormFused's do (set NormFused with it), its SwiGLU keeps the gate
	// and up outputs but no silu(gate) (BlockTensors), and its fused
	// linear cross-entropy replaces the head's projection and loss
	// (headParts, HeadLossTemps, HeadProjectionBackward).
	// LigerWeightElem is the element size of the output weight the head
	// multiplies (its gradient, accumulated in forward, has the weight's
	// dtype), LigerLogitsElem that of a chunk's logits (the matmul's
	// output dtype: the input's).
	Liger                            bool
	LigerWeightElem, LigerLogitsElem int64
	// LossSavesUpcast: the loss's fp32 copy of the logits is the tensor
	// it saves for backward, worked on in place (Megatron's
	// VocabParallelCrossEntropy under stack: megatron): no upcast beside
	// the saved output (HeadLossTemps).
	LossSavesUpcast bool
	// LossChunks is training.loss_chunks, torchtitan's ChunkedLossWrapper
	// (scenarios/losschunks.go): above 1, the output projection, the
	// loss and their backward run on Seq·Batch/LossChunks tokens at a
	// time, so the loss's tensors (headParts' loss and grads,
	// HeadLossTemps, HeadProjectionBackward) are one chunk's, and the
	// wrapper's own [T, D] gradient buffers come beside them
	// (ChunkedLossBuffers). 0 or 1: one pass over all tokens.
	LossChunks int64
	// InputFP32 marks a block whose input, the residual stream, is fp32:
	// torch.autocast over an fp32 model (training.autocast), whose fp32
	// embedding output and fp32 residual adds keep the stream fp32
	// (scenarios/autocast_fsdp.go). A checkpointed block (policies op and
	// full) keeps it at 4·t·h. Its norms see fp32 inputs: a LayerNorm
	// saves the fp32 stream (4·t·h, as under Autocast), and an eager
	// RMSNorm's normalized tensor, hidden_states.to(input_dtype) with
	// input_dtype fp32 (LlamaRMSNorm.forward,
	// src/transformers/models/llama/modeling_llama.py at
	// huggingface/transformers 002272831fba584eb30dca9729c1be456836960a;
	// Meta's reference RMSNorm's .type_as(x) the same), is fp32, which the
	// fp32 weight's mul saves: 4·t·h in place of 2·t·h, the final norm's
	// too (headParts; the final norm stays eager under compiled blocks,
	// torchtitan compiling each block alone). A compiled block's or a
	// fused norm's input is still counted 16-bit.
	InputFP32 bool
	// NoFFN marks a block without a dense MLP (a MoE block whose routed
	// experts are a unit of their own): its FFN tensors are left out.
	NoFFN bool
	// SharedFFN is the intermediate size of a MoE block's shared expert
	// MLP, which every token goes through (0: none); SharedGate its
	// Qwen2-MoE sigmoid gate (scenarios.BlockDims).
	SharedFFN  int64
	SharedGate bool
	// RouterExperts is the number of routed experts of the MoE layer the
	// block holds (its routed experts are the next unit; 0: none): its
	// router gate moe.router.gate is an mm of the block's forward (an
	// addmm when RouterBias, gpt-oss's) that the op policy recomputes
	// without counting it under its default OpForce (forceShapes): only
	// the op policy reads them.
	RouterExperts int64
	RouterBias    bool
	// OpForce is training.op_force_recompute (torchtitan's
	// per_op_sac_force_recompute_mm_shapes_by_fqns) as
	// scenarios.Training.OpForceJoined gives it: its FQN fragments joined
	// by "\n"; OpForceGiven false is torchtitan's default,
	// scenarios.DefaultOpForceRecompute, so that dimensions written without
	// it force the router gate. Only the op policy reads them (forceShapes).
	OpForce      string
	OpForceGiven bool
	// OpRecomputeAttention is scenarios.Training.OpRecomputeAttention:
	// torchtitan's op policy before b39377f, whose _save_list lacked
	// _scaled_dot_product_cudnn_attention, keeps neither the attention
	// kernel's output nor its log-sum-exp (they are not OpSaved: the
	// backward rebuilds them by rerunning the kernel's forward). Only the
	// op policy reads it.
	OpRecomputeAttention bool
	// OpSaveAbs: the op policy's _save_list holds aten.abs and the block's
	// Linears are torchao's Float8Linear in eager mode
	// (scenarios.Training.OpSaveAbs, OpSavesAbs): it keeps the 16-bit abs
	// of every tensor they cast, the inputs and, under OpAbsWeights (no
	// float8 all-gather), the unsharded weights (opAbs). Only the op
	// policy reads them.
	OpSaveAbs, OpAbsWeights bool
	// ValueUnpadded marks a flash attention that takes MLA's value at its
	// own width, narrower than q·k: torchtitan's deepseek_v3
	// Attention.forward hands SDPA and FlexAttention v as torch.split
	// leaves it, a view of wkv_b's output, with no F.pad
	// (torchtitan/models/deepseek_v3/model/model.py lines 297-316 at
	// 238fa9953e4aec2a62582121564273d7cbb1e9f1), so its saved tensors
	// are sdpa's; transformers pads it under flash_attention_2
	// (scenarios.BlockDims.KernelValueDim). Only MLA blocks read it.
	ValueUnpadded bool
	// QKVBias, OBias and MLPBias mark the biases of the block's q, k and
	// v projections (a gpt block's fused qkv; MLA's wq_a and wkv_a), of
	// its out-projection, and of its MLPs, dense and shared
	// (scenarios.BlockDims; the gpt preset's blocks have all three,
	// scenarios' buildLayers): a Linear with a bias runs aten.addmm, not
	// aten.mm, which the op policy neither counts nor keeps (opParity).
	// gpt-oss sets all three (attention_bias; its routed experts run
	// torch._grouped_mm).
	QKVBias, OBias, MLPBias bool
	// Multi-head latent attention (scenarios.BlockDims): ValueHeadDim is
	// the value width per head (0: HeadDim), RopeHeadDim the rotary part
	// of HeadDim, QLoRARank and KVLoRARank the low-rank widths; KVLoRARank
	// > 0 selects mlaAttention.
	ValueHeadDim, RopeHeadDim int64
	QLoRARank, KVLoRARank     int64
	// OutputGate: Qwen3-Next's gated attention (scenarios.BlockDims):
	// sigmoid(gate)·attention output before the out-projection.
	OutputGate bool
	// LinearAttention (scenarios.LinearGatedDeltaNet) replaces the softmax
	// attention by a Gated DeltaNet of LinearKeyHeads and LinearValueHeads
	// heads of LinearKeyHeadDim and LinearValueHeadDim (gatedDeltaNet).
	LinearAttention                      string
	LinearKeyHeads, LinearValueHeads     int64
	LinearKeyHeadDim, LinearValueHeadDim int64
	// LinearSplitProj: the Gated DeltaNet runs Qwen3.5's four input
	// projections in_proj_qkv, in_proj_z, in_proj_b, in_proj_a instead of
	// Qwen3-Next's in_proj_qkvz and in_proj_ba
	// (scenarios.GDNSplitProjections; gatedDeltaNet).
	LinearSplitProj bool
	// SDPAMask: the block's SDPA call gets transformers' materialised
	// sliding-window or chunked mask (sdpaMask, sdpamask.go), and keeps
	// the additive bias it makes of it for backward.
	SDPAMask bool
	// QKNorm and Norms are the block's query/key norms and its layout of
	// hidden-size norms (scenarios.BlockDims.QKNorm, Norms: see normSaved
	// and BlockTensors); Norms also gives the final norm's kind
	// (HeadActivation).
	QKNorm, Norms string
	// SoftmaxFP32: eager attention computes its softmax in fp32 and
	// keeps that result beside the 16-bit copy matmul(p, v) reads
	// (transformers' eager_attention_forward; scenarios.HFEagerSoftmaxFP32);
	// false keeps one 16-bit softmax output (Megatron's fused kernel,
	// Korthikanti et al. 2022). AttnSoftcap: the scores pass through
	// cap·tanh(scores/cap) first (scenarios.BlockDims.AttnSoftcap).
	SoftmaxFP32, AttnSoftcap bool
	// Autocast: the block runs under torch.autocast, over parameters of
	// the autocast dtype (scenarios.Training.AutocastOps: DeepSpeed's
	// torch_autocast beside bf16.enabled) or over an fp32 model
	// (scenarios.Training.Autocasts, with InputFP32: there layer_norm's
	// input is the fp32 residual stream itself, which it saves, 4·t·h,
	// with no cast; softmax is on the same policy, the weights' casts are
	// memory/autocast.go's). Autocast's fp32 policies
	// (AT_FORALL_FP32: layer_norm, native_layer_norm;
	// AT_FORALL_FP32_SET_OPT_DTYPE: softmax; the lists
	// aten/src/ATen/autocast_mode.cpp at pytorch/pytorch
	// 008ec6b1840c94ff6d0f685bc10fbf585167c673 registers) run
	// them on fp32 copies of their 16-bit inputs (cached_cast(at::kFloat,
	// ...), never cached: the cache keeps only lower-precision casts of
	// fp32 leaves), and autograd sees the cast before the op: a GPT
	// block's LayerNorm saves the fp32 copy of its input, 4·t·h in place
	// of 2·t·h (its fp32 output is a temporary the next linear casts back
	// to bf16 and saves, 2·t·h as before), and eager attention's softmax
	// writes fp32 probabilities, which softmax saves, and the bmm with v
	// saves their bf16 cast (the tensors of SoftmaxFP32). The
	// lower-precision ops (linear, bmm, baddbmm: AT_FORALL_LOWER_PRECISION_FP)
	// find bf16 inputs and cast nothing. An eager Llama block's RMSNorm
	// already works in fp32 (x.float()) and is unchanged.
	Autocast bool
	// LogitSoftcap: the head passes the logits through
	// cap·tanh(logits/cap) before the loss (scenarios.Model.LogitSoftcap;
	// HeadActivation).
	LogitSoftcap bool
	// FP8Inputs: the block's linear layers are Transformer Engine's under
	// an fp8 recipe (training.fp8: te or te_current), which keep for the
	// weight-gradient GEMM the fp8 copy of their input, 1 byte an element,
	// not the 16-bit input (teFP8Input): a dense softmax-attention block's
	// q/k/v input, out-projection input, FFN input and fc2 (w2) input.
	// The 16-bit tensors other ops keep are unchanged.
	FP8Inputs bool
	// FP8ProjOriginal: under FP8Inputs the out-projection keeps the
	// attention kernel's 16-bit output, which the kernel keeps anyway,
	// instead of an fp8 copy of it (Megatron-core's set_save_original_input
	// for current scaling; see blockTensors). Without it a flash/sdpa
	// block's out-projection adds an fp8 copy of the attention output.
	FP8ProjOriginal bool
	// MegatronTE: a llama block as Megatron-core builds it with
	// Transformer Engine (stack: megatron;
	// get_gpt_layer_with_transformer_engine_spec, the spec zero's
	// megatronChain runs). Its two RMSNorms are fused into linear_qkv and
	// linear_fc1 (TE's LayerNormLinear) and the final norm is a TENorm:
	// each keeps its 16-bit input and the fp32 rsigma per row
	// (_LayerNormLinear.forward's ctx.save_for_backward(inputmat,
	// ln_weight, mu, rsigma, ..., ln_out, ...), transformer_engine/
	// pytorch/module/layernorm_linear.py lines 321-331 at
	// TransformerEngine v1.11 c27ee60ec746210bcea4ec33958dbbff06706506;
	// mu is None for RMSNorm), and the normalized ln_out only as the
	// linear's input, 16-bit, or fp8 under FP8Inputs: NormFused's tensors.
	// Its SwiGLU is bias_swiglu_impl (bias_activation_fusion, Megatron-LM's
	// --bias-swiglu-fusion default; NeMo's bias_activation_fusion: true),
	// whose SwiGLUFunction keeps only its input, linear_fc1's gate and up
	// output (ctx.save_for_backward(input_for_backward),
	// megatron/core/fusions/fused_bias_swiglu.py line 63 at Megatron-LM
	// core_v0.9.0 1afee592e85ac7994887eb5f4ef3998f76384333, line 235 at
	// d98e8a64ddf34856e74b24714e3bedb2f5a39553; in fp8 only under
	// activation_func_fp8_input_store, off by default, not modelled), not
	// eager SiLU's and the product's factors.
	MegatronTE bool
	// MegatronLocal: a llama block as Megatron-core builds it from its own
	// modules (training.transformer_impl: local, --transformer-impl local;
	// get_gpt_layer_local_spec, megatron/core/models/gpt/gpt_layer_specs.py
	// at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553). Its
	// RMSNorms are torch.nn.RMSNorm (WrappedTorchNorm: LocalSpecProvider.
	// layer_norm, megatron/core/models/backends.py lines 118-127 at
	// d98e8a64), PyTorch's composite rms_norm, which upcasts x to fp32 and
	// multiplies by rsqrt(mean(x²) + eps) as separate ops: the eager
	// norm's tensors, not TE's. Its ColumnParallelLinear/RowParallelLinear
	// keep their 16-bit inputs (LinearWithGradAccumulationAndAsyncCommunication,
	// megatron/core/tensor_parallel/layers.py at d98e8a64), as an eager
	// linear does. Its MLP is the same MLP module as the TE block's
	// (megatron/core/transformer/mlp.py lines 275-309 at d98e8a64), so
	// bias_swiglu_impl keeps linear_fc1's gate and up output alone, as
	// under MegatronTE.
	MegatronLocal bool
	// NormATen: under MegatronLocal, or in torchtitan's eager Llama-style
	// blocks (llama3, llama4, qwen3, deepseek_v3, gpt_oss from torchtitan
	// 3b39d7ab0), torch.nn.RMSNorm runs aten::_fused_rms_norm
	// (training.norm_impl aten_fused, the local block's default: PyTorch
	// 2.9 or later with the weight in the input's dtype,
	// scenarios.NormATen), whose
	// autograd node keeps the norm's 16-bit input and the fp32 rstd per
	// row (derivatives.yaml's _fused_rms_norm: _fused_rms_norm_backward(
	// grad, input, normalized_shape, result1, weight, ...), pytorch/pytorch
	// tools/autograd/derivatives.yaml): NormFused's tensors, for the
	// block's norms, q/k norms, MLA's q_norm and kv_norm and the final
	// norm. Without it (norm_impl
	// fp32, PyTorch 2.8 or earlier) the composite rms_norm's: the fp32
	// upcast, rstd and the normalized tensor.
	NormATen bool
}

// teFP8Input is what a Transformer Engine linear layer keeps of its input
// for backward under fp8 (FP8Inputs): the fp8 transpose of the input that
// its forward casts (fp8_cast_transpose_fused), 1 byte an element, and not
// the 16-bit input: _Linear.forward saves saved_inputmat_t = inputmat_t
// "if fp8 and not fp8_meta["recipe"].override_linear_precision.wgrad",
// saved_inputmat = inputmat_no_fp8 only otherwise
// (transformer_engine/pytorch/module/linear.py lines 288-299 at
// NVIDIA/TransformerEngine v1.11, c27ee60ec746210bcea4ec33958dbbff06706506;
// v1.13 e5edd6cc3d lines 296-305 the same; v0.10 96ed6fc69d lines 226-230,
// llm-foundry's, the same). _LayerNormLinear and _LayerNormMLP write the
// norm's output ln_out in uint8 "if fp8 and not return_layernorm_output"
// and save it, with the norm's 16-bit input and rsigma
// (layernorm_linear.py lines 321-331, layernorm_mlp.py: ln_out and the
// activation's fp8 output gelu_out beside the 16-bit fc1_out, at v1.11).
// Transformer Engine 2.x keeps the quantized input's column-wise data only
// (linear.py lines 597-621 at d0067d0da6cb01811b8072a7d304f0e00344ce2b:
// inputmat.update_usage(rowwise_usage=False, columnwise_usage=True)), 1
// byte an element for per-tensor fp8 too. It returns the bytes of t·w
// elements of a linear layer's input and their formula, 16-bit without
// FP8Inputs.
func (d *BlockDims) teFP8Input(c *calc, t, w int64, wf string) (int64, string) {
	if d.FP8Inputs {
		return c.Mul(t, w), "t·" + wf + " (fp8)"
	}
	return c.Mul(2, t, w), "2·t·" + wf
}

// SavedTensor is one tensor autograd keeps from forward for backward.
type SavedTensor struct {
	Name    string // what it is, e.g. "ffn.w1 output (silu input)"
	SavedBy string // the op that saves it
	Formula string // its size in the notation above
	Bytes   int64
	// Core is set on the tensors of the core attention (scores, softmax,
	// attention dropout, log-sum-exp) that Korthikanti's selective
	// recomputation rebuilds.
	Core bool
	// OpSaved is set when torchtitan's op-level policy keeps it: the
	// outputs of the ops in its _save_list (the odd-numbered mms, opParity;
	// the SDPA/flash outputs) and the block input.
	OpSaved bool
	// OpOutput is set when the tensor is a view of an mm output that the
	// op policy keeps besides (opParity): the fused attention kernels'
	// v is a view of wv's output when repeat_kv does not copy it (flash,
	// or as many kv heads as heads), and a GPT block's q, k and v are
	// views of the fused qkv output. The policy's recomputation finds
	// that output cached (torch/utils/checkpoint.py as of PyTorch's v2.4.0
	// tag, where create_selective_checkpoint_contexts became public:
	// _CachedTorchDispatchMode returns a MUST_SAVE op's stored output)
	// and rebuilds nothing for it.
	OpOutput bool
}

func (d *BlockDims) check() error {
	if d.Seq <= 0 || d.Batch <= 0 || d.Hidden <= 0 || d.Heads <= 0 {
		return fmt.Errorf("activations need seq_len, micro_batch, hidden, heads > 0 (got %d, %d, %d, %d)", d.Seq, d.Batch, d.Hidden, d.Heads)
	}
	if d.KVHeads <= 0 {
		d.KVHeads = d.Heads
	}
	if d.HeadDim <= 0 {
		d.HeadDim = d.Hidden / d.Heads
	}
	if d.FFN <= 0 && !d.NoFFN {
		d.FFN = 4 * d.Hidden
	}
	if d.KeepLogits != 0 && d.KeepLogits != 2 && d.KeepLogits != 4 {
		return fmt.Errorf("kept logits of %d bytes per element: use 2 or 4", d.KeepLogits)
	}
	if d.LossChunks < 0 {
		return fmt.Errorf("loss chunks %d: use a count ≥ 1", d.LossChunks)
	}
	if d.LossChunks > 1 {
		var c calc
		t := c.Mul(d.Seq, d.Batch)
		if c.Err != nil {
			return fmt.Errorf("loss chunks %d: the %d×%d tokens overflow: %w", d.LossChunks, d.Batch, d.Seq, c.Err)
		}
		if _, err := scenarios.LossChunkTokens(t, d.LossChunks); err != nil {
			return err
		}
	}
	if d.RouterExperts < 0 {
		return fmt.Errorf("activations need router experts ≥ 0 (got %d)", d.RouterExperts)
	}
	if d.SharedFFN < 0 || d.ValueHeadDim < 0 || d.RopeHeadDim < 0 || d.QLoRARank < 0 || d.KVLoRARank < 0 {
		return fmt.Errorf("activations need shared_ffn, value_head_dim, rope_head_dim, q_lora_rank, kv_lora_rank ≥ 0 (got %d, %d, %d, %d, %d)",
			d.SharedFFN, d.ValueHeadDim, d.RopeHeadDim, d.QLoRARank, d.KVLoRARank)
	}
	if d.LinearAttention != "" && (d.LinearAttention != scenarios.LinearGatedDeltaNet || d.LinearKeyHeads <= 0 || d.LinearValueHeads <= 0 ||
		d.LinearKeyHeadDim <= 0 || d.LinearValueHeadDim <= 0) {
		return fmt.Errorf("activations need linear_attention %s with linear_key_heads, linear_value_heads, linear_key_head_dim, linear_value_head_dim > 0 (got %q, %d, %d, %d, %d)",
			scenarios.LinearGatedDeltaNet, d.LinearAttention, d.LinearKeyHeads, d.LinearValueHeads, d.LinearKeyHeadDim, d.LinearValueHeadDim)
	}
	if d.RopeHeadDim > d.HeadDim {
		return fmt.Errorf("activations need rope_head_dim ≤ head_dim (got %d > %d)", d.RopeHeadDim, d.HeadDim)
	}
	if d.Attention == "" {
		d.Attention = AttentionFlash
	}
	switch d.Attention {
	case AttentionFlash, AttentionSDPA, AttentionEager:
	default:
		return fmt.Errorf("training.attention %q: use flash, sdpa or eager", d.Attention)
	}
	switch d.Arch {
	case "", "gpt", "llama":
	default:
		return fmt.Errorf("model.arch %q: activations are derived for gpt and llama blocks", d.Arch)
	}
	switch d.QKNorm {
	case "", scenarios.QKNormRMSHead, scenarios.QKNormRMSFull, scenarios.QKNormGemma, scenarios.QKNormL2:
	default:
		return fmt.Errorf("qk_norm %q: use %s, %s, %s or %s", d.QKNorm, scenarios.QKNormRMSHead, scenarios.QKNormRMSFull, scenarios.QKNormGemma, scenarios.QKNormL2)
	}
	if d.Norms != "" && d.Norms != scenarios.NormsGemma && d.Norms != scenarios.NormsFP32 {
		return fmt.Errorf("norms %q: use %s, %s or none", d.Norms, scenarios.NormsGemma, scenarios.NormsFP32)
	}
	if (d.QKNorm != "" || d.Norms != "") && d.Arch != "llama" {
		return fmt.Errorf("qk_norm and norms are derived for llama blocks (RMSNorm), not %q", d.Arch)
	}
	if d.NormFused && (d.Arch != "llama" || d.Compiled || d.Norms != "") {
		return fmt.Errorf("norm_impl fused is derived for eager llama blocks with Llama's norms (got arch %q, compiled %v, norms %q)", d.Arch, d.Compiled, d.Norms)
	}
	if d.Liger && (!d.NormFused || d.LossCompiled || d.LossFused || d.LossAutocast || d.LossChunks > 1 || d.KeepLogits > 0 || d.LigerWeightElem <= 0 || d.LigerLogitsElem <= 0) {
		return fmt.Errorf("liger needs its fused norms, its own loss and element sizes > 0 (got NormFused %v, weight %d B, logits %d B)", d.NormFused, d.LigerWeightElem, d.LigerLogitsElem)
	}
	if d.NormATen && (d.Arch != "llama" || d.Norms != "" || d.MegatronTE || d.Autocast || d.InputFP32) {
		return fmt.Errorf("norm_impl aten_fused is derived for llama blocks whose 16-bit norms are torch.nn.RMSNorm (got arch %q, norms %q, MegatronTE %v, autocast %v, fp32 input %v)", d.Arch, d.Norms, d.MegatronTE, d.Autocast, d.InputFP32)
	}
	if d.MegatronLocal && (d.MegatronTE || d.Arch != "llama" || d.Compiled || d.Norms != "") {
		return fmt.Errorf("Megatron's local block is derived for eager llama blocks with Llama's norms, without Transformer Engine's (got arch %q, compiled %v, norms %q, MegatronTE %v)", d.Arch, d.Compiled, d.Norms, d.MegatronTE)
	}
	if d.MegatronTE && (d.Arch != "llama" || d.Compiled || d.Norms != "") {
		return fmt.Errorf("Megatron's Transformer Engine block is derived for eager llama blocks with Llama's norms (got arch %q, compiled %v, norms %q)", d.Arch, d.Compiled, d.Norms)
	}
	return nil
}

// compiledRules: what a block compiled with torch.compile keeps.
//
// torch.compile traces forward and backward into one joint graph and
// AOTAutograd's min_cut_rematerialization_partition (pytorch/pytorch
// torch/_functorch/partitioners.py at c28ba8e5893e9806da1ec8bdad05370b86f22823,
// solve_min_cut and should_ban_recomputation) cuts it: a forward value is
// saved when the backward needs it and it may not be recomputed, every
// other value the backward needs is recomputed inside the backward kernels.
// With the defaults (torch/_functorch/config.py at
// 00a1abb4ef74f047662e57678240bbe3dfe46ef0: ban_recompute_materialized_backward,
// ban_recompute_reductions, ban_recompute_not_in_allowlist all True; these
// heuristics date from pytorch/pytorch#121692, March 2024, before the torch
// builds of the runs modelled here, 1963fc8 of December 2024 and 2.8.0a0)
// that means, for the tensors of BlockTensors:
//
//   - graph inputs (the block input) and the outputs of compute-intensive ops
//     (mm, the SDPA/flash kernels: compute_intensive_ops) are never
//     recomputed: kept when the backward needs them;
//   - a value a non-fusible backward op reads (an mm's input for its weight
//     gradient, the attention kernel's q, k, v for its backward) is
//     "materialized in backward" and kept: the norm outputs, the out-
//     projection input, silu(w1)·w3 — the same tensors eager keeps;
//   - reductions whose output is 4× smaller than their input are kept: the
//     norms' fp32 mean of squares / rstd (4·t);
//   - pointwise ops on the allowlist (convert_element_type, mul, rsqrt,
//     silu, ...) are recomputed from the above and fused into the backward
//     kernels. So a Llama block does not keep RMSNorm's fp32 upcast x.float()
//     (4·t·h) nor its bf16 normalized tensor (2·t·h); it keeps the norm's
//     16-bit input (2·t·h: the block input, and the residual sum h before
//     the FFN norm). SwiGLU's silu(w1) (2·t·f) is recomputed from w1's
//     output.
//
// A GPT block keeps the same tensors compiled as eager: LayerNorm saves its
// input and statistics in eager too, and GeLU's input and output are an mm
// output and an mm input.
//
// Under a checkpointing policy the partitioner follows the policy's tags
// (must_recompute for PREFER_RECOMPUTE nodes, should_ban_recomputation for
// MUST_SAVE) and then drops every saved value the backward graph does not
// read (_extract_fwd_bwd_modules: "filter out saved values that don't
// actually end up being used by the backwards pass"): under torchtitan's
// op policy the w2 output, which eager selective checkpointing caches
// (torch/utils/checkpoint.py as of PyTorch's v2.4.0 tag,
// _CachingTorchDispatchMode stores every MUST_SAVE output; compiling, it
// only tags the node's "recompute" meta for the partitioner), feeds only
// the residual add and is not kept.

// BlockTensors lists what autograd keeps for one transformer block with no
// checkpointing, in forward order, eager or compiled (d.Compiled,
// compiledRules). The first entry is the block input. OpSaved and OpOutput
// say what torchtitan's op policy does with each (opParity).
func BlockTensors(d BlockDims) ([]SavedTensor, error) {
	ts, _, _, err := blockTensors(d)
	return ts, err
}

// blockTensors is BlockTensors with the op policy's kept mm outputs that
// are no tensor of the list (opParity), each at its place in the forward.
func blockTensors(d BlockDims) ([]SavedTensor, []opExtra, []blockMM, error) {
	if err := d.check(); err != nil {
		return nil, nil, nil, err
	}
	var c calc
	t := c.Mul(d.Seq, d.Batch)
	h, f, a, s, b := d.Hidden, d.FFN, d.Heads, d.Seq, d.Batch
	qw := c.Mul(a, d.HeadDim)          // query width
	kvw := c.Mul(d.KVHeads, d.HeadDim) // key/value width
	var out []SavedTensor
	add := func(name, by, formula string, bytes int64, core, op bool) {
		out = append(out, SavedTensor{Name: name, SavedBy: by, Formula: formula, Bytes: bytes, Core: core, OpSaved: op})
	}
	mt := &mmTrack{out: &out, t: t} // the block's aten.mm calls (opParity)
	llama := d.Arch == "llama"
	if d.LinearAttention != "" || d.KVLoRARank > 0 {
		// FP8Inputs covers dense softmax-attention blocks, the layers
		// Megatron's and llm-foundry's Transformer Engine specs build;
		// a Gated DeltaNet's or MLA's projections stay 16-bit here.
		d.FP8Inputs = false
	}
	// lin is what a linear layer of the block keeps of its t·w-element
	// input (teFP8Input).
	lin := func(w int64, wf string) (int64, string) { return d.teFP8Input(&c, t, w, wf) }
	compiled := llama && d.Compiled // a GPT block keeps the same tensors compiled
	// fused: torchtitan's fused_rmsnorm (torchtitan/models/norms.py at
	// 157a12c562288b3bccb077003a97f18a4ca657aa, TritonFusedRMSNorm.forward:
	// ctx.save_for_backward(x, weight, rstd)) keeps the norm's 16-bit input
	// and the fp32 rstd per row; the normalized tensor exists only inside
	// the Triton kernel and x is never upcast outside it. Its output y is
	// the next matmul's input, kept by that matmul as with the eager norm.
	// aten: torch.nn.RMSNorm on aten::_fused_rms_norm (NormATen) keeps the
	// same two, the q/k norms' too.
	aten := llama && d.NormATen
	fused := llama && (d.NormFused || d.MegatronTE || aten)
	fusedBy := "fused_rmsnorm"
	switch {
	case d.Liger:
		fusedBy = "LigerRMSNorm"
	case d.MegatronTE:
		fusedBy = "TE LayerNormLinear"
	case aten:
		fusedBy = "aten::_fused_rms_norm"
	}
	// Norm before attention. LayerNorm (GPT) saves its input plus fp32 mean
	// and rstd per row; the eager RMSNorm of Meta's reference model
	// (meta-llama/llama llama/model.py at 8580eb9a896b RMSNorm, the same code in
	// torchtitan's norms.py) computes in fp32: x.float() is saved by the rsqrt multiply
	// (4·t·h), with rstd (4·t), and the bf16 normalized tensor by the weight
	// multiply (2·t·h); its output is the next matmul's input.
	// rmsNorm is a norm of kind style (normSaved) over t·w elements in
	// rows rows (formula names wf and rowsF) inside the block; input names
	// its 16-bit input, which a compiled block keeps.
	rmsNorm := func(which, style string, w, rows int64, wf, rowsF, input string) {
		if compiled || aten && input != "" {
			by := "compiled block"
			if aten && !compiled {
				by = fusedBy
			}
			add(input, by, "2·t·"+wf, c.Mul(2, t, w), false, false)
			add(which+" rstd (fp32)", by, "4·"+rowsF, c.Mul(4, rows), false, false)
			return
		}
		add(which+" input in fp32 (x.float())", "pow, mul(x, rstd)", "4·t·"+wf, c.Mul(4, t, w), false, false)
		add(which+" rstd (fp32)", "mul(x, rstd)", "4·"+rowsF, c.Mul(4, rows), false, false)
		switch style {
		case normFP32Affine:
			add(which+" normalized (fp32)", "mul(·, 1 + weight)", "4·t·"+wf, c.Mul(4, t, w), false, false)
		case normFP32Input:
			add(which+" normalized (fp32, the input's dtype)", "mul(weight, ·)", "4·t·"+wf, c.Mul(4, t, w), false, false)
		case normNoWeight:
		default:
			add(which+" normalized (bf16)", "mul(·, weight)", "2·t·"+wf, c.Mul(2, t, w), false, false)
		}
	}
	// normOf is an RMSNorm of width w (formula name wf) inside the block,
	// one statistic per token, its weight multiplying the 16-bit
	// normalized tensor.
	normOf := func(which string, w int64, wf, input string) {
		rmsNorm(which, "", w, t, wf, "t", input)
	}
	hiddenNorm := "" // the kind of the block's hidden-size norms
	if d.Norms == scenarios.NormsGemma || d.Norms == scenarios.NormsFP32 {
		hiddenNorm = normFP32Affine
	}
	norm := func(which string, first bool) {
		switch {
		case compiled || fused:
			// compiledRules: the 16-bit input (the block input is entry 0)
			// and the fp32 rstd; x.float() and the normalized tensor are
			// recomputed from them in the backward kernel. The fused norm
			// saves the same two (fused above).
			by := "compiled block"
			if fused && !compiled {
				by = fusedBy
			}
			if !first {
				add(which+" input (residual sum, bf16)", by, "2·t·h", c.Mul(2, t, h), false, false)
			}
			add(which+" rstd (fp32)", by, "4·t", c.Mul(4, t), false, false)
		case llama:
			style := hiddenNorm
			if d.InputFP32 && style == "" {
				style = normFP32Input
			}
			rmsNorm(which, style, h, t, "h", "t", "")
		default:
			name := which + " input"
			if first {
				name = "block input (" + which + " input)"
			}
			if d.Autocast || d.InputFP32 {
				// Autocast's fp32 copy of the input, or the fp32
				// residual stream itself (InputFP32), which
				// native_layer_norm saves (BlockDims.Autocast).
				what := " cast to fp32 (autocast)"
				if d.InputFP32 {
					what = " (fp32 residual stream)"
				}
				add(name+what, "layer_norm", "4·t·h", c.Mul(4, t, h), false, first)
			} else {
				add(name, "layer_norm", "2·t·h", c.Mul(2, t, h), false, first)
			}
			add(which+" mean and rstd (fp32)", "layer_norm", "8·t", c.Mul(8, t), false, false)
		}
	}
	switch {
	case compiled:
		// A graph input the backward reads (the attention norm's backward
		// recomputes x.float() from it): kept, with or without
		// checkpointing.
		add("block input (attention norm input, bf16)", "compiled block", "2·t·h", c.Mul(2, t, h), false, true)
	case fused:
		// The fused attention norm saves its input, the block input:
		// kept, with or without checkpointing.
		add("block input (attention norm input, bf16)", fusedBy, "2·t·h", c.Mul(2, t, h), false, true)
	case llama:
		// The block input itself is consumed by x.float() and the residual
		// add, which save nothing; only checkpointing keeps it.
		add("block input (checkpoint boundary)", "checkpoint", "2·t·h", c.Mul(2, t, h), false, true)
		out[0].Bytes, out[0].Formula = 0, "0 (kept only under checkpointing: 2·t·h)"
	}
	norm("attention norm", true)
	if d.LinearAttention != "" {
		add("attention norm output (in_proj_qkvz and in_proj_ba input)", "mm", "2·t·h", c.Mul(2, t, h), false, false)
	} else {
		n, fm := lin(h, "h")
		add("attention norm output (q/k/v input)", "mm", fm, n, false, false)
	}
	vw := c.Mul(d.KVHeads, d.vHeadDim()) // value width
	ow := c.Mul(a, d.vHeadDim())         // attention output width
	// The projections of softmax attention, in forward order: llama's
	// wq, wk, wv (torchtitan torchtitan/models/llama3/model/model.py at
	// 238fa9953e4aec2a62582121564273d7cbb1e9f1 line 251: xq, xk, xv =
	// self.wq(x), self.wk(x), self.wv(x); transformers' q_proj, k_proj,
	// v_proj likewise; under Qwen3-Next's output gate q_proj is twice as
	// wide), a gpt block's one fused qkv.
	iq, ik, iv := -1, -1, -1
	if d.LinearAttention == "" && d.KVLoRARank == 0 {
		if llama {
			qb := c.Mul(2, t, qw)
			if d.OutputGate {
				qb = c.Mul(4, t, qw)
			}
			iq = mt.mm("attention.wq", qb, h, false, d.QKVBias)
			ik = mt.mm("attention.wk", c.Mul(2, t, kvw), h, false, d.QKVBias)
			iv = mt.mm("attention.wv", c.Mul(2, t, vw), h, false, d.QKVBias)
		} else {
			iq = mt.mm("attention.qkv", c.Mul(2, t, c.Add(qw, c.Mul(2, kvw))), h, false, d.QKVBias)
		}
	}
	if d.QKNorm != "" && d.LinearAttention == "" && d.KVLoRARank == 0 {
		n := len(out)
		qkNorms(d, t, &c, rmsNorm)
		if (compiled || aten) && d.QKNorm != scenarios.QKNormL2 {
			// Compiled, q_norm and k_norm keep their 16-bit inputs
			// first (out[n], out[n+2]): the k_proj output, and the
			// q_proj output, or under the output gate its query half,
			// a view of it (torch.chunk).
			if d.OutputGate {
				mt.mms[iq].views = append(mt.mms[iq].views, n)
			} else {
				mt.mms[iq].whole = n
			}
			mt.mms[ik].whole = n + 2
		}
	}
	switch {
	case d.LinearAttention != "":
		gatedDeltaNet(d, t, &c, add, mt)
	case d.KVLoRARank > 0:
		// q_a_layernorm and kv_a_layernorm keep their 16-bit inputs
		// compiled, and on aten::_fused_rms_norm (torchtitan's
		// deepseek_v3 q_norm and kv_norm, nn.RMSNorm).
		mlaAttention(d, t, &c, add, normOf, mt, compiled || aten)
	case d.Attention == AttentionEager:
		kvKept, vKept, kvFormula, vFormula := kvw, vw, "2·t·kv", "2·t·kv"
		if d.KVHeads != d.Heads {
			kvKept, vKept = qw, ow
			kvFormula, vFormula = "2·t·h (repeat_kv expands to every head)", "2·t·h (repeat_kv expands to every head)"
		}
		add("q", "matmul(q, kᵀ)", "2·t·h", c.Mul(2, t, qw), false, false)
		add("k", "matmul(q, kᵀ)", kvFormula, c.Mul(2, t, kvKept), false, false)
		eagerScores(d, &c, add)
		add("v", "matmul(p, v)", vFormula, c.Mul(2, t, vKept), false, false)
		n, fm := lin(ow, "h")
		add("attention output (out-projection input)", "mm", fm, n, false, false)
	default:
		kvKept, vKept, kvFormula := kvw, vw, "2·t·kv"
		if d.Attention != AttentionFlash && d.KVHeads != d.Heads {
			kvKept, vKept, kvFormula = qw, ow, "2·t·h (repeat_kv expands to every head)"
		}
		// The fused kernels keep q, k, v, their output and the fp32
		// log-sum-exp (b·a·s); dropout keeps only the RNG state.
		// repeat_kv's expand(...).reshape(...) copies k and v to every
		// head; unexpanded, v is wv's output (llama: RoPE makes new q and
		// k) and GPT's q, k and v are the fused qkv output's (OpOutput).
		expanded := kvKept != kvw
		if llama {
			add("q after RoPE", "attention kernel", "2·t·h", c.Mul(2, t, qw), false, false)
			add("k after RoPE", "attention kernel", kvFormula, c.Mul(2, t, kvKept), false, false)
			add("v", "attention kernel", kvFormula, c.Mul(2, t, vKept), false, false)
			if !expanded {
				mt.viewLast(iv)
			}
		} else {
			add("q", "attention kernel", "2·t·h", c.Mul(2, t, qw), false, false)
			mt.viewLast(iq)
			add("k", "attention kernel", kvFormula, c.Mul(2, t, kvKept), false, false)
			if !expanded {
				mt.viewLast(iq)
			}
			add("v", "attention kernel", kvFormula, c.Mul(2, t, vKept), false, false)
			if !expanded {
				mt.viewLast(iq)
			}
		}
		// The op policy keeps both as the outputs of an op of its
		// _save_list, unless the kernel's op is not in it
		// (OpRecomputeAttention).
		add("attention output", "attention kernel", "2·t·h", c.Mul(2, t, ow), false, !d.OpRecomputeAttention)
		add("attention log-sum-exp (fp32)", "attention kernel", "4·a·s·b", c.Mul(4, a, s, b), true, !d.OpRecomputeAttention)
		if d.FP8Inputs && !d.FP8ProjOriginal && !d.OutputGate {
			// The kernel keeps its 16-bit output, and the out-projection
			// its own fp8 copy of it (teFP8Input): both, unless the
			// projection saves the original (FP8ProjOriginal).
			add("attention output in fp8 (out-projection input)", "te Linear", "t·h (fp8)", c.Mul(t, ow), false, false)
		}
	}
	if d.SDPAMask && d.Attention == AttentionSDPA && d.LinearAttention == "" {
		// The memory-efficient kernel's attn_bias: the boolean mask
		// made additive in the query's dtype, its last dimension
		// padded to a multiple of 8 (sdpamask.go).
		_, bias, err := SDPAMaskBytes(b, s)
		if err != nil {
			return nil, nil, nil, err
		}
		add("attention bias (the sdpa mask made additive, bf16)", "_scaled_dot_product_efficient_attention", "2·b·s·⌈s/8⌉·8", bias, true, false)
	}
	if d.OutputGate && d.LinearAttention == "" {
		// Qwen3NextAttention: attn_output · sigmoid(gate) before o_proj.
		// sigmoid keeps its output and the product keeps both factors
		// (the attention output, counted above, and the sigmoid output);
		// the product is o_proj's input, which the mm keeps.
		add("output gate sigmoid(gate) (q_proj's second half)", "sigmoid, mul", "2·t·h", c.Mul(2, t, ow), false, false)
		n, fm := lin(ow, "h")
		add("gated attention output (o_proj input)", "mm", fm, n, false, false)
	}
	// The out-projection (wo, o_proj, a gpt block's proj, a Gated
	// DeltaNet's out_proj, MLA's wo): only the residual add reads its
	// output, unless Gemma's post_attention_layernorm normalizes it first.
	woIn := ow // the out-projection's input width
	if d.LinearAttention != "" {
		woIn = c.Mul(d.LinearValueHeads, d.LinearValueHeadDim)
	}
	wo := "attention.wo"
	if d.LinearAttention != "" {
		wo = "attention.out_proj"
	}
	io := mt.mm(wo, c.Mul(2, t, h), woIn, d.Norms != scenarios.NormsGemma, d.OBias)
	if d.Norms == scenarios.NormsGemma {
		// post_attention_layernorm normalizes o_proj's output, which its
		// x.float() consumes (nothing of the 16-bit output is kept), before
		// the residual add; compiled, its first tensor is that output.
		if compiled {
			mt.mms[io].whole = len(out)
		}
		rmsNorm("post_attention_layernorm", hiddenNorm, h, t, "h", "t", "post_attention_layernorm input (o_proj output, bf16)")
	}
	if d.Dropout {
		add("attention residual dropout mask", "dropout", "t·h", c.Mul(t, h), false, false)
	}
	norm("ffn norm", false)
	n, fm := lin(h, "h")
	add("ffn norm output (ffn input)", "mm", fm, n, false, false)
	if d.RouterExperts > 0 {
		// torchtitan's MoE.forward (torchtitan/models/moe/moe.py at
		// 238fa9953e4aec2a62582121564273d7cbb1e9f1) runs the router first:
		// scores = self.gate(x) (line 312), a Linear(dim, num_experts,
		// bias=False) on the 2-D tokens, one aten.mm whose 16-bit output
		// only the fp32 copy scores.to(torch.float32) reads (2·t·E).
		// Under torchtitan's default force list the op policy
		// recomputes it and does not count it (forceShapes). The routed experts that follow run
		// torch._grouped_mm (_run_experts_grouped_mm, use_grouped_mm True
		// by default), no aten.mm: they count no mm (opParity). Then the
		// shared experts.
		mt.mm("moe.router.gate", c.Mul(2, t, d.RouterExperts), h, false, d.RouterBias)
	}
	// gateUpNoSilu records a SwiGLU FFN that keeps w1's and w3's outputs
	// but no silu output (it is recomputed in backward), then w2's input.
	gateUpNoSilu := func(w1Name, w3Name, by string) {
		i1 := mt.mm("feed_forward.w1", c.Mul(2, t, f), h, false, d.MLPBias)
		add(w1Name, by, "2·t·f", c.Mul(2, t, f), false, false)
		mt.wholeLast(i1)
		i3 := mt.mm("feed_forward.w3", c.Mul(2, t, f), h, false, d.MLPBias)
		add(w3Name, by, "2·t·f", c.Mul(2, t, f), false, false)
		mt.wholeLast(i3)
		n, fm := lin(f, "f")
		add("silu(w1)·w3 (w2 input)", "mm", fm, n, false, false)
	}
	// The FFN: FeedForward.forward is self.w2(F.silu(self.w1(x)) *
	// self.w3(x)) (torchtitan/models/llama3/model/model.py line 343 and
	// torchtitan/models/moe/moe.py line 68 at 238fa99): w1, then w3, then
	// w2; autograd keeps w1's output (silu's input) and w3's (the
	// product's factor). A gpt block's fc1, fc2.
	switch {
	case d.NoFFN:
	case compiled:
		// silu(w1) is recomputed from w1's output (compiledRules).
		gateUpNoSilu("w1 output (silu input)", "w3 output", "compiled block")
	case llama && (d.MegatronTE || d.MegatronLocal):
		// linear_fc1 is one GEMM writing the gate and up halves side by
		// side; bias_swiglu_impl keeps that output alone (MegatronTE,
		// MegatronLocal).
		i1 := mt.mm("mlp.linear_fc1", c.Mul(4, t, f), h, false, d.MLPBias)
		add("linear_fc1 output (gate and up: the SwiGLU input)", "bias_swiglu_impl", "4·t·f", c.Mul(4, t, f), false, false)
		mt.wholeLast(i1)
		n, fm := lin(f, "f")
		add("SwiGLU output (linear_fc2 input)", "linear_fc2", fm, n, false, false)
	case llama && d.Liger:
		// LigerSiLUMulFunction saves a and b, the gate and up outputs,
		// and recomputes silu(a) in its backward (ops/swiglu.py lines
		// 50-54 and 108 at Liger-Kernel c3c2d4fa): no silu output.
		gateUpNoSilu("w1 output (gate: SwiGLU input a)", "w3 output (up: SwiGLU input b)", "LigerSiLUMulFunction")
	case llama:
		i1 := mt.mm("feed_forward.w1", c.Mul(2, t, f), h, false, d.MLPBias)
		add("w1 output (silu input)", "silu", "2·t·f", c.Mul(2, t, f), false, false)
		mt.wholeLast(i1)
		add("silu output", "mul", "2·t·f", c.Mul(2, t, f), false, false)
		i3 := mt.mm("feed_forward.w3", c.Mul(2, t, f), h, false, d.MLPBias)
		add("w3 output", "mul", "2·t·f", c.Mul(2, t, f), false, false)
		mt.wholeLast(i3)
		n, fm := lin(f, "f")
		add("silu(w1)·w3 (w2 input)", "mm", fm, n, false, false)
	default:
		i1 := mt.mm("feed_forward.w1", c.Mul(2, t, f), h, false, d.MLPBias)
		add("fc1 output (gelu input)", "gelu", "2·t·f", c.Mul(2, t, f), false, false)
		mt.wholeLast(i1)
		n, fm := lin(f, "f")
		add("gelu output (fc2 input)", "mm", fm, n, false, false)
	}
	if !d.NoFFN {
		// w2 (fc2): only the residual add reads its output, unless
		// Gemma's post_feedforward_layernorm normalizes it first.
		i2 := mt.mm("feed_forward.w2", c.Mul(2, t, h), f, d.Norms != scenarios.NormsGemma, d.MLPBias)
		if compiled && d.Norms == scenarios.NormsGemma {
			mt.mms[i2].whole = len(out)
		}
	}
	if d.NoFFN && d.SharedFFN > 0 {
		sharedExpert(d, t, &c, add, compiled, mt)
	}
	if d.Norms == scenarios.NormsGemma {
		rmsNorm("post_feedforward_layernorm", hiddenNorm, h, t, "h", "t", "post_feedforward_layernorm input (down_proj output, bf16)")
	}
	if d.Dropout {
		add("ffn residual dropout mask", "dropout", "t·h", c.Mul(t, h), false, false)
	}
	forceShapes(mt.mms, d.opForceFragments())
	if c.Err != nil {
		return nil, nil, nil, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	extra := opParity(out, mt.mms, compiled)
	if d.OpSaveAbs {
		abs, err := opAbs(mt.mms, t, d.OpAbsWeights)
		if err != nil {
			return nil, nil, nil, err
		}
		// Each Float8Linear's abs before its mm's kept output: both
		// lists are in forward order, and a stable sort keeps abs first
		// where they share a place.
		extra = append(abs, extra...)
		slices.SortStableFunc(extra, func(a, b opExtra) int { return cmp.Compare(a.at, b.at) })
	}
	return out, extra, mt.mms, nil
}

// forceShapes marks the mms of a block torchtitan's op policy recomputes
// without counting them. _apply_op_sac (torchtitan/distributed/
// activation_checkpoint.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1,
// lines 76-93) walks the checkpointed block's named_modules() and, for
// every nn.Linear whose FQN contains one of
// activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns
// (training.op_force_recompute: frags; torchtitan's default
// ["moe.router.gate"], torchtitan/config/job_config.py lines 661-663, the
// router's gate Linear(dim, num_experts) of every MoE block), adds its
// weight's (in_features, out_features); _custom_policy (lines 110-113)
// returns PREFER_RECOMPUTE for an aten.mm whose rhs has one of those
// shapes before it increments the mm count. So every mm of the block with
// such a rhs, the matched Linear's and any other of the same shape (for
// Qwen3-Next's h 2048 and 512 experts, its 2 kv heads of 256 and its
// shared expert of 512 too), is never kept and does not move the parity
// of the mms after it. An mm's rhs is (k, n), its Linear's (in, out); a
// biased Linear runs addmm (blockMM.biased), which the policy never
// counts, but its shape still forces the aten.mms that share it. The
// mms are named by their FQNs below the block
// (scenarios.BlockLinearFQNs); torchtitan's FQNs carry the prefix
// "layers.<i>.", which is not matched here.
func forceShapes(mms []blockMM, frags []string) {
	shapes := map[[2]int64]bool{}
	for _, m := range mms {
		for _, f := range frags {
			if strings.Contains(m.fqn, f) {
				shapes[[2]int64{m.k, m.n}] = true
				break
			}
		}
	}
	for i := range mms {
		if shapes[[2]int64{mms[i].k, mms[i].n}] {
			mms[i].forced = true
		}
	}
}

// opForceFragments is d's force list (BlockDims.OpForce).
func (d BlockDims) opForceFragments() []string {
	switch {
	case !d.OpForceGiven:
		return scenarios.DefaultOpForceRecompute
	case d.OpForce == "":
		return nil
	}
	return strings.Split(d.OpForce, "\n")
}

// Kinds of RMSNorm by what autograd keeps of them (BlockTensors' rmsNorm).
// Every kind upcasts its input, x.float(), which pow and the multiply by
// the rstd keep (4 bytes per element), and keeps the fp32 rstd, one per
// row (rsqrt saves its result). Then:
//
//   - "" (Llama's RMSNorm, transformers' LlamaRMSNorm and its copies:
//     self.weight * hidden_states.to(input_dtype)): the weight multiply
//     keeps the 16-bit normalized tensor, 2 bytes per element.
//   - normFP32Affine (Gemma2RMSNorm and Gemma3RMSNorm, modeling_gemma2.py
//     @ 006e86931247d7bacf94ad00ada1fb6baf11e94b and modeling_gemma3.py
//     @ 0018aa647bb13801f061e2d1027c326f531b59fb: output =
//     self._norm(x.float()); output * (1.0 + self.weight.float()); then
//     type_as(x)): the (1 + weight) multiply runs in fp32 and keeps the
//     fp32 normalized tensor, 4 bytes per element; type_as keeps nothing.
//   - normNoWeight (Llama4TextL2Norm, modeling_llama4.py
//     @ 63210d0e3b74c2119b7998ff65bc6a2729283626:
//     self._norm(x.float()).type_as(x)): no weight, nothing more.
//
// So a norm over t·w elements in r rows keeps 4·t·w + 4·r plus 2·t·w,
// 4·t·w or nothing.
const (
	normFP32Affine = "fp32_affine"
	// normFP32Input: an eager RMSNorm over an fp32 input (InputFP32),
	// whose normalized tensor stays fp32 (.to(input_dtype)) and is
	// multiplied by the fp32 weight.
	normFP32Input = "fp32_input"
	normNoWeight  = "no_weight"
)

// qkNorms adds what the query and key norms keep (d.QKNorm, the kinds of
// scenarios.QKNormRMSHead and the others). Notation: a heads, kv_h the
// key/value heads, qw = a·head_dim and kv = kv_h·head_dim the widths.
//
//   - QKNormRMSHead (Qwen3, Qwen3-MoE: Qwen3Attention runs
//     self.q_norm(self.q_proj(x).view(…, head_dim)), a Llama RMSNorm over
//     each head): q_norm keeps 4·t·qw + 4·t·a + 2·t·qw, k_norm 4·t·kv +
//     4·t·kv_h + 2·t·kv. The q_proj and k_proj outputs are consumed by the
//     upcast, and the norms' 16-bit outputs by RoPE, which multiplies by
//     cos and sin (no gradient) and keeps nothing of them; the attention
//     keeps the rotated q and k, counted as before.
//   - QKNormRMSFull (OLMo 2 and 3: Olmo2Attention's q_norm and k_norm
//     over the whole q_proj and k_proj outputs, one statistic per token):
//     4·t·qw + 4·t + 2·t·qw and 4·t·kv + 4·t + 2·t·kv.
//   - QKNormGemma (Gemma 3: Gemma3RMSNorm(head_dim) per head, fp32 up to
//     the (1 + weight) multiply): 4·t·qw + 4·t·a + 4·t·qw and 4·t·kv +
//     4·t·kv_h + 4·t·kv.
//   - QKNormL2 (Llama 4's RoPE layers: Llama4TextL2Norm per head on the
//     rotated q and k, no weight): 4·t·qw + 4·t·a and 4·t·kv + 4·t·kv_h;
//     its output is what the attention keeps.
//
// Compiled (compiledRules), each keeps its 16-bit input and its rstd.
func qkNorms(d BlockDims, t int64, c *calc, rms func(which, style string, w, rows int64, wf, rowsF, input string)) {
	qw, kv := c.Mul(d.Heads, d.HeadDim), c.Mul(d.KVHeads, d.HeadDim)
	qRows, kRows, qRowsF, kRowsF := c.Mul(t, d.Heads), c.Mul(t, d.KVHeads), "t·a", "t·kv_h"
	style, qIn, kIn := "", "q_norm input (q_proj output, bf16)", "k_norm input (k_proj output, bf16)"
	switch d.QKNorm {
	case scenarios.QKNormRMSFull:
		qRows, kRows, qRowsF, kRowsF = t, t, "t", "t"
	case scenarios.QKNormGemma:
		style = normFP32Affine
	case scenarios.QKNormL2:
		style, qIn, kIn = normNoWeight, "q_norm input (q after RoPE, bf16)", "k_norm input (k after RoPE, bf16)"
	}
	rms("q_norm", style, qw, qRows, "qw", qRowsF, qIn)
	rms("k_norm", style, kv, kRows, "kv", kRowsF, kIn)
}

// eagerScores adds the s² tensors eager attention keeps between
// matmul(q, kᵀ) and matmul(p, v) (all Core: selective recomputation
// rebuilds them):
//
//   - d.AttnSoftcap (Gemma 2's attn_logit_softcapping: eager_attention_forward
//     runs attn_weights / softcap, torch.tanh, * softcap; modeling_gemma2.py
//     @ 006e86931247d7bacf94ad00ada1fb6baf11e94b): tanh saves its 16-bit
//     output for tanh_backward, 2·a·s²·b; the division and multiplication
//     by a number, the scaling and the mask addition keep nothing.
//   - d.SoftmaxFP32 (transformers' softmax(attn_weights, dim=-1,
//     dtype=torch.float32).to(query.dtype)): _softmax saves its result for
//     _softmax_backward_data, the fp32 probabilities, 4·a·s²·b, and
//     matmul(p, v) saves the 16-bit copy .to() makes, 2·a·s²·b. With
//     dropout the copy feeds only native_dropout, whose backward reads its
//     mask, so the copy is not kept; the mask (1 byte) and the dropout
//     output (kept by matmul) are. Dropout at p = 0 returns its input
//     (aten's _dropout: "if (p == 0 || !train …) return input").
//   - otherwise one 16-bit softmax output, which softmax and matmul(p, v)
//     keep (Korthikanti et al. 2022 §4.1, Megatron's fused
//     ScaledUpperTriangMaskedSoftmax saves softmax_results in the input's
//     dtype: megatron/core/fusions/fused_softmax.py
//     @ 550f9c44589efb85af6c5a11da8fbc8c3491b636), 2·a·s²·b, and with
//     dropout its mask and output, a·s²·b + 2·a·s²·b.
func eagerScores(d BlockDims, c *calc, add addFunc) {
	a, s, b := d.Heads, d.Seq, d.Batch
	if d.AttnSoftcap {
		add("tanh(scores / softcap) output (attn_logit_softcapping)", "tanh", "2·a·s²·b", c.Mul(2, a, s, s, b), true, false)
	}
	switch {
	case d.SoftmaxFP32 || d.Autocast:
		// Under autocast (BlockDims.Autocast) softmax runs on the fp32
		// policy and the bmm with v casts its output back to 16 bits.
		add("softmax output (fp32)", "softmax", "4·a·s²·b", c.Mul(4, a, s, s, b), true, false)
		if !d.Dropout {
			add("softmax output cast to 16 bits (.to(query.dtype))", "matmul(p, v)", "2·a·s²·b", c.Mul(2, a, s, s, b), true, false)
		}
	default:
		add("softmax output", "softmax", "2·a·s²·b", c.Mul(2, a, s, s, b), true, false)
	}
	if d.Dropout {
		add("attention dropout mask", "dropout", "a·s²·b", c.Mul(a, s, s, b), true, false)
		add("attention dropout output", "matmul(p, v)", "2·a·s²·b", c.Mul(2, a, s, s, b), true, false)
	}
}

// vHeadDim is the value width per head: ValueHeadDim, else HeadDim.
func (d *BlockDims) vHeadDim() int64 {
	if d.ValueHeadDim > 0 {
		return d.ValueHeadDim
	}
	return d.HeadDim
}

// addFunc appends a SavedTensor (name, saved by, formula, bytes, core,
// kept by the op policy).
type addFunc func(name, by, formula string, bytes int64, core, op bool)

// sharedExpert adds what a MoE block's shared expert keeps: every token
// goes through it (it is dense, beside the routed experts' unit). Its
// input is the ffn norm output, already counted. DeepSeek-V3's
// DeepseekV3MoE.forward adds shared_experts(residuals), a
// DeepseekV3MLP(intermediate_size = moe_intermediate_size·n_shared_experts)
// (transformers models/deepseek_v3/modeling_deepseek_v3.py
// @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3), and the add saves nothing;
// Qwen2-MoE's Qwen2MoeSparseMoeBlock.forward runs shared_expert, a
// Qwen2MoeMLP(shared_expert_intermediate_size), then
// F.sigmoid(shared_expert_gate(hidden_states)) * shared_expert_output
// (models/qwen2_moe/modeling_qwen2_moe.py
// @ 1c351314a42ac9aef3510fc536c18130d52be2ef): sigmoid keeps its output
// (t·1 values) and the product keeps both factors, the sigmoid output and
// the shared MLP's output (down_proj output, t·h). The MLP keeps what
// SwiGLU keeps (f_s = shared_ffn): gate_proj's output (silu's input),
// silu's output and up_proj's output (the product's factors) and their
// product (down_proj's input), 2·t·f_s each; compiled, silu's output is
// recomputed (compiledRules).
//
// Its mms (opParity), in forward order: gate_proj (w1), up_proj (w3),
// down_proj (w2) as FeedForward runs them (torchtitan's shared_experts,
// torchtitan/models/moe/moe.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1
// line 529, after the routed experts), whose output only the sum with
// the routed experts' reads, or under the gate the product; then
// Qwen2-MoE's shared_expert_gate, a Linear(hidden, 1, bias=False) whose
// output only the sigmoid reads (2·t).
func sharedExpert(d BlockDims, t int64, c *calc, add addFunc, compiled bool, mt *mmTrack) {
	fs := d.SharedFFN
	i1 := mt.mm("moe.shared_experts.w1", c.Mul(2, t, fs), d.Hidden, false, d.MLPBias)
	add("shared expert gate_proj output (silu input)", "silu", "2·t·f_s", c.Mul(2, t, fs), false, false)
	mt.wholeLast(i1)
	if !compiled {
		add("shared expert silu output", "mul", "2·t·f_s", c.Mul(2, t, fs), false, false)
	}
	i3 := mt.mm("moe.shared_experts.w3", c.Mul(2, t, fs), d.Hidden, false, d.MLPBias)
	add("shared expert up_proj output", "mul", "2·t·f_s", c.Mul(2, t, fs), false, false)
	mt.wholeLast(i3)
	add("shared expert silu(gate)·up (down_proj input)", "mm", "2·t·f_s", c.Mul(2, t, fs), false, false)
	i2 := mt.mm("moe.shared_experts.w2", c.Mul(2, t, d.Hidden), fs, !d.SharedGate, d.MLPBias)
	if d.SharedGate {
		mt.mm("moe.shared_expert_gate", c.Mul(2, t), d.Hidden, false, false)
		add("shared_expert_gate sigmoid output", "sigmoid, mul", "2·t", c.Mul(2, t), false, false)
		add("shared expert output (down_proj output)", "mul", "2·t·h", c.Mul(2, t, d.Hidden), false, false)
		mt.wholeLast(i2)
	}
}

// mlaAttention adds what multi-head latent attention keeps between the
// attention norm's output (q_a_proj's and kv_a_proj_with_mqa's input,
// counted by the caller) and o_proj, as transformers'
// DeepseekV3Attention.forward runs it (models/deepseek_v3/
// modeling_deepseek_v3.py @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3;
// DeepSeek-V2's is the same). Notation: a heads, d_qk = head_dim
// (qk_nope + qk_rope), d_r = qk_rope_head_dim, d_v the value width,
// r_q = q_lora_rank, r_kv = kv_lora_rank.
//
//   - q_a_layernorm(q_a_proj(x)) (when q_lora_rank is set) and
//     kv_a_layernorm of the first r_kv columns of kv_a_proj_with_mqa(x) are
//     DeepseekV3RMSNorms, which keep what the block's RMSNorms keep (normOf:
//     x.float(), rstd and the normalized tensor at r_q or r_kv); their
//     outputs are q_b_proj's and kv_b_proj's inputs, 2·t·r each. The
//     projections' outputs themselves are consumed by the norms' upcast or
//     split and by RoPE, which keep nothing of them (RoPE multiplies by
//     constants).
//   - query_states = cat(q_pass, RoPE(q_rot)) and key_states =
//     cat(k_pass, RoPE(k_rot) expanded to every head) are new tensors the
//     attention kernel keeps: 2·t·a·d_qk each.
//   - The value: under FlashAttention it is F.pad(value_states) to d_qk,
//     kept by the kernel (2·t·a·d_qk), with the padded output (2·t·a·d_qk);
//     the output sliced back to d_v is copied by reshape(...) (a sliced
//     view cannot be reshaped in place) into o_proj's input, 2·t·a·d_v.
//     Under SDPA the value is a view of kv_b_proj's output, so keeping it
//     keeps all of that output: 2·t·a·(d_qk − d_r + d_v); the kernel's
//     output is o_proj's input (2·t·a·d_v). Eager's matmul(p, v) copies the
//     strided view into a contiguous batch (2·t·a·d_v) and keeps it, with
//     q, k and the s² scores as for every eager block.
//   - The fused kernels keep the fp32 log-sum-exp, 4·a·s·b.
//
// Its mms (opParity), in forward order as torchtitan's Attention.forward
// runs them (torchtitan/models/deepseek_v3/model/model.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 lines 272-323; transformers'
// q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj the same):
// wq_a (2·t·r_q) and wq_b (2·t·a·d_qk) with q_lora_rank, else wq
// (2·t·a·d_qk); wkv_a (2·t·(r_kv + d_r)); wkv_b (2·t·a·(d_qk − d_r +
// d_v)); then the caller's wo. Autograd keeps none of their outputs but
// kv_b_proj's under SDPA (v is a view of it, which keeps all of it), and,
// compiled (normInput: also on aten::_fused_rms_norm, BlockDims.NormATen),
// q_a_proj's (the norm's 16-bit input) and a view of kv_a_proj_with_mqa's
// (its first r_kv columns).
func mlaAttention(d BlockDims, t int64, c *calc, add addFunc, normOf func(which string, w int64, wf, input string), mt *mmTrack, normInput bool) {
	a, s, b := d.Heads, d.Seq, d.Batch
	qk := c.Mul(a, d.HeadDim)
	v := c.Mul(a, d.vHeadDim())
	if d.QLoRARank > 0 {
		ia := mt.mm("attention.wq_a", c.Mul(2, t, d.QLoRARank), d.Hidden, false, d.QKVBias)
		if normInput {
			mt.mms[ia].whole = len(*mt.out)
		}
		normOf("q_a_layernorm", d.QLoRARank, "r_q", "q_a_layernorm input (q_a_proj output, bf16)")
		add("q_a_layernorm output (q_b_proj input)", "mm", "2·t·r_q", c.Mul(2, t, d.QLoRARank), false, false)
		mt.mm("attention.wq_b", c.Mul(2, t, qk), d.QLoRARank, false, false)
	} else {
		mt.mm("attention.wq", c.Mul(2, t, qk), d.Hidden, false, false)
	}
	ikv := mt.mm("attention.wkv_a", c.Mul(2, t, c.Add(d.KVLoRARank, d.RopeHeadDim)), d.Hidden, false, d.QKVBias)
	if normInput {
		mt.mms[ikv].views = append(mt.mms[ikv].views, len(*mt.out))
	}
	normOf("kv_a_layernorm", d.KVLoRARank, "r_kv", "kv_a_layernorm input (kv_a_proj_with_mqa output, bf16)")
	add("kv_a_layernorm output (kv_b_proj input)", "mm", "2·t·r_kv", c.Mul(2, t, d.KVLoRARank), false, false)
	kvb := c.Mul(a, c.Add(d.HeadDim-d.RopeHeadDim, d.vHeadDim()))
	ib := mt.mm("attention.wkv_b", c.Mul(2, t, kvb), d.KVLoRARank, false, false)
	by := "attention kernel"
	if d.Attention == AttentionEager {
		by = "matmul(q, kᵀ)"
	}
	add("q = cat(q_nope, RoPE(q_rope))", by, "2·t·a·d_qk", c.Mul(2, t, qk), false, false)
	add("k = cat(k_nope, RoPE(k_rope))", by, "2·t·a·d_qk", c.Mul(2, t, qk), false, false)
	attention := d.Attention
	if attention == AttentionFlash && d.ValueUnpadded {
		attention = AttentionSDPA
	}
	switch attention {
	case AttentionFlash:
		add("v zero-padded to d_qk (F.pad)", by, "2·t·a·d_qk", c.Mul(2, t, qk), false, false)
		add("attention output, padded to d_qk", by, "2·t·a·d_qk", c.Mul(2, t, qk), false, !d.OpRecomputeAttention)
		add("attention log-sum-exp (fp32)", by, "4·a·s·b", c.Mul(4, a, s, b), true, !d.OpRecomputeAttention)
		add("o_proj input (output sliced to d_v, copied by reshape)", "mm", "2·t·a·d_v", c.Mul(2, t, v), false, false)
	case AttentionSDPA:
		add("v, a view of kv_b_proj's output (keeps all of it)", by, "2·t·a·(d_qk − d_r + d_v)", c.Mul(2, t, kvb), false, false)
		mt.wholeLast(ib)
		add("attention output (o_proj input)", by, "2·t·a·d_v", c.Mul(2, t, v), false, !d.OpRecomputeAttention)
		add("attention log-sum-exp (fp32)", by, "4·a·s·b", c.Mul(4, a, s, b), true, !d.OpRecomputeAttention)
	default:
		eagerScores(d, c, add)
		add("v (contiguous copy)", "matmul(p, v)", "2·t·a·d_v", c.Mul(2, t, v), false, false)
		add("attention output (o_proj input)", "mm", "2·t·a·d_v", c.Mul(2, t, v), false, false)
	}
}

// gatedDeltaNet adds what a Gated DeltaNet keeps between the attention
// norm's output (in_proj_qkvz's and in_proj_ba's input, counted by the
// caller) and the ffn norm, as transformers' Qwen3NextGatedDeltaNet.forward
// runs it in training on its fast path (models/qwen3_next/
// modeling_qwen3_next.py @ 01cdc6081c7500f9e50c98b1b943c90ecb665db3, with
// causal-conv1d and flash-linear-attention installed; without them it
// falls back to a token loop in eager PyTorch, not modelled). Notation:
// K = linear_key_heads·d_k, V = H_v·d_v (H_v linear_value_heads), all
// 16-bit but the gates' fp32 tensors and the norms' fp32 rstd.
//
//   - mixed_qkv = cat(q, k, v) of in_proj_qkvz's output, 2·t·(2K + V), is
//     causal_conv1d_fn's x, which CausalConv1dFn keeps
//     (ctx.save_for_backward(x, weight, bias, seq_idx, initial_states);
//     causal_conv1d/causal_conv1d_interface.py at Dao-AILab/causal-conv1d
//     dedc05ff2c440225ac30b3fd4f150ff42c852243; the SiLU is fused into the
//     kernel and redone in backward).
//   - beta = b.sigmoid(): sigmoid keeps its output, 2·t·H_v, the tensor
//     the delta rule keeps as beta as well. g = −exp(A_log) ·
//     softplus(a.float() + dt_bias): softplus keeps its fp32 input, the
//     product its fp32 softplus output (A_log needs a gradient), 4·t·H_v
//     each.
//   - chunk_gated_delta_rule with use_qk_l2norm_in_kernel:
//     ChunkGatedDeltaRuleFunction.forward (fla/ops/gated_delta_rule/chunk.py
//     at fla-org/flash-linear-attention 92396f250f2c8f0ad841cecfe29069c8a71a83eb)
//     runs ctx.save_for_backward(q, q_rstd, k, k_rstd, v, g, beta, A, …):
//     q and k l2-normalised at H_v heads (repeat_interleave'd to the value
//     heads first), 2·t·H_v·d_k each, with their fp32 rstd per row,
//     4·t·H_v each; v, a contiguous copy (input_guard) of the convolution
//     output's value columns, 2·t·V; g after chunk_local_cumsum, fp32,
//     4·t·H_v; and A, the chunk's (I + strictly-lower βKKᵀ)⁻¹ in k's dtype
//     (solve_tril), 64 columns per row at chunk size 64, 2·t·H_v·64. The
//     recurrent states h are recomputed in backward, not kept.
//   - norm, fla's FusedRMSNormGated (LayerNormGatedFunction in
//     fla/modules/fused_norm_gate.py at
//     18cc5e82fd22ef1b5de81980877eff554f216aac) keeps its input, the delta
//     rule's output, 2·t·V, its gate z (a contiguous copy of in_proj_qkvz's
//     z columns), 2·t·V, and the fp32 rstd per head, 4·t·H_v; its output is
//     out_proj's input, 2·t·V, which the mm keeps.
//
// None of these is core softmax attention: selective recomputation keeps
// them all. Its mms (opParity), in forward order: in_proj_qkvz
// (2·t·(2K + 2V)) and in_proj_ba (2·t·2H_v), whose outputs autograd keeps
// only copies of (the cat, the contiguous z), then the caller's out_proj.
//
// Qwen3.5's Qwen3_5GatedDeltaNet (d.LinearSplitProj;
// scenarios.GDNSplitProjections) runs four projections instead, in this
// order: in_proj_qkv (2·t·(2K + V)), whose output, transposed, is
// causal_conv1d_fn's x itself (a channel-last view the kernel takes
// without a copy, where Qwen3-Next's is the cat of
// fix_query_key_value_ordering), in_proj_z (2·t·V), whose reshaped output
// is the gated norm's z (a view, contiguous already), in_proj_b and
// in_proj_a (2·t·H_v each), whose outputs only the sigmoid and the fp32
// upcast read. The tensors kept are the same sizes as Qwen3-Next's.
func gatedDeltaNet(d BlockDims, t int64, c *calc, add addFunc, mt *mmTrack) {
	hv := d.LinearValueHeads
	k := c.Mul(d.LinearKeyHeads, d.LinearKeyHeadDim)
	v := c.Mul(hv, d.LinearValueHeadDim)
	z := "gated norm gate z (contiguous copy)"
	if d.LinearSplitProj {
		iqkv := mt.mm("attention.in_proj_qkv", c.Mul(2, t, c.Add(c.Mul(2, k), v)), d.Hidden, false, false)
		add("conv1d input mixed_qkv (in_proj_qkv output)", "causal_conv1d", "2·t·(2K + V)", c.Mul(2, t, c.Add(2*k, v)), false, false)
		mt.wholeLast(iqkv)
		mt.mm("attention.in_proj_z", c.Mul(2, t, v), d.Hidden, false, false)
		mt.mm("attention.in_proj_b", c.Mul(2, t, hv), d.Hidden, false, false)
		mt.mm("attention.in_proj_a", c.Mul(2, t, hv), d.Hidden, false, false)
		z = "gated norm gate z (in_proj_z output)"
	} else {
		mt.mm("attention.in_proj_qkvz", c.Mul(2, t, c.Add(c.Mul(2, k), c.Mul(2, v))), d.Hidden, false, false)
		mt.mm("attention.in_proj_ba", c.Mul(2, t, c.Mul(2, hv)), d.Hidden, false, false)
		add("conv1d input cat(q, k, v)", "causal_conv1d", "2·t·(2K + V)", c.Mul(2, t, c.Add(2*k, v)), false, false)
	}
	add("beta = sigmoid(b)", "sigmoid, chunk_gated_delta_rule", "2·t·H_v", c.Mul(2, t, hv), false, false)
	add("softplus input a + dt_bias (fp32)", "softplus", "4·t·H_v", c.Mul(4, t, hv), false, false)
	add("softplus output (fp32)", "mul(−exp(A_log), ·)", "4·t·H_v", c.Mul(4, t, hv), false, false)
	add("q, l2-normalised at H_v heads", "chunk_gated_delta_rule", "2·t·H_v·d_k", c.Mul(2, t, hv, d.LinearKeyHeadDim), false, false)
	add("q rstd (fp32)", "chunk_gated_delta_rule", "4·t·H_v", c.Mul(4, t, hv), false, false)
	add("k, l2-normalised at H_v heads", "chunk_gated_delta_rule", "2·t·H_v·d_k", c.Mul(2, t, hv, d.LinearKeyHeadDim), false, false)
	add("k rstd (fp32)", "chunk_gated_delta_rule", "4·t·H_v", c.Mul(4, t, hv), false, false)
	add("v (contiguous copy)", "chunk_gated_delta_rule", "2·t·V", c.Mul(2, t, v), false, false)
	add("g, chunk-local cumulative sum (fp32)", "chunk_gated_delta_rule", "4·t·H_v", c.Mul(4, t, hv), false, false)
	add("A = (I + βKKᵀ)⁻¹ per 64-token chunk", "chunk_gated_delta_rule", "2·t·H_v·64", c.Mul(2, t, hv, 64), false, false)
	add("gated norm input (delta rule output)", "rms_norm_gated", "2·t·V", c.Mul(2, t, v), false, false)
	add(z, "rms_norm_gated", "2·t·V", c.Mul(2, t, v), false, false)
	add("gated norm rstd (fp32)", "rms_norm_gated", "4·t·H_v", c.Mul(4, t, hv), false, false)
	add("gated norm output (out_proj input)", "mm", "2·t·V", c.Mul(2, t, v), false, false)
}

// blockMM is one aten.mm of a block's forward, which torchtitan's op
// policy counts (opParity).
type blockMM struct {
	fqn   string // its Linear's FQN below the block (scenarios.BlockLinearFQNs)
	bytes int64  // its 16-bit output, 2·t·n for an n-wide output
	n     int64  // its output width: its rhs, the weight, is (k, n)
	k     int64  // its input width: it takes bytes·k FLOPs (2·t·n·k)
	at    int    // the index in the block's tensor list it runs before
	// whole is the index of the tensor of the list that is its output
	// (autograd keeps it anyway), -1 for none; views are the indices of
	// tensors of the list that are views of it.
	whole int
	views []int
	// residual: only the residual add (or another sum, which keeps
	// nothing) reads the output, so a compiled block's backward never
	// does.
	residual bool
	// forced: the op policy recomputes it without counting it
	// (forceShapes).
	forced bool
	// biased: a Linear with a bias, which runs aten.addmm (opParity):
	// neither counted nor kept, so recomputed.
	biased bool
}

// counted reports whether the op policy's mm count includes m: an
// aten.mm that is not force-recomputed.
func (m blockMM) counted() bool { return !m.forced && !m.biased }

// mmTrack records a block's mms while blockTensors lists its tensors
// into *out.
type mmTrack struct {
	out *[]SavedTensor
	mms []blockMM
	t   int64 // the block's tokens: an mm's output is 2·t·n bytes
}

// mm records an mm that runs now (before the next tensor is listed) and
// returns its index.
func (m *mmTrack) mm(fqn string, bytes, k int64, residual, biased bool) int {
	var n int64
	if m.t > 0 {
		n = bytes / (2 * m.t)
	}
	m.mms = append(m.mms, blockMM{fqn: fqn, bytes: bytes, n: n, k: k, at: len(*m.out), whole: -1, residual: residual, biased: biased})
	return len(m.mms) - 1
}

// wholeLast: the tensor listed last is mm i's output; viewLast: a view of it.
func (m *mmTrack) wholeLast(i int) { m.mms[i].whole = len(*m.out) - 1 }
func (m *mmTrack) viewLast(i int)  { m.mms[i].views = append(m.mms[i].views, len(*m.out)-1) }

// opExtra is an mm output the op policy keeps that is no tensor of the
// block's list: bytes, kept before the list's tensor at.
type opExtra struct {
	at    int
	bytes int64
}

// opAbs is what torchtitan's op policy keeps of the block's float8 casts
// while its _save_list holds aten.abs (BlockDims.OpSaveAbs, from
// 87e2c09c4 to 88247277c), in forward order: every Linear of the block is
// a torchao Float8Linear (torchtitan's Float8Handler converts every
// nn.Linear but "output": module_filter_fn, torchtitan/float8.py line 99
// at d4c86e3758a84cf23e2e879ab3c995cba9d5e410), and its forward
// (torchao/float8/float8_linear.py at pytorch/ao
// 3eb18e771bc7e830a2e56002407256052d8c5e7d, of the run's date) first
// takes the weight's scale, _get_weight_scale → tensor_to_scale (lines
// 31-39, called at 325), unless the weight came gathered in fp8 (FSDP2's
// float8 all-gather: tensor_already_casted_to_fp8), then
// matmul_with_hp_or_float8_args.forward casts the input,
// hp_tensor_to_float8_dynamic → tensor_to_scale (line 90;
// float8_scaling_utils.py lines 30-62); tensor_to_scale's tensor_to_amax
// is torch.max(torch.abs(x)) under tensorwise scaling (float8_utils.py
// lines 91-100). Each abs is an aten.abs.default of the tensor's size and
// dtype, 16-bit, which the checkpoint's _CachingTorchDispatchMode stores
// MUST_SAVE whatever the grad mode (tensor_to_amax runs under
// torch.no_grad; the mode's __torch_dispatch__ consults only the policy:
// torch/utils/checkpoint.py at pytorch/pytorch
// 4b804b8500f89bdf9a8c6db04a3dc6b8dbcb3757) until the recompute pops
// it. So each Linear of input width k and output width n keeps 2·t·k
// bytes of its input's abs, and with weights (no float8 all-gather) 2·n·k
// of its unsharded weight's, before its mm: for Llama 3 8B at 8192 tokens
// 608 MiB of inputs (wq, wk, wv, w1 and w3 each cast their own copy of
// the same input) and 416 MiB of weights a block. The amax (aten.max,
// also saved) is one element.
func opAbs(mms []blockMM, t int64, weights bool) ([]opExtra, error) {
	var c calc
	var out []opExtra
	for _, m := range mms {
		if weights {
			out = append(out, opExtra{at: m.at, bytes: c.Mul(2, m.n, m.k)})
		}
		out = append(out, opExtra{at: m.at, bytes: c.Mul(2, t, m.k)})
	}
	if c.Err != nil {
		return nil, fmt.Errorf("abs of the float8 casts overflows: %w", c.Err)
	}
	return out, nil
}

// opParity applies torchtitan's op policy to a block's mms, one rule for
// every block kind: _custom_policy (torchtitan/distributed/
// activation_checkpoint.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1,
// lines 99-124) counts every torch.ops.aten.mm.default of the
// checkpointed block's forward from 1 (meta[mm_count_key] += 1) and
// saves the output of every op in the save list "except every second
// mm" (meta[mm_count_key] % 2 == 0): the odd-numbered mms' outputs are
// MUST_SAVE, the even-numbered ones recomputed. The save list is the
// same in every model's parallelize.py at that commit (llama3, qwen3,
// llama4, deepseek_v3, gpt_oss: aten.mm, the SDPA and flex attention
// ops, reduce_scatter, all_to_all_single but in qwen3 and llama3,
// aten.max); torch._grouped_mm and aten.bmm are not in it, nor aten.addmm:
// a Linear with a bias runs at::addmm, not mm (pytorch/pytorch
// aten/src/ATen/native/Linear.cpp at
// 81735ee6f5da25b75bccd580b6958c36c92166af, linear and
// _flatten_nd_linear), without one at::matmul, which folds a 2-D or 3-D
// input into one mm: biased mms (blockMM.biased; BlockDims.QKVBias,
// OBias, MLPBias) are neither counted nor kept. So, per block kind (mms in
// forward order, kept ones starred, biased ones in brackets):
//
//	llama         wq* wk wv* wo w1* w3 w2*
//	  (Qwen2)     [wq wk wv] wo* w1 w3* w2
//	gpt           [qkv proj fc1 fc2]: none kept, all four recomputed
//	MLA, q_lora   wq_a* wq_b wkv_a* wkv_b wo* w1 w3* w2   (dense FFN)
//	              wq_a* wq_b wkv_a* wkv_b wo* (gate) sw1 sw3* sw2  (MoE)
//	MLA           wq* wkv_a wkv_b* wo w1* w3 w2*   (dense FFN)
//	              wq* wkv_a wkv_b* wo (gate) sw1* sw3 sw2*  (MoE)
//	Gated DeltaNet in_proj_qkvz* in_proj_ba out_proj* ...
//	  (Qwen3.5)    in_proj_qkv* in_proj_z in_proj_b* in_proj_a out_proj* ...
//
// (gate the router's, sw the shared experts'; the routed experts' grouped
// mm counts none). The router gate, in parentheses, and any mm of its
// shape is forced under the default training.op_force_recompute
// (forceShapes): recomputed, not counted. A kept
// output that autograd keeps anyway (whole) is marked OpSaved; one it keeps views of marks them OpOutput (the
// recomputation finds the output cached and rebuilds no view) and is kept
// as its own tensor, as is one it keeps nothing of: opParity returns
// those in forward order. Compiled (compiledRules) the partitioner drops a
// kept output only the residual add reads (residual).
func opParity(out []SavedTensor, mms []blockMM, compiled bool) []opExtra {
	var extra []opExtra
	n := 0 // the policy's mm count
	for _, m := range mms {
		if !m.counted() {
			continue
		}
		n++
		if n%2 == 0 { // the even-numbered: recomputed
			continue
		}
		if m.whole >= 0 {
			out[m.whole].OpSaved = true
			continue
		}
		for _, v := range m.views {
			out[v].OpOutput = true
		}
		if compiled && m.residual {
			continue
		}
		extra = append(extra, opExtra{at: m.at, bytes: m.bytes})
	}
	return extra
}

// OpRecomputedMMFLOPs is the matmul work one block's backward reruns
// under torchtitan's op policy: the even-numbered mms of opParity's count
// (the odd-numbered ones' outputs are cached) and the forced ones (the
// router gate by default: forceShapes) and biased ones (QKVBias, OBias, MLPBias:
// they run addmm, which the policy never saves), each bytes·k FLOPs. The attention kernel's outputs are saved: it
// reruns none of the attention (but under OpRecomputeAttention, which
// reruns the attention's forward: zero charges it at the attention
// kernel's rate).
func OpRecomputedMMFLOPs(d BlockDims) (int64, error) {
	_, _, mms, err := blockTensors(d)
	if err != nil {
		return 0, err
	}
	var c calc
	var v int64
	n := 0 // the policy's mm count
	for _, m := range mms {
		if m.counted() {
			n++
		}
		if !m.counted() || n%2 == 0 {
			v = c.Add(v, c.Mul(m.bytes, m.k))
		}
	}
	if c.Err != nil {
		return 0, fmt.Errorf("recompute FLOPs overflow: %w", c.Err)
	}
	return v, nil
}

// OpEarlyStopMMFLOPs is the part of OpRecomputedMMFLOPs that PyTorch's
// early stop of non-reentrant checkpointing does not rerun: the block's
// last mm when the op policy recomputes it (even-numbered or biased) and
// only the residual add reads its output (a gpt block's fc2; llama's w2 is
// odd-numbered, kept), bytes·k FLOPs; 0 otherwise. The recomputation
// raises _StopRecomputationError from its pack hook once it has packed as
// many tensors as the forward saved (torch/utils/checkpoint.py, early stop
// the default since pytorch/pytorch pull request 96866, PyTorch 2.1: its
// landing commit not found; read at ROCm/pytorch 10b22ea5, zero's
// earlyStopFLOPs says more;
// the selective policy's context_fn runs inside the same frame), and that
// mm's inputs
// are the last tensors packed, before its kernel runs (zero's
// earlyStopFLOPs, the same rule under full).
func OpEarlyStopMMFLOPs(d BlockDims) (int64, error) {
	_, _, mms, err := blockTensors(d)
	if err != nil || len(mms) == 0 {
		return 0, err
	}
	n := 0
	for _, m := range mms {
		if m.counted() {
			n++
		}
	}
	last := mms[len(mms)-1]
	if !last.residual || last.counted() && n%2 == 1 {
		return 0, nil
	}
	var c calc
	v := c.Mul(last.bytes, last.k)
	if c.Err != nil {
		return 0, fmt.Errorf("recompute FLOPs overflow: %w", c.Err)
	}
	return v, nil
}

// BlockActivation returns the bytes one block keeps from forward to
// backward under a checkpointing policy, and the bytes its backward
// rebuilds transiently by recomputation: the sums of BlockActivationTensors'
// lists.
func BlockActivation(d BlockDims, policy string) (stored, transient int64, err error) {
	keep, rebuild, err := BlockActivationTensors(d, policy)
	if err != nil {
		return 0, 0, err
	}
	var c calc
	stored, transient = c.Add(keep...), c.Add(rebuild...)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return stored, transient, nil
}

// BlockActivationTensors lists, tensor by tensor in forward order, what one
// block keeps from forward to backward under a checkpointing policy (keep)
// and what its backward rebuilds by recomputation (rebuild), alive at once
// until the block's backward ends:
//
//	none:      keep every tensor of BlockTensors
//	selective: Korthikanti et al. 2022 §5: keep everything but the core
//	           attention (scores, softmax, dropout, log-sum-exp), which is
//	           rebuilt
//	op:        torchtitan's op-level policy (torchtitan
//	           torchtitan/parallelisms/parallelize_llama.py at 004b3148a92b,
//	           _apply_ac_to_transformer_block with _save_list = {aten.mm,
//	           SDPA flash/efficient, reduce_scatter}): keep the block
//	           input, the outputs of the attention kernel (not under
//	           OpRecomputeAttention: torchtitan before b39377f and
//	           cuDNN's kernel) and of the odd-numbered mms (opParity: OpSaved, and the kept mm
//	           outputs autograd does not keep, each its own tensor at
//	           its place in the forward); rebuild every other tensor
//	           of BlockTensors but those that are views of a kept mm output
//	           (OpOutput). RoPE's q and k (torchtitan's apply_rotary_emb
//	           returns new tensors) and repeat_kv's copies of k and v are
//	           rebuilt though wq's and wv's outputs are kept.
//	full:      keep the block input (2·t·h; 4·t·h when d.InputFP32);
//	           rebuild every other tensor.
//
// A compiled block (d.Compiled) applies the policy to its compiled tensor
// list (compiledRules); its backward rebuilds only what the compiled block
// without checkpointing would keep, counted alive at once as for eager.
// Tensors of no bytes (an eager llama block's input without
// checkpointing) are left out.
func BlockActivationTensors(d BlockDims, policy string) (keep, rebuild []int64, err error) {
	if err := d.check(); err != nil {
		return nil, nil, err
	}
	ts, extra, _, err := blockTensors(d)
	if err != nil {
		return nil, nil, err
	}
	var c calc
	inputBytes := int64(2)
	if d.InputFP32 {
		inputBytes = 4
	}
	input := c.Mul(inputBytes, d.Seq, d.Batch, d.Hidden)
	if c.Err != nil {
		return nil, nil, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	put := func(to *[]int64, b int64) {
		if b > 0 {
			*to = append(*to, b)
		}
	}
	switch policy {
	case "", PolicyNone:
		for _, x := range ts {
			put(&keep, x.Bytes)
		}
	case PolicySelective:
		for _, x := range ts {
			if x.Core {
				put(&rebuild, x.Bytes)
			} else {
				put(&keep, x.Bytes)
			}
		}
	case PolicyOp:
		// The kept mm outputs that are no tensor of ts, each its own
		// tensor (the policy's cache holds each op's output), at its
		// place in the forward: the allocator replay allocates keep in
		// order.
		keep = []int64{input}
		for i, x := range ts {
			for len(extra) > 0 && extra[0].at <= i {
				put(&keep, extra[0].bytes)
				extra = extra[1:]
			}
			switch {
			case i == 0:
			case x.OpSaved:
				put(&keep, x.Bytes)
			case !x.OpOutput:
				put(&rebuild, x.Bytes)
			}
		}
		for _, e := range extra {
			put(&keep, e.bytes)
		}
	case PolicyFull:
		keep = []int64{input}
		for _, x := range ts[1:] {
			put(&rebuild, x.Bytes)
		}
	default:
		return nil, nil, fmt.Errorf("training.recompute %q: use none, selective, op or full", policy)
	}
	return keep, rebuild, nil
}

// HeadActivation returns the bytes the output head and its loss keep from
// forward to backward (the final norm's tensors, the output projection's
// input and, for the loss, log_softmax's fp32 output 4·t·V, or 2·t·V when
// the loss stays in 16 bits) and the extra bytes alive at the start of the
// loss's backward: nll_loss's dense gradient and log_softmax's input
// gradient, 4·t·V each in fp32 (torchtitan train.py at 9dec370 computes
// cross_entropy(pred.float(), labels) and deletes pred before backward).
//
// A compiled loss (d.LossCompiled: torchtitan/components/loss.py at
// e7c0cae934df78d6e9c2835f42ff1f757dc3fddc, build_cross_entropy_loss wraps
// cross_entropy(pred.flatten(0, 1).float(), labels) in torch.compile when
// training.compile is set) keeps the 16-bit logits pred, 2·t·V: the
// partitioner (compiledRules) saves the graph input and recomputes the fp32
// upcast and log_softmax from it and the per-row max and log-sum-exp
// (reductions, kept, 8·t, counted in neither column) inside the backward
// kernel; "del pred" then frees nothing, the compiled graph holds it. Its
// backward writes pred's 16-bit gradient, 2·t·V, and materializes no dense
// fp32 gradient: Inductor lowers nll_loss's scatter into a zero tensor to a
// pointwise where() fused with log_softmax's backward (pytorch/pytorch
// #129043, "don't materialize the large sparse matrix in CE bwd", June 2024,
// torch/_inductor/fx_passes/post_grad.py scatter_upon_const_tensor).
func HeadActivation(d BlockDims) (stored, transient int64, err error) {
	model, loss, grads, err := headParts(d)
	if err != nil {
		return 0, 0, err
	}
	var c calc
	stored, transient = c.Add(model, loss), c.Add(grads...)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return stored, transient, nil
}

// headParts is HeadActivation's stored bytes split where the model returns
// its logits: model, the final norm's tensors and the output projection's
// input, made before; loss, what the loss saves, made after the training
// loop has the logits (and has freed the previous step's, when it keeps
// them: headLogits). grads are the loss backward's gradients, tensor by
// tensor (HeadActivation's transient is their sum): nll_loss's dense
// gradient and log_softmax's input gradient under the eager loss, the
// logits' one 16-bit gradient under a compiled or fused loss.
//
// Megatron's loss (d.LossSavesUpcast) makes one gradient, 2·t·V, the
// 16-bit one. _VocabParallelCrossEntropy.backward
// (megatron/core/tensor_parallel/cross_entropy.py at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553, file last changed in
// 4a47b160c0d17e81c1d569980a6148e93d580d51) writes the gradient in place
// into the fp32 softmax its forward saved: prepare_gradient_calculation_
// operands sets grad_input = softmax, and calculate_gradients subtracts at
// the targets and runs grad_input.mul_(grad_output). So the fp32 gradient
// is the loss's own 4·t·V, already counted. The .float() upcast runs inside
// the Function's forward, which autograd does not record. The Function
// returns an fp32 gradient for the 16-bit logits, and the engine casts it
// to the input's dtype (validate_outputs: grad =
// grad.to(metadata.options().dtype()), torch/csrc/autograd/engine.cpp at
// pytorch/pytorch e1253a956f6866469eafd88cc3bfb4627f4b1efc). That 16-bit
// copy, 2·t·V, is alive beside the saved softmax until the node releases
// its saved variables. --cross-entropy-loss-fusion's native kernel
// (megatron/core/fusions/fused_cross_entropy.py at d98e8a64, last changed
// in 57deb435477fd6dc275242cff94fce1c5055a936) calls the same
// VocabParallelCrossEntropy steps. It makes the same cast in its
// calculate_gradients (grad_input.to(torch.bfloat16)), so under bf16 it
// costs the same (under fp16 the engine casts that bf16 copy again, one
// more 2·t·V transient, not counted). The 16-bit logits are the output projection's output. A linear
// saves its input, not its output, so nothing saves them. They are
// gpt_model.py _postprocess's local `logits`
// (megatron/core/models/gpt/gpt_model.py at d98e8a64), freed when the
// forward returns: HeadLossTemps' logits.
func headParts(d BlockDims) (model, loss int64, grads []int64, err error) {
	if err := d.check(); err != nil {
		return 0, 0, nil, err
	}
	if d.Vocab <= 0 {
		return 0, 0, nil, nil
	}
	var c calc
	t := c.Mul(d.Seq, d.Batch)
	switch {
	case d.Arch == "llama" && (d.Norms == scenarios.NormsGemma || d.Norms == scenarios.NormsFP32),
		d.Arch == "llama" && d.InputFP32 && !d.NormFused && !d.MegatronTE && !d.NormATen:
		// Gemma's and Qwen3-Next's final norm keeps its fp32 normalized
		// tensor (normFP32Affine), so does an eager RMSNorm over the fp32
		// residual stream (normFP32Input).
		model = c.Add(c.Mul(4, t, d.Hidden), c.Mul(4, t), c.Mul(4, t, d.Hidden))
	case d.Arch == "llama" && (d.NormFused || d.MegatronTE || d.NormATen):
		// torchtitan's fused_rmsnorm (BlockTensors' fused), Megatron's
		// final TENorm (MegatronTE), the local block's final
		// torch.nn.RMSNorm on aten::_fused_rms_norm (NormATen): the
		// final norm's 16-bit input, the last block's output, and its
		// fp32 rstd.
		model = c.Add(c.Mul(2, t, d.Hidden), c.Mul(4, t))
	case d.Arch == "llama":
		model = c.Add(c.Mul(4, t, d.Hidden), c.Mul(4, t), c.Mul(2, t, d.Hidden))
	case d.Autocast || d.InputFP32:
		// The final LayerNorm saves autocast's fp32 copy of its input
		// (BlockDims.Autocast), or the fp32 stream (InputFP32).
		model = c.Add(c.Mul(4, t, d.Hidden), c.Mul(8, t))
	default:
		model = c.Add(c.Mul(2, t, d.Hidden), c.Mul(8, t))
	}
	model = c.Add(model, c.Mul(2, t, d.Hidden)) // output projection input
	// The loss's tensors are one chunk's under the chunked loss
	// (lossTokens); the model's part above is the whole micro-batch's.
	tl := d.lossTokens()
	if d.LogitSoftcap {
		// Gemma2ForCausalLM.forward (modeling_gemma2.py
		// @ 006e86931247d7bacf94ad00ada1fb6baf11e94b): logits =
		// lm_head(h) in 16 bits, then logits / cap, torch.tanh, * cap,
		// and only then the loss, whose ForCausalLMLoss upcasts with
		// .float(). tanh saves its 16-bit output for tanh_backward until
		// the head's backward reaches it, after the loss's: 2·t·V under
		// every loss (the division and multiplication by a number keep
		// nothing; the product is the loss's input or the logits the loop
		// keeps, counted as before). It is made inside the model's
		// forward, before the loop has the logits: model's part.
		// tanh_backward's (1 − y²) temporaries come after the loss's
		// gradients are freed and are not counted.
		model = c.Add(model, c.Mul(2, t, d.Vocab))
	}
	switch {
	case d.Liger:
		// LigerFusedLinearCrossEntropyFunction saves grad_input and
		// grad_weight, made and filled in its forward (scenarios/liger.go;
		// ops/fused_linear_cross_entropy.py lines 47-48, 124-135 and
		// 253-257 at Liger-Kernel c3c2d4fa): grad_input is the final
		// norm output's size, 2·t·h, counted above as the projection's
		// input, which nothing keeps under Liger; grad_weight is [V, h] in
		// the weight's dtype, alive until the head's backward hands it to
		// the weight (the timeline's OpHeadGrad then counts it as the
		// head's gradient). Its backward only scales both in place
		// (element_mul_kernel): no gradient is allocated.
		loss = c.Mul(d.LigerWeightElem, d.Vocab, d.Hidden)
	case d.LossCompiled:
		if d.KeepLogits == 0 {
			// Kept by the loop, the graph input it saves is the loop's
			// pred (KeptLogits), not a tensor of its own.
			loss = c.Mul(2, tl, d.Vocab)
		}
		grads = []int64{c.Mul(2, tl, d.Vocab)}
	case d.LossFused:
		// flash-attn's SoftmaxCrossEntropyLossFn (flash_attn/losses/
		// cross_entropy.py at v0.2.8, 33e0860c) saves the logits as they
		// come (16-bit) and the fp32 log-sum-exp per token
		// (csrc/xentropy/xentropy_kernel.cu: max_log_sum_exp, Float);
		// its backward writes the logits' gradient with
		// at::empty_like(logits), 16-bit (inplace_backward is False by
		// default, as llm-foundry's MPT calls it). No fp32 copy exists.
		loss = c.Mul(4, tl)
		if d.KeepLogits == 0 {
			// Kept by the loop, the logits it saves are the loop's pred
			// (KeptLogits).
			loss = c.Add(loss, c.Mul(2, tl, d.Vocab))
		}
		grads = []int64{c.Mul(2, tl, d.Vocab)}
	case d.LossAutocast:
		// scenarios.CrossEntropyAutocast: log_softmax saves its bf16
		// output, 2·t·V, and nll_loss the fp32 copy autocast makes of
		// it, 4·t·V. NllLossBackward0 writes the dense fp32 gradient,
		// 4·t·V, with both alive; it then releases its copy, so the
		// bf16 cast of the gradient (ToCopyBackward0, 2·t·V) and
		// log_softmax's bf16 input gradient (2·t·V) come while less is
		// held: the fp32 gradient is the loss backward's peak.
		loss = c.Add(c.Mul(2, tl, d.Vocab), c.Mul(4, tl, d.Vocab))
		grads = []int64{c.Mul(4, tl, d.Vocab)}
	default:
		lossElem := int64(2)
		if d.LossFP32 {
			lossElem = 4
		}
		loss = c.Mul(lossElem, tl, d.Vocab)
		grads = []int64{loss, loss}
		if d.LossFP32 && d.LossSavesUpcast {
			grads = []int64{c.Mul(2, tl, d.Vocab)}
		}
	}
	if c.Err != nil {
		return 0, 0, nil, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return model, loss, grads, nil
}

// KeptLogits returns the bytes of the logits the model returns when the
// training loop keeps them referenced (d.KeepLogits, training.keep_logits):
// e·t·V, e the element size they are returned in; 0 when they are freed
// before backward.
//
// torchtitan at 83c879f18763 returns them in fp32, output = self.output(h).float()
// (torchtrain/models/llama/model.py line 501; line 516 at its parent
// ab5d91823f83), and train.py holds them in a local variable, pred =
// model(input_ids) (line 277), through cross_entropy(pred.flatten(0, 1),
// labels.flatten(0, 1)) and scaler.scale(loss).backward() (lines 284-287)
// with no del, so 4·t·V are alive over the whole backward, the optimizer
// step and the next step's forward, until pred = model(...) rebinds the
// name after the new logits exist. e29b6b4d418a (2024-06-12, "del
// logits=(bs, seq_len, vocab_size) to save 3.9G memory") added "del pred"
// before loss.backward(): 3.9 GiB is 4·t·V of its Llama 3 8B default
// (batch 1, seq 8192, V = 128,256), the fp32 logits.
//
// No copy of them is counted twice: fp32 logits are the very tensor the
// fp32 cross-entropy's log_softmax reads (.float() is .to(torch.float32),
// which returns self when the dtype already matches: torch.Tensor.to's
// documentation), and log_softmax saves its output, not its input (since
// pytorch/pytorch#65242, "Avoid saving self for softmax and log_softmax",
// September 2021: tools/autograd/derivatives.yaml's _log_softmax formula
// became _log_softmax_backward_data(grad, result, dim, self.scalar_type()),
// the generated node keeping self's dtype only; at d327a787 it still named
// self), so HeadActivation's 4·t·V log_softmax output is another tensor; 16-bit logits are not saved by the eager loss either (the cast
// saves nothing). Under a compiled or a fused loss the 16-bit logits are
// what the loss saves for backward: HeadActivation then leaves them out
// (d.KeepLogits > 0) and this function counts them, over the longer
// lifetime. The model's 16-bit output before .float(), alive only inside
// the head's forward, is HeadLossTemps' (with the loss's fp32 upcast of
// logits that are not kept in fp32).
func KeptLogits(d BlockDims) (int64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	if d.KeepLogits == 0 || d.Vocab <= 0 {
		return 0, nil
	}
	var c calc
	v := c.Mul(d.KeepLogits, d.Seq, d.Batch, d.Vocab)
	if c.Err != nil {
		return 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return v, nil
}

// KVCache returns the bytes of one block's KV cache when a Hugging Face
// model builds it in training (training.hf_use_cache): its key states
// after RoPE and its value states at the key/value heads, in the dtype the
// projections return (elem: 2 under bf16 or fp16 parameters and under
// autocast, 4 for fp32 without it), 2·t·kv_heads·head_dim·elem (t = s·b
// tokens; V at value_head_dim where that differs). transformers'
// LlamaAttention.forward projects k and v, applies RoPE to k and hands
// (key_states, value_states) to the cache before repeat_kv expands them to
// the query heads (src/transformers/models/llama/modeling_llama.py at
// huggingface/transformers 002272831fba584eb30dca9729c1be456836960a;
// ATorch's LlamaAttentionFA at intelligent-machine-learning/dlrover
// 70df7d5a2b4c38899a11385189234dd8a8f26869 returns the same pair). Under
// torch's checkpoint wrapper the block frees what it saves for backward
// but the cache holds these two tensors (scenarios.HFUseCache). Multi-head
// latent and linear attention cache other tensors: an error.
func KVCache(d BlockDims, elem int64) (int64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	if d.LinearAttention != "" || d.KVLoRARank > 0 {
		return 0, fmt.Errorf("training.hf_use_cache: the KV cache is modelled for multi-head and grouped-query attention (this block has %s)",
			cmp.Or(d.LinearAttention, "multi-head latent attention"))
	}
	vd := cmp.Or(d.ValueHeadDim, d.HeadDim)
	var c calc
	kv := c.Mul(c.Add(d.HeadDim, vd), d.KVHeads, d.Seq, d.Batch, elem)
	if c.Err != nil {
		return 0, fmt.Errorf("KV cache size overflows: %w", c.Err)
	}
	return kv, nil
}

// LigerChunk is the number of tokens Liger's fused linear cross-entropy
// runs the head on at a time, for t tokens, hidden size h and vocabulary
// v: inc_factor = ceil(v/h), chunk_size = next_power_of_2(ceil(t /
// inc_factor)) (ops/fused_linear_cross_entropy.py lines 43-45 at
// linkedin/Liger-Kernel c3c2d4fa5abe14d1e627f0aea1128116a55bbe6b), so that
// a chunk's logits are about the size of the input; at most t (the last
// of ceil(t/chunk_size) chunks is the remainder).
func LigerChunk(t, h, v int64) int64 {
	if t <= 0 || h <= 0 || v <= 0 {
		return 0
	}
	inc := (v + h - 1) / h
	n := (t + inc - 1) / inc
	c := int64(1)
	for c < n {
		c <<= 1
	}
	return min(c, t)
}

// LigerChunkTemps returns the bytes Liger's fused linear cross-entropy
// allocates in its forward beside its saved grad_input and grad_weight
// (headParts), at once at its peak: one chunk's logits, c·V in the input's
// dtype (logits_chunk = _input_chunk @ weight.t(), line 77 at c3c2d4fa; the
// cross-entropy kernel overwrites them with their gradient, line 94-117),
// the chunk's input gradient before it is copied into grad_input
// (grad_logits_chunk @ weight, line 124), c·h in the same dtype, and
// loss_1d, the fp32 per-token loss over all t tokens (line 51).
func LigerChunkTemps(d BlockDims) (int64, error) {
	var c calc
	t := c.Mul(d.Seq, d.Batch)
	ch := LigerChunk(t, d.Hidden, d.Vocab)
	v := c.Add(c.Mul(d.LigerLogitsElem, ch, d.Vocab), c.Mul(d.LigerLogitsElem, ch, d.Hidden), c.Mul(4, t))
	if c.Err != nil {
		return 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return v, nil
}

// HeadLossTemps returns the head's forward temporaries around its loss,
// which neither HeadActivation (what is saved for backward) nor KeptLogits
// (what the training loop keeps) counts: logits, the 16-bit logits the
// output projection writes when nothing keeps them past the loss, and
// upcast, the fp32 loss's copy of 16-bit logits, log_softmax's input while
// it writes its output (log_softmax saves its output, not its input:
// KeptLogits), freed when the loss returns. Both are 0 under a compiled or
// a fused loss (HeadActivation: neither materializes an fp32 copy, and the
// logits are what that loss saves) and without a vocabulary.
//
//   - The loop keeps nothing (d.KeepLogits 0), as torchtitan at 9dec370
//     (train.py lines 303-307: pred = model(input_ids); loss =
//     loss_fn(pred, labels); del pred, before loss.backward(); line 131's
//     loss_fn is cross_entropy(pred.flatten(0, 1).float(), labels...);
//     torchtitan/models/llama/model.py line 445: output = self.output(h),
//     16-bit under FSDP's param_dtype): the logits, 2·t·V, live from the
//     projection until the loss returns (the loss function's argument),
//     and the upcast, 4·t·V, while log_softmax runs.
//   - The loop keeps the 16-bit logits (d.KeepLogits 2): they are
//     KeptLogits; the upcast as above.
//   - The model returns fp32 logits, which the loop keeps (d.KeepLogits 4;
//     torchtitan at 83c879f, torchtrain/models/llama/model.py line 501:
//     output = self.output(h).float()): the projection's 16-bit output,
//     2·t·V, lives until .float() has copied it into the kept logits,
//     which are the loss's input itself (.to of the same dtype returns
//     self): no upcast.
func HeadLossTemps(d BlockDims) (logits, upcast int64, err error) {
	if err := d.check(); err != nil {
		return 0, 0, err
	}
	if d.Vocab <= 0 || d.LossCompiled || d.LossFused {
		return 0, 0, nil
	}
	if d.Liger {
		logits, err = LigerChunkTemps(d)
		return logits, 0, err
	}
	var c calc
	tv := c.Mul(d.lossTokens(), d.Vocab)
	if d.KeepLogits != 2 { // 0 or 4 (check)
		logits = c.Mul(2, tv)
	}
	// Megatron's VocabParallelCrossEntropy (megatron/core/tensor_parallel/
	// cross_entropy.py at d98e8a64ddf34856e74b24714e3bedb2f5a39553)
	// upcasts with vocab_parallel_logits.float() (line 25), subtracts the
	// max in place (line 42), takes torch.exp(..., out=) into the same
	// tensor (lines 61-62), divides it in place and saves it as exp_logits
	// (line 181 of forward): its fp32 copy is the 4·t·V HeadActivation
	// counts as the loss's saved output, not a temporary beside it.
	if d.LossFP32 && d.KeepLogits != 4 && !d.LossSavesUpcast {
		upcast = c.Mul(4, tv)
	}
	if c.Err != nil {
		return 0, 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return logits, upcast, nil
}

// HFShiftLogits returns the fp32 copy a Hugging Face causal LM's forward
// makes of its shifted logits before its loss, under a loss taken inside
// the model (scenarios.Training.HFLossInsideForward) that upcasts them
// first: keepLogits 4 (the fp32 logits the model returns and the loop
// keeps, training.keep_logits fp32), or keepLogits 0 under an fp32 loss
// (d.LossFP32: the forward's .float() is then the loss's upcast,
// HeadLossTemps' upcast, and the loop drops the logits): 4·b·(s−1)·V, the
// sequence's last position dropped; 0 for 16-bit kept logits, a 16-bit or
// autocast loss, under a compiled, a fused or a chunked loss, and without
// a vocabulary.
// LlamaForCausalLM.forward runs logits = logits.float(); shift_logits =
// logits[..., :-1, :].contiguous(); shift_labels = labels[..., 1:]
// .contiguous(); loss = loss_fct(shift_logits.view(-1, vocab_size),
// shift_labels.view(-1)) (src/transformers/models/llama/modeling_llama.py
// at huggingface/transformers 002272831fba584eb30dca9729c1be456836960a):
// slicing off the last position leaves a non-contiguous view, so
// .contiguous() copies it, and the copy is log_softmax's input while it
// writes its output (which it saves; log_softmax saves its output, not its
// input, so autograd does not keep the copy). It is a local of forward,
// freed when forward returns with the loss.
func HFShiftLogits(d BlockDims, keepLogits int64) (int64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	upcast := keepLogits == 4 || keepLogits == 0 && d.LossFP32 && !d.LossSavesUpcast
	if !upcast || d.Vocab <= 0 || d.LossCompiled || d.LossFused || d.Liger || d.LossChunks > 1 || d.Seq < 2 {
		return 0, nil
	}
	var c calc
	shift := c.Mul(4, d.Batch, d.Seq-1, d.Vocab)
	if c.Err != nil {
		return 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return shift, nil
}

// HeadProjectionBackward returns, under the eager loss, the tensors alive
// while the output projection's MmBackward0 makes its weight's gradient
// that the head's Activation does not hold at that moment: the 16-bit
// gradient of the logits, 2·t·V, and the projection's input gradient,
// 2·t·h; nil under a compiled or a fused loss (whose 16-bit logits
// gradient is the loss backward's own, HeadActivation's transient) or
// without a vocabulary.
//
// mm's derivative is one node with both outputs: self:
// mm_mat1_backward(grad, mat2, ...), mat2: mm_mat2_backward(grad, self,
// ...) (tools/autograd/derivatives.yaml at pytorch/pytorch
// d327a787782618826890c323f8d7e51f3d28ec13), so the node runs with its
// input gradient (the logits', which ToCopyBackward0 casts from
// log_softmax's fp32 one, or log_softmax's own in a 16-bit loss) and its
// saved input (the final norm's output, in the head's Activation) alive
// and writes the input's gradient and the weight's. The engine hands a
// node its input buffer, takes its outputs and only then releases its
// saved variables (Engine::evaluate_function: call_function, then
// fn.release_variables() when the graph is not retained;
// torch/csrc/autograd/engine.cpp at pytorch/pytorch
// e1253a956f6866469eafd88cc3bfb4627f4b1efc), and the nodes before it,
// NllLossBackward0 and LogSoftmaxBackward0, have released the loss's
// tensors. With a logit soft-cap (Gemma 2) tanh's saved 16-bit output,
// 2·t·V of the head's Activation, is released by TanhBackward0 before
// MmBackward0 runs: it stands for the logits' gradient, of its size, and
// only the input gradient is added. The final norm's backward, after it,
// adds its own transient input gradients, which the timeline counts
// nowhere (as for every block).
func HeadProjectionBackward(d BlockDims) ([]int64, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if d.Vocab <= 0 || d.LossCompiled || d.LossFused || d.Liger {
		// Liger's fused linear cross-entropy computed both of the
		// projection's gradients in its forward (headParts).
		return nil, nil
	}
	var c calc
	t := d.lossTokens()
	out := []int64{c.Mul(2, t, d.Vocab), c.Mul(2, t, d.Hidden)}
	if d.LogitSoftcap {
		out = out[1:]
	}
	if c.Err != nil {
		return nil, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return out, nil
}

// lossTokens is the tokens the output projection and the loss run on at
// once: Seq·Batch, or one chunk's, Seq·Batch/LossChunks, under the
// chunked loss (check has made sure the count divides them).
func (d *BlockDims) lossTokens() int64 {
	var c calc
	t, _ := scenarios.LossChunkTokens(c.Mul(d.Seq, d.Batch), d.LossChunks)
	return t
}

// ChunkedLossBuffers returns, under torchtitan's chunked loss
// (d.LossChunks > 1, training.loss_chunks), the two [T, D] gradients of
// the hidden states it makes beside the head's tensors, T = Seq·Batch
// the rank's tokens of the micro-batch and D = Hidden; both 0 otherwise.
//
//   - buffer, 4·T·D: GradAccumulator's torch.zeros_like(hidden_states,
//     dtype=torch.float32), made before the first chunk and filled chunk
//     by chunk with each chunk's hidden-state gradient (ChunkedLossWrapper
//     .__call__ and GradAccumulator, torchtitan/components/loss.py lines
//     432, 639-643 and 699 at pytorch/torchtitan b5bcd76c6). It lives
//     through the whole loop and goes when __call__ returns.
//   - grad16, 2·T·D in the hidden states' dtype:
//     grad_accumulator.result().to(hidden_states.dtype) after the loop
//     (line 711), made while the buffer still exists, saved by
//     _DecoderOutputGradientBackProp (lines 786-793) and handed to the
//     decoder's backward as the hidden states' gradient (line 809): it
//     lives until the final norm's backward has consumed it.
//
// Each chunk's own tensors are headParts', HeadLossTemps' and
// HeadProjectionBackward's at Seq·Batch/LossChunks tokens (lossTokens):
// the chunk's hidden-state gradient is HeadProjectionBackward's input
// gradient, dropped after its copy into the buffer (h_chunk.grad = None,
// line 700).
func ChunkedLossBuffers(d BlockDims) (buffer, grad16 int64, err error) {
	if err := d.check(); err != nil {
		return 0, 0, err
	}
	if d.LossChunks <= 1 || d.Vocab <= 0 {
		return 0, 0, nil
	}
	var c calc
	td := c.Mul(d.Seq, d.Batch, d.Hidden)
	buffer, grad16 = c.Mul(4, td), c.Mul(2, td)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return buffer, grad16, nil
}

// EveryNth reports whether block i (0-based, forward order) is checkpointed
// under torchtitan's layer-level selective policy with frequency n
// (selective_ac_option = "n": the wrapper counts blocks from 1 and wraps
// the ones whose count is a multiple of n; parallelize_llama.py at
// 004b314). n ≤ 1 checkpoints every block.
func EveryNth(i, n int) bool {
	if n <= 1 {
		return true
	}
	return (i+1)%n == 0
}

// Placement says which blocks training.recompute applies to: every
// Every-th (training.recompute_every, EveryNth), or, when Fraction > 0, a
// fraction Fraction of them placed as fms-fsdp places them
// (training.recompute_fraction, FractionCheckpointed). Memory's timeline
// and zero's compute both ask Checkpointed, through UnitPolicies.
type Placement struct {
	Every    int
	Fraction float64
}

// PlacementOf is the Placement of a resolved scenario's training.
func PlacementOf(t *scenarios.Training) Placement {
	return Placement{Every: t.RecomputeEvery, Fraction: t.RecomputeFractionP}
}

// Checkpointed reports whether block i (0-based, forward order) is
// checkpointed.
func (p Placement) Checkpointed(i int) bool {
	if p.Fraction > 0 {
		return FractionCheckpointed(i, p.Fraction)
	}
	return EveryNth(i, p.Every)
}

// FractionCheckpointed reports whether block i (0-based, forward order) is
// checkpointed under fms-fsdp's selective activation checkpointing with
// fraction p in (0, 1] (fms_fsdp/policies/ac_handler.py,
// apply_fsdp_checkpointing, at ed74fd5ddec00e309eac20f478de883464c86526):
// its check_fn counts blocks from 1 in module order, b, and wraps block b
// when b*p >= cut_off, cut_off starting at 1/2 and growing by 1 at every
// wrapped block. p = 1/2 wraps blocks 1, 3, 5, … (the first, not the
// last of an even count); 1/3 wraps 2, 5, 8, …; 2/3 wraps 1, 3, 4, 6, 7, …
//
// The wrapped count up to b is then #{k ≥ 0 : k + 1/2 ≤ x_b}, x_b the
// float64 product b*p as Python forms it, = floor(x_b - 1/2) + 1 once
// x_b ≥ 1/2 (x_b - 1/2 is exact: Sterbenz below 1, a multiple of x_b's
// ulp above), so long as no step crosses two thresholds k + 1/2, which
// needs x_b - x_(b-1) > 1: for b ≤ 1024 (scenarios.MaxLayers) that takes
// p > 1 - 2^-40, where x_b lies within 2^-29 of the whole number b, far
// from any threshold (TestFractionCheckpointedLoop runs the loop itself). Block b is wrapped iff the count grows at b.
func FractionCheckpointed(i int, p float64) bool {
	if i < 0 || !(p > 0) {
		return false
	}
	b := i + 1
	return scenarios.FractionWrapped(b, p) > scenarios.FractionWrapped(b-1, p)
}

// blockPolicy is the checkpointing policy of block i (0-based, forward
// order) under placement pl: training.recompute, or none for a block the
// placement leaves out, through UnitPolicies.
func blockPolicy(s *scenarios.Scenario, pl Placement, i int) string {
	if !pl.Checkpointed(i) {
		return PolicyNone
	}
	return string(s.Training.Recompute)
}

// UnitPolicies is the checkpointing policy of each unit of s's layer list:
// a block's blockPolicy; a unit of routed experts that of the block before
// it, whose decoder layer holds it (Megatron's TransformerLayer runs its
// MoELayer inside the checkpointed layer, megatron/core/recompute.py
// checkpointed_forward; torchtitan's FullAC wraps the whole block,
// torchtitan/distributed/activation_checkpoint.py; commits in
// zero/schedule.go recomputeA2A); any other unit training.recompute.
// Memory, compute and the schedule's recomputed all-to-alls ask it.
func UnitPolicies(s *scenarios.Scenario) []string {
	out := make([]string, len(s.Model.LayerList))
	block, owner := 0, ""
	pl := PlacementOf(&s.Training)
	for u, l := range s.Model.LayerList {
		switch {
		case l.Block:
			owner = blockPolicy(s, pl, block)
			block++
			out[u] = owner
		case l.Group == scenarios.GroupExpert && owner != "":
			out[u] = owner
		default:
			owner = ""
			out[u] = string(s.Training.Recompute)
		}
	}
	return out
}

// RouterTensors lists what autograd keeps of a MoE block's router and of
// the dispatch and combine around the routed experts (the tensors the
// experts' own SwiGLU keeps, and the expert outputs, are ExpertActivation's),
// for t tokens, E experts, top-k k and hidden size h, as transformers runs
// them; nil for a router it does not model (router ""). Routers
// (scenarios.BlockDims.Router):
//
// scenarios.RouterSoftmaxTopK: MixtralSparseMoeBlock.forward
// (models/mixtral/modeling_mixtral.py @ af3efdd71ee5b568dfdb71bb41d316df830147af;
// Qwen2MoeSparseMoeBlock in models/qwen2_moe/modeling_qwen2_moe.py
// @ 1c351314a42ac9aef3510fc536c18130d52be2ef is the same with the division
// under norm_topk_prob):
//
//   - router_logits = gate(x) (bf16 Linear): its input is the ffn norm
//     output, counted on the block; the bf16 logits are not kept:
//     F.softmax(·, dtype=torch.float) upcasts them (the cast saves nothing)
//     and the block returns them to a decoder layer that drops them unless
//     output_router_logits is set (config default false, left out).
//   - softmax saves its fp32 output (derivatives.yaml _softmax:
//     _softmax_backward_data(grad, result, ...)): 4·t·E.
//   - topk saves its int64 indices (topk: index_select_backward(grad, dim,
//     indices, ...)): 8·t·k.
//   - routing_weights /= routing_weights.sum(-1, keepdim=True) (norm): div
//     saves self and other (pytorch tools/autograd/derivatives.yaml
//     @ d327a787782618826890c323f8d7e51f3d28ec13, div.Tensor: the self
//     gradient reads other, the other gradient reads self and other), and
//     for an in-place op the generated code saves a clone of self taken
//     before it is overwritten (tools/autograd/gen_variable_type.py
//     @ 9e69e8210c01ff23aff82df3806f7dbe0ec106d2, save_variables: "if var
//     == 'self' and inplace: ... original_self = self.clone()"): the fp32
//     top-k weights 4·t·k and the fp32 sums 4·t.
//   - .to(hidden_states.dtype) saves nothing; one_hot and torch.where are
//     not differentiable. Per expert, idx, top_x = torch.where(mask): each
//     (token, slot) pair lands in exactly one expert, so over the experts
//     top_x and idx hold t·k int64 each. hidden_states[None, top_x] and
//     routing_weights[top_x, idx, None] (index.Tensor saves its indices)
//     and index_add_(0, top_x, ·) keep them: 2 · 8·t·k.
//   - expert_layer(x) * routing_weights[top_x, idx, None]: mul keeps both
//     factors, the expert output (ExpertActivation's h per pair) and the
//     gathered bf16 weight, 2·t·k over the experts.
//
// scenarios.RouterDeepseekV3: DeepseekV3TopkRouter.forward and
// DeepseekV3MoE.moe (models/deepseek_v3/modeling_deepseek_v3.py
// @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3):
//
//   - F.linear(hidden_states.type(torch.float32),
//     self.weight.type(torch.float32)): the mm keeps both operands, a fp32
//     copy of the input, 4·t·h, and, with 16-bit parameters, a fp32 copy of
//     the weight, 4·E·h (per micro-batch, not per token).
//   - scores = router_logits.sigmoid(): sigmoid saves its output
//     (sigmoid_backward(grad, result)), 4·t·E. get_topk_indices runs under
//     no_grad (the e_score_correction_bias add and the group top-k keep
//     nothing); scores.gather(1, topk_indices) keeps the int64 indices,
//     8·t·k (and scores, already kept).
//   - norm_topk_prob (V3 default True): denominator = sum + 1e-20, then
//     topk_weights /= denominator keeps, as above, the clone of the fp32
//     top-k weights 4·t·k and the fp32 denominator 4·t;
//     topk_weights * routed_scaling_factor multiplies by a number and keeps
//     nothing.
//   - moe(): torch.where's token_indices and weight_indices (t·k int64
//     each over the experts) are kept by topk_weights[token_indices,
//     weight_indices], hidden_states[token_indices] and index_add_: 2 ·
//     8·t·k; expert_output * expert_weights.unsqueeze(-1) keeps the fp32
//     gathered weights, 4·t·k (and the expert output, ExpertActivation's).
//
// scenarios.RouterSoftmaxTopK also covers Qwen3MoeSparseMoeBlock
// (models/qwen3_moe/modeling_qwen3_moe.py
// @ 16b6c53c8ec3a720bd45c1c377bf94e1d01249c5), Qwen2-MoE's code without
// the shared expert.
//
// scenarios.RouterDeepseekV2 (topk_method "greedy") and
// RouterDeepseekV2Group ("group_limited_greedy"): DeepseekV2MoEGate.forward
// and DeepseekV2MoE.moe (models/deepseek_v2/modeling_deepseek_v2.py
// @ 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d):
//
//   - the fp32 F.linear keeps the fp32 input and weight copies, 4·t·h and
//     4·E·h, as DeepSeek-V3's; logits.softmax(dtype=torch.float32) its
//     fp32 output, 4·t·E.
//   - group_limited_greedy: scores.view(…).max(dim=-1) and the group topk
//     feed only integer group indices and the no-grad mask, so their
//     nodes die with the forward; scores.masked_fill(~score_mask.bool(),
//     0.0) keeps its bool mask (masked_fill.Scalar: grad.masked_fill(mask,
//     0)), 1·t·E.
//   - topk keeps its int64 indices, 8·t·k; topk_weight *
//     routed_scaling_factor multiplies by a number (nothing kept); the
//     gate never divides (norm_topk_prob is read and not used).
//   - moe(): hidden_states[indices // k] keeps that int64 index, 8·t·k;
//     new_x[indices] = outs (index_put_, whose gradients read no self or
//     values) keeps the argsort indices, 8·t·k; new_x.type(topk_weight.dtype)
//     .mul_(topk_weight.unsqueeze(-1)) is an in-place mul whose other
//     gradient reads self, so the generated code keeps a clone of the fp32
//     copy of the expert outputs, 4·t·k·h, and the fp32 scaled weights,
//     4·t·k. (No op keeps the bf16 expert outputs here, which
//     ExpertActivation counts, 2·t·k·h; left as it is.)
//
// scenarios.RouterLlama4: Llama4Router.forward and Llama4TextMoe.forward
// (models/llama4/modeling_llama4.py
// @ 63210d0e3b74c2119b7998ff65bc6a2729283626):
//
//   - torch.topk(router_logits) keeps its int64 indices, 8·t·k, which
//     full_like(-inf).scatter_(1, router_indices, top_value) keeps too
//     (scatter.src: gradients read index only; no clone, as they read no
//     self); .float() keeps nothing; sigmoid its fp32 output, 4·t·E;
//     .to(router_scores.dtype) nothing.
//   - routed_in = hidden_states.repeat(E, 1) (repeat keeps sizes only);
//     routed_in * router_scores.reshape(-1, 1): mul keeps both factors, the
//     repeated bf16 input, 2·E·t·h, and the bf16 scores, 2·t·E.
//
// scenarios.RouterGptOss: GptOssTopKRouter.forward and GptOssExperts.forward
// on its training path (models/gpt_oss/modeling_gpt_oss.py
// @ 6edf5b311854175ff83c59179b3360beca1ceffc):
//
//   - torch.topk(router_logits) keeps its int64 indices, 8·t·k (scatter_
//     keeps the same tensor); softmax(router_top_value,
//     dtype=router_top_value.dtype) its bf16 output, 2·t·k; the scattered
//     router_scores are only indexed (index.Tensor keeps its indices, not
//     self).
//   - per expert, token_idx from torch.where under no_grad, t·k int64 over
//     the experts, kept by hidden_states[token_idx],
//     routing_weights[token_idx, expert_idx, None] and index_add_, 8·t·k;
//     out * routing_weights[…] keeps the gathered bf16 weights, 2·t·k.
func RouterTensors(t, h, e, k int64, router string, norm bool) ([]SavedTensor, error) {
	var c calc
	var out []SavedTensor
	add := func(name, by, formula string, bytes int64) {
		out = append(out, SavedTensor{Name: name, SavedBy: by, Formula: formula, Bytes: bytes})
	}
	switch router {
	case "":
	case scenarios.RouterSoftmaxTopK:
		add("router softmax output (fp32)", "softmax", "4·t·E", c.Mul(4, t, e))
		add("top-k indices (int64)", "topk", "8·t·k", c.Mul(8, t, k))
		if norm {
			add("top-k weights before /= (fp32 clone)", "div_ (in place)", "4·t·k", c.Mul(4, t, k))
			add("top-k weight sums (fp32)", "div_ (in place)", "4·t", c.Mul(4, t))
		}
		add("per-expert token and slot indices (torch.where, int64)", "index, index_add_", "2·8·t·k", c.Mul(16, t, k))
		add("gathered routing weights (bf16)", "mul", "2·t·k", c.Mul(2, t, k))
	case scenarios.RouterDeepseekV3:
		add("router input in fp32 (hidden_states.type(float32))", "mm", "4·t·h", c.Mul(4, t, h))
		add("router weight in fp32 (weight.type(float32))", "mm", "4·E·h", c.Mul(4, e, h))
		add("sigmoid scores (fp32)", "sigmoid, gather", "4·t·E", c.Mul(4, t, e))
		add("top-k indices (int64)", "gather", "8·t·k", c.Mul(8, t, k))
		if norm {
			add("top-k weights before /= (fp32 clone)", "div_ (in place)", "4·t·k", c.Mul(4, t, k))
			add("top-k weight sums + 1e-20 (fp32)", "div_ (in place)", "4·t", c.Mul(4, t))
		}
		add("per-expert token and slot indices (torch.where, int64)", "index, index_add_", "2·8·t·k", c.Mul(16, t, k))
		add("gathered routing weights (fp32)", "mul", "4·t·k", c.Mul(4, t, k))
	case scenarios.RouterDeepseekV2, scenarios.RouterDeepseekV2Group:
		add("router input in fp32 (hidden_states.type(float32))", "mm", "4·t·h", c.Mul(4, t, h))
		add("router weight in fp32 (weight.type(float32))", "mm", "4·E·h", c.Mul(4, e, h))
		add("router softmax output (fp32)", "softmax", "4·t·E", c.Mul(4, t, e))
		if router == scenarios.RouterDeepseekV2Group {
			add("group mask ~score_mask.bool() (bool)", "masked_fill", "t·E", c.Mul(t, e))
		}
		add("top-k indices (int64)", "topk", "8·t·k", c.Mul(8, t, k))
		add("dispatch index indices // k (int64)", "index", "8·t·k", c.Mul(8, t, k))
		add("argsort indices (int64)", "index_put_", "8·t·k", c.Mul(8, t, k))
		add("expert outputs in fp32 before mul_ (clone)", "mul_ (in place)", "4·t·k·h", c.Mul(4, t, k, h))
		add("scaled top-k weights (fp32)", "mul_ (in place)", "4·t·k", c.Mul(4, t, k))
	case scenarios.RouterLlama4:
		add("top-k indices (int64)", "topk, scatter_", "8·t·k", c.Mul(8, t, k))
		add("sigmoid scores (fp32)", "sigmoid", "4·t·E", c.Mul(4, t, e))
		add("router input repeated per expert (bf16)", "mul", "2·E·t·h", c.Mul(2, e, t, h))
		add("router scores (bf16)", "mul", "2·t·E", c.Mul(2, t, e))
	case scenarios.RouterGptOss:
		add("top-k indices (int64)", "topk, scatter_", "8·t·k", c.Mul(8, t, k))
		add("softmax over the top-k logits (bf16)", "softmax", "2·t·k", c.Mul(2, t, k))
		add("per-expert token indices (torch.where, int64)", "index, index_add_", "8·t·k", c.Mul(8, t, k))
		add("gathered routing weights (bf16)", "mul", "2·t·k", c.Mul(2, t, k))
	default:
		return nil, fmt.Errorf("router %q: use %s, %s, %s, %s, %s, %s or none", router, scenarios.RouterSoftmaxTopK, scenarios.RouterDeepseekV3,
			scenarios.RouterDeepseekV2, scenarios.RouterDeepseekV2Group, scenarios.RouterLlama4, scenarios.RouterGptOss)
	}
	if c.Err != nil {
		return nil, fmt.Errorf("router activation size overflows: %w", c.Err)
	}
	return out, nil
}
