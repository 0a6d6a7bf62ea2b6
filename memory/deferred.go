package memory

// This file models the frees FSDP1 hands the caching allocator with a
// record_stream, and when they really return the block (allocseq.go's
// replay of FSDP1 at stage 3).
//
// The allocator side (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp,
// DeviceCachingAllocator::free at 001074d2, the commit allocator.go
// follows): a block freed after record_stream leaves allocated_bytes at
// once, but it is returned to its pool (free_block, which also ends its
// active_bytes) only when the events recorded on the other streams have
// completed; process_events checks them at each malloc, on the host. So a
// request the host makes before the GPU has passed those uses cannot
// reuse the block, and takes another.
//
// Which frees FSDP1 defers (pytorch/pytorch, torch/distributed/fsdp/
// _runtime_utils.py at 00ae0bc91ac2c1718d1baa193d9d299e2b82776c and
// flat_param.py at 002159d1, the commits allocseq.go follows):
//
//   - the unsharded flat parameter, allocated on the unshard stream, at
//     its reshard: _free_unsharded_flat_param record_streams it on the
//     current (compute) stream, then _free_storage; _reshard records the
//     rate limiter's free event on the compute stream right after, so the
//     block is reusable once the host has waited on that event;
//   - the 16-bit _mp_shard the all-gather read, freed in post_unshard after
//     a record_stream on the unshard stream: reusable once the all-gather
//     is done, that is once the unit's compute, which waits on it, is;
//   - in _post_backward_hook, the unsharded gradient autograd computed
//     (record_stream on the post-backward stream, freed as the hook
//     returns), and the fp32 copy flat_param.grad.to(reduce_dtype) the
//     reduce-scatter reads: ProcessGroupNCCL's collective() record_streams
//     its inputs on the NCCL stream unless TORCH_NCCL_AVOID_RECORD_STREAMS
//     is set (the [Sync Streams] note, torch/csrc/distributed/c10d/
//     ProcessGroupNCCL.cpp at 0007e752d518810f0f8942a830dbbbfc69f34577).
//     No FSDP1 stack zerosim templates sets it (torchtitan only from
//     e62573d4c, 2024-04-10, after its FSDP1 era; fms-fsdp, llama-recipes,
//     dlrover and accelerate never). Both are reusable once the
//     reduce-scatter is done: the hook's reduce_scatter_tensor is a
//     synchronous call, so the post-backward stream waits on it before the
//     gradient's free is recorded there.
//
// When the host knows the GPU has passed them: FSDP1 with
// limit_all_gathers (communication.max_inflight_allgathers) keeps the free
// events of its reshards in a _FreeEventQueue and, in _unshard before an
// all-gather, synchronizes the host on the oldest once the queue holds
// that many (dequeue_if_needed, event.synchronize()). Nothing else in
// FSDP1's forward or backward waits for the GPU, and with the GPU busy the
// host runs ahead to that wait: the replay takes it that far. The
// timeline's events are in the GPU's order, the timeline ending each
// reduce-scatter where its time model does (overlapped with the next
// unit's backward); the first reshard's free event after that end is the
// one whose wait tells the host it is done (the _mp_shard's all-gather
// likewise: the first reshard after it). At the step's
// end the host waits for the GPU (torchtitan's train.py at ab5d918 reads
// loss.item() after the optimizer step), and every deferred free completes.
// So does a request that finds no room: release_cached_blocks first
// synchronizes the outstanding events and returns their blocks
// (synchronize_and_free_events, CUDACachingAllocator.cpp at 001074d2), then
// releases the cache (Allocator.syncEvents).

// deferredFree is one freed block the allocator cannot reuse yet: its
// handle and block size, and when it completes: once the host has waited
// on free event need (> 0); with need 0, after the next reshard's free
// event (rs < 0), or, for an unsharded gradient, once its unit rs's
// reduce-scatter is done (the timeline frees that unit's fp32 copy
// there) and then after the next reshard's free event.
type deferredFree struct {
	h          int
	size, need int64
	rs         int
}

// fsdp1Defer holds the replay's FSDP1 record_stream frees and its rate
// limiter's queue of free events.
type fsdp1Defer struct {
	pending []deferredFree
	bytes   int64   // the block bytes of pending
	queue   []int64 // _FreeEventQueue: free events not yet waited on
	events  int64   // free events recorded so far (the last one's number)
}

// deferFree frees every live tensor of kind and unit as FSDP1 does after a
// record_stream: it leaves the allocated bytes now and returns to the
// allocator when its condition (deferredFree: need, rs) is met.
func (st *simState) deferFree(kind string, u int, need int64, rs int) {
	t := st.lookup(key(kind, u))
	if t == nil || st.err != nil {
		return
	}
	for i := len(t.hs) - 1; i >= 0; i-- {
		size := st.a.blockSize(t.hs[i])
		st.def.pending = append(st.def.pending, deferredFree{h: t.hs[i], size: size, need: need, rs: rs})
		st.def.bytes += size
	}
	t.hs, t.sizes = t.hs[:0], t.sizes[:0]
}

// release returns to the allocator every pending free the host knows
// complete once it has waited on free event upTo (all of them for
// upTo < 0).
func (st *simState) release(upTo int64) {
	d := &st.def
	kept := d.pending[:0]
	for _, p := range d.pending {
		if upTo >= 0 && (p.need == 0 || p.need > upTo) {
			kept = append(kept, p)
			continue
		}
		if st.err == nil {
			st.err = st.a.Free(p.h)
		}
		d.bytes -= p.size
	}
	clear(d.pending[len(kept):])
	d.pending = kept
}

// unshardFSDP1 is the rate limiter of FSDP1's _unshard before an
// all-gather allocates: the host waits on the oldest free event once the
// queue holds max_inflight_allgathers of them.
func (st *simState) unshardFSDP1() {
	d := &st.def
	if limit := st.s.Communication.MaxInflightAllGathers; limit > 0 && len(d.queue) >= limit {
		e := d.queue[0]
		d.queue = d.queue[1:]
		st.release(e)
	}
}

// reduceDoneFSDP1 is the end of unit u's reduce-scatter, where the
// timeline frees its fp32 copy: the copy and u's unsharded gradient wait
// for the next free event from here.
func (st *simState) reduceDoneFSDP1(u int) {
	st.deferFree("rsin", u, 0, -1)
	for i := range st.def.pending {
		if p := &st.def.pending[i]; p.need == 0 && p.rs == u {
			p.rs = -1
		}
	}
}

// reshardFSDP1 is FSDP1's _reshard of unit u: its unsharded flat
// parameter's deferred free, and the free event recorded after it (queued
// for the rate limiter), which the frees waiting for the next one now
// wait on.
func (st *simState) reshardFSDP1(u int) {
	d := &st.def
	d.events++
	e := d.events
	for i := range d.pending {
		if p := &d.pending[i]; p.need == 0 && p.rs < 0 {
			p.need = e
		}
	}
	st.deferFree("gathered", u, e, -1)
	if st.s.Communication.MaxInflightAllGathers > 0 {
		d.queue = append(d.queue, e)
	}
}
