package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// TestImportTorchtitanNormEra: a job config whose keys date it after
// torchtitan f8fa21e1d (ttAfterVarlen: comm.mode, lr_scheduler.total_steps,
// training.dataloader.*), which needs a PyTorch with
// torch.nn.attention.varlen and so with aten::_fused_rms_norm, imports as
// training.norm_impl: aten_fused, the key's line citing it, and loads so;
// a file of torchtitan's nn.RMSNorm era no key dates so keeps the
// composite with a note; a file of the older schema (9dec370: torchtitan's
// own RMSNorm) gets neither; nor does a file a key dates before 6a3a9da
// (e7c0cae's training.compile), whatever it gives besides, nor DDP's fp32
// model under torch.autocast, nor fp32 parameters.
func TestImportTorchtitanNormEra(t *testing.T) {
	c := TorchtitanCluster{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB"}
	const note = "(set training.norm_impl: aten_fused if yours runs PyTorch 2.9 or later)"
	comm := []string{"[lr_scheduler]", "[comm]\nmode = \"default\"\n\n[lr_scheduler]"}
	for _, tc := range []struct {
		name, file string
		edits      []string
		key        string // the key's source, "" for none
		wantNote   bool
	}{
		{"llama3 8B + comm.mode", "llama3_8b.toml", comm, "comm.mode (torchtitan d0393b37a (2025-11-25))", false},
		{"qwen3 32B + total_steps", "qwen3_32b.toml", []string{"[lr_scheduler]", "[lr_scheduler]\ntotal_steps = 1000"}, "lr_scheduler.total_steps (torchtitan 40b54e47f (2026-02-06))", false},
		{"deepseek_v3 16B + dataloader", "deepseek_v3_16b.toml", []string{"[training]", "[training]\ndataloader.num_workers = 2"}, "training.dataloader.num_workers (torchtitan 658f94cb9 (2025-12-18))", false},
		{"llama3 8B", "llama3_8b.toml", nil, "", true},
		{"llama3 8B 9dec370 + comm.mode", "llama3_8b-9dec370.toml", []string{"[training]", "[comm]\nmode = \"default\"\n\n[training]"}, "", false},
		{"llama3 8B e7c0cae + comm.mode", "llama3_8b-e7c0cae.toml", comm, "", true},
		{"llama3 8B DDP + comm.mode", "llama3_8b.toml", append(comm[:2:2], "data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 16", "data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1"), "", false},
		{"llama3 8B fp32 params + comm.mode", "llama3_8b.toml", append(comm[:2:2], "[training]", "[training]\nmixed_precision_param = \"float32\""), "", false},
	} {
		tt, err := ImportTorchtitan(tc.file, ttFile(t, tc.file, tc.edits...), c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out := string(tt.Scenario())
		line := "\n  norm_impl: aten_fused  # " + tc.key + " dates the file after f8fa21e1d (2025-11-21), which needs torch.nn.attention.varlen (PyTorch 2.10): nn.RMSNorm runs aten::_fused_rms_norm\n"
		if got := strings.Contains(out, "\n  norm_impl:"); got != (tc.key != "") || tc.key != "" && !strings.Contains(out, line) {
			t.Errorf("%s: want the line %q iff dated, got\n%s", tc.name, line, out)
		}
		if got := strings.Contains(strings.Join(tt.Notes, "\n"), note); got != tc.wantNote {
			t.Errorf("%s: note %q given %t, want %t; notes:\n%s", tc.name, note, got, tc.wantNote, strings.Join(tt.Notes, "\n"))
		}
		s, err := Load(tc.file+".yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: the import does not load: %v", tc.name, err)
		}
		if ATenRMSNorm(s) != (tc.key != "") {
			t.Errorf("%s: loads with ATenRMSNorm %t, want %t", tc.name, ATenRMSNorm(s), tc.key != "")
		}
	}
	// The keys whose first commit descends from f8fa21e1d (git
	// merge-base --is-ancestor f8fa21e1d d0393b37a, fcc5643f4, 36a4b6942,
	// 658f94cb9, 0a2107f98, 40b54e47f in pytorch/torchtitan).
	want := []string{"comm.mode", "lr_scheduler.total_steps", "parallelism.context_parallel_load_balancer",
		"parallelism.expert_parallel_comm_backend", "parallelism.pipeline_parallel_expert_parallel_overlap",
		"training.dataloader.num_workers", "training.dataloader.persistent_workers", "training.dataloader.pin_memory", "training.dataloader.prefetch_factor",
		"validation.dataloader.num_workers", "validation.dataloader.persistent_workers", "validation.dataloader.pin_memory", "validation.dataloader.prefetch_factor"}
	if got := sortedKeys(ttAfterVarlen); !slices.Equal(got, want) {
		t.Errorf("ttAfterVarlen has %q, want %q", got, want)
	}
}
