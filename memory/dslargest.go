package memory

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// LargestModule is DeepSpeed's largest_layer_params for a model: what
// model_to_params returns (deepspeed/runtime/zero/stage3.py at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641, lines 3783-3793):
//
//	for m in model.modules():
//	    layer_params = sum(p.numel() for p in m.parameters(recurse=False))
//	    largest_layer_params = max(largest_layer_params, layer_params)
//
// parameters(recurse=False) holds a module's own parameters only, so a
// decoder layer counts 0 and the largest is one leaf module: an embedding,
// an untied lm_head, one Linear (weight and bias), or a module that holds
// its tensors as nn.Parameters itself (gpt-oss's and Llama 4's fused
// experts). It is not a zerosim layer-list unit (a whole transformer
// block). Params is that module's own parameters, Module names it and how
// it was derived. Params is 0, with Unknown saying why, when zerosim cannot
// know the module tree (a bare parameter count, or a layer list without
// dims or tensors): model.largest_layer is then the way to give it.
type LargestModule struct {
	Params  int64
	Module  string
	Unknown string
}

// ModuleCount is one candidate module and its own parameters.
type moduleCount struct {
	name string
	n    int64
}

// DeepSpeedLargestModule derives LargestModule for m:
//
//   - model.largest_layer, when set, is taken as given (the override);
//   - a layer list whose every unit lists its tensors: the tensors grouped
//     by module as PyTorch names parameters (the name up to its last dot);
//   - the gpt and llama archs: the modules of transformers'
//     GPT2LMHeadModel and LlamaForCausalLM built from the model's dims;
//   - an imported Hugging Face model: its token embedding, lm_head, and the
//     largest Linear of a block from the block's dims (weights only: the
//     dims do not record biases), or a routed-experts unit that
//     transformers stores as one module.
func DeepSpeedLargestModule(m *scenarios.Model) LargestModule {
	if m.LargestLayer > 0 {
		return LargestModule{Params: int64(m.LargestLayer), Module: "model.largest_layer"}
	}
	if lm, ok := tensorModules(m.LayerList); ok {
		return lm
	}
	h, v := m.Hidden, m.Vocab
	if m.Kind == scenarios.KindTransformer && h > 0 && v > 0 && m.Heads > 0 {
		switch m.Arch {
		case scenarios.ArchGPT, "":
			return largestOf(gptModules(m), "GPT2LMHeadModel (model_to_params)")
		case scenarios.ArchLlama:
			return largestOf(llamaModules(m), "LlamaForCausalLM (model_to_params)")
		case scenarios.ArchHF:
			if lm, ok := hfModules(m); ok {
				return lm
			}
		}
	}
	return LargestModule{Unknown: "DeepSpeed's ZeRO-3 estimate takes the largest single module's own parameters (model_to_params), which a model given as a parameter count or a layer list without dims or tensors does not say: set model.largest_layer"}
}

func largestOf(cs []moduleCount, tree string) LargestModule {
	var best moduleCount
	for _, c := range cs {
		if c.n > best.n {
			best = c
		}
	}
	return LargestModule{Params: best.n, Module: best.name + ", the largest single module of " + tree}
}

// tensorModules groups the listed tensors by module: a parameter named
// "layers.0.fc1.weight" belongs to module "layers.0.fc1", as
// named_parameters names it, and a tensor named without a dot to its unit.
// ok is false unless every unit lists tensors.
func tensorModules(ls []scenarios.Layer) (LargestModule, bool) {
	if len(ls) == 0 {
		return LargestModule{}, false
	}
	// A module is one unit's: units may name their tensors locally
	// ("weight", "bias"), and no module spans two units.
	type key struct{ unit, mod string }
	sums := map[key]int64{}
	var order []key
	for _, l := range ls {
		if len(l.Tensors) == 0 {
			return LargestModule{}, false
		}
		for _, t := range l.Tensors {
			k := key{l.Name, l.Name}
			if i := strings.LastIndexByte(t.Name, '.'); i >= 0 {
				k.mod = t.Name[:i]
			}
			n := int64(1)
			for _, d := range t.Shape {
				n *= d
			}
			if _, seen := sums[k]; !seen {
				order = append(order, k)
			}
			sums[k] += n
		}
	}
	var best moduleCount
	for _, k := range order {
		if sums[k] > best.n {
			best = moduleCount{k.mod, sums[k]}
		}
	}
	return LargestModule{Params: best.n, Module: best.name + ", the largest module of the listed tensors"}, true
}

// gptModules are GPT2LMHeadModel's leaf modules (transformers
// src/transformers/models/gpt2/modeling_gpt2.py at
// c44b2d9976e8eafbdcb89cb2710141b2bc9b138f): wte Embedding(V, h), wpe
// Embedding(positions, h), per block ln_1 and ln_2 LayerNorm(h) (weight and
// bias), attn.c_attn Conv1D(h, 3h) — q, k and v in one module, with bias —,
// attn.c_proj Conv1D(h, h), mlp.c_fc Conv1D(h, ffn), mlp.c_proj Conv1D(ffn,
// h), all with biases; lm_head shares wte's weight. With grouped-query kv
// heads c_attn is h·(h + 2·kv) (Megatron's fused linear_qkv likewise).
func gptModules(m *scenarios.Model) []moduleCount {
	h, ffn := m.Hidden, m.FFN
	kv := h / m.Heads * m.KVHeads
	qkv := h + 2*kv
	return []moduleCount{
		{fmt.Sprintf("wte Embedding(%d, %d)", m.Vocab, h), m.Vocab * h},
		{fmt.Sprintf("wpe Embedding(%d, %d)", m.SeqLen, h), m.SeqLen * h},
		{fmt.Sprintf("attn.c_attn (%d×%d + bias)", h, qkv), h*qkv + qkv},
		{fmt.Sprintf("attn.c_proj (%d×%d + bias)", h, h), h*h + h},
		{fmt.Sprintf("mlp.c_fc (%d×%d + bias)", h, ffn), h*ffn + ffn},
		{fmt.Sprintf("mlp.c_proj (%d×%d + bias)", ffn, h), ffn*h + h},
	}
}

// llamaModules are LlamaForCausalLM's leaf modules (transformers
// src/transformers/models/llama/modeling_llama.py at 002272831fba):
// embed_tokens Embedding(V, h); per layer the Linear modules of
// llamaBlockParams, no biases; an untied lm_head Linear(h, V).
func llamaModules(m *scenarios.Model) []moduleCount {
	h := m.Hidden
	cs := []moduleCount{{fmt.Sprintf("embed_tokens Embedding(%d, %d)", m.Vocab, h), m.Vocab * h}}
	for _, p := range llamaBlockParams(m) {
		if p.in > 0 {
			cs = append(cs, moduleCount{fmt.Sprintf("%s Linear(%d, %d)", p.module, p.in, p.dim0), p.numel})
		}
	}
	return append(cs, moduleCount{fmt.Sprintf("lm_head Linear(%d, %d)", h, m.Vocab), m.Vocab * h})
}

// llamaParam is one parameter of a Llama block: the module holding it, its
// numel and dim-0 size, and for a Linear weight (out × in, out = dim0) its
// input features (0: a norm's weight).
type llamaParam struct {
	module          string
	numel, dim0, in int64
}

// llamaBlockParams are a Llama block's parameters in module order
// (torchtitan's TransformerBlock: attention.wq, wk, wv, wo,
// feed_forward.w1, w2, w3, attention_norm, ffn_norm; transformers'
// LlamaDecoderLayer names them q_proj, k_proj, v_proj, o_proj, gate_proj,
// down_proj, up_proj, input_layernorm, post_attention_layernorm): q and o
// Linear(h, h), k and v Linear(h, kv·head_dim) with head_dim = h/heads
// (all heads without kv_heads), gate and up Linear(h, ffn), down
// Linear(ffn, h), two RMSNorms of h.
func llamaBlockParams(m *scenarios.Model) []llamaParam {
	h, f := m.Hidden, m.FFN
	kv := h
	if m.Heads > 0 && m.KVHeads > 0 {
		kv = h / m.Heads * m.KVHeads
	}
	lin := func(name string, in, out int64) llamaParam { return llamaParam{name, in * out, out, in} }
	return []llamaParam{lin("q_proj", h, h), lin("k_proj", h, kv), lin("v_proj", h, kv), lin("o_proj", h, h),
		lin("gate_proj", h, f), lin("down_proj", f, h), lin("up_proj", h, f),
		{"input_layernorm", h, h, 0}, {"post_attention_layernorm", h, h, 0}}
}

// hfModules is the largest module of an imported Hugging Face model. The
// routed experts of Mixtral, Qwen2-MoE, Qwen3-MoE and DeepSeek are one
// Linear module per expert in the transformers code the importer follows
// (MixtralBlockSparseTop2MLP's w1, w2, w3 Linear(h, ffn) in
// models/mixtral/modeling_mixtral.py at
// 00d4b3d2142cb4ced2f51b90614b5d26bc045015): each counts h·expert_ffn.
// gpt-oss's GptOssExperts (modeling_gpt_oss.py at
// 828a27fd326e49d4a1c4b08210bfd32c107facc9) and Llama 4's
// Llama4TextExperts (modeling_llama4.py at
// 63210d0e3b74c2119b7998ff65bc6a2729283626) hold every expert's
// gate_up_proj and down_proj (and gpt-oss's biases) as their own
// nn.Parameters: the whole experts unit is one module.
func hfModules(m *scenarios.Model) (LargestModule, bool) {
	h, v := m.Hidden, m.Vocab
	cs := []moduleCount{{fmt.Sprintf("token embedding Embedding(%d, %d)", v, h), v * h}}
	fusedExperts := m.Architecture == "GptOssForCausalLM" || strings.HasPrefix(m.Architecture, "Llama4")
	fusedQKV := map[string]bool{"GPT2LMHeadModel": true, "GPTNeoXForCausalLM": true, "FalconForCausalLM": true, "Phi3ForCausalLM": true}[m.Architecture]
	linear := func(name string, in, out int64) {
		if in > 0 && out > 0 {
			cs = append(cs, moduleCount{fmt.Sprintf("%s Linear(%d, %d), weight", name, in, out), in * out})
		}
	}
	sawDims, perExpert := false, false
	for _, l := range m.LayerList {
		if l.Name == "lm_head" {
			cs = append(cs, moduleCount{fmt.Sprintf("lm_head Linear(%d, %d)", h, v), int64(l.Params)})
			continue
		}
		d := l.Dims
		if d == nil {
			continue
		}
		sawDims = true
		if d.ExpertsOnly() {
			if fusedExperts {
				cs = append(cs, moduleCount{fmt.Sprintf("%s (all experts in one module)", l.Name), int64(l.Params)})
			} else {
				perExpert = true
				linear("expert", d.Hidden, d.ExpertFFN)
			}
			continue
		}
		hd := d.HeadDim
		if hd == 0 && d.Heads > 0 {
			hd = d.Hidden / d.Heads
		}
		q, kv := d.Heads*hd, d.KVHeads*hd
		if d.OutputGate {
			q *= 2
		}
		switch {
		case fusedQKV:
			linear("query_key_value", d.Hidden, q+2*kv)
		case d.QLoRARank > 0:
			linear("q_a_proj", d.Hidden, d.QLoRARank)
			linear("q_b_proj", d.QLoRARank, q)
		default:
			linear("q_proj", d.Hidden, q)
			linear("k_proj", d.Hidden, kv)
		}
		if d.KVLoRARank > 0 {
			linear("kv_a_proj_with_mqa", d.Hidden, d.KVLoRARank+d.RopeHeadDim)
			linear("kv_b_proj", d.KVLoRARank, d.Heads*(d.HeadDim-d.RopeHeadDim+d.VHeadDim()))
		}
		linear("o_proj", d.Heads*d.VHeadDim(), d.Hidden)
		if m.Architecture == "Phi3ForCausalLM" {
			linear("gate_up_proj", d.Hidden, 2*d.FFN)
		} else {
			linear("mlp", d.Hidden, d.FFN)
		}
		linear("shared_expert", d.Hidden, d.SharedFFN)
		if d.Experts > 0 && d.ExpertFFN > 0 && !fusedExperts {
			perExpert = true
			linear("expert", d.Hidden, d.ExpertFFN)
		}
	}
	if !sawDims {
		return LargestModule{}, false
	}
	best := largestOf(cs, m.Architecture+", from its dims (model_to_params)")
	if strings.Contains(best.Module, "), weight") {
		best.Module += " (a bias, which the dims do not record, would add out_features)"
	}
	if perExpert {
		best.Module += "; experts counted as one Linear each (a build that keeps a layer's experts in one module: set model.largest_layer)"
	}
	return best, true
}
