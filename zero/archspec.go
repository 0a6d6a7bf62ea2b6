package zero

import (
	"fmt"
	"slices"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// flopDims returns the FLOP dimensions of a transformer scenario (ok false
// for other models or missing dimensions). With context parallelism each
// rank computes ceil(s/cp) query rows.
func flopDims(s *scenarios.Scenario) (FLOPDims, bool) {
	m := &s.Model
	if m.Kind != scenarios.KindTransformer || m.Hidden <= 0 || m.Heads <= 0 || m.SeqLen <= 0 {
		return FLOPDims{}, false
	}
	gpt := memory.BlockStyle(m) == "gpt" // the preset's biases on every matrix (memory's baseDims)
	force, forceGiven := s.Training.OpForceJoined()
	doc, tile := documentMask(s)
	return FLOPDims{Document: doc, FlexBlock: tile, OpForce: force, OpForceGiven: forceGiven, OpRecomputeAttention: s.Training.OpRecomputeAttention, QKVBias: gpt, OBias: gpt, MLPBias: gpt, Arch: memory.BlockStyle(m), Seq: s.RankSeqLen(), KVSeq: m.SeqLen, Batch: s.Training.MicroBatch,
		Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads, FFN: m.FFN, Vocab: m.Vocab,
		Causal: causalKernel(s), KeepsProbs: keepsProbs(s)}, true
}

// keepsProbs reports whether training.attention's kernel saves the softmax
// probabilities for backward (eager) rather than recomputing the scores
// (flash, sdpa): AttentionBackwardFLOPs' 2× against 2.5×.
func keepsProbs(s *scenarios.Scenario) bool {
	return s.Training.Attention == scenarios.AttentionEager
}

// causalKernel reports whether training.attention's kernel skips the
// masked half of causal attention (flash, sdpa: AttentionFLOPs halves
// their count) rather than computing every score and masking it (eager).
func causalKernel(s *scenarios.Scenario) bool {
	return s.Training.Attention != scenarios.AttentionEager
}

// blockMask is how training.attention's kernel computes the attention of
// a block with dims x (nil: the model's): whether it skips the masked
// upper triangle (causalKernel) and the sliding window or attention chunk
// (scenarios.BlockDims.Window, AttentionChunk) it restricts the keys to,
// for AttentionFLOPs. A window or chunk of at least seq_len masks nothing
// beyond causality. Below that:
//
//   - flash: the kernel visits only the key blocks the mask keeps
//     (AttentionFLOPs).
//   - sdpa: transformers hands SDPA a materialised mask
//     (_ignore_causal_mask_sdpa in src/transformers/masking_utils.py @
//     2ccc6cae21faaf11631efa5fb9054687ae5dc931 drops it, for is_causal,
//     only while kv_length < the window or chunk), and SDPA's flash backend
//     takes no mask (can_use_flash_attention's check_for_attn_mask in
//     aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, pytorch/pytorch
//     @ 21c3369eded41cbad40b61858013c3312afc6dbb), so the memory-efficient
//     kernel runs, which bounds its keys only for its own causal mask
//     types and otherwise visits every key block (num_keys in
//     mem_eff_attention/kernel_forward.h @
//     4f4bcdbe6ddea60634d2af07a07c2e88dfd39a1e): every score, not causal.
//     The mask's memory (the boolean mask, each block's 16-bit additive
//     copy kept for backward) is memory's (memory/sdpamask.go), under the
//     same condition.
//   - eager: every score, as for any block.
//
// Under context parallelism ring attention runs each rank's queries over
// all keys (ringattn.go): the window is not counted there.
func blockMask(s *scenarios.Scenario, x *scenarios.BlockDims) (causal bool, window, chunk int64) {
	causal = causalKernel(s)
	if x == nil || s.Parallelism.CP > 1 {
		return causal, 0, 0
	}
	local := max(x.Window, x.AttentionChunk)
	if local == 0 || s.Model.SeqLen < local {
		return causal, 0, 0
	}
	if s.Training.Attention != scenarios.AttentionFlash {
		return false, 0, 0
	}
	return true, x.Window, x.AttentionChunk
}

// layerFLOPDims are dense block l's FLOP dimensions: base with the
// heads, kv_heads, head_dim and ffn of its own dims (scenarios.Layer.Dims,
// an imported model's) where they are set. memory's blockDims applies the
// same dims to the activation model with one difference: there a missing
// ffn means no dense MLP (scenarios.BlockDims.FFN: a MoE block whose routed
// experts are a unit of their own), here it keeps the model's ffn. Both
// are right for their callers: planCompute leaves MoE blocks (experts or
// active_params) and multi-head latent attention blocks (kv_lora_rank) to
// the FLOP count before it sizes a block with these dims, so every block it
// sizes has an MLP, and the importer gives every dense block its ffn
// (scenarios/hf.go), while the activation model sizes MoE blocks too
// (blockRing takes only their attention dims from here).
// The block's sliding window or attention chunk comes with them
// (blockMask).
func layerFLOPDims(s *scenarios.Scenario, base FLOPDims, l scenarios.Layer) FLOPDims {
	d := base
	x := l.Dims
	if x == nil {
		return d
	}
	d.Causal, d.Window, d.Chunk = blockMask(s, x)
	if x.Heads > 0 {
		d.Heads = x.Heads
	}
	if x.KVHeads > 0 {
		d.KVHeads = x.KVHeads
	}
	if x.HeadDim > 0 {
		d.HeadDim = x.HeadDim
	}
	if x.FFN > 0 {
		d.FFN = x.FFN
	}
	d.QKVBias, d.OBias, d.MLPBias = x.QKVBias, x.OBias, x.MLPBias
	return d
}

// blockFlags marks the transformer blocks and finds the unit that carries
// the output head: lm_head when the model has one (llama), else the last
// unit (a tied GPT's output projection runs after its final norm).
func blockFlags(s *scenarios.Scenario) (blocks []bool, head int) {
	m := &s.Model
	blocks = make([]bool, len(m.LayerList))
	for i, l := range m.LayerList {
		blocks[i] = l.Block
	}
	return blocks, m.OutputUnit()
}

// planContext is what the per-operation model takes of s besides a
// unit's dimensions: the GPU (its bf16 peak; fp8 GEMMs get theirs per
// block), the efficiencies and context parallelism's ring timed by net
// (nil: on s's topology, built if a ring is timed; ringSpec).
func planContext(s *scenarios.Scenario, net *RingNet) (GPUShape, Efficiency, RingSpec) {
	gpu, eff := planGPU(s)
	return gpu, eff, ringSpec(s, net)
}

// planGPU is planContext's GPU and efficiencies, without the ring.
func planGPU(s *scenarios.Scenario) (GPUShape, Efficiency) {
	gpu := GPUShape{Peak: float64(s.Cluster.PeakBF16), HBM: float64(s.Cluster.HBMBandwidth), SMs: SMCount(s.Cluster.GPU)}
	eff := Efficiency{GEMM: efficiency(s), Attention: AttentionEfficiencyOf(s), HBM: DefaultHBMEfficiency}
	return gpu, eff
}

// unitPlan is one unit's compute from the per-operation model; ok is false
// for units the model leaves to the FLOP count (MoE, fp8 GEMMs).
type unitPlan struct {
	UnitCompute
	ok   bool
	ring RingTraffic // context parallelism's exchange (ringattn.go)
	// ringFwd and ringBwd are the seconds the ring adds to a block: the
	// ring's forward and backward, the forward again when the policy
	// reruns it. Costs adds them to a block left to the FLOP count (ok
	// false); a block of the per-operation model carries them in
	// UnitCompute already (Costs marks them, LayerCost.RingFwd).
	ringFwd, ringBwd float64
	// elemFwd and elemBwd are the seconds of the memory-bound work of a
	// block left to the FLOP count (blockOtherBytes: its norms, residual
	// adds, RoPE, router, the fp8 casts of its GEMMs), before recompute;
	// Costs adds them as it adds the ring's.
	elemFwd, elemBwd float64
	// copyFwd and copyBwd are the seconds of FSDP's compute-stream copies
	// (fsdp2CopyBytes, flatGradCopyBytes) of a unit left to the FLOP count,
	// its own fwd_flops too; Costs adds them as it adds elemFwd and
	// elemBwd, but not to the recompute.
	copyFwd, copyBwd float64
}

// blockRing is context parallelism's ring for transformer block l (the
// n-th block, under policy) of s: its cost, the seconds it adds to the
// block's forward and backward (the forward's again when policy reruns
// the attention) and its traffic; zero without a ring (cp 1, eager
// attention, which the loader warns of with cp > 1, or a linear-attention
// block, which has no softmax: the loader refuses cp > 1 for models with
// them). Every softmax-attention block gets one with its own dims
// (layerFLOPDims: heads and head_dim, the q·k width; the value's
// v_head_dim, scenarios.BlockDims.VHeadDim, unpadded as torchtitan
// 238fa9953e4aec2a62582121564273d7cbb1e9f1's deepseek_v3 hands it to SDPA): dense, MoE (the attention of
// a MoE block is a dense block's), multi-head latent attention and gated
// attention blocks alike. The exchanged k and v are memory.RingKVHeads
// wide, the width the memory model's ring buffers use: heads under sdpa
// (repeat_kv before SDPA in torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b) and for MLA (k_pe expanded
// to every head before SDPA, deepseek_v3/model/model.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1),
// kv_heads under flash (SDPA with enable_gqa, torchtitan since ff0829c10fbf).
func blockRing(s *scenarios.Scenario, base FLOPDims, l scenarios.Layer, ring RingSpec, gpu GPUShape, eff Efficiency, policy string) (fwd, bwd float64, t RingTraffic, err error) {
	if ring.CP <= 1 || s.Training.Attention == scenarios.AttentionEager || (l.Dims != nil && l.Dims.LinearAttention != "") {
		return 0, 0, RingTraffic{}, nil
	}
	d := layerFLOPDims(s, base, l)
	r := ring
	r.KVHeads = memory.RingKVHeads(string(s.Training.Attention), d.Heads, d.KVHeads, l.Dims != nil && l.Dims.KVLoRARank > 0)
	if l.Dims != nil && l.Dims.ValueHeadDim > 0 {
		r.ValueHeadDim = l.Dims.VHeadDim()
	}
	rc, err := RingAttentionCost(d, r, gpu, eff)
	if err != nil {
		return 0, 0, RingTraffic{}, fmt.Errorf("zero: layer %q: %w", l.Name, err)
	}
	fwd, bwd = rc.Fwd, rc.Bwd
	if ringReruns(policy) {
		bwd += rc.Fwd
	}
	return fwd, bwd, ringTraffic(ring.CP, rc, policy), nil
}

// planCompute runs PlanCompute for a transformer scenario, block by block
// with each block's own dimensions when the scenario knows them
// (scenarios.Layer.Dims: head_dim, kv_heads, ffn); for other models only
// FSDP's copies (fsdpCopies), nil when the stack runs none.
// MoE and MLA blocks stay with the FLOP count, their memory-bound work
// charged by the same rules (blockOtherBytes); under an fp8 recipe the
// blocks' weight matmuls run at cluster.peak_fp8 × cluster.fp8_gemm_ratio
// (fp8GEMMPeak; attention, embedding and
// lm_head in bf16) and its casts are memory-bound work (fp8CastBytes).
// Under context parallelism every softmax-attention block, those
// left to the FLOP count too, also carries the ring's merge, fp32 gradient
// traffic and exchange (blockRing, RingAttentionCost), timed by net (nil:
// on s's topology, built if a ring is timed).
func planCompute(s *scenarios.Scenario, net *RingNet, opt Options) ([]unitPlan, error) {
	base, ok := flopDims(s)
	if !ok {
		// Models without transformer dims (mlp, generic, model.params
		// alone) stay with the FLOP count, but an FSDP stack runs its
		// copies on them all the same: nil when it runs none.
		return fsdpCopies(s, nil, opt)
	}
	blocks, head := blockFlags(s)
	out := make([]unitPlan, len(blocks))
	gpu, eff, ring := planContext(s, net)
	var err error
	// Each block's policy: recompute_every = N checkpoints the N-th, 2N-th,
	// … block only, recompute_fraction = p fms-fsdp's choice of blocks
	// (memory.Placement through memory.UnitPolicies, as memory and Costs
	// ask it).
	policies := memory.UnitPolicies(s)
	for u, l := range s.Model.LayerList {
		switch {
		case blocks[u]:
			policy := policies[u]
			if l.ActiveParams > 0 || (l.Dims != nil && (l.Dims.Experts > 0 || l.Dims.KVLoRARank > 0 || l.Dims.LinearAttention != "" || l.Dims.OutputGate)) {
				// MoE, multi-head latent attention, linear-attention and
				// gated-attention blocks: the per-operation model sizes
				// q, k, v and o as heads·head_dim projections of the
				// hidden state, which MLA's low-rank ones, Gated
				// DeltaNet's and the doubled gated q_proj are not, so
				// their GEMMs are counted from the parameters (Costs).
				// Their softmax attention runs the ring all the same.
				if out[u].ringFwd, out[u].ringBwd, out[u].ring, err = blockRing(s, base, l, ring, gpu, eff, policy); err != nil {
					return nil, err
				}
				f, b, err := blockOtherBytes(s, base, u)
				if err != nil {
					return nil, err
				}
				bw := gpu.HBM * eff.HBM
				out[u].elemFwd, out[u].elemBwd = float64(f)/bw, float64(b)/bw
				continue
			}
			g := gpu
			if s.Training.FP8 != scenarios.FP8None && scenarios.FP8Linear(l) {
				g.GEMMPeak = fp8GEMMPeak(s)
			}
			d := layerFLOPDims(s, base, l)
			elem, elemBwd, err := blockElementwise(s, d, l.Dims != nil && l.Dims.QKNorm != "")
			if err != nil {
				return nil, err
			}
			// The fp8 recipe's casts around the block's GEMMs
			// (fp8CastBytes), memory-bound as the rest.
			cf, cb, err := fp8CastBytes(s, l, d, d.FFN)
			if err != nil {
				return nil, err
			}
			rerun, err := fp8CastRerun(s, l, d, d.FFN, policy)
			if err != nil {
				return nil, err
			}
			// flash-attn's padding wrapper around the kernel
			// (training.attention_unpad).
			uf, ub, err := unpadBytes(s, d)
			if err != nil {
				return nil, err
			}
			var ec flopCalc
			elem, elemBwd = ec.Add(elem, cf, uf), ec.Add(elemBwd, cb, ub)
			if ec.Err != nil {
				return nil, fmt.Errorf("zero: layer %q: memory-bound bytes overflow: %w", l.Name, ec.Err)
			}
			p, err := PlanCompute(ComputeSpec{Dims: d, GPU: g, Eff: eff, Policy: policy, Blocks: []bool{true}, Head: -1, Elementwise: elem, ElementwiseBwd: elemBwd,
				EarlyStop: s.Training.RecomputeEarlyStop, Cast: cf, CastRerun: rerun})
			if err != nil {
				return nil, err
			}
			// Context parallelism's ring (ringattn.go): its merge, fp32
			// gradient traffic and exchange, rerun with the forward when
			// the policy recomputes the attention.
			rf, rb, rt, err := blockRing(s, base, l, ring, gpu, eff, policy)
			if err != nil {
				return nil, err
			}
			p[0].Fwd += rf
			p[0].Bwd += rb
			p[0].FwdBy.Other += rf
			p[0].BwdBy.Other += rb
			out[u].ring, out[u].ringFwd, out[u].ringBwd = rt, rf, rb
			out[u].UnitCompute, out[u].ok = p[0], true
		case u == head && base.Vocab > 0:
			// The loss reads the bf16 logits, writes them in fp32, and
			// log_softmax reads and writes them again: 14 B per logit;
			// on the 16-bit logits without an upcast
			// (training.cross_entropy: bf16, Training.Loss16) only
			// log_softmax's read and write, 4 B.
			// DeepSeek-V3's MTP modules each add one more pass through
			// the shared head and a loss (scenarios.Model.MTPModules).
			perLogit, perLogitBwd := int64(14), int64(0)
			switch {
			case s.Training.Loss16():
				perLogit = 4
			case s.Training.LossAutocast():
				// log_softmax reads and writes bf16, 4 B; autocast's
				// fp32 copy for nll_loss reads 2 and writes 4
				// (scenarios.CrossEntropyAutocast): 10 B.
				perLogit = 10
			case s.Training.CrossEntropy == scenarios.CrossEntropyFused:
				// flash-attn's xentropy (csrc/xentropy/xentropy_kernel.cu
				// at Dao-AILab/flash-attention v0.2.8, 33e0860c):
				// cunn_SoftMaxXEntropyForward reads each 16-bit logit
				// twice (ilpReduce for the max and sum, lines 452-457,
				// then for the sum of exponentials, line 466) and writes
				// one fp32 loss and log-sum-exp per token, 4 B;
				// cunn_SoftMaxXEntropyBackward reads the logit and writes
				// its 16-bit gradient (lines 596-621), 4 B.
				perLogit, perLogitBwd = 4, 4
			}
			logits, err := headLogitBytes(base.Seq*base.Batch, base.Vocab, perLogit, perLogitBwd, trainMetricPerLogit(s))
			if err != nil {
				return nil, fmt.Errorf("the loss's traffic over %d tokens × %d vocabulary: %w", base.Seq*base.Batch, base.Vocab, err)
			}
			spec := ComputeSpec{Dims: base, GPU: gpu, Eff: eff, Blocks: []bool{false}, Head: 0,
				HeadPasses: 1 + s.Model.MTPModules(), HeadChunks: s.Training.LossChunks, HeadElementwise: logits[0],
				HeadElementwiseBwd: logits[1], HeadMetrics: logits[2]}
			if s.Training.Liger {
				ligerHead(&spec)
			}
			p, err := PlanCompute(spec)
			if err != nil {
				return nil, err
			}
			out[u] = unitPlan{UnitCompute: p[0], ok: true}
		case l.Name == "embedding" || l.Name == "final_norm":
			// Memory-bound: the lookups (tokens, and learned
			// positions) and their scatter-add backward
			// (embeddingBytes; a model without a vocabulary is a
			// free lookup), the norm by the blocks' rule
			// (finalNormBytes).
			var f, b int64
			switch {
			case l.Name == "final_norm":
				f, b, err = finalNormBytes(s, base)
			case base.Vocab > 0:
				// transformers' GPT-2 broadcasts its (1, s) positions
				// over the batch (positionBytes).
				f, b, err = embeddingBytes(base.Seq, base.Batch, base.Hidden, base.Vocab, s.Model.LearnedPositionRows(),
					s.Model.Architecture == "GPT2LMHeadModel")
			}
			if err != nil {
				return nil, err
			}
			bw := gpu.HBM * eff.HBM
			p := UnitCompute{Fwd: float64(f) / bw, Bwd: float64(b) / bw}
			p.FwdBy.Other, p.BwdBy.Other = p.Fwd, p.Bwd
			out[u] = unitPlan{UnitCompute: p, ok: true}
		}
		// Any other unit (routed experts, custom units) keeps the FLOP
		// count (ok false).
	}
	return fsdpCopies(s, out, opt)
}

// fsdpCopies adds to out, planCompute's units of s, the copies FSDP runs
// on the compute stream per parameter: FSDP1's flat-parameter gradient
// copy (flatGradCopyBytes) and FSDP2's around its collectives
// (fsdp2CopyBytes), of the unit's parameters on the rank (rankParams: a
// unit of routed experts under ep > 1 gathers and reduces its 1/ep). They
// move a unit's parameters and gradients, whatever its FLOPs, so a unit
// with the scenario's own fwd_flops (a FLOP count, not a time) pays them
// as any other, and so does every unit of a model without transformer
// dims (out nil: made here when a copy is charged, ok false for every
// unit); only a direction whose time the scenario gives (the layer's fwd
// or bwd) is taken whole, by Costs. On a unit of the per-operation model
// they go into its times; on one left to the FLOP count (MoE, MLA,
// explicit fwd_flops, other models) beside its memory-bound work (Costs
// adds copyFwd and copyBwd after recompute, which does not rerun them).
// Options.noFSDP2Copies leaves FSDP2's out. Timed at the roofline the
// other memory-bound work uses (planGPU's HBM × its HBM efficiency).
func fsdpCopies(s *scenarios.Scenario, out []unitPlan, opt Options) ([]unitPlan, error) {
	kept := memory.KeptAcrossBoundary(s)
	flat := flatGradCopyBytes(s)
	casts, rebuilt := memory.AutocastCastElems(s), memory.AutocastRebuilt(s)
	gpu, eff := planGPU(s)
	bw := gpu.HBM * eff.HBM
	for u, l := range s.Model.LayerList {
		var f, b int64
		var err error
		if !opt.noFSDP2Copies {
			if f, b, err = fsdp2CopyBytes(s, u, kept); err != nil {
				return nil, err
			}
		}
		var c flopCalc
		if b = c.Add(b, c.Mul(flat, rankParams(s, l))); c.Err != nil {
			return nil, fmt.Errorf("zero: layer %q: flat-parameter gradient copy bytes overflow: %w", l.Name, c.Err)
		}
		if casts != nil {
			cf, cb := autocastCastBytes(casts[u], rebuilt[u])
			f, b = c.Add(f, cf), c.Add(b, cb)
			if c.Err != nil {
				return nil, fmt.Errorf("zero: layer %q: autocast cast bytes overflow: %w", l.Name, c.Err)
			}
		}
		if f == 0 && b == 0 {
			continue
		}
		if out == nil {
			out = make([]unitPlan, len(s.Model.LayerList))
		}
		fs, bs := float64(f)/bw, float64(b)/bw
		if out[u].ok && l.FwdFLOPs == 0 {
			out[u].Fwd += fs
			out[u].Bwd += bs
			out[u].FwdBy.Other += fs
			out[u].BwdBy.Other += bs
			continue
		}
		out[u].copyFwd, out[u].copyBwd = fs, bs
	}
	return out, nil
}

// blockOtherBytes is the memory-bound HBM traffic of block l of s, a
// block the per-operation model leaves to the FLOP count (a MoE block's
// attention half, a multi-head latent attention, linear-attention or
// gated-attention block), forward and backward before recompute, under
// the dense blocks' rule for the same stack (blockElementwise, blockTraffic):
//   - under stack: megatron a Llama-style or GPT block runs Megatron's
//     fused kernels (megatronChain) for the same parts as below;
//   - an eager Llama-style block runs the dense chain (llamaChain): its two
//     RMSNorms, two residual adds and the gradient additions, the SwiGLU of
//     its dense MLP or shared expert (none: a MoE block without one), q/k
//     norms, and RoPE over q and k: heads·head_dim + kv_heads·head_dim for
//     softmax attention, heads·rope_head_dim + rope_head_dim for MLA's
//     decoupled RoPE (DeepseekV3Attention's q_pe and the one shared k_pe),
//     none for linear attention (Gated DeltaNet has no RoPE); the KV copies
//     and ibm-fms's output copy of softmax attention only;
//   - otherwise (compiled blocks, GPT blocks of other stacks) each tensor the activation
//     model keeps for the block (memory.BlockTensors of
//     memory.UnitBlockDims, which knows MLA's, linear attention's and the
//     shared expert's) is written once and read once in forward, backward
//     twice that;
//   - plus, in a MoE block, its router (routerBytes) and the fp8 casts of
//     the attention half's and shared expert's GEMMs (fp8CastBytes; MLA's and
//     linear attention's projections are not listed there and get none).
//
// Left out: MLA's q_a/kv_a norms, Gated DeltaNet's short convolutions and
// gates, the gated attention's sigmoid gate, the shared expert's gate.
func blockOtherBytes(s *scenarios.Scenario, base FLOPDims, u int) (fwd, bwd int64, err error) {
	l := s.Model.LayerList[u]
	x := l.Dims
	if x == nil || l.FwdFLOPs > 0 || s.Model.Hidden <= 0 || s.Model.SeqLen <= 0 {
		return 0, 0, nil
	}
	d := layerFLOPDims(s, base, l)
	if err := d.fill(); err != nil {
		return 0, 0, err
	}
	softmax := x.KVLoRARank == 0 && x.LinearAttention == ""
	// The MLP besides routed experts: the block's dense one, or its
	// shared expert(s).
	ffn := x.FFN
	if x.Experts > 0 {
		ffn = x.SharedFFN
	}
	var c flopCalc
	p := llamaParts{FFN: ffn, Attention: softmax}
	switch {
	case x.LinearAttention != "":
	case x.KVLoRARank > 0:
		p.RoPE = c.Mul(c.Add(d.Heads, 1), x.RopeHeadDim)
	default:
		p.RoPE = c.Add(c.Mul(d.Heads, d.HeadDim), c.Mul(d.KVHeads, d.HeadDim))
	}
	if x.QKNorm != "" && softmax {
		p.QKNorm = c.Add(c.Mul(d.Heads, d.HeadDim), c.Mul(d.KVHeads, d.HeadDim))
	}
	saved := func() ([]memory.SavedTensor, error) {
		md := memory.UnitBlockDims(s, u)
		md.Compiled = false // as blockSaved sizes the dense blocks
		return memory.BlockTensors(md)
	}
	fwd, bwd, err = blockTraffic(s, d, p, x.Experts > 0, saved)
	if err != nil {
		return 0, 0, fmt.Errorf("zero: layer %q: %w", l.Name, err)
	}
	if x.Experts > 0 && x.TopK > 0 {
		rf, rb, err := routerBytes(s, d.Seq*d.Batch, d.Hidden, x)
		if err != nil {
			return 0, 0, fmt.Errorf("zero: layer %q: %w", l.Name, err)
		}
		fwd, bwd = c.Add(fwd, rf), c.Add(bwd, rb)
	}
	if softmax {
		uf, ub, err := unpadBytes(s, d)
		if err != nil {
			return 0, 0, err
		}
		fwd, bwd = c.Add(fwd, uf), c.Add(bwd, ub)
	}
	if softmax && !x.OutputGate {
		cf, cb, err := fp8CastBytes(s, l, d, ffn)
		if err != nil {
			return 0, 0, err
		}
		fwd, bwd = c.Add(fwd, cf), c.Add(bwd, cb)
	}
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: layer %q: memory-bound bytes overflow: %w", l.Name, c.Err)
	}
	return fwd, bwd, nil
}

// routerBytes is the HBM traffic of a MoE block's router past its gate
// GEMM for t tokens, forward and backward. Under stack: megatron with
// Megatron-LM 44151194143711368b17797bc7000fd0285d8d51's fused router
// (router.py :611 topk_routing_with_score_function, fused under
// moe_router_fusion, which Megatron-Bridge 21d102f5e's performance configs
// set, scripts/performance/configs/qwen/qwen3_llm_pretrain.py :36) one TE
// kernel (fused_topk_with_score_function_fwd, pytorch/csrc/extensions/
// router.cpp at TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b)
// reads the t×E logits (bf16: router.py :102, the input's dtype without
// moe_router_dtype) and writes the probabilities (bf16), a byte map and
// the fp32 intermediate it keeps: (2 + 2 + 1 + 4)·E per token; its
// backward reads the map, the intermediate and the probabilities'
// gradient and writes the logits': the same 9·E. The aux-loss scores
// kernel (router.py :643) is not counted. Other stacks run the modelling
// code's eager ops: each tensor it keeps (memory.RouterTensors) written
// once and read once in forward, backward twice that.
func routerBytes(s *scenarios.Scenario, t, h int64, x *scenarios.BlockDims) (fwd, bwd int64, err error) {
	var c flopCalc
	if s.Stack == "megatron" {
		fwd = c.Mul(9, t, x.Experts)
		if c.Err != nil {
			return 0, 0, fmt.Errorf("zero: router bytes overflow: %w", c.Err)
		}
		return fwd, fwd, nil
	}
	ts, err := memory.RouterTensors(t, h, x.Experts, x.TopK, x.Router, x.RouterNorm)
	if err != nil {
		return 0, 0, err
	}
	return keptTraffic(ts, "router")
}

// keptTraffic is the memory-bound traffic of eager ops by the tensors they
// keep, ts: each written once and read once in forward, backward twice
// that (blockElementwise's rule for blocks without an op chain).
func keptTraffic(ts []memory.SavedTensor, what string) (fwd, bwd int64, err error) {
	var c flopCalc
	for _, t := range ts {
		fwd = c.Add(fwd, c.Mul(2, t.Bytes))
	}
	bwd = c.Mul(2, fwd)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: %s bytes overflow: %w", what, c.Err)
	}
	return fwd, bwd, nil
}

// fp8CastBytes is the HBM traffic of the fp8 recipe's casts (FP8CastRuleOf)
// for one micro-batch of block l of s with dimensions d and MLP width ffn
// (0: none, the attention half of a MoE block), forward and backward; the
// weights' casts of a recipe that caches them for the step
// (Transformer Engine's) are charged to each micro-batch's backward at
// 1/grad_accum, where a recompute does not rerun them. Zero without an fp8
// recipe or for a unit it leaves in bf16.
func fp8CastBytes(s *scenarios.Scenario, l scenarios.Layer, d FLOPDims, ffn int64) (fwd, bwd int64, err error) {
	if s.Training.FP8 == scenarios.FP8None || !scenarios.FP8Linear(l) {
		return 0, 0, nil
	}
	megatron := s.Stack == "megatron"
	if err := d.fill(); err != nil {
		return 0, 0, err
	}
	// A dense block's MLP norm is fused into fc1 under Megatron's TE
	// spec (TELayerNormColumnParallelLinear); a MoE block's is a separate
	// TENorm before the router, so its shared expert casts its own input.
	return fp8CastTraffic(s, l, blockFP8Linears(d, ffn, megatron, megatron && !moeBlock(l)))
}

// fp8CastRerun is the HBM traffic of eager torchao's forward casts that a
// recompute of block l of s under policy, torchtitan's op policy, reruns (0 for
// other recipes, compiled blocks and other policies, whose casts rerun
// with the FLOPs they rerun): all of them. The checkpoint's
// _CachingTorchDispatchMode returns a MUST_SAVE op's kept output and runs
// every other op again, whatever mm the policy keeps; the op policy keeps
// aten.abs and aten.max under op_save_abs (torchtitan
// parallelize_llama.py :214-223 at d4c86e3758a8), so those two kernels
// are not rerun (torchaoOpRerun). Early stop ends nothing sooner: a
// Float8Linear's tensors, its bf16 input and fp8 weight, are packed when
// matmul_with_hp_or_float8_args.forward returns (ctx.save_for_backward
// at torchao/float8/float8_linear.py :79, 3eb18e771), after its casts
// and GEMM. With the fp8 all-gather the weights arrive cast, outside the
// checkpoint.
func fp8CastRerun(s *scenarios.Scenario, l scenarios.Layer, d FLOPDims, ffn int64, policy string) (int64, error) {
	if s.Training.FP8 != scenarios.FP8TorchAO || s.Training.Compile.Blocks() || !scenarios.FP8Linear(l) || policy != recomputeOp {
		return 0, nil
	}
	if err := d.fill(); err != nil {
		return 0, err
	}
	per := torchaoOpRerun(memory.OpSavesAbs(s))
	r := FP8CastRule{Input: per, Weight: per, PerLinear: true}
	if fp8GathersPerMicroStep(s) > 0 {
		r.Weight = 0
	}
	f, _, _, err := FP8CastBytes(r, blockFP8Linears(d, ffn, false, false))
	if err != nil {
		return 0, fmt.Errorf("zero: layer %q: %w", l.Name, err)
	}
	return f, nil
}

// fp8GathersPerMicroStep is how many times a micro-step all-gathers a unit
// whose weights torchao's fp8 all-gather casts (training.fp8_all_gather,
// FP8Gather): fsdp_pre_all_gather runs before every FSDP2 all-gather,
// whatever reshard_after_forward is (torchao/float8/fsdp_utils.py
// WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather at pytorch/ao
// 8c81863ba85cce742244c0151c6683c5696bbe04). Two at stage 3 (forward,
// and backward's after reshard_after_forward); one at FSDP's stage 2
// (memory.FSDPStage2: fully_shard(reshard_after_forward=False) keeps the
// unit from its forward to its post-backward, which reshards it, so
// every micro-step gathers it once: regathersAt); 0 otherwise.
func fp8GathersPerMicroStep(s *scenarios.Scenario) int64 {
	switch {
	case !s.Training.FP8Gather():
		return 0
	case s.Parallelism.Stage == 3:
		return 2
	case memory.FSDPStage2(s):
		return 1
	}
	return 0
}

// fp8CastTraffic is the HBM traffic of the fp8 casts of the linears ls of
// layer l under s's recipe (FP8CastRuleOf, FP8CastBytes), forward and
// backward, the weights' once-a-step casts charged to each micro-batch's
// backward at 1/grad_accum.
//
// torchao with FSDP2's fp8 all-gather at stage 3 (training.fp8_all_gather)
// casts no gathered weight: fsdp_pre_all_gather casts the rank's bf16
// shard with the scale precompute_float8_dynamic_scale_for_fsdp computed
// after the optimizer step (one amax pass over the shard a step), and the
// gathered weight arrives as a Float8Tensor, which Float8Linear's forward
// and backward use as it is (tensor_already_casted_to_fp8); the
// data-gradient GEMM wants it in the other layout, so preprocess_addmm
// copies it transposed (b.t().contiguous().t(): 1 B read and 1 B written
// an element). torchao/float8/fsdp_utils.py :27-75 and :218-236,
// float8_linear.py :100-101 and :157-159, float8_ops.py :325-328, all at
// pytorch/ao 8c81863ba85cce742244c0151c6683c5696bbe04. Per micro-batch
// that is 2 B per weight element and 3 B (read 2, write 1) per shard
// element for each of the unit's two gathers (forward, and backward's
// after reshard_after_forward), and 2 B per shard element a step,
// instead of the 8 B per weight element of a recipe casting the gathered
// weight. FSDP's stage 2 gathers the unit once a micro-step
// (fp8GathersPerMicroStep): 3 B per shard element. Eager
// (torchaoEagerRule), the gathered weight's layout copy is backward's and
// the shard's cast runs the eager kernels after the amax, 27 B an element.
func fp8CastTraffic(s *scenarios.Scenario, l scenarios.Layer, ls []FP8Linear) (fwd, bwd int64, err error) {
	rule, err := FP8CastRuleOf(s.Training.FP8, NonTNFP8(s.Cluster.GPU), s.Stack == "megatron", s.Training.Compile.Blocks())
	if err != nil {
		return 0, 0, err
	}
	gathers := fp8GathersPerMicroStep(s)
	gathered := gathers > 0
	shardCast := int64(3)
	if gathered {
		rule.Weight = 2
		if rule.WeightBwd > 0 {
			// Eager (torchaoEagerRule): the layout copy, in backward
			// where preprocess_addmm makes it; fsdp_pre_all_gather's
			// hp_tensor_and_scale_to_float8 with the precomputed scale
			// runs the cast's kernels after the amax (fsdp_utils.py
			// :227-234 at pytorch/ao 3eb18e771).
			rule.Weight = 0
			shardCast = castBytes(TorchAOEagerCast[2:])
		}
	}
	f, b, step, err := FP8CastBytes(rule, ls)
	if err != nil {
		return 0, 0, fmt.Errorf("zero: layer %q: %w", l.Name, err)
	}
	var c flopCalc
	if gathered {
		var elems int64
		for _, x := range ls {
			elems = c.Add(elems, c.Mul(x.N, x.K, max(x.Weights, 1)))
		}
		shard := int64(max(s.Parallelism.DP*max(s.Parallelism.CP, 1)/s.Parallelism.K, 1))
		f = c.Add(f, c.MulDivCeil(shardCast*gathers, elems, shard))
		step = c.Add(step, c.MulDivCeil(2, elems, shard))
	}
	ga := max(s.Training.GradAccum, 1)
	b = c.Add(b, (step+ga-1)/ga)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: layer %q: fp8 cast bytes overflow: %w", l.Name, c.Err)
	}
	return f, b, nil
}

// moeBlock reports whether l is a block with routed experts beside it.
func moeBlock(l scenarios.Layer) bool { return l.Dims != nil && l.Dims.Experts > 0 }

// blockElementwise is one block's memory-bound HBM traffic, forward and
// backward, qkNorm when it normalises q and k (Qwen3's q_norm and k_norm).
// Under stack: megatron a Llama-style or GPT block runs Megatron's fused
// kernels (megatronChain), plus, under eager attention, the s² scores'
// traffic below. Otherwise an eager Llama block runs the op chains
// llamaChain derives from its code (training.rope_impl picks the RoPE
// form), plus, under eager attention, the s² scores' traffic; other GPT
// blocks, whose LayerNorm and GELU are one kernel each, and compiled
// blocks, which fuse the chains, write each tensor autograd keeps
// (blockSaved) once and read it once in forward, and backward moves twice
// that.
func blockElementwise(s *scenarios.Scenario, d FLOPDims, qkNorm bool) (fwd, bwd int64, err error) {
	if err := d.fill(); err != nil {
		return 0, 0, err
	}
	p, err := denseParts(d)
	if err != nil {
		return 0, 0, err
	}
	if qkNorm {
		p.QKNorm = p.RoPE // the q and k widths
	}
	return blockTraffic(s, d, p, false, func() ([]memory.SavedTensor, error) { return blockSaved(s, d) })
}

// blockTraffic is the memory-bound traffic of a block of s with dimensions
// d (filled) running the parts p (moe: routed experts beside it), saved
// the tensors the activation model keeps for it (the saved-tensor rule's,
// and eager attention's Core ones): blockElementwise's rules.
func blockTraffic(s *scenarios.Scenario, d FLOPDims, p llamaParts, moe bool, saved func() ([]memory.SavedTensor, error)) (fwd, bwd int64, err error) {
	if s.Stack == "megatron" && (d.Arch == "llama" || d.Arch == "gpt") {
		gpt := d.Arch == "gpt"
		if gpt {
			// A GPT block's positions are the learned embedding's
			// (embeddingBytes), no RoPE in the block.
			p.RoPE = 0
		}
		fwd, bwd, err = megatronChain(d, p, moe, s.Training.Dropout > 0, !gpt && localComposite(s), gpt)
		if err != nil || s.Training.Attention != scenarios.AttentionEager || !p.Attention {
			return fwd, bwd, err
		}
		// Megatron-core's local DotProductAttention and Transformer
		// Engine's UnfusedDotProductAttention (training.attention: eager)
		// write and read the s² scores, softmax and dropout tensors as
		// the eager chains' below (the kept tensors memory marks Core).
		return addCoreTraffic(fwd, bwd, saved)
	}
	if d.Arch != "llama" || s.Training.Compile.Blocks() {
		ts, err := saved()
		if err != nil {
			return 0, 0, err
		}
		return keptTraffic(ts, "elementwise")
	}
	p.FusedNorm = s.Training.NormImpl == scenarios.NormFused
	p.ATenNorm = scenarios.ATenRMSNorm(s) // megatron returned above
	rope := s.Training.RoPEImpl
	if s.Training.Liger {
		// Liger's kernels (scenarios/liger.go, Liger-Kernel c3c2d4fa):
		// LigerRMSNorm reads X and W and writes Y and the fp32 RSTD per
		// row, its backward reads dY, X, W and RSTD and writes dX
		// (ops/rms_norm.py), fused_rmsnorm's bytes; LigerSiLUMulFunction
		// reads a and b and writes c, its backward reads dc, a and b and
		// writes da and db (ops/swiglu.py lines 27-30, 45-57): the fused
		// SwiGLU's 6 and 10 B; _triton_rope reads q and k and writes them
		// rotated in place, each way (ops/rope.py): RoPEFused's 4 B.
		p.FusedNorm, p.FusedSwiGLU, rope = true, true, scenarios.RoPEFused
	}
	fwd, bwd, err = llamaChain(d, p, rope, s.Training.Attention != scenarios.AttentionFlash, s.Training.Dropout > 0)
	if err != nil {
		return 0, 0, err
	}
	if s.Training.Attention == scenarios.AttentionEager && p.Attention {
		// The s² scores, softmax and dropout tensors eager attention
		// writes and reads (the kept tensors memory marks Core).
		return addCoreTraffic(fwd, bwd, saved)
	}
	return fwd, bwd, nil
}

// addCoreTraffic adds to a block's fwd and bwd bytes the traffic of the
// tensors eager attention keeps (saved's Core ones: the s² scores, softmax
// and dropout tensors), each written and read once forward and twice that
// backward (keptTraffic).
func addCoreTraffic(fwd, bwd int64, saved func() ([]memory.SavedTensor, error)) (int64, int64, error) {
	ts, err := saved()
	if err != nil {
		return 0, 0, err
	}
	core := slices.DeleteFunc(slices.Clone(ts), func(t memory.SavedTensor) bool { return !t.Core })
	f, b, err := keptTraffic(core, "elementwise")
	if err != nil {
		return 0, 0, err
	}
	var c flopCalc
	fwd, bwd = c.Add(fwd, f), c.Add(bwd, b)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: elementwise bytes overflow: %w", c.Err)
	}
	return fwd, bwd, nil
}

// blockSaved is the tensors an eager block of s with dimensions d keeps
// for backward (memory.BlockTensors). Under torch.autocast, DeepSpeed's
// torch_autocast over bf16 parameters (scenarios.Training.AutocastOps) or
// autocast over an fp32 model (Training.Autocasts, whose residual stream
// is fp32: memory.BlockDims.InputFP32), they include autocast's fp32
// tensors (memory.BlockDims.Autocast), which blockTraffic's rule then
// writes and reads as the kernels do: the LayerNorm's fp32 input, an eager
// RMSNorm's fp32 normalized tensor over the fp32 stream, and the eager
// softmax's fp32 probabilities and their bf16 cast.
func blockSaved(s *scenarios.Scenario, d FLOPDims) ([]memory.SavedTensor, error) {
	return memory.BlockTensors(memory.BlockDims{Arch: d.Arch, Seq: d.Seq, Batch: d.Batch, Hidden: d.Hidden,
		Heads: d.Heads, KVHeads: d.KVHeads, HeadDim: d.HeadDim, FFN: d.FFN, Dropout: s.Training.Dropout > 0,
		Attention: string(s.Training.Attention), Autocast: s.Training.AutocastOps() || s.Training.Autocasts(), InputFP32: s.Training.Autocasts()})
}

// flatGradCopyBytes is the HBM traffic per parameter of a unit's backward
// that PyTorch FSDP1's flat parameter adds (training.flat_param_views), at
// every sharding strategy: 0 otherwise. FSDP1 gives a unit's modules views of its
// unsharded FlatParameter made under autograd: _use_unsharded_views
// (as_params=False, the forward's) sets each original parameter to a view
// from torch.split(flat_param, _numels) (FlatParamHandle._get_unflat_views,
// torch/distributed/fsdp/flat_param.py at pytorch/pytorch
// 002159d15791e969ffa994863a7fda7ed8338937; _get_unflat_views_unaligned in
// later versions, the same split). Backward therefore reaches the
// FlatParameter's AccumulateGrad (where FSDP's post-backward hook sits)
// through split's backward, split_with_sizes_backward
// (torch/csrc/autograd/FunctionsManual.cpp), which concatenates the views'
// gradients into a new flat tensor with at::cat: every unsharded gradient
// element is read and written once more per micro-step, on the compute
// stream, in the gradient's dtype (param_dtype: FSDP's mixed precision
// computes gradients in it). SHARD_GRAD_OP and NO_SHARD (stages 2 and 0)
// train through the same unsharded views ("For NO_SHARD, use the
// unflattened unsharded views", _use_sharded_views at the same commit), so
// the copy is charged at every stage. FSDP2 and DeepSpeed are not modelled
// here.
func flatGradCopyBytes(s *scenarios.Scenario) int64 {
	if !s.Training.FlatParamViews {
		return 0
	}
	if s.Training.ParamDType == scenarios.FP32 {
		return 4 + 4
	}
	return 2 + 2
}

// autocastCastBytes is the HBM traffic of torch.autocast's casts of a
// unit's fp32 weights (elems, memory.AutocastCastElems) to the 16-bit
// dtype of training.autocast in one micro-step: each cast reads the fp32
// weight and writes its 16-bit copy (4 + 2 B per element) on the compute
// stream, once in the forward (autocast's cache then serves every further
// use until the forward's autocast exits: scenarios/autocast.go cites
// cached_cast) and again in the backward of a unit whose checkpointed
// recomputation re-enters autocast (rebuilt, memory.AutocastRebuilt).
// Not charged: the cast's backward upcast of the 16-bit weight gradient
// to the fp32 parameter's dtype, which no source here pins to a commit.
func autocastCastBytes(elems []int64, rebuilt bool) (fwd, bwd int64) {
	for _, n := range elems {
		fwd += (4 + 2) * n // one unit's weights: far inside int64 at 6 B each
	}
	if rebuilt {
		bwd = fwd
	}
	return fwd, bwd
}

// fsdp2CopyBytes is the HBM traffic that PyTorch FSDP2 (communication.boundary
// fsdp2 or fsdp2_head, at stage 3 or as FSDP's stage 2, memory.FSDPStage2)
// runs on the compute stream around unit u's collectives in one micro-step,
// forward and backward; 0 otherwise. kept is memory.KeptAcrossBoundary(s).
//
//   - The all-gather's copy-out, once per gather. pre_forward and
//     pre_backward call wait_for_unshard, which calls
//     foreach_all_gather_copy_out (torch/distributed/fsdp/_fully_shard/
//     _fsdp_param_group.py at pytorch/pytorch
//     002a76fbfea0ac0f199e4b8e2a0691074796c908); it makes the current
//     stream wait for the all-gather's event and runs
//     torch.split_with_sizes_copy from the all-gather output into each
//     parameter's unsharded tensor there (_fsdp_collectives.py at
//     8fc2039decebd92b15b38296df8bf9aa13275be0; the same at
//     torch/distributed/_composable/fsdp/_fsdp_collectives.py
//     01d66d21f38a04729a87a5840f405ca1b7acf856, the PyTorch 2.4 path): a
//     read and a write of every gathered element in its all-gather dtype,
//     param_dtype's bytes, or 1 B for the weights torchao gathers in fp8
//     (Scenario.GathersFP8). A unit gathers in its forward every
//     micro-step (post_backward reshards it, reshard_after_backward) and
//     again in its backward unless it is kept across the boundary; FSDP's
//     stage 2 (reshard_after_forward=False) only in its forward.
//   - The reduce-scatter's copy-in, once per micro-step that reduces
//     (Scenario.GradSyncEvery, else the last): foreach_reduce allocates the
//     reduce-scatter input in reduce_dtype and copies the unit's unsharded
//     gradients into it (foreach_reduce_scatter_copy_in, torch._chunk_cat:
//     param_dtype read, reduce_dtype written) on the current stream before
//     "reduce_scatter_stream.wait_stream(current_stream)" (8fc2039d).
//     Before PyTorch 2.5 (memory.fsdp2_rs_own_stream) it ran on the
//     reduce-scatter stream followed by the pre-divide of the whole input
//     (_div_if_needed(reduce_scatter_input, predivide_factor), a read and a
//     write in reduce_dtype; the factor, a power of two about √N,
//     exceeds 1 from N = 2), and the compute stream waited for both
//     ("current_stream.wait_event(copy_in_event)", 01d66d21), so both are
//     charged to it there. A micro-step that does not reduce
//     charges no copy-in but, under reduce_dtype fp32, FSDP2's
//     accumulation in the reduce dtype (fsdp2AccumBytes); the step's
//     reduce-side bytes are spread over its micro-steps.
//
// Not charged, with the reason: the all-gather's copy-in (the shard's cast
// to param_dtype, _get_param_all_gather_inputs' _foreach_copy_, and its copy
// into the all-gather input, all_gather_copy_in) runs on the
// all_gather_copy_in_stream, and the reduce-scatter's post-processing (the
// cast of the reduced shard to the parameter's dtype and its accumulation
// into the sharded gradient; the divisions since NCCL's AVG does them for
// bf16 and fp32, _get_gradient_divide_factors at 8fc2039d) on the
// reduce-scatter stream: both move shard-sized tensors (1/N of the unit)
// beside the compute, whose HBM contention no source measures, as FSDP1's
// post-backward-stream work is left (docs/compute-model.md). zerosim's
// communication.compute_interference is Lee et al.'s slowdown of compute
// by NCCL's kernels alone, so neither these side-stream kernels nor the
// compute-stream copies here are in it: nothing is counted twice.
func fsdp2CopyBytes(s *scenarios.Scenario, u int, kept []bool) (fwd, bwd int64, err error) {
	bd := s.Communication.Boundary
	stage3 := s.Parallelism.Stage == 3
	if !bd.FSDP2() || !stage3 && !memory.FSDPStage2(s) {
		return 0, 0, nil
	}
	l := s.Model.LayerList[u]
	elems := rankParams(s, l)
	if elems == 0 {
		return 0, 0, nil
	}
	grad := s.Training.ParamDType.Bytes16or32()
	gathered := grad
	if s.GathersFP8(u) {
		gathered = 1
	}
	reduce := grad
	if s.Training.FP32Reduce() {
		reduce = 4
	}
	var c flopCalc
	out := c.Mul(2*gathered, elems)
	in := c.Mul(grad+reduce, elems)
	if own := s.Memory.FSDP2RSOwnStream; own != nil && *own && s.N() > 1 {
		in = c.Add(in, c.Mul(2*reduce, elems))
	}
	// The step's reduce-side bytes: a copy-in per reducing micro-step, and
	// under grad_sync last with reduce_dtype fp32 the accumulation in
	// between (fsdp2AccumBytes).
	ga := max(s.Training.GradAccum, 1)
	step := c.Mul(in, ga)
	if !s.GradSyncEvery() {
		step = c.Add(in, fsdp2AccumBytes(&c, s, elems, grad, reduce))
	}
	fwd, bwd = out, (step+ga-1)/ga
	if stage3 && (u >= len(kept) || !kept[u]) {
		bwd = c.Add(bwd, out)
	}
	if c.Err != nil {
		return 0, 0, fmt.Errorf("zero: layer %q: FSDP2 copy bytes overflow: %w", l.Name, c.Err)
	}
	return fwd, bwd, nil
}

// rankParams is the parameters of unit l that a rank of s gathers and
// computes gradients for: all of them, but of a unit of routed experts
// under parallelism.ep > 1 its 1/ep, the experts the rank holds (the
// memory model's units, memory.expertParallel; the loader checks that ep
// divides the experts). The FSDP stacks shard only those over the rest of
// the data-parallel ranks: torchtitan's fully_shard of the experts on the
// dp_shard_mod_ep mesh (TestFSDP2CopyBytesExpertParallel), and under FSDP1
// llm-foundry's MegaBlocks experts, made DTensors Shard(0) on the
// expert_parallel mesh and given FSDP's device_mesh of the remaining
// dimension (set_ffn_device_mesh, llmfoundry/models/layers/ffn.py at
// mosaicml/llm-foundry 8c8dd48f72168c5d51e2f7b151595892a8fba43d), so a
// rank's flat parameter of the experts holds its own experts only.
func rankParams(s *scenarios.Scenario, l scenarios.Layer) int64 {
	n := int64(l.Params)
	if ep := int64(s.Parallelism.EP); l.Group == scenarios.GroupExpert && ep > 1 {
		n /= ep
	}
	return n
}

// fsdp2AccumBytes is the HBM traffic per step that FSDP2 adds to elems
// unsharded gradient elements of grad bytes under grad_sync last (the
// micro-steps before the last do not reduce) when the reduce dtype
// (reduce bytes) is wider: post_backward first calls
// accumulate_unsharded_grad_if_needed on every parameter and, when it does
// not reduce, reshards and calls to_accumulated_grad_if_needed
// (FSDPParamGroup.post_backward, _fsdp_param_group.py at pytorch/pytorch
// 002a76fbfea0ac0f199e4b8e2a0691074796c908), all on the compute stream:
// the first micro-step casts its gradient to the reduce dtype
// ("self.unsharded_accumulated_grad = unsharded_grad.to(self.reduce_dtype)":
// grad + reduce bytes), every later one adds its gradient into that
// ("self.unsharded_accumulated_grad += self.unsharded_param.grad": reduce +
// grad read, reduce written; FSDPParam, _fsdp_param.py at
// 010ae4a89516fa3be548ab16dff711414ec12d0b), and the last micro-step's
// copy-in reads the accumulated reduce-dtype gradient instead of the
// param_dtype one (reduce − grad bytes more than fsdp2CopyBytes' copy-in).
// Under an equal reduce dtype FSDP2 adds nothing: autograd accumulates into
// the unsharded parameter's .grad, a cost of autograd that zerosim charges
// no stack. 0 at grad_accum 1 or without fp32 reduction.
func fsdp2AccumBytes(c *flopCalc, s *scenarios.Scenario, elems, grad, reduce int64) int64 {
	ga := s.Training.GradAccum
	if ga < 2 || reduce == grad {
		return 0
	}
	per := (grad + reduce) + (ga-1)*(2*reduce+grad) + (reduce - grad)
	return c.Mul(per, elems)
}

// ligerHead makes spec's head Liger's fused linear cross-entropy
// (training.liger; scenarios/liger.go at Liger-Kernel c3c2d4fa, files
// under src/liger_kernel/ops): the projection runs in chunks of
// memory.LigerChunk tokens, and liger_cross_entropy_kernel
// (cross_entropy.py) reads each 16-bit logit twice, for the online
// softmax's max and sum (lines 117-140) and again to write its gradient in
// place (lines 159-209): 6 B per logit, all in the forward; the gradients'
// GEMMs follow in the forward (fused_linear_cross_entropy.py lines
// 124-135). Its backward scales grad_input [t, h] and grad_weight [V, h]
// in place by the loss's gradient (element_mul_kernel, lines 156-200),
// which is not 1 under the Hugging Face Trainer's loss / num_items_in_batch
// (transformers/model/loss_utils.py lines 14-24): a 16-bit read and write
// of each, 4 B per element.
func ligerHead(spec *ComputeSpec) {
	t := spec.Dims.Seq * spec.Dims.Batch
	spec.HeadLiger = true
	spec.HeadElementwise = 6 * t * spec.Dims.Vocab
	spec.HeadLigerBwd = 4 * (t*spec.Dims.Hidden + spec.Dims.Vocab*spec.Dims.Hidden)
}

// trainMetricPerLogit is the HBM bytes per logit of all the train metrics' cross-entropies
// over one micro-step's logits (scenarios/trainmetrics.go cites
// Composer's loop and metrics): each runs F.cross_entropy on the 16-bit
// logits inside the trainer's torch.autocast, the loss
// scenarios.CrossEntropyAutocast describes: log_softmax reads and writes
// the 16-bit logits (4 B) and nll_loss, on autocast's fp32 list, reads
// autocast's fp32 copy of them (2 B read, 4 B written), 10 B per logit,
// as the head's loss under training.cross_entropy: autocast. On fp32
// logits (param_dtype fp32 without autocast: Composer's precision fp32)
// log_softmax reads and writes 4 B each and nll_loss reads one logit a
// token: 8 B. Under torch.no_grad() nothing is saved and no backward runs.
func trainMetricPerLogit(s *scenarios.Scenario) int64 {
	perLogit := int64(10)
	if s.Training.ParamDType == scenarios.FP32 && !s.Training.Autocasts() {
		perLogit = 8
	}
	return perLogit * s.Training.TrainMetrics
}

// headLogitBytes is the loss's forward, backward and train-metric bytes
// over tokens × vocab logits at the given bytes per logit, each product
// checked for int64 overflow.
func headLogitBytes(tokens, vocab int64, perLogit ...int64) ([3]int64, error) {
	var out [3]int64
	logits, err := units.Mul(tokens, vocab)
	if err != nil {
		return out, err
	}
	for i, b := range perLogit {
		if out[i], err = units.Mul(b, logits); err != nil {
			return out, err
		}
	}
	return out, nil
}
