package scenarios

import "fmt"

// training.loss_chunks is torchtitan's chunked loss, ChunkedLossWrapper
// (torchtitan/components/loss.py lines 501-721 at pytorch/torchtitan
// b5bcd76c6, introduced as ChunkedCELoss by 786e26f8e, 2026-04-27,
// "ChunkedCELoss (#2937)"). llama3_debugmodel, llama3_8b, llama3_70b and llama3_405b
// wrap their loss in it with the default num_chunks = 8 (loss.py line
// 544; torchtitan/models/llama3/config_registry.py lines 42, 197, 270 and
// 322 at b5bcd76c6). Its flow, as zerosim models it (memory/tensors.go,
// ChunkedLossBuffers; docs/memory-model.md):
//
//   - the model's forward stops before the output head (_skip_lm_head,
//     torchtitan/trainer.py lines 508-523) and returns the final norm's
//     output, the hidden states [T, D]; the trainer deletes pred after
//     the loss returns, before loss.backward() (trainer.py lines 785-799);
//   - the hidden states are split into num_chunks equal chunks along
//     the token dimension (loss.py lines 602-611: seq_len % num_chunks
//     must be 0) and each chunk runs lm_head, the fp32 cross-entropy
//     (cross_entropy_loss, loss.py lines 57-62: pred.float()) and its
//     backward at once (lines 676-700), so one chunk's logits, upcast,
//     log-probabilities and gradients exist at a time;
//   - each chunk's hidden-state gradient is copied into an fp32 [T, D]
//     buffer (GradAccumulator, dtype=torch.float32, lines 432 and
//     639-643), cast to the hidden states' dtype after the loop (line
//     711) and handed to the decoder's backward (lines 767-809);
//   - lm_head's FSDP2 reshard after forward and after backward are off
//     through the loop and its gradient sync is off for chunks 0..N-2
//     and on for the last (lines 658-680; also at 786e26f8e, lines
//     309-322, although that commit's message says the reduce-scatter
//     "fires per-chunk"): FSDP2's post_backward without reduce_grads
//     keeps the unsharded gradient, upcast to reduce_dtype
//     (FSDPParamGroup.post_backward, to_accumulated_grad_if_needed;
//     torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at
//     pytorch/pytorch 002a76fbfea0ac0f199e4b8e2a0691074796c908), so the
//     gradient of lm_head accumulates over the chunks and is
//     reduce-scattered once per micro-step, after the last chunk, as
//     without chunks.
//
// maxLossChunks bounds training.loss_chunks (the token count divides by
// it anyway).
const maxLossChunks = 1 << 20

// Chunked reports whether the loss runs in chunks (training.loss_chunks
// above 1).
func (t *Training) Chunked() bool { return t.LossChunks > 1 }

// LossChunkTokens is the tokens each of the chunked loss's chunks runs
// the output head and the loss on: tokens/chunks, all the tokens when
// chunks is 1 or less (one pass). ChunkedLossWrapper splits the hidden
// states into chunks equal chunks and refuses a count that does not
// divide them (loss.py lines 602-611 at b5bcd76c6), an error here too:
// the loader's check of training.loss_chunks, the memory model's and the
// compute plan's are this one.
func LossChunkTokens(tokens, chunks int64) (int64, error) {
	if chunks <= 1 {
		return tokens, nil
	}
	if tokens%chunks != 0 {
		return 0, fmt.Errorf("%d loss chunks do not divide %d tokens (use a divisor of %d)", chunks, tokens, tokens)
	}
	return tokens / chunks, nil
}

// resolveLossChunks validates training.loss_chunks: a count from 1 (one
// pass, the default) that divides the rank's tokens per micro-batch, and,
// above 1, only where zerosim models the wrapper: torchtitan's eager fp32
// cross-entropy over FSDP2 at stage 3 on a transformer whose output head
// is derived, with the final norm and lm_head one FSDP2 group of their own
// (communication.boundary fsdp2_head: fully_shard([model.norm,
// model.lm_head]), torchtitan/distributed/fsdp.py lines 258-265 at
// b5bcd76c6). Under boundary fsdp2 the head is in the root's group, whose
// reduction zerosim holds to the end of the backward (memory/rootgroup.go),
// which the wrapper's per-call gradient sync would change.
func (l *loader) resolveLossChunks(s *Scenario) *Error {
	const p = "training.loss_chunks"
	if !l.has(p) {
		return nil
	}
	t := &s.Training
	if err := l.intRange(p, t.LossChunks); err != nil {
		return err
	}
	if !t.Chunked() {
		return nil
	}
	n := t.LossChunks
	if _, why := s.HeadUnit(); why != "" {
		return l.errPath(p, fmt.Sprintf("loss_chunks=%d has no output head to chunk: %s (delete the key)", n, why))
	}
	m := &s.Model
	tokens := t.MicroBatch * s.RankSeqLen()
	if _, err := LossChunkTokens(tokens, n); err != nil {
		return l.errPath(p, fmt.Sprintf("loss_chunks=%d does not divide the rank's %d tokens per micro-batch (micro_batch × seq_len/cp): torchtitan's ChunkedLossWrapper checks seq_len %% num_chunks == 0 (use a divisor of %d, e.g. %d)", n, tokens, tokens, largestDivisorUpTo(tokens, n)))
	}
	why := ""
	switch {
	case s.Parallelism.Stage != 3 || s.Communication.Boundary != BoundaryFSDP2Head:
		why = "it is modelled over FSDP2 as torchtitan applies it since the wrapper exists, [norm, lm_head] one group of their own (zero_stage: 3 with communication.boundary: fsdp2_head)"
	case t.CrossEntropy != "" && t.CrossEntropy != CrossEntropyFP32:
		why = "its inner loss is torchtitan's cross_entropy on pred.float() (cross_entropy: fp32)"
	case t.Compile.Loss():
		why = "a compiled inner loss is not modelled (use compile: none or blocks)"
	case t.KeptLogitsBytes() > 0:
		why = "the model returns hidden states, not logits, for the loop to keep (keep_logits: none)"
	case s.HoldsUnshardedGrads():
		why = "the wrapper turns lm_head's gradient sync back on every micro-step (loss.py line 705), which grad_sync: last does not model (use grad_sync: every)"
	case m.MTPModules() > 0:
		why = "multi-token prediction heads are not chunked in zerosim"
	case m.LogitSoftcap:
		why = "a logit soft-cap is not part of torchtitan's lm_head"
	}
	if why != "" {
		return l.errPath(p, fmt.Sprintf("loss_chunks=%d is not modelled here: %s (or delete the key)", n, why))
	}
	return nil
}

// largestDivisorUpTo is the largest divisor of n not above k (n, k ≥ 1).
func largestDivisorUpTo(n, k int64) int64 {
	for d := min(k, n); d > 1; d-- {
		if n%d == 0 {
			return d
		}
	}
	return 1
}
