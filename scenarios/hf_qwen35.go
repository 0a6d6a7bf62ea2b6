package scenarios

import "strings"

// hfQwen35 imports Qwen3.5 and Qwen3.6 (Qwen3_5ForConditionalGeneration:
// the dense Qwen3.5-0.8B to -27B and Qwen3.6-27B;
// Qwen3_5MoeForConditionalGeneration: Qwen3.5-35B-A3B, -122B-A10B,
// -397B-A17B and Qwen3.6-35B-A3B) and their text-only classes
// Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM. Their text decoder is
// Qwen3-Next's hybrid (hfQwen3Next, whose module tree it shares through
// hfQwenHybrid) with these departures, read in
// models/qwen3_5/modular_qwen3_5.py
// @ 8940358af7421e958995b05136ca14ce54bef39c and
// models/qwen3_5_moe/modular_qwen3_5_moe.py and modeling_qwen3_5_moe.py
// @ e36255cb9af68ea2c16fefd6b1c798882cafda16 and
// 5fd974ea3af798c79b3b70d2fd9e52fb58869894:
//
//   - Qwen3_5GatedDeltaNet replaces in_proj_qkvz and in_proj_ba by
//     in_proj_qkv Linear(h, 2K + V), in_proj_z Linear(h, V), in_proj_b and
//     in_proj_a Linear(h, value_heads), no biases: the same h·(2K + 2V +
//     2·value_heads) weights (Qwen3.6-27B's tensor list, below, holds
//     them). Without fix_query_key_value_ordering it still repeats each of
//     q and k num_v_heads // num_k_heads times to meet the value heads, so
//     the value heads must still be a multiple of the key heads.
//   - The dense Qwen3_5DecoderLayer builds Qwen3_5MLP(intermediate_size) in
//     every layer: no experts at all (Qwen3_5TextConfig deletes
//     decoder_sparse_step, norm_topk_prob, mlp_only_layers and the MoE
//     keys, which are not read).
//   - Qwen3_5MoeDecoderLayer builds Qwen3_5MoeSparseMoeBlock (router,
//     experts, shared expert and its sigmoid gate, Qwen3-Next's) in every
//     layer: Qwen3_5MoeTextConfig deletes intermediate_size,
//     decoder_sparse_step, norm_topk_prob and mlp_only_layers (not read),
//     and Qwen3_5MoeTopKRouter always divides the top-k weights by their
//     sum (RouterNorm).
//   - Defaults: Qwen3_5TextConfig (configuration_qwen3_5.py
//     @ 8116e632367180f6edec221d17cd36513334d169) vocab_size 248320,
//     num_attention_heads 16, num_key_value_heads 4, intermediate_size
//     12288, max_position_embeddings 32768; Qwen3_5MoeTextConfig
//     (configuration_qwen3_5_moe.py @ e36255cb) vocab_size 248320,
//     num_attention_heads 16, num_key_value_heads 2, num_experts 256,
//     num_experts_per_tok 8, moe_intermediate_size and
//     shared_expert_intermediate_size 512, max_position_embeddings 32768.
//     Both: head_dim 256, the linear_* keys and full_attention_interval 4
//     as Qwen3-Next's, tie_word_embeddings false (the text config's, read
//     before the wrapper's). hidden_size and num_hidden_layers are required
//     as Qwen3-Next's are.
//   - Multi-token prediction: the key is mtp_num_hidden_layers. transformers
//     drops the checkpoint's mtp.* tensors (Qwen3_5ForCausalLM's and
//     Qwen3_5MoePreTrainedModel's _keys_to_ignore_on_load_unexpected);
//     vLLM's Qwen3_5MultiTokenPredictor
//     (vllm/model_executor/models/qwen3_5_mtp.py
//     @ 9a4f2b9f6c0912ea45bed24fe3d5ef414fc9d194) builds
//     getattr(config, "mtp_num_hidden_layers", 1) full-attention
//     Qwen3_5DecoderLayers with fc Linear(2h, h, bias=False),
//     pre_fc_norm_embedding, pre_fc_norm_hidden and norm: Qwen3-Next's
//     module, so it is treated as Qwen3-Next's: left out unless
//     model.mtp_layers builds it (the cards say "MTP: trained
//     with multi-steps"; the published safetensors totals count it:
//     TestHFQwen35).
//   - The ForConditionalGeneration classes (Qwen3VLForConditionalGeneration's
//     tree) read text_config and add model.visual, Qwen3_5VisionModel
//     (patch_embed, pos_embed, vision_config.depth blocks and the patch
//     merger to the text width), which is noted, not counted, as Gemma 3's
//     vision tower: zerosim simulates the text decoder on text tokens.
func hfQwen35(c *hfConfig) (*HFModel, error) {
	arch, _ := c.architecture()
	moe := arch == "Qwen3_5MoeForConditionalGeneration" || arch == "Qwen3_5MoeForCausalLM"
	k := qwenHybridKind{deltaNet: "Qwen3_5GatedDeltaNet", why: "repeats each key head num_v_heads // num_k_heads times",
		vocab: 248320, heads: 16, maxPos: 32768, kvHeads: 4, ffn: 12288, sparse: "none", mtpKey: "mtp_num_hidden_layers", model: "Qwen3_5ForCausalLM"}
	if moe {
		k.kvHeads, k.experts, k.topK, k.sparse, k.model = 2, 256, 8, "all", "Qwen3_5MoeForCausalLM"
	}
	tc := c
	wrapped := arch == "Qwen3_5ForConditionalGeneration" || arch == "Qwen3_5MoeForConditionalGeneration"
	if wrapped {
		var err error
		if tc, err = c.textConfig(arch); err != nil {
			return nil, err
		}
	}
	hm, err := hfQwenHybrid(c, tc, k)
	if err != nil {
		return nil, err
	}
	if wrapped {
		hm.note("vision_config: the vision tower of %s (model.visual: the patch embedding, vision blocks and patch merger) is not imported; zerosim simulates the text decoder (language_model and lm_head) on text tokens", arch)
	}
	return hm, nil
}

// GDNSplitProjections reports whether the Gated DeltaNet of a model of
// config.json architecture arch runs Qwen3.5's four input projections,
// in_proj_qkv, in_proj_z, in_proj_b and in_proj_a, in that order
// (Qwen3_5GatedDeltaNet.forward, models/qwen3_5/modular_qwen3_5.py @
// 8940358af7421e958995b05136ca14ce54bef39c: mixed_qkv =
// self.in_proj_qkv(hidden_states).transpose(1, 2), then z, b and a), rather
// than Qwen3-Next's two fused ones, in_proj_qkvz and in_proj_ba: every
// Qwen3.5 and Qwen3.6 class hfQwen35 imports. UnitShapes lists the
// projections' tensors by it, and the activation model (memory.BlockDims.
// LinearSplitProj) counts their mms and keeps their outputs by it.
func GDNSplitProjections(arch string) bool { return strings.HasPrefix(arch, "Qwen3_5") }
