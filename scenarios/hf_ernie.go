package scenarios

// This file imports Baidu's ERNIE 4.5 text models: the mixture-of-experts
// Ernie4_5_MoeForCausalLM (ERNIE-4.5-21B-A3B, ERNIE-4.5-300B-A47B) and the
// dense Ernie4_5ForCausalLM (ERNIE-4.5-0.3B).

// hfErnie45Moe imports Ernie4_5_MoeForCausalLM, the module tree of
// models/ernie4_5_moe/modeling_ernie4_5_moe.py
// @ 01187e21cda13b3f08fdb45b7e32b78d173d702a:
//
//   - Ernie4_5_MoeAttention: q_proj Linear(h, heads·head_dim), k_proj and
//     v_proj Linear(h, kv_heads·head_dim), o_proj Linear(heads·head_dim,
//     h), all four with bias = use_bias; head_dim = getattr(config,
//     "head_dim", hidden/heads), so a head_dim in config.json wins. No q/k
//     norms; the interleaved rotary embedding has no parameters.
//   - input_ and post_attention_layernorm RMSNorm(h). Layer i holds
//     Ernie4_5_MoeSparseMoeBlock when (i+1) % moe_layer_interval == 0 and
//     moe_layer_start_index ≤ i ≤ moe_layer_end_index, else
//     Ernie4_5_MoeMLP(intermediate_size). The MoE block: moe_statics =
//     Ernie4_5_MoeStatics, whose e_score_correction_bias is an
//     nn.Parameter (1, moe_num_experts) with requires_grad=False, stored in
//     the checkpoint (mlp.moe_statics.e_score_correction_bias) and counted
//     as DeepSeek-V3's buffer is; gate Linear(h, moe_num_experts,
//     bias=False, dtype=float32); experts, moe_num_experts
//     Ernie4_5_MoeMLP(moe_intermediate_size); shared_experts, when
//     moe_num_shared_experts > 0, one
//     Ernie4_5_MoeMLP(moe_intermediate_size·moe_num_shared_experts), which
//     every token goes through. Every Ernie4_5_MoeMLP (dense, expert,
//     shared) is gate/up/down with bias = use_bias.
//   - final norm; lm_head Linear(h, vocab, bias=use_bias), its weight tied
//     to the embedding under tie_word_embeddings (default true): a tied
//     head with use_bias keeps its own bias (vocab parameters).
//
// The router: the gate in fp32 on hidden_states.float(), fp32 softmax,
// e_score_correction_bias added for the choice only (moe_statics), top-moe_k,
// the chosen probabilities divided by clamp(sum, min=moe_norm_min). No
// router the activation model knows (memory.RouterTensors) saves those
// tensors (RouterSoftmaxTopK has no fp32 input copy, RouterDeepseekV3 a
// sigmoid and an fp32 weight copy), so Router stays "" and a note says so,
// as MiniMax-M2's. The gate and the bias are kept in fp32
// (_keep_in_fp32_modules_strict); zerosim counts them in the scenario's
// precision.
//
// num_nextn_predict_layers: Ernie4_5_MoePreTrainedModel ignores the
// checkpoint's multi-token-prediction tensors
// (_keys_to_ignore_on_load_unexpected = ["mtp"]; Baidu's -PT checkpoints
// store model.mtp_block.*, mtp_emb_norm, mtp_hidden_norm and
// mtp_linear_proj, which MLX's and llama.cpp's loaders drop). Neither
// transformers nor zerosim builds them: they are noted, not counted, as
// MiniMax-M2's are (TestHFErnie45Moe counts the ERNIE-4.5-21B-A3B-Thinking
// checkpoint, which has none).
//
// Defaults are Ernie4_5_MoeConfig's (configuration_ernie4_5_moe.py
// @ 001f85b38fb432858ace93f18622f07cec46d874; attribute_map num_experts →
// moe_num_experts, num_experts_per_tok → moe_k): num_key_value_heads 4,
// intermediate_size 12288, moe_intermediate_size 1536, moe_k 6,
// moe_num_experts 64, moe_num_shared_experts 2, moe_layer_start_index 1,
// moe_layer_end_index -1 (the last layer), moe_layer_interval 1, use_bias
// false, tie_word_embeddings true. Baidu's configs also carry moe_capacity,
// moe_gate, moe_gate_act and moe_use_aux_free, which the modeling file
// does not read, nor does this import.
func hfErnie45Moe(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if err := c.ernieAttention(d, min(4, d.Heads), d.Hidden/d.Heads); err != nil {
		return nil, err
	}
	if d.FFN, err = c.intOr(12288, 1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if d.ExpertFFN, err = c.intOr(1536, 1, maxFFN, "moe_intermediate_size"); err != nil {
		return nil, err
	}
	if err := c.aliases("moe_num_experts", "num_experts"); err != nil {
		return nil, err
	}
	if err := c.aliases("moe_k", "num_experts_per_tok"); err != nil {
		return nil, err
	}
	routed, err := c.intOr(64, 1, maxExperts, "moe_num_experts", "num_experts")
	if err != nil {
		return nil, err
	}
	if d.TopK, err = c.intOr(min(6, routed), 1, routed, "moe_k", "num_experts_per_tok"); err != nil {
		return nil, err
	}
	shared, err := c.intOr(2, 0, maxExperts, "moe_num_shared_experts")
	if err != nil {
		return nil, err
	}
	start, err := c.intOr(1, 0, maxLayers, "moe_layer_start_index")
	if err != nil {
		return nil, err
	}
	// -1, the default, is the last layer (Ernie4_5_MoeConfig.__init__).
	end, err := c.intOr(-1, -1, maxLayers, "moe_layer_end_index")
	if err != nil {
		return nil, err
	}
	if end == -1 {
		end = hm.Layers - 1
	}
	interval, err := c.intOr(1, 1, maxLayers, "moe_layer_interval")
	if err != nil {
		return nil, err
	}
	bias, err := c.boolOr(false, "use_bias")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(true, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	mtp, err := c.intOr(0, 0, maxLayers, "num_nextn_predict_layers")
	if err != nil {
		return nil, err
	}

	var p pc
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, bias
	attn := ernieAttentionParams(&p, d, bias)
	mlp := func(ffn int64) int64 { return p.add(2*p.linear(h, ffn, bias), p.linear(ffn, h, bias)) }
	one := mlp(d.ExpertFFN)
	var blocks []hfBlock
	var moeLayers int64
	for i := range hm.Layers {
		bd := *d
		if (i+1)%interval != 0 || i < start || i > end {
			bd.ExpertFFN, bd.TopK = 0, 0
			blocks = append(blocks, hfBlock{dense: p.add(attn, mlp(d.FFN)), dims: bd})
			continue
		}
		moeLayers++
		bd.FFN, bd.Experts, bd.SharedExperts = 0, routed, shared
		// The gate weight and moe_statics.e_score_correction_bias.
		dense := p.add(attn, p.mul(routed, h), routed)
		if shared > 0 {
			bd.SharedFFN = p.mul(d.ExpertFFN, shared)
			dense = p.add(dense, mlp(bd.SharedFFN))
		}
		blocks = append(blocks, hfBlock{dense: dense, experts: p.mul(routed, one), activeExperts: p.mul(d.TopK, one), dims: bd})
	}
	if moeLayers > 0 {
		d.Experts, d.SharedExperts = routed, shared
		if shared > 0 {
			d.SharedFFN = p.mul(d.ExpertFFN, shared)
		}
	} else {
		d.ExpertFFN, d.TopK = 0, 0
	}
	embed := p.mul(hm.Vocab, h)
	head := hm.untied(embed)
	if bias {
		head = p.add(head, hm.Vocab)
	}
	hm.assemble(&p, embed, blocks, h, head)
	if moeLayers > 0 {
		hm.note("the router of Ernie4_5_MoeSparseMoeBlock (fp32 gate on an fp32 copy of the input, fp32 softmax, e_score_correction_bias for the choice only, top-%d renormalised) is not a router zerosim's activation model knows: its forward tensors are not counted; the gate and the bias, fp32 in the checkpoint, are counted in the scenario's precision", d.TopK)
	}
	if mtp > 0 {
		hm.note("num_nextn_predict_layers=%d: ERNIE's multi-token-prediction module (the -PT checkpoints' mtp_block, mtp_emb_norm, mtp_hidden_norm, mtp_linear_proj) is in neither transformers' Ernie4_5_MoeForCausalLM nor this import; it is not counted or simulated", mtp)
	}
	hm.quantizationNote(c, "Baidu publishes the bf16 weights as well")
	return hm, nil
}

// hfErnie45 imports Ernie4_5ForCausalLM (ERNIE-4.5-0.3B), the module tree
// of models/ernie4_5/modeling_ernie4_5.py
// @ 016bc8ef0876cf366e321dfe1922500c897a0d90: Llama's (input_ and
// post_attention_layernorm RMSNorm(h), gate/up/down, final norm) with
// Ernie4_5Attention's and Ernie4_5MLP's biases all = use_bias, head_dim =
// Ernie4_5Config.head_dim, and lm_head Linear(h, vocab,
// bias=False) tied to the embedding under tie_word_embeddings. Defaults are
// Ernie4_5Config's (configuration_ernie4_5.py
// @ 008e574391258935f3ecc3035c882e73bbcac419): num_key_value_heads 2 (null:
// num_attention_heads), head_dim 128 (null: hidden/heads), intermediate_size
// 3072, use_bias false, tie_word_embeddings true. Baidu's first config.json
// for ERNIE-4.5-0.3B-PT names its remote-code class Ernie4_5_ForCausalLM,
// which vLLM registers to the same model (Ernie4_5ForCausalLM is "New class
// for Ernie4_5_ForCausalLM" in its registry): both import here.
func hfErnie45(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	defKV, defHeadDim := min(2, d.Heads), int64(128)
	if c.isNull("num_key_value_heads") {
		defKV = d.Heads
	}
	if c.isNull("head_dim") {
		defHeadDim = h / d.Heads
	}
	if err := c.ernieAttention(d, defKV, defHeadDim); err != nil {
		return nil, err
	}
	if d.FFN, err = c.intOr(3072, 1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	bias, err := c.boolOr(false, "use_bias")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(true, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	var p pc
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, bias
	block := p.add(ernieAttentionParams(&p, d, bias), 2*p.linear(h, d.FFN, bias), p.linear(d.FFN, h, bias))
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, uniform(hm.Layers, block, *d), h, hm.untied(embed))
	return hm, nil
}

// ernieAttention reads num_key_value_heads (defKV when absent) and head_dim
// (defHeadDim when absent or null): getattr(config, "head_dim",
// hidden/heads) in both modeling files, so Ernie4_5_MoeConfig, which has no
// head_dim attribute, gives hidden/heads, and Ernie4_5Config its default
// 128 (hidden/heads when null).
func (c *hfConfig) ernieAttention(d *BlockDims, defKV, defHeadDim int64) error {
	var err error
	if d.KVHeads, err = c.kvHeads(defKV, d.Heads); err != nil {
		return err
	}
	if d.HeadDim, err = c.intOr(defHeadDim, 1, maxHeadDim, "head_dim"); err != nil {
		return err
	}
	if d.HeadDim == 0 {
		return c.errorf("hidden_size=%d is smaller than num_attention_heads=%d (add head_dim or fix the sizes)", d.Hidden, d.Heads)
	}
	return nil
}

// ernieAttentionParams is q/k/v/o with bias = use_bias and the block's two
// RMSNorms.
func ernieAttentionParams(p *pc, d *BlockDims, bias bool) int64 {
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	return p.add(p.linear(d.Hidden, q, bias), 2*p.linear(d.Hidden, kv, bias), p.linear(q, d.Hidden, bias), 2*d.Hidden)
}
