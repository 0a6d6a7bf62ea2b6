package zero

import "slices"

// bucketPace holds the backward of one micro-step to one bucket of
// gradient reductions in flight, as DeepSpeed's ZeRO-1 and ZeRO-2 do under
// overlap_comm: when a full bucket's reduction is launched, the compute
// stream first waits for every reduction launched before it, that is for
// the previous bucket's, so the backward goes on only once that one has
// ended and a slow network stalls the backward bucket by bucket rather
// than queueing reductions behind it. average_tensor, which every bucket's
// reduction goes through (reduce_ipg_grads), makes the reduction stream
// wait for the compute stream and then the compute stream wait for the
// reduction stream ("stream.wait_stream(producer_stream) ...
// get_accelerator().current_stream().wait_stream(stream)",
// deepspeed/runtime/zero/stage_1_and_2.py:1350-1363 at deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641, on a device that does not
// resolve data dependencies itself, CUDA's: resolves_data_dependency is
// is_synchronized_device, False, accelerator/cuda_accelerator.py:52-59).
// Under a cpu_offload the copies of a reduced bucket's gradients to the
// host are issued on the reduction stream too (reduce_ipg_grads,
// copy_grads_in_partition, lines 1719-1755 and 1650-1667), so the wait
// covers them. The wait is DeepSpeed's since v0.14.3 ("Fix overlap
// communication of ZeRO stage 1 and 2", a41729f6, #5606: until then the
// compute stream could overwrite an IPG buffer still being reduced, and
// nothing held the backward); zerosim models the current rule only (the
// validation suite's DeepSpeed rows, 0.11.1, run ZeRO-3). Stage 1 goes
// through the same hooks on the micro-step that reduces
// (reduce_ready_partitions_and_remove_grads, line 1767). PyTorch DDP's
// reducer, Megatron's param_and_grad_buffer and FSDP have no such wait:
// they are left to queue (bucketPaced).
//
// zerosim makes a bucket ready when the backward of the last of its units
// ends, so the buckets of a unit holding several are launched together at
// its end, where DeepSpeed launches them one by one during it (each when
// the next gradient overflows it) and so overlaps them with that unit's
// own backward. The buckets a unit launches together therefore count as
// one: the compute after them waits for every reduction launched before
// them. Where no unit holds more than one bucket this is DeepSpeed's rule
// bucket for bucket; held per bucket instead, a unit's reductions but its
// last would be serialized with the next unit's backward, which DeepSpeed
// hides behind the unit's own (llama2-13b-a100-eth at stage 2, 15 buckets
// of 40 MB a block: 17.84 s a step against 13.70 s unheld and 18.31 s
// without overlap).
//
// A nil *bucketPace holds nothing.
type bucketPace struct {
	last []int32 // the last tasks of the reductions the last unit launched
	wait []int32 // what the next compute-stream task waits for
}

// bucketPaced reports whether the scenario's backward is held to one
// bucket of reductions in flight (bucketPace): DeepSpeed (stack
// deepspeed, boundary deepspeed or a ZeRO++ key: scenarios.Scenario.
// DeepSpeed, the predicate no_sync's rule and master_dtype none's refusal
// ask) at ZeRO stages 1 and 2 with overlapped communication. Its
// stage 0 all-reduces after the backward (engine.py allreduce_gradients)
// and its stage 3 has its own bound (memory.ReduceScatterLags). PyTorch
// DDP's reducer launches each bucket's all-reduce as it becomes ready
// (Reducer::mark_bucket_ready, all_reduce_bucket) and waits for them only
// in finalize_backward, "Wait for asynchronous reduction to complete"
// (torch/csrc/distributed/c10d/reducer.cpp at pytorch/pytorch
// ad78a7b33a496f60c756927a4fcd8e3e8fc1aee6), and Megatron's
// start_grad_sync issues a bucket group's collectives with async_op under
// overlap_grad_reduce (or on its communication stream, which waits for
// the compute stream, never the reverse, with more than one distributed
// optimizer instance) and finish_grad_sync waits for them after the
// backward (megatron/core/distributed/param_and_grad_buffer.py:279-416 at
// NVIDIA/Megatron-LM d580efc6): both let the reductions queue. FSDP's
// waits are its own (microStep012, microStep3); a scenario without a
// stack keeps zerosim's unbounded queue.
func (b *builder) bucketPaced() bool {
	return b.s.DeepSpeed() && (b.sc.Stage == 1 || b.sc.Stage == 2) && b.sc.Overlap
}

// launch records the reductions one unit launched together, ending with
// tasks ts (none: the unit filled no bucket): the compute stream now waits
// for those launched before them.
func (p *bucketPace) launch(ts []int32) {
	if p == nil || len(ts) == 0 {
		return
	}
	p.wait, p.last = p.last, slices.Clone(ts)
}

// hold makes tasks[i], the first compute-stream task issued after the
// launches, wait for what they left to wait for.
func (p *bucketPace) hold(tasks []Task, i int) {
	if p == nil || len(p.wait) == 0 || i >= len(tasks) {
		return
	}
	t := &tasks[i]
	t.After = append(slices.Clip(t.After), p.wait...)
	p.wait = nil
}
