package scenarios

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
	"gopkg.in/yaml.v3"
)

// This file imports an llm-foundry training YAML (scripts/train/yamls/
// pretrain/mpt-*.yaml, the hf_causal_lm finetune yamls) into a scenario.
// Keys and defaults are those of llm-foundry at mosaicml/llm-foundry
// 8c8dd48f72168c5d51e2f7b151595892a8fba43d (TrainConfig in
// llmfoundry/utils/config_utils.py, MPTConfig in llmfoundry/models/mpt/
// configuration_mpt.py, MPTModel in modeling_mpt.py) running Composer
// v0.32.1 (mosaicml/composer 4bfb5fc44b8bbde26b035a43b9311003013a4252, the
// release llm-foundry's setup.py pins: mosaicml>=0.32.0,<0.33): FSDPConfig
// in composer/utils/parallelism.py, get_mixed_precision in
// composer/distributed/mosaic_parallelism.py, the FSDP1 wrapping in
// composer/distributed/dist_strategy.py. Each mapping below cites the code
// that runs the key.

// LLMFoundryCommit is the llm-foundry commit whose keys and defaults
// ImportLLMFoundry follows.
const LLMFoundryCommit = "8c8dd48f72168c5d51e2f7b151595892a8fba43d"

// ComposerCommit is Composer v0.32.1, the release llm-foundry
// LLMFoundryCommit runs.
const ComposerCommit = "4bfb5fc44b8bbde26b035a43b9311003013a4252"

// MaxLLMFoundryBytes bounds the YAML read (llm-foundry's are 2–4 KiB).
const MaxLLMFoundryBytes = 1 << 20

// DefaultLLMFoundryGPUsPerNode is the GPUs per node when none is given:
// composer's launcher starts one process per local GPU, eight on the
// nodes of llm-foundry's published tables (scripts/train/benchmarking).
const DefaultLLMFoundryGPUsPerNode = 8

// LLMFoundryOptions is what the YAML does not say: the cluster (composer's
// launcher decides the world size), the micro-batch where the file says
// "auto", and the Hugging Face config.json of an hf_causal_lm model. A zero
// Nodes or an empty GPU is printed as a placeholder the user must set.
type LLMFoundryOptions struct {
	Nodes       int
	GPUsPerNode int
	GPU         string
	// MicroBatch replaces device_train_microbatch_size "auto" (0: none).
	MicroBatch int64
	// HF is the config.json of model.pretrained_model_name_or_path.
	HF string
}

// LLMFoundry is an imported training YAML.
type LLMFoundry struct {
	File string
	Opt  LLMFoundryOptions
	// ModelName is model.name: mpt_causal_lm or hf_causal_lm.
	ModelName string
	// Pretrained is model.pretrained_model_name_or_path (hf_causal_lm).
	Pretrained string
	// HF is the --hf config.json's model (hf_causal_lm), else nil.
	HF *HFModel
	// Model is MPT's dimensions (mpt_causal_lm); LayerList is set when
	// the gpt arch's formula does not give MPT's parameters.
	Model     Model
	LayerList []Layer
	// Params is the model's parameter count (0: hf_causal_lm without --hf).
	Params int64
	SeqLen int64
	// Stage, K and DP are the parallelism (DP 0: unknown without --nodes).
	Stage, K, DP int64
	// MicroBatch, GradAccum (0: unknown until dp is) and GlobalBatch.
	MicroBatch, GradAccum, GlobalBatch int64
	// Settings are the scenario's keys after the model, in print order.
	Settings ImportSettings
	// Notes name what the import approximates or leaves out.
	Notes []string
}

// ReadLLMFoundry reads and imports the training YAML at path.
func ReadLLMFoundry(path string, o LLMFoundryOptions) (*LLMFoundry, error) {
	data, err := readConfigFile(path, "the path of an llm-foundry training .yaml", MaxLLMFoundryBytes)
	if err != nil {
		return nil, err
	}
	return ImportLLMFoundry(path, data, o)
}

// lfDoc is a parsed training YAML.
type lfDoc struct {
	file string
	root *yaml.Node
	// lookups counts interpolations resolved, bounded by lfMaxLookups so
	// that strings of many interpolations nested deep cannot take
	// exponential time.
	lookups int
}

// lfMaxLookups bounds the interpolations one import resolves.
const lfMaxLookups = 4096

// lfMaxDepth bounds interpolation chains and alias chains.
const lfMaxDepth = 32

func (d *lfDoc) pos(n *yaml.Node) string {
	if n == nil || n.Line == 0 {
		return d.file
	}
	return fmt.Sprintf("%s:%d:%d", d.file, n.Line, n.Column)
}

// lfMPTKeys are the model keys of an mpt_causal_lm: MPTConfig.__init__'s
// arguments (llmfoundry/models/mpt/configuration_mpt.py at
// LLMFoundryCommit, head_dim among them) and the name and loss_fn it
// drops from its **kwargs.
var lfMPTKeys = []string{"name", "d_model", "n_heads", "n_layers", "head_dim", "expansion_ratio", "max_seq_len", "vocab_size",
	"resid_pdrop", "emb_pdrop", "learned_pos_emb", "attn_config", "ffn_config", "init_device", "logit_scale", "no_bias",
	"attention_bias", "embedding_fraction", "norm_type", "norm_eps", "use_cache", "init_config", "fc_type", "tie_word_embeddings",
	"use_pad_tok_in_ffn", "block_overrides", "final_logit_softcapping", "loss_fn"}

// mappingKeys is the key nodes of mapping m (nil for anything else).
func mappingKeys(m *yaml.Node) []*yaml.Node {
	var keys []*yaml.Node
	for i := 0; m != nil && m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i])
	}
	return keys
}

// nearKeyIn is the key of mapping m (the document, or its root mapping)
// within two edits of want and not want itself, nil when there is none;
// the misspelling of a required key that is missing, or want with a
// longer ending (max_seq_length).
func (d *lfDoc) nearKeyIn(m *yaml.Node, want string) *yaml.Node {
	m = d.deref(m)
	if m != nil && m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = d.deref(m.Content[0])
	}
	for _, k := range mappingKeys(m) {
		// Within two edits (global_train_batch_sz), or the key with a
		// longer ending (max_seq_length, as Hugging Face spells it).
		if nearKey(k.Value, []string{want}) == want || k.Value != want && strings.HasPrefix(k.Value, want) {
			return k
		}
	}
	return nil
}

// errAt is a one-line error at node n.
func (d *lfDoc) errAt(n *yaml.Node, format string, a ...any) error {
	return fmt.Errorf("%s: %s", d.pos(n), oneLine(fmt.Sprintf(format, a...)))
}

// deref follows YAML aliases.
func (d *lfDoc) deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < lfMaxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// lfVal is a value found at a key: the resolved node, the node where the
// key's value is written (for positions) and the dotted key.
type lfVal struct {
	key  string
	at   *yaml.Node
	node *yaml.Node
	// via names the interpolation it came through ("" if none).
	via string
}

// duplicateKeys refuses the second of a key any mapping under n gives
// twice, as child does the keys the import reads: OmegaConf's loader
// refuses such a file whatever the key ("found duplicate key",
// get_yaml_loader's OmegaConfLoader.construct_mapping, omegaconf/_utils.py
// at omry/omegaconf 189a9bf3b9017f8970f338415be995b419238826), so a key
// the import does not read (fsdp_config.state_dict_type twice) is no
// less an error. Aliases are not followed: the nodes they name are
// walked where they are written.
func (d *lfDoc) duplicateKeys(n *yaml.Node, path string, depth int) error {
	if n == nil || depth > lfMaxDepth {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := d.duplicateKeys(c, path, depth+1); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			key := strings.TrimPrefix(path+"."+k.Value, ".")
			if seen[k.Value] {
				return d.errAt(k, "%s is given twice (keep one)", key)
			}
			seen[k.Value] = true
			if err := d.duplicateKeys(n.Content[i+1], key, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// child is the value of key k in mapping m (nil if absent); a key given
// twice is an error.
func (d *lfDoc) child(m *yaml.Node, path, k string) (*yaml.Node, error) {
	var found *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn := d.deref(m.Content[i])
		if kn == nil || kn.Kind != yaml.ScalarNode || kn.Value != k {
			continue
		}
		if found != nil {
			return nil, d.errAt(kn, "%s is given twice (keep one)", path)
		}
		found = m.Content[i+1]
	}
	return found, nil
}

// get returns the value at a dotted key with interpolations resolved, or
// ok false if a part is absent or null.
func (d *lfDoc) get(key string) (lfVal, bool, error) {
	return d.getDepth(key, 0)
}

func (d *lfDoc) getDepth(key string, depth int) (lfVal, bool, error) {
	if depth > lfMaxDepth {
		return lfVal{}, false, fmt.Errorf("%s: %s: interpolations nest deeper than %d (check for a cycle)", d.file, key, lfMaxDepth)
	}
	cur := d.root
	var at *yaml.Node
	via := ""
	parts := strings.Split(key, ".")
	for i, p := range parts {
		path := strings.Join(parts[:i+1], ".")
		cur = d.deref(cur)
		if cur == nil {
			return lfVal{}, false, d.errAt(at, "%s: an alias chain is too long (remove the alias)", path)
		}
		if cur.Kind != yaml.MappingNode {
			if isNull(cur) {
				return lfVal{}, false, nil
			}
			return lfVal{}, false, d.errAt(cur, "%s is not a mapping (write %s as key: value lines)", strings.Join(parts[:i], "."), strings.Join(parts[:i], "."))
		}
		n, err := d.child(cur, path, p)
		if err != nil {
			return lfVal{}, false, err
		}
		if n == nil {
			return lfVal{}, false, nil
		}
		at = n
		r, v, err := d.resolve(path, n, depth)
		if err != nil {
			return lfVal{}, false, err
		}
		if v != "" {
			via = v
		}
		cur = r
	}
	cur = d.deref(cur)
	if cur == nil || isNull(cur) {
		return lfVal{}, false, nil
	}
	return lfVal{key: key, at: at, node: cur, via: via}, true, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// resolve resolves an OmegaConf interpolation in scalar n at key: a value
// that is one "${a.b}" becomes the node at a.b (absolute, as llm-foundry's
// om.to_container(resolve=True) resolves `${variables.x}`); a string with
// interpolations inside becomes that string with them replaced. It
// returns the node and the interpolation's key ("" if none).
func (d *lfDoc) resolve(key string, n *yaml.Node, depth int) (*yaml.Node, string, error) {
	n = d.deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!str" || !strings.Contains(n.Value, "${") {
		return n, "", nil
	}
	s := n.Value
	var b strings.Builder
	via := ""
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, "", d.errAt(n, "%s = %s has an unclosed ${ (close it: ${variables.name})", key, strconv.Quote(n.Value))
		}
		ref := strings.TrimSpace(s[i+2 : i+j])
		if ref == "" || strings.ContainsAny(ref, ":${[]") || strings.HasPrefix(ref, ".") || strings.Contains(ref, "..") || strings.HasSuffix(ref, ".") {
			return nil, "", d.errAt(n, "%s = %s: zerosim resolves only absolute interpolations such as ${variables.name}, not resolvers or relative keys (write the value)", key, strconv.Quote(n.Value))
		}
		if ref == key || strings.HasPrefix(key, ref+".") {
			return nil, "", d.errAt(n, "%s = %s refers to itself (write the value)", key, strconv.Quote(n.Value))
		}
		if d.lookups++; d.lookups > lfMaxLookups {
			return nil, "", d.errAt(n, "%s: more than %d interpolations to resolve (write the values)", key, lfMaxLookups)
		}
		v, ok, err := d.getDepth(ref, depth+1)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", d.errAt(n, "%s = %s: %s is not set in the file (set it under variables:, or write the value)", key, strconv.Quote(n.Value), ref)
		}
		via = ref
		whole := i == 0 && j == len(s)-1 && b.Len() == 0
		if whole {
			return v.node, via, nil
		}
		if v.node.Kind != yaml.ScalarNode {
			return nil, "", d.errAt(n, "%s = %s: %s is not a scalar to put in a string (write the value)", key, strconv.Quote(n.Value), ref)
		}
		b.WriteString(s[:i])
		b.WriteString(v.node.Value)
		s = s[i+j+1:]
		if b.Len()+len(s) > MaxLLMFoundryBytes {
			return nil, "", d.errAt(n, "%s: its interpolations make a string longer than %d bytes (write the value)", key, MaxLLMFoundryBytes)
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: b.String(), Line: n.Line, Column: n.Column}, via, nil
}

// show renders a value for a message.
func (v lfVal) show() string {
	n := v.node
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" {
			return strconv.Quote(n.Value)
		}
		return ttName(n.Value)
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a value"
}

// where is the value's key with the interpolation it came through.
func (v lfVal) where() string {
	if v.via != "" {
		return v.key + " (${" + v.via + "})"
	}
	return v.key
}

// int reads an integer key in [lo, hi].
func (d *lfDoc) int(key string, def, lo, hi int64) (int64, lfVal, bool, error) {
	v, ok, err := d.get(key)
	if err != nil || !ok {
		return def, v, false, err
	}
	n := v.node
	var x int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&x) != nil {
		var f float64
		if n.Kind == yaml.ScalarNode && n.Tag == "!!float" && n.Decode(&f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			x = int64(f)
		} else {
			return 0, v, true, d.errAt(v.at, "%s = %s is not an integer (use a whole number)", v.where(), v.show())
		}
	}
	if x < lo || x > hi {
		return 0, v, true, d.errAt(v.at, "%s = %d is out of range (use %d to %d)", v.where(), x, lo, hi)
	}
	return x, v, true, nil
}

// float reads a number key.
func (d *lfDoc) float(key string, def float64) (float64, lfVal, bool, error) {
	v, ok, err := d.get(key)
	if err != nil || !ok {
		return def, v, false, err
	}
	n := v.node
	var f float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
		// OmegaConf reads 1.0e-08 as a float; YAML 1.1 resolvers read 1e-8 as a
		// string, which Python's float() still parses.
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			if p, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil {
				f = p
				goto ok
			}
		}
		return 0, v, true, d.errAt(v.at, "%s = %s is not a number (use a number such as 1.0e-08)", v.where(), v.show())
	}
ok:
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, v, true, d.errAt(v.at, "%s = %s is not a finite number (use a number such as 1.0e-08)", v.where(), v.show())
	}
	return f, v, true, nil
}

// bool reads a boolean key.
func (d *lfDoc) bool(key string, def bool) (bool, lfVal, bool, error) {
	v, ok, err := d.get(key)
	if err != nil || !ok {
		return def, v, false, err
	}
	var b bool
	if v.node.Kind != yaml.ScalarNode || v.node.Tag != "!!bool" || v.node.Decode(&b) != nil {
		return false, v, true, d.errAt(v.at, "%s = %s is not a boolean (use true or false)", v.where(), v.show())
	}
	return b, v, true, nil
}

// str reads a string key.
func (d *lfDoc) str(key, def string) (string, lfVal, bool, error) {
	v, ok, err := d.get(key)
	if err != nil || !ok {
		return def, v, false, err
	}
	if v.node.Kind != yaml.ScalarNode || v.node.Tag != "!!str" {
		return "", v, true, d.errAt(v.at, "%s = %s is not a string (write a name such as %s: FULL_SHARD)", v.where(), v.show(), leaf(key))
	}
	return v.node.Value, v, true, nil
}

// has reports whether key is set (not null).
func (d *lfDoc) has(key string) (lfVal, bool, error) { return d.get(key) }

// lfImport is the import in progress.
type lfImport struct {
	d *lfDoc
	f *LLMFoundry
	// fsdp marks a run Composer wraps in FSDP1 (any sharding strategy).
	fsdp bool
}

func (im *lfImport) set(key, value, from string) {
	im.f.Settings = append(im.f.Settings, ImportSetting{Key: key, Value: value, From: from})
}

func (im *lfImport) note(format string, a ...any) {
	im.f.Notes = append(im.f.Notes, fmt.Sprintf(format, a...))
}

// src is "key value" as the file gives it, else def.
func src(v lfVal, given bool, def string) string {
	if !given {
		return def
	}
	if v.node.Kind == yaml.ScalarNode {
		return v.where() + " " + ttName(v.node.Value)
	}
	return v.where()
}

// ImportLLMFoundry imports a training YAML's bytes; file names it in
// messages. Every error is one line naming file:line:column where the key
// is, what is wrong and what to do.
func ImportLLMFoundry(file string, data []byte, o LLMFoundryOptions) (*LLMFoundry, error) {
	name := ttName(file)
	if len(data) > MaxLLMFoundryBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for an llm-foundry training YAML (check the path)", name, MaxLLMFoundryBytes)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlSyntax(name, data, err, "fix the file")
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: the file is empty (give an llm-foundry training YAML such as scripts/train/yamls/pretrain/mpt-7b.yaml)", name)
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d:%d: the file is not a mapping of keys (give an llm-foundry training YAML such as scripts/train/yamls/pretrain/mpt-7b.yaml)", name, top.Line, top.Column)
	}
	if o.GPUsPerNode == 0 {
		o.GPUsPerNode = DefaultLLMFoundryGPUsPerNode
	}
	im := &lfImport{d: &lfDoc{file: name, root: top}, f: &LLMFoundry{File: file, Opt: o}}
	for _, step := range []func() error{im.readKeys, im.refuse, im.readModel, im.readParallelism, im.readBatch, im.readPrecision, im.readOptimizer, im.readRecompute, im.readComm, im.readOther} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return im.f, nil
}

// lfTrainKeys are TrainConfig's fields at LLMFoundryCommit
// (llmfoundry/utils/config_utils.py lines 99–200): make_dataclass_and_log_config
// raises "Unused parameters [...] found in cfg" for any other top-level
// key (lines 350–359).
var lfTrainKeys = []string{"model", "tokenizer", "optimizer", "scheduler", "train_loader", "device_train_batch_size",
	"device_eval_batch_size", "max_duration", "max_seq_len", "seed", "precision", "code_paths", "max_split_size_mb",
	"expandable_segments", "cuda_load_lazy", "dist_timeout", "fsdp_config", "tp_config", "accumulate_train_batch_on_tokens",
	"eval_interval", "eval_loader", "eval_loaders", "icl_tasks", "icl_tasks_str", "eval_gauntlet", "eval_gauntlet_str",
	"icl_subset_num_batches", "icl_seq_len", "loggers", "progress_bar", "log_to_console", "python_log_level",
	"console_log_interval", "log_config", "callbacks", "algorithms", "save_folder", "save_latest_filename", "save_overwrite",
	"save_weights_only", "save_filename", "save_interval", "save_num_checkpoints_to_keep", "load_path", "load_weights_only",
	"load_strict_model_weights", "load_ignore_keys", "save_ignore_keys", "only_hf_checkpoint", "only_composer_checkpoint",
	"train_subset_num_batches", "device_train_microbatch_size", "global_train_batch_size", "spin_dataloaders",
	"eval_subset_num_batches", "eval_first", "compile_config", "metadata", "flatten_metadata", "run_name", "autoresume",
	"profiler", "variables", "n_gpus", "device_train_grad_accum"}

// lfFSDPKeys are Composer's FSDPConfig fields at v0.32.1
// (composer/utils/parallelism.py lines 14–43 at
// 4bfb5fc44b8bbde26b035a43b9311003013a4252). Its __init__ sets any other
// key as an attribute (lines 47–53) and nothing reads it, so a misspelled
// key runs with the default of the key meant.
var lfFSDPKeys = []string{"activation_checkpointing", "activation_checkpointing_reentrant", "activation_cpu_offload", "auto_wrap",
	"te_checkpoint_wrapper", "te_shard_fp8_weight", "backward_prefetch", "backward_prefetch_limit", "cpu_offload",
	"data_parallel_shard_degree", "data_parallel_replicate_degree", "forward_prefetch", "forward_prefetch_limit",
	"ignored_modules", "keep_low_precision_grads", "limit_all_gathers", "load_monolith_rank0_only", "load_planner",
	"mixed_precision", "process_group", "save_planner", "sharded_ckpt_prefix_dir", "sharding_strategy", "state_dict_type",
	"sync_module_states", "use_orig_params", "verbose"}

// readKeys checks the top-level and fsdp_config keys. A top-level key that
// misspells a TrainConfig field the file does not give is refused, as
// llm-foundry refuses it (older yamls' other top-level keys, such as
// data_local before the variables: section, are left alone); an
// fsdp_config key that is a misspelling of an FSDPConfig field is refused
// too: Composer would run with the default of the field meant (a
// misspelled activation_checkpointing turns checkpointing off), which no
// import should do without a word. Other unknown fsdp_config keys are
// noted: Composer keeps them and ignores them.
func (im *lfImport) readKeys() error {
	d := im.d
	if err := d.duplicateKeys(d.root, "", 0); err != nil {
		return err
	}
	for _, k := range mappingKeys(d.root) {
		near := nearKey(k.Value, lfTrainKeys)
		if slices.Contains(lfTrainKeys, k.Value) || near == "" || near == "max_seq_len" || near == "global_train_batch_size" {
			continue // older yamls' own keys (data_local); the two required keys' readers say more
		}
		if _, given, err := d.has(near); err != nil || !given {
			return d.errAt(k, "%s is not a TrainConfig key (did you mean %s? llm-foundry %.7s refuses it: \"Unused parameters ... found in cfg\")", k.Value, near, LLMFoundryCommit)
		}
	}
	fv, ok, err := d.has("fsdp_config")
	if err != nil || !ok {
		return err
	}
	for _, k := range mappingKeys(d.deref(fv.node)) {
		switch near := nearKey(k.Value, lfFSDPKeys); {
		case slices.Contains(lfFSDPKeys, k.Value):
		case near != "":
			return d.errAt(k, "fsdp_config.%s is not an FSDPConfig field (did you mean %s? Composer v0.32.1 keeps an unknown key as an attribute and runs with %s's default)", k.Value, near, near)
		default:
			im.note("fsdp_config.%s is not an FSDPConfig field: Composer v0.32.1 keeps it as an attribute and ignores it", k.Value)
		}
	}
	return nil
}

// refuse rejects what zerosim does not model at all.
func (im *lfImport) refuse() error {
	d := im.d
	// tp_config: llm-foundry's tensor parallelism (TrainConfig.tp_config,
	// config_utils.py at 8c8dd48; build_tp_strategies in builders.py).
	if v, ok, err := d.has("tp_config"); err != nil {
		return err
	} else if ok {
		return d.errAt(v.at, "tp_config (tensor parallelism) is not modelled: zerosim imports data-parallel FSDP runs (remove tp_config)")
	}
	if v, ok, err := d.has("model.peft_config"); err != nil {
		return err
	} else if ok {
		return d.errAt(v.at, "model.peft_config (LoRA/PEFT adapters) is not modelled: zerosim trains every parameter (remove peft_config)")
	}
	return nil
}

// readModel reads model: MPT's dimensions, or hf_causal_lm's config.
func (im *lfImport) readModel() error {
	d, f := im.d, im.f
	if _, ok, err := d.has("model"); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%s: model is missing (add model: with name: mpt_causal_lm or hf_causal_lm)", d.file)
	}
	seq, sv, given, err := d.int("max_seq_len", 0, 1, maxSeqLen)
	if err != nil {
		return err
	}
	if !given {
		if k := d.nearKeyIn(d.root, "max_seq_len"); k != nil {
			return d.errAt(k, "%s is not a TrainConfig key (did you mean max_seq_len? TrainConfig requires it)", k.Value)
		}
		return fmt.Errorf("%s: max_seq_len is missing (llm-foundry's TrainConfig requires it: add max_seq_len: 2048)", d.file)
	}
	f.SeqLen = seq
	seqFrom := src(sv, true, "")
	name, nv, given, err := d.str("model.name", "")
	if err != nil {
		return err
	}
	if !given {
		return fmt.Errorf("%s: model.name is missing (use mpt_causal_lm or hf_causal_lm)", d.pos(nv.at))
	}
	f.ModelName = name
	switch name {
	case "mpt_causal_lm":
		if err := im.readMPT(); err != nil {
			return err
		}
	case "hf_causal_lm":
		if err := im.readHF(); err != nil {
			return err
		}
	default:
		return d.errAt(nv.at, "model.name = %s is not a model zerosim imports (use mpt_causal_lm, or hf_causal_lm with --hf config.json)", strconv.Quote(name))
	}
	im.set("model.seq_len", strconv.FormatInt(seq, 10), seqFrom)
	return nil
}

// readMPT builds MPT as MPTConfig and MPTModel do at 8c8dd48: wte
// (vocab_size × d_model, SharedEmbedding, tied to the output unless
// tie_word_embeddings is false, then lm_head d_model × vocab_size without
// bias), wpe (max_seq_len × d_model) when learned_pos_emb (default True;
// alibi or rope turn it off, configuration_mpt.py), per block norm_1,
// attention (Wqkv d_model × (d_model + 2·kv_n_heads·head_dim) with bias
// when attention_bias, which defaults to not no_bias; out_proj d_model ×
// d_model, bias unless no_bias: llmfoundry/models/layers/attention.py), norm_2
// and the FFN (mptmlp: up_proj d_model × ffn and down_proj ffn × d_model,
// ffn = int(d_model·expansion_ratio), resolve_ffn_hidden_size in
// llmfoundry/models/layers/ffn.py; mptglu adds gate_proj), norm_f. Norms
// are LayerNorms (low_precision_layernorm, the default norm_type) with a
// bias that no_bias removes (MPTModel.__init__), or RMSNorms without one.
func (im *lfImport) readMPT() error {
	d, f := im.d, im.f
	// A misspelled MPTConfig key (d_modle) goes through MPTConfig's
	// **kwargs to PretrainedConfig, which keeps it as an attribute, and
	// the default is used (2048 for d_model): the import did the same with
	// no word, for a model a quarter the size.
	if m, ok, err := d.has("model"); err == nil && ok {
		for _, k := range mappingKeys(d.deref(m.node)) {
			if slices.Contains(lfMPTKeys, k.Value) {
				continue
			}
			if near := nearKey(k.Value, lfMPTKeys); near != "" {
				im.note("model.%s is not an MPTConfig key (did you mean %s? MPTConfig keeps it as an attribute and uses %s's default)", k.Value, near, near)
			}
		}
	}
	h, _, _, err := d.int("model.d_model", 2048, 1, maxHidden)
	if err != nil {
		return err
	}
	heads, hv, _, err := d.int("model.n_heads", 16, 1, h)
	if err != nil {
		return err
	}
	if h%heads != 0 {
		return d.errAt(hv.at, "model.n_heads = %d does not divide d_model = %d (MPTConfig requires it: use a divisor of %d)", heads, h, h)
	}
	layers, _, _, err := d.int("model.n_layers", 24, 1, maxLayers)
	if err != nil {
		return err
	}
	if v, ok, err := d.has("model.head_dim"); err != nil {
		return err
	} else if ok {
		hd, _, _, err := d.int("model.head_dim", 0, 1, h)
		if err != nil {
			return err
		}
		if hd != h/heads {
			return d.errAt(v.at, "model.head_dim = %d differs from d_model/n_heads = %d: zerosim's attention has d_model/n_heads per head (remove head_dim)", hd, h/heads)
		}
	}
	ratio, rv, _, err := d.float("model.expansion_ratio", 4)
	if err != nil {
		return err
	}
	ffnF := float64(h) * ratio
	if ratio <= 0 || ffnF != math.Trunc(ffnF) || ffnF > maxFFN {
		return d.errAt(rv.at, "model.expansion_ratio = %s makes d_model·expansion_ratio = %s, not a whole number of FFN units in 1 to %d (resolve_ffn_hidden_size requires an integer: fix the ratio)", fmtFloat(ratio), fmtFloat(ffnF), maxFFN)
	}
	ffn := int64(ffnF)
	if _, ok, err := d.has("model.ffn_config.ffn_hidden_size"); err != nil {
		return err
	} else if ok {
		if ffn, _, _, err = d.int("model.ffn_config.ffn_hidden_size", 0, 1, maxFFN); err != nil {
			return err
		}
	}
	maxSeq, _, _, err := d.int("model.max_seq_len", 2048, 1, maxSeqLen)
	if err != nil {
		return err
	}
	vocab, _, _, err := d.int("model.vocab_size", 50368, 1, maxVocab)
	if err != nil {
		return err
	}
	noBias, _, _, err := d.bool("model.no_bias", false)
	if err != nil {
		return err
	}
	attnBias, _, _, err := d.bool("model.attention_bias", !noBias)
	if err != nil {
		return err
	}
	learned, _, _, err := d.bool("model.learned_pos_emb", true)
	if err != nil {
		return err
	}
	alibi, _, _, err := d.bool("model.attn_config.alibi", false)
	if err != nil {
		return err
	}
	rope, _, _, err := d.bool("model.attn_config.rope", false)
	if err != nil {
		return err
	}
	if alibi || rope {
		learned = false // configuration_mpt.py: alibi or rope turn learned_pos_emb off
	}
	tied, _, _, err := d.bool("model.tie_word_embeddings", true)
	if err != nil {
		return err
	}
	for _, k := range []string{"model.attn_config.qk_ln", "model.attn_config.qk_gn"} {
		on, v, _, err := d.bool(k, false)
		if err != nil {
			return err
		}
		if on {
			return d.errAt(v.at, "%s = true (norms on the queries and keys) is not modelled (remove it)", k)
		}
	}
	if v, ok, err := d.has("model.block_overrides"); err != nil {
		return err
	} else if ok {
		return d.errAt(v.at, "model.block_overrides (per-layer attention variants, KV reuse) is not modelled: zerosim's blocks are all alike (remove it)")
	}
	if sw, v, _, err := d.int("model.attn_config.sliding_window_size", -1, -1, math.MaxInt32); err != nil {
		return err
	} else if sw != -1 {
		_ = v
		im.note("model.attn_config.sliding_window_size = %d modelled as full causal attention", sw)
	}
	// Attention heads: attn_type multihead_attention (default,
	// config_defaults.py), multiquery_attention (one KV head),
	// grouped_query_attention (kv_n_heads).
	kv := heads
	at, av, _, err := d.str("model.attn_config.attn_type", "multihead_attention")
	if err != nil {
		return err
	}
	switch at {
	case "multihead_attention":
	case "multiquery_attention":
		kv = 1
	case "grouped_query_attention":
		n, kvv, given, err := d.int("model.attn_config.kv_n_heads", 0, 1, heads)
		if err != nil {
			return err
		}
		if !given {
			return d.errAt(av.at, "model.attn_config.attn_type grouped_query_attention needs attn_config.kv_n_heads (add it)")
		}
		if heads%n != 0 {
			return d.errAt(kvv.at, "model.attn_config.kv_n_heads = %d does not divide n_heads = %d (use a divisor of %d)", n, heads, heads)
		}
		kv = n
	default:
		return d.errAt(av.at, "model.attn_config.attn_type = %s is not one MPT builds (use multihead_attention, multiquery_attention or grouped_query_attention)", strconv.Quote(at))
	}
	ft, fv, _, err := d.str("model.ffn_config.ffn_type", "mptmlp")
	if err != nil {
		return err
	}
	glu := false
	switch ft {
	case "mptmlp":
	case "mptglu":
		glu = true
	default:
		return d.errAt(fv.at, "model.ffn_config.ffn_type = %s is not modelled (use mptmlp or mptglu; MoE and Transformer Engine FFNs are not imported)", strconv.Quote(ft))
	}
	fcKey := "model.fc_type"
	if v, ok, err := d.has(fcKey); err != nil {
		return err
	} else if ok && v.node.Kind == yaml.MappingNode {
		fcKey = "model.fc_type.name"
	}
	if fc, v, _, err := d.str(fcKey, "torch"); err != nil {
		return err
	} else if fc != "torch" {
		return d.errAt(v.at, "%s = %s is not modelled: zerosim's MPT runs torch linears (use torch)", fcKey, strconv.Quote(fc))
	}
	nt, nv, _, err := d.str("model.norm_type", "low_precision_layernorm")
	if err != nil {
		return err
	}
	var norm int64
	switch nt {
	case "low_precision_layernorm", "layernorm", "triton_layernorm":
		norm = 2 * h
		if noBias {
			norm = h
		}
	case "low_precision_rmsnorm", "rmsnorm", "triton_rmsnorm":
		norm = h
	default:
		return d.errAt(nv.at, "model.norm_type = %s is not a norm zerosim knows (use low_precision_layernorm or low_precision_rmsnorm)", strconv.Quote(nt))
	}
	b := func(on bool, n int64) int64 {
		if on {
			return n
		}
		return 0
	}
	hd := h / heads
	qkvOut := h + 2*kv*hd
	mlpMats := int64(2)
	if glu {
		mlpMats = 3
	}
	block := 2*norm + h*qkvOut + b(attnBias, qkvOut) + h*h + b(!noBias, h) +
		mlpMats*h*ffn + b(!noBias, (mlpMats-1)*ffn+h)
	emb := vocab*h + b(learned, maxSeq*h)
	total := emb + layers*block + norm + b(!tied, vocab*h)
	f.Params = total
	f.Model = Model{Kind: KindTransformer, Arch: ArchGPT, Hidden: h, Layers: layers, Heads: heads, KVHeads: kv, FFN: ffn, Vocab: vocab, SeqLen: f.SeqLen}
	gpt := learned && maxSeq == f.SeqLen && tied && !noBias && attnBias && !glu && norm == 2*h
	if !gpt {
		f.LayerList = append(f.LayerList, Layer{Name: "embedding", Params: countOf(emb)})
		for i := int64(0); i < layers; i++ {
			f.LayerList = append(f.LayerList, Layer{Name: fmt.Sprintf("block.%d", i), Params: countOf(block)})
		}
		f.LayerList = append(f.LayerList, Layer{Name: "final_norm", Params: countOf(norm)})
		if !tied {
			f.LayerList = append(f.LayerList, Layer{Name: "lm_head", Params: countOf(vocab * h)})
		}
		var why []string
		if !learned {
			why = append(why, "no learned positions (alibi or rope)")
		} else if maxSeq != f.SeqLen {
			why = append(why, fmt.Sprintf("learned positions of model.max_seq_len %d, not the trained %d", maxSeq, f.SeqLen))
		}
		if noBias {
			why = append(why, "no_bias")
		} else if !attnBias {
			why = append(why, "no attention bias")
		}
		if glu {
			why = append(why, "mptglu")
		}
		if norm != 2*h && !noBias {
			why = append(why, "RMSNorm")
		}
		if !tied {
			why = append(why, "untied lm_head")
		}
		im.note("MPT here has %s: the layer list gives its exact parameters; blocks compute as gpt blocks of these dimensions", strings.Join(why, ", "))
		if glu {
			im.note("mptglu's third FFN matrix is counted in the parameters; its FLOPs are modelled as a two-matrix MLP's")
		}
	}
	// Attention kernel: attn_impl flash (default, config_defaults.py)
	// runs flash-attn 2 (flash_attn_fn in attention.py at 8c8dd48); torch
	// runs scaled_multihead_dot_product_attention, which materialises the
	// s² scores; triton (llm-foundry before 8c8dd48 dropped it, e.g.
	// 061f2c7ce64e) ran flash-attn's Triton FlashAttention.
	impl, iv, given, err := d.str("model.attn_config.attn_impl", "flash")
	if err != nil {
		return err
	}
	from := src(iv, given, "model.attn_config.attn_impl flash (default)")
	switch impl {
	case "flash":
		im.set("training.attention", "flash", from)
		im.set("training.attention_kernel", "fa2", from+": flash-attn 2")
	case "triton":
		im.set("training.attention", "flash", from)
		im.set("training.attention_kernel", "triton", from+": flash-attn's Triton FlashAttention")
		im.note("attn_impl triton is llm-foundry's before 8c8dd48 (which accepts torch and flash only); read as that version ran it")
	case "torch":
		im.set("training.attention", "eager", from+": scores materialised")
		im.set("training.attention_kernel", "eager", from)
	default:
		return d.errAt(iv.at, "model.attn_config.attn_impl = %s is not one MPT runs (use flash or torch)", strconv.Quote(impl))
	}
	// loss_fn: ComposerMPTCausalLM defaults to fused_crossentropy
	// (flash-attn's CrossEntropyLoss; modeling_mpt.py at 8c8dd48);
	// torch_crossentropy is torch's CrossEntropyLoss on fp32 logits.
	lf, lv, given, err := d.str("model.loss_fn", "fused_crossentropy")
	if err != nil {
		return err
	}
	switch lf {
	case "fused_crossentropy":
		im.set("training.cross_entropy", "fused", src(lv, given, "model.loss_fn fused_crossentropy (default)"))
	case "torch_crossentropy":
		im.set("training.cross_entropy", "fp32", src(lv, given, ""))
	default:
		return d.errAt(lv.at, "model.loss_fn = %s is not one MPT builds (use fused_crossentropy or torch_crossentropy)", strconv.Quote(lf))
	}
	return nil
}

func countOf(n int64) units.Count { return units.Count(n) }

// readHF reads hf_causal_lm: the model is pretrained_model_name_or_path's
// config.json (--hf). ComposerHFCausalLM (llmfoundry/models/hf/
// hf_causal_lm.py at 8c8dd48) loads it with transformers, whose model
// computes its loss on fp32 logits; use_flash_attention_2 or
// attn_implementation choose the attention. llm-foundry 8c8dd48 pins
// transformers>=v4.51.0,<4.52 and torch>=2.7.0,<2.7.1 (setup.py; its
// images are mosaicml/llm-foundry:2.7.0_cu128, README.md and
// .github/workflows/docker.yaml). transformers' sdpa (its default when
// attn_implementation is unset) is sdpa_attention_forward
// (src/transformers/integrations/sdpa_attention.py), which at 4.51
// repeats k and v to every head (repeat_kv) whenever the module has
// num_key_value_groups, whatever the mask: enable_gqa came with
// huggingface/transformers#39412 (opened 2025-07-15, months after 4.51;
// its diff removes that unconditional repeat_kv), and then only under
// use_gqa_in_sdpa (torch 2.5 or later and attention_mask None; at
// 00c238b). So a GQA model keeps zerosim's sdpa class (k and v repeated),
// unlike torchtitan 238fa9953e4a's enable_gqa (Torchtitan.gqaAttention).
func (im *lfImport) readHF() error {
	d, f := im.d, im.f
	p, pv, given, err := d.str("model.pretrained_model_name_or_path", "")
	if err != nil {
		return err
	}
	if !given {
		return fmt.Errorf("%s: model.pretrained_model_name_or_path is missing (hf_causal_lm needs it)", d.pos(pv.at))
	}
	f.Pretrained = p
	if f.Opt.HF != "" {
		hm, err := ReadHFConfig(f.Opt.HF)
		if err != nil {
			return fmt.Errorf("--hf: %w", err)
		}
		f.HF, f.Params = hm, hm.Total
	}
	fa2, fv, fgiven, err := d.bool("model.use_flash_attention_2", false)
	if err != nil {
		return err
	}
	ai, av, agiven, err := d.str("model.attn_implementation", "")
	if err != nil {
		return err
	}
	switch {
	case fa2:
		im.set("training.attention", "flash", src(fv, fgiven, ""))
		im.set("training.attention_kernel", "fa2", src(fv, fgiven, "")+": flash_attention_2")
	case ai == "flash_attention_2":
		im.set("training.attention", "flash", src(av, agiven, ""))
		im.set("training.attention_kernel", "fa2", src(av, agiven, ""))
	case ai == "eager":
		im.set("training.attention", "eager", src(av, agiven, ""))
		im.set("training.attention_kernel", "eager", src(av, agiven, ""))
	case ai == "sdpa" || ai == "":
		im.set("training.attention", "sdpa", src(av, agiven, "attn_implementation unset: transformers' default, sdpa")+"; transformers 4.51 (llm-foundry 8c8dd48's pin) repeats k and v before SDPA (repeat_kv in integrations/sdpa_attention.py; enable_gqa only since huggingface/transformers#39412)")
		im.set("training.attention_kernel", "fa2", "SDPA's flash backend")
	default:
		return d.errAt(av.at, "model.attn_implementation = %s is not modelled (use flash_attention_2, sdpa or eager)", strconv.Quote(ai))
	}
	im.set("training.cross_entropy", "fp32", "transformers' causal LM loss: cross_entropy on fp32 logits")
	return nil
}

// lfStrategy is a Composer FSDP sharding strategy's ZeRO stage
// (SHARDING_MAP in mosaic_parallelism.py at v0.32.1: torch's
// ShardingStrategy; _HYBRID_SHARD_ZERO2 is SHARD_GRAD_OP within the shard
// group).
var lfStrategy = map[string]int64{"FULL_SHARD": 3, "SHARD_GRAD_OP": 2, "HYBRID_SHARD": 3, "_HYBRID_SHARD_ZERO2": 2, "NO_SHARD": 0}

// readParallelism maps fsdp_config.sharding_strategy (FSDPConfig default
// FULL_SHARD) and the device mesh degrees. At Composer v0.32.1 the
// strategy follows the mesh (dist_strategy.py prepare_fsdp_module): with
// data_parallel_replicate_degree set the mesh is 2-D and FULL_SHARD
// becomes HYBRID_SHARD (SHARD_GRAD_OP _HYBRID_SHARD_ZERO2); without it a
// HYBRID_SHARD falls back to FULL_SHARD.
func (im *lfImport) readParallelism() error {
	d, f, o := im.d, im.f, im.f.Opt
	world := int64(o.Nodes) * int64(o.GPUsPerNode)
	if o.Nodes > 0 {
		f.DP = world
	}
	_, hasFSDP, err := d.has("fsdp_config")
	if err != nil {
		return err
	}
	f.K = 1
	if !hasFSDP {
		f.Stage = 0
		im.set("parallelism.zero_stage", "0", "no fsdp_config: Composer wraps the model in DDP")
		im.note("no fsdp_config: Composer trains with DDP, modelled as zero_stage 0 (a replica of the fp32 parameters and optimizer state per GPU)")
		im.set("training.grad_sync", "last", "Composer DDP: ddp_sync_strategy SINGLE_AUTO_SYNC (find_unused_parameters false) runs every micro-batch but the last under no_sync (composer/distributed/dist_strategy.py ddp_sync_context, composer/trainer/trainer.py _get_ddp_sync_strategy at mosaicml/composer e147a68)")
		im.set("communication.boundary", "reshard", lfNoFSDP)
		return nil
	}
	if world == 1 {
		f.Stage = 0
		im.set("parallelism.zero_stage", "0", "one GPU: llm-foundry drops fsdp_config (command_utils/train.py)")
		im.set("communication.boundary", "reshard", lfNoFSDP)
		return nil
	}
	im.fsdp = true
	s, sv, given, err := d.str("fsdp_config.sharding_strategy", "FULL_SHARD")
	if err != nil {
		return err
	}
	stage, ok := lfStrategy[strings.ToUpper(s)]
	if !ok {
		return d.errAt(sv.at, "fsdp_config.sharding_strategy = %s is not one Composer knows (use FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD)", strconv.Quote(s))
	}
	s = strings.ToUpper(s)
	rep, rv, rgiven, err := d.int("fsdp_config.data_parallel_replicate_degree", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	shard, shv, shgiven, err := d.int("fsdp_config.data_parallel_shard_degree", -1, -1, 1<<20)
	if err != nil {
		return err
	}
	if shgiven && shard == 0 {
		return d.errAt(shv.at, "fsdp_config.data_parallel_shard_degree = 0 is out of range (use -1 for the GPUs the replicas leave, or a positive degree)")
	}
	from := src(sv, given, "fsdp_config.sharding_strategy FULL_SHARD (default)")
	f.Stage = stage
	if stage == 0 {
		if rgiven && rep > 1 {
			return d.errAt(rv.at, "fsdp_config.data_parallel_replicate_degree = %d with NO_SHARD (remove the degree)", rep)
		}
		im.set("parallelism.zero_stage", "0", from+": FSDP replicates like DDP")
		im.set("training.grad_sync", "every", "FSDP NO_SHARD: Composer's ddp_sync_context returns at once for a model that is not DDP, so every micro-batch all-reduces (composer/distributed/dist_strategy.py at mosaicml/composer e147a68)")
		return nil
	}
	if rgiven && rep > 1 {
		f.K = rep
		if o.Nodes > 0 {
			if world%rep != 0 {
				return d.errAt(rv.at, "fsdp_config.data_parallel_replicate_degree = %d does not divide the %d GPUs of --nodes × --gpus-per-node (use a divisor of %d)", rep, world, world)
			}
			if shgiven && shard > 0 && shard*rep != world {
				return d.errAt(shv.at, "data_parallel_shard_degree %d × data_parallel_replicate_degree %d is not the %d GPUs of --nodes × --gpus-per-node (make the product %d)", shard, rep, world, world)
			}
		}
		im.set("parallelism.zero_stage", strconv.FormatInt(stage, 10), from+" on a 2-D mesh: HSDP")
		im.set("parallelism.k", strconv.FormatInt(rep, 10), src(rv, true, "")+": copies of the shards")
		im.set("training.grad_sync", "every", lfFSDPSync)
		return nil
	}
	if o.Nodes > 0 && shgiven && shard > 0 && shard != world {
		return d.errAt(shv.at, "fsdp_config.data_parallel_shard_degree = %d is not the %d GPUs of --nodes × --gpus-per-node (set data_parallel_replicate_degree to %d / %d, or remove the degree)", shard, world, world, shard)
	}
	if strings.Contains(s, "HYBRID") {
		im.note("fsdp_config.sharding_strategy %s without data_parallel_replicate_degree: Composer v0.32.1 builds a 1-D mesh and falls back to %s (dist_strategy.py); set data_parallel_replicate_degree for HSDP", s, map[int64]string{3: "FULL_SHARD", 2: "SHARD_GRAD_OP"}[stage])
	}
	im.set("parallelism.zero_stage", strconv.FormatInt(stage, 10), from)
	im.set("training.grad_sync", "every", lfFSDPSync)
	return nil
}

// lfFSDPSync is why Composer's sharded FSDP reduces every micro-step:
// ddp_sync_context enters no_sync only for a DistributedDataParallel
// model, so FSDP's post-backward hook reduce-scatters every micro-batch
// (composer/distributed/dist_strategy.py at mosaicml/composer
// e147a68331e11588048ef6f2bc8ec83004c6d00b).
const lfFSDPSync = "FSDP: Composer's ddp_sync_context returns at once for a model that is not DDP, so every micro-batch reduce-scatters (composer/distributed/dist_strategy.py at mosaicml/composer e147a68)"

// readBatch maps the batch: calculate_batch_size_info (config_utils.py at
// 8c8dd48) requires global_train_batch_size to divide by the world size,
// gives each device global/world samples, lowers a larger
// device_train_microbatch_size to that, and runs ceil(device batch /
// micro-batch) micro-steps.
func (im *lfImport) readBatch() error {
	d, f := im.d, im.f
	gb, gv, given, err := d.int("global_train_batch_size", 0, 1, 1<<40)
	if err != nil {
		return err
	}
	if !given {
		if k := d.nearKeyIn(d.root, "global_train_batch_size"); k != nil {
			return d.errAt(k, "%s is not a TrainConfig key (did you mean global_train_batch_size? llm-foundry needs it to size the batch)", k.Value)
		}
		return fmt.Errorf("%s: global_train_batch_size is missing (llm-foundry needs it to size the batch: add global_train_batch_size: 256)", d.file)
	}
	f.GlobalBatch = gb
	mv, mgiven, err := d.has("device_train_microbatch_size")
	if err != nil {
		return err
	}
	auto := !mgiven || (mv.node.Kind == yaml.ScalarNode && mv.node.Tag == "!!str" && mv.node.Value == "auto")
	var micro int64
	microFrom := ""
	switch {
	case auto && f.Opt.MicroBatch > 0:
		micro = f.Opt.MicroBatch
		microFrom = "--micro-batch, for " + src(mv, mgiven, "device_train_microbatch_size auto (default)")
	case auto:
		return fmt.Errorf("%s: device_train_microbatch_size is \"auto\" (Composer searches for the largest that fits; pass --micro-batch N with the micro-batch it found)", d.pos(mv.at))
	case f.Opt.MicroBatch > 0:
		return d.errAt(mv.at, "--micro-batch %d is for device_train_microbatch_size \"auto\", and the file gives %s (drop --micro-batch)", f.Opt.MicroBatch, mv.show())
	default:
		if micro, _, _, err = d.int("device_train_microbatch_size", 0, 1, 1<<20); err != nil {
			return err
		}
		microFrom = src(mv, true, "")
	}
	f.MicroBatch = micro
	if f.DP > 0 {
		if gb%f.DP != 0 {
			return d.errAt(gv.at, "global_train_batch_size = %d does not divide by the %d GPUs of --nodes × --gpus-per-node (llm-foundry refuses it: use a multiple of %d)", gb, f.DP, f.DP)
		}
		dev := gb / f.DP
		if micro > dev {
			im.note("device_train_microbatch_size %d is more than global_train_batch_size / GPUs = %d: llm-foundry lowers it to %d", micro, dev, dev)
			micro = dev
			f.MicroBatch = dev
		}
		ga := (dev + micro - 1) / micro
		if ga > 4096 {
			return d.errAt(gv.at, "global_train_batch_size %d needs %d micro-steps of %d per GPU, more than zerosim's 4096 (use a larger device_train_microbatch_size or more GPUs)", gb, ga, micro)
		}
		if dev%micro != 0 {
			im.note("the device batch %d is not a multiple of the micro-batch %d: the last of the %d micro-steps is smaller; zerosim runs them all full", dev, micro, ga)
		}
		f.GradAccum = ga
	}
	im.set("training.micro_batch", strconv.FormatInt(micro, 10), microFrom)
	if f.GradAccum > 0 {
		im.set("training.grad_accum", strconv.FormatInt(f.GradAccum, 10), fmt.Sprintf("ceil(global_train_batch_size %d / %d GPUs / micro-batch %d)", gb, f.DP, micro))
	}
	return nil
}

// lfDType is Composer's _get_torch_dtype (mosaic_parallelism.py at
// v0.32.1) in zerosim's dtypes; amp_fp8 is refused elsewhere.
func lfDType(s string) (DType, bool) {
	switch s {
	case "float32", "torch.float32", "fp32":
		return FP32, true
	case "float16", "torch.float16", "half", "fp16", "amp", "amp_fp16":
		return FP16, true
	case "bfloat16", "bfloat", "torch.bfloat16", "bf16", "amp_bf16":
		return BF16, true
	}
	return "", false
}

// readPrecision maps precision (TrainConfig default amp_bf16) and
// fsdp_config.mixed_precision (FSDPConfig default DEFAULT) as
// get_mixed_precision does at v0.32.1: FULL keeps fp32 parameters and
// gradients; DEFAULT gathers in the precision's dtype and reduces in fp32;
// PURE gathers and reduces in the precision's dtype; a mapping names
// param_dtype and reduce_dtype. Under FSDP1 each rank keeps its shard of
// the flat parameter in fp32, which the optimizer steps (shard_dtype fp32:
// the llm-foundry validation templates).
func (im *lfImport) readPrecision() error {
	d := im.d
	p, pv, pgiven, err := d.str("precision", "amp_bf16")
	if err != nil {
		return err
	}
	if p == "amp_fp8" {
		return d.errAt(pv.at, "precision amp_fp8 (Transformer Engine fp8) is not imported (use amp_bf16, or write fp8: te in the scenario)")
	}
	pd, ok := lfDType(p)
	if !ok {
		return d.errAt(pv.at, "precision = %s is not one Composer knows (use amp_bf16, amp_fp16 or fp32)", strconv.Quote(p))
	}
	pfrom := src(pv, pgiven, "precision amp_bf16 (default)")
	if !im.fsdp {
		// DDP: torch.autocast over fp32 parameters (Composer's amp_bf16
		// and amp_fp16 run the step under torch.autocast and leave the
		// model fp32 outside FSDP: get_precision_context in
		// composer/core/precision.py at mosaicml/composer
		// e147a68331e11588048ef6f2bc8ec83004c6d00b).
		im.set("training.param_dtype", "fp32", pfrom)
		if pd != FP32 {
			im.set("training.autocast", string(pd), pfrom+": torch.autocast over the fp32 model, whose parameters, fp32 gradients and Adam states the optimizer steps")
		}
		return nil
	}
	mv, mgiven, err := d.has("fsdp_config.mixed_precision")
	if err != nil {
		return err
	}
	param, reduce := pd, FP32
	mfrom := "fsdp_config.mixed_precision DEFAULT (default)"
	if mgiven {
		switch {
		case mv.node.Kind == yaml.MappingNode:
			mfrom = mv.where()
			param, reduce = FP32, FP32
			for _, k := range []struct {
				key string
				dst *DType
			}{{"param_dtype", &param}, {"reduce_dtype", &reduce}} {
				s, sv, given, err := d.str("fsdp_config.mixed_precision."+k.key, "")
				if err != nil {
					return err
				}
				if !given {
					continue // None: fp32
				}
				dt, ok := lfDType(s)
				if !ok {
					return d.errAt(sv.at, "fsdp_config.mixed_precision.%s = %s is not a dtype Composer knows (use bf16, fp16 or fp32)", k.key, strconv.Quote(s))
				}
				*k.dst = dt
			}
		case mv.node.Kind == yaml.ScalarNode && mv.node.Tag == "!!str":
			mfrom = src(mv, true, "")
			switch strings.ToUpper(mv.node.Value) {
			case "FULL":
				param, reduce = FP32, FP32
			case "DEFAULT":
			case "PURE":
				reduce = pd
			default:
				return d.errAt(mv.at, "fsdp_config.mixed_precision = %s is not one Composer knows (use PURE, DEFAULT or FULL)", mv.show())
			}
		default:
			return d.errAt(mv.at, "fsdp_config.mixed_precision = %s is not PURE, DEFAULT, FULL or a mapping of dtypes (use one)", mv.show())
		}
	}
	im.set("training.param_dtype", string(param), mfrom+", "+pfrom)
	if param == FP32 && pd != FP32 {
		// FSDP1 gathers fp32 parameters and Composer still runs the step
		// under torch.autocast (get_precision_context, composer/core/
		// precision.py at e147a68): autocast over an FSDP1 model
		// (scenarios/autocast_fsdp.go).
		im.set("training.autocast", string(pd), mfrom+", "+pfrom+": FSDP gathers fp32 parameters and Composer runs the forward under torch.autocast("+string(pd)+")")
	}
	if param != FP32 {
		if reduce == FP32 {
			im.set("training.reduce_dtype", "fp32", mfrom+": reduce_dtype float32")
		} else {
			if reduce != param {
				im.note("fsdp_config.mixed_precision reduces in %s, gathers in %s: modelled as reducing in %s", reduce, param, param)
			}
			im.set("training.reduce_dtype", "param_dtype", mfrom+": reduce_dtype "+string(reduce))
		}
		im.set("training.shard_dtype", "fp32", "FSDP1 keeps each rank's flat parameter shard in fp32, the optimizer's parameter")
	}
	return nil
}

// readOptimizer maps optimizer: llm-foundry's registry (llmfoundry/optim/
// __init__.py at 8c8dd48) registers decoupled_adamw as Composer's
// DecoupledAdamW, whose defaults are lr 1e-3, betas (0.9, 0.95), eps 1e-8,
// weight_decay 1e-5 (composer/optim/decoupled_weight_decay.py at v0.32.1)
// and which steps parameter by parameter (optimizer_impl: composer).
func (im *lfImport) readOptimizer() error {
	d := im.d
	name, nv, given, err := d.str("optimizer.name", "")
	if err != nil {
		return err
	}
	if !given {
		return fmt.Errorf("%s: optimizer.name is missing (llm-foundry requires an optimizer: add optimizer: {name: decoupled_adamw})", d.pos(nv.at))
	}
	switch name {
	case "decoupled_adamw":
	case "decoupled_lionw", "clip_lion", "adalr_lion":
		return d.errAt(nv.at, "optimizer.name = %s (Lion: one momentum state) is not modelled: zerosim's optimizers keep Adam's two states (use decoupled_adamw)", strconv.Quote(name))
	default:
		return d.errAt(nv.at, "optimizer.name = %s is not an optimizer zerosim imports (use decoupled_adamw)", strconv.Quote(name))
	}
	im.set("training.optimizer", "adamw", src(nv, true, "")+": Composer's DecoupledAdamW")
	im.set("training.optimizer_impl", "composer", "DecoupledAdamW steps each parameter with one in-place op per step of the update")
	lr, lrv, _, err := d.float("optimizer.lr", 1e-3)
	if err != nil {
		return err
	}
	beta1, beta2 := 0.9, 0.95
	if bv, ok, err := d.has("optimizer.betas"); err != nil {
		return err
	} else if ok {
		if bv.node.Kind != yaml.SequenceNode || len(bv.node.Content) != 2 {
			return d.errAt(bv.at, "optimizer.betas = %s is not a list of two numbers (use [0.9, 0.95])", bv.show())
		}
		for i, dst := range []*float64{&beta1, &beta2} {
			n := d.deref(bv.node.Content[i])
			var x float64
			if n == nil || n.Kind != yaml.ScalarNode || (n.Tag != "!!float" && n.Tag != "!!int") || n.Decode(&x) != nil || x < 0 || x >= 1 {
				return d.errAt(bv.at, "optimizer.betas[%d] is not a number in [0, 1) (use [0.9, 0.95])", i)
			}
			*dst = x
		}
	}
	eps, ev, _, err := d.float("optimizer.eps", 1e-8)
	if err != nil {
		return err
	}
	wd, wv, _, err := d.float("optimizer.weight_decay", 1e-5)
	if err != nil {
		return err
	}
	if lr <= 0 {
		return d.errAt(lrv.at, "optimizer.lr = %s is out of range (use a learning rate > 0)", fmtFloat(lr))
	}
	if eps <= 0 {
		return d.errAt(ev.at, "optimizer.eps = %s is out of range (use a value > 0)", fmtFloat(eps))
	}
	if wd < 0 {
		return d.errAt(wv.at, "optimizer.weight_decay = %s is out of range (use a value ≥ 0)", fmtFloat(wd))
	}
	im.set("training.lr", ttFloat(lr), "optimizer.lr")
	im.set("training.beta1", ttFloat(beta1), "optimizer.betas")
	im.set("training.beta2", ttFloat(beta2), "optimizer.betas")
	im.set("training.eps", ttFloat(eps), "optimizer.eps")
	im.set("training.weight_decay", ttFloat(wd), "optimizer.weight_decay")
	// algorithms.gradient_clipping (Composer's GradientClipping, composer/
	// algorithms/gradient_clipping/gradient_clipping.py at v0.32.1): norm
	// calls the FSDP root's clip_grad_norm_; value calls it with norm_type
	// inf (a max over the gradients, then the same scaling).
	cv, cgiven, err := d.has("algorithms.gradient_clipping")
	if err != nil {
		return err
	}
	if !cgiven {
		im.set("training.grad_clip", "none", "no algorithms.gradient_clipping")
		return nil
	}
	// clipping_type absent is Composer's default, norm: src names the
	// section then, the key when given.
	ct, ctv, ctGiven, err := d.str("algorithms.gradient_clipping.clipping_type", "norm")
	if err != nil {
		return err
	}
	switch ct {
	case "norm":
		im.set("training.grad_clip", "norm", src(ctv, ctGiven, cv.key+" (clipping_type norm)")+": FSDP clip_grad_norm_")
	case "value":
		im.set("training.grad_clip", "norm", src(ctv, ctGiven, "")+": FSDP clip_grad_norm_(norm_type=inf)")
	case "adaptive":
		im.set("training.grad_clip", "norm", src(ctv, ctGiven, ""))
		im.note("gradient_clipping adaptive scales each gradient by its weight's norm: modelled as norm clipping's reads and writes")
	default:
		return d.errAt(ctv.at, "algorithms.gradient_clipping.clipping_type = %s is not one Composer knows (use norm, value or adaptive)", strconv.Quote(ct))
	}
	return nil
}

// readRecompute maps fsdp_config.activation_checkpointing (FSDPConfig
// default False) and activation_checkpointing_reentrant (default True):
// Composer wraps every module the model's activation_checkpointing_fn
// picks, MPTBlock for MPT unless model.activation_checkpointing_target
// names others (modeling_mpt.py at 8c8dd48), in checkpoint_wrapper,
// REENTRANT or NO_REENTRANT (dist_strategy.py at v0.32.1). Non-reentrant
// checkpointing stops early from torch 2.1 on; reentrant does not.
func (im *lfImport) readRecompute() error {
	d := im.d
	on, av, given, err := d.bool("fsdp_config.activation_checkpointing", false)
	if err != nil {
		return err
	}
	if !on {
		im.set("training.recompute", "none", src(av, given, "fsdp_config.activation_checkpointing false (default)"))
		im.set("training.recompute_early_stop", "false", "no activation checkpointing")
		return nil
	}
	if im.f.ModelName == "mpt_causal_lm" {
		if tv, ok, err := d.has("model.activation_checkpointing_target"); err != nil {
			return err
		} else if ok {
			n := tv.node
			whole := n.Kind == yaml.ScalarNode && strings.EqualFold(n.Value, "mptblock")
			if n.Kind == yaml.SequenceNode && len(n.Content) == 1 {
				if e := d.deref(n.Content[0]); e != nil && e.Kind == yaml.ScalarNode && strings.EqualFold(e.Value, "mptblock") {
					whole = true
				}
			}
			if !whole {
				return d.errAt(tv.at, "model.activation_checkpointing_target = %s checkpoints parts of the blocks or some blocks, which zerosim does not model (remove it: every MPTBlock is checkpointed)", tv.show())
			}
		}
	}
	im.set("training.recompute", "full", src(av, true, "")+": every block in checkpoint_wrapper")
	re, rv, rgiven, err := d.bool("fsdp_config.activation_checkpointing_reentrant", true)
	if err != nil {
		return err
	}
	if re {
		im.set("training.recompute_early_stop", "false", src(rv, rgiven, "fsdp_config.activation_checkpointing_reentrant true (Composer's default)")+": reentrant checkpointing reruns the whole block")
	} else {
		im.set("training.recompute_early_stop", "true", src(rv, true, "")+": torch ≥ 2.1's non-reentrant early stop")
	}
	if off, ov, _, err := d.bool("fsdp_config.activation_cpu_offload", false); err != nil {
		return err
	} else if off {
		_ = ov
		im.note("fsdp_config.activation_cpu_offload moves the checkpointed inputs to the CPU: not modelled, they are counted on the GPU")
	}
	return nil
}

// lfNoFSDP is why a Composer run without FSDP1 has no fsdp1 boundary (the
// stack preset's): its stage 0 is torch DDP above one GPU, whose gradient
// buckets outlive the step, or the plain model, not FSDP1's NO_SHARD,
// which keeps no gradient buffer (Scenario.FSDP1NoShard,
// GradsFreedEachStep).
const lfNoFSDP = "no FSDP1 (Composer wraps DDP only above world size 1, composer/trainer/trainer.py line 1972 at e147a68): not the preset's fsdp1, whose stage 0 is NO_SHARD"

// readComm maps the FSDP1 schedule keys (FSDPConfig's defaults,
// composer/utils/parallelism.py lines 14–43 at v0.32.1):
// backward_prefetch BACKWARD_POST (the next unit's all-gather starts when
// the current unit's backward ends: backward_prefetch_depth 0) or
// BACKWARD_PRE (1); forward_prefetch False (the CPU runs ahead by one
// unit: prefetch_depth 1); limit_all_gathers True (at most two gathered
// units, torch's _FreeEventQueue: max_inflight_allgathers 2), or false
// (communication.limit_all_gathers false).
func (im *lfImport) readComm() error {
	d, f := im.d, im.f
	if f.Stage == 2 {
		// SHARD_GRAD_OP reshards after every backward (Composer never
		// enters no_sync) and gathers again in the next forward (zero's
		// builder.regathers reads the boundary).
		im.set("communication.boundary", "fsdp1", "Composer wraps each block in PyTorch FSDP1 (SHARD_GRAD_OP)")
	}
	if f.Stage != 3 {
		return nil
	}
	im.set("communication.boundary", "fsdp1", "Composer wraps each block in PyTorch FSDP1")
	fp, fv, fgiven, err := d.bool("fsdp_config.forward_prefetch", false)
	if err != nil {
		return err
	}
	im.set("communication.prefetch_depth", "1", src(fv, fgiven, "fsdp_config.forward_prefetch false (default)")+": one unit gathered ahead")
	if fp {
		im.note("fsdp_config.forward_prefetch true issues the next unit's all-gather before this unit's forward; modelled as prefetch_depth 1, as without it")
	}
	bp, bv, bgiven, err := d.str("fsdp_config.backward_prefetch", "BACKWARD_POST")
	if err != nil {
		return err
	}
	bfrom := src(bv, bgiven, "fsdp_config.backward_prefetch BACKWARD_POST (default)")
	switch strings.ToUpper(bp) {
	case "BACKWARD_POST":
		im.set("communication.backward_prefetch_depth", "0", bfrom)
	case "BACKWARD_PRE":
		im.set("communication.backward_prefetch_depth", "1", bfrom)
	case "NONE":
		im.set("communication.backward_prefetch_depth", "0", bfrom)
		im.note("fsdp_config.backward_prefetch NONE gathers each unit only when its backward starts; modelled as BACKWARD_POST (depth 0)")
	default:
		return d.errAt(bv.at, "fsdp_config.backward_prefetch = %s is not one Composer knows (use BACKWARD_POST, BACKWARD_PRE or NONE)", strconv.Quote(bp))
	}
	for _, k := range []string{"fsdp_config.backward_prefetch_limit", "fsdp_config.forward_prefetch_limit"} {
		if n, v, given, err := d.int(k, 1, 0, 64); err != nil {
			return err
		} else if given && n != 1 {
			_ = v
			im.note("%s = %d: zerosim prefetches one unit ahead", k, n)
		}
	}
	la, lv, lgiven, err := d.bool("fsdp_config.limit_all_gathers", true)
	if err != nil {
		return err
	}
	if la {
		im.set("communication.max_inflight_allgathers", "2", src(lv, lgiven, "fsdp_config.limit_all_gathers true (default)"))
	} else {
		// FSDP1's rate limiter off: the host issues the all-gathers as it
		// reaches the units, and the blocks it frees ahead of the GPU
		// stay reserved (scenarios.HostRunsAhead, memory.GatherPool).
		im.set("communication.limit_all_gathers", "false", src(lv, lgiven, "")+": FSDP1's rate limiter off, the host runs ahead of the GPU (memory.host_lead of the forward's gathered parameters stay reserved)")
	}
	if cpu, cv, _, err := d.bool("fsdp_config.cpu_offload", false); err != nil {
		return err
	} else if cpu {
		return d.errAt(cv.at, "fsdp_config.cpu_offload is not supported by Composer (get_cpu_offload raises; remove it)")
	}
	return nil
}

// readOther maps the stack keys no YAML key sets and notes what matters
// but is not modelled.
func (im *lfImport) readOther() error {
	d := im.d
	if im.fsdp {
		im.set("training.flat_param_views", "true", "FSDP1's flat parameter: the units' parameters are views of it")
	} else {
		im.set("training.flat_param_views", "false", "no FSDP")
	}
	if v, ok, err := d.has("compile_config"); err != nil {
		return err
	} else if ok {
		_ = v
		im.note("compile_config: Composer compiles the whole model with torch.compile; not modelled (eager)")
	}
	if _, ok, err := d.has("fsdp_config.keep_low_precision_grads"); err != nil {
		return err
	} else if ok {
		if on, _, _, err := d.bool("fsdp_config.keep_low_precision_grads", false); err != nil {
			return err
		} else if on {
			im.note("fsdp_config.keep_low_precision_grads keeps 16-bit gradients for the optimizer; modelled with fp32 gradient shards")
		}
	}
	return nil
}

// ScenarioName is the scenario's name: the file name without extension.
func (f *LLMFoundry) ScenarioName() string {
	return strings.TrimSuffix(filepath.Base(f.File), filepath.Ext(f.File))
}

// Scenario renders the scenario file: a header naming the YAML, then every
// key with the llm-foundry key or default it came from. Unknown values are
// placeholders (SET_NODES, SET_GPU, SET_DP, SET_GRAD_ACCUM, SET_HF_CONFIG)
// that Load rejects at their line.
func (f *LLMFoundry) Scenario() []byte {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Imported by zerosim import llm-foundry from %s\n", ttName(f.File))
	switch {
	case f.ModelName == "mpt_causal_lm":
		w("# MPT: %s parameters (MPTConfig and MPTModel at llm-foundry %s).\n", commas(f.Params), LLMFoundryCommit[:7])
	case f.HF != nil:
		w("# hf_causal_lm %s: %s (%s) from %s, %s parameters.\n", strconv.Quote(f.Pretrained), f.HF.Architecture, f.HF.ModelType, ttName(f.Opt.HF), commas(f.Params))
	default:
		w("# hf_causal_lm %s: give its config.json with --hf, or set SET_HF_CONFIG below.\n", strconv.Quote(f.Pretrained))
	}
	w("# Keys and defaults as llm-foundry %s and Composer v0.32.1 (%s)\n", LLMFoundryCommit[:7], ComposerCommit[:7])
	w("# read them; the stack preset fills in the rest (docs/stacks.md).\n")
	for _, n := range f.Notes {
		w("# note: %s\n", oneLine(n))
	}
	w("version: 1\nname: %s\nstack: llm-foundry\n", strconv.Quote(f.ScenarioName()))
	o := f.Opt
	clusterYAML(w, o.Nodes, "", "your node count (or --nodes)", o.GPUsPerNode, "", o.GPU, "a GPU preset such as H100-80GB (or --gpu)")
	w("model:\n")
	seqFrom := ""
	for _, s := range f.Settings {
		if s.Key == "model.seq_len" {
			seqFrom = s.From
		}
	}
	if f.ModelName == "mpt_causal_lm" {
		m := f.Model
		w("  kind: transformer\n  arch: gpt  # MPT: LayerNorm, learned positions, GELU MLP, tied output\n")
		w("  hidden: %d  # model.d_model\n  layers: %d  # model.n_layers\n  heads: %d  # model.n_heads\n", m.Hidden, m.Layers, m.Heads)
		if m.KVHeads != m.Heads {
			w("  kv_heads: %d  # model.attn_config attn_type\n", m.KVHeads)
		}
		w("  ffn: %d  # d_model × model.expansion_ratio\n  vocab: %d  # model.vocab_size\n", m.FFN, m.Vocab)
		w("  seq_len: %d  # %s\n", f.SeqLen, seqFrom)
		if len(f.LayerList) > 0 {
			w("  params: %d\n  layer_list:\n", f.Params)
			for _, l := range f.LayerList {
				w("    - {name: %s, params: %d}\n", l.Name, int64(l.Params))
			}
		}
	} else {
		if o.HF != "" {
			// Absolute (QA19 L13): --hf is relative to the working
			// directory, a scenario's hf_config to the scenario's, and the
			// importer cannot know where its standard output is saved.
			hf := o.HF
			if abs, err := filepath.Abs(hf); err == nil {
				hf = abs
			}
			w("  hf_config: %s  # --hf, the config.json of %s\n", strconv.Quote(hf), strconv.Quote(f.Pretrained))
		} else {
			w("  hf_config: SET_HF_CONFIG  # the config.json of %s (or --hf)\n", strconv.Quote(f.Pretrained))
		}
		w("  seq_len: %d  # %s\n", f.SeqLen, seqFrom)
	}
	w("parallelism:\n")
	if f.DP > 0 {
		w("  dp: %d  # --nodes × --gpus-per-node\n", f.DP)
	} else {
		w("  dp: SET_DP  # nodes × gpus_per_node\n")
	}
	section := "parallelism"
	for _, s := range f.Settings.InOrder("parallelism", "communication", "training") {
		sec, key, _ := strings.Cut(s.Key, ".")
		if sec == "model" {
			continue
		}
		if sec != section {
			section = sec
			w("%s:\n", sec)
		}
		if s.From != "" {
			w("  %s: %s  # %s\n", key, s.Value, oneLine(s.From))
		} else {
			w("  %s: %s\n", key, s.Value)
		}
		if s.Key == "training.micro_batch" && f.GradAccum == 0 {
			w("  grad_accum: SET_GRAD_ACCUM  # ceil(global_train_batch_size %d / dp / micro_batch %d)\n", f.GlobalBatch, f.MicroBatch)
		}
	}
	return []byte(b.String())
}
