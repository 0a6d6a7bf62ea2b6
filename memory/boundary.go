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
