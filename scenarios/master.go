package scenarios

import (
	"fmt"
	"strings"
)

// MasterNone is training.master_dtype: none, pure 16-bit training: no fp32
// master copy, the optimizer steps the param_dtype parameters and keeps its
// states in their dtype. torch.optim.AdamW allocates exp_avg and exp_avg_sq
// as torch.zeros_like(param) (torch/optim/adamw.py init_state_per_param at
// pytorch/pytorch 002d2f0bb40cf08beb74bce80f52ce4f2eda46a0), so a model
// built in bf16 (KempnerForge's build_parallel_model:
// Transformer(model_config).to(device=device, dtype=param_dtype),
// kempnerforge/distributed/parallel.py at KempnerInstitute/KempnerForge
// 01b461a78f57a4d231bc995b528005be15b1b917, param_dtype bf16 from
// config/schema.py's mixed_precision = "bf16"; torchtitan's training.dtype
// = "bfloat16", job_config.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1:
// "all parameters, gradients, and optimizer states in bfloat16, without an
// extra copy of fp32 weights") holds 2 + 2 + 2 bytes of parameter and
// Adam state per parameter, plus its gradient, where mixed precision holds
// 2 + 4 + 4 + 4. Gradients reach the optimizer in the parameter's dtype
// (a tensor's .grad has its dtype): FSDP2 casts the reduce-scattered
// gradient back to the sharded parameter's dtype under a reduce_dtype fp32
// policy (foreach_reduce's _to_dtype_if_needed(reduce_output, orig_dtype),
// torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py at
// 010ae4a89516fa3be548ab16dff711414ec12d0b), whether the group reshards
// after forward (stage 3) or not (stage 2): post_backward runs the same
// foreach_reduce. FSDP1 does the same under every sharded strategy,
// SHARD_GRAD_OP (stage 2) as FULL_SHARD: _post_backward_hook casts the
// unsharded gradient to _reduce_dtype, reduce-scatters it and calls
// _cast_grad_to_param_dtype on the new sharded gradient, "so that the
// optimizer step runs with that dtype" (torch/distributed/fsdp/
// _runtime_utils.py at pytorch/pytorch
// 00ae0bc91ac2c1718d1baa193d9d299e2b82776c).
const MasterNone DType = "none"

// NoMaster reports whether the optimizer steps the param_dtype parameters
// with its states in their dtype (training.master_dtype: none).
func (t *Training) NoMaster() bool { return t.MasterDType == MasterNone }

// StepImpl is the implementation the optimizer step runs:
// training.optimizer_impl, except that under master_dtype none an unset one
// is foreach. Pure 16-bit training steps with torch.optim.AdamW as built,
// and AdamW with neither foreach nor fused given takes foreach on CUDA
// tensors: adamw() calls _default_to_fused_or_foreach(params,
// differentiable, use_fused=False), "we default to foreach and pass False
// to use_fused" (torch/optim/adamw.py), which returns foreach when every
// parameter is a plain tensor on a foreach-supported device, CUDA among
// them (torch/optim/optimizer.py _default_to_fused_or_foreach, both at
// pytorch/pytorch 002d2f0bb40cf08beb74bce80f52ce4f2eda46a0). Beside an
// fp32 master the unset implementation stays seed 000's accounting
// (OptimizerSeed).
func (t *Training) StepImpl() OptimizerImpl {
	if t.OptimizerImpl == "" && t.NoMaster() {
		return OptimizerForeach
	}
	return t.OptimizerImpl
}

// resolveMaster refuses master_dtype: none beside the settings that keep an
// fp32 copy or an fp32 gradient the optimizer steps with.
func (l *loader) resolveMaster(s *Scenario) *Error {
	t := &s.Training
	if !t.NoMaster() {
		return nil
	}
	const key = "training.master_dtype"
	if t.OptimizerImpl == OptimizerSeed {
		// seed is seed 000's step beside an fp32 master: cast the 16-bit
		// gradient, step the master, write the 16-bit parameters.
		return l.errPath("training.optimizer_impl", "optimizer_impl seed is seed 000's fp32-master step (cast the gradient to fp32, step the master, write the "+string(t.ParamDType)+" params), which master_dtype none does not have (delete the key for torch.optim.AdamW's default on CUDA, foreach, or set fused or composer)")
	}
	for _, g := range s.Model.Groups {
		if g.Precision == FP8 {
			return l.errPath(key, fmt.Sprintf("master_dtype none does not go with model group %q in fp8: fp8 weights are stepped through an fp32 master (use master_dtype: fp32, or give the group bf16)", g.Name))
		}
	}
	switch {
	case s.Offload.Any():
		// ZeRO-Offload is DeepSpeed's: its CPU optimizer steps the fp32
		// partition (stage_1_and_2.py, stage3.py at deepspeedai/DeepSpeed
		// edaa7221267243c7be7fb49c5d5f5c4fb97b4641); without offload the
		// GPU optimizer can step the 16-bit parameters.
		var on []string
		if s.Offload.Optimizer != OffloadNone {
			on = append(on, "offload.optimizer "+string(s.Offload.Optimizer))
		}
		if s.Offload.Params != OffloadNone {
			on = append(on, "offload.params "+string(s.Offload.Params))
		}
		return l.errPath(key, "master_dtype none does not go with "+strings.Join(on, " and ")+": DeepSpeed's ZeRO-Offload always steps an fp32 master partition (use master_dtype: fp32, or drop offload to keep master_dtype none)")
	case s.DeepSpeed():
		// DeepSpeed's ZeRO optimizers, offloaded or not, always step an
		// fp32 partition (stage_1_and_2.py single_partition_of_fp32_groups,
		// stage3.py fp32_partitioned_groups_flat at deepspeedai/DeepSpeed
		// edaa7221267243c7be7fb49c5d5f5c4fb97b4641; memory/offload.go).
		// Scenario.DeepSpeed is the predicate no_sync's rule asks too, so
		// boundary deepspeed is DeepSpeed at every stage for both.
		return l.errPath(key, "master_dtype none does not go with DeepSpeed's ZeRO (stack deepspeed, boundary deepspeed or a ZeRO++ key): its optimizers always step an fp32 master partition (use master_dtype: fp32)")
	case s.Stack == "megatron":
		// Megatron-LM's optimizers step fp32 main params (shard_main_param,
		// megatron/core/optimizer/distrib_optimizer.py at NVIDIA/Megatron-LM
		// d580efc68a9f0dbf1945f834f6f6200cd01d3343).
		return l.errPath(key, "master_dtype none does not go with stack megatron: Megatron-LM's optimizers step fp32 main params (use master_dtype: fp32)")
	case t.FP32Shard() && (s.Parallelism.Stage == 3 || s.Parallelism.Stage == 2 && s.Communication.Boundary.FSDP()):
		// FSDP keeps its fp32 shard at stage 3 and at its stage 2
		// (memory.FSDPStage2) alike.
		return l.errPath(key, "master_dtype none does not go with training.shard_dtype fp32: an fp32 shard is the optimizer's fp32 parameter (FSDP's mixed precision); pure "+string(t.ParamDType)+" training shards the "+string(t.ParamDType)+" parameters (set shard_dtype: "+string(t.ParamDType)+", or use master_dtype: fp32)")
	case t.FP32Reduce() && s.Parallelism.Stage < 3 && !(s.Parallelism.Stage == 2 && s.Communication.Boundary.FSDP()):
		// At stages 0 and 1, and at stage 2 without an FSDP boundary,
		// reduce_dtype fp32 is Megatron-LM's fp32 main_grad buffer
		// (grad_reduce_in_fp32; scenarios/stack.go, ReduceFP32), which its
		// fp32 main params step with: the optimizer reads an fp32
		// gradient. FSDP's stage 2 (FSDP1 SHARD_GRAD_OP, FSDP2
		// reshard_after_forward=False) reduces as its stage 3 does and
		// casts the reduced shard back to the parameter's dtype
		// (MasterNone cites both), so it is taken there.
		where := fmt.Sprintf("zero_stage %d", s.Parallelism.Stage)
		fix := "use reduce_dtype: param_dtype, or zero_stage 2 under communication.boundary fsdp1 or fsdp2, or zero_stage 3, where FSDP casts the fp32-reduced shard back to " + string(t.ParamDType)
		if s.Parallelism.Stage == 2 {
			where += " with communication.boundary " + string(s.Communication.Boundary)
			fix = "use reduce_dtype: param_dtype, or communication.boundary fsdp1 or fsdp2 (FSDP's SHARD_GRAD_OP, reshard_after_forward=False), which casts the fp32-reduced shard back to " + string(t.ParamDType)
		}
		return l.errPath(key, fmt.Sprintf("master_dtype none does not go with training.reduce_dtype fp32 at %s: there reduce_dtype fp32 is Megatron-LM's fp32 main_grad buffer (grad_reduce_in_fp32), the gradient its fp32 main params step with, and pure %s training has no fp32 master (%s)", where, t.ParamDType, fix))
	}
	return nil
}
