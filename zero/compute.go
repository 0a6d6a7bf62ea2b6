package zero

import (
	"fmt"
	"math"

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
// deepspeedai/DeepSpeed e9503fe4, and stage_1_and_2.py's step at the same
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
// (deepspeed/runtime/zero/stage3.py step at deepspeedai/DeepSpeed e9503fe4):
// the overflow check, torch.isinf and torch.isnan of the 16-bit gradient
// buffer, each writing a bool tensor that .any() reads (has_overflow:
// 2 + 1 + 1, twice), the norm of every gradient partition in fp64
// (get_grad_norm_direct: g.double().norm(2), 2 + 8 + 8) and the fp32
// gradient's unscale, a mul_ it runs even when nothing is clipped
// (unscale_and_clip_grads: 4 + 4): 34 B.
//
// Under training.reduce_dtype fp32 at stages 0–2 the gradient buffer is
// fp32 and the optimizer's fp32 params take views of it as their grads
// (Megatron's main_grad.float() of an fp32 buffer returns the buffer:
// megatron/core/optimizer/distrib_optimizer.py
// _copy_model_grads_to_main_grads at NVIDIA/Megatron-LM core_v0.12.0,
// d580efc6), so nothing casts the gradient: seed 000's count drops its
// read of the 16-bit gradient and write of the fp32 copy (30 B), and a
// set implementation beside a 16-bit shard adds only the copy back of the
// master into the 16-bit params (4 + 2; _copy_main_params_to_model_params).
func OptimizerBytesPerElem(s *scenarios.Scenario) int64 {
	t := &s.Training
	fp32Grads := t.FP32Reduce() && s.Parallelism.Stage < 3
	var n int64
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
	}
	if t.WeightDecay > 0 && (t.OptimizerImpl == scenarios.OptimizerForeach || t.OptimizerImpl == scenarios.OptimizerComposer) {
		n += 8
	}
	if t.OptimizerImpl != "" && t.OptimizerImpl != scenarios.OptimizerSeed && t.ShardDType != scenarios.ShardFP32 {
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

// Costs derives per-layer forward and backward times. The blocks, output
// head and embedding of a dense transformer with dimensions go through the
// per-operation model (PlanCompute: GEMMs at training.compute_efficiency
// with wave quantization, causal attention at FlashAttention's rate,
// memory-bound work on HBM; the LM head once, the embedding lookup free;
// recompute per training.recompute). Everything else — seed 000's MLP, bare
// parameter counts, MoE units, multi-head latent attention blocks, fp8
// recipes, explicit fwd_flops — counts 2·(active) params·tokens, plus
// attention 4·b·s²·h per block (2·b·s²·heads·(head_dim + the kernel's
// value width) when the block's dims are known), backward =
// 2× forward (+1 forward under full recompute), at peak·compute_efficiency
// (fp8 GEMMs at peak_fp8·compute_efficiency). Explicit per-layer times win.
func Costs(s *scenarios.Scenario) ([]LayerCost, error) {
	out, _, err := costsAndPlan(s)
	return out, err
}

// costsAndPlan is Costs and the per-operation plan it used (planCompute's, nil
// for other models), for ComputeClasses' class split.
func costsAndPlan(s *scenarios.Scenario) ([]LayerCost, []unitPlan, error) {
	eff, err := effectiveFLOPS(s)
	if err != nil {
		return nil, nil, err
	}
	eff8, err := effectiveFP8(s)
	if err != nil {
		return nil, nil, err
	}
	m := &s.Model
	b := s.Training.MicroBatch
	// Models without a sequence (mlp, generic) count one token per sample.
	tokens, err := units.Mul(b, max(m.SeqLen, 1))
	if err != nil {
		return nil, nil, fmt.Errorf("zero: tokens per micro-batch: %w", err)
	}
	plan, err := planCompute(s)
	if err != nil {
		return nil, nil, err
	}
	out := make([]LayerCost, len(m.LayerList))
	for i, l := range m.LayerList {
		c := LayerCost{Name: l.Name, Params: int64(l.Params)}
		if plan != nil && plan[i].ok && l.FwdFLOPs == 0 {
			u := plan[i]
			c.FwdFLOPs, c.BwdFLOPs, c.Fwd, c.Bwd = u.FwdFLOPs, u.BwdFLOPs, l.Fwd, l.Bwd
			for _, x := range []struct {
				d    *units.Duration
				secs float64
			}{{&c.Fwd, u.Fwd}, {&c.Bwd, u.Bwd}} {
				if *x.d != 0 {
					continue
				}
				if *x.d, err = seconds(x.secs); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %w (check cluster.peak_bf16, cluster.hbm_bandwidth and training.compute_efficiency)", l.Name, err)
				}
			}
			out[i] = c
			continue
		}
		// gemm is the FLOPs of the unit's weight matmuls, which an fp8
		// recipe runs at the fp8 peak; attention stays in bf16.
		var gemm int64
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
				gemm = f
			}
			if l.Block && m.Hidden > 0 && m.SeqLen > 0 {
				// Attention scores and weighted sum: 2 matmuls of b·s²·h, 2
				// FLOPs each; h is heads·head_dim when the block's dims are
				// known (Gemma 2: 16·256 ≠ 3584). With a value narrower
				// than the q·k width (multi-head latent attention), QKᵀ runs
				// at heads·head_dim and P·V at heads·(the value width the
				// kernel computes at, scenarios.BlockDims.KernelValueDim):
				// 2·b·s²·heads·(d_qk + d_v).
				att, err := mulChecked(4, b, m.SeqLen, m.SeqLen, m.Hidden)
				if x := l.Dims; x != nil && x.HeadDim > 0 {
					dv := x.KernelValueDim(s.Training.Attention == scenarios.AttentionFlash, x.HeadDim)
					var w int64
					if w, err = units.Add(x.HeadDim, dv); err == nil {
						att, err = mulChecked(2, b, m.SeqLen, m.SeqLen, x.Heads, w)
					}
				}
				if err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: attention FLOPs: %w", l.Name, err)
				}
				if f, err = units.Add(f, att); err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: FLOPs: %w", l.Name, err)
				}
			}
			c.FwdFLOPs = f
		}
		// Backward is 2× forward, 3× under full recompute (one more forward).
		mult := int64(2)
		if s.Training.Recompute == scenarios.RecomputeFull {
			mult = 3
		}
		bwd, err := units.Mul(c.FwdFLOPs, mult)
		if err != nil {
			return nil, nil, fmt.Errorf("zero: layer %q: backward FLOPs %d×%d do not fit in 64 bits (use fewer forward FLOPs per layer)", l.Name, mult, c.FwdFLOPs)
		}
		c.BwdFLOPs = bwd
		c.Fwd, c.Bwd = l.Fwd, l.Bwd
		for _, x := range []struct {
			d         *units.Duration
			flops, f8 int64
		}{{&c.Fwd, c.FwdFLOPs, gemm}, {&c.Bwd, c.BwdFLOPs, mult * gemm}} {
			if *x.d != 0 || x.flops == 0 {
				continue
			}
			d, err := units.CheckedMulDivCeil(x.flops-x.f8, int64(units.Second), eff)
			if err != nil {
				return nil, nil, fmt.Errorf("zero: layer %q: %d FLOPs at %d FLOP/s take longer than %v (check cluster.peak_bf16 and training.compute_efficiency)", l.Name, x.flops, eff, units.Duration(math.MaxInt64))
			}
			if x.f8 > 0 {
				d8, err := units.CheckedMulDivCeil(x.f8, int64(units.Second), eff8)
				if err == nil {
					d, err = units.Add(d, d8)
				}
				if err != nil {
					return nil, nil, fmt.Errorf("zero: layer %q: %d fp8 FLOPs at %d FLOP/s take longer than %v (check cluster.peak_fp8 and training.compute_efficiency)", l.Name, x.f8, eff8, units.Duration(math.MaxInt64))
				}
			}
			*x.d = units.Duration(d)
		}
		out[i] = c
	}
	return out, plan, nil
}

// mulChecked multiplies xs, reporting int64 overflow instead of wrapping.
func mulChecked(xs ...int64) (int64, error) {
	p := int64(1)
	for _, x := range xs {
		var err error
		if p, err = units.Mul(p, x); err != nil {
			return 0, err
		}
	}
	return p, nil
}

// efficiency is training.compute_efficiency; with training.mfu set it is
// fitted before any replay (fitMFU), and the default stands in until then.
func efficiency(s *scenarios.Scenario) float64 {
	if ce := s.Training.ComputeEfficiency; ce > 0 {
		return ce
	}
	return scenarios.DefaultComputeEfficiency
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

// effectiveFP8 is peak_fp8 × compute_efficiency when training.fp8 is on,
// else 0. The same efficiency applies to fp8 and bf16 GEMMs: an fp8 step is
// as well fed as a bf16 one, which overstates fp8 speedups where the casts
// and amax reductions (not modelled) cost time.
func effectiveFP8(s *scenarios.Scenario) (int64, error) {
	if s.Training.FP8 == scenarios.FP8None {
		return 0, nil
	}
	peak := int64(s.Cluster.PeakFP8)
	if peak <= 0 {
		return 0, fmt.Errorf("zero: training.fp8 %s needs cluster.peak_fp8 > 0", s.Training.FP8)
	}
	eff := math.Floor(float64(peak) * efficiency(s))
	if eff < 1 || eff > math.MaxInt64/2 {
		return 0, fmt.Errorf("zero: cluster.peak_fp8 × training.compute_efficiency = %g FLOP/s is out of range", eff)
	}
	return int64(eff), nil
}

// OptimizerTime is the time of the fp32 Adam step over elems elements of the
// rank's shard, limited by HBM bandwidth (OptimizerBytesPerElem per element,
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
