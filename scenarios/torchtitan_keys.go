package scenarios

import "strings"

// ttAllKeys is every key a torchtitan job config has had, from the first
// (torchtrain/config_manager.py at bec909be0, 2024-02-23) to
// TorchtitanCommit's (torchtitan/config/job_config.py): the union over the
// 191 commits up to TorchtitanCommit that change torchtrain/config_manager.py,
// torchtitan/config_manager.py or torchtitan/config/job_config.py, taken
// from the "--table.key" names of the argparse versions (to f6a9daa13e04's
// era) and from the fields of JobConfig's nested dataclasses since
// (recursing where a field's type is a dataclass, as _dict_to_dataclass
// does: torchtitan/config/manager.py lines 160-182 at TorchtitanCommit).
// A key outside it is one no torchtitan reads; since eadca48354fd (2025-08-28,
// "enforce existence of .toml args in JobConfig dataclasses")
// _dict_to_dataclass refuses it with ValueError("Invalid field names …").
var ttAllKeys = map[string]bool{}

// ttTables are the tables of ttAllKeys' keys (training, quantize.linear,
// quantize.linear.float8, …).
var ttTables = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
activation_checkpoint.debug activation_checkpoint.determinism_check activation_checkpoint.early_stop
activation_checkpoint.memory_budget activation_checkpoint.mode
activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns activation_checkpoint.preserve_rng_state
activation_checkpoint.selective_ac_option activation_checkpoint.visualize_memory_budget_pareto
checkpoint.async_mode checkpoint.create_seed_checkpoint checkpoint.enable checkpoint.enable_checkpoint
checkpoint.enable_first_step_checkpoint checkpoint.enable_ft_dataloader_checkpoints
checkpoint.exclude_from_loading checkpoint.export_dtype checkpoint.folder checkpoint.initial_load_in_hf
checkpoint.initial_load_in_hf_quantized checkpoint.initial_load_model_only
checkpoint.initial_load_model_weights_only checkpoint.initial_load_path checkpoint.interval
checkpoint.interval_type checkpoint.keep_latest_k checkpoint.last_save_in_hf
checkpoint.last_save_in_safetensors_format checkpoint.last_save_model_only
checkpoint.last_save_model_weights_only checkpoint.load_only checkpoint.load_step
checkpoint.model_weights_only
comm.init_timeout_seconds comm.mode comm.save_traces_file_prefix comm.save_traces_folder comm.timeout_seconds
comm.trace_buf_size comm.train_timeout_seconds
compile.backend compile.components compile.enable
debug.deterministic debug.deterministic_warn_only debug.moe_force_load_balance debug.seed
estimate.memory estimate.mode
experimental.context_parallel_degree experimental.context_parallel_rotate_method
experimental.custom_args_module experimental.custom_import experimental.custom_model_path
experimental.enable_async_tensor_parallel experimental.enable_compiled_autograd
experimental.pipeline_parallel_degree experimental.pipeline_parallel_microbatches
experimental.pipeline_parallel_schedule experimental.pipeline_parallel_schedule_csv
experimental.pipeline_parallel_split_mode experimental.pipeline_parallel_split_points experimental.torch_spmd
fault_tolerance.enable fault_tolerance.fragment_sync_delay fault_tolerance.fragment_update_alpha
fault_tolerance.group_size fault_tolerance.min_replica_size fault_tolerance.module_fqns_per_model_fragment
fault_tolerance.num_fragments fault_tolerance.process_group fault_tolerance.process_group_timeout_ms
fault_tolerance.replica_id fault_tolerance.semi_sync_method fault_tolerance.should_quantize
fault_tolerance.sync_steps
float8.emulate float8.enable_float8_linear float8.enable_fsdp_float8_all_gather float8.filter_fqns
float8.force_recompute_fp8_weight_in_bwd float8.moe_fqns_prototype
float8.precompute_float8_dynamic_scale_for_fsdp float8.recipe_name float8.scaling_type_grad_output
float8.scaling_type_input float8.scaling_type_weight
job.config_file job.custom_config_module job.description job.dump_folder job.print_args job.print_config
job.save_config_file job.save_config_folder job.use_for_integration_test
lr_scheduler.decay_ratio lr_scheduler.decay_type lr_scheduler.lr_min lr_scheduler.min_lr_factor
lr_scheduler.total_steps lr_scheduler.warmup_steps
memory_estimation.disable_fake_mode memory_estimation.enable memory_estimation.enabled
metrics.disable_color_printing metrics.disable_logging_from_checkpoint metrics.enable_color_printing
metrics.enable_tensorboard metrics.enable_wandb metrics.log_freq metrics.rank_0_only
metrics.save_for_all_ranks metrics.save_tb_folder
model.attn_mask_type model.converters model.flavor model.hf_assets_path model.name model.norm_type
model.print_after_conversion model.tokenizer_path model.use_flex_attn
mx.filter_fqns mx.moe_fqns_prototype mx.mxfp8_dim1_cast_kernel_choice mx.recipe_name
mx.use_fp8_dim1_cast_triton_kernel
optimizer.beta1 optimizer.beta2 optimizer.early_step_in_backward optimizer.eps optimizer.fused
optimizer.implementation optimizer.lr optimizer.name optimizer.weight_decay
parallelism.context_parallel_degree parallelism.context_parallel_load_balancer
parallelism.context_parallel_rotate_method parallelism.data_parallel_replicate_degree
parallelism.data_parallel_shard_degree parallelism.disable_loss_parallel
parallelism.enable_async_tensor_parallel parallelism.enable_compiled_autograd
parallelism.expert_parallel_comm_backend parallelism.expert_parallel_degree
parallelism.expert_tensor_parallel_degree parallelism.fsdp_reshard_after_forward
parallelism.module_fqns_per_model_part parallelism.pipeline_parallel_degree
parallelism.pipeline_parallel_expert_parallel_overlap parallelism.pipeline_parallel_first_stage_less_layers
parallelism.pipeline_parallel_last_stage_less_layers parallelism.pipeline_parallel_layers_per_stage
parallelism.pipeline_parallel_microbatch_size parallelism.pipeline_parallel_microbatches
parallelism.pipeline_parallel_schedule parallelism.pipeline_parallel_schedule_csv
parallelism.pipeline_parallel_split_points parallelism.tensor_parallel_degree
profiling.enable_memory_snapshot profiling.enable_profiling profiling.profile_every_x_iter
profiling.profile_freq profiling.profiler_active profiling.profiler_warmup profiling.run_profiler
profiling.save_memory_snapshot_folder profiling.save_traces_folder
quantize.dense.float8.emulate quantize.dense.float8.enable_fsdp_float8_all_gather
quantize.dense.float8.filter_fqns quantize.dense.float8.precompute_float8_dynamic_scale_for_fsdp
quantize.dense.float8.recipe_name quantize.dense.mx.filter_fqns
quantize.dense.mx.mxfp8_dim1_cast_kernel_choice quantize.dense.mx.recipe_name quantize.grouped_mm.float8.fqns
quantize.grouped_mm.mx.fqns quantize.grouped_mm.mx.recipe_name quantize.linear.float8.emulate
quantize.linear.float8.enable_fsdp_float8_all_gather quantize.linear.float8.filter_fqns
quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp quantize.linear.float8.recipe_name
quantize.linear.mx.filter_fqns quantize.linear.mx.mxfp8_dim1_cast_kernel_choice quantize.linear.mx.recipe_name
quantize.moe.float8.fqns quantize.moe.mx.fqns
training.batch_size training.checkpoint_folder training.checkpoint_interval training.checkpoint_interval_type
training.compile training.data_parallel_degree training.data_parallel_replicate_degree
training.data_parallel_shard_degree training.data_parallel_type training.dataloader.num_workers
training.dataloader.persistent_workers training.dataloader.pin_memory training.dataloader.prefetch_factor
training.dataset training.dataset_path training.debug_moe_force_load_balance training.deterministic
training.disable_loss_parallel training.dtype training.enable_cpu_offload training.enable_float8_linear
training.enable_fp8_linear training.enable_fsdp_float8_all_gather training.enable_fsdp_fp8_all_gather
training.enable_loss_parallel training.enable_selective_ac training.float8_scaling_type_grad_output
training.float8_scaling_type_input training.float8_scaling_type_weight training.fp8_linear
training.fsdp_reshard_after_forward training.gc_debug training.gc_freq training.global_batch_size
training.local_batch_size training.max_norm training.mixed_precision_param training.mixed_precision_reduce
training.pipeline_parallel_degree training.precompute_float8_dynamic_scale_for_fsdp training.seed
training.seq_len training.sequence_parallel_degree training.steps training.tensor_parallel_degree
training.warmup_pct training.warmup_steps
validation.dataloader.num_workers validation.dataloader.persistent_workers validation.dataloader.pin_memory
validation.dataloader.prefetch_factor validation.dataset validation.dataset_path validation.enable
validation.enabled validation.freq validation.local_batch_size validation.seq_len validation.steps
`) {
		ttAllKeys[k] = true
		for i := range len(k) {
			if k[i] == '.' {
				ttTables[k[:i]] = true
			}
		}
	}
}

// ttPreStrict are the keys of ttAllKeys that no torchtitan job config has
// from eadca48354fd (2025-08-28, "enforce existence of .toml args in
// JobConfig dataclasses") to TorchtitanCommit, each with the commit that
// removed it: found over the same 191 commits as ttAllKeys, a key in the
// config of the commit's parent and not of the commit, and in none after.
// A torchtitan from eadca48 on refuses such a key, so a file that gives
// one ran on an older torchtitan, which ignored keys it did not have
// (ttDoc.unknownKey).
var ttPreStrict = map[string]string{
	"checkpoint.enable_checkpoint":                      "cd337db63 (2025-08-22)",
	"checkpoint.initial_load_model_weights_only":        "beb29a1c7 (2025-07-20)",
	"checkpoint.interval_type":                          "031f73f8a (2025-02-27)",
	"checkpoint.last_save_in_safetensors_format":        "beb29a1c7 (2025-07-20)",
	"checkpoint.last_save_model_weights_only":           "beb29a1c7 (2025-07-20)",
	"checkpoint.model_weights_only":                     "cddd7dc80 (2025-06-13)",
	"comm.timeout_seconds":                              "9eb6a2162 (2024-03-15)",
	"estimate.memory":                                   "64d47fdaa (2024-07-01)",
	"estimate.mode":                                     "64d47fdaa (2024-07-01)",
	"experimental.context_parallel_degree":              "785c34c99 (2025-03-18)",
	"experimental.context_parallel_rotate_method":       "785c34c99 (2025-03-18)",
	"experimental.custom_model_path":                    "b315517d1 (2025-03-19)",
	"experimental.enable_async_tensor_parallel":         "785c34c99 (2025-03-18)",
	"experimental.enable_compiled_autograd":             "785c34c99 (2025-03-18)",
	"experimental.pipeline_parallel_degree":             "785c34c99 (2025-03-18)",
	"experimental.pipeline_parallel_microbatches":       "785c34c99 (2025-03-18)",
	"experimental.pipeline_parallel_schedule":           "785c34c99 (2025-03-18)",
	"experimental.pipeline_parallel_schedule_csv":       "785c34c99 (2025-03-18)",
	"experimental.pipeline_parallel_split_mode":         "b029b7396 (2024-08-22)",
	"experimental.pipeline_parallel_split_points":       "785c34c99 (2025-03-18)",
	"experimental.torch_spmd":                           "1923ce4db (2024-09-07)",
	"fault_tolerance.fragment_sync_delay":               "be211c823 (2025-08-05)",
	"fault_tolerance.fragment_update_alpha":             "be211c823 (2025-08-05)",
	"fault_tolerance.module_fqns_per_model_fragment":    "be211c823 (2025-08-05)",
	"fault_tolerance.num_fragments":                     "be211c823 (2025-08-05)",
	"fault_tolerance.should_quantize":                   "be211c823 (2025-08-05)",
	"fault_tolerance.sync_steps":                        "be211c823 (2025-08-05)",
	"float8.enable_float8_linear":                       "57387af0e (2025-02-15)",
	"float8.force_recompute_fp8_weight_in_bwd":          "1fefaee08 (2025-07-28)",
	"float8.scaling_type_grad_output":                   "2271b6386 (2025-01-31)",
	"float8.scaling_type_input":                         "2271b6386 (2025-01-31)",
	"float8.scaling_type_weight":                        "2271b6386 (2025-01-31)",
	"lr_scheduler.lr_min":                               "881f0ca46 (2025-07-31)",
	"memory_estimation.enabled":                         "08b8b244f (2025-08-20)",
	"metrics.disable_logging_from_checkpoint":           "99f73969e (2025-03-10)",
	"metrics.enable_color_printing":                     "f6a9daa13 (2024-12-20)",
	"metrics.rank_0_only":                               "7fe3620a1 (2025-03-19)",
	"model.attn_mask_type":                              "8c6bf93e5 (2025-04-17)",
	"model.norm_type":                                   "9cf88aa1a (2025-04-23)",
	"model.use_flex_attn":                               "8c6bf93e5 (2025-04-17)",
	"mx.use_fp8_dim1_cast_triton_kernel":                "f3e2a75e1 (2025-07-24)",
	"optimizer.fused":                                   "6e4988550 (2025-02-24)",
	"parallelism.pipeline_parallel_microbatches":        "5e2033c75 (2025-04-07)",
	"profiling.profile_every_x_iter":                    "c7d586592 (2024-04-15)",
	"profiling.run_profiler":                            "659621928 (2024-04-15)",
	"training.batch_size":                               "8570415c3 (2025-06-05)",
	"training.checkpoint_folder":                        "bb3919d2b (2024-04-04)",
	"training.checkpoint_interval":                      "bb3919d2b (2024-04-04)",
	"training.checkpoint_interval_type":                 "bb3919d2b (2024-04-04)",
	"training.compile":                                  "08b8b244f (2025-08-20)",
	"training.data_parallel_degree":                     "db6b39acd (2024-09-10)",
	"training.data_parallel_replicate_degree":           "785c34c99 (2025-03-18)",
	"training.data_parallel_shard_degree":               "785c34c99 (2025-03-18)",
	"training.data_parallel_type":                       "db6b39acd (2024-09-10)",
	"training.disable_loss_parallel":                    "785c34c99 (2025-03-18)",
	"training.enable_float8_linear":                     "40f79d79f (2024-07-30)",
	"training.enable_fp8_linear":                        "69fe8defc (2024-07-17)",
	"training.enable_fsdp_float8_all_gather":            "40f79d79f (2024-07-30)",
	"training.enable_fsdp_fp8_all_gather":               "69fe8defc (2024-07-17)",
	"training.enable_loss_parallel":                     "f6a9daa13 (2024-12-20)",
	"training.enable_selective_ac":                      "0d415d782 (2024-03-14)",
	"training.float8_scaling_type_grad_output":          "40f79d79f (2024-07-30)",
	"training.float8_scaling_type_input":                "40f79d79f (2024-07-30)",
	"training.float8_scaling_type_weight":               "40f79d79f (2024-07-30)",
	"training.fp8_linear":                               "a4b2ee3c0 (2024-07-16)",
	"training.fsdp_reshard_after_forward":               "785c34c99 (2025-03-18)",
	"training.pipeline_parallel_degree":                 "aafe0e870 (2024-05-21)",
	"training.precompute_float8_dynamic_scale_for_fsdp": "40f79d79f (2024-07-30)",
	"training.sequence_parallel_degree":                 "e28832e7c (2024-03-25)",
	"training.tensor_parallel_degree":                   "785c34c99 (2025-03-18)",
	"training.warmup_pct":                               "7acab70ab (2024-02-28)",
	"training.warmup_steps":                             "0da8901b1 (2025-03-11)",
	"validation.enabled":                                "cd337db63 (2025-08-22)",
}
