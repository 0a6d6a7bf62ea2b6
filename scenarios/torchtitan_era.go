package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Keys of torchtitan job configs that an early torchtitan read and a later
// one no longer had, each with the torchtitan commit that removed it from
// the config parser (torchtrain/config_manager.py, then
// torchtitan/config_manager.py). A file that gives one was written for a
// torchtitan before that commit, so for one before the later of them all
// in its list.
//
// ttPreDelPred: removed before e29b6b4d418a (2024-06-12, "del logits=(bs,
// seq_len, vocab_size) to save 3.9G memory"), where train.py began to
// delete pred before loss.backward(). Before it the loop holds the logits
// model.py returns, self.output(h).float(), through backward (train.py
// lines 290-292 and torchtitan/models/llama/model.py line 432 at
// 157a12c562288b3bccb077003a97f18a4ca657aa): keep_logits fp32.
var ttPreDelPred = map[string]string{
	"training.warmup_pct":               "7acab70ab (2024-02-28)",
	"training.enable_selective_ac":      "0d415d782 (2024-03-14)",
	"comm.timeout_seconds":              "9eb6a2162 (2024-03-15)",
	"training.sequence_parallel_degree": "e28832e7c (2024-03-25)",
	"training.checkpoint_folder":        "bb3919d2b (2024-04-04)",
	"training.checkpoint_interval":      "bb3919d2b (2024-04-04)",
	"training.checkpoint_interval_type": "bb3919d2b (2024-04-04)",
	"profiling.run_profiler":            "659621928 (2024-04-15)",
	"profiling.profile_every_x_iter":    "c7d586592 (2024-04-15)",
	"training.pipeline_parallel_degree": "aafe0e870 (2024-05-21)",
}

// ttPreExpandable: removed before a5e57e4a9 (2024-10-22, "Use expandable
// segments in run_llama_train.sh"), before which torchtitan's launcher set
// no PYTORCH_CUDA_ALLOC_CONF: PyTorch's default segments
// (memory.expandable_segments: false). ttPreDelPred's keys are older still.
var ttPreExpandable = map[string]string{
	"estimate.memory":                                   "64d47fdaa (2024-07-01)",
	"estimate.mode":                                     "64d47fdaa (2024-07-01)",
	"training.fp8_linear":                               "a4b2ee3c0 (2024-07-16)",
	"training.enable_fp8_linear":                        "69fe8defc (2024-07-17)",
	"training.enable_fsdp_fp8_all_gather":               "69fe8defc (2024-07-17)",
	"training.enable_float8_linear":                     "40f79d79f (2024-07-30)",
	"training.enable_fsdp_float8_all_gather":            "40f79d79f (2024-07-30)",
	"training.float8_scaling_type_input":                "40f79d79f (2024-07-30)",
	"training.float8_scaling_type_weight":               "40f79d79f (2024-07-30)",
	"training.float8_scaling_type_grad_output":          "40f79d79f (2024-07-30)",
	"training.precompute_float8_dynamic_scale_for_fsdp": "40f79d79f (2024-07-30)",
	"experimental.pipeline_parallel_split_mode":         "b029b7396 (2024-08-22)",
	"experimental.torch_spmd":                           "1923ce4db (2024-09-07)",
	"training.data_parallel_degree":                     "db6b39acd (2024-09-10)",
	"training.data_parallel_type":                       "db6b39acd (2024-09-10)",
}

// ttEraKey is the first key of keys (in sorted order) the file gives, with
// the commit that removed it; "" when it gives none.
func (d *ttDoc) ttEraKey(keys map[string]string) (key, removed string) {
	for _, k := range sortedKeys(keys) {
		if _, ok := d.get(k); ok {
			return k, keys[k]
		}
	}
	return "", ""
}

// readEra sets what an early torchtitan did that later ones do not, for a
// file whose keys date it (ttPreDelPred, ttPreExpandable): the logits held
// in fp32 through backward before e29b6b4, PyTorch's default segments
// before a5e57e4a9. The importer knows only that the file was written for
// a torchtitan older than the commit that removed its key; a file dated
// only before a5e57e4a9 may be newer than e29b6b4, so there keep_logits
// is left unset and a note says when to set it.
func (t *Torchtitan) readEra(d *ttDoc) {
	if k, by := d.ttEraKey(ttPreDelPred); k != "" {
		t.KeepLogits = KeepLogitsFP32
		t.src("keep_logits", k+" dates the file before e29b6b4: train.py holds pred, model.py's fp32 logits, through backward")
		t.note("%s was removed from torchtitan's config by %s, before e29b6b4 (2024-06-12) made train.py delete the logits before backward: written as training.keep_logits: fp32 (model.py returns self.output(h).float() and train.py keeps pred until the next step)", k, by)
	}
	k, by := d.ttEraKey(ttPreDelPred)
	if k == "" {
		k, by = d.ttEraKey(ttPreExpandable)
		if k != "" {
			t.note("%s was removed from torchtitan's config by %s: if your torchtitan is older than e29b6b4 (2024-06-12), its train.py holds the fp32 logits through backward (set training.keep_logits: fp32)", k, by)
		}
	}
	if v, ok := d.get("model.norm_type"); k == "" && ok && v == "compiled_rmsnorm" {
		// A value, not a key: create_norm took it from 3ff7fbb27
		// (2024-07-10, after e29b6b4) to 40210eada (2024-08-19, before
		// a5e57e4a9), so it dates the segments only.
		k = `model.norm_type = "compiled_rmsnorm"`
	}
	if k != "" {
		f := false
		t.ExpandableSegments = &f
		t.src("expandable_segments", k+" dates the file before a5e57e4a9: run_llama_train.sh sets no PYTORCH_CUDA_ALLOC_CONF")
		t.note("%s dates the file before a5e57e4a9 (2024-10-22), whose run_llama_train.sh first set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: written as memory.expandable_segments: false (PyTorch's default segments; set true if you launched with that variable)", k)
	}
}

// readNormType reads model.norm_type (torchtitan/models/norms.py
// create_norm, 34711655b to 37c4b8181): "fused_rmsnorm" is
// training.norm_impl: fused, except beside training.compile, which
// torchtitan refuses with it (parallelize_llama.py lines 71-76 at 9dec370ad26b)
// and where zerosim's compiled block keeps what the fused norm keeps;
// "compiled_rmsnorm" (3ff7fbb27, 2024-07-10, to 40210eada, 2024-08-19:
// RMSNorm(compile=True) runs torch.compile(self.compute_rmsnorm,
// fullgraph=True), the eager norm's code compiled alone) is written the
// same: AOTAutograd's partitioner keeps of it what it keeps of a compiled
// block's norm (memory's compiledRules: the graph input, the 16-bit x, and
// the rstd reduction; the upcast and normalized tensor recomputed), which
// is what the fused kernel saves; "layernorm" and "np_layernorm" are noted
// as modelled by RMSNorm.
func (t *Torchtitan) readNormType(d *ttDoc) {
	v, ok := d.get("model.norm_type")
	if !ok || v == "rmsnorm" {
		return
	}
	if v != "fused_rmsnorm" && v != "compiled_rmsnorm" {
		t.note("model.norm_type = %s modelled as RMSNorm (llama's h parameters per norm)", ttShow(v))
		return
	}
	if t.Compile.Blocks() {
		if v == "compiled_rmsnorm" {
			t.note("model.norm_type = \"compiled_rmsnorm\" under training.compile: written as the compiled blocks' norms (the same torch.compile of the same code, which keeps each norm's 16-bit input and fp32 rstd)")
			return
		}
		t.note("model.norm_type = \"fused_rmsnorm\" under training.compile: written as the compiled blocks' norms, which keep what the fused kernel keeps (each norm's 16-bit input and fp32 rstd); torchtitan refuses the pair from 9dec370 (parallelize_llama.py lines 71-76)")
		return
	}
	t.NormImpl = NormFused
	t.src("norm_impl", "model.norm_type = "+strconv.Quote(v.(string)))
	if v == "compiled_rmsnorm" {
		t.note("model.norm_type = \"compiled_rmsnorm\" (torch.compile of the eager RMSNorm alone, norms.py at 3ff7fbb27; removed by 40210eada, 2024-08-19) written as training.norm_impl: fused, the fused kernel's saved tensors, which are what torch.compile's partitioner keeps of a norm (as in zerosim's compiled blocks): each norm's 16-bit input and the fp32 rstd (2·t·h + 4·t for t tokens), not the eager norm's fp32 input, rstd and normalized tensor (6·t·h + 4·t): 8·t·h less activation memory per block; timed as one kernel each way")
		return
	}
	t.note("model.norm_type = \"fused_rmsnorm\" written as training.norm_impl: fused (torchtitan's Triton kernel, norms.py at 157a12c56): each norm keeps its 16-bit input and the fp32 rstd (2·t·h + 4·t for t tokens), not the eager norm's fp32 input, rstd and normalized tensor (6·t·h + 4·t): 8·t·h less activation memory per block")
}

// Keys that date a job config against torchtitan's choice of cuDNN's
// attention and its op policy's save list. torchtitan's
// ScaledDotProductAttention ran SDPA under sdpa_kernel with
// CUDNN_ATTENTION first on compute capability 10.0 and up from 3b85aa3
// (3b85aa31fffc46ecbf785a57ee314a01614f572f, 2025-05-14, "Use cudnn
// backend on B200": if has_cuda_capability(10, 0), torchtitan/models/
// attention.py lines 210-211 at 6fc499f6f5b32151a799188be2208cfb09faed30)
// and on every GPU from 6a3a9da9564d82a1120c7639ef6236bb4cffa049
// (2025-10-09: ScaledDotProductAttentionWrapper's sdpa_backends
// [CUDNN_ATTENTION, FLASH_ATTENTION, EFFICIENT_ATTENTION], attention.py
// lines 86-93 there); its op policy's _save_list held
// _scaled_dot_product_cudnn_attention only from
// b39377f9fe33865fefb9bf64a33f6d74a598be87 (2025-12-01, "add all SDPA
// backends to op_sac_save_list"; before it torchtitan/models/llama3/infra/
// parallelize.py lines 234-243 at 6fc499f6f held aten.mm, SDPA's
// efficient and flash ops, reduce_scatter_tensor and aten.max).
// readCuDNNEra applies them.

// ttAfterCuDNNB200 are keys torchtitan's config gained after 3b85aa3 and
// before 25413d2 (found by comparing JobConfig's fields at 3b85aa3's
// config_manager.py and 25413d2's parent's config/job_config.py, each
// key's commit by git log -S): a file that gives one is of 3b85aa3 or
// later.
var ttAfterCuDNNB200 = map[string]string{
	"training.gc_debug":                       "f8f545c45 (2025-05-28)",
	"float8.emulate":                          "594a120ad (2025-05-28)",
	"training.local_batch_size":               "8570415c3 (2025-06-05)",
	"training.global_batch_size":              "8570415c3 (2025-06-05)",
	"optimizer.beta1":                         "7c8301aea (2025-06-11)",
	"optimizer.beta2":                         "7c8301aea (2025-06-11)",
	"optimizer.weight_decay":                  "7c8301aea (2025-06-11)",
	"checkpoint.initial_load_path":            "cddd7dc80 (2025-06-13)",
	"checkpoint.enable_first_step_checkpoint": "f4048f8e1 (2025-06-17)",
	"float8.moe_fqns_prototype":               "5990fa301 (2025-06-27)",
	"mx.moe_fqns_prototype":                   "5990fa301 (2025-06-27)",
	"parallelism.expert_parallel_degree":      "01f4e5022 (2025-07-08)",
	"activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns": "9a8cb98f1 (2025-07-16)",
	"checkpoint.initial_load_model_only":                                 "beb29a1c7 (2025-07-20)",
	"checkpoint.last_save_in_hf":                                         "beb29a1c7 (2025-07-20)",
	"checkpoint.last_save_model_only":                                    "beb29a1c7 (2025-07-20)",
	"mx.mxfp8_dim1_cast_kernel_choice":                                   "f3e2a75e1 (2025-07-24)",
	"checkpoint.initial_load_in_hf":                                      "a44dff1a4 (2025-07-28)",
	"parallelism.module_fqns_per_model_part":                             "3c84ce095 (2025-07-30)",
	"parallelism.pipeline_parallel_first_stage_less_layers":              "3c84ce095 (2025-07-30)",
	"parallelism.pipeline_parallel_last_stage_less_layers":               "3c84ce095 (2025-07-30)",
	"lr_scheduler.min_lr_factor":                                         "881f0ca46 (2025-07-31)",
	"model.hf_assets_path":                                               "fd5a87fa6 (2025-08-11)",
	"parallelism.expert_tensor_parallel_degree":                          "aeb3a4baf (2025-08-13)",
}

// ttPreCuDNNAll are keys torchtitan's config lost after 25413d2 and before
// 6a3a9da: a file that gives one is older than 6a3a9da, so cuDNN's
// attention ran on compute capability 10.0 and up only. The [float8] and
// [mx] tables became [quantize.*] at 5b5d468 (2025-09-26).
var ttPreCuDNNAll = map[string]string{
	"job.use_for_integration_test":                    "accc7027f (2025-08-30)",
	"float8.emulate":                                  "5b5d46856 (2025-09-26)",
	"float8.enable_fsdp_float8_all_gather":            "5b5d46856 (2025-09-26)",
	"float8.filter_fqns":                              "5b5d46856 (2025-09-26)",
	"float8.moe_fqns_prototype":                       "5b5d46856 (2025-09-26)",
	"float8.precompute_float8_dynamic_scale_for_fsdp": "5b5d46856 (2025-09-26)",
	"float8.recipe_name":                              "5b5d46856 (2025-09-26)",
	"mx.filter_fqns":                                  "5b5d46856 (2025-09-26)",
	"mx.moe_fqns_prototype":                           "5b5d46856 (2025-09-26)",
	"mx.mxfp8_dim1_cast_kernel_choice":                "5b5d46856 (2025-09-26)",
	"mx.recipe_name":                                  "5b5d46856 (2025-09-26)",
}

// ttPreCuDNNSaved are keys torchtitan's config lost after 6a3a9da and
// before b39377f: a file that gives one (or one of ttPreCuDNNAll's, or
// that is older than 25413d2) is older than b39377f, whose op policy did
// not save cuDNN's attention.
var ttPreCuDNNSaved = map[string]string{
	"parallelism.pipeline_parallel_split_points": "6e06a49cd (2025-10-13)",
	"job.print_args":                       "7c1048075 (2025-10-14)",
	"parallelism.enable_compiled_autograd": "8228c0845 (2025-10-28)",
	"training.seed":                        "e61f2cce4 (2025-10-29)",
	"training.deterministic":               "e61f2cce4 (2025-10-29)",
}

// ttCuDNNGPUs are the presets zerosim runs cuDNN's attention on,
// gqaAttention and readCuDNNEra alike: the NVIDIA data-centre GPUs from
// the A100 on. Of them, those of compute capability 10.0 and up (sm100,
// sm103) are BlackwellGPU's.
var ttCuDNNGPUs = []string{"A100-40GB", "A100-80GB", "A800-80GB", "H100-80GB", "H100-PCIe", "H200", "GH200-96GB", "B200", "GB200", "B300", "GB300"}

// ttModelAfterCuDNNB200 are the Hugging Face-path models whose train spec
// torchtitan registered after 3b85aa3, with the commit that registered it
// (register_train_spec(name=...) in the model's __init__.py there): a file
// naming one is of 3b85aa3 or later whatever its keys. qwen3 came in as
// torchtitan/experiments/qwen3 (f9e8897a6, 2025-08-18); deepseek_v3 as
// torchtitan/models/deepseek_v3 (d54d05a5f, 2025-07-11; the experiment
// before it registered "deepseek3"). llama4 (torchtitan/experiments/llama4,
// e4e48349c, 2025-04-07) is older than 3b85aa3, and every gpt_oss flavor
// runs FlexAttention.
var ttModelAfterCuDNNB200 = map[string]string{
	"qwen3":       "f9e8897a6 (2025-08-18)",
	"deepseek_v3": "d54d05a5f (2025-07-11)",
}

// readCuDNNEra sets the attention kernel and the op policy's treatment of
// it for a file the keys date before b39377f (preSaved), which
// gqaAttention leaves to the stack preset's sdpa (repeat_kv before
// ff0829c): on a Blackwell preset, for a file dated from 3b85aa3 on
// (ttAfterCuDNNB200, or a model ttModelAfterCuDNNB200 names),
// attention_kernel cudnn, and under recompute: op op_recompute_attention,
// the _save_list of its era lacking cuDNN's op. A file it cannot date so
// is noted. The Hugging Face-path models of that window that attend
// through SDPA ran the same wrapper as llama3: qwen3's Attention built
// self.sdpa = build_attention(model_args.use_flex_attn,
// model_args.attn_mask_type) (torchtitan/experiments/qwen3/model/model.py
// line 178 at f9e8897a6f09fbe932e4b1a4df9fc23ca08c2b5e), deepseek_v3's
// and llama4's the same (torchtitan/models/deepseek_v3/model/model.py line
// 178, torchtitan/experiments/llama4/model/model.py line 195, at
// abbb47aa6129d4ef55bc63905786ef2ca4483bb0, 6a3a9da's parent) and, from
// 6a3a9da, ScaledDotProductAttentionWrapper (torchtitan/models/{qwen3,
// deepseek_v3,llama4}/model/model.py at befb7aed3e9604dcb0d05404a1b22952557ccc9e,
// b39377f's parent); each kept its own _op_sac_save_list, which b39377f
// gave cuDNN's attention (torchtitan/models/{qwen3,deepseek_v3,llama4}/
// infra/parallelize.py, b39377f's diff).
// A flavor on FlexAttention (t.flexAttn, or t.Attention set by its
// flavor, as deepseek_v3's SDPA before f738a03bf is, whose heads SDPA
// ran on the memory-efficient kernel alone) is left alone. A file no key dates before b39377f is read as
// TorchtitanCommit's (gqaAttention: its list saves cuDNN's attention),
// with a note under the op policy.
func (t *Torchtitan) readCuDNNEra(d *ttDoc) {
	gpu := t.Cluster.GPU
	if d.preSaved == "" {
		if t.AttentionKernel == KernelCuDNN && t.Recompute == RecomputeOp {
			t.note("op policy with cuDNN's attention read as torchtitan %s's, whose _save_list keeps the attention's output (b39377f, 2025-12-01, added _scaled_dot_product_cudnn_attention to it): a torchtitan from 6a3a9da (2025-10-09; on Blackwell from 3b85aa3) to b39377f kept neither the output nor the log-sum-exp and reran the attention's forward in backward (set training.op_recompute_attention: true if yours is one)", TorchtitanCommit[:7])
		}
		return
	}
	if t.Attention != "" || t.flexAttn {
		return
	}
	after, by := d.ttEraKey(ttAfterCuDNNB200)
	if added, ok := ttModelAfterCuDNNB200[t.ModelName]; ok && after == "" {
		after, by = "model.name = "+strconv.Quote(t.ModelName), added
	}
	op := ""
	if t.Recompute == RecomputeOp {
		op = ", and training.op_recompute_attention: true under recompute: op"
	}
	switch {
	case BlackwellGPU(gpu) && after != "":
		t.AttentionKernel = KernelCuDNN
		t.src("attention_kernel", after+" dates the file from 3b85aa3 (2025-05-14) on: attention.py asks SDPA for cuDNN first on compute capability 10.0 and up")
		msg := fmt.Sprintf("%s, which torchtitan added by %s, dates the file from torchtitan 3b85aa3 (2025-05-14) on, whose ScaledDotProductAttention asks SDPA for cuDNN's attention first on compute capability 10.0 and up (%s): written as training.attention_kernel: cudnn", after, by, gpu)
		if t.Recompute == RecomputeOp {
			t.OpRecomputeAttention = true
			t.src("op_recompute_attention", d.preSaved+" dates the file before b39377f (2025-12-01): its op policy's _save_list lacks _scaled_dot_product_cudnn_attention")
			msg += fmt.Sprintf("; %s dates it before b39377f (2025-12-01), whose op policy first saved cuDNN's attention: written as training.op_recompute_attention: true (the attention's output and log-sum-exp are not kept, its forward reruns in backward)", d.preSaved)
		}
		t.note("%s", msg)
	case BlackwellGPU(gpu):
		t.note("torchtitan from 3b85aa3 (2025-05-14) asks SDPA for cuDNN's attention first on %s, and no key of the file dates it that recent: the kernel stays fa2 (if yours is, set training.attention_kernel: cudnn%s)", gpu, op)
	case slices.Contains(ttCuDNNGPUs, gpu) && d.preAll == "":
		t.note("torchtitan from 6a3a9da (2025-10-09) asks SDPA for cuDNN's attention first on every GPU, and %s dates the file before b39377f but not before 6a3a9da: the kernel stays fa2 (if yours is 6a3a9da or later, set training.attention_kernel: cudnn%s)", d.preSaved, op)
	}
}

// ttPreDSV3Flex are keys torchtitan's config lost after d54d05a5f
// (2025-07-11), which registered deepseek_v3, and by f738a03bf
// (2025-08-22), which moved its 16B, 236B and 671B flavors from SDPA to
// FlexAttention (ttDSV3Flex), found by comparing JobConfig's fields at
// d54d05a5f's torchtitan/config_manager.py and f738a03bf's
// torchtitan/config/job_config.py, each key's commit by git log -S (none
// of them is in 238fa99's JobConfig again); and training.batch_size,
// renamed before d54d05a5f. A file that gives one is older than
// f738a03bf, and so than 25413d2 (ttDoc.preEarlyKey).
var ttPreDSV3Flex = map[string]string{
	"training.batch_size":                        "8570415c3 (2025-06-05)",
	"checkpoint.initial_load_model_weights_only": "beb29a1c7 (2025-07-20)",
	"checkpoint.last_save_model_weights_only":    "beb29a1c7 (2025-07-20)",
	"mx.use_fp8_dim1_cast_triton_kernel":         "f3e2a75e1 (2025-07-24)",
	"float8.force_recompute_fp8_weight_in_bwd":   "1fefaee08 (2025-07-28)",
	"lr_scheduler.lr_min":                        "881f0ca46 (2025-07-31)",
	"fault_tolerance.fragment_sync_delay":        "be211c823 (2025-08-05)",
	"fault_tolerance.fragment_update_alpha":      "be211c823 (2025-08-05)",
	"fault_tolerance.should_quantize":            "be211c823 (2025-08-05)",
	"fault_tolerance.sync_steps":                 "be211c823 (2025-08-05)",
	"memory_estimation.enabled":                  "08b8b244f (2025-08-20)",
	"training.compile":                           "08b8b244f (2025-08-20)",
}

// preFlexDSV3 is the key that dates the file before ttDSV3Flex, with the
// commit that removed it (ttPreDSV3Flex), or the first key of an older
// schema (ttDoc.old: before 785c34c, 2025-03-18); "" when none does.
func (d *ttDoc) preFlexDSV3() (key, removed string) {
	if k, by := d.ttEraKey(ttPreDSV3Flex); k != "" {
		return k, "removed from torchtitan's config by " + by
	}
	if d.old {
		return d.preEarlyKey, "a key of torchtitan's config before 785c34c (2025-03-18)"
	}
	return "", ""
}

// ttAfterA2ASave are keys torchtitan's config gained after c4e2291155a4
// (2025-09-06, "Save _to_copy and a2a in selective AC policy",
// pytorch/torchtitan#1672), which added
// torch.ops._c10d_functional.all_to_all_single.default to deepseek_v3's
// and llama4's _save_list and no key: a file that gives one ran a
// torchtitan whose op policy keeps the expert-parallel all-to-alls'
// outputs (Training.OpSaveAllToAll). Each is a key of TorchtitanCommit's
// JobConfig absent from every JobConfig up to c4e2291 (the fields of
// torchtitan/config/job_config.py at each commit of its history, nested
// dataclasses recursed), with the first commit after c4e2291 whose
// JobConfig has it. The [float8] and [mx] keys that became
// [quantize.linear.*] are listed under their new names only.
var ttAfterA2ASave = map[string]string{
	"comm.save_traces_file_prefix":                                    "0f34257d9 (2025-09-23)",
	"training.dtype":                                                  "e99e16c91 (2025-09-16)",
	"quantize.linear.float8.emulate":                                  "8a2686c4a (2025-09-30)",
	"quantize.linear.float8.enable_fsdp_float8_all_gather":            "8a2686c4a (2025-09-30)",
	"quantize.linear.float8.filter_fqns":                              "8a2686c4a (2025-09-30)",
	"quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp": "8a2686c4a (2025-09-30)",
	"quantize.linear.float8.recipe_name":                              "8a2686c4a (2025-09-30)",
	"quantize.linear.mx.filter_fqns":                                  "8a2686c4a (2025-09-30)",
	"quantize.linear.mx.mxfp8_dim1_cast_kernel_choice":                "8a2686c4a (2025-09-30)",
	"quantize.linear.mx.recipe_name":                                  "8a2686c4a (2025-09-30)",
	"quantize.grouped_mm.float8.fqns":                                 "8a2686c4a (2025-09-30)",
	"quantize.grouped_mm.mx.fqns":                                     "8a2686c4a (2025-09-30)",
	"quantize.grouped_mm.mx.recipe_name":                              "8a2686c4a (2025-09-30)",
	"compile.backend":                                                 "177b050ca (2025-10-02)",
	"checkpoint.load_only":                                            "eb13ba222 (2025-10-05)",
	"checkpoint.initial_load_in_hf_quantized":                         "a6f0cfc39 (2025-10-08)",
	"profiling.profiler_active":                                       "21739fdcf (2025-10-08)",
	"profiling.profiler_warmup":                                       "21739fdcf (2025-10-08)",
	"activation_checkpoint.memory_budget":                             "b27638732 (2025-10-09)",
	"activation_checkpoint.visualize_memory_budget_pareto":            "b27638732 (2025-10-09)",
	"checkpoint.enable_ft_dataloader_checkpoints":                     "a82b77ad8 (2025-10-12)",
	"job.custom_config_module":                                        "7c1048075 (2025-10-14)",
	"job.print_config":                                                "7c1048075 (2025-10-14)",
	"job.save_config_file":                                            "7b96efc8e (2025-10-21)",
	"activation_checkpoint.debug":                                     "e61f2cce4 (2025-10-29)",
	"activation_checkpoint.determinism_check":                         "e61f2cce4 (2025-10-29)",
	"activation_checkpoint.preserve_rng_state":                        "e61f2cce4 (2025-10-29)",
	"debug.deterministic":                                             "e61f2cce4 (2025-10-29)",
	"debug.deterministic_warn_only":                                   "e61f2cce4 (2025-10-29)",
	"debug.moe_force_load_balance":                                    "e61f2cce4 (2025-10-29)",
	"debug.seed":                                                      "e61f2cce4 (2025-10-29)",
	"comm.mode":                                                       "d0393b37a (2025-11-25)",
	"parallelism.pipeline_parallel_expert_parallel_overlap":           "fcc5643f4 (2025-12-12)",
	"parallelism.expert_parallel_comm_backend":                        "36a4b6942 (2025-12-17)",
	"training.dataloader.num_workers":                                 "658f94cb9 (2025-12-18)",
	"training.dataloader.persistent_workers":                          "658f94cb9 (2025-12-18)",
	"training.dataloader.pin_memory":                                  "658f94cb9 (2025-12-18)",
	"training.dataloader.prefetch_factor":                             "658f94cb9 (2025-12-18)",
	"validation.dataloader.num_workers":                               "658f94cb9 (2025-12-18)",
	"validation.dataloader.persistent_workers":                        "658f94cb9 (2025-12-18)",
	"validation.dataloader.pin_memory":                                "658f94cb9 (2025-12-18)",
	"validation.dataloader.prefetch_factor":                           "658f94cb9 (2025-12-18)",
	"parallelism.context_parallel_load_balancer":                      "0a2107f98 (2026-01-20)",
	"lr_scheduler.total_steps":                                        "40b54e47f (2026-02-06)",
}

// ttModelA2ASaved are the MoE models whose op policy kept the all-to-alls
// from the commit given on (Training.OpSaveAllToAll): deepseek_v3 and
// llama4 from c4e2291 (their _save_list, c4e2291's diff), gpt_oss from its
// first commit, de335b321 (2025-10-22: torchtitan/experiments/gpt_oss/
// infra/parallelize.py line 40 there), so a file naming it is that recent.
// qwen3's _save_list has no all_to_all_single up to TorchtitanCommit
// (torchtitan/models/qwen3/infra/parallelize.py at 238fa9953e4a; the
// centralized policy of 114151ad4, 2026-03-23, gave it one).
var ttModelA2ASaved = map[string]string{
	"deepseek_v3": "c4e2291",
	"llama4":      "c4e2291",
	"gpt_oss":     "de335b321 (2025-10-22)",
}

// readA2AEra sets training.op_save_all_to_all for an MoE file under the op
// policy with expert parallelism: true where the file's keys
// (ttAfterA2ASave) or its model (gpt_oss) date it after c4e2291; false,
// noted, where they date it before 25413d2 (ttDoc.preEarlyKey); a file
// they cannot date keeps false, the rerun of every torchtitan before
// c4e2291, with a note saying how to set it (c4e2291 added no key, so a
// file of either side of it may read the same).
func (t *Torchtitan) readA2AEra(d *ttDoc) {
	since, ok := ttModelA2ASaved[t.ModelName]
	if !ok || t.Recompute != RecomputeOp || t.EP <= 1 {
		return
	}
	key, by := d.ttEraKey(ttAfterA2ASave)
	if t.ModelName == "gpt_oss" && key == "" {
		key, by = "model.name = "+strconv.Quote(t.ModelName), since
	}
	if d.preEarlyKey != "" {
		t.note("op policy with expert parallelism: %s dates the file before torchtitan 25413d2 (2025-08-29), so before c4e2291 (2025-09-06), whose _save_list first kept the all-to-alls' outputs: they rerun in backward (training.op_save_all_to_all false)", d.preEarlyKey)
		return
	}
	if key != "" {
		t.OpSaveAllToAll = true
		t.src("op_save_all_to_all", key+" (torchtitan "+by+") dates the file after c4e2291 (2025-09-06), whose _save_list keeps _c10d_functional.all_to_all_single")
		return
	}
	t.note("op policy with expert parallelism: torchtitan from c4e2291 (2025-09-06; gpt_oss from its first commit) keeps the all-to-alls' outputs (_c10d_functional.all_to_all_single in %s's _save_list), and no key of the file dates it that recent: written as op_save_all_to_all false, the dispatch and combine rerun in backward as before c4e2291 (set training.op_save_all_to_all: true if yours is c4e2291 or later)", t.ModelName)
}

// Keys that date a job config against torchtitan's op policy keeping
// aten.abs: its _save_list held torch.ops.aten.abs.default from
// 87e2c09c45c138c46f52ab624969fb7bf20bf92b (2024-11-26, #704, fixing
// bcebc0de5's commented-out line) to
// 88247277c6b91b3490838dff08b0649c64c62e08 (2025-02-06, #820, "Remove abs
// from save list"), torchtitan/parallelisms/parallelize_llama.py lines
// 234-243 and 214-223 (Training.OpSaveAbs). Found by comparing the
// "--section.key" options of torchtitan/config_manager.py at every commit
// that changed it from 2024-10 to 2025-04. Neither commit added or removed
// a key, and torchtitan's own llama3_8b.toml of the window gives none of
// these: a file they cannot date is read as TorchtitanCommit's (false),
// with a note.

// ttAbsAdded are keys added after 87e2c09c4 and before 88247277c: a file
// that gives one is newer than 87e2c09c4.
var ttAbsAdded = map[string]string{
	"metrics.enable_wandb":                        "6a6f755d2 (2024-12-03)",
	"checkpoint.load_step":                        "afa82294f (2024-12-05)",
	"optimizer.early_step_in_backward":            "2735ceddb (2024-12-09)",
	"training.deterministic":                      "05a8b5e4c (2024-12-09)",
	"experimental.context_parallel_rotate_method": "c97876e7d (2024-12-11)",
	"job.print_args":                              "f6a9daa13 (2024-12-23)",
	"metrics.disable_color_printing":              "f6a9daa13 (2024-12-23)",
	"training.disable_loss_parallel":              "f6a9daa13 (2024-12-23)",
}

// ttAbsRemoved are keys removed after 87e2c09c4 and before 88247277c: a
// file that gives one is older than 88247277c.
var ttAbsRemoved = map[string]string{
	"metrics.enable_color_printing":   "f6a9daa13 (2024-12-23)",
	"training.enable_loss_parallel":   "f6a9daa13 (2024-12-23)",
	"float8.scaling_type_input":       "2271b6386 (2025-01-31)",
	"float8.scaling_type_weight":      "2271b6386 (2025-01-31)",
	"float8.scaling_type_grad_output": "2271b6386 (2025-01-31)",
}

// ttAbsDropped are keys added from 88247277c to 785c34c (2025-03-18),
// whose schema's new names (ttOldKeys) and every later key
// (ttAfterCuDNNB200, ttAfterA2ASave) date a file after 88247277c too.
var ttAbsDropped = map[string]string{
	"training.fsdp_reshard_after_forward":      "5940ddeb5 (2025-02-06)",
	"checkpoint.exclude_from_loading":          "49c6d6fc1 (2025-02-06)",
	"experimental.custom_model_path":           "fb0a942f1 (2025-02-12)",
	"model.converters":                         "57387af0e (2025-02-14)",
	"float8.force_recompute_fp8_weight_in_bwd": "473674acf (2025-02-18)",
	"optimizer.implementation":                 "6e4988550 (2025-02-24)",
	"float8.recipe_name":                       "069bae286 (2025-02-27)",
	"model.print_after_conversion":             "4e3d8eafc (2025-02-27)",
	"fault_tolerance.enable":                   "0f5bafa33 (2025-02-28)",
	"fault_tolerance.group_size":               "0f5bafa33 (2025-02-28)",
	"fault_tolerance.min_replica_size":         "0f5bafa33 (2025-02-28)",
	"fault_tolerance.replica_id":               "0f5bafa33 (2025-02-28)",
	"optimizer.eps":                            "733296fb4 (2025-03-04)",
	"lr_scheduler.decay_ratio":                 "0da8901b1 (2025-03-10)",
	"lr_scheduler.decay_type":                  "0da8901b1 (2025-03-10)",
	"lr_scheduler.lr_min":                      "0da8901b1 (2025-03-10)",
	"lr_scheduler.warmup_steps":                "0da8901b1 (2025-03-10)",
}

// absAfter is the key that dates the file from 88247277c on, with the
// commit that added it; "" when none does.
func (d *ttDoc) absAfter() (key, added string) {
	if k, by := d.ttEraKey(ttAbsDropped); k != "" {
		return k, by
	}
	for _, k := range ttOldKeys {
		if _, ok := d.get(k[1]); ok {
			return k[1], "785c34c (2025-03-18) or later"
		}
	}
	for _, m := range []map[string]string{ttAfterCuDNNB200, ttAfterA2ASave} {
		if k, by := d.ttEraKey(m); k != "" {
			return k, by
		}
	}
	return "", ""
}

// readAbsEra sets training.op_save_abs for a file under the op policy
// with torchao's float8 and the blocks in eager mode, where it counts:
// true where the file's keys date it between 87e2c09c4 and 88247277c
// (one of ttAbsAdded and one of ttAbsRemoved), false where they date it
// before 87e2c09c4 (ttPreDelPred, ttPreExpandable: removed by 2024-09-10)
// or from 88247277c on (absAfter); false, with a note saying how to set
// it, where they do not, as TorchtitanCommit's policy keeps no abs. The
// stack preset (torchtitan 9dec370, inside the window) says true, so the
// importer writes the key whenever it counts.
func (t *Torchtitan) readAbsEra(d *ttDoc) {
	if t.FP8 != FP8TorchAO || t.Recompute != RecomputeOp || t.Compile.Blocks() {
		return
	}
	set := func(v bool, from string) {
		t.OpSaveAbs = &v
		t.src("op_save_abs", from)
	}
	const window = "the window 87e2c09c4 (2024-11-26) to 88247277c (2025-02-06) when the op policy's _save_list held aten.abs"
	if k, by := d.ttEraKey(ttPreDelPred); k != "" {
		set(false, fmt.Sprintf("%s (removed by %s) dates the file before %s", k, by, window))
		return
	}
	if k, by := d.ttEraKey(ttPreExpandable); k != "" {
		set(false, fmt.Sprintf("%s (removed by %s) dates the file before %s", k, by, window))
		return
	}
	if k, by := d.absAfter(); k != "" {
		set(false, fmt.Sprintf("%s (torchtitan %s) dates the file after %s", k, by, window))
		return
	}
	added, aby := d.ttEraKey(ttAbsAdded)
	removed, rby := d.ttEraKey(ttAbsRemoved)
	if added != "" && removed != "" {
		set(true, fmt.Sprintf("%s (added by %s) and %s (removed by %s) date the file inside %s", added, aby, removed, rby, window))
		t.note("op policy with eager float8: %s and %s date the file inside %s: written as training.op_save_abs: true (the 16-bit abs of every input and, without the float8 all-gather, every unsharded weight the Float8Linears cast is kept until the block's recompute)", added, removed, window)
		return
	}
	set(false, "no key dates the file inside "+window)
	t.note("op policy with eager float8: in %s, torchtitan kept the 16-bit abs of every tensor the Float8Linears cast (1 GiB a block for Llama 3 8B at 8192 tokens without the float8 all-gather), and no key of the file dates it inside that window: written as training.op_save_abs: false, %s's policy (set it true if your torchtitan is of that window, as 9dec370, the stack preset's, is)", window, TorchtitanCommit[:7])
}

// ttAfterVarlen are the keys of ttAfterA2ASave that torchtitan's config
// gained after f8fa21e1d6fc (2025-11-21, "adding variable length attention
// to llama3 8b", pytorch/torchtitan#2000), each with its first commit
// there, the ones dated after it (each a descendant of f8fa21e1d: comm.mode
// at d0393b37a, ... lr_scheduler.total_steps at 40b54e47f). From f8fa21e1d to
// TorchtitanCommit torchtitan/models/attention.py imports varlen_attn
// from torch.nn.attention.varlen at module level (line 23 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1), and every model imports
// that module, so a torchtitan that reads one of these keys runs only on
// a PyTorch with torch.nn.attention.varlen: pytorch/pytorch 3681312ce03e
// ("varlen api", #164502, committed 2025-10-15; torch 2.10's), after
// #153666 brought aten::_fused_rms_norm (late July 2025, NormATen). The
// file's nn.RMSNorms run that fused kernel: training.norm_impl
// aten_fused (readNormEra).
var ttAfterVarlen = func() map[string]string {
	m := map[string]string{}
	for k, by := range ttAfterA2ASave {
		if _, date, _ := strings.Cut(by, " ("); date > "2025-11-21)" {
			m[k] = by
		}
	}
	return m
}()

// readNormEra sets training.norm_impl aten_fused for a file whose keys
// date it to a torchtitan that needs a PyTorch with
// aten::_fused_rms_norm (ttAfterVarlen) and none before 6a3a9da
// (ttDoc.preAll, older than f8fa21e1d): its models' nn.RMSNorms, in
// bf16 with FSDP2's bf16 weights, run the fused kernel (NormATen). A file
// no key dates so is noted, unless it is older than torchtitan 3b39d7ab0
// (2025-03-19), whose own RMSNorm was the fp32 composite whatever the
// PyTorch: a key of the older schema (before 785c34c, 2025-03-18), one
// removed before e29b6b4 or a5e57e4a9 (2024), or model.norm_type
// (removed by 5078e92e4, 2025-04-17, on PyTorch nightlies of 2.8 or
// earlier: the composite either way).
func (t *Torchtitan) readNormEra(d *ttDoc) {
	if t.NormImpl != "" || d.old || t.ParamDType == FP32 || t.Stage == 0 && !t.MasterNone {
		// fp32 parameters (mixed_precision_param "float32"), and DDP's
		// fp32 model under torch.autocast (Scenario), run the norms
		// over an fp32 stream, which NormATen does not cover.
		return
	}
	if k, _ := d.ttEraKey(ttPreDelPred); k != "" {
		return
	}
	if k, _ := d.ttEraKey(ttPreExpandable); k != "" {
		return
	}
	if _, ok := d.get("model.norm_type"); ok {
		return
	}
	if k, by := d.ttEraKey(ttAfterVarlen); k != "" && d.preAll == "" {
		t.NormImpl = NormATen
		t.src("norm_impl", k+" (torchtitan "+by+") dates the file after f8fa21e1d (2025-11-21), which needs torch.nn.attention.varlen (PyTorch 2.10): nn.RMSNorm runs aten::_fused_rms_norm")
		return
	}
	t.note("torchtitan from 3b39d7ab0 (2025-03-19) builds torch.nn.RMSNorm, which PyTorch 2.9 or later runs as aten::_fused_rms_norm in bf16 (each norm keeps its 16-bit input and fp32 rstd, not the fp32 input and normalized tensor of PyTorch 2.8's composite: 8·t·h bytes less per eager block, 4·t·h for the final norm), and no key of the file dates it to a torchtitan that needs such a PyTorch (f8fa21e1d, 2025-11-21, on): written with the composite's tensors (set training.norm_impl: aten_fused if yours runs PyTorch 2.9 or later)")
}
