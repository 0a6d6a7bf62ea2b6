package memory

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// ActivationSpec describes a model's activations for PlanActivations: the
// block dimensions, the checkpointing policy, which units are transformer
// blocks and which unit carries the output head and the loss.
type ActivationSpec struct {
	Dims BlockDims
	// Policy is none, selective, op or full; with EveryN > 1, blocks whose
	// 1-based index is a multiple of EveryN are checkpointed with Policy
	// (torchtitan's layer-level selective option) and the others keep
	// everything.
	Policy string
	EveryN int
	// Blocks marks the transformer blocks among the units (forward order).
	Blocks []bool
	// Head is the unit whose activations include the output projection and
	// the loss (the last unit for a tied GPT, lm_head for llama); −1: none.
	Head int
}

// PlanActivations returns the stored and transient activation bytes of
// every unit (see BlockActivation and HeadActivation).
func PlanActivations(spec ActivationSpec) (stored, transient []int64, err error) {
	n := len(spec.Blocks)
	stored, transient = make([]int64, n), make([]int64, n)
	var policies [2]struct{ s, t int64 }
	for i, p := range []string{PolicyNone, spec.Policy} {
		if policies[i].s, policies[i].t, err = BlockActivation(spec.Dims, p); err != nil {
			return nil, nil, err
		}
	}
	block := 0
	for u, isBlock := range spec.Blocks {
		if !isBlock {
			continue
		}
		p := policies[1]
		if spec.EveryN > 1 && !EveryNth(block, spec.EveryN) {
			p = policies[0]
		}
		stored[u], transient[u] = p.s, p.t
		block++
	}
	if spec.Head >= 0 {
		if spec.Head >= n {
			return nil, nil, fmt.Errorf("memory: head unit %d out of range [0, %d)", spec.Head, n)
		}
		hs, ht, err := HeadActivation(spec.Dims)
		if err != nil {
			return nil, nil, err
		}
		var c calc
		stored[spec.Head] = c.add(stored[spec.Head], hs)
		transient[spec.Head] = max(transient[spec.Head], ht)
		if c.err != nil {
			return nil, nil, fmt.Errorf("activation size overflows: %w", c.err)
		}
	}
	return stored, transient, nil
}

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
		switch m.Architecture {
		case "GPT2LMHeadModel", "OPTForCausalLM", "GPTNeoXForCausalLM", "FalconForCausalLM":
			return "gpt"
		}
		return "llama"
	}
	return "gpt"
}
