package scenarios

// nullFails refuses key when config.json gives it as null where the
// transformers class stores None and then computes with it, so the model
// fails to build or to run: null there is not the class default that an
// absent key gives (lookup's reading), and the one-line error says what
// transformers does with None and how to fix the file. def is the class
// default, what removing the key gives.
func (c *hfConfig) nullFails(key, what string, def int64) error {
	if !c.isNull(key) {
		return nil
	}
	return c.errorf("%s%s is null: %s, so transformers fails on None (give a number, or remove the key for the class default %d)", c.prefix, key, what, def)
}

// gptOssNullWindow is why gpt-oss cannot take a null sliding_window:
// GptOssModel.forward builds the "sliding_attention" mask on every forward
// (models/gpt_oss/modeling_gpt_oss.py at
// 6edf5b311854175ff83c59179b3360beca1ceffc), and
// create_sliding_window_causal_mask raises "Could not find a
// `sliding_window` argument in the config, or it is not set" when
// config.sliding_window is None (src/transformers/masking_utils.py at
// 2ccc6cae21faaf11631efa5fb9054687ae5dc931).
const gptOssNullWindow = "GptOssModel builds the sliding-window mask on every forward and create_sliding_window_causal_mask raises on a None window (modeling_gpt_oss.py at 6edf5b31, masking_utils.py at 2ccc6cae)"

// deepseekV3NullFails are the DeepseekV3Config keys that DeepseekV3MoE and
// DeepseekV3Attention compute with (models/deepseek_v3/
// modeling_deepseek_v3.py at f5a9ec512fa9fe69e51ea0c6388c68d50de567b3):
// shared_experts is DeepseekV3MLP(intermediate_size=
// moe_intermediate_size * n_shared_experts), kv_a_proj_with_mqa
// Linear(h, kv_lora_rank + qk_rope_head_dim), kv_b_proj
// Linear(kv_lora_rank, heads·(qk_nope_head_dim + v_head_dim)), and the
// config sums qk_head_dim = qk_nope_head_dim + qk_rope_head_dim. With
// their class defaults (DeepseekV3Config). DeepSeek-V2's class and
// DeepSeek's own remote modeling_deepseek.py test n_shared_experts for
// None (no shared expert): the V2 import follows that, and the V3 error
// names 0 as the way to say it.
var deepseekV3NullFails = []nullKey{
	{"n_shared_experts", "DeepseekV3MoE sizes shared_experts as moe_intermediate_size * n_shared_experts (modeling_deepseek_v3.py at f5a9ec51; DeepSeek's remote modeling_deepseek.py builds none for null: give 0 for that)", 1},
	{"moe_intermediate_size", "DeepseekV3MoE sizes shared_experts as moe_intermediate_size * n_shared_experts (modeling_deepseek_v3.py at f5a9ec51)", 2048},
	{"kv_lora_rank", "DeepseekV3Attention sizes kv_a_proj_with_mqa as kv_lora_rank + qk_rope_head_dim (modeling_deepseek_v3.py at f5a9ec51)", 512},
	{"qk_rope_head_dim", "DeepseekV3Attention sizes kv_a_proj_with_mqa as kv_lora_rank + qk_rope_head_dim (modeling_deepseek_v3.py at f5a9ec51)", 64},
	{"qk_nope_head_dim", "DeepseekV3Attention sizes kv_b_proj with qk_nope_head_dim + v_head_dim (modeling_deepseek_v3.py at f5a9ec51)", 128},
	{"v_head_dim", "DeepseekV3Attention sizes kv_b_proj with qk_nope_head_dim + v_head_dim (modeling_deepseek_v3.py at f5a9ec51)", 128},
}

// nullKey is a config key transformers fails on when null: what it sizes
// and the class default (nullFails).
type nullKey struct {
	key, what string
	def       int64
}

// nullsFail refuses the first of keys that config.json gives as null.
func (c *hfConfig) nullsFail(keys []nullKey) error {
	for _, k := range keys {
		if err := c.nullFails(k.key, k.what, k.def); err != nil {
			return err
		}
	}
	return nil
}

// deepseekV2NullFails are the DeepseekV2Config keys DeepseekV2Attention
// sizes its projections with (models/deepseek_v2/modeling_deepseek_v2.py at
// 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d): kv_a_proj_with_mqa
// Linear(h, config.kv_lora_rank + config.qk_rope_head_dim), kv_a_layernorm
// RMSNorm(kv_lora_rank), kv_b_proj Linear(kv_lora_rank, heads·(qk_nope +
// v_head_dim)), qk_head_dim = qk_nope_head_dim + qk_rope_head_dim.
// DeepseekV2Config stores each as given (configuration_deepseek_v2.py at
// 43e8548fef30c2cc98ee475ef3d478b9bb7b616f: self.kv_lora_rank =
// kv_lora_rank), so an explicit null is None, not the class default (QA
// s31 L3: "kv_lora_rank": null imported as 512). With their class
// defaults. q_lora_rank is not here: None there means no query
// compression (a full q_proj), which the importer reads.
var deepseekV2NullFails = []nullKey{
	{"kv_lora_rank", "DeepseekV2Attention sizes kv_a_proj_with_mqa as kv_lora_rank + qk_rope_head_dim (modeling_deepseek_v2.py at 03eac6f6)", 512},
	{"qk_rope_head_dim", "DeepseekV2Attention sizes kv_a_proj_with_mqa as kv_lora_rank + qk_rope_head_dim (modeling_deepseek_v2.py at 03eac6f6)", 64},
	{"qk_nope_head_dim", "DeepseekV2Attention sizes kv_b_proj with qk_nope_head_dim + v_head_dim (modeling_deepseek_v2.py at 03eac6f6)", 128},
	{"v_head_dim", "DeepseekV2Attention sizes kv_b_proj with qk_nope_head_dim + v_head_dim (modeling_deepseek_v2.py at 03eac6f6)", 128},
}
