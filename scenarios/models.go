package scenarios

import (
	"fmt"

	"github.com/zerosim/zerosim/units"
)

// MaxLayers is the largest model.layers a scenario may have: the one limit
// every caller (the loader, fit's search for the largest model) uses.
const MaxLayers = 1024

// Limits on model dimensions; they keep every derived count far inside int64.
const (
	maxHidden = 1 << 20
	maxLayers = MaxLayers
	maxFFN    = 1 << 24
	maxVocab  = 1 << 24
	maxSeqLen = 1 << 24
)

// sumChecked adds xs, reporting int64 overflow.
func sumChecked(xs ...int64) (int64, bool) {
	var t int64
	for _, x := range xs {
		var err error
		if t, err = units.Add(t, x); err != nil {
			return 0, false
		}
	}
	return t, true
}

func layer(name string, params int64, tensors ...Tensor) Layer {
	return Layer{Name: name, Params: units.Count(params), Tensors: tensors}
}

func tensor(name string, shape ...int64) Tensor { return Tensor{Name: name, Shape: shape} }

// buildLayers derives the layer list of a model with validated dimensions
// (Hidden, Layers, FFN, Heads, KVHeads, Vocab, SeqLen within the limits).
func buildLayers(m *Model) []Layer {
	h, ffn := m.Hidden, m.FFN
	var ls []Layer
	kind := m.Kind
	if kind == KindTransformer && m.Arch == ArchLlama {
		kind = "llama"
	}
	switch kind {
	case KindTransformer:
		// GPT-2/3 blocks: LN, attention (q, k, v, o with biases), LN, MLP
		// (ffn with biases); learned positions; output tied to the
		// token embedding. With kv = h this is 12h²+13h for ffn = 4h.
		kv := h / m.Heads * m.KVHeads
		block := 2*h*h + 2*h + 2*(h*kv+kv) + 2*h*ffn + ffn + h + 4*h
		ls = append(ls, layer("embedding", m.Vocab*h+m.SeqLen*h))
		for i := range m.Layers {
			ls = append(ls, layer(fmt.Sprintf("block.%d", i), block))
		}
		ls = append(ls, layer("final_norm", 2*h))
	case "llama":
		// LLaMA blocks: RMSNorm, attention without biases (GQA k, v of
		// h·(h/heads·kv_heads)), RMSNorm, gated FFN (3·h·ffn); untied head.
		kv := h / m.Heads * m.KVHeads
		block := 2*h*h + 2*h*kv + 3*h*ffn + 2*h
		ls = append(ls, layer("embedding", m.Vocab*h))
		for i := range m.Layers {
			ls = append(ls, layer(fmt.Sprintf("block.%d", i), block))
		}
		ls = append(ls, layer("final_norm", h), layer("lm_head", m.Vocab*h))
	case KindMLP:
		// Seed 000's residual MLP, tensors in named_parameters order.
		for i := range m.Layers {
			p := fmt.Sprintf("layers.%d.", i)
			ls = append(ls, layer(fmt.Sprintf("layers.%d", i), 2*h*ffn+ffn+h,
				tensor(p+"fc1.weight", ffn, h), tensor(p+"fc1.bias", ffn),
				tensor(p+"fc2.weight", h, ffn), tensor(p+"fc2.bias", h)))
		}
	case KindTinyTransformer:
		// Seed 002's one-block transformer, units and tensors in its flat
		// order (the order of the 260-parameter index table).
		ls = []Layer{
			layer("ln1", 2*h, tensor("ln1.gamma", h), tensor("ln1.beta", h)),
			layer("attn", 4*h*h, tensor("attn.w_q", h, h), tensor("attn.w_k", h, h),
				tensor("attn.w_v", h, h), tensor("attn.w_o", h, h)),
			layer("ln2", 2*h, tensor("ln2.gamma", h), tensor("ln2.beta", h)),
			layer("ffn", 2*h*ffn+ffn+h, tensor("ffn.w1", h, ffn), tensor("ffn.b1", ffn),
				tensor("ffn.w2", ffn, h), tensor("ffn.b2", h)),
			layer("out", h*m.Vocab, tensor("out.w_vocab", h, m.Vocab)),
		}
	}
	return ls
}

// genericLayers spreads params over layers equal blocks (the remainder one
// parameter each over the first blocks), after a first unit "embedding" of
// largest parameters when largest > 0. The caller checks
// params-largest ≥ layers ≥ 1.
func genericLayers(params, largest, layers int64) []Layer {
	var ls []Layer
	if largest > 0 {
		ls = append(ls, layer("embedding", largest))
	}
	rest := params - largest
	each, extra := rest/layers, rest%layers
	for i := range layers {
		p := each
		if i < extra {
			p++
		}
		ls = append(ls, layer(fmt.Sprintf("block.%d", i), p))
	}
	return ls
}
