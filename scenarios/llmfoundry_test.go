package scenarios

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// lfFile reads a training YAML of testdata/llmfoundry (README.md there
// cites each file's commit), with edits applied as old → new replacements.
func lfFile(t testing.TB, name string, edits ...string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/llmfoundry/" + name)
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

var lfH100 = func(nodes int) LLMFoundryOptions {
	return LLMFoundryOptions{Nodes: nodes, GPUsPerNode: 8, GPU: "H100-80GB"}
}

// TestImportLLMFoundry: llm-foundry's own pretrain YAMLs import to
// scenarios that load, with llm-foundry's published parameter counts (the
// NumParams column of scripts/train/benchmarking/README.md at 8c8dd48:
// 6,658,859,008, 12,853,954,560 and 29,975,214,080 for mpt-7b, -13b and
// -30b at seq 2048) and the file's batch, sharding, precision and
// checkpointing settings.
func TestImportLLMFoundry(t *testing.T) {
	const bf, fp32 = BF16, FP32
	for _, c := range []struct {
		name, file string
		edits      []string
		o          LLMFoundryOptions
		params     int64
		dp, stage  int
		k          int
		micro      int64
		accum      int64
		seq        int64
		recompute  Recompute
		early      bool
		param      DType
		reduce     ReduceDType
		kernel     AttentionKernel
		backPre    int
		notes      int
	}{
		// mpt-7b.yaml: FULL_SHARD, PURE, activation_checkpointing true
		// (non-reentrant), micro-batch 8, global batch 1024 at seq 2048,
		// attn_impl flash: 1024 / 128 GPUs / 8 = 1 micro-step.
		{"7b 128", "mpt-7b.yaml", nil, lfH100(16), 6_658_859_008, 128, 3, 1, 8, 1, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 0},
		// On 32 GPUs: 1024 / 32 / 8 = 4.
		{"7b 32", "mpt-7b.yaml", nil, lfH100(4), 6_658_859_008, 32, 3, 1, 8, 4, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 0},
		{"13b", "mpt-13b.yaml", nil, lfH100(8), 12_853_954_560, 64, 3, 1, 8, 2, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 0},
		// mpt-30b.yaml: global batch 2048 over 64 GPUs, micro-batch 8.
		{"30b", "mpt-30b.yaml", nil, lfH100(8), 29_975_214_080, 64, 3, 1, 8, 4, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 0},
		// The NumParams column grows by (seq − 2048)·d_model with learned
		// positions: 6,658,859,008 + 6144·4096 at seq 8192.
		{"7b seq 8192", "mpt-7b.yaml", []string{"max_seq_len: 2048", "max_seq_len: 8192", "device_train_microbatch_size: 8", "device_train_microbatch_size: 2"}, lfH100(16), 6_658_859_008 + 6144*4096, 128, 3, 1, 2, 4, 8192, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 0},
		// mixed_precision DEFAULT reduces in fp32 (get_mixed_precision).
		{"7b DEFAULT", "mpt-7b.yaml", []string{"mixed_precision: PURE", "mixed_precision: DEFAULT"}, lfH100(16), 6_658_859_008, 128, 3, 1, 8, 1, 2048, RecomputeFull, true, bf, ReduceFP32, "fa2", 0, 0},
		// FULL: fp32 parameters under amp_bf16's autocast
		// (TestImportLLMFoundryFULLAutocast).
		{"7b FULL", "mpt-7b.yaml", []string{"mixed_precision: PURE", "mixed_precision: FULL"}, lfH100(16), 6_658_859_008, 128, 3, 1, 8, 1, 2048, RecomputeFull, true, fp32, "", "fa2", 0, 0},
		// SHARD_GRAD_OP is ZeRO-2; reentrant checkpointing (Composer's
		// default) has no early stop; BACKWARD_PRE prefetches one unit.
		{"7b SHARD_GRAD_OP", "mpt-7b.yaml", []string{"FULL_SHARD", "SHARD_GRAD_OP", "  activation_checkpointing_reentrant: false\n", ""}, lfH100(16), 6_658_859_008, 128, 2, 1, 8, 1, 2048, RecomputeFull, false, bf, ReduceParamDType, "fa2", 0, 0},
		{"7b HSDP", "mpt-7b.yaml", []string{"FULL_SHARD", "HYBRID_SHARD\n  data_parallel_replicate_degree: 16\n  backward_prefetch: BACKWARD_PRE"}, lfH100(16), 6_658_859_008, 128, 3, 16, 8, 1, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 1, 0},
		// HYBRID_SHARD without a replicate degree falls back to FULL_SHARD
		// at Composer v0.32.1 (a note).
		{"7b HYBRID 1-D", "mpt-7b.yaml", []string{"FULL_SHARD", "HYBRID_SHARD"}, lfH100(16), 6_658_859_008, 128, 3, 1, 8, 1, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 1},
		{"7b NO_SHARD", "mpt-7b.yaml", []string{"FULL_SHARD", "NO_SHARD", "activation_checkpointing: true", "activation_checkpointing: false"}, lfH100(16), 6_658_859_008, 128, 0, 1, 8, 1, 2048, RecomputeNone, false, bf, ReduceParamDType, "fa2", 0, 0},
		// mosaicml/mpt-7b as released: no_bias, alibi, vocab 50432 —
		// 6,649,286,656 parameters (the checkpoint's total), an explicit
		// layer list (a note).
		{"7b released", "mpt-7b.yaml", []string{"vocab_size: 50368", "vocab_size: 50432\n  no_bias: true", "attn_impl: flash", "attn_impl: flash\n    alibi: true"}, lfH100(16), 6_649_286_656, 128, 3, 1, 8, 1, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 1},
		// "auto" with --micro-batch 4: 1024 / 128 / 4 = 2.
		{"7b auto", "mpt-7b.yaml", []string{"device_train_microbatch_size: 8", "device_train_microbatch_size: auto"}, LLMFoundryOptions{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB", MicroBatch: 4}, 6_658_859_008, 128, 3, 1, 4, 2, 2048, RecomputeFull, true, bf, ReduceParamDType, "fa2", 0, 0},
		// mpt-7b.yaml at 061f2c7: ${max_seq_len}, attn_impl triton (a note).
		{"7b 061f2c7", "mpt-7b-061f2c7.yaml", nil, lfH100(16), 6_658_859_008, 128, 3, 1, 8, 1, 2048, RecomputeFull, true, bf, ReduceParamDType, "triton", 0, 1},
		// hf-llama-3.1-8B.yaml with the checkpoint's config.json: 8,030,261,248
		// (Llama 3.1 8B), BACKWARD_PRE, no checkpointing, micro-batch 1,
		// global batch 8 over 8 GPUs.
		{"llama3.1 8B", "hf-llama-3.1-8B.yaml", nil, LLMFoundryOptions{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", HF: "testdata/hf/llama-3.1-8b/config.json"}, 8_030_261_248, 8, 3, 1, 1, 1, 2048, RecomputeNone, false, bf, ReduceParamDType, "fa2", 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := ImportLLMFoundry(c.file, lfFile(t, c.file, c.edits...), c.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Notes) != c.notes {
				t.Errorf("notes %q, want %d", f.Notes, c.notes)
			}
			out := f.Scenario()
			s, err := Load("s.yaml", out, nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			tr, p, cm := s.Training, s.Parallelism, s.Communication
			if int64(s.Model.Params) != c.params || f.Params != c.params {
				t.Errorf("params %d (header %d), want %d", s.Model.Params, f.Params, c.params)
			}
			if p.DP != c.dp || p.Stage != c.stage || max(p.K, 1) != c.k {
				t.Errorf("dp %d stage %d k %d, want %d %d %d", p.DP, p.Stage, p.K, c.dp, c.stage, c.k)
			}
			if tr.MicroBatch != c.micro || tr.GradAccum != c.accum || s.Model.SeqLen != c.seq {
				t.Errorf("micro %d accum %d seq %d, want %d %d %d", tr.MicroBatch, tr.GradAccum, s.Model.SeqLen, c.micro, c.accum, c.seq)
			}
			if tr.Recompute != c.recompute || tr.RecomputeEarlyStop != c.early {
				t.Errorf("recompute %s early %t, want %s %t", tr.Recompute, tr.RecomputeEarlyStop, c.recompute, c.early)
			}
			if tr.ParamDType != c.param || (c.reduce != "" && tr.ReduceDType != c.reduce) || tr.AttentionKernel != c.kernel {
				t.Errorf("param %s reduce %s kernel %s, want %s %s %s", tr.ParamDType, tr.ReduceDType, tr.AttentionKernel, c.param, c.reduce, c.kernel)
			}
			if tr.Optimizer != OptimizerAdamW || tr.OptimizerImpl != OptimizerComposer || tr.GradClip != "norm" || tr.Beta2 != 0.95 {
				t.Errorf("optimizer %s %s clip %s beta2 %g, want adamw composer norm 0.95", tr.Optimizer, tr.OptimizerImpl, tr.GradClip, tr.Beta2)
			}
			if c.stage == 3 && (cm.Boundary != "fsdp1" || *cm.BackwardPrefetchDepth != c.backPre || *cm.PrefetchDepth != 1) {
				t.Errorf("boundary %s backward prefetch %d, want fsdp1 %d", cm.Boundary, *cm.BackwardPrefetchDepth, c.backPre)
			}
			// Composer's FSDP never enters no_sync: every micro-step
			// reduces at stages 2 and 3 (and NO_SHARD's stage 0).
			if c.stage >= 2 && (tr.GradSync != GradSyncEvery || cm.Boundary != "fsdp1") {
				t.Errorf("grad_sync %q boundary %q, want every fsdp1", tr.GradSync, cm.Boundary)
			}
			if again := f.Scenario(); !bytes.Equal(again, out) {
				t.Error("Scenario is not deterministic")
			}
		})
	}
}

// TestImportLLMFoundryHFAttention: the attention written for an
// hf_causal_lm on hf-llama-3.1-8B.yaml (Llama 3.1 8B: 32 heads, 8 kv
// heads, GQA). transformers 4.51, llm-foundry 8c8dd48's pin (setup.py),
// runs attn_implementation sdpa, its default, through
// sdpa_attention_forward, which repeats k and v to every head
// (repeat_kv; enable_gqa only since huggingface/transformers#39412): so
// an unset or sdpa attn_implementation stays zerosim's sdpa (k and v kept
// repeated), unlike torchtitan 238fa99's enable_gqa (TestTorchtitanGQADoc);
// flash_attention_2 is flash, eager is eager.
func TestImportLLMFoundryHFAttention(t *testing.T) {
	const (
		fa2Line  = "  use_flash_attention_2: true\n"
		hfRepeat = "; transformers 4.51 (llm-foundry 8c8dd48's pin) repeats k and v before SDPA (repeat_kv in integrations/sdpa_attention.py; enable_gqa only since huggingface/transformers#39412)"
	)
	for _, c := range []struct {
		name   string
		edits  []string
		attn   Attention
		kernel AttentionKernel
		// comment is the "#" source comment on the attention line.
		comment string
	}{
		{"use_flash_attention_2 (the file)", nil, AttentionFlash, KernelFA2, "model.use_flash_attention_2 true"},
		{"unset", []string{fa2Line, ""}, AttentionSDPA, KernelFA2, "attn_implementation unset: transformers' default, sdpa" + hfRepeat},
		{"sdpa", []string{fa2Line, "  attn_implementation: sdpa\n"}, AttentionSDPA, KernelFA2, "model.attn_implementation sdpa" + hfRepeat},
		{"flash_attention_2", []string{fa2Line, "  attn_implementation: flash_attention_2\n"}, AttentionFlash, KernelFA2, "model.attn_implementation flash_attention_2"},
		{"eager", []string{fa2Line, "  attn_implementation: eager\n"}, AttentionEager, KernelEager, "model.attn_implementation eager"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := ImportLLMFoundry("hf-llama-3.1-8B.yaml", lfFile(t, "hf-llama-3.1-8B.yaml", c.edits...), LLMFoundryOptions{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", HF: "testdata/hf/llama-3.1-8b/config.json"})
			if err != nil {
				t.Fatal(err)
			}
			out := f.Scenario()
			s, err := Load("s.yaml", out, nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if s.Model.Heads != 32 || s.Model.KVHeads != 8 {
				t.Fatalf("heads %d kv heads %d, want 32 8 (config.json: GQA)", s.Model.Heads, s.Model.KVHeads)
			}
			if tr := s.Training; tr.Attention != c.attn || tr.AttentionKernel != c.kernel {
				t.Errorf("attention %s kernel %s, want %s %s", tr.Attention, tr.AttentionKernel, c.attn, c.kernel)
			}
			line := "\n  attention: " + string(c.attn) + "  # "
			i := bytes.Index(out, []byte(line))
			if i < 0 {
				t.Fatalf("no %q in\n%s", line, out)
			}
			got := string(out[i+len(line):])
			got = got[:strings.IndexByte(got, '\n')]
			if got != c.comment {
				t.Errorf("attention comment %q, want %q", got, c.comment)
			}
		})
	}
}

// TestImportLLMFoundryTemplate: the keys the import prints for the
// validation table's own configuration (mpt-7b.yaml at 061f2c7 with
// submit_benchmarks.py's mixed_precision DEFAULT, run on torch 2.1) equal
// those of testdata/validation/llm-foundry-mpt-a100-80gb.yaml wherever
// both set them, but for what the table's rows set (micro-batch, the
// cluster, dp).
func TestImportLLMFoundryTemplate(t *testing.T) {
	f, err := ImportLLMFoundry("mpt-7b.yaml", lfFile(t, "mpt-7b-061f2c7.yaml", "mixed_precision: PURE", "mixed_precision: DEFAULT"), LLMFoundryOptions{Nodes: 1, GPUsPerNode: 8, GPU: "A100-80GB"})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile("../testdata/validation/llm-foundry-mpt-a100-80gb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, want := lfFlatten(t, f.Scenario()), lfFlatten(t, tmpl)
	perRow := map[string]bool{"name": true, "training.micro_batch": true, "cluster.gpu": true, "cluster.nodes": true, "parallelism.dp": true}
	shared := 0
	for k, v := range want {
		g, ok := got[k]
		if !ok || perRow[k] {
			continue
		}
		shared++
		if g != v {
			t.Errorf("%s: imported %q, template %q", k, g, v)
		}
	}
	if shared < 18 {
		t.Errorf("only %d keys shared with the template", shared)
	}
	for _, k := range []string{"training.attention_kernel", "training.recompute_early_stop", "communication.backward_prefetch_depth", "training.optimizer_impl"} {
		if _, ok := got[k]; !ok {
			t.Errorf("the import sets no %s", k)
		}
	}
}

// lfFlatten is a scenario's scalar keys as dotted paths.
func lfFlatten(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode:
			walk(prefix, n.Content[0])
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, n.Content[i+1])
			}
		case yaml.ScalarNode:
			out[prefix] = n.Value
		}
	}
	walk("", &root)
	return out
}

// TestImportLLMFoundryErrors: what the import refuses, each in one line
// naming file:line:column of the key and the fix.
func TestImportLLMFoundryErrors(t *testing.T) {
	o := lfH100(16)
	for _, c := range []struct {
		name, file string
		edits      []string
		o          LLMFoundryOptions
		want       string
	}{
		{"auto", "mpt-7b.yaml", []string{"device_train_microbatch_size: 8", "device_train_microbatch_size: auto"}, o, `^mpt-7b.yaml:86:31: device_train_microbatch_size is "auto" .*pass --micro-batch N`},
		{"auto unset", "mpt-7b.yaml", []string{"device_train_microbatch_size: 8\n", ""}, o, `^mpt-7b.yaml: device_train_microbatch_size is "auto" .*--micro-batch`},
		{"micro-batch not auto", "mpt-7b.yaml", nil, LLMFoundryOptions{Nodes: 16, GPUsPerNode: 8, MicroBatch: 2}, `^mpt-7b.yaml:86:31: --micro-batch 2 is for .*drop --micro-batch`},
		{"tp", "mpt-7b.yaml", []string{"# FSDP\n", "tp_config:\n  strategy: ffn\n  tensor_parallel_degree: 2\n"}, o, `^mpt-7b.yaml:91:3: tp_config \(tensor parallelism\) is not modelled`},
		{"strategy", "mpt-7b.yaml", []string{"FULL_SHARD", "ZERO3"}, o, `^mpt-7b.yaml:92:22: fsdp_config.sharding_strategy = "ZERO3" is not one Composer knows \(use FULL_SHARD`},
		{"global batch", "mpt-7b.yaml", []string{"global_train_batch_size: 1024", "global_train_batch_size: 1000"}, o, `^mpt-7b.yaml:81:26: global_train_batch_size = 1000 does not divide by the 128 GPUs .*multiple of 128`},
		{"missing variable", "mpt-7b.yaml", []string{"max_seq_len: ${variables.max_seq_len}\nrun_name", "max_seq_len: ${variables.seq}\nrun_name"}, o, `^mpt-7b.yaml:10:14: max_seq_len = "\$\{variables.seq\}": variables.seq is not set in the file`},
		{"resolver", "mpt-7b.yaml", []string{"max_seq_len: ${variables.max_seq_len}\nrun_name", "max_seq_len: ${oc.env:SEQ}\nrun_name"}, o, `^mpt-7b.yaml:10:14: max_seq_len = "\$\{oc.env:SEQ\}": zerosim resolves only absolute interpolations`},
		{"cycle", "mpt-7b.yaml", []string{"  max_seq_len: 2048", "  max_seq_len: ${max_seq_len}"}, o, `interpolations nest deeper than 32`},
		{"d_model", "mpt-7b.yaml", []string{"d_model: 4096", "d_model: 4096.5"}, o, `^mpt-7b.yaml:17:12: model.d_model = 4096.5 is not an integer`},
		{"heads", "mpt-7b.yaml", []string{"n_heads: 32", "n_heads: 30"}, o, `^mpt-7b.yaml:18:12: model.n_heads = 30 does not divide d_model = 4096`},
		{"attn_impl", "mpt-7b.yaml", []string{"attn_impl: flash", "attn_impl: xformers"}, o, `^mpt-7b.yaml:24:16: model.attn_config.attn_impl = "xformers" is not one MPT runs \(use flash or torch\)`},
		{"lion", "mpt-7b.yaml", []string{"decoupled_adamw", "decoupled_lionw"}, o, `^mpt-7b.yaml:64:9: optimizer.name = "decoupled_lionw" \(Lion`},
		{"fp8", "mpt-7b.yaml", []string{"precision: amp_bf16", "precision: amp_fp8"}, o, `^mpt-7b.yaml:88:12: precision amp_fp8`},
		{"moe", "mpt-7b.yaml", []string{"  attn_config:", "  ffn_config:\n    ffn_type: mb_dmoe\n  attn_config:"}, o, `^mpt-7b.yaml:24:15: model.ffn_config.ffn_type = "mb_dmoe" is not modelled`},
		{"target", "mpt-7b.yaml", []string{"  attn_config:", "  activation_checkpointing_target: [grouped_query_attention]\n  attn_config:"}, o, `^mpt-7b.yaml:23:36: model.activation_checkpointing_target = a list checkpoints parts`},
		{"duplicate", "mpt-7b.yaml", []string{"  n_layers: 32", "  n_layers: 32\n  n_layers: 40"}, o, `^mpt-7b.yaml:20:3: model.n_layers is given twice \(keep one\)`},
		// A key the import does not read, twice: OmegaConf refuses the file.
		{"duplicate fsdp_config key", "mpt-7b.yaml", []string{"  limit_all_gathers: true", "  limit_all_gathers: true\n  state_dict_type: full\n  state_dict_type: sharded"}, o, `^mpt-7b.yaml:99:3: fsdp_config.state_dict_type is given twice \(keep one\)$`},
		{"duplicate top-level key", "mpt-7b.yaml", []string{"# FSDP\n", "seed: 1\nseed: 2\n"}, o, `^mpt-7b.yaml:\d+:1: seed is given twice \(keep one\)$`},
		{"model name", "mpt-7b.yaml", []string{"mpt_causal_lm", "hf_t5"}, o, `^mpt-7b.yaml:15:9: model.name = "hf_t5" is not a model zerosim imports`},
		{"peft", "hf-llama-3.1-8B.yaml", []string{"  use_flash_attention_2: true", "  use_flash_attention_2: true\n  peft_config:\n    peft_type: LORA"}, o, `^hf-llama-3.1-8B.yaml:26:5: model.peft_config \(LoRA/PEFT adapters\) is not modelled`},
		{"hf config", "hf-llama-3.1-8B.yaml", nil, LLMFoundryOptions{Nodes: 1, GPUsPerNode: 8, HF: "testdata/none.json"}, `^--hf: `},
		{"not yaml", "mpt-7b.yaml", []string{"model:\n", "model: [\n"}, o, `^mpt-7b.yaml:14:8: not valid YAML: did not find expected .,. or .]. \(fix the file\)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ImportLLMFoundry(c.file, lfFile(t, c.file, c.edits...), c.o)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.ContainsAny(err.Error(), "\n\r") || !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Errorf("error %q, want %s", err, c.want)
			}
		})
	}
}

// TestImportLLMFoundryPlaceholders: without --nodes and --gpu the
// scenario names what to set, and Load refuses it at those lines.
func TestImportLLMFoundryPlaceholders(t *testing.T) {
	f, err := ImportLLMFoundry("mpt-7b.yaml", lfFile(t, "mpt-7b.yaml"), LLMFoundryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := string(f.Scenario())
	for _, p := range []string{"nodes: SET_NODES", "gpu: SET_GPU", "dp: SET_DP", "grad_accum: SET_GRAD_ACCUM  # ceil(global_train_batch_size 1024 / dp / micro_batch 8)"} {
		if !strings.Contains(out, p) {
			t.Errorf("no %q in\n%s", p, out)
		}
	}
	if _, err := Load("s.yaml", []byte(out), nil); err == nil || !strings.Contains(err.Error(), "s.yaml:") {
		t.Errorf("Load: %v, want an error at a placeholder's line", err)
	}
}

// TestImportLLMFoundryInterpolationBudget: strings of many interpolations
// nested deep end in an error, not in exponential time.
func TestImportLLMFoundryInterpolationBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("model: {name: mpt_causal_lm}\nmax_seq_len: ${v0}\n")
	for i := 0; i < 30; i++ {
		b.WriteString("v" + strconv.Itoa(i) + ": \"${v" + strconv.Itoa(i+1) + "}${v" + strconv.Itoa(i+1) + "}\"\n")
	}
	b.WriteString("v30: 1\n")
	_, err := ImportLLMFoundry("t.yaml", []byte(b.String()), LLMFoundryOptions{})
	if err == nil || !regexp.MustCompile(`^t.yaml:\d+:\d+: v\d+: more than 4096 interpolations to resolve`).MatchString(err.Error()) {
		t.Errorf("error %v, want the interpolation budget's", err)
	}
}

// TestImportLLMFoundryStage0Grads: at stage 0 the import tells FSDP1's
// NO_SHARD, which keeps no gradient buffer at grad_accum 1
// (Scenario.FSDP1NoShard, GradsFreedEachStep), from Composer's torch DDP
// without fsdp_config (boundary reshard, not the preset's fsdp1), whose
// buckets outlive the step.
func TestImportLLMFoundryStage0Grads(t *testing.T) {
	for _, c := range []struct {
		name     string
		edits    []string
		boundary Boundary
		freed    bool
	}{
		{"NO_SHARD", []string{"FULL_SHARD", "NO_SHARD"}, BoundaryFSDP1, true},
		{"no fsdp_config (DDP)", []string{"fsdp_config:\n  sharding_strategy: FULL_SHARD\n  mixed_precision: PURE\n  activation_checkpointing: true\n  activation_checkpointing_reentrant: false\n  activation_cpu_offload: false\n  limit_all_gathers: true\n", ""}, BoundaryReshard, false},
	} {
		f, err := ImportLLMFoundry("mpt-7b.yaml", lfFile(t, "mpt-7b.yaml", c.edits...), lfH100(16))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s, err := Load("s.yaml", f.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.Parallelism.Stage != 0 || s.Training.GradAccum != 1 || s.Communication.Boundary != c.boundary || s.FSDP1NoShard() != c.freed || s.GradsFreedEachStep() != c.freed {
			t.Errorf("%s: stage %d grad_accum %d boundary %q, FSDP1NoShard %t, GradsFreedEachStep %t; want 0 1 %q %t",
				c.name, s.Parallelism.Stage, s.Training.GradAccum, s.Communication.Boundary, s.FSDP1NoShard(), s.GradsFreedEachStep(), c.boundary, c.freed)
		}
	}
}

// TestImportLLMFoundryAutocast: without FSDP (one GPU here: llm-foundry
// drops fsdp_config) Composer's amp_bf16 is torch.autocast over the fp32
// model, which the optimizer steps itself: param_dtype fp32 with
// training.autocast bf16, no 16-bit parameters (so no fp32 shard or
// reduce apart from them); precision fp32 leaves autocast unset.
func TestImportLLMFoundryAutocast(t *testing.T) {
	one := LLMFoundryOptions{Nodes: 1, GPUsPerNode: 1, GPU: "H100-80GB"}
	for _, c := range []struct {
		name     string
		edits    []string
		autocast DType
	}{
		{"amp_bf16", nil, BF16},
		{"amp_fp16", []string{"precision: amp_bf16", "precision: amp_fp16"}, FP16},
		{"fp32", []string{"precision: amp_bf16", "precision: fp32"}, ""},
	} {
		f, err := ImportLLMFoundry("mpt-7b.yaml", lfFile(t, "mpt-7b.yaml", c.edits...), one)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s, err := Load("s.yaml", f.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, f.Scenario())
		}
		tr := s.Training
		if s.Parallelism.Stage != 0 || tr.ParamDType != FP32 || tr.Autocast != c.autocast || tr.FP32Shard() || tr.FP32Reduce() {
			t.Errorf("%s: stage %d param %s autocast %q fp32 shard %t fp32 reduce %t, want 0 fp32 %q false false", c.name, s.Parallelism.Stage, tr.ParamDType, tr.Autocast, tr.FP32Shard(), tr.FP32Reduce(), c.autocast)
		}
	}
}

// TestImportLLMFoundryLimitAllGathers: fsdp_config.limit_all_gathers false
// is FSDP1 without its rate limiter (communication.limit_all_gathers
// false: the host runs ahead, HostRunsAhead); true, Composer's default,
// keeps two in flight. It was imported as two in flight either way.
func TestImportLLMFoundryLimitAllGathers(t *testing.T) {
	for _, c := range []struct {
		name    string
		edits   []string
		ahead   bool
		limited bool
	}{
		{"true", nil, false, true},
		{"false", []string{"  limit_all_gathers: true", "  limit_all_gathers: false"}, true, false},
	} {
		f, err := ImportLLMFoundry("mpt-7b.yaml", lfFile(t, "mpt-7b.yaml", c.edits...), lfH100(16))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s, err := Load("s.yaml", f.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, f.Scenario())
		}
		cm := s.Communication
		limited := cm.LimitAllGathers == nil || *cm.LimitAllGathers
		if s.Parallelism.Stage != 3 || cm.Boundary != BoundaryFSDP1 || s.HostRunsAhead() != c.ahead || limited != c.limited {
			t.Errorf("%s: stage %d boundary %q HostRunsAhead %t limited %t; want 3 fsdp1 %t %t", c.name, s.Parallelism.Stage, cm.Boundary, s.HostRunsAhead(), limited, c.ahead, c.limited)
		}
	}
}
