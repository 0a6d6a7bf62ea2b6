package zero

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMissProbability holds the probability that a node's (or GPU's)
// experts get none of a token's top-k to hand counts (Python's
// fractions and math.comb, written out here): the hypergeometric
// C(E−a, k)/C(E, k), and under node-limited routing the mean over the kept
// groups (C(8,4) = 70 sets: a node of two groups keeps none of them in
// C(6,4) = 15, one in 2·C(6,3) = 40, both in C(6,2) = 15).
func TestMissProbability(t *testing.T) {
	for _, c := range []struct {
		name                       string
		E, k, groups, topk, lo, hi int64
		num, den                   int64
	}{
		// Mixtral-8x7B ep 8: one expert per GPU, C(7,2)/C(8,2) = 21/28.
		{"mixtral gpu", 8, 2, 1, 1, 0, 1, 3, 4},
		// Mixtral ep 8 on two nodes of 4: C(4,2)/C(8,2) = 6/28.
		{"mixtral node of 4", 8, 2, 1, 1, 4, 8, 3, 14},
		// Qwen3-30B-A3B ep 16 on 2 nodes: a node holds 64 of 128, top-8:
		// C(64,8)/C(128,8) = 4,426,165,368/1,429,702,652,400.
		{"qwen3 node", 128, 8, 1, 1, 64, 128, 97527, 31502350},
		// Its GPUs hold 8: C(120,8)/C(128,8) = 840,261,910,995/1,429,702,652,400.
		{"qwen3 gpu", 128, 8, 1, 1, 8, 16, 56017460733, 95313510160},
		// DeepSeek-V3 (256 experts, top-8, n_group 8, topk_group 4) on 8
		// nodes: a node is one group: 1/2 + 1/2·C(96,8)/C(128,8).
		{"dsv3 node = group", 256, 8, 8, 4, 32, 64, 839948209, 1537314680},
		// On 4 nodes: a node is two groups: 15/70 + 40/70·C(96,8)/C(128,8)
		// + 15/70·C(64,8)/C(128,8).
		{"dsv3 node = 2 groups", 256, 8, 8, 4, 0, 64, 7208594871, 26903006900},
		// A GPU of 16 experts in one group: 1/2 + 1/2·C(112,8)/C(128,8).
		{"dsv3 half group", 256, 8, 8, 4, 16, 32, 5773314289, 8664864560},
		// Without the group limit a node of 32: C(224,8)/C(256,8).
		{"dsv3 ungrouped", 256, 8, 1, 1, 0, 32, 185207696947, 547678737000},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := missProbability(c.E, c.k, c.groups, c.topk, c.lo, c.hi)
			if want := big.NewRat(c.num, c.den); got.Cmp(want) != 0 {
				t.Errorf("missProbability(%d, %d, %d, %d, [%d, %d)) = %s, want %s", c.E, c.k, c.groups, c.topk, c.lo, c.hi, got.RatString(), want.RatString())
			}
		})
	}
}

// TestMissProbabilityMonteCarlo draws routings the way the model assumes
// them (topk of the groups uniformly, then k distinct experts uniformly
// among the kept groups') and counts the tokens whose experts miss the
// set: within 5 standard errors of missProbability.
func TestMissProbabilityMonteCarlo(t *testing.T) {
	const draws = 40000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name                       string
		E, k, groups, topk, lo, hi int64
	}{
		{"qwen3 node", 128, 8, 1, 1, 64, 128},
		{"qwen3 gpu", 128, 8, 1, 1, 8, 16},
		{"dsv3 node of 2 groups", 256, 8, 8, 4, 0, 64},
		{"dsv3 gpu straddling groups", 256, 8, 8, 4, 24, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			size := c.E / c.groups
			miss := 0
			for range draws {
				kept := rng.Perm(int(c.groups))[:c.topk]
				pool := make([]int64, 0, c.topk*size)
				for _, g := range kept {
					for e := int64(g) * size; e < int64(g+1)*size; e++ {
						pool = append(pool, e)
					}
				}
				hit := false
				for _, i := range rng.Perm(len(pool))[:c.k] {
					if e := pool[i]; e >= c.lo && e < c.hi {
						hit = true
					}
				}
				if !hit {
					miss++
				}
			}
			p, _ := missProbability(c.E, c.k, c.groups, c.topk, c.lo, c.hi).Float64()
			got := float64(miss) / draws
			if se := math.Sqrt(p * (1 - p) / draws); math.Abs(got-p) > 5*se {
				t.Errorf("Monte Carlo %.5f, missProbability %.5f (5σ = %.5f)", got, p, 5*se)
			}
		})
	}
}

// TestDedupBytes holds a deduplicating dispatcher's per-pair bytes to hand
// counts: T·2h·P(node hit) to each other node, (nodes)·T·2h·P(GPU hit) to
// each other GPU of the node (dedupBytes), rounded to the byte.
func TestDedupBytes(t *testing.T) {
	for _, c := range []struct {
		name, doc, sets  string
		rail, node       int64
		railRanks, nodes int
	}{
		// Qwen3-30B-A3B ep 16 on 2×8, T = 4096, h = 2048: 16,777,216 B per
		// token set; 1 − 97527/31502350 of it to the other node, and
		// 2·(1 − 56017460733/95313510160) of it to each GPU peer.
		{"qwen3 ep16", "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 1, ep: 16}\n",
			"deepep", 16725276, 13833890, 2, 8},
		// flex and hybridep are the same traffic.
		{"qwen3 flex", "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 1, ep: 16}\n",
			"flex", 16725276, 13833890, 2, 8},
		// DeepSeek-V3 ep 64 on 8 nodes, T = 4096, h = 7168 (58,720,256 B),
		// n_group 8, topk_group 4: a node is one group (1 − 839948209/
		// 1537314680 of it, 3.18 of the 7 other nodes where the unlimited
		// routing would reach 4.63), a GPU 4 experts of one:
		// 8·(1/2 − 1/2·C(124,8)/C(128,8)).
		{"dsv3 ep64", "cluster: {nodes: 64, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/deepseek-v3.json, seq_len: 4096}\nparallelism: {dp: 512, zero_stage: 3, ep: 64}\n",
			"deepep", 26637056, 54018012, 8, 8},
		// Mixtral ep 8 on 2 nodes of 4, T = 4096, h = 4096: 33,554,432·11/14
		// over the network, 2·33,554,432/4 to each GPU peer.
		{"mixtral 2x4", "cluster: {nodes: 16, gpus_per_node: 4, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 64, zero_stage: 3, ep: 8}\n",
			"hybridep", 26364197, 16777216, 2, 4},
		// Mixtral ep 8 in one node: a token goes to its 2 GPUs, the top-k
		// copies of the alltoall dispatcher: 33,554,432/4 per peer, S/8.
		{"mixtral 1x8", "cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 64, zero_stage: 3, ep: 8}\n",
			"deepep", 0, 8388608, 1, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Load("../scenarios/testdata/d.yaml", []byte("version: 1\n"+c.doc), []string{"communication.moe_dispatcher=" + c.sets})
			if err != nil {
				t.Fatal(err)
			}
			var l scenarios.Layer
			for _, x := range s.Model.LayerList {
				if x.Group == scenarios.GroupExpert {
					l = x
					break
				}
			}
			rail, node, err := dedupBytes(s, l)
			if err != nil {
				t.Fatal(err)
			}
			m, g := epSplit(s.Parallelism.EP, s.Cluster.GPUsPerNode)
			if rail != c.rail || node != c.node || m != c.railRanks || g != c.nodes {
				t.Errorf("dedupBytes = %d, %d over %d nodes of %d, want %d, %d over %d of %d", rail, node, m, g, c.rail, c.node, c.railRanks, c.nodes)
			}
		})
	}
}

// TestDedupBytesRouterGroups: node-limited routing on a hand-written
// layer list (8 experts in 4 groups of 2, 2 kept, top-2, ep 4 on 2 nodes
// of 2): a node holds groups 0–1 or 2–3 and misses with 1/6 + 4/6·C(2,2)/
// C(4,2) = 5/18, so T·2h = 128·128 = 16,384 B · 13/18 = 11,833 B to the
// other node; a GPU holds one group: 1/2 + 1/2·C(2,2)/C(4,2) = 7/12, and
// 2·16384·5/12 = 13,653 B to its node peer.
func TestDedupBytesRouterGroups(t *testing.T) {
	doc := "version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 1\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16}}\n  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128, router_groups: 4, router_group_topk: 2}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 1, ep: 4}\ntraining: {micro_batch: 2}\ncommunication: {moe_dispatcher: deepep}\n"
	s, err := scenarios.Load("g.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	rail, node, err := dedupBytes(s, s.Model.LayerList[2])
	if err != nil {
		t.Fatal(err)
	}
	m, g := epSplit(s.Parallelism.EP, s.Cluster.GPUsPerNode)
	if rail != 11833 || node != 13653 || m != 2 || g != 2 {
		t.Errorf("dedupBytes = %d, %d over %d nodes of %d, want 11833, 13653 over 2 of 2", rail, node, m, g)
	}
}
