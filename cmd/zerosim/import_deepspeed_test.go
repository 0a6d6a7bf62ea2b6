package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// The arguments TestUnhonouredFlagsRejected gives the command.
func init() { commandArgs["import deepspeed"] = []string{"ds_config.json"} }

// TestImportDeepSpeedCLI: with --hf and a cluster, the printed scenario
// loads as it is and holds what the ds_config.json says (FlagPerf's Llama 2
// 7B: stage 3, reduce_bucket_size 1e7 bf16 elements, overlap_comm true,
// gradient_clipping 1.0, AdamW with weight_decay 0.1) beside the model's
// published total; the stack fills in DeepSpeed's boundary.
func TestImportDeepSpeedCLI(t *testing.T) {
	const ds, hf = "../../docs/examples/deepspeed/", "../../scenarios/testdata/hf/llama-2-7b/config.json"
	for _, c := range []struct {
		args         []string
		stage        int
		bucket       units.Bytes
		overlap      bool
		prefetch     int
		micro, accum int64
		clip         scenarios.GradClip
		offload      scenarios.OffloadDevice
	}{
		{[]string{ds + "flagperf-llama2-7b.json", "--hf", hf, "--gpu", "A100-80GB"}, 3, 20_000_000, true, 1, 1, 1, scenarios.GradClipNorm, ""},
		// 64 = 2 · 4 · (2 nodes · 4 GPUs) would fail; 2 · 4 · 8 holds.
		{[]string{ds + "deepspeedexamples-llama-13b-zero3-offload.json", "--hf", hf, "--gpu", "H100-80GB", "--nodes", "2", "--gpus-per-node", "4"}, 3, 400_000_000, true, 1, 2, 4, scenarios.GradClipNorm, scenarios.OffloadCPU},
		// The Trainer's "auto" values: 4096² bf16 elements of bucket.
		{[]string{ds + "flagperf-llava1.5-7b-finetune.json", "--hf", hf, "--gpu", "A100-80GB", "--dtype", "bf16", "--micro-batch", "16", "--grad-accum", "2"}, 3, 32 << 20, true, 1, 16, 2, scenarios.GradClipNorm, ""},
		// Megatron-DeepSpeed's stage 1: 256 = 1 · 32 · 8.
		{[]string{ds + "flagperf-llama2-7b-megatron-deepspeed.json", "--hf", hf, "--gpu", "A100-80GB"}, 1, 10_000_000, false, 1, 1, 32, scenarios.GradClipNorm, ""},
	} {
		out, stderr, code := runValidateCLI(t, nil, append([]string{"import", "deepspeed"}, c.args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("%q: code %d: %s", c.args, code, stderr)
		}
		s, err := scenarios.Load("imported.yaml", []byte(out), nil)
		if err != nil {
			t.Fatalf("%q: the output does not load: %v\n%s", c.args, err, out)
		}
		p, m, tr := s.Parallelism, s.Communication, s.Training
		if int64(s.Model.Params) != 6_738_415_616 || p.DP != 8 || p.Stage != c.stage || m.BucketSize != c.bucket || m.Overlap == nil || *m.Overlap != c.overlap ||
			(c.stage == 3 && (m.PrefetchDepth == nil || *m.PrefetchDepth != c.prefetch)) || tr.MicroBatch != c.micro || tr.GradAccum != c.accum ||
			tr.GradClip != c.clip || s.Offload.Optimizer != c.offload || m.Boundary != scenarios.BoundaryDeepSpeed || tr.ParamDType != scenarios.BF16 {
			t.Errorf("%q: loaded %d params, dp %d, stage %d, bucket %d, overlap %v, prefetch %v, micro %d, accum %d, clip %q, offload %q, boundary %q, %s",
				c.args, s.Model.Params, p.DP, p.Stage, m.BucketSize, deref(m.Overlap), deref(m.PrefetchDepth), tr.MicroBatch, tr.GradAccum, tr.GradClip, s.Offload.Optimizer, m.Boundary, tr.ParamDType)
		}
		if !strings.HasPrefix(out, "# DeepSpeed config "+c.args[0]+": ZeRO stage ") {
			t.Errorf("%q: the header does not name the file:\n%s", c.args, out)
		}
	}

	out, _, code := runValidateCLI(t, nil, "import", "deepspeed", "--format", "json", ds+"flagperf-llama2-7b.json")
	var j struct {
		Stage    int `json:"zero_stage"`
		Settings []struct{ Key, Value, From string }
		Notes    []string
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || j.Stage != 3 || len(j.Notes) != 2 || strings.Contains(strings.Join(j.Notes, " "), "sub_group_size") ||
		j.Settings[1].Key != "communication.bucket_size" || j.Settings[1].Value != "20MB" || !strings.Contains(j.Settings[1].From, "reduce_bucket_size 1e7") {
		t.Errorf("json: %v, code %d: %s", err, code, out)
	}

	for _, c := range []struct {
		args    []string
		mention string
	}{
		{[]string{ds + "flagperf-llava1.5-7b-finetune.json"}, `bf16.enabled is "auto"`},
		{[]string{ds + "flagperf-llava1.5-7b-finetune.json", "--dtype", "bf16"}, `train_micro_batch_size_per_gpu is "auto"`},
		{[]string{ds + "flagperf-llava1.5-7b-finetune.json", "--dtype", "bf16", "--micro-batch", "1", "--grad-accum", "1"}, `reduce_bucket_size is "auto"`},
		{[]string{ds + "flagperf-llama2-7b-megatron-deepspeed.json", "--nodes", "2"}, "train_batch_size=256 is not"},
		{[]string{ds + "flagperf-llama2-7b.json", "--gpu", "B9000"}, `--gpu "B9000" is not a GPU preset`},
		{[]string{ds + "flagperf-llama2-7b.json", "--dtype", "int8"}, `--dtype "int8"`},
		{[]string{ds + "flagperf-llama2-7b.json", "--hf", ds + "flagperf-llama2-7b.json"}, "--hf: "},
		{[]string{"-"}, "standard input"},
	} {
		out, stderr, code := runValidateCLI(t, nil, append([]string{"import", "deepspeed"}, c.args...)...)
		if code != exitInput || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.mention) {
			t.Errorf("%q: code %d, stdout %d bytes, stderr %q: want exit 2 and one line naming %q", c.args, code, len(out), stderr, c.mention)
		}
	}
}

// deref is *p, or nil.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestImportDeepSpeedClusterDefaults (QA8 F8): the help shows no default
// for --nodes and --gpus-per-node, since without any cluster flag the world
// size is unknown and a config whose batch rule needs it is refused;
// either flag alone (or --gpu) takes 1 node or 8 GPUs per node for the
// other. DeepSpeedExamples' pipeline config: train_batch_size 256, micro 8.
func TestImportDeepSpeedClusterDefaults(t *testing.T) {
	const cfg = "../../docs/examples/deepspeed/deepspeedexamples-pipeline-parallelism.json"
	help, _, _ := runValidateCLI(t, nil, "import", "deepspeed", "--help")
	for _, l := range strings.Split(help, "\n") {
		if (strings.Contains(l, "--nodes int") || strings.Contains(l, "--gpus-per-node int")) && strings.Contains(l, "(default") {
			t.Errorf("help shows a default: %q", l)
		}
	}
	_, stderr, code := runValidateCLI(t, nil, "import", "deepspeed", cfg)
	if code != 2 || !strings.Contains(stderr, "gradient_accumulation_steps needs the data-parallel size") {
		t.Errorf("no cluster: code %d, %q", code, stderr)
	}
	for _, c := range []struct {
		args              []string
		nodes, gpn, accum string
	}{
		// 256 / (8 · 8) = 4; 256 / (8 · 4) = 8; 256 / (8 · 16) = 2.
		{[]string{"--nodes", "1"}, "1", "8", "4"},
		{[]string{"--gpus-per-node", "4"}, "1", "4", "8"},
		{[]string{"--nodes", "2", "--gpus-per-node", "8"}, "2", "8", "2"},
	} {
		out, stderr, code := runValidateCLI(t, nil, append([]string{"import", "deepspeed", cfg}, c.args...)...)
		if code != 0 || !strings.Contains(out, "  nodes: "+c.nodes+"\n  gpus_per_node: "+c.gpn+"\n") || !strings.Contains(out, "grad_accum: "+c.accum) {
			t.Errorf("%v: code %d %s\n%s", c.args, code, stderr, out)
		}
	}
}

// TestImportDeepSpeedMoEGathered: on a MoE config.json the imported
// prefetch depth counts the units that follow (experts.i alone holds more
// than the 5e8 elements DeepSpeed keeps in flight: depth 1), so ZeRO-3's
// gathered parameters peak at the units kept across the forward/backward
// boundary (memory.KeptAcrossBoundary under the deepspeed stack: those
// whose later units, forward and backward, hold under 1e9 parameters):
// experts.47 + final_norm + lm_head of Qwen3-30B-A3B, (603,979,776 + 2,048
// + 311,164,928) · 2 B, and experts.31 + final_norm + lm_head of Mixtral
// 8x7B, (1,409,286,144 + 4,096 + 131,072,000) · 2 B. Dividing by block.0's
// parameters gave depths 27 and 12: 17,447,377,920 and 20,233,814,016 B.
func TestImportDeepSpeedMoEGathered(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "ds_z3.json")
	// A plain ZeRO-3 config (QA12 F3): stage3_prefetch_bucket_size 5e8,
	// stage3_max_live_parameters at DeepSpeed's 1e9.
	if err := os.WriteFile(ds, []byte(`{"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4,
 "zero_optimization": {"stage": 3, "overlap_comm": true, "reduce_bucket_size": 5e8, "stage3_prefetch_bucket_size": 5e8},
 "optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hf       string
		gathered int64
	}{
		{"../../scenarios/testdata/hf-extra/qwen3-30b-a3b.json", (603_979_776 + 2_048 + 311_164_928) * 2},
		{"../../scenarios/testdata/hf/mixtral-8x7b/config.json", (1_409_286_144 + 4_096 + 131_072_000) * 2},
	} {
		out, stderr, code := runValidateCLI(t, nil, "import", "deepspeed", ds, "--hf", c.hf, "--gpu", "H100-80GB", "--nodes", "2", "--gpus-per-node", "8")
		if code != 0 || stderr != "" || !strings.Contains(out, "\n  prefetch_depth: 1\n") {
			t.Fatalf("%s: code %d, %s\n%s", c.hf, code, stderr, out)
		}
		mem, stderr, code := runValidateCLI(t, []byte(out), "memory", "-", "--stage", "3", "--format", "json")
		var doc struct {
			Reports []struct {
				Components []struct {
					Name string
					Peak int64
				}
			}
		}
		err := json.Unmarshal([]byte(mem), &doc)
		rs := doc.Reports
		if err != nil || code != 0 || len(rs) != 1 {
			t.Fatalf("%s: memory: code %d, %v, %s", c.hf, code, err, stderr)
		}
		var got int64 = -1
		for _, r := range rs[0].Components {
			if r.Name == "gathered params" {
				got = r.Peak
			}
		}
		if got != c.gathered {
			t.Errorf("%s: gathered params peak %d B, want %d", c.hf, got, c.gathered)
		}
	}
}

// TestImportDeepSpeedLiger: --liger stands for the Trainer's
// --use_liger_kernel: ms-swift's zero3.json (docs/examples/deepspeed) with
// Qwen2.5-7B imports with training.liger: true, once in the training
// section, and loads; without the flag the key is absent.
func TestImportDeepSpeedLiger(t *testing.T) {
	args := []string{"import", "deepspeed", "../../docs/examples/deepspeed/msswift-zero3.json", "--hf", "../../scenarios/testdata/hf/qwen2.5-7b/config.json",
		"--gpu", "A100-80GB", "--gpus-per-node", "4", "--nodes", "1", "--dtype", "bf16", "--micro-batch", "1", "--grad-accum", "2"}
	for _, liger := range []bool{false, true} {
		a := args
		if liger {
			a = append(slices.Clone(args), "--liger")
		}
		out, stderr, code := runValidateCLI(t, nil, a...)
		if code != 0 || stderr != "" {
			t.Fatalf("--liger %v: code %d: %s", liger, code, stderr)
		}
		s, err := scenarios.Load("imported.yaml", []byte(out), nil)
		if err != nil {
			t.Fatalf("--liger %v: %v\n%s", liger, err, out)
		}
		if s.Training.Liger != liger || strings.Count(out, "liger: true") != map[bool]int{false: 0, true: 1}[liger] || strings.Count(out, "\ntraining:\n") != 1 {
			t.Errorf("--liger %v: loaded liger %v\n%s", liger, s.Training.Liger, out)
		}
	}
}
