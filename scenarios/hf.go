package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// This file imports a Hugging Face transformers config.json into the
// resolved layer list. Every architecture's parameter count follows the
// module tree its modeling_*.py builds, with the defaults its
// configuration_*.py applies when a switch (biases, tying, head_dim, MoE
// layout) is absent; the files and commits are cited at each architecture
// below (all in github.com/huggingface/transformers). The core dimensions
// (vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
// intermediate_size) are required: a config.json without them describes no
// real checkpoint, and the config classes' placeholder defaults would
// silently size another model.
// Buffers that are not parameters (rotary inv_freq, GPT-2's causal-mask
// "bias", persistent=False) are not counted, and a tied output layer is
// counted once, as model.num_parameters() and the safetensors index do.

// MaxHFConfigBytes bounds the config.json read (the largest real configs,
// with long-RoPE factor lists, are a few KiB).
const MaxHFConfigBytes = 1 << 20

// Limits on imported dimensions beyond the scenario ones.
const (
	maxExperts = 1 << 12
	maxHeadDim = 1 << 14
)

// Parameter group of routed experts (Megatron keeps expert parameters in
// their own buffer, seed 000's "MoE bf16" row).
const GroupExpert = "expert"

// BlockDims are the dimensions of one transformer block, recorded on the
// resolved layers for the activation and FLOP models. Heads is 0 on a unit
// that holds only routed experts (ExpertsOnly) and on a linear-attention
// block.
type BlockDims struct {
	Hidden  int64 `yaml:"hidden"`
	Heads   int64 `yaml:"heads,omitempty"`
	KVHeads int64 `yaml:"kv_heads,omitempty"`
	HeadDim int64 `yaml:"head_dim,omitempty"`
	// FFN is the dense MLP's intermediate size (0 in a MoE block without
	// a dense MLP).
	FFN int64 `yaml:"ffn,omitempty"`
	// Experts routed experts of ExpertFFN each, TopK active per token;
	// SharedExperts always active (DeepSeek).
	Experts       int64 `yaml:"experts,omitempty"`
	TopK          int64 `yaml:"top_k,omitempty"`
	ExpertFFN     int64 `yaml:"expert_ffn,omitempty"`
	SharedExperts int64 `yaml:"shared_experts,omitempty"`
	// SharedFFN is the intermediate size of the always-active shared
	// expert MLP of a MoE block, which every token goes through (DeepSeek:
	// n_shared_experts·moe_intermediate_size, one DeepseekV3MLP; Qwen2-MoE:
	// shared_expert_intermediate_size); 0 when there is none. SharedGate
	// marks Qwen2-MoE's sigmoid gate on the shared expert's output.
	SharedFFN  int64 `yaml:"shared_ffn,omitempty"`
	SharedGate bool  `yaml:"shared_gate,omitempty"`
	// RouterGroups and RouterGroupTopK are node-limited routing on a
	// routed-experts layer (config.json's n_group, topk_group: each
	// token's experts lie in RouterGroupTopK of RouterGroups equal groups
	// of consecutive experts); 0 when there is none (the importer sets
	// them when topk_group < n_group). Only a deduplicating MoE dispatcher
	// reads them (zero's dedupBytes).
	RouterGroups    int64 `yaml:"router_groups,omitempty"`
	RouterGroupTopK int64 `yaml:"router_group_topk,omitempty"`
	// Multi-head latent attention (DeepSeek-V2/V3): ValueHeadDim is the
	// width of each head's value and attention output (v_head_dim) when it
	// differs from HeadDim, the q·k width (0: HeadDim); RopeHeadDim the
	// rotary part of HeadDim (qk_rope_head_dim); QLoRARank and KVLoRARank
	// the low-rank query and key/value widths (q_lora_rank, 0 when the
	// block has a full q_proj; kv_lora_rank, 0 for every other attention).
	ValueHeadDim int64 `yaml:"value_head_dim,omitempty"`
	RopeHeadDim  int64 `yaml:"rope_head_dim,omitempty"`
	QLoRARank    int64 `yaml:"q_lora_rank,omitempty"`
	KVLoRARank   int64 `yaml:"kv_lora_rank,omitempty"`
	// Router names the MoE router whose forward tensors the activation
	// model counts (memory.RouterTensors): RouterSoftmaxTopK (Mixtral,
	// Qwen2-MoE, Qwen3-MoE: bf16 gate Linear, fp32 softmax, top-k),
	// RouterDeepseekV3 (fp32 gate Linear, sigmoid, group top-k),
	// RouterDeepseekV2 / RouterDeepseekV2Group (fp32 gate Linear, softmax,
	// greedy / group-limited top-k), RouterLlama4 or RouterGptOss; "" for
	// a router it does not model. RouterNorm marks the in-place
	// renormalisation of the top-k weights (Mixtral always; Qwen2-MoE,
	// Qwen3-MoE and DeepSeek-V3 when norm_topk_prob).
	Router     string `yaml:"router,omitempty"`
	RouterNorm bool   `yaml:"router_norm,omitempty"`
	// MTP marks a DeepSeek-V3 multi-token-prediction module (Model.MTPModules).
	MTP bool `yaml:"mtp,omitempty"`
	// Window is the keys each query of a sliding-window block attends
	// over: itself and the Window−1 tokens before it (transformers'
	// sliding_window, sliding_window_causal_mask_function in
	// src/transformers/masking_utils.py @
	// 2ccc6cae21faaf11631efa5fb9054687ae5dc931; Mistral, Gemma 2 and 3,
	// gpt-oss, OLMo 3). AttentionChunk is Llama 4's chunked attention: the
	// sequence is cut into consecutive chunks of AttentionChunk tokens and
	// each query attends causally within its own chunk
	// (chunked_causal_mask_function there). 0: every earlier token. A
	// block has at most one of them; zero's AttentionPairs counts what each
	// kernel computes of them.
	Window         int64 `yaml:"window,omitempty"`
	AttentionChunk int64 `yaml:"attention_chunk,omitempty"`
	// LinearAttention names a linear-attention token mixer that takes the
	// place of softmax attention in the block (Heads, KVHeads and HeadDim
	// are then 0): LinearGatedDeltaNet, Qwen3-Next's Gated DeltaNet
	// (Qwen3NextGatedDeltaNet). Its dims: LinearKeyHeads and
	// LinearValueHeads heads of LinearKeyHeadDim and LinearValueHeadDim
	// (linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
	// linear_value_head_dim) and the depthwise causal convolution's
	// LinearConvKernel taps (linear_conv_kernel_dim).
	LinearAttention    string `yaml:"linear_attention,omitempty"`
	LinearKeyHeads     int64  `yaml:"linear_key_heads,omitempty"`
	LinearValueHeads   int64  `yaml:"linear_value_heads,omitempty"`
	LinearKeyHeadDim   int64  `yaml:"linear_key_head_dim,omitempty"`
	LinearValueHeadDim int64  `yaml:"linear_value_head_dim,omitempty"`
	LinearConvKernel   int64  `yaml:"linear_conv_kernel,omitempty"`
	// OutputGate marks Qwen3-Next's gated attention: q_proj is twice as
	// wide and its second half, through a sigmoid, multiplies the
	// attention output before o_proj (Qwen3NextAttention).
	OutputGate bool `yaml:"output_gate,omitempty"`
	// QKNorm names the norm the block applies to its queries and keys,
	// whose tensors the activation model counts (memory.BlockTensors): ""
	// none; QKNormRMSHead, QKNormRMSFull, QKNormGemma or QKNormL2.
	QKNorm string `yaml:"qk_norm,omitempty"`
	// Norms is the block's layout of hidden-size norms: "" two RMSNorms
	// before attention and MLP whose weight multiplies the 16-bit
	// normalized tensor (Llama's); NormsGemma four RMSNorms, before and
	// after attention and MLP, computed in fp32 up to the (1 + weight)
	// multiply (Gemma 2 and 3); NormsFP32 the two pre-norms computed so
	// (Qwen3-Next, Qwen3.5). The final norm follows the blocks'.
	Norms string `yaml:"norms,omitempty"`
	// AttnSoftcap marks Gemma 2's attn_logit_softcapping: eager attention
	// passes the scores through cap·tanh(scores/cap), and tanh keeps its
	// s² output.
	AttnSoftcap bool `yaml:"attn_softcap,omitempty"`
	// QKVBias, OBias and MLPBias mark the biases of the block's q, k and v
	// projections (MLA's q_a_proj and kv_a_proj_with_mqa), of its output
	// projection, and of its MLPs (dense, shared and routed experts), as
	// the importer read them from config.json (attention_bias, qkv_bias,
	// mlp_bias, use_bias, …): UnitShapes lists the block's tensors from
	// the dims, and these are the parameters the sizes do not give.
	QKVBias bool `yaml:"qkv_bias,omitempty"`
	OBias   bool `yaml:"o_bias,omitempty"`
	MLPBias bool `yaml:"mlp_bias,omitempty"`
}

// Query/key norms (BlockDims.QKNorm), as transformers builds them:
//
//   - QKNormRMSHead: an RMSNorm(head_dim) on every query and key head whose
//     weight multiplies the 16-bit normalized tensor (Qwen3RMSNorm,
//     models/qwen3/modeling_qwen3.py @ 000c33fdfde12e1ffafbfcdb3c926df5727a00b6,
//     the Llama code; Qwen3 and Qwen3-MoE).
//   - QKNormRMSFull: the same RMSNorm over the whole q_proj and k_proj
//     outputs, heads·head_dim and kv_heads·head_dim wide, one statistic
//     per token (Olmo2RMSNorm in Olmo2Attention,
//     models/olmo2/modeling_olmo2.py @ 7264638d7b0ab5841670813ebed806189b8f7b71;
//     OLMo 3 builds the same).
//   - QKNormGemma: Gemma3RMSNorm(head_dim) per head, computed in fp32 up
//     to the (1 + weight) multiply (models/gemma3/modeling_gemma3.py
//     @ 0018aa647bb13801f061e2d1027c326f531b59fb); Qwen3NextAttention's
//     Qwen3NextRMSNorm(head_dim) on the query half of q_proj and on k_proj
//     is the same (modeling_qwen3_next.py @ 01cdc6081c75).
//   - QKNormL2: Llama4TextL2Norm per head after RoPE, without a weight,
//     on the layers that use RoPE when use_qk_norm is set
//     (models/llama4/modeling_llama4.py
//     @ 63210d0e3b74c2119b7998ff65bc6a2729283626).
const (
	QKNormRMSHead = "rms_head"
	QKNormRMSFull = "rms_full"
	QKNormGemma   = "gemma"
	QKNormL2      = "l2"
)

// BlockDims.Norms: NormsGemma is Gemma 2's and 3's four fp32 RMSNorms
// (Gemma2RMSNorm, Gemma3RMSNorm: output = _norm(x.float()) * (1.0 +
// weight.float()), then type_as(x)); NormsFP32 the two pre-norms of a
// Llama-style block computed the same way (Qwen3NextRMSNorm,
// models/qwen3_next/modeling_qwen3_next.py
// @ 01cdc6081c7500f9e50c98b1b943c90ecb665db3; Qwen3.5 imports it,
// modular_qwen3_5.py @ 8940358af7421e958995b05136ca14ce54bef39c).
const (
	NormsGemma = "gemma"
	NormsFP32  = "fp32"
)

// LinearGatedDeltaNet is BlockDims.LinearAttention for the Gated DeltaNet
// (Yang et al. 2024, arXiv:2412.06464) as Qwen3-Next builds it.
const LinearGatedDeltaNet = "gated_delta_net"

// Routers the activation model knows (BlockDims.Router).
const (
	RouterSoftmaxTopK = "softmax_topk"
	RouterDeepseekV3  = "deepseek_v3"
	// RouterDeepseekV2 and RouterDeepseekV2Group: DeepseekV2MoEGate
	// (fp32 gate Linear, softmax, top-k under topk_method greedy or
	// group_limited_greedy) and DeepseekV2MoE.moe.
	RouterDeepseekV2      = "deepseek_v2"
	RouterDeepseekV2Group = "deepseek_v2_group"
	// RouterLlama4: Llama4Router (top-k logits, sigmoid of the scattered
	// scores) and Llama4TextMoe, which scales the repeated input.
	RouterLlama4 = "llama4"
	// RouterGptOss: GptOssTopKRouter (Linear with bias, top-k, softmax
	// over the top-k) and GptOssExperts' training loop.
	RouterGptOss = "gpt_oss"
)

// ExpertsOnly reports whether the dims are those of a unit that holds only
// routed experts (experts.i): no softmax heads and no linear attention.
func (d *BlockDims) ExpertsOnly() bool {
	return d.Heads == 0 && d.LinearAttention == "" && (d.Experts > 0 || d.TopK > 0)
}

// VHeadDim is the width of each head's value: ValueHeadDim, or HeadDim
// when 0.
func (d *BlockDims) VHeadDim() int64 {
	if d.ValueHeadDim > 0 {
		return d.ValueHeadDim
	}
	return d.HeadDim
}

// KernelValueDim is the value width, per head, the attention kernel
// computes P·V and writes its output at: VHeadDim, except that under
// FlashAttention (flash true) a value narrower than the q·k width is
// zero-padded to HeadDim, because flash-attn 2 takes one head size for q, k
// and v: transformers' DeepseekV3Attention.forward
// (models/deepseek_v3/modeling_deepseek_v3.py
// @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3) runs
// F.pad(value_states, [0, qk_head_dim - v_head_dim]) when
// _attn_implementation is "flash_attention_2" and slices the output back
// to v_head_dim; SDPA and eager take the value as it is. headDim is the
// q·k width to fall back on when HeadDim is 0.
func (d *BlockDims) KernelValueDim(flash bool, headDim int64) int64 {
	qk := d.HeadDim
	if qk <= 0 {
		qk = headDim
	}
	v := d.ValueHeadDim
	if v <= 0 || (flash && v < qk) {
		return qk
	}
	return v
}

// HFModel is an imported Hugging Face model.
type HFModel struct {
	Architecture string
	ModelType    string
	// Dims of the first block (Hidden, Heads, KVHeads, HeadDim, FFN) and of
	// the MoE blocks (Experts, TopK, ExpertFFN, SharedExperts).
	Dims         BlockDims
	Layers       int64
	Vocab        int64
	MaxPositions int64
	// RopeScaled: config.json (or its text_config) sets a rope_scaling
	// (or rope_parameters) other than "default" (hfRopeScaled).
	RopeScaled bool
	Tied       bool
	// LayerList is embedding, block.i (and experts.i for MoE blocks),
	// final_norm and lm_head (absent when tied).
	LayerList []Layer
	// Total and Active parameters (Active = Total for dense models: all but
	// the routed experts plus top-k of them in every MoE layer).
	Total, Active int64
	// Notes name what the import approximates or leaves out, one line each
	// (zerosim import hf prints them; a scenario's Load warns with them).
	Notes []string
	// Unread are the config.json keys the import did not read and does not
	// know to change nothing it models (hfConfig.unreadKeys), for zerosim
	// import hf's note; a near-miss of a key the file lacks is refused
	// instead.
	Unread []string
	// routing is the model's node-limited routing (groupNote), whose note
	// (Notes[routing.at]) a scenario words for its MoE dispatcher.
	routing *nodeLimited
	// SlidingWindow is the key window of the WindowLayers decoder blocks
	// that attend over only the last SlidingWindow tokens (0: none);
	// windowed says which (by decoder layer), and assemble gives those
	// blocks BlockDims.Window (AttentionChunk when Chunked).
	SlidingWindow, WindowLayers int64
	windowed                    []bool
	// Dropout is the largest dropout probability config.json sets, and
	// DropoutKeys the keys that set one ("resid_pdrop 0.1"): DropoutNote.
	Dropout     float64
	DropoutKeys []string
	// LogitSoftcap: the head softcaps its logits (final_logit_softcapping,
	// Model.LogitSoftcap).
	LogitSoftcap bool
	// Chunked marks the window as Llama 4's attention_chunk_size: a
	// windowed block attends only within its own chunk of SlidingWindow
	// tokens (a block-diagonal causal mask) instead of over the last
	// SlidingWindow tokens.
	Chunked bool
}

// setWindows records that the decoder layers marked in windowed attend
// over a window of w tokens (within chunks of w when chunked). It must
// run before assemble, which copies the window into the blocks' dims.
func (hm *HFModel) setWindows(w int64, chunked bool, windowed []bool) {
	var n int64
	for _, on := range windowed {
		if on {
			n++
		}
	}
	if w <= 0 || n == 0 {
		return
	}
	hm.SlidingWindow, hm.WindowLayers, hm.Chunked, hm.windowed = w, n, chunked, windowed
}

// windowsFrom gives the decoder layers from max_window_layers (default
// from) on a window of w tokens (none when w is 0), as Qwen2Config and the
// configs after it (Qwen3, Qwen2-MoE, Qwen3-MoE, dots.llm1) default
// layer_types: "sliding_attention" when sliding_window is set and i >=
// max_window_layers; a layer_types list in the file wins.
func (c *hfConfig) windowsFrom(hm *HFModel, w, from int64) error {
	from, err := c.intOr(from, 0, maxLayers, "max_window_layers")
	if err != nil {
		return err
	}
	kinds, err := c.layerTypes("layer_types", hm.Layers, func(i int64) bool { return w > 0 && i >= from })
	if err != nil {
		return err
	}
	hm.setWindows(w, false, kinds)
	return nil
}

// hfConfig is a parsed config.json with exact integers.
type hfConfig struct {
	file string
	// keys places the keys of the file for errors (jsonKeys.where); the
	// paths are the whole file's, as the messages name them (prefix
	// included).
	keys *jsonKeys
	m    map[string]any
	// prefix names a sub-object in messages ("text_config.").
	prefix string
	// mtp is the multi-token-prediction modules the stack builds
	// (mtpModules); shared with the text_config sub-config.
	mtp *hfMTP
	// read holds the keys the import looked up (with prefix), whether
	// the file has them or not: unreadKeys names the file's others.
	// Shared with the text_config sub-config.
	read map[string]bool
}

// get is c.m[k], recorded as read.
func (c *hfConfig) get(k string) (any, bool) {
	if c.read != nil {
		c.read[c.prefix+k] = true
	}
	v, ok := c.m[k]
	return v, ok
}

// MTPUnusedError is the error of an import asked to build
// multi-token-prediction modules for an architecture that has none; the
// caller names its key or flag.
type MTPUnusedError struct{ Arch string }

func (e *MTPUnusedError) Error() string {
	return e.Arch + " has no multi-token-prediction module zerosim builds (DeepseekV3ForCausalLM, Glm4MoeForCausalLM, Qwen3NextForCausalLM and the Qwen3.5 classes have one)"
}

// hfMTP is how many multi-token-prediction modules the training stack
// builds beside an imported config.json's decoder: layers < 0 when the
// scenario does not say (model.mtp_layers, zerosim import hf
// --mtp-layers), which builds none, as transformers' modeling code does;
// used records that the architecture read it (an architecture without
// such a module refuses layers > 0).
type hfMTP struct {
	layers int64
	used   bool
}

// hfError is an error about one config.json.
func (c *hfConfig) errorf(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	return fmt.Errorf("%s: %s", c.keys.where(c.file, msg), msg)
}

// lookup returns the first present, non-null key among keys (a field and
// the attribute_map aliases transformers accepts for it).
func (c *hfConfig) lookup(keys []string) (string, any, bool) {
	for _, k := range keys {
		if v, ok := c.get(k); ok && v != nil {
			return c.prefix + k, v, true
		}
	}
	return c.prefix + keys[0], nil, false
}

// aliases refuses a file that gives a field and its attribute_map alias
// (keys: the field first, as lookup reads them) values that build
// different models. transformers sets the class's own fields first and
// the file's other keys after them, an alias onto its field through
// __setattr__ (PreTrainedConfig.__post_init__ and __setattr__,
// src/transformers/configuration_utils.py at
// 008e574391258935f3ecc3035c882e73bbcac419; before the dataclass
// configs, PretrainedConfig.__init__'s loop over **kwargs after the
// subclass's __init__ had set its parameters, e.g. GPT2Config at
// 01ae98ae2414210efd0d9ac1ffe78ff21588f1f7): the last key the file
// gives wins, null included, where lookup takes the first non-null one.
// They agree when the values are equal or the field is null.
func (c *hfConfig) aliases(keys ...string) error {
	var first, last string
	var fv, lv any
	for _, k := range keys {
		v, ok := c.get(k)
		if !ok {
			continue
		}
		if first == "" && v != nil {
			first, fv = k, v
		}
		last, lv = k, v
	}
	if first == "" || last == first || sameJSON(fv, lv) {
		return nil
	}
	return c.errorf("%s%s=%s and %s%s=%s are one setting in transformers (the config class's attribute_map), which sets %s last, so the model gets %s where the import reads %s's %s (give one of them, or both the same value)",
		c.prefix, last, describeJSON(lv), c.prefix, first, describeJSON(fv), last, describeJSON(lv), first, describeJSON(fv))
}

// sameJSON reports whether two config.json values are the same: numbers
// by value (12 and 12.0), others as decoded.
func sameJSON(a, b any) bool {
	x, okA := a.(json.Number)
	y, okB := b.(json.Number)
	if okA && okB {
		p, okP := new(big.Rat).SetString(x.String())
		q, okQ := new(big.Rat).SetString(y.String())
		if okP && okQ {
			return p.Cmp(q) == 0
		}
	}
	return reflect.DeepEqual(a, b)
}

// int reads a whole number in [lo, hi]; missing or null is an error. A
// null key is there for the user to see, so it is refused as null (at its
// key), not as missing (QA14 finding 7): these are the sizes the
// transformers class builds the model from (nn.Linear, nn.Embedding, the
// layer count), which fail on None, as nullFails says of the others.
func (c *hfConfig) int(lo, hi int64, keys ...string) (int64, error) {
	v, ok, err := c.intOpt(lo, hi, keys...)
	if err == nil && !ok {
		for _, k := range keys {
			if c.isNull(k) {
				return 0, c.errorf("%s%s is null: transformers sizes the model with it and fails on None (give its number in config.json)", c.prefix, k)
			}
		}
		return 0, c.errorf("%s%s is missing (add it to config.json)", c.prefix, keys[0])
	}
	return v, err
}

// intOr reads a whole number in [lo, hi], def when absent or null.
func (c *hfConfig) intOr(def, lo, hi int64, keys ...string) (int64, error) {
	v, ok, err := c.intOpt(lo, hi, keys...)
	if !ok {
		return def, err
	}
	return v, err
}

// kvHeads reads num_key_value_heads (def when absent) for a model of heads
// query heads: grouped-query attention needs it to divide heads.
func (c *hfConfig) kvHeads(def, heads int64) (int64, error) {
	kv, err := c.intOr(def, 1, heads, "num_key_value_heads")
	if err != nil {
		return 0, err
	}
	if heads%kv == 0 {
		return kv, nil
	}
	// Name the key to change (qauser30 L4: num_attention_heads edited
	// 64 → 60 was blamed on the num_key_value_heads=8 beside it): the
	// query heads when the file gives no num_key_value_heads (the default
	// is not the user's) or when they do not divide hidden_size either
	// (no head_dim given), the key-value heads otherwise; the other key's
	// position is named too.
	_, _, kvGiven := c.lookup([]string{"num_key_value_heads"})
	hidden, headDim := c.peekInt("hidden_size"), c.peekInt("head_dim")
	if !kvGiven || headDim == 0 && hidden > 0 && hidden%heads != 0 {
		fix := fmt.Sprintf("a multiple of %d", kv)
		if m := nearestMultipleDividing(heads, kv, hidden); m > 0 {
			fix = fmt.Sprintf("a multiple of %d dividing hidden_size=%d, such as %d", kv, hidden, m)
		}
		if !kvGiven {
			return 0, c.errorf("%snum_attention_heads=%d is not a multiple of the %d key-value heads num_key_value_heads defaults to (use %s, or give num_key_value_heads dividing %d)", c.prefix, heads, kv, fix, heads)
		}
		return 0, c.errorf("%snum_attention_heads=%d is not a multiple of num_key_value_heads=%d%s (change num_attention_heads to %s, or num_key_value_heads to a divisor of %d)", c.prefix, heads, kv, c.keyAt("num_key_value_heads"), fix, heads)
	}
	return 0, c.errorf("%snum_key_value_heads=%d does not divide num_attention_heads=%d%s (use a divisor of %d, or change num_attention_heads to a multiple of %d)", c.prefix, kv, heads, c.keyAt("num_attention_heads"), heads, kv)
}

// peekInt is key's integer value in c, 0 when absent or not an integer;
// for choosing an error's wording, not for reading the model.
func (c *hfConfig) peekInt(key string) int64 {
	n, ok := c.m[key].(json.Number)
	if !ok {
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		return 0
	}
	return i
}

// keyAt is " (at LINE:COL)" for key of c, "" when the file's positions
// are unknown.
func (c *hfConfig) keyAt(key string) string {
	if c.keys == nil {
		return ""
	}
	off, ok := c.keys.at[c.prefix+key]
	if !ok {
		return ""
	}
	line, col := lineCol(c.keys.data, off)
	return fmt.Sprintf(" (at %d:%d)", line, col)
}

// nearestMultipleDividing is the multiple of step nearest heads that
// divides hidden (the smaller at a tie), 0 when none does or hidden is
// unknown.
func nearestMultipleDividing(heads, step, hidden int64) int64 {
	best := int64(0)
	for m := step; hidden > 0 && m <= min(hidden, 2*heads+step); m += step {
		if hidden%m == 0 && (best == 0 || abs64(m-heads) < abs64(best-heads)) {
			best = m
		}
	}
	return best
}

func abs64(x int64) int64 { return max(x, -x) }

func (c *hfConfig) intOpt(lo, hi int64, keys ...string) (int64, bool, error) {
	k, v, ok := c.lookup(keys)
	if !ok {
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, true, c.errorf("%s is %s, not a whole number (%s)", k, describeJSON(v), numberFix(v, strconv.FormatInt(max(lo, 1), 10)))
	}
	i, whole, tooLarge := jsonWhole(n, 1<<53)
	if tooLarge {
		// 1e20 is a whole number, too large: it said "is not a whole
		// number".
		return 0, true, c.errorf("%s=%s is out of range (use %d to %d)", k, clip(n.String()), lo, hi)
	}
	if !whole {
		return 0, true, c.errorf("%s=%s is not a whole number (%s)", k, clip(n.String()), wholeFix(n, lo, hi))
	}
	if i < lo || i > hi {
		return 0, true, c.errorf("%s=%d is out of range (use %d to %d)", k, i, lo, hi)
	}
	if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
		// A whole float (2.8672e4, 28672.0) is a Python float after
		// json.load, and the modeling code builds its layers from these
		// keys as given: nn.Linear's torch.empty((out_features,
		// in_features)) refuses a float size with a TypeError
		// (torch/nn/modules/linear.py, Linear.__init__, pytorch at
		// f2889c83d0672bf95de5c57f770dcbdf07ebee61), as range() does a
		// float layer count (qauser30 L4: intermediate_size 2.8672e4 was
		// read as 28672).
		return 0, true, c.errorf("%s=%s is a float, where transformers builds the model from an integer (nn.Linear and range() refuse a float; write %d)", k, clip(n.String()), i)
	}
	return i, true, nil
}

// boolOr reads a boolean, def when absent or null.
func (c *hfConfig) boolOr(def bool, keys ...string) (bool, error) {
	k, v, ok := c.lookup(keys)
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, c.errorf("%s is %s, not a boolean (use true or false)", k, describeJSON(v))
	}
	return b, nil
}

// intList reads a list of whole numbers, nil when absent or null.
func (c *hfConfig) intList(key string, lo, hi int64) ([]int64, error) {
	v, ok := c.get(key)
	if !ok || v == nil {
		return nil, nil
	}
	xs, isList := v.([]any)
	if !isList {
		return nil, c.errorf("%s%s is %s, not a list (use a list of layer indices such as [0, 1])", c.prefix, key, describeJSON(v))
	}
	var out []int64
	for i, x := range xs {
		n, isNum := x.(json.Number)
		j, err := strconv.ParseInt(string(n), 10, 64)
		if !isNum || err != nil || j < lo || j > hi {
			return nil, c.errorf("%s%s[%d] is %s (use a layer index from %d to %d)", c.prefix, key, i, describeJSON(x), lo, hi)
		}
		out = append(out, j)
	}
	return out, nil
}

func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return clip(x.String())
	case string:
		return strconv.Quote(clip(x))
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ReadHFConfig reads and imports the config.json at path, reading at most
// MaxHFConfigBytes.
func ReadHFConfig(path string) (*HFModel, error) {
	m, _, err := readHFConfig(path, 0, -1)
	return m, err
}

// ReadHFConfigMTP is ReadHFConfig with mtpLayers multi-token-prediction
// modules built, as a stack that trains them does (model.mtp_layers); an
// architecture without such a module refuses mtpLayers > 0.
func ReadHFConfigMTP(path string, mtpLayers int64) (*HFModel, error) {
	if mtpLayers < 0 || mtpLayers > maxLayers {
		return nil, fmt.Errorf("%d multi-token-prediction modules is out of range (0 to %d)", mtpLayers, maxLayers)
	}
	m, _, err := readHFConfig(path, 0, mtpLayers)
	return m, err
}

// readHFConfig is ReadHFConfig with num_hidden_layers overridden when
// layers > 0 and mtp multi-token-prediction modules built when mtp >= 0;
// it also returns the bytes it read.
func readHFConfig(path string, layers, mtp int64) (*HFModel, []byte, error) {
	data, err := readHFFile(path)
	if err != nil {
		return nil, nil, err
	}
	m, err := parseHF(path, data)
	if err != nil {
		return nil, nil, err
	}
	hm, err := importHF(path, data, m, layers, mtp)
	return hm, data, err
}

// hubID matches a Hugging Face Hub model id ("meta-llama/Llama-2-7b-hf"):
// one organisation and one name, no extension.
var hubID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]$`)

// readHFFile reads a regular file of at most MaxHFConfigBytes; a directory
// (a downloaded model) stands for its config.json.
func readHFFile(path string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	data, err := readConfigFile(path, "the path of a config.json", MaxHFConfigBytes)
	if err != nil {
		if hubID.MatchString(path) && filepath.Ext(path) != ".json" {
			if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
				// "meta-llama/Llama-2-7b-hf: cannot read the file: no such
				// file or directory (check the path)": a Hub id, which
				// zerosim does not fetch.
				return nil, fmt.Errorf("%s: no such file or directory; if it is a Hugging Face Hub id, zerosim reads no network: download its config.json (huggingface-cli download %s config.json) and give the file", ttName(path), ttName(path))
			}
		}
		return nil, err
	}
	if len(data) > MaxHFConfigBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for a config.json (check the path)", path, MaxHFConfigBytes)
	}
	return data, nil
}

// parseHF decodes the bytes of a config.json into its top-level object.
func parseHF(file string, data []byte) (map[string]any, error) {
	if len(data) > MaxHFConfigBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for a config.json", file, MaxHFConfigBytes)
	}
	// A leading UTF-8 byte-order mark is refused (jsonError), as
	// transformers refuses it: PreTrainedConfig._dict_from_json_file reads
	// the text as utf-8 and json.loads it, which raises "Unexpected UTF-8
	// BOM", and from_pretrained turns that into "is not a valid JSON file"
	// (src/transformers/configuration_utils.py at
	// 008e574391258935f3ecc3035c882e73bbcac419).
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(file, data, err, "give the model's config.json")
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: not valid JSON: a second value after the first (give the model's config.json: one object)", jsonPos(file, data, nextValue(data, dec.InputOffset())))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the file holds %s, not a JSON object (give the model's config.json)", file, describeJSON(v))
	}
	return m, nil
}

// ImportHF imports the bytes of a config.json; file names it in errors.
// Every error is one line naming the field.
func ImportHF(file string, data []byte) (*HFModel, error) {
	m, err := parseHF(file, data)
	if err != nil {
		return nil, err
	}
	return importHF(file, data, m, 0, -1)
}

// importHF imports a parsed config.json; layers > 0 overrides
// num_hidden_layers (model.layers with hf_config, as zerosim fit scales a
// model); mtp >= 0 builds that many multi-token-prediction modules
// (hfMTP), mtp < 0 none.
func importHF(file string, data []byte, m map[string]any, layers, mtp int64) (*HFModel, error) {
	c := &hfConfig{file: file, keys: newJSONKeys(data), m: m, mtp: &hfMTP{layers: mtp}, read: map[string]bool{}}
	if layers > 0 {
		top := m["num_hidden_layers"]
		if top == nil {
			top = m["n_layer"]
		}
		for _, k := range []string{"num_hidden_layers", "n_layer"} {
			delete(m, k)
		}
		m["num_hidden_layers"] = json.Number(strconv.FormatInt(layers, 10))
		if _, ok := m["n_embd"]; ok {
			m["n_layer"] = m["num_hidden_layers"]
		}
		// Layers listed by index must exist in the shorter model.
		for _, k := range []string{"mlp_only_layers"} {
			if xs, ok := m[k].([]any); ok {
				var keep []any
				for _, x := range xs {
					if n, ok := x.(json.Number); ok {
						if i, err := n.Int64(); err == nil && i < layers {
							keep = append(keep, x)
						}
					}
				}
				m[k] = keep
			}
		}
		overrideTextLayers(m, layers, top)
	}
	arch, err := c.architecture()
	if err != nil {
		return nil, err
	}
	b, ok := hfArchitectures[arch]
	if !ok {
		return nil, c.errorf("architectures %q is not supported: %s", clip(arch), unsupportedHF(arch))
	}
	// transformers builds the class of model_type, not of architectures:
	// AutoConfig picks the config class by model_type and
	// AutoModelForCausalLM the model class by the config's class
	// (src/transformers/models/auto/configuration_auto.py and
	// auto_factory.py @ 2ccc6cae21faaf11631efa5fb9054687ae5dc931). Two
	// supported classes that disagree would count one model and name the
	// other. A family's text and multimodal types (gemma3_text, gemma3)
	// and a class's alias outside hfModelTypes (Ernie4_5_ForCausalLM) are
	// not a disagreement.
	family := func(t string) string { return strings.TrimSuffix(t, "_text") }
	if mt, ok := m["model_type"].(string); ok && hfModelTypes[arch] != "" && family(hfModelTypes[arch]) != family(mt) {
		for other, t := range hfModelTypes {
			if t == mt {
				return nil, c.errorf("architectures[0] %s and model_type %q disagree: transformers builds model_type's %s (AutoConfig picks the config by model_type); make them agree", arch, clip(mt), other)
			}
		}
	}
	hm, err := b(c)
	if err != nil {
		return nil, err
	}
	if mtp > 0 && !c.mtp.used {
		return nil, &MTPUnusedError{Arch: arch}
	}
	hm.Architecture = arch
	hm.ModelType, _ = m["model_type"].(string)
	hm.RopeScaled = hfRopeScaled(m)
	if err := hm.finish(c); err != nil {
		return nil, err
	}
	if hm.Unread, err = c.checkUnread(arch); err != nil {
		return nil, err
	}
	return hm, nil
}

// architecture returns architectures[0], or the causal-LM class of
// model_type when the list is absent (AutoModelForCausalLM's mapping).
func (c *hfConfig) architecture() (string, error) {
	if v, ok := c.get("architectures"); ok && v != nil {
		xs, isList := v.([]any)
		if !isList || len(xs) == 0 {
			return "", c.errorf("architectures is %s (use a list such as [\"LlamaForCausalLM\"])", describeJSON(v))
		}
		s, isStr := xs[0].(string)
		if !isStr {
			return "", c.errorf("architectures[0] is %s (use a class name such as \"LlamaForCausalLM\")", describeJSON(xs[0]))
		}
		return s, nil
	}
	v, _ := c.get("model_type")
	mt, ok := v.(string)
	if !ok {
		return "", c.errorf("architectures is missing (add \"architectures\": [\"LlamaForCausalLM\"] or a model_type)")
	}
	for a, t := range hfModelTypes {
		if t == mt {
			return a, nil
		}
	}
	return "", c.errorf("model_type %q is not supported: %s", clip(mt), unsupportedHFType(mt))
}

// textConfig is the text decoder's config of a multimodal class arch
// (Gemma3ForConditionalGeneration, Mistral3ForConditionalGeneration,
// Qwen3_5ForConditionalGeneration …): its text_config object, read with
// the "text_config." prefix in messages.
func (c *hfConfig) textConfig(arch string) (*hfConfig, error) {
	v, present := c.get("text_config")
	if !present {
		return nil, c.errorf("text_config is missing (%s needs the text decoder's text_config object)", arch)
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return nil, c.errorf("text_config is %s (%s needs the text decoder's text_config object)", describeJSON(v), arch)
	}
	return &hfConfig{file: c.file, keys: c.keys, m: sub, prefix: "text_config.", mtp: c.mtp, read: c.read}, nil
}

// hfModelTypes maps each supported class to its model_type.
var hfModelTypes = map[string]string{
	"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
	"Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe", "Qwen2MoeForCausalLM": "qwen2_moe",
	"Gemma2ForCausalLM": "gemma2", "Phi3ForCausalLM": "phi3", "GPTNeoXForCausalLM": "gpt_neox",
	"GPT2LMHeadModel": "gpt2", "OPTForCausalLM": "opt", "FalconForCausalLM": "falcon",
	"DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3", "GptOssForCausalLM": "gpt_oss",
	"Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3",
	"Llama4ForCausalLM": "llama4_text", "Llama4ForConditionalGeneration": "llama4", "Olmo2ForCausalLM": "olmo2",
	"Olmo3ForCausalLM": "olmo3", "SmolLM3ForCausalLM": "smollm3", "Glm4MoeForCausalLM": "glm4_moe",
	"Mistral3ForConditionalGeneration": "mistral3", "MiniMaxM2ForCausalLM": "minimax_m2", "SeedOssForCausalLM": "seed_oss",
	"Dots1ForCausalLM": "dots1", "Qwen3NextForCausalLM": "qwen3_next",
	"Qwen3_5ForConditionalGeneration": "qwen3_5", "Qwen3_5MoeForConditionalGeneration": "qwen3_5_moe",
	"Qwen3_5ForCausalLM": "qwen3_5_text", "Qwen3_5MoeForCausalLM": "qwen3_5_moe_text",
	"Ernie4_5_MoeForCausalLM": "ernie4_5_moe", "Ernie4_5ForCausalLM": "ernie4_5",
}

var hfArchitectures = map[string]func(*hfConfig) (*HFModel, error){
	"LlamaForCausalLM":                   hfLlamaLike,
	"MistralForCausalLM":                 hfLlamaLike,
	"MixtralForCausalLM":                 hfLlamaLike,
	"Qwen2ForCausalLM":                   hfLlamaLike,
	"Qwen3ForCausalLM":                   hfLlamaLike,
	"Qwen3MoeForCausalLM":                hfLlamaLike,
	"Qwen2MoeForCausalLM":                hfLlamaLike,
	"Gemma2ForCausalLM":                  hfLlamaLike,
	"Phi3ForCausalLM":                    hfLlamaLike,
	"DeepseekV2ForCausalLM":              hfDeepseekV2,
	"DeepseekV3ForCausalLM":              hfDeepseekV3,
	"GptOssForCausalLM":                  hfGptOss,
	"Gemma3ForCausalLM":                  hfGemma3,
	"Gemma3ForConditionalGeneration":     hfGemma3,
	"Llama4ForCausalLM":                  hfLlama4,
	"Llama4ForConditionalGeneration":     hfLlama4,
	"Olmo2ForCausalLM":                   hfLlamaLike,
	"Olmo3ForCausalLM":                   hfLlamaLike,
	"SmolLM3ForCausalLM":                 hfLlamaLike,
	"Glm4MoeForCausalLM":                 hfGlm4Moe,
	"Mistral3ForConditionalGeneration":   hfMistral3,
	"MiniMaxM2ForCausalLM":               hfMiniMaxM2,
	"SeedOssForCausalLM":                 hfSeedOss,
	"Dots1ForCausalLM":                   hfDots1,
	"Qwen3NextForCausalLM":               hfQwen3Next,
	"Qwen3_5ForConditionalGeneration":    hfQwen35,
	"Qwen3_5MoeForConditionalGeneration": hfQwen35,
	"Qwen3_5ForCausalLM":                 hfQwen35,
	"Qwen3_5MoeForCausalLM":              hfQwen35,
	"Ernie4_5_MoeForCausalLM":            hfErnie45Moe,
	"Ernie4_5ForCausalLM":                hfErnie45,
	"Ernie4_5_ForCausalLM":               hfErnie45,
	"GPTNeoXForCausalLM":                 hfGPTNeoX,
	"GPT2LMHeadModel":                    hfGPT2,
	"OPTForCausalLM":                     hfOPT,
	"FalconForCausalLM":                  hfFalcon,
}

func hfArchitectureNames() []string {
	var n []string
	for a := range hfArchitectures {
		n = append(n, a)
	}
	sort.Strings(n)
	return n
}

func hfModelTypeNames() []string {
	var n []string
	for _, t := range hfModelTypes {
		n = append(n, t)
	}
	sort.Strings(n)
	return n
}

// pc accumulates parameter counts with overflow checks.
type pc struct{ overflow bool }

func (p *pc) mul(xs ...int64) int64 {
	v := int64(1)
	for _, x := range xs {
		var err error
		if v, err = units.Mul(v, x); err != nil {
			p.overflow = true
			return 0
		}
	}
	return v
}

func (p *pc) add(xs ...int64) int64 {
	v, ok := sumChecked(xs...)
	if !ok {
		p.overflow = true
	}
	return v
}

// linear is nn.Linear(in, out, bias): in·out (+ out).
func (p *pc) linear(in, out int64, bias bool) int64 {
	w := p.mul(in, out)
	if bias {
		w = p.add(w, out)
	}
	return w
}

// block is one decoder layer's parameters: the always-active part (attention,
// norms, router, shared experts, dense MLP) and the routed experts.
type hfBlock struct {
	dense, experts, activeExperts int64
	dims                          BlockDims
}

// assemble builds the layer list. embed holds the input embeddings (and
// learned positions), final the final norm (and projections), head the
// untied output layer (0 when tied).
func (hm *HFModel) assemble(p *pc, embed int64, blocks []hfBlock, final, head int64) {
	hm.LayerList = append(hm.LayerList, Layer{Name: "embedding", Params: units.Count(embed)})
	total, active := p.add(embed, final, head), p.add(embed, final, head)
	for i, b := range blocks {
		d := b.dims
		if i < len(hm.windowed) && hm.windowed[i] {
			if hm.Chunked {
				d.AttentionChunk = hm.SlidingWindow
			} else {
				d.Window = hm.SlidingWindow
			}
		}
		hm.LayerList = append(hm.LayerList, Layer{Name: fmt.Sprintf("block.%d", i), Params: units.Count(b.dense), Dims: &d})
		total, active = p.add(total, b.dense), p.add(active, b.dense)
		if b.experts > 0 {
			ed := BlockDims{Hidden: d.Hidden, Experts: d.Experts, TopK: d.TopK, ExpertFFN: d.ExpertFFN, Router: d.Router, RouterNorm: d.RouterNorm, MLPBias: d.MLPBias}
			hm.LayerList = append(hm.LayerList, Layer{Name: fmt.Sprintf("experts.%d", i), Params: units.Count(b.experts),
				ActiveParams: units.Count(b.activeExperts), Group: GroupExpert, Dims: &ed})
			total, active = p.add(total, b.experts), p.add(active, b.activeExperts)
		}
	}
	hm.LayerList = append(hm.LayerList, Layer{Name: "final_norm", Params: units.Count(final)})
	if head > 0 {
		hm.LayerList = append(hm.LayerList, Layer{Name: "lm_head", Params: units.Count(head)})
	}
	hm.Total, hm.Active = total, active
	if p.overflow {
		hm.Total = 0 // finish reports it
	}
}

// untied is the output layer's parameters: x, or 0 when tied to the
// input embedding.
func (hm *HFModel) untied(x int64) int64 {
	if hm.Tied {
		return 0
	}
	return x
}

// uniform is layers identical blocks of dense parameters with dims d.
func uniform(layers, dense int64, d BlockDims) []hfBlock {
	blocks := make([]hfBlock, layers)
	for i := range blocks {
		blocks[i] = hfBlock{dense: dense, dims: d}
	}
	return blocks
}

// mha sets multi-head attention dims: KVHeads = Heads and HeadDim =
// Hidden/Heads, an error naming the config keys when Heads does not divide
// Hidden.
func (c *hfConfig) mha(d *BlockDims, headsKey, hiddenKey string) error {
	if d.Hidden%d.Heads != 0 {
		return c.errorf("%s=%d does not divide %s=%d (use a divisor of %d)", headsKey, d.Heads, hiddenKey, d.Hidden, d.Hidden)
	}
	d.KVHeads, d.HeadDim = d.Heads, d.Hidden/d.Heads
	return nil
}

func (hm *HFModel) finish(c *hfConfig) error {
	hm.readDropout(c)
	if hm.Total <= 0 {
		return c.errorf("the dimensions give more than 2^63 parameters (check hidden_size, intermediate_size and the expert counts)")
	}
	for _, ly := range hm.LayerList {
		if ly.Params <= 0 {
			return c.errorf("layer %s has no parameters (check the dimensions)", ly.Name)
		}
	}
	return nil
}

// qwenSparse is Qwen-MoE's rule for which decoder layers are MoE
// (Qwen2MoeDecoderLayer and Qwen3MoeDecoderLayer, and Qwen3-Next's, in
// their modeling files cited at hfLlamaLike and hfQwen3Next): layer i is
// sparse when it is not in mlp_only_layers, the model has experts, and
// (i+1) % decoder_sparse_step == 0.
func (c *hfConfig) qwenSparse(layers, experts int64) (func(i int64) bool, error) {
	step, err := c.intOr(1, 1, maxLayers, "decoder_sparse_step")
	if err != nil {
		return nil, err
	}
	only, err := c.intList("mlp_only_layers", 0, layers-1)
	if err != nil {
		return nil, err
	}
	return func(i int64) bool { return !contains(only, i) && experts > 0 && (i+1)%step == 0 }, nil
}

// hfDropoutKeys are the dropout probabilities the imported
// architectures' configs carry: GPT-2's resid_pdrop, embd_pdrop and
// attn_pdrop (GPT2Config), OPT's dropout and attention_dropout, Falcon's
// and GPT-NeoX's hidden_dropout and attention_dropout, Seed-OSS's
// residual_dropout, the Llama family's attention_dropout, BERT-style
// hidden_dropout_prob and attention_probs_dropout_prob.
var hfDropoutKeys = []string{"resid_pdrop", "embd_pdrop", "attn_pdrop", "dropout", "attention_dropout", "hidden_dropout",
	"residual_dropout", "activation_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob"}

// readDropout records the largest dropout probability config.json sets
// (Dropout) and the keys that set one (DropoutKeys). A model trained in
// train() mode applies them, and each dropout keeps its mask for
// backward; zerosim keeps masks only under training.dropout, so Load
// warns when the config has dropout and the scenario does not say.
func (hm *HFModel) readDropout(c *hfConfig) {
	for _, k := range hfDropoutKeys {
		v, _ := c.get(k)
		f, ok := v.(json.Number)
		if !ok {
			continue
		}
		p, err := f.Float64()
		if err != nil || !(p > 0 && p < 1) {
			continue
		}
		hm.DropoutKeys = append(hm.DropoutKeys, fmt.Sprintf("%s %s", k, f))
		hm.Dropout = max(hm.Dropout, p)
	}
}

// DropoutNote says that config.json trains with dropout ("" when it
// sets none).
func (hm *HFModel) DropoutNote() string {
	if hm.Dropout <= 0 {
		return ""
	}
	return fmt.Sprintf("config.json sets dropout (%s): training in train() mode keeps a mask per dropout for backward, which zerosim counts only under training.dropout (set training.dropout: %s; unset, none is kept)",
		strings.Join(hm.DropoutKeys, ", "), strconv.FormatFloat(hm.Dropout, 'g', -1, 64))
}

// common reads vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads (with attribute_map aliases, which must agree:
// aliases) and max_position_embeddings (optional).
func (c *hfConfig) common(hiddenKeys, layerKeys, headKeys, posKeys []string) (hm *HFModel, err error) {
	for _, keys := range [][]string{hiddenKeys, layerKeys, headKeys, posKeys} {
		if err := c.aliases(keys...); err != nil {
			return nil, err
		}
	}
	hm = &HFModel{}
	if hm.Vocab, err = c.int(1, maxVocab, "vocab_size"); err != nil {
		return nil, err
	}
	if hm.Dims.Hidden, err = c.int(1, maxHidden, hiddenKeys...); err != nil {
		return nil, err
	}
	if hm.Layers, err = c.int(1, maxLayers, layerKeys...); err != nil {
		return nil, err
	}
	if hm.Dims.Heads, err = c.int(1, maxHidden, headKeys...); err != nil {
		return nil, err
	}
	if hm.MaxPositions, err = c.intOr(0, 1, maxSeqLen, posKeys...); err != nil {
		return nil, err
	}
	return hm, nil
}

// hfLlamaLike imports the RMSNorm, RoPE, gated-MLP decoders:
//
//   - Llama: models/llama/modeling_llama.py
//     @ 5dd4a63548857797727ae73eeb6a6e886ea02a3e: head_dim = config.head_dim
//     or hidden/heads; q, k, v, o biases = attention_bias (default false);
//     gate/up/down biases = mlp_bias (default false); num_key_value_heads
//     defaults to num_attention_heads; tie_word_embeddings default false.
//   - Mistral: as Llama without biases (modeling_mistral.py
//     @ 93e0020c96f1aaf6c380491c943fcf57502c5e19); every layer's attention
//     gets sliding_window=getattr(config, "sliding_window", None) ("main
//     diff with Llama"), MistralConfig default 4096, null for none (v0.2
//     and later): a window on every block (HFModel.setWindows,
//     BlockDims.Window).
//   - Mixtral: modeling_mixtral.py
//     @ af3efdd71ee5b568dfdb71bb41d316df830147af: block_sparse_moe.gate
//     Linear(h, num_local_experts, bias=False) and num_local_experts experts
//     of w1, w2, w3 (3·h·ffn each), num_experts_per_tok active; the
//     attention passes sliding_window as Mistral's does (MixtralConfig
//     default none).
//   - Qwen2: modeling_qwen2.py: q, k, v always have biases, o none.
//   - Qwen3: modeling_qwen3.py: biases = attention_bias (q, k, v, o),
//     q_norm and k_norm RMSNorm(head_dim); configuration_qwen3.py
//     @ 1f3ae2b3ac7e5b32262588602ff42efb372a6232: head_dim defaults to 128.
//   - Qwen3-MoE: modeling_qwen3_moe.py: a layer is sparse when it is not in
//     mlp_only_layers, num_experts > 0 and (i+1) % decoder_sparse_step == 0;
//     gate Linear(h, num_experts, bias=False), num_experts experts of
//     moe_intermediate_size; configuration_qwen3_moe.py
//     @ 26f4b0f69f17118549a693ffe600c18e8505b636 defaults
//     decoder_sparse_step 1, num_experts 128, num_experts_per_tok 8,
//     moe_intermediate_size 768 and has no head_dim (hidden/heads).
//   - Qwen2-MoE: modeling_qwen2_moe.py
//     @ 1c351314a42ac9aef3510fc536c18130d52be2ef: head_dim hidden/heads;
//     q, k, v biases = qkv_bias (default true; older versions hard-code
//     bias=True), o none; MoE layers as Qwen3-MoE's rule, each adding
//     shared_expert Qwen2MoeMLP(shared_expert_intermediate_size) and
//     shared_expert_gate Linear(h, 1, bias=False) to the router;
//     configuration_qwen2_moe.py @ 765e4fbcdf84b2720f98be27665c839cdb579fcf
//     defaults num_experts 60, num_experts_per_tok 4,
//     moe_intermediate_size 1408, shared_expert_intermediate_size 5632.
//     use_sliding_window true windows the layers from max_window_layers
//     on (below).
//   - Gemma 2: modeling_gemma2.py: 4 RMSNorms per layer (input,
//     post_attention, pre_ and post_feedforward); configuration_gemma2.py
//     @ 19f5346140749359823ef26c4183bd8f1aed3db7: head_dim default 256,
//     tie_word_embeddings default true; even layers attend over
//     sliding_window (HFModel.setWindows).
//   - Phi-3: modeling_phi3.py @ 43c2b4816a6507cb08a18b402c6b053453651daf:
//     fused qkv_proj Linear(h, (heads+2·kv)·head_dim,
//     bias=False) and gate_up_proj Linear(h, 2·ffn, bias=False); every
//     layer's attention gets sliding_window (Phi3Config default none; Phi-3
//     mini 4k has 2047, Phi-3.5 262144), as Mistral's.
//   - OLMo 2: modeling_olmo2.py @ 7264638d7b0ab5841670813ebed806189b8f7b71:
//     Llama's projections (biases = attention_bias, default false; MLP
//     without biases), head_dim hidden/heads, and its own norm placement:
//     no input_layernorm; post_attention_layernorm and
//     post_feedforward_layernorm RMSNorm(h) normalize the attention and MLP
//     outputs before the residual add (2·h, as the pre-norms would); q_norm
//     RMSNorm(heads·head_dim) and k_norm RMSNorm(kv_heads·head_dim) over the
//     whole q_proj and k_proj outputs (Qwen3's are per head); lm_head untied
//     (tie_word_embeddings default false).
//   - OLMo 3: modeling_olmo3.py @ 0233e509531ace915c8241b4c16c8032a583279c
//     builds OLMo 2's module tree (q/k/v/o biases = attention_bias, q_norm
//     and k_norm over heads·head_dim and kv_heads·head_dim, post-attention
//     and post-feedforward norms, MLP without biases, lm_head untied by
//     default); Olmo3Attention passes config.sliding_window to the layers
//     whose layer_types entry is "sliding_attention". configuration_olmo3.py
//     @ 008e574391258935f3ecc3035c882e73bbcac419: sliding_window default
//     4096 (null: none), layer_types default sliding unless (i+1) % 4 == 0
//     (three sliding layers to one full): HFModel.setWindows.
//   - SmolLM3: modeling_smollm3.py @ 00d4b3d2142cb4ced2f51b90614b5d26bc045015
//     is Llama's tree (q/k/v/o biases = attention_bias, gate/up/down biases
//     = mlp_bias, both default false); configuration_smollm3.py
//     @ 008e574391258935f3ecc3035c882e73bbcac419: tie_word_embeddings
//     default true, head_dim hidden/heads. SmolLM3Attention skips RoPE on
//     the layers whose no_rope_layers entry is 0 (default every
//     no_rope_layer_interval-th, 4): no parameters or GEMM FLOPs change, and
//     the NoPE blocks are noted (zerosim charges every eager Llama block the
//     RoPE op chain). With use_sliding_window (default false) and a
//     sliding_window, layer_types defaults to "sliding_attention" on the
//     NoPE layers, and only then do those layers get the window.
func hfLlamaLike(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	arch, _ := c.architecture()
	d := &hm.Dims
	h := d.Hidden
	if d.KVHeads, err = c.kvHeads(d.Heads, d.Heads); err != nil {
		return nil, err
	}
	defHeadDim := h / d.Heads
	switch arch {
	case "Qwen3ForCausalLM":
		// configuration_qwen3.py @ 1f3ae2b3ac7e5b32262588602ff42efb372a6232:
		// head_dim=128. Qwen3MoeConfig (configuration_qwen3_moe.py @
		// 26f4b0f69f17118549a693ffe600c18e8505b636) has no head_dim
		// argument: the attention falls back to hidden/heads.
		defHeadDim = 128
	case "Gemma2ForCausalLM":
		defHeadDim = 256
	}
	if d.HeadDim, err = c.intOr(defHeadDim, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.HeadDim == 0 {
		return nil, c.errorf("hidden_size=%d is smaller than num_attention_heads=%d (add head_dim or fix the sizes)", h, d.Heads)
	}
	moe := arch == "MixtralForCausalLM" || arch == "Qwen3MoeForCausalLM" || arch == "Qwen2MoeForCausalLM"
	ffnMin := int64(1)
	if moe {
		ffnMin = 0
	}
	if d.FFN, err = c.int(ffnMin, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	switch arch {
	case "Qwen3ForCausalLM", "Qwen3MoeForCausalLM":
		d.QKNorm = QKNormRMSHead
	case "Olmo2ForCausalLM", "Olmo3ForCausalLM":
		d.QKNorm = QKNormRMSFull
	case "Gemma2ForCausalLM":
		// modeling_gemma2.py @ 006e86931247d7bacf94ad00ada1fb6baf11e94b:
		// four Gemma2RMSNorms in fp32 up to (1 + weight); eager attention
		// softcaps the scores when attn_logit_softcapping is not None and
		// Gemma2ForCausalLM.forward the logits when
		// final_logit_softcapping is not None (Gemma2Config defaults 50.0
		// and 30.0).
		d.Norms = NormsGemma
		if d.AttnSoftcap, err = c.softcap(true, "attn_logit_softcapping"); err != nil {
			return nil, err
		}
		if hm.LogitSoftcap, err = c.softcap(true, "final_logit_softcapping"); err != nil {
			return nil, err
		}
	}
	if arch == "Gemma2ForCausalLM" {
		// modeling_gemma2.py @ 9a80143ca26066ee3266749a57c7b3850d8843be:
		// Gemma2DecoderLayer.is_sliding = not bool(layer_idx % 2), later
		// spelt layer_types; sliding_window default 4096.
		w, err := c.intOr(4096, 1, maxSeqLen, "sliding_window")
		if err != nil {
			return nil, err
		}
		kinds, err := c.layerTypes("layer_types", hm.Layers, func(i int64) bool { return i%2 == 0 })
		if err != nil {
			return nil, err
		}
		hm.setWindows(w, false, kinds)
	}
	switch arch {
	case "MistralForCausalLM", "MixtralForCausalLM", "Phi3ForCausalLM":
		def := int64(0)
		if arch == "MistralForCausalLM" {
			def = 4096
		}
		w, err := c.window(def, "sliding_window")
		if err != nil {
			return nil, err
		}
		all := make([]bool, hm.Layers)
		for i := range all {
			all[i] = true
		}
		hm.setWindows(w, false, all)
	}
	switch arch {
	case "Olmo3ForCausalLM":
		// Olmo3Config: sliding_window 4096 (null: none) on the
		// "sliding_attention" layers, layer_types default three sliding
		// layers to one full.
		w, err := c.window(4096, "sliding_window")
		if err != nil {
			return nil, err
		}
		windowed, err := c.layerTypes("layer_types", hm.Layers, func(i int64) bool { return (i+1)%4 != 0 })
		if err != nil {
			return nil, err
		}
		hm.setWindows(w, false, windowed)
	case "SmolLM3ForCausalLM":
		if err := c.smolLM3Layers(hm); err != nil {
			return nil, err
		}
	}
	defTied := arch == "Gemma2ForCausalLM" || arch == "SmolLM3ForCausalLM"
	if hm.Tied, err = c.boolOr(defTied, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	attnBias, err := c.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	mlpBias, err := c.boolOr(false, "mlp_bias")
	if err != nil {
		return nil, err
	}
	switch arch {
	case "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM", "Phi3ForCausalLM", "Gemma2ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3ForCausalLM",
		"Qwen2MoeForCausalLM", "Olmo2ForCausalLM", "Olmo3ForCausalLM":
		// These modeling files have no mlp_bias.
		mlpBias = false
	}
	switch arch {
	case "Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM":
		// Qwen's configs carry use_sliding_window (default false) with
		// sliding_window (default 4096) and max_window_layers (default 28):
		// Qwen2Config (configuration_qwen2.py @
		// caa3177646255d2cf73626315c8582722af4749c) keeps sliding_window
		// only under use_sliding_window and defaults layer_types to
		// "sliding_attention" for the layers from max_window_layers on;
		// Qwen3's, Qwen2-MoE's and Qwen3-MoE's configs carry the same keys
		// and rule. No published Qwen config sets it.
		use, err := c.boolOr(false, "use_sliding_window")
		if err != nil {
			return nil, err
		}
		var w int64
		if use {
			if w, err = c.window(4096, "sliding_window"); err != nil {
				return nil, err
			}
		} else {
			c.get("sliding_window") // read and dropped, as Qwen2Config drops it
		}
		if err := c.windowsFrom(hm, w, 28); err != nil {
			return nil, err
		}
	}
	if arch == "MistralForCausalLM" || arch == "MixtralForCausalLM" || arch == "Phi3ForCausalLM" {
		attnBias = false
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	var attn int64
	switch arch {
	case "Qwen2ForCausalLM":
		attn = p.add(p.linear(h, q, true), 2*p.linear(h, kv, true), p.linear(q, h, false))
		d.QKVBias = true
	case "Qwen2MoeForCausalLM":
		qkvBias, err := c.boolOr(true, "qkv_bias")
		if err != nil {
			return nil, err
		}
		attn = p.add(p.linear(h, q, qkvBias), 2*p.linear(h, kv, qkvBias), p.linear(q, h, false))
		d.QKVBias = qkvBias
	case "Phi3ForCausalLM":
		attn = p.add(p.linear(h, p.add(q, 2*kv), false), p.linear(q, h, false))
	default:
		attn = p.add(p.linear(h, q, attnBias), 2*p.linear(h, kv, attnBias), p.linear(q, h, attnBias))
		d.QKVBias, d.OBias = attnBias, attnBias
	}
	d.MLPBias = mlpBias
	norms := 2 * h
	switch arch {
	case "Qwen3ForCausalLM", "Qwen3MoeForCausalLM":
		norms += 2 * d.HeadDim
	case "Gemma2ForCausalLM":
		norms = 4 * h
	case "Olmo2ForCausalLM", "Olmo3ForCausalLM":
		norms = p.add(2*h, q, kv)
	}
	mlp := func(ffn int64) int64 {
		return p.add(2*p.linear(h, ffn, mlpBias), p.linear(ffn, h, mlpBias))
	}

	var blocks []hfBlock
	switch arch {
	case "MixtralForCausalLM":
		if d.Experts, err = c.int(1, maxExperts, "num_local_experts"); err != nil {
			return nil, err
		}
		if d.TopK, err = c.int(1, d.Experts, "num_experts_per_tok"); err != nil {
			return nil, err
		}
		d.ExpertFFN = d.FFN
		d.FFN = 0
		// MixtralSparseMoeBlock.forward renormalises the top-k weights
		// unconditionally (memory.RouterTensors).
		d.Router, d.RouterNorm = RouterSoftmaxTopK, true
		one := mlp(d.ExpertFFN)
		for range hm.Layers {
			blocks = append(blocks, hfBlock{dense: p.add(attn, norms, p.linear(h, d.Experts, false)),
				experts: p.mul(d.Experts, one), activeExperts: p.mul(d.TopK, one), dims: *d})
		}
	case "Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM":
		defExperts, defTopK, defFFN := int64(128), int64(8), int64(768)
		var shared int64 // Qwen2-MoE's shared expert and its gate
		if arch == "Qwen2MoeForCausalLM" {
			defExperts, defTopK, defFFN = 60, 4, 1408
			sharedFFN, err := c.intOr(5632, 0, maxFFN, "shared_expert_intermediate_size")
			if err != nil {
				return nil, err
			}
			if sharedFFN > 0 {
				shared = p.add(mlp(sharedFFN), h)
				d.SharedExperts, d.SharedFFN, d.SharedGate = 1, sharedFFN, true
			}
		}
		// Qwen2MoeSparseMoeBlock and Qwen3MoeSparseMoeBlock
		// (modeling_qwen3_moe.py @ 16b6c53c8ec3a720bd45c1c377bf94e1d01249c5)
		// route as Mixtral does and divide by the sum only when
		// norm_topk_prob is set (Qwen2MoeConfig default False,
		// configuration_qwen2_moe.py @ 765e4fbc; Qwen3MoeConfig default
		// False, configuration_qwen3_moe.py @ 26f4b0f6).
		d.Router = RouterSoftmaxTopK
		if d.RouterNorm, err = c.boolOr(false, "norm_topk_prob"); err != nil {
			return nil, err
		}
		if d.Experts, err = c.intOr(defExperts, 0, maxExperts, "num_experts"); err != nil {
			return nil, err
		}
		if d.TopK, err = c.intOr(min(defTopK, d.Experts), 0, max(d.Experts, 0), "num_experts_per_tok"); err != nil {
			return nil, err
		}
		if d.ExpertFFN, err = c.intOr(defFFN, 1, maxFFN, "moe_intermediate_size"); err != nil {
			return nil, err
		}
		sparse, err := c.qwenSparse(hm.Layers, d.Experts)
		if err != nil {
			return nil, err
		}
		one := mlp(d.ExpertFFN)
		for i := range hm.Layers {
			bd := *d
			if sparse(i) {
				bd.FFN = 0
				blocks = append(blocks, hfBlock{dense: p.add(attn, norms, p.linear(h, d.Experts, false), shared),
					experts: p.mul(d.Experts, one), activeExperts: p.mul(d.TopK, one), dims: bd})
				continue
			}
			if d.FFN == 0 {
				return nil, c.errorf("intermediate_size=0 but layer %d is dense (set intermediate_size)", i)
			}
			bd.Experts, bd.TopK, bd.ExpertFFN, bd.SharedExperts, bd.SharedFFN, bd.SharedGate = 0, 0, 0, 0, 0, false
			bd.Router, bd.RouterNorm = "", false
			blocks = append(blocks, hfBlock{dense: p.add(attn, norms, mlp(d.FFN)), dims: bd})
		}
		d.FFN = 0
	default:
		for range hm.Layers {
			blocks = append(blocks, hfBlock{dense: p.add(attn, norms, mlp(d.FFN)), dims: *d})
		}
	}
	embed := p.mul(hm.Vocab, h)
	head := hm.untied(embed)
	hm.assemble(&p, embed, blocks, h, head)
	return hm, nil
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// hfGPTNeoX imports GPT-NeoX / Pythia (models/gpt_neox/modeling_gpt_neox.py
// @ 203bf6f1c524062b3c109da5ff67e61f483407e7, where both attention Linears
// have biases; later versions gate them on attention_bias, default true):
// LayerNorm (weight + bias) before attention and MLP,
// query_key_value Linear(h, 3h, bias=attention_bias) and dense Linear(h, h,
// bias=attention_bias) with attention_bias default true, MLP
// dense_h_to_4h/dense_4h_to_h with biases, final_layer_norm, embed_out
// untied (tie_word_embeddings default false). Rotary embeddings
// (rotary_pct) and use_parallel_residual add no parameters.
func hfGPTNeoX(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if d.FFN, err = c.intOr(24576, 1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if err := c.mha(d, "num_attention_heads", "hidden_size"); err != nil {
		return nil, err
	}
	bias, err := c.boolOr(true, "attention_bias")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(false, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	var p pc
	block := p.add(2*h, p.linear(h, 3*h, bias), p.linear(h, h, bias), 2*h, p.linear(h, d.FFN, true), p.linear(d.FFN, h, true))
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, true
	blocks := uniform(hm.Layers, block, *d)
	embed := p.mul(hm.Vocab, h)
	head := hm.untied(embed)
	hm.assemble(&p, embed, blocks, 2*h, head)
	return hm, nil
}

// hfGPT2 imports GPT-2 (models/gpt2/modeling_gpt2.py
// @ c44b2d9976e8eafbdcb89cb2710141b2bc9b138f and configuration_gpt2.py): config
// keys n_embd, n_layer, n_head, n_positions, n_inner (attribute_map aliases
// hidden_size, num_hidden_layers, num_attention_heads,
// max_position_embeddings); wte (vocab·h) and wpe (n_positions·h); per
// block ln_1, c_attn Conv1D(3h) and c_proj Conv1D(h) with biases, ln_2, mlp
// c_fc Conv1D(n_inner, default 4h) and c_proj with biases; ln_f; lm_head
// tied to wte (GPT2LMHeadModel._tied_weights_keys; tie_word_embeddings
// default true). The causal-mask "bias" buffers are not parameters.
func hfGPT2(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"n_embd", "hidden_size"}, []string{"n_layer", "num_hidden_layers"}, []string{"n_head", "num_attention_heads"}, []string{"n_positions", "max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if hm.MaxPositions == 0 {
		hm.MaxPositions = 1024 // GPT2Config default n_positions
	}
	if d.FFN, err = c.intOr(4*h, 1, maxFFN, "n_inner"); err != nil {
		return nil, err
	}
	if err := c.mha(d, "n_head", "n_embd"); err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(true, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	var p pc
	block := p.add(2*h, p.linear(h, 3*h, true), p.linear(h, h, true), 2*h, p.linear(h, d.FFN, true), p.linear(d.FFN, h, true))
	d.QKVBias, d.OBias, d.MLPBias = true, true, true
	blocks := uniform(hm.Layers, block, *d)
	embed := p.add(p.mul(hm.Vocab, h), p.mul(hm.MaxPositions, h))
	head := hm.untied(p.mul(hm.Vocab, h))
	hm.assemble(&p, embed, blocks, 2*h, head)
	return hm, nil
}

// hfOPT imports OPT (models/opt/modeling_opt.py
// @ ab910744d640b0ed37e2056eb94de31fd4a6979c and configuration_opt.py): embed_tokens
// (vocab·word_embed_proj_dim, default hidden_size), learned positions of
// max_position_embeddings+2 rows (OPTLearnedPositionalEmbedding's offset
// 2), project_in and project_out Linear without bias when
// word_embed_proj_dim ≠ hidden_size, final_layer_norm only when
// do_layer_norm_before (default true) and not _remove_final_layer_norm;
// per layer q, k, v, out_proj and fc1, fc2 with biases = enable_bias
// (default true), two LayerNorms with weight and bias
// (layer_norm_elementwise_affine, default true); lm_head tied
// (tie_word_embeddings default true).
func hfOPT(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if hm.MaxPositions == 0 {
		hm.MaxPositions = 2048
	}
	if d.FFN, err = c.int(1, maxFFN, "ffn_dim"); err != nil {
		return nil, err
	}
	if err := c.mha(d, "num_attention_heads", "hidden_size"); err != nil {
		return nil, err
	}
	proj, err := c.intOr(h, 1, maxHidden, "word_embed_proj_dim")
	if err != nil {
		return nil, err
	}
	before, err := c.boolOr(true, "do_layer_norm_before")
	if err != nil {
		return nil, err
	}
	removeFinal, err := c.boolOr(false, "_remove_final_layer_norm")
	if err != nil {
		return nil, err
	}
	bias, err := c.boolOr(true, "enable_bias")
	if err != nil {
		return nil, err
	}
	affine, err := c.boolOr(true, "layer_norm_elementwise_affine")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(true, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	var p pc
	ln := int64(0)
	if affine {
		ln = 2 * h
	}
	block := p.add(4*p.linear(h, h, bias), ln, p.linear(h, d.FFN, bias), p.linear(d.FFN, h, bias), ln)
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, bias
	blocks := uniform(hm.Layers, block, *d)
	embed := p.add(p.mul(hm.Vocab, proj), p.mul(hm.MaxPositions+2, h))
	final := int64(0)
	if proj != h {
		embed = p.add(embed, p.linear(proj, h, false))
		final = p.linear(h, proj, false)
	}
	if before && !removeFinal {
		final = p.add(final, ln)
	}
	head := hm.untied(p.mul(hm.Vocab, proj))
	hm.assemble(&p, embed, blocks, final, head)
	if final == 0 {
		// No final unit: keep the list free of empty units.
		hm.LayerList = dropEmpty(hm.LayerList)
	}
	return hm, nil
}

func dropEmpty(ls []Layer) []Layer {
	out := ls[:0]
	for _, l := range ls {
		if l.Params > 0 {
			out = append(out, l)
		}
	}
	return out
}

// hfFalcon imports Falcon (models/falcon/modeling_falcon.py
// @ 44272086ad6636711ce99155bf7d03f0cf95e8f4 and configuration_falcon.py
// @ 5fd8edad2a672d6a10d6352b62b823d56c3032bf):
// attribute_map n_layer → num_hidden_layers, n_head → num_attention_heads;
// head_dim = hidden/heads; query_key_value Linear(h, out, bias=bias) with
// out = (2·num_kv_heads + heads)·head_dim under new_decoder_architecture,
// h + 2·head_dim under multi_query (default true), else 3h; dense
// Linear(h, h, bias); MLP Linear(h, ffn_hidden_size (default 4h), bias) and
// back; LayerNorms (weight + bias): two (ln_attn, ln_mlp) when parallel_attn
// and num_ln_in_parallel_attn == 2 (default 2 under
// new_decoder_architecture), one (input_layernorm) when parallel_attn
// otherwise, two (input_, post_attention_layernorm) without parallel_attn;
// ln_f; lm_head tied (tie_word_embeddings default true). Defaults: bias
// false, parallel_attn true, new_decoder_architecture false, num_kv_heads =
// heads. ALiBi and rotary add no parameters.
func hfFalcon(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers", "n_layer"}, []string{"num_attention_heads", "n_head"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if err := c.mha(d, "num_attention_heads", "hidden_size"); err != nil {
		return nil, err
	}
	var newArch, multiQuery, parallel, bias bool
	bools := []struct {
		dst *bool
		def bool
		key string
	}{{&newArch, false, "new_decoder_architecture"}, {&multiQuery, true, "multi_query"}, {&parallel, true, "parallel_attn"},
		{&bias, false, "bias"}, {&hm.Tied, true, "tie_word_embeddings"}}
	for _, b := range bools {
		if *b.dst, err = c.boolOr(b.def, b.key); err != nil {
			return nil, err
		}
	}
	if d.KVHeads, err = c.intOr(d.Heads, 1, d.Heads, "num_kv_heads"); err != nil {
		return nil, err
	}
	if d.FFN, err = c.intOr(4*h, 1, maxFFN, "ffn_hidden_size"); err != nil {
		return nil, err
	}
	defLN := int64(1)
	if newArch {
		defLN = 2
	}
	nLN, err := c.intOr(defLN, 1, 2, "num_ln_in_parallel_attn")
	if err != nil {
		return nil, err
	}
	var p pc
	var qkv int64
	switch {
	case newArch:
		qkv = p.mul(2*d.KVHeads+d.Heads, d.HeadDim)
	case multiQuery:
		d.KVHeads = 1
		qkv = h + 2*d.HeadDim
	default:
		d.KVHeads = d.Heads
		qkv = 3 * h
	}
	lns := int64(2)
	if parallel && nLN != 2 {
		lns = 1
	}
	block := p.add(p.linear(h, qkv, bias), p.linear(h, h, bias), p.linear(h, d.FFN, bias), p.linear(d.FFN, h, bias), p.mul(lns, 2*h))
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, bias
	blocks := uniform(hm.Layers, block, *d)
	embed := p.mul(hm.Vocab, h)
	head := hm.untied(embed)
	hm.assemble(&p, embed, blocks, 2*h, head)
	return hm, nil
}
