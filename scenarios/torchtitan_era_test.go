package scenarios

import (
	"strings"
	"testing"
)

// TestImportTorchtitanEra: torchtitan's own llama3_8b.toml at 157a12c56
// (the commit of its docs/performance.md) sets norm_type "fused_rmsnorm"
// and has keys torchtitan removed before e29b6b4 (pipeline_parallel_degree,
// aafe0e870) and before a5e57e4a9 (data_parallel_degree, db6b39acd;
// fp8_linear, a4b2ee3c0). It imports as norm_impl: fused, keep_logits: fp32
// and expandable_segments: false; without pipeline_parallel_degree only
// the segments are set and keep_logits is a note; under compile the fused
// norm is the compiled blocks' (torchtitan refuses the pair later); with
// "rmsnorm" nothing of the norm is written.
func TestImportTorchtitanEra(t *testing.T) {
	const f = "llama3_8b-157a12c.toml"
	for _, c := range []struct {
		name  string
		edits []string
		norm  NormImpl
		keep  KeepLogits
		segs  bool // expandable_segments false written
		note  string
	}{
		{"as published", nil, NormFused, KeepLogitsFP32, true, "training.pipeline_parallel_degree was removed from torchtitan's config by aafe0e870 (2024-05-21)"},
		{"no pre-e29b6b4 key", []string{"pipeline_parallel_degree = 1\n", ""}, NormFused, "", true,
			"training.data_parallel_degree was removed from torchtitan's config by db6b39acd (2024-09-10): if your torchtitan is older than e29b6b4 (2024-06-12)"},
		{"compiled", []string{"compile = false", "compile = true"}, "", KeepLogitsFP32, true, "written as the compiled blocks' norms"},
		{"rmsnorm", []string{`norm_type = "fused_rmsnorm"`, `norm_type = "rmsnorm"`}, "", KeepLogitsFP32, true, "memory.expandable_segments: false"},
		// torchtitan 3ff7fbb27 to 40210eada: torch.compile of the eager
		// norm alone keeps what the fused kernel keeps (final read LOW-8:
		// it was imported as the eager fp32 norm).
		{"compiled_rmsnorm", []string{`norm_type = "fused_rmsnorm"`, `norm_type = "compiled_rmsnorm"`}, NormFused, KeepLogitsFP32, true,
			`model.norm_type = "compiled_rmsnorm" (torch.compile of the eager RMSNorm alone, norms.py at 3ff7fbb27; removed by 40210eada, 2024-08-19) written as training.norm_impl: fused`},
		{"compiled_rmsnorm compiled", []string{`norm_type = "fused_rmsnorm"`, `norm_type = "compiled_rmsnorm"`, "compile = false", "compile = true"}, "", KeepLogitsFP32, true,
			`model.norm_type = "compiled_rmsnorm" under training.compile: written as the compiled blocks' norms`},
	} {
		tt, err := ImportTorchtitan(f, ttFile(t, f, c.edits...), TorchtitanCluster{Nodes: 8, GPUsPerNode: 8, GPU: "A100-80GB"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := tt.Scenario()
		s, err := Load("s.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		if s.Training.NormImpl != c.norm || s.Training.KeepLogits != c.keep {
			t.Errorf("%s: norm_impl %q keep_logits %q, want %q %q", c.name, s.Training.NormImpl, s.Training.KeepLogits, c.norm, c.keep)
		}
		if got := s.Memory.ExpandableSegments != nil && !*s.Memory.ExpandableSegments; got != c.segs {
			t.Errorf("%s: expandable_segments false written %v, want %v", c.name, got, c.segs)
		}
		if !strings.Contains(string(out), c.note) {
			t.Errorf("%s: no note %q in\n%s", c.name, c.note, out)
		}
	}
	// compiled_rmsnorm dates a file after e29b6b4 and before a5e57e4a9:
	// the segments are written, keep_logits is not.
	tt, err := ImportTorchtitan(f, ttFile(t, "llama3_8b-9dec370.toml", `norm_type = "rmsnorm"`, `norm_type = "compiled_rmsnorm"`), TorchtitanCluster{Nodes: 8, GPUsPerNode: 8, GPU: "A100-80GB"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load("s.yaml", tt.Scenario(), nil)
	if err != nil {
		t.Fatal(err)
	}
	const segs = `model.norm_type = "compiled_rmsnorm" dates the file before a5e57e4a9 (2024-10-22)`
	if s.Memory.ExpandableSegments == nil || *s.Memory.ExpandableSegments || s.Training.KeepLogits != "" || s.Training.NormImpl != NormFused || !strings.Contains(string(tt.Scenario()), segs) {
		t.Errorf("compiled_rmsnorm at 9dec370's keys: expandable_segments %v, keep_logits %q, norm_impl %q; want false, unset, fused and %q in\n%s",
			s.Memory.ExpandableSegments, s.Training.KeepLogits, s.Training.NormImpl, segs, tt.Scenario())
	}
	// Every key that dates a file is one some torchtitan read and the
	// importer's torchtitan does not (else it would date files wrongly).
	for _, m := range []map[string]string{ttPreDelPred, ttPreExpandable} {
		for k := range m {
			if !ttAllKeys[k] || ttKnown[k] {
				t.Errorf("%s: in a torchtitan job config %v, in %s's %v", k, ttAllKeys[k], TorchtitanCommit[:7], ttKnown[k])
			}
		}
	}
}

// TestImportTorchtitanCuDNNEra: torchtitan's llama3_8b.toml at 6fc499f6f
// (torchao's B200 float8 table ran it) has training.compile and
// checkpoint.enable_checkpoint, removed before 25413d2, and
// local_batch_size and hf_assets_path, added after 3b85aa3: a file of
// the months when torchtitan asked SDPA for cuDNN's attention first on
// compute capability 10.0 and up (3b85aa3, attention.py lines 210-211 at
// 6fc499f6f) and its op policy's _save_list lacked
// _scaled_dot_product_cudnn_attention (parallelize.py lines 234-243
// there; added by b39377f). On a B200 or GB300 it imports as
// attention_kernel cudnn and, under its op policy, op_recompute_attention;
// on an H100 (capability 9.0: flash, which the list saves) neither. A
// file with no key from after 3b85aa3 (9dec370's) keeps fa2 with a note;
// 238fa99's file keeps b39377f's list with a note; job.print_args
// (removed by 7c1048075, after 6a3a9da) dates 238fa99's keys before
// b39377f, not before 6a3a9da.
func TestImportTorchtitanCuDNNEra(t *testing.T) {
	const tt6 = "llama3_8b-6fc499f.toml"
	for _, c := range []struct {
		name, file, gpu string
		edits           []string
		kernel          AttentionKernel
		attention       Attention
		opAttention     bool
		note            string
	}{
		{"6fc499f B200", tt6, "B200", nil, KernelCuDNN, AttentionSDPA, true,
			"checkpoint.last_save_model_only, which torchtitan added by beb29a1c7 (2025-07-20), dates the file from torchtitan 3b85aa3 (2025-05-14) on"},
		{"6fc499f GB300", tt6, "GB300", nil, KernelCuDNN, AttentionSDPA, true,
			"dates it before b39377f (2025-12-01), whose op policy first saved cuDNN's attention: written as training.op_recompute_attention: true"},
		{"6fc499f H100", tt6, "H100-80GB", nil, KernelFA2, AttentionSDPA, false, ""},
		{"6fc499f B200 full", tt6, "B200", []string{`mode = "selective"`, `mode = "full"`}, KernelCuDNN, AttentionSDPA, false,
			"written as training.attention_kernel: cudnn\n"},
		{"9dec370 B200", "llama3_8b-9dec370.toml", "B200", nil, KernelFA2, AttentionSDPA, false,
			"no key of the file dates it that recent: the kernel stays fa2 (if yours is, set training.attention_kernel: cudnn, and training.op_recompute_attention: true under recompute: op)"},
		{"238fa99 B200", "llama3_8b.toml", "B200", nil, KernelCuDNN, AttentionFlash, false,
			"(set training.op_recompute_attention: true if yours is one)"},
		{"238fa99 print_args H100", "llama3_8b.toml", "H100-80GB", []string{"[job]", "[job]\nprint_args = false"}, KernelFA2, AttentionSDPA, false,
			"job.print_args dates the file before b39377f but not before 6a3a9da: the kernel stays fa2"},
		// The presets added after the list was first written: Hopper,
		// told of 6a3a9da's cuDNN as the H100 is.
		{"238fa99 print_args H100-PCIe", "llama3_8b.toml", "H100-PCIe", []string{"[job]", "[job]\nprint_args = false"}, KernelFA2, AttentionSDPA, false,
			"job.print_args dates the file before b39377f but not before 6a3a9da: the kernel stays fa2"},
		{"238fa99 GH200-96GB", "llama3_8b.toml", "GH200-96GB", nil, KernelCuDNN, AttentionFlash, false,
			"(set training.op_recompute_attention: true if yours is one)"},
		{"238fa99 print_args B200", "llama3_8b.toml", "B200", []string{"[job]", "[job]\nprint_args = false"}, KernelCuDNN, AttentionSDPA, true,
			"job.print_args dates it before b39377f"},
		// A Hugging Face-path model runs the same wrapper (qwen3's
		// Attention: self.sdpa = build_attention(...), model.py line 178
		// at f9e8897a6): read as llama3's file is (rev29 F1: it imported
		// as sdpa, fa2 with no note).
		{"qwen3 print_args B200", "qwen3_0.6b.toml", "B200", []string{"[job]", "[job]\nprint_args = false"}, KernelCuDNN, AttentionSDPA, true,
			"checkpoint.last_save_model_only, which torchtitan added by beb29a1c7 (2025-07-20), dates the file from torchtitan 3b85aa3 (2025-05-14) on"},
		{"qwen3 print_args H100", "qwen3_0.6b.toml", "H100-80GB", []string{"[job]", "[job]\nprint_args = false"}, KernelFA2, AttentionSDPA, false,
			"job.print_args dates the file before b39377f but not before 6a3a9da: the kernel stays fa2"},
	} {
		tt, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: c.gpu})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := tt.Scenario()
		s, err := Load("s.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		tr := s.Training
		if tr.AttentionKernel != c.kernel || tr.Attention != c.attention || tr.OpRecomputeAttention != c.opAttention {
			t.Errorf("%s: attention %s kernel %s op_recompute_attention %v, want %s %s %v\n%s", c.name, tr.Attention, tr.AttentionKernel, tr.OpRecomputeAttention, c.attention, c.kernel, c.opAttention, out)
		}
		if !strings.Contains(string(out), c.note) {
			t.Errorf("%s: no %q in\n%s", c.name, c.note, out)
		}
	}
	// A file no key dates from 3b85aa3 on is dated by its model when
	// torchtitan registered the model later (qwen3 f9e8897a6, deepseek_v3
	// d54d05a5f); llama4 (e4e48349c) is older, so only noted; gpt_oss
	// runs FlexAttention, left as it was.
	for _, c := range []struct {
		name, toml string
		kernel     AttentionKernel
		attention  Attention
		opAtt      bool
		note       string
	}{
		{"qwen3", "[job]\nprint_args = false\n[model]\nname = \"qwen3\"\nflavor = \"0.6B\"\n[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n",
			KernelCuDNN, AttentionSDPA, true, `model.name = "qwen3", which torchtitan added by f9e8897a6 (2025-08-18), dates the file from torchtitan 3b85aa3 (2025-05-14) on`},
		{"deepseek_v3", "[job]\nprint_args = false\n[model]\nname = \"deepseek_v3\"\nflavor = \"debugmodel\"\n",
			KernelCuDNN, AttentionSDPA, false, `model.name = "deepseek_v3", which torchtitan added by d54d05a5f (2025-07-11), dates the file from torchtitan 3b85aa3 (2025-05-14) on`},
		{"llama4", "[job]\nprint_args = false\n[model]\nname = \"llama4\"\nflavor = \"debugmodel\"\n",
			KernelFA2, AttentionSDPA, false, "no key of the file dates it that recent: the kernel stays fa2 (if yours is, set training.attention_kernel: cudnn)"},
		{"gpt_oss", "[job]\nprint_args = false\n[model]\nname = \"gpt_oss\"\nflavor = \"debugmodel\"\n",
			KernelFA2, AttentionFlash, false, "runs FlexAttention"},
	} {
		tt, err := ImportTorchtitan(c.name+".toml", []byte(c.toml), TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: "B200"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := tt.Scenario()
		s, err := Load("s.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		tr := s.Training
		if tr.AttentionKernel != c.kernel || tr.Attention != c.attention || tr.OpRecomputeAttention != c.opAtt {
			t.Errorf("%s: attention %s kernel %s op_recompute_attention %v, want %s %s %v\n%s", c.name, tr.Attention, tr.AttentionKernel, tr.OpRecomputeAttention, c.attention, c.kernel, c.opAtt, out)
		}
		if !strings.Contains(string(out), c.note) {
			t.Errorf("%s: no %q in\n%s", c.name, c.note, out)
		}
	}
	// The early stop's source names the key that dates the file before
	// 25413d2 (QA33 LOW-3: "whose keys this file has" read as if the
	// file had 25413d2's keys).
	tt, err := ImportTorchtitan(tt6, ttFile(t, tt6), TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: "B200"})
	if err != nil {
		t.Fatal(err)
	}
	const early = "recompute_early_stop: true  # torch's default: training.compile dates the file before torchtitan 25413d2 (2025-08-29), which added activation_checkpoint.early_stop, default false\n"
	if !strings.Contains(string(tt.Scenario()), early) {
		t.Errorf("no %q in\n%s", early, tt.Scenario())
	}
	// Every key that dates a file is one some torchtitan read.
	for _, m := range []map[string]string{ttAfterCuDNNB200, ttPreCuDNNAll, ttPreCuDNNSaved} {
		for k := range m {
			if !ttAllKeys[k] {
				t.Errorf("%s: in no torchtitan job config", k)
			}
		}
	}
}
