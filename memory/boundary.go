package memory

import (
	"github.com/zerosim/zerosim/scenarios"
)

// The forward/backward boundary of ZeRO-3: which units keep their gathered
// parameters from their forward to their backward instead of releasing
// them and gathering them again (communication.boundary). Each stack does it
// its own way:
//
//	reshard   every unit releases after forward and gathers again in
//	          backward (the seeds' schedule; the first backward all-gather
//	          waits for the end of forward)
//	fsdp1     PyTorch FSDP (FullyShardedDataParallel) does not free the
//	          root's parameters after forward "with the intention that they
//	          are immediately used for backward computation"
//	          (torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard
//	          at 3ade90a6aaa9): the units outside the transformer blocks
//	          (embedding, final norm, output) stay gathered
//	fsdp2     FSDP2 (fully_shard) sets the root's reshard_after_forward to
//	          False "as a heuristic since its parameters would typically be
//	          immediately all-gathered for backward"
//	          (torch/distributed/_composable/fsdp/fully_shard.py at 012c62d),
//	          and torchtitan does not reshard the last block either
//	          ("since FSDP would prefetch it immediately",
//	          torchtitan/parallelisms/parallelize_llama.py apply_fsdp at
//	          004b3148a92b): the root units and the last block stay gathered
//	fsdp2_head
//	          torchtitan from 238fa9953e4a (2026-02; its apply_fsdp in
//	          torchtitan/models/llama3/infra/parallelize.py) shards the
//	          embedding and every block with reshard_after_forward (True
//	          without pipeline parallelism) and only [norm, output] with
//	          reshard_after_forward False ("since FSDP would prefetch them
//	          immediately after the forward pass"); the root then holds no
//	          parameters: the units after the last block stay gathered
//	deepspeed DeepSpeed ZeRO-3 traces forward and backward as one module
//	          sequence and releases a module's parameters only when their
//	          next use is further than max_reuse_distance parameters away
//	          (deepspeed/runtime/zero/partitioned_param_coordinator.py
//	          __params_to_release at 641d86faa55b; stage3_max_reuse_distance
//	          defaults to 1e9): a unit stays gathered when the parameters
//	          used between its forward and its backward (every later unit,
//	          forward and backward: 2·Σ later params) are under 1e9
//
// A unit of routed experts (group expert) is part of the block before it:
// the stacks wrap the experts inside their decoder layer (Hugging Face's
// *SparseMoeBlock is the layer's mlp, wrapped with it by FSDP1's
// transformer_auto_wrap_policy), or shard them with the block's own
// reshard_after_forward (torchtitan/models/llama4/infra/parallelize.py
// apply_fsdp at 238fa99: fully_shard(transformer_block.moe.experts, …,
// reshard_after_forward=reshard_after_forward) with expert parallelism),
// so the experts keep their parameters across the boundary exactly when
// their block does.
const DefaultMaxReuseDistance = 1_000_000_000

// KeptAcrossBoundary marks the units that keep their gathered parameters
// from forward to backward under s's communication.boundary.
func KeptAcrossBoundary(s *scenarios.Scenario) []bool {
	layers := s.Model.LayerList
	kept := make([]bool, len(layers))
	// owner[u] is the block unit u belongs to (itself, or the block before
	// a unit of its routed experts), -1 outside the blocks.
	owner := make([]int, len(layers))
	hasBlocks := false
	for u, l := range layers {
		owner[u] = -1
		switch {
		case l.Block:
			owner[u], hasBlocks = u, true
		case l.Group == scenarios.GroupExpert && u > 0:
			owner[u] = owner[u-1]
		}
	}
	switch s.Communication.Boundary {
	case scenarios.BoundaryFSDP2Head:
		last := -1
		for u, l := range layers {
			if l.Block {
				last = u
			}
		}
		if last < 0 {
			break // no blocks: every unit is a wrapped one and reshards
		}
		for u := last + 1; u < len(layers); u++ {
			kept[u] = owner[u] != last
		}
	case scenarios.BoundaryFSDP1, scenarios.BoundaryFSDP2:
		// Without transformer blocks (an MLP, a bare parameter count)
		// every unit is a wrapped block and the root holds nothing.
		last := -1
		for u, l := range layers {
			if l.Block || !hasBlocks {
				last = u
			}
		}
		for u := range layers {
			block, in := u, owner[u] >= 0
			if !hasBlocks {
				in = true
			} else if in {
				block = owner[u]
			}
			kept[u] = !in || (s.Communication.Boundary == scenarios.BoundaryFSDP2 && block == last)
		}
	case scenarios.BoundaryDeepSpeed:
		var later int64
		for u := len(layers) - 1; u >= 0; u-- {
			kept[u] = 2*later < DefaultMaxReuseDistance
			later += int64(layers[u].Params)
		}
	}
	return kept
}

// FSDPStage2 reports whether s's ZeRO stage 2 is PyTorch FSDP's
// (communication.boundary fsdp1, fsdp2 or fsdp2_head: FSDP1's
// SHARD_GRAD_OP, FSDP2's fully_shard(reshard_after_forward=False)), whose
// parameter lifetime differs from DeepSpeed's and Megatron-LM's stage 2:
// between steps the rank holds only its parameter shard, each unit is
// all-gathered in its forward and kept through its backward, and the
// post-backward frees it unit by unit.
//
//   - FSDP1 unshards a unit in its pre-forward (_pre_forward_unshard →
//     _unshard; with forward_prefetch off, its default, the host issues it
//     while the GPU runs the unit before: prefetch_depth 1, as at stage 3,
//     scenarios.DefaultPrefetchDepth) and never frees it in
//     the post-forward at SHARD_GRAD_OP ("free_unsharded_flat_params = [not
//     state._is_root and handle._sharding_strategy in
//     RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES ...]", _post_forward_reshard;
//     RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES holds FULL_SHARD and
//     HYBRID_SHARD). Its _post_backward_hook reshards the unit as soon as
//     its gradient exists, before the reduce-scatter ("free_unsharded_flat_param
//     = _should_free_in_backward(state, handle); _reshard(state, [handle],
//     [free_unsharded_flat_param])"), and _should_free_in_backward returns
//     "state._sync_gradients or handle._sharding_strategy in
//     RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES": freed in a backward that
//     reduces, kept under no_sync ("as a *heuristic* to tradeoff higher
//     memory for higher throughput"). All in
//     torch/distributed/fsdp/_runtime_utils.py at pytorch/pytorch
//     00ae0bc91ac2c1718d1baa193d9d299e2b82776c.
//   - FSDP2's fully_shard(reshard_after_forward=False) gives the group no
//     post-forward mesh ("post_forward_mesh_info = None; if
//     reshard_after_forward is True: post_forward_mesh_info = mesh_info",
//     _get_post_forward_mesh_info, torch/distributed/fsdp/_fully_shard/
//     _fsdp_init.py at pytorch/pytorch
//     b795ad9c42aec11accd16c94bc0b4d8dc73af07a), so its post-forward does
//     not reshard: the unit is gathered in its pre-forward and stays so. Its
//     FSDPParamGroup.post_backward reshards "if self.reshard_after_backward:
//     self.reshard()" on both the reducing and the no_sync branch, before
//     foreach_reduce, and reshard_after_backward is True by default
//     (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at
//     pytorch/pytorch 002a76fbfea0ac0f199e4b8e2a0691074796c908).
//
// DeepSpeed's ZeRO-2 (stage_1_and_2.py) and Megatron-LM's distributed
// optimizer keep the whole 16-bit parameters at rest and all-gather the
// updated shards into them after the step.
func FSDPStage2(s *scenarios.Scenario) bool {
	return s.Parallelism.Stage == 2 && s.Communication.Boundary.FSDP()
}

// fsdpStage2 reports whether report r models s's stage 2 as FSDP's
// (FSDPStage2) under convention zerosim; the seeds' conventions keep
// stage 2's whole 16-bit parameters and DeepSpeed's gradient buffers.
func fsdpStage2(r *Report, s *scenarios.Scenario) bool {
	return r.Convention == ConventionZerosim && FSDPStage2(s)
}

// shardsPerUnit reports whether report r holds only the rank's parameter
// shard between steps and makes and reduces gradients unit by unit:
// ZeRO-3, and FSDP's ZeRO-2 (fsdpStage2). FSDP handles gradients alike at
// both stages, only the resharding after forward differs: each unit's
// backward makes its unsharded gradient in param_dtype, the post-backward
// reduce-scatters it (in reduce_dtype) into a sharded gradient in the
// shard's dtype, and the sharded gradients live until the optimizer's
// zero_grad (set_to_none) frees them.
//
//   - FSDP1's _post_backward_hook, for every sharded strategy
//     ("if handle.uses_sharded_strategy:", SHARD_GRAD_OP too): "flat_param.
//     grad.data = flat_param.grad.to(handle._reduce_dtype)", "unsharded_grad
//     = flat_param.grad.data; flat_param.grad = None", "new_sharded_grad =
//     torch.empty_like(chunks[0])  # padded", "_cast_grad_to_param_dtype(
//     state, new_sharded_grad, flat_param)" (to the flat parameter's, the
//     shard's, dtype: fp32 under mixed precision), then
//     "flat_param._saved_grad_shard = new_sharded_grad" (or "+=" when one
//     is kept from before); _finalize_params hands it to the optimizer
//     (handle.prepare_gradient_for_optim()) at the backward's end. All in
//     torch/distributed/fsdp/_runtime_utils.py at pytorch/pytorch
//     00ae0bc91ac2c1718d1baa193d9d299e2b82776c.
//   - FSDP2's FSDPParamGroup.post_backward takes "unsharded_grads.append(
//     fsdp_param.unsharded_grad_data); fsdp_param.unsharded_param.grad =
//     None", reshards ("if self.reshard_after_backward: self.reshard()")
//     and calls foreach_reduce (torch/distributed/fsdp/_fully_shard/
//     _fsdp_param_group.py at 002a76fbfea0ac0f199e4b8e2a0691074796c908),
//     which allocates "reduce_scatter_input = reduce_scatter_comm.allocate(
//     (reduce_scatter_input_numel,), dtype=reduce_dtype, ...)", frees the
//     unsharded gradients "Only after the copy-in finishes"
//     ("unsharded_grads.clear()"), casts the output "_to_dtype_if_needed(
//     reduce_output, orig_dtype)" (the sharded parameter's dtype) and sets
//     "fsdp_param.sharded_param.grad = new_sharded_dtensor_grad", or adds
//     into it ("fsdp_param.sharded_param.grad._local_tensor +=
//     new_sharded_grad") (torch/distributed/fsdp/_fully_shard/
//     _fsdp_collectives.py at 8fc2039decebd92b15b38296df8bf9aa13275be0,
//     the version stored beside 002a76fb's _fsdp_param_group.py).
//
// The training loop's optimizer.zero_grad() (set_to_none=True, its
// default) drops the sharded gradients after the step.
func shardsPerUnit(r *Report, s *scenarios.Scenario) bool {
	return r.Stage == 3 || fsdpStage2(r, s)
}

// keepsGatheredUnderNoSync reports whether FSDP's stage 2 keeps every
// unit's unsharded parameters from the step's first forward through the
// micro-steps that do not reduce: FSDP1's SHARD_GRAD_OP under no_sync
// (training.grad_sync last with grad_accum > 1; _should_free_in_backward,
// see FSDPStage2). FSDP2 reshards after every backward.
func keepsGatheredUnderNoSync(s *scenarios.Scenario) bool {
	return FSDPStage2(s) && s.Communication.Boundary == scenarios.BoundaryFSDP1 && s.HoldsUnshardedGrads()
}
