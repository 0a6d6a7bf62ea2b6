package scenarios

// hfQwen3Next imports Qwen3NextForCausalLM (Qwen3-Next-80B-A3B), the first
// hybrid linear-attention model zerosim reads (hfQwenHybrid builds it, and
// Qwen3.5's and Qwen3.6's decoder with hfQwen35's departures): the module
// tree of models/qwen3_next/modeling_qwen3_next.py
// @ 01cdc6081c7500f9e50c98b1b943c90ecb665db3:
//
//   - Qwen3NextDecoderLayer i builds Qwen3NextGatedDeltaNet (linear_attn)
//     when layer_types[i] is "linear_attention" and Qwen3NextAttention
//     (self_attn) when "full_attention"; Qwen3NextConfig
//     (configuration_qwen3_next.py @ 008e574391258935f3ecc3035c882e73bbcac419)
//     fills an absent layer_types from full_attention_interval (default 4):
//     layer i is linear unless (i+1) % interval == 0, so every fourth layer
//     is full attention.
//   - Qwen3NextAttention, the gated attention: q_proj Linear(h,
//     heads·head_dim·2) whose second half is the output gate (attn_output ·
//     sigmoid(gate) before o_proj), k_proj and v_proj Linear(h,
//     kv_heads·head_dim), o_proj Linear(heads·head_dim, h), all four with
//     bias = attention_bias; q_norm and k_norm RMSNorm(head_dim), per head.
//     partial_rotary_factor (0.25) rotates part of each head: no
//     parameters.
//   - Qwen3NextGatedDeltaNet, with K = linear_num_key_heads ·
//     linear_key_head_dim and V = linear_num_value_heads ·
//     linear_value_head_dim: in_proj_qkvz Linear(h, 2K + 2V) and in_proj_ba
//     Linear(h, 2·value_heads), no biases; conv1d, a depthwise Conv1d over
//     the 2K + V channels of q, k and v with linear_conv_kernel_dim taps and
//     no bias ((2K + V)·kernel weights); dt_bias and A_log (value_heads
//     each); norm, a gated RMSNorm(linear_value_head_dim) shared by the
//     heads; out_proj Linear(V, h, bias=False). fix_query_key_value_ordering
//     views the projection per key head, so the value heads must be a
//     multiple of the key heads.
//   - input_ and post_attention_layernorm RMSNorm(h); layer i holds
//     Qwen3NextSparseMoeBlock when i is not in mlp_only_layers, num_experts
//     > 0 and (i+1) % decoder_sparse_step == 0, else
//     Qwen3NextMLP(intermediate_size). The MoE block: gate =
//     Qwen3NextTopKRouter, weight (num_experts, h), a bf16 Linear, fp32
//     softmax, top-num_experts_per_tok, renormalised under norm_topk_prob
//     (RouterSoftmaxTopK, as Qwen3-MoE's); experts, num_experts SwiGLU
//     MLPs of moe_intermediate_size; shared_expert
//     Qwen3NextMLP(shared_expert_intermediate_size) with
//     shared_expert_gate Linear(h, 1, bias=False), a sigmoid on the shared
//     expert's output (Qwen2-MoE's SharedGate).
//   - final norm; lm_head untied (tie_word_embeddings default false).
//   - Multi-token prediction: Qwen3NextPreTrainedModel ignores the
//     checkpoint's mtp.* tensors (_keys_to_ignore_on_load_unexpected), but
//     the published checkpoint stores them and its safetensors total counts
//     them (TestHFQwen3Next). vLLM's Qwen3NextMultiTokenPredictor
//     (vllm/model_executor/models/qwen3_next_mtp.py
//     @ ffdc985737c94233f2c88629c4450022e5bf4925) reads
//     num_nextn_predict_layers (default 1, which the published config
//     leaves out) modules of pre_fc_norm_embedding and pre_fc_norm_hidden
//     RMSNorm(h), fc Linear(2h, h, bias=False), one full-attention
//     Qwen3NextDecoderLayer and norm RMSNorm(h), on the main model's
//     embedding and output head: DeepSeek-V3's MTP module to the letter
//     (decoderBlocks). Qwen trains with it ("Multi-Token Prediction (MTP):
//     Boosts pretraining model performance", transformers'
//     docs/source/en/model_doc/qwen3_next.md), but the stacks that train
//     what transformers builds do not: it is left out with a note unless
//     model.mtp_layers builds it (mtpModules), and then counted as GLM's.
//
// Defaults are Qwen3NextConfig's: num_key_value_heads 2, head_dim 256,
// intermediate_size 5632, linear_conv_kernel_dim 4, linear_key_head_dim
// and linear_value_head_dim 128, linear_num_key_heads 16,
// linear_num_value_heads 32, decoder_sparse_step 1, moe_intermediate_size
// and shared_expert_intermediate_size 512, num_experts_per_tok 10,
// num_experts 512, norm_topk_prob true, attention_bias false.
func hfQwen3Next(c *hfConfig) (*HFModel, error) {
	return hfQwenHybrid(c, c, qwen3Next)
}

// qwenHybridKind is where a decoder of Qwen3-Next's family (the Gated
// DeltaNet and gated-attention hybrid) departs from Qwen3NextForCausalLM:
// its configuration class's defaults, which MLP its layers build, the key
// that counts its multi-token-prediction modules and the class named in
// messages.
type qwenHybridKind struct {
	// deltaNet is the linear-attention class, named when its heads do
	// not fit; why says what it does with them.
	deltaNet, why string
	// vocab, heads, maxPos: defaults (0: the key is required).
	vocab, heads, maxPos int64
	kvHeads, ffn         int64
	// experts and topK are the MoE defaults; sparse says which layers are
	// MoE: "qwen" (mlp_only_layers, decoder_sparse_step, Qwen3-Next's
	// rule), "all" (every layer, num_experts at least 1) or "none" (no
	// experts at all: the MoE keys are not read).
	experts, topK int64
	sparse        string
	// mtpKey counts the multi-token-prediction modules (default 1);
	// model is the transformers class that drops them (mtpNote).
	mtpKey, model string
}

var qwen3Next = qwenHybridKind{deltaNet: "Qwen3NextGatedDeltaNet", why: "splits the projection per key head",
	kvHeads: 2, ffn: 5632, experts: 512, topK: 10, sparse: "qwen", mtpKey: "num_nextn_predict_layers", model: "Qwen3NextForCausalLM"}

// hfQwenHybrid imports the text decoder of Qwen3-Next's family from tc
// (top holds quantization_config): see hfQwen3Next for the module tree and
// hfQwen35 for Qwen3.5's departures from it.
func hfQwenHybrid(top, tc *hfConfig, k qwenHybridKind) (*HFModel, error) {
	hm := &HFModel{}
	var err error
	d := &hm.Dims
	for _, x := range []struct {
		dst         *int64
		def, lo, hi int64
		key         string
	}{{&hm.Vocab, k.vocab, 1, maxVocab, "vocab_size"}, {&d.Hidden, 0, 1, maxHidden, "hidden_size"},
		{&hm.Layers, 0, 1, maxLayers, "num_hidden_layers"}, {&d.Heads, k.heads, 1, maxHidden, "num_attention_heads"},
		{&hm.MaxPositions, k.maxPos, 1, maxSeqLen, "max_position_embeddings"}} {
		if x.def > 0 || x.dst == &hm.MaxPositions {
			*x.dst, err = tc.intOr(x.def, x.lo, x.hi, x.key)
		} else {
			*x.dst, err = tc.int(x.lo, x.hi, x.key)
		}
		if err != nil {
			return nil, err
		}
	}
	h := d.Hidden
	if d.KVHeads, err = tc.kvHeads(min(k.kvHeads, d.Heads), d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = tc.intOr(256, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	var ffn int64 // intermediate_size: Qwen3.5-MoE's text config has none
	if k.sparse != "all" {
		if ffn, err = tc.intOr(k.ffn, 0, maxFFN, "intermediate_size"); err != nil {
			return nil, err
		}
	}
	var lin BlockDims // the Gated DeltaNet's dims
	lin.LinearAttention = LinearGatedDeltaNet
	for _, x := range []struct {
		dst *int64
		def int64
		hi  int64
		key string
	}{{&lin.LinearConvKernel, 4, maxHeadDim, "linear_conv_kernel_dim"}, {&lin.LinearKeyHeadDim, 128, maxHeadDim, "linear_key_head_dim"},
		{&lin.LinearValueHeadDim, 128, maxHeadDim, "linear_value_head_dim"}, {&lin.LinearKeyHeads, 16, maxHidden, "linear_num_key_heads"},
		{&lin.LinearValueHeads, 32, maxHidden, "linear_num_value_heads"}} {
		if *x.dst, err = tc.intOr(x.def, 1, x.hi, x.key); err != nil {
			return nil, err
		}
	}
	if lin.LinearValueHeads%lin.LinearKeyHeads != 0 {
		return nil, tc.errorf("%slinear_num_value_heads=%d is not a multiple of %slinear_num_key_heads=%d (%s %s; use a multiple)",
			tc.prefix, lin.LinearValueHeads, tc.prefix, lin.LinearKeyHeads, k.deltaNet, k.why)
	}
	var experts, topK, expertFFN, sharedFFN int64 // the MoE keys are not read without experts
	routerNorm := true                            // Qwen3.5-MoE's router always renormalises
	sparse := func(int64) bool { return experts > 0 }
	if k.sparse != "none" {
		lo := int64(0)
		if k.sparse == "all" {
			lo = 1
		}
		if experts, err = tc.intOr(k.experts, lo, maxExperts, "num_experts"); err != nil {
			return nil, err
		}
		if experts > 0 {
			if topK, err = tc.intOr(min(k.topK, experts), 1, experts, "num_experts_per_tok"); err != nil {
				return nil, err
			}
		}
		if expertFFN, err = tc.intOr(512, 1, maxFFN, "moe_intermediate_size"); err != nil {
			return nil, err
		}
		if sharedFFN, err = tc.intOr(512, 0, maxFFN, "shared_expert_intermediate_size"); err != nil {
			return nil, err
		}
	}
	if k.sparse == "qwen" {
		if routerNorm, err = tc.boolOr(true, "norm_topk_prob"); err != nil {
			return nil, err
		}
		if sparse, err = tc.qwenSparse(hm.Layers, experts); err != nil {
			return nil, err
		}
	}
	bias, err := tc.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	tied, err := top.boolOr(false, "tie_word_embeddings")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = tc.boolOr(tied, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	interval, err := tc.intOr(4, 1, maxLayers, "full_attention_interval")
	if err != nil {
		return nil, err
	}
	linear, err := tc.layerKinds("layer_types", "linear_attention", hm.Layers, func(i int64) bool { return (i+1)%interval != 0 })
	if err != nil {
		return nil, err
	}
	mtp, mtpCfg, mtpSet, err := tc.mtpModules(k.mtpKey, 1)
	if err != nil {
		return nil, err
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	full := p.add(p.linear(h, 2*q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, bias), 2*d.HeadDim)
	kw, vw := p.mul(lin.LinearKeyHeads, lin.LinearKeyHeadDim), p.mul(lin.LinearValueHeads, lin.LinearValueHeadDim)
	// Qwen3-Next's in_proj_qkvz and in_proj_ba, or Qwen3.5's in_proj_qkv,
	// in_proj_z, in_proj_b and in_proj_a: the same h·(2K + 2V + 2·value
	// heads) weights.
	gdn := p.add(p.linear(h, p.add(2*kw, 2*vw), false), p.linear(h, 2*lin.LinearValueHeads, false),
		p.mul(p.add(2*kw, vw), lin.LinearConvKernel), 2*lin.LinearValueHeads, lin.LinearValueHeadDim, p.linear(vw, h, false))
	mlp := func(f int64) int64 { return p.add(2*p.linear(h, f, false), p.linear(f, h, false)) }
	one := mlp(expertFFN)
	layer := func(i, extra int64) hfBlock {
		// Qwen3NextRMSNorm computes in fp32 up to its (1 + weight)
		// multiply: the input and post-attention norms of every layer and
		// the full-attention layers' per-head q_norm and k_norm
		// (modeling_qwen3_next.py @ 01cdc6081c75; Qwen3.5 imports it and
		// Qwen3NextAttention, modular_qwen3_5.py @ 8940358af742):
		// memory's normFP32Affine.
		bd := BlockDims{Hidden: h, Heads: d.Heads, KVHeads: d.KVHeads, HeadDim: d.HeadDim, OutputGate: true, QKNorm: QKNormGemma, QKVBias: bias, OBias: bias}
		mixer := full
		if i < hm.Layers && linear[i] {
			bd = lin
			bd.Hidden = h
			mixer = gdn
		}
		bd.Norms = NormsFP32
		dense := p.add(mixer, 2*h, extra)
		if !sparse(i) {
			bd.FFN = ffn
			return hfBlock{dense: p.add(dense, mlp(ffn)), dims: bd}
		}
		bd.Experts, bd.TopK, bd.ExpertFFN, bd.Router, bd.RouterNorm = experts, topK, expertFFN, RouterSoftmaxTopK, routerNorm
		// The gate weight, the shared expert and its sigmoid gate.
		dense = p.add(dense, p.mul(experts, h), mlp(sharedFFN), h)
		if sharedFFN > 0 {
			bd.SharedExperts, bd.SharedFFN, bd.SharedGate = 1, sharedFFN, true
		}
		return hfBlock{dense: dense, experts: p.mul(experts, one), activeExperts: p.mul(topK, one), dims: bd}
	}
	for i := range hm.Layers + mtp {
		if b := layer(i, 0); b.dims.Experts == 0 && ffn == 0 {
			return nil, tc.errorf("%sintermediate_size=0 but layer %d is dense (set intermediate_size)", tc.prefix, i)
		}
	}
	blocks := decoderBlocks(&p, hm.Layers, mtp, h, layer)
	d.OutputGate = true
	if experts > 0 {
		d.Experts, d.TopK, d.ExpertFFN, d.Router, d.RouterNorm = experts, topK, expertFFN, RouterSoftmaxTopK, routerNorm
		if sharedFFN > 0 {
			d.SharedExperts, d.SharedFFN, d.SharedGate = 1, sharedFFN, true
		}
	} else {
		d.FFN = ffn
	}
	var nLinear int64
	for _, on := range linear {
		if on {
			nLinear++
		}
	}
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, blocks, h, hm.untied(embed))
	if nLinear > 0 {
		hm.note("linear_attention: %d of the %d decoder blocks are Gated DeltaNet (linear attention), timed by their projections' and convolution's FLOPs and the chunked delta rule's 8·tokens·value_heads·key_head_dim·value_head_dim at the GEMM efficiency (MaxText's count); their activations are what causal-conv1d's and flash-linear-attention's kernels keep (memory.BlockTensors; the eager fallback without those packages keeps more and is not modelled)",
			nLinear, hm.Layers)
	}
	set := ""
	if !mtpSet {
		set = "vLLM's default; the published config leaves it out"
	}
	kind := "MoE"
	if experts == 0 {
		kind = "dense"
	}
	hm.mtpNote(mtp, mtpCfg, tc.prefix+k.mtpKey, set, "mtp.*: pre_fc_norm_embedding, pre_fc_norm_hidden, fc, one full-attention "+kind+" layer, norm", k.model,
		"Qwen pretrains with it")
	hm.quantizationNote(top, "Qwen publishes the bf16 weights as well")
	return hm, nil
}
