package zero

import (
	"fmt"
	"math/big"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// This file is a deduplicating MoE dispatcher's traffic
// (communication.moe_dispatcher deepep, flex, hybridep): the bytes each
// rank sends over the ep group's rail and node all-to-alls (a2aAfter).

// dedupBytes is one MoE layer's dispatch (or combine) traffic under a
// deduplicating dispatcher (communication.moe_dispatcher deepep, flex,
// hybridep), per rank and micro-batch: rail is the bytes each rank sends to
// each other node of its ep group (to the rank of the same local index
// there), node the bytes each rank forwards to each other rank of its node
// in the ep group (the group sizes: epSplit).
//
// The traffic is DeepEP's normal internode kernels
// (csrc/kernels/legacy/internode.cu at deepseek-ai/DeepEP
// dd758caf451848bd150e1046af3d0a73e5fff38d): the RDMA sender puts a token
// into a node's buffer once when any of that node's GPUs holds one of its
// experts (:634-638, is_token_in_rank of the node's 8 GPUs ≠ 0), on the
// PE of its own NVL rank there (translate_dst_rdma_rank, :88-89; its own
// node's copy stays local, :616); the kRDMAAndNVLForwarder warps (:487,
// :849) forward it over NVLink to each GPU of the node that holds one of
// its experts. The combine is the reverse with reduction (:1746
// kNVLSender, kNVLAndRDMAForwarder, kRDMAReceiver). Inside one node
// (intranode.cu, :360-363) a token goes once to each destination GPU.
// HybridEP (the hybrid-ep branch, 94a9f8f6b146c07d97ec58f67cd6d303296d6098,
// csrc/hybrid_ep/backend/hybrid_ep_backend.cuh:127, :712-738) writes a
// token once per remote node (attn_to_rdma_map) the same way.
//
// Bytes per token are hidden·2 (bf16) both ways: Megatron's flex
// dispatcher hands DeepEP the bf16 hidden states (FusedDispatch,
// megatron/core/transformer/moe/fused_a2a.py:116 at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553), and to HybridEP as well: the
// same file's init_hybrid_ep_buffer asserts fp8_dispatch off (:327) and
// HybridEPDispatch.forward sets it False (:402), although HybridEP itself
// can dispatch FP8 (HybridEPBuffer's use_fp8, deep_ep/hybrid_ep_buffer.py
// :42 on the hybrid-ep branch at 94a9f8f6). DeepEP's FP8 dispatch is
// DeepSeek's own use (docs/legacy.md:19 at dd758caf), not modelled.
//
// Routing is balanced: each token's top_k experts are a uniform k-subset
// of the E routed experts (of the kept groups' under node-limited routing,
// BlockDims.RouterGroups), split in contiguous blocks of E/ep over the ep
// ranks. With T = b·⌈seq/cp⌉ tokens per rank, rail = T·2h·P(a node gets ≥1)
// and node = railRanks·T·2h·P(a GPU gets ≥1) — a forwarder receives from
// the rank of its local index on every node of the group, its own
// included — each rounded to the nearest byte (missProbability).
func dedupBytes(s *scenarios.Scenario, l scenarios.Layer) (rail, node int64, err error) {
	ep := max(s.Parallelism.EP, 1)
	railRanks, nodeRanks := epSplit(ep, s.Cluster.GPUsPerNode)
	if l.Dims == nil || l.Dims.TopK == 0 || l.Dims.Experts == 0 {
		return 0, 0, nil
	}
	d := l.Dims
	groups, topk := int64(1), int64(1)
	if d.RouterGroups > 1 && d.RouterGroupTopK >= 1 {
		groups, topk = d.RouterGroups, d.RouterGroupTopK
	}
	seq := s.RankSeqLen()
	tokBytes := new(big.Int).Mul(big.NewInt(max(s.Training.MicroBatch, 1)*seq), big.NewInt(d.Hidden*2))
	hit := func(parts int64) *big.Rat {
		// The mean over the parts of P(part gets ≥ 1 of the token's
		// experts). A part's miss probability depends only on how its
		// E/parts consecutive experts overlap the groups, which its first
		// expert's offset in its group fixes (without groups, one group of
		// E: every part alike): each offset is evaluated once.
		sum := new(big.Rat)
		per, size := d.Experts/parts, d.Experts/groups
		miss := map[int64]*big.Rat{}
		for i := range parts {
			off := i * per % size
			if groups == 1 {
				off = 0
			}
			m, ok := miss[off]
			if !ok {
				m = missProbability(d.Experts, d.TopK, groups, topk, i*per, (i+1)*per)
				miss[off] = m
			}
			sum.Add(sum, new(big.Rat).Sub(big.NewRat(1, 1), m))
		}
		return sum.Quo(sum, big.NewRat(parts, 1))
	}
	if railRanks > 1 {
		if rail, err = roundRat(new(big.Rat).Mul(new(big.Rat).SetInt(tokBytes), hit(int64(railRanks)))); err != nil {
			return 0, 0, fmt.Errorf("zero: layer %q: dedup all-to-all bytes to each other node: %w", l.Name, err)
		}
	}
	if nodeRanks > 1 {
		x := new(big.Rat).Mul(new(big.Rat).SetInt(tokBytes), hit(int64(ep)))
		if node, err = roundRat(x.Mul(x, big.NewRat(int64(railRanks), 1))); err != nil {
			return 0, 0, fmt.Errorf("zero: layer %q: dedup all-to-all bytes to each node peer: %w", l.Name, err)
		}
	}
	return rail, node, nil
}

// epSplit is how a deduplicating dispatcher splits an ep group of ep
// ranks on gpn-GPU nodes: railRanks nodes of nodeRanks ranks each
// (nodeRanks = min(ep, gpn); the loader refuses other groups).
func epSplit(ep, gpn int) (railRanks, nodeRanks int) {
	nodeRanks = max(ep, 1)
	if gpn > 0 && gpn < nodeRanks {
		nodeRanks = gpn
	}
	return max(ep, 1) / nodeRanks, nodeRanks
}

// epPhase is one all-to-all of an expert unit's dispatch or combine: over
// group, of ranks ranks.
type epPhase struct {
	group GroupKind
	ranks int
}

// epPhases is the all-to-alls one dispatch or combine of an expert unit
// is lowered to, in issue order (none without expert parallelism):
// alltoall's one over the ep group, or a deduplicating dispatcher's rail
// then node phase, each when its group has two ranks or more. a2aAfter
// adds them and countTasks counts them.
func epPhases(s *scenarios.Scenario) []epPhase {
	ep := s.Parallelism.EP
	if ep <= 1 {
		return nil
	}
	if !s.Communication.MoEDispatcher.Dedup() {
		return []epPhase{{GroupEP, ep}}
	}
	rail, node := epSplit(ep, s.Cluster.GPUsPerNode)
	var ps []epPhase
	for _, p := range [...]epPhase{{GroupEPRail, rail}, {GroupEPNode, node}} {
		if p.ranks >= 2 {
			ps = append(ps, p)
		}
	}
	return ps
}

// expertA2A reports whether layer l's dispatch and combine move tokens:
// a routed-experts layer with top_k experts per token.
func expertA2A(l scenarios.Layer) bool {
	return l.Group == scenarios.GroupExpert && l.Dims != nil && l.Dims.TopK > 0
}

// a2aBytes is, per unit and epPhases entry, the bytes S of that
// all-to-all (0: the unit has none), computed once per build: the
// deduplicating dispatcher's exact probabilities are costly (big.Rat), and
// every dispatch, combine, backward and rerun of a unit moves the same
// bytes. Layers of equal routing dims share one evaluation.
func a2aBytes(s *scenarios.Scenario, phases []epPhase) ([][]int64, error) {
	if len(phases) == 0 {
		return nil, nil
	}
	type key struct{ experts, topK, hidden, groups, groupTopK int64 }
	memo := map[key][]int64{}
	out := make([][]int64, len(s.Model.LayerList))
	for u, l := range s.Model.LayerList {
		if !expertA2A(l) {
			continue
		}
		d := l.Dims
		k := key{d.Experts, d.TopK, d.Hidden, d.RouterGroups, d.RouterGroupTopK}
		if b, ok := memo[k]; ok {
			out[u] = b
			continue
		}
		b := make([]int64, len(phases))
		if !s.Communication.MoEDispatcher.Dedup() {
			S, err := scenarios.ExpertTokens(s, l)
			if err != nil {
				return nil, fmt.Errorf("zero: %w", err)
			}
			b[0] = S
		} else {
			rail, node, err := dedupBytes(s, l)
			if err != nil {
				return nil, err
			}
			for i, p := range phases {
				pair := rail
				if p.group == GroupEPNode {
					pair = node
				}
				// An all-to-all of S bytes sends ⌈S/n⌉ to each of its n ranks.
				if b[i], err = units.Mul(pair, int64(p.ranks)); err != nil {
					return nil, fmt.Errorf("zero: layer %q: dedup all-to-all bytes over %s: %w", l.Name, p.group, err)
				}
			}
		}
		memo[k], out[u] = b, b
	}
	return out, nil
}

// roundRat is x ≥ 0 rounded half up to an integer; an error past int64.
func roundRat(x *big.Rat) (int64, error) {
	n := new(big.Int).Mul(x.Num(), big.NewInt(2))
	n.Add(n, x.Denom())
	n.Quo(n, new(big.Int).Mul(x.Denom(), big.NewInt(2)))
	if !n.IsInt64() {
		return 0, fmt.Errorf("%s bytes do not fit in 64 bits", n)
	}
	return n.Int64(), nil
}

// missProbability is the probability that none of a token's k routed
// experts lies in experts [lo, hi) of E, when the router keeps topk of
// groups equal groups of consecutive experts (node-limited routing,
// Megatron's group_limited_topk, megatron/core/transformer/moe/moe_utils.py
// :673 at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553; DeepSeek-V3's n_group, topk_group; groups = topk = 1
// without it) and both the groups and the k experts among the kept groups'
// are uniform draws (balanced routing). Without groups it is the
// hypergeometric C(E−a, k)/C(E, k), a = hi − lo; with them the mean over
// the C(groups, topk) kept sets of C(P−x, k)/C(P, k), P = topk·E/groups
// the kept experts and x those of them in [lo, hi).
func missProbability(E, k, groups, topk, lo, hi int64) *big.Rat {
	if groups < 1 || topk < 1 || topk > groups || E%groups != 0 || k < 0 || lo < 0 || hi > E || lo > hi {
		return big.NewRat(1, 1)
	}
	size := E / groups
	pool := topk * size
	// ways[c][x]: the number of c-subsets of the groups seen so far with
	// x of their experts in [lo, hi).
	ways := make([][]*big.Int, topk+1)
	for c := range ways {
		ways[c] = make([]*big.Int, pool+1)
		for x := range ways[c] {
			ways[c][x] = new(big.Int)
		}
	}
	ways[0][0].SetInt64(1)
	for g := range groups {
		ov := max(0, min(hi, (g+1)*size)-max(lo, g*size))
		for c := min(topk, g+1); c >= 1; c-- {
			for x := pool; x >= ov; x-- {
				ways[c][x].Add(ways[c][x], ways[c-1][x-ov])
			}
		}
	}
	total := new(big.Int)
	sum := new(big.Rat)
	for x, w := range ways[topk] {
		if w.Sign() == 0 {
			continue
		}
		total.Add(total, w)
		sum.Add(sum, new(big.Rat).Mul(new(big.Rat).SetInt(w), hypergeomMiss(pool, int64(x), k)))
	}
	return sum.Quo(sum, new(big.Rat).SetInt(total))
}

// hypergeomMiss is C(P−x, k)/C(P, k): a uniform k-subset of P items
// misses x given ones.
func hypergeomMiss(P, x, k int64) *big.Rat {
	if k > P {
		return big.NewRat(0, 1)
	}
	r := big.NewRat(1, 1)
	for i := range k {
		if P-x-i <= 0 {
			return big.NewRat(0, 1)
		}
		r.Mul(r, big.NewRat(P-x-i, P-i))
	}
	return r
}
