package scenarios

import (
	"strings"
	"testing"
)

// TestUnsupportedHFNearest: an unsupported class names, in one line at the
// key, the nearest supported class by name with the model_type that goes
// with it, or model.layer_list when none is near or two are equally near
// (Gemma 1's GemmaForCausalLM is one edit from both Gemma2 and Gemma3).
// It used to list all 37 classes.
func TestUnsupportedHFNearest(t *testing.T) {
	const layerList = "describe the model with model.layer_list (docs/scenario-format.md, which lists the supported classes)"
	for _, c := range []struct{ in, want string }{
		// DeepSeek-V3.2-Exp: V3 plus the DSA indexer.
		{`{"architectures": ["DeepseekV32ForCausalLM"]}`, `c.json:1:2: architectures "DeepseekV32ForCausalLM" is not supported: the nearest supported class by name is DeepseekV3ForCausalLM: if the model's decoder is that class's, set architectures to ["DeepseekV3ForCausalLM"] and model_type to "deepseek_v3" in a copy of config.json`},
		// Qwen2.5-VL's language model is Qwen2's decoder.
		{`{"architectures": ["Qwen2_5_VLForConditionalGeneration"]}`, `c.json:1:2: architectures "Qwen2_5_VLForConditionalGeneration" is not supported: the nearest supported class by name is Qwen2ForCausalLM: if the model's decoder is that class's, set architectures to ["Qwen2ForCausalLM"] and model_type to "qwen2"`},
		// LLaMA's first converted configs spell the class LLaMAForCausalLM.
		{`{"architectures": ["LLaMAForCausalLM"]}`, `c.json:1:2: architectures "LLaMAForCausalLM" is not supported: the nearest supported class by name is LlamaForCausalLM:`},
		// One edit: GLM-4.5V's decoder is GLM-4.5-Air's.
		{`{"architectures": ["Glm4vMoeForConditionalGeneration"]}`, `c.json:1:2: architectures "Glm4vMoeForConditionalGeneration" is not supported: the nearest supported class by name is Glm4MoeForCausalLM:`},
		// Same model part: the ForCausalLM class of two.
		{`{"architectures": ["Gemma3ForSequenceClassification"]}`, `c.json:1:2: architectures "Gemma3ForSequenceClassification" is not supported: the nearest supported class by name is Gemma3ForCausalLM: if the model's decoder is that class's, set architectures to ["Gemma3ForCausalLM"] and model_type to "gemma3_text"`},
		{`{"architectures": ["GemmaForCausalLM"]}`, `c.json:1:2: architectures "GemmaForCausalLM" is not supported: ` + layerList},
		{`{"architectures": ["BertModel"]}`, `c.json:1:2: architectures "BertModel" is not supported: ` + layerList},
		{`{"model_type": "deepseek_v32"}`, `c.json:1:2: model_type "deepseek_v32" is not supported: the nearest supported model_type by name is "deepseek_v3":`},
		{`{"model_type": "gemma"}`, `c.json:1:2: model_type "gemma" is not supported: ` + layerList},
		// Three-letter model parts are near nothing (review s20 A F4): MPT
		// (ALiBi, no biases) is one edit from OPT and Optimus begins with
		// OPT, and neither has OPT's decoder; the same rule for classes and
		// model_types (one nearestName).
		{`{"architectures": ["MptForCausalLM"]}`, `c.json:1:2: architectures "MptForCausalLM" is not supported: ` + layerList},
		{`{"architectures": ["OptimusForCausalLM"]}`, `c.json:1:2: architectures "OptimusForCausalLM" is not supported: ` + layerList},
		{`{"model_type": "mpt"}`, `c.json:1:2: model_type "mpt" is not supported: ` + layerList},
		{`{"model_type": "optimus"}`, `c.json:1:2: model_type "optimus" is not supported: ` + layerList},
		// Four letters are enough: Gpt2Model's model part is gpt2.
		{`{"architectures": ["Gpt2Model"]}`, `c.json:1:2: architectures "Gpt2Model" is not supported: the nearest supported class by name is GPT2LMHeadModel:`},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 500 {
			t.Errorf("%s: %v, want one line starting %q", c.in, err, c.want)
		}
	}
}
