package scenarios

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// hfInert are config.json keys that change nothing zerosim models (the
// parameters, their shapes, memory, FLOPs or time), so an import that does
// not read them says nothing of them:
//
//   - PreTrainedConfig's own fields and the keys its __post_init__ takes
//     (transformers_version, architectures, dtype and torch_dtype,
//     output_hidden_states, return_dict, chunk_size_feed_forward,
//     is_encoder_decoder, id2label, label2id, num_labels, problem_type, the
//     name or path and commit hash) and the GenerationConfig parameters it
//     pops unread (max_length, do_sample, temperature, top_k, top_p, …):
//     src/transformers/configuration_utils.py at
//     008e574391258935f3ecc3035c882e73bbcac419;
//   - the token ids, tokenizer and remote-code names (bos/eos/pad/sep
//     token ids, tokenizer_class, auto_map);
//   - what sets numerics but not a size: initializer_range, the norms'
//     epsilon, the activation's name, the rotary base and scaling
//     (rope_scaling and rope_parameters are read for the sequence-length
//     warning, hfRopeScaled), use_cache, the MoE auxiliary-loss
//     coefficients, and the attention implementation's name;
//   - rotary and attention-scale numerics of particular classes, which
//     size no tensor: GPT-NeoX's rotary_emb_base and rotary_pct, the
//     partial_rotary_factor, Gemma's query_pre_attn_scalar and
//     rope_local_base_freq, Phi-3's original_max_position_embeddings (its
//     long-RoPE switch), Qwen2's use_mrope, Gemma 2's
//     cache_implementation (generation's cache), and Llama's pretraining_tp
//     ("Experimental feature. Tensor parallelism rank used during
//     pretraining", LlamaConfig: it splits the forward's matmuls, not the
//     weights);
//   - quantization_config, whose weights an import from a quantized
//     checkpoint notes where its architecture reads it (the model trains in
//     the scenario's precision);
//   - a token id or index of a multimodal class (image_token_id,
//     boi_token_index, …: hfInertKey).
var hfInert = map[string]bool{
	"rotary_emb_base": true, "rotary_pct": true, "partial_rotary_factor": true, "query_pre_attn_scalar": true,
	"rope_local_base_freq": true, "original_max_position_embeddings": true, "use_mrope": true, "cache_implementation": true,
	"pretraining_tp":       true,
	"transformers_version": true, "architectures": true, "model_type": true, "dtype": true, "torch_dtype": true,
	"output_hidden_states": true, "output_attentions": true, "return_dict": true, "use_return_dict": true, "torchscript": true,
	"chunk_size_feed_forward": true, "is_encoder_decoder": true, "is_decoder": true, "add_cross_attention": true,
	"tie_encoder_decoder": true, "cross_attention_hidden_size": true, "pruned_heads": true,
	"id2label": true, "label2id": true, "num_labels": true, "problem_type": true, "finetuning_task": true, "task_specific_params": true,
	"name_or_path": true, "_name_or_path": true, "_commit_hash": true, "_attn_implementation": true, "attn_implementation": true,
	"_attn_implementation_autoset": true, "prefix": true, "tokenizer_class": true, "auto_map": true,
	"bos_token_id": true, "eos_token_id": true, "pad_token_id": true, "sep_token_id": true, "decoder_start_token_id": true,
	"max_length": true, "min_length": true, "do_sample": true, "early_stopping": true, "num_beams": true, "num_beam_groups": true,
	"diversity_penalty": true, "temperature": true, "top_k": true, "top_p": true, "typical_p": true, "repetition_penalty": true,
	"length_penalty": true, "no_repeat_ngram_size": true, "encoder_no_repeat_ngram_size": true, "bad_words_ids": true,
	"num_return_sequences": true, "output_scores": true, "return_dict_in_generate": true, "forced_bos_token_id": true,
	"forced_eos_token_id": true, "remove_invalid_values": true, "exponential_decay_length_penalty": true,
	"suppress_tokens": true, "begin_suppress_tokens": true,
	"initializer_range": true, "initializer_factor": true, "rms_norm_eps": true, "layer_norm_eps": true, "layer_norm_epsilon": true,
	"norm_epsilon": true, "hidden_act": true, "hidden_activation": true, "activation_function": true,
	"rope_theta": true, "rope_scaling": true, "rope_parameters": true, "use_cache": true,
	"router_aux_loss_coef": true, "aux_loss_alpha": true, "output_router_logits": true, "router_z_loss_coef": true,
	"quantization_config": true,
}

// hfInertKey reports whether key is inert (hfInert), or a token id or
// index by its name.
func hfInertKey(key string) bool {
	return hfInert[key] || strings.HasSuffix(key, "_token_id") || strings.HasSuffix(key, "_token_ids") || strings.HasSuffix(key, "_token_index")
}

// hfKeyText is key as a note or an error prints it: as it is when it is a
// plain identifier, else quoted (a key may hold any character), clipped.
func hfKeyText(key string) string {
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return clip(strconv.Quote(key))
		}
	}
	return clip(key)
}

// hfKey is a key of config.json as the file spells it, with the prefix
// of the object holding it ("" or "text_config.").
type hfKey struct{ prefix, name string }

// text is the key as a note or an error prints it (hfKeyText).
func (k hfKey) text() string { return k.prefix + hfKeyText(k.name) }

// unreadKeys returns the keys of config.json (and of its text_config,
// prefixed, when the import read it) that the import neither read nor
// knows to be inert (hfInertKey), sorted. transformers
// keeps such a key as an attribute of the config and builds the model
// without it, as zerosim counts it; the user is told (a near-miss of a key
// that sizes the model is refused: nearMissKey).
func (c *hfConfig) unreadKeys() []hfKey {
	var out []hfKey
	add := func(m map[string]any, prefix string) {
		for k := range m {
			if c.read[prefix+k] || hfInertKey(k) {
				continue
			}
			out = append(out, hfKey{prefix, k})
		}
	}
	add(c.m, "")
	if c.read["text_config"] {
		if tc, ok := c.m["text_config"].(map[string]any); ok {
			add(tc, "text_config.")
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].text() < out[j].text() })
	return out
}

// nearRead is the key the import read, one edit from the file's key k
// as the file spells it (both at the same level, nearMin letters or
// more), "" when there is none or several.
func (c *hfConfig) nearRead(k hfKey) string {
	near := ""
	for r := range c.read {
		rk, ok := strings.CutPrefix(r, k.prefix)
		if !ok || strings.Contains(rk, ".") || len(rk) < nearMin || len(k.name) < nearMin || !editDistance1(rk, k.name) {
			continue
		}
		if near != "" && near != rk {
			return ""
		}
		near = rk
	}
	return near
}

// checkUnread refuses a key one edit from a key the import of arch read
// that the file lacks (num_key_value_head for num_key_value_heads, or
// "num_key_value_heads " with a trailing space: transformers keeps the
// misspelt key as an attribute and builds with the class default, so
// grouped queries silently become one key/value head per query head), as
// the llm-foundry import refuses a near-miss of a TrainConfig key, and
// returns the other unread keys for the import's note, a near-miss of a
// key the file also gives with its did-you-mean.
func (c *hfConfig) checkUnread(arch string) ([]string, error) {
	var notes []string
	for _, k := range c.unreadKeys() {
		near := c.nearRead(k)
		if near == "" {
			notes = append(notes, k.text())
			continue
		}
		obj := c.m
		if k.prefix != "" {
			obj, _ = c.m["text_config"].(map[string]any)
		}
		if _, given := obj[near]; !given {
			msg := fmt.Sprintf("%s is not a key zerosim's %s import reads (did you mean %s? transformers keeps an unknown key as an attribute and builds the model with %s's default: rename it to %s)", k.text(), arch, near, near, near)
			if off, ok := c.keys.at[k.prefix+k.name]; ok {
				// At the key as the file spells it, which a quoted
				// text does not lead the message with (jsonKeys.where).
				return nil, fmt.Errorf("%s: %s", jsonPos(c.file, c.keys.data, off), msg)
			}
			return nil, c.errorf("%s", msg)
		}
		notes = append(notes, k.text()+" (did you mean "+near+"? it is given too)")
	}
	return notes, nil
}

// UnreadNote is zerosim import hf's note on the keys the import did not
// read (Unread), "" when there are none.
func (hm *HFModel) UnreadNote() string {
	if len(hm.Unread) == 0 {
		return ""
	}
	return "keys not read: " + strings.Join(hm.Unread, ", ") + " (the count does not depend on them: check their spelling if one should change the model; transformers keeps a key its config class does not define as an unused attribute)"
}
