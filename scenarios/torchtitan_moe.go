package scenarios

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// This file reads torchtitan's qwen3, deepseek_v3, gpt_oss and llama4
// models (model.name "qwen3", "deepseek_v3", "gpt_oss", "llama4") at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, all four under torchtitan/models/ there (not experiments/). Where a torchtitan model has the
// parameters of a transformers model, its flavor is written as that
// model's config.json and built by the Hugging Face importer (hf.go,
// hf_recent.go), so the layer list, expert dimensions and router are the
// ones `zerosim import hf` gives; the differences are said per model.

// ttHFFlavor is a torchtitan flavor as the config.json of the equivalent
// transformers model.
type ttHFFlavor struct {
	config string
	// attn is attn_type when not sdpa ("flex": block-causal mask).
	attn string
	// attnSince, when set, is the torchtitan commit that gave the flavor
	// attn: before it the flavor ran SDPA with a causal mask, which a
	// file ttDoc.preFlexDSV3 dates before it gets.
	attnSince string
	// expertBias marks a transformers model that counts a router bias
	// of one number per routed expert in every MoE layer which torchtitan
	// keeps as a buffer (DeepSeek-V3's e_score_correction_bias, torchtitan's
	// expert_bias): not a parameter, not sharded, no optimizer state.
	expertBias bool
	// flex marks a flavor whose FlexAttention mask leaves blocks out (a
	// sliding window, fixed attention blocks): written as
	// training.attention flash, with note saying why.
	flex string
	// noCP is why torchtitan refuses context_parallel_degree > 1 for the
	// flavor ("": it does not).
	noCP string
	// router, when set, replaces the router the Hugging Face builder marks
	// (BlockDims.Router) with the one whose saved tensors are torchtitan's.
	router     string
	routerNorm bool
	// notes are said of the flavor in the scenario's header.
	notes []string
}

// ttQwen3Flavors are qwen3_args of torchtitan/models/qwen3/__init__.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 (Qwen3ModelArgs,
// torchtitan/models/qwen3/model/args.py: enable_weight_tying default
// False, attention without bias, q_norm and k_norm RMSNorm(head_dim) as
// qk_norm=True). torchtitan's Qwen3Model (model/model.py) is transformers'
// Qwen3 / Qwen3-MoE: wq/wk/wv/wo as q/k/v/o_proj with head_dim 128,
// FeedForward w1/w2/w3 as gate/down/up_proj, and with moe_enabled every
// block's MLP is a MoE (decoder_sparse_step 1, no mlp_only_layers): router
// gate Linear(dim, num_experts, bias=False) and GroupedExperts of
// moe_inter_dim (torchtitan/models/moe/moe.py), softmax top-k with
// route_norm as norm_topk_prob. They differ in load balancing:
// torchtitan's MoE keeps expert_bias and tokens_per_expert as buffers
// (auxiliary-loss-free balancing) where transformers adds an auxiliary
// loss; neither is a parameter. max_position_embeddings changes no
// parameter (torchtitan's max_seq_len sizes the RoPE cache, and
// update_from_config sets it to training.seq_len, which the scenario's
// seq_len is); it is set to 4096 here, 16384 for deepseek_v3 (its
// DeepSeekV3ModelArgs default).
var ttQwen3Flavors = map[string]ttHFFlavor{
	"debugmodel":     {config: ttQwen3Dense(2048, 256, 8, 16, 8, 3072, true)},
	"0.6B":           {config: ttQwen3Dense(151936, 1024, 28, 16, 8, 3072, true)},
	"1.7B":           {config: ttQwen3Dense(151936, 2048, 28, 16, 8, 6144, true)},
	"4B":             {config: ttQwen3Dense(151936, 2560, 36, 32, 8, 9728, true)},
	"8B":             {config: ttQwen3Dense(151936, 4096, 36, 32, 8, 12288, false)},
	"14B":            {config: ttQwen3Dense(151936, 5120, 40, 40, 8, 17408, false)},
	"32B":            {config: ttQwen3Dense(151936, 5120, 64, 64, 8, 25600, false)},
	"debugmodel_moe": {config: ttQwen3MoE(2048, 256, 8, 16, 8, 3072, 768, 64, 8)},
	"30B-A3B":        {config: ttQwen3MoE(151936, 2048, 48, 32, 4, 6144, 768, 128, 8)},
	"235B-A22B":      {config: ttQwen3MoE(151936, 4096, 94, 64, 4, 12288, 1536, 128, 8)},
}

func ttQwen3Dense(vocab, dim, layers, heads, kv, hidden int64, tied bool) string {
	return fmt.Sprintf(`{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": %d, "hidden_size": %d, "num_hidden_layers": %d, "num_attention_heads": %d, "num_key_value_heads": %d, "head_dim": 128, "intermediate_size": %d, "attention_bias": false, "tie_word_embeddings": %t, "max_position_embeddings": 4096}`,
		vocab, dim, layers, heads, kv, hidden, tied)
}

// ttQwen3MoE: every qwen3 MoE flavor routes with softmax, route_norm=True,
// num_shared_experts=0 and leaves enable_weight_tying False.
func ttQwen3MoE(vocab, dim, layers, heads, kv, hidden, moeInter, experts, topK int64) string {
	return fmt.Sprintf(`{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "vocab_size": %d, "hidden_size": %d, "num_hidden_layers": %d, "num_attention_heads": %d, "num_key_value_heads": %d, "head_dim": 128, "intermediate_size": %d, "moe_intermediate_size": %d, "num_experts": %d, "num_experts_per_tok": %d, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "attention_bias": false, "tie_word_embeddings": false, "max_position_embeddings": 4096}`,
		vocab, dim, layers, heads, kv, hidden, moeInter, experts, topK)
}

// ttDeepseekFlavors are deepseekv3_args of
// torchtitan/models/deepseek_v3/__init__.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 (DeepSeekV3ModelArgs,
// torchtitan/models/deepseek_v3/model/args.py). torchtitan's
// DeepSeekV3Model (model/model.py) is transformers' DeepSeek-V2 /
// DeepSeek-V3 decoder: multi-head latent attention (wq when q_lora_rank
// is 0, else wq_a, q_norm, wq_b; wkv_a, kv_norm, wkv_b, wo, no biases),
// the first n_dense_layers blocks with a FeedForward of inter_dim
// (first_k_dense_replace), the others a MoE (torchtitan/models/moe/moe.py)
// with router gate Linear(dim, num_experts, bias=False), num_experts
// GroupedExperts of moe_inter_dim and one shared FeedForward of
// moe_inter_dim·num_shared_experts; an untied output Linear. The flavors
// with a softmax router and route_norm False ("debugmodel", "16B",
// "236B") are DeepSeek-V2's greedy or group-limited greedy routing
// (num_expert_groups, num_limited_groups as n_group, topk_group; 16B has
// DeepSeek-V2-Lite's dimensions, 236B DeepSeek-V2's); "671B" (sigmoid,
// route_norm, groups 8 and 4) is DeepSeek-V3's. They differ where
// expertBias says: torchtitan's router bias is a buffer. torchtitan's
// model has no multi-token-prediction module (num_nextn_predict_layers
// 0), which DeepSeek-V3 trained with.
var ttDeepseekFlavors = map[string]ttHFFlavor{
	"debugmodel":           {config: ttDeepseekV2(2048, 256, 1024, 256, 6, 1, 16, 8, 2, 3, 0, 0, 0)},
	"debugmodel_flex_attn": {config: ttDeepseekV2(2048, 256, 1024, 256, 6, 1, 16, 8, 2, 3, 0, 0, 0), attn: "flex"},
	"16B":                  {config: ttDeepseekV2(102400, 2048, 10944, 1408, 27, 1, 16, 64, 2, 6, 0, 0, 0), attn: "flex", attnSince: ttDSV3Flex},
	"236B":                 {config: ttDeepseekV2(102400, 5120, 12288, 1536, 60, 1, 128, 160, 2, 6, 1536, 8, 3), attn: "flex", attnSince: ttDSV3Flex},
	"671B": {config: `{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "first_k_dense_replace": 3, "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4, "norm_topk_prob": true, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_nextn_predict_layers": 0, "tie_word_embeddings": false, "max_position_embeddings": 16384}`,
		attn: "flex", attnSince: ttDSV3Flex, expertBias: true},
}

// ttDSV3Flex is the torchtitan commit that switched deepseek_v3's 16B,
// 236B and 671B flavors from SDPA with a causal mask (DeepSeekV3ModelArgs'
// defaults use_flex_attn False, attn_mask_type "causal",
// torchtitan/models/deepseek_v3/model/args.py lines 78-79 at its parent)
// to FlexAttention with a block-causal mask (use_flex_attn=True,
// attn_mask_type="block_causal" in each flavor,
// torchtitan/models/deepseek_v3/__init__.py at
// f738a03bf45e1c063aaffa6f7e4df2cfcb47de42, "Switch DeepSeekV3 to Use
// FlexAttention by Default"); debugmodel_flex_attn had it from its first
// commit (415f83445, 2025-07-21). That commit's message says SDPA's only
// backend for the flavors' heads (q and k 192 wide, v 128) was the
// memory-efficient kernel: FlashAttention-2 needs v as wide as q and k,
// and cuDNN refused the head size.
const ttDSV3Flex = "f738a03bf (2025-08-22)"

// ttDeepseekV2 is a DeepSeek-V2 config.json: q_lora_rank 0 is null (wq),
// groups 0 is greedy routing, else group-limited greedy.
func ttDeepseekV2(vocab, dim, inter, moeInter, layers, dense, heads, experts, shared, topK, qLora, groups, limited int64) string {
	q, route := "null", `"topk_method": "greedy"`
	if qLora > 0 {
		q = strconv.FormatInt(qLora, 10)
	}
	if groups > 0 {
		route = fmt.Sprintf(`"topk_method": "group_limited_greedy", "n_group": %d, "topk_group": %d`, groups, limited)
	}
	return fmt.Sprintf(`{"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": %d, "hidden_size": %d, "intermediate_size": %d, "moe_intermediate_size": %d, "num_hidden_layers": %d, "first_k_dense_replace": %d, "moe_layer_freq": 1, "num_attention_heads": %d, "num_key_value_heads": %d, "n_routed_experts": %d, "n_shared_experts": %d, "num_experts_per_tok": %d, %s, "q_lora_rank": %s, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "tie_word_embeddings": false, "max_position_embeddings": 16384}`,
		vocab, dim, inter, moeInter, layers, dense, heads, heads, experts, shared, topK, route, q)
}

// ttHFModels are the models read through the Hugging Face importer, with
// the file that defines their flavors.
var ttHFModels = map[string]struct {
	flavors map[string]ttHFFlavor
	file    string
}{
	"qwen3":       {ttQwen3Flavors, "torchtitan/models/qwen3/__init__.py"},
	"deepseek_v3": {ttDeepseekFlavors, "torchtitan/models/deepseek_v3/__init__.py"},
	"gpt_oss":     {ttGptOssFlavors, "torchtitan/models/gpt_oss/__init__.py"},
	"llama4":      {ttLlama4Flavors, "torchtitan/models/llama4/__init__.py"},
}

// readHFModel reads model.flavor of a model built through the Hugging
// Face importer.
func (t *Torchtitan) readHFModel(d *ttDoc, name, nk string) error {
	mdl := ttHFModels[name]
	flavor, fk, err := d.str("debugmodel", "model.flavor")
	if err != nil {
		return err
	}
	f, ok := mdl.flavors[flavor]
	if !ok {
		names := make([]string, 0, len(mdl.flavors))
		for n := range mdl.flavors {
			names = append(names, n)
		}
		sort.Strings(names)
		return d.errf(from(fk, from(nk, "model")), "model.flavor = %s is not a %s flavor zerosim imports (use one of %s: %s at %s)", strconv.Quote(flavor), name, strings.Join(names, ", "), mdl.file, TorchtitanCommit[:7])
	}
	cfgName := fmt.Sprintf("torchtitan %s %s", name, flavor)
	m, err := parseHF(cfgName, []byte(f.config))
	if err != nil {
		return fmt.Errorf("%s: %w", d.at(fk), err)
	}
	hm, err := importHF(cfgName, []byte(f.config), m, 0, -1)
	if err != nil {
		return fmt.Errorf("%s: %w", d.at(fk), err)
	}
	if f.expertBias {
		for i := range hm.LayerList {
			if l := &hm.LayerList[i]; l.Group != GroupExpert && l.Dims != nil && l.Dims.Experts > 0 {
				l.Params -= units.Count(l.Dims.Experts)
				hm.Total -= l.Dims.Experts
				hm.Active -= l.Dims.Experts
			}
		}
	}
	if f.router != "" {
		for i := range hm.LayerList {
			if d := hm.LayerList[i].Dims; d != nil && d.Router != "" {
				d.Router, d.RouterNorm = f.router, f.routerNorm
			}
		}
	}
	t.Flavor, t.HF, t.Params = flavor, hm, hm.Total
	t.noCP = f.noCP
	t.Model = Model{Kind: KindTransformer, Arch: ArchHF, Hidden: hm.Dims.Hidden, Layers: hm.Layers, Heads: hm.Dims.Heads,
		KVHeads: hm.Dims.KVHeads, FFN: hm.FFN(), Vocab: hm.Vocab, LayerList: hm.LayerList}
	for _, n := range hm.Notes {
		t.note("%s", n)
	}
	switch k, by := d.preFlexDSV3(); {
	case f.attnSince != "" && k != "":
		// Set, so that gqaAttention and readCuDNNEra leave it and its
		// kernel alone.
		t.Attention = AttentionSDPA
		t.src("attention", fmt.Sprintf("%s dates the file before torchtitan %s: flavor %s ran SDPA with a causal mask", k, f.attnSince, flavor))
		t.note("model.flavor %s ran SDPA with a causal mask until torchtitan %s gave it %s attention with a block-causal mask, and %s, %s, dates the file before it: written as training.attention: sdpa, timed as attention_kernel fa2 (that commit's message says SDPA's only backend for its heads, q and k 192 wide and v 128, was the memory-efficient kernel, which zerosim does not time on its own)",
			flavor, f.attnSince, f.attn, k, by)
	case f.attn != "":
		t.flexAttn = true
		since := ""
		if f.attnSince != "" {
			since = fmt.Sprintf("; before torchtitan %s it ran SDPA with a causal mask (if yours is older, set training.attention: sdpa)", f.attnSince)
		}
		t.note("model.flavor %s runs %s attention with a block-causal mask (attn_type = %q); modelled as causal attention over the whole sequence%s; the dataset's document length is not in the file: set model.document_len to it to count attention within each document", flavor, f.attn, f.attn, since)
	}
	if f.flex != "" {
		// FlexAttentionWrapper (torchtitan/models/attention.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1)
		// calls flex_attention with enable_gqa and the layer's BlockMask.
		t.Attention = AttentionFlash
		t.flexKernel()
		t.src("attention", fmt.Sprintf("%s flavor %s runs FlexAttention (attn_type \"flex\"), which skips the blocks its mask leaves empty", name, flavor))
		local := fmt.Sprintf("dims.window %d", hm.SlidingWindow)
		if hm.Chunked {
			local = fmt.Sprintf("dims.attention_chunk %d", hm.SlidingWindow)
		}
		t.note("model.flavor %s runs FlexAttention (attn_type \"flex\") with %s; %d of the %d blocks carry it as %s. Written as training.attention: flash, the kernel class FlexAttention is in: it takes the kv heads without repeating them (enable_gqa), keeps the log-sum-exp and no s² scores, and skips the blocks its BlockMask leaves empty (docs/compute-model.md, \"Sliding windows and attention chunks\"), timed as attention_kernel flex",
			flavor, f.flex, hm.WindowLayers, hm.Layers, local)
	}
	for _, n := range f.notes {
		t.note("%s", n)
	}
	return nil
}

// experts is the routed-expert count of the model's MoE layers (0: a
// dense model), the largest when they differ.
func (t *Torchtitan) experts() []int64 {
	var out []int64
	for _, l := range t.Model.LayerList {
		if l.Group == GroupExpert && l.Dims != nil && !contains(out, l.Dims.Experts) {
			out = append(out, l.Dims.Experts)
		}
	}
	return out
}

// hfModelYAML renders the model section of an imported model: its
// dimensions and its layer list, one flow mapping per layer (as zerosim
// import hf prints it).
func (t *Torchtitan) hfModelYAML(w func(string, ...any)) {
	m, hm := t.Model, t.HF
	w("%s", HFModelHead(hm))
	w("  hidden: %d\n  layers: %d\n  ffn: %d\n  heads: %d\n  kv_heads: %d\n  vocab: %d\n", m.Hidden, m.Layers, m.FFN, m.Heads, m.KVHeads, m.Vocab)
	w("  seq_len: %d  # %s\n", m.SeqLen, t.Sources["seq_len"])
	w("  params: %d\n  layer_list:\n", hm.Total)
	w("%s", LayerListYAML(m.LayerList))
}

// readEP maps parallelism.expert_parallel_degree onto parallelism.ep.
// torchtitan/distributed/parallel_dims.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1 carves the ep mesh
// dimension out of dp_shard·cp (the sparse mesh is [pp, dp_replicate,
// efsdp, ep, etp] with efsdp = dp_shard·cp·tp/(etp·ep), ep innermost: ep
// consecutive ranks), and FSDP shards each expert over efsdp; zerosim's
// parallelism.ep is that layout and needs ep to divide dp·cp/k and every
// MoE layer's expert count, with k 1 (docs/scenario-format.md).
func (t *Torchtitan) readEP(d *ttDoc, rep, shard, cp int64) error {
	t.EP = 1
	ep, ek, err := d.int(1, 1, int64(MaxGPUs), "parallelism.expert_parallel_degree")
	if err != nil || ep == 1 {
		return err
	}
	experts := t.experts()
	switch {
	case len(experts) == 0:
		return d.errf(ek, "%s = %d: expert parallelism needs routed experts, and %s flavor %s has none (set expert_parallel_degree = 1)", ek, ep, t.ModelName, t.Flavor)
	case rep > 1:
		return d.errf(ek, "%s = %d with data_parallel_replicate_degree %d (HSDP) is not modelled: zerosim models expert parallelism without replicas, k 1 (set data_parallel_replicate_degree = 1 or expert_parallel_degree = 1)", ek, ep, rep)
	case shard > 0 && (shard*cp)%ep != 0:
		return d.errf(ek, "%s = %d does not divide data_parallel_shard_degree %d × context_parallel_degree %d = %d, which torchtitan's parallel_dims.py splits into ep × efsdp (use a divisor of %d)", ek, ep, shard, cp, shard*cp, shard*cp)
	}
	for _, e := range experts {
		if e%ep != 0 {
			return d.errf(ek, "%s = %d does not divide the %d routed experts of %s flavor %s; zerosim splits every MoE layer's experts evenly over ep ranks (use a divisor of %d)", ek, ep, e, t.ModelName, t.Flavor, e)
		}
	}
	t.EP = int(ep)
	t.src("ep", d.show(ek, ""))
	return nil
}

// ttGptOssFlavors are gptoss_configs of torchtitan/models/gpt_oss/__init__.py
// at 238fa9953e4aec2a62582121564273d7cbb1e9f1 (GptOssModelArgs,
// torchtitan/models/gpt_oss/model/args.py: vocab_size 201088, dim 2880,
// moe_inter_dim 2880, head_dim 64, n_heads 64, n_kv_heads 8,
// sliding_window_size 128, attn_mask_type "causal", attn_type "flex", the
// only one it supports). torchtitan's GptOssModel (model/model.py, moe.py)
// is transformers' gpt-oss (hfGptOss): wq, wk, wv, wo with biases, sinks
// nn.Parameter(n_heads), attention_norm and ffn_norm, a MoE router gate
// Linear(dim, num_experts, bias=gate_bias=True) and GptOssGroupedExperts
// mlp1_weight (E, 2·moe_inter_dim, dim) + mlp1_bias, mlp2_weight (E, dim,
// moe_inter_dim) + mlp2_bias, no shared expert (num_shared_experts 0),
// softmax top-4 with route_norm; norm and an untied output Linear. The
// MoE's expert_bias and tokens_per_expert are buffers (load_balance_coeff),
// not parameters, so the totals are transformers': gpt-oss-20b's and
// gpt-oss-120b's. TransformerBlock slides on layer_id % 2 == 0 (the
// sliding_window_mask, get_sliding_window_mask_mod(128) of
// torchtitan/models/attention.py: kv_idx ≤ q_idx and q_idx − kv_idx <
// 128, zerosim's dims.window 128), the other blocks attend causally
// (basic_mask), both through FlexAttentionWrapper. "debugmodel" sets dim
// 256, n_layers 4 and 8 experts and keeps the other defaults.
var ttGptOssFlavors = map[string]ttHFFlavor{
	"debugmodel": ttGptOss(256, 4, 8),
	"20b":        ttGptOss(2880, 24, 32),
	"120b":       ttGptOss(2880, 36, 128),
}

// ttGptOssNotes are said of every gpt_oss flavor.
var ttGptOssNotes = []string{
	"gpt_oss: torchtitan builds the blocks in bf16 (GptOssModel: TransformerBlock(...).to(torch.bfloat16), model.py at 238fa99), so FSDP2 shards them, their gradients and their AdamW state in bf16 with no fp32 copy; zerosim keeps fp32 shards and optimizer state (training.master_dtype fp32) for every parameter, twice the blocks' bytes of static memory and optimizer traffic",
	"gpt_oss: the router is torchtitan's (TokenChoiceTopKRouter: fp32 softmax over every expert, top-4, divided by their sum; moe.py at 238fa99), set on the MoE blocks as router softmax_topk with router_norm",
	"gpt_oss: the attention sinks (one learned logit per head, counted as parameters) rescale FlexAttention's output by sigmoid(lse - sink) (Attention.forward); that elementwise work is not modelled",
}

func ttGptOss(dim, layers, experts int64) ttHFFlavor {
	types := make([]string, layers)
	for i := range types {
		types[i] = `"full_attention"`
		if i%2 == 0 {
			types[i] = `"sliding_attention"`
		}
	}
	return ttHFFlavor{
		config: fmt.Sprintf(`{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "vocab_size": 201088, "hidden_size": %d, "num_hidden_layers": %d, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "num_local_experts": %d, "num_experts_per_tok": 4, "sliding_window": 128, "layer_types": [%s], "attention_bias": true, "tie_word_embeddings": false, "max_position_embeddings": 131072}`,
			dim, layers, experts, strings.Join(types, ", ")),
		flex: `a causal mask (attn_mask_type "causal"), and on the even layers (layer_id % 2 == 0) a 128-token sliding window (sliding_window_size, get_sliding_window_mask_mod)`,
		noCP: `GptOssModelArgs.update_from_config raises NotImplementedError("CP support for gpt-oss model is still in progress.")`,
		// TokenChoiceTopKRouter (moe.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1) with score_func
		// softmax and route_norm: an fp32 softmax over every expert, top-k,
		// the division by the top-k sum; memory.RouterTensors'
		// softmax_topk with router_norm (as qwen3's), where transformers'
		// GptOssTopKRouter (router gpt_oss) takes a bf16 softmax over the
		// top-k logits.
		router: RouterSoftmaxTopK, routerNorm: true,
		notes: ttGptOssNotes,
	}
}

// ttLlama4Flavors are llama4_args of torchtitan/models/llama4/__init__.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 (TransformerModelArgs,
// torchtitan/models/llama4/model/args.py: vocab_size 202048, multiple_of
// 256, n_kv_heads None (= n_heads), interleave_moe_layer_step 2,
// auto_scale_hidden_dim True, every_n_layers_nope None,
// fixed_attn_block_size 8192, attn_type "sdpa", attn_mask_type "causal";
// MoEArgs of torchtitan/models/moe/moe.py: 8 experts, one shared expert,
// sigmoid top-1, no gate bias). torchtitan's Transformer (model/model.py)
// is transformers' Llama 4 text decoder (hfLlama4): wq, wk, wv, wo without
// bias and head_dim dim // n_heads, no qk-norm weights; block layer_id is
// MoE when (layer_id + 1) % interleave_moe_layer_step == 0 (transformers'
// moe_layers step−1, 2·step−1, …), with router gate Linear(dim,
// num_experts, bias=False), GroupedExperts w1, w2, w3 of the MoE hidden
// dim and one shared FeedForward of it, else a FeedForward (ttLlama4FFN);
// norm and an untied output. The MoE's expert_bias and tokens_per_expert
// are buffers. So "17bx16e" is Llama 4 Scout's text decoder and
// "17bx128e" Maverick's. Attention: without every_n_layers_nope every
// block uses RoPE and full causal attention (torchtitan chunks nothing);
// the _irope flavors make block layer_id NoPE (full attention) when
// layer_id % every_n_layers_nope == 0 (transformers' default puts the
// NoPE layers at (i+1) % 4 == 0 instead; the layers are given as
// no_rope_layers here) and let the RoPE blocks attend only within their
// fixed_attn_block_size-token block (get_fixed_block_mask_mod in
// torchtitan/models/attention.py, and-ed with the causal and document
// masks in get_attention_masks): zerosim's dims.attention_chunk.
var ttLlama4Flavors = map[string]ttHFFlavor{
	"debugmodel":       ttLlama4(ttL4{vocab: 2048, dim: 256, layers: 6, heads: 16, kv: 16, multipleOf: 256, experts: 8, step: 2, maxPos: 1048576}),
	"17bx16e":          ttLlama4(ttL4{vocab: 202048, dim: 5120, layers: 48, heads: 40, kv: 8, multipleOf: 2048, mult: 1.2, experts: 16, step: 1, maxPos: 10485760}),
	"17bx128e":         ttLlama4(ttL4{vocab: 202048, dim: 5120, layers: 48, heads: 40, kv: 8, multipleOf: 2048, mult: 1.2, experts: 128, step: 2, maxPos: 1048576}),
	"debugmodel_irope": ttLlama4(ttL4{vocab: 2048, dim: 256, layers: 6, heads: 16, kv: 16, multipleOf: 256, experts: 8, step: 2, maxPos: 1048576, nope: 4, block: 256}),
	"17bx16e_irope":    ttLlama4(ttL4{vocab: 202048, dim: 5120, layers: 48, heads: 40, kv: 8, multipleOf: 2048, mult: 1.2, experts: 16, step: 1, maxPos: 10485760, nope: 4, block: 8192}),
	"17bx128e_irope":   ttLlama4(ttL4{vocab: 202048, dim: 5120, layers: 48, heads: 40, kv: 8, multipleOf: 2048, mult: 1.2, experts: 128, step: 2, maxPos: 1048576, nope: 4, block: 8192}),
}

// ttL4 are the TransformerModelArgs a llama4 flavor sets: mult 0 is
// ffn_dim_multiplier None, nope 0 every_n_layers_nope None (then block,
// fixed_attn_block_size, is unused).
type ttL4 struct {
	vocab, dim, layers, heads, kv, multipleOf int64
	mult                                      float64
	experts, step, maxPos, nope, block        int64
}

// ttLlama4FFN is the hidden dim of torchtitan's llama4 FeedForward and of
// its MoE (TransformerBlock.__init__ and FeedForward.__init__,
// torchtitan/models/llama4/model/model.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1), from hidden_dim =
// 4·dim: int(2·hidden_dim/3), times ffn_dim_multiplier truncated; the MoE
// divides it by top_k + num_shared_experts (auto_scale_hidden_dim)
// truncating; both round up to a multiple of multiple_of (div 1: the dense
// FeedForward). Python's float arithmetic is IEEE double, as Go's.
func ttLlama4FFN(dim, multipleOf int64, mult float64, div int64) int64 {
	h := 2 * 4 * dim / 3
	if mult != 0 {
		h = int64(mult * float64(h))
	}
	h /= div
	return multipleOf * ((h + multipleOf - 1) / multipleOf)
}

func ttLlama4(a ttL4) ttHFFlavor {
	const topK, shared = 1, 1 // MoEArgs defaults; no flavor sets them
	rope := make([]string, a.layers)
	for i := range rope {
		rope[i] = "1"
		if a.nope > 0 && int64(i)%a.nope == 0 {
			rope[i] = "0"
		}
	}
	chunk := "null"
	if a.nope > 0 {
		chunk = strconv.FormatInt(a.block, 10)
	}
	f := ttHFFlavor{
		config: fmt.Sprintf(`{"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text", "vocab_size": %d, "hidden_size": %d, "num_hidden_layers": %d, "num_attention_heads": %d, "num_key_value_heads": %d, "head_dim": %d, "intermediate_size": %d, "intermediate_size_mlp": %d, "num_local_experts": %d, "num_experts_per_tok": %d, "interleave_moe_layer_step": %d, "attention_chunk_size": %s, "no_rope_layers": [%s], "attention_bias": false, "tie_word_embeddings": false, "max_position_embeddings": %d}`,
			a.vocab, a.dim, a.layers, a.heads, a.kv, a.dim/a.heads, ttLlama4FFN(a.dim, a.multipleOf, a.mult, topK+shared), ttLlama4FFN(a.dim, a.multipleOf, a.mult, 1),
			a.experts, topK, a.step, chunk, strings.Join(rope, ", "), a.maxPos),
		// TokenChoiceTopKRouter and MoE.forward (moe.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1) keep
		// the fp32 sigmoid scores, the top-k indices, the expert-sorted
		// token indices and, with score_before_experts, the routed input
		// in fp32 (routed_input.to(torch.float32) · top_scores: 4·t·k·h)
		// and the sorted fp32 scores. At top-1 these are the deepseek_v3
		// router's tensors (memory.RouterTensors: its fp32 router input
		// 4·t·h, sigmoid scores, indices, fp32 gathered weights), less its
		// fp32 weight copy (4·E·h); transformers' Llama4TextMoe, which
		// the llama4 router stands for, repeats the hidden states once per
		// expert (2·E·t·h), which torchtitan does not.
		router: RouterDeepseekV3,
		notes:  []string{"llama4: torchtitan's router (TokenChoiceTopKRouter, sigmoid top-1, scores applied before the experts; moe.py at 238fa99) keeps what router deepseek_v3 counts at top-1 (fp32 routed input and scores, top-k and sorted indices), set on the MoE blocks; transformers' Llama4TextMoe, router llama4, repeats the hidden states once per expert, which torchtitan does not"},
	}
	if a.nope == 0 {
		f.notes = append(f.notes, "llama4: without every_n_layers_nope every block uses RoPE and attends causally over the whole sequence; torchtitan chunks attention only in the _irope flavors (fixed_attn_block_size), unlike Llama 4's attention_chunk_size")
		return f
	}
	f.flex = fmt.Sprintf(`a block-causal mask (attn_mask_type "block_causal": documents, modelled as one causal sequence), and on its RoPE blocks (every_n_layers_nope %d: all but layer_id %% %d == 0) fixed %d-token blocks (fixed_attn_block_size, get_fixed_block_mask_mod)`, a.nope, a.nope, a.block)
	f.noCP = `TransformerModelArgs.update_from_config raises NotImplementedError("Context Parallel only supports SDPA attention.")`
	f.notes = append(f.notes, "llama4 at 238fa99: Attention.forward selects the block's mask (attention_masks[\"rope\" or \"nope\"]) but passes the dict of both as FlexAttention's block_mask (since ff0829c, \"GQA without kv repeats\"), which is not a BlockMask; the import models the mask the block selects")
	return f
}
