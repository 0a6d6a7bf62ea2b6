package memory

import (
	"github.com/zerosim/zerosim/scenarios"
)

// FSDP2's root group. torchtitan shards each transformer block with
// fully_shard and then the whole model (apply_fsdp,
// torchtitan/parallelisms/parallelize_llama.py lines 410-426 at
// pytorch/torchtitan 40f8fd007, 2024-06-06; lines 334-339 at 9dec370ad26b), so
// the parameters no block holds (the embedding, the final norm and the
// output projection) are one FSDPParamGroup, the root's. PyTorch's FSDP2
// gathers a group with one all-gather into one all_gather_output and
// reduces it with one reduce-scatter of one reduce_scatter_input and one
// reduce_output (foreach_all_gather and foreach_reduce,
// torch/distributed/_composable/fsdp/_fsdp_collectives.py at pytorch/pytorch
// 01d66d21f38a04729a87a5840f405ca1b7acf856). The root's group is never
// resharded after forward (FSDPState._lazy_init: "For the root, do not
// reshard after forward since for training, the parameters would be freed
// and all-gathered immediately", post_forward_mesh_info = None), and its
// post_backward runs only in the root's final callback, once the whole
// backward is done: the root's forward inputs (token ids) need no
// gradient, so the post-backward hook FSDPState attaches to them never
// fires, and _root_post_backward_final_callback runs "post-backward in
// case forward inputs did not require gradient" for every group still
// unsharded (torch/distributed/_composable/fsdp/_fsdp_state.py at
// pytorch/pytorch 325b98f20b8aa5f28176a0192b4c1fc03bb08b83: the
// single-module FSDPState, init(module, device, mp_policy), without the
// explicit prefetch lists of pull request 128884 (opened 2024-06-17) or
// the post-optimizer event of pull request 128975 (opened 2024-06-18):
// the FSDP2 contemporary with the torchtitan 40f8fd007 runs (2024-06-06).
// Its _lazy_init and _root_post_backward_final_callback read as quoted;
// the later multi-module FSDPState at
// 005da465b93443cc40d9e66d679637ada577f097 keeps both unchanged). That
// post_backward reshards the group and then
// reduces its gradients (FSDPParamGroup.post_backward). So the output
// projection's unsharded parameters and its gradient stay allocated from
// the head's backward to the embedding's, and the group's reduce-scatter
// input is the sum of its units' at the end of the backward.
//
// The memory timeline follows this: the root units' all-gather is one
// event of the group's bytes at the first root unit's forward (the root's
// pre-forward), and their release and reduction are one set of events
// after the last root unit's backward, tagged with that unit (the
// embedding, first in forward and last in backward). The schedule's
// collectives are not changed: zero/ still times an all-gather and a
// reduce-scatter per unit, only the memory events move. FSDP's stage 2
// (FSDPStage2: fully_shard with reshard_after_forward=False) has the same
// root group: its gather and its release are one event each, as at stage
// 3; its reductions stay the buckets' there.

// fsdp2RootGroup marks the units of FSDP2's root group of s (report r,
// whose Units must be filled) and returns the unit whose events stand for
// the group (its lowest index: the first root unit in forward, the last in
// backward), or nil and -1 when the replay keeps every unit its own
// group: outside communication.boundary fsdp2 at stage 3 and at FSDP's
// stage 2 (fsdp2_head
// shards the embedding alone and groups [norm, output], whose
// post-backward fires after their own backward), without transformer
// blocks, or with fewer than two root units that gather.
func fsdp2RootGroup(s *scenarios.Scenario, r *Report) ([]bool, int) {
	if !shardsPerUnit(r, s) || s.Communication.Boundary != scenarios.BoundaryFSDP2 || len(r.Units) != len(s.Model.LayerList) {
		return nil, -1
	}
	in := make([]bool, len(r.Units))
	blocks, n, lead := false, 0, -1
	for u, l := range s.Model.LayerList {
		blocks = blocks || l.Block
		if l.Block || l.Group == scenarios.GroupExpert || r.Units[u].Alone || r.Units[u].Gather <= 0 {
			continue
		}
		in[u] = true
		n++
		if lead < 0 {
			lead = u
		}
	}
	if !blocks || n < 2 {
		return nil, -1
	}
	return in, lead
}
