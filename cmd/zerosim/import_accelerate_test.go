package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// The arguments TestUnhonouredFlagsRejected gives the command.
func init() { commandArgs["import accelerate"] = []string{"fsdp.yaml"} }

// TestImportAccelerateCLI: with --hf and --gpu the printed scenario loads
// as it is and holds what the Accelerate config says (Llama 2 7B's
// published total; accelerate's fsdp.yaml template: FSDP1 FULL_SHARD on 2
// processes, BACKWARD_PRE, bf16; alignment-handbook's on 8; trl's FSDP2 on
// 8), with the Trainer's arguments from the flags.
func TestImportAccelerateCLI(t *testing.T) {
	const dir, hf = "../../scenarios/testdata/accelerate/", "../../scenarios/testdata/hf/llama-2-7b/config.json"
	for _, c := range []struct {
		args            []string
		gpus, dp, stage int
		boundary        scenarios.Boundary
		bwd             int // backward_prefetch_depth, -1 unset
		flat            bool
		micro, accum    int64
		seq             int64
		recompute       scenarios.Recompute
	}{
		{[]string{dir + "accelerate-fsdp.yaml", "--hf", hf, "--gpu", "H100-80GB"}, 2, 2, 3, scenarios.BoundaryFSDP1, 1, true, 8, 1, 4096, scenarios.RecomputeNone},
		{[]string{dir + "alignment-handbook-fsdp.yaml", "--hf", hf, "--gpu", "A100-80GB", "--micro-batch", "2", "--grad-accum", "4", "--seq-len", "2048", "--recompute", "full"},
			8, 8, 3, scenarios.BoundaryFSDP1, 1, true, 2, 4, 2048, scenarios.RecomputeFull},
		{[]string{dir + "trl-fsdp2.yaml", "--hf", hf, "--gpu", "H100-80GB", "--micro-batch", "1"}, 8, 8, 3, scenarios.BoundaryFSDP2, -1, false, 1, 1, 4096, scenarios.RecomputeNone},
	} {
		out, stderr, code := runValidateCLI(t, nil, append([]string{"import", "accelerate"}, c.args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("%q: code %d: %s", c.args, code, stderr)
		}
		s, err := scenarios.Load("imported.yaml", []byte(out), nil)
		if err != nil {
			t.Fatalf("%q: the output does not load: %v\n%s", c.args, err, out)
		}
		p, m, tr := s.Parallelism, s.Communication, s.Training
		bwd := -1
		if m.BackwardPrefetchDepth != nil {
			bwd = *m.BackwardPrefetchDepth
		}
		if int64(s.Model.Params) != 6_738_415_616 || s.Cluster.Nodes != 1 || s.Cluster.GPUsPerNode != c.gpus || s.Cluster.GPU != c.args[4] ||
			p.DP != c.dp || p.Stage != c.stage || m.Boundary != c.boundary || bwd != c.bwd || tr.FlatParamViews != c.flat ||
			tr.MicroBatch != c.micro || tr.GradAccum != c.accum || s.Model.SeqLen != c.seq || tr.Recompute != c.recompute ||
			tr.ParamDType != scenarios.BF16 || tr.ShardDType != scenarios.FP32 || tr.OptimizerImpl != scenarios.OptimizerFused || tr.GradClip != scenarios.GradClipNorm {
			t.Errorf("%q: loaded %d params, %d×%d %s, dp %d, stage %d, boundary %q, bwd %d, flat %v, micro %d, accum %d, seq %d, recompute %q, %s/%s, %q, %q",
				c.args, s.Model.Params, s.Cluster.Nodes, s.Cluster.GPUsPerNode, s.Cluster.GPU, p.DP, p.Stage, m.Boundary, bwd, tr.FlatParamViews,
				tr.MicroBatch, tr.GradAccum, s.Model.SeqLen, tr.Recompute, tr.ParamDType, tr.ShardDType, tr.OptimizerImpl, tr.GradClip)
		}
		if !strings.HasPrefix(out, "# Accelerate config "+c.args[0]+": FSDP") {
			t.Errorf("%q: the header does not name the file:\n%s", c.args, out)
		}
	}
	// QA8 F7: --nodes and --gpus-per-node stand for accelerate launch's
	// --num_machines and --num_processes (examples/slurm/
	// submit_multinode_fsdp.sh:29-30 at 16cb6eb8).
	out, stderr, code := runValidateCLI(t, nil, "import", "accelerate", dir+"slurm-fsdp.yaml", "--hf", hf, "--gpu", "H100-80GB", "--nodes", "2", "--gpus-per-node", "8")
	if code != 0 {
		t.Fatalf("slurm: code %d: %s", code, stderr)
	}
	if s, err := scenarios.Load("imported.yaml", []byte(out), nil); err != nil || s.Cluster.Nodes != 2 || s.Cluster.GPUsPerNode != 8 || s.Parallelism.DP != 16 || s.Parallelism.Stage != 3 {
		t.Errorf("slurm: %v\n%s", err, out)
	}

	// qauser29 #5: trl's DeepSpeed ZeRO-3 config (deepspeed_config
	// inline) imports in place through the ds_config Accelerate derives
	// (before: it printed the ds_config and refused with exit 2).
	out, stderr, code = runValidateCLI(t, nil, "import", "accelerate", dir+"trl-deepspeed-zero3.yaml", "--hf", hf, "--gpu", "H100-80GB", "--nodes", "2", "--gpus-per-node", "8", "--micro-batch", "1", "--recompute", "full")
	if code != 0 || stderr != "" {
		t.Fatalf("trl deepspeed: code %d: %s", code, stderr)
	}
	if s, err := scenarios.Load("imported.yaml", []byte(out), nil); err != nil || s.Cluster.Nodes != 2 || s.Parallelism.DP != 16 || s.Parallelism.Stage != 3 ||
		s.Communication.Boundary != scenarios.BoundaryDeepSpeed || s.Training.ParamDType != scenarios.FP16 || s.Training.MicroBatch != 1 || s.Training.GradAccum != 1 || s.Training.Recompute != scenarios.RecomputeFull {
		t.Errorf("trl deepspeed: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "# Accelerate config "+dir+"trl-deepspeed-zero3.yaml: DeepSpeed ZeRO stage 3, distributed_type DEEPSPEED") ||
		!strings.Contains(out, `# note: distributed_type DEEPSPEED with deepspeed_config inline (line 3): Accelerate's DeepSpeedPlugin derives the ds_config {"train_batch_size": "auto"`) {
		t.Errorf("trl deepspeed: header or note:\n%s", out)
	}

	out, _, code = runValidateCLI(t, nil, "import", "accelerate", "--format", "json", dir+"trl-fsdp2.yaml")
	var j struct {
		Type     string `json:"distributed_type"`
		Version  int    `json:"fsdp_version"`
		Settings []struct{ Key, Value, From string }
		Notes    []string
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || j.Type != "FSDP" || j.Version != 2 || len(j.Notes) != 2 ||
		j.Settings[0].Key != "cluster.nodes" || j.Settings[3].Key != "parallelism.zero_stage" || j.Settings[3].Value != "3" ||
		!strings.Contains(j.Settings[3].From, "fsdp_reshard_after_forward true") {
		t.Errorf("json: %v, code %d: %s", err, code, out)
	}

	for _, c := range []struct {
		args    []string
		mention string
	}{
		{[]string{dir + "trl-fsdp2.yaml", "--gpu", "B9000"}, `--gpu "B9000" is not a GPU preset`},
		{[]string{dir + "trl-fsdp2.yaml", "--micro-batch", "0"}, "--micro-batch 0 is out of range"},
		{[]string{dir + "trl-fsdp2.yaml", "--grad-accum", "5000"}, "--grad-accum 5000 is out of range"},
		{[]string{dir + "trl-fsdp2.yaml", "--seq-len", "2048"}, "--seq-len sets model.seq_len, which needs the model"},
		{[]string{dir + "trl-fsdp2.yaml", "--recompute", "some"}, `--recompute "some": use none, selective, op or full`},
		// A Hugging Face config.json names the import that reads it
		// (it said "no distributed_type … use distributed_type: FSDP").
		{[]string{hf}, `config.json: not an Accelerate config: it has a Hugging Face config's "architectures", so run: zerosim import hf`},
		{[]string{dir + "README.md"}, "README.md:3:1: not valid YAML"},
		{[]string{dir + "missing.yaml"}, "missing.yaml: cannot read the file"},
		// QA8 F7: Accelerate's SLURM config leaves num_processes to
		// accelerate launch; --gpus-per-node gives it.
		{[]string{dir + "slurm-fsdp.yaml"}, "slurm-fsdp.yaml:1:1: no num_processes: the config leaves the count to accelerate launch --num_processes"},
		{[]string{dir + "slurm-fsdp.yaml", "--gpus-per-node", "0"}, "--gpus-per-node 0 is out of range"},
		{[]string{dir + "slurm-fsdp.yaml", "--nodes", "0", "--gpus-per-node", "8"}, "--nodes 0 is out of range"},
	} {
		_, stderr, code := runValidateCLI(t, nil, append([]string{"import", "accelerate"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.mention) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: code %d, stderr %q, want one line with %q", c.args, code, stderr, c.mention)
		}
	}
}

// TestImportAccelerateLiger: --liger stands for the Trainer's
// --use_liger_kernel and writes training.liger: true once, in the training
// section, for FSDP and DeepSpeed configs, and the output loads; under DDP
// (autocast over fp32 parameters, not modelled with Liger) it is refused.
func TestImportAccelerateLiger(t *testing.T) {
	const dir, hf = "../../scenarios/testdata/accelerate/", "../../scenarios/testdata/hf/llama-2-7b/config.json"
	for _, args := range [][]string{
		{dir + "trl-fsdp2.yaml", "--hf", hf, "--gpu", "H100-80GB", "--micro-batch", "1", "--liger"},
		{dir + "trl-deepspeed-zero3.yaml", "--hf", hf, "--gpu", "H100-80GB", "--nodes", "2", "--gpus-per-node", "8", "--micro-batch", "1", "--liger"},
	} {
		out, stderr, code := runValidateCLI(t, nil, append([]string{"import", "accelerate"}, args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("%q: code %d: %s", args, code, stderr)
		}
		s, err := scenarios.Load("imported.yaml", []byte(out), nil)
		if err != nil || !s.Training.Liger {
			t.Errorf("%q: liger %v, %v\n%s", args, s != nil && s.Training.Liger, err, out)
		}
		if strings.Count(out, "\ntraining:\n") != 1 || !strings.Contains(out, "# --liger (the Trainer's --use_liger_kernel") {
			t.Errorf("%q: training.liger not written once in the training section:\n%s", args, out)
		}
	}
}
