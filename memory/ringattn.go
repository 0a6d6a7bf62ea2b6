package memory

import "fmt"

// This file is the memory of context parallelism's attention as PyTorch
// runs it (torch.distributed.tensor.experimental.context_parallel, which
// torchtitan 9dec370 enables for parallelism.cp > 1; zero/ringattn.go
// costs its time). Sources:
//
//   - torch/distributed/tensor/experimental/_attention.py at pytorch/pytorch
//     0123248a484ffe531edb5098b986c1bac08cd296 (a 2025 version, later than
//     torch 1963fc8, which torchtitan's Table 2 ran and of which no copy is
//     stored; the functions named here read the same in a December 2024
//     copy): _ContextParallelOptions
//     (convert_to_f32 = True, enable_load_balance = True, rotate_method =
//     ALL_GATHER), _templated_ring_attention, _SDPAMerger, _partial_update,
//     _AllGatherRotater, _AllToAllRotater and
//     _templated_ring_attention_backward.
//   - torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b
//     torchtitan/models/llama/model.py: keys = repeat_kv(xk), xk =
//     keys.transpose(1, 2): under training.attention sdpa SDPA gets K and
//     V at the query width heads·head_dim, as views that are not
//     contiguous (so the ring's key.contiguous() copies them); under flash
//     (SDPA with enable_gqa, torchtitan since ff0829c10fbf) at
//     kv_heads·head_dim, transposed views likewise. RingKVHeads decides
//     the width, for these buffers and for zero's ring time and bytes.
//
// The ring runs inside one SDPA call (the DTensor handler of
// aten._scaled_dot_product_flash_attention and of its backward): autograd
// keeps what it keeps at cp = 1 for the rank's s/cp rows (BlockTensors),
// and everything below is local to the call, freed when it returns. Per
// rank, with q and k the bf16 bytes of its local queries and of its local
// keys (= values; 2·b·(s/cp)·width), L = 4·b·a·s/cp the fp32 log-sum-exp
// and n = cp (the forms below take values as wide as keys and the output
// as wide as queries; multi-head latent attention's are v_head_dim wide,
// and the walks size each tensor at its own width, ringSizes):
//
// Forward (_templated_ring_attention): key.contiguous() and
// value.contiguous() (k each); round 0 cats them (2k, the all-gather's
// input, which the caching allocator cannot reuse before the gather is
// waited for at round 1) and all-gathers them once: the whole sequence's K and V, n·2k, alive to
// the end of the call. _SDPAMerger keeps the output in fp32 (2q) and the
// lse; each later round's SDPA writes a block output (q, or q/2 when only
// the second query chunk attends, i > rank) and lse, casts the output to
// fp32 (2q) and merges it eagerly: out − sigmoid(block_lse − lse)·(out −
// block_out) makes two fp32 temporaries at once (out − block_out, then the
// product; then the new out), and a partial round's _partial_update cats a
// new full-size accumulator. With ranks ≥ 1 merging full rounds the peak
// is at a full merge: n·2k + 9q + 3L (the accumulator, the block's fp32 and
// bf16 outputs, two temporaries; merged, block and sigmoid lse).
//
// Backward (_templated_ring_attention_backward): fp32 accumulators
// zeros_like for dq (2q), dk and dv (2k each); the contiguous copies (2k);
// the all-gathered K and V again (n·2k; the cat kept in next_kv, 2k, and a
// new cat each round but the last while the old one is still referenced);
// each round's flash backward writes bf16 dq, dk, dv (full or half, the
// previous round's still referenced while it runs); dk and dv go round
// the ring in fp32: next_grad_kv = cat(dk, dv) (4k) is the input of an
// all_to_all (permute_tensor) whose output (4k) is received at the next
// round, where dk and dv become views of it (or _partial_update cats new
// ones, 2k each, i ≤ rank); a partial round's dq update cats a new fp32
// dq. The peak, with k = q (repeat_kv), is at round 1's new next_kv cat for
// cp ≥ 3: n·2k + 3q + 20k, the accumulators 2q + 4k, the contiguous copies
// 2k, two cats 4k, round 0's bf16 gradients q + 2k, the fp32 dk/dv cat and
// the received one 8k; in general n·2k + max(3q + 20k (cp ≥ 3), 3.5q + 18k
// + L/2, 4q + 17k, 4.5q + 16k + L/2) (docs/memory-model.md).
//
// Under torch.compile (training.compile: blocks; torchtitan 9dec370
// parallelize_llama.py apply_compile: torch.compile(block, fullgraph=True))
// the ring is traced into the block's graph and Inductor decides what is
// materialized: the inputs and outputs of extern kernels (the SDPA calls)
// and of collectives; pointwise work is fused into its consumer (the
// fp32 casts, the zeros_like plus first add, out − sigmoid(·)·(out −
// block_out) as one kernel per round, _partial_update's cat); a buffer is
// freed after its last use; a traced functional collective is waited for
// at once (torch/distributed/_functional_collectives.py _maybe_wrap_tensor
// at pytorch/pytorch fff02e67db38, see zero/ringattn.go). The merged output is
// written to a new fp32 buffer each round (Inductor may reuse the old one
// in place: not assumed, so this is the upper bound): n·2k + 5q + 3L
// forward (4q at cp 2, where round 0's bf16 output is the old
// accumulator); backward n·2k + max(2q + 8k + max(q + k, q/2 + 2k), 5q +
// 4k): dq, the received fp32 dk/dv, the round's bf16 gradients and the
// next fp32 cat; or the new dq beside the old.
//
// Activation checkpointing does not change these buffers: full (and
// selective) recomputation reruns the forward ring inside the block's
// backward, where its buffers are freed before the backward ring allocates
// its own (eager: the rerun SDPA call returns first; compiled: the
// recomputed gather's last use is the rerun's last round); op
// checkpointing keeps the SDPA outputs and does not rerun it. So the
// forward figure is alive during a block's forward and the backward figure
// during its backward; under a policy that reruns the ring, the larger of
// the two (the forward one only when K and V are narrower than the
// queries: GQA without repeat_kv) beside the block's recomputation
// (unitRingBuffers).
//
// Not counted, as at cp = 1: the flash kernels' own workspace (the fp32 dq
// accumulator FlashAttention-2's backward allocates per call) and the
// gradients the call returns (what cp = 1's kernel returns too).

// RingKVHeads is the number of heads of the k and v that PyTorch's
// context-parallel ring receives: the width, times head_dim, at which it
// makes them contiguous, all-gathers them and sends their fp32 gradients
// round the ring. zero's ring time and bytes (RingAttentionCost) and
// RingBuffers both take it from here. The ring cats "key.flatten(),
// value.flatten()" as the intercepted aten op received them, expanding
// nothing (_templated_ring_attention in _attention.py at 0123248, and
// still in torch/distributed/tensor/experimental/_context_parallel/
// _attention.py at 09b101c, which torchtitan 238fa9953e4a's
// apply_cp_to_attention_module drives); what the op receives depends on
// the stack:
//
//   - sdpa: torchtitan 9dec370's Attention.forward repeats k and v to
//     every head before F.scaled_dot_product_attention
//     (torchtitan/models/llama/model.py: keys = repeat_kv(xk, n_rep)):
//     heads. (eager attention is no SDPA call and has no ring:
//     unitRingBuffers, zero's blockRing; heads if asked.)
//   - flash: k and v reach SDPA unexpanded with enable_gqa=True, as
//     torchtitan does since ff0829c ("GQA without kv repeats",
//     2026-01-27; Attention.forward and ScaledDotProductAttentionWrapper,
//     torchtitan/models/llama3/model/model.py and models/attention.py at
//     238fa99), which scenarios' torchtitan import writes as
//     training.attention: flash. PyTorch's flash backend admits grouped
//     heads (can_use_flash_attention: check_batch_size_and_num_heads_dense
//     <backend_supports_grouped_query_attention = true> in
//     aten/src/ATen/native/transformers/cuda/sdp_utils.cpp at 21c3369eded4,
//     whose check_grouped_query_attention only asks that kv_heads divide
//     heads, sdp_utils_cpp.h at 0119c20), and scaled_dot_product_attention
//     (aten/src/ATen/native/transformers/attention.cpp) passes key and
//     value unchanged to _scaled_dot_product_flash_attention and
//     _scaled_dot_product_cudnn_attention, the ops the ring intercepts
//     (_sdpa_handler's call_maps); only the math backend repeats them
//     (pre_process_group_query_attention_input). So kv_heads.
//     flash_attn's own kernels (transformers' flash_attention_2) are no
//     aten SDPA op and get no ring: Accelerate's context parallelism
//     "works only with SDPA" (docs/source/concept_guides/
//     context_parallelism.md at huggingface/accelerate 16cb6eb80dd9), so flash
//     at cp > 1 means SDPA with enable_gqa, not that package.
//   - multi-head latent attention (latent): k is built per head (k_pe
//     expanded to every head before SDPA, deepseek_v3/model/model.py at
//     torchtitan 238fa99): heads.
//
// kvHeads ≤ 0 means heads; attention "" is flash (BlockDims' default).
func RingKVHeads(attention string, heads, kvHeads int64, latent bool) int64 {
	if (attention == AttentionFlash || attention == "") && !latent && kvHeads > 0 {
		return kvHeads
	}
	return heads
}

// RingBuffers returns the bytes of PyTorch's load-balanced ring attention
// (all-gather rotation, fp32 merge) alive during one block's attention
// forward and backward on the rank whose figure is largest, for a block of
// dimensions d whose Seq is the rank's s/cp rows; zero for cp ≤ 1.
// d.Compiled applies torch.compile's rules (see above). K and V are
// RingKVHeads(d) heads wide: heads·head_dim after repeat_kv for sdpa,
// kv_heads·head_dim for flash (SDPA with enable_gqa), as BlockTensors
// keeps them; k (and q) at head_dim, v (and the output) at v_head_dim.
// d.Attention eager has no ring in a run (unitRingBuffers gives it none);
// here it is sized as sdpa.
func RingBuffers(d BlockDims, cp int64) (fwd, bwd int64, err error) {
	if cp <= 1 {
		return 0, 0, nil
	}
	if err := d.check(); err != nil {
		return 0, 0, err
	}
	var c calc
	kvw := RingKVHeads(d.Attention, d.Heads, d.KVHeads, d.KVLoRARank > 0)
	sz := ringSizes{
		n:   cp,
		q:   c.Mul(2, d.Batch, d.Seq, d.Heads, d.HeadDim),
		o:   c.Mul(2, d.Batch, d.Seq, d.Heads, d.vHeadDim()),
		k:   c.Mul(2, d.Batch, d.Seq, kvw, d.HeadDim),
		v:   c.Mul(2, d.Batch, d.Seq, kvw, d.vHeadDim()),
		lse: c.Mul(4, d.Batch, d.Heads, d.Seq),
	}
	// The walks add the gathered K and V to a few dozen tensors of at most
	// max(q, o, k + v, L) bytes: bound the sum once here.
	c.Add(c.Mul(sz.n, c.Add(sz.k, sz.v)), c.Mul(64, max(sz.q, sz.o, c.Add(sz.k, sz.v), sz.lse)))
	if c.Err != nil {
		return 0, 0, fmt.Errorf("ring attention buffers overflow: %w", c.Err)
	}
	for _, r := range ringRanks(cp) {
		f, b := ringForwardEager, ringBackwardEager
		if d.Compiled {
			f, b = ringForwardCompiled, ringBackwardCompiled
		}
		fwd = max(fwd, f(sz, r))
		bwd = max(bwd, b(sz, r))
	}
	return fwd, bwd, nil
}

// ringRanks are the ranks whose figures are taken. A rank's rounds 1…rank
// attend with all its queries (half the keys), the others with its second
// query chunk (all the keys), and what is alive at a round depends only on
// that round's kind, the previous one's and whether it is the first or
// last: ranks 0, 1, 2, n−2 and n−1 meet every such case, and every rank is
// taken up to 64 (TestRingBuffersRanks holds the two equal).
func ringRanks(n int64) []int64 {
	if n <= 64 {
		out := make([]int64, n)
		for r := range out {
			out[r] = int64(r)
		}
		return out
	}
	return []int64{0, 1, 2, n - 2, n - 1}
}

// ringSizes are a rank's bf16 bytes of its local queries (q), attention
// output (o), keys (k) and values (v), and of its fp32 log-sum-exp (lse),
// over a ring of n ranks. q and k are heads·head_dim and RingKVHeads·
// head_dim wide, o and v heads·v_head_dim and RingKVHeads·v_head_dim:
// one width per pair but for multi-head latent attention, whose values and
// output are v_head_dim wide against qk_nope_head_dim + qk_rope_head_dim
// (zero's RingAttentionCost splits its counts the same way). Every tensor
// of the walks is sized by what it holds: dq like q, dk like k, dv like
// v, the merge's accumulators like the output.
type ringSizes struct {
	n, q, o, k, v, lse int64
}

// live follows the tensors alive in one call: alloc, free and rebind
// (Python's x = f(...): the new tensor exists before the old is dropped).
type live struct {
	t         map[string]int64
	cur, peak int64
}

func newLive() *live { return &live{t: map[string]int64{}} }

func (l *live) alloc(name string, b int64) {
	if _, ok := l.t[name]; ok {
		panic("memory: ring tensor " + name + " allocated twice")
	}
	l.t[name] = b
	l.cur += b
	l.peak = max(l.peak, l.cur)
}

func (l *live) free(name string) {
	l.cur -= l.t[name]
	delete(l.t, name)
}

func (l *live) rebind(name string, b int64) {
	old := l.t[name]
	l.cur += b
	l.peak = max(l.peak, l.cur)
	l.cur -= old
	l.t[name] = b
}

// rename moves a tensor to another name (a new reference, no copy).
func (l *live) rename(from, to string) {
	b, ok := l.t[from]
	if !ok {
		return
	}
	delete(l.t, from)
	if _, ok := l.t[to]; ok {
		panic("memory: ring tensor " + to + " renamed over")
	}
	l.t[to] = b
}

// roundSizes are a round's query-side bytes (queries q, output o, lse)
// and key-side bytes (keys k, values v): a round i ≤ rank attends with
// every local query and the first half of the keys and values, a later
// one with the second query chunk and all the keys and values.
func roundSizes(sz ringSizes, i, rank int64) (full bool, q, o, k, v, lse int64) {
	if i <= rank {
		return true, sz.q, sz.o, sz.k / 2, sz.v / 2, sz.lse
	}
	return false, sz.q / 2, sz.o / 2, sz.k, sz.v, sz.lse / 2
}

// ringForwardEager follows _templated_ring_attention and _SDPAMerger line
// by line on rank.
func ringForwardEager(sz ringSizes, rank int64) int64 {
	l := newLive()
	n, o, kv := sz.n, sz.o, sz.k+sz.v
	l.alloc("key", sz.k) // key = key.contiguous()
	l.alloc("value", sz.v)
	// i = 0: next_kv = torch.cat([key.flatten(), value.flatten()]), the
	// all-gather's input; exchange_buffers returns None, but the gather
	// holds it until it is waited for.
	l.alloc("send", kv)
	l.alloc("gathered", n*kv) // ft_c.all_gather_tensor
	l.alloc("out", o)         // round 0's SDPA: out, logsumexp
	l.alloc("lse", sz.lse)
	l.alloc("acc", 2*o)       // step: out.to(torch.float32) becomes self._out
	l.rename("lse", "acclse") // self._lse is round 0's lse itself
	for i := int64(1); i < n; i++ {
		if i == 1 {
			l.free("send") // rotater.next_buffer() waits for the gather
		}
		if i < n-1 {
			l.alloc("cat", kv) // next_kv = torch.cat(...), dropped at once
			l.free("cat")
		}
		if i == 1 {
			l.free("key") // q, k, v now view the gathered buffer
			l.free("value")
		}
		full, _, oo, _, _, lo := roundSizes(sz, i, rank)
		l.alloc("out'", oo) // this round's SDPA output and lse; the
		l.alloc("lse'", lo) // previous round's are dropped after
		l.free("out")
		l.free("lse")
		l.rename("out'", "out")
		l.rename("lse'", "lse")
		l.alloc("blk", 2*oo) // out.to(torch.float32)
		// out − sigmoid(block_lse − lse)·(out − block_out)
		l.alloc("d", lo)
		l.alloc("sig", lo)
		l.free("d")
		l.alloc("diff", 2*oo)
		l.alloc("prod", 2*oo)
		l.free("diff")
		l.free("sig")
		l.alloc("new", 2*oo)
		l.free("prod")
		// lse − logsigmoid(lse − block_lse)
		l.alloc("d", lo)
		l.alloc("ls", lo)
		l.free("d")
		l.alloc("newlse", lo)
		l.free("ls")
		if full {
			l.free("acclse")
			l.rename("newlse", "acclse")
			l.free("acc")
			l.rename("new", "acc")
		} else {
			// _partial_update: torch.cat of the kept first chunk and
			// the new second one, a new full-size tensor.
			l.alloc("acclse'", sz.lse)
			l.free("acclse")
			l.rename("acclse'", "acclse")
			l.alloc("acc'", 2*o)
			l.free("acc")
			l.rename("acc'", "acc")
			l.free("newlse")
			l.free("new")
		}
		l.free("blk")
	}
	// results(): out.to(bf16) and the lse are the attention's outputs,
	// activations the block counts.
	return l.peak
}

// ringBackwardEager follows _templated_ring_attention_backward line by
// line on rank.
func ringBackwardEager(sz ringSizes, rank int64) int64 {
	l := newLive()
	n, q, k, v, kv := sz.n, sz.q, sz.k, sz.v, sz.k+sz.v
	l.alloc("dq", 2*q) // torch.zeros_like(..., dtype=float32)
	l.alloc("dk", 2*k)
	l.alloc("dv", 2*v)
	l.alloc("key", k) // key.contiguous(), value.contiguous()
	l.alloc("value", v)
	l.alloc("nextkv", kv) // i = 0: next_kv = torch.cat(...), kept
	l.alloc("gathered", n*kv)
	l.alloc("gq", q) // round 0's flash backward: bf16 dq, dk, dv
	l.alloc("gk", k)
	l.alloc("gv", v)
	// grad_key += grad_key_ (in place); next_grad_kv = torch.cat of the
	// fp32 dk, dv, the input of permute_tensor, whose output arrives next
	// round.
	l.alloc("gkvcat", 2*kv)
	l.alloc("recv", 2*kv)
	for i := int64(1); i < n; i++ {
		if i != n-1 {
			l.rebind("nextkv", kv)
		}
		if i == 1 {
			l.free("key")
			l.free("value")
		}
		full, qo, _, ko, vo, lo := roundSizes(sz, i, rank)
		if full {
			l.free("lsechunk") // lse = logsumexp
		} else {
			l.rebind("lsechunk", lo) // logsumexp.chunk(2)[1].contiguous()
		}
		l.alloc("gq'", qo) // this round's gradients; the previous
		l.alloc("gk'", ko) // round's are dropped when the call returns
		l.alloc("gv'", vo)
		for _, g := range []string{"gq", "gk", "gv"} {
			l.free(g)
			l.rename(g+"'", g)
		}
		// next_grad_kv = dkv_rotater.next_buffer(): the received fp32
		// dk, dv; the previous cat is dropped. grad_key and grad_value
		// become views of it, dropping the old ones (standalone, or
		// views keeping the previous received buffer).
		l.rename("recv", "held")
		l.free("gkvcat")
		l.free("dk")
		l.free("dv")
		l.free("heldPrev")
		views := true
		if full {
			// _partial_update(add=True): torch.cat, new tensors.
			l.alloc("dk", 2*k)
			l.alloc("dv", 2*v)
			views = false
		} // else grad_key += grad_key_ in place on the views
		l.alloc("gkvcat", 2*kv) // next_grad_kv = torch.cat(...)
		if views {
			l.rename("held", "heldPrev")
		} else {
			l.free("held")
		}
		l.alloc("recv", 2*kv) // permute_tensor's output
		if !full {
			l.rebind("dq", 2*q) // _partial_update of grad_query
		}
	}
	// grad_query.to(bf16) and the received dk, dv .to(bf16) are the
	// gradients the call returns, as at cp = 1.
	return l.peak
}

// ringForwardCompiled is the forward under Inductor's rules: the merge
// fused into one kernel per round writing a new fp32 accumulator, the
// gather waited for at once.
func ringForwardCompiled(sz ringSizes, rank int64) int64 {
	l := newLive()
	n, kv := sz.n, sz.k+sz.v
	l.alloc("key", sz.k) // contiguous copies: round 0's kernel inputs
	l.alloc("value", sz.v)
	l.alloc("send", kv)
	l.alloc("gathered", n*kv)
	l.free("send")
	l.alloc("acc", sz.o) // round 0's output and lse, merged into the
	l.alloc("acclse", sz.lse)
	l.free("key") // first accumulator at round 1
	l.free("value")
	for i := int64(1); i < n; i++ {
		_, _, oo, _, _, lo := roundSizes(sz, i, rank)
		l.alloc("out", oo)
		l.alloc("lse", lo)
		l.alloc("acc'", 2*sz.o)
		l.alloc("acclse'", sz.lse)
		for _, x := range []string{"acc", "acclse", "out", "lse"} {
			l.free(x)
		}
		l.rename("acc'", "acc")
		l.rename("acclse'", "acclse")
	}
	return l.peak
}

// ringBackwardCompiled is the backward under Inductor's rules: the zeros
// and first adds fused (dq written from round 0's gradient, dk and dv
// straight into the fp32 cat), each received dk/dv fused with the round's
// gradients into the next cat, collectives waited for at once.
func ringBackwardCompiled(sz ringSizes, rank int64) int64 {
	l := newLive()
	n, q, k, v, kv := sz.n, sz.q, sz.k, sz.v, sz.k+sz.v
	l.alloc("key", k)
	l.alloc("value", v)
	l.alloc("send", kv)
	l.alloc("gathered", n*kv)
	l.free("send")
	l.alloc("gq", q)
	l.alloc("gk", k)
	l.alloc("gv", v)
	l.free("key")
	l.free("value")
	l.alloc("dq", 2*q)
	l.free("gq")
	l.alloc("gkvcat", 2*kv)
	l.free("gk")
	l.free("gv")
	l.alloc("recv", 2*kv)
	l.free("gkvcat")
	for i := int64(1); i < n; i++ {
		full, qo, _, ko, vo, lo := roundSizes(sz, i, rank)
		if !full {
			l.alloc("lsechunk", lo) // a kernel input: materialized
		}
		l.alloc("gq", qo)
		l.alloc("gk", ko)
		l.alloc("gv", vo)
		l.free("lsechunk")
		l.alloc("gkvcat", 2*kv)
		l.free("recv")
		l.free("gk")
		l.free("gv")
		l.alloc("recv", 2*kv)
		l.free("gkvcat")
		l.rebind("dq", 2*q)
		l.free("gq")
	}
	return l.peak
}
