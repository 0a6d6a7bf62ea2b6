package scenarios

import "encoding/json"

// This file imports GLM-4.5 / GLM-4.6 / GLM-4.5-Air (Glm4MoeForCausalLM),
// MiniMax-M2 (MiniMaxM2ForCausalLM), Seed-OSS (SeedOssForCausalLM),
// dots.llm1 (Dots1ForCausalLM), the text decoder of Mistral Small 3.1/3.2
// (Mistral3ForConditionalGeneration) and the parts of SmolLM3 that Llama's import does not read (NoPE layers
// and their sliding windows); OLMo 3 is OLMo 2's import with
// layer_types (hfLlamaLike). What zerosim cannot model of them is named
// in HFModel.Notes, as for the other architectures.

// hfGlm4Moe imports Glm4MoeForCausalLM, the module tree of
// models/glm4_moe/modeling_glm4_moe.py
// @ 000c33fdfde12e1ffafbfcdb3c926df5727a00b6:
//
//   - Glm4MoeAttention: q_proj Linear(h, heads·head_dim), k_proj and v_proj
//     Linear(h, kv_heads·head_dim), all three with bias = attention_bias,
//     and o_proj Linear(heads·head_dim, h, bias=False) whatever
//     attention_bias says; head_dim = config.head_dim or hidden/heads; with
//     use_qk_norm, q_norm and k_norm RMSNorm(head_dim) (per head).
//     partial_rotary_factor (0.5) rotates part of each head: no parameters.
//   - input_ and post_attention_layernorm RMSNorm(h); layer i holds
//     Glm4MoeMLP(intermediate_size) when i < first_k_dense_replace, else
//     Glm4MoeMoE: gate = Glm4MoeTopkRouter, weight (n_routed_experts, h)
//     and the persistent e_score_correction_bias buffer (n_routed_experts),
//     stored in every checkpoint and counted as DeepSeek-V3's is; experts,
//     n_routed_experts SwiGLU MLPs of moe_intermediate_size without biases;
//     shared_experts Glm4MoeMLP(moe_intermediate_size·n_shared_experts).
//     The router is DeepSeek-V3's (route_tokens_to_experts: sigmoid, the
//     bias added for the choice only, the top-2 sum per group, topk_group of
//     n_group groups, top-k, division by the sum under norm_topk_prob,
//     routed_scaling_factor): RouterDeepseekV3, checked by groupRouting.
//     At this commit Glm4MoeNaiveMoe reads config.intermediate_size for the
//     experts' width; the published checkpoints' experts are
//     moe_intermediate_size wide (mlp.experts.*.gate_proj [1536, 5120] in
//     GLM-4.5's), which is what is counted.
//   - final norm; lm_head untied (tie_word_embeddings default false).
//   - num_nextn_predict_layers: Glm4MoeModel drops model.layers.92.* and
//     model.layers.46.* (_keys_to_ignore_on_load_unexpected), the
//     multi-token-prediction layer of GLM-4.5 and GLM-4.5-Air. GLM-4.5 is
//     trained with it (Megatron-Bridge's GLM 4.5 recipe: "MTP
//     (Multi-Token Prediction) with 1 layer, 0.3 scaling factor",
//     docs/models/llm/glm45.md), but neither the HF Trainer nor Accelerate
//     nor llm-foundry, which train what transformers builds, does: it is
//     left out with a note unless model.mtp_layers builds it
//     (mtpModules), and then counted as DeepSeek-V3's: enorm
//     and hnorm RMSNorm(h), eh_proj Linear(2h, h, bias=False), a MoE
//     decoder layer and shared_head.norm RMSNorm(h), the embedding and
//     output head being the main model's; the checkpoint stores its own
//     copies of those two, which are not counted twice.
//
// Defaults are Glm4MoeConfig's (configuration_glm4_moe.py
// @ c7ec229ad64cdcf0176f669969c66c9a652e7f38, the class the modeling file
// imports; it reads no other name for a key): num_key_value_heads 8,
// moe_intermediate_size 1408, n_routed_experts 128, num_experts_per_tok 8,
// n_shared_experts 1, first_k_dense_replace 1, n_group 1, topk_group 1,
// norm_topk_prob true, use_qk_norm false, attention_bias false.
func hfGlm4Moe(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if d.KVHeads, err = c.kvHeads(min(8, d.Heads), d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = c.intOr(h/d.Heads, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.HeadDim == 0 {
		return nil, c.errorf("hidden_size=%d is smaller than num_attention_heads=%d (add head_dim or fix the sizes)", h, d.Heads)
	}
	if d.FFN, err = c.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if d.ExpertFFN, err = c.intOr(1408, 1, maxFFN, "moe_intermediate_size"); err != nil {
		return nil, err
	}
	routed, err := c.intOr(128, 1, maxExperts, "n_routed_experts")
	if err != nil {
		return nil, err
	}
	if d.TopK, err = c.intOr(min(8, routed), 1, routed, "num_experts_per_tok"); err != nil {
		return nil, err
	}
	shared, err := c.intOr(1, 0, maxExperts, "n_shared_experts")
	if err != nil {
		return nil, err
	}
	firstDense, err := c.intOr(1, 0, maxLayers, "first_k_dense_replace")
	if err != nil {
		return nil, err
	}
	ng, tg, err := c.groupRouting(routed, d.TopK, 1, 1)
	if err != nil {
		return nil, err
	}
	if d.RouterNorm, err = c.boolOr(true, "norm_topk_prob"); err != nil {
		return nil, err
	}
	bias, err := c.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	qkNorm, err := c.boolOr(false, "use_qk_norm")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(false, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	mtp, mtpCfg, _, err := c.mtpModules("num_nextn_predict_layers", 0)
	if err != nil {
		return nil, err
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	d.QKVBias = bias
	attn := p.add(p.linear(h, q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, false), 2*h)
	if qkNorm {
		attn = p.add(attn, 2*d.HeadDim)
		// Glm4MoeRMSNorm is the Llama code (weight times the 16-bit
		// normalized tensor), over each head (memory's qkNorms).
		d.QKNorm = QKNormRMSHead
	}
	mlp := func(ffn int64) int64 { return p.add(2*p.linear(h, ffn, false), p.linear(ffn, h, false)) }
	one := mlp(d.ExpertFFN)
	layer := func(i, extra int64) hfBlock {
		bd := *d
		if i < firstDense {
			bd.ExpertFFN, bd.TopK, bd.RouterNorm = 0, 0, false
			return hfBlock{dense: p.add(attn, mlp(d.FFN), extra), dims: bd}
		}
		bd.FFN, bd.Experts, bd.SharedExperts = 0, routed, shared
		// Glm4MoeTopkRouter and route_tokens_to_experts (memory.RouterTensors);
		// the gate weight and e_score_correction_bias.
		bd.Router = RouterDeepseekV3
		dense := p.add(attn, p.mul(routed, h), routed, extra)
		if shared > 0 {
			bd.SharedFFN = p.mul(d.ExpertFFN, shared)
			dense = p.add(dense, mlp(bd.SharedFFN))
		}
		return hfBlock{dense: dense, experts: p.mul(routed, one), activeExperts: p.mul(d.TopK, one), dims: bd}
	}
	blocks := decoderBlocks(&p, hm.Layers, mtp, h, layer)
	moe := firstDense < hm.Layers+mtp
	if moe {
		d.Experts, d.SharedExperts, d.Router = routed, shared, RouterDeepseekV3
		if shared > 0 {
			d.SharedFFN = p.mul(d.ExpertFFN, shared)
		}
	} else {
		d.ExpertFFN, d.TopK, d.RouterNorm = 0, 0, false
	}
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, blocks, h, hm.untied(embed))
	hm.mtpNote(mtp, mtpCfg, "num_nextn_predict_layers", "", layerTensors(hm.Layers, mtpCfg), "Glm4MoeModel", "Megatron-Bridge's GLM 4.5 recipe trains one MTP layer, loss scale 0.3")
	if moe {
		hm.groupNote(ng, tg, d.TopK)
	}
	hm.quantizationNote(c, "GLM-4.5 publishes the bf16 weights as well")
	return hm, nil
}

// smolLM3Layers reads SmolLM3's no_rope_layers (1: RoPE, 0: NoPE; default
// a NoPE layer every no_rope_layer_interval layers, as Llama 4's) and its
// sliding window (configuration_smollm3.py
// @ 008e574391258935f3ecc3035c882e73bbcac419): only with use_sliding_window
// and a sliding_window does a layer whose layer_types entry is
// "sliding_attention" (default: the NoPE layers) attend over the window
// (SmolLM3Attention.sliding_window). The NoPE layers are noted.
func (c *hfConfig) smolLM3Layers(hm *HFModel) error {
	rope, err := c.ropeLayers(hm.Layers)
	if err != nil {
		return err
	}
	use, err := c.boolOr(false, "use_sliding_window")
	if err != nil {
		return err
	}
	window, err := c.window(0, "sliding_window")
	if err != nil {
		return err
	}
	on := use && window > 0
	windowed, err := c.layerTypes("layer_types", hm.Layers, func(i int64) bool { return on && !rope[i] })
	if err != nil {
		return err
	}
	if on {
		hm.setWindows(window, false, windowed)
	}
	var nope int64
	for _, r := range rope {
		if !r {
			nope++
		}
	}
	if nope > 0 {
		hm.note("no_rope_layers: %d of the %d decoder blocks skip the rotary embedding (NoPE); their parameters and GEMM FLOPs are a RoPE block's, but zerosim charges every eager block the RoPE op chain (training.rope_impl), so their memory-bound traffic is slightly overstated",
			nope, hm.Layers)
	}
	return nil
}

// hfMistral3 imports Mistral3ForConditionalGeneration (Mistral Small
// 3.1/3.2 and the checkpoints fine-tuned from it that keep its class), the
// module tree of models/mistral3/modeling_mistral3.py
// @ 00dcc6dda6f6d8e69541a6b51f97986a80242367: Mistral3Model holds a Pixtral
// vision_tower, Mistral3MultiModalProjector (an RMSNorm, the patch
// merger's Linear and two Linears to the text width) and language_model =
// AutoModel.from_config(config.text_config); the class adds lm_head
// Linear(text hidden, text vocab, bias=False). Mistral3Config
// (configuration_mistral3.py @ 0db25542f2190e3dd1e402c477fa713ed516d655)
// builds text_config with model_type "mistral" unless it names another,
// so the decoder is MistralModel: text_config is imported as a
// MistralForCausalLM config (hfLlamaLike's Mistral rules: no biases,
// MistralConfig's defaults, sliding_window on every layer unless null —
// Mistral Small 3.1 has null — through HFModel.setWindows). The output
// layer is tied when text_config.tie_word_embeddings is (MistralConfig
// default false): PreTrainedModel.tie_weights reads
// config.get_text_config(decoder=True).tie_word_embeddings, the text
// config's (transformers 4.5x modeling_utils.py);
// a top-level tie_word_embeddings is not read. Another text_config
// model_type (ministral3, say) is refused: its modeling file is not read
// here. The vision tower and projector are noted, not counted, as Gemma
// 3's and Llama 4's: zerosim simulates the decoder on text tokens.
func hfMistral3(c *hfConfig) (*HFModel, error) {
	tc, err := c.textConfig("Mistral3ForConditionalGeneration")
	if err != nil {
		return nil, err
	}
	sub := tc.m
	if mt, ok := tc.get("model_type"); ok && mt != nil && mt != "mistral" {
		return nil, c.errorf("text_config.model_type is %s: zerosim imports Mistral3ForConditionalGeneration with a \"mistral\" text decoder (Mistral Small 3.1/3.2) only", describeJSON(mt))
	}
	text := make(map[string]any, len(sub)+1)
	for k, x := range sub {
		text[k] = x
	}
	text["architectures"] = []any{"MistralForCausalLM"}
	withArch := *tc // the text decoder's keys and positions, its class named
	withArch.m = text
	hm, err := hfLlamaLike(&withArch)
	if err != nil {
		return nil, err
	}
	if _, ok := c.get("vision_config"); ok {
		hm.note("vision_config: the Pixtral vision tower and multi-modal projector of Mistral3ForConditionalGeneration are not imported; zerosim simulates the text decoder (language_model and lm_head) on text tokens")
	}
	hm.quantizationNote(c, "Mistral publishes the bf16 weights as well")
	return hm, nil
}

// hfMiniMaxM2 imports MiniMaxM2ForCausalLM (MiniMax-M2, M2.1, M2.5), the
// module tree of models/minimax_m2/modeling_minimax_m2.py
// @ 0205eec1d869591488aa74eda3f2da23610c28d9:
//
//   - MiniMaxM2Attention: q_proj Linear(h, heads·head_dim), k_proj and
//     v_proj Linear(h, kv_heads·head_dim), o_proj back, all without bias;
//     q_norm RMSNorm(heads·head_dim) and k_norm RMSNorm(kv_heads·head_dim)
//     over the whole projections (OLMo 2's placement, not Qwen3's per-head
//     one), built whatever use_qk_norm and qk_norm_type say. The partial
//     rotary embedding (rotary_dim, partial_rotary_factor) has no
//     parameters.
//   - input_ and post_attention_layernorm RMSNorm(h); every layer's mlp is
//     MiniMaxM2SparseMoeBlock: gate = MiniMaxM2TopKRouter, weight
//     (num_local_experts, h), no bias; e_score_correction_bias, a
//     persistent buffer (num_local_experts) the checkpoint stores
//     (block_sparse_moe.e_score_correction_bias) and counted as
//     DeepSeek-V3's is; experts gate_up_proj (E, 2·intermediate_size, h) and
//     down_proj (E, h, intermediate_size) without biases. No shared expert
//     and no dense MLP: mlp_intermediate_size and shared_intermediate_size
//     in the published config.json are not read by the modeling file (a
//     nonzero shared_intermediate_size is refused rather than dropped).
//   - final norm; lm_head untied (tie_word_embeddings default false).
//
// The router: F.linear in the weight's dtype, sigmoid in fp32, the bias
// added for the choice only, top-num_experts_per_tok, the chosen weights
// divided by their sum. No router the activation model knows
// (memory.RouterTensors) has those tensors (DeepSeek-V3's casts input and
// weight to fp32), so Router stays "" and a note says its forward tensors
// are not counted.
//
// attn_type_list (MiniMax-M1's per-layer switch, 0 for lightning / linear
// attention) is not read by the modeling file, which builds softmax
// attention on every layer; an entry other than 1 is refused, as zerosim
// does not model linear attention. use_mtp with num_mtp_modules: MiniMax's
// multi-token-prediction modules are neither built by the modeling file nor
// stored in the published checkpoint (its safetensors total is the main
// model's, TestHFMiniMaxM2), so they are noted, not counted.
//
// Defaults are MiniMaxM2Config's (configuration_minimax_m2.py
// @ 008e574391258935f3ecc3035c882e73bbcac419; attribute_map num_experts →
// num_local_experts): num_key_value_heads 8, head_dim 128,
// num_local_experts 256, num_experts_per_tok 8, tie_word_embeddings false.
func hfMiniMaxM2(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if d.KVHeads, err = c.kvHeads(min(8, d.Heads), d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = c.intOr(128, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.ExpertFFN, err = c.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if err := c.aliases("num_local_experts", "num_experts"); err != nil {
		return nil, err
	}
	if d.Experts, err = c.intOr(256, 1, maxExperts, "num_local_experts", "num_experts"); err != nil {
		return nil, err
	}
	if d.TopK, err = c.intOr(min(8, d.Experts), 1, d.Experts, "num_experts_per_tok"); err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(false, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	shared, err := c.intOr(0, 0, maxFFN, "shared_intermediate_size")
	if err != nil {
		return nil, err
	}
	if shared > 0 {
		return nil, c.errorf("shared_intermediate_size=%d: MiniMaxM2ForCausalLM builds no shared expert, so transformers would drop it (set it to 0)", shared)
	}
	if v, ok := c.get("attn_type_list"); ok && v != nil {
		xs, isList := v.([]any)
		if !isList {
			return nil, c.errorf("attn_type_list is %s, not a list (use one 1, softmax attention, per layer)", describeJSON(v))
		}
		for i, x := range xs {
			if n, isNum := x.(json.Number); !isNum || n != "1" {
				return nil, c.errorf("attn_type_list[%d] is %s: only 1 (softmax attention) is supported; 0 is MiniMax-M1's linear (lightning) attention, which MiniMaxM2ForCausalLM does not build and zerosim does not model", i, describeJSON(x))
			}
		}
	}
	useMTP, err := c.boolOr(false, "use_mtp")
	if err != nil {
		return nil, err
	}
	mtp, err := c.intOr(0, 0, maxLayers, "num_mtp_modules")
	if err != nil {
		return nil, err
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	attn := p.add(p.linear(h, q, false), 2*p.linear(h, kv, false), p.linear(q, h, false), q, kv)
	one := p.mul(3, h, d.ExpertFFN)
	// The norms, the gate weight and e_score_correction_bias.
	dense := p.add(attn, 2*h, p.mul(d.Experts, h), d.Experts)
	// MiniMaxM2RMSNorm is the Llama code, and q_norm and k_norm span the
	// whole q_proj and k_proj outputs, one statistic per token
	// (modeling_minimax_m2.py @ 0205eec1; memory's qkNorms).
	d.QKNorm = QKNormRMSFull
	var blocks []hfBlock
	for range hm.Layers {
		blocks = append(blocks, hfBlock{dense: dense, experts: p.mul(d.Experts, one), activeExperts: p.mul(d.TopK, one), dims: *d})
	}
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, blocks, h, hm.untied(embed))
	hm.note("MiniMaxM2TopKRouter (bf16 gate, fp32 sigmoid, bias for the choice only, top-%d renormalised) is not a router zerosim's activation model knows: its forward tensors are not counted", d.TopK)
	if useMTP && mtp > 0 {
		hm.note("use_mtp, num_mtp_modules=%d: MiniMax's multi-token-prediction modules are in neither transformers' MiniMaxM2ForCausalLM nor the published checkpoint; they are not counted or simulated", mtp)
	}
	hm.quantizationNote(c, "its fp8 128×128 block scales are not counted")
	return hm, nil
}

// hfSeedOss imports SeedOssForCausalLM (Seed-OSS-36B), the module tree of
// models/seed_oss/modeling_seed_oss.py
// @ 0233e509531ace915c8241b4c16c8032a583279c: Llama's (input_ and
// post_attention_layernorm RMSNorm(h), gate/up/down Linear with bias =
// mlp_bias, final norm) with its own attention biases: q_proj, k_proj and
// v_proj with bias = attention_bias, o_proj with bias =
// attention_out_bias. The residual dropout (attention_dropout,
// residual_dropout, 0.1 by default) has no parameters. Defaults are
// SeedOssConfig's (configuration_seed_oss.py
// @ 008e574391258935f3ecc3035c882e73bbcac419): attention_bias true,
// attention_out_bias false, mlp_bias false, num_key_value_heads 8 (null:
// num_attention_heads), head_dim 128 (null: hidden/heads),
// tie_word_embeddings false.
func hfSeedOss(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	defKV, defHeadDim := min(8, d.Heads), int64(128)
	if c.isNull("num_key_value_heads") {
		defKV = d.Heads
	}
	if c.isNull("head_dim") {
		defHeadDim = h / d.Heads
	}
	if d.KVHeads, err = c.kvHeads(defKV, d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = c.intOr(defHeadDim, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.HeadDim == 0 {
		return nil, c.errorf("hidden_size=%d is smaller than num_attention_heads=%d (add head_dim or fix the sizes)", h, d.Heads)
	}
	if d.FFN, err = c.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	var qkvBias, outBias, mlpBias bool
	for _, b := range []struct {
		dst *bool
		def bool
		key string
	}{{&qkvBias, true, "attention_bias"}, {&outBias, false, "attention_out_bias"}, {&mlpBias, false, "mlp_bias"}, {&hm.Tied, false, "tie_word_embeddings"}} {
		if *b.dst, err = c.boolOr(b.def, b.key); err != nil {
			return nil, err
		}
	}
	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	d.QKVBias, d.OBias, d.MLPBias = qkvBias, outBias, mlpBias
	block := p.add(p.linear(h, q, qkvBias), 2*p.linear(h, kv, qkvBias), p.linear(q, h, outBias), 2*h,
		2*p.linear(h, d.FFN, mlpBias), p.linear(d.FFN, h, mlpBias))
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, uniform(hm.Layers, block, *d), h, hm.untied(embed))
	return hm, nil
}

// hfDots1 imports Dots1ForCausalLM (rednote-hilab's dots.llm1), the module
// tree of models/dots1/modeling_dots1.py
// @ 00b676f8f0489b88652a31d70751cc540dd06305, Qwen3's attention on
// DeepSeek-V3's MoE:
//
//   - Dots1Attention: q_proj Linear(h, heads·head_dim), k_proj and v_proj
//     Linear(h, kv_heads·head_dim), o_proj back, all four with bias =
//     attention_bias; q_norm and k_norm RMSNorm(head_dim), per head;
//     head_dim = config.head_dim when the file gives one, else
//     hidden/heads. A layer whose layer_types entry is "sliding_attention"
//     attends over sliding_window (HFModel.setWindows).
//   - input_ and post_attention_layernorm RMSNorm(h); layer i holds
//     Dots1MLP(intermediate_size) when i < first_k_dense_replace, else
//     Dots1MoE: n_routed_experts Dots1MLP(moe_intermediate_size) without
//     biases, gate = Dots1TopkRouter, weight (n_routed_experts, h) and the
//     registered (persistent) e_score_correction_bias buffer
//     (n_routed_experts), stored in the checkpoint and counted as
//     DeepSeek-V3's; shared_experts Dots1MLP(moe_intermediate_size ·
//     n_shared_experts), which every token goes through. The router is
//     DeepSeek-V3's to the letter (fp32 gate Linear, sigmoid, bias for the
//     choice only, top-2 sum per group, topk_group of n_group groups,
//     top-k, division by the sum + 1e-20 under norm_topk_prob,
//     routed_scaling_factor): RouterDeepseekV3, checked by groupRouting.
//   - final norm; lm_head untied (tie_word_embeddings default false).
//
// Defaults are Dots1Config's (configuration_dots1.py
// @ 008e574391258935f3ecc3035c882e73bbcac419; attribute_map
// num_local_experts → n_routed_experts): num_key_value_heads 32 (null:
// num_attention_heads), moe_intermediate_size 1408, first_k_dense_replace
// 0, n_group 1, topk_group 1 (null, as the published base and instruct
// configs leave them, is one group: no restriction), norm_topk_prob false,
// attention_bias false, sliding_window 4096 (null: none) and layer_types
// sliding from max_window_layers (62) on. n_routed_experts,
// n_shared_experts and num_experts_per_tok default to None, which
// Dots1MoE cannot build: they are required once a layer is MoE. The
// published config.json's moe_layer_freq, scoring_func, topk_method and
// use_sliding_window are not read by the modeling file, nor here.
func hfDots1(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	defKV := min(32, d.Heads)
	if c.isNull("num_key_value_heads") {
		defKV = d.Heads
	}
	if d.KVHeads, err = c.kvHeads(defKV, d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = c.intOr(h/d.Heads, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.HeadDim == 0 {
		return nil, c.errorf("hidden_size=%d is smaller than num_attention_heads=%d (add head_dim or fix the sizes)", h, d.Heads)
	}
	if d.FFN, err = c.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	firstDense, err := c.intOr(0, 0, maxLayers, "first_k_dense_replace")
	if err != nil {
		return nil, err
	}
	moe := firstDense < hm.Layers
	var routed, shared, ng, tg int64
	if moe {
		if d.ExpertFFN, err = c.intOr(1408, 1, maxFFN, "moe_intermediate_size"); err != nil {
			return nil, err
		}
		if err := c.aliases("n_routed_experts", "num_local_experts"); err != nil {
			return nil, err
		}
		if routed, err = c.int(1, maxExperts, "n_routed_experts", "num_local_experts"); err != nil {
			return nil, err
		}
		if shared, err = c.int(0, maxExperts, "n_shared_experts"); err != nil {
			return nil, err
		}
		if d.TopK, err = c.int(1, routed, "num_experts_per_tok"); err != nil {
			return nil, err
		}
		if ng, tg, err = c.groupRouting(routed, d.TopK, 1, 1); err != nil {
			return nil, err
		}
		if d.RouterNorm, err = c.boolOr(false, "norm_topk_prob"); err != nil {
			return nil, err
		}
	}
	bias, err := c.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(false, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	w, err := c.window(4096, "sliding_window")
	if err != nil {
		return nil, err
	}
	if err := c.windowsFrom(hm, w, 62); err != nil {
		return nil, err
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	d.QKVBias, d.OBias = bias, bias
	attn := p.add(p.linear(h, q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, bias), 2*d.HeadDim, 2*h)
	// Dots1RMSNorm is the Llama code, applied per head as Qwen3's
	// (memory's qkNorms).
	d.QKNorm = QKNormRMSHead
	mlp := func(ffn int64) int64 { return p.add(2*p.linear(h, ffn, false), p.linear(ffn, h, false)) }
	one := mlp(d.ExpertFFN)
	var blocks []hfBlock
	for i := range hm.Layers {
		bd := *d
		if i < firstDense {
			bd.ExpertFFN, bd.TopK, bd.RouterNorm = 0, 0, false
			blocks = append(blocks, hfBlock{dense: p.add(attn, mlp(d.FFN)), dims: bd})
			continue
		}
		bd.FFN, bd.Experts, bd.SharedExperts, bd.Router = 0, routed, shared, RouterDeepseekV3
		// The gate weight, e_score_correction_bias and the shared experts.
		dense := p.add(attn, p.mul(routed, h), routed)
		if shared > 0 {
			bd.SharedFFN = p.mul(d.ExpertFFN, shared)
			dense = p.add(dense, mlp(bd.SharedFFN))
		}
		blocks = append(blocks, hfBlock{dense: dense, experts: p.mul(routed, one), activeExperts: p.mul(d.TopK, one), dims: bd})
	}
	if moe {
		d.Experts, d.SharedExperts, d.Router = routed, shared, RouterDeepseekV3
		if shared > 0 {
			d.SharedFFN = p.mul(d.ExpertFFN, shared)
		}
	}
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, blocks, h, hm.untied(embed))
	if moe {
		hm.groupNote(ng, tg, d.TopK)
	}
	hm.quantizationNote(c, "rednote publishes the bf16 weights as well")
	return hm, nil
}
