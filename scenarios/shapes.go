package scenarios

import (
	"math"
	"slices"
	"strings"
)

// BlockCount is the model's transformer blocks: its layer list's entries
// with Block set.
func (m *Model) BlockCount() int {
	n := 0
	for _, l := range m.LayerList {
		if l.Block {
			n++
		}
	}
	return n
}

// UnitShapes lists unit l's parameter tensors, each by its dimensions, as
// the module tree the scenario resolved holds them (what a data-parallel
// engine sees as p.grad): the layer's own Tensors when it lists them; else
// the tensors its transformer dimensions imply (Layer.Dims, or the model's
// hidden, heads, kv_heads and ffn for the gpt and llama presets' blocks;
// Vocab and Hidden for the embedding, final norm and output head). It
// returns nil when it cannot list them, and when the listed tensors do not
// hold exactly l.Params elements (a layout the importers do not build,
// such as a hand-written layer list whose dims leave out a bias): a
// caller then has no shapes, not wrong ones.
//
// The layouts are the importers' (hf.go and the files it names cite the
// transformers modeling file and commit of each class; models.go
// buildLayers for the presets):
//
//   - attention: q_proj (heads·head_dim, twice that under OutputGate),
//     k_proj and v_proj (kv_heads·head_dim) and o_proj, each weight
//     (out, in) as nn.Linear holds it, with a bias vector when QKVBias /
//     OBias; Phi-3's fused qkv_proj, GPT-2's c_attn Conv1D (in, out),
//     GPT-NeoX's and Falcon's query_key_value; per-head q_norm and k_norm
//     (QKNormRMSHead, QKNormGemma: head_dim each) or whole-projection ones
//     (QKNormRMSFull); gpt-oss's sinks (one per head).
//   - multi-head latent attention (KVLoRARank > 0): q_a_proj
//     (q_lora_rank, h), q_a_layernorm and q_b_proj, or q_proj without
//     q_lora_rank; kv_a_proj_with_mqa (kv_lora_rank + rope_head_dim, h),
//     kv_a_layernorm, kv_b_proj (heads·(head_dim − rope_head_dim +
//     value_head_dim), kv_lora_rank) and o_proj.
//   - Gated DeltaNet (LinearAttention): in_proj_qkvz, in_proj_ba (Qwen3.5:
//     in_proj_qkv, in_proj_z, in_proj_b, in_proj_a), the depthwise conv1d
//     weight (channels, 1, kernel), dt_bias, A_log, the gated norm and
//     out_proj (Qwen3NextGatedDeltaNet).
//   - norms: two hidden-size weights (four under NormsGemma), weight and
//     bias for the gpt layouts' LayerNorms.
//   - dense MLP (FFN): gate_proj, up_proj, down_proj (Phi-3's gate_up_proj
//     fused), with biases when MLPBias; the gpt layouts' two matrices with
//     biases.
//   - MoE block: the router weight (experts, h), its bias or
//     e_score_correction_bias (DeepSeek-V3-style routers, gpt-oss,
//     MiniMax-M2; ERNIE 4.5's moe_statics (1, experts)); the shared
//     experts' MLP of SharedFFN and Qwen's shared_expert_gate (1, h).
//   - routed experts (experts.i): one gate/up/down nn.Linear set per
//     expert (nn.ModuleList: Mixtral at af3efdd7, Qwen3-MoE at 16b6c53c,
//     DeepSeek-V3 at f5a9ec51, dots.llm1 at 00b676f8, ERNIE 4.5 at
//     01187e21, and Qwen2-MoE and DeepSeek-V2), or the 3-D parameters of
//     the classes that fuse them: gpt-oss gate_up_proj (E, h, 2·ffn) +
//     bias (E, 2·ffn), down_proj (E, ffn, h) + bias (E, h); Llama 4
//     gate_up_proj (E, h, 2·ffn), down_proj (E, ffn, h); MiniMax-M2,
//     GLM-4.5's Glm4MoeNaiveMoe (modeling_glm4_moe.py @ 000c33fd),
//     Qwen3NextExperts (modeling_qwen3_next.py @ 01cdc608) and
//     Qwen3_5MoeExperts (modeling_qwen3_5_moe.py @ 5fd974ea) gate_up_proj
//     (E, 2·ffn, h), down_proj (E, h, ffn). DeepSpeed's qgZ takes each as
//     the parameter's gradient: all_to_all_quant_reduce
//     (deepspeed/runtime/comm/coalesced_collectives.py @ 17b3b557) groups
//     a tensor of two or more dimensions by max(shape[0], shape[1],
//     world), so a 3-D expert tensor's last dimension does not count.
//   - a multi-token-prediction block (MTP): enorm, hnorm, eh_proj (h, 2h)
//     and shared_head.norm (decoderBlocks).
//
// The shapes are read-only: they may be the layer's own slices, and a
// unit's experts share theirs.
func (m *Model) UnitShapes(l Layer) [][]int64 {
	if len(l.Tensors) > 0 {
		out := make([][]int64, len(l.Tensors))
		for i, t := range l.Tensors {
			out[i] = t.Shape
		}
		return out
	}
	sh := m.impliedShapes(l)
	if n, ok := ShapesNumel(sh); !ok || n != int64(l.Params) {
		return nil
	}
	return sh
}

// UnitGradShapes is UnitShapes less the tensors of an implied MoE block
// that get no gradient, which a data-parallel reduction never sees: the
// DeepSeek-V3 router's e_score_correction_bias (E), a buffer
// (DeepseekV3TopkRouter, register_buffer("e_score_correction_bias", …) in
// transformers models/deepseek_v3/modeling_deepseek_v3.py @
// f5a9ec512fa9fe69e51ea0c6388c68d50de567b3; GLM-4.5's and dots.llm1's
// routers, RouterDeepseekV3 here, are copies of it), and ERNIE 4.5's
// moe_statics.e_score_correction_bias (1, E), an nn.Parameter with
// requires_grad=False (Ernie4_5_MoeStatics, modeling_ernie4_5_moe.py).
// Both stay in UnitShapes and in the parameter count (the checkpoints
// hold them). gpt-oss's router bias is a trainable Linear bias, and
// MiniMax-M2's e_score_correction_bias an nn.Parameter that requires a
// gradient: both stay. A unit with explicit tensors keeps them all.
func (m *Model) UnitGradShapes(l Layer) [][]int64 {
	sh := m.UnitShapes(l)
	d := l.Dims
	if len(l.Tensors) > 0 || sh == nil || d == nil || d.Experts == 0 || d.ExpertsOnly() {
		return sh
	}
	var ng []int64
	switch {
	case strings.HasPrefix(m.Architecture, "Ernie4_5"):
		ng = []int64{1, d.Experts}
	case d.Router == RouterDeepseekV3 && m.Architecture != "GptOssForCausalLM" && m.Architecture != "MiniMaxM2ForCausalLM":
		ng = []int64{d.Experts}
	default:
		return sh
	}
	// blockShapes lists it right after the router's gate weight (E, h).
	for i := 0; i+1 < len(sh); i++ {
		if slices.Equal(sh[i], []int64{d.Experts, d.Hidden}) && slices.Equal(sh[i+1], ng) {
			return append(append([][]int64{}, sh[:i+1]...), sh[i+2:]...)
		}
	}
	return sh
}

// ShapesNumel is the elements the shapes hold; ok is false on an empty list
// or when the count overflows int64.
func ShapesNumel(shapes [][]int64) (int64, bool) {
	if len(shapes) == 0 {
		return 0, false
	}
	var total int64
	for _, s := range shapes {
		n := int64(1)
		for _, d := range s {
			if d <= 0 || n > math.MaxInt64/d {
				return 0, false
			}
			n *= d
		}
		if total > math.MaxInt64-n {
			return 0, false
		}
		total += n
	}
	return total, true
}

// blockStyle is the model's block layout: ArchGPT or ArchLlama (an
// imported model's by its class, HFBlockArch).
func (m *Model) blockStyle() string {
	if m.Arch == ArchHF {
		return HFBlockArch(m.Architecture)
	}
	return m.Arch
}

// LearnedPositionRows is the number of rows of the model's learned
// position embedding (wpe), 0 when it has none: the rows its embedding
// unit holds beyond the vocabulary (learnedPositions).
func (m *Model) LearnedPositionRows() int64 {
	if m.Kind != KindTransformer || m.Hidden <= 0 {
		return 0
	}
	for _, l := range m.LayerList {
		if l.Name == "embedding" {
			return m.learnedPositions(l)
		}
	}
	return 0
}

// learnedPositions is the rows of learned positions the embedding unit l
// holds beside the token embedding (vocab, h), 0 for none:
// the gpt presets' (seq_len, h) (buildLayers; arch gpt, or unset before
// the loader fills it in), an imported MPT's wpe
// (model.max_seq_len, h) with learned_pos_emb or a Megatron GPT's
// learned_absolute (--max-position-embeddings, h) (their arch gpt, whose
// embedding counts them: ImportLLMFoundry, megatron.go), GPT-2's wpe
// (n_positions, h) (hfGPT2) and OPT's learned positions
// (max_position_embeddings + 2, h) when word_embed_proj_dim is the hidden
// size (hfOPT; with another width, project_in joins them and the count no
// longer says how many positions there are: none). GPT-NeoX and Falcon,
// gpt layouts without learned positions, hold the token embedding alone.
func (m *Model) learnedPositions(l Layer) int64 {
	h, v := m.Hidden, m.Vocab
	if h <= 0 || m.Arch == ArchLlama || m.Arch == ArchHF && m.Architecture != "GPT2LMHeadModel" && m.Architecture != "OPTForCausalLM" ||
		int64(l.Params)%h != 0 || int64(l.Params)/h <= v {
		return 0
	}
	return int64(l.Params)/h - v
}

func (m *Model) impliedShapes(l Layer) [][]int64 {
	if m.Kind != KindTransformer || m.Hidden <= 0 {
		return nil
	}
	h, v := m.Hidden, m.Vocab
	style := m.blockStyle()
	switch {
	case l.Name == "embedding":
		if p := m.learnedPositions(l); p > 0 {
			return [][]int64{{v, h}, {p, h}}
		}
		return [][]int64{{v, h}}
	case l.Name == "final_norm":
		if style == ArchGPT {
			return [][]int64{{h}, {h}} // LayerNorm weight and bias
		}
		return [][]int64{{h}}
	case l.Name == "lm_head":
		if strings.HasPrefix(m.Architecture, "Ernie4_5") {
			// use_bias: lm_head's bias, alone when the weight is tied to
			// the embedding (hfErnie45Moe).
			switch int64(l.Params) {
			case v*h + v:
				return [][]int64{{v, h}, {v}}
			case v:
				return [][]int64{{v}}
			}
		}
		return [][]int64{{v, h}}
	}
	d := l.Dims
	if d == nil {
		if !strings.HasPrefix(l.Name, "block.") || m.Heads <= 0 || (m.Arch != ArchGPT && m.Arch != ArchLlama) {
			return nil
		}
		// The presets' blocks (buildLayers): model-level sizes.
		d = &BlockDims{Hidden: h, Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: h / m.Heads, FFN: m.FFN}
		if m.Arch == ArchGPT {
			d.QKVBias, d.OBias, d.MLPBias = true, true, true
		}
	}
	if d.ExpertsOnly() {
		return m.expertShapes(d)
	}
	return m.blockShapes(style, d, int64(l.Params))
}

// expertShapes are a routed-experts unit's tensors.
func (m *Model) expertShapes(d *BlockDims) [][]int64 {
	e, h, f := d.Experts, d.Hidden, d.ExpertFFN
	switch m.Architecture {
	case "GptOssForCausalLM":
		return [][]int64{{e, h, 2 * f}, {e, 2 * f}, {e, f, h}, {e, h}}
	case "Llama4ForCausalLM", "Llama4ForConditionalGeneration":
		return [][]int64{{e, h, 2 * f}, {e, f, h}}
	case "MiniMaxM2ForCausalLM", "Glm4MoeForCausalLM", "Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM":
		return [][]int64{{e, 2 * f, h}, {e, h, f}}
	}
	// Every expert's MLP has the same shapes: one set of slices, shared
	// (UnitShapes' shapes are read-only; plan analyzed DeepSeek-V3's 256
	// experts × 58 layers for every configuration it screens: QA s28 M1).
	one := mlpShapes(h, f, d.MLPBias)
	out := make([][]int64, 0, int(e)*len(one))
	for range e {
		out = append(out, one...)
	}
	return out
}

// mlpShapes is a gated MLP's gate_proj, up_proj and down_proj.
func mlpShapes(h, f int64, bias bool) [][]int64 {
	if bias {
		return [][]int64{{f, h}, {f}, {f, h}, {f}, {h, f}, {h}}
	}
	return [][]int64{{f, h}, {f, h}, {h, f}}
}

// linearShape appends nn.Linear(in, out)'s weight (out, in) and its bias.
func linearShape(out [][]int64, in, o int64, bias bool) [][]int64 {
	out = append(out, []int64{o, in})
	if bias {
		out = append(out, []int64{o})
	}
	return out
}

// blockShapes are a decoder block's tensors (attention, norms, dense MLP,
// router, shared experts). params picks Falcon's LayerNorm count, which
// its dims do not carry.
func (m *Model) blockShapes(style string, d *BlockDims, params int64) [][]int64 {
	h := d.Hidden
	if style == ArchGPT {
		return m.gptBlockShapes(d, params)
	}
	var out [][]int64
	norms := int64(2)
	if d.Norms == NormsGemma {
		norms = 4
	}
	for range norms {
		out = append(out, []int64{h})
	}
	switch {
	case d.LinearAttention == LinearGatedDeltaNet:
		kw, vw, hv := d.LinearKeyHeads*d.LinearKeyHeadDim, d.LinearValueHeads*d.LinearValueHeadDim, d.LinearValueHeads
		if GDNSplitProjections(m.Architecture) {
			// Qwen3.5's in_proj_qkv, in_proj_z, in_proj_b and in_proj_a
			// (hfQwenHybrid): Qwen3-Next's two fused projections split.
			out = append(out, []int64{2*kw + vw, h}, []int64{vw, h}, []int64{hv, h}, []int64{hv, h})
		} else {
			out = append(out, []int64{2*kw + 2*vw, h}, []int64{2 * hv, h})
		}
		out = append(out, []int64{2*kw + vw, 1, d.LinearConvKernel}, []int64{hv}, []int64{hv}, []int64{d.LinearValueHeadDim}, []int64{h, vw})
	case d.KVLoRARank > 0:
		qw := d.Heads * d.HeadDim
		if d.QLoRARank > 0 {
			out = linearShape(out, h, d.QLoRARank, d.QKVBias)
			out = append(out, []int64{d.QLoRARank})
			out = linearShape(out, d.QLoRARank, qw, false)
		} else {
			out = linearShape(out, h, qw, false)
		}
		out = linearShape(out, h, d.KVLoRARank+d.RopeHeadDim, d.QKVBias)
		out = append(out, []int64{d.KVLoRARank})
		out = linearShape(out, d.KVLoRARank, d.Heads*(d.HeadDim-d.RopeHeadDim+d.VHeadDim()), false)
		out = linearShape(out, d.Heads*d.VHeadDim(), h, d.OBias)
	case d.Heads > 0:
		q, kv := d.Heads*d.HeadDim, d.KVHeads*d.HeadDim
		qOut := q
		if d.OutputGate {
			qOut = 2 * q
		}
		if m.Architecture == "Phi3ForCausalLM" {
			out = linearShape(out, h, qOut+2*kv, d.QKVBias)
		} else {
			out = linearShape(out, h, qOut, d.QKVBias)
			out = linearShape(out, h, kv, d.QKVBias)
			out = linearShape(out, h, kv, d.QKVBias)
		}
		out = linearShape(out, q, h, d.OBias)
		switch d.QKNorm {
		case QKNormRMSHead, QKNormGemma:
			out = append(out, []int64{d.HeadDim}, []int64{d.HeadDim})
		case QKNormRMSFull:
			out = append(out, []int64{q}, []int64{kv})
		}
		if m.Architecture == "GptOssForCausalLM" {
			out = append(out, []int64{d.Heads}) // sinks
		}
	}
	if d.FFN > 0 {
		if m.Architecture == "Phi3ForCausalLM" {
			out = linearShape(out, h, 2*d.FFN, d.MLPBias)
			out = linearShape(out, d.FFN, h, d.MLPBias)
		} else {
			out = append(out, mlpShapes(h, d.FFN, d.MLPBias)...)
		}
	}
	if d.Experts > 0 {
		out = append(out, []int64{d.Experts, h})
		switch {
		case strings.HasPrefix(m.Architecture, "Ernie4_5"):
			out = append(out, []int64{1, d.Experts}) // moe_statics.e_score_correction_bias
		case d.Router == RouterDeepseekV3, m.Architecture == "GptOssForCausalLM", m.Architecture == "MiniMaxM2ForCausalLM":
			out = append(out, []int64{d.Experts}) // e_score_correction_bias, or the router's bias
		}
	}
	if d.SharedFFN > 0 {
		out = append(out, mlpShapes(h, d.SharedFFN, d.MLPBias)...)
	}
	if d.SharedGate || (d.Experts > 0 && (m.Architecture == "Qwen3NextForCausalLM" || strings.HasPrefix(m.Architecture, "Qwen3_5Moe"))) {
		// Qwen's shared_expert_gate; Qwen3-Next's and Qwen3.5's MoE block
		// builds it even when shared_expert_intermediate_size is 0
		// (Qwen3NextSparseMoeBlock, hfQwenHybrid).
		out = append(out, []int64{1, h})
	}
	if d.MTP {
		out = append(out, []int64{h}, []int64{h}, []int64{h, 2 * h}, []int64{h})
	}
	return out
}

// gptBlockShapes are a LayerNorm, two-matrix-MLP block's tensors: the gpt
// presets' (separate q, k, v), GPT-2's Conv1D (in, out), GPT-NeoX's,
// Falcon's and OPT's.
func (m *Model) gptBlockShapes(d *BlockDims, params int64) [][]int64 {
	h := d.Hidden
	q, kv := d.Heads*d.HeadDim, d.KVHeads*d.HeadDim
	var out [][]int64
	lns := int64(2)
	switch m.Architecture {
	case "GPT2LMHeadModel":
		out = append(out, []int64{h, q + 2*kv}, []int64{q + 2*kv}, []int64{h, h}, []int64{h}, []int64{h, d.FFN}, []int64{d.FFN}, []int64{d.FFN, h}, []int64{h})
	case "GPTNeoXForCausalLM", "FalconForCausalLM":
		out = linearShape(out, h, q+2*kv, d.QKVBias)
		out = linearShape(out, q, h, d.OBias)
		out = linearShape(out, h, d.FFN, d.MLPBias)
		out = linearShape(out, d.FFN, h, d.MLPBias)
	default:
		out = linearShape(out, h, q, d.QKVBias)
		out = linearShape(out, h, kv, d.QKVBias)
		out = linearShape(out, h, kv, d.QKVBias)
		out = linearShape(out, q, h, d.OBias)
		out = linearShape(out, h, d.FFN, d.MLPBias)
		out = linearShape(out, d.FFN, h, d.MLPBias)
	}
	switch m.Architecture {
	case "FalconForCausalLM", "OPTForCausalLM":
		// Falcon's parallel_attn with num_ln_in_parallel_attn 1 builds one
		// input_layernorm, otherwise two (hfFalcon); OPT's
		// layer_norm_elementwise_affine false none (hfOPT). The dims do not
		// say which; the count does.
		if n, ok := ShapesNumel(out); ok && (params-n == 0 || params-n == 2*h) {
			lns = (params - n) / (2 * h)
		}
	}
	for range lns {
		out = append(out, []int64{h}, []int64{h})
	}
	return out
}
