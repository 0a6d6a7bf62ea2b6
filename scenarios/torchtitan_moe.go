package scenarios

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// This file reads torchtitan's qwen3 and deepseek_v3 models (model.name
// "qwen3", "deepseek_v3") at 238fa99. Where a torchtitan model has the
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
	// expertBias marks a transformers model that counts a router bias
	// of one number per routed expert in every MoE layer which torchtitan
	// keeps as a buffer (DeepSeek-V3's e_score_correction_bias, torchtitan's
	// expert_bias): not a parameter, not sharded, no optimizer state.
	expertBias bool
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
	"16B":                  {config: ttDeepseekV2(102400, 2048, 10944, 1408, 27, 1, 16, 64, 2, 6, 0, 0, 0), attn: "flex"},
	"236B":                 {config: ttDeepseekV2(102400, 5120, 12288, 1536, 60, 1, 128, 160, 2, 6, 1536, 8, 3), attn: "flex"},
	"671B": {config: `{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "first_k_dense_replace": 3, "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4, "norm_topk_prob": true, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_nextn_predict_layers": 0, "tie_word_embeddings": false, "max_position_embeddings": 16384}`,
		attn: "flex", expertBias: true},
}

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
	hm, err := importHF(cfgName, m, 0)
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
	t.Flavor, t.HF, t.Params = flavor, hm, hm.Total
	t.Model = Model{Kind: KindTransformer, Arch: ArchHF, Hidden: hm.Dims.Hidden, Layers: hm.Layers, Heads: hm.Dims.Heads,
		KVHeads: hm.Dims.KVHeads, FFN: hm.FFN(), Vocab: hm.Vocab, LayerList: hm.LayerList}
	for _, n := range hm.Notes {
		t.note("%s", n)
	}
	if f.attn != "" {
		t.note("model.flavor %s runs %s attention with a block-causal mask (attn_type = %q); modelled as causal SDPA attention over the whole sequence", flavor, f.attn, f.attn)
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
	w("model:\n  kind: transformer\n")
	w("  hidden: %d\n  layers: %d\n  ffn: %d\n  heads: %d\n  kv_heads: %d\n  vocab: %d\n", m.Hidden, m.Layers, m.FFN, m.Heads, m.KVHeads, m.Vocab)
	w("  seq_len: %d  # %s\n", m.SeqLen, t.Sources["seq_len"])
	w("  params: %d\n  layer_list:\n", hm.Total)
	w("%s", LayerListYAML(m.LayerList))
}

// readEP maps parallelism.expert_parallel_degree onto parallelism.ep.
// torchtitan/distributed/parallel_dims.py at 238fa99 carves the ep mesh
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
