package memory

import (
	"fmt"
	"strconv"

	"github.com/zerosim/zerosim/scenarios"
)

// This file lists a unit's parameter tensors for the buffer layout
// (unitParams) in the module tree of the stack whose buffer the padding
// rule follows: transformers' (scenarios.Model.UnitShapes, the one list of
// the tensors a Hugging Face or torchtitan model registers, which the qgZ
// replay reads too) or Megatron-Core's (megatronTensors, below: q, k, v
// and gate, up fused). A unit whose tensors neither knows (a layer list
// without tensors or dims, an attention Megatron does not build here, a
// unit whose dims do not add up to its parameters) has none, and the
// layout takes it as one parameter.

// tensorStyle is the module tree whose tensors a buffer lays out.
type tensorStyle int

const (
	// styleSeparate is transformers' module tree (scenarios.UnitShapes:
	// LlamaDecoderLayer's q_proj, k_proj, v_proj, o_proj, gate_proj,
	// up_proj, down_proj and two norms; GPT-2's c_attn; one module per
	// routed expert), which torchtitan's TransformerBlock and DeepSpeed on
	// a Hugging Face model share at tensor granularity.
	styleSeparate tensorStyle = iota
	// styleMegatron is Megatron-Core's GPTModel under the Transformer
	// Engine layer spec (get_gpt_layer_with_transformer_engine_spec,
	// megatron/core/models/gpt/gpt_layer_specs.py at NVIDIA/Megatron-LM
	// 001199898c4badd01eaf0785c212d8ed7ce83042): input_layernorm and a
	// dense block's pre_mlp_layernorm are IdentityOp and the norms live in
	// the fused TELayerNormColumnParallelLinear modules; q, k and v are one
	// linear_qkv, gate and up one linear_fc1. A block registers, in order
	// (Attention.__init__ builds linear_proj before SelfAttention.__init__
	// builds linear_qkv and its q_layernorm, k_layernorm,
	// megatron/core/transformer/attention.py; MLP builds linear_fc1 then
	// linear_fc2, mlp.py): self_attention.linear_proj weight (and bias),
	// self_attention.linear_qkv layer_norm_weight (and layer_norm_bias
	// under LayerNorm), weight (and bias), mlp.linear_fc1 likewise,
	// mlp.linear_fc2 weight (and bias). Transformer Engine's LayerNormLinear
	// registers layer_norm_weight, layer_norm_bias, then weight and bias
	// (transformer_engine/pytorch/module/layernorm_linear.py at
	// NVIDIA/TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b).
	// A MoE block has a TENorm pre_mlp_layernorm, then MoELayer's
	// router.weight (experts × h) and shared_experts (moe_layer.py,
	// router.py); its routed experts, in their own buffer, are
	// SequentialMLP's local_experts.{e}.linear_fc1 and linear_fc2 (the
	// default without --moe-grouped-gemm, moe/experts.py). The model holds
	// embedding.word_embeddings (and embedding.position_embeddings, learned
	// positions), the blocks, decoder.final_layernorm and an untied
	// output_layer (models/gpt/gpt_model.py,
	// common/embeddings/language_model_embedding.py).
	styleMegatron
)

// tensorStyleOf is the module tree whose tensors a buffer with padding pad
// lays out: Megatron-Core's under its padding rules (the only rules under
// which a tensor boundary places a bucket boundary), transformers'
// otherwise (PadToy cuts buckets at exact element counts, so there the
// tensors change no bucket).
func tensorStyleOf(pad Padding) tensorStyle {
	if pad == PadMegatron {
		return styleMegatron
	}
	return styleSeparate
}

// paramTensor is one parameter tensor of a unit: its name within the unit
// (or, without one, its index) and its numel; expert is 1 + the index of the routed expert whose own
// module holds it (0: none).
type paramTensor struct {
	name   string
	index  int
	numel  int64
	expert int64
}

// tensorName is t's name within its unit: its own, or its index in the
// unit's tensors.
func (t paramTensor) tensorName() string {
	if t.name != "" {
		return t.name
	}
	return strconv.Itoa(t.index)
}

// unitTensors lists unit u's parameter tensors under style, in
// named_parameters order, or nil when they are not known or do not add up
// to the unit's parameters.
func unitTensors(m *scenarios.Model, u int, style tensorStyle) []paramTensor {
	l := m.LayerList[u]
	var ts []paramTensor
	if style == styleMegatron {
		ts = megatronTensors(m, l)
	} else {
		ts = separateTensors(m, l)
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

// separateTensors are scenarios.UnitShapes' tensors, named by their index;
// a routed-experts unit's two-dimensional tensors, one nn.Linear set per
// expert, carry their expert.
func separateTensors(m *scenarios.Model, l scenarios.Layer) []paramTensor {
	shapes := m.UnitShapes(l)
	perExpert := 0
	if d := l.Dims; d != nil && d.ExpertsOnly() && d.Experts > 0 && len(shapes)%int(d.Experts) == 0 {
		perExpert = len(shapes) / int(d.Experts)
		for _, sh := range shapes {
			if len(sh) > 2 {
				perExpert = 0 // 3-D: every expert in one tensor
			}
		}
	}
	ts := make([]paramTensor, len(shapes))
	for i, sh := range shapes {
		n := int64(1)
		for _, d := range sh {
			n *= d // UnitShapes checked the total
		}
		// Named by index when a Param is made of it (tensorName): most
		// routed experts' tensors are another rank's under ep.
		ts[i] = paramTensor{index: i, numel: n}
		if perExpert > 0 {
			ts[i].expert = int64(i/perExpert) + 1
		}
	}
	return ts
}

// megatronTensors are unit l's tensors in Megatron-Core's module tree
// (styleMegatron), or nil for a unit it does not describe: the gpt and
// llama presets' units and imported blocks and routed experts with dims
// whose attention is plain multi-head or grouped-query (no latent or
// linear attention, no gated query).
func megatronTensors(m *scenarios.Model, l scenarios.Layer) []paramTensor {
	if m.Kind != scenarios.KindTransformer || m.Hidden <= 0 || len(l.Tensors) > 0 {
		return nil
	}
	h, v := m.Hidden, m.Vocab
	gpt := m.Arch == scenarios.ArchGPT || m.Arch == ""
	var ts []paramTensor
	add := func(name string, numel int64) { ts = append(ts, paramTensor{name: name, numel: numel}) }
	lin := func(module string, in, out int64, bias bool) {
		add(module+".weight", in*out)
		if bias {
			add(module+".bias", out)
		}
	}
	switch {
	case l.Name == "embedding":
		add("word_embeddings.weight", v*h)
		if pos := int64(l.Params) - v*h; gpt && pos > 0 {
			add("position_embeddings.weight", pos) // learned positions
		}
		return ts
	case l.Name == "final_norm":
		add("final_layernorm.weight", h)
		if gpt {
			add("final_layernorm.bias", h)
		}
		return ts
	case l.Name == "lm_head":
		add("output_layer.weight", v*h)
		return ts
	}
	d := l.Dims
	layerNorm := false
	if d == nil {
		if !l.Block || m.Heads <= 0 || (m.Arch != scenarios.ArchGPT && m.Arch != scenarios.ArchLlama) {
			return nil
		}
		// The presets' blocks (scenarios' buildLayers): GPT's LayerNorms,
		// biases and GELU MLP; Llama's RMSNorms and SwiGLU, no biases.
		d = &scenarios.BlockDims{Hidden: h, Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: h / m.Heads, FFN: m.FFN}
		if m.Arch == scenarios.ArchGPT {
			d.QKVBias, d.OBias, d.MLPBias, layerNorm = true, true, true, true
		}
	}
	fc1 := func(ffn int64) int64 { // SwiGLU's gate and up, or GELU's one
		if layerNorm {
			return ffn
		}
		return 2 * ffn
	}
	mlp := func(prefix string, ffn int64, bias bool, expert int64) {
		n := len(ts)
		lin(prefix+"linear_fc1", h, fc1(ffn), bias)
		lin(prefix+"linear_fc2", ffn, h, bias)
		for i := n; i < len(ts); i++ {
			ts[i].expert = expert
		}
	}
	norm := func(module string) {
		add(module+"layer_norm_weight", h)
		if layerNorm {
			add(module+"layer_norm_bias", h)
		}
	}
	if d.ExpertsOnly() {
		if d.Experts <= 0 || d.ExpertFFN <= 0 {
			return nil
		}
		for e := range d.Experts {
			mlp(fmt.Sprintf("local_experts.%d.", e), d.ExpertFFN, d.MLPBias, e+1)
		}
		return ts
	}
	if d.Heads <= 0 || d.HeadDim <= 0 || d.LinearAttention != "" || d.KVLoRARank > 0 || d.OutputGate {
		return nil
	}
	q, kv := d.Heads*d.HeadDim, d.KVHeads*d.HeadDim
	lin("self_attention.linear_proj", d.Heads*d.VHeadDim(), h, d.OBias)
	norm("self_attention.linear_qkv.")
	lin("self_attention.linear_qkv", h, q+2*kv, d.QKVBias)
	if d.QKNorm == scenarios.QKNormRMSHead {
		// --qk-layernorm: TENorm over head_dim (attention.py).
		add("self_attention.q_layernorm.weight", d.HeadDim)
		add("self_attention.k_layernorm.weight", d.HeadDim)
	}
	switch {
	case d.FFN > 0:
		norm("mlp.linear_fc1.")
		mlp("mlp.", d.FFN, d.MLPBias, 0)
	case d.Experts > 0:
		add("pre_mlp_layernorm.weight", h)
		add("mlp.router.weight", d.Experts*h)
		if d.SharedFFN > 0 {
			mlp("mlp.shared_experts.", d.SharedFFN, false, 0)
		}
		if d.SharedGate {
			add("mlp.shared_experts.gate_weight", h)
		}
	}
	return ts
}
