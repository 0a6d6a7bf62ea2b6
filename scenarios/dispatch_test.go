package scenarios

import (
	"strings"
	"testing"
)

// TestDedupNotes: under a deduplicating dispatcher one load note names
// it, and neither the ep note nor DeepSeek-V3's node-limited routing note
// speaks of the alltoall dispatcher (the bytes: zero's TestDedupBytes).
func TestDedupNotes(t *testing.T) {
	for _, c := range []struct {
		name, doc, sets string
	}{
		// Qwen3-30B-A3B ep 16 on 2×8, T = 4096, h = 2048: 16,777,216 B per
		// token set; 1 − 97527/31502350 of it to the other node, and
		// 2·(1 − 56017460733/95313510160) of it to each GPU peer.
		{"qwen3 ep16", "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 1, ep: 16}\n",
			"deepep"},
		// flex and hybridep are the same traffic.
		{"qwen3 flex", "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 1, ep: 16}\n",
			"flex"},
		// DeepSeek-V3 ep 64 on 8 nodes, T = 4096, h = 7168 (58,720,256 B),
		// n_group 8, topk_group 4: a node is one group (1 − 839948209/
		// 1537314680 of it, 3.18 of the 7 other nodes where the unlimited
		// routing would reach 4.63), a GPU 4 experts of one:
		// 8·(1/2 − 1/2·C(124,8)/C(128,8)).
		{"dsv3 ep64", "cluster: {nodes: 64, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/deepseek-v3.json, seq_len: 4096}\nparallelism: {dp: 512, zero_stage: 3, ep: 64}\n",
			"deepep"},
		// Mixtral ep 8 on 2 nodes of 4, T = 4096, h = 4096: 33,554,432·11/14
		// over the network, 2·33,554,432/4 to each GPU peer.
		{"mixtral 2x4", "cluster: {nodes: 16, gpus_per_node: 4, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 64, zero_stage: 3, ep: 8}\n",
			"hybridep"},
		// Mixtral ep 8 in one node: a token goes to its 2 GPUs, the top-k
		// copies of the alltoall dispatcher: 33,554,432/4 per peer, S/8.
		{"mixtral 1x8", "cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 64, zero_stage: 3, ep: 8}\n",
			"deepep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load("testdata/d.yaml", []byte("version: 1\n"+c.doc), []string{"communication.moe_dispatcher=" + c.sets})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, w := range s.Warnings {
				if strings.Contains(w, "the "+c.sets+" dispatcher's traffic (DeepEP's normal kernels") {
					n++
					// HybridEP has an FP8 dispatch (use_fp8); it is
					// Megatron that keeps it off (fused_a2a.py:327).
					if !strings.Contains(w, "asserts fp8_dispatch off for HybridEP, :327, though HybridEP has an FP8 dispatch") {
						t.Errorf("ep note does not say where bf16 comes from: %q", w)
					}
				}
				// Neither the ep note nor DeepSeek-V3's node-limited
				// routing note may speak of the alltoall dispatcher.
				if strings.Contains(w, "Megatron's alltoall token dispatcher") || strings.Contains(w, "without that limit") {
					t.Errorf("note speaks of the alltoall dispatcher under %s: %q", c.sets, w)
				}
			}
			if n != 1 {
				t.Errorf("%d notes name the %s dispatcher in %q, want 1", n, c.sets, s.Warnings)
			}
		})
	}
}

// TestMoEDispatcherRefusals: an unknown dispatcher, and a deduplicating
// one whose ep group is not whole nodes or part of one, are refused.
func TestMoEDispatcherRefusals(t *testing.T) {
	for _, c := range []struct{ doc, set, want string }{
		{"cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 64, zero_stage: 3, ep: 8}\n", "communication.moe_dispatcher=nccl",
			`moe_dispatcher "nccl" is unknown`},
		{"cluster: {nodes: 8, gpus_per_node: 6, gpu: H100-80GB}\nparallelism: {dp: 48, zero_stage: 3, ep: 4}\n", "communication.moe_dispatcher=deepep",
			"moe_dispatcher deepep with ep=4 on 6-GPU nodes: an ep group must be whole nodes or lie in one node"},
	} {
		_, err := Load("r.yaml", []byte("version: 1\nmodel: {preset: mixtral-8x7b}\n"+c.doc), []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.set, err, c.want)
		}
	}
}

// TestRouterGroupsRefusals: node-limited routing on a hand-written layer
// list holds the importer's checks, and a valid one reaches the layer's
// dims (its bytes: zero's TestDedupBytesRouterGroups).
func TestRouterGroupsRefusals(t *testing.T) {
	doc := func(dims string) string {
		return "version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 1\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16}}\n  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128" + dims + "}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 1, ep: 4}\ntraining: {micro_batch: 2}\ncommunication: {moe_dispatcher: deepep}\n"
	}
	for _, c := range []struct{ dims, want string }{
		{", router_groups: 4", "router_groups=4 with router_group_topk=0: give both or neither"},
		{", router_groups: 3, router_group_topk: 1", "router_groups=3 does not divide experts=8"},
		{", router_groups: 4, router_group_topk: 5", "router_group_topk=5 is more than router_groups=4"},
		{", router_groups: 8, router_group_topk: 1", "top_k=2 exceeds the 1 experts of router_group_topk=1 groups"},
	} {
		_, err := Load("g.yaml", []byte(doc(c.dims)), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.dims, err, c.want)
		}
	}
	s, err := Load("g.yaml", []byte(doc(", router_groups: 4, router_group_topk: 2")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Model.LayerList[2].Dims; d.RouterGroups != 4 || d.RouterGroupTopK != 2 {
		t.Errorf("router groups %d, topk %d, want 4, 2", d.RouterGroups, d.RouterGroupTopK)
	}
}

// TestRoutingNote: DeepSeek-V3's node-limited routing note is worded once
// for the scenario's dispatcher (nodeLimited.note), in the import notes'
// place: alltoall's says its copies ignore the limit, a deduplicating
// dispatcher's that its traffic follows it.
func TestRoutingNote(t *testing.T) {
	const head = "n_group=8, topk_group=4: each token's experts lie in 4 of 8 expert groups (node-limited routing)"
	for _, c := range []struct{ d, want string }{
		{"alltoall", head + "; zerosim's all-to-all sends every token's top-8 copies without that limit"},
		{"deepep", head + ", which the deepep dispatcher's traffic follows"},
		{"hybridep", head + ", which the hybridep dispatcher's traffic follows"},
	} {
		s, err := Load("testdata/d.yaml", []byte("version: 1\ncluster: {nodes: 64, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/deepseek-v3.json, seq_len: 4096}\nparallelism: {dp: 512, zero_stage: 3, ep: 64}\n"),
			[]string{"communication.moe_dispatcher=" + c.d})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "(node-limited routing)") {
				got = append(got, w)
			}
		}
		if len(got) != 1 || !strings.HasSuffix(got[0], c.want) {
			t.Errorf("%s: routing notes %q, want one ending %q", c.d, got, c.want)
		}
	}
}
