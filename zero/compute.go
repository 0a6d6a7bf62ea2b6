package zero

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// LayerCost is the compute cost of one layer (one FSDP unit) on a GPU of
// nominal speed, for one micro-batch.
type LayerCost struct {
	Name     string
	Params   int64
	FwdFLOPs int64
	BwdFLOPs int64 // includes the recomputed forward under full recompute
	Fwd, Bwd units.Duration
	// Ring is the context-parallel ring's exchange of a block whose time
	// includes it (ringattn.go), zero otherwise.
	Ring RingTraffic
	// RingFwd and RingBwd are the part of Fwd and Bwd that is the ring
	// (blockRing: its merge and gradient kernels and the exchange's
	// exposed time, on nominal GPUs and the reference links, RingNet):
	// the replay swaps them for a rank's own (ringRows) where its GPU
	// speed or its cp group's links differ, so that a GPU's speed scales
	// only the ring's kernels, never its communication.
	RingFwd, RingBwd units.Duration
	// FwdAttn is the part of Fwd that is the block's core attention (its
	// attention class, ClassSeconds.Attention), at most Fwd (fwdAttn);
	// zero outside blocks and for units with their own time.
	FwdAttn units.Duration
}

// bytesPerOptimizerElem is the HBM traffic of one fp32 Adam update of one
// element of the rank's shard, in seed 000's order: read the bf16 grad shard
// (2) and write its fp32 copy (4); read fp32 grad, master, m, v (16); write
// master, m, v (12); write the bf16 param shard (2). It is the traffic of
// an unset training.optimizer_impl.
const bytesPerOptimizerElem = 2 + 4 + 16 + 12 + 2

// OptimizerBytesPerElem is the HBM traffic of one optimizer step per
// element of the rank's shard, counted kernel by kernel from the
// implementation training.optimizer_impl names, over fp32 parameters,
// gradients and moments (what PyTorch's optimizers step under FSDP's
// mixed precision: training.shard_dtype fp32), each distinct tensor read
// once per kernel:
//
//   - unset: seed 000's 36 B (bytesPerOptimizerElem).
//   - fused: torch._fused_adamw_ (torch/optim/adamw.py _fused_adamw at
//     pytorch/pytorch 002d2f0bb40cf08beb74bce80f52ce4f2eda46a0) reads p, g,
//     m, v and writes p, m, v in one kernel: 28 B.
//   - foreach: _multi_tensor_adamw at the same commit (torch.optim.AdamW's
//     default on CUDA): _foreach_lerp_(m, g) 12, _foreach_mul_(v) 8,
//     _foreach_addcmul_(v, g, g) 12, _foreach_sqrt(v) into a temporary 8,
//     _foreach_div_ 8 and _foreach_add_(eps) 8 on it,
//     _foreach_addcdiv_(p, m, temporary) 16: 72 B; with
//     training.weight_decay > 0, _foreach_mul_(p) first: 80 B.
//   - composer: Composer's DecoupledAdamW.adamw
//     (composer/optim/decoupled_weight_decay.py at mosaicml/composer
//     784f50be7fa8617ed562704c0207316ca2284e71; the same update at
//     v0.13.2), per parameter exp_avg.mul_ 8 then .add_(grad) 12,
//     exp_avg_sq.mul_ 8 then .addcmul_(grad, grad) 12, sqrt into a
//     temporary 8, the division 8 and .add_(eps) 8, param.addcdiv_ 16:
//     80 B; with weight decay, param.mul_ first: 88 B.
//
// A set implementation beside a 16-bit shard (training.shard_dtype unset:
// the fp32 master is a separate copy, as DeepSpeed keeps it) adds the
// master's two copies around the update, 16 B: the 16-bit gradient
// partition flattened and cast to fp32 (self.flatten(...).to(fp32): 2 + 2
// then 2 + 4; DeepSpeed's stage3.py _prepare_fp32_grad_for_sub_group at
// deepspeedai/DeepSpeed e9503fe40ee127e74c8b0ea962aac4f0ae957624, and stage_1_and_2.py's step at the same
// commit) and the updated master copied back into the 16-bit partition
// (.data.copy_: 4 + 2; stage3.py _reassign_or_swap_out_partitioned_parameters).
//
// training.grad_clip: norm adds 12 B: FSDP's clip_grad_norm_
// (torch/distributed/fsdp/fully_sharded_data_parallel.py at pytorch/pytorch
// 6d71f74c873d9517c9f41454ae153189822b17af) reads every fp32 gradient
// element for the local norm (_get_grad_norm) and scales it in place
// (grad.detach().mul_): 4 + 8.
//
// DeepSpeed's ZeRO-3 step (communication.boundary: deepspeed at stage 3,
// with a set implementation) runs three more passes over the rank's
// gradient partition, clipping or not, in place of FSDP's 12 B
// (deepspeed/runtime/zero/stage3.py step at deepspeedai/DeepSpeed e9503fe40ee127e74c8b0ea962aac4f0ae957624):
// the overflow check, torch.isinf and torch.isnan of the 16-bit gradient
// buffer, each writing a bool tensor that .any() reads (has_overflow:
// 2 + 1 + 1, twice), the norm of every gradient partition in fp64
// (get_grad_norm_direct: g.double().norm(2), 2 + 8 + 8) and the fp32
// gradient's unscale, a mul_ it runs even when nothing is clipped
// (unscale_and_clip_grads: 4 + 4): 34 B.
//
// Under training.reduce_dtype fp32 at stages 0–2 (but FSDP's stage 2,
// memory.FSDPStage2, which casts the fp32-reduced shard to the shard's
// dtype as its stage 3 does) the gradient buffer is fp32 and the
// optimizer's fp32 params take views of it as their grads
// (Megatron's main_grad.float() of an fp32 buffer returns the buffer:
// megatron/core/optimizer/distrib_optimizer.py
// _copy_model_grads_to_main_grads at NVIDIA/Megatron-LM core_v0.12.0,
// d580efc6), so nothing casts the gradient: seed 000's count drops its
// read of the 16-bit gradient and write of the fp32 copy (30 B), and a
// set implementation beside a 16-bit shard adds only the copy back of the
// master into the 16-bit params (4 + 2; _copy_main_params_to_model_params).
//
// Under training.autocast (scenarios/autocast.go) the optimizer steps the
// fp32 parameters with their fp32 gradients: nothing is cast or copied
// back, seed 000's count is 16 + 12 and a set implementation's is its
// fp32 kernels alone.
//
// Under training.store_param_remainders (scenarios.resolveParamRemainders)
// one fused kernel reads the bf16 param, its int16 remainder, m, v and
// the gradient in its dtype and writes all but the gradient back: 26 B
// beside a 16-bit gradient, 28 B beside an fp32 one, with the clipping's
// 12 B, whatever training.optimizer_impl says.
//
// Under training.master_dtype none (scenarios.MasterNone) the optimizer
// steps the param_dtype parameters with gradients and moments in the same
// dtype, so every tensor access above moves param-dtype elements (2 B for
// bf16) and nothing is cast or copied back: noMasterBytesPerElem.
func OptimizerBytesPerElem(s *scenarios.Scenario) int64 {
	t := &s.Training
	if t.NoMaster() {
		return noMasterBytesPerElem(s)
	}
	if t.MasterDType == scenarios.MasterBF16 {
		return masterBF16BytesPerElem(s)
	}
	fp32Grads := t.FP32Reduce() && s.Parallelism.Stage < 3 && !memory.FSDPStage2(s)
	var n int64
	if s.ParamRemainders() {
		// One kernel per step that loads the bf16 param, its int16
		// remainder, m, v and the gradient in its own dtype and stores the
		// remainder, m, v and the bf16 param (Apex's
		// DistAdamWithParamRemaindersFunctor,
		// apex/contrib/csrc/optimizers/multi_tensor_distopt_adam_kernel.cu
		// at NVIDIA/apex 6424da3b4faa6c8f062da4a48c424fff3f02d42d; TE's
		// FusedAdam passes the bf16 param, the int16 master_param, m, v
		// and decoupled_grad to one multi-tensor kernel,
		// multi_tensor_adam_param_remainder, fused_adam.py at
		// d0067d0d): 2 + 2 + 4 + 4 + the gradient, then 2 + 4 + 4 + 2.
		g := int64(2)
		if fp32Grads {
			g = 4
		}
		n = 2 + 2 + 4 + 4 + g + 2 + 4 + 4 + 2
		if t.GradClip == scenarios.GradClipNorm {
			n += 4 + 8
		}
		return n
	}
	switch t.OptimizerImpl {
	case scenarios.OptimizerFused:
		n = 16 + 12
	case scenarios.OptimizerForeach:
		n = 12 + 8 + 12 + 8 + 8 + 8 + 16
	case scenarios.OptimizerComposer:
		n = 8 + 12 + 8 + 12 + 8 + 8 + 8 + 16
	default:
		n = bytesPerOptimizerElem
		if fp32Grads {
			n -= 2 + 4 // no cast of the gradient shard
		}
		if t.Autocasts() {
			// The fp32 parameters are the optimizer's own, their
			// gradients fp32: seed 000's count without the gradient's
			// cast and the 16-bit parameters' write.
			n -= 2 + 4 + 2
		}
	}
	if t.WeightDecay > 0 && (t.OptimizerImpl == scenarios.OptimizerForeach || t.OptimizerImpl == scenarios.OptimizerComposer) {
		n += 8
	}
	if t.OptimizerImpl != "" && t.OptimizerImpl != scenarios.OptimizerSeed && t.ShardDType != scenarios.ShardFP32 && !t.Autocasts() {
		if fp32Grads {
			n += 4 + 2 // the copy back only
		} else {
			n += 2 + 2 + 2 + 4 + 4 + 2
		}
	}
	switch {
	case t.OptimizerImpl != "" && t.OptimizerImpl != scenarios.OptimizerSeed &&
		s.Parallelism.Stage == 3 && s.Communication.Boundary == scenarios.BoundaryDeepSpeed:
		n += 2*(2+1+1) + 2 + 8 + 8 + 4 + 4
	case t.GradClip == scenarios.GradClipNorm:
		n += 4 + 8
	}
	return n
}

// noMasterBytesPerElem is OptimizerBytesPerElem under training.master_dtype
// none: the same kernels (OptimizerBytesPerElem cites them), each tensor
// access moving one element of param_dtype instead of fp32: fused 7
// accesses (read p, g, m, v; write p, m, v), foreach 18 (20 with weight
// decay), also for an unset implementation (torch.optim.AdamW's default on
// CUDA, scenarios.Training.StepImpl; the loader refuses seed beside no
// master), composer 20 (22); gradient clipping by norm 3
// (read for the norm, read and write to scale). No master copy, no cast of
// the gradient. DeepSpeed's ZeRO-3 step is not reached: the loader refuses
// master_dtype none under DeepSpeed (scenarios/master.go).
func noMasterBytesPerElem(s *scenarios.Scenario) int64 {
	t := &s.Training
	var n int64
	impl := t.StepImpl()
	switch impl {
	case scenarios.OptimizerForeach:
		n = 3 + 2 + 3 + 2 + 2 + 2 + 4
	case scenarios.OptimizerComposer:
		n = 2 + 3 + 2 + 3 + 2 + 2 + 2 + 4
	default: // fused
		n = 4 + 3
	}
	if t.WeightDecay > 0 && (impl == scenarios.OptimizerForeach || impl == scenarios.OptimizerComposer) {
		n += 2
	}
	if t.GradClip == scenarios.GradClipNorm {
		n += 1 + 2
	}
	return n * t.ParamDType.Bytes16or32()
}

// masterBF16BytesPerElem is OptimizerBytesPerElem under training.master_dtype
// bf16 (scenarios.MasterBF16, DeepSpeed's bf16_master_weights_and_grads):
// the same kernels, each access to the gradient copy, the master and the
// moments moving a bf16 element where OptimizerBytesPerElem's moves an
// fp32 one, so its update terms halve. On the GPU the moments are bf16:
// the loader takes fp32 states beside a bf16 master only with the
// optimizer offloaded. The gradient partition is already in the master's
// dtype, so DeepSpeed flattens it (2 + 2) and its .to(master dtype) casts
// nothing (stage3.py _prepare_fp32_grad_for_sub_group, stage_1_and_2.py
// step at deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641),
// and the copy back into the 16-bit partition reads and writes bf16 (2 +
// 2). Seed 000's order: read the grad 2, write its flattened copy 2, read
// it, master, m and v 8, write master, m and v 6, write the param 2.
// DeepSpeed's ZeRO-3 passes keep their 16-bit and fp64 terms and unscale a
// bf16 gradient (2 + 2); clipping by norm reads and scales it (2 + 4).
func masterBF16BytesPerElem(s *scenarios.Scenario) int64 {
	t := &s.Training
	set := t.OptimizerImpl != "" && t.OptimizerImpl != scenarios.OptimizerSeed
	var n int64
	switch t.OptimizerImpl {
	case scenarios.OptimizerFused:
		n = (16 + 12) / 2
	case scenarios.OptimizerForeach:
		n = (12 + 8 + 12 + 8 + 8 + 8 + 16) / 2
	case scenarios.OptimizerComposer:
		n = (8 + 12 + 8 + 12 + 8 + 8 + 8 + 16) / 2
	default:
		n = 2 + 2 + 8 + 6 + 2
	}
	if t.WeightDecay > 0 && (t.OptimizerImpl == scenarios.OptimizerForeach || t.OptimizerImpl == scenarios.OptimizerComposer) {
		n += 8 / 2
	}
	if set {
		n += 2 + 2 + 2 + 2
	}
	switch {
	case set && s.Parallelism.Stage == 3 && s.Communication.Boundary == scenarios.BoundaryDeepSpeed:
		n += 2*(2+1+1) + 2 + 8 + 8 + 2 + 2
	case t.GradClip == scenarios.GradClipNorm:
		n += 2 + 4
	}
	return n
}

// Costs derives per-layer forward and backward times. The blocks, output
// head and embedding of a dense transformer with dimensions go through the
// per-operation model (PlanCompute: GEMMs at training.compute_efficiency
// with wave quantization, causal attention at FlashAttention's rate,
// memory-bound work on HBM; the LM head once, the embedding's lookup and
// scatter-add backward and the final norm by their bytes, embeddingBytes
// and finalNormBytes;
// recompute per training.recompute). Everything else — seed 000's MLP, bare
// parameter counts, MoE blocks, multi-head latent attention blocks, fp8
// recipes, explicit fwd_flops — counts 2·(active) params·tokens at
// peak·compute_efficiency (fp8 GEMMs at peak_fp8·compute_efficiency;
// routed-expert units with dims through the GEMM roofline instead,
// expertSeconds, and under stack: megatron their permute, weighted SwiGLU
// and unpermute on HBM and under an fp8 recipe its casts,
// expertElementwiseSeconds),
// plus a block's core attention by the per-operation model's rule
// (blockAttentionFLOPs: AttentionFLOPs, halved when the kernel skips the
// masked half; backward AttentionBackwardFLOPs) at the attention
// efficiency, or a linear-attention block's chunked delta rule
// (GatedDeltaNetCoreFLOPs) at the GEMM efficiency; backward 2× the
// matmuls (+1 forward under full recompute; under op a block's
// even-numbered mms, memory.OpRecomputedMMFLOPs, and a unit of routed
// experts its forward). A block among them with
// dims (MoE, MLA, linear or gated attention) adds its memory-bound work
// (norms, residual adds, RoPE, the router, fp8 casts) by the dense blocks'
// rules for the stack (blockOtherBytes; rerun under full recompute, and
// under op in the share of the forward FLOPs the policy reruns, as the
// per-operation model's blocks: blockTimes.seconds), and
// under context parallelism a softmax-attention one its ring's seconds as
// the per-operation model's blocks do (blockRing); a block with explicit
// fwd_flops does neither. FSDP's compute-stream copies (fsdpCopies) are
// added to every unit's derived times, also in models without transformer
// dims.
// Explicit per-layer times win.
func Costs(s *scenarios.Scenario) ([]LayerCost, error) {
	out, _, err := costsAndPlan(s, nil, Options{})
	return out, err
}

// costsAndPlan is Costs and the per-operation plan it used (planCompute's, nil
// for other models unless FSDP's copies are charged, fsdpCopies), for ComputeClasses' class split; context parallelism's
// ring is timed by net (nil: on s's topology, built if a ring is timed: the
// replay passes the RingNet of its fabric).
func costsAndPlan(s *scenarios.Scenario, net *RingNet, opt Options) ([]LayerCost, []unitPlan, error) {
	eff, err := effectiveFLOPS(s)
	if err != nil {
		return nil, nil, err
	}
	eff8, err := effectiveFP8(s)
	if err != nil {
		return nil, nil, err
	}
	m := &s.Model
	// Models without a sequence (mlp, generic) count one token per sample;
	// under context parallelism a rank holds ceil(seq_len/cp) of each
	// sequence's tokens (tokensPerGPU).
	tokens, err := units.Mul(s.Training.MicroBatch, max(s.RankSeqLen(), 1))
	if err != nil {
		return nil, nil, fmt.Errorf("zero: tokens per micro-batch: %w", err)
	}
	plan, err := planCompute(s, net, opt)
	if err != nil {
		return nil, nil, err
	}
	out := make([]LayerCost, len(m.LayerList))
	policy := memory.UnitPolicies(s)
	for i, l := range m.LayerList {
		c := LayerCost{Name: l.Name, Params: int64(l.Params)}
		if plan != nil && plan[i].ok && l.FwdFLOPs == 0 {
			u := plan[i]
			c.FwdFLOPs, c.BwdFLOPs, c.Fwd, c.Bwd, c.Ring = u.FwdFLOPs, u.BwdFLOPs, l.Fwd, l.Bwd, u.ring
			for _, x := range []struct {
				d, ring        *units.Duration
				secs, ringSecs float64
			}{{&c.Fwd, &c.RingFwd, u.Fwd, u.ringFwd}, {&c.Bwd, &c.RingBwd, u.Bwd, u.ringBwd}} {
				if *x.d != 0 {
					continue
				}
				if *x.d, err = seconds(x.secs); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %w (check cluster.peak_bf16, cluster.hbm_bandwidth, training.compute_efficiency and training.attention_efficiency, or lower training.micro_batch or model.seq_len)", l.Name, err)
				}
				if *x.ring, err = seconds(x.ringSecs); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: context-parallel ring: %w", l.Name, err)
				}
				*x.ring = min(*x.ring, *x.d)
			}
			if c.FwdAttn, err = fwdAttn(l, u.FwdBy, c.Fwd); err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: %w", l.Name, err)
			}
			out[i] = c
			continue
		}
		// f8 is the FLOPs of the unit's weight matmuls that an fp8 recipe
		// runs at the fp8 peak; att is the block's core attention, which
		// runs in bf16 at the attention kernel's efficiency, as the
		// per-operation model times it.
		var f8, att int64
		if l.FwdFLOPs > 0 {
			c.FwdFLOPs = int64(l.FwdFLOPs)
		} else {
			// A MoE unit's tokens each go through its top-k experts only.
			active := int64(l.Params)
			if l.ActiveParams > 0 {
				active = int64(l.ActiveParams)
			}
			f, err := units.Mul(2*active, tokens)
			if err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: forward FLOPs: %w", l.Name, err)
			}
			if eff8 > 0 && scenarios.FP8Linear(l) {
				f8 = f
			}
			switch x := l.Dims; {
			case l.Block && x != nil && x.LinearAttention != "":
				// A linear-attention block has no softmax attention: its
				// chunked delta rule runs as matmuls of head-sized tiles
				// (fla's chunk kernels), counted with the weight matmuls
				// at the GEMM efficiency and 2× in backward.
				core, err := GatedDeltaNetCoreFLOPs(tokens, x.LinearValueHeads, x.LinearKeyHeadDim, x.LinearValueHeadDim)
				if err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %w", l.Name, err)
				}
				if f, err = units.Add(f, core); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: FLOPs: %w", l.Name, err)
				}
			case l.Block && m.Hidden > 0 && m.SeqLen > 0:
				if att, err = blockAttentionFLOPs(s, l); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %w", l.Name, err)
				}
				if f, err = units.Add(f, att); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: FLOPs: %w", l.Name, err)
				}
			}
			c.FwdFLOPs = f
		}
		// Backward is 2× the weight matmuls and AttentionBackwardFLOPs of
		// the attention (2.5× under flash and sdpa, 2× eager), plus one more forward under full recompute
		// of the unit (memory.UnitPolicies: a block recompute_every or recompute_fraction leaves out, and its routed
		// experts, rerun nothing). Under torchtitan's op policy a unit of
		// routed experts reruns its forward too: none of its ops is in
		// the policy's save list (torch._grouped_mm is not aten.mm), so
		// its backward rebuilds what it keeps (memory's moeActivation);
		// the all-to-alls, which the list holds, are not resent, but
		// under qwen3's list, which does not (recomputeA2A).
		full := policy[i] == memory.PolicyFull || policy[i] == memory.PolicyOp && l.Dims != nil && l.Dims.ExpertsOnly()
		attBwd, err := AttentionBackwardFLOPs(att, keepsProbs(s))
		if err != nil {
			return nil, nil, fmt.Errorf("zero: layer %q: %w", l.Name, err)
		}
		var fc units.Calc
		gemm := c.FwdFLOPs - att // the weight matmuls (all FLOPs of an explicit fwd_flops)
		c.BwdFLOPs = fc.Add(fc.Mul(2, gemm), attBwd)
		re := int64(0)
		if full {
			re = 1
			c.BwdFLOPs = fc.Add(c.BwdFLOPs, c.FwdFLOPs)
		}
		// torchtitan's op policy reruns a block's even-numbered mms
		// (memory.OpRecomputedMMFLOPs, the rule the memory model keeps
		// the odd-numbered ones' outputs by) and none of its attention;
		// the per-operation model's blocks get the same from
		// RecomputeFLOPs.
		var opRe int64
		if policy[i] == memory.PolicyOp && l.Block && l.Dims != nil && l.FwdFLOPs == 0 && m.Hidden > 0 && m.SeqLen > 0 {
			if opRe, err = memory.UnitOpRecomputedMMFLOPs(s, i); err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: %w", l.Name, err)
			}
			c.BwdFLOPs = fc.Add(c.BwdFLOPs, opRe)
		}
		opRe16, opRe8 := opRe, int64(0)
		if f8 > 0 {
			opRe16, opRe8 = 0, opRe
		}
		// Korthikanti's selective policy reruns the block's core attention
		// in its backward, as RecomputeFLOPs charges the blocks of the
		// per-operation model ("selective"); att is zero outside blocks.
		// So does torchtitan's op policy before b39377f under cuDNN's
		// attention (training.op_recompute_attention: its _save_list
		// lacked the kernel's op, PlanCompute).
		reAtt := re
		if (policy[i] == memory.PolicySelective || policy[i] == memory.PolicyOp && s.Training.OpRecomputeAttention) && att > 0 {
			reAtt = 1
			c.BwdFLOPs = fc.Add(c.BwdFLOPs, att)
		}
		if fc.Mul(3, c.FwdFLOPs); fc.Err != nil {
			return nil, nil, fmt.Errorf("zero: layer %q: backward FLOPs of %d forward FLOPs do not fit in 64 bits (use fewer forward FLOPs per layer)", l.Name, c.FwdFLOPs)
		}
		c.Fwd, c.Bwd = l.Fwd, l.Bwd
		var by [2]ClassSeconds
		// Routed experts: their grouped GEMMs through the dense blocks'
		// roofline at the rows each local expert receives (expertSeconds).
		// Their elementwise traffic (expertElementwiseSeconds) is
		// memory-bound, the Other class; a full recompute reruns both.
		xs, expert, err := expertSeconds(s, l, tokens, f8 > 0, c.FwdFLOPs)
		if err != nil {
			return nil, nil, err
		}
		xe, err := expertElementwiseSeconds(s, l, tokens)
		if err != nil {
			return nil, nil, err
		}
		for k, x := range []struct {
			d              *units.Duration
			gemm, f8, att  int64
			secs, elemSecs float64
		}{{&c.Fwd, gemm - f8, f8, att, xs[0], xe[0]}, {&c.Bwd, fc.Add(fc.Mul(2+re, gemm-f8), opRe16), fc.Add(fc.Mul(2+re, f8), opRe8), fc.Add(attBwd, reAtt*att), xs[1] + float64(float64(re)*xs[0]), xe[1] + float64(float64(re)*xe[0])}} {
			if *x.d != 0 || x.gemm+x.f8+x.att == 0 {
				continue
			}
			if expert {
				if *x.d, err = seconds(x.secs + x.elemSecs); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %w (check cluster.peak_bf16, cluster.hbm_bandwidth, training.compute_efficiency and training.attention_efficiency, or lower training.micro_batch or model.seq_len)", l.Name, err)
				}
				by[k] = ClassSeconds{GEMM: x.secs, Other: x.elemSecs}
				continue
			}
			var d, dg, d8, da int64
			if dg, err = units.CheckedMulDivCeil(x.gemm, int64(units.Second), eff); err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: %d FLOPs at %d FLOP/s take longer than %v (check cluster.peak_bf16 and training.compute_efficiency)", l.Name, x.gemm, eff, units.Duration(math.MaxInt64))
			}
			if x.f8 > 0 {
				if d8, err = units.CheckedMulDivCeil(x.f8, int64(units.Second), eff8); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %d fp8 FLOPs at %d FLOP/s take longer than %v (check cluster.peak_fp8 and training.compute_efficiency)", l.Name, x.f8, eff8, units.Duration(math.MaxInt64))
				}
			}
			if x.att > 0 {
				effAtt, err := attentionFLOPS(s)
				if err != nil {
					return nil, nil, err
				}
				if da, err = units.CheckedMulDivCeil(x.att, int64(units.Second), effAtt); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %d attention FLOPs at %d FLOP/s take longer than %v (check cluster.peak_bf16 and the attention efficiency)", l.Name, x.att, effAtt, units.Duration(math.MaxInt64))
				}
			}
			var tc units.Calc
			if d = tc.Add(dg, d8, da); tc.Err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: compute time longer than %v", l.Name, units.Duration(math.MaxInt64))
			}
			*x.d = units.Duration(d)
			by[k] = ClassSeconds{GEMM: units.Duration(dg + d8).Seconds(), Attention: units.Duration(da).Seconds()}
		}
		if plan != nil {
			u := &plan[i]
			// The memory-bound work of a block left to the FLOP count
			// (blockOtherBytes, none with the scenario's own fwd_flops),
			// on derived times only; a full recompute
			// reruns the forward's. The op policy reruns every op outside
			// its save list (norms, RoPE, silu·mul, the router's softmax
			// and top-k, casts): charged, as the per-operation model's
			// blocks are (blockTimes.seconds), the forward's memory-bound
			// time times the share of the forward FLOPs it reruns,
			// opRe / FwdFLOPs. FSDP2's copies around its collectives
			// (copyFwd, copyBwd: fsdp2CopyBytes) run once per gather and
			// reduce-scatter, not again in the recompute, and FSDP1's
			// flat-parameter copy once per backward (flatGradCopyBytes);
			// both move parameters, so a unit with its own fwd_flops
			// pays them too.
			elemRe := float64(re)
			if opRe > 0 && c.FwdFLOPs > 0 {
				elemRe = float64(opRe) / float64(c.FwdFLOPs)
			}
			for k, x := range []struct {
				d    *units.Duration
				set  units.Duration
				secs float64
			}{{&c.Fwd, l.Fwd, u.elemFwd + u.copyFwd}, {&c.Bwd, l.Bwd, u.elemBwd + float64(elemRe*u.elemFwd) + u.copyBwd}} {
				if x.set != 0 || x.secs == 0 {
					continue
				}
				e, err := seconds(x.secs)
				if err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: memory-bound work: %w", l.Name, err)
				}
				var tc units.Calc
				if *x.d = units.Duration(tc.Add(int64(*x.d), int64(e))); tc.Err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: compute time with its memory-bound work longer than %v", l.Name, units.Duration(math.MaxInt64))
				}
				by[k].Other += x.secs
			}
			// Context parallelism's ring of a block left to the FLOP
			// count (blockRing), on derived times only; a block with an
			// explicit fwd_flops gets neither its seconds nor its bytes.
			for k, x := range []struct {
				d, ring *units.Duration
				set     units.Duration
				secs    float64
			}{{&c.Fwd, &c.RingFwd, l.Fwd, u.ringFwd}, {&c.Bwd, &c.RingBwd, l.Bwd, u.ringBwd}} {
				if x.set != 0 || x.secs == 0 || l.FwdFLOPs > 0 {
					continue
				}
				r, err := seconds(x.secs)
				if err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: context-parallel ring: %w", l.Name, err)
				}
				*x.ring = r
				var tc units.Calc
				if *x.d = units.Duration(tc.Add(int64(*x.d), int64(r))); tc.Err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: compute time with the context-parallel ring longer than %v", l.Name, units.Duration(math.MaxInt64))
				}
				by[k].Other += x.secs
			}
			if l.FwdFLOPs == 0 {
				c.Ring = u.ring
			}
			// The class split ComputeClasses reads; ok stays false.
			u.FwdBy, u.BwdBy = by[0], by[1]
			if c.FwdAttn, err = fwdAttn(l, by[0], c.Fwd); err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: %w", l.Name, err)
			}
		}
		out[i] = c
	}
	return out, plan, nil
}

// fwdAttn is LayerCost.FwdAttn of unit l from its forward's class split
// by, at most its forward fwd: zero for a unit with its own time (l.Fwd).
func fwdAttn(l scenarios.Layer, by ClassSeconds, fwd units.Duration) (units.Duration, error) {
	if l.Fwd != 0 || by.Attention <= 0 {
		return 0, nil
	}
	d, err := seconds(by.Attention)
	return min(d, fwd), err
}

// expertSeconds is the forward and backward seconds (before recompute) of
// l when it is a unit of routed experts with known dimensions and no
// explicit fwd_flops (ok true): ExpertGEMMSeconds on the rank's tokens per
// micro-batch at parallelism.ep, fp8 GEMMs at cluster.peak_fp8, scaled by
// fwdFLOPs over the SwiGLU shapes' own FLOPs 6·t·k·h·f where the unit's
// active parameters hold more (gpt-oss's expert biases). Other units: ok
// false, and Costs counts their FLOPs at peak·compute_efficiency.
func expertSeconds(s *scenarios.Scenario, l scenarios.Layer, tokens int64, fp8 bool, fwdFLOPs int64) (secs [2]float64, ok bool, err error) {
	d := l.Dims
	if l.FwdFLOPs > 0 || d == nil || !d.ExpertsOnly() || d.Experts <= 0 || d.TopK <= 0 || d.Hidden <= 0 || d.ExpertFFN <= 0 || fwdFLOPs <= 0 {
		return secs, false, nil
	}
	g := GPUShape{Peak: float64(s.Cluster.PeakBF16), HBM: float64(s.Cluster.HBMBandwidth), SMs: SMCount(s.Cluster.GPU)}
	if fp8 {
		g.GEMMPeak = fp8GEMMPeak(s)
	}
	e := Efficiency{GEMM: efficiency(s), HBM: DefaultHBMEfficiency}
	ep := int64(max(s.Parallelism.EP, 1))
	f, b, err := ExpertGEMMSeconds(tokens, d.Experts, d.TopK, ep, d.Hidden, d.ExpertFFN, g, e)
	if err != nil {
		return secs, false, fmt.Errorf("zero: layer %q: %w", l.Name, err)
	}
	scale := float64(fwdFLOPs) / (6 * float64(tokens) * float64(d.TopK) * float64(d.Hidden) * float64(d.ExpertFFN))
	return [2]float64{f * scale, b * scale}, true, nil
}

// expertElementwiseSeconds is the forward and backward seconds (before
// recompute) of the memory-bound kernels around the grouped GEMMs of l
// when it is a unit of routed experts with known dimensions and no
// explicit fwd_flops: under stack: megatron their permute, weighted SwiGLU
// and unpermute (ExpertElementwiseBytes), and under an fp8 recipe the
// casts of the experts' GEMM operands (expertFP8Linears, FP8CastRuleOf;
// the weights' once a step under Transformer Engine, charged to each
// micro-batch's backward at 1/grad_accum), at the GPU's HBM bandwidth ×
// DefaultHBMEfficiency, as the dense blocks' memory-bound work; zero
// otherwise. Other stacks run other kernels around the GEMMs (eager
// gathers, index_add_, unfused SwiGLU) that are not counted yet.
func expertElementwiseSeconds(s *scenarios.Scenario, l scenarios.Layer, tokens int64) (secs [2]float64, err error) {
	d := l.Dims
	if l.FwdFLOPs > 0 || d == nil || !d.ExpertsOnly() || d.TopK <= 0 || d.Hidden <= 0 || d.ExpertFFN <= 0 {
		return secs, nil
	}
	var f, b int64
	if s.Stack == "megatron" {
		if f, b, err = ExpertElementwiseBytes(tokens, d.TopK, d.Hidden, d.ExpertFFN); err != nil {
			return secs, fmt.Errorf("zero: layer %q: %w", l.Name, err)
		}
	}
	if s.Training.FP8 != scenarios.FP8None && scenarios.FP8Linear(l) && d.Experts > 0 {
		ls, err := expertFP8Linears(tokens, d.TopK, d.Experts, int64(max(s.Parallelism.EP, 1)), d.Hidden, d.ExpertFFN)
		if err != nil {
			return secs, fmt.Errorf("zero: layer %q: %w", l.Name, err)
		}
		cf, cb, err := fp8CastTraffic(s, l, ls)
		if err != nil {
			return secs, err
		}
		var c flopCalc
		f, b = c.Add(f, cf), c.Add(b, cb)
		if c.Err != nil {
			return secs, fmt.Errorf("zero: layer %q: expert memory-bound bytes overflow: %w", l.Name, c.Err)
		}
	}
	if f == 0 && b == 0 {
		return secs, nil
	}
	bw := float64(s.Cluster.HBMBandwidth) * DefaultHBMEfficiency
	if bw <= 0 {
		return secs, fmt.Errorf("zero: layer %q: the routed experts' elementwise traffic needs cluster.hbm_bandwidth > 0", l.Name)
	}
	return [2]float64{float64(f) / bw, float64(b) / bw}, nil
}

// efficiency is training.compute_efficiency; with training.mfu set it is
// fitted before any replay (fitMFU), and the GPU's default stands in until
// then.
func efficiency(s *scenarios.Scenario) float64 {
	if ce := s.Training.ComputeEfficiency; ce > 0 {
		return ce
	}
	eff, _, _ := scenarios.DefaultComputeEfficiencyOf(s.Cluster.GPU)
	return eff
}

// effectiveFLOPS is peak·compute_efficiency of the resolved scenario, whole
// FLOP/s.
func effectiveFLOPS(s *scenarios.Scenario) (int64, error) {
	eff := math.Floor(float64(s.Cluster.PeakBF16) * efficiency(s))
	if eff < 1 || eff > math.MaxInt64/2 {
		return 0, fmt.Errorf("zero: cluster.peak_bf16 × training.compute_efficiency = %g FLOP/s is out of range (use a peak of at least 1 FLOP/s after the efficiency)", eff)
	}
	return int64(eff), nil
}

// attentionFLOPS is peak·the attention efficiency (AttentionEfficiencyOf:
// training.attention_kernel's, or training.attention_efficiency), whole
// FLOP/s: the rate the per-operation model runs attention at, and Costs
// the attention of the blocks it counts from their parameters.
func attentionFLOPS(s *scenarios.Scenario) (int64, error) {
	eff := math.Floor(float64(s.Cluster.PeakBF16) * AttentionEfficiencyOf(s))
	if eff < 1 || eff > math.MaxInt64/2 {
		return 0, fmt.Errorf("zero: cluster.peak_bf16 × the attention efficiency = %g FLOP/s is out of range (use a peak of at least 1 FLOP/s after the efficiency)", eff)
	}
	return int64(eff), nil
}

// padsValue reports whether the attention kernel takes one head size for
// q, k and v, so that a narrower value is padded to the q·k width
// (scenarios.BlockDims.KernelValueDim): FlashAttention-2, as transformers
// calls it under training.attention flash. cuDNN's fused attention (as
// torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1's SDPA runs it, which passes MLA's value unpadded:
// torchtitan/models/deepseek_v3/model/model.py) takes the value as it is,
// and so does every kernel under stack torchtitan, whose deepseek_v3
// model hands SDPA and FlexAttention the value unpadded (memory.BlockDims.
// ValueUnpadded: flash with fa2 is how zerosim import torchtitan writes
// FlexAttention).
func padsValue(s *scenarios.Scenario) bool {
	return s.Training.Attention == scenarios.AttentionFlash && s.Stack != "torchtitan" && RunsAs(s.Cluster.GPU, s.Training.AttentionKernel) != scenarios.KernelCuDNN
}

// blockAttentionFLOPs is the core attention forward of block l under the
// FLOP count (AttentionFLOPs, the per-operation model's rule): the block's
// heads, q·k width head_dim and the value width its kernel computes
// (scenarios.BlockDims.KernelValueDim: flash pads MLA's narrower value to
// head_dim) when its dims are known, else a·d = hidden (Gemma 2 shows
// why the dims matter: 16·256 ≠ 3584). A rank's ceil(s/cp) queries
// attend over all s keys, as in flopDims.
func blockAttentionFLOPs(s *scenarios.Scenario, l scenarios.Layer) (int64, error) {
	m := &s.Model
	heads, qk, v := int64(1), m.Hidden, m.Hidden
	if x := l.Dims; x != nil && x.HeadDim > 0 {
		heads, qk = m.Heads, x.HeadDim
		if x.Heads > 0 {
			heads = x.Heads
		}
		v = x.KernelValueDim(padsValue(s), x.HeadDim)
	}
	causal, window, chunk := blockMask(s, l.Dims)
	if doc, tile := documentMask(s); causal && doc > 0 && s.Parallelism.CP <= 1 {
		return PackedAttentionFLOPs(s.Training.MicroBatch, heads, m.SeqLen, qk, v, window, chunk, doc, tile)
	}
	return AttentionFLOPs(s.Training.MicroBatch, heads, s.RankSeqLen(), m.SeqLen, qk, v, causal, window, chunk)
}

// effectiveFP8 is fp8GEMMPeak × compute_efficiency when training.fp8 is
// on, else 0: fp8 GEMMs reach cluster.fp8_gemm_ratio of the bf16 GEMMs'
// efficiency (scenarios.DefaultFP8GEMMRatio, from published GEMM
// measurements on the GPU), which calibrating on a bf16 step does not
// move. The recipe's casts and amax passes around them are memory-bound
// work of their own (FP8CastRuleOf, fp8CastBytes).
func effectiveFP8(s *scenarios.Scenario) (int64, error) {
	if s.Training.FP8 == scenarios.FP8None {
		return 0, nil
	}
	if s.Cluster.PeakFP8 <= 0 {
		return 0, fmt.Errorf("zero: training.fp8 %s needs cluster.peak_fp8 > 0", s.Training.FP8)
	}
	eff := math.Floor(fp8GEMMPeak(s) * efficiency(s))
	if eff < 1 || eff > math.MaxInt64/2 {
		return 0, fmt.Errorf("zero: cluster.peak_fp8 × training.compute_efficiency × cluster.fp8_gemm_ratio = %g FLOP/s is out of range", eff)
	}
	return int64(eff), nil
}

// fp8GEMMPeak is the peak fp8 GEMMs are timed against: cluster.peak_fp8
// × cluster.fp8_gemm_ratio (the GPU's published figure when unset,
// scenarios.Cluster.FP8GEMMRatioOf), so that at
// training.compute_efficiency they run at the fp8 efficiency the GPU's
// published GEMM figures give.
func fp8GEMMPeak(s *scenarios.Scenario) float64 {
	return float64(s.Cluster.PeakFP8) * s.Cluster.FP8GEMMRatioOf()
}

// OptimizerTime is the time of the Adam step over elems elements of the
// rank's shard (fp32 states, or param_dtype's under training.master_dtype
// none), limited by HBM bandwidth (OptimizerBytesPerElem per element,
// gradient clipping included).
func OptimizerTime(s *scenarios.Scenario, elems int64) (units.Duration, error) {
	bw := s.Cluster.HBMBandwidth
	n, err := units.Mul(elems, OptimizerBytesPerElem(s))
	if err != nil {
		return 0, fmt.Errorf("zero: optimizer bytes: %w", err)
	}
	d, err := units.CheckedTransferTime(units.Bytes(n), bw)
	if err != nil {
		return 0, fmt.Errorf("zero: the optimizer step over %d B at %d B/s takes longer than %v (check cluster.hbm_bandwidth)", n, int64(bw), units.Duration(math.MaxInt64))
	}
	return d, nil
}
