package memory

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// This file models the attention masks of blocks that attend over a
// sliding window or within attention chunks (scenarios.BlockDims.Window,
// AttentionChunk) under training.attention sdpa, as transformers and
// PyTorch run them.
//
// transformers (src/transformers/masking_utils.py @
// 2ccc6cae21faaf11631efa5fb9054687ae5dc931):
//
//   - The model's forward builds one mask per mask type and hands it to
//     every layer of that type: create_sliding_window_causal_mask,
//     create_chunked_causal_mask → sdpa_mask. sdpa_mask returns None (SDPA
//     then runs is_causal, no mask) when _ignore_causal_mask_sdpa allows
//     it, which for a local mask needs kv_length < local_attention_size;
//     in training (no cache) kv_length is the input's length, so a mask
//     exists once seq_len ≥ the window or chunk. The full-attention
//     layers of a mixed model (Gemma 2/3, gpt-oss) skip theirs: kv_length
//     = query_length and an all-ones padding mask.
//   - The mask is boolean, (batch, 1, q_len, kv_len): sdpa_mask_recent_torch
//     (torch ≥ 2.6) vmaps the mask function over the batch index too, and
//     the padding mask (a 2-D attention_mask, as a data collator passes)
//     or the packed-sequence mask (position_ids without one) indexes it by
//     batch, so the result is materialised per sequence: b·s·s bytes.
//     sdpa_mask_older_torch multiplies an expanded causal mask by the
//     padding mask, again b·s·s.
//   - Modelled: a 2-D attention_mask of ones, as a tokenizer and data
//     collator pass. With attention_mask None the models pass
//     position_ids, _preprocess_mask_arguments computes the packed-sequence
//     mask whenever there is no cache, and allow_is_causal_skip is then
//     False: at this commit every layer type, the full-attention ones
//     included and windowed ones below the window, gets a mask. Not
//     modelled.
//
// PyTorch's scaled_dot_product_attention (aten/src/ATen/native/
// transformers/attention.cpp):
//
//   - SDPA's flash backend takes no mask, so with one the memory-efficient
//     backend runs (zero's blockMask: can_use_flash_attention's
//     check_for_attn_mask, cuda/sdp_utils.cpp @
//     21c3369eded41cbad40b61858013c3312afc6dbb, whose priority_order is
//     flash, efficient, math, cuDNN: cuDNN attention is tried last there).
//   - Each call converts the boolean mask into a new additive mask in the
//     query's dtype (convert_boolean_attn_mask: at::zeros_like(mask,
//     dtype) then masked_fill_(mask.logical_not(), -inf) at pytorch/pytorch
//     bc8cb28010a6b27e1817d38e1c1e0ac59b34477e; at::where(mask.logical_not(),
//     -inf, scalar_tensor(0, dtype)) in a later version (its commit not
//     known), the same (b, 1, s, s) 16-bit tensor): one per layer, since
//     every layer calls SDPA.
//   - A later version of cuda/sdp_utils.cpp (a copy found without its
//     commit; it asks for cuDNN newer than 9.15.1) puts cuDNN attention
//     first on sm90 and sm100 unless TORCH_CUDNN_SDPA_DEPRIORITIZED is
//     set, and cuDNN takes a mask: it gets the same (b, 1, s, s) 16-bit
//     additive copy (convert_boolean_attn_mask_cudnn, -65504 for -inf), so
//     the bytes below hold for it as well when s is a multiple of 8; what
//     its autograd node keeps was not checked, nor its FLOPs (zero counts
//     the efficient kernel).
//   - For the efficient backend preprocess_mask aligns it. The later
//     version, modelled here, pads the last dimension to a multiple of 8
//     when the mask's strides are not aligned to 8 (pad_bias: at::pad then
//     slice, a copy at (b, 1, s, ⌈s/8⌉·8)) and then expands it to (b, heads,
//     s, s), a view. At bc8cb28 it expanded first and padded the expanded
//     view to a multiple of 16 (a copy at b·heads·s·⌈s/16⌉·16): the two
//     agree whenever s is a multiple of 16, as every sequence length the
//     project's scenarios use.
//   - _scaled_dot_product_efficient_attention's autograd node saves
//     attn_bias for _scaled_dot_product_efficient_attention_backward
//     (tools/autograd/derivatives.yaml: "query, key, value, attn_bias:
//     _scaled_dot_product_efficient_attention_backward(grad, query, key,
//     value, attn_bias, output, log_sumexp, ...)", read in a copy found
//     without its commit; the backward op's schema takes
//     attn_bias, so autograd must keep it), so each layer keeps its
//     bias, 2·b·s·⌈s/8⌉·8 bytes, until its backward: a row of BlockTensors
//     (Core: selective recomputation rebuilds it with the core attention;
//     not OpSaved: torchtitan's op policy saves SDPA's outputs, and the
//     bias is an input made by where, so it is recomputed).
//
// Lifetimes (unitMasks): the boolean mask is referenced by the model's
// forward (its causal_mask_mapping, a local of the decoder's forward that
// every layer indexes by its attention_type, e.g. Olmo3Model.forward in a
// copy of modeling_olmo3.py found without its commit) and by no
// autograd node (where's inputs need no gradient), so with no
// checkpointing it dies when the decoder's forward returns, after its last
// block, whether or not that block uses it. A checkpointed block holds it as an input of its
// recomputation (GradientCheckpointingLayer.__call__ passes
// partial(super().__call__, **kwargs), attention_mask among the keyword
// arguments, as the function torch.utils.checkpoint keeps for the
// recomputation: src/transformers/modeling_layers.py @
// 00029cfa0ed780d1ddb6e5d199bd92e86c5791a2), so it lives until the backward of the
// first checkpointed block that uses it, the last of them to run backward;
// that block's recomputation rebuilds its bias (the Recompute column).
//
// Not modelled: the logical_not temporary (b·s·s bytes, freed inside the
// conversion); a compiled block (training.compile) is counted as eager,
// though AOTAutograd's partitioner could keep the boolean mask and rebuild
// the bias in backward instead; eager attention's own float mask
// (eager_mask, built for every layer type).

// maskKey is one mask transformers builds per forward: a sliding window
// or an attention chunk of size tokens.
type maskKey struct {
	size    int64
	chunked bool
}

// sdpaMask reports whether block l's SDPA call gets a materialised mask,
// and which one: training.attention sdpa, no context parallelism (ring
// attention runs its own calls, zero's blockMask), a softmax-attention
// block with a sliding window or attention chunk no longer than seq_len.
func sdpaMask(s *scenarios.Scenario, l scenarios.Layer) (maskKey, bool) {
	x := l.Dims
	if s.Training.Attention != scenarios.AttentionSDPA || s.Parallelism.CP > 1 || x == nil || x.LinearAttention != "" {
		return maskKey{}, false
	}
	k := maskKey{max(x.Window, x.AttentionChunk), x.AttentionChunk > 0}
	if k.size <= 0 || s.Model.SeqLen < k.size {
		return maskKey{}, false
	}
	return k, true
}

// SDPAMaskBytes returns, for micro-batch b and sequence length s, the
// bytes of transformers' boolean mask (b·s·s, one per mask type and
// forward) and of the additive 16-bit bias SDPA makes of it for one layer
// and keeps for backward (2·b·s·⌈s/8⌉·8).
func SDPAMaskBytes(b, s int64) (boolMask, bias int64, err error) {
	if b <= 0 || s <= 0 {
		return 0, 0, fmt.Errorf("attention mask needs micro_batch and seq_len > 0 (got %d, %d)", b, s)
	}
	var c calc
	boolMask = c.Mul(b, s, s)
	bias = c.Mul(2, b, s, c.Mul(c.Add(s, 7)/8, 8))
	if c.Err != nil {
		return 0, 0, fmt.Errorf("attention mask size overflows: %w", c.Err)
	}
	return boolMask, bias, nil
}

// unitMasks returns, per unit, the bytes of transformers' boolean masks
// allocated at the unit's forward (on the first block that uses each),
// freed after its forward (the decoder's last block, for a mask no
// checkpointed block holds: the decoder's forward keeps every mask of its
// causal_mask_mapping until it returns, whichever blocks use it) and freed
// at the end of its backward (the first checkpointed block using it). Zeros unless some block gets a mask
// (sdpaMask) and memory.activations is on. Blocks with activation_bytes
// set keep their own figure and are skipped; the block count for
// recompute_every and recompute_fraction is unitActivations'.
func unitMasks(s *scenarios.Scenario) (alloc, freeFwd, freeBwd []int64, err error) {
	layers := s.Model.LayerList
	alloc = make([]int64, len(layers))
	freeFwd = make([]int64, len(layers))
	freeBwd = make([]int64, len(layers))
	m := s.Model
	if !*s.Memory.Activations || m.Kind != scenarios.KindTransformer || m.Hidden <= 0 || m.Heads <= 0 || m.SeqLen <= 0 {
		return alloc, freeFwd, freeBwd, nil
	}
	boolMask, _, err := SDPAMaskBytes(s.Training.MicroBatch, m.SeqLen)
	if err != nil {
		return nil, nil, nil, err
	}
	var c calc
	type life struct{ ckpt int }
	var order []maskKey
	lives := map[maskKey]*life{}
	// The decoder's forward returns after its last block (with that
	// block's routed experts): the mask mapping dies with it.
	end := -1
	for u, l := range layers {
		if l.Block || l.Group == scenarios.GroupExpert && end == u-1 {
			end = u
		}
	}
	policy := UnitPolicies(s)
	for u, l := range layers {
		if l.ActivationBytes != 0 || !l.Block || l.Dims != nil && l.Dims.ExpertsOnly() && l.Dims.TopK > 0 {
			continue
		}
		ckpt := policy[u] != "" && policy[u] != PolicyNone
		k, ok := sdpaMask(s, l)
		if !ok {
			continue
		}
		v := lives[k]
		if v == nil {
			v = &life{ckpt: -1}
			lives[k] = v
			order = append(order, k)
			alloc[u] = c.Add(alloc[u], boolMask)
		}
		if ckpt && v.ckpt < 0 {
			v.ckpt = u
		}
	}
	for _, k := range order {
		if v := lives[k]; v.ckpt >= 0 {
			freeBwd[v.ckpt] = c.Add(freeBwd[v.ckpt], boolMask)
		} else {
			freeFwd[end] = c.Add(freeFwd[end], boolMask)
		}
	}
	if c.Err != nil {
		return nil, nil, nil, fmt.Errorf("attention mask size overflows: %w", c.Err)
	}
	return alloc, freeFwd, freeBwd, nil
}
