package memory

import "github.com/zerosim/zerosim/scenarios"

// BlockStyle is the block layout the activation and FLOP models use for a
// transformer: "gpt" (LayerNorm, GeLU MLP) or "llama" (RMSNorm, gated MLP).
// A model imported from Hugging Face (arch hf) follows its architecture:
// GPT-2, OPT, GPT-NeoX and Falcon decoders are GPT-style, the others the
// importer handles (Llama, Mistral, Mixtral, Qwen, Gemma 2, Phi-3, DeepSeek)
// have RMSNorm and a gated MLP (scenarios/hf.go hfLlamaLike).
func BlockStyle(m *scenarios.Model) string {
	switch m.Arch {
	case scenarios.ArchLlama:
		return "llama"
	case scenarios.ArchHF:
		return scenarios.HFBlockArch(m.Architecture)
	}
	return "gpt"
}
