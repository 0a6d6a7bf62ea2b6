package scenarios

import "fmt"

// torch.autocast over fp32 parameters that PyTorch FSDP shards
// (training.autocast with param_dtype fp32 at zero_stage 2 or 3 under
// communication.boundary fsdp1, fsdp2 or fsdp2_head, no FSDP
// MixedPrecision: Composer's FULL mixed precision under amp_bf16; not
// dlrover ATorch's amp_native under its fsdp strategy, beside which
// ModelContext.adjust_wrappers turns FSDP's MixedPrecision(param_dtype=
// bf16) on, atorch/atorch/auto/model_context.py at
// intelligent-machine-learning/dlrover 70df7d5a2). FSDP gathers the fp32
// parameters and autocast casts each matmul's weight as it is used, as
// under DDP (scenarios/autocast.go); what differs between the two FSDPs is
// whether autocast's cache may keep the casts.
//
// FSDP1 runs the forward on plain Tensor views of its flat parameter, not
// on the original nn.Parameters: _use_unsharded_flat_param calls
// _use_unsharded_views(as_params=(not in_forward and not in_pre_backward))
// for use_orig_params=True and as_params=False in the forward otherwise,
// and _use_unsharded_views sets each module attribute to the view that
// _get_unflat_views makes by torch.split and .view of the flat parameter
// (torch/distributed/fsdp/_flat_param.py at pytorch/pytorch
// 01caf79e047fd15e1f75ba3825f789130efa476a; the same in torch 2.0's
// flat_param.py): "We use `Tensor` views in the forward so that they are
// tracked by autograd". A forward prefetch emulates the FORWARD state so
// the prefetched unit gets the same views (_prefetch_handle,
// torch/distributed/fsdp/_runtime_utils.py: "Temporarily emulate the
// training state while calling `_unshard` to ensure the correct
// `as_params`"). Those views are neither leaves nor non-views, so
// autocast's cached_cast never caches them (can_try_cache requires
// arg.is_leaf() && !arg.is_view(), aten/src/ATen/autocast_mode.cpp at
// 008ec6b1840c94ff6d0f685bc10fbf585167c673; the view test came with
// pytorch/pytorch#48696). Each cast lives as long as autograd keeps it:
// the matmul saves it to the unit's backward, and a checkpointed unit's
// forward, whose saved tensors torch.utils.checkpoint drops, frees each
// cast as its op returns; the recomputation casts again.
//
// FSDP2 runs the forward on nn.Parameters: init_unsharded_param makes
// self._unsharded_param = nn.Parameter(unsharded_param, requires_grad=...)
// over the all-gather output and to_unsharded sets it on the module
// (torch/distributed/fsdp/_fully_shard/_fsdp_param.py). nn.Parameter
// detaches its data into a leaf that is no autograd view, so autocast
// caches its casts, as it does DDP's parameters, until the outermost
// autocast region exits: resharding frees the fp32 gathered parameter but
// not its cached cast. memory/autocast.go (AutocastCached) and
// memory/timeline.go model both.
//
// Under autocast over an fp32 model the residual stream is fp32: the
// embedding is on no autocast list and returns fp32, a LlamaRMSNorm
// returns self.weight * hidden_states.to(input_dtype), its fp32 weight
// times the fp32 input (src/transformers/models/llama/modeling_llama.py at
// huggingface/transformers 002272831fba584eb30dca9729c1be456836960a), and
// each residual add of the block's 16-bit matmul output to the fp32
// stream promotes to fp32 (add is on no autocast list). A checkpointed
// block keeps that fp32 input (memory.BlockDims.InputFP32).

// AutocastFSDP reports whether s runs torch.autocast over fp32
// parameters sharded by PyTorch FSDP: training.autocast over param_dtype
// fp32 at zero_stage 2 or 3 under an FSDP boundary, outside DeepSpeed and
// Megatron.
func (s *Scenario) AutocastFSDP() bool {
	st := s.Parallelism.Stage
	return s.Training.Autocasts() && (st == 2 || st == 3) && s.Communication.Boundary.FSDP() &&
		!s.DeepSpeed() && s.Stack != "megatron"
}

// AutocastCached reports whether torch.autocast's cache holds the casts
// of s's weights until the forward's autocast exits: under DDP and FSDP2,
// whose forward uses leaf parameters; not under FSDP1 (communication.
// boundary fsdp1, NO_SHARD at zero_stage 0 too: its unshard also ends in
// _use_unsharded_flat_param), whose forward uses views of the flat
// parameter (see above).
func (s *Scenario) AutocastCached() bool {
	return s.Training.Autocasts() && s.Communication.Boundary != BoundaryFSDP1
}

// AutocastStageRefusal is why training.autocast over fp32 parameters is
// not modelled at s's ZeRO stage, "" where it is: stage 0 (torch DDP)
// and PyTorch FSDP (AutocastFSDP).
func AutocastStageRefusal(s *Scenario) string {
	if !s.Training.Autocasts() || s.Parallelism.Stage == 0 || s.AutocastFSDP() {
		return ""
	}
	return fmt.Sprintf("autocast over fp32 parameters is modelled at zero_stage 0 (torch DDP) and under PyTorch FSDP (zero_stage 2 or 3 with communication.boundary fsdp1, fsdp2 or fsdp2_head), not at zero_stage %d with boundary %s, where the stacks zerosim models run their own mixed precision, 16-bit parameters gathered from an fp32 shard (set communication.boundary to the FSDP the run uses, or drop autocast and set param_dtype: bf16)", s.Parallelism.Stage, s.Communication.Boundary)
}
