// Package zero owns the per-stage training-step schedule — what runs when, on
// which stream, with which dependencies — for ZeRO stages 0–3 and redundancy
// K, and replays it on the sim engine to give step time, exposed
// communication, bytes per link class and memory over time.
//
// Build makes the Schedule: one task template that every rank runs, with a
// compute stream and communication streams (gradient reduction, the K > 1
// inter-group all-reduce, parameter all-gather), each starting its tasks in
// issue order. Stage 0 all-reduces gradient buckets as backward fills them;
// stages 1 and 2 reduce-scatter them, run the sharded optimizer and
// all-gather the parameters (after the optimizer, or with
// overlap_param_gather in the forward of the step's first micro-step, each
// bucket dispatched by the pre-hook of the module before it as
// Megatron-Core does, paramgather.go; FSDP's stage 2, memory.FSDPStage2, in
// the forward of its first micro-step); stage 3 gathers, computes and flushes every
// unit in forward and again in backward with prefetch, and reduce-scatters
// each unit's gradients. The buffers and buckets come from
// memory.BufferLayouts, the layout the memory model and numerics use.
//
// At stage 3, DeepSpeed's ZeRO++ (zeropp.go) changes the schedule: qwZ
// gathers int8 + fp32 scales after a quantize kernel and dequantizes on the
// compute stream, hpZ runs the backward gathers over its group, qgZ replaces
// each unit's reduce-scatter by an int4 all-to-all inside the node and one
// across nodes. Offload (offload.go) adds PCIe copies on two host streams
// and the CPU optimizer on a third.
//
// Gradient accumulation (training.grad_accum = a) runs a micro-steps, each
// the forward and backward of one micro-batch, before the one optimizer
// step. Which micro-steps reduce gradients follows DeepSpeed's engine
// (deepspeedai/DeepSpeed deepspeed/runtime/engine.py @ b555aa53,
// allreduce_gradients: "ZeRO stage >= 2 communicates during non gradient
// accumulation boundaries as well"; stages 0 and 1 "communicate only at
// gradient accumulation boundaries"): stages 0 and 1 reduce on the last
// micro-step only (as DDP under no_sync and Megatron's distributed
// optimizer do: forward_backward_no_pipelining runs every micro-batch but
// the last under config.no_sync_func, megatron/core/pipeline_parallel/
// schedules.py:469-478 at NVIDIA/Megatron-LM d580efc6), stages 2 and 3 reduce every micro-step's gradients, K > 1
// included, and stage 3 gathers the parameters again in every micro-step's
// forward and backward. training.grad_sync says which micro-steps reduce;
// unset, stage 0 under the torchtitan, llm-foundry and fms-fsdp stacks
// reduces every micro-step, their stage 0 never entering no_sync
// (scenarios.Scenario.GradSyncEvery). grad_sync: last at stages 2 and 3 is
// FSDP's no_sync: only the last micro-step reduce-scatters, stage 3 still
// gathers in every micro-step (microStep3), and the memory model keeps the
// whole unsharded gradients in between (scenarios.Scenario.HoldsUnshardedGrads);
// DeepSpeed's stages 2 and 3 have none and reduce every micro-step. Under
// an FSDP boundary stage 2 all-gathers again in the forward of each
// micro-step after a reshard (regathersAt), and its memory holds only the
// parameter shard at rest, each unit's unsharded parameters from its
// forward to its post-backward (memory.FSDPStage2), and its gradients as
// its stage 3 does: per unit from the backward to the reduce-scatter, the
// sharded ones to the step. PyTorch FSDP under Composer behaves as stage 3
// here: Composer enters no_sync only for a DistributedDataParallel model
// (ddp_sync_context, mosaicml/composer composer/trainer/dist_strategy.py at
// v0.13.4 d80c37dc), so FSDP reduce-scatters every micro-step's gradients
// into its sharded accumulator; the end of each backward makes the compute
// stream wait for those reduce-scatters (FSDP's
// _post_backward_final_callback, pytorch/pytorch
// torch/distributed/fsdp/_runtime_utils.py at 00ae0bc9), so the next
// micro-step's first unit computes after them. Stage 2 waits the same
// way: DeepSpeed's ZeRO-2 synchronizes the device at the end of every
// backward under overlap_comm (independent_gradient_partition_epilogue,
// deepspeed/runtime/zero/stage_1_and_2.py:929-931 at edaa7221), FSDP's
// SHARD_GRAD_OP ends it with the same callback. llm-foundry's A100-40GB
// table ran on torch 1.13.1 and Composer 0.13.2 (mosaicml/examples
// sweep.sh at 9fa3ceb9, image mosaicml/pytorch:1.13.1_cu117): the same
// there (torch 1.13.1 has no _runtime_utils.py: fully_sharded_data_parallel.py's
// _post_backward_hook and _wait_for_post_backward do it; composer/trainer/
// is identical in v0.13.2-v0.13.4). The memory model is one micro-step's (accumulated
// gradients live in the gradient buffers stages 0–2 keep anyway; at stage 3
// the sharded gradients of the earlier micro-steps are alive through the
// last one, and under no_sync the unsharded ones at stages 2 and 3 until
// the last micro-step's reductions, memory/timeline.go); the memory
// timeline follows the last micro-step, and under no_sync its peak is also
// held against the earlier micro-steps', which reduce nothing
// (memory.Report.OnlyInReducingMicroStep).
//
// Replay runs the schedule for every rank on collectives.Fabric and returns a
// Result. When every rank behaves alike (Symmetric), it simulates the ranks of
// node 0 only and, of each collective, the transfers that touch them; a test
// holds this equal to the full run.
//
// Conventions: times are integer picoseconds (units.Duration), sizes integer
// bytes. "Logical" bytes count as the seeds do (S for a reduce-scatter or
// all-gather of S bytes, 2S for an all-reduce); "Sent" bytes are what one
// rank of a ring sends; wire bytes are counted per link class by the fabric.
// Context parallelism's ring exchange, which runs inside the blocks' compute
// and is no task of the schedule, is counted from the blocks' costs and the
// cp groups' placement as its own phase (PhaseCPRing, ringattn.go).
//
// It computes and never prints or writes files.
package zero
