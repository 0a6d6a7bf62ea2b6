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
