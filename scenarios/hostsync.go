package scenarios

// HostSyncEachLayer reports whether the host waits for the GPU in the
// forward of every attention layer, which bounds how far it runs ahead of
// the GPU (DeepSpeed's gather pool, memory.GatherPool): packed documents
// (model.document_len) under training.attention flash, as transformers'
// FlashAttention-2 path runs them from the packed position_ids, under
// DeepSpeed ZeRO-3 (communication.boundary: deepspeed), the engine the
// Hugging Face Trainer and Accelerate run (stack deepspeed's template,
// `zerosim import deepspeed`).
//
// A packing collator passes one row of restarting position_ids and no
// attention_mask (ms-swift's packing, swift/llm/template/base.py
// l.1119-1124 at modelscope/ms-swift
// 9d297f99a9eb2488293caa09dccbe3ded2534170; transformers' padding_free,
// zero/packed.go). transformers' _flash_attention_forward, which every
// FlashAttention-2 attention layer calls, then tests
// `not (torch.diff(position_ids, dim=-1) >= 0).all()`
// (src/transformers/modeling_flash_attention_utils.py at
// huggingface/transformers 7713be1e51fbf31eb2c5eb27624369e08af29243): the
// bool of a CUDA tensor copies it to the host, which blocks until the
// compute stream has run every kernel queued before it. Later versions
// keep a sync there: `_is_packed_sequence(position_ids, batch_size)`
// returns `(increasing_position_sequences - position_ids).abs().sum()
// .bool()`, a 0-d CUDA tensor that `elif is_fa_with_varlen_kwargs or
// is_fa_with_position_ids` tests on the host, and
// prepare_fa_kwargs_from_position_ids then takes the maximum document
// length to the host, `max_length_q = max_length_q.item()`, for
// flash_attn_varlen_func (modeling_flash_attention_utils.py as the fork
// cyyever/transformers holds it at
// 84cf398137fed030c556fe5ea1a69dd8f7438496; the test came with
// huggingface/transformers#40002, "Fix flash attention integration",
// August 2025; the upstream repository's own later commits were not
// readable here, its snapshot is over the fetch limit). A later copy
// (evalstate/transformers 3e60b11c37e98f98405d9c034086c63f60dc1804) keeps
// the same test, skipped only while tracing under torch.compile, and
// hands the maximum on as a tensor. So the host is never more than about
// one layer ahead of the GPU.
//
// Not when the collator also passes cu_seq_lens_q/k and max_length_q/k as
// host integers (transformers' DataCollatorWithFlattening with
// return_flash_attn_kwargs): both versions then skip the test
// (`max_length_q is not None or ...` at 7713be1e), and memory.host_lead: 1
// describes such a run. memory.host_lead, when given, overrides this.
//
// Also under training.attention_unpad (flash-attn's padding wrapper in
// every block, MosaicGPT's attn_impl: flash in mosaicml/examples):
// FlashAttention.forward, handed a key_padding_mask, calls
// bert_padding.unpad_input, which runs `indices =
// torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()` (an
// output sized on the host) and `max_seqlen_in_batch =
// seqlens_in_batch.max().item()` (flash_attn/bert_padding.py lines 107-109
// at Dao-AILab/flash-attention v0.2.8,
// 33e0860c9c5667fded5af674882e731909096a7f; flash_attention.py line 55
// calls it; the same at v0.2.2, d95ee1a95da2b138073b5eef0f09ce4de615ba5e):
// in every block's forward the host waits for the compute stream, with no
// flag to skip it. The replay of FSDP1's deferred frees takes the same
// sync (memory's unpadSync).
//
// The sync is the model's, not the engine's: it holds FSDP1's host alike
// when its rate limiter is off (HostRunsAhead).
func (s *Scenario) HostSyncEachLayer() bool {
	return s.HostSyncWhy() != ""
}

// The reasons HostSyncWhy gives.
const (
	HostSyncPacked = "packed flash attention"
	HostSyncUnpad  = "flash-attn's unpad_input"
)

// HostSyncWhy names what syncs the host in every attention layer
// (HostSyncEachLayer): HostSyncPacked, HostSyncUnpad, or "" when nothing
// does (or memory.host_lead is given, which overrides it).
func (s *Scenario) HostSyncWhy() string {
	if s.Memory.HostLead != nil || s.Training.Attention != AttentionFlash || !s.HostRunsAhead() {
		return ""
	}
	switch {
	case s.Model.DocumentLen > 0:
		return HostSyncPacked
	case s.Training.AttentionUnpad:
		return HostSyncUnpad
	}
	return ""
}

// HostRunsAhead reports whether, at ZeRO-3 with overlap on, nothing in the
// engine keeps the host within a few units of the GPU in forward, so that the
// gathered parameters it releases there take new blocks on their all-gather
// stream while the GPU is still behind (memory.GatherPool, bounded by
// memory.host_lead):
//
//   - DeepSpeed ZeRO-3 (communication.boundary: deepspeed), whose forward
//     waits only on its own all-gather events (memory/profiler.go).
//   - PyTorch FSDP1 with limit_all_gathers false
//     (communication.limit_all_gathers). FSDP1 allocates each unit's
//     unsharded flat parameter on its unshard stream ("Stream for unshard
//     logic, including allocating the all-gather destination tensors and
//     the all-gathers themselves", _init_streams in
//     torch/distributed/fsdp/_runtime_utils.py at pytorch/pytorch
//     00ae0bc91ac2c1718d1baa193d9d299e2b82776c) and frees it after the
//     unit's forward with record_stream on the compute stream
//     (flat_param.py _free_unsharded_flat_param at pytorch/pytorch
//     002159d15791e969ffa994863a7fda7ed8338937: "Do not free the memory
//     until all ops in the current stream finish", record_stream, then
//     _free_storage). Its only wait for the GPU is the rate limiter:
//     _unshard runs
//     "if state.limit_all_gathers: event = state._free_event_queue.
//     dequeue_if_needed(); if event: event.synchronize()" (the same file),
//     which holds the host within two freed units of the GPU
//     (_FreeEventQueue, DefaultMaxInflightAllGathers). Without it the host
//     issues every unit's all-gather as soon as it reaches the unit. torch
//     defaulted limit_all_gathers to False until pytorch/pytorch#104900
//     (merged 2023-07-11, in torch 2.1), so FSDP1 runs on torch 2.0 and
//     older that do not pass it (llama-recipes before 71fdc492, 2023-07-25;
//     llm-foundry's fsdp_config.limit_all_gathers: false) run this way.
//     PyTorch's maintainers named the symptom: "our current design with
//     limit_all_gathers=False still may suffer from the cudaMalloc retries"
//     (awgu, pytorch/pytorch#104509, 2023-07-06), the cap
//     memory.ProfilerPeaks puts on the pool.
//
// With overlap off both gather on the compute stream, where a freed block
// is reused in stream order at once: no pool.
func (s *Scenario) HostRunsAhead() bool {
	c := &s.Communication
	if s.Parallelism.Stage != 3 || (c.Overlap != nil && !*c.Overlap) {
		return false
	}
	switch c.Boundary {
	case BoundaryDeepSpeed:
		return true
	case BoundaryFSDP1:
		return c.LimitAllGathers != nil && !*c.LimitAllGathers
	}
	return false
}

// GatherPoolName names the pool HostRunsAhead gives the scenario, for
// reports and messages: DeepSpeed's gather pool, or FSDP1's all-gather
// pool without its rate limiter.
func (s *Scenario) GatherPoolName() string {
	if s.Communication.Boundary == BoundaryFSDP1 {
		return PoolNameFSDP1
	}
	return PoolNameDeepSpeed
}

// The names GatherPoolName gives.
const (
	PoolNameDeepSpeed = "DeepSpeed's gather pool"
	PoolNameFSDP1     = "FSDP1's all-gather pool (limit_all_gathers false)"
)

// noteHostSync says, on load, that DeepSpeed's gather pool is held to one
// layer because the host syncs in every attention layer
// (HostSyncEachLayer), and how to undo it: for packed documents only,
// where a collator can skip the test (flash-attn's unpad_input always
// syncs, and the report names it).
func (l *loader) noteHostSync(s *Scenario) {
	if s.HostSyncWhy() != HostSyncPacked {
		return
	}
	l.warn(s, "model.document_len", "packed documents under flash attention: transformers' FlashAttention-2 path tests the packed position_ids on the host in every attention layer (modeling_flash_attention_utils.py), so "+s.GatherPoolName()+" holds at most one layer's parameters, not memory.host_lead's default whole forward (set memory.host_lead: 1 if the collator passes cu_seq_lens and max_length, which skips the test)")
}
