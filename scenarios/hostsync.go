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
func (s *Scenario) HostSyncEachLayer() bool {
	return s.Memory.HostLead == nil && s.Model.DocumentLen > 0 &&
		s.Training.Attention == AttentionFlash &&
		s.Parallelism.Stage == 3 && s.Communication.Boundary == BoundaryDeepSpeed &&
		(s.Communication.Overlap == nil || *s.Communication.Overlap)
}

// noteHostSync says, on load, that DeepSpeed's gather pool is held to one
// layer because the host syncs in every attention layer
// (HostSyncEachLayer), and how to undo it.
func (l *loader) noteHostSync(s *Scenario) {
	if !s.HostSyncEachLayer() {
		return
	}
	l.warn(s, "model.document_len", "packed documents under flash attention: transformers' FlashAttention-2 path tests the packed position_ids on the host in every attention layer (modeling_flash_attention_utils.py), so DeepSpeed's gather pool holds at most one layer's parameters, not memory.host_lead's default whole forward (set memory.host_lead: 1 if the collator passes cu_seq_lens and max_length, which skips the test)")
}
