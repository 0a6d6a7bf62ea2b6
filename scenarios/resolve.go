package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// Defaults filled in by Load (see docs/scenario-format.md).
const (
	// DefaultLayers is the block count a model given only by params
	// (kind generic) is split into when model.layers is absent: 32, the
	// layer count of the 7B-class models a bare "7B" stands for (seed
	// 002's 7B; Llama 2 7B and GPT-3 6.7B, the llama2-7b and gpt3-6.7b
	// presets: Llama 2 paper, GPT-3 paper table 2.1). It sets the unit
	// size a ZeRO-3 schedule gathers (params/32), not the totals.
	DefaultLayers = 32
	// DefaultBucketSize is 40,000,000 bytes, Megatron-Core's bucket of
	// 40,000,000 elements taken as bytes (20 M bf16 gradients): Megatron-Core
	// counts parameters, max(40,000,000, 1,000,000·dp) of them
	// (megatron/core/distributed/distributed_data_parallel.py at
	// NVIDIA/Megatron-LM core_v0.12.0, d580efc6), 80 MB of bf16 gradients up
	// to dp 40; docs/stacks.md says how to match it. Kept at 40 MB so the
	// seeds' figures and every earlier result stay as they were.
	DefaultBucketSize = 40 * units.MB
	// MegatronBucketParams and MegatronBucketParamsPerDP are Megatron-Core's
	// default bucket rule: with --overlap-grad-reduce and no
	// --ddp-bucket-size, "ddp_config.bucket_size = max(40000000, 1000000 *
	// parallel_state.get_data_parallel_world_size())" parameters
	// (megatron/core/distributed/distributed_data_parallel.py lines 56-59
	// at NVIDIA/Megatron-LM core_v0.12.0,
	// d580efc68a9f0dbf1945f834f6f6200cd01d3343; "If unspecified, MCore uses
	// a default value of max(40000000, 1000000 * dp_size) parameters",
	// distributed_data_parallel_config.py lines 41-44): the data-parallel
	// size without context parallelism (get_data_parallel_world_size's
	// with_context_parallel defaults to False), zerosim's parallelism.dp.
	MegatronBucketParams      = 40_000_000
	MegatronBucketParamsPerDP = 1_000_000
	// DefaultSteps is how many training steps zerosim verify runs on its
	// toy data (training.steps): a choice, not a published figure, enough
	// for the sharded and unsharded runs to be compared over several
	// optimizer updates and short enough for a test.
	DefaultSteps = 5
	// DefaultPrefetchDepth is how many ZeRO-3 units are gathered ahead of
	// the one computing: 1, PyTorch FSDP's default. FSDP1 prefetches one
	// unit (FullyShardedDataParallel.__init__: backward_prefetch_limit = 1,
	// forward_prefetch_limit = 1, torch/distributed/fsdp/
	// fully_sharded_data_parallel.py at pytorch/pytorch
	// 6d71f74c873d9517c9f41454ae153189822b17af; _ExecOrderData's
	// get_handles_to_backward_prefetch returns at most that many,
	// _exec_order_utils.py at df633a3bc1454c7cd6e036b9bf5093cdc035b1c1),
	// in backward under its default backward_prefetch BACKWARD_PRE (the
	// same __init__'s signature) from the current unit's pre-backward hook
	// (_runtime_utils.py _prefetch_handles, _get_handles_to_prefetch at
	// 3ade90a6aaa939cd6238e314c321b9f920db1471). In forward, with
	// forward_prefetch False, the next unit's all-gather is issued at its
	// pre-forward while the GPU still runs the current unit, the host
	// running one unit ahead: also depth 1.
	DefaultPrefetchDepth = 1
	// DefaultMaxInflightAllGathers caps the ZeRO-3 all-gathers whose
	// gathered parameters are alive at once: 2, FSDP1's rate limiter under
	// limit_all_gathers (torch/distributed/fsdp/_limiter_utils.py
	// _FreeEventQueue: _max_num_inflight_all_gathers = 2, "empirically
	// chosen", at pytorch/pytorch e6401a21c0a1c8bad6dc3a8a27d90fd3d555320a;
	// _runtime_utils.py _unshard at 3ade90a6 waits on the oldest free
	// event, dequeue_if_needed, before issuing another all-gather).
	DefaultMaxInflightAllGathers = 2
)

// MaxGPUs bounds a cluster's nodes·gpus_per_node; topology.New holds the
// same limit, so every scenario that validates also builds.
const MaxGPUs = 1 << 22

// MaxMicroBatch and MaxGradAccum bound training.micro_batch and
// training.grad_accum (plan searches within them).
const (
	MaxMicroBatch = 1 << 20
	MaxGradAccum  = 1 << 12
)

// Limits on cluster sizes.
const (
	MaxNodes       = 65536
	MaxGPUsPerNode = 1024
	maxSteps       = 1 << 20
	maxPrefetch    = 64
	maxInflight    = 64
)

func (l *loader) missing(path, use string) *Error {
	return l.errPath(path, fmt.Sprintf("%s is missing (%s)", path, use))
}

// MaxBandwidth is the largest link bandwidth a scenario may give (25 TB/s
// per direction): the round figure below sim.MaxBandwidth (2^64 / 720,720
// ≈ 25.6 TB/s), up to which the simulator's exact rate arithmetic holds.
const MaxBandwidth units.Bandwidth = 25e12

// maxBandwidth refuses a link bandwidth bw at path past MaxBandwidth: it
// loaded, and the memory model's NCCL buffers then refused it as
// "default: NCCL buffers: intra bandwidth … B/s must be in (0, 25000.00
// GB/s]", naming the scenario's name, not the key (qa22 M3).
func (l *loader) maxBandwidth(path string, bw units.Bandwidth) *Error {
	if bw > MaxBandwidth {
		return l.errAlone(path, fmt.Sprintf("bandwidth=%v is out of range (use at most %v, where the simulator's exact rate arithmetic holds)", bw, MaxBandwidth))
	}
	return nil
}

// errAlone is errPath for a value wrong by itself (Error.Alone).
func (l *loader) errAlone(path, msg string) *Error {
	e := l.errPath(path, msg)
	e.Alone = true
	return e
}

func (l *loader) oneOf(path, v string, allowed ...string) *Error {
	return oneOf(l, path, v, allowed...)
}

// oneOf checks that the enum value v at path is one of allowed.
func oneOf[T ~string](l *loader, path string, v T, allowed ...T) *Error {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if v == a {
			return nil
		}
		names[i] = string(a)
	}
	return l.errAlone(path, fmt.Sprintf("%s %q is unknown %s", leaf(path), string(v), unknownValue(string(v), names, "")))
}

// enum fills the default def when path is absent and otherwise checks the
// value against allowed.
func enum[T ~string](l *loader, path string, dst *T, def T, allowed ...T) *Error {
	if !l.has(path) {
		*dst = def
		return nil
	}
	return oneOf(l, path, *dst, allowed...)
}

// resolve expands presets, fills defaults and validates s.
func (l *loader) resolve(s *Scenario) *Error {
	if !l.has("version") {
		return l.fileErr("version is missing (start the file with \"version: 1\")")
	}
	if s.Version != 1 {
		return l.errPath("version", fmt.Sprintf("version=%d is not supported (use version: 1)", s.Version))
	}
	steps := []func(*Scenario) *Error{l.resolveCluster, l.resolveModel, l.resolveParallelism,
		l.resolveOverrides, l.resolveTraining, l.resolveCommunication, l.resolveCompute, l.resolveMemory,
		l.resolveZeroPP, l.resolveMemoryEfficientLinear, l.resolveOffload, l.resolveEP, l.resolveFP8, l.resolveCompile, l.resolveRoPE, l.resolveStack, l.resolveFP8Params, l.resolveMaster, l.resolveParamRemainders, l.resolveAutocast, l.resolveGradSync, l.resolveNormImpl, l.resolveLiger, l.resolveTransformerImpl, l.resolveCPAttention, l.resolveDocumentLen, l.resolveOpForce, l.resolveOpAttention, l.resolveOpA2A, l.resolveLossChunks, l.resolveTrainMetrics, l.resolveActivationOffload}
	for _, f := range steps {
		if err := f(s); err != nil {
			return err
		}
	}
	l.warnMemoryUnit(s)
	l.warnIntraLink(s)
	l.warnNVLTray(s)
	l.warnImpossibleHardware(s)
	l.warnStraddle(s)
	l.warnWindows(s)
	l.warnStackLayout(s)
	l.warnStackOffload(s)
	l.warnDeepSpeedStage0Overlap(s)
	l.noteHostSync(s)
	l.warnStackAdamL2(s)
	l.warnGradSync(s)
	l.warnKeepLogits(s)
	l.warnCalibratedSetup(s)
	l.warnNoActivations(s)
	return nil
}

// warnKeepLogits says when training.keep_logits counts nothing: the kept
// logits are the output head's, counted with its derived activations
// (HeadUnit).
func (l *loader) warnKeepLogits(s *Scenario) {
	if s.Training.KeptLogitsBytes() == 0 {
		return
	}
	if _, why := s.HeadUnit(); why != "" {
		l.warn(s, "training.keep_logits", "keep_logits counts nothing here: "+why)
	}
}

// OutputUnit is the layer whose forward runs the output head's projection
// and the loss: lm_head, else the last layer (a tied head has no layer of
// its own and runs in the last, final_norm in every preset and import,
// with the embedding's weight); -1 for an empty list.
func (m *Model) OutputUnit() int {
	head := len(m.LayerList) - 1
	for i, x := range m.LayerList {
		if x.Name == "lm_head" {
			head = i
		}
	}
	return head
}

// HeadUnit is the layer that carries the output head and the loss, whose
// activations memory derives tensor by tensor: OutputUnit; -1 and why for a scenario that derives none (not a transformer
// with hidden, heads and seq_len, or memory.activations false) or whose
// head gives activation_bytes of its own.
func (s *Scenario) HeadUnit() (int, string) {
	m := &s.Model
	switch {
	case m.Kind != KindTransformer || m.Hidden <= 0 || m.Heads <= 0 || m.SeqLen <= 0:
		return -1, "the model is not a transformer with an output head"
	case s.Memory.Activations != nil && !*s.Memory.Activations:
		return -1, "memory.activations is false"
	}
	head := m.OutputUnit()
	if head < 0 || m.LayerList[head].ActivationBytes != 0 {
		return -1, "the output head's activation_bytes are given, so its activations are not derived"
	}
	return head, ""
}

func (l *loader) resolveCluster(s *Scenario) *Error {
	c := &s.Cluster
	if !l.has("cluster") {
		return l.missing("cluster", "add cluster: with nodes, gpus_per_node and gpu")
	}
	if !l.has("cluster.nodes") {
		return l.missing("cluster.nodes", "use the number of machines, e.g. nodes: 2")
	}
	if err := l.intRange("cluster.nodes", int64(c.Nodes)); err != nil {
		return err
	}
	if !l.has("cluster.gpus_per_node") {
		return l.missing("cluster.gpus_per_node", "use the GPUs of one machine, e.g. gpus_per_node: 8")
	}
	if err := l.intRange("cluster.gpus_per_node", int64(c.GPUsPerNode)); err != nil {
		return err
	}
	if n := int64(c.Nodes) * int64(c.GPUsPerNode); n > MaxGPUs {
		return l.errPath("cluster.gpus_per_node", fmt.Sprintf("nodes·gpus_per_node=%d GPUs is out of range (use at most %d GPUs)", n, MaxGPUs))
	}

	var gpu GPUPreset
	if l.has("cluster.gpu") {
		g, ok := findGPU(c.GPU)
		if !ok {
			return l.errAlone("cluster.gpu", fmt.Sprintf("gpu %q is unknown %s", c.GPU, unknownGPUValue(c.GPU)))
		}
		gpu = g
		if !l.has("cluster.gpu_memory") {
			// What a process can allocate, where published (Usable).
			c.GPUMemory = g.Usable()
		}
		// Said of the value, not of where it came from, so that a
		// resolved scenario resolves to itself.
		c.GPUMemoryUsable = c.GPUMemory == g.Usable() && g.Usable() != g.Memory
		if !l.has("cluster.peak_bf16") {
			c.PeakBF16 = g.PeakBF16
		}
		if !l.has("cluster.hbm_bandwidth") {
			c.HBMBandwidth = g.HBMBandwidth
		}
	}
	if err := l.resolveGFX(c); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		v   int64
		eg  string
	}{{"gpu_memory", int64(c.GPUMemory), "80GiB"}, {"peak_bf16", int64(c.PeakBF16), "312TFLOPS"}, {"hbm_bandwidth", int64(c.HBMBandwidth), "2039GB/s"}} {
		p := "cluster." + f.key
		if !l.has(p) && f.v == 0 {
			return l.missing(p, fmt.Sprintf("name a GPU preset with gpu: (%s) or give %s: %s", ListOr(gpuNames()), f.key, f.eg))
		}
		if f.v <= 0 {
			return l.errPath(p, fmt.Sprintf("%s=0 is out of range (use a value > 0 such as %s)", f.key, f.eg))
		}
	}

	for _, side := range []struct {
		name string
		link *Link
		def  string
	}{{"intra", &c.Intra, gpu.Intra}, {"inter", &c.Inter, gpu.Inter}} {
		p := "cluster." + side.name
		lk := side.link
		preset := side.def
		if l.has(p + ".preset") {
			if _, ok := FindLink(lk.Preset); !ok {
				return l.errAlone(p+".preset", fmt.Sprintf("preset %q is unknown %s", lk.Preset, unknownValue(lk.Preset, linkNames(), "")))
			}
			preset = lk.Preset
		}
		lk.Preset = preset
		if lp, ok := FindLink(preset); ok {
			if !l.has(p + ".bandwidth") {
				lk.Bandwidth = lp.Bandwidth
			}
			if !l.has(p + ".latency") {
				lk.Latency = lp.Latency
			}
		}
		if !l.has(p+".bandwidth") && lk.Bandwidth == 0 {
			return l.missing(p+".bandwidth", fmt.Sprintf("name a link preset (%s) or give bandwidth: such as 25GB/s", ListOr(linkNames())))
		}
		if lk.Bandwidth <= 0 {
			return l.errPath(p+".bandwidth", "bandwidth=0 is out of range (use a bandwidth > 0 such as 25GB/s)")
		}
		if err := l.maxBandwidth(p+".bandwidth", lk.Bandwidth); err != nil {
			return err
		}
	}

	if l.has("cluster.nics") {
		if err := oneOf(l, "cluster.nics", c.NICs, NICPerGPU, NICPerNode); err != nil {
			return err
		}
	} else {
		c.NICs = NICPerGPU
	}
	if c.NICs == NICPerGPU {
		if l.has("cluster.nics_per_node") && c.NICsPerNode != c.GPUsPerNode {
			return l.errPath("cluster.nics_per_node", fmt.Sprintf("nics_per_node=%d conflicts with nics: per_gpu, which means one NIC per GPU (use %d, or nics: per_node for shared NICs)", c.NICsPerNode, c.GPUsPerNode))
		}
		c.NICsPerNode = c.GPUsPerNode
	} else {
		if !l.has("cluster.nics_per_node") {
			c.NICsPerNode = 1
		}
		// At most one NIC per GPU, as topology.New requires (validate
		// accepted 2 NICs on a 1-GPU node that run then rejected).
		if err := l.intRangeOf("cluster.nics_per_node", int64(c.NICsPerNode), 1, int64(c.GPUsPerNode)); err != nil {
			return err
		}
	}

	if !l.has("cluster.placement") {
		c.Placement = []Axis{AxisCP, AxisDP}
	}
	if len(c.Placement) != 2 || c.Placement[0] == c.Placement[1] ||
		(c.Placement[0] != AxisCP && c.Placement[0] != AxisDP) || (c.Placement[1] != AxisCP && c.Placement[1] != AxisDP) {
		return l.errPath("cluster.placement", fmt.Sprintf("placement %s is not a permutation of [cp, dp] (use [cp, dp] or [dp, cp])", fmtList(c.Placement)))
	}
	return nil
}

func (l *loader) resolveModel(s *Scenario) *Error {
	m := &s.Model
	if !l.has("model") {
		return l.missing("model", "add model: with a preset such as llama2-7b, or params: 7B")
	}
	// An imported model whose layer list is filled (a resolved scenario
	// re-resolved, see Resolve) is its layer list: the file is not read again.
	if l.has("model.hf_config") && !l.has("model.layer_list") {
		return l.resolveHFConfig(s)
	}
	if l.has("model.mtp_layers") && !l.has("model.hf_config") {
		return l.errPath("model.mtp_layers", "mtp_layers builds the multi-token-prediction modules of a model.hf_config (delete it, or give the model as hf_config)")
	}
	if hm, ok := hfPreset(m.Preset); ok && l.has("model.preset") && !l.has("model.layer_list") {
		return l.resolveHFPreset(s, hm)
	}
	if l.has("model.preset") {
		p, ok := findModel(m.Preset)
		if !ok {
			return l.errAlone("model.preset", fmt.Sprintf("preset %q is unknown %s", m.Preset, unknownValue(m.Preset, modelNames(), "")))
		}
		d := p.dims
		fill := func(key string, dst *int64, v int64) {
			if !l.has("model." + key) {
				*dst = v
			}
		}
		if !l.has("model.kind") {
			m.Kind = d.Kind
		}
		if !l.has("model.arch") {
			m.Arch = d.Arch
		}
		fill("hidden", &m.Hidden, d.Hidden)
		fill("layers", &m.Layers, d.Layers)
		fill("ffn", &m.FFN, d.FFN)
		fill("heads", &m.Heads, d.Heads)
		fill("vocab", &m.Vocab, d.Vocab)
		fill("seq_len", &m.SeqLen, d.SeqLen)
		if !l.has("model.kv_heads") {
			m.KVHeads = d.KVHeads
			if l.has("model.heads") || m.KVHeads == 0 {
				m.KVHeads = m.Heads
			}
		}
	}
	if l.has("model.kind") {
		if err := l.oneOf("model.kind", m.Kind, modelKinds...); err != nil {
			return err
		}
	}
	explicitParams := l.has("model.params")
	if explicitParams && m.Params <= 0 {
		return l.errAlone("model.params", "params=0 is out of range (use a count > 0 such as 7B)")
	}
	if explicitParams {
		if err := l.intRange("model.params", int64(m.Params)); err != nil {
			return err
		}
	}

	switch {
	case len(m.LayerList) > 0:
		if m.Kind == "" {
			m.Kind = KindGeneric
		}
		// An explicit layer list skips checkDims, where arch is checked:
		// "arch: foo" loaded and replayed as gpt. hf is what Load writes
		// for an imported model (the resolved scenario of result.json),
		// so it loads back.
		if l.has("model.arch") {
			if m.Kind != KindTransformer {
				return l.errPath("model.arch", "arch applies to kind transformer only (delete arch, or use kind: transformer)")
			}
			if m.Arch != ArchHF {
				if err := l.oneOf("model.arch", m.Arch, ArchGPT, ArchLlama); err != nil {
					return err
				}
			}
		}
		if err := l.checkLayerList(m); err != nil {
			return err
		}
	case l.has("model.layer_list"):
		return l.errPath("model.layer_list", "layer_list is empty (list at least one layer, or delete the key)")
	case m.Kind != "" && m.Kind != KindGeneric:
		if err := l.checkDims(m); err != nil {
			return err
		}
		m.LayerList = buildLayers(m)
	case explicitParams:
		m.Kind = KindGeneric
		if !l.has("model.layers") {
			m.Layers = DefaultLayers
		}
		if err := l.intRange("model.layers", m.Layers); err != nil {
			return err
		}
		if l.has("model.largest_layer") && m.LargestLayer <= 0 {
			return l.errPath("model.largest_layer", "largest_layer=0 is out of range (use a count > 0, or delete the key)")
		}
		if ll := max(int64(m.LargestLayer), 0); int64(m.Params)-ll < m.Layers && int64(m.Params)-m.Layers < 1 {
			// No largest_layer makes room: model.params=1 was told to use
			// largest_layer ≤ -31 (qa19 L3).
			need, most := m.Layers+ll, int64(m.Params)-ll
			with := ""
			if ll > 0 {
				with = fmt.Sprintf(" beside largest_layer=%d", ll)
			}
			if most < 1 {
				return l.errPath("model.params", fmt.Sprintf("params=%d leaves no parameter for the %d layers%s (each layer needs one: use params ≥ %d)", int64(m.Params), m.Layers, with, need))
			}
			return l.errPath("model.params", fmt.Sprintf("params=%d is too few for %d layers%s (each layer needs a parameter: use params ≥ %d, or model.layers ≤ %d)", int64(m.Params), m.Layers, with, need, most))
		}
		if int64(m.Params)-int64(m.LargestLayer) < m.Layers {
			return l.errPath("model.largest_layer", fmt.Sprintf("largest_layer=%d leaves %d parameters for %d layers (use largest_layer ≤ %d)",
				m.LargestLayer, int64(m.Params)-int64(m.LargestLayer), m.Layers, int64(m.Params)-m.Layers))
		}
		m.LayerList = genericLayers(int64(m.Params), int64(m.LargestLayer), m.Layers)
	default:
		return l.errPath("model", fmt.Sprintf("model has no size (use preset: (%s), kind: with dimensions, params: such as 7B, or layer_list:)", ListOr(modelNames())))
	}

	var total int64
	for _, ly := range m.LayerList {
		t, ok := sumChecked(total, int64(ly.Params))
		if !ok {
			return l.errPath("model", "the layers' parameters add up to more than 2^63 (use a smaller model)")
		}
		total = t
	}
	if total <= 0 {
		return l.errPath("model", "the model has no parameters (give layers with params > 0)")
	}
	if explicitParams && int64(m.Params) != total {
		return l.errPath("model.params", fmt.Sprintf("params=%d does not match the model's layers, which add up to %d (delete params or fix it)", int64(m.Params), total))
	}
	m.Params = units.Count(total)
	markBlocks(m)
	return l.resolveGroups(s)
}

// markBlocks sets Layer.Block on the transformer blocks of a kind
// transformer model: the units named "block.*" (every preset and derived
// layer list names them so), else, for an explicit layer list without such
// names, the units sharing the most common parameter count (ties: the
// larger count; embedding and head layers differ), at most model.layers of
// them when layers is given, in forward order. Other kinds have no blocks.
func markBlocks(m *Model) {
	for i := range m.LayerList {
		m.LayerList[i].Block = false
	}
	if m.Kind != KindTransformer {
		return
	}
	want := m.Layers
	marked := int64(0)
	mark := func(ok func(Layer) bool) {
		for i := range m.LayerList {
			if ly := &m.LayerList[i]; ok(*ly) && (want <= 0 || marked < want) {
				ly.Block = true
				marked++
			}
		}
	}
	mark(func(ly Layer) bool { return strings.HasPrefix(ly.Name, "block.") })
	if marked > 0 {
		return
	}
	count := map[units.Count]int{}
	var best units.Count
	for _, ly := range m.LayerList {
		count[ly.Params]++
	}
	for _, ly := range m.LayerList {
		if c := count[ly.Params]; c > count[best] || c == count[best] && ly.Params > best {
			best = ly.Params
		}
	}
	mark(func(ly Layer) bool { return ly.Params == best })
}

// checkDims validates the dimensions of a transformer, llama, mlp or
// tiny-transformer model and fills FFN and KVHeads defaults.
func (l *loader) checkDims(m *Model) *Error {
	need := func(key string, v *int64) *Error {
		p := "model." + key
		if !l.has(p) && *v == 0 {
			return l.missing(p, fmt.Sprintf("kind %s needs %s", m.Kind, key))
		}
		return l.intRange(p, *v)
	}
	if err := need("hidden", &m.Hidden); err != nil {
		return err
	}
	if err := need("layers", &m.Layers); err != nil {
		return err
	}
	if m.Kind == KindTinyTransformer && m.Layers != 1 {
		return l.errPath("model.layers", fmt.Sprintf("layers=%d is not supported by kind tiny-transformer (use 1)", m.Layers))
	}
	if m.Kind == KindTransformer {
		if !l.has("model.arch") && m.Arch == "" {
			m.Arch = ArchGPT
		}
		if err := l.oneOf("model.arch", m.Arch, ArchGPT, ArchLlama); err != nil {
			return err
		}
	} else if l.has("model.arch") {
		return l.errPath("model.arch", "arch applies to kind transformer only (delete arch, or use kind: transformer)")
	}
	if m.FFN == 0 && !l.has("model.ffn") && m.Arch != ArchLlama {
		m.FFN = 4 * m.Hidden
	}
	if err := need("ffn", &m.FFN); err != nil {
		return err
	}
	if m.Kind == KindMLP {
		return nil
	}
	if err := need("heads", &m.Heads); err != nil {
		return err
	}
	if m.Hidden%m.Heads != 0 {
		if l.has("model.hidden") && !l.has("model.heads") {
			// hidden given, heads the preset's: "--set model.hidden=1"
			// said "heads=32 is out of range (use 1 to 1)" at the
			// model line (qa22 L13).
			return l.errPath("model.hidden", fmt.Sprintf("hidden=%d is not a multiple of heads=%d (use a multiple of %d, or set model.heads to a divisor of %d)", m.Hidden, m.Heads, m.Heads, m.Hidden))
		}
		return l.errPath("model.heads", fmt.Sprintf("heads=%d does not divide hidden=%d (use a divisor of %d)", m.Heads, m.Hidden, m.Hidden))
	}
	if m.KVHeads == 0 && !l.has("model.kv_heads") {
		m.KVHeads = m.Heads
	}
	if err := l.intRangeOf("model.kv_heads", m.KVHeads, 1, m.Heads); err != nil {
		return err
	}
	if m.Heads%m.KVHeads != 0 {
		return l.errPath("model.kv_heads", fmt.Sprintf("kv_heads=%d does not divide heads=%d (use a divisor of %d)", m.KVHeads, m.Heads, m.Heads))
	}
	if err := need("vocab", &m.Vocab); err != nil {
		return err
	}
	return need("seq_len", &m.SeqLen)
}

// checkLayerList validates an explicit layer list.
func (l *loader) checkLayerList(m *Model) *Error {
	names := map[string]bool{}
	for i := range m.LayerList {
		ly := &m.LayerList[i]
		p := fmt.Sprintf("model.layer_list[%d]", i)
		if ly.Name == "" {
			return l.missing(p+".name", "give every layer a unique name")
		}
		if names[ly.Name] {
			return l.errPath(p+".name", fmt.Sprintf("layer name %q is used twice (give every layer a unique name)", ly.Name))
		}
		names[ly.Name] = true
		var sum int64
		for j, t := range ly.Tensors {
			tp := fmt.Sprintf("%s.tensors[%d]", p, j)
			if t.Name == "" {
				return l.missing(tp+".name", "give every tensor a name")
			}
			n := int64(1)
			for k, d := range t.Shape {
				if d <= 0 {
					return l.errPath(fmt.Sprintf("%s.shape[%d]", tp, k), fmt.Sprintf("shape dimension %d is out of range (use a size ≥ 1)", d))
				}
				var err error
				if n, err = units.Mul(n, d); err != nil {
					return l.errPath(tp+".shape", "the shape has more than 2^63 elements (use a smaller shape)")
				}
			}
			if len(t.Shape) == 0 {
				return l.missing(tp+".shape", "give the tensor's shape, e.g. shape: [4, 4]")
			}
			s, ok := sumChecked(sum, n)
			if !ok {
				return l.errPath(p+".tensors", "the tensors have more than 2^63 elements (use smaller tensors)")
			}
			sum = s
		}
		if !l.has(p+".params") && len(ly.Tensors) > 0 {
			ly.Params = units.Count(sum)
		}
		if !l.has(p+".params") && len(ly.Tensors) == 0 {
			return l.missing(p+".params", "give the layer's parameter count, e.g. params: 4096")
		}
		if ly.Params <= 0 {
			return l.errPath(p+".params", "params=0 is out of range (use a count > 0)")
		}
		if len(ly.Tensors) > 0 && int64(ly.Params) != sum {
			return l.errPath(p+".params", fmt.Sprintf("params=%d does not match the tensors, which hold %d (fix params or the shapes)", int64(ly.Params), sum))
		}
		if ly.Dims != nil {
			if err := l.checkLayerDims(p+".dims", ly.Dims); err != nil {
				return err
			}
			if err := l.checkNormDims(p+".dims", ly.Dims, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLayerDims validates a layer's dims: every width within the limits
// the Hugging Face import reads them with (0: not given), kv_heads and
// top_k no more than heads and experts, a known router, and a window or
// an attention chunk, not both.
func (l *loader) checkLayerDims(p string, d *BlockDims) *Error {
	// The bounds are layerDims's.
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"hidden", d.Hidden}, {"heads", d.Heads}, {"kv_heads", d.KVHeads},
		{"head_dim", d.HeadDim}, {"ffn", d.FFN}, {"experts", d.Experts},
		{"top_k", d.TopK}, {"expert_ffn", d.ExpertFFN}, {"shared_experts", d.SharedExperts},
		{"shared_ffn", d.SharedFFN}, {"value_head_dim", d.ValueHeadDim},
		{"rope_head_dim", d.RopeHeadDim}, {"q_lora_rank", d.QLoRARank},
		{"kv_lora_rank", d.KVLoRARank}, {"window", d.Window}, {"attention_chunk", d.AttentionChunk},
		{"linear_key_heads", d.LinearKeyHeads}, {"linear_value_heads", d.LinearValueHeads},
		{"linear_key_head_dim", d.LinearKeyHeadDim}, {"linear_value_head_dim", d.LinearValueHeadDim},
		{"linear_conv_kernel", d.LinearConvKernel}, {"router_groups", d.RouterGroups},
		{"router_group_topk", d.RouterGroupTopK},
	} {
		if err := l.intRange(p+"."+f.key, f.v); err != nil {
			return err
		}
	}
	if d.Heads > 0 && d.KVHeads > d.Heads {
		return l.errPath(p+".kv_heads", fmt.Sprintf("kv_heads=%d is more than heads=%d (use at most %d)", d.KVHeads, d.Heads, d.Heads))
	}
	if d.Experts > 0 && d.TopK > d.Experts {
		return l.errPath(p+".top_k", fmt.Sprintf("top_k=%d is more than experts=%d (use at most %d)", d.TopK, d.Experts, d.Experts))
	}
	if err := l.checkRouterGroups(p, d); err != nil {
		return err
	}
	if d.Window > 0 && d.AttentionChunk > 0 {
		return l.errPath(p+".attention_chunk", "a block has a sliding window or an attention chunk, not both (delete window or attention_chunk)")
	}
	if err := l.checkLinearDims(p, d); err != nil {
		return err
	}
	if d.QKNorm != "" {
		if err := l.oneOf(p+".qk_norm", d.QKNorm, QKNormRMSHead, QKNormRMSFull, QKNormGemma, QKNormL2); err != nil {
			return err
		}
	}
	if d.Norms != "" {
		if err := l.oneOf(p+".norms", d.Norms, NormsGemma, NormsFP32); err != nil {
			return err
		}
	}
	if d.Router != "" {
		if err := l.oneOf(p+".router", d.Router, RouterSoftmaxTopK, RouterDeepseekV3, RouterDeepseekV2, RouterDeepseekV2Group, RouterLlama4, RouterGptOss); err != nil {
			return err
		}
	}
	return nil
}

// checkNormDims refuses qk_norm and norms on a transformer whose blocks
// are GPT-style (LayerNorm): the activation model derives them for the
// RMSNorm (llama) block only. It refuses qk_norm on an MLA block
// (kv_lora_rank > 0) and on a linear-attention block as well: memory
// counts no q/k norm there (memory/tensors.go, BlockTensors' qkNorms
// guard), because MLA's norms are q_a_layernorm and kv_a_layernorm and
// the gated delta rule l2-normalises q and k inside its kernel, both
// counted by their own dims.
func (l *loader) checkNormDims(p string, d *BlockDims, m *Model) *Error {
	switch {
	case d.QKNorm != "" && d.KVLoRARank > 0:
		return l.errPath(p+".qk_norm", fmt.Sprintf("qk_norm=%s is not counted on an MLA block (kv_lora_rank=%d: q_a_layernorm and kv_a_layernorm are counted by q_lora_rank and kv_lora_rank); delete qk_norm", d.QKNorm, d.KVLoRARank))
	case d.QKNorm != "" && d.LinearAttention != "":
		return l.errPath(p+".qk_norm", fmt.Sprintf("qk_norm=%s is not counted on a linear-attention block (linear_attention=%s l2-normalises q and k inside its kernel, counted by linear_attention); delete qk_norm", d.QKNorm, d.LinearAttention))
	}
	llama := m.Arch == ArchLlama || m.Arch == ArchHF && HFBlockArch(m.Architecture) == ArchLlama
	if m.Kind != KindTransformer || llama {
		return nil
	}
	for _, k := range []struct{ key, v string }{{"qk_norm", d.QKNorm}, {"norms", d.Norms}} {
		if k.v != "" {
			return l.errPath(p+"."+k.key, fmt.Sprintf("%s=%s needs RMSNorm (llama) blocks, and this model's are gpt (set model.arch: llama, or delete %s)", k.key, k.v, k.key))
		}
	}
	return nil
}

// checkRouterGroups validates node-limited routing: router_groups and
// router_group_topk both or neither, on routed experts, the groups
// dividing the experts, at most router_groups kept, and top_k fitting in
// the kept groups' experts (the importer's groupRouting checks).
func (l *loader) checkRouterGroups(p string, d *BlockDims) *Error {
	g, k := d.RouterGroups, d.RouterGroupTopK
	switch {
	case g == 0 && k == 0:
		return nil
	case g == 0 || k == 0:
		return l.errPath(p+".router_groups", fmt.Sprintf("router_groups=%d with router_group_topk=%d: give both or neither", g, k))
	case d.Experts == 0:
		return l.errPath(p+".router_groups", "router_groups needs routed experts (experts > 0)")
	case d.Experts%g != 0:
		return l.errPath(p+".router_groups", fmt.Sprintf("router_groups=%d does not divide experts=%d (use a divisor of %d)", g, d.Experts, d.Experts))
	case k > g:
		return l.errPath(p+".router_group_topk", fmt.Sprintf("router_group_topk=%d is more than router_groups=%d (use at most %d)", k, g, g))
	case d.TopK > k*(d.Experts/g):
		return l.errPath(p+".router_group_topk", fmt.Sprintf("top_k=%d exceeds the %d experts of router_group_topk=%d groups (raise router_group_topk or lower top_k)", d.TopK, k*(d.Experts/g), k))
	}
	return nil
}

// checkLinearDims validates a linear-attention block's dims: a known
// linear_attention with every linear_* width > 0 and the value heads a
// multiple of the key heads (Qwen3NextGatedDeltaNet splits its projection
// per key head), and no softmax heads, window or chunk beside it; without
// linear_attention, no linear_* width.
func (l *loader) checkLinearDims(p string, d *BlockDims) *Error {
	widths := []struct {
		key string
		v   int64
	}{{"linear_key_heads", d.LinearKeyHeads}, {"linear_value_heads", d.LinearValueHeads}, {"linear_key_head_dim", d.LinearKeyHeadDim},
		{"linear_value_head_dim", d.LinearValueHeadDim}, {"linear_conv_kernel", d.LinearConvKernel}}
	if d.LinearAttention == "" {
		for _, w := range widths {
			if w.v != 0 {
				return l.errPath(p+"."+w.key, fmt.Sprintf("%s=%d without linear_attention (add linear_attention: %s or delete %s)", w.key, w.v, LinearGatedDeltaNet, w.key))
			}
		}
		return nil
	}
	if err := l.oneOf(p+".linear_attention", d.LinearAttention, LinearGatedDeltaNet); err != nil {
		return err
	}
	for _, w := range widths {
		if w.v == 0 {
			return l.errPath(p+"."+w.key, fmt.Sprintf("%s is missing or 0 (a %s block needs every linear_* width > 0)", w.key, d.LinearAttention))
		}
	}
	if d.LinearValueHeads%d.LinearKeyHeads != 0 {
		return l.errPath(p+".linear_value_heads", fmt.Sprintf("linear_value_heads=%d is not a multiple of linear_key_heads=%d (use a multiple)", d.LinearValueHeads, d.LinearKeyHeads))
	}
	for _, x := range []struct {
		key string
		v   int64
	}{{"heads", d.Heads}, {"kv_heads", d.KVHeads}, {"head_dim", d.HeadDim}, {"window", d.Window}, {"attention_chunk", d.AttentionChunk}} {
		if x.v != 0 {
			return l.errPath(p+"."+x.key, fmt.Sprintf("%s=%d beside linear_attention: a linear-attention block has no softmax attention (delete %s)", x.key, x.v, x.key))
		}
	}
	if d.OutputGate {
		return l.errPath(p+".output_gate", "output_gate beside linear_attention: the gate is the gated softmax attention's (delete output_gate)")
	}
	return nil
}

var precisions = []DType{BF16, FP16, FP32, FP8}

// resolveGroups validates the parameter groups and gives every layer one
// (default "dense", declared with the param dtype when missing).
func (l *loader) resolveGroups(s *Scenario) *Error {
	m := &s.Model
	dtype := s.Training.ParamDType
	if dtype == "" {
		dtype = BF16
	}
	groups := map[string]bool{}
	for i, g := range m.Groups {
		p := fmt.Sprintf("model.groups[%d]", i)
		if g.Name == "" {
			return l.missing(p+".name", "give every group a unique name")
		}
		if groups[g.Name] {
			return l.errPath(p+".name", fmt.Sprintf("group name %q is used twice (give every group a unique name)", g.Name))
		}
		groups[g.Name] = true
		if !l.has(p + ".precision") {
			return l.missing(p+".precision", "use bf16, fp16, fp32 or fp8")
		}
		if err := oneOf(l, p+".precision", g.Precision, precisions...); err != nil {
			return err
		}
	}
	for i := range m.LayerList {
		ly := &m.LayerList[i]
		if ly.Group == "" {
			ly.Group = "dense"
		}
		if !groups[ly.Group] {
			switch ly.Group {
			case "dense":
				m.Groups = append([]ParamGroup{{Name: "dense", Precision: dtype}}, m.Groups...)
			case GroupExpert:
				// Routed experts get their own buffer, as Megatron's DDP
				// groups params by (type, precision) (seed 000): dense and
				// expert-parallel params apart, then by (param_dtype,
				// grad_dtype) (megatron/core/distributed/
				// distributed_data_parallel.py:85-128, 279-290 at
				// MegatronCommit).
				m.Groups = append(m.Groups, ParamGroup{Name: GroupExpert, Precision: dtype})
			default:
				return l.errPath(fmt.Sprintf("model.layer_list[%d].group", i), fmt.Sprintf("group %q is not declared (declare it under model.groups, or use dense)", ly.Group))
			}
			groups[ly.Group] = true
		}
	}
	return nil
}

func (l *loader) resolveParallelism(s *Scenario) *Error {
	p := &s.Parallelism
	if !l.has("parallelism") {
		return l.missing("parallelism", "add parallelism: with dp and zero_stage")
	}
	if !l.has("parallelism.dp") {
		return l.missing("parallelism.dp", "use the data-parallel degree, e.g. dp: 8, or dp: auto for the cluster's GPUs")
	}
	if !l.has("parallelism.cp") {
		p.CP = 1
	}
	if err := l.intRange("parallelism.cp", int64(p.CP)); err != nil {
		return err
	}
	gpus := int64(s.Cluster.Nodes) * int64(s.Cluster.GPUsPerNode)
	if l.dpAuto != nil {
		// dp: auto takes every GPU the cp groups leave, as torchtitan's
		// data_parallel_shard_degree = -1 (its default) takes the ranks
		// the other degrees leave: dp_shard = world_size // (dp_replicate
		// · cp · tp · pp) (torchtitan/distributed/parallel_dims.py,
		// ParallelDims._validate, at 238fa9953e4aec2a62582121564273d7cbb1e9f1).
		if gpus%int64(p.CP) != 0 {
			return l.errPath("parallelism.cp", fmt.Sprintf("cp=%d does not divide the cluster's %d GPUs, which dp: auto fills (use a divisor of %d)", p.CP, gpus, gpus))
		}
		p.DP = int(gpus / int64(p.CP))
	}
	if err := l.intRange("parallelism.dp", int64(p.DP)); err != nil {
		return err
	}
	if !l.has("parallelism.zero_stage") {
		return l.missing("parallelism.zero_stage", "use 0, 1, 2 or 3")
	}
	if p.Stage < 0 || p.Stage > 3 {
		return l.errAlone("parallelism.zero_stage", fmt.Sprintf("zero_stage=%d is out of range (use 0, 1, 2 or 3)", p.Stage))
	}
	n := int64(p.DP) * int64(p.CP)
	if n != gpus {
		at := "parallelism.dp"
		if l.has("parallelism.cp") && p.CP != 1 {
			at = "parallelism.cp"
		}
		// Blame a --set of the cluster's size when dp and cp came from
		// the file (compare --vary cluster.nodes=… applies each value as
		// one), and spell the fix as the input that is to change gives it.
		dpSet := l.bySet("parallelism.dp") || l.bySet("parallelism.cp")
		switch {
		case l.bySet("parallelism.dp"):
			at = "parallelism.dp"
		case l.bySet("parallelism.cp"):
			at = "parallelism.cp"
		}
		if !dpSet {
			for _, k := range []string{"cluster.nodes", "cluster.gpus_per_node"} {
				if l.bySet(k) {
					at, dpSet = k, true
					break
				}
			}
		}
		auto := "dp: auto"
		if dpSet {
			auto = "--set parallelism.dp=auto"
		}
		return l.errPath(at, fmt.Sprintf("dp·cp=%d does not equal nodes·gpus_per_node=%d (use dp·cp = %d, or %s to fill the cluster)", n, gpus, gpus, auto))
	}
	if !l.has("parallelism.k") {
		p.K = 1
	}
	if p.K < 1 || n%int64(p.K) != 0 {
		return l.errPath("parallelism.k", fmt.Sprintf("k=%d does not divide dp·cp=%d (use a divisor of %d: %s)", p.K, n, n, divisors(n)))
	}
	return nil
}

// divisors lists n's divisors ("1, 2, 4, 8"), eliding the middle of long lists.
func divisors(n int64) string {
	var lo, hi []int64
	for d := int64(1); d*d <= n; d++ {
		if n%d == 0 {
			lo = append(lo, d)
			if d != n/d {
				hi = append([]int64{n / d}, hi...)
			}
		}
	}
	all := append(lo, hi...)
	var s []string
	for i, d := range all {
		if len(all) > 16 && i == 8 {
			s = append(s, "…")
		}
		if len(all) > 16 && i >= 8 && i < len(all)-8 {
			continue
		}
		s = append(s, strconv.FormatInt(d, 10))
	}
	return strings.Join(s, ", ")
}

func (l *loader) resolveOverrides(s *Scenario) *Error {
	c := &s.Cluster
	// Each link takes one entry: two that name it (the same GPU twice, or
	// a whole node and one of its GPUs) would have the later replace the
	// earlier, a latency-only entry resetting another's bandwidth.
	type port struct {
		node  int
		class LinkClass
		gpu   int
	}
	first := map[port]int{}
	for i := range c.LinkOverrides {
		o := &c.LinkOverrides[i]
		p := fmt.Sprintf("cluster.link_overrides[%d]", i)
		if !l.has(p + ".node") {
			return l.missing(p+".node", fmt.Sprintf("use a node index from 0 to %d", c.Nodes-1))
		}
		if o.Node < 0 || o.Node >= c.Nodes {
			return l.errPath(p+".node", fmt.Sprintf("node=%d is out of range (the cluster has nodes 0 to %d)", o.Node, c.Nodes-1))
		}
		if !l.has(p + ".class") {
			return l.missing(p+".class", "use intra or inter")
		}
		if err := oneOf(l, p+".class", o.Class, LinkIntra, LinkInter); err != nil {
			return err
		}
		if o.GPU == nil {
			o.GPU = new(int)
			*o.GPU = -1
		}
		if *o.GPU < -1 || *o.GPU >= c.GPUsPerNode {
			return l.errPath(p+".gpu", fmt.Sprintf("gpu=%d is out of range (use -1 for the whole node, or 0 to %d)", *o.GPU, c.GPUsPerNode-1))
		}
		if o.Class == LinkInter && c.NICs == NICPerNode && *o.GPU >= 0 {
			return l.errPath(p+".gpu", fmt.Sprintf("gpu=%d names one GPU's NIC, but nics: per_node shares the node's NICs (delete gpu or use nics: per_gpu)", *o.GPU))
		}
		whole, one := port{o.Node, o.Class, -1}, port{o.Node, o.Class, *o.GPU}
		j, clash := first[one]
		if !clash && *o.GPU >= 0 {
			j, clash = first[whole]
		}
		if !clash && *o.GPU < 0 {
			for g := range c.GPUsPerNode {
				if j, clash = first[port{o.Node, o.Class, g}]; clash {
					break
				}
			}
		}
		if clash {
			return l.errPath(p, fmt.Sprintf("entry %d overrides node %d's %s links that entry %d already overrides: the later would replace the earlier (give each link one entry with its bandwidth and latency; for a whole node and one of its GPUs, one entry per GPU)", i, o.Node, o.Class, j))
		}
		first[one] = i
		base := c.Intra
		if o.Class == LinkInter {
			base = c.Inter
		}
		if !l.has(p+".bandwidth") && !l.has(p+".latency") {
			return l.missing(p+".bandwidth", "give bandwidth:, latency: or both")
		}
		if !l.has(p + ".bandwidth") {
			o.Bandwidth = base.Bandwidth
		}
		if o.Bandwidth <= 0 {
			return l.errPath(p+".bandwidth", "bandwidth=0 is out of range (use a bandwidth > 0 such as 12.5GB/s)")
		}
		if err := l.maxBandwidth(p+".bandwidth", o.Bandwidth); err != nil {
			return err
		}
		if !l.has(p + ".latency") {
			o.Latency = base.Latency
		}
	}
	n := s.N()
	seen := map[int]bool{}
	for i, o := range c.GPUOverrides {
		p := fmt.Sprintf("cluster.gpu_overrides[%d]", i)
		if !l.has(p + ".rank") {
			return l.missing(p+".rank", fmt.Sprintf("use a rank from 0 to %d", n-1))
		}
		if o.Rank < 0 || o.Rank >= n {
			return l.errPath(p+".rank", fmt.Sprintf("rank=%d is out of range (ranks are 0 to %d)", o.Rank, n-1))
		}
		if seen[o.Rank] {
			return l.errPath(p+".rank", fmt.Sprintf("rank=%d is overridden twice (keep one entry per rank)", o.Rank))
		}
		seen[o.Rank] = true
		if !l.has(p + ".speed") {
			return l.missing(p+".speed", "use a speed factor > 0, e.g. 0.8 for 20% slower")
		}
		if !(o.Speed >= 1e-6) || o.Speed > 1000 {
			return l.errAlone(p+".speed", fmt.Sprintf("speed=%s is out of range (use a factor from 0.000001 to 1000, e.g. 0.8 for 20%% slower)", fmtFloat(o.Speed)))
		}
	}
	return nil
}

// fmtList writes a list of strings as YAML flow: [cp, "d p"].
func fmtList[T ~string](xs []T) string {
	var q []string
	for _, v := range xs {
		x := string(v)
		if x == "" || strings.ContainsFunc(x, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') }) {
			x = strconv.Quote(clip(x))
		}
		q = append(q, x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (l *loader) resolveTraining(s *Scenario) *Error {
	t := &s.Training
	if !l.has("training.micro_batch") {
		t.MicroBatch = 1
	}
	if err := l.intRange("training.micro_batch", t.MicroBatch); err != nil {
		return err
	}
	if !l.has("training.grad_accum") {
		t.GradAccum = 1
	}
	if err := l.intRange("training.grad_accum", t.GradAccum); err != nil {
		return err
	}
	if err := enum(l, "training.param_dtype", &t.ParamDType, BF16, BF16, FP16, FP32); err != nil {
		return err
	}
	if err := enum(l, "training.master_dtype", &t.MasterDType, FP32, FP32, MasterBF16, MasterNone); err != nil {
		return err
	}
	if err := enum(l, "training.optimizer_state_dtype", &t.OptimizerStateDType, "", FP32, BF16, FP16); err != nil {
		return err
	}
	if err := enum(l, "training.optimizer", &t.Optimizer, OptimizerAdam, OptimizerAdam, OptimizerAdamW); err != nil {
		return err
	}
	if err := enum(l, "training.recompute", &t.Recompute, RecomputeNone, RecomputeNone, RecomputeSelective, RecomputeOp, RecomputeFull); err != nil {
		return err
	}
	floats := []struct {
		key     string
		dst     *float64
		def     float64
		ok      func(float64) bool
		allowed string
	}{
		// torch.optim.Adam's defaults, lr 1e-3, betas (0.9, 0.999), eps
		// 1e-8, weight_decay 0 (numerics.DefaultHyper cites adam.py).
		{"lr", &t.LR, 1e-3, func(v float64) bool { return v > 0 }, "a learning rate > 0 such as 1e-3"},
		{"beta1", &t.Beta1, 0.9, func(v float64) bool { return v >= 0 && v < 1 }, "a value in [0, 1) such as 0.9"},
		{"beta2", &t.Beta2, 0.999, func(v float64) bool { return v >= 0 && v < 1 }, "a value in [0, 1) such as 0.999"},
		{"eps", &t.Eps, 1e-8, func(v float64) bool { return v > 0 }, "a value > 0 such as 1e-8"},
		{"weight_decay", &t.WeightDecay, 0, func(v float64) bool { return v >= 0 }, "a value ≥ 0 such as 0.01"},
	}
	for _, f := range floats {
		if !l.has("training." + f.key) {
			*f.dst = f.def
			continue
		}
		if math.IsNaN(*f.dst) || math.IsInf(*f.dst, 0) || !f.ok(*f.dst) {
			return l.errAlone("training."+f.key, fmt.Sprintf("%s=%s is out of range (use %s)", f.key, fmtFloat(*f.dst), f.allowed))
		}
	}
	if !l.has("training.steps") {
		t.Steps = DefaultSteps
	}
	if err := l.intRange("training.steps", int64(t.Steps)); err != nil {
		return err
	}
	if !l.has("training.seed") {
		t.Seed = 1
	}
	return nil
}

func (l *loader) resolveCommunication(s *Scenario) *Error {
	c := &s.Communication
	if !l.has("communication.bucket_size") {
		c.BucketSize = DefaultBucketSize
		if b, ok := MegatronDefaultBucket(s); ok {
			c.BucketSize = b
		}
	}
	if c.BucketSize <= 0 {
		return l.errAlone("communication.bucket_size", "bucket_size=0 is out of range (use a size > 0 such as 40MB)")
	}
	if strings.EqualFold(strings.TrimSpace(string(c.Algorithm)), "alphabeta-ring") {
		// Tables and plots label the explicit ring alphabeta-ring (NCCL's
		// Ring, collective --algo ring, is another algorithm); the label
		// reads back as the key's value.
		c.Algorithm = AlgoRing
	}
	if err := enum(l, "communication.algorithm", &c.Algorithm, AlgoAuto, AlgoRing, AlgoHierarchical, AlgoTree, AlgoNVLS, AlgoNVLSTree, AlgoAuto); err != nil {
		return err
	}
	for _, k := range []struct {
		key, env, v string
		names       []string
	}{{"nccl_algo", "NCCL_ALGO", c.NCCLAlgo, NCCLAlgoNames}, {"nccl_proto", "NCCL_PROTO", c.NCCLProto, NCCLProtoNames}} {
		path := "communication." + k.key
		if !l.has(path) {
			continue
		}
		set, err := ParseNCCLList(k.v, k.names, k.env)
		if err != nil {
			return l.errPath(path, k.key+": "+err.Error())
		}
		if pinned := map[Algorithm]string{AlgoNVLS: "NVLS", AlgoNVLSTree: "NVLSTree"}[c.Algorithm]; k.key == "nccl_algo" && pinned != "" && !set[slices.Index(NCCLAlgoNames, pinned)] {
			// algorithm nvls or nvlstree runs that algorithm; NCCL_ALGO
			// switching it off leaves it nothing (final read R3 L6: the
			// replay blamed the hardware).
			return l.errPath(path, fmt.Sprintf("nccl_algo %q switches off %s, which communication.algorithm %s runs: add %s to nccl_algo, or set algorithm: auto", k.v, pinned, c.Algorithm, pinned))
		}
		// A list of all-reduce algorithms only (Tree, NVLSTree) is the
		// step's to refuse, not the loader's: collective and calibrate
		// replay no step and time all-reduces under it (zero.CheckPins).
		if !c.Algorithm.NCCLModel() {
			return l.errPath(path, fmt.Sprintf("%s sets NCCL's tuner, which algorithm %s (zerosim's alpha–beta lowering) does not use: set algorithm: auto, or drop %s", k.key, c.Algorithm, k.key))
		}
	}
	if path := "communication.nccl_version"; l.has(path) {
		if _, err := ParseNCCLVersion(c.NCCLVersion); err != nil {
			return l.errPath(path, "nccl_version: "+err.Error())
		}
		if !c.Algorithm.NCCLModel() {
			return l.errPath(path, fmt.Sprintf("nccl_version sets NCCL's tuner, which algorithm %s (zerosim's alpha–beta lowering) does not use: set algorithm: auto, or drop nccl_version", c.Algorithm))
		}
		if s.Cluster.AMD() {
			return l.errPath(path, NCCLVersionOnAMD(s.Cluster.Target(), "nccl_version"))
		}
	}
	if l.has("communication.calibration") && c.CalibrationData == nil {
		if err := l.loadCalibration(s); err != nil {
			return err
		}
	}
	if c.Overlap == nil {
		c.Overlap = new(bool)
		*c.Overlap = true
	}
	if c.PrefetchDepth == nil {
		c.PrefetchDepth = new(int)
		*c.PrefetchDepth = DefaultPrefetchDepth
	}
	if err := l.intRange("communication.prefetch_depth", int64(*c.PrefetchDepth)); err != nil {
		return err
	}
	if !l.has("communication.max_inflight_allgathers") {
		c.MaxInflightAllGathers = DefaultMaxInflightAllGathers
	}
	if err := l.intRange("communication.max_inflight_allgathers", int64(c.MaxInflightAllGathers)); err != nil {
		return err
	}
	if err := enum(l, "communication.padding", &c.Padding, PaddingToy, PaddingToy, PaddingMegatron); err != nil {
		return err
	}
	// moe_dispatcher stays empty when unset (alltoall), so the resolved
	// scenarios of files without it are unchanged.
	if l.has("communication.moe_dispatcher") {
		if err := oneOf(l, "communication.moe_dispatcher", c.MoEDispatcher, DispatchAllToAll, DispatchDeepEP, DispatchFlex, DispatchHybridEP); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) resolveMemory(s *Scenario) *Error {
	m := &s.Memory
	if m.Activations == nil {
		m.Activations = new(bool)
		switch s.Model.Kind {
		case KindTransformer, KindTinyTransformer:
			*m.Activations = s.Model.Hidden > 0 && s.Model.SeqLen > 0
		}
	}
	return nil
}

// resolveCPAttention refuses context parallelism for models with
// linear-attention blocks and warns under eager attention: neither runs
// ring attention. PyTorch's context parallelism (context_parallel, torchtitan's
// apply_cp_to_attention_module: torchtitan/distributed/context_parallel.py
// at 238fa9953e4aec2a62582121564273d7cbb1e9f1) shards every sequence over the cp ranks and replaces only
// the SDPA calls with ring attention:
//
//   - training.attention eager (softmax(QKᵀ)V as matmuls) is no SDPA call:
//     it gets no ring (a warning, below: zero counts no exchange for
//     it, only the FLOPs of a rank's queries over all keys). torchtitan raises for
//     anything but SDPA under CP (deepseek_v3 and qwen3
//     infra/parallelize.py at 238fa9953e4aec2a62582121564273d7cbb1e9f1: "Context Parallel only supports SDPA
//     attention"; torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b runs CP under sdpa_kernel's flash and
//     memory-efficient backends).
//   - A linear-attention block (Gated DeltaNet) carries its recurrent
//     state along the whole sequence, which no ring passes between the
//     ranks: torchtitan's qwen3_5 parallelize raises "Context Parallel is
//     not yet supported for Qwen3.5. GatedDeltaNet (75% of layers)
//     requires full-sequence allgather" (torchtitan/models/qwen3_5/
//     parallelize.py at b5bcd76c66d0).
func (l *loader) resolveCPAttention(s *Scenario) *Error {
	cp := s.Parallelism.CP
	if cp <= 1 || s.Model.Kind != KindTransformer {
		return nil
	}
	at := "parallelism.cp"
	n := 0
	for _, ly := range s.Model.LayerList {
		if ly.Dims != nil && ly.Dims.LinearAttention != "" {
			n++
		}
	}
	if n > 0 {
		return l.errPath(at, fmt.Sprintf("cp=%d: %d linear-attention (%s) blocks carry their state along the whole sequence, which no ring passes between cp ranks (torchtitan's qwen3_5 raises NotImplementedError for CP at b5bcd76): use cp: 1 and shard over dp", cp, n, linearKinds(s)))
	}
	if seq := s.Model.SeqLen; seq%(2*int64(cp)) != 0 {
		// The load-balanced layout zerosim models (rank r holds chunks r
		// and 2·cp−1−r of 2·cp: zero/ringattn.go) needs 2·cp equal chunks,
		// and PyTorch refuses anything else: torchtitan's cp_shard
		// (torchtitan/distributed/context_parallel.py at
		// 238fa9953e4aec2a62582121564273d7cbb1e9f1, load balancer
		// "headtail" by default: config/job_config.py) builds a
		// _HeadTailLoadBalancer, whose _generate_indices raises
		// AssertionError unless seq_length % (world_size * 2) == 0
		// (torch/distributed/tensor/experimental/_context_parallel/
		// _load_balancer.py at pytorch/pytorch
		// 19cc90d82830f04982b84bfe9b332404a22bb520); the earlier
		// _RoundRobinLoadBalancer.shard of _attention.py asserts the same.
		// A scenario took 8191 at cp 2 silently, modelled as ceil(s/cp)
		// tokens a rank, where import torchtitan refused it (qa19 L1).
		m := 2 * int64(cp)
		return l.errPath("model.seq_len", fmt.Sprintf("seq_len=%d does not split into 2·cp = %d equal chunks: context parallelism gives each cp rank chunks r and 2·cp−1−r (PyTorch's _HeadTailLoadBalancer, torchtitan's default, raises otherwise; use a multiple of %d such as %d)",
			seq, m, m, (seq+m-1)/m*m))
	}
	if s.Training.Attention == AttentionEager {
		// A warning, not an error: Megatron imports with
		// --attention-backend unfused and context parallelism load as
		// eager attention at cp > 1 (megatron.go), and the FLOPs of a
		// rank's queries over every key are still counted.
		l.warn(s, at, fmt.Sprintf("cp=%d with training.attention eager: no ring attention is modelled (PyTorch's context parallelism rings only SDPA calls, torchtitan refuses anything else under CP), so the k/v exchange and its time are left out; use training.attention: flash or sdpa for the ring", cp))
	}
	return nil
}

// resolveDocumentLen checks model.document_len, the length of the
// documents packed into each sequence with attention confined to each
// (zero.PackedAttentionFLOPs counts it): a transformer's, at most
// seq_len, and refused where zerosim would have to guess what the kernel
// does:
//
//   - parallelism.cp > 1: zerosim's ring (zero/ringattn.go) passes every
//     k/v chunk around all cp ranks and counts each rank's queries over
//     all keys; under a document mask a rank skips the chunks of other
//     documents, and how depends on the stack (Transformer Engine's THD
//     splits each document into 2·cp chunks of its own:
//     get_batch_on_this_cp_rank, total_slices_of_any_sequence = 2 *
//     cp_size, in transformer_engine/pytorch/attention/dot_product_attention/
//     context_parallel.py, NVIDIA/TransformerEngine @
//     d0067d0da6cb01811b8072a7d304f0e00344ce2b; PyTorch's CP shards a
//     FlexAttention BlockMask by its load balancer), which is not
//     modelled.
//   - training.attention sdpa: torchtune without FlexAttention hands SDPA
//     a materialised s×s block-causal mask (packed_block_causal_mask in
//     torchtune/modules/attention_utils.py, pytorch/torchtune @
//     bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1), which takes SDPA off its
//     flash backend (zero's blockMask cites why); the mask's own memory
//     under packing is not modelled. torchtitan no longer lets a language
//     model run SDPA at all (get_attention_config in
//     torchtitan/models/common/config_utils.py @
//     b5bcd76c66d0acb1a08b176d9639425bc55e0b2a: "sdpa is no longer
//     supported for language models").
//
// Under eager attention every score is computed whatever the mask, so the
// key changes nothing there.
func (l *loader) resolveDocumentLen(s *Scenario) *Error {
	const at = "model.document_len"
	d := s.Model.DocumentLen
	if l.has(at) {
		if err := l.intRange(at, d); err != nil {
			return err
		}
	}
	if d == 0 {
		return nil
	}
	if s.Model.Kind != KindTransformer || s.Model.SeqLen <= 0 {
		return l.errPath(at, "document_len needs a transformer with seq_len (give model.preset, hf_config or dimensions, or delete document_len)")
	}
	if seq := s.Model.SeqLen; d > seq {
		return l.errPath(at, fmt.Sprintf("document_len=%d is above seq_len=%d: a packed document is at most one sequence (use %d or less; delete document_len for unpacked sequences)", d, seq, seq))
	}
	if cp := s.Parallelism.CP; cp > 1 {
		return l.errPath(at, fmt.Sprintf("document_len with parallelism.cp=%d is not modelled: under a document mask each cp rank skips the k/v chunks of other documents, which zerosim's ring does not know how to count (use cp: 1, or delete document_len to time the ring over whole sequences)", cp))
	}
	if s.Training.Attention == AttentionSDPA {
		return l.errPath(at, "document_len with training.attention sdpa is not modelled: SDPA takes a document mask as a materialised s×s mask, off its flash backend (set training.attention: flash for flash varlen, Transformer Engine's THD or FlexAttention's block mask, or delete document_len)")
	}
	return nil
}

// linearKinds names the linear-attention kinds of s's blocks.
func linearKinds(s *Scenario) string {
	var names []string
	seen := map[string]bool{}
	for _, ly := range s.Model.LayerList {
		if x := ly.Dims; x != nil && x.LinearAttention != "" && !seen[string(x.LinearAttention)] {
			seen[string(x.LinearAttention)] = true
			names = append(names, string(x.LinearAttention))
		}
	}
	return strings.Join(names, ", ")
}

// resolveGFX checks cluster.gfx: an AMD LLVM target RCCL's cost model
// knows (gfx942, gfx950), given for a GPU described by its figures or
// equal to its AMD preset's; an NVIDIA preset takes none.
func (l *loader) resolveGFX(c *Cluster) *Error {
	if !l.has("cluster.gfx") {
		return nil
	}
	if c.GFX != GFX942 && c.GFX != GFX950 {
		return l.errPath("cluster.gfx", fmt.Sprintf("gfx %q is not an AMD target zerosim models (use gfx942 for CDNA 3, MI300X-like, or gfx950 for CDNA 4, MI355X-like: RCCL's cost model knows these two)", c.GFX))
	}
	if c.GPU == "" {
		return nil
	}
	switch t := GPUTarget(c.GPU); {
	case t == "":
		return l.errPath("cluster.gfx", fmt.Sprintf("gfx: %s names an AMD GPU, and gpu %s is NVIDIA's (delete gfx, or describe the GPU by gpu_memory, peak_bf16 and hbm_bandwidth without gpu:)", c.GFX, c.GPU))
	case t != c.GFX:
		return l.errPath("cluster.gfx", fmt.Sprintf("gfx: %s is not the %s's target, %s (delete gfx: the preset gives it)", c.GFX, c.GPU, t))
	}
	return nil
}

// MegatronDefaultBucket is Megatron-Core's default bucket for the scenario
// (MegatronBucketParams), in bytes of param_dtype's gradient (the element
// size memory divides communication.bucket_size by), when it applies:
// stack: megatron with communication.overlap on (--overlap-grad-reduce;
// without it Megatron sets bucket_size None, one bucket, which zerosim
// does not lay out). It follows parallelism.dp, so a file that leaves
// bucket_size unset (as zerosim import megatron writes a run without
// --ddp-bucket-size or --ddp-num-buckets) gets Megatron's bucket at
// whatever dp it is run at; ok is false elsewhere, and on overflow.
func MegatronDefaultBucket(s *Scenario) (units.Bytes, bool) {
	c := &s.Communication
	if s.Stack != "megatron" || c.Overlap == nil || !*c.Overlap || s.Parallelism.DP <= 0 {
		return 0, false
	}
	params := max(int64(MegatronBucketParams), MegatronBucketParamsPerDP*int64(s.Parallelism.DP))
	b, over := mulChecked(params, s.Training.ParamDType.Bytes16or32())
	if over {
		return 0, false
	}
	return units.Bytes(b), true
}
