package memory

import "github.com/zerosim/zerosim/scenarios"

// GradientCommunicator reports whether a ZeRO-3 rank reduces its gradients
// on an NCCL communicator of its own, beside the one its parameters gather
// on, over the same ranks: DeepSpeed's ZeRO-3 (communication.boundary:
// deepspeed). Every other stack runs a shard group's parameter all-gathers
// and gradient reduce-scatters on that group's one process group, so one
// communicator. ProfilerPeaks counts the second communicator's buffers, and
// the step replay lets the two communicators' collectives run at once
// (zero/run.go fabricNet.Start; one communicator runs its collectives one
// after another).
//
// DeepSpeed: parameters gather over the world group
// (deepspeedai/DeepSpeed deepspeed/runtime/zero/partition_parameters.py at
// e9503fe40ee127e74c8b0ea962aac4f0ae957624, Init: ds_process_group = dist.get_world_group() when no group
// is given; the engine's DeepSpeedZeRoOffload passes mpu's data-parallel
// group, none without an mpu) and gradients reduce-scatter over the
// engine's data-parallel group, a clone of it (stage3.py at e9503fe40ee127e74c8b0ea962aac4f0ae957624
// __avg_scatter_grads: reduce_scatter_coalesced(full_grads_for_rank,
// self.dp_process_group); engine.py passes
// dp_process_group=seq_data_parallel_group; utils/groups.py
// _get_data_parallel_group without an mpu returns _clone_world_group,
// dist.new_group over every rank). From v0.19.3 (02663d6e502684d5d3544d9b81fcf70a8283eb8f, 2026-06-26,
// AutoEP with ZeRO-3) stage3.py reduces each parameter's gradients over
// its own partition group (_get_param_partition_group: ds_process_group,
// the world group), so the two share one communicator there; the stack
// models the versions its validation row and the memory model cite.
//
// The others, one process group for both:
//   - PyTorch FSDP1: the flat parameter all-gathers over state.process_group
//     and the post-backward hook reduce-scatters through the default
//     communication hook over the same group; HSDP's all-reduce runs over
//     _inter_node_pg, the inter group's own
//     (torch/distributed/fsdp/_runtime_utils.py _post_backward_hook at
//     3ade90a6aaa939cd6238e314c321b9f920db1471); its BackwardPrefetch
//     docstring says the unshard and reduce-scatter streams' collectives
//     "contend for the same per-device NCCL stream, which is why the
//     relative order in which the collectives are issued matters for
//     overlapping" (torch/distributed/fsdp/api.py at acd8c9e7).
//   - PyTorch FSDP2: _all_gather_process_group and
//     _reduce_scatter_process_group both return
//     mesh_info.shard_process_group, _all_reduce_process_group the
//     replicate group (torch/distributed/fsdp/_fully_shard/
//     _fsdp_param_group.py at 62a45b6f4461ee49783ff548ea11285d696c2ef3).
//     pytorch/pytorch PR 186335 (2026-06) adds an opt-in
//     set_separate_reduce_scatter_group and keeps the shared group the
//     default ("one NCCL communicator, which processes one collective at a
//     time and so serializes them on the wire").
//   - Megatron-LM's DDP and distributed optimizer: a bucket group's
//     parameter all-gather and gradient reduce-scatter both run over
//     intra_distributed_optimizer_instance_group, the all-reduce across
//     instances over inter_distributed_optimizer_instance_group
//     (megatron/core/distributed/param_and_grad_buffer.py
//     _ParamAndGradBucketGroup start_param_sync, start_grad_sync at
//     NVIDIA/Megatron-LM d580efc68a9f0dbf1945f834f6f6200cd01d3343).
//   - DeepSpeed ZeRO-1 and 2 reduce and gather over dp_process_group
//     (stage_1_and_2.py), after each other: the gather follows the step.
//
// The default boundary, reshard (the seeds' schedule, and what zerosim
// import deepspeed and the ZeRO++ keys resolve to), keeps one
// communicator: with DeepSpeed's bound on reduce-scatters in flight
// (ReduceScatterLags) it is DeepSpeed's ZeRO-3 from v0.19.3 (02663d6e502684d5d3544d9b81fcf70a8283eb8f),
// which reduces over the parameters' group, while boundary: deepspeed is
// the versions before it, which the validation rows ran.
func GradientCommunicator(s *scenarios.Scenario) bool {
	return s.Parallelism.Stage == 3 && s.Communication.Boundary == scenarios.BoundaryDeepSpeed
}
