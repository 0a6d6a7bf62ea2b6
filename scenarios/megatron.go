package scenarios

import (
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// This file imports the command line of a Megatron-LM pretraining run
// (pretrain_gpt.py's arguments, as a launch script writes them) into a
// scenario. Flags, defaults and checks are those of
// megatron/training/arguments.py at NVIDIA/Megatron-LM core_v0.12.0
// (d580efc68a9f0dbf1945f834f6f6200cd01d3343), the commit stack.go and
// docs/stacks.md cite for stack: megatron; each mapping below names the
// code that uses the flag.

// MegatronCommit is the Megatron-LM commit whose flags and defaults
// ImportMegatron follows (core_v0.12.0).
const MegatronCommit = "d580efc68a9f0dbf1945f834f6f6200cd01d3343"

// MaxMegatronBytes bounds the launch script read.
const MaxMegatronBytes = 1 << 20

// DefaultMegatronGPUsPerNode is the GPUs per node when neither the import
// nor the script's torchrun --nproc_per_node gives it: Megatron-LM's
// example scripts launch GPUS_PER_NODE=8 (examples/gpt3/
// train_gpt3_175b_distributed.sh at d580efc6).
const DefaultMegatronGPUsPerNode = 8

// MegatronOptions is what the command line does not hold: the cluster
// (Nodes, GPUsPerNode: 0 takes torchrun's --nnodes and --nproc_per_node,
// or deepspeed's --num_nodes and --num_gpus, from the script), the GPU preset, and the tokenizer's vocabulary size
// (before Megatron pads it) when the tokenizer is a file.
type MegatronOptions struct {
	Nodes, GPUsPerNode int
	GPU                string
	TokenizerVocab     int64
}

// Megatron is an imported Megatron-LM command line.
type Megatron struct {
	File string
	Opt  MegatronOptions
	// Nodes and GPUsPerNode as resolved (0 nodes: a placeholder), with the
	// flag each came from.
	Nodes, GPUsPerNode  int
	NodesFrom, GPUsFrom string
	Model               Model
	Params              int64
	LayerList           []Layer
	ModelFrom           map[string]string
	ArchWhy             string
	DP                  int // 0: unknown (no node count)
	CP                  int
	MicroBatch          int64
	GlobalBatch         int64 // 0: --global-batch-size unset (micro × dp)
	GradAccum           int64 // 0: unknown until dp is
	Settings            ImportSettings
	Notes               []string
	PaddedVocabFrom     string
	ParamBytes          int64
	BucketParams        int64 // --ddp-bucket-size (0: Megatron's default)
	OverlapGradReduce   bool
	// pao: the precision-aware optimizer's flags (readPrecisionFlags).
	pao mgPrecisionAware
}

// ReadMegatron reads and imports the launch script or argument list at
// path ("-": stdin).
func ReadMegatron(p string, stdin io.Reader, o MegatronOptions) (*Megatron, error) {
	if p != "-" {
		data, err := readConfigFile(p, "a launch script or a file of pretrain_gpt.py arguments", MaxMegatronBytes)
		if err != nil {
			return nil, err
		}
		return ImportMegatron(p, data, o)
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	data, err := io.ReadAll(io.LimitReader(stdin, MaxMegatronBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the file: %v", Stdin, err)
	}
	return ImportMegatron(Stdin, data, o)
}

// mgFlag is one flag of the command line and its values.
type mgFlag struct {
	at   mgWord
	vals []mgWord
}

// mgArgs is the parsed command line.
type mgArgs struct {
	file  string
	flags map[string]mgFlag
	order []string // flag names in first-seen order
	used  map[string]bool
	// skipped are the ${ARRAY[@]} words the script fills inside a block
	// whose outcome the import cannot decide (their held flags).
	skipped []mgWord
	// decided: the script's ifs whose branch a positional or environment
	// default decided (mgScript).
	decided []mgDecided
}

func (a *mgArgs) pos(w mgWord) string {
	if w.line == 0 {
		return a.file
	}
	return fmt.Sprintf("%s:%d:%d", a.file, w.line, w.col)
}

// missing is the error for a required flag that is not given. When the
// command line has a flag that is not Megatron-LM's and is within two
// edits of it (--num-atention-heads), the error is at that flag: argparse
// refuses it ("unrecognized arguments"), and "--num-attention-heads is
// missing" alone sent the user looking for a flag they had typed.
func (a *mgArgs) missing(flag string) error {
	for _, n := range a.order {
		if n == flag || a.used[n] || mgIgnored[n] {
			continue
		}
		if _, ok := mgUnmodelled[n]; ok {
			continue
		}
		if editDistance(n, flag) <= 2 {
			return a.errAt(a.flags[n].at, "--%s is not a Megatron-LM argument (did you mean --%s? pretrain_gpt.py requires it)", ttName(n), flag)
		}
	}
	return fmt.Errorf("%s: --%s is missing (pretrain_gpt.py requires it: add it)%s", a.file, flag, a.inSkipped(flag))
}

// mgUndecidedBlock is where the script fills an array the import does not
// read (mgArgs.skipped): the caveat every message about it gives.
const mgUndecidedBlock = "inside an if/for/while block whose outcome zerosim cannot decide"

// inSkipped says which array that the import does not read (skipped)
// would hold flag, for a "missing" error: the flag is in the script, in
// an array filled inside a block whose outcome the import cannot decide.
func (a *mgArgs) inSkipped(flag string) string {
	for _, sk := range a.skipped {
		for _, h := range sk.held {
			if h.text == "--"+flag {
				return fmt.Sprintf("; the script's --%s at %d:%d is in %s (%s), which the script fills %s, so it is not read: write the flags in the launch command", flag, h.line, h.col, ttName(sk.text), a.pos(sk), mgUndecidedBlock)
			}
		}
	}
	if len(a.skipped) > 0 {
		return fmt.Sprintf("; %s at %s is not read (the script fills it %s)", ttName(a.skipped[0].text), a.pos(a.skipped[0]), mgUndecidedBlock)
	}
	return ""
}

// errAt is a one-line error at flag's word.
// A word in a branch that a default decided says so: the flag is there
// only as the script runs without that argument or variable (review s18
// C1).
func (a *mgArgs) errAt(w mgWord, format string, args ...any) error {
	msg := oneLine(fmt.Sprintf(format, args...))
	for _, d := range a.decided {
		if w.line > 0 && d.holds(w.line, w.col) {
			msg += fmt.Sprintf("; this is in the branch the if at line %d takes as the script runs %s: for a run launched with other values, write them in the script in place of the defaults and import again", d.line, d.assumedText())
		}
	}
	return fmt.Errorf("%s: %s", a.pos(w), msg)
}

// show is "--flag value" as given.
func (f mgFlag) show(name string) string {
	s := "--" + ttName(name)
	for _, v := range f.vals {
		s += " " + ttName(v.text)
	}
	return s
}

// value is the flag's one value; ok false when absent.
func (a *mgArgs) value(name string) (mgFlag, string, bool, error) {
	a.used[name] = true
	f, ok := a.flags[name]
	if !ok {
		return f, "", false, nil
	}
	if len(f.vals) != 1 {
		return f, "", true, a.errAt(f.at, "--%s takes one value, not %d (give it as --%s VALUE)", name, len(f.vals), name)
	}
	v := f.vals[0]
	if v.unresolved != "" {
		return f, "", true, a.errAt(v, "--%s %s: %s is not known here (the script computes it, sets it inside an if/for/while block, or takes it from its command line or environment): write the value of --%s in the launch command", name, ttName(v.text), ttName(v.unresolved), name)
	}
	return f, v.text, true, nil
}

// int reads an integer flag in [lo, hi]; def when absent.
func (a *mgArgs) int(name string, def, lo, hi int64) (int64, bool, error) {
	f, s, ok, err := a.value(name)
	if err != nil || !ok {
		return def, false, err
	}
	n, perr := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if perr != nil || n < lo || n > hi {
		return 0, true, a.errAt(f.at, "--%s %s is not an integer in %d to %d (fix the value)", name, ttName(s), lo, hi)
	}
	return n, true, nil
}

// float reads a finite float flag; def when absent.
func (a *mgArgs) float(name string, def, lo, hi float64) (float64, bool, error) {
	f, s, ok, err := a.value(name)
	if err != nil || !ok {
		return def, false, err
	}
	x, perr := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if perr != nil || math.IsNaN(x) || x < lo || x > hi {
		return 0, true, a.errAt(f.at, "--%s %s is not a number in %s to %s (fix the value)", name, ttName(s), fmtFloat(lo), fmtFloat(hi))
	}
	return x, true, nil
}

// str reads a string flag; def when absent.
func (a *mgArgs) str(name, def string) (string, bool, error) {
	_, s, ok, err := a.value(name)
	if err != nil || !ok {
		return def, false, err
	}
	return s, true, nil
}

// bool reads a store_true flag (store_false when inverted is set: the
// value is then false when given).
func (a *mgArgs) bool(name string) (bool, error) {
	a.used[name] = true
	f, ok := a.flags[name]
	if !ok {
		return false, nil
	}
	if len(f.vals) > 0 {
		return false, a.errAt(f.vals[0], "--%s takes no value, and %s follows it (remove the value)", name, ttName(f.vals[0].text))
	}
	return true, nil
}

// oneOf checks a string flag against Megatron's choices.
func (a *mgArgs) oneOf(name, v string, choices ...string) error {
	for _, c := range choices {
		if v == c {
			return nil
		}
	}
	f := a.flags[name]
	return a.errAt(f.at, "--%s %s is not one of Megatron's choices (use %s)", name, ttName(v), strings.Join(choices, ", "))
}

// mgLauncher is what the launch command gives besides pretrain_gpt.py's
// arguments: torchrun's --nnodes and --nproc_per_node (or the DeepSpeed
// launcher's --num_nodes and --num_gpus).
type mgLauncher struct {
	nnodes, nproc mgFlag
	hasN, hasP    bool
	// sbatchGPULine: the line of the #SBATCH --gpus-per-node that set
	// $SLURM_GPUS_PER_NODE (0: none).
	sbatchGPULine int
	// sbatchLine is the line of the #SBATCH --nodes that set
	// $SLURM_NNODES (0: none).
	sbatchLine int
}

// ImportMegatron imports a launch script's or argument list's bytes; file
// names it in messages. Every error is one line naming file:line:column or
// the flag, what is wrong and what to do.
func ImportMegatron(file string, data []byte, o MegatronOptions) (*Megatron, error) {
	name := ttName(file)
	if len(data) > MaxMegatronBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, too large for a launch script (check the path)", name, MaxMegatronBytes)
	}
	if line, col, what, bad := notUTF8(data); bad {
		// It echoed the line, ≈400 escaped bytes (QA25 L10).
		return nil, fmt.Errorf("%s:%d:%d: %s; is it the launch script, or the file of its arguments?", name, line, col, what)
	}
	// A batch script's #SBATCH --nodes is the allocation: Slurm sets
	// SLURM_JOB_NUM_NODES and SLURM_NNODES to it, which launch lines
	// such as torchrun --nnodes $SLURM_NNODES read (sbatch(1), "OUTPUT
	// ENVIRONMENT VARIABLES").
	var env map[string]mgVar
	sbatchN, sbLine, sbCol, sbatch := mgSbatchNodes(string(data))
	if sbatch {
		v := mgVar{words: []mgField{{text: sbatchN, line: sbLine, col: sbCol}}}
		env = map[string]mgVar{"SLURM_JOB_NUM_NODES": v, "SLURM_NNODES": v}
	}
	sbatchG, sbGLine, sbGCol, sbatchGPUs := mgSbatchGPUs(string(data))
	if sbatchGPUs {
		if env == nil {
			env = map[string]mgVar{}
		}
		env["SLURM_GPUS_PER_NODE"] = mgVar{words: []mgField{{text: sbatchG, line: sbGLine, col: sbGCol}}}
	}
	if err := mgUnclosed(name, string(data)); err != nil {
		return nil, err
	}
	sh := &mgExpander{vars: map[string]mgVar{}}
	cmds, decided := sh.run(string(data), env)
	var words []mgWord
	var la mgLauncher
	found, launches := false, 0
	for _, c := range cmds {
		for i, w := range c.words {
			// The script's own name; a directory the script does not set
			// ($MEGATRON_LM_DIR from $USER) does not hide it.
			base := path.Base(w.text)
			if strings.Contains(base, "$") || strings.ContainsAny(w.text, " \t") || !strings.HasPrefix(base, "pretrain_") || !strings.HasSuffix(base, ".py") {
				continue
			}
			if base != "pretrain_gpt.py" {
				return nil, fmt.Errorf("%s:%d:%d: %s: zerosim imports GPT-style decoder runs (pretrain_gpt.py), not %s", name, w.line, w.col, ttName(base), ttName(base))
			}
			launches++
			if found {
				break
			}
			found = true
			words = c.words[i+1:]
			la = mgReadLauncher(c.words[:i])
			if sbatch {
				la.sbatchLine = sbLine
			}
			if sbatchGPUs {
				la.sbatchGPULine = sbGLine
			}
			break
		}
	}
	if !found {
		// A plain list of --flag value tokens.
		for _, c := range cmds {
			words = append(words, c.words...)
		}
		if len(words) == 0 {
			return nil, fmt.Errorf("%s: no arguments (give a launch script running pretrain_gpt.py, or its --flag value arguments)", name)
		}
		if !strings.HasPrefix(words[0].text, "--") {
			if line, col, what, ok := mgNamesPretrain(string(data)); ok {
				return nil, fmt.Errorf("%s:%d:%d: %s is named here, but no command zerosim can follow runs it: it follows commands, the arrays and variables they expand and the strings bash -c, sh -c and eval run, but not a variable set inside an if/for/while block or function whose outcome it cannot decide (write the launch command, torchrun … %s --flags, as a command of its own, or give its --flag value arguments)", name, line, col, ttName(what), ttName(what))
			}
			return nil, fmt.Errorf("%s:%d:%d: %s: no command runs pretrain_gpt.py, and the file is not a list of --flag value arguments (give the launch script or the arguments)", name, words[0].line, words[0].col, ttName(words[0].text))
		}
	}
	a := &mgArgs{file: name, flags: map[string]mgFlag{}, used: map[string]bool{}, decided: decided}
	var cur string
	for _, w := range words {
		if w.unresolved != "" && w.unresolved == w.text && (strings.HasSuffix(w.text, "[@]}") || strings.HasSuffix(w.text, "[*]}")) {
			// An array the script fills in an if block, or from outside.
			a.skipped = append(a.skipped, w)
			continue
		}
		if strings.HasPrefix(w.text, "--") && len(w.text) > 2 && !isNumber(w.text) {
			n, v, eq := strings.Cut(w.text[2:], "=")
			if _, seen := a.flags[n]; !seen {
				a.order = append(a.order, n)
			}
			// argparse: the last occurrence wins.
			f := mgFlag{at: w}
			if eq {
				f.vals = []mgWord{{text: v, line: w.line, col: w.col, unresolved: w.unresolved}}
			}
			a.flags[n] = f
			cur = n
			continue
		}
		if cur == "" {
			return nil, a.errAt(w, "%s is not a flag (pretrain_gpt.py takes --flag value arguments; remove it)", ttName(w.text))
		}
		f := a.flags[cur]
		f.vals = append(f.vals, w)
		a.flags[cur] = f
	}
	m := &Megatron{File: file, Opt: o, ModelFrom: map[string]string{}}
	for _, sk := range a.skipped {
		holds := ""
		if len(sk.held) > 0 {
			var fl []string
			for _, h := range sk.held {
				fl = append(fl, ttName(h.text))
			}
			holds = " (there: " + strings.Join(fl, ", ") + ")"
		}
		m.note("%s at %d:%d is not read: the script fills the array %s, or from outside; the flags it holds%s are not imported (write them in the launch command to import them)", ttName(sk.text), sk.line, sk.col, mgUndecidedBlock, holds)
	}
	for _, d := range decided {
		m.note("the if at %s:%d takes its branch as the script runs %s; a run launched with other values may take another branch: write them in the script in place of the defaults and import again", name, d.line, d.assumedText())
	}
	for _, ap := range sh.appends {
		if len(ap.flags) == 0 {
			continue
		}
		var fl []string
		for _, f := range ap.flags {
			fl = append(fl, fmt.Sprintf("%s at %d:%d", ttName(f.text), f.line, f.col))
		}
		m.note("line %d appends %s to %s inside an if/for/while block whose outcome zerosim cannot decide; it is imported as the script runs without them (write them in the launch command to import them)", ap.line, strings.Join(fl, ", "), ap.name)
	}
	if launches > 1 {
		m.note("the script launches pretrain_gpt.py %d times; the first launch is imported", launches)
	}
	if strings.Contains(string(data), "$@") || strings.Contains(string(data), "$*") {
		m.note("the script's own arguments (\"$@\") are read as none: it is imported as run without arguments")
	}
	if err := m.refuseDeepSpeed(a, la); err != nil {
		return nil, err
	}
	for _, step := range []func(*mgArgs) error{m.refuse, m.readModel, func(a *mgArgs) error { return m.readCluster(a, la) }, m.readBatch, m.readPrecision, m.readOptimizer, m.readRecompute, m.readActivationOffload, m.readAttention, m.readComm, m.readIgnored} {
		if err := step(a); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// assumedText names the defaults that decided the if: "without argument 3
// (TOKENIZER_ARG=${3:-"MOCK"} at line 14 gives "MOCK") and …".
func (d mgDecided) assumedText() string {
	var as []string
	for _, a := range d.assumed {
		expr := a.expr
		if a.via != "" {
			expr = a.via + "=" + expr
		}
		as = append(as, fmt.Sprintf("without %s (%s at line %d gives %q)", a.what(), ttName(expr), a.line, a.value))
	}
	return strings.Join(as, " and ")
}

// mgDeepSpeedFlags are the flags deepspeed.add_config_arguments adds
// (DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641, deepspeed/__init__.py _add_core_arguments).
// Megatron-LM does not know them; microsoft/Megatron-DeepSpeed's
// parse_args adds them (megatron/arguments.py at f4157bea69f3df8c6cb66f2ebcda66ba03d1288e, line 54).
var mgDeepSpeedFlags = []string{"deepspeed", "deepspeed_config", "deepscale", "deepscale_config"}

// refuseDeepSpeed refuses a Megatron-DeepSpeed launch. That program is
// not Megatron-LM: with --deepspeed, megatron/training.py (f4157bea69f3df8c6cb66f2ebcda66ba03d1288e)
// builds args.deepspeed_config_dict from the --deepspeed_config JSON and
// passes it to deepspeed.initialize(config=...), so ZeRO, the batch and
// the precision are the DeepSpeed config's; its --zero-stage only picks
// the optimizer statistics' reduction (training.py line 1056). The
// refusal names the import deepspeed command with the launch's config
// file and cluster, and the norm its models run: on CUDA
// megatron/model/__init__.py binds LayerNorm and RMSNorm to apex's
// MixedFusedLayerNorm and MixedFusedRMSNorm (microsoft/Megatron-DeepSpeed
// 11f2d934213a625e7a2b4a6862a1cdea478067cb, the commit FlagPerf's
// llama2_7b-megatron-deepspeed runs), which keep only their 16-bit input
// and fp32 statistics: training.norm_impl fused, not the llama arch's
// default eager fp32 RMSNorm (qamem32 R5: device +12.0 % → +4.6 %).
func (m *Megatron) refuseDeepSpeed(a *mgArgs, la mgLauncher) error {
	first := ""
	for _, n := range a.order {
		for _, d := range mgDeepSpeedFlags {
			if n == d && first == "" {
				first = n
			}
		}
	}
	if first == "" {
		return nil
	}
	one := func(f mgFlag, ok bool, def string) string {
		if ok && len(f.vals) == 1 && f.vals[0].unresolved == "" && f.vals[0].text != "" {
			return f.vals[0].text
		}
		return def
	}
	cfg, ok := a.flags["deepspeed_config"]
	if !ok {
		cfg, ok = a.flags["deepscale_config"]
	}
	file := one(cfg, ok, "DS_CONFIG.json")
	nodes := one(la.nnodes, la.hasN, "N")
	if m.Opt.Nodes > 0 {
		nodes = strconv.Itoa(m.Opt.Nodes)
	}
	gpn := one(la.nproc, la.hasP, "8")
	if m.Opt.GPUsPerNode > 0 {
		gpn = strconv.Itoa(m.Opt.GPUsPerNode)
	}
	gpu := m.Opt.GPU
	if gpu == "" {
		gpu = "GPU"
	}
	return a.errAt(a.flags[first].at, "--%s: this is a Megatron-DeepSpeed run (microsoft/Megatron-DeepSpeed, not Megatron-LM): its ZeRO stage, batch and precision come from the DeepSpeed config, not from --zero-stage; import the config with zerosim import deepspeed %s --nodes %s --gpus-per-node %s --gpu %s, and add the model with --hf config.json or write its model section, with training.norm_impl: fused (its models run apex's MixedFusedLayerNorm or MixedFusedRMSNorm on CUDA, megatron/model/__init__.py at microsoft/Megatron-DeepSpeed 11f2d934)",
		first, ttName(file), ttName(nodes), ttName(gpn), ttName(gpu))
}

// mgLaunchFlag is a launcher flag as the launch gives it: torchrun
// --nnodes, or the DeepSpeed launcher's --num_nodes.
func mgLaunchFlag(f mgFlag) string {
	what, _, _ := strings.Cut(f.at.text, "=")
	if strings.HasPrefix(what, "--num_") {
		return "deepspeed " + what
	}
	return "torchrun " + what
}

// isNumber reports a negative number given as a value ("--" never starts
// one, but keep argparse's rule for "-1").
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// mgReadLauncher reads torchrun's (or torch.distributed.launch's)
// --nnodes and --nproc_per_node, or the DeepSpeed launcher's --num_nodes
// and --num_gpus.
func mgReadLauncher(ws []mgWord) mgLauncher {
	var la mgLauncher
	for i := 0; i < len(ws); i++ {
		n, v, eq := strings.Cut(ws[i].text, "=")
		var f mgFlag
		f.at = ws[i]
		switch n {
		case "--nnodes", "--nproc_per_node", "--nproc-per-node":
		// DeepSpeed's launcher (deepspeed/launcher/runner.py at edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
		// --num_nodes, and --num_gpus alias --num_accelerators per node.
		case "--num_nodes", "--num_gpus", "--num_accelerators":
		default:
			continue
		}
		if eq {
			f.vals = []mgWord{{text: v, line: ws[i].line, col: ws[i].col, unresolved: ws[i].unresolved}}
		} else if i+1 < len(ws) {
			f.vals = []mgWord{ws[i+1]}
			i++
		}
		if n == "--nnodes" || n == "--num_nodes" {
			la.nnodes, la.hasN = f, true
		} else {
			la.nproc, la.hasP = f, true
		}
	}
	return la
}

func (m *Megatron) note(format string, a ...any) {
	m.Notes = append(m.Notes, fmt.Sprintf(format, a...))
}

func (m *Megatron) set(key, value, from string) {
	m.Settings = append(m.Settings, ImportSetting{Key: key, Value: value, From: from})
}

// from is "--flag value" when given, else "--flag default X (default)".
func (a *mgArgs) from(name string, given bool, def string) string {
	if given {
		return a.flags[name].show(name)
	}
	return "--" + name + " " + def + " (default)"
}

// refuseMegatronFSDP refuses Megatron-FSDP, naming the ZeRO stage its
// --data-parallel-sharding-strategy stands for. The flag is
// --use-custom-fsdp at core_v0.12.0 (arguments.py:2133 at d580efc6, whose
// --data-parallel-sharding-strategy defaults to no_shard, :2136) and
// --use-megatron-fsdp later (arguments.py:1118 at
// d98e8a64ddf34856e74b24714e3bedb2f5a39553, default optim_grads_params,
// :3190; --use-custom-fsdp is then its deprecated alias). The strategies
// are ZeRO's stages: no_shard DDP, optim the optimizer state (ZeRO-1),
// optim_grads with the gradients (ZeRO-2), optim_grads_params with the
// parameters (ZeRO-3): megatron/core/distributed/fsdp/src/README.md:98-101
// and docs/mfsdp_design.md:192-194 at d98e8a64. Megatron-FSDP keeps its
// own parameter and gradient buffers (megatron_fsdp/param_and_grad_buffer.py,
// fp32 main parameters by default: --megatron-fsdp-main-params-dtype,
// arguments.py:3687) that the rest of this import, which reads Megatron
// DDP's buffers, bucket sizes and reduce dtypes, does not describe: it is
// refused, and the message says which stage to write instead.
func refuseMegatronFSDP(a *mgArgs) error {
	for _, k := range []struct{ flag, def, at string }{
		{"use-megatron-fsdp", "optim_grads_params", "arguments.py:3190 at d98e8a64"},
		{"use-custom-fsdp", "no_shard", "arguments.py:2136 at d580efc6, optim_grads_params from d98e8a64"},
	} {
		f, ok := a.flags[k.flag]
		if !ok {
			continue
		}
		if _, err := a.bool(k.flag); err != nil {
			return err
		}
		strat, given, err := a.str("data-parallel-sharding-strategy", k.def)
		if err != nil {
			return err
		}
		stage, ok := map[string]int{"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}[strat]
		if !ok {
			return a.oneOf("data-parallel-sharding-strategy", strat, "no_shard", "optim", "optim_grads", "optim_grads_params")
		}
		from := "--data-parallel-sharding-strategy " + ttName(strat)
		if !given {
			from += " (the default, " + k.at + ")"
		}
		what := [...]string{"shards nothing, as DDP", "shards the optimizer state, as ZeRO-1", "shards the optimizer state and gradients, as ZeRO-2",
			"shards the optimizer state, gradients and parameters, as ZeRO-3"}[stage]
		return a.errAt(f.at, "--%s: Megatron-FSDP with %s %s does, but its own parameter and gradient buffers are not modelled: write a scenario with zero_stage: %d, or remove --%s and set parallelism.zero_stage: %d in the printed one",
			k.flag, from, what, stage, k.flag, stage)
	}
	return nil
}

// leaveOut is the sentence every refusal of a model-parallel degree ends
// with.
const leaveOut = `zerosim models data parallelism: ZeRO, Megatron's distributed optimizer, context parallelism; README "What does it leave out?"`

// refuse rejects what zerosim does not model at all.
func (m *Megatron) refuse(a *mgArgs) error {
	if err := refuseMegatronFSDP(a); err != nil {
		return err
	}
	for _, k := range []struct{ flag, what string }{
		{"tensor-model-parallel-size", "tensor parallelism"},
		{"pipeline-model-parallel-size", "pipeline parallelism"},
		{"encoder-tensor-model-parallel-size", "tensor parallelism"},
		{"encoder-pipeline-model-parallel-size", "pipeline parallelism"},
	} {
		n, given, err := a.int(k.flag, 1, 0, 1<<20)
		if err != nil {
			return err
		}
		if given && n > 1 {
			return a.errAt(a.flags[k.flag].at, "--%s %d: %s is not modelled (%s); set --%s 1 to import the run without it", k.flag, n, k.what, leaveOut, k.flag)
		}
	}
	for _, k := range []struct{ flag, why string }{
		// MoE: zerosim's MoE blocks come with a model's config.json.
		{"num-experts", "mixture-of-experts layers are not imported from Megatron flags (import the model with zerosim import hf from its config.json and set parallelism.ep)"},
		{"use-torch-fsdp2", "PyTorch FSDP2 is ZeRO-3, not Megatron's distributed optimizer (write a scenario with zero_stage: 3, or import a torchtitan job)"},
		// Multi-latent attention (MLASelfAttention's low-rank q and kv
		// projections, megatron/core/transformer/multi_latent_attention.py
		// at d580efc6) and multi-token prediction (arguments.py:1309 and
		// :1311 at d580efc6) change every block's parameters and FLOPs,
		// and the MTP modules add blocks and output-head passes: not read
		// from Megatron flags, so refused rather than counted as the plain
		// GPT model.
		{"multi-latent-attention", "multi-latent attention is not imported from Megatron flags: its low-rank query and key/value projections (--q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim, --v-head-dim) change every block (import the model's config.json, such as DeepSeek-V3's, with model: {hf_config: …} and stack: megatron)"},
		{"mtp-num-layers", "multi-token-prediction layers are not imported from Megatron flags (for a DeepSeek-V3, GLM-4.5 or Qwen3-Next config.json write model: {hf_config: …, mtp_layers: N} with stack: megatron)"},
		{"optimizer-cpu-offload", "the optimizer's CPU offload in Megatron is not modelled"},
		{"num-layers-per-virtual-pipeline-stage", "virtual pipeline stages need pipeline parallelism, which is not modelled"},
	} {
		if f, ok := a.flags[k.flag]; ok {
			a.used[k.flag] = true
			if (k.flag == "num-experts" || k.flag == "mtp-num-layers") && len(f.vals) == 1 && (f.vals[0].text == "0" || f.vals[0].text == "None") {
				continue
			}
			return a.errAt(f.at, "%s: %s; remove --%s to import the rest", f.show(k.flag), k.why, k.flag)
		}
	}
	if n, given, err := a.int("expert-model-parallel-size", 1, 1, 1<<20); err != nil {
		return err
	} else if given && n > 1 {
		return a.errAt(a.flags["expert-model-parallel-size"].at, "--expert-model-parallel-size %d: expert parallelism needs MoE layers, which are not imported from Megatron flags (import the model with zerosim import hf and set parallelism.ep); set it to 1", n)
	}
	return nil
}

// readModel reads the GPT model's dimensions and counts its parameters as
// megatron/core/models/gpt/gpt_model.py and the layer spec build them
// (d580efc6): embedding (word, and position when learned_absolute), blocks
// of input norm, QKV (heads·kv_channels + 2·groups·kv_channels outputs),
// projection, pre-MLP norm, fc1 (doubled for SwiGLU), fc2, biases unless
// --disable-bias-linear, a final norm, and an output layer when untied.
func (m *Megatron) readModel(a *mgArgs) error {
	req := func(flag string, lo, hi int64) (int64, error) {
		n, given, err := a.int(flag, 0, lo, hi)
		if err != nil {
			return 0, err
		}
		if !given {
			// validate_args: required_args (arguments.py at d580efc6).
			return 0, a.missing(flag)
		}
		return n, nil
	}
	layers, err := req("num-layers", 1, maxLayers)
	if err != nil {
		return err
	}
	h, err := req("hidden-size", 1, maxHidden)
	if err != nil {
		return err
	}
	heads, err := req("num-attention-heads", 1, h)
	if err != nil {
		return err
	}
	maxPos, err := req("max-position-embeddings", 1, maxSeqLen)
	if err != nil {
		return err
	}
	seq, seqGiven, err := a.int("seq-length", 0, 1, maxSeqLen)
	if err != nil {
		return err
	}
	if !seqGiven {
		if seq, seqGiven, err = a.int("encoder-seq-length", 0, 1, maxSeqLen); err != nil {
			return err
		}
		if !seqGiven {
			return a.missing("seq-length")
		}
	}
	if maxPos < seq {
		return a.errAt(a.flags["max-position-embeddings"].at, "--max-position-embeddings %d is below --seq-length %d (validate_args asserts max_position_embeddings >= seq_length: raise it)", maxPos, seq)
	}
	swiglu, err := a.bool("swiglu")
	if err != nil {
		return err
	}
	// ffn_hidden_size: 4h, or int(4h·2/3 / 64)·64 with --swiglu
	// (validate_args at d580efc6).
	defFFN := 4 * h
	if swiglu {
		defFFN = (8 * h / 3) / 64 * 64
	}
	ffn, ffnGiven, err := a.int("ffn-hidden-size", defFFN, 1, maxFFN)
	if err != nil {
		return err
	}
	if ffn < 1 {
		return fmt.Errorf("%s: --hidden-size %d gives --ffn-hidden-size 0 with --swiglu (give --ffn-hidden-size)", a.file, h)
	}
	kvch, kvchGiven, err := a.int("kv-channels", 0, 1, maxHidden)
	if err != nil {
		return err
	}
	if !kvchGiven {
		if h%heads != 0 {
			return a.errAt(a.flags["num-attention-heads"].at, "--num-attention-heads %d does not divide --hidden-size %d (validate_args asserts it without --kv-channels: give --kv-channels or a divisor)", heads, h)
		}
		kvch = h / heads
	}
	gqa, err := a.bool("group-query-attention")
	if err != nil {
		return err
	}
	groups, groupsGiven, err := a.int("num-query-groups", 1, 1, heads)
	if err != nil {
		return err
	}
	if !gqa {
		// num_query_groups is used only with --group-query-attention
		// (core_transformer_config_from_args at d580efc6).
		groups = heads
	} else if heads%groups != 0 {
		return a.errAt(a.flags["num-query-groups"].at, "--num-query-groups %d does not divide --num-attention-heads %d (use a divisor)", groups, heads)
	}
	_ = groupsGiven
	norm, _, err := a.str("normalization", "LayerNorm")
	if err != nil {
		return err
	}
	if err := a.oneOf("normalization", norm, "LayerNorm", "RMSNorm"); err != nil {
		return err
	}
	pe, _, err := a.str("position-embedding-type", "learned_absolute")
	if err != nil {
		return err
	}
	switch pe {
	case "learned_absolute", "rope", "none":
	case "mrope", "relative":
		return a.errAt(a.flags["position-embedding-type"].at, "--position-embedding-type %s is not a GPT model's (it is multimodal or T5's): use learned_absolute or rope", pe)
	default:
		return a.oneOf("position-embedding-type", pe, "learned_absolute", "rope", "mrope", "relative", "none")
	}
	untied, err := a.bool("untie-embeddings-and-output-weights")
	if err != nil {
		return err
	}
	noBias, err := a.bool("disable-bias-linear")
	if err != nil {
		return err
	}
	qkvBias, err := a.bool("add-qkv-bias")
	if err != nil {
		return err
	}
	qkvBias = qkvBias || !noBias
	vocab, err := m.readVocab(a)
	if err != nil {
		return err
	}
	// --qk-layernorm: q_layernorm and k_layernorm, each a norm of
	// hidden_size_per_attention_head = kv_channels (SelfAttention,
	// megatron/core/transformer/attention.py:711-729 at d580efc6; TENorm
	// from Transformer Engine 1.9 in gpt_layer_specs.py:145-161): weight
	// under RMSNorm, weight and bias under LayerNorm.
	qkln, err := a.bool("qk-layernorm")
	if err != nil {
		return err
	}
	var qkNorms int64
	if qkln {
		qkNorms = 2 * kvch
		if norm == "LayerNorm" {
			qkNorms = 4 * kvch
		}
		m.note("--qk-layernorm: the norms on queries and keys (%d parameters per block) are counted; their activations are not modelled", qkNorms)
	}
	b := func(on bool, n int64) int64 {
		if on {
			return n
		}
		return 0
	}
	normP := 2 * h
	if norm == "RMSNorm" {
		normP = h
	}
	qkvOut := heads*kvch + 2*groups*kvch
	mlp := int64(2)
	if swiglu {
		mlp = 3
	}
	block, ok := sumChecked(2*normP, qkNorms, h*qkvOut, b(qkvBias, qkvOut), heads*kvch*h, b(!noBias, h), mlp*h*ffn, b(!noBias, (mlp-1)*ffn+h))
	if !ok {
		return fmt.Errorf("%s: the model's dimensions overflow a parameter count (check --hidden-size and --ffn-hidden-size)", a.file)
	}
	learned := pe == "learned_absolute"
	emb := vocab*h + b(learned, maxPos*h)
	lb, err1 := mulChecked(layers, block)
	total, ok := sumChecked(emb, lb, normP, b(untied, vocab*h))
	if err1 || !ok {
		return fmt.Errorf("%s: the model's dimensions overflow a parameter count (check --num-layers and --hidden-size)", a.file)
	}
	m.Params = total
	m.Model = Model{Kind: KindTransformer, Arch: ArchGPT, Hidden: h, Layers: layers, Heads: heads, KVHeads: groups, FFN: ffn, Vocab: vocab, SeqLen: seq}
	fm := m.ModelFrom
	fm["hidden"] = a.from("hidden-size", true, "")
	fm["layers"] = a.from("num-layers", true, "")
	fm["heads"] = a.from("num-attention-heads", true, "")
	if gqa {
		fm["kv_heads"] = "--group-query-attention, " + a.from("num-query-groups", groupsGiven, "1")
	} else {
		fm["kv_heads"] = "no --group-query-attention: one group per head"
	}
	if ffnGiven {
		fm["ffn"] = a.from("ffn-hidden-size", true, "")
	} else if swiglu {
		fm["ffn"] = "int(4 × hidden × 2/3 / 64) × 64 with --swiglu (validate_args)"
	} else {
		fm["ffn"] = "4 × --hidden-size (validate_args)"
	}
	fm["seq_len"] = a.from("seq-length", true, "")
	gptArch := norm == "LayerNorm" && learned && maxPos == seq && !untied && !noBias && qkvBias && !swiglu && kvch*heads == h && !qkln
	llamaArch := norm == "RMSNorm" && !learned && untied && noBias && !qkvBias && swiglu && kvch*heads == h && !qkln
	switch {
	case llamaArch:
		m.Model.Arch = ArchLlama
		m.ArchWhy = "RMSNorm, rope, SwiGLU, no biases, untied output layer"
	case gptArch:
		m.ArchWhy = "LayerNorm, learned positions, GELU MLP, biases, output tied to the embedding"
	default:
		if swiglu {
			m.Model.Arch = ArchLlama
		}
		m.LayerList = append(m.LayerList, Layer{Name: "embedding", Params: countOf(emb)})
		for i := int64(0); i < layers; i++ {
			m.LayerList = append(m.LayerList, Layer{Name: fmt.Sprintf("block.%d", i), Params: countOf(block)})
		}
		m.LayerList = append(m.LayerList, Layer{Name: "final_norm", Params: countOf(normP)})
		if untied {
			m.LayerList = append(m.LayerList, Layer{Name: "lm_head", Params: countOf(vocab * h)})
		}
		var why []string
		why = append(why, norm)
		switch {
		case pe == "rope":
			why = append(why, "rope")
		case pe == "none":
			why = append(why, "no position embedding")
		case maxPos != seq:
			why = append(why, fmt.Sprintf("learned positions of --max-position-embeddings %d, not the trained %d", maxPos, seq))
		default:
			why = append(why, "learned positions")
		}
		if swiglu {
			why = append(why, "SwiGLU")
		} else {
			why = append(why, "GELU MLP")
		}
		switch {
		case noBias && qkvBias:
			why = append(why, "biases on QKV only (--add-qkv-bias)")
		case noBias:
			why = append(why, "no biases")
		default:
			why = append(why, "biases")
		}
		if untied {
			why = append(why, "untied output layer")
		} else {
			why = append(why, "output tied to the embedding")
		}
		if qkln {
			why = append(why, "query and key norms (--qk-layernorm)")
		}
		if kvch*heads != h {
			why = append(why, fmt.Sprintf("--kv-channels %d (heads × kv_channels %d, not the hidden size)", kvch, kvch*heads))
		}
		m.ArchWhy = strings.Join(why, ", ")
		blocks := "gpt"
		if swiglu {
			blocks = "llama"
		}
		m.note("this model has %s: the layer list gives its exact parameters; its blocks compute as %s blocks of these dimensions", m.ArchWhy, blocks)
	}
	return nil
}

// mulChecked multiplies non-negative a and b, reporting overflow.
func mulChecked(a, b int64) (int64, bool) {
	if a != 0 && b > math.MaxInt64/a {
		return 0, true
	}
	return a * b, false
}

// gpt2VocabSize is GPT-2's vocabulary, the tokens of gpt2-vocab.json
// (readVocab cites the sources).
const gpt2VocabSize = 50257

// gpt2Vocab reports whether the script's --vocab-file is gpt2-vocab.json
// (in any directory): the GPT-2 vocabulary of Megatron's examples, whose
// size is known. A path the script computes is not known.
func gpt2Vocab(a *mgArgs) bool {
	v, ok, err := a.str("vocab-file", "")
	return err == nil && ok && path.Base(v) == "gpt2-vocab.json"
}

// readVocab finds the padded vocabulary: the tokenizer's size (the
// import's --tokenizer-vocab-size; NullTokenizer's --vocab-size + 1 for its
// EOD token; TikTokenizer's --vocab-size, 131072 unset), rounded up to a
// multiple of --make-vocab-size-divisible-by × TP (_vocab_size_with_padding
// in megatron/training/tokenizer/tokenizer.py at d580efc68a9f0dbf1945f834f6f6200cd01d3343).
func (m *Megatron) readVocab(a *mgArgs) (int64, error) {
	div, divGiven, err := a.int("make-vocab-size-divisible-by", 128, 1, maxVocab)
	if err != nil {
		return 0, err
	}
	tt, ttGiven, err := a.str("tokenizer-type", "")
	if err != nil {
		return 0, err
	}
	vs, vsGiven, err := a.int("vocab-size", 0, 1, maxVocab)
	if err != nil {
		return 0, err
	}
	var orig int64
	var from string
	switch {
	case m.Opt.TokenizerVocab > 0:
		orig, from = m.Opt.TokenizerVocab, fmt.Sprintf("the tokenizer's %d (--tokenizer-vocab-size)", m.Opt.TokenizerVocab)
		if tt == "NullTokenizer" && vsGiven && vs+1 != orig {
			m.note("--tokenizer-vocab-size %d replaces NullTokenizer's --vocab-size %d + 1 (its EOD token)", orig, vs)
		}
	case tt == "NullTokenizer":
		if !vsGiven {
			return 0, a.errAt(a.flags["tokenizer-type"].at, "--tokenizer-type NullTokenizer needs --vocab-size (build_tokenizer asserts it: add it)")
		}
		orig, from = vs+1, fmt.Sprintf("NullTokenizer: --vocab-size %d + 1 (its EOD token)", vs)
	case tt == "TikTokenizer":
		orig = 1 << 17
		from = "TikTokenizer: --vocab-size unset, 131072"
		if vsGiven {
			orig, from = vs, fmt.Sprintf("TikTokenizer: --vocab-size %d", vs)
		}
	case tt == "GPT2BPETokenizer" && gpt2Vocab(a):
		// _GPT2BPETokenizer.vocab_size is len(encoder) of --vocab-file
		// (megatron/training/tokenizer/tokenizer.py at d580efc68a9f0dbf1945f834f6f6200cd01d3343);
		// gpt2-vocab.json is the vocabulary Megatron names for GPT-2
		// (gpt2_tokenization.py PRETRAINED_VOCAB_ARCHIVE_MAP['gpt2'] at
		// 1eff55827898216393aa5960474c3788b0bc40c5), OpenAI's 50,257 tokens (transformers' GPT2Config
		// vocab_size default, configuration_gpt2.py at 01ae98ae).
		orig, from = gpt2VocabSize, fmt.Sprintf("GPT2BPETokenizer: --vocab-file gpt2-vocab.json, GPT-2's %d tokens", gpt2VocabSize)
		m.note("--tokenizer-type GPT2BPETokenizer with --vocab-file gpt2-vocab.json: GPT-2's vocabulary, %d tokens (the file Megatron's gpt2_tokenization.py names for GPT-2; transformers' GPT2Config vocab_size); give --tokenizer-vocab-size N if the file is another", gpt2VocabSize)
	default:
		what := "the tokenizer"
		if ttGiven {
			what = "--tokenizer-type " + ttName(tt)
		}
		hint := ""
		if tt == "GPT2BPETokenizer" {
			hint = fmt.Sprintf("; GPT-2's gpt2-vocab.json has %d", gpt2VocabSize)
		}
		give := "give its size with zerosim's --tokenizer-vocab-size N"
		if vsGiven {
			// build_tokenizer reads args.vocab_size for NullTokenizer and
			// TikTokenizer only; the others take len() of the file
			// (build_tokenizer, megatron/training/tokenizer/tokenizer.py at
			// d580efc68a9f0dbf1945f834f6f6200cd01d3343).
			// qauser32 L6: the script's --vocab-size 128256 read as "not
			// read" without a word.
			line := ""
			if w := a.flags["vocab-size"].at; w.line > 0 {
				line = fmt.Sprintf(" at line %d", w.line)
			}
			give = fmt.Sprintf("the script's --vocab-size %d%s is read by NullTokenizer and TikTokenizer only; if it is the tokenizer's len(), pass zerosim's --tokenizer-vocab-size %d", vs, line, vs)
		}
		msg := fmt.Sprintf("%s reads its vocabulary from a file: %s (the tokenizer's len() before Megatron pads it%s)", what, give, hint)
		if ttGiven {
			return 0, a.errAt(a.flags["tokenizer-type"].at, "%s", msg)
		}
		return 0, fmt.Errorf("%s: %s", a.file, msg)
	}
	padded := (orig + div - 1) / div * div
	if padded > maxVocab {
		return 0, fmt.Errorf("%s: the padded vocabulary %d is larger than %d (check the vocabulary size)", a.file, padded, maxVocab)
	}
	m.PaddedVocabFrom = fmt.Sprintf("%s padded to a multiple of %s", from, a.from("make-vocab-size-divisible-by", divGiven, "128"))
	return padded, nil
}

// readCluster finds the nodes and GPUs per node (the import's --nodes and
// --gpus-per-node, else torchrun's --nnodes and --nproc_per_node), dp =
// world / cp (data_parallel_size = world_size / (TP·PP·CP), validate_args)
// and k.
func (m *Megatron) readCluster(a *mgArgs, la mgLauncher) error {
	o := m.Opt
	cp, cpGiven, err := a.int("context-parallel-size", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	m.CP = int(cp)
	if cp > 1 && m.Model.SeqLen%(2*cp) != 0 {
		return a.errAt(a.flags["context-parallel-size"].at, "--seq-length %d is not a multiple of 2 × --context-parallel-size %d (validate_args asserts it: fix one)", m.Model.SeqLen, cp)
	}
	launcherInt := func(f mgFlag, opt string) (int, string, error) {
		what := mgLaunchFlag(f)
		if len(f.vals) != 1 {
			return 0, "", a.errAt(f.at, "%s takes one value (or give the import's %s)", ttName(f.at.text), opt)
		}
		v := f.vals[0]
		if v.unresolved != "" {
			return 0, "", a.errAt(v, "%s %s: %s is not known here (the script computes it or takes it from outside): pass the import's %s N", what, ttName(v.text), ttName(v.unresolved), opt)
		}
		n, err := strconv.Atoi(v.text)
		if err != nil || n < 1 || n > 65536 {
			return 0, "", a.errAt(v, "%s %s is not a count in 1 to 65536 (elastic ranges are not read: pass the import's %s N)", what, ttName(v.text), opt)
		}
		if la.sbatchLine > 0 && v.line == la.sbatchLine && opt == "--nodes" {
			return n, fmt.Sprintf("%s %d (Slurm's node count, #SBATCH --nodes at line %d)", what, n, v.line), nil
		}
		if la.sbatchGPULine > 0 && v.line == la.sbatchGPULine && opt == "--gpus-per-node" {
			return n, fmt.Sprintf("%s %d (Slurm's GPUs per node, #SBATCH --gpus-per-node at line %d)", what, n, v.line), nil
		}
		return n, fmt.Sprintf("%s %d", what, n), nil
	}
	m.GPUsPerNode, m.GPUsFrom = DefaultMegatronGPUsPerNode, "8 unless given (Megatron's example scripts)"
	switch {
	case o.GPUsPerNode > 0:
		m.GPUsPerNode, m.GPUsFrom = o.GPUsPerNode, "--gpus-per-node"
	case la.hasP:
		n, from, err := launcherInt(la.nproc, "--gpus-per-node")
		if err != nil {
			return err
		}
		m.GPUsPerNode, m.GPUsFrom = n, from
	}
	switch {
	case o.Nodes > 0:
		m.Nodes, m.NodesFrom = o.Nodes, "--nodes"
	case la.hasN:
		n, from, err := launcherInt(la.nnodes, "--nodes")
		if err != nil {
			return err
		}
		m.Nodes, m.NodesFrom = n, from
	}
	if o.Nodes > 0 && la.hasN && len(la.nnodes.vals) == 1 && la.nnodes.vals[0].unresolved == "" && la.nnodes.vals[0].text != strconv.Itoa(o.Nodes) {
		m.note("--nodes %d replaces the script's %s %s", o.Nodes, ttName(mgLaunchFlag(la.nnodes)), ttName(la.nnodes.vals[0].text))
	}
	cpFrom := a.from("context-parallel-size", cpGiven, "1")
	if m.Nodes > 0 {
		world := int64(m.Nodes) * int64(m.GPUsPerNode)
		if world%cp != 0 {
			return a.errAt(a.flags["context-parallel-size"].at, "--context-parallel-size %d does not divide the %d GPUs (validate_args asserts world_size %% (TP·PP·CP) == 0: fix the node count or cp)", cp, world)
		}
		m.DP = int(world / cp)
		m.set("parallelism.dp", strconv.Itoa(m.DP), fmt.Sprintf("%d × %d GPUs / context-parallel %d (validate_args: data_parallel_size = world_size / (TP·PP·CP))", m.Nodes, m.GPUsPerNode, cp))
	}
	m.set("parallelism.cp", strconv.FormatInt(cp, 10), cpFrom)
	distOpt, err := a.bool("use-distributed-optimizer")
	if err != nil {
		return err
	}
	if distOpt {
		m.set("parallelism.zero_stage", "1", "--use-distributed-optimizer: optimizer state and fp32 main parameters sharded over the data-parallel ranks (megatron/core/optimizer/distrib_optimizer.py)")
	} else {
		m.set("parallelism.zero_stage", "0", "no --use-distributed-optimizer: every rank keeps the whole optimizer state (DDP)")
	}
	k, kGiven, err := a.int("num-distributed-optimizer-instances", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	if kGiven && k > 1 && !distOpt {
		return a.errAt(a.flags["num-distributed-optimizer-instances"].at, "--num-distributed-optimizer-instances %d without --use-distributed-optimizer has no sharded state to copy (add --use-distributed-optimizer)", k)
	}
	if k > 1 && m.DP > 0 && (int64(m.DP)*cp)%k != 0 {
		return a.errAt(a.flags["num-distributed-optimizer-instances"].at, "--num-distributed-optimizer-instances %d does not divide dp × cp = %d (initialize_model_parallel asserts it, megatron/core/parallel_state.py at d580efc6: use a divisor)", k, int64(m.DP)*cp)
	}
	if distOpt {
		m.set("parallelism.k", strconv.FormatInt(k, 10), a.from("num-distributed-optimizer-instances", kGiven, "1")+": copies of the sharded state, each over dp·cp/k ranks")
	}
	return nil
}

// readBatch reads the micro-batch and the accumulation steps: global
// batch = micro × dp × GA (num_microbatches_calculator.py asserts the
// division at d580efc6).
func (m *Megatron) readBatch(a *mgArgs) error {
	mb, given, err := a.int("micro-batch-size", 0, 1, 1<<20)
	if err != nil {
		return err
	}
	if !given {
		return fmt.Errorf("%s: --micro-batch-size is missing (validate_args asserts it: add it)%s", a.file, a.inSkipped("micro-batch-size"))
	}
	m.MicroBatch = mb
	m.set("training.micro_batch", strconv.FormatInt(mb, 10), a.from("micro-batch-size", true, ""))
	gb, gbGiven, err := a.int("global-batch-size", 0, 1, 1<<40)
	if err != nil {
		return err
	}
	if rb, ok := a.flags["rampup-batch-size"]; ok {
		a.used["rampup-batch-size"] = true
		m.note("%s: the batch ramp-up is not modelled; the step is the full --global-batch-size's", rb.show("rampup-batch-size"))
	}
	if !gbGiven {
		m.set("training.grad_accum", "1", "--global-batch-size unset: micro × dp (validate_args), no accumulation")
		m.GradAccum = 1
		return nil
	}
	m.GlobalBatch = gb
	if m.DP == 0 {
		return nil
	}
	per := mb * int64(m.DP)
	if gb%per != 0 {
		return a.errAt(a.flags["global-batch-size"].at, "--global-batch-size %d is not a multiple of micro-batch %d × dp %d = %d (num_microbatches_calculator.py asserts it: fix the batch or the node count)", gb, mb, m.DP, per)
	}
	ga := gb / per
	if ga > 4096 {
		return a.errAt(a.flags["global-batch-size"].at, "--global-batch-size %d makes %d accumulation steps, more than zerosim's 4096 (use more nodes or a larger micro-batch)", gb, ga)
	}
	m.GradAccum = ga
	m.set("training.grad_accum", strconv.FormatInt(ga, 10), fmt.Sprintf("--global-batch-size %d / (micro-batch %d × dp %d)", gb, mb, m.DP))
	return nil
}

// readPrecision reads --bf16/--fp16 and the gradient reduction dtype
// (validate_args at d580efc6: bf16 sets accumulate_allreduce_grads_in_fp32
// unless --grad-reduce-in-bf16).
func (m *Megatron) readPrecision(a *mgArgs) error {
	bf16, err := a.bool("bf16")
	if err != nil {
		return err
	}
	fp16, err := a.bool("fp16")
	if err != nil {
		return err
	}
	inBF16, err := a.bool("grad-reduce-in-bf16")
	if err != nil {
		return err
	}
	acc, err := a.bool("accumulate-allreduce-grads-in-fp32")
	if err != nil {
		return err
	}
	if err := m.readPrecisionFlags(a); err != nil {
		return err
	}
	switch {
	case bf16 && fp16:
		return a.errAt(a.flags["fp16"].at, "--fp16 and --bf16 are both given (validate_args asserts not both: keep one)")
	case bf16:
		m.ParamBytes = 2
		m.set("training.param_dtype", "bf16", "--bf16")
		// validate_args under --bf16 (megatron/training/arguments.py
		// lines 587-594 at d580efc6, 1209-1216 at d98e8a64, 467-472 at
		// swiss-ai/Megatron-LM 59ac8f14, which has no
		// --grad-reduce-in-bf16): it refuses --main-grads-dtype bf16
		// beside --accumulate-allreduce-grads-in-fp32, turns
		// accumulate_allreduce_grads_in_fp32 off under
		// --grad-reduce-in-bf16 and on only when main_grads_dtype is fp32
		// (the default). training.py passes it as the DDP's
		// grad_reduce_in_fp32 (training.py:1001 at d580efc6), and the grad
		// buffer is fp32 with it and the parameters' dtype without
		// (distributed_data_parallel.py:124 there): the buffer and its
		// reduce-scatter in bf16.
		switch {
		case m.pao.mainGrads == "bf16" && acc:
			return a.errAt(a.flags["main-grads-dtype"].at, "--main-grads-dtype bf16 beside --accumulate-allreduce-grads-in-fp32 (validate_args asserts \"--main-grads-dtype can only be fp32 when --accumulate-allreduce-grads-in-fp32 is set\", megatron/training/arguments.py:587-589 at d580efc6: remove one)")
		case inBF16:
			m.pao.grad16 = true
			m.set("training.reduce_dtype", "param_dtype", "--grad-reduce-in-bf16: gradients accumulated and reduced in bf16")
		case m.pao.mainGrads == "bf16":
			m.pao.grad16 = true
			m.set("training.reduce_dtype", "param_dtype", "--main-grads-dtype bf16: gradients accumulated and reduced in bf16 (validate_args leaves accumulate_allreduce_grads_in_fp32 off)")
		default:
			m.set("training.reduce_dtype", "fp32", "--bf16 without --grad-reduce-in-bf16: accumulate_allreduce_grads_in_fp32 (validate_args)")
		}
	case fp16:
		m.ParamBytes = 2
		m.set("training.param_dtype", "fp16", "--fp16")
		if acc {
			m.set("training.reduce_dtype", "fp32", "--accumulate-allreduce-grads-in-fp32")
		} else {
			m.pao.grad16 = true
			m.set("training.reduce_dtype", "param_dtype", "--fp16: gradients reduced in fp16")
		}
		m.note("--fp16: dynamic loss scaling (its overflow checks and skipped steps) is not modelled")
	default:
		m.ParamBytes = 4
		m.set("training.param_dtype", "fp32", "neither --bf16 nor --fp16: fp32")
		m.set("training.reduce_dtype", "param_dtype", "fp32 parameters: gradients reduced in fp32")
	}
	if err := m.checkPrecisionAware(a); err != nil {
		return err
	}
	f8, given, err := a.str("fp8-format", "")
	if err != nil {
		return err
	}
	if given {
		if err := a.oneOf("fp8-format", f8, "e4m3", "hybrid"); err != nil {
			return err
		}
		if !bf16 {
			m.note("--fp8-format without --bf16: zerosim's fp8 recipe keeps bf16 outside the GEMMs")
		}
		// --fp8-recipe (megatron/training/arguments.py at d580efc6:
		// delayed, the default, tensorwise or mxfp8; blockwise in later
		// versions): tensorwise is TE's Float8CurrentScaling.
		recipe, rk, err := a.str("fp8-recipe", "delayed")
		if err != nil {
			return err
		}
		if err := a.oneOf("fp8-recipe", recipe, "delayed", "tensorwise", "mxfp8", "blockwise"); err != nil {
			return err
		}
		switch recipe {
		case "tensorwise":
			m.set("training.fp8", string(FP8TECurrent), a.from("fp8-format", true, "")+", --fp8-recipe tensorwise: Transformer Engine's current-scaling GEMMs")
		default:
			m.set("training.fp8", string(FP8TE), a.from("fp8-format", true, "")+": Transformer Engine's delayed-scaling GEMMs")
			if rk && recipe != "delayed" {
				m.note("--fp8-recipe %s (block-scaled fp8) is modelled as delayed scaling's per-tensor casts", recipe)
			}
		}
		// --fp8-param-gather builds the model under Transformer Engine's
		// fp8_model_init (pretrain_gpt.py lines 82-93 at core_v0.9.0
		// 86197976) and validate_args asserts the distributed optimizer
		// (arguments.py lines 314-316 there; d98e8a64 also takes FSDP,
		// which the importer refuses): training.fp8_params
		// (scenarios.resolveFP8Params).
		pg, err := a.bool("fp8-param-gather")
		if err != nil {
			return err
		}
		if pg {
			if a.flags["use-distributed-optimizer"].at.text == "" {
				return a.errAt(a.flags["fp8-param-gather"].at, "--fp8-param-gather needs --use-distributed-optimizer (validate_args asserts it: add it or remove this)")
			}
			m.set("training.fp8_params", "true", "--fp8-param-gather: Transformer Engine's fp8 primary weights (fp8_model_init), all-gathered in fp8")
		}
	}
	return nil
}

// readOptimizer reads --optimizer and its parameters. Megatron's adam is
// Transformer Engine's (or Apex's) FusedAdam with its default
// adam_w_mode=True, decoupled weight decay (megatron/core/optimizer/
// __init__.py at d580efc6).
func (m *Megatron) readOptimizer(a *mgArgs) error {
	opt, given, err := a.str("optimizer", "adam")
	if err != nil {
		return err
	}
	if err := a.oneOf("optimizer", opt, "adam", "sgd"); err != nil {
		return err
	}
	if opt == "sgd" {
		return a.errAt(a.flags["optimizer"].at, "--optimizer sgd is not modelled (zerosim's optimizers are Adam and AdamW, two fp32 states): use --optimizer adam")
	}
	m.set("training.optimizer", "adamw", a.from("optimizer", given, "adam")+": FusedAdam with adam_w_mode (decoupled weight decay)")
	if lr, given, err := a.float("lr", 0, 0, math.MaxFloat64); err != nil {
		return err
	} else if given && lr > 0 {
		m.set("training.lr", fmtFloat(lr), a.from("lr", true, ""))
	}
	for _, p := range []struct {
		flag, key string
		def, hi   float64
	}{
		// The flags' defaults: megatron/training/arguments.py:1469
		// (--weight-decay 0.01) and 1480-1486 (--adam-beta1 0.9,
		// --adam-beta2 0.999, --adam-eps 1e-08) at MegatronCommit.
		{"adam-beta1", "beta1", 0.9, math.Nextafter(1, 0)},
		{"adam-beta2", "beta2", 0.999, math.Nextafter(1, 0)},
		{"adam-eps", "eps", 1e-8, math.MaxFloat64},
		{"weight-decay", "weight_decay", 0.01, math.MaxFloat64},
	} {
		lo := 0.0
		if p.key == "eps" {
			lo = math.SmallestNonzeroFloat64
		}
		v, given, err := a.float(p.flag, p.def, lo, p.hi)
		if err != nil {
			return err
		}
		m.set("training."+p.key, fmtFloat(v), a.from(p.flag, given, fmtFloat(p.def)))
	}
	if err := m.readPrecisionAware(a); err != nil {
		return err
	}
	clip, given, err := a.float("clip-grad", 1.0, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	if clip > 0 {
		m.set("training.grad_clip", "norm", a.from("clip-grad", given, "1.0")+": clip_grad_norm over the global L2 norm every step")
		if clip != DefaultMaxGradNorm {
			m.set("training.max_grad_norm", fmtFloat(clip), a.from("clip-grad", given, "1.0")+": the max norm")
		}
	} else {
		m.set("training.grad_clip", "none", a.from("clip-grad", given, "1.0")+": no clipping")
	}
	return nil
}

// readActivationOffload maps Megatron-Core's activation CPU offloading:
// --cpu-offloading-num-layers N (> 0 turns --cpu-offloading on,
// megatron/training/arguments.py:1950-1951 at
// d98e8a64ddf34856e74b24714e3bedb2f5a39553) to
// training.activation_offload_layers, which refuses what
// TransformerConfig refuses beside it (num_layers ≥ the model's,
// recomputation: actoffload.go). --cpu-offloading alone offloads no
// layer (Transformer Engine's synchronizer with num_offloaded_layers 0);
// --cpu-offloading-weights is a no-op in Transformer Engine 2.x
// (get_cpu_offload_context: "Offloading weights is deprecated",
// transformer_engine/pytorch/cpu_offload.py:826-833 at NVIDIA/
// TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b), and
// --no-cpu-offloading-activations with it offloads nothing.
func (m *Megatron) readActivationOffload(a *mgArgs) error {
	on, err := a.bool("cpu-offloading")
	if err != nil {
		return err
	}
	n, given, err := a.int("cpu-offloading-num-layers", 0, 0, max(m.Model.Layers-1, 0))
	if err != nil {
		return err
	}
	noAct, err := a.bool("no-cpu-offloading-activations")
	if err != nil {
		return err
	}
	// ArgumentGroupFactory names a store_false flag --no-* and
	// --disable-* (megatron/training/argument_utils.py:191-195 at d98e8a64).
	disAct, err := a.bool("disable-cpu-offloading-activations")
	if err != nil {
		return err
	}
	noAct = noAct || disAct
	if _, err := a.bool("cpu-offloading-weights"); err != nil {
		return err
	}
	switch {
	case !given || n == 0:
		if on {
			m.note("--cpu-offloading without --cpu-offloading-num-layers offloads no layer")
		}
	case noAct:
		m.note("--no-cpu-offloading-activations: Transformer Engine offloads nothing (weights offloading is a no-op)")
	default:
		m.set("training.activation_offload_layers", strconv.FormatInt(n, 10), a.flags["cpu-offloading-num-layers"].show("cpu-offloading-num-layers")+": the first "+strconv.FormatInt(n, 10)+" layers' saved activations to pinned host memory (Transformer Engine's offload context)")
	}
	return nil
}

// readRecompute maps Megatron's activation recomputation
// (TransformerBlock._checkpointed_forward, megatron/core/transformer/
// transformer_block.py at d580efc6): selective recomputes core attention;
// full with method uniform checkpoints groups of recompute_num_layers
// blocks, with method block the first recompute_num_layers blocks.
// Megatron's CheckpointFunction reruns the whole block:
// recompute_early_stop false.
func (m *Megatron) readRecompute(a *mgArgs) error {
	ra, err := a.bool("recompute-activations")
	if err != nil {
		return err
	}
	g, gGiven, err := a.str("recompute-granularity", "")
	if err != nil {
		return err
	}
	if ra {
		// validate_args: --recompute-activations sets selective.
		g, gGiven = "selective", true
	}
	meth, mGiven, err := a.str("recompute-method", "")
	if err != nil {
		return err
	}
	n, nGiven, err := a.int("recompute-num-layers", 0, 0, m.Model.Layers)
	if err != nil {
		return err
	}
	if !gGiven {
		m.set("training.recompute", "none", "no --recompute-granularity")
		return nil
	}
	if err := a.oneOf("recompute-granularity", g, "full", "selective"); err != nil {
		return err
	}
	src := a.from("recompute-granularity", true, "")
	if ra {
		src = "--recompute-activations"
	}
	if g == "selective" {
		m.set("training.recompute", "selective", src+": core attention recomputed (Korthikanti et al. 2022)")
		return nil
	}
	if !mGiven {
		return a.errAt(a.flags["recompute-granularity"].at, "--recompute-granularity full needs --recompute-method uniform or block (TransformerConfig asserts it: add it)")
	}
	if err := a.oneOf("recompute-method", meth, "uniform", "block"); err != nil {
		return err
	}
	if !nGiven {
		return a.errAt(a.flags["recompute-method"].at, "--recompute-granularity full needs --recompute-num-layers (TransformerConfig asserts it: add it)")
	}
	L := m.Model.Layers
	src += ", " + a.flags["recompute-method"].show("recompute-method") + ", " + a.flags["recompute-num-layers"].show("recompute-num-layers")
	switch {
	case meth == "uniform":
		m.set("training.recompute", "full", src+": every block recomputed")
		if n > 1 {
			m.note("--recompute-method uniform --recompute-num-layers %d keeps one input per %d blocks; zerosim keeps one per block", n, n)
		}
	case n == 0:
		m.set("training.recompute", "none", src+": no block recomputed")
	case n >= L:
		m.set("training.recompute", "full", src+": every block recomputed")
	default:
		every := L / n
		m.set("training.recompute", "full", src)
		m.set("training.recompute_every", strconv.FormatInt(every, 10), fmt.Sprintf("%d of %d blocks recomputed", n, L))
		if L%n != 0 {
			m.note("--recompute-method block --recompute-num-layers %d recomputes the first %d of %d blocks; zerosim recomputes every %d-th block (%d of them)", n, n, L, every, (L+every-1)/every)
		} else {
			m.note("--recompute-method block recomputes the first %d blocks; zerosim recomputes every %d-th block, the same count", n, every)
		}
	}
	m.set("training.recompute_early_stop", "false", "Megatron's CheckpointFunction reruns the whole block (megatron/core/tensor_parallel/random.py)")
	return nil
}

// noteTorchSoftmax notes where Megatron's own DotProductAttention keeps
// more of its softmax than the fused kernel's 16-bit output, which memory
// counts (2·a·s²·b): FusedScaleMaskSoftmax (megatron/core/fusions/
// fused_softmax.py @ 550f9c44589efb85af6c5a11da8fbc8c3491b636) runs
// ScaledUpperTriangMaskedSoftmax, which saves softmax_results in the
// input's dtype, only under masked_softmax_fusion and for 16 < sk ≤ 4096
// (is_kernel_available); otherwise forward_torch_softmax runs
// torch.nn.Softmax, whose result softmax and its product with the
// all-masked-row factor keep, and that product, which the next bmm keeps
// (4·a·s²·b), or with softmax_in_fp32 (--attention-softmax-in-fp32) the
// fp32 result and the 16-bit copy .bfloat16() makes (6·a·s²·b).
func (m *Megatron) noteTorchSoftmax(a *mgArgs) error {
	noFusion, err := a.bool("no-masked-softmax-fusion")
	if err != nil {
		return err
	}
	fp32, err := a.bool("attention-softmax-in-fp32")
	if err != nil {
		return err
	}
	var why string
	switch {
	case noFusion:
		why = "--no-masked-softmax-fusion"
	case m.Model.SeqLen > 4096:
		why = fmt.Sprintf("--seq-length %d is above the fused softmax kernel's 4096", m.Model.SeqLen)
	default:
		return nil
	}
	kept := "its result and the product with the all-masked-row factor, 4·a·s²·b per block"
	if fp32 {
		kept = "the fp32 result and its 16-bit copy (--attention-softmax-in-fp32), 6·a·s²·b per block"
	}
	m.note("%s: Megatron's FusedScaleMaskSoftmax falls back to torch.softmax (fused_softmax.py at 550f9c44), which keeps %s; zerosim counts the fused kernel's 16-bit softmax output, 2·a·s²·b, so eager attention's activations are understated", why, kept)
	return nil
}

// readAttention maps --transformer-impl and --attention-backend to the
// attention kernel, as stack: megatron does (docs/stacks.md).
func (m *Megatron) readAttention(a *mgArgs) error {
	impl, implGiven, err := a.str("transformer-impl", "transformer_engine")
	if err != nil {
		return err
	}
	if err := a.oneOf("transformer-impl", impl, "transformer_engine", "local"); err != nil {
		return err
	}
	be, beGiven, err := a.str("attention-backend", "auto")
	if err != nil {
		return err
	}
	if err := a.oneOf("attention-backend", be, "flash", "fused", "unfused", "local", "auto"); err != nil {
		return err
	}
	flashArg, err := a.bool("use-flash-attn")
	if err != nil {
		return err
	}
	legacy, err := a.bool("use-legacy-models")
	if err != nil {
		return err
	}
	// --use-flash-attn is read only by the legacy models' ParallelAttention
	// ("self.use_flash_attn = args.use_flash_attn and attention_type ==
	// AttnType.self_attn and self.attn_mask_type == AttnMaskType.causal",
	// megatron/legacy/model/transformer.py lines 541-543 at MegatronCommit,
	// FlashSelfAttention over flash-attn 1's flash_attn_unpadded_func or,
	// failing that import, flash-attn 2's flash_attn_varlen_func, lines
	// 52-59), built only under --use-legacy-models (pretrain_gpt.py
	// lines 86-87). Megatron-core's GPTModel never reads it: the local
	// spec's core_attention is DotProductAttention (megatron/core/models/
	// gpt/gpt_layer_specs.py lines 232 and 254 at MegatronCommit), and Transformer
	// Engine picks its own backend. At d98e8a64ddf34856e74b24714e3bedb2f5a39553
	// the flag is declared (megatron/training/arguments.py line 2910) and
	// read nowhere: the legacy models went in 8de8238844 ("remove legacy
	// tranformer and modules", 2026-05-07).
	flashLegacy := flashArg && legacy
	if legacy {
		m.note("--use-legacy-models: the legacy GPTModel (megatron/legacy/model, removed after core_v0.12.0) is imported as Megatron-core's, but for the flash attention --use-flash-attn gives it")
	}
	if flashArg && !legacy {
		m.note("--use-flash-attn is read only by the legacy models (--use-legacy-models; megatron/legacy/model/transformer.py at %s, removed after it): Megatron-core's attention does not change", MegatronCommit[:8])
	}
	from := a.from("transformer-impl", implGiven, "transformer_engine") + ", " + a.from("attention-backend", beGiven, "auto")
	if impl == "local" {
		m.set("training.transformer_impl", "local", a.from("transformer-impl", implGiven, "transformer_engine")+": Megatron-core's own modules (get_gpt_layer_local_spec), torch.nn.RMSNorm for RMSNorm")
		if m.Model.Arch == ArchLlama {
			// A dated fact the arguments do not carry: the PyTorch
			// under Megatron-LM. d98e8a64 builds on NGC PyTorch 26.06
			// (docker/.ngc_version.dev; the 26.04 container is PyTorch
			// 2.12.0a0+0291f960b6, NVIDIA-NeMo/Megatron-Bridge
			// docs/releases/software-versions.md at 067f987d) and
			// 25.09 (.ngc_version.lts); from 2.9 torch.nn.RMSNorm runs
			// aten::_fused_rms_norm (NormATen), before it the composite
			// (norm_impl: fp32).
			m.set("training.norm_impl", string(NormATen), "--normalization RMSNorm under --transformer-impl local: torch.nn.RMSNorm, aten::_fused_rms_norm on PyTorch 2.9 or later (Megatron-LM's dev container, NGC PyTorch 26.06); set fp32 for PyTorch 2.8 or earlier")
		}
	}
	switch {
	case impl == "local" || be == "local":
		att, kernel := localAttention(flashLegacy)
		if att == AttentionFlash {
			m.set("training.attention_kernel", string(kernel), from+", --use-legacy-models --use-flash-attn: the legacy ParallelAttention's FlashSelfAttention, flash-attn 2")
			break
		}
		m.set("training.attention", string(att), from+": Megatron's own DotProductAttention materialises the scores")
		m.set("training.attention_kernel", string(kernel), from)
		if err := m.noteTorchSoftmax(a); err != nil {
			return err
		}
	case be == "auto":
		m.set("training.attention_kernel", "te", from+": Transformer Engine chooses (cuDNN from Hopper on, flash-attn 2 before)")
	case be == "fused" && GPUTarget(m.Opt.GPU) != "":
		// ROCm's Transformer Engine has no cuDNN: its fused attention
		// runs Composable Kernel's kernel, else AOTriton's
		// (nvte_get_fused_attn_backend in transformer_engine/common/
		// fused_attn_rocm/fused_attn.cpp at ROCm/TransformerEngine
		// 006edee929dca7cd33c771204ad316d3c0874820), flash kernels
		// zerosim times as fa2 (cudnn is refused on AMD: cuDNNOnAMD).
		m.set("training.attention_kernel", "fa2", from+": on "+m.Opt.GPU+" ROCm's Transformer Engine fused attention, CK or AOTriton flash kernels (no cuDNN on AMD)")
	case be == "fused":
		m.set("training.attention_kernel", "cudnn", from+": Transformer Engine's cuDNN fused attention")
	case be == "flash":
		m.set("training.attention_kernel", "fa2", from+": Transformer Engine's flash-attn 2")
	case be == "unfused":
		m.set("training.attention", "eager", from+": Transformer Engine's UnfusedDotProductAttention materialises the scores")
		m.set("training.attention_kernel", "eager", from)
	}
	// --hidden-dropout and --attention-dropout default to 0.1
	// (megatron/training/arguments.py:1465-1467 at MegatronCommit).
	hd, hdGiven, err := a.float("hidden-dropout", 0.1, 0, math.Nextafter(1, 0))
	if err != nil {
		return err
	}
	ad, adGiven, err := a.float("attention-dropout", 0.1, 0, math.Nextafter(1, 0))
	if err != nil {
		return err
	}
	m.set("training.dropout", fmtFloat(hd), a.from("hidden-dropout", hdGiven, "0.1"))
	if ad != hd {
		m.note("%s differs from the hidden dropout; zerosim has one dropout rate", a.from("attention-dropout", adGiven, "0.1"))
	}
	return nil
}

// readComm maps Megatron's DDP and distributed optimizer overlap flags.
func (m *Megatron) readComm(a *mgArgs) error {
	ogr, err := a.bool("overlap-grad-reduce")
	if err != nil {
		return err
	}
	opg, err := a.bool("overlap-param-gather")
	if err != nil {
		return err
	}
	distOpt := a.flags["use-distributed-optimizer"].at.text != ""
	if opg && !distOpt {
		return a.errAt(a.flags["overlap-param-gather"].at, "--overlap-param-gather needs --use-distributed-optimizer (validate_args asserts it: add it or remove this)")
	}
	if opg && !ogr {
		return a.errAt(a.flags["overlap-param-gather"].at, "--overlap-param-gather needs --overlap-grad-reduce (validate_args asserts it: add it)")
	}
	m.OverlapGradReduce = ogr
	bs, bsGiven, err := a.int("ddp-bucket-size", 0, 1, 1<<40)
	if err != nil {
		return err
	}
	// --ddp-num-buckets n: bucket_size = num_parameters // n, the model's
	// parameters on the rank (megatron/training/training.py:1004-1009 at
	// d580efc6, which also asserts it is not given with --ddp-bucket-size
	// and is above 0).
	nb, nbGiven, err := a.int("ddp-num-buckets", 0, 1, 1<<40)
	if err != nil {
		return err
	}
	if nbGiven && bsGiven {
		return a.errAt(a.flags["ddp-num-buckets"].at, "--ddp-num-buckets beside --ddp-bucket-size (training.py asserts \"Cannot specify both --ddp-num-buckets and --ddp-bucket-size\": remove one)")
	}
	if ogr {
		m.set("communication.overlap", "true", "--overlap-grad-reduce: each bucket's reduction starts when its gradients are ready")
		var from string
		if bsGiven {
			from = fmt.Sprintf("--ddp-bucket-size %d parameters × %d bytes", bs, m.ParamBytes)
		} else if nbGiven {
			bs = max(m.Params/nb, 1)
			from = fmt.Sprintf("--ddp-num-buckets %d: %d parameters // %d × %d bytes (training.py)", nb, m.Params, nb, m.ParamBytes)
		} else {
			// Left unset: stack megatron derives Megatron-Core's default
			// from the dp the scenario runs at (MegatronDefaultBucket),
			// so a user who changes dp gets Megatron's bucket for it,
			// not the one for the dp imported here.
			at := "the scenario's dp"
			if m.DP > 0 {
				if b, over := mulChecked(max(int64(MegatronBucketParams), MegatronBucketParamsPerDP*int64(m.DP)), m.ParamBytes); !over {
					at = fmt.Sprintf("the scenario's dp (%s at dp %d)", bucketYAML(b), m.DP)
				}
			}
			m.set("communication.bucket_size", "", fmt.Sprintf("--ddp-bucket-size unset: stack megatron takes Megatron-Core's max(40,000,000, 1,000,000 × dp) parameters × %d bytes at %s (distributed_data_parallel.py)", m.ParamBytes, at))
		}
		if bs > 0 {
			b, over := mulChecked(bs, m.ParamBytes)
			if over {
				return a.errAt(a.flags["ddp-bucket-size"].at, "--ddp-bucket-size %d overflows a byte count (fix it)", bs)
			}
			m.set("communication.bucket_size", bucketYAML(b), from)
		}
	} else {
		m.set("communication.overlap", "false", "no --overlap-grad-reduce: the whole gradient buffer is reduced after backward (bucket_size None, distributed_data_parallel.py)")
		if bsGiven {
			m.note("--ddp-bucket-size %d has no effect without --overlap-grad-reduce (one bucket)", bs)
		}
		if nbGiven {
			m.note("--ddp-num-buckets %d has no effect without --overlap-grad-reduce (one bucket)", nb)
		}
	}
	if distOpt {
		m.set("communication.zero1_allreduce", "false", "--use-distributed-optimizer: gradients reduce-scattered, parameters all-gathered after the step")
		if opg {
			m.set("communication.overlap_param_gather", "true", "--overlap-param-gather: each bucket's all-gather overlaps the next forward")
		} else {
			m.set("communication.overlap_param_gather", "false", "no --overlap-param-gather: parameters gathered after the optimizer step")
		}
	}
	m.set("communication.padding", "megatron", "Megatron-Core's param-and-grad buffer (param_and_grad_buffer.py)")
	if avg, err := a.bool("ddp-average-in-collective"); err != nil {
		return err
	} else if avg {
		m.note("--ddp-average-in-collective: NCCL's average inside the collective costs as the sum zerosim models")
	}
	return nil
}

// Flags with no effect on a step's time or memory: logging, checkpoints,
// data and tokenizer paths, evaluation, learning-rate schedule,
// initialisation, launch plumbing.
var mgIgnored = map[string]bool{}

// Flags that change time or memory in ways zerosim does not model.
var mgUnmodelled = map[string]string{
	"sequence-parallel": "needs tensor parallelism; Megatron turns it off at TP 1 (validate_args)",
	// The native fused loss (megatron/core/fusions/fused_cross_entropy.py
	// at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553) runs
	// VocabParallelCrossEntropy's steps and keeps its tensors (memory's
	// headParts); only its kernel time differs.
	"cross-entropy-loss-fusion": "its memory is the unfused vocab-parallel cross-entropy's (the native fused kernel keeps the same fp32 softmax); its kernel time is not modelled",
	// GPTModel stores fp16_lm_cross_entropy and never reads it:
	// compute_language_model_loss (megatron/core/models/common/
	// language_module/language_module.py at d98e8a64) calls a loss that
	// upcasts with .float() whatever it says.
	"fp16-lm-cross-entropy":                    "Megatron Core's GPTModel upcasts the logits to fp32 in its loss whatever this flag says",
	"manual-gc":                                "host time is not modelled",
	"empty-unused-memory-level":                "the allocator's cache emptying is not modelled",
	"overlap-param-gather-with-optimizer-step": "needs interleaved pipeline parallelism",
	// Read by readPrecisionFlags (megatron_precision.go); known here for
	// missing's near-miss check, which can run first.
	"main-grads-dtype":                       "",
	"main-params-dtype":                      "",
	"exp-avg-dtype":                          "",
	"exp-avg-sq-dtype":                       "",
	"moe-router-topk":                        "MoE is not imported",
	"moe-ffn-hidden-size":                    "MoE is not imported",
	"moe-shared-expert-intermediate-size":    "MoE is not imported",
	"moe-router-load-balancing-type":         "MoE is not imported",
	"moe-aux-loss-coeff":                     "MoE is not imported",
	"moe-grouped-gemm":                       "MoE is not imported",
	"moe-token-dispatcher-type":              "MoE is not imported",
	"num-layers-per-virtual-pipeline-stage":  "needs pipeline parallelism",
	"tp-comm-overlap":                        "needs tensor parallelism",
	"use-flash-attn":                         "",
	"no-gradient-accumulation-fusion":        "the fused weight-gradient accumulation into main_grad is what zerosim models",
	"ddp-pad-buckets-for-high-nccl-busbw":    "bucket padding for NCCL is not modelled",
	"check-for-nan-in-loss-and-grad":         "",
	"use-mcore-models":                       "",
	"recompute-modules":                      "selective recompute is modelled as core attention's",
	"calculate-per-token-loss":               "",
	"fp8-amax-history-len":                   "",
	"fp8-amax-compute-algo":                  "",
	"fp8-param-gather":                       "",
	"fp8-recipe":                             "", // read with --fp8-format; without it no fp8 runs
	"first-last-layers-bf16":                 "every block's GEMMs are modelled in fp8",
	"defer-embedding-wgrad-compute":          "needs pipeline parallelism",
	"qk-layernorm":                           "",
	"apply-layernorm-1p":                     "",
	"rotary-base":                            "",
	"rotary-percent":                         "",
	"rotary-interleaved":                     "",
	"rotary-seq-len-interpolation-factor":    "",
	"use-rope-scaling":                       "",
	"rope-scaling-factor":                    "",
	"norm-epsilon":                           "",
	"init-method-std":                        "",
	"no-masked-softmax-fusion":               "",
	"no-bias-gelu-fusion":                    "",
	"no-bias-swiglu-fusion":                  "",
	"no-bias-dropout-fusion":                 "",
	"no-rope-fusion":                         "",
	"no-persist-layer-norm":                  "",
	"attention-softmax-in-fp32":              "",
	"cp-comm-type":                           "context parallelism is modelled as ring attention (p2p)",
	"distributed-backend":                    "",
	"num-workers":                            "",
	"no-create-attention-mask-in-dataloader": "",
}

func init() {
	for _, f := range strings.Fields(`
lr-decay-style lr-decay-iters lr-decay-samples lr-warmup-fraction lr-warmup-iters lr-warmup-samples lr-warmup-init
min-lr decoupled-lr decoupled-min-lr lr-wsd-decay-style lr-wsd-decay-iters lr-wsd-decay-samples start-weight-decay
end-weight-decay weight-decay-incr-style override-opt_param-scheduler use-checkpoint-opt_param-scheduler
train-iters train-samples exit-interval exit-duration-in-mins exit-signal-handler exit-on-missing-checkpoint
log-interval log-params-norm log-num-zeros-in-grad log-throughput log-timers-to-tensorboard log-validation-ppl-to-tensorboard
log-memory-to-tensorboard log-world-size-to-tensorboard log-loss-scale-to-tensorboard log-batch-size-to-tensorboard
log-progress log-straggler log-energy timing-log-level timing-log-option tensorboard-dir tensorboard-log-interval
tensorboard-queue-size wandb-project wandb-exp-name wandb-save-dir wandb-entity logging-level one-logger-project
one-logger-run-name one-logger-async enable-one-logger no-one-logger
save load save-interval save-retain-interval no-save-optim no-save-rng no-load-optim no-load-rng finetune
pretrained-checkpoint ckpt-format ckpt-step use-dist-ckpt auto-detect-ckpt-format ckpt-fully-parallel-save
ckpt-fully-parallel-load ckpt-assume-constant-structure async-save dist-ckpt-strictness ckpt-convert-format
ckpt-convert-save non-persistent-save-interval non-persistent-ckpt-type non-persistent-global-ckpt-dir
non-persistent-local-ckpt-dir use-persistent-ckpt-worker
data-path split data-cache-path mock-data train-data-path valid-data-path test-data-path data-args-path
per-split-data-args-path mmap-bin-files no-mmap-bin-files dataloader-type reset-position-ids reset-attention-mask
eod-mask-loss object-storage-cache-path s3-cache-path
vocab-file merge-file tokenizer-model tiktoken-pattern tiktoken-num-special-tokens tiktoken-special-tokens
vocab-extra-ids
eval-iters eval-interval skip-train test-mode
seed data-parallel-random-init
profile profile-step-start profile-step-end profile-ranks use-pytorch-profiler record-memory-history memory-snapshot-path
distributed-timeout-minutes local-rank use-cpu-initialization ddp-bucket-size-placeholder
adlr-autoresume adlr-autoresume-interval
rerun-mode enable-ft-package calc-ft-timeouts straggler-minmax-count
deterministic-mode check-weight-hash-across-dp-replicas-interval
loss-scale initial-loss-scale min-loss-scale loss-scale-window hysteresis
no-async-tensor-model-parallel-allreduce async-tensor-model-parallel-allreduce
`) {
		mgIgnored[f] = true
	}
}

// readIgnored notes the flags that matter but are not modelled, and the
// flags the import does not know.
func (m *Megatron) readIgnored(a *mgArgs) error {
	var unknown []string
	for _, n := range a.order {
		if a.used[n] || mgIgnored[n] {
			continue
		}
		if why, ok := mgUnmodelled[n]; ok {
			if why != "" {
				m.note("%s: %s", a.flags[n].show(n), why)
			}
			continue
		}
		unknown = append(unknown, "--"+ttName(n))
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		m.note("flags zerosim does not know, not imported: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// ScenarioName is the scenario's name: the file name without extension.
func (m *Megatron) ScenarioName() string {
	if m.File == Stdin {
		return "megatron"
	}
	return strings.TrimSuffix(filepath.Base(m.File), filepath.Ext(m.File))
}

// Scenario renders the scenario file: a header naming the command line,
// then every key with the Megatron flag or default it came from. Unknown
// values are placeholders (SET_NODES, SET_GPU, SET_DP, SET_GRAD_ACCUM)
// that Load rejects at their line.
func (m *Megatron) Scenario() []byte {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Imported by zerosim import megatron from %s\n", ttName(m.File))
	w("# pretrain_gpt.py's GPT model: %s parameters. Flags and defaults as\n", commas(m.Params))
	w("# Megatron-LM core_v0.12.0 (%s) reads them (megatron/training/arguments.py);\n", MegatronCommit[:8])
	w("# the stack preset fills in the rest (docs/stacks.md).\n")
	for _, n := range m.Notes {
		w("# note: %s\n", oneLine(n))
	}
	w("version: 1\nname: %s\nstack: megatron\n", strconv.Quote(m.ScenarioName()))
	clusterYAML(w, m.Nodes, m.NodesFrom, "your node count (or --nodes, or torchrun --nnodes or deepspeed --num_nodes in the script)",
		m.GPUsPerNode, m.GPUsFrom, m.Opt.GPU, "a GPU preset such as H100-80GB (or --gpu)")
	md := m.Model
	w("model:\n  kind: transformer\n  arch: %s  # %s\n", md.Arch, m.ArchWhy)
	w("  hidden: %d  # %s\n  layers: %d  # %s\n  heads: %d  # %s\n", md.Hidden, m.ModelFrom["hidden"], md.Layers, m.ModelFrom["layers"], md.Heads, m.ModelFrom["heads"])
	w("  kv_heads: %d  # %s\n  ffn: %d  # %s\n", md.KVHeads, m.ModelFrom["kv_heads"], md.FFN, m.ModelFrom["ffn"])
	w("  vocab: %d  # %s\n  seq_len: %d  # %s\n", md.Vocab, m.PaddedVocabFrom, md.SeqLen, m.ModelFrom["seq_len"])
	if len(m.LayerList) > 0 {
		w("  params: %d\n  layer_list:\n%s", m.Params, LayerListYAML(m.LayerList))
	}
	section := ""
	for _, s := range m.Settings.InOrder("parallelism", "training", "communication") {
		sec, key, _ := strings.Cut(s.Key, ".")
		if sec != section {
			section = sec
			w("%s:\n", sec)
			if sec == "parallelism" && m.DP == 0 {
				w("  dp: SET_DP  # nodes × gpus_per_node / cp\n")
			}
		}
		if s.Value == "" {
			// A key the import leaves to the stack preset: its rule
			// as a comment.
			w("  # %s: %s\n", key, oneLine(s.From))
			continue
		}
		w("  %s: %s  # %s\n", key, s.Value, oneLine(s.From))
		if s.Key == "training.micro_batch" && m.GradAccum == 0 {
			w("  grad_accum: SET_GRAD_ACCUM  # --global-batch-size %d / (micro-batch %d × dp)\n", m.GlobalBatch, m.MicroBatch)
		}
	}
	return []byte(b.String())
}

// mgUnclosed is the error for a quote the script never closes: it ran to
// the end of the script, taking the words after it, and the error was
// "--hidden-size takes one value, not 2" (QA22 L7). When a quote before it
// spans lines, that one is likely the stray: it is named first.
func mgUnclosed(name, src string) error {
	_, o := mgLex(src)
	if o.q == 0 {
		return nil
	}
	bash := fmt.Sprintf("bash: unexpected EOF while looking for matching `%c'", o.q)
	if o.span[0] > 0 {
		return fmt.Errorf("%s:%d:%d: this quote runs to line %d, and the %c at %d:%d is never closed (%s): close the quote where it belongs", name, o.span[0], o.span[1], o.span[2], o.q, o.line, o.col, bash)
	}
	return fmt.Errorf("%s:%d:%d: the %c quote opened here is never closed (%s): close it", name, o.line, o.col, o.q, bash)
}

// bucketYAML writes a byte count as communication.bucket_size's value: in
// MB when whole, else in bytes.
func bucketYAML(b int64) string {
	if b%1_000_000 == 0 {
		return strconv.FormatInt(b/1_000_000, 10) + "MB"
	}
	return strconv.FormatInt(b, 10) + "B"
}
