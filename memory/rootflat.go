package memory

import (
	"github.com/zerosim/zerosim/scenarios"
)

// FSDP1's root FlatParameter and the gradient of its views.
//
// FSDP1 (communication.boundary fsdp1) runs a unit's forward on plain
// Tensor views of its flat parameter: _use_unsharded_flat_param calls
// _use_unsharded_views(as_params=False) in the forward (for
// use_orig_params=True too: as_params=(not in_forward and not
// in_pre_backward)), and _use_unsharded_views sets every module attribute
// to a view from _get_unflat_views_unaligned, "torch.split(tensor,
// flat_param._numels, dim=0)" followed by "subtensor.view(shape)"
// (_get_unflat_views_aligned splits by _numels_with_padding alike), all in
// torch/distributed/fsdp/_flat_param.py at pytorch/pytorch
// 01caf79e047fd15e1f75ba3825f789130efa476a. The one split is one autograd
// node with an output per view: "split_with_sizes(Tensor self, int[]
// split_sizes, int dim=0) -> Tensor[]; self: split_with_sizes_backward(grads,
// split_sizes, dim, self.sizes(), self.options())" (tools/autograd/
// derivatives.yaml at d327a787782618826890c323f8d7e51f3d28ec13), and
// split_with_sizes_backward fills the views that got no gradient with zeros
// and returns "at::cat(grads_all_defined, dim)", a new tensor the size of the
// flat parameter (torch/csrc/autograd/FunctionsManual.cpp at
// 002ca6715ba1ab4d2369262b487eeb30bf249911). The engine runs a node once
// every incoming gradient has arrived and keeps the earlier ones in the
// node's InputBuffer until then (Engine::compute_dependencies and
// evaluate_function, torch/csrc/autograd/engine.cpp at
// e1253a956f6866469eafd88cc3bfb4627f4b1efc, as tiedHeadGrad cites). The
// flat parameter's AccumulateGrad, where FSDP1's post-backward hook sits,
// then takes the cat: it becomes flat_param.grad (the gradient the
// post-backward reduce-scatters), or under no_sync is added into the
// unsharded gradient kept there and freed.
//
// A stack that wraps only the transformer blocks (torchtitan's FSDP1,
// llama-recipes', litgpt's FSDPStrategy(auto_wrap_policy={Block})) leaves the
// embedding, the final norm and an untied output projection in the root's one
// FlatParameter. The output projection's weight gradient comes at the start
// of the backward and the embedding's at its end, so autograd holds every
// root view's gradient over the whole backward of the blocks, and the cat
// then allocates one more root-sized gradient beside them. zerosim's units
// are the root's modules, each with its gradient (UnitInfo.Grad): the
// timeline keeps each root unit's gradient from its backward to the last
// root unit's (the embedding, fsdp1RootFlat's last), allocates the cat
// there (OpRootCat) and frees the views (OpRootViews); the cat is what the
// last root unit's reduce-scatter then takes (or, under no_sync, is added
// into the held gradient and freed at once). The schedule's collectives are
// not changed.
//
// A block's own flat parameter goes through the same cat at the end of the
// block's backward, one block-sized gradient more for a moment; zerosim does
// not count that one (its views' gradients are the block's Grad, held from
// the block's backward start, which already over-counts the early part of
// the block's backward).

// fsdp1RootFlat marks the units of FSDP1's root FlatParameter whose view
// gradients autograd holds until the root's split backward runs, and returns
// the last of them in backward (the one whose backward runs that cat), or
// nil and -1: outside communication.boundary fsdp1 with per-unit shards
// (stage 3, FSDP's stage 2), under the seeds' model-state conventions,
// under a whole-model compiled backward (training.compile: model, whose
// graph holds the views' gradients its own way, as tiedHeadGrad says),
// without transformer blocks, with the chunked loss's held gradient, or
// when the last root unit in backward is the output head (its eager-loss
// gradient events are OpHeadGrad's).
func fsdp1RootFlat(s *scenarios.Scenario, r *Report) ([]bool, int) {
	if r.Convention.modelStatesOnly() || !shardsPerUnit(r, s) || s.Communication.Boundary != scenarios.BoundaryFSDP1 ||
		s.OneGraph() || len(r.Units) != len(s.Model.LayerList) {
		return nil, -1
	}
	in := make([]bool, len(r.Units))
	blocks, last := false, -1
	for u, l := range s.Model.LayerList {
		blocks = blocks || l.Block
		if l.Block || l.Group == scenarios.GroupExpert || r.Units[u].Grad <= 0 {
			continue
		}
		if r.Units[u].LossHeldGrad > 0 || r.Units[u].OneGraphGrad > 0 {
			return nil, -1
		}
		in[u] = true
		if last < 0 {
			last = u
		}
	}
	if !blocks || last < 0 || r.Units[last].AfterLogits > 0 {
		return nil, -1
	}
	return in, last
}

// rootCatBytes is the bytes of FSDP1's root cat (fsdp1RootFlat): the sum
// of the root units' gradients, the flat parameter's unpadded size in its
// gradient's dtype, added with c (an overflow is c's error, as every sum of
// the timeline's).
func rootCatBytes(c *calc, r *Report, in []bool) int64 {
	var n int64
	for u, ok := range in {
		if ok {
			n = c.Add(n, r.Units[u].Grad)
		}
	}
	return n
}
