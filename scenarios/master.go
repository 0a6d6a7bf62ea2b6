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

// MasterBF16 is training.master_dtype: bf16, DeepSpeed's
// bf16.bf16_master_weights_and_grads (deepspeedai/DeepSpeed 39a682d79,
// PR #7700, first released in v0.18.3): the ZeRO optimizer keeps its master
// partition and the gradient it steps with in bf16 instead of fp32, and
// with bf16.bf16_optimizer_states (training.optimizer_state_dtype bf16)
// Adam's moments too. _configure_master_weights returns the master's dtype
// (deepspeed/runtime/base_optimizer.py lines 484-528 at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641); DeepSpeedConfig takes either
// key at ZeRO stages 1, 2 and 3 only (deepspeed/runtime/config.py
// _do_error_check), bf16_optimizer_states only beside
// bf16_master_weights_and_grads, and fp32 optimizer states beside a bf16
// master only under ZeRO-Offload with DeepSpeedCPUAdam
// (bf16_offload_validator: "Master weights feature requires ZeRO-3 Offload
// with DeepSpeedCPUAdam", stage3.py and stage_1_and_2.py at edaa7221).
//
// The master stays a separate copy of the bf16 partition, 2 bytes per
// element. stage_1_and_2.py clones it (weights_partition =
// ....detach().clone().to(device=self.device, dtype=...)); stage3.py's
// _create_fp32_partitions would reuse the 16-bit partition itself when
// "fp16_partitioned_groups_flat[i].dtype == master_weights_and_grads_dtype
// and fp16_partitioned_groups_flat[i].device == self.device", but
// self.device is the string get_accelerator().current_device_name()
// ('cuda:N', accelerator/cuda_accelerator.py) and a torch.device never
// equals a str (THPDevice_rc returns NotImplemented for a non-device,
// torch/csrc/Device.cpp), so it takes the else branch,
// .to(self.device, dtype=bf16).clone(): a copy. The DeepSpeedExamples
// training/bf16_master_weight README (516082c6) measures exactly that:
// 16.17 GB allocated for its 6.86B model on 4 GPUs, 10 bytes per element
// of the rank's 1.71e9 (bf16 params 2, grads 2, master 2, Adam m and v 2
// each) plus the logits and a constant ~0.15 GiB, where aliasing would
// give 8 bytes (12.97 GiB).
const MasterBF16 DType = BF16

// NoMaster reports whether the optimizer steps the param_dtype parameters
// with its states in their dtype (training.master_dtype: none).
func (t *Training) NoMaster() bool { return t.MasterDType == MasterNone }

// StateDType is the dtype of Adam's exp_avg and exp_avg_sq:
// training.optimizer_state_dtype, or when unset the master's (param_dtype
// under master_dtype none: torch.optim.AdamW's zeros_like(param), which
// MasterNone cites; bf16 beside a bf16 master: DeepSpeed's optimizers
// build their states as zeros_like of the master partition they step,
// deepspeed/ops/adam/fused_adam.py at edaa7221).
func (t *Training) StateDType() DType {
	switch {
	case t.OptimizerStateDType != "":
		return t.OptimizerStateDType
	case t.NoMaster():
		return t.ParamDType
	case t.MasterDType == MasterBF16:
		return BF16
	}
	return FP32
}

// deepSpeedBF16Master names where DeepSpeed supports a bf16 master, for
// the loader's messages.
const deepSpeedBF16Master = "bf16.bf16_master_weights_and_grads, DeepSpeed >= 0.18.3 (39a682d79)"

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
// fp32 copy or an fp32 gradient the optimizer steps with, master_dtype
// bf16 where DeepSpeed refuses it (MasterBF16), and an
// optimizer_state_dtype the master does not go with.
func (l *loader) resolveMaster(s *Scenario) *Error {
	t := &s.Training
	if err := l.resolveStateDType(s); err != nil {
		return err
	}
	if t.MasterDType == MasterBF16 {
		return l.resolveMasterBF16(s)
	}
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
		return l.errPath(key, "master_dtype none does not go with "+strings.Join(on, " and ")+": DeepSpeed's ZeRO-Offload always steps a separate master partition, fp32 or bf16 ("+deepSpeedBF16Master+") (use master_dtype: fp32 or bf16, or drop offload to keep master_dtype none)")
	case s.DeepSpeed():
		// DeepSpeed's ZeRO optimizers, offloaded or not, always step a
		// separate master partition (stage_1_and_2.py
		// single_partition_of_fp32_groups, stage3.py
		// fp32_partitioned_groups_flat at deepspeedai/DeepSpeed
		// edaa7221267243c7be7fb49c5d5f5c4fb97b4641; memory/offload.go):
		// fp32, or bf16 since 39a682d79 (MasterBF16, which says why
		// stage 3's aliasing branch is not taken on a GPU).
		// Scenario.DeepSpeed is the predicate no_sync's rule asks too, so
		// boundary deepspeed is DeepSpeed at every stage for both.
		return l.errPath(key, "master_dtype none does not go with DeepSpeed's ZeRO (stack deepspeed, boundary deepspeed or a ZeRO++ key): its optimizers always step a separate master partition, fp32 or bf16 ("+deepSpeedBF16Master+") (use master_dtype: fp32, or master_dtype: bf16 for DeepSpeed's bf16 master weights and optimizer states)")
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

// resolveStateDType refuses a training.optimizer_state_dtype the master
// does not go with (Training.StateDType).
func (l *loader) resolveStateDType(s *Scenario) *Error {
	t := &s.Training
	const key = "training.optimizer_state_dtype"
	st := t.OptimizerStateDType
	switch {
	case st == "":
		return nil
	case t.NoMaster() && st != t.ParamDType:
		return l.errPath(key, fmt.Sprintf("optimizer_state_dtype %s does not go with master_dtype none: the optimizer keeps its states in the parameters' dtype, %s (torch.optim.AdamW's zeros_like(param)) (delete the key, or use master_dtype: fp32 or bf16)", st, t.ParamDType))
	case t.MasterDType == FP32 && st != FP32:
		// DeepSpeedConfig: "bf16_optimizer_states requires
		// bf16_master_weights_and_grads to be enabled"
		// (deepspeed/runtime/config.py at edaa7221).
		return l.errPath(key, fmt.Sprintf("optimizer_state_dtype %s does not go with master_dtype fp32: %s optimizer states are DeepSpeed's bf16.bf16_optimizer_states, which requires bf16_master_weights_and_grads (set master_dtype: bf16, or delete the key)", st, st))
	case t.MasterDType == MasterBF16 && st != FP32 && st != BF16:
		return l.errPath(key, fmt.Sprintf("optimizer_state_dtype %s does not go with master_dtype bf16: DeepSpeed keeps the states of a bf16 master in bf16 (bf16.bf16_optimizer_states) or fp32 (use bf16 or fp32)", st))
	}
	return nil
}

// resolveMasterBF16 refuses master_dtype bf16 where DeepSpeed refuses
// bf16_master_weights_and_grads, or where zerosim has no source for it
// (MasterBF16 cites both).
func (l *loader) resolveMasterBF16(s *Scenario) *Error {
	t := &s.Training
	const key = "training.master_dtype"
	switch {
	case !s.DeepSpeed():
		return l.errPath(key, "master_dtype bf16 is DeepSpeed's "+deepSpeedBF16Master+", modelled under DeepSpeed's ZeRO only (set stack: deepspeed or communication.boundary: deepspeed, or use master_dtype: fp32 or none)")
	case t.ParamDType != BF16:
		return l.errPath(key, fmt.Sprintf("master_dtype bf16 does not go with param_dtype %s: DeepSpeed's bf16_master_weights_and_grads sits in its bf16 section, beside bf16 parameters (use param_dtype: bf16, or master_dtype: fp32)", t.ParamDType))
	case s.Parallelism.Stage == 0:
		return l.errPath(key, "master_dtype bf16 does not go with zero_stage 0: DeepSpeed takes bf16_master_weights_and_grads at ZeRO stages 1, 2 and 3 only (\"Bf16_master_weights_and_grads is only supported with ZeRO Stage 1, 2, or 3\", deepspeed/runtime/config.py) (use zero_stage 1, 2 or 3, or master_dtype: fp32)")
	case t.StateDType() == FP32 && s.Offload.Optimizer == OffloadNone:
		at := key
		if l.has("training.optimizer_state_dtype") {
			at = "training.optimizer_state_dtype"
		}
		return l.errPath(at, "master_dtype bf16 with optimizer_state_dtype fp32 needs offload.optimizer cpu or nvme: DeepSpeed keeps fp32 optimizer states beside a bf16 master only in ZeRO-Offload's DeepSpeedCPUAdam (\"Master weights feature requires ZeRO-3 Offload with DeepSpeedCPUAdam\", bf16_optimizer_states false; stage3.py at edaa7221) (set optimizer_state_dtype: bf16, or offload.optimizer: cpu)")
	case t.OptimizerImpl == OptimizerSeed:
		return l.errPath("training.optimizer_impl", "optimizer_impl seed is seed 000's fp32-master step, which master_dtype bf16 does not have (delete the key, or set fused, DeepSpeed's FusedAdam)")
	}
	for _, g := range s.Model.Groups {
		if g.Precision != BF16 {
			return l.errPath(key, fmt.Sprintf("master_dtype bf16 does not go with model group %q in %s: DeepSpeed's bf16 mode casts every parameter to bf16 (engine.py _configure_distributed_model at edaa7221) (give the group bf16, or use master_dtype: fp32)", g.Name, g.Precision))
		}
	}
	return nil
}

// resolveParamRemainders refuses training.store_param_remainders where
// neither optimizer that stores them runs. Both keep the rank's shard of
// the fp32 master as the bf16 parameter (its top 16 bits, rounded) and an
// int16 remainder (its low 16 bits), and Adam's exp_avg and exp_avg_sq in
// fp32:
//
//   - Apex's DistributedFusedAdam with store_params=False,
//     store_param_remainders=True: StateBucket allocates
//     param_remainders_shard as torch.int16 and exp_avg_shard and
//     exp_avg_sq_shard in the optimizer's dtype, fp32, and no params_shard;
//     it refuses the option unless dtype is fp32 and param_sync_dtype bf16
//     (apex/contrib/optimizers/distributed_fused_adam.py, StateBucket and
//     __init__, at NVIDIA/apex 6424da3b4faa6c8f062da4a48c424fff3f02d42d;
//     the option since 6f7d8ac3, 2022-08). DistAdamWithParamRemaindersFunctor
//     rebuilds the fp32 value from the two halves and splits it again after
//     the update (apex/contrib/csrc/optimizers/
//     multi_tensor_distopt_adam_kernel.cu). NeMo's distributed_fused_adam
//     (MegatronDistributedFusedAdam) turns it on by itself when the
//     optimizer's dtype is fp32 (its default) and the model's bf16
//     (megatron_amp_O2 with bf16), unless the config gives store_params or
//     sets model.fp8_params (MegatronBaseModel.setup_optimization,
//     nemo/collections/nlp/models/language_modeling/megatron_base_model.py
//     lines 853-862 at NVIDIA/NeMo 8cfedd7203462cb251a914e700e5605444277561,
//     since 456410d62c, 2022-10, NeMo 1.x).
//   - Transformer Engine's FusedAdam with master_weights=True,
//     master_weight_dtype fp32 and store_param_remainders=True: the
//     master_param state of a bf16 parameter is torch.int16
//     (_initialize_state; step's "store_param_remainders and p.dtype ==
//     torch.bfloat16", transformer_engine/pytorch/optimizers/fused_adam.py
//     at NVIDIA/TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b;
//     since e5369541e, TE 2.1). Megatron-Core passes it under
//     --use-precision-aware-optimizer (OptimizerConfig
//     store_param_remainders, default True, and main_params_dtype,
//     exp_avg_dtype and exp_avg_sq_dtype, default fp32), which it takes
//     with the distributed optimizer only: the optimizer steps the bf16
//     shard of the param buffer and keeps no shard_main_param of its own
//     (megatron/core/optimizer/optimizer_config.py,
//     megatron/core/optimizer/__init__.py and distrib_optimizer.py at
//     NVIDIA/Megatron-LM c550cf6c41c31cd3ec72e05c25ea0c979f2b6631,
//     core_v0.13.0, and at d98e8a64ddf34856e74b24714e3bedb2f5a39553; at
//     core_v0.11.0 and core_v0.12.0 it passed store_param_remainders=True
//     itself). NeMo 2's performance scripts turn the precision-aware
//     optimizer on for bf16 runs (set_precision_configs,
//     scripts/performance/helpers.py at NeMo 8cfedd72, since ab020f6a72,
//     NeMo 2.4).
//
// Both optimizers read the gradient in the dtype it has (Apex's grads
// bucket in grad_sync_dtype; TE's decoupled_grad, Megatron's main_grad
// shard, "shard_main_param.decoupled_grad = shard_model_grad" in
// _copy_model_grads_to_main_grads at d98e8a64): no fp32 copy of a 16-bit
// gradient for the step.
//
// zerosim models them as Megatron's distributed optimizer: stack megatron
// at zero_stage 1. fp8 primary weights are refused: NeMo stores a full
// fp32 master beside them (store_params=True under model.fp8_params,
// megatron_base_model.py line 854) and TE stores remainders for bf16
// parameters only.
func (l *loader) resolveParamRemainders(s *Scenario) *Error {
	t := &s.Training
	if !t.StoreParamRemainders {
		return nil
	}
	const key = "training.store_param_remainders"
	const what = "store_param_remainders keeps the fp32 master as the bf16 param and an int16 remainder (Apex's DistributedFusedAdam, NeMo's distributed_fused_adam; Transformer Engine's FusedAdam under Megatron-Core's --use-precision-aware-optimizer)"
	switch {
	case s.Stack != "megatron":
		return l.errPath(key, fmt.Sprintf("%s, modelled with Megatron's distributed optimizer, and stack is %q (set stack: megatron, or delete the key)", what, s.Stack))
	case s.Parallelism.Stage != 1:
		return l.errPath(key, fmt.Sprintf("%s, which Megatron-Core takes with the distributed optimizer only, and zero_stage is %d (set zero_stage: 1, or delete the key)", what, s.Parallelism.Stage))
	case t.ParamDType != BF16:
		return l.errPath(key, fmt.Sprintf("%s: the bf16 param is the master's top half, and param_dtype is %s (set param_dtype: bf16, or delete the key)", what, t.ParamDType))
	case t.MasterDType != FP32 || t.StateDType() != FP32:
		return l.errPath(key, fmt.Sprintf("%s beside an fp32 master and fp32 states (master_dtype %s, optimizer_state_dtype %s: delete the key)", what, t.MasterDType, t.StateDType()))
	case t.OptimizerImpl == OptimizerForeach || t.OptimizerImpl == OptimizerComposer:
		return l.errPath("training.optimizer_impl", fmt.Sprintf("optimizer_impl %s does not go with training.store_param_remainders: the remainders are Apex's and Transformer Engine's fused Adam kernels (delete optimizer_impl, or set fused)", t.OptimizerImpl))
	case t.FP8Params:
		return l.errPath(key, what+" for bf16 parameters only, and training.fp8_params makes the blocks fp8 (NeMo stores a full fp32 master beside fp8 params: delete one of the keys)")
	}
	return nil
}

// ParamRemainders reports whether the optimizer keeps the fp32 master of
// its bf16 parameters as int16 remainders (training.store_param_remainders):
// at zero_stage 1, Megatron's distributed optimizer, the only stage the
// loader takes it at (a stage comparison's other stages keep the whole
// fp32 master).
func (s *Scenario) ParamRemainders() bool {
	return s.Training.StoreParamRemainders && s.Training.ParamDType == BF16 && s.Parallelism.Stage == 1
}
