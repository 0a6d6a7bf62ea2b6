package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

func init() { commands = append(commands, newImportCmd) }

func newImportCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "import",
		Short: "Print a scenario, or its model, from another tool's config: Hugging Face, DeepSpeed, torchtitan, Accelerate, llm-foundry, Megatron-LM",
	}
	var mtpLayers int64
	hf := &cobra.Command{
		Use:   "hf CONFIG.json|MODEL_DIR",
		Short: "Print the scenario model section of a Hugging Face config.json",
		Long: `import hf reads a Hugging Face transformers config.json and prints the
model: section of a scenario with the exact layer list (embedding, blocks,
routed experts, final norm, lm_head), the parameter total and the active
parameters of mixture-of-experts models. Lines starting "# note:" name what
the import approximates or leaves out (a multimodal model's vision tower;
DeepSeek-V3's multi-token-prediction module, which transformers drops, so
that it is left out unless --mtp-layers says the stack trains it) and which blocks attend over a sliding window or within
attention chunks: their dims carry window or attention_chunk, and
training.attention flash counts only the pairs the mask keeps; a last note
names the keys it did not read (a near-miss of one it reads is refused, as is a key and its attribute_map alias
at two values). A scenario can also name the file directly with model: {hf_config: path/to/config.json};
Load then warns with the same notes (on windows only under sdpa, whose
kernel computes every score and whose mask each block keeps, both counted,
and under context parallelism, whose ring attention is counted over all
keys).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := noStdin("import hf", args[0]); err != nil {
				return err
			}
			var hm *scenarios.HFModel
			var err error
			if cmd.Flags().Changed("mtp-layers") {
				if mtpLayers < 0 || mtpLayers > scenarios.MaxLayers {
					return inputError{fmt.Errorf("--mtp-layers %d is out of range (use 0 to %d)", mtpLayers, scenarios.MaxLayers)}
				}
				hm, err = scenarios.ReadHFConfigMTP(args[0], mtpLayers)
				if u := (*scenarios.MTPUnusedError)(nil); errors.As(err, &u) {
					return inputError{fmt.Errorf("--mtp-layers %d: %s: %s: leave --mtp-layers out", mtpLayers, args[0], u.Error())}
				}
			} else {
				hm, err = scenarios.ReadHFConfig(args[0])
			}
			if err != nil {
				return otherImporter("hf", args[0], err)
			}
			if a.format == "json" {
				return writeHFJSON(a.out, hm)
			}
			return writeHFYAML(a.out, args[0], hm, seqLenFlag{}, mtpLayers)
		},
	}
	hf.Flags().Int64Var(&mtpLayers, "mtp-layers", 0, "multi-token-prediction modules the training stack builds (DeepSeek-V3, GLM-4.5, Qwen3-Next, Qwen3.5; Megatron's --mtp-num-layers): transformers builds none, nor does the import without it")
	c.AddCommand(hf)
	c.AddCommand(newImportDeepSpeedCmd(a))
	c.AddCommand(newImportTorchtitanCmd(a))
	c.AddCommand(newImportAccelerateCmd(a))
	c.AddCommand(newImportLLMFoundryCmd(a))
	c.AddCommand(newImportMegatronCmd(a))
	return c
}

// newImportTorchtitanCmd is `zerosim import torchtitan JOB.toml`.
func newImportTorchtitanCmd(a *app) *cobra.Command {
	var cl scenarios.TorchtitanCluster
	cmd := &cobra.Command{
		Use:   "torchtitan JOB.toml",
		Short: "Print the scenario of a torchtitan job config",
		Long: `import torchtitan reads a torchtitan job config (the TOML files under
torchtitan's train_configs, such as llama3_8b.toml) and prints a complete
scenario: stack: torchtitan, the model flavor's dimensions (llama3, qwen3,
deepseek_v3, gpt_oss, llama4), the parallel degrees (FSDP2 is ZeRO-3,
data_parallel_replicate_degree is HSDP's k, context_parallel_degree is cp,
expert_parallel_degree is ep), the batch, precision, optimizer, activation
checkpointing, compile and float8 settings, each with the torchtitan key it
came from. Keys and defaults are those of torchtitan 238fa99, the last
commit that reads TOML job configs; the older keys of 9dec370
(training.batch_size, [float8], ...) are read too. Tensor, pipeline and
expert tensor parallel degrees above 1 are refused, as is a key no
torchtitan job config has (torchtitan refuses it since eadca48; in a file
whose keys date it before eadca48, whose torchtitan ignored it, it is left
out with a warning; with job.custom_config_module set it is noted); lines
starting "# note:" name what the import approximates. The job config does
not say the cluster: give --nodes and --gpu (--gpus-per-node is 8 unless
set), or set the SET_NODES, SET_GPU and SET_DP placeholders in the printed
file. Then:
zerosim import torchtitan llama3_8b.toml --nodes 16 --gpu H100-80GB > s.yaml
&& zerosim run s.yaml. torchtitan configures jobs in Python from 9810191bb
(config_registry.py), which this command cannot read; from 786e26f8e its
Llama 3 configs run the chunked loss: describe such a run with
communication.boundary: fsdp2_head and training.loss_chunks: 8
(docs/stacks.md).`,
		Example: `  zerosim import torchtitan llama3_8b.toml --nodes 16 --gpu H100-80GB
  zerosim import torchtitan llama3_8b.toml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := noStdin("import torchtitan", args[0]); err != nil {
				return err
			}
			// --nodes 0 and --gpus-per-node 0 were taken as unset: the
			// SET_NODES placeholder, 8 GPUs per node.
			f := cmd.Flags()
			if err := checkClusterFlags(f.Changed("nodes"), int64(cl.Nodes), f.Changed("gpus-per-node"), int64(cl.GPUsPerNode)); err != nil {
				return err
			}
			t, err := scenarios.ReadTorchtitan(args[0], cl)
			if err != nil {
				return otherImporter("torchtitan", args[0], err)
			}
			for _, w := range t.Warnings {
				a.warnf("%s", w)
			}
			_, err = a.out.Write(t.Scenario())
			return err
		},
	}
	cmd.Flags().IntVar(&cl.Nodes, "nodes", 0, "nodes the job runs on (unset: a SET_NODES placeholder)")
	cmd.Flags().IntVar(&cl.GPUsPerNode, "gpus-per-node", scenarios.DefaultTorchtitanGPUsPerNode, "GPUs per node (torchrun's --nproc_per_node)")
	cmd.Flags().StringVar(&cl.GPU, "gpu", "", "GPU preset, such as H100-80GB (unset: a SET_GPU placeholder)")
	return cmd
}

// seqLenFlag is a --seq-len given to an import: the sequence length and
// where it comes from, for model.seq_len's comment; n = 0 when not given.
type seqLenFlag struct {
	n    int64
	from string
}

// writeHFYAML writes the model section, one flow mapping per layer, with
// model.seq_len from seq when given, else the model's default with its
// source (HFModel.SeqLenSource); mtp > 0 is the multi-token-prediction
// modules built (import hf --mtp-layers), which the scenario line repeats.
func writeHFYAML(w io.Writer, file string, hm *scenarios.HFModel, seq seqLenFlag, mtp int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s) from %s: %s parameters", hm.Architecture, hm.ModelType, file, reports.Commas(hm.Total))
	if hm.Active != hm.Total {
		fmt.Fprintf(&b, ", %s active per token%s", reports.Commas(hm.Active), reports.ActiveIncludes(hm.LayerList))
	}
	b.WriteString("\n")
	for _, n := range hfNotes(hm) {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	if mtp > 0 {
		fmt.Fprintf(&b, "# or in a scenario: model: {hf_config: %s, mtp_layers: %d}\n", file, mtp)
	} else {
		fmt.Fprintf(&b, "# or in a scenario: model: {hf_config: %s}\n", file)
	}
	b.WriteString(scenarios.HFModelHead(hm))
	d := hm.Dims
	seqLen, from := hm.SeqLen(), hm.SeqLenSource()+"; set it to the run's sequence length"
	if seq.n > 0 {
		seqLen, from = seq.n, seq.from
	}
	fmt.Fprintf(&b, "  hidden: %d\n  layers: %d\n  ffn: %d\n  heads: %d\n  kv_heads: %d\n  vocab: %d\n  # %s\n  seq_len: %d\n  params: %d\n  layer_list:\n",
		d.Hidden, hm.Layers, hm.FFN(), d.Heads, d.KVHeads, hm.Vocab, from, seqLen, hm.Total)
	b.WriteString(scenarios.LayerListYAML(hm.LayerList))
	_, err := io.WriteString(w, b.String())
	return err
}

// hfJSON is the JSON form of an imported model.
type hfJSON struct {
	Architecture string `json:"architecture"`
	ModelType    string `json:"model_type"`
	Params       int64  `json:"params"`
	ActiveParams int64  `json:"active_params"`
	Tied         bool   `json:"tied_embeddings"`
	// LogitSoftcap: final_logit_softcapping (scenarios.Model.LogitSoftcap).
	LogitSoftcap bool          `json:"logit_softcap,omitempty"`
	Layers       []hfLayerJSON `json:"layer_list"`
	Dims         hfDimsJSON    `json:"dims"`
	// Notes name what the import approximates or leaves out.
	Notes []string `json:"notes,omitempty"`
}

// hfNotes are the import's notes: its approximations and omissions, then
// the sliding-window and dropout lines, then the keys it did not read.
func hfNotes(hm *scenarios.HFModel) []string {
	n := append([]string(nil), hm.Notes...)
	if w := hm.WindowSummary(); w != "" {
		n = append(n, w)
	}
	if d := hm.DropoutNote(); d != "" {
		n = append(n, d)
	}
	if u := hm.UnreadNote(); u != "" {
		n = append(n, u)
	}
	return n
}

type hfLayerJSON struct {
	Name         string      `json:"name"`
	Params       int64       `json:"params"`
	Group        string      `json:"group,omitempty"`
	ActiveParams int64       `json:"active_params,omitempty"`
	Dims         *hfDimsJSON `json:"dims,omitempty"`
}

type hfDimsJSON struct {
	Hidden         int64  `json:"hidden"`
	Heads          int64  `json:"heads,omitempty"`
	KVHeads        int64  `json:"kv_heads,omitempty"`
	HeadDim        int64  `json:"head_dim,omitempty"`
	FFN            int64  `json:"ffn,omitempty"`
	Experts        int64  `json:"experts,omitempty"`
	TopK           int64  `json:"top_k,omitempty"`
	ExpertFFN      int64  `json:"expert_ffn,omitempty"`
	SharedExperts  int64  `json:"shared_experts,omitempty"`
	SharedFFN      int64  `json:"shared_ffn,omitempty"`
	SharedGate     bool   `json:"shared_gate,omitempty"`
	ValueHeadDim   int64  `json:"value_head_dim,omitempty"`
	RopeHeadDim    int64  `json:"rope_head_dim,omitempty"`
	QLoRARank      int64  `json:"q_lora_rank,omitempty"`
	KVLoRARank     int64  `json:"kv_lora_rank,omitempty"`
	Router         string `json:"router,omitempty"`
	RouterNorm     bool   `json:"router_norm,omitempty"`
	MTP            bool   `json:"mtp,omitempty"`
	Window         int64  `json:"window,omitempty"`
	AttentionChunk int64  `json:"attention_chunk,omitempty"`
	OutputGate     bool   `json:"output_gate,omitempty"`
	// Gated DeltaNet (scenarios.BlockDims.LinearAttention).
	LinearAttention    string `json:"linear_attention,omitempty"`
	LinearKeyHeads     int64  `json:"linear_key_heads,omitempty"`
	LinearValueHeads   int64  `json:"linear_value_heads,omitempty"`
	LinearKeyHeadDim   int64  `json:"linear_key_head_dim,omitempty"`
	LinearValueHeadDim int64  `json:"linear_value_head_dim,omitempty"`
	LinearConvKernel   int64  `json:"linear_conv_kernel,omitempty"`
	// Norms whose activations memory counts (scenarios.BlockDims.QKNorm,
	// Norms, AttnSoftcap).
	QKNorm      string `json:"qk_norm,omitempty"`
	Norms       string `json:"norms,omitempty"`
	AttnSoftcap bool   `json:"attn_softcap,omitempty"`
	// Biases (scenarios.BlockDims.QKVBias, OBias, MLPBias).
	QKVBias bool `json:"qkv_bias,omitempty"`
	OBias   bool `json:"o_bias,omitempty"`
	MLPBias bool `json:"mlp_bias,omitempty"`
}

func dimsJSON(d scenarios.BlockDims) hfDimsJSON {
	return hfDimsJSON{d.Hidden, d.Heads, d.KVHeads, d.HeadDim, d.FFN, d.Experts, d.TopK, d.ExpertFFN, d.SharedExperts,
		d.SharedFFN, d.SharedGate, d.ValueHeadDim, d.RopeHeadDim, d.QLoRARank, d.KVLoRARank, d.Router, d.RouterNorm, d.MTP,
		d.Window, d.AttentionChunk, d.OutputGate, d.LinearAttention, d.LinearKeyHeads, d.LinearValueHeads, d.LinearKeyHeadDim,
		d.LinearValueHeadDim, d.LinearConvKernel, d.QKNorm, d.Norms, d.AttnSoftcap, d.QKVBias, d.OBias, d.MLPBias}
}

func writeHFJSON(w io.Writer, hm *scenarios.HFModel) error {
	out := hfJSON{Architecture: hm.Architecture, ModelType: hm.ModelType, Params: hm.Total, ActiveParams: hm.Active,
		Tied: hm.Tied, LogitSoftcap: hm.LogitSoftcap, Dims: dimsJSON(hm.Dims), Notes: hfNotes(hm)}
	for _, l := range hm.LayerList {
		lj := hfLayerJSON{Name: l.Name, Params: int64(l.Params), Group: l.Group, ActiveParams: int64(l.ActiveParams)}
		if l.Dims != nil {
			d := dimsJSON(*l.Dims)
			lj.Dims = &d
		}
		out.Layers = append(out.Layers, lj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
