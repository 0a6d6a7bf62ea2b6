package scenarios

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// This file imports a torchtitan job config (the TOML files under
// torchtitan's train_configs/ and torchtitan/models/*/train_configs/) into
// a scenario. Keys and defaults are those of torchtitan's JobConfig at
// pytorch/torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1
// (torchtitan/config/job_config.py), the last commit that reads TOML job
// configs: its child 9810191bb replaced them with Python config registries
// ("[BC Breaking] Config System Refactor: TOML to Python Dataclass
// Registry"). The keys of the older schema, torchtitan/config_manager.py at
// 9dec370ad26b5f8e9a7333a0e36165018262644b (training.batch_size, the
// parallel degrees under [training] and [experimental], [float8],
// optimizer.fused), are read too, with that commit's defaults where they
// differ. Each mapping below cites the code that runs the key.

// TorchtitanCommit is the torchtitan commit whose job config keys and
// defaults ImportTorchtitan follows.
const TorchtitanCommit = "238fa9953e4aec2a62582121564273d7cbb1e9f1"

// MaxTorchtitanBytes bounds the job config read (torchtitan's are 2–3 KiB).
const MaxTorchtitanBytes = 1 << 20

// TorchtitanCluster is the cluster a job config runs on, which the file
// does not say (torchrun's --nnodes and --nproc_per_node do). A zero Nodes
// or an empty GPU is printed as a placeholder the user must set.
type TorchtitanCluster struct {
	Nodes       int
	GPUsPerNode int
	GPU         string
}

// DefaultTorchtitanGPUsPerNode is the GPUs per node when none is given:
// torchtitan's run_train.sh launches NGPU=${NGPU:-"8"} processes per node
// (run_train.sh at 238fa9953e4aec2a62582121564273d7cbb1e9f1).
const DefaultTorchtitanGPUsPerNode = 8

// Torchtitan is an imported job config: the scenario's values, each
// either known or left to the user (0: a placeholder).
type Torchtitan struct {
	File        string // the job config's path, as given
	Description string // job.description
	ModelName   string // model.name
	Flavor      string // model.flavor
	// HF is the model built through the Hugging Face importer (qwen3,
	// deepseek_v3, gpt_oss, llama4: torchtitan_moe.go); nil for llama3.
	HF *HFModel
	// Old marks a job config with keys of torchtitan's config_manager.py
	// schema before 785c34c99f65 (9dec370ad26b5f8e9a7333a0e36165018262644b's), read with 9dec370ad26b5f8e9a7333a0e36165018262644b's defaults.
	Old bool
	// Boundary, when set, is the communication.boundary the file's
	// torchtitan applies (BoundaryFSDP2Head from 83e6941055fd36434ba50c1a4c7c39cb02327429); "" leaves the
	// stack preset's fsdp2 (the last block kept gathered, before it).
	Boundary Boundary
	Params   int64 // the flavor's parameter count
	Cluster  TorchtitanCluster
	Model    Model // kind, arch and dimensions; SeqLen from training.seq_len
	// DP is dp_replicate·dp_shard (0: unknown, dp_shard = -1 without
	// --nodes); CP, K and Stage as in the scenario.
	DP, CP, K, Stage int
	// EP is parallelism.expert_parallel_degree (1: none).
	EP int
	// Attention, when set, is training.attention (flash: torchtitan
	// 238fa9953e4aec2a62582121564273d7cbb1e9f1's SDPA and FlexAttention take the kv heads unrepeated,
	// gqaAttention; FlexAttention masks also skip blocks: gpt_oss,
	// llama4's _irope); "" leaves the stack preset's sdpa (a 9dec370ad26b5f8e9a7333a0e36165018262644b
	// file). AttentionKernel, when set, is training.attention_kernel.
	Attention       Attention
	AttentionKernel AttentionKernel
	// OpRecomputeAttention is training.op_recompute_attention: cuDNN's
	// attention under the op policy of a torchtitan before b39377f
	// (readCuDNNEra).
	OpRecomputeAttention bool
	// OpSaveAllToAll is training.op_save_all_to_all: the op policy of a
	// torchtitan from c4e2291 on keeps the all-to-alls (readA2AEra).
	OpSaveAllToAll bool
	// OpSaveAbs, when set, is training.op_save_abs for a file under the op
	// policy with eager torchao float8, where it counts: true where its
	// keys date it between 87e2c09c4 and 88247277c, false otherwise
	// (readAbsEra); nil leaves it to the stack preset.
	OpSaveAbs *bool
	// flexAttn marks a flavor of attn_type flex (a block-causal mask).
	flexAttn bool
	// noCP is why the flavor's torchtitan refuses context parallelism
	// ("": it does not).
	noCP string
	// World is the GPU count the degrees fix (dp_shard given), else 0.
	World int64
	// MicroBatch is training.local_batch_size; GradAccum the accumulation
	// steps global_batch_size implies (0: unknown until dp is);
	// GlobalBatch is training.global_batch_size (-1: unset).
	MicroBatch, GradAccum, GlobalBatch int64
	ParamDType                         DType
	ReduceDType                        ReduceDType
	// MasterNone is training.dtype = "bfloat16": the model is built in
	// bf16 and trains without an fp32 copy (training.master_dtype none).
	MasterNone                         bool
	Optimizer                          Optimizer
	OptimizerImpl                      OptimizerImpl
	LR, Beta1, Beta2, Eps, WeightDecay float64
	// MaxNorm is training.max_norm, clip_grad_norm_'s max_norm (default
	// 1.0: torchtitan/config/job_config.py line 264 at 238fa99):
	// training.max_grad_norm when it is another positive value.
	MaxNorm        float64
	Recompute      Recompute
	RecomputeEvery int64
	EarlyStop      bool
	// OpForce is activation_checkpoint.
	// per_op_sac_force_recompute_mm_shapes_by_fqns under the op policy
	// (training.op_force_recompute), nil when the file does not give it
	// (torchtitan's default, DefaultOpForceRecompute).
	OpForce *[]string
	Compile Compile
	FP8     FP8Recipe
	// FP8BF16Gather: float8 linears whose weights FSDP2 gathers in bf16
	// (enable_fsdp_float8_all_gather false, or a recipe without fp8
	// all-gather): training.fp8_all_gather false.
	FP8BF16Gather bool
	// NormImpl is training.norm_impl (fused for model.norm_type
	// "fused_rmsnorm": readNormType; aten_fused for a file its keys date
	// after f8fa21e1d: readNormEra); normType marks a norm_type other
	// than rmsnorm for it.
	NormImpl NormImpl
	normType bool
	// KeepLogits and ExpandableSegments, when set, are training.keep_logits
	// and memory.expandable_segments for a file whose keys date it before
	// the torchtitan commits that changed them (readEra).
	KeepLogits         KeepLogits
	ExpandableSegments *bool
	// Sources name the torchtitan key (or default) each scenario key came
	// from, for the printed comments.
	Sources map[string]string
	// Notes name what the import approximates or leaves out.
	Notes []string
	// Warnings are keys the import left out as the file's torchtitan
	// ignored them (ttDoc.unknownKey), each one line naming file:line:column.
	Warnings []string
}

// ReadTorchtitan reads and imports the job config at path.
func ReadTorchtitan(path string, c TorchtitanCluster) (*Torchtitan, error) {
	data, err := readConfigFile(path, "the path of a torchtitan job config .toml", MaxTorchtitanBytes)
	if err != nil {
		return nil, err
	}
	return ImportTorchtitan(path, data, c)
}

// ttName is a file name fit for a one-line message.
func ttName(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// ttDoc is a decoded job config with the position of every key.
type ttDoc struct {
	file string
	root map[string]any
	pos  map[string][2]int // dotted key → line, column (1-based)
	// old marks torchtitan's config_manager.py schema before 785c34c
	// (2025-03-18), which kept the parallel degrees under [training] and
	// [experimental], or a key removed before 6e4988550ab0 (2025-02-24:
	// optimizer.fused, float8.enable_float8_linear): its optimizer
	// defaulted to foreach (9dec370ad26b5f8e9a7333a0e36165018262644b).
	old bool
	// preEarlyStop marks a file older than 25413d224c5a (2025-08-29), which
	// added activation_checkpoint.early_stop with default False: old, or a
	// key renamed before it (training.batch_size at 8570415, 2025-06-05;
	// training.compile at 08b8b244f3a6, 2025-08-20;
	// checkpoint.enable_checkpoint at cd337db63038, 2025-08-22; a key of
	// ttPreDSV3Flex, removed by f738a03bf, 2025-08-22). Until then
	// ptd_checkpoint_wrapper kept torch's early stop, on. preEarlyKey is
	// the first key that dates it so, for the notes.
	preEarlyStop bool
	preEarlyKey  string
	// preSaved is the key that dates the file before b39377f (2025-12-01),
	// whose op policy first saved cuDNN's attention, and preAll the one
	// that dates it before 6a3a9da (2025-10-09), from which torchtitan
	// asked for cuDNN's attention on every GPU: preEarlyKey, or a key of
	// ttPreCuDNNAll (both) or ttPreCuDNNSaved (preSaved only); "" when
	// none does (torchtitan_era.go).
	preSaved, preAll string
}

// ttOldKeys are the keys of torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b's config_manager.py that
// the later JobConfig moved or renamed, each with the key it became.
var ttOldKeys = [][2]string{
	{"training.batch_size", "training.local_batch_size"},
	{"training.data_parallel_replicate_degree", "parallelism.data_parallel_replicate_degree"},
	{"training.data_parallel_shard_degree", "parallelism.data_parallel_shard_degree"},
	{"training.tensor_parallel_degree", "parallelism.tensor_parallel_degree"},
	{"experimental.pipeline_parallel_degree", "parallelism.pipeline_parallel_degree"},
	{"experimental.context_parallel_degree", "parallelism.context_parallel_degree"},
	{"experimental.context_parallel_rotate_method", "parallelism.context_parallel_rotate_method"},
	{"float8.enable_fsdp_float8_all_gather", "quantize.linear.float8.enable_fsdp_float8_all_gather"},
	{"float8.recipe_name", "quantize.linear.float8.recipe_name"},
	{"experimental.enable_compiled_autograd", "parallelism.enable_compiled_autograd"},
}

// ImportTorchtitan imports a torchtitan job config's bytes; file names it
// in messages. Every error is one line naming file:line:column where the
// key is, what is wrong and what to do.
func ImportTorchtitan(file string, data []byte, c TorchtitanCluster) (*Torchtitan, error) {
	name := ttName(file)
	if len(data) > MaxTorchtitanBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for a torchtitan job config (check the path)", name, MaxTorchtitanBytes)
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, []byte(utf8BOM)))) == 0 {
		// Every key then took its default, and the default flavor's
		// refusal ("debugmodel" is not a llama3 flavor) blamed a key the
		// file does not have.
		return nil, fmt.Errorf("%s: empty file (give a torchtitan job config .toml, such as torchtitan/models/llama3/train_configs/llama3_8b.toml)", name)
	}
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		// torchtitan reads its config with tomllib.load, which decodes
		// UTF-8 without skipping a mark and refuses U+FEFF as the first
		// statement ("Invalid statement") (QA18 L5: it was taken).
		return nil, fmt.Errorf("%s:1:1: the file starts with a UTF-8 byte-order mark (EF BB BF), which torchtitan's tomllib refuses (Invalid statement): save it as UTF-8 without the mark", name)
	}
	root := map[string]any{}
	if _, err := toml.Decode(string(data), &root); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line, col := ttErrPos(data, pe.Position)
			return nil, fmt.Errorf("%s:%d:%d: not valid TOML: %s (fix the file: torchtitan's job configs are TOML, https://toml.io)", name, line, col, oneLine(pe.Message))
		}
		return nil, fmt.Errorf("%s: not valid TOML: %s (fix the file: torchtitan's job configs are TOML, https://toml.io)", name, oneLine(err.Error()))
	}
	d := &ttDoc{file: name, root: root, pos: ttPositions(string(data))}
	for _, k := range ttOldKeys {
		_, oldOK := d.get(k[0])
		_, newOK := d.get(k[1])
		if oldOK && newOK {
			return nil, d.errf(k[0], "%s and %s are the same setting in two torchtitan versions (keep one)", k[0], k[1])
		}
		// The [float8] table and the moved batch size outlived 785c34c.
		if !strings.HasPrefix(k[0], "float8.") && k[0] != "training.batch_size" && oldOK {
			d.old = true
			d.preEarlyKey = cmp.Or(d.preEarlyKey, k[0])
		}
	}
	for _, k := range []string{"float8.enable_float8_linear", "optimizer.fused"} {
		if _, ok := d.get(k); ok {
			d.old = true
			d.preEarlyKey = cmp.Or(d.preEarlyKey, k)
		}
	}
	for _, k := range []string{"training.batch_size", "training.compile", "checkpoint.enable_checkpoint"} {
		if _, ok := d.get(k); ok {
			d.preEarlyKey = cmp.Or(d.preEarlyKey, k)
		}
	}
	if k, _ := d.ttEraKey(ttPreDSV3Flex); k != "" {
		// Older than f738a03bf, so than 25413d2 too.
		d.preEarlyKey = cmp.Or(d.preEarlyKey, k)
	}
	d.preEarlyStop = d.preEarlyKey != ""
	k, _ := d.ttEraKey(ttPreCuDNNAll)
	d.preAll = cmp.Or(d.preEarlyKey, k)
	k, _ = d.ttEraKey(ttPreCuDNNSaved)
	d.preSaved = cmp.Or(d.preAll, k)
	t := &Torchtitan{File: file, Cluster: c, Old: d.old, Sources: map[string]string{}}
	if err := t.read(d); err != nil {
		return nil, err
	}
	return t, nil
}

// ttErrPos is the line and column of a TOML parse error: those of its
// byte offset (the parser's line has already passed a newline it stops
// at), past the blanks the error's span starts with.
func ttErrPos(data []byte, p toml.Position) (int, int) {
	start := p.Start
	if start < 0 || start > len(data) {
		return p.Line, p.Col
	}
	for end := min(start+p.Len, len(data)); start+1 < end && (data[start] == ' ' || data[start] == '\t'); start++ {
	}
	line := 1 + bytes.Count(data[:start], []byte("\n"))
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:start], '\n')+1:start])
	return line, col
}

// ttPositions finds the line and column of every key of a TOML file that
// decoded: table headers set the prefix of the key = value lines below
// them. Keys it cannot place (inside inline tables) have none.
func ttPositions(text string) map[string][2]int {
	pos := map[string][2]int{}
	prefix := ""
	for i, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		col := len(line) - len(strings.TrimLeft(line, " \t")) + 1
		switch {
		case trim == "" || trim[0] == '#':
		case strings.HasPrefix(trim, "[["):
			prefix = "\x00" // arrays of tables hold nothing we read
		case trim[0] == '[':
			end := strings.IndexByte(trim, ']')
			if end < 0 {
				continue
			}
			prefix = ttKey(trim[1:end])
			if _, ok := pos[prefix]; !ok && prefix != "" {
				pos[prefix] = [2]int{i + 1, col}
			}
		default:
			eq := strings.IndexByte(trim, '=')
			if eq <= 0 || prefix == "\x00" {
				continue
			}
			k := ttKey(trim[:eq])
			if prefix != "" {
				k = prefix + "." + k
			}
			if _, ok := pos[k]; !ok {
				pos[k] = [2]int{i + 1, col}
			}
		}
	}
	return pos
}

// ttKey normalizes a dotted TOML key: spaces and quotes around the parts
// removed.
func ttKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// at is "file:line:col" of key (or of the closest enclosing table), else
// the file.
func (d *ttDoc) at(key string) string {
	if p, ok := d.place(key); ok {
		return fmt.Sprintf("%s:%d:%d", d.file, p[0], p[1])
	}
	return d.file
}

// place is the line and column of key, or of the nearest table holding it
// that the file places.
func (d *ttDoc) place(key string) ([2]int, bool) {
	for k := key; k != ""; {
		if p, ok := d.pos[k]; ok {
			return p, true
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return [2]int{}, false
}

func (d *ttDoc) errf(key, format string, a ...any) error {
	return fmt.Errorf("%s: %s", d.at(key), oneLine(fmt.Sprintf(format, a...)))
}

// get returns the value at a dotted key.
func (d *ttDoc) get(key string) (any, bool) {
	var cur any = d.root
	for _, p := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// either returns the first of keys the file gives (a key and its older
// name), else "" and false.
func (d *ttDoc) either(keys ...string) (string, any, bool) {
	for _, k := range keys {
		if v, ok := d.get(k); ok {
			return k, v, true
		}
	}
	return "", nil, false
}

// ttShow renders a TOML value for a message.
func ttShow(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return fmtFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = ttShow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// int reads an integer key (of keys, the first the file gives) in
// [lo, hi], else def.
func (d *ttDoc) int(def, lo, hi int64, keys ...string) (int64, string, error) {
	k, v, ok := d.either(keys...)
	if !ok {
		return def, "", nil
	}
	n, isInt := v.(int64)
	if !isInt {
		return 0, k, d.errf(k, "%s = %s is not an integer (use a whole number)", k, ttShow(v))
	}
	if n < lo || n > hi {
		return 0, k, d.errf(k, "%s = %d is out of range (use %d to %d)", k, n, lo, hi)
	}
	return n, k, nil
}

// float reads a number key, else def.
func (d *ttDoc) float(def float64, keys ...string) (float64, string, error) {
	k, v, ok := d.either(keys...)
	if !ok {
		return def, "", nil
	}
	switch x := v.(type) {
	case int64:
		return float64(x), k, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, k, d.errf(k, "%s = %s is not a finite number (use a number such as 1e-8)", k, ttShow(v))
		}
		return x, k, nil
	}
	return 0, k, d.errf(k, "%s = %s is not a number (use a number such as 1e-8)", k, ttShow(v))
}

// str reads a string key, else def.
func (d *ttDoc) str(def string, keys ...string) (string, string, error) {
	k, v, ok := d.either(keys...)
	if !ok {
		return def, "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", k, d.errf(k, "%s = %s is not a string (quote it: %s = \"...\")", k, ttShow(v), leaf(k))
	}
	return s, k, nil
}

// bool reads a boolean key, else def.
func (d *ttDoc) bool(def bool, keys ...string) (bool, string, error) {
	k, v, ok := d.either(keys...)
	if !ok {
		return def, "", nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, k, d.errf(k, "%s = %s is not a boolean (use true or false)", k, ttShow(v))
	}
	return b, k, nil
}

// strList reads a list of strings (or one comma-separated string, as
// torchtitan's string_list parses a command-line value).
func (d *ttDoc) strList(key string) ([]string, bool, error) {
	v, ok := d.get(key)
	if !ok {
		return nil, false, nil
	}
	var out []string
	switch x := v.(type) {
	case string:
		for _, s := range strings.Split(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, e := range x {
			s, isStr := e.(string)
			if !isStr {
				return nil, true, d.errf(key, "%s holds %s, not a string (use a list of names such as [\"model\", \"loss\"])", key, ttShow(e))
			}
			out = append(out, strings.TrimSpace(s))
		}
	default:
		return nil, true, d.errf(key, "%s = %s is not a list of strings (use a list such as [\"model\", \"loss\"])", key, ttShow(v))
	}
	return out, true, nil
}

// ttFlavor is one llama3 model flavor: TransformerModelArgs of
// torchtitan/models/llama3/__init__.py (llama3_args) at 238fa9953e4aec2a62582121564273d7cbb1e9f1, the same
// dimensions as llama3_configs in torchtitan/models/llama/__init__.py at
// 9dec370ad26b5f8e9a7333a0e36165018262644b. vocab_size is TransformerModelArgs' default 128256 at 238fa9953e4aec2a62582121564273d7cbb1e9f1
// (torchtitan/models/llama3/model/args.py), the Llama 3 tokenizer's size
// that 9dec370ad26b5f8e9a7333a0e36165018262644b read from the tokenizer,
// unless the flavor sets its own (vocab). ffnMultiplier 0 is
// ffn_dim_multiplier None (TransformerModelArgs' default, as are n_kv_heads
// None, here kvHeads = heads, and multiple_of 256).
type ttFlavor struct {
	dim, layers, heads, kvHeads, multipleOf int64
	ffnMultiplier                           float64
	attn                                    string // attn_type; "" is sdpa
	vocab                                   int64  // 0: ttVocab
}

var ttFlavors = map[string]ttFlavor{
	// llama3_args["debugmodel"] and its flex and varlen variants (lines
	// 29-51 at 238fa99): dim 256, 6 layers, 16 heads, vocab_size 2048,
	// the rest TransformerModelArgs' defaults. debugmodel is the default
	// flavor (model.flavor) and debug_model.toml's, run_train.sh's
	// default config.
	"debugmodel":             {256, 6, 16, 16, 256, 0, "", 2048},
	"debugmodel_flex_attn":   {256, 6, 16, 16, 256, 0, "flex", 2048},
	"debugmodel_varlen_attn": {256, 6, 16, 16, 256, 0, "varlen", 2048},
	"8B":                     {4096, 32, 32, 8, 1024, 1.3, "", 0},
	"8B_flex":                {4096, 32, 32, 8, 1024, 1.3, "flex", 0},
	"8B_varlen":              {4096, 32, 32, 8, 1024, 1.3, "varlen", 0},
	"70B":                    {8192, 80, 64, 8, 4096, 1.3, "", 0},
	"405B":                   {16384, 126, 128, 8, 4096, 1.2, "", 0},
}

// ttVocab is TransformerModelArgs' vocab_size default, 128256
// (torchtitan/models/llama3/model/args.py line 33 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1; ttFlavor says more).
const ttVocab = 128256

// ffn is FeedForward's hidden_dim for hidden_dim = 4·dim
// (torchtitan/models/llama3/model/model.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1, TransformerBlock
// and FeedForward.__init__): int(2·4·dim/3), times ffn_dim_multiplier
// truncated, rounded up to a multiple of multiple_of. Python's float
// arithmetic is IEEE double, as Go's.
func (f ttFlavor) ffn() int64 {
	h := 2 * 4 * f.dim / 3
	if f.ffnMultiplier > 0 {
		h = int64(f.ffnMultiplier * float64(h))
	}
	return f.multipleOf * ((h + f.multipleOf - 1) / f.multipleOf)
}

// ttIgnored are tables whose keys change nothing of a step's time or
// memory: logging, checkpointing, evaluation, data and the launcher's
// options.
var ttIgnored = []string{"job", "profiling", "metrics", "checkpoint", "lr_scheduler", "validation", "comm", "memory_estimation", "debug", "experimental", "mx", "fault_tolerance"}

// ttKnown are the keys ImportTorchtitan reads or knows to change nothing
// of a step (data paths, step counts, seeds, garbage collection, the
// tokenizer's path, pipeline, tensor and expert parallel options that
// apply only when their degree is above 1, which is refused).
var ttKnown = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
model.name model.flavor model.hf_assets_path model.tokenizer_path model.converters model.print_after_conversion model.norm_type
optimizer.name optimizer.lr optimizer.beta1 optimizer.beta2 optimizer.eps optimizer.weight_decay optimizer.implementation optimizer.fused optimizer.early_step_in_backward
training.dataset training.dataset_path training.local_batch_size training.batch_size training.global_batch_size training.seq_len training.max_norm
training.steps training.warmup_steps training.enable_cpu_offload training.dtype training.mixed_precision_param training.mixed_precision_reduce
training.compile training.gc_freq training.gc_debug training.seed training.deterministic
training.data_parallel_replicate_degree training.data_parallel_shard_degree training.tensor_parallel_degree training.disable_loss_parallel
parallelism.data_parallel_replicate_degree parallelism.data_parallel_shard_degree parallelism.fsdp_reshard_after_forward
parallelism.tensor_parallel_degree parallelism.disable_loss_parallel parallelism.enable_async_tensor_parallel parallelism.enable_compiled_autograd
parallelism.pipeline_parallel_degree parallelism.module_fqns_per_model_part parallelism.pipeline_parallel_first_stage_less_layers
parallelism.pipeline_parallel_last_stage_less_layers parallelism.pipeline_parallel_layers_per_stage parallelism.pipeline_parallel_schedule
parallelism.pipeline_parallel_schedule_csv parallelism.pipeline_parallel_microbatch_size parallelism.pipeline_parallel_expert_parallel_overlap
parallelism.pipeline_parallel_split_points
parallelism.context_parallel_degree parallelism.context_parallel_load_balancer parallelism.context_parallel_rotate_method
parallelism.expert_parallel_degree parallelism.expert_tensor_parallel_degree parallelism.expert_parallel_comm_backend
activation_checkpoint.mode activation_checkpoint.selective_ac_option activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns
activation_checkpoint.early_stop activation_checkpoint.memory_budget activation_checkpoint.visualize_memory_budget_pareto
activation_checkpoint.preserve_rng_state activation_checkpoint.determinism_check activation_checkpoint.debug
compile.enable compile.components compile.backend
float8.enable_float8_linear float8.enable_fsdp_float8_all_gather float8.precompute_float8_dynamic_scale_for_fsdp float8.recipe_name
float8.filter_fqns float8.emulate float8.force_recompute_fp8_weight_in_bwd float8.scaling_type_input float8.scaling_type_weight float8.scaling_type_grad_output
float8.moe_fqns_prototype
quantize.linear.float8.enable_fsdp_float8_all_gather quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp
quantize.linear.float8.recipe_name quantize.linear.float8.filter_fqns quantize.linear.float8.emulate
quantize.grouped_mm.float8.fqns quantize.linear.mx.recipe_name quantize.linear.mx.filter_fqns quantize.linear.mx.mxfp8_dim1_cast_kernel_choice
quantize.grouped_mm.mx.recipe_name quantize.grouped_mm.mx.fqns
`) {
		ttKnown[k] = true
	}
}

// ttLeaves lists the dotted keys of the leaves of m (arrays and values).
func ttLeaves(prefix string, m map[string]any, out *[]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		full := k
		if prefix != "" {
			full = prefix + "." + k
		}
		if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 {
			ttLeaves(full, sub, out)
			continue
		}
		*out = append(*out, full)
	}
}

func (t *Torchtitan) note(format string, a ...any) {
	t.Notes = append(t.Notes, oneLine(fmt.Sprintf(format, a...)))
}

// src records the torchtitan key a scenario key came from.
func (t *Torchtitan) src(key, from string) { t.Sources[key] = from }

// show names key with the value the file gives it, or def when the file
// does not give it.
func (d *ttDoc) show(k, def string) string {
	if k == "" {
		return def
	}
	v, _ := d.get(k)
	return k + " = " + ttShow(v)
}

// from names key for a comment: the key as the file gives it, or the
// default.
func from(k, def string) string {
	if k == "" {
		return def
	}
	return k
}

// read maps the job config onto the scenario.
func (t *Torchtitan) read(d *ttDoc) error {
	// A key no torchtitan has is judged as the file's torchtitan judged it
	// (ttDoc.unknownKey): refused, as torchtitan's own since eadca48354fd
	// (ValueError "Invalid field names", _dict_to_dataclass in
	// torchtitan/config/manager.py lines 160-171 at TorchtitanCommit), or,
	// in a file whose keys date it before eadca48, imported with a
	// warning at the key, as that torchtitan ignored it. A
	// job.custom_config_module extends JobConfig with its own dataclasses
	// (_maybe_add_custom_config, lines 86-124): a key outside the stock
	// ones is then noted. Keys zerosim cannot use are noted, or silently
	// skipped where they change nothing of a step.
	custom, _, _ := d.str("", "job.custom_config_module", "experimental.custom_args_module")
	var leaves []string
	ttLeaves("", d.root, &leaves)
	// In the file's order: the first unknown key is the one refused, the
	// warnings go down the file. A key it cannot place (inside an inline
	// table without one) comes last.
	slices.SortStableFunc(leaves, func(a, b string) int {
		pa, oka := d.place(a)
		pb, okb := d.place(b)
		if oka != okb {
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(pa[0], pb[0]), cmp.Compare(pa[1], pb[1]))
	})
	for _, k := range leaves {
		top, _, _ := strings.Cut(k, ".")
		if ttKnown[k] {
			continue
		}
		if !ttAllKeys[k] && !ttTables[k] {
			if custom == "" {
				w, err := d.unknownKey(k)
				if err != nil {
					return err
				}
				if !slices.Contains(t.Warnings, w) { // one per unknown table
					t.Warnings = append(t.Warnings, w)
				}
				continue
			}
			t.note("%s is not a key of torchtitan's JobConfig; job.custom_config_module %s may add it: ignored", k, custom)
			continue
		}
		if slices.Contains(ttIgnored, top) || strings.HasPrefix(k, "training.dataloader.") {
			continue
		}
		t.note("%s is a job config key of an older torchtitan, not of %s, that zerosim does not read: ignored", k, TorchtitanCommit[:7])
	}
	if err := t.readModel(d); err != nil {
		return err
	}
	t.gqaAttention(d)
	if err := t.readParallelism(d); err != nil {
		return err
	}
	if err := t.readTraining(d); err != nil {
		return err
	}
	if err := t.readOptimizer(d); err != nil {
		return err
	}
	if err := t.readRecompute(d); err != nil {
		return err
	}
	if err := t.readCompileFP8(d); err != nil {
		return err
	}
	if t.normType {
		t.readNormType(d)
	}
	t.readCuDNNEra(d)
	t.readA2AEra(d)
	t.readAbsEra(d)
	t.readEra(d)
	t.readNormEra(d)
	return nil
}

// ttStrict is torchtitan eadca48354fd (2025-08-28, "enforce existence of
// .toml args in JobConfig dataclasses"), the first to refuse a key outside
// JobConfig; ttDataclassDate is the date of c1c2f55d1e2d (2025-04-18,
// "Typed JobConfig"), whose dataclass parser replaced the argparse one: of
// ttPreStrict's keys, exactly those removed before it (by ancestry) have
// earlier dates.
const (
	ttStrict        = "eadca48 (2025-08-28)"
	ttDataclassDate = "2025-04-18"
)

// unknownKey judges a leaf k that no torchtitan job config has as the
// file's torchtitan did, at the first part of it that is neither a key nor
// a table ([trainng], training.local_batch_sise), with the key or table
// within two edits of it when there is one. It returns the warning for a
// key that torchtitan ignored, or the error for one it refused.
//
// torchtitan's parser, by era (each file and commit read for this):
//   - to c1c2f55 (2025-04-18), argparse: parse_args merged each top-level
//     table of the TOML into its namespace unread, args_dict[k] |= v
//     (torchtitan/config_manager.py lines 618-620 at
//     9dec370ad26b5f8e9a7333a0e36165018262644b; args_dict |= tomllib.load(f)
//     and type(k.title(), (), v) before 0d415d782): a key or table it did
//     not have was ignored, a top-level value that is not a table raised
//     TypeError (defaultdict |= int; type() of a non-dict).
//   - from c1c2f55 to eadca48: _dict_to_dataclass took JobConfig's fields
//     from the TOML and dropped the rest, at every depth and with no
//     message (torchtitan/config/manager.py lines 157-170 at
//     715641639d689f4ace2cfb900a58503686e0b114, eadca48's parent; the same
//     function at c1c2f55d1e2df4f319e254b768c9b3827027057e).
//   - from eadca48: ValueError "Invalid field names" (lines 160-171 at
//     TorchtitanCommit).
//
// A file that gives a key of ttPreStrict, one no torchtitan from eadca48
// on has, ran on an older torchtitan, which ignored k: imported without
// it and warned, unless the key that dates it earliest dates it before
// c1c2f55 and k is a top-level value. A file no key so dates is read as
// TorchtitanCommit's, which refuses k. A key given a table's keys
// (training.steps.x) is refused in every era: torchtitan took the table
// as the key's value.
func (d *ttDoc) unknownKey(k string) (string, error) {
	parts := strings.Split(k, ".")
	// A top-level leaf is a value or an empty table ([foo]).
	_, topTable := d.root[k].(map[string]any)
	topValue := len(parts) == 1 && !topTable
	bad, what := k, "key"
	if topTable {
		what = "table"
	}
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], ".")
		if ttTables[p] {
			continue
		}
		if ttAllKeys[p] {
			return "", d.errf(d.posKey(p, k), "%s is a torchtitan job config key, not a table (give it a value: %s = ...)", p, parts[i-1])
		}
		bad, what = p, "table"
		break
	}
	at := d.posKey(bad, k)
	near := unknownKeyFix(bad, ttKnownNames())
	dating, removed := d.ttEarliest(ttPreStrict)
	switch {
	case dating == "":
		return "", d.errf(at, "%s is not a torchtitan job config %s (%s torchtitan refuses unknown keys: ValueError \"Invalid field names\", torchtitan/config/manager.py:160-171 at %s, since %s; before it torchtitan dropped them unread, _dict_to_dataclass in torchtitan/config_manager.py lines 740-753 at e7c0cae, but no key of the file dates it so)", bad, what, near, TorchtitanCommit[:7], ttStrict)
	case ttRemovedDate(removed) >= ttDataclassDate:
		return d.warnf(at, "%s is not a torchtitan job config %s%s: ignored, as the file's torchtitan ignored it (%s, removed from torchtitan's config by %s, dates the file before %s, which first refused unknown keys; until then _dict_to_dataclass took JobConfig's fields and dropped the rest: torchtitan/config/manager.py:157-170 at 7156416)", bad, what, didYouMean(bad, ttKnownNames()), dating, removed, ttStrict), nil
	case topValue:
		return "", d.errf(at, "%s is not a torchtitan job config table (%s %s, removed from torchtitan's config by %s, dates the file before c1c2f55 (%s), whose argparse config_manager.py refused a top-level value that is not a table: args_dict[k] |= v raises TypeError, lines 618-620 at 9dec370)", bad, near, dating, removed, ttDataclassDate)
	default:
		return d.warnf(at, "%s is not a torchtitan job config %s%s: ignored, as the file's torchtitan ignored it (%s, removed from torchtitan's config by %s, dates the file before c1c2f55 (%s), until which the argparse config_manager.py merged the TOML's tables unread: args_dict[k] |= v, lines 618-620 at 9dec370)", bad, what, didYouMean(bad, ttKnownNames()), dating, removed, ttDataclassDate), nil
	}
}

// posKey is the key of bad's position: bad's when the file places it,
// else leaf's.
func (d *ttDoc) posKey(bad, leaf string) string {
	if _, ok := d.pos[bad]; ok {
		return bad
	}
	return leaf
}

// warnf is a warning at key, as errf's errors are.
func (d *ttDoc) warnf(key, format string, a ...any) string {
	return d.errf(key, format, a...).Error()
}

// ttEarliest is the key of keys the file gives that torchtitan removed
// first, with its "commit (date)" (the values of ttPreStrict); "" when it
// gives none.
func (d *ttDoc) ttEarliest(keys map[string]string) (key, removed string) {
	for _, k := range sortedKeys(keys) {
		if _, ok := d.get(k); ok && (key == "" || ttRemovedDate(keys[k]) < ttRemovedDate(removed)) {
			key, removed = k, keys[k]
		}
	}
	return key, removed
}

// ttRemovedDate is the date of a "commit (YYYY-MM-DD)".
func ttRemovedDate(s string) string {
	_, date, _ := strings.Cut(s, "(")
	return strings.TrimSuffix(date, ")")
}

// ttKnownNames are the keys and tables of ttAllKeys, in order.
func ttKnownNames() []string {
	names := append(sortedKeys(ttAllKeys), sortedKeys(ttTables)...)
	slices.Sort(names)
	return names
}

// ttFloat8Recipes are torchao's float8 recipe names, Float8LinearRecipeName's
// values (torchao/float8/config.py lines 114-135 at pytorch/ao
// 8c81863ba85cce742244c0151c6683c5696bbe04).
var ttFloat8Recipes = []string{"tensorwise", "rowwise", "rowwise_with_gw_hp"}

// gqaAttention is attention as torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1 runs it, for a file with
// 25413d224c5a's keys that no key dates before b39377f (ttDoc.preSaved), as
// the boundary is read (an older file, such as the validated runs' of
// 9dec370ad26b5f8e9a7333a0e36165018262644b and e7c0cae934df, or one with a key
// torchtitan dropped before b39377f, keeps the stack preset's sdpa:
// repeat_kv before F.scaled_dot_product_attention, and readCuDNNEra sets
// its kernel; a file of the months between b39377f and ff0829c10fbf is read as
// 238fa9953e4aec2a62582121564273d7cbb1e9f1's). Since
// ff0829c (2026-01-27, "GQA without kv repeats") the attention modules
// pass enable_gqa to SDPA and FlexAttention instead of repeating k and v
// (Attention.forward in torchtitan/models/llama3/model/model.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1; the other models' likewise), so the saved k and v have the kv
// heads' width: zerosim's flash class (no s² scores, the log-sum-exp, kv
// unrepeated). ScaledDotProductAttentionWrapper
// (torchtitan/models/attention.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1; since 6a3a9da9564d, 2025-10-09,
// on every GPU; since 3b85aa31fffc on B200 only) runs SDPA under
// sdpa_kernel([CUDNN_ATTENTION, FLASH_ATTENTION, MATH], set_priority=True):
// cuDNN's fused attention where it runs, i.e. on the NVIDIA data-centre
// GPUs of compute capability 8.0 and up among the presets: PyTorch's
// check_cudnn_hardware_support (aten/src/ATen/native/transformers/cuda/
// sdp_utils.cpp) takes sm80–sm90 at
// 21c3369eded41cbad40b61858013c3312afc6dbb and sm80–sm121, Blackwell
// included, in later versions of the same function (a copy found without
// its commit); a GPU outside the list keeps fa2, noted. A flavor that
// sets training.attention itself (FlexAttention with a window or chunk,
// torchtitan_moe.go) keeps its own.
//
// A FlexAttention flavor (t.flexAttn) of a file dated before b39377f, so
// before ff0829c, ran FlexAttention on k and v repeated to the heads
// (repeat_kv): with as many kv heads as heads (deepseek_v3's MLA, whose
// FlexAttention holds from f738a03bf) nothing was repeated and it is
// written as flash as a later file is; with fewer, the stack preset's
// sdpa (kv repeated) stays, noted (qauser29 F3: the note said
// FlexAttention while the scenario fell back to the preset unsaid).
func (t *Torchtitan) gqaAttention(d *ttDoc) {
	if t.Attention != "" {
		return
	}
	if t.flexAttn && d.preSaved != "" {
		t.flexKernel()
		if kv := t.Model.KVHeads; kv != 0 && kv != t.Model.Heads {
			t.note("model.flavor %s runs FlexAttention, and %s dates the file before b39377f (2025-12-01), so before ff0829c (2026-01-27): k and v were repeated from %d to %d heads before it (repeat_kv), as stack torchtitan's training.attention: sdpa keeps them, timed as attention_kernel flex", t.Flavor, d.preSaved, kv, t.Model.Heads)
			return
		}
		t.Attention = AttentionFlash
		t.src("attention", fmt.Sprintf("FlexAttention with as many kv heads as heads: k and v at the heads' width with or without ff0829c's enable_gqa (%s dates the file before it)", d.preSaved))
		t.note("model.flavor %s runs FlexAttention, and %s dates the file before b39377f (2025-12-01), so before ff0829c (2026-01-27, enable_gqa in place of repeat_kv); its kv heads are as many as its heads (%d), so nothing was repeated either way: written as training.attention: flash (log-sum-exp, no s² scores) with attention_kernel flex", t.Flavor, d.preSaved, t.Model.Heads)
		return
	}
	if d.preSaved != "" {
		return
	}
	t.Attention = AttentionFlash
	t.src("attention", "torchtitan 238fa99 passes enable_gqa to SDPA and FlexAttention: k and v keep the kv heads' width (since ff0829c)")
	if t.flexAttn {
		t.flexKernel()
		t.note("model.flavor %s runs FlexAttention with enable_gqa: written as training.attention: flash (kv heads unrepeated, log-sum-exp, no s² scores) with attention_kernel flex", t.Flavor)
		return
	}
	switch {
	case slices.Contains(ttCuDNNGPUs, t.Cluster.GPU):
		t.AttentionKernel = KernelCuDNN
		t.src("attention_kernel", "ScaledDotProductAttentionWrapper's sdpa_kernel priority: cuDNN, Flash, Math (torchtitan/models/attention.py at 238fa99)")
		t.note("model.flavor %s attends through SDPA with enable_gqa under sdpa_kernel priority cuDNN, Flash, Math: written as training.attention: flash (kv heads unrepeated, log-sum-exp, no s² scores) with attention_kernel cudnn", t.Flavor)
	default:
		if GPUTarget(t.Cluster.GPU) != "" {
			t.note("model.flavor %s attends through SDPA with enable_gqa: written as training.attention: flash (kv heads unrepeated, log-sum-exp, no s² scores); torchtitan asks for cuDNN's attention first, but %s, so the kernel is fa2", t.Flavor, cuDNNOnAMD)
			return
		}
		t.note("model.flavor %s attends through SDPA with enable_gqa: written as training.attention: flash (kv heads unrepeated, log-sum-exp, no s² scores); torchtitan asks for cuDNN's attention first, which zerosim takes to run on NVIDIA's data-centre GPUs from the A100 on only, so the kernel stays fa2 here (set training.attention_kernel if yours runs cuDNN)", t.Flavor)
	}
}

// flexKernel writes training.attention_kernel: flex for a flavor that runs
// FlexAttention: FlexAttentionWrapper calls the compiled flex_attention
// (torchtitan/models/attention.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1),
// which Inductor lowers to its Triton template, not SDPA's kernels
// (zero.AttentionEfficiency cites the rate).
func (t *Torchtitan) flexKernel() {
	t.AttentionKernel = KernelFlex
	t.src("attention_kernel", "FlexAttention: FlexAttentionWrapper calls the compiled flex_attention (torchtitan/models/attention.py at 238fa99)")
}

func (t *Torchtitan) readModel(d *ttDoc) error {
	name, nk, err := d.str("llama3", "model.name")
	if err != nil {
		return err
	}
	t.ModelName = name
	if _, ok := ttHFModels[name]; ok {
		if err := t.readHFModel(d, name, nk); err != nil {
			return err
		}
		desc, _, err := d.str("", "job.description")
		t.Description = desc
		return err
	}
	if name != "llama3" {
		return d.errf(nk, "model.name = %s: torchtitan's llama3, qwen3, deepseek_v3, gpt_oss and llama4 models are imported (for another model print its model section with zerosim import hf CONFIG.json and add it to the scenario)", strconv.Quote(name))
	}
	if v, ok := d.get("model.norm_type"); ok && v != "rmsnorm" {
		if _, _, err := d.str("", "model.norm_type"); err != nil {
			return err
		}
		t.normType = true // readNormType, once training.compile is read
	}
	flavor, fk, err := d.str("debugmodel", "model.flavor")
	if err != nil {
		return err
	}
	f, ok := ttFlavors[flavor]
	if !ok {
		names := make([]string, 0, len(ttFlavors))
		for n := range ttFlavors {
			names = append(names, n)
		}
		sort.Strings(names)
		where := fk
		if where == "" {
			where = "model"
		}
		return d.errf(where, "model.flavor = %s is not a llama3 flavor zerosim imports (use one of %s: torchtitan/models/llama3/__init__.py at %s)", strconv.Quote(flavor), strings.Join(names, ", "), TorchtitanCommit[:7])
	}
	t.Flavor = flavor
	if f.attn != "" {
		t.flexAttn = true
		t.note("model.flavor %s runs %s attention with a block-causal mask (attn_type = %q); modelled as causal attention over the whole sequence; the dataset's document length is not in the file: set model.document_len to it to count attention within each document", flavor, f.attn, f.attn)
	}
	ffn := f.ffn()
	vocab := f.vocab
	if vocab == 0 {
		vocab = ttVocab
	}
	t.Model = Model{Kind: KindTransformer, Arch: ArchLlama, Hidden: f.dim, Layers: f.layers, Heads: f.heads, KVHeads: f.kvHeads, FFN: ffn, Vocab: vocab}
	// Llama's layout (docs/scenario-format.md): embedding and untied
	// output vocab·h each, blocks 2h² + 2h·kv + 3h·ffn + 2h, final norm h.
	kv := f.dim / f.heads * f.kvHeads
	t.Params = 2*vocab*f.dim + f.layers*(2*f.dim*f.dim+2*f.dim*kv+3*f.dim*ffn+2*f.dim) + f.dim
	desc, _, err := d.str("", "job.description")
	if err != nil {
		return err
	}
	t.Description = desc
	return nil
}

// readParallelism maps the degrees (torchtitan/distributed/parallel_dims.py
// at 238fa9953e4aec2a62582121564273d7cbb1e9f1: dp_shard = -1 is world // (dp_replicate·cp·tp·pp), and the
// product of the degrees must equal the world size; FSDP2 shards over
// dp_shard·cp, replicated dp_replicate times (HSDP); with dp_shard·cp = 1
// and dp_replicate > 1 parallelize_llama applies DDP).
func (t *Torchtitan) readParallelism(d *ttDoc) error {
	const maxDeg = int64(MaxGPUs)
	for _, r := range []struct {
		keys []string
		what string
	}{
		{[]string{"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"}, "tensor parallelism"},
		{[]string{"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree"}, "pipeline parallelism"},
		{[]string{"parallelism.expert_tensor_parallel_degree"}, "expert tensor parallelism"},
	} {
		n, k, err := d.int(1, 1, maxDeg, r.keys...)
		if err != nil {
			return err
		}
		if n > 1 {
			return d.errf(k, "%s = %d: %s is not modelled (zerosim models data parallelism: FSDP, HSDP and context parallelism; README \"What does it leave out?\"); set %s = 1 to import the run without it", k, n, r.what, leaf(k))
		}
	}
	rep, rk, err := d.int(1, 1, maxDeg, "parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree")
	if err != nil {
		return err
	}
	cp, ck, err := d.int(1, 1, maxDeg, "parallelism.context_parallel_degree", "experimental.context_parallel_degree")
	if err != nil {
		return err
	}
	shard, sk, err := d.int(-1, -1, maxDeg, "parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree")
	if err != nil {
		return err
	}
	if shard == 0 {
		return d.errf(sk, "%s = 0 is out of range (use -1, the GPUs the other degrees leave, or a degree ≥ 1)", sk)
	}
	t.src("dp", fmt.Sprintf("%s × %s", d.show(rk, "data_parallel_replicate_degree 1 (default)"), d.show(sk, "data_parallel_shard_degree -1 (default)")))
	t.src("cp", d.show(ck, "context_parallel_degree 1 (default)"))
	c := &t.Cluster
	if c.GPUsPerNode == 0 {
		c.GPUsPerNode = DefaultTorchtitanGPUsPerNode
	}
	if c.GPUsPerNode < 1 || c.GPUsPerNode > MaxGPUsPerNode {
		return fmt.Errorf("%s: --gpus-per-node %d is out of range (use 1 to %d)", d.file, c.GPUsPerNode, MaxGPUsPerNode)
	}
	if c.Nodes < 0 || c.Nodes > MaxNodes {
		return fmt.Errorf("%s: --nodes %d is out of range (use 1 to %d)", d.file, c.Nodes, MaxNodes)
	}
	if c.GPU != "" {
		if _, ok := findGPU(c.GPU); !ok {
			return fmt.Errorf("%s: %s", d.file, UnknownGPU("--gpu", c.GPU))
		}
	}
	if rep*cp > maxDeg {
		return d.errf(ck, "%s × %s = %d is more GPUs than zerosim models (at most %d)", from(rk, "data_parallel_replicate_degree"), from(ck, "context_parallel_degree"), rep*cp, maxDeg)
	}
	if shard > 0 {
		if w := rep * shard * cp; w > maxDeg {
			return d.errf(sk, "the degrees' product %d is more GPUs than zerosim models (at most %d)", w, maxDeg)
		} else {
			t.World = w
		}
	}
	if c.Nodes > 0 {
		world := int64(c.Nodes) * int64(c.GPUsPerNode)
		if world > maxDeg {
			return fmt.Errorf("%s: --nodes %d × --gpus-per-node %d is %d GPUs, more than zerosim models (at most %d)", d.file, c.Nodes, c.GPUsPerNode, world, maxDeg)
		}
		if shard < 0 {
			if world%(rep*cp) != 0 {
				return d.errf(from(sk, from(rk, ck)), "data_parallel_shard_degree -1 needs the %d GPUs of --nodes %d × --gpus-per-node %d to divide by data_parallel_replicate_degree × context_parallel_degree = %d (torchtitan's parallel_dims.py asserts it; change --nodes or the degrees)", world, c.Nodes, c.GPUsPerNode, rep*cp)
			}
			shard = world / (rep * cp)
		} else if t.World != world {
			return d.errf(sk, "data_parallel_replicate_degree %d × data_parallel_shard_degree %d × context_parallel_degree %d = %d GPUs, but --nodes %d × --gpus-per-node %d is %d (torchtitan asserts they are equal; change --nodes or the degrees)", rep, shard, cp, t.World, c.Nodes, c.GPUsPerNode, world)
		}
		t.World = world
	} else if t.World > 0 && t.World%int64(c.GPUsPerNode) == 0 {
		c.Nodes = int(t.World / int64(c.GPUsPerNode))
	}
	if cp > 1 && t.noCP != "" {
		return d.errf(ck, "%s = %d: %s flavor %s does not run with context parallelism at torchtitan %s (%s); set context_parallel_degree = 1", ck, cp, t.ModelName, t.Flavor, TorchtitanCommit[:7], t.noCP)
	}
	t.CP = int(cp)
	if shard > 0 {
		t.DP = int(rep * shard)
	}
	if err := t.readEP(d, rep, shard, cp); err != nil {
		return err
	}
	// FSDP2 (fully_shard) is ZeRO-3; HSDP's dp_replicate copies are
	// zerosim's k. dp_shard·cp = 1 with dp_replicate > 1 is DDP.
	t.Stage, t.K = 3, int(rep)
	if shard == 1 && cp == 1 && rep > 1 {
		t.Stage, t.K = 0, 1
		t.note("dp_shard·cp = 1: torchtitan applies DDP, modelled as ZeRO stage 0; maybe_enable_amp runs its forward and loss under torch.autocast(mixed_precision_param) (torchtitan/distributed/utils.py at 238fa99): the parameters, gradients and AdamW states stay in training.dtype, and fp32 weights are cast per forward (training.autocast)")
	}
	reshard, rsk, err := d.str("default", "parallelism.fsdp_reshard_after_forward")
	if err != nil {
		return err
	}
	switch reshard {
	case "default":
		// apply_fsdp (torchtitan/models/llama3/infra/parallelize.py; the
		// MoE models' in models/llama4/infra/parallelize.py) shards the
		// embedding and every block with reshard_after_forward and keeps
		// only [norm, output] gathered since 83e6941055fd36434ba50c1a4c7c39cb02327429 (2025-07-28, "Improve
		// reshard_after_forward logic"), here at 238fa9953e4aec2a62582121564273d7cbb1e9f1; before it the
		// last block stayed gathered too, as the stack preset's fsdp2
		// says. A file with 25413d2's keys is after it; an older one keeps
		// the preset (a file from the month between is read as older).
		if t.Stage == 3 && !d.preEarlyStop {
			t.Boundary = BoundaryFSDP2Head
			t.src("boundary", "apply_fsdp since torchtitan 83e6941: the embedding and every block reshard after forward, [norm, output] stay gathered")
		}
	case "always":
		t.note("parallelism.fsdp_reshard_after_forward = \"always\" also reshards the norm and output unit after forward; communication.boundary keeps it gathered")
	case "never":
		if t.Stage == 3 {
			t.Stage = 2
			t.note("parallelism.fsdp_reshard_after_forward = \"never\" keeps every unit gathered from its forward to its backward; modelled as ZeRO stage 2 under an FSDP boundary (the parameter shard between steps, freed unit by unit in the backward; sharded gradients and optimizer state)")
		}
	default:
		return d.errf(rsk, "parallelism.fsdp_reshard_after_forward = %s is not a policy torchtitan knows (use \"default\", \"always\" or \"never\")", strconv.Quote(reshard))
	}
	if t.CP > 1 {
		rot, rk2, err := d.str("allgather", "parallelism.context_parallel_rotate_method", "experimental.context_parallel_rotate_method")
		if err != nil {
			return err
		}
		if rot != "allgather" {
			t.note("%s = %s modelled as zerosim's ring attention (docs/compute-model.md)", rk2, strconv.Quote(rot))
		}
		if lb, ok := d.get("parallelism.context_parallel_load_balancer"); ok && lb != "headtail" {
			t.note("parallelism.context_parallel_load_balancer = %s: zerosim models head-tail load balancing (torchtitan's default), every cp rank with the same causal-attention work", ttShow(lb))
		}
	}
	if on, _, err := d.bool(false, "parallelism.enable_compiled_autograd", "experimental.enable_compiled_autograd"); err != nil {
		return err
	} else if on {
		t.note("enable_compiled_autograd is not modelled (backward runs as eager autograd)")
	}
	if on, k, err := d.bool(false, "debug.deterministic", "training.deterministic"); err != nil {
		return err
	} else if on {
		t.note("%s = true (deterministic kernels, possibly slower) is not modelled", k)
	}
	if on, _, err := d.bool(false, "fault_tolerance.enable"); err != nil {
		return err
	} else if on {
		t.note("fault_tolerance.enable (torchft replica groups) is not modelled")
	}
	return nil
}

// readTraining maps batch, sequence and precision. Batch: train.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 checks that global_batch_size is a multiple of local_batch_size ×
// dp_replicate·dp_shard and runs global / (local · dp) accumulation steps
// (-1: one step). Precision: apply_fsdp's
// MixedPrecisionPolicy(param_dtype=mixed_precision_param,
// reduce_dtype=mixed_precision_reduce)
// (torchtitan/models/llama3/infra/parallelize.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1).
func (t *Torchtitan) readTraining(d *ttDoc) error {
	mb, mk, err := d.int(8, 1, MaxMicroBatch, "training.local_batch_size", "training.batch_size")
	if err != nil {
		return err
	}
	t.MicroBatch = mb
	t.src("micro_batch", d.show(mk, "training.local_batch_size 8 (default)"))
	seq, sk, err := d.int(2048, 1, maxSeqLen, "training.seq_len")
	if err != nil {
		return err
	}
	t.Model.SeqLen = seq
	t.src("seq_len", d.show(sk, "training.seq_len 2048 (default)"))
	if m := 2 * int64(t.CP); t.CP > 1 && seq%m != 0 {
		// cp_shard's _HeadTailLoadBalancer cuts each sequence into 2·cp
		// chunks (resolveCPAttention cites it), not cp.
		return d.errf(from(sk, "training"), "training.seq_len %d does not divide by 2 × context_parallel_degree = %d (torchtitan's context parallelism cuts each sequence into 2·cp chunks, PyTorch's _HeadTailLoadBalancer; use a multiple of %d)", seq, m, m)
	}
	gb, gk, err := d.int(-1, math.MinInt64, math.MaxInt64, "training.global_batch_size")
	if err != nil {
		return err
	}
	t.GlobalBatch = gb
	switch {
	case gb < 0:
		t.GradAccum = 1
		t.src("grad_accum", "training.global_batch_size -1 (default: no accumulation)")
	case gb == 0:
		return d.errf(gk, "training.global_batch_size = 0 is out of range (use -1 or a multiple of local_batch_size × the data-parallel degree)")
	case t.DP > 0:
		per := mb * int64(t.DP)
		if gb%per != 0 {
			return d.errf(gk, "training.global_batch_size %d is not a multiple of local_batch_size %d × data-parallel degree %d = %d (torchtitan's train.py asserts it; use a multiple of %d)", gb, mb, t.DP, per, per)
		}
		if gb/per > MaxGradAccum {
			return d.errf(gk, "training.global_batch_size %d makes %d accumulation steps, more than zerosim models (at most %d)", gb, gb/per, MaxGradAccum)
		}
		t.GradAccum = gb / per
		t.src("grad_accum", fmt.Sprintf("training.global_batch_size %d / (local_batch_size %d × dp %d)", gb, mb, t.DP))
	}
	if on, k, err := d.bool(false, "training.enable_cpu_offload"); err != nil {
		return err
	} else if on {
		return d.errf(k, "training.enable_cpu_offload = true: FSDP2's CPUOffloadPolicy is not modelled (zerosim's offload is DeepSpeed's ZeRO-Offload); set it false to import the run on the GPUs")
	}
	// training.dtype (job_config.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1:
	// "setting training_dtype=bfloat16 will put all parameters, gradients,
	// and optimizer states in bfloat16, without an extra copy of fp32
	// weights"; train.py builds the model under
	// set_default_dtype(TORCH_DTYPE_MAP[job_config.training.dtype])).
	dt, dk, err := d.str("float32", "training.dtype")
	if err != nil {
		return err
	}
	switch dt {
	case "float32":
	case "bfloat16":
		t.MasterNone = true
		t.src("master_dtype", d.show(dk, "")+": bf16 parameters, gradients and AdamW states, no fp32 copy")
	default:
		return d.errf(dk, "training.dtype = %s is not a dtype torchtitan allows (use \"float32\" or \"bfloat16\")", strconv.Quote(dt))
	}
	pd, pk, err := d.str("bfloat16", "training.mixed_precision_param")
	if err != nil {
		return err
	}
	if t.MasterNone && pd != "bfloat16" {
		return d.errf(pk, "training.mixed_precision_param = %s beside training.dtype = \"bfloat16\" is not modelled: it would compute in fp32 on bf16 parameters (use \"bfloat16\")", strconv.Quote(pd))
	}
	switch pd {
	case "bfloat16":
		t.ParamDType = BF16
	case "float32":
		t.ParamDType = FP32
	default:
		return d.errf(pk, "training.mixed_precision_param = %s is not a dtype torchtitan allows (use \"bfloat16\" or \"float32\")", strconv.Quote(pd))
	}
	t.src("param_dtype", d.show(pk, "training.mixed_precision_param bfloat16 (default)"))
	rd, rdk, err := d.str("float32", "training.mixed_precision_reduce")
	if err != nil {
		return err
	}
	switch rd {
	case "float32":
		t.ReduceDType = ReduceFP32
	case "bfloat16":
		t.ReduceDType = ReduceParamDType
	default:
		return d.errf(rdk, "training.mixed_precision_reduce = %s is not a dtype zerosim reduces in (use \"float32\" or \"bfloat16\")", strconv.Quote(rd))
	}
	t.src("reduce_dtype", d.show(rdk, "training.mixed_precision_reduce float32 (default)"))
	mn, _, err := d.float(1, "training.max_norm")
	if err != nil {
		return err
	}
	t.MaxNorm = mn
	return nil
}

// readOptimizer maps [optimizer]: build_optimizers
// (torchtitan/components/optimizer.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1) builds torch.optim.Adam or
// AdamW with lr, betas (beta1, beta2), eps, weight_decay and fused =
// implementation == "fused", foreach = implementation == "foreach";
// implementation defaults to "fused" (job_config.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1, and at
// e7c0cae). At 9dec370ad26b5f8e9a7333a0e36165018262644b foreach = not optimizer.fused, fused defaulting to
// False, and betas were (0.9, 0.95) (torchtitan/optimizer.py).
func (t *Torchtitan) readOptimizer(d *ttDoc) error {
	name, nk, err := d.str("AdamW", "optimizer.name")
	if err != nil {
		return err
	}
	switch name {
	case "AdamW":
		t.Optimizer = OptimizerAdamW
	case "Adam":
		t.Optimizer = OptimizerAdam
	default:
		return d.errf(nk, "optimizer.name = %s is not an optimizer torchtitan builds (use \"AdamW\" or \"Adam\")", strconv.Quote(name))
	}
	t.src("optimizer", d.show(nk, "optimizer.name AdamW (default)"))
	for _, f := range []struct {
		dst     *float64
		key     string
		def     float64
		lo, hi  float64
		loOpen  bool
		allowed string
	}{
		// class Optimizer's defaults: lr 8e-4, beta1 0.9, beta2 0.95, eps
		// 1e-8, weight_decay 0.1 (torchtitan/config/job_config.py:138-148
		// at TorchtitanCommit).
		{&t.LR, "optimizer.lr", 8e-4, 0, math.Inf(1), true, "a learning rate > 0"},
		{&t.Beta1, "optimizer.beta1", 0.9, 0, 1, false, "a value in [0, 1)"},
		{&t.Beta2, "optimizer.beta2", 0.95, 0, 1, false, "a value in [0, 1)"},
		{&t.Eps, "optimizer.eps", 1e-8, 0, math.Inf(1), true, "a value > 0"},
		{&t.WeightDecay, "optimizer.weight_decay", 0.1, 0, math.Inf(1), false, "a value ≥ 0"},
	} {
		v, k, err := d.float(f.def, f.key)
		if err != nil {
			return err
		}
		if v < f.lo || (f.loOpen && v == f.lo) || v >= f.hi {
			return d.errf(k, "%s = %s is out of range (use %s)", k, fmtFloat(v), f.allowed)
		}
		*f.dst = v
	}
	impl, ik, err := d.str("fused", "optimizer.implementation")
	if err != nil {
		return err
	}
	if ik == "" {
		fused, fk, err := d.bool(false, "optimizer.fused")
		if err != nil {
			return err
		}
		switch {
		case fk != "" && fused:
			impl, ik = "fused", fk
		case fk != "":
			impl, ik = "foreach", fk
		case d.old:
			impl = "foreach"
			t.src("optimizer_impl", "optimizer.fused false (default at torchtitan 9dec370)")
			t.note("optimizer.fused unset: false, torchtitan's default at 9dec370, so foreach (foreach = not fused); 6e49885 (2025-02-24) replaced the key by optimizer.implementation, default fused (run this file on a later torchtitan: set training.optimizer_impl: fused)")
		}
	}
	switch impl {
	case "fused":
		t.OptimizerImpl = OptimizerFused
	case "foreach":
		t.OptimizerImpl = OptimizerForeach
	case "for-loop":
		t.OptimizerImpl = OptimizerComposer
		t.note("optimizer.implementation = \"for-loop\" (torch.optim's single-tensor loop) modelled as optimizer_impl composer, a Python loop over the parameters with one in-place op per step of the update")
	default:
		return d.errf(ik, "optimizer.implementation = %s is not one torchtitan builds (use \"fused\", \"foreach\" or \"for-loop\")", strconv.Quote(impl))
	}
	if _, ok := t.Sources["optimizer_impl"]; !ok {
		t.src("optimizer_impl", d.show(ik, "optimizer.implementation fused (default)"))
	}
	if on, _, err := d.bool(false, "optimizer.early_step_in_backward"); err != nil {
		return err
	} else if on {
		t.note("optimizer.early_step_in_backward steps each parameter in backward and frees its gradient; zerosim steps after backward and keeps the gradient shards until then")
	}
	return nil
}

// readRecompute maps [activation_checkpoint] (apply_ac,
// torchtitan/distributed/activation_checkpoint.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1): "full"
// wraps every block; "selective" with "op" saves per its op policy, with a
// number N wraps every N-th block (0 and 1: every block); "none" wraps
// nothing. early_stop is passed to ptd_checkpoint_wrapper and defaults to
// False since 25413d2 (2025-08-29, "Add config to AC to toggle
// early-stop"); before it the wrapper kept torch's default, on (9dec370ad26b5f8e9a7333a0e36165018262644b).
func (t *Torchtitan) readRecompute(d *ttDoc) error {
	mode, mk, err := d.str("selective", "activation_checkpoint.mode")
	if err != nil {
		return err
	}
	opt, ok, err := d.str("2", "activation_checkpoint.selective_ac_option")
	if err != nil {
		return err
	}
	t.RecomputeEvery = 1
	src := d.show(mk, "activation_checkpoint.mode selective (default)")
	switch mode {
	case "none":
		t.Recompute = RecomputeNone
	case "full":
		t.Recompute = RecomputeFull
	case "selective":
		src += ", " + d.show(ok, "selective_ac_option \"2\" (default)")
		switch {
		case opt == "op":
			t.Recompute = RecomputeOp
		case opt != "" && strings.Trim(opt, "0123456789") == "":
			n, err := strconv.ParseInt(opt, 10, 64)
			if err != nil || n > maxRecomputeEvery {
				return d.errf(ok, "activation_checkpoint.selective_ac_option = %s is out of range (use \"op\" or a layer interval up to %d)", strconv.Quote(opt), maxRecomputeEvery)
			}
			t.Recompute, t.RecomputeEvery = RecomputeFull, max(n, 1)
		default:
			return d.errf(from(ok, mk), "activation_checkpoint.selective_ac_option = %s is not an option torchtitan knows (use \"op\" or a layer interval such as \"2\")", strconv.Quote(opt))
		}
	case "memory_budget":
		return d.errf(mk, "activation_checkpoint.mode = \"memory_budget\" (the compiler's min-cut partitioner) is not modelled (use \"full\", \"selective\" or \"none\")")
	default:
		return d.errf(mk, "activation_checkpoint.mode = %s is not a mode torchtitan knows (use \"none\", \"selective\" or \"full\")", strconv.Quote(mode))
	}
	t.src("recompute", src)
	if err := t.readOpForce(d); err != nil {
		return err
	}
	es, ek, err := d.bool(false, "activation_checkpoint.early_stop")
	if err != nil {
		return err
	}
	switch {
	case ek != "":
		t.EarlyStop = es
		t.src("recompute_early_stop", d.show(ek, ""))
	case d.preEarlyStop:
		t.EarlyStop = true
		t.src("recompute_early_stop", "torch's default: "+d.preEarlyKey+" dates the file before torchtitan 25413d2 (2025-08-29), which added activation_checkpoint.early_stop, default false")
	default:
		t.src("recompute_early_stop", "activation_checkpoint.early_stop false (default)")
		if t.Recompute != RecomputeNone {
			t.note("activation_checkpoint.early_stop unset: false, torchtitan's default since 25413d2 (2025-08-29); an older torchtitan stopped early (set training.recompute_early_stop: true)")
		}
	}
	return nil
}

// readOpForce reads activation_checkpoint.
// per_op_sac_force_recompute_mm_shapes_by_fqns, which torchtitan reads
// under the op policy only (_apply_op_sac,
// torchtitan/distributed/activation_checkpoint.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, lines 76-93): there it is
// training.op_force_recompute. An empty fragment is in every module's FQN,
// the block's own first, which is not an nn.Linear: torchtitan raises
// ValueError, and so does the import; so does a control character, which
// no module name holds (the scenario loader refuses both).
func (t *Torchtitan) readOpForce(d *ttDoc) error {
	const key = "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns"
	frags, given, err := d.strList(key)
	if err != nil || !given {
		return err
	}
	if t.Recompute != RecomputeOp {
		t.note("%s is read under selective_ac_option \"op\" only: ignored", key)
		return nil
	}
	for _, f := range frags {
		if f == "" {
			return d.errf(key, "%s holds \"\", which every module's FQN contains, the block's own first, not an nn.Linear: torchtitan's _apply_op_sac raises ValueError (name Linears such as \"moe.router.gate\", or use [] to force nothing)", key)
		}
		if strings.ContainsFunc(f, unicode.IsControl) {
			return d.errf(key, "%s holds %s, with a control character no module name holds (name Linears such as \"moe.router.gate\")", key, strconv.Quote(f))
		}
	}
	if frags == nil {
		frags = []string{}
	}
	t.OpForce = &frags
	t.src("op_force_recompute", d.show(key, ""))
	return nil
}

// readCompileFP8 maps [compile] and the float8 converter. compile.enable
// with components "model" compiles each transformer block, "loss" the loss
// (apply_compile in parallelize.py and build_cross_entropy_loss at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1; components split at 08b8b24). Before it training.compile
// compiled the blocks (9dec370ad26b5f8e9a7333a0e36165018262644b) and from e7c0cae the loss too
// (docs/stacks.md). The float8 converter ("float8" before 8a2686c4a4e4,
// "quantize.linear.float8" after; float8.enable_float8_linear at 9dec370ad26b5f8e9a7333a0e36165018262644b)
// swaps the blocks' linears for torchao's Float8Linear, and with
// enable_fsdp_float8_all_gather FSDP2 gathers them in fp8: zerosim's fp8:
// torchao.
func (t *Torchtitan) readCompileFP8(d *ttDoc) error {
	t.Compile = CompileNone
	on, ck, err := d.bool(false, "compile.enable")
	if err != nil {
		return err
	}
	if ck != "" {
		comps, given, err := d.strList("compile.components")
		if err != nil {
			return err
		}
		if !given {
			comps = []string{"model", "loss"}
		}
		model, loss := false, false
		for _, c := range comps {
			switch c {
			case "model":
				model = true
			case "loss":
				loss = true
			default:
				return d.errf("compile.components", "compile.components holds %s (use \"model\" and \"loss\")", strconv.Quote(c))
			}
		}
		// The "model" component is per-block compile, never
		// torch.compile(model) (CompileModel): apply_compile compiles
		// each TransformerBlock on its own (torchtitan/distributed/
		// compile.py at pytorch/torchtitan b5bcd76c6, "Compiling each
		// TransformerBlock with torch.compile").
		switch {
		case !on:
		case model && loss:
			t.Compile = CompileBlocksLoss
		case model:
			t.Compile = CompileBlocks
		case loss:
			t.Compile = CompileLoss
		}
		t.src("compile", d.show(ck, "")+", "+d.show(map[bool]string{true: "compile.components", false: ""}[given], "compile.components [\"model\", \"loss\"] (default)"))
		if be, _, err := d.str("inductor", "compile.backend"); err != nil {
			return err
		} else if on && be != "inductor" {
			t.note("compile.backend = %s modelled as inductor's", strconv.Quote(be))
		}
	} else if tc, tk, err := d.bool(false, "training.compile"); err != nil {
		return err
	} else if tk != "" {
		if _, hasPar := d.get("parallelism"); tc && hasPar {
			t.Compile = CompileBlocksLoss
			t.note("training.compile = true read as torchtitan e7c0cae compiles (blocks and loss); an older torchtitan compiled the blocks only (set training.compile: blocks)")
		} else if tc {
			t.Compile = CompileBlocks
		}
		t.src("compile", d.show(tk, ""))
	} else {
		t.src("compile", "compile.enable false (default)")
	}
	convs, _, err := d.strList("model.converters")
	if err != nil {
		return err
	}
	fp8 := false
	for _, c := range convs {
		switch c {
		case "float8", "quantize.linear.float8":
			fp8 = true
		case "quantize.grouped_mm.float8", "quantize.grouped_mm.mx":
			if len(t.experts()) == 0 {
				t.note("model.converters %s converts MoE grouped GEMMs; %s %s has none", strconv.Quote(c), t.ModelName, t.Flavor)
			} else {
				t.note("model.converters %s runs the routed experts' grouped GEMMs in low precision; zerosim models them in bf16", strconv.Quote(c))
			}
		case "mx", "quantize.linear.mx":
			return d.errf("model.converters", "model.converters %s (MX block-scaled training) is not modelled (zerosim models fp8 as Transformer Engine's and torchao's float8; remove it, or use \"quantize.linear.float8\")", strconv.Quote(c))
		default:
			return d.errf("model.converters", "model.converters %s is not a converter zerosim knows (use \"quantize.linear.float8\", or remove it)", strconv.Quote(c))
		}
	}
	src := d.show("model.converters", "")
	if old, k, err := d.bool(false, "float8.enable_float8_linear"); err != nil {
		return err
	} else if old {
		fp8, src = true, d.show(k, "")
	}
	t.FP8 = FP8None
	if !fp8 {
		return nil
	}
	t.FP8 = FP8TorchAO
	t.src("fp8", src)
	ag, agk, err := d.bool(false, "quantize.linear.float8.enable_fsdp_float8_all_gather", "float8.enable_fsdp_float8_all_gather")
	if err != nil {
		return err
	}
	recipe, rk, err := d.str("", "quantize.linear.float8.recipe_name", "float8.recipe_name")
	if err != nil {
		return err
	}
	// training.fp8: torchao is tensorwise dynamic scaling (zero.FP8CastRuleOf
	// and the fp8 GEMM ratio are that recipe's); torchao's rowwise recipes
	// (Float8LinearConfig.from_recipe_name "rowwise", "rowwise_with_gw_hp",
	// torchao/float8/config.py at pytorch/ao
	// 8c81863ba85cce742244c0151c6683c5696bbe04) scale per row, cast with a
	// transpose kernel per operand and run other GEMMs, and are not
	// modelled. Any other name is none of torchao's
	// (Float8LinearRecipeName, config.py lines 114-135 there, which
	// from_recipe_name asserts, lines 296-300): named as such, with the
	// recipe one edit away if there is one.
	switch recipe {
	case "", "tensorwise":
	case "rowwise", "rowwise_with_gw_hp":
		return d.errf(rk, "float8 recipe_name %s (torchao's row-wise scaling) is not modelled: zerosim models torchao's tensorwise scaling only (use recipe_name = \"tensorwise\", or remove the key)", strconv.Quote(recipe))
	default:
		fix := `use recipe_name = "tensorwise", the one zerosim models, or remove the key`
		for _, n := range ttFloat8Recipes {
			if editDistance(recipe, n) == 1 {
				fix = "did you mean " + strconv.Quote(n) + "? zerosim models \"tensorwise\" only"
			}
		}
		return d.errf(rk, "float8 recipe_name %s is not one of torchao's float8 recipes (%s: Float8LinearRecipeName, torchao/float8/config.py at 8c81863), which torchao refuses (%s)", strconv.Quote(recipe), strings.Join(ttFloat8Recipes, ", "), fix)
	}
	// torchtitan asserts the two apart since 069bae286 (2025-02-27):
	// "using `float8_config.enable_fsdp_float8_all_gather` together with
	// `float8_config.recipe_name` is not supported"
	// (torchtitan/components/quantization/float8.py lines 65-69 at
	// 238fa9953e4aec2a62582121564273d7cbb1e9f1).
	if recipe != "" && ag {
		return d.errf(rk, "float8 recipe_name with enable_fsdp_float8_all_gather = true is a run torchtitan refuses (\"using float8_config.enable_fsdp_float8_all_gather together with float8_config.recipe_name is not supported\", components/quantization/float8.py at 238fa99) (remove recipe_name, or set enable_fsdp_float8_all_gather = false)")
	}
	switch {
	case !ag:
		t.FP8BF16Gather = true
		t.src("fp8_all_gather", d.show(agk, "enable_fsdp_float8_all_gather false (default)"))
	}
	filter, fk, err := d.strList("quantize.linear.float8.filter_fqns")
	if err != nil {
		return err
	}
	if !fk {
		if filter, _, err = d.strList("float8.filter_fqns"); err != nil {
			return err
		}
	}
	// 9dec370ad26b5f8e9a7333a0e36165018262644b's Float8Handler always skipped it (module_filter_fn: fqn !=
	// "output", torchtitan/float8.py); at 238fa9953e4aec2a62582121564273d7cbb1e9f1 filter_fqns decides,
	// default empty (job_config.py Float8Linear).
	if !slices.Contains(filter, "output") && !d.old {
		t.note("float8.filter_fqns leaves out \"output\": torchtitan runs the output layer in float8 too; zerosim keeps it in bf16")
	}
	if g, ok := findGPU(t.Cluster.GPU); ok && g.PeakFP8 == 0 {
		return d.errf("model.converters", "float8 training needs fp8 tensor cores, and --gpu %s has none (use a GPU with fp8 such as H100-80GB, or remove the float8 converter)", t.Cluster.GPU)
	}
	return nil
}

// ScenarioName is the scenario's name: the job config's file name without
// its extension.
func (t *Torchtitan) ScenarioName() string {
	return strings.TrimSuffix(filepath.Base(t.File), filepath.Ext(t.File))
}

// Complete reports whether the scenario needs no placeholder set.
func (t *Torchtitan) Complete() bool {
	return t.Cluster.Nodes > 0 && t.Cluster.GPU != "" && t.DP > 0 && t.GradAccum > 0
}

// Scenario renders the scenario file: a comment header naming the job
// config, then every key with the torchtitan key it came from. Unknown
// values are placeholders (SET_NODES, SET_GPU, SET_DP, SET_GRAD_ACCUM)
// that Load rejects at their line until the user sets them.
func (t *Torchtitan) Scenario() []byte {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Imported by zerosim import torchtitan from %s\n", ttName(t.File))
	if t.Description != "" {
		w("# job.description: %s\n", strconv.Quote(t.Description))
	}
	if t.HF != nil && t.HF.Active != t.HF.Total {
		w("# %s flavor %s: %s parameters, %s active per\n# token. Keys and defaults as torchtitan\n", t.ModelName, t.Flavor, commas(t.Params), commas(t.HF.Active))
	} else {
		w("# %s flavor %s: %s parameters. Keys and defaults as torchtitan\n", t.ModelName, t.Flavor, commas(t.Params))
	}
	if t.Old {
		w("# 9dec370 reads the file (torchtitan/config_manager.py); the stack\n")
	} else {
		w("# %s reads the file (torchtitan/config/job_config.py); the stack\n", TorchtitanCommit[:7])
	}
	w("# preset fills in the rest (docs/stacks.md).\n")
	for _, n := range t.Notes {
		w("# note: %s\n", n)
	}
	w("version: 1\nname: %s\nstack: torchtitan\n", strconv.Quote(t.ScenarioName()))
	c := t.Cluster
	clusterYAML(w, c.Nodes, "", "your node count (or --nodes)", c.GPUsPerNode, "",
		c.GPU, "a GPU preset such as H100-80GB (or --gpu); zerosim scenarios show default lists the cluster keys")
	if m := t.Model; t.HF != nil {
		t.hfModelYAML(w)
	} else {
		w("model:\n  kind: transformer\n  arch: llama\n")
		w("  hidden: %d\n  layers: %d\n  heads: %d\n  kv_heads: %d\n  ffn: %d\n  vocab: %d\n", m.Hidden, m.Layers, m.Heads, m.KVHeads, m.FFN, m.Vocab)
		w("  seq_len: %d  # %s\n", m.SeqLen, t.Sources["seq_len"])
	}
	w("parallelism:\n")
	if t.DP > 0 {
		w("  dp: %d  # %s\n", t.DP, t.Sources["dp"])
	} else {
		w("  dp: SET_DP  # nodes × gpus_per_node / cp (%s)\n", t.Sources["dp"])
	}
	w("  cp: %d  # %s\n", t.CP, t.Sources["cp"])
	if t.EP > 1 {
		w("  ep: %d  # %s\n", t.EP, t.Sources["ep"])
	}
	switch t.Stage {
	case 3:
		w("  zero_stage: 3  # FSDP2 (fully_shard)\n")
		if t.K > 1 {
			w("  k: %d  # HSDP: data_parallel_replicate_degree copies of the shards\n", t.K)
		}
	default:
		w("  zero_stage: %d  # see the notes above\n", t.Stage)
	}
	if t.Boundary != "" {
		w("communication:\n  boundary: %s  # %s\n", t.Boundary, t.Sources["boundary"])
	}
	w("training:\n")
	w("  micro_batch: %d  # %s\n", t.MicroBatch, t.Sources["micro_batch"])
	if t.GradAccum > 0 {
		w("  grad_accum: %d  # %s\n", t.GradAccum, t.Sources["grad_accum"])
	} else {
		w("  grad_accum: SET_GRAD_ACCUM  # training.global_batch_size %d / (local_batch_size %d × dp)\n", t.GlobalBatch, t.MicroBatch)
	}
	autocast := t.Stage == 0 && !t.MasterNone && t.ParamDType != FP32
	if autocast {
		// maybe_enable_amp (torchtitan/distributed/utils.py lines
		// 243-263 at 238fa9953e4aec2a62582121564273d7cbb1e9f1) returns
		// torch.autocast(dtype=mixed_precision_param) when FSDP is not
		// enabled: DDP keeps the fp32 model and all-reduces its fp32
		// gradients (mixed_precision_reduce applies under FSDP only).
		w("  param_dtype: fp32  # training.dtype float32: DDP keeps the fp32 model (maybe_enable_amp)\n")
		w("  autocast: %s  # %s: maybe_enable_amp's torch.autocast without FSDP\n", t.ParamDType, t.Sources["param_dtype"])
	} else {
		w("  param_dtype: %s  # %s\n", t.ParamDType, t.Sources["param_dtype"])
	}
	if autocast {
		w("  reduce_dtype: param_dtype  # DDP all-reduces the fp32 gradients (mixed_precision_reduce applies under FSDP only)\n")
	} else if t.MasterNone && t.Stage < 3 {
		// mixed_precision_reduce "only takes effect when
		// data_parallel_shard_degree > 1" (job_config.py at 238fa99):
		// DDP reduces the bf16 gradients in their dtype.
		w("  reduce_dtype: param_dtype  # training.dtype bfloat16 without FSDP: DDP reduces the bf16 gradients (mixed_precision_reduce applies under FSDP only)\n")
	} else {
		w("  reduce_dtype: %s  # %s\n", t.ReduceDType, t.Sources["reduce_dtype"])
	}
	if t.MasterNone {
		w("  master_dtype: none  # %s\n", t.Sources["master_dtype"])
		if t.Stage == 3 {
			w("  shard_dtype: bf16  # FSDP2 shards the bf16 parameters the optimizer steps\n")
		}
	}
	w("  optimizer: %s  # %s\n", t.Optimizer, t.Sources["optimizer"])
	w("  optimizer_impl: %s  # %s\n", t.OptimizerImpl, t.Sources["optimizer_impl"])
	w("  lr: %s\n  beta1: %s\n  beta2: %s\n  eps: %s\n  weight_decay: %s\n", ttFloat(t.LR), ttFloat(t.Beta1), ttFloat(t.Beta2), ttFloat(t.Eps), ttFloat(t.WeightDecay))
	// train.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1 (train_step) and at 9dec370ad26b5f8e9a7333a0e36165018262644b calls
	// clip_grad_norm_(..., training.max_norm, foreach=True) every step,
	// whatever max_norm is: the norm's read and the scaling's read and
	// write are there either way.
	w("  grad_clip: norm  # train.py calls clip_grad_norm_(max_norm) every step\n")
	if t.MaxNorm > 0 && t.MaxNorm != DefaultMaxGradNorm {
		w("  max_grad_norm: %s  # training.max_norm\n", ttFloat(t.MaxNorm))
	}
	w("  recompute: %s  # %s\n", t.Recompute, t.Sources["recompute"])
	if t.RecomputeEvery > 1 {
		w("  recompute_every: %d\n", t.RecomputeEvery)
	}
	w("  recompute_early_stop: %t  # %s\n", t.EarlyStop, t.Sources["recompute_early_stop"])
	if t.OpForce != nil {
		q := make([]string, len(*t.OpForce))
		for i, f := range *t.OpForce {
			q[i] = strconv.Quote(f)
		}
		w("  op_force_recompute: [%s]  # %s\n", strings.Join(q, ", "), t.Sources["op_force_recompute"])
	}
	w("  compile: %s  # %s\n", t.Compile, t.Sources["compile"])
	if t.Attention != "" {
		w("  attention: %s  # %s\n", t.Attention, t.Sources["attention"])
	}
	if t.AttentionKernel != "" {
		w("  attention_kernel: %s  # %s\n", t.AttentionKernel, t.Sources["attention_kernel"])
	}
	if t.OpRecomputeAttention {
		w("  op_recompute_attention: true  # %s\n", t.Sources["op_recompute_attention"])
	}
	if t.OpSaveAllToAll {
		w("  op_save_all_to_all: true  # %s\n", t.Sources["op_save_all_to_all"])
	}
	if t.OpSaveAbs != nil {
		w("  op_save_abs: %t  # %s\n", *t.OpSaveAbs, t.Sources["op_save_abs"])
	}
	if t.FP8 != FP8None {
		w("  fp8: %s  # %s: float8 linears\n", t.FP8, t.Sources["fp8"])
		if t.FP8BF16Gather {
			w("  fp8_all_gather: false  # %s: FSDP2 gathers bf16 weights\n", t.Sources["fp8_all_gather"])
		}
	}
	if t.NormImpl != "" {
		w("  norm_impl: %s  # %s\n", t.NormImpl, t.Sources["norm_impl"])
	}
	if t.KeepLogits != "" {
		w("  keep_logits: %s  # %s\n", t.KeepLogits, t.Sources["keep_logits"])
	}
	if t.ExpandableSegments != nil {
		w("memory:\n  expandable_segments: %t  # %s\n", *t.ExpandableSegments, t.Sources["expandable_segments"])
	}
	return []byte(b.String())
}

// ttFloat prints a float as a YAML number.
func ttFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
