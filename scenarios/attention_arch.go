package scenarios

import "fmt"

// noSDPA are the Hugging Face classes that have no SDPA path: transformers
// refuses attn_implementation="sdpa" for them (PreTrainedModel.
// get_correct_attn_implementation re-raises _sdpa_can_dispatch's
// ValueError, "does not support an attention implementation through
// torch.nn.functional.scaled_dot_product_attention yet", when sdpa is
// asked for, and falls back to eager only when nothing is;
// src/transformers/modeling_utils.py), with the fix each class takes.
var noSDPA = map[string]string{
	// GptOssPreTrainedModel: _supports_sdpa = False, _supports_flash_attn
	// and _supports_flex_attn True
	// (src/transformers/models/gpt_oss/modeling_gpt_oss.py at
	// 6edf5b311854175ff83c59179b3360beca1ceffc): the attention passes the
	// sinks (s_aux), which eager_attention_forward concatenates to the
	// logits before the softmax. OpenAI's fine-tuning cookbook loads it
	// with attn_implementation="eager". flash stands for a fused kernel
	// that takes the sinks, such as FlexAttention (_supports_flex_attn), but
	// zerosim times it as any flash run, at training.attention_kernel's
	// published rate (fa2 unless set), and leaves the sinks' softmax column
	// out (hfGptOss): the refusal says so, as the run's attention line
	// names fa2 (QA14 finding 9). FlashAttention-2 itself takes no sinks,
	// and no FlashAttention had a backward with a learnable sink on
	// 2025-08-11 (Tri Dao, Dao-AILab/flash-attention issue #1797; vLLM's
	// FA3 fork added them to the forward only, vllm-project/
	// flash-attention PR #75).
	"GptOssForCausalLM": `GptOssPreTrainedModel sets _supports_sdpa = False (models/gpt_oss/modeling_gpt_oss.py at 6edf5b31), so transformers refuses attn_implementation="sdpa": set training.attention: eager (attn_implementation="eager", transformers' choice when none is given) or flash for a fused kernel that takes the sinks, such as FlexAttention (attn_implementation="flex_attention"); flash is timed at training.attention_kernel's published rate (fa2 unless set, a stand-in: FlashAttention-2 takes no sinks, Dao-AILab/flash-attention#1797), and the sinks' softmax column is not modelled`,
}

// noSDPATorchtitan is the fix under stack torchtitan, whose model is its
// own, not transformers' (qauser32 L7: the refusal named transformers'
// choices, and following it timed fa2): torchtitan's gpt_oss attends only
// through FlexAttention (args.py attn_type "flex", "gpt-oss only support
// FlexAttention"; model.py's FlexAttentionWrapper, at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1), as zerosim import torchtitan
// writes it (flexKernel).
var noSDPATorchtitan = map[string]string{
	"GptOssForCausalLM": `under stack torchtitan the model is torchtitan's gpt_oss, which attends only through FlexAttention (torchtitan/models/gpt_oss/model/args.py attn_type "flex" at 238fa99), as zerosim import torchtitan writes it: set training.attention: flash and training.attention_kernel: flex (the sinks' softmax column is not modelled)`,
}

// checkAttentionClass refuses training.attention: sdpa for a model class
// that has no SDPA path.
func (l *loader) checkAttentionClass(s *Scenario) *Error {
	if s.Training.Attention != AttentionSDPA {
		return nil
	}
	fix, ok := noSDPA[s.Model.Architecture]
	if !ok {
		return nil
	}
	if tt, ok := noSDPATorchtitan[s.Model.Architecture]; ok && s.Stack == "torchtitan" {
		fix = tt
	}
	return l.errPath("training.attention", fmt.Sprintf("training.attention=sdpa: %s has no SDPA path: %s", s.Model.Architecture, fix))
}
