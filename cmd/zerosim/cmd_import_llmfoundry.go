package main

import (
	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/scenarios"
)

// The command's outputs (outputs.go): the scenario's YAML only.
func init() {
	commandOutputs["import llm-foundry"] = outputs{fmtHint: "import llm-foundry prints the scenario's YAML"}
}

// newImportLLMFoundryCmd is `zerosim import llm-foundry TRAIN.yaml`
// (cmd_import.go adds it to the import group).
func newImportLLMFoundryCmd(a *app) *cobra.Command {
	var o scenarios.LLMFoundryOptions
	var micro int
	cmd := &cobra.Command{
		Use:   "llm-foundry TRAIN.yaml",
		Short: "Print the scenario of an llm-foundry training YAML",
		Long: `import llm-foundry reads an llm-foundry training YAML (the files under
llm-foundry's scripts/train/yamls, such as pretrain/mpt-7b.yaml) and prints
a complete scenario: stack: llm-foundry, MPT's dimensions and exact
parameter count (or, for model name hf_causal_lm, the config.json of
pretrained_model_name_or_path given with --hf), the FSDP sharding strategy
as a ZeRO stage (FULL_SHARD 3, SHARD_GRAD_OP 2, HYBRID_SHARD 3 with k the
data_parallel_replicate_degree, NO_SHARD 0), the micro-batch and
accumulation steps, the mixed-precision dtypes, Composer's DecoupledAdamW,
gradient clipping, activation checkpointing, the FSDP prefetch settings,
the attention kernel and the loss kernel, each with the llm-foundry key it
came from. Keys and defaults are those of llm-foundry 8c8dd48 with
Composer v0.32.1; the variables: section's ${variables.x} interpolations
are resolved. Tensor parallelism, PEFT adapters and MoE FFNs are refused;
lines starting "# note:" name what the import approximates. The YAML does
not say the cluster: give --nodes and --gpu (--gpus-per-node is 8 unless
set), or set the SET_NODES, SET_GPU, SET_DP and SET_GRAD_ACCUM
placeholders in the printed file. Then:
zerosim import llm-foundry mpt-7b.yaml --nodes 16 --gpu H100-80GB > s.yaml
&& zerosim run s.yaml.`,
		Example: `  zerosim import llm-foundry mpt-7b.yaml --nodes 16 --gpu H100-80GB
  zerosim import llm-foundry mpt-7b.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			return runImportLLMFoundry(a, o, micro, f.Changed("nodes"), f.Changed("micro-batch"), args[0])
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Nodes, "nodes", 0, "nodes the job runs on (unset: a SET_NODES placeholder)")
	fl.IntVar(&o.GPUsPerNode, "gpus-per-node", scenarios.DefaultLLMFoundryGPUsPerNode, "GPUs per node")
	fl.StringVar(&o.GPU, "gpu", "", "GPU preset, such as H100-80GB (unset: a SET_GPU placeholder)")
	fl.IntVar(&micro, "micro-batch", 0, "`N` for device_train_microbatch_size \"auto\" (the micro-batch Composer's search found)")
	fl.StringVar(&o.HF, "hf", "", "`FILE`, the config.json of an hf_causal_lm's pretrained_model_name_or_path")
	return cmd
}

// runImportLLMFoundry checks the flags, imports file and prints the
// scenario.
func runImportLLMFoundry(a *app, o scenarios.LLMFoundryOptions, micro int, nodesGiven, microGiven bool, file string) error {
	if err := noStdin("import llm-foundry", file); err != nil {
		return err
	}
	if err := checkClusterFlags(nodesGiven, int64(o.Nodes), true, int64(o.GPUsPerNode)); err != nil {
		return err
	}
	if err := checkCountFlag("micro-batch", microGiven, int64(micro), scenarios.MaxMicroBatch); err != nil {
		return err
	}
	o.MicroBatch = int64(micro)
	if err := checkGPUFlag(o.GPU); err != nil {
		return err
	}
	lf, err := scenarios.ReadLLMFoundry(file, o)
	if err != nil {
		return otherImporter("llm-foundry", file, err)
	}
	_, err = a.out.Write(lf.Scenario())
	return err
}
