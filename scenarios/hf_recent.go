package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
)

// This file imports the architectures of DeepSeek-V2/V3 (multi-head latent
// attention, shared experts, multi-token prediction), gpt-oss (attention
// sinks, biased experts, alternating sliding-window attention), Gemma 3
// (5:1 sliding-window attention, QK-norm, the text decoder of the
// multimodal checkpoints) and Llama 4 (interleaved MoE and dense layers, a
// shared expert, chunked attention, the text decoder of the multimodal
// checkpoints). What zerosim cannot model of them is named in
// HFModel.Notes; sliding windows and attention chunks are carried in the
// blocks' dims (BlockDims.Window, AttentionChunk) and counted.

// note records an approximation or omission of the import (one line;
// sliding windows have WindowSummary instead, and Load's warnWindows,
// which depend on seq_len and the attention kernel).
func (hm *HFModel) note(format string, a ...any) {
	hm.Notes = append(hm.Notes, fmt.Sprintf(format, a...))
}

// windowPhrase says how the windowed blocks attend.
func (hm *HFModel) windowPhrase() string {
	if hm.Chunked {
		return fmt.Sprintf("attend only within chunks of %d tokens (attention_chunk_size)", hm.SlidingWindow)
	}
	return fmt.Sprintf("attend over a sliding window of %d tokens (sliding_window)", hm.SlidingWindow)
}

// isNull reports whether config.json gives key as null, which
// transformers reads as None (not as the key's default).
func (c *hfConfig) isNull(key string) bool {
	v, ok := c.get(key)
	return ok && v == nil
}

// softcap reads a tanh softcapping cap (Gemma 2's attn_logit_softcapping
// and final_logit_softcapping, which the modeling code applies when it is
// not None): on when key is a number > 0, off when it is null, def when it
// is absent.
func (c *hfConfig) softcap(def bool, key string) (bool, error) {
	v, ok := c.get(key)
	if !ok {
		return def, nil
	}
	if v == nil {
		return false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return false, c.errorf("%s%s is %s, not a number (use the cap, such as 30.0, or null for none)", c.prefix, key, describeJSON(v))
	}
	f, err := n.Float64()
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return false, c.errorf("%s%s=%s is not a positive number (use the cap, such as 30.0, or null for none)", c.prefix, key, clip(n.String()))
	}
	return true, nil
}

// window reads a sliding_window that every decoder layer applies (Mistral,
// Mixtral, Phi-3): def when the key is absent, none (0) when it is null,
// as getattr(config, "sliding_window", None) gives the attention.
func (c *hfConfig) window(def int64, key string) (int64, error) {
	if c.isNull(key) {
		return 0, nil
	}
	return c.intOr(def, 1, maxSeqLen, key)
}

// layerTypes reads layer_types (transformers' "sliding_attention" /
// "full_attention" per decoder layer), or builds it with sliding(i) when
// the key is absent, and returns how many layers slide. A list of another
// length than layers is an error naming the key.
func (c *hfConfig) layerTypes(key string, layers int64, sliding func(i int64) bool) ([]bool, error) {
	return c.layerKinds(key, "sliding_attention", layers, sliding)
}

// layerKinds is layerTypes with windowed the name of the windowed kind
// (Llama 4: "chunked_attention"); the other is "full_attention".
func (c *hfConfig) layerKinds(key, windowed string, layers int64, sliding func(i int64) bool) ([]bool, error) {
	v, ok := c.get(key)
	if !ok || v == nil {
		out := make([]bool, layers)
		for i := range layers {
			out[i] = sliding(i)
		}
		return out, nil
	}
	xs, isList := v.([]any)
	if !isList {
		return nil, c.errorf("%s%s is %s, not a list (use one %q or \"full_attention\" per layer)", c.prefix, key, describeJSON(v), windowed)
	}
	if int64(len(xs)) != layers {
		return nil, c.errorf("%s%s has %d entries for num_hidden_layers=%d (give one per layer)", c.prefix, key, len(xs), layers)
	}
	out := make([]bool, layers)
	for i, x := range xs {
		switch x {
		case windowed:
			out[i] = true
		case "full_attention":
		default:
			return nil, c.errorf("%s%s[%d] is %s (use %q or \"full_attention\")", c.prefix, key, i, describeJSON(x), windowed)
		}
	}
	return out, nil
}

// quantizationNote names a checkpoint's storage quantization, which the
// import does not carry: parameters are counted unquantized and train in
// the scenario's precision.
func (hm *HFModel) quantizationNote(c *hfConfig, trainedIn string) {
	qv, _ := c.get("quantization_config")
	q, ok := qv.(map[string]any)
	if !ok {
		return
	}
	method, _ := q["quant_method"].(string)
	if method == "" {
		method = "unnamed"
	}
	hm.note("quantization_config (%s) describes how the published checkpoint is stored; the parameters are counted unquantized and train in the scenario's precision (%s)", clip(method), trainedIn)
}

// deepseekDefaults are the configuration class defaults a DeepSeek
// config.json may leave out.
type deepseekDefaults struct {
	expertFFN, shared, firstDense int64
	// routed and topK are the MoE defaults (0: dense unless
	// n_routed_experts is given, and then num_experts_per_tok is required).
	routed, topK int64
}

// hfDeepseekV2 imports DeepSeek-V2 (models/deepseek_v2/modeling_deepseek_v2.py
// @ 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d, configuration_deepseek_v2.py
// @ 43e8548fef30c2cc98ee475ef3d478b9bb7b616f): see hfDeepseek. Defaults:
// moe_intermediate_size 1407, n_shared_experts none, n_routed_experts none
// (dense), first_k_dense_replace 0.
func hfDeepseekV2(c *hfConfig) (*HFModel, error) {
	return hfDeepseek(c, false, deepseekDefaults{expertFFN: 1407})
}

// hfDeepseekV3 imports DeepSeek-V3 / R1 and the models built on its class
// (Kimi K2, …): models/deepseek_v3/modeling_deepseek_v3.py
// @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3 and configuration_deepseek_v3.py
// @ 0fc683d1cd949b6c802499b77edd32206dbe86c6. The attention and MoE are
// V2's (hfDeepseek); the differences:
//
//   - DeepseekV3TopkRouter holds weight (n_routed_experts, h) and registers
//     e_score_correction_bias (n_routed_experts) as a persistent buffer, so
//     every checkpoint stores it (DeepSeek's own modeling_deepseek.py makes
//     it an nn.Parameter under topk_method "noaux_tc", copy at
//     github.com/tenstorrent/tt-metal models/demos/deepseek_v3/reference/
//     modeling_deepseek.py @ 29d2acd0a72102687be63d99cd56c4a9ab8fcf1a). It
//     is counted, as the published 671,026,419,200 counts it; it gets no
//     gradient (the auxiliary-loss-free balancing updates it by a rule,
//     DeepSeek-V3 report arXiv:2412.19437 §2.1.2), 256 numbers a layer.
//   - n_group / topk_group restrict each token's experts to topk_group of
//     n_group expert groups (node-limited routing, report §2.1.2): no
//     parameters; checked as the router's view needs (n_group divides
//     n_routed_experts, num_experts_per_tok fits in the chosen groups).
//   - num_nextn_predict_layers (default 0) multi-token-prediction modules:
//     transformers builds only num_hidden_layers layers (DeepseekV3Model:
//     range(config.num_hidden_layers)) and drops model.layers.61.* on load
//     (_keys_to_ignore_on_load_unexpected), so the stacks that train the
//     model transformers builds (the HF Trainer under DeepSpeed,
//     Accelerate, llm-foundry) never train it, and the import leaves it
//     out with a note (mtpModules). DeepSeek trains the MTP module with the
//     main model (report §2.2, "MTP Training Objective"; README_WEIGHTS.md:
//     "11.5B unique parameters (excluding the shared 0.9B Embedding and 0.9B
//     output Head)"): a stack that does too sets model.mtp_layers, and the
//     import counts each module as block.L+k / experts.L+k (the checkpoint's model.layers.L+k):
//     enorm and hnorm RMSNorm(h), eh_proj Linear(2h, h, bias=False), one
//     decoder layer (MoE by the same rule as the main layers) and
//     shared_head.norm RMSNorm(h); its embedding and output head are the
//     main model's (counted once). Layers then counts the MTP blocks too.
//
// Defaults are DeepseekV3Config's: moe_intermediate_size 2048,
// n_shared_experts 1, n_routed_experts 256, num_experts_per_tok 8,
// first_k_dense_replace 3, n_group 8, topk_group 4.
func hfDeepseekV3(c *hfConfig) (*HFModel, error) {
	return hfDeepseek(c, true, deepseekDefaults{expertFFN: 2048, shared: 1, firstDense: 3, routed: 256, topK: 8})
}

// hfDeepseek imports multi-head latent attention decoders — q_proj
// Linear(h, heads·(qk_nope+qk_rope)) when q_lora_rank is null, else
// q_a_proj Linear(h, q_lora_rank, bias=attention_bias), q_a_layernorm
// RMSNorm(q_lora_rank), q_b_proj Linear(q_lora_rank,
// heads·(qk_nope+qk_rope)); kv_a_proj_with_mqa Linear(h,
// kv_lora_rank+qk_rope, bias=attention_bias), kv_a_layernorm
// RMSNorm(kv_lora_rank), kv_b_proj Linear(kv_lora_rank,
// heads·(qk_nope+v_head_dim)), o_proj Linear(heads·v_head_dim, h,
// bias=attention_bias). Layer i is MoE when routed experts exist, i ≥
// first_k_dense_replace and i % moe_layer_freq == 0 (DeepSeek's remote
// modeling_deepseek.py; transformers' ports check only
// first_k_dense_replace, the same for moe_layer_freq 1): gate weight
// (n_routed_experts, h), n_routed_experts experts and one shared MLP of
// moe_intermediate_size·n_shared_experts. Shared defaults: q_lora_rank
// 1536, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128,
// v_head_dim 128, moe_layer_freq 1. The block's head_dim is qk_nope+qk_rope
// (the score width); value_head_dim is v_head_dim (when it differs),
// rope_head_dim, q_lora_rank and kv_lora_rank are recorded for the
// activation model's low-rank tensors (memory/tensors.go mlaAttention) and
// the attention FLOPs (P·V at the value width the kernel runs,
// BlockDims.KernelValueDim); the MoE blocks' shared_ffn is
// moe_intermediate_size·n_shared_experts.
func hfDeepseek(c *hfConfig, v3 bool, def deepseekDefaults) (*HFModel, error) {
	nulls := deepseekV2NullFails
	if v3 {
		nulls = deepseekV3NullFails
	}
	if err := c.nullsFail(nulls); err != nil {
		return nil, err
	}
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if d.FFN, err = c.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if d.ExpertFFN, err = c.intOr(def.expertFFN, 1, maxFFN, "moe_intermediate_size"); err != nil {
		return nil, err
	}
	if d.KVHeads, err = c.intOr(d.Heads, 1, d.Heads, "num_key_value_heads"); err != nil {
		return nil, err
	}
	qLora, qLoraSet, err := c.intOpt(1, maxHidden, "q_lora_rank")
	if err != nil {
		return nil, err
	}
	if _, present := c.get("q_lora_rank"); !present {
		qLora, qLoraSet = 1536, true
	}
	kvLora, err := c.intOr(512, 1, maxHidden, "kv_lora_rank")
	if err != nil {
		return nil, err
	}
	rope, err := c.intOr(64, 0, maxHeadDim, "qk_rope_head_dim")
	if err != nil {
		return nil, err
	}
	nope, err := c.intOr(128, 0, maxHeadDim, "qk_nope_head_dim")
	if err != nil {
		return nil, err
	}
	vDim, err := c.intOr(128, 1, maxHeadDim, "v_head_dim")
	if err != nil {
		return nil, err
	}
	if rope+nope == 0 {
		return nil, c.errorf("qk_nope_head_dim + qk_rope_head_dim = 0 (use a head size > 0)")
	}
	d.HeadDim = nope + rope
	if vDim != d.HeadDim {
		d.ValueHeadDim = vDim
	}
	d.RopeHeadDim, d.KVLoRARank = rope, kvLora
	if qLoraSet {
		d.QLoRARank = qLora
	}
	routed, moeSet, err := c.intOpt(1, maxExperts, "n_routed_experts")
	if err != nil {
		return nil, err
	}
	if !moeSet && def.routed > 0 {
		if _, present := c.get("n_routed_experts"); !present {
			routed, moeSet = def.routed, true
		}
	}
	shared, err := c.intOr(def.shared, 0, maxExperts, "n_shared_experts")
	if err != nil {
		return nil, err
	}
	if moeSet {
		if def.topK > 0 {
			d.TopK, err = c.intOr(min(def.topK, routed), 1, routed, "num_experts_per_tok")
		} else {
			d.TopK, err = c.int(1, routed, "num_experts_per_tok")
		}
		if err != nil {
			return nil, err
		}
	}
	firstDense, err := c.intOr(def.firstDense, 0, maxLayers, "first_k_dense_replace")
	if err != nil {
		return nil, err
	}
	freq, err := c.intOr(1, 1, maxLayers, "moe_layer_freq")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(false, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	bias, err := c.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	mlpBias := false
	if !v3 {
		// DeepseekV2MLP takes mlp_bias; DeepseekV3MLP has no biases.
		if mlpBias, err = c.boolOr(false, "mlp_bias"); err != nil {
			return nil, err
		}
	}
	var mtp, mtpCfg int64
	if v3 {
		if mtp, mtpCfg, _, err = c.mtpModules("num_nextn_predict_layers", 0); err != nil {
			return nil, err
		}
		if moeSet {
			if _, _, err := c.groupRouting(routed, d.TopK, 8, 4); err != nil {
				return nil, err
			}
			// DeepseekV3TopkRouter (memory.RouterTensors); it divides the
			// top-k weights by their sum when norm_topk_prob is set.
			d.Router = RouterDeepseekV3
			if d.RouterNorm, err = c.boolOr(true, "norm_topk_prob"); err != nil {
				return nil, err
			}
		}
	} else if moeSet {
		// DeepseekV2MoEGate (memory.RouterTensors) selects by topk_method
		// and ignores norm_topk_prob; for any method but "greedy" and
		// "group_limited_greedy", including the DeepseekV2Config default
		// 'gready' (configuration_deepseek_v2.py @ 43e8548f), it leaves
		// topk_weight unset: that router is not modelled.
		tm, _ := c.get("topk_method")
		switch v, _ := tm.(string); v {
		case "greedy":
			d.Router = RouterDeepseekV2
		case "group_limited_greedy":
			d.Router = RouterDeepseekV2Group
		}
	}

	var p pc
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, mlpBias
	heads := d.Heads
	var q int64
	if qLoraSet {
		q = p.add(p.linear(h, qLora, bias), qLora, p.linear(qLora, p.mul(heads, d.HeadDim), false))
	} else {
		q = p.linear(h, p.mul(heads, d.HeadDim), false)
	}
	attn := p.add(q, p.linear(h, kvLora+rope, bias), kvLora, p.linear(kvLora, p.mul(heads, nope+vDim), false),
		p.linear(p.mul(heads, vDim), h, bias))
	mlp := func(ffn int64) int64 { return p.add(2*p.linear(h, ffn, mlpBias), p.linear(ffn, h, mlpBias)) }
	router := func() int64 {
		r := p.mul(routed, h)
		if v3 {
			r = p.add(r, routed) // e_score_correction_bias
		}
		return r
	}
	layer := func(i, extra int64) hfBlock {
		bd := *d
		if moeSet && i >= firstDense && i%freq == 0 {
			bd.FFN, bd.Experts, bd.SharedExperts = 0, routed, shared
			dense := p.add(attn, 2*h, router(), extra)
			if shared > 0 {
				bd.SharedFFN = p.mul(d.ExpertFFN, shared)
				dense = p.add(dense, mlp(bd.SharedFFN))
			}
			one := mlp(d.ExpertFFN)
			return hfBlock{dense: dense, experts: p.mul(routed, one), activeExperts: p.mul(d.TopK, one), dims: bd}
		}
		bd.ExpertFFN, bd.TopK, bd.Router, bd.RouterNorm = 0, 0, "", false
		return hfBlock{dense: p.add(attn, 2*h, mlp(d.FFN), extra), dims: bd}
	}
	blocks := decoderBlocks(&p, hm.Layers, mtp, h, layer)
	if moeSet {
		d.Experts, d.SharedExperts = routed, shared
		if shared > 0 {
			d.SharedFFN = p.mul(d.ExpertFFN, shared)
		}
	} else {
		d.ExpertFFN, d.TopK = 0, 0
	}
	embed := p.mul(hm.Vocab, h)
	head := hm.untied(embed)
	hm.assemble(&p, embed, blocks, h, head)
	if v3 {
		hm.mtpNote(mtp, mtpCfg, "num_nextn_predict_layers", "", layerTensors(hm.Layers, mtpCfg), "DeepseekV3Model", "DeepSeek trains one, report §2.2")
	}
	if v3 && moeSet {
		ng, tg, _ := c.groupRouting(routed, d.TopK, 8, 4)
		hm.groupNote(ng, tg, d.TopK)
	}
	if v3 {
		hm.quantizationNote(c, "DeepSeek-V3 trained its GEMMs in fp8: see training.fp8")
	}
	return hm, nil
}

// decoderBlocks is layer(i, 0) for each of the layers decoder layers, then
// mtp multi-token-prediction modules (DeepSeek-V3, GLM-4.5): each is a
// decoder layer with enorm and hnorm RMSNorm(h), eh_proj Linear(2h, h,
// bias=False) and shared_head.norm RMSNorm(h) added (extra), marked MTP.
func decoderBlocks(p *pc, layers, mtp, h int64, layer func(i, extra int64) hfBlock) []hfBlock {
	var blocks []hfBlock
	for i := range layers {
		blocks = append(blocks, layer(i, 0))
	}
	for k := range mtp {
		b := layer(layers+k, p.add(3*h, p.linear(2*h, h, false)))
		b.dims.MTP = true
		blocks = append(blocks, b)
	}
	return blocks
}

// mtpModules reads key, the multi-token-prediction modules the checkpoint
// holds (def when absent; set says whether the config gives it), and
// returns build, how many of them the import builds: none unless the
// stack builds them (hfMTP: model.mtp_layers), because transformers'
// modeling code builds only num_hidden_layers decoder layers and drops the
// checkpoint's MTP tensors on load (each architecture's citation), and
// the stacks that train what transformers builds (the HF Trainer under
// DeepSpeed, Accelerate, llm-foundry's hf_causal_lm) therefore never train
// them.
func (c *hfConfig) mtpModules(key string, def int64) (build, inConfig int64, set bool, err error) {
	_, _, set = c.lookup([]string{key})
	if inConfig, err = c.intOr(def, 0, maxLayers, key); err != nil {
		return 0, 0, false, err
	}
	if c.mtp == nil {
		return 0, inConfig, set, nil
	}
	c.mtp.used = true
	return max(c.mtp.layers, 0), inConfig, set, nil
}

// mtpNote says what became of the multi-token-prediction modules: with
// build > 0 (model.mtp_layers) the last build blocks are those modules,
// counted and run with their extra pass through the shared output head
// (trainedBy cites who trains them), and hm.Layers counts them; else
// (inConfig > 0) that the checkpoint's modules, which model (the
// transformers class) does not build, are left out, and how to include
// them. key names the config's count (with its prefix; dflt says where
// the count comes from when the config leaves it out) and tensors what
// the checkpoint stores of them.
func (hm *HFModel) mtpNote(build, inConfig int64, key, dflt, tensors, model, trainedBy string) {
	if dflt != "" {
		dflt = ", " + dflt
	}
	if build == 0 {
		if dflt != "" {
			dflt = " (" + dflt[2:] + ")"
		}
		if inConfig > 0 {
			hm.note("%s=%d%s: the multi-token-prediction module%s (the checkpoint's %s) %s not counted or simulated: transformers' %s builds only the decoder layers and drops %s on load, so the stacks that train the model transformers builds (the HF Trainer under DeepSpeed, Accelerate, llm-foundry) do not train %s; if your stack trains %s (%s), set model.mtp_layers: %d beside model.hf_config (zerosim import hf --mtp-layers %d)",
				key, inConfig, dflt, plural(inConfig), tensors, isAre(inConfig), model, themIt(inConfig), themIt(inConfig), themIt(inConfig), trainedBy, inConfig, inConfig)
		}
		return
	}
	which := fmt.Sprintf("block (block.%d) is", hm.Layers)
	if build > 1 {
		which = fmt.Sprintf("blocks (block.%d to block.%d) are", hm.Layers, hm.Layers+build-1)
	}
	hm.note("model.mtp_layers=%d (%s=%d%s): the multi-token-prediction %s counted and trained as the stack builds %s (%s; the checkpoint's %s, which transformers' %s drops); each module's extra pass through the shared output head (2·tokens·hidden·vocab FLOPs forward, its logits and loss) is simulated on lm_head",
		build, key, inConfig, dflt, which, themIt(build), trainedBy, tensors, model)
	hm.Layers += build
}

// layerTensors names the checkpoint tensors of n modules stored after
// the first decoder layers: model.layers.61.* (to model.layers.62.*).
func layerTensors(first, n int64) string {
	if n > 1 {
		return fmt.Sprintf("model.layers.%d.* to model.layers.%d.*", first, first+n-1)
	}
	return fmt.Sprintf("model.layers.%d.*", first)
}

// plural is "s" unless n is 1.
func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// isAre is "is" for one, "are" for more.
func isAre(n int64) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// themIt is "it" for one, "them" for more.
func themIt(n int64) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// groupNote names node-limited routing (topk_group of n_group expert
// groups). The routed-experts layers carry it for a deduplicating
// dispatcher (BlockDims.RouterGroups), and so does hm.routing for the
// note's wording (nodeLimited.note), which depends on the dispatcher.
func (hm *HFModel) groupNote(ng, tg, topK int64) {
	if tg < ng {
		for _, l := range hm.LayerList {
			if l.Group == GroupExpert && l.Dims != nil {
				l.Dims.RouterGroups, l.Dims.RouterGroupTopK = ng, tg
			}
		}
		hm.routing = &nodeLimited{groups: ng, kept: tg, topK: topK, at: len(hm.Notes)}
		hm.Notes = append(hm.Notes, hm.routing.note(DispatchAllToAll))
	}
}

// nodeLimited is a model's node-limited routing: each token's top-k
// experts lie in kept of groups expert groups; at is its note's index in
// HFModel.Notes.
type nodeLimited struct {
	groups, kept, topK int64
	at                 int
}

// note says the routing limit and whether dispatcher d's traffic follows
// it: alltoall sends every token's top-k copies regardless; a
// deduplicating dispatcher's bytes depend on which nodes the kept groups
// lie on (zero's dedupBytes).
func (r *nodeLimited) note(d MoEDispatcher) string {
	n := fmt.Sprintf("n_group=%d, topk_group=%d: each token's experts lie in %d of %d expert groups (node-limited routing)", r.groups, r.kept, r.kept, r.groups)
	if d.Dedup() {
		return n + ", which the " + string(d) + " dispatcher's traffic follows"
	}
	return n + fmt.Sprintf("; zerosim's all-to-all sends every token's top-%d copies without that limit", r.topK)
}

// groupRouting checks n_group and topk_group (defaults defGroup and
// defTopK, topk_group at most n_group) as DeepseekV3TopkRouter and
// Glm4MoeTopkRouter use them: the experts split into n_group equal groups,
// topk_group of them are kept, and num_experts_per_tok experts must fit in
// those. It returns both.
func (c *hfConfig) groupRouting(routed, topK, defGroup, defTopK int64) (ng, tg int64, err error) {
	if ng, err = c.intOr(defGroup, 1, routed, "n_group"); err != nil {
		return 0, 0, err
	}
	if routed%ng != 0 {
		return 0, 0, c.errorf("n_group=%d does not divide n_routed_experts=%d (use a divisor of %d)", ng, routed, routed)
	}
	if tg, err = c.intOr(min(defTopK, ng), 1, ng, "topk_group"); err != nil {
		return 0, 0, err
	}
	if topK > tg*(routed/ng) {
		return 0, 0, c.errorf("num_experts_per_tok=%d exceeds the %d experts of topk_group=%d groups (raise topk_group or lower num_experts_per_tok)", topK, tg*(routed/ng), tg)
	}
	return ng, tg, nil
}

// hfGptOss imports gpt-oss (models/gpt_oss/modeling_gpt_oss.py
// @ 6edf5b311854175ff83c59179b3360beca1ceffc, configuration_gpt_oss.py
// @ 828a27fd326e49d4a1c4b08210bfd32c107facc9): per layer input_ and
// post_attention_layernorm RMSNorm(h); q_proj Linear(h, heads·head_dim),
// k_proj and v_proj Linear(h, kv_heads·head_dim), o_proj
// Linear(heads·head_dim, h), each with a bias when attention_bias
// (bias=config.attention_bias; GptOssConfig sets attention_bias = True
// before super().__init__(**kwargs), and PretrainedConfig.__init__ then
// sets every remaining kwarg as an attribute — "Additional attributes
// without default values", configuration_utils.py at
// bdf52342d8e725ea54973b3e3593be4717e9c1b0 — so the file's
// "attention_bias": false builds them without: QA s31 L4, 24 × (4096 + 512
// + 512 + 2880) = 192,000 parameters fewer on gpt-oss-20b); sinks, one learned logit
// per head (nn.Parameter(num_attention_heads)); router weight
// (num_local_experts, h) and bias (num_local_experts); experts
// gate_up_proj (E, h, 2·intermediate_size) + bias (E, 2·intermediate_size)
// and down_proj (E, intermediate_size, h) + bias (E, h),
// num_experts_per_tok (default 4) active; final norm; lm_head untied
// (tie_word_embeddings default false). head_dim defaults to 64, layer_types
// to sliding on even layers (index i slides when (i+1) % 2 ≠ 0),
// sliding_window to 128. The sinks add one column to each softmax, no
// matmul: zerosim leaves that out. The Hub checkpoints store the experts in
// MXFP4; the model was trained in bf16 before post-training quantization
// (gpt-oss model card, arXiv:2508.10925) and transformers dequantizes them
// to bf16 for training, so the parameters are counted unquantized.
func hfGptOss(c *hfConfig) (*HFModel, error) {
	hm, err := c.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if d.KVHeads, err = c.kvHeads(8, d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = c.intOr(64, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.ExpertFFN, err = c.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if d.Experts, err = c.int(1, maxExperts, "num_local_experts"); err != nil {
		return nil, err
	}
	// num_experts_per_tok alone: experts_per_token, the name in OpenAI's
	// original checkpoint config that the Hub's config.json repeats, is no
	// alias of it. GptOssConfig.__init__ takes num_experts_per_tok=4 and
	// hands any other key to PretrainedConfig, which keeps it as an unused
	// attribute (configuration_gpt_oss.py at
	// 828a27fd326e49d4a1c4b08210bfd32c107facc9), and its attribute_map
	// maps num_experts alone (at 02b8f42b4240dddea1b27c45d2dc95fb2682f841,
	// the @strict dataclass: num_experts_per_tok: int = 4), so a file with
	// experts_per_token only builds 4 experts per token.
	if d.TopK, err = c.intOr(min(4, d.Experts), 1, d.Experts, "num_experts_per_tok"); err != nil {
		return nil, err
	}
	if hm.Tied, err = c.boolOr(false, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	if err := c.nullFails("sliding_window", gptOssNullWindow, 128); err != nil {
		return nil, err
	}
	w, err := c.intOr(128, 1, maxSeqLen, "sliding_window")
	if err != nil {
		return nil, err
	}
	kinds, err := c.layerTypes("layer_types", hm.Layers, func(i int64) bool { return (i+1)%2 != 0 })
	if err != nil {
		return nil, err
	}
	hm.setWindows(w, false, kinds)
	bias, err := c.boolOr(true, "attention_bias")
	if err != nil {
		return nil, err
	}
	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	attn := p.add(p.linear(h, q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, bias), d.Heads)
	d.QKVBias, d.OBias, d.MLPBias = bias, bias, true
	one := p.add(p.linear(h, 2*d.ExpertFFN, true), p.linear(d.ExpertFFN, h, true))
	var blocks []hfBlock
	for range hm.Layers {
		bd := *d
		// GptOssTopKRouter and GptOssExperts' training loop
		// (memory.RouterTensors).
		bd.Router = RouterGptOss
		blocks = append(blocks, hfBlock{dense: p.add(attn, 2*h, p.linear(h, d.Experts, true)),
			experts: p.mul(d.Experts, one), activeExperts: p.mul(d.TopK, one), dims: bd})
	}
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, blocks, h, hm.untied(embed))
	hm.quantizationNote(c, "gpt-oss was trained in bf16 and quantized afterwards")
	return hm, nil
}

// WindowSummary is the import's line on sliding windows and attention
// chunks ("" without windowed blocks): the blocks carry them in their dims
// (BlockDims.Window, AttentionChunk), which zero counts per attention
// kernel (zero's blockMask).
func (hm *HFModel) WindowSummary() string {
	if hm.SlidingWindow <= 0 || hm.WindowLayers == 0 {
		return ""
	}
	flash := "training.attention flash counts only the pairs the mask keeps"
	if hm.Chunked {
		// create_chunked_causal_mask (src/transformers/masking_utils.py @
		// 2ccc6cae21faaf11631efa5fb9054687ae5dc931) raises for
		// flash_attention_2 once kv_length exceeds the chunk.
		flash += ", as FlexAttention runs them (transformers' flash_attention_2 refuses chunks past one)"
	}
	return fmt.Sprintf("%d of the %d decoder blocks %s: at seq_len above %d %s; sdpa (which transformers hands the mask from seq_len %d on) and eager count every score, so set training.attention to the attn_implementation the run loads the model with",
		hm.WindowLayers, hm.Layers, hm.windowPhrase(), hm.SlidingWindow, flash, hm.SlidingWindow)
}

// hfGemma3 imports Gemma 3's text decoder (models/gemma3/modeling_gemma3.py
// @ f14d0cbc824e447ef294d8cdc0f8ad4222f3dfee, configuration_gemma3.py
// @ d98ac17cc00f337eeee9a1e2380072dc8cafabd4): Gemma3ForCausalLM reads the
// top-level keys; Gemma3ForConditionalGeneration reads text_config and
// imports its language_model and lm_head only (the SigLIP vision_tower and
// multi_modal_projector are noted, not counted: zerosim simulates the
// decoder on text tokens). Per layer q_proj Linear(h, heads·head_dim),
// k_proj, v_proj Linear(h, kv_heads·head_dim), o_proj, biases =
// attention_bias (default false); q_norm and k_norm RMSNorm(head_dim);
// input_, post_attention_, pre_feedforward_ and post_feedforward_layernorm
// RMSNorm(h); gate/up/down without bias; final norm; lm_head tied
// (tie_word_embeddings default true). Gemma3TextConfig defaults, which the
// multimodal checkpoints' text_config relies on (gemma-3-4b-it gives
// neither heads nor vocab_size): vocab_size 262208, num_attention_heads 8,
// num_key_value_heads 4, head_dim 256, sliding_window 4096,
// sliding_window_pattern 6 (layer i slides unless (i+1) % 6 == 0; later
// versions spell it layer_types, which is read when present).
func hfGemma3(c *hfConfig) (*HFModel, error) {
	arch, _ := c.architecture()
	tc := c
	var err error
	if arch == "Gemma3ForConditionalGeneration" {
		if tc, err = c.textConfig(arch); err != nil {
			return nil, err
		}
	}
	hm := &HFModel{}
	if hm.Vocab, err = tc.intOr(262208, 1, maxVocab, "vocab_size"); err != nil {
		return nil, err
	}
	d := &hm.Dims
	if d.Hidden, err = tc.int(1, maxHidden, "hidden_size"); err != nil {
		return nil, err
	}
	if hm.Layers, err = tc.int(1, maxLayers, "num_hidden_layers"); err != nil {
		return nil, err
	}
	if d.Heads, err = tc.intOr(8, 1, maxHidden, "num_attention_heads"); err != nil {
		return nil, err
	}
	if d.KVHeads, err = tc.kvHeads(min(4, d.Heads), d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = tc.intOr(256, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.FFN, err = tc.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if hm.MaxPositions, err = tc.intOr(131072, 1, maxSeqLen, "max_position_embeddings"); err != nil {
		return nil, err
	}
	tied, err := c.boolOr(true, "tie_word_embeddings")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = tc.boolOr(tied, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	bias, err := tc.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	w, err := tc.intOr(4096, 1, maxSeqLen, "sliding_window")
	if err != nil {
		return nil, err
	}
	pattern, err := tc.intOr(6, 1, maxLayers, "sliding_window_pattern")
	if err != nil {
		return nil, err
	}
	kinds, err := tc.layerTypes("layer_types", hm.Layers, func(i int64) bool { return (i+1)%pattern != 0 })
	if err != nil {
		return nil, err
	}
	hm.setWindows(w, false, kinds)
	// Gemma3RMSNorm computes in fp32 up to its (1 + weight) multiply, in
	// the four hidden-size norms and in q_norm and k_norm (QKNormGemma,
	// NormsGemma). Gemma3ForCausalLM.forward softcaps the logits when
	// final_logit_softcapping is not None (Gemma3TextConfig default None);
	// Gemma3ForConditionalGeneration.forward never does, and
	// Gemma3Attention passes no softcap to the attention function
	// (modeling_gemma3.py @ 0018aa647bb13801f061e2d1027c326f531b59fb).
	d.QKNorm, d.Norms = QKNormGemma, NormsGemma
	if arch == "Gemma3ForCausalLM" {
		if hm.LogitSoftcap, err = tc.softcap(false, "final_logit_softcapping"); err != nil {
			return nil, err
		}
	}
	h := d.Hidden
	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	d.QKVBias, d.OBias = bias, bias
	block := p.add(p.linear(h, q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, bias), 2*d.HeadDim, 4*h,
		2*p.linear(h, d.FFN, false), p.linear(d.FFN, h, false))
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, uniform(hm.Layers, block, *d), h, hm.untied(embed))
	if tc != c {
		if _, ok := c.get("vision_config"); ok {
			hm.note("vision_config: the SigLIP vision tower and multi-modal projector of Gemma3ForConditionalGeneration are not imported; zerosim simulates the text decoder (language_model and lm_head) on text tokens")
		}
	}
	return hm, nil
}

// overrideTextLayers applies a num_hidden_layers override (model.layers)
// inside text_config too, fits the per-layer lists (layer_types,
// no_rope_layers) to the new depth and drops text_config.moe_layers entries
// past it (Llama 4). A shorter model keeps the lists' first entries; a
// deeper one (zerosim fit's largest model, model.layers above the file's)
// continues them with their own period, so gpt-oss's alternating windows,
// Gemma 3's five sliding layers to one global and Llama 4's NoPE layer every
// fourth carry on as the file lays them out (a list with no shorter period
// repeats whole).
// top is the file's own top-level depth (num_hidden_layers or n_layer;
// absent: nil): a list is continued only when it had one entry per layer
// of the file, so a list the file itself gets wrong is still named.
func overrideTextLayers(m map[string]any, layers int64, top any) {
	var text any
	if tc := asObject(m["text_config"]); tc != nil {
		text = tc["num_hidden_layers"]
		tc["num_hidden_layers"] = json.Number(fmt.Sprint(layers))
	}
	for _, x := range []struct {
		mm    map[string]any
		depth any
	}{{m, top}, {asObject(m["text_config"]), text}} {
		mm := x.mm
		for _, k := range []string{"layer_types", "no_rope_layers"} {
			xs, ok := mm[k].([]any)
			if !ok || len(xs) == 0 {
				continue
			}
			if int64(len(xs)) >= layers || x.depth == json.Number(fmt.Sprint(len(xs))) {
				mm[k] = fitPeriodic(xs, layers)
			}
		}
		if xs, ok := mm["moe_layers"].([]any); ok {
			keep := []any{}
			for _, x := range xs {
				if n, ok := x.(json.Number); !ok {
					keep = append(keep, x) // the importer names it
				} else if i, err := n.Int64(); err != nil || i < layers {
					keep = append(keep, x)
				}
			}
			mm["moe_layers"] = keep
		}
	}
}

// fitPeriodic returns xs cut or continued to n entries: entry i of a
// longer list is xs[i mod p], p the shortest period of xs (the least p with
// xs[i] = xs[i−p] for every i ≥ p; len(xs) when there is none shorter).
// Entries that are not JSON scalars count as unequal, so a malformed list
// repeats whole and the importer names the bad entry.
func fitPeriodic(xs []any, n int64) []any {
	if int64(len(xs)) >= n {
		return xs[:n]
	}
	p := len(xs)
	for q := 1; q < len(xs); q++ {
		periodic := true
		for i := q; i < len(xs) && periodic; i++ {
			periodic = scalarEqual(xs[i], xs[i-q])
		}
		if periodic {
			p = q
			break
		}
	}
	out := make([]any, n)
	for i := range out {
		out[i] = xs[i%p]
	}
	return out
}

// scalarEqual reports whether a and b are the same JSON string, number or
// boolean.
func scalarEqual(a, b any) bool {
	switch a.(type) {
	case string, json.Number, bool:
		return a == b
	}
	return false
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// hfLlama4 imports Llama 4's text decoder (models/llama4/modeling_llama4.py
// @ 63210d0e3b74c2119b7998ff65bc6a2729283626; Llama4TextConfig defaults from
// configuration_llama4.py @ 008e574391258935f3ecc3035c882e73bbcac419):
// Llama4ForCausalLM reads the top-level keys; Llama4ForConditionalGeneration
// reads text_config and imports language_model only (the vision_model and
// multi_modal_projector are noted, not counted, as Gemma 3's). Per layer
// input_ and post_attention_layernorm RMSNorm(h); q_proj Linear(h,
// heads·head_dim), k_proj, v_proj Linear(h, kv_heads·head_dim), o_proj,
// biases = attention_bias (default false); use_qk_norm's qk_norm is
// Llama4TextL2Norm, without a weight, and attn_temperature_tuning scales the
// NoPE layers' queries elementwise: neither has parameters. Layer i is MoE
// when it is in moe_layers (default: i = step-1, 2·step-1, … for
// interleave_moe_layer_step, so Scout's step 1 makes every layer MoE and
// Maverick's 2 every other one): Llama4TextMoe holds router Linear(h,
// num_local_experts, bias=False) (top-num_experts_per_tok of its logits
// through a sigmoid, default top-1), experts gate_up_proj (E, h,
// 2·intermediate_size) and down_proj (E, intermediate_size, h) without
// biases, and shared_expert Llama4TextMLP(intermediate_size), which every
// token goes through (no gate); the other layers hold Llama4TextMLP of
// intermediate_size_mlp. Final norm; lm_head untied (tie_word_embeddings
// default false). Defaults: num_key_value_heads 8, head_dim 128,
// num_local_experts 16, num_experts_per_tok 1, interleave_moe_layer_step 1.
//
// Attention: layer i uses RoPE when no_rope_layers[i] is 1 (default: every
// no_rope_layer_interval-th layer, 4, is a NoPE layer); layer_types
// defaults to "chunked_attention" for the RoPE layers and "full_attention"
// for the NoPE ones, and a chunked layer attends only within its
// attention_chunk_size-token chunk (default 8192, null for none):
// HFModel.setWindows with chunked, BlockDims.AttentionChunk.
func hfLlama4(c *hfConfig) (*HFModel, error) {
	arch, _ := c.architecture()
	tc := c
	if arch == "Llama4ForConditionalGeneration" {
		var err error
		if tc, err = c.textConfig(arch); err != nil {
			return nil, err
		}
	}
	hm, err := tc.common([]string{"hidden_size"}, []string{"num_hidden_layers"}, []string{"num_attention_heads"}, []string{"max_position_embeddings"})
	if err != nil {
		return nil, err
	}
	d := &hm.Dims
	h := d.Hidden
	if d.KVHeads, err = tc.kvHeads(min(8, d.Heads), d.Heads); err != nil {
		return nil, err
	}
	if d.HeadDim, err = tc.intOr(128, 1, maxHeadDim, "head_dim"); err != nil {
		return nil, err
	}
	if d.ExpertFFN, err = tc.int(1, maxFFN, "intermediate_size"); err != nil {
		return nil, err
	}
	if d.Experts, err = tc.intOr(16, 1, maxExperts, "num_local_experts"); err != nil {
		return nil, err
	}
	if d.TopK, err = tc.intOr(1, 1, d.Experts, "num_experts_per_tok"); err != nil {
		return nil, err
	}
	step, err := tc.intOr(1, 1, maxLayers, "interleave_moe_layer_step")
	if err != nil {
		return nil, err
	}
	moeLayers, err := tc.intList("moe_layers", 0, hm.Layers-1)
	if err != nil {
		return nil, err
	}
	if v, ok := tc.get("moe_layers"); !ok || v == nil {
		moeLayers = nil
		for i := step - 1; i < hm.Layers; i += step {
			moeLayers = append(moeLayers, i)
		}
	}
	tied, err := c.boolOr(false, "tie_word_embeddings")
	if err != nil {
		return nil, err
	}
	if hm.Tied, err = tc.boolOr(tied, "tie_word_embeddings"); err != nil {
		return nil, err
	}
	bias, err := tc.boolOr(false, "attention_bias")
	if err != nil {
		return nil, err
	}
	// Chunked attention: attention_chunk_size null means none.
	chunk := int64(8192)
	if tc.isNull("attention_chunk_size") {
		chunk = 0
	} else if chunk, err = tc.intOr(8192, 1, maxSeqLen, "attention_chunk_size"); err != nil {
		return nil, err
	}
	rope, err := tc.ropeLayers(hm.Layers)
	if err != nil {
		return nil, err
	}
	chunked, err := tc.layerKinds("layer_types", "chunked_attention", hm.Layers, func(i int64) bool { return rope[i] })
	if err != nil {
		return nil, err
	}
	hm.setWindows(chunk, true, chunked)
	// Llama4TextAttention builds qk_norm, a Llama4TextL2Norm applied to the
	// queries and keys after RoPE, when use_qk_norm (Llama4TextConfig
	// default True; Scout true, Maverick false) and the layer uses RoPE.
	qkNorm, err := tc.boolOr(true, "use_qk_norm")
	if err != nil {
		return nil, err
	}

	var p pc
	q, kv := p.mul(d.Heads, d.HeadDim), p.mul(d.KVHeads, d.HeadDim)
	d.QKVBias, d.OBias = bias, bias
	attn := p.add(p.linear(h, q, bias), 2*p.linear(h, kv, bias), p.linear(q, h, bias), 2*h)
	mlp := func(ffn int64) int64 { return p.add(2*p.linear(h, ffn, false), p.linear(ffn, h, false)) }
	one := mlp(d.ExpertFFN)
	var dense int64 // intermediate_size_mlp, read when a layer is dense
	var blocks []hfBlock
	for i := range hm.Layers {
		bd := *d
		if qkNorm && rope[i] {
			bd.QKNorm = QKNormL2
		}
		if contains(moeLayers, i) {
			bd.SharedExperts, bd.SharedFFN = 1, d.ExpertFFN
			bd.Router = RouterLlama4 // Llama4Router, Llama4TextMoe (memory.RouterTensors)
			blocks = append(blocks, hfBlock{dense: p.add(attn, p.linear(h, d.Experts, false), one),
				experts: p.mul(d.Experts, one), activeExperts: p.mul(d.TopK, one), dims: bd})
			continue
		}
		if dense == 0 {
			if dense, err = tc.int(1, maxFFN, "intermediate_size_mlp"); err != nil {
				return nil, err
			}
		}
		bd.FFN, bd.Experts, bd.TopK, bd.ExpertFFN = dense, 0, 0, 0
		blocks = append(blocks, hfBlock{dense: p.add(attn, mlp(dense)), dims: bd})
	}
	d.FFN = dense
	if len(moeLayers) > 0 {
		d.SharedExperts, d.SharedFFN = 1, d.ExpertFFN
	} else {
		d.Experts, d.TopK, d.ExpertFFN = 0, 0, 0
	}
	embed := p.mul(hm.Vocab, h)
	hm.assemble(&p, embed, blocks, h, hm.untied(embed))
	if tc != c {
		if _, ok := c.get("vision_config"); ok {
			hm.note("vision_config: the vision model and multi-modal projector of Llama4ForConditionalGeneration are not imported; zerosim simulates the text decoder (language_model) on text tokens")
		}
	}
	hm.quantizationNote(c, "Meta publishes the bf16 weights as well")
	return hm, nil
}

// ropeLayers reads Llama 4's and SmolLM3's no_rope_layers (1: the layer uses RoPE, 0: a
// NoPE layer; at least one entry per layer), or, when it is absent, null or
// empty, builds it with a NoPE layer every no_rope_layer_interval layers
// (Llama4TextConfig: int((i+1) % interval != 0)).
func (c *hfConfig) ropeLayers(layers int64) ([]bool, error) {
	rope := make([]bool, layers)
	v, ok := c.get("no_rope_layers")
	xs, isList := v.([]any)
	if ok && v != nil && !isList {
		return nil, c.errorf("%sno_rope_layers is %s, not a list (use one 1 or 0 per layer)", c.prefix, describeJSON(v))
	}
	if len(xs) == 0 {
		interval, err := c.intOr(4, 1, maxLayers, "no_rope_layer_interval")
		if err != nil {
			return nil, err
		}
		for i := range rope {
			rope[i] = (int64(i)+1)%interval != 0
		}
		return rope, nil
	}
	if int64(len(xs)) < layers {
		return nil, c.errorf("%sno_rope_layers has %d entries for num_hidden_layers=%d (give one per layer)", c.prefix, len(xs), layers)
	}
	for i := range rope {
		switch x := xs[i].(type) {
		case json.Number:
			if x == "1" || x == "0" {
				rope[i] = x == "1"
				continue
			}
		case bool:
			rope[i] = x
			continue
		}
		return nil, c.errorf("%sno_rope_layers[%d] is %s (use 1 for a RoPE layer or 0 for a NoPE layer)", c.prefix, i, describeJSON(xs[i]))
	}
	return rope, nil
}
