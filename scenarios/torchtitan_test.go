package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

var ttH100x16 = TorchtitanCluster{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB"}

// ttFile reads a job config of testdata/torchtitan (README.md there cites
// each file's commit), with edits applied as old → new replacements.
func ttFile(t testing.TB, name string, edits ...string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/torchtitan/" + name)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		if !bytes.Contains(b, []byte(edits[i])) {
			t.Fatalf("%s has no %q", name, edits[i])
		}
		b = bytes.Replace(b, []byte(edits[i]), []byte(edits[i+1]), 1)
	}
	return b
}

// TestImportTorchtitan: torchtitan's own job configs import to scenarios
// that load, with the model's published parameter count (Llama 3.1 8B,
// 70B and 405B: the Hugging Face checkpoints' totals, as the llama3.1-*
// presets hold them) and the file's batch, sequence length, activation
// checkpointing, compile and float8 settings.
func TestImportTorchtitan(t *testing.T) {
	const tp1 = "tensor_parallel_degree = 1"
	for _, c := range []struct {
		name, file string
		edits      []string
		cl         TorchtitanCluster
		params     int64
		dp, cp, k  int
		stage      int
		micro      int64
		accum      int64
		seq        int64
		recompute  Recompute
		every      int
		early      bool
		compile    Compile
		fp8        FP8Recipe
		impl       OptimizerImpl
		notes      int
	}{
		// llama3_8b.toml: local_batch_size 1, seq_len 8192, selective
		// "op", compile off, AdamW with the default fused implementation;
		// its early_stop is unset (one note).
		{"8B", "llama3_8b.toml", nil, ttH100x16, 8_030_261_248, 128, 1, 1, 3, 1, 1, 8192, RecomputeOp, 1, false, CompileNone, FP8None, OptimizerFused, 1},
		// The same file at 9dec370ad26b5f8e9a7333a0e36165018262644b: batch_size 1, foreach (optimizer.fused
		// unset: one note, fused from 6e49885), checkpointing's early stop
		// on.
		{"8B 9dec370", "llama3_8b-9dec370.toml", nil, ttH100x16, 8_030_261_248, 128, 1, 1, 3, 1, 1, 8192, RecomputeOp, 1, true, CompileNone, FP8None, OptimizerForeach, 1},
		// Its training.compile = true compiled the blocks only; its
		// float8.enable_float8_linear is fp8 torchao, without the fp8
		// all-gather it leaves off (fp8_all_gather: false; its output
		// layer stayed bf16).
		{"8B 9dec370 compile float8", "llama3_8b-9dec370.toml", []string{"compile = false", "compile = true", "enable_float8_linear = false", "enable_float8_linear = true"}, ttH100x16, 8_030_261_248, 128, 1, 1, 3, 1, 1, 8192, RecomputeOp, 1, true, CompileBlocks, FP8TorchAO, OptimizerForeach, 1},
		// At e7c0cae: [parallelism] and local_batch_size, fused by
		// default, early stop on (training.compile and enable_checkpoint
		// predate 25413d2), no note.
		{"8B e7c0cae", "llama3_8b-e7c0cae.toml", nil, ttH100x16, 8_030_261_248, 128, 1, 1, 3, 1, 1, 8192, RecomputeOp, 1, true, CompileNone, FP8None, OptimizerFused, 0},
		// Its training.compile = true is blocks and loss (one note).
		{"8B e7c0cae compile", "llama3_8b-e7c0cae.toml", []string{"compile = false", "compile = true"}, ttH100x16, 8_030_261_248, 128, 1, 1, 3, 1, 1, 8192, RecomputeOp, 1, true, CompileBlocksLoss, FP8None, OptimizerFused, 1},
		// llama3_70b.toml without its 8-way TP: local_batch_size 8, full
		// AC.
		{"70B", "llama3_70b.toml", []string{"tensor_parallel_degree = 8", tp1}, ttH100x16, 70_553_706_496, 128, 1, 1, 3, 8, 1, 8192, RecomputeFull, 1, false, CompileNone, FP8None, OptimizerFused, 1},
		// llama3_405b.toml without TP: float8 with fp8 all-gather,
		// compile of model and loss, full AC.
		{"405B", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", tp1}, ttH100x16, 405_853_388_800, 128, 1, 1, 3, 2, 1, 8192, RecomputeFull, 1, false, CompileBlocksLoss, FP8TorchAO, OptimizerFused, 1},
		// HSDP and CP: 2 replicas × (dp_shard -1 = 128/(2·2) = 32) × cp 2;
		// global batch 128 over local 1 × dp 64 is 2 accumulation steps;
		// selective "2" is full every 2nd block; early_stop given.
		{"HSDP+CP", "llama3_8b.toml", []string{
			"data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2",
			"context_parallel_degree = 1", "context_parallel_degree = 2",
			"local_batch_size = 1", "local_batch_size = 1\nglobal_batch_size = 128",
			`selective_ac_option = "op"`, "selective_ac_option = \"2\"\nearly_stop = true",
			"[compile]\nenable=false\ncomponents = [\"model\", \"loss\"]", "[compile]\nenable=true\ncomponents = [\"model\"]",
			"[optimizer]", "[optimizer]\nimplementation = \"foreach\"",
		}, ttH100x16, 8_030_261_248, 64, 2, 2, 3, 1, 2, 8192, RecomputeFull, 2, true, CompileBlocks, FP8None, OptimizerForeach, 0},
		// dp_shard given: 2 × 8 GPUs fix the cluster at 2 nodes without
		// --nodes.
		{"dp_shard 16", "llama3_8b.toml", []string{"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 16"},
			TorchtitanCluster{GPU: "H100-80GB"}, 8_030_261_248, 16, 1, 1, 3, 1, 1, 8192, RecomputeOp, 1, false, CompileNone, FP8None, OptimizerFused, 1},
		// DDP: dp_shard 1 with 8 replicas is stage 0 (one more note).
		{"DDP", "llama3_8b.toml", []string{"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1", "data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 8"},
			TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB"}, 8_030_261_248, 8, 1, 1, 0, 1, 1, 8192, RecomputeOp, 1, false, CompileNone, FP8None, OptimizerFused, 2},
	} {
		tt, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), c.cl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := tt.Scenario()
		s, err := Load(c.name+".yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: the imported scenario does not load: %v\n%s", c.name, err, out)
		}
		p, tr := s.Parallelism, s.Training
		if int64(s.Model.Params) != c.params || tt.Params != c.params {
			t.Errorf("%s: %d parameters (header %d), want %d", c.name, s.Model.Params, tt.Params, c.params)
		}
		if p.DP != c.dp || p.CP != c.cp || p.K != c.k || p.Stage != c.stage {
			t.Errorf("%s: dp %d cp %d k %d stage %d, want %d %d %d %d", c.name, p.DP, p.CP, p.K, p.Stage, c.dp, c.cp, c.k, c.stage)
		}
		if tr.MicroBatch != c.micro || tr.GradAccum != c.accum || s.Model.SeqLen != c.seq {
			t.Errorf("%s: micro_batch %d grad_accum %d seq_len %d, want %d %d %d", c.name, tr.MicroBatch, tr.GradAccum, s.Model.SeqLen, c.micro, c.accum, c.seq)
		}
		if tr.Recompute != c.recompute || tr.RecomputeEvery != c.every || tr.RecomputeEarlyStop != c.early {
			t.Errorf("%s: recompute %s every %d early stop %t, want %s %d %t", c.name, tr.Recompute, tr.RecomputeEvery, tr.RecomputeEarlyStop, c.recompute, c.every, c.early)
		}
		if tr.Compile != c.compile || tr.FP8 != c.fp8 || tr.OptimizerImpl != c.impl {
			t.Errorf("%s: compile %s fp8 %s optimizer_impl %s, want %s %s %s", c.name, tr.Compile, tr.FP8, tr.OptimizerImpl, c.compile, c.fp8, c.impl)
		}
		// The ZeRO-3 gathers move fp8 weights only where the file turns
		// enable_fsdp_float8_all_gather on (405B's), not by its default
		// false (the 9dec370ad26b5f8e9a7333a0e36165018262644b 8B file with float8 on).
		if wantGather := c.fp8 == FP8TorchAO && c.name == "405B"; tr.FP8Gather() != wantGather {
			t.Errorf("%s: fp8 all-gather %v, want %v", c.name, tr.FP8Gather(), wantGather)
		}
		// The torchtitan stack, as the file says it; the boundary of
		// apply_fsdp since 83e6941055fd36434ba50c1a4c7c39cb02327429 for files of 238fa9953e4aec2a62582121564273d7cbb1e9f1's keys at stage 3
		// (the preset's fsdp2, the last block kept, for the 9dec370ad26b5f8e9a7333a0e36165018262644b and
		// e7c0cae files, which predate it, and for DDP).
		wantB := BoundaryFSDP2Head
		if strings.Contains(c.file, "9dec370") || strings.Contains(c.file, "e7c0cae") || c.stage != 3 {
			wantB = BoundaryFSDP2
		}
		// DDP (stage 0) keeps the fp32 model under maybe_enable_amp's
		// torch.autocast and all-reduces its fp32 gradients; FSDP2 gathers
		// bf16 and reduces in fp32.
		wantP, wantAC, wantR := BF16, DType(""), ReduceFP32
		if c.stage == 0 {
			wantP, wantAC, wantR = FP32, BF16, ReduceParamDType
		}
		if s.Communication.Boundary != wantB || tr.ReduceDType != wantR || tr.ShardDType != ShardFP32 ||
			tr.Optimizer != OptimizerAdamW || tr.WeightDecay != 0.1 || tr.GradClip != GradClipNorm || tr.ParamDType != wantP || tr.Autocast != wantAC {
			t.Errorf("%s: stack keys %s %s %s %s %g %s %s %q", c.name, s.Communication.Boundary, tr.ReduceDType, tr.ShardDType, tr.Optimizer, tr.WeightDecay, tr.GradClip, tr.ParamDType, tr.Autocast)
		}
		// 238fa9953e4aec2a62582121564273d7cbb1e9f1's attention for the same files (gqaAttention): SDPA
		// with enable_gqa under cuDNN's priority, one note; the older
		// files keep the preset's sdpa (repeat_kv).
		wantA, wantK, notes := AttentionFlash, KernelCuDNN, c.notes+1
		if strings.Contains(c.file, "9dec370") || strings.Contains(c.file, "e7c0cae") {
			wantA, wantK, notes = AttentionSDPA, KernelFA2, c.notes
		}
		// Under the op policy with cuDNN's attention, a note says the
		// file is read with b39377f's save list (readCuDNNEra).
		if wantK == KernelCuDNN && tr.Recompute == RecomputeOp {
			notes++
		}
		// A file of torchtitan's nn.RMSNorm era that no key dates
		// after f8fa21e1d is noted (readNormEra), DDP's fp32 model not.
		if !strings.Contains(c.file, "9dec370") && c.stage != 0 {
			notes++
		}
		if tr.Attention != wantA || tr.AttentionKernel != wantK {
			t.Errorf("%s: attention %s kernel %s, want %s %s", c.name, tr.Attention, tr.AttentionKernel, wantA, wantK)
		}
		if n := bytes.Count(out, []byte("\n# note: ")); n != notes {
			t.Errorf("%s: %d notes, want %d:\n%s", c.name, n, notes, out)
		}
		again, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), c.cl)
		if err != nil || !bytes.Equal(again.Scenario(), out) {
			t.Errorf("%s: a second import differs", c.name)
		}
	}
}

// TestImportTorchtitanPlaceholders: without the cluster the scenario names
// what to set, and Load stops at the placeholder's line.
func TestImportTorchtitanPlaceholders(t *testing.T) {
	tt, err := ImportTorchtitan("llama3_8b.toml", ttFile(t, "llama3_8b.toml"), TorchtitanCluster{})
	if err != nil {
		t.Fatal(err)
	}
	out := string(tt.Scenario())
	for _, want := range []string{"  nodes: SET_NODES", "  gpus_per_node: 8\n", "  gpu: SET_GPU", "  dp: SET_DP"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	line := 1 + strings.Count(out[:strings.Index(out, "  nodes: SET_NODES")], "\n")
	gpu := 1 + strings.Count(out[:strings.Index(out, "  gpu: SET_GPU")], "\n")
	dp := 1 + strings.Count(out[:strings.Index(out, "  dp: SET_DP")], "\n")
	// One line for every placeholder: decoding them one at a time said
	// `nodes: "SET_NODES" is not an integer (use a whole number)`, then
	// the same of SET_DP, then that gpu "SET_GPU" is unknown.
	_, err = Load("s.yaml", []byte(out), nil)
	want := fmt.Sprintf("s.yaml:%d:10: nodes: SET_NODES is a placeholder zerosim import wrote where its input does not say the value; so are SET_GPU (%d:8), SET_DP (%d:7) (write your values there, the comment beside each says what, or run the import again with --nodes N --gpu GPU)", line, gpu, dp)
	if err == nil || err.Error() != want {
		t.Errorf("Load: %v, want %s", err, want)
	}
	if tt.Complete() {
		t.Error("Complete with placeholders")
	}
}

// TestImportTorchtitanErrors: what zerosim cannot model is refused in one
// line naming file:line:column of the key and what to do.
func TestImportTorchtitanErrors(t *testing.T) {
	for _, c := range []struct {
		name, file string
		edits      []string
		cl         TorchtitanCluster
		want       string
	}{
		{"TP 70B", "llama3_70b.toml", nil, ttH100x16, "llama3_70b.toml:41:1: parallelism.tensor_parallel_degree = 8: tensor parallelism is not modelled"},
		{"TP 405B", "llama3_405b.toml", nil, ttH100x16, "llama3_405b.toml:41:1: parallelism.tensor_parallel_degree = 8: tensor parallelism is not modelled"},
		{"PP", "llama3_8b.toml", []string{"pipeline_parallel_degree = 1", "pipeline_parallel_degree = 4"}, ttH100x16, "llama3_8b.toml:42:1: parallelism.pipeline_parallel_degree = 4: pipeline parallelism is not modelled"},
		{"TP 9dec370", "llama3_8b-9dec370.toml", []string{"tensor_parallel_degree = 1", "tensor_parallel_degree = 2"}, ttH100x16, "llama3_8b-9dec370.toml:36:1: training.tensor_parallel_degree = 2: tensor parallelism"},
		{"malformed", "llama3_8b.toml", []string{"seq_len = 8192", "seq_len = 8192 8192"}, ttH100x16, "llama3_8b.toml:33:16: not valid TOML: "},
		// QA18 L5: tomllib refuses a byte-order mark.
		{"BOM", "llama3_8b.toml", []string{"# ", "\xef\xbb\xbf# "}, ttH100x16, "llama3_8b.toml:1:1: the file starts with a UTF-8 byte-order mark (EF BB BF), which torchtitan's tomllib refuses"},
		{"unclosed table", "llama3_8b.toml", []string{"[training]", "[training"}, ttH100x16, "llama3_8b.toml:31:10: not valid TOML: expected '.' or ']' to end table name"},
		{"seq_len type", "llama3_8b.toml", []string{"seq_len = 8192", `seq_len = "8192"`}, ttH100x16, `llama3_8b.toml:33:1: training.seq_len = "8192" is not an integer`},
		{"flavor", "llama3_8b.toml", []string{`flavor = "8B"`, `flavor = "7B"`}, ttH100x16, `llama3_8b.toml:19:1: model.flavor = "7B" is not a llama3 flavor`},
		{"model", "llama3_8b.toml", []string{`name = "llama3"`, `name = "flux"`}, ttH100x16, `llama3_8b.toml:18:1: model.name = "flux": torchtitan's llama3, qwen3, deepseek_v3, gpt_oss and llama4 models are imported`},
		{"world", "llama3_8b.toml", []string{"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 64"}, ttH100x16, "llama3_8b.toml:40:1: data_parallel_replicate_degree 1 × data_parallel_shard_degree 64 × context_parallel_degree 1 = 64 GPUs, but --nodes 16 × --gpus-per-node 8 is 128"},
		// qa19 L1: cp_shard's head-tail load balancer cuts 2·cp chunks.
		{"seq_len over 2·cp", "llama3_8b.toml", []string{"seq_len = 8192", "seq_len = 8190", "context_parallel_degree = 1", "context_parallel_degree = 2"}, ttH100x16, "llama3_8b.toml:33:1: training.seq_len 8190 does not divide by 2 × context_parallel_degree = 4"},
		{"global batch", "llama3_8b.toml", []string{"local_batch_size = 1", "local_batch_size = 1\nglobal_batch_size = 100"}, ttH100x16, "llama3_8b.toml:33:1: training.global_batch_size 100 is not a multiple of local_batch_size 1 × data-parallel degree 128"},
		{"memory_budget", "llama3_8b.toml", []string{`mode = "selective"`, `mode = "memory_budget"`}, ttH100x16, `llama3_8b.toml:58:1: activation_checkpoint.mode = "memory_budget"`},
		{"cpu offload", "llama3_8b.toml", []string{"[training]", "[training]\nenable_cpu_offload = true"}, ttH100x16, "llama3_8b.toml:32:1: training.enable_cpu_offload = true: FSDP2's CPUOffloadPolicy is not modelled"},
		{"dtype", "llama3_8b.toml", []string{"[training]", "[training]\ndtype = \"float16\""}, ttH100x16, `llama3_8b.toml:32:1: training.dtype = "float16" is not a dtype torchtitan allows`},
		{"bf16 fp32 param", "llama3_8b.toml", []string{"[training]", "[training]\ndtype = \"bfloat16\"\nmixed_precision_param = \"float32\""}, ttH100x16, `llama3_8b.toml:33:1: training.mixed_precision_param = "float32" beside training.dtype = "bfloat16" is not modelled`},
		{"float8 on A100", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1"}, TorchtitanCluster{Nodes: 16, GPUsPerNode: 8, GPU: "A100-80GB"}, "llama3_405b.toml:21:1: float8 training needs fp8 tensor cores, and --gpu A100-80GB has none"},
		// torchao's rowwise recipes are refused as MX is: zerosim models
		// tensorwise scaling only.
		{"float8 rowwise", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "enable_fsdp_float8_all_gather = true", "recipe_name = \"rowwise\""}, ttH100x16, `llama3_405b.toml:62:1: float8 recipe_name "rowwise" (torchao's row-wise scaling) is not modelled: zerosim models torchao's tensorwise scaling only (use recipe_name = "tensorwise", or remove the key)`},
		// Another name is none of torchao's recipes, not a row-wise one
		// (finB27 LOW 1: "tenserwise" was called row-wise scaling).
		{"float8 rowwise_with_gw_hp", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "enable_fsdp_float8_all_gather = true", "recipe_name = \"rowwise_with_gw_hp\""}, ttH100x16, `llama3_405b.toml:62:1: float8 recipe_name "rowwise_with_gw_hp" (torchao's row-wise scaling) is not modelled: zerosim models torchao's tensorwise scaling only (use recipe_name = "tensorwise", or remove the key)`},
		{"float8 recipe typo", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "enable_fsdp_float8_all_gather = true", "recipe_name = \"tenserwise\""}, ttH100x16, `llama3_405b.toml:62:1: float8 recipe_name "tenserwise" is not one of torchao's float8 recipes (tensorwise, rowwise, rowwise_with_gw_hp: Float8LinearRecipeName, torchao/float8/config.py at 8c81863), which torchao refuses (did you mean "tensorwise"? zerosim models "tensorwise" only)`},
		{"float8 rowwise typo", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "enable_fsdp_float8_all_gather = true", "recipe_name = \"rowwize\""}, ttH100x16, `llama3_405b.toml:62:1: float8 recipe_name "rowwize" is not one of torchao's float8 recipes (tensorwise, rowwise, rowwise_with_gw_hp: Float8LinearRecipeName, torchao/float8/config.py at 8c81863), which torchao refuses (did you mean "rowwise"? zerosim models "tensorwise" only)`},
		{"float8 recipe with fp8 all-gather", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "enable_fsdp_float8_all_gather = true", "enable_fsdp_float8_all_gather = true\nrecipe_name = \"tensorwise\""}, ttH100x16, `llama3_405b.toml:63:1: float8 recipe_name with enable_fsdp_float8_all_gather = true is a run torchtitan refuses ("using float8_config.enable_fsdp_float8_all_gather together with float8_config.recipe_name is not supported", components/quantization/float8.py at 238fa99) (remove recipe_name, or set enable_fsdp_float8_all_gather = false)`},
		{"float8 unknown recipe", "llama3_405b.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "enable_fsdp_float8_all_gather = true", "recipe_name = \"blockwise\""}, ttH100x16, `llama3_405b.toml:62:1: float8 recipe_name "blockwise" is not one of torchao's float8 recipes (tensorwise, rowwise, rowwise_with_gw_hp: Float8LinearRecipeName, torchao/float8/config.py at 8c81863), which torchao refuses (use recipe_name = "tensorwise", the one zerosim models, or remove the key)`},
		{"both schemas", "llama3_8b.toml", []string{"local_batch_size = 1", "local_batch_size = 1\nbatch_size = 2"}, ttH100x16, "llama3_8b.toml:33:1: training.batch_size and training.local_batch_size are the same setting"},
		{"gpu flag", "llama3_8b.toml", nil, TorchtitanCluster{Nodes: 1, GPU: "H100"}, `llama3_8b.toml: --gpu "H100" is not a GPU preset`},
	} {
		_, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), c.cl)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%s: %v\nwant one line starting %q", c.name, err, c.want)
		}
	}
}

// TestImportTorchtitanBF16: training.dtype = "bfloat16" (job_config.py at
// 238fa99: "all parameters, gradients, and optimizer states in bfloat16,
// without an extra copy of fp32 weights") imports as master_dtype none with
// a bf16 shard under FSDP2, and under DDP (data_parallel_shard_degree 1)
// with the gradients reduced in bf16, mixed_precision_reduce applying under
// FSDP only.
func TestImportTorchtitanBF16(t *testing.T) {
	for _, c := range []struct {
		name   string
		edits  []string
		cl     TorchtitanCluster
		stage  int
		reduce ReduceDType
		shard  DType
	}{
		{"fsdp", []string{"[training]", "[training]\ndtype = \"bfloat16\""}, ttH100x16, 3, ReduceFP32, BF16},
		{"ddp", []string{"[training]", "[training]\ndtype = \"bfloat16\"", "data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 8", "data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1"},
			TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB"}, 0, ReduceParamDType, ShardFP32},
	} {
		tt, err := ImportTorchtitan("llama3_8b.toml", ttFile(t, "llama3_8b.toml", c.edits...), c.cl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := tt.Scenario()
		s, err := Load("bf16.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: the imported scenario does not load: %v\n%s", c.name, err, out)
		}
		tr := s.Training
		if !tr.NoMaster() || s.Parallelism.Stage != c.stage || tr.ReduceDType != c.reduce || tr.ShardDType != c.shard || tr.ParamDType != BF16 {
			t.Errorf("%s: master %s stage %d reduce %s shard %s param %s, want none %d %s %s bf16\n%s", c.name, tr.MasterDType, s.Parallelism.Stage, tr.ReduceDType, tr.ShardDType, tr.ParamDType, c.stage, c.reduce, c.shard, out)
		}
	}
}

// TestImportTorchtitanLlama3Debug (QA8 F6): llama3's debug flavors
// (llama3_args at torchtitan/models/llama3/__init__.py:29-51, 238fa99)
// import; debug_model.toml is run_train.sh's default config. The count is
// torchtitan's own log line for that run, "Model llama3 debugmodel size:
// 6,163,712 total parameters", and by hand from
// TransformerModelArgs' defaults (n_kv_heads = n_heads, multiple_of 256,
// no ffn_dim_multiplier: hidden int(2·4·256/3) = 682 rounded up to 768):
// embedding and output 2·2048·256, 6 blocks of 4·256² + 3·256·768 + 2·256,
// final norm 256.
func TestImportTorchtitanLlama3Debug(t *testing.T) {
	const want = 6_163_712
	if hand := int64(2*2048*256 + 6*(4*256*256+3*256*768+2*256) + 256); hand != want {
		t.Fatalf("hand count %d, torchtitan's %d", hand, want)
	}
	for _, c := range []struct {
		flavor string
		notes  string
	}{{"debugmodel", ""}, {"debugmodel_flex_attn", "runs flex attention with a block-causal mask"}, {"debugmodel_varlen_attn", "runs varlen attention with a block-causal mask"}} {
		tt, err := ImportTorchtitan("llama3_debug.toml", ttFile(t, "llama3_debug.toml", `flavor = "debugmodel"`, `flavor = "`+c.flavor+`"`), TorchtitanCluster{Nodes: 4, GPUsPerNode: 8, GPU: "H100-80GB"})
		if err != nil {
			t.Fatalf("%s: %v", c.flavor, err)
		}
		s, err := Load(c.flavor+".yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.flavor, err)
		}
		m := s.Model
		if tt.Params != want || int64(m.Params) != want || m.Hidden != 256 || m.Layers != 6 || m.Heads != 16 || m.KVHeads != 16 || m.FFN != 768 || m.Vocab != 2048 {
			t.Errorf("%s: %d parameters (scenario %d), dims %d %d %d %d %d %d", c.flavor, tt.Params, m.Params, m.Hidden, m.Layers, m.Heads, m.KVHeads, m.FFN, m.Vocab)
		}
		if c.notes != "" && !strings.Contains(strings.Join(tt.Notes, "\n"), c.notes) {
			t.Errorf("%s: notes %q, want %q", c.flavor, tt.Notes, c.notes)
		}
	}
}

// TestImportTorchtitanMaxNorm: training.max_norm other than 1.0 is
// training.max_grad_norm, which zerosim verify clips by; 1.0 writes
// nothing (the key's default).
func TestImportTorchtitanMaxNorm(t *testing.T) {
	for _, tc := range []struct {
		edits []string
		want  float64
	}{
		{nil, 0},
		{[]string{"max_norm = 1.0", "max_norm = 0.25"}, 0.25},
	} {
		tt, err := ImportTorchtitan("llama3_8b.toml", ttFile(t, "llama3_8b.toml", tc.edits...), ttH100x16)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load("s.yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Training.GradClip != GradClipNorm || s.Training.MaxGradNorm != tc.want {
			t.Errorf("%v: grad_clip %s max_grad_norm %v, want norm %v", tc.edits, s.Training.GradClip, s.Training.MaxGradNorm, tc.want)
		}
	}
}
