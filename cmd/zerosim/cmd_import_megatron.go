package main

import (
	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/scenarios"
)

// The command's outputs (outputs.go): the scenario's YAML only.
func init() {
	commandOutputs["import megatron"] = outputs{fmtHint: "import megatron prints the scenario's YAML"}
}

// newImportMegatronCmd is `zerosim import megatron ARGS` (cmd_import.go
// adds it to the import group).
func newImportMegatronCmd(a *app) *cobra.Command {
	var o scenarios.MegatronOptions
	var vocab int
	cmd := &cobra.Command{
		Use:   "megatron ARGS",
		Short: "Print the scenario of a Megatron-LM pretraining command line",
		Long: `import megatron reads the command line of a Megatron-LM pretraining run:
a launch script running pretrain_gpt.py (such as examples/gpt3/
train_gpt3_175b_distributed.sh; its top-level variables and arrays are
expanded, backslash continuations joined), or a file of pretrain_gpt.py's
--flag value arguments ("-" reads stdin). It prints a complete scenario:
stack: megatron, the GPT model's dimensions and exact parameter count with
Megatron's padded vocabulary, the distributed optimizer as ZeRO stage 1
with k = --num-distributed-optimizer-instances, --context-parallel-size as
cp, dp from the world size, the micro-batch and the accumulation steps
--global-batch-size implies, bf16/fp16 and the gradient reduction dtype,
FusedAdam, clipping, activation recomputation, the attention kernel,
fp8, and the DDP overlap and bucket settings, each with the flag or
default it came from. Flags and defaults are those of Megatron-LM
core_v0.12.0 (d580efc6). Tensor and pipeline parallel sizes above 1 and
MoE flags are refused in one line naming the flag, and so is a
Megatron-DeepSpeed run (--deepspeed, --deepspeed_config): its ZeRO comes
from the DeepSpeed config, which import deepspeed reads; lines starting
"# note:" name what the import approximates or does not know. The
cluster comes from --nodes and --gpus-per-node, else from torchrun's
--nnodes and --nproc_per_node (or deepspeed's --num_nodes and
--num_gpus) in the script, where $SLURM_NNODES and $SLURM_JOB_NUM_NODES
are the script's #SBATCH --nodes; the GPU from --gpu (else a
SET_GPU placeholder). A tokenizer read from files needs its size:
--tokenizer-vocab-size. The script is read as bash runs it without
arguments: variables and arrays assigned at its top level, ${N:-default}
as its default, and an if whose test compares such words ([ "$DTYPE" =
fp8 ], [[ ... == ... ]], -z, -n) runs its taken branch only, with a note
when a positional or environment default decided it; an array filled
inside a block it cannot decide (a function's body, or a command after a &&
or || it cannot decide) is named in a note with the flags it would hold.
Then:
zerosim import megatron train.sh --gpu H100-80GB > s.yaml && zerosim run s.yaml.`,
		Example: `  zerosim import megatron train_llama3_8b_h100_fp8.sh --gpu H100-80GB
  zerosim import megatron train_gpt3_175b_distributed-tp1pp1.sh --nodes 16 --gpu H100-80GB --tokenizer-vocab-size 50257`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			return runImportMegatron(a, o, vocab, f.Changed("nodes"), f.Changed("gpus-per-node"), f.Changed("tokenizer-vocab-size"), args[0])
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Nodes, "nodes", 0, "nodes the job runs on (unset: torchrun --nnodes or deepspeed --num_nodes in the script, else a SET_NODES placeholder)")
	fl.IntVar(&o.GPUsPerNode, "gpus-per-node", 0, "GPUs per node (unset: torchrun --nproc_per_node or deepspeed --num_gpus in the script, else 8)")
	fl.StringVar(&o.GPU, "gpu", "", "GPU preset, such as H100-80GB (unset: a SET_GPU placeholder)")
	fl.IntVar(&vocab, "tokenizer-vocab-size", 0, "`N`, the tokenizer's vocabulary size before Megatron pads it (GPT-2's: 50257)")
	return cmd
}

// runImportMegatron checks the flags, imports file and prints the
// scenario.
func runImportMegatron(a *app, o scenarios.MegatronOptions, vocab int, nodesGiven, gpnGiven, vocabGiven bool, file string) error {
	if err := checkClusterFlags(nodesGiven, int64(o.Nodes), gpnGiven, int64(o.GPUsPerNode)); err != nil {
		return err
	}
	if err := checkCountFlag("tokenizer-vocab-size", vocabGiven, int64(vocab), 1<<24); err != nil {
		return err
	}
	o.TokenizerVocab = int64(vocab)
	if err := checkGPUFlag(o.GPU); err != nil {
		return err
	}
	m, err := scenarios.ReadMegatron(file, a.in, o)
	if err != nil {
		return otherImporter("megatron", file, err)
	}
	_, err = a.out.Write(m.Scenario())
	return err
}
