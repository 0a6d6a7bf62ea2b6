package scenarios

// This file imports GLM-4.5 / GLM-4.6 / GLM-4.5-Air (Glm4MoeForCausalLM)
// and the parts of SmolLM3 that Llama's import does not read (NoPE layers
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
//     docs/models/llm/glm45.md), so it is counted as DeepSeek-V3's: enorm
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
	mtp, err := c.intOr(0, 0, maxLayers, "num_nextn_predict_layers")
	if err != nil {
		return nil, err
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	attn := p.add(p.linear(h, q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, false), 2*h)
	if qkNorm {
		attn = p.add(attn, 2*d.HeadDim)
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
	if mtp > 0 {
		hm.mtpNote(mtp, "Megatron-Bridge's GLM 4.5 recipe trains one MTP layer, loss scale 0.3")
	}
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
