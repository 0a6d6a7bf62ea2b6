package scenarios

import "fmt"

// resolveEP validates parallelism.ep, the expert-parallel degree: the
// routed experts of every MoE layer are split over ep consecutive ranks of
// an intra group (Megatron's expert_model_parallel_size carved out of data
// parallelism; torchtitan's ep mesh dimension), and each expert's
// parameters are data-parallel (and ZeRO-sharded) over the N/(K·ep) ranks
// that hold the same experts.
func (l *loader) resolveEP(s *Scenario) *Error {
	p := &s.Parallelism
	if !l.has("parallelism.ep") {
		p.EP = 1
		return nil
	}
	intra := s.N() / max(p.K, 1)
	if p.EP < 1 || intra%p.EP != 0 {
		return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d does not divide the %d ranks of a shard group dp·cp/k (use a divisor of %d: %s)", p.EP, intra, intra, divisors(int64(intra))))
	}
	if p.EP == 1 {
		return nil
	}
	if p.K > 1 {
		return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d with k=%d is not modelled (use k: 1 with expert parallelism)", p.EP, p.K))
	}
	moe := false
	for i, ly := range s.Model.LayerList {
		if ly.Group != GroupExpert {
			continue
		}
		moe = true
		experts := int64(0)
		if ly.Dims != nil {
			experts = ly.Dims.Experts
		}
		switch {
		case experts > 0 && experts%int64(p.EP) != 0:
			return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d does not divide the %d experts of %s (use a divisor of %d)", p.EP, experts, ly.Name, experts))
		case experts == 0 && int64(ly.Params)%int64(p.EP) != 0:
			return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d does not divide the %d parameters of expert layer %s (model.layer_list[%d])", p.EP, int64(ly.Params), ly.Name, i))
		}
	}
	if !moe {
		return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d needs routed experts, and the model has none (use a MoE model such as mixtral-8x7b, or delete ep)", p.EP))
	}
	l.warn(s, "parallelism.ep", fmt.Sprintf(epNote, p.EP))
	return nil
}

// epNote is the load note of every MoE scenario with ep > 1: what its
// all-to-alls and expert GEMMs assume. They are Megatron-LM's dropless
// MoEAlltoAllTokenDispatcher (megatron/core/transformer/moe/token_dispatcher.py
// at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553: without a
// capacity factor num_out_tokens = tokens·moe_router_topk, :556, sent by
// all_to_all over the ep group, :705; its probs all_to_all, :718, a few bytes
// per token, is left out): every token's top-k copies on the wire
// (ExpertTokens), and every expert receiving exactly tokens·top_k/E rows.
// Not modelled: the flex dispatcher (MoEFlexTokenDispatcher, :1809, with
// DeepEP or HybridEP), which sends a token once per destination rank or
// node; load imbalance, capacity factors and dropped tokens; all-to-alls
// overlapped with compute (Megatron's moe_a2a_overlap, DeepSeek's
// DualPipe): they run on the compute stream.
const epNote = "ep=%d: the experts' all-to-alls and GEMMs assume balanced, dropless routing (every expert gets tokens·top_k/E rows; no load imbalance, capacity factor or dropped tokens) and Megatron's alltoall token dispatcher, which sends every token's top-k copies (token_dispatcher.py at Megatron-LM d98e8a64), not DeepEP/HybridEP's flex dispatcher, which sends a token once per destination rank or node; the all-to-alls are not overlapped with compute"

// ExpertTokens is the bytes of one MoE layer's all-to-all buffer per rank
// and micro-batch: every token goes to its top-k experts as a hidden-sized
// activation of 2 bytes (bf16), S = b·s·k·h·2 (Megatron's token dispatcher
// moves exactly these rows; the combine brings them back).
func ExpertTokens(s *Scenario, l Layer) int64 {
	if l.Dims == nil || l.Dims.TopK == 0 {
		return 0
	}
	cp := int64(max(s.Parallelism.CP, 1))
	seq := (s.Model.SeqLen + cp - 1) / cp
	return max(s.Training.MicroBatch, 1) * seq * l.Dims.TopK * l.Dims.Hidden * 2
}
