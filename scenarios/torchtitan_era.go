package scenarios

import "strconv"

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
