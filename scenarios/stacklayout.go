package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// What each stack preset (stackpreset.go) can run in data parallelism: the
// ZeRO stages, and at each the K (parallelism.k, copies of the sharded
// state) its configuration can express. It is the one table plan's and
// fit's searches and the loader's warning read (Scenario.StackLayout), so
// that none recommends or runs silently what the named stack cannot. Each
// entry cites the stack code zerosim's importer of that stack reads, or,
// for fms-fsdp (no importer), the stack's own code.

// KOne reports whether a layout has one copy of the sharded state only
// (K = 1), whatever the stack: at ZeRO stage 0 every rank holds
// everything, so K changes nothing; with expert parallelism (ep > 1) and
// under ZeRO++ the loader refuses K > 1 (resolveEP, resolveZeroPP). plan's
// and fit's searches ask it, so that they search K where it means
// something and the loader loads it (TestKOneIsTheLoaders).
func KOne(stage, ep int, zeroPP bool) bool { return stage == 0 || ep > 1 || zeroPP }

// kRule is which K a stack runs at one stage.
type kRule int

const (
	// kOne: K = 1 only (one copy of the sharded state, or nothing
	// sharded).
	kOne kRule = iota
	// kAny: any K dividing N (a replicate degree of the device mesh).
	kAny
	// kNodes: K = 1, or K = the number of nodes (FSDP1's HYBRID_SHARD on
	// its default mesh: shard within a node, replicate across nodes).
	kNodes
)

// stackStage is one stage a stack runs: how the stack spells it and its K.
type stackStage struct {
	stage int
	k     kRule
	as    string
	// knob is the stack's setting for K > 1, "" where K is 1 only.
	knob string
}

// StackLayout is what one stack runs: the stages and the K at each.
type StackLayout struct {
	// Name is the stack preset's name (stack: NAME).
	Name   string
	stages []stackStage
	// from names the code the entry follows, for the warning.
	from string
	// ep is whether the stack runs expert parallelism (parallelism.ep),
	// and for which models.
	ep epSupport
	// noOffload, when set, says that the stack does not run DeepSpeed's
	// CPU offload (offload_optimizer, offload_param: zerosim's offload
	// keys) and what it offers instead; "" for a stack that runs it.
	noOffload string
	// noBucket, by stage, is how the stack reduces gradients where it has
	// no gradient bucket size a user sets (qa27 M2, L4): plan searches no
	// communication.bucket_size there.
	noBucket map[int]string
	// reduceNote, by stage, is what plan's run line says of the stack's
	// gradient reduction beyond the bucket size (qa27 M1).
	reduceNote map[int]string
	// noCP, by stage, is why the stack does not run that stage with
	// context parallelism (parallelism.cp > 1); "" where it does.
	noCP map[int]string
	// syncsEveryAtStage0: the stack's stage 0 reduces every micro-step's
	// gradients unless training.grad_sync says otherwise
	// (Scenario.GradSyncEvery cites each stack's code).
	syncsEveryAtStage0 bool
	// noAccum: the stack's trainer has no gradient accumulation
	// (Scenario.NoGradAccum).
	noAccum bool
}

// FSDP reduces one unit's gradients per post-backward, with no bucket
// size: FSDP2's FSDPParamGroup.post_backward calls foreach_reduce on the
// group's gradients (torch/distributed/fsdp/_fully_shard/
// _fsdp_param_group.py at pytorch/pytorch
// 002a76fbfea0ac0f199e4b8e2a0691074796c908), FSDP1's post-backward hook
// reduces its handle's FlatParameter (_post_backward_hook, _reduce_grad in
// torch/distributed/fsdp/_runtime_utils.py at 00ae0bc9).
const (
	fsdp2NoBucket = "FSDP2 reduces each parameter group's gradients in its post-backward, with no bucket size"
	fsdp1NoBucket = "FSDP1 reduces each wrapped module's FlatParameter in its post-backward hook, with no bucket size"
)

// stackLayouts are the stacks' layouts, by preset name.
var stackLayouts = map[string]StackLayout{
	// pytorch/torchtitan at 238fa9953e4aec2a62582121564273d7cbb1e9f1,
	// as the importer reads it (torchtitan.go readParallelism):
	// torchtitan/distributed/parallel_dims.py builds the dp_replicate ×
	// dp_shard mesh and torchtitan/models/llama3/infra/parallelize.py
	// applies fully_shard (ZeRO-3; HSDP's data_parallel_replicate_degree
	// is K), or DDP when dp_shard·cp = 1 with dp_replicate > 1;
	// parallelism.fsdp_reshard_after_forward = "never" keeps every unit
	// gathered to its backward, ZeRO-2 on the same mesh. No ZeRO-1.
	"torchtitan": {Name: "torchtitan", from: "torchtitan 238fa99", syncsEveryAtStage0: true, stages: []stackStage{
		{0, kOne, "DDP", ""},
		{2, kAny, "FSDP2 with fsdp_reshard_after_forward \"never\", data_parallel_replicate_degree", "data_parallel_replicate_degree"},
		{3, kAny, "FSDP2, data_parallel_replicate_degree", "data_parallel_replicate_degree"},
	},
		// training.enable_cpu_offload (config/job_config.py:270) gives
		// fully_shard a CPUOffloadPolicy (models/llama3/infra/
		// parallelize.py:315–317): parameters, gradients and optimizer
		// states together, torch's optimizer stepping on the CPU.
		// parallelism.expert_parallel_degree (torchtitan/config/
		// job_config.py:454 at 238fa99) for its MoE models.
		ep: epSupport{all: true},
		// Stage 0 is replicate(model, device_mesh=dp_mesh,
		// bucket_cap_mb=100) (torchtitan/models/llama3/infra/
		// parallelize.py:372 at 238fa99): the preset's 100 MiB
		// (stackpreset.go), no other size.
		noBucket: map[int]string{0: "torchtitan's DDP buckets are 100 MiB (replicate bucket_cap_mb=100)", 2: fsdp2NoBucket, 3: fsdp2NoBucket},
		// Context parallelism turns FSDP on: fsdp_enabled is
		// "dp_shard_enabled or cp_enabled" (torchtitan/distributed/
		// parallel_dims.py:334–335 at 238fa99), and parallelize_llama
		// applies fully_shard when fsdp_enabled, DDP only otherwise
		// (torchtitan/models/llama3/infra/parallelize.py:125–153).
		noCP:      map[int]string{0: "torchtitan 238fa99 shards with FSDP2 whenever cp > 1 (parallel_dims.py fsdp_enabled = dp_shard_enabled or cp_enabled), so its DDP (stage 0) never runs with context parallelism"},
		noOffload: "it offers only FSDP2's CPUOffloadPolicy (training.enable_cpu_offload: parameters, gradients and optimizer states together, torchtitan 238fa99 torchtitan/models/llama3/infra/parallelize.py:315–317), which zerosim does not model"},
	// mosaicml/composer at v0.32.1 under llm-foundry 8c8dd48f7216, as the
	// importer reads it (llmfoundry.go lfStrategy and readParallelism):
	// SHARDING_MAP in composer/distributed/mosaic_parallelism.py and
	// prepare_fsdp_module in composer/distributed/dist_strategy.py.
	// NO_SHARD or no fsdp_config is
	// DDP, SHARD_GRAD_OP ZeRO-2, FULL_SHARD ZeRO-3, and with
	// data_parallel_replicate_degree K the 2-D mesh's HYBRID_SHARD or
	// _HYBRID_SHARD_ZERO2. FSDP1 has no ZeRO-1.
	"llm-foundry": {Name: "llm-foundry", from: "Composer v0.32.1's FSDP", syncsEveryAtStage0: true, stages: []stackStage{
		{0, kOne, "NO_SHARD", ""},
		{2, kAny, "SHARD_GRAD_OP, data_parallel_replicate_degree", "data_parallel_replicate_degree"},
		{3, kAny, "FULL_SHARD, data_parallel_replicate_degree", "data_parallel_replicate_degree"},
	},
		// The importer's reading: fsdp_config.cpu_offload raises in
		// Composer's get_cpu_offload (llmfoundry.go).
		noOffload: "Composer v0.32.1 has no CPU offload (its get_cpu_offload raises for fsdp_config.cpu_offload)",
		noBucket:  map[int]string{0: fsdp1NoBucket, 2: fsdp1NoBucket, 3: fsdp1NoBucket},
		// llm-foundry 8c8dd48 splits experts only in MPT's MegaBlocks
		// FFNs (llmfoundry/models/layers/ffn.py:373-382, moe_world_size
		// from the expert-parallel group), which the importer refuses
		// (ffn_type mb_moe, mb_dmoe); its Hugging Face models
		// (llmfoundry/models/hf) have none.
		ep: epSupport{none: "llm-foundry 8c8dd48 splits experts only in MPT's MegaBlocks FFNs (ffn_type mb_moe or mb_dmoe with moe_world_size, llmfoundry/models/layers/ffn.py:373), which zerosim does not import; its Hugging Face models run every expert on every rank"}},
	// fms-fsdp (foundation-model-stack/fms-fsdp
	// fms_fsdp/utils/train_utils.py get_policies at
	// 078c29e74593981ee1453fe0feca1e7ba5fa8aaf): sharding_strategy "fsdp"
	// is FULL_SHARD, "hsdp" HYBRID_SHARD on a (world / GPUs per node, GPUs
	// per node) mesh (main_training_llama.py), so K = nodes, "ddp"
	// NO_SHARD. No ZeRO-1 or ZeRO-2.
	"fms-fsdp": {Name: "fms-fsdp", from: "fms-fsdp 078c29e", syncsEveryAtStage0: true, noAccum: true, stages: []stackStage{
		{0, kOne, "ddp", ""},
		{3, kNodes, "fsdp, or hsdp", "sharding_strategy"},
	},
		noOffload: "fms-fsdp 078c29e has no CPU offload setting",
		noBucket:  map[int]string{0: fsdp1NoBucket, 3: fsdp1NoBucket},
		// No MoE model or expert anywhere in the repository at 078c29e.
		ep: epSupport{none: "fms-fsdp 078c29e has no MoE model and no expert parallelism", noMoE: true}},
	// deepspeedai/DeepSpeed at edaa7221267243c7be7fb49c5d5f5c4fb97b4641
	// (DeepSpeedZeroConfig.stage 0–3 in deepspeed/runtime/zero/config.py,
	// as deepspeed.go imports it): every stage partitions over the whole
	// data-parallel group; MiCS (mics_shard_size), the closest to K, is not
	// modelled (deepspeed.go).
	"deepspeed": {Name: "deepspeed", from: "DeepSpeed edaa722", stages: []stackStage{
		{0, kOne, "stage 0", ""}, {1, kOne, "stage 1", ""}, {2, kOne, "stage 2", ""}, {3, kOne, "stage 3", ""},
	},
		// AutoEP (ds_config "expert_parallel": {enabled, autoep_size,
		// preset_model}; deepspeed/runtime/config.py:69,128 and
		// deepspeed/module_inject/auto_ep_presets/ at edaa722) splits
		// the experts of the Hugging Face classes its presets name:
		// model_type mixtral, qwen3_moe and qwen2_moe, qwen3_5_moe_text
		// (the text backbone; the VLM class is noted unsupported),
		// deepseek_v2, deepseek_v3. A model written with DeepSpeed's
		// own deepspeed.moe.layer.MoE (ep_size) runs it too: a model
		// without a Hugging Face class.
		ep: epSupport{archs: []string{"MixtralForCausalLM", "Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM", "Qwen3_5MoeForCausalLM",
			"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", ""},
			none: "DeepSpeed edaa722's AutoEP has presets for Mixtral, Qwen2/Qwen3-MoE, Qwen3.5-MoE's text backbone and DeepSeek-V2/V3 only (deepspeed/module_inject/auto_ep_presets/), and its MoE layer (deepspeed.moe.layer.MoE) needs a model written with it"},
		// overlap_comm is false below stage 3 unless the ds_config says
		// true (zero/config.py:383-385 at edaa722; the preset follows it,
		// stackpreset.go), and stage 0 reduces after the backward.
		reduceNote: map[int]string{
			0: "no overlap: stage 0 all-reduces after the backward",
			1: "overlap_comm off (DeepSpeed's default below stage 3)",
			2: "overlap_comm off (DeepSpeed's default below stage 3)",
		}},
	// NVIDIA/Megatron-LM core_v0.12.0,
	// d580efc68a9f0dbf1945f834f6f6200cd01d3343, as the importer reads it
	// (megatron.go readParallelism): megatron/training/arguments.py's
	// --use-distributed-optimizer is ZeRO-1 (DDP without it), its K
	// --num-distributed-optimizer-instances, a divisor of dp·cp
	// (megatron/core/parallel_state.py initialize_model_parallel).
	// Megatron-FSDP and torch FSDP2 are refused by the importer (not
	// Megatron's distributed optimizer).
	"megatron": {Name: "megatron", from: "Megatron-LM d580efc6", stages: []stackStage{
		{0, kOne, "no --use-distributed-optimizer", ""},
		{1, kAny, "--use-distributed-optimizer, --num-distributed-optimizer-instances", "--num-distributed-optimizer-instances"},
	},
		// megatron/training/arguments.py:1715 --optimizer-cpu-offload,
		// which :945 requires with --use-precision-aware-optimizer
		// (the hybrid device optimizer); the importer refuses it.
		// --expert-model-parallel-size (megatron/training/arguments.py at
		// d580efc6;
		// megatron.go reads it).
		ep:        epSupport{all: true},
		noOffload: "it offers --optimizer-cpu-offload (Megatron-LM d580efc6 megatron/training/arguments.py:1715, the hybrid device optimizer with --use-precision-aware-optimizer and --optimizer-offload-fraction), which zerosim does not model"},
}

// epSupport is which models a stack runs expert parallelism for: every
// one (all), those of the Hugging Face classes archs ("" a model without
// one), or none; none says why not where it does not, noMoE that the
// stack has no MoE model at all (so the note names no class).
type epSupport struct {
	all   bool
	archs []string
	none  string
	noMoE bool
}

// RunsEP reports whether the stack runs expert parallelism for a model of
// Hugging Face class arch ("" for a model without one).
func (l StackLayout) RunsEP(arch string) bool {
	return l.ep.all || slices.Contains(l.ep.archs, arch)
}

// EPNote is "" when the stack runs expert parallelism for a model of class
// arch, else why it does not: "stack fms-fsdp does not run expert
// parallelism: fms-fsdp 078c29e has no MoE model …" (qa21 LOW 13).
func (l StackLayout) EPNote(arch string) string {
	if l.RunsEP(arch) {
		return ""
	}
	for_ := ""
	if arch != "" && !l.ep.noMoE {
		for_ = " for " + arch
	}
	return fmt.Sprintf("stack %s does not run expert parallelism%s: %s", l.Name, for_, l.ep.none)
}

// FixesBucket reports whether the stack fixes the gradient reduction at
// stage (its DDP's own bucket size, FSDP's per-unit reductions), so plan
// searches no communication.bucket_size there.
func (l StackLayout) FixesBucket(stage int) bool { return l.noBucket[stage] != "" }

// BucketNote is "" where the stack sets a gradient bucket size at stage
// (plan searches communication.bucket_size), else how it reduces instead;
// for FSDP's per-unit reductions, which zerosim still models in buckets
// of communication.bucket_size below stage 3 (docs/stacks.md), that size.
// Where the stack's preset sets a size at stage (torchtitan's DDP) and the
// scenario sets another, the note says the scenario's size is replayed.
func (l StackLayout) BucketNote(stage int, bucket units.Bytes) string {
	n := l.noBucket[stage]
	size := strings.Replace(bucket.SI(), ".00 ", " ", 1)
	if stage < 3 && (n == fsdp1NoBucket || n == fsdp2NoBucket) {
		n += " (modelled as " + size + " buckets)"
	}
	if p, ok := presetBucket(l.Name, stage); ok && n != "" && p != bucket {
		n = size + " gradient buckets, the scenario's; " + n
	}
	return n
}

// presetBucket is the communication.bucket_size stack's preset fills in at
// stage, if it sets one there.
func presetBucket(stack string, stage int) (units.Bytes, bool) {
	for _, k := range stackPresets[stack] {
		if k.path == "communication.bucket_size" && k.applies(stage) {
			b, err := units.ParseBytes(k.value)
			return b, err == nil
		}
	}
	return 0, false
}

// ReduceNote is what plan's run line adds about the stack's gradient
// reduction at stage ("" for nothing beyond its bucket size).
func (l StackLayout) ReduceNote(stage int) string { return l.reduceNote[stage] }

// StackLayout is the layout of the scenario's stack preset; false when the
// scenario names none.
func (s *Scenario) StackLayout() (StackLayout, bool) {
	l, ok := stackLayouts[s.Stack]
	return l, ok
}

// StacksRunning are the stack presets that run ZeRO stage stage, in
// order (stage 3: deepspeed, fms-fsdp, llm-foundry, torchtitan).
func StacksRunning(stage int) []string {
	var out []string
	for _, name := range sortedKeys(stackLayouts) {
		if slices.Contains(stackLayouts[name].Stages(), stage) {
			out = append(out, name)
		}
	}
	return out
}

// Stages are the ZeRO stages the stack runs, ascending.
func (l StackLayout) Stages() []int {
	var out []int
	for _, st := range l.stages {
		out = append(out, st.stage)
	}
	return out
}

// KSetting is how the stack sets K = k copies of the sharded state at
// stage ("data_parallel_replicate_degree=4", "sharding_strategy=hsdp"),
// "" where it has none (K = 1, or a stage it does not run).
func (l StackLayout) KSetting(stage, k int) string {
	for _, st := range l.stages {
		switch {
		case st.stage != stage || st.knob == "" || k <= 1:
		case st.k == kNodes:
			return st.knob + "=hsdp"
		case strings.HasPrefix(st.knob, "--"):
			return st.knob + " " + strconv.Itoa(k)
		default:
			return st.knob + "=" + strconv.Itoa(k)
		}
	}
	return ""
}

// RunsK reports whether the stack runs K copies of the sharded state at
// stage on nodes nodes (false at a stage it does not run).
func (l StackLayout) RunsK(stage, k, nodes int) bool {
	for _, st := range l.stages {
		if st.stage != stage {
			continue
		}
		switch st.k {
		case kAny:
			return true
		case kNodes:
			return k == 1 || k == nodes
		}
		return k == 1
	}
	return false
}

// RunsCP reports whether the stack runs stage with context parallelism
// of degree cp (any stage it runs at cp ≤ 1).
func (l StackLayout) RunsCP(stage, cp int) bool { return cp <= 1 || l.noCP[stage] == "" }

// Ks keeps of ks those the stack runs at stage on nodes nodes.
func (l StackLayout) Ks(stage, nodes int, ks []int) []int {
	var out []int
	for _, k := range ks {
		if l.RunsK(stage, k, nodes) {
			out = append(out, k)
		}
	}
	return out
}

// check says what the stack cannot run of stage and k on nodes nodes, ""
// when it runs them.
func (l StackLayout) check(stage, k, nodes int) string {
	if l.RunsK(stage, k, nodes) {
		return ""
	}
	what := fmt.Sprintf("ZeRO stage %d", stage)
	if slices.Contains(l.Stages(), stage) {
		what = fmt.Sprintf("ZeRO stage %d with k=%d", stage, k)
	}
	return fmt.Sprintf("stack %s does not run %s: %s runs %s (docs/stacks.md); modelled as asked, but no setting of the stack reproduces it",
		l.Name, what, l.from, l.Runs(nodes))
}

// StageNote says that the stack does not run ZeRO stage at all ("stack
// torchtitan does not run ZeRO stage 1: torchtitan 238fa99 runs stage 0
// at K = 1 (DDP), … (docs/stacks.md)"), "" when it runs it at some K: the
// per-stage memory tables and plot leave such a stage out, as fit and
// plan do (qauser32 L10).
func (l StackLayout) StageNote(stage, nodes int) string {
	if slices.Contains(l.Stages(), stage) {
		return ""
	}
	return fmt.Sprintf("stack %s does not run ZeRO stage %d: %s runs %s (docs/stacks.md)", l.Name, stage, l.from, l.Runs(nodes))
}

// Runs lists the stages the stack runs on nodes nodes, each with its K and
// how the stack spells it ("stage 0 at K = 1 (DDP), stage 3 at any K
// (FSDP2, data_parallel_replicate_degree)").
func (l StackLayout) Runs(nodes int) string {
	var parts []string
	for _, st := range l.stages {
		switch st.k {
		case kAny:
			parts = append(parts, fmt.Sprintf("stage %d at any K (%s)", st.stage, st.as))
		case kNodes:
			parts = append(parts, fmt.Sprintf("stage %d at K = 1 or %d, the nodes (%s)", st.stage, nodes, st.as))
		default:
			parts = append(parts, fmt.Sprintf("stage %d at K = 1 (%s)", st.stage, st.as))
		}
	}
	return strings.Join(parts, ", ")
}

// OffloadNote is "" when the stack runs DeepSpeed's CPU offload (zerosim's
// offload keys), else why it does not: "stack torchtitan does not run
// DeepSpeed's CPU offload (offload_optimizer, offload_param): it offers …"
// (qa19 L15: plan advised offload.optimizer=cpu under torchtitan, and run
// modelled it without a word).
func (l StackLayout) OffloadNote() string {
	if l.noOffload == "" {
		return ""
	}
	return fmt.Sprintf("stack %s does not run DeepSpeed's CPU offload (offload_optimizer, offload_param): %s", l.Name, l.noOffload)
}

// warnStackOffload warns, as warnStackLayout does of a stage, when the
// scenario offloads under a stack that does not run DeepSpeed's offload.
func (l *loader) warnStackOffload(s *Scenario) {
	sl, ok := s.StackLayout()
	if !ok || !s.Offload.Any() || sl.OffloadNote() == "" {
		return
	}
	path := "offload.optimizer"
	if s.Offload.Optimizer == OffloadNone {
		path = "offload.params"
	}
	l.warn(s, path, sl.OffloadNote()+"; modelled as asked, but no setting of the stack reproduces it")
}

// warnDeepSpeedStage0Overlap warns when a DeepSpeed scenario at stage 0
// asks for overlapped reductions: DeepSpeed's stage 0 all-reduces the
// gradients after the backward (engine.py allreduce_gradients, lines
// 2891-2914 at edaa7221) whatever overlap_comm says, as zerosim's DeepSpeed
// importer writes (deepspeed.go).
func (l *loader) warnDeepSpeedStage0Overlap(s *Scenario) {
	if s.Stack != "deepspeed" || s.Parallelism.Stage != 0 || s.Communication.Overlap == nil || !*s.Communication.Overlap {
		return
	}
	l.warn(s, "communication.overlap", "overlap: true at ZeRO stage 0 under stack deepspeed: DeepSpeed's stage 0 all-reduces the gradients after the backward whatever overlap_comm says (deepspeed/runtime/engine.py allreduce_gradients at edaa7221); modelled as asked (delete the key for DeepSpeed's behaviour)")
}

// warnStackLayout warns when the scenario's stage and K are not a layout
// its stack preset runs (StackLayout): the result is modelled, but no
// setting of that stack reproduces it.
func (l *loader) warnStackLayout(s *Scenario) {
	sl, ok := s.StackLayout()
	if !ok {
		return
	}
	p := s.Parallelism
	if note := sl.EPNote(s.Model.Architecture); p.EP > 1 && note != "" {
		l.warn(s, "parallelism.ep", note+" (docs/stacks.md); modelled as asked, but no setting of the stack reproduces it")
	}
	if !sl.RunsCP(p.Stage, p.CP) {
		l.warn(s, "parallelism.cp", fmt.Sprintf("stack %s does not run ZeRO stage %d with cp=%d: %s (docs/stacks.md); modelled as asked, but no setting of the stack reproduces it", sl.Name, p.Stage, p.CP, sl.noCP[p.Stage]))
	}
	msg := sl.check(p.Stage, max(p.K, 1), s.Cluster.Nodes)
	if msg == "" {
		return
	}
	path := "parallelism.zero_stage"
	if slices.Contains(sl.Stages(), p.Stage) && l.has("parallelism.k") {
		path = "parallelism.k"
	}
	l.warn(s, path, msg)
	s.LayoutWarning = s.Warnings[len(s.Warnings)-1]
}
