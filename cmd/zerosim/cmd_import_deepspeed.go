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
func init() { commandOutputs["import deepspeed"] = outputs{formats: []string{"table", "json"}} }

// importDeepSpeedOpts are zerosim import deepspeed's flags.
type importDeepSpeedOpts struct {
	hf                       string
	gpu                      string
	nodes, gpusPerNode       int
	microBatch, gradAccum    int
	dtype                    string
	clusterGiven, nodesGiven bool
	gpusGiven, microGiven    bool
	accumGiven               bool
	seqLen                   int
	seqGiven                 bool
	outsideZeroInit          bool
	liger                    bool
}

// newImportDeepSpeedCmd is zerosim import deepspeed (cmd_import.go adds it
// to the import group).
func newImportDeepSpeedCmd(a *app) *cobra.Command {
	var o importDeepSpeedOpts
	c := &cobra.Command{
		Use:   "deepspeed DS_CONFIG.json",
		Short: "Print the scenario sections a DeepSpeed config (ds_config.json) determines",
		Long: `import deepspeed reads a DeepSpeed config (the JSON given to
deepspeed.initialize or --deepspeed) and prints the scenario sections it
determines, each key with a comment naming the DeepSpeed key and rule it
comes from: stack: deepspeed, parallelism.zero_stage, communication
(bucket_size from reduce_bucket_size, overlap from overlap_comm,
prefetch_depth from stage3_prefetch_bucket_size and
stage3_max_live_parameters, the ZeRO++ keys), training (micro_batch and
grad_accum by DeepSpeed's batch rule, param_dtype from bf16/fp16, the
optimizer and its parameters, grad_clip from gradient_clipping) and offload
(offload_optimizer, offload_param). Keys and defaults follow DeepSpeed at
edaa7221. Lines starting "# note:" name what zerosim does not model.

--hf config.json adds the model section (as import hf prints it) and sizes
the prefetch depth and the Hugging Face Trainer's "auto" bucket sizes;
--gpu, --nodes and --gpus-per-node add the cluster and parallelism.dp, the
world size that turns train_batch_size into micro-batches and
accumulation steps. With both, the output runs as it is:
zerosim import deepspeed ds_config.json --hf config.json --gpu H100-80GB > s.yaml
zerosim run s.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := noStdin("import deepspeed", args[0]); err != nil {
				return err
			}
			f := cmd.Flags()
			o.nodesGiven, o.gpusGiven = f.Changed("nodes"), f.Changed("gpus-per-node")
			o.clusterGiven = o.nodesGiven || o.gpusGiven || f.Changed("gpu")
			// A cluster flag given alone sizes the cluster with the
			// others' values: 1 node, 8 GPUs per node. Without any, the
			// output has no cluster and the world size is unknown (a
			// config whose batch rule needs it is refused, QA8 F8).
			if o.clusterGiven && !o.nodesGiven {
				o.nodes = 1
			}
			if o.clusterGiven && !o.gpusGiven {
				o.gpusPerNode = 8
			}
			o.microGiven, o.accumGiven, o.seqGiven = f.Changed("micro-batch"), f.Changed("grad-accum"), f.Changed("seq-len")
			return runImportDeepSpeed(a, &o, args[0])
		},
	}
	f := c.Flags()
	f.StringVar(&o.hf, "hf", "", "`FILE`, the model's Hugging Face config.json: adds the model section")
	f.StringVar(&o.gpu, "gpu", "", "`NAME` of the cluster's GPU preset (docs/scenario-format.md lists them): adds the cluster")
	f.IntVar(&o.nodes, "nodes", 0, "nodes of the cluster, dp = nodes × gpus-per-node (1 when only --gpu or --gpus-per-node is given; unset with both, the world size is unknown: give it when the config's batch needs it)")
	f.IntVar(&o.gpusPerNode, "gpus-per-node", 0, "GPUs per node (8 when only --gpu or --nodes is given)")
	f.IntVar(&o.microBatch, "micro-batch", 0, "`N` for train_micro_batch_size_per_gpu where the config says \"auto\"")
	f.IntVar(&o.gradAccum, "grad-accum", 0, "`N` for gradient_accumulation_steps where the config says \"auto\"")
	f.IntVar(&o.seqLen, "seq-len", 0, "`N` tokens per sequence (model.seq_len: the training script's, not in the DeepSpeed config; needs --hf)")
	f.BoolVar(&o.outsideZeroInit, "outside-zero-init", false, "the model is built before deepspeed.initialize, outside deepspeed.zero.Init, and DeepSpeed is older than 617061d6b (2026-07-31), which installs its memory-efficient linear only inside zero.Init: sets communication.memory_efficient_linear false at stage 3")
	f.BoolVar(&o.liger, "liger", false, "the Hugging Face Trainer's --use_liger_kernel: Liger Kernel's patch of a Llama, Mistral or Qwen2 model (training.liger)")
	f.StringVar(&o.dtype, "dtype", "", "`DTYPE` (bf16, fp16 or fp32) where the config's bf16.enabled or fp16.enabled is \"auto\"")
	return c
}

func runImportDeepSpeed(a *app, o *importDeepSpeedOpts, file string) error {
	var opt scenarios.DeepSpeedOptions
	if o.clusterGiven {
		if err := checkClusterFlags(o.nodesGiven, int64(o.nodes), o.gpusGiven, int64(o.gpusPerNode)); err != nil {
			return err
		}
		opt.DP = int64(o.nodes) * int64(o.gpusPerNode)
	}
	if err := checkGPUFlag(o.gpu); err != nil {
		return err
	}
	if err := checkCountFlag("micro-batch", o.microGiven, int64(o.microBatch), scenarios.MaxMicroBatch); err != nil {
		return err
	}
	if err := checkCountFlag("grad-accum", o.accumGiven, int64(o.gradAccum), scenarios.MaxGradAccum); err != nil {
		return err
	}
	if err := checkSeqLenFlag(o.seqGiven, o.seqLen, o.hf); err != nil {
		return err
	}
	opt.MicroBatch, opt.GradAccum = int64(o.microBatch), int64(o.gradAccum)
	opt.OutsideZeroInit = o.outsideZeroInit
	opt.Liger = o.liger
	switch o.dtype {
	case "":
	case "bf16", "fp16", "fp32":
		opt.ParamDType = scenarios.DType(o.dtype)
	default:
		return inputError{fmt.Errorf("--dtype %q: use bf16, fp16 or fp32", o.dtype)}
	}
	var hm *scenarios.HFModel
	if o.hf != "" {
		var err error
		if hm, err = scenarios.ReadHFConfig(o.hf); err != nil {
			return inputError{fmt.Errorf("--hf: %w", err)}
		}
		opt.Hidden, opt.Units = hm.Dims.Hidden, hm.LayerList
	}
	ds, err := scenarios.ReadDeepSpeedConfig(file, opt)
	if err != nil {
		return otherImporter("deepspeed", file, err)
	}
	if a.format == "json" {
		return writeDeepSpeedJSON(a.out, file, ds)
	}
	return writeDeepSpeedYAML(a.out, file, ds, o, hm)
}

// writeDeepSpeedYAML writes the scenario sections, each key under a
// comment naming where it comes from.
func writeDeepSpeedYAML(w io.Writer, file string, ds *scenarios.DeepSpeedImport, o *importDeepSpeedOpts, hm *scenarios.HFModel) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# DeepSpeed config %s: ZeRO stage %d (keys and defaults of DeepSpeed at edaa7221)\n", file, ds.Stage)
	for _, n := range ds.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	if !o.clusterGiven || hm == nil {
		var miss []string
		if !o.clusterGiven {
			miss = append(miss, "cluster: and parallelism.dp (or pass --gpu, --nodes, --gpus-per-node)")
		}
		if hm == nil {
			miss = append(miss, "model: (or pass --hf config.json)")
		}
		fmt.Fprintf(&b, "# to run it, add %s\n", strings.Join(miss, " and "))
	}
	name, _ := json.Marshal(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	fmt.Fprintf(&b, "version: 1\nname: %s\n# stack: deepspeed fills in communication.boundary: deepspeed and what the keys below leave unset (docs/stacks.md)\nstack: deepspeed\n", name)
	if o.clusterGiven {
		fmt.Fprintf(&b, "cluster:\n  nodes: %d\n  gpus_per_node: %d\n", o.nodes, o.gpusPerNode)
		if o.gpu != "" {
			fmt.Fprintf(&b, "  gpu: %s\n", o.gpu)
		}
	}
	if hm != nil {
		var seq seqLenFlag
		if o.seqGiven {
			seq = seqLenFlag{int64(o.seqLen), "--seq-len (the training script's sequence length; not in the DeepSpeed config)"}
		}
		if err := writeHFYAML(&b, o.hf, hm, seq, 0); err != nil {
			return err
		}
	}
	writeSettings(&b, ds.Settings, func(sec string) string {
		if sec == "parallelism" && o.clusterGiven {
			return fmt.Sprintf("  # --nodes × --gpus-per-node\n  dp: %d\n", o.nodes*o.gpusPerNode)
		}
		return ""
	}, nil)
	_, err := io.WriteString(w, b.String())
	return err
}

// deepSpeedJSON is the JSON form of an imported DeepSpeed config.
type deepSpeedJSON struct {
	File      string              `json:"file"`
	ZeroStage int64               `json:"zero_stage"`
	Settings  []importSettingJSON `json:"settings"`
	Notes     []string            `json:"notes,omitempty"`
}

func writeDeepSpeedJSON(w io.Writer, file string, ds *scenarios.DeepSpeedImport) error {
	out := deepSpeedJSON{File: file, ZeroStage: ds.Stage, Notes: ds.Notes}
	out.Settings = settingsJSON(ds.Settings)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
