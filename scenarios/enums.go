package scenarios

// Typed enums of the scenario format. Each is a string type whose values are
// exactly the YAML spellings, so files, --set flags and `scenarios show`
// read and write the same text; the loader rejects any other value, so the
// packages downstream compare against these constants and never re-parse.

// Padding selects the flat-buffer padding rules (communication.padding).
type Padding string

const (
	// PaddingToy is seed 000's buffer: one buffer padded to a multiple of the
	// shard group (default).
	PaddingToy Padding = "toy"
	// PaddingMegatron is Megatron-Core's param-and-grad buffer rules.
	PaddingMegatron Padding = "megatron"
)

// Algorithm is the collective algorithm (communication.algorithm).
type Algorithm string

const (
	AlgoRing         Algorithm = "ring"
	AlgoHierarchical Algorithm = "hierarchical"
	AlgoTree         Algorithm = "tree"
	AlgoNVLS         Algorithm = "nvls"
	AlgoNVLSTree     Algorithm = "nvlstree"
	AlgoAuto         Algorithm = "auto" // default
)

// NCCLModel reports whether collectives under a are timed by NCCL's cost
// model (auto, nvls, nvlstree; zero.Model), the model a network
// calibration corrects (its channel-search share of a link and its latency
// tables): ring, tree and hierarchical run zerosim's alpha–beta lowerings
// at the links' nominal figures, which it does not.
func (a Algorithm) NCCLModel() bool { return a == AlgoAuto || a == AlgoNVLS || a == AlgoNVLSTree }

// NICSharing says how GPUs reach the inter-node network (cluster.nics).
type NICSharing string

const (
	// NICPerGPU is rail-optimized: one NIC per GPU (default).
	NICPerGPU NICSharing = "per_gpu"
	// NICPerNode shares cluster.nics_per_node NICs among a node's GPUs.
	NICPerNode NICSharing = "per_node"
)

// Recompute is the activation recomputation strategy (training.recompute).
type Recompute string

const (
	RecomputeNone      Recompute = "none" // default
	RecomputeSelective Recompute = "selective"
	RecomputeFull      Recompute = "full"
)

// Axis is one parallel axis of cluster.placement.
type Axis string

const (
	AxisCP Axis = "cp"
	AxisDP Axis = "dp"
)

// LinkClass names a link class in cluster.link_overrides[].class.
type LinkClass string

const (
	LinkIntra LinkClass = "intra" // the intra-node port of a GPU
	LinkInter LinkClass = "inter" // a NIC
)

// DType is a floating-point storage format (training.param_dtype,
// training.master_dtype, model.groups[].precision).
type DType string

const (
	BF16 DType = "bf16"
	FP16 DType = "fp16"
	FP32 DType = "fp32"
	FP8  DType = "fp8"
)

// Bytes16or32 is the element size of a tensor in d where d is fp32 or a
// 16-bit format (parameters, gradients, logits, a KV cache): 4 for fp32,
// else 2. Not for fp8 storage.
func (d DType) Bytes16or32() int64 {
	if d == FP32 {
		return 4
	}
	return 2
}

// Optimizer is training.optimizer.
type Optimizer string

const (
	OptimizerAdam  Optimizer = "adam" // default
	OptimizerAdamW Optimizer = "adamw"
)

// MoEDispatcher is the expert-parallel token dispatcher
// (communication.moe_dispatcher). Unset it stays empty and means alltoall.
type MoEDispatcher string

const (
	// DispatchAllToAll is Megatron's MoEAlltoAllTokenDispatcher: an
	// all-to-all of every token's top-k copies (default).
	DispatchAllToAll MoEDispatcher = "alltoall"
	// DispatchDeepEP is DeepEP's normal kernels: a token once per
	// destination node over RDMA, forwarded over NVLink once per
	// destination GPU there; the combine is the reverse.
	DispatchDeepEP MoEDispatcher = "deepep"
	// DispatchFlex is Megatron's MoEFlexTokenDispatcher (backend deepep or
	// hybridep): DeepEP's traffic.
	DispatchFlex MoEDispatcher = "flex"
	// DispatchHybridEP is the flex dispatcher's hybridep backend
	// (DeepEP's hybrid-ep branch): DeepEP's traffic.
	DispatchHybridEP MoEDispatcher = "hybridep"
)

// Dedup reports whether d sends a token once per destination node and GPU
// (deepep, flex, hybridep) rather than once per routed expert.
func (d MoEDispatcher) Dedup() bool {
	return d == DispatchDeepEP || d == DispatchFlex || d == DispatchHybridEP
}
