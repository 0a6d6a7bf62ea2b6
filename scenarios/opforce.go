package scenarios

import (
	"fmt"
	"strings"
	"unicode"
)

// DefaultOpForceRecompute is training.op_force_recompute's default,
// torchtitan's activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns
// default (torchtitan/config/job_config.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, lines 661-663): the router
// gate of every MoE block.
var DefaultOpForceRecompute = []string{"moe.router.gate"}

// OpForceFragments is training.op_force_recompute: the list given, or
// DefaultOpForceRecompute when unset (an empty list forces nothing).
func (t *Training) OpForceFragments() []string {
	if t.OpForceRecompute == nil {
		return DefaultOpForceRecompute
	}
	return *t.OpForceRecompute
}

// OpForceJoined is training.op_force_recompute as the activation model
// carries it in its comparable dimensions (memory.BlockDims.OpForce):
// the fragments joined by "\n" (the loader refuses control characters in
// a fragment) and whether the list was given; unset (given false) is
// DefaultOpForceRecompute.
func (t *Training) OpForceJoined() (joined string, given bool) {
	if t.OpForceRecompute == nil {
		return "", false
	}
	return strings.Join(*t.OpForceRecompute, "\n"), true
}

// BlockLinearFQNs lists the nn.Linear modules of block u of m, by their
// fully qualified names below the block, in the order its forward runs
// them: the names torchtitan's _apply_op_sac matches
// training.op_force_recompute's fragments against
// (torchtitan/distributed/activation_checkpoint.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, lines 76-93, over the block's
// named_modules()). They are torchtitan's module names at that commit:
//
//   - attention: attention.wq, attention.wk, attention.wv, attention.wo
//     (torchtitan/models/llama3/model/model.py lines 203-208; qwen3,
//     llama4 and gpt_oss the same); multi-head latent attention
//     attention.wq_a, attention.wq_b (q_lora_rank > 0) or attention.wq,
//     then attention.wkv_a, attention.wkv_b, attention.wo
//     (torchtitan/models/deepseek_v3/model/model.py lines 215-231);
//   - a dense MLP: feed_forward.w1, feed_forward.w3, feed_forward.w2
//     (llama3 model.py lines 338-340, in forward order w1, w3, w2);
//   - a MoE layer: moe.router.gate (torchtitan/models/moe/moe.py line
//     224, TokenChoiceTopKRouter.gate; MoE.router line 432), then the
//     shared experts' moe.shared_experts.w1, w3, w2 (a FeedForward, line
//     445); the routed experts (GroupedExperts) hold parameters, not
//     Linears.
//
// Blocks torchtitan has no model of take the same parents with the
// projections' own names: a gpt block's fused attention.qkv and its MLP
// feed_forward.w1, feed_forward.w2; a Gated DeltaNet's
// attention.in_proj_qkvz, attention.in_proj_ba and attention.out_proj
// (transformers' Qwen3NextGatedDeltaNet attribute names; Qwen3.5's
// in_proj_qkv, in_proj_z, in_proj_b, in_proj_a: GDNSplitProjections);
// Qwen2-MoE's shared expert gate moe.shared_expert_gate. nil for a unit
// that is no transformer block. memory's op policy names the block's mms
// the same (its tests hold the two lists equal).
func BlockLinearFQNs(m *Model, u int) []string {
	if u < 0 || u >= len(m.LayerList) || !m.LayerList[u].Block {
		return nil
	}
	d := m.LayerList[u].Dims
	var out []string
	attn := func(names ...string) {
		for _, n := range names {
			out = append(out, "attention."+n)
		}
	}
	switch {
	case d != nil && d.LinearAttention != "" && GDNSplitProjections(m.Architecture):
		attn("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj")
	case d != nil && d.LinearAttention != "":
		attn("in_proj_qkvz", "in_proj_ba", "out_proj")
	case d != nil && d.KVLoRARank > 0 && d.QLoRARank > 0:
		attn("wq_a", "wq_b", "wkv_a", "wkv_b", "wo")
	case d != nil && d.KVLoRARank > 0:
		attn("wq", "wkv_a", "wkv_b", "wo")
	case blockArch(m) == ArchGPT:
		attn("qkv", "wo")
	default:
		attn("wq", "wk", "wv", "wo")
	}
	if u+1 < len(m.LayerList) && !m.LayerList[u+1].Block {
		if x := m.LayerList[u+1].Dims; x != nil && x.ExpertsOnly() {
			out = append(out, "moe.router.gate")
		}
	}
	switch {
	case d == nil || d.FFN > 0:
		if blockArch(m) == ArchGPT {
			out = append(out, "feed_forward.w1", "feed_forward.w2")
		} else {
			out = append(out, "feed_forward.w1", "feed_forward.w3", "feed_forward.w2")
		}
	case d.SharedFFN > 0:
		out = append(out, "moe.shared_experts.w1", "moe.shared_experts.w3", "moe.shared_experts.w2")
		if d.SharedGate {
			out = append(out, "moe.shared_expert_gate")
		}
	}
	return out
}

// blockOtherModules lists the modules of block u of m that are not
// nn.Linear, by their FQNs below the block, "" the block itself: torchtitan's
// TransformerBlock holds attention (with its inner_attention, the SDPA or
// flex wrapper, and qwen3's q_norm and k_norm, MLA's q_norm and kv_norm),
// attention_norm, ffn_norm, and feed_forward or moe (with experts, the
// GroupedExperts, router, reorderer and shared_experts)
// (torchtitan/models/llama3/model/model.py lines 203-220 and 375-383,
// qwen3/model/model.py lines 173-199, deepseek_v3/model/model.py lines
// 215-244, moe/moe.py lines 426-449 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1). A Gated DeltaNet, which
// torchtitan has no model of, is counted with attention only.
func blockOtherModules(m *Model, u int) []string {
	d := m.LayerList[u].Dims
	out := []string{"", "attention", "attention_norm", "ffn_norm"}
	switch {
	case d != nil && d.LinearAttention != "":
	case d != nil && d.KVLoRARank > 0:
		out = append(out, "attention.inner_attention", "attention.kv_norm")
		if d.QLoRARank > 0 {
			out = append(out, "attention.q_norm")
		}
	default:
		out = append(out, "attention.inner_attention")
		if d != nil && d.QKNorm != "" {
			out = append(out, "attention.q_norm", "attention.k_norm")
		}
	}
	if d == nil || d.FFN > 0 {
		out = append(out, "feed_forward")
	}
	if u+1 < len(m.LayerList) && !m.LayerList[u+1].Block {
		if x := m.LayerList[u+1].Dims; x != nil && x.ExpertsOnly() {
			out = append(out, "moe", "moe.experts", "moe.router", "moe.reorderer")
			if d != nil && d.FFN == 0 && d.SharedFFN > 0 {
				out = append(out, "moe.shared_experts")
			}
		}
	}
	return out
}

// blockArch is the block layout the activation model gives m's blocks
// (memory.BlockStyle): llama, an HF class's (HFBlockArch), else gpt.
func blockArch(m *Model) string {
	switch m.Arch {
	case ArchLlama:
		return ArchLlama
	case ArchHF:
		return HFBlockArch(m.Architecture)
	}
	return ArchGPT
}

// resolveOpForce checks training.op_force_recompute. A fragment torchtitan
// would refuse is an error: one in the FQN of a module that is not an
// nn.Linear (_apply_op_sac raises ValueError: "expected to match a
// nn.Linear"), torchtitan's FQNs being "layers.<i>." and the name below
// the block (blockOtherModules; an empty fragment is in every one, the
// block's own "layers.0." first), and one with a control character, which
// no module name holds (and which memory.BlockDims.OpForce's separator
// rules out). A fragment no Linear of any block holds is accepted, as
// torchtitan accepts it, and warned of: it forces nothing. So is one that
// names Linears of some layers only ("layers.3.attention.wq"): zerosim
// matches the FQNs below the block (BlockLinearFQNs), the same in every
// block. The list is torchtitan's op policy's only: under another
// training.recompute it is warned of.
func (l *loader) resolveOpForce(s *Scenario) *Error {
	const path = "training.op_force_recompute"
	if s.Training.OpForceRecompute == nil {
		return nil
	}
	frags := *s.Training.OpForceRecompute
	for i, f := range frags {
		at := fmt.Sprintf("%s[%d]", path, i)
		if f == "" {
			return l.errAlone(at, "op_force_recompute: an empty fragment is in every module's FQN, the block's own first, which is not an nn.Linear: torchtitan's _apply_op_sac raises ValueError (name a Linear such as moe.router.gate, or delete the item)")
		}
		if strings.ContainsFunc(f, unicode.IsControl) {
			return l.errAlone(at, fmt.Sprintf("op_force_recompute: %q holds a control character, which no module name holds (name a Linear such as moe.router.gate)", f))
		}
	}
	if s.Training.Recompute != RecomputeOp {
		l.warn(s, path, fmt.Sprintf("op_force_recompute counts nothing here: it is torchtitan's op policy's list, and training.recompute is %s (set recompute: op, or delete the key)", s.Training.Recompute))
		return nil
	}
	names, layered := map[string]bool{}, map[string]bool{}
	layer := 0
	for u, x := range s.Model.LayerList {
		if !x.Block || x.Dims != nil && x.Dims.MTP {
			continue
		}
		prefix := fmt.Sprintf("layers.%d.", layer)
		layer++
		for i, f := range frags {
			for _, o := range blockOtherModules(&s.Model, u) {
				// torchtitan's FQN of the block itself is "layers.<i>.".
				if full := prefix + o; strings.Contains(full, f) {
					return l.errAlone(fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("op_force_recompute: %q is in the FQN of %s, which is not an nn.Linear: torchtitan's _apply_op_sac raises ValueError (name a Linear such as moe.router.gate)", f, full))
				}
			}
		}
		for _, n := range BlockLinearFQNs(&s.Model, u) {
			names[n] = true
			layered[prefix+n] = true
		}
	}
	for i, f := range frags {
		at := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case containedIn(f, names):
		case containedIn(f, layered):
			l.warn(s, at, fmt.Sprintf("op_force_recompute: %q names Linears of some layers only (their FQNs start layers.<i>.): zerosim matches the FQNs below the block, the same in every block, so it forces nothing here", f))
		default:
			l.warn(s, at, fmt.Sprintf("op_force_recompute: %q is in the FQN of no Linear of the model's blocks (%s): it forces nothing", f, linearNamesHint(names)))
		}
	}
	return nil
}

// containedIn reports whether f is in one of names.
func containedIn(f string, names map[string]bool) bool {
	for n := range names {
		if strings.Contains(n, f) {
			return true
		}
	}
	return false
}

// linearNamesHint names a few of the blocks' Linears for a warning.
func linearNamesHint(names map[string]bool) string {
	if len(names) == 0 {
		return "the model has no transformer blocks"
	}
	var have []string
	for _, n := range []string{"attention.wq", "attention.wo", "feed_forward.w2", "moe.router.gate", "moe.shared_experts.w2", "attention.qkv", "attention.out_proj", "attention.wkv_b"} {
		if names[n] {
			have = append(have, n)
		}
	}
	if len(have) == 0 {
		return "see docs/scenario-format.md"
	}
	return "they are such as " + strings.Join(have, ", ")
}

// resolveOpAttention checks training.op_recompute_attention, torchtitan's
// op policy before b39377f, whose _save_list held SDPA's flash and
// memory-efficient ops but not its cuDNN one (Training.
// OpRecomputeAttention): with any other kernel it describes no save list
// torchtitan had, so it is refused; under a policy other than op it
// counts nothing and is warned of; under context parallelism, where
// ring attention calls the kernel once per round, it is not modelled.
func (l *loader) resolveOpAttention(s *Scenario) *Error {
	const path = "training.op_recompute_attention"
	t := &s.Training
	if !t.OpRecomputeAttention {
		return nil
	}
	if t.AttentionKernel != KernelCuDNN {
		return l.errPath(path, fmt.Sprintf("op_recompute_attention describes torchtitan's op policy before b39377f, whose _save_list lacked only the cuDNN attention op (flash and memory-efficient SDPA were saved); attention_kernel is %s (set training.attention_kernel: cudnn, or delete the key)", t.AttentionKernel))
	}
	if s.Parallelism.CP > 1 {
		return l.errPath(path, fmt.Sprintf("op_recompute_attention under context parallelism (cp=%d) is not modelled: ring attention reruns the kernel once per round (set parallelism.cp: 1, or delete the key)", s.Parallelism.CP))
	}
	if t.Recompute != RecomputeOp {
		l.warn(s, path, fmt.Sprintf("op_recompute_attention counts nothing here: it is torchtitan's op policy's, and training.recompute is %s (set recompute: op, or delete the key)", t.Recompute))
	}
	return nil
}

// resolveOpA2A checks training.op_save_all_to_all (Training.
// OpSaveAllToAll), torchtitan's op policy from c4e2291: under another
// policy, or without routed experts sent across expert parallelism, it
// counts nothing and is warned of.
func (l *loader) resolveOpA2A(s *Scenario) *Error {
	const path = "training.op_save_all_to_all"
	t := &s.Training
	switch {
	case !t.OpSaveAllToAll:
	case t.Recompute != RecomputeOp:
		l.warn(s, path, fmt.Sprintf("op_save_all_to_all counts nothing here: it is torchtitan's op policy's, and training.recompute is %s (set recompute: op, or delete the key)", t.Recompute))
	case s.Parallelism.EP <= 1:
		l.warn(s, path, "op_save_all_to_all counts nothing here: without expert parallelism (parallelism.ep 1) there is no all-to-all (set parallelism.ep, or delete the key)")
	}
	return nil
}
