package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/scenarios"
)

// The command's outputs (outputs.go): table is the scenario sections as YAML.
func init() { commandOutputs["import accelerate"] = outputs{formats: []string{"table", "json"}} }

// importAccelerateOpts are zerosim import accelerate's flags.
type importAccelerateOpts struct {
	hf, gpu, recompute           string
	liger                        bool
	microBatch, gradAccum        int
	seqLen                       int
	microGiven, accumGiven, seqG bool
	// nodes and gpusPerNode: accelerate launch's --num_machines and
	// --num_processes / --num_machines (0: the config's).
	nodes, gpusPerNode   int
	nodesGiven, gpnGiven bool
}

// importAccelerateLong is import accelerate's --help.
const importAccelerateLong = `import accelerate reads a Hugging Face Accelerate config (the YAML that
accelerate config writes and accelerate launch --config_file reads, which
the Trainer runs under) and prints the scenario sections it determines,
each key with a comment naming the Accelerate key and rule it comes from:
the cluster (num_machines nodes; num_processes, the total over the
machines, divided among them), parallelism (dp; zero_stage from
fsdp_sharding_strategy for FSDP1, FULL_SHARD 3, SHARD_GRAD_OP 2, NO_SHARD
0, HYBRID_SHARD k = the machines, or fsdp_reshard_after_forward for
FSDP2; k from parallelism_config_dp_replicate_size), communication
(boundary fsdp1 or fsdp2, FSDP1's prefetch from fsdp_backward_prefetch
and fsdp_forward_prefetch) and training (param_dtype from mixed_precision
with fp32 shards, flat_param_views for FSDP1, recompute from
fsdp_activation_checkpointing, and the Trainer's default optimizer).
distributed_type MULTI_GPU imports as DDP (zero_stage 0); DEEPSPEED with
its settings inline imports the ds_config Accelerate's DeepSpeedPlugin
derives from them, as import deepspeed reads it (a note gives it), with
the Trainer's batch size and accumulation steps for its "auto". Keys and
defaults follow Accelerate at 16cb6eb8 and its launcher, which refuses a
top-level key Accelerate does not have, as the import does; lines starting
"# note:" name what zerosim does not model.

--hf config.json adds the model section (as import hf prints it), --gpu
the GPU preset, and --micro-batch, --grad-accum, --seq-len and --recompute
the Trainer's arguments the config does not hold
(--per_device_train_batch_size, --gradient_accumulation_steps, the
sequence length, --gradient_checkpointing). --nodes and --gpus-per-node
are accelerate launch's --num_machines and --num_processes (nodes × GPUs
per node), which override the config's; a config for SLURM leaves
num_processes to them. With --hf and --gpu the output
runs as it is:
zerosim import accelerate fsdp.yaml --hf config.json --gpu H100-80GB > s.yaml
zerosim run s.yaml`

// newImportAccelerateCmd is zerosim import accelerate (cmd_import.go adds
// it to the import group).
func newImportAccelerateCmd(a *app) *cobra.Command {
	var o importAccelerateOpts
	c := &cobra.Command{
		Use:   "accelerate CONFIG.yaml",
		Short: "Print the scenario sections a Hugging Face Accelerate config (FSDP, DDP, DeepSpeed) determines",
		Long:  importAccelerateLong,
		Example: `  zerosim import accelerate fsdp.yaml --hf config.json --gpu H100-80GB --micro-batch 2 --recompute full
  zerosim import accelerate fsdp.yaml --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := noStdin("import accelerate", args[0]); err != nil {
				return err
			}
			f := cmd.Flags()
			o.microGiven, o.accumGiven, o.seqG = f.Changed("micro-batch"), f.Changed("grad-accum"), f.Changed("seq-len")
			o.nodesGiven, o.gpnGiven = f.Changed("nodes"), f.Changed("gpus-per-node")
			return runImportAccelerate(a, &o, args[0])
		},
	}
	f := c.Flags()
	f.StringVar(&o.hf, "hf", "", "`FILE`, the model's Hugging Face config.json: adds the model section")
	f.StringVar(&o.gpu, "gpu", "", "`NAME` of the cluster's GPU preset (docs/scenario-format.md lists them)")
	f.IntVar(&o.microBatch, "micro-batch", 0, "`N`, the Trainer's --per_device_train_batch_size (default 8)")
	f.IntVar(&o.gradAccum, "grad-accum", 0, "`N`, the Trainer's --gradient_accumulation_steps (default 1)")
	f.IntVar(&o.seqLen, "seq-len", 0, "`N` tokens per sequence (model.seq_len; needs --hf)")
	f.StringVar(&o.recompute, "recompute", "", "`POLICY` for the Trainer's --gradient_checkpointing: none, selective, op or full")
	f.BoolVar(&o.liger, "liger", false, "the Trainer's --use_liger_kernel: Liger Kernel's patch of a Llama, Mistral or Qwen2 model (training.liger)")
	f.IntVar(&o.nodes, "nodes", 0, "`N` machines, accelerate launch's --num_machines (unset: the config's num_machines)")
	f.IntVar(&o.gpusPerNode, "gpus-per-node", 0, "`N` GPUs per machine: accelerate launch's --num_processes is nodes × N (unset: the config's num_processes; required when it has none, as a SLURM config)")
	return c
}

func runImportAccelerate(a *app, o *importAccelerateOpts, file string) error {
	var opt scenarios.AccelerateOptions
	if err := checkGPUFlag(o.gpu); err != nil {
		return err
	}
	if err := checkCountFlag("micro-batch", o.microGiven, int64(o.microBatch), scenarios.MaxMicroBatch); err != nil {
		return err
	}
	if err := checkCountFlag("grad-accum", o.accumGiven, int64(o.gradAccum), scenarios.MaxGradAccum); err != nil {
		return err
	}
	if err := checkSeqLenFlag(o.seqG, o.seqLen, o.hf); err != nil {
		return err
	}
	if err := checkClusterFlags(o.nodesGiven, int64(o.nodes), o.gpnGiven, int64(o.gpusPerNode)); err != nil {
		return err
	}
	opt.Nodes, opt.GPUsPerNode = int64(o.nodes), int64(o.gpusPerNode)
	switch r := scenarios.Recompute(o.recompute); r {
	case "":
	case scenarios.RecomputeNone, scenarios.RecomputeSelective, scenarios.RecomputeOp, scenarios.RecomputeFull:
		opt.Recompute = r
	default:
		return inputError{fmt.Errorf("--recompute %q: use none, selective, op or full", o.recompute)}
	}
	opt.MicroBatch, opt.GradAccum = int64(o.microBatch), int64(o.gradAccum)
	opt.Liger = o.liger
	var hm *scenarios.HFModel
	if o.hf != "" {
		var err error
		if hm, err = scenarios.ReadHFConfig(o.hf); err != nil {
			return inputError{fmt.Errorf("--hf: %w", err)}
		}
		opt.Hidden, opt.Units = hm.Dims.Hidden, hm.LayerList
	}
	ai, err := scenarios.ReadAccelerateConfig(file, opt)
	if err != nil {
		return otherImporter("accelerate", file, err)
	}
	if a.format == "json" {
		return writeAccelerateJSON(a.out, file, ai)
	}
	return writeAccelerateYAML(a.out, file, ai, o, hm)
}

// writeAccelerateYAML writes the scenario sections, each key under a
// comment naming where it comes from.
func writeAccelerateYAML(w io.Writer, file string, ai *scenarios.AccelerateImport, o *importAccelerateOpts, hm *scenarios.HFModel) error {
	var b strings.Builder
	what, of := "PyTorch DDP", ""
	switch {
	case ai.FSDPVersion > 0:
		what = fmt.Sprintf("FSDP%d", ai.FSDPVersion)
	case ai.DeepSpeed != nil:
		what, of = fmt.Sprintf("DeepSpeed ZeRO stage %d", ai.DeepSpeed.Stage), ", DeepSpeed's at edaa7221"
	}
	fmt.Fprintf(&b, "# Accelerate config %s: %s, distributed_type %s (keys and defaults of Accelerate at %.8s%s)\n", file, what, ai.DistributedType, scenarios.AccelerateCommit, of)
	for _, n := range ai.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	if o.gpu == "" || hm == nil {
		var miss []string
		if o.gpu == "" {
			miss = append(miss, "cluster.gpu (or pass --gpu)")
		}
		if hm == nil {
			miss = append(miss, "model: (or pass --hf config.json)")
		}
		fmt.Fprintf(&b, "# to run it, add %s\n", strings.Join(miss, " and "))
	}
	name, _ := json.Marshal(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	fmt.Fprintf(&b, "version: 1\nname: %s\n", name)
	if ai.DeepSpeed != nil {
		b.WriteString("# stack: deepspeed fills in communication.boundary: deepspeed and what the keys below leave unset (docs/stacks.md)\nstack: deepspeed\n")
	}
	prev := ""
	writeSettings(&b, ai.Settings, func(sec string) string {
		if prev == "cluster" {
			writeAccelerateModel(&b, o, hm)
		}
		prev = sec
		return ""
	}, func(key string) {
		if key == "cluster.gpus_per_node" && o.gpu != "" {
			fmt.Fprintf(&b, "  # --gpu\n  gpu: %s\n", o.gpu)
		}
	})
	_, err := io.WriteString(w, b.String())
	return err
}

// checkSeqLenFlag checks an import's --seq-len (given when set): within
// model.seq_len's range, and with --hf, whose model it sets.
func checkSeqLenFlag(set bool, n int, hf string) error {
	if set && (n < 1 || n > 1<<24) {
		return inputError{fmt.Errorf("--seq-len %d is out of range (use 1 to 16777216)", n)}
	}
	if set && hf == "" {
		return inputError{fmt.Errorf("--seq-len sets model.seq_len, which needs the model: pass --hf config.json too")}
	}
	return nil
}

// writeAccelerateModel writes the model section of --hf, with --seq-len.
func writeAccelerateModel(b *strings.Builder, o *importAccelerateOpts, hm *scenarios.HFModel) {
	if hm == nil {
		return
	}
	var seq seqLenFlag
	if o.seqG {
		seq = seqLenFlag{int64(o.seqLen), "--seq-len (the Trainer's sequence length; not in the Accelerate config)"}
	}
	_ = writeHFYAML(b, o.hf, hm, seq, 0) // a strings.Builder does not fail
}

// accelerateJSON is the JSON form of an imported Accelerate config.
type accelerateJSON struct {
	File            string              `json:"file"`
	DistributedType string              `json:"distributed_type"`
	FSDPVersion     int64               `json:"fsdp_version,omitempty"`
	Settings        []importSettingJSON `json:"settings"`
	Notes           []string            `json:"notes,omitempty"`
}

func writeAccelerateJSON(w io.Writer, file string, ai *scenarios.AccelerateImport) error {
	out := accelerateJSON{File: file, DistributedType: ai.DistributedType, FSDPVersion: ai.FSDPVersion, Notes: ai.Notes}
	out.Settings = settingsJSON(ai.Settings)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
