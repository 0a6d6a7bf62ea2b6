package scenarios

import (
	"fmt"

	"github.com/zerosim/zerosim/units"
)

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
	if p.EP < 1 {
		return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d is out of range: ep must be ≥ 1 (1: no expert parallelism)", p.EP))
	}
	intra := s.N() / max(p.K, 1)
	if p.EP == 1 {
		return nil
	}
	if p.K > 1 {
		// At the --set that brought k in, when ep came from the file
		// (qa21 LOW 4: --set parallelism.k=2 was blamed on the ep line).
		key := "parallelism.ep"
		if l.bySet("parallelism.k") && !l.bySet(key) {
			key = "parallelism.k"
		}
		return l.errPath(key, fmt.Sprintf("ep=%d with k=%d is not modelled (use k: 1 with expert parallelism)", p.EP, p.K))
	}
	g, moe := epGCD(s, intra)
	if !moe {
		return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d needs routed experts, and the model has none (use a MoE model such as mixtral-8x7b, or delete ep)", p.EP))
	}
	if intra%p.EP != 0 {
		return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d does not divide the %d ranks of a shard group dp·cp/k (use a divisor of %d and of every MoE layer's experts: %s)", p.EP, intra, intra, divisors(g)))
	}
	for i, ly := range s.Model.LayerList {
		if ly.Group != GroupExpert {
			continue
		}
		switch n := expertCount(ly); {
		case n%int64(p.EP) == 0:
		case ly.Dims != nil && ly.Dims.Experts > 0:
			return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d does not divide the %d experts of %s (use a divisor of %d and of the %d ranks of a shard group: %s)", p.EP, n, ly.Name, n, intra, divisors(g)))
		default:
			return l.errPath("parallelism.ep", fmt.Sprintf("ep=%d does not divide the %d parameters of expert layer %s (model.layer_list[%d]; use one of %s)", p.EP, n, ly.Name, i, divisors(g)))
		}
	}
	if d := s.Communication.MoEDispatcher; d.Dedup() {
		// The two-phase lowering splits the ep group by node: it needs
		// whole nodes or a part of one, ranks in GPU order.
		gpn := s.Cluster.GPUsPerNode
		if gpn > 0 && p.EP%gpn != 0 && gpn%p.EP != 0 {
			return l.errPath("communication.moe_dispatcher", fmt.Sprintf("moe_dispatcher %s with ep=%d on %d-GPU nodes: an ep group must be whole nodes or lie in one node (use an ep that divides %d or is a multiple of it, or moe_dispatcher: alltoall)", d, p.EP, gpn, gpn))
		}
		if max(p.CP, 1) > 1 && len(s.Cluster.Placement) > 0 && s.Cluster.Placement[0] == AxisDP {
			return l.errPath("communication.moe_dispatcher", fmt.Sprintf("moe_dispatcher %s with cluster.placement [dp, cp]: an ep group's ranks are not on consecutive GPUs (use placement [cp, dp] or moe_dispatcher: alltoall)", d))
		}
		l.warn(s, "parallelism.ep", fmt.Sprintf(epNoteDedup, p.EP, d))
		return nil
	}
	l.warn(s, "parallelism.ep", fmt.Sprintf(epNote, p.EP))
	return nil
}

// epGCD is the greatest common divisor of a shard group's intra ranks and
// every MoE layer's expert count (its parameters when the layer has no
// dims): the expert-parallel degrees that can run are its divisors. moe is
// false for a model without routed experts.
func epGCD(s *Scenario, intra int) (g int64, moe bool) {
	g = int64(intra)
	for _, ly := range s.Model.LayerList {
		if ly.Group != GroupExpert {
			continue
		}
		moe = true
		g = gcd(g, expertCount(ly))
	}
	return g, moe
}

// EPDegrees are the expert-parallel degrees s's model and GPUs can run
// with K = 1 (resolveEP's rule: ep divides N = dp·cp and every MoE layer's
// expert count), ascending from 1; nil for a model without routed experts.
// A deduplicating dispatcher's rule (whole nodes or part of one) is the
// loader's to check.
func (s *Scenario) EPDegrees() []int {
	g, moe := epGCD(s, s.N())
	if !moe {
		return nil
	}
	var out []int
	for d := int64(1); d <= g; d++ {
		if g%d == 0 {
			out = append(out, int(d))
		}
	}
	return out
}

// expertCount is what ep must divide in an expert layer: its routed
// experts, or its parameters when it has no dims.
func expertCount(ly Layer) int64 {
	if ly.Dims != nil && ly.Dims.Experts > 0 {
		return ly.Dims.Experts
	}
	return int64(ly.Params)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
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
const epNote = "ep=%d: the experts' all-to-alls and GEMMs assume balanced, dropless routing (every expert gets tokens·top_k/E rows; no load imbalance, capacity factor or dropped tokens) and Megatron's alltoall token dispatcher, which sends every token's top-k copies (token_dispatcher.py at Megatron-LM d98e8a64), not DeepEP/HybridEP's flex dispatcher, which sends a token once per destination rank or node (communication.moe_dispatcher: deepep models it); the all-to-alls are not overlapped with compute"

// epNoteDedup is epNote under a deduplicating dispatcher (zero's
// dedupBytes).
const epNoteDedup = "ep=%d: the experts' all-to-alls and GEMMs assume balanced, dropless routing (every expert gets tokens·top_k/E rows; each token's top-k experts drawn uniformly, no load imbalance, capacity factor or dropped tokens) and the %s dispatcher's traffic (DeepEP's normal kernels, Megatron's flex dispatcher with deepep or hybridep): a token once per other destination node over the network to the GPU of the same local index, then once per destination GPU over NVLink (inside one node: once per destination GPU), in bf16 both ways (Megatron's fused_a2a.py passes bf16 to DeepEP, and asserts fp8_dispatch off for HybridEP, :327, though HybridEP has an FP8 dispatch), with the model's node-limited routing (n_group/topk_group) where it has one; dispatch and combine are not overlapped with compute; their two phases run at once, as DeepEP's kernel pipelines them (internode.cu's forwarders), each taking the longer phase"

// ExpertTokens is the bytes of one MoE layer's all-to-all buffer per rank
// and micro-batch: every token goes to its top-k experts as a hidden-sized
// activation of 2 bytes (bf16), S = b·s·k·h·2 (Megatron's token dispatcher
// moves exactly these rows; the combine brings them back). It is an error
// when S exceeds int64.
func ExpertTokens(s *Scenario, l Layer) (int64, error) {
	if l.Dims == nil || l.Dims.TopK == 0 {
		return 0, nil
	}
	seq := s.RankSeqLen()
	S := max(s.Training.MicroBatch, 1)
	for _, f := range [...]int64{seq, l.Dims.TopK, l.Dims.Hidden, 2} {
		var err error
		if S, err = units.Mul(S, f); err != nil {
			return 0, fmt.Errorf("scenarios: layer %q: all-to-all bytes b·s·k·h·2: %w", l.Name, err)
		}
	}
	return S, nil
}
