package scenarios

import (
	"bytes"
	"fmt"
	"slices"
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
		checkImportedAttention(t, c.name, c.file, ttFile(t, c.file, c.edits...), c.gpu, c.kernel, c.attention, c.opAttention, c.note)
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
			KernelFlex, AttentionFlash, false, "runs FlexAttention"},
	} {
		checkImportedAttention(t, c.name, c.name+".toml", []byte(c.toml), "B200", c.kernel, c.attention, c.opAtt, c.note)
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

// TestImportTorchtitanUnknownKeyEra: a key no torchtitan job config has is
// judged as the file's torchtitan judged it (ttDoc.unknownKey). Before
// eadca48 (2025-08-28) torchtitan ignored it: the argparse
// config_manager.py merged the TOML's tables unread (lines 618-620 at
// 9dec370), then _dict_to_dataclass kept JobConfig's fields and dropped
// the rest (torchtitan/config/manager.py lines 157-170 at 7156416); from
// eadca48 it raises ValueError "Invalid field names". torchtitan's own
// deepseek_v3_16b.toml of b5b7ffb (byte for byte) gives float8.moe_fqns,
// a key torchtitan never had (the field was moe_fqns_prototype, which
// 4256f7561 fixed the file to the day after eadca48), and training.compile,
// which no torchtitan from eadca48 on has: it ran on a torchtitan that
// ignored moe_fqns, so it imports, with one warning at the key, to the
// scenario of the file without that line. Before, it was refused. The
// same file of cd337db, which no key dates before eadca48, is read as
// 238fa99's and refused.
func TestImportTorchtitanUnknownKeyEra(t *testing.T) {
	const f = "deepseek_v3_16b-b5b7ffb.toml"
	cl := TorchtitanCluster{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB"}
	tt, err := ImportTorchtitan(f, ttFile(t, f), cl)
	if err != nil {
		t.Fatalf("torchtitan's own file of b5b7ffb: %v", err)
	}
	const tyro = "deepseek_v3_16b-b5b7ffb.toml:71:1: float8.moe_fqns is not a torchtitan job config key: ignored, as the file's torchtitan ignored it (training.compile, removed from torchtitan's config by 08b8b244f (2025-08-20), dates the file before eadca48 (2025-08-28), which first refused unknown keys; until then _dict_to_dataclass took JobConfig's fields and dropped the rest: torchtitan/config/manager.py:157-170 at 7156416)"
	if !slices.Equal(tt.Warnings, []string{tyro}) {
		t.Errorf("warnings %q, want [%q]", tt.Warnings, tyro)
	}
	cut, err := ImportTorchtitan(f, ttFile(t, f, "moe_fqns = [\"experts\"]\n", ""), cl)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tt.Scenario(), cut.Scenario(); !bytes.Equal(got, want) || len(cut.Warnings) != 0 {
		t.Errorf("not the scenario of the file without the key (warnings %q):\n%s\nwant\n%s", cut.Warnings, got, want)
	}
	if _, err := Load("s.yaml", tt.Scenario(), nil); err != nil {
		t.Errorf("the imported scenario does not load: %v", err)
	}

	const strict = ` torchtitan refuses unknown keys: ValueError "Invalid field names", torchtitan/config/manager.py:160-171 at 238fa99, since eadca48 (2025-08-28); before it torchtitan dropped them unread, _dict_to_dataclass in torchtitan/config_manager.py lines 740-753 at e7c0cae, but no key of the file dates it so)`
	const argparse = `float8.enable_float8_linear, removed from torchtitan's config by 57387af0e (2025-02-15), dates the file before c1c2f55 (2025-04-18)`
	for _, c := range []struct {
		name, file string
		edits      []string
		warn, err  string
	}{
		{"cd337db's file", "deepseek_v3_16b-cd337db.toml", nil, "",
			"j.toml:75:1: float8.moe_fqns is not a torchtitan job config key (remove it or fix its spelling;" + strict},
		// e7c0cae (2025-06-11): the default micro-batch, as torchtitan ran it.
		{"e7c0cae's file, a typo", "llama3_8b-e7c0cae.toml", []string{"local_batch_size = 1", "local_batch_sze = 1"},
			"j.toml:33:1: training.local_batch_sze is not a torchtitan job config key (did you mean training.local_batch_size?): ignored, as the file's torchtitan ignored it (checkpoint.model_weights_only, removed from torchtitan's config by cddd7dc80 (2025-06-13), dates the file before eadca48 (2025-08-28)", ""},
		// A table torchtitan did not have, and a top-level value: dropped.
		{"e7c0cae's file, a table", "llama3_8b-e7c0cae.toml", []string{"[training]", "[foo]\nx = 1\ny = 2\n[training]"},
			"j.toml:32:1: foo is not a torchtitan job config table (did you mean job?): ignored, as the file's torchtitan ignored it (checkpoint.model_weights_only", ""},
		{"e7c0cae's file, a top-level value", "llama3_8b-e7c0cae.toml", []string{"[job]", "foo = 1\n[job]"},
			"j.toml:4:1: foo is not a torchtitan job config key (did you mean job?): ignored, as the file's torchtitan ignored it (checkpoint.model_weights_only", ""},
		// 9dec370 (2024-12-26): argparse merged the table unread...
		{"9dec370's file, a typo", "llama3_8b-9dec370.toml", []string{"batch_size = 1", "batch_sze = 1"},
			"j.toml:29:1: training.batch_sze is not a torchtitan job config key (did you mean training.batch_size?): ignored, as the file's torchtitan ignored it (" + argparse + ", until which the argparse config_manager.py merged the TOML's tables unread: args_dict[k] |= v, lines 618-620 at 9dec370)", ""},
		// ... and raised TypeError at a top-level value.
		{"9dec370's file, a top-level value", "llama3_8b-9dec370.toml", []string{"[job]", "foo = 1\n[job]"}, "",
			"j.toml:4:1: foo is not a torchtitan job config table (did you mean job? " + argparse + ", whose argparse config_manager.py refused a top-level value that is not a table: args_dict[k] |= v raises TypeError, lines 618-620 at 9dec370)"},
	} {
		tt, err := ImportTorchtitan("j.toml", ttFile(t, c.file, c.edits...), TorchtitanCluster{})
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case len(tt.Warnings) != 1 || !strings.HasPrefix(tt.Warnings[0], c.warn):
			t.Errorf("%s: warnings %q, want one starting %q", c.name, tt.Warnings, c.warn)
		case c.name == "e7c0cae's file, a typo" && tt.MicroBatch != 8:
			t.Errorf("%s: micro-batch %d, want torchtitan's default 8 (job_config.py at e7c0cae)", c.name, tt.MicroBatch)
		}
	}

	// Every key that dates a file before eadca48 is one some torchtitan
	// read, removed before eadca48; the other dating tables' keys of that
	// time are among them, removed by the same commit.
	for k, by := range ttPreStrict {
		if !ttAllKeys[k] {
			t.Errorf("%s is in no torchtitan job config", k)
		}
		if ttRemovedDate(by) >= "2025-08-28" {
			t.Errorf("%s removed by %s, not before eadca48", k, by)
		}
	}
	for _, m := range []map[string]string{ttPreDelPred, ttPreExpandable, ttPreDSV3Flex} {
		for k, by := range m {
			if ttPreStrict[k] != by {
				t.Errorf("%s: removed by %q, ttPreStrict says %q", k, by, ttPreStrict[k])
			}
		}
	}
}

// TestImportTorchtitanUnknownKeyDetails holds three rules of
// ttDoc.unknownKey and the era keys that the mutation review (mutrev s28)
// found no test of:
//   - the refused key is the file's first unknown one (torchtitan's
//     _dict_to_dataclass raises on the first field it does not know, in
//     the TOML's order): in cd337db's deepseek_v3_16b.toml, an unknown key
//     at line 7 in [profiling] beside one in [metrics] (line 15), which
//     sorts before it, and float8.moe_fqns (line 77);
//   - an empty top-level table ([foo]) in an argparse-era file (9dec370)
//     is ignored with a warning, as config_manager.py's
//     args_dict[k] |= v merged it (lines 618-620 at 9dec370): only a
//     top-level value that is not a table raised TypeError;
//   - a key of ttPreDSV3Flex alone (lr_scheduler.lr_min, removed by
//     881f0ca46 on 2025-07-31) dates the file before 25413d2 (2025-08-29),
//     whose activation_checkpoint.early_stop defaults to false: early stop
//     is on, as torch's checkpoint wrapper had it; the same file without
//     the key is TorchtitanCommit's, early stop off.
func TestImportTorchtitanUnknownKeyDetails(t *testing.T) {
	_, err := ImportTorchtitan("j.toml", ttFile(t, "deepseek_v3_16b-cd337db.toml", "[profiling]", "[profiling]\nzzz_unknown = 1", "[metrics]", "[metrics]\naaa_unknown = 1"), TorchtitanCluster{})
	if want := "j.toml:7:1: profiling.zzz_unknown is not a torchtitan job config key"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("two unknown keys: %v, want %s…", err, want)
	}

	tt, err := ImportTorchtitan("j.toml", ttFile(t, "llama3_8b-9dec370.toml", "[job]", "[foo]\n[job]"), TorchtitanCluster{})
	if err != nil {
		t.Errorf("an empty table in 9dec370's file: %v", err)
	} else if want := "j.toml:4:1: foo is not a torchtitan job config table"; len(tt.Warnings) != 1 || !strings.HasPrefix(tt.Warnings[0], want) {
		t.Errorf("an empty table in 9dec370's file: warnings %q, want one starting %q", tt.Warnings, want)
	}

	for _, c := range []struct {
		edits []string
		early bool
	}{
		{nil, false},
		{[]string{"[lr_scheduler]", "[lr_scheduler]\nlr_min = 0.0"}, true},
	} {
		tt, err := ImportTorchtitan("j.toml", ttFile(t, "llama3_8b.toml", c.edits...), TorchtitanCluster{})
		if err != nil {
			t.Errorf("%q: %v", c.edits, err)
			continue
		}
		if tt.EarlyStop != c.early {
			t.Errorf("%q: recompute early stop %v, want %v (%s)", c.edits, tt.EarlyStop, c.early, tt.Sources["recompute_early_stop"])
		}
	}
}

// checkImportedAttention imports file (a torchtitan TOML) on one node of
// eight gpu, loads the scenario it writes and checks the attention,
// kernel and op_recompute_attention it chose and that the scenario
// carries note.
func checkImportedAttention(t *testing.T, name, file string, toml []byte, gpu string, kernel AttentionKernel, attention Attention, opAtt bool, note string) {
	t.Helper()
	tt, err := ImportTorchtitan(file, toml, TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: gpu})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := tt.Scenario()
	s, err := Load("s.yaml", out, nil)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	tr := s.Training
	if tr.AttentionKernel != kernel || tr.Attention != attention || tr.OpRecomputeAttention != opAtt {
		t.Errorf("%s: attention %s kernel %s op_recompute_attention %v, want %s %s %v\n%s", name, tr.Attention, tr.AttentionKernel, tr.OpRecomputeAttention, attention, kernel, opAtt, out)
	}
	if !strings.Contains(string(out), note) {
		t.Errorf("%s: no %q in\n%s", name, note, out)
	}
}

// TestImportTorchtitanFlexBeforeGQA: a FlexAttention flavor of a file
// dated before b39377f (so before ff0829c, whose attention passes
// enable_gqa instead of repeating k and v) with fewer kv heads than heads
// keeps the stack preset's sdpa (k and v repeated), and a note says so, so
// that the notes and the scenario agree (qauser29 F3); with as many
// (deepseek_v3's MLA) it is flash either way (TestImportTorchtitanDSV3SDPA).
func TestImportTorchtitanFlexBeforeGQA(t *testing.T) {
	toml := ttFile(t, "llama3_8b.toml", "[job]", "[job]\nprint_args = false", `flavor = "8B"`, `flavor = "8B_flex"`)
	checkImportedAttention(t, "8B_flex print_args", "llama3_8b.toml", toml, "H100-80GB", KernelFlex, AttentionSDPA, false,
		"model.flavor 8B_flex runs FlexAttention, and job.print_args dates the file before b39377f (2025-12-01), so before ff0829c (2026-01-27): k and v were repeated from 8 to 32 heads before it (repeat_kv), as stack torchtitan's training.attention: sdpa keeps them")
	// Without the old key: 238fa99's FlexAttention with enable_gqa.
	checkImportedAttention(t, "8B_flex", "llama3_8b.toml", ttFile(t, "llama3_8b.toml", `flavor = "8B"`, `flavor = "8B_flex"`), "H100-80GB", KernelFlex, AttentionFlash, false,
		"model.flavor 8B_flex runs FlexAttention with enable_gqa: written as training.attention: flash")
}

// TestImportTorchtitanA2AEra: c4e2291155a4 (2025-09-06) put
// _c10d_functional.all_to_all_single in deepseek_v3's and llama4's op
// _save_list and added no key, so training.op_save_all_to_all is written
// true only for a file whose keys date it later (ttAfterA2ASave) or whose
// model had it from its first commit (gpt_oss, de335b321). torchtitan's
// deepseek_v3_16b.toml of 238fa99 gives job.print_config (7c1048075,
// 2025-10-14): true. Without it and its [quantize.*] tables (8a2686c4a,
// 2025-09-30) no key dates it after c4e2291 (the
// file of c4e2291's parent reads so): false, with a note saying how to set
// it. With EP 1
// there is no all-to-all and nothing is written or noted.
func TestImportTorchtitanA2AEra(t *testing.T) {
	c := TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB"}
	const key = "op_save_all_to_all: true  # job.print_config (torchtitan 7c1048075 (2025-10-14)) dates the file after c4e2291 (2025-09-06), whose _save_list keeps _c10d_functional.all_to_all_single\n"
	const note = "(set training.op_save_all_to_all: true if yours is c4e2291 or later)"
	// The keys of the 238fa99 file that date it after c4e2291.
	undated := []string{"print_config = false\n", "", "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = false\nprecompute_float8_dynamic_scale_for_fsdp = false\nfilter_fqns = [\"output\", \"router.gate\"]\n\n[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n", ""}
	for _, tc := range []struct {
		file     string
		data     []byte
		save     bool
		wantNote bool
	}{
		{"deepseek_v3_16b.toml", ttFile(t, "deepseek_v3_16b.toml"), true, false},
		{"undated.toml", ttFile(t, "deepseek_v3_16b.toml", undated...), false, true},
		{"deepseek_v3_16b-b5b7ffb.toml", ttFile(t, "deepseek_v3_16b-b5b7ffb.toml", "expert_parallel_degree = 1", "expert_parallel_degree = 8", "mode = \"full\"", "mode = \"selective\"\nselective_ac_option = \"op\""), false, false},
		{"ep1.toml", ttFile(t, "deepseek_v3_16b.toml", append(undated, "expert_parallel_degree = 8", "expert_parallel_degree = 1")...), false, false},
	} {
		tt, err := ImportTorchtitan(tc.file, tc.data, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		out := string(tt.Scenario())
		if tt.OpSaveAllToAll != tc.save || strings.Contains(out, key) != tc.save || strings.Contains(out, "\n  op_save_all_to_all: true  #") != tc.save {
			t.Errorf("%s: op_save_all_to_all %t, want %t (want the line %q iff true) in\n%s", tc.file, tt.OpSaveAllToAll, tc.save, key, out)
		}
		if tc.file == "deepseek_v3_16b-b5b7ffb.toml" && !strings.Contains(strings.Join(tt.Notes, "\n"), "training.compile dates the file before torchtitan 25413d2 (2025-08-29), so before c4e2291") {
			t.Errorf("%s: no note dating it before c4e2291:\n%s", tc.file, strings.Join(tt.Notes, "\n"))
		}
		if got := strings.Contains(strings.Join(tt.Notes, "\n"), note); got != tc.wantNote {
			t.Errorf("%s: note %q given %t, want %t; notes:\n%s", tc.file, note, got, tc.wantNote, strings.Join(tt.Notes, "\n"))
		}
		s, err := Load(tc.file+".yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: the import does not load: %v", tc.file, err)
		}
		if s.Training.OpSaveAllToAll != tc.save {
			t.Errorf("%s: loads with op_save_all_to_all %t, want %t", tc.file, s.Training.OpSaveAllToAll, tc.save)
		}
	}
	for k := range ttAfterA2ASave {
		if !ttAllKeys[k] || ttPreStrict[k] != "" {
			t.Errorf("%s: not a key of TorchtitanCommit's JobConfig", k)
		}
	}
}

// TestImportTorchtitanAbsEra: torchtitan's op policy kept aten.abs's
// outputs from 87e2c09c4 (2024-11-26) to 88247277c (2025-02-06), and
// neither commit changed a key, so training.op_save_abs is written true
// only for a file whose keys date it inside (one of ttAbsAdded and one of
// ttAbsRemoved), false, with its reason, for a file dated before or
// after, and false with a note for one they cannot date: 9dec370's own
// llama3_8b.toml with float8 on, whose keys span the window. It is written
// only where it counts: the op policy with eager float8.
func TestImportTorchtitanAbsEra(t *testing.T) {
	c := TorchtitanCluster{Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB"}
	fp8 := []string{"enable_float8_linear = false", "enable_float8_linear = true"}
	with := func(edits ...string) []byte {
		return ttFile(t, "llama3_8b-9dec370.toml", append(slices.Clone(fp8), edits...)...)
	}
	const note = "(set it true if your torchtitan is of that window"
	for _, tc := range []struct {
		name    string
		data    []byte
		written bool // the key is written
		save    bool
		from    string // in its comment
	}{
		{"undated", with(), true, false, "no key dates the file inside the window 87e2c09c4"},
		{"inside", with("log_freq = 10", "log_freq = 10\nenable_wandb = false", "enable_float8_linear = true", "enable_float8_linear = true\nscaling_type_input = \"dynamic\""), true, true,
			"metrics.enable_wandb (added by 6a6f755d2 (2024-12-03)) and float8.scaling_type_input (removed by 2271b6386 (2025-01-31)) date the file inside"},
		{"added only", with("log_freq = 10", "log_freq = 10\nenable_wandb = false"), true, false, "no key dates the file inside"},
		{"after", with("log_freq = 10", "log_freq = 10\nenable_wandb = false", "interval = 500", "interval = 500\nexclude_from_loading = []"), true, false,
			"checkpoint.exclude_from_loading (torchtitan 49c6d6fc1 (2025-02-06)) dates the file after"},
		{"before", with("[profiling]", "[estimate]\nmemory = false\n\n[profiling]"), true, false, "estimate.memory (removed by 64d47fdaa (2024-07-01)) dates the file before"},
		{"compiled", with("compile = false", "compile = true", "log_freq = 10", "log_freq = 10\nenable_wandb = false", "enable_float8_linear = true", "enable_float8_linear = true\nscaling_type_input = \"dynamic\""), false, false, ""},
		{"bf16", ttFile(t, "llama3_8b-9dec370.toml"), false, false, ""},
	} {
		tt, err := ImportTorchtitan("llama3_8b.toml", tc.data, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out := string(tt.Scenario())
		line := fmt.Sprintf("\n  op_save_abs: %t  # ", tc.save)
		if got := strings.Contains(out, line); got != tc.written || tc.written && !strings.Contains(out, tc.from) {
			t.Errorf("%s: want the line %q %t, with %q, in\n%s", tc.name, line, tc.written, tc.from, out)
		}
		notes := strings.Join(tt.Notes, "\n")
		if got, want := strings.Contains(notes, note), tc.written && strings.HasPrefix(tc.from, "no key"); got != want {
			t.Errorf("%s: note %q given %t, want %t; notes:\n%s", tc.name, note, got, want, notes)
		}
		s, err := Load("llama3_8b.yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: the import does not load: %v", tc.name, err)
		}
		// Unwritten, the stack preset's 9dec370 says true: it counts
		// nothing there.
		if want := tc.save || !tc.written; s.Training.OpSaveAbs != want {
			t.Errorf("%s: loads with op_save_abs %t, want %t", tc.name, s.Training.OpSaveAbs, want)
		}
	}
	for _, m := range []map[string]string{ttAbsAdded, ttAbsRemoved, ttAbsDropped} {
		for k := range m {
			if !ttAllKeys[k] && ttPreStrict[k] == "" {
				t.Errorf("%s: a key of no torchtitan JobConfig zerosim knows", k)
			}
		}
	}
}
