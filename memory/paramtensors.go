package memory

import (
	"github.com/zerosim/zerosim/scenarios"
)

// This file is the one list of a derived unit's parameter tensors: the
// tensors a training stack's module tree registers for the embedding, a
// GPT or Llama block, the final norm and the output head of a model built
// from its dimensions (a preset, or an import that resolves to arch gpt or
// llama), in named_parameters order. The buffer layout (unitParams: the
// tensors Megatron-Core's _ParamAndGradBuffer never splits), the
// allocator replay (simUnitParams: FSDP's per-parameter shards) and
// DeepSpeed's largest module (gptModules, llamaModules) all read it. A unit
// whose tensors zerosim does not know (a layer list without tensors, an
// imported block with dims, routed experts) has none here, and its callers
// treat it as one parameter.

// tensorStyle is how a stack builds a block's parameter tensors.
type tensorStyle int

const (
	// styleSeparate is transformers' module tree (LlamaDecoderLayer's
	// q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj and two
	// RMSNorms; GPT2Block's ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
	// mlp.c_proj with biases), which torchtitan's TransformerBlock (wq, wk,
	// wv, wo, w1, w2, w3) and DeepSpeed on a Hugging Face model share at
	// tensor granularity.
	styleSeparate tensorStyle = iota
	// styleMegatron is Megatron-Core's GPTModel under the Transformer
	// Engine layer spec (get_gpt_layer_with_transformer_engine_spec,
	// megatron/core/models/gpt/gpt_layer_specs.py at NVIDIA/Megatron-LM
	// 001199898c4badd01eaf0785c212d8ed7ce83042): input_layernorm and
	// pre_mlp_layernorm are IdentityOp and the norms live in the fused
	// TELayerNormColumnParallelLinear modules, q, k and v are one
	// linear_qkv, gate and up one linear_fc1. A block registers, in order
	// (Attention.__init__ builds linear_proj before SelfAttention.__init__
	// builds linear_qkv, megatron/core/transformer/attention.py; MLP builds
	// linear_fc1 then linear_fc2, mlp.py): self_attention.linear_proj
	// weight (and bias), self_attention.linear_qkv layer_norm_weight (and
	// layer_norm_bias under LayerNorm), weight (and bias), mlp.linear_fc1
	// likewise, mlp.linear_fc2 weight (and bias). Transformer Engine's
	// LayerNormLinear registers layer_norm_weight, layer_norm_bias, then
	// weight and bias (transformer_engine/pytorch/module/layernorm_linear.py
	// at NVIDIA/TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b).
	// The model holds embedding.word_embeddings (and
	// embedding.position_embeddings, learned positions), the blocks,
	// decoder.final_layernorm and an untied output_layer
	// (megatron/core/models/gpt/gpt_model.py,
	// common/embeddings/language_model_embedding.py).
	styleMegatron
)

// tensorStyleOf is the module tree whose tensors a buffer with padding pad
// lays out: Megatron-Core's under its padding rules (the only rules under
// which a tensor boundary places a bucket boundary), transformers'
// otherwise (PadToy cuts buckets at exact element counts, so there the
// names are all the tensors change).
func tensorStyleOf(pad Padding) tensorStyle {
	if pad == PadMegatron {
		return styleMegatron
	}
	return styleSeparate
}

// paramTensor is one parameter tensor: the module holding it (its path
// within the unit), its name in the module, its numel and dim-0 size, and
// for a Linear weight (out × in, out = dim0) its input features (0: a
// norm's weight, a bias, an embedding, or GPT-2's Conv1D, whose weight is
// in × out).
type paramTensor struct {
	module, name string
	numel, dim0  int64
	in           int64
}

// fqn is the tensor's name within its unit, as named_parameters spells it.
func (p paramTensor) fqn() string { return p.module + "." + p.name }

// linearWeight is a Linear(in, out) weight of module.
func linearWeight(module, name string, in, out int64) paramTensor {
	return paramTensor{module: module, name: name, numel: in * out, dim0: out, in: in}
}

// vector is a one-dimensional parameter of n elements.
func vector(module, name string, n int64) paramTensor {
	return paramTensor{module: module, name: name, numel: n, dim0: n}
}

// kvWidth is the key/value projection's output width: kv_heads·h/heads
// (h without kv_heads).
func kvWidth(m *scenarios.Model) int64 {
	if m.Heads > 0 && m.KVHeads > 0 {
		return m.Hidden / m.Heads * m.KVHeads
	}
	return m.Hidden
}

// llamaBlockTensors are a Llama block's parameters in module order. Under
// styleSeparate (torchtitan's TransformerBlock: attention.wq, wk, wv, wo,
// feed_forward.w1, w2, w3, attention_norm, ffn_norm; transformers'
// LlamaDecoderLayer names them q_proj, k_proj, v_proj, o_proj, gate_proj,
// down_proj, up_proj, input_layernorm, post_attention_layernorm): q and o
// Linear(h, h), k and v Linear(h, kv) with kv = kv_heads·h/heads (h
// without kv_heads), gate and up Linear(h, ffn), down Linear(ffn, h), two
// RMSNorms of h. Under styleMegatron (RMSNorm, no biases, SwiGLU):
// linear_proj Linear(h, h), linear_qkv's norm of h and Linear(h, h+2kv),
// linear_fc1's norm of h and Linear(h, 2·ffn), linear_fc2 Linear(ffn, h).
func llamaBlockTensors(m *scenarios.Model, style tensorStyle) []paramTensor {
	h, f, kv := m.Hidden, m.FFN, kvWidth(m)
	if style == styleMegatron {
		return []paramTensor{
			linearWeight("self_attention.linear_proj", "weight", h, h),
			vector("self_attention.linear_qkv", "layer_norm_weight", h),
			linearWeight("self_attention.linear_qkv", "weight", h, h+2*kv),
			vector("mlp.linear_fc1", "layer_norm_weight", h),
			linearWeight("mlp.linear_fc1", "weight", h, 2*f),
			linearWeight("mlp.linear_fc2", "weight", f, h),
		}
	}
	lin := func(module string, in, out int64) paramTensor { return linearWeight(module, "weight", in, out) }
	return []paramTensor{lin("q_proj", h, h), lin("k_proj", h, kv), lin("v_proj", h, kv), lin("o_proj", h, h),
		lin("gate_proj", h, f), lin("down_proj", f, h), lin("up_proj", h, f),
		vector("input_layernorm", "weight", h), vector("post_attention_layernorm", "weight", h)}
}

// gptBlockTensors are a GPT block's parameters in module order (LayerNorms
// and every Linear with a bias; scenarios' buildLayers counts the same
// 2h² + 2h·kv + 2h·ffn + ffn + 2kv + 7h). Under styleSeparate, transformers'
// GPT2Block (src/transformers/models/gpt2/modeling_gpt2.py at
// c44b2d9976e8eafbdcb89cb2710141b2bc9b138f): ln_1, attn.c_attn Conv1D(h,
// h+2kv) — q, k and v in one module —, attn.c_proj Conv1D(h, h), ln_2,
// mlp.c_fc Conv1D(h, ffn), mlp.c_proj Conv1D(ffn, h); a Conv1D weight is in
// × out. Under styleMegatron, Megatron-Core's LayerNorm block
// (styleMegatron): linear_proj, linear_qkv (norm weight and bias, weight,
// bias), linear_fc1 (likewise, ffn wide: GELU), linear_fc2.
func gptBlockTensors(m *scenarios.Model, style tensorStyle) []paramTensor {
	h, f := m.Hidden, m.FFN
	qkv := h + 2*kvWidth(m)
	if style == styleMegatron {
		return []paramTensor{
			linearWeight("self_attention.linear_proj", "weight", h, h), vector("self_attention.linear_proj", "bias", h),
			vector("self_attention.linear_qkv", "layer_norm_weight", h), vector("self_attention.linear_qkv", "layer_norm_bias", h),
			linearWeight("self_attention.linear_qkv", "weight", h, qkv), vector("self_attention.linear_qkv", "bias", qkv),
			vector("mlp.linear_fc1", "layer_norm_weight", h), vector("mlp.linear_fc1", "layer_norm_bias", h),
			linearWeight("mlp.linear_fc1", "weight", h, f), vector("mlp.linear_fc1", "bias", f),
			linearWeight("mlp.linear_fc2", "weight", f, h), vector("mlp.linear_fc2", "bias", h),
		}
	}
	conv := func(module string, in, out int64) []paramTensor {
		return []paramTensor{{module: module, name: "weight", numel: in * out, dim0: in}, vector(module, "bias", out)}
	}
	norm := func(module string) []paramTensor {
		return []paramTensor{vector(module, "weight", h), vector(module, "bias", h)}
	}
	var ts []paramTensor
	for _, part := range [][]paramTensor{norm("ln_1"), conv("attn.c_attn", h, qkv), conv("attn.c_proj", h, h),
		norm("ln_2"), conv("mlp.c_fc", h, f), conv("mlp.c_proj", f, h)} {
		ts = append(ts, part...)
	}
	return ts
}

// derivedArch is the block family of a model built from its dimensions
// whose tensors this file knows: "llama" for arch llama, "gpt" for arch gpt
// (or unset), "" otherwise (an imported Hugging Face model, a layer list,
// a toy kind).
func derivedArch(m *scenarios.Model) string {
	if m.Kind != scenarios.KindTransformer || m.Hidden <= 0 || m.Vocab <= 0 {
		return ""
	}
	switch m.Arch {
	case scenarios.ArchLlama:
		return "llama"
	case scenarios.ArchGPT, "":
		return "gpt"
	}
	return ""
}

// unitTensors lists unit u's parameter tensors under style, in
// named_parameters order, or nil when zerosim does not know them (see the
// file comment) or they do not add up to the unit's parameters (a model
// whose units an import sized otherwise).
func unitTensors(m *scenarios.Model, u int, style tensorStyle) []paramTensor {
	l := m.LayerList[u]
	if len(l.Tensors) > 0 || l.Dims != nil {
		return nil
	}
	arch := derivedArch(m)
	h, v := m.Hidden, m.Vocab
	var ts []paramTensor
	switch {
	case arch == "":
		return nil
	case l.Block && arch == "llama":
		ts = llamaBlockTensors(m, style)
	case l.Block:
		ts = gptBlockTensors(m, style)
	case l.Name == "embedding" && style == styleMegatron:
		ts = []paramTensor{{module: "word_embeddings", name: "weight", numel: v * h, dim0: v}}
		if arch == "gpt" {
			ts = append(ts, paramTensor{module: "position_embeddings", name: "weight", numel: m.SeqLen * h, dim0: m.SeqLen})
		}
	case l.Name == "embedding" && arch == "gpt":
		ts = []paramTensor{{module: "wte", name: "weight", numel: v * h, dim0: v}, {module: "wpe", name: "weight", numel: m.SeqLen * h, dim0: m.SeqLen}}
	case l.Name == "embedding":
		ts = []paramTensor{{module: "embed_tokens", name: "weight", numel: v * h, dim0: v}}
	case l.Name == "final_norm":
		mod := "norm"
		switch {
		case style == styleMegatron:
			mod = "final_layernorm"
		case arch == "gpt":
			mod = "ln_f"
		}
		ts = []paramTensor{vector(mod, "weight", h)}
		if arch == "gpt" {
			ts = append(ts, vector(mod, "bias", h))
		}
	case l.Name == "lm_head":
		mod := "lm_head"
		if style == styleMegatron {
			mod = "output_layer"
		}
		ts = []paramTensor{linearWeight(mod, "weight", h, v)}
	}
	var sum int64
	for _, t := range ts {
		sum += t.numel
	}
	if len(ts) == 0 || sum != int64(l.Params) {
		return nil
	}
	return ts
}
