package memory

import (
	"fmt"
	"math"
	"strconv"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// This file turns the model's allocated bytes into what a profiler and
// nvidia-smi report. Three layers, each explicit:
//
//	allocated  the tensors alive (torch.cuda.max_memory_allocated)
//	reserved   allocated plus what PyTorch's caching allocator holds in
//	           cached, partly used segments (max_memory_reserved; what
//	           torchtitan prints as "memory")
//	device     reserved plus memory outside the allocator: the CUDA
//	           context and NCCL's buffers (nvidia-smi)

// DefaultCUDAContext is the CUDA context of a PyTorch process with lazy
// module loading (CUDA ≥ 11.7, PyTorch's default since 1.13): "around
// 400MB" (ptrblck, NVIDIA, pytorch/pytorch#109888, 2023-09-23;
// pytorch/pytorch#86509 measured 287,047,680 B with one small tensor, and
// 666,632,192 B without lazy loading). It is outside the caching allocator.
// On AMD GPUs it is taken for the HIP context, which the reports say: no
// published ROCm figure was found (vllm-project/vllm#43236, 2026, says only
// that ROCm's start-up overhead is larger than CUDA's).
const DefaultCUDAContext int64 = 400_000_000

// NCCLConnectionBuffer is the device memory of one NCCL connection on one
// channel with the default protocol buffers (NCCL_BUFFSIZE 4 MiB for Simple
// plus the LL and LL128 buffers): the 10,485,760-byte allocations NCCL logs
// per channel and peer (NCCL_DEBUG_SUBSYS=ALLOC, NVIDIA/nccl#1685, 8 H100).
// NCCL's defaults sum to 9,633,792 B (src/init.cc:810-813 at NVIDIA/nccl
// 5067397c2676: LL 8 lines × 512 threads × 8 steps × 16 B = 524,288, LL128
// 120 × 640 × 8 × 8 B = 4,915,200, Simple 4 MiB); the logged 10 MiB is
// that sum rounded up to a multiple of 2 MiB, which the measurement shows
// and which was not traced in NCCL's allocation code.
const NCCLConnectionBuffer int64 = 10 * 1 << 20

// DefaultRingConnections is the two connections a ring keeps (to the
// previous and next rank, "regardless of the scale": sjeaugey in
// NVIDIA/nccl#864/#986). The channels are each communicator's own
// (collectives.BufferChannels, in communicatorBuffers).
const DefaultRingConnections = 2

// NCCLBuffers is the device memory of communicators NCCL communicators with
// channels channels and conns connections each (outside the caching
// allocator): communicators·channels·conns·NCCLConnectionBuffer. With the
// 32 channels NCCL opens inside an H100 node, one ring communicator holds
// 640 MiB.
func NCCLBuffers(communicators, channels, conns int) (int64, error) {
	if communicators < 0 || channels < 0 || conns < 0 {
		return 0, fmt.Errorf("memory: NCCL buffers need counts ≥ 0 (got %d communicators, %d channels, %d connections)", communicators, channels, conns)
	}
	v, err := units.Mul(int64(communicators)*int64(channels)*int64(conns), NCCLConnectionBuffer)
	if err != nil {
		return 0, fmt.Errorf("memory: NCCL buffers: %w", err)
	}
	return v, nil
}

// communicatorBuffers is the NCCL buffer memory of rank 0's communicators
// in s, each with the channels NCCL sets up for its shape on s's cluster
// (collectives.BufferChannels, the time model's channel count doubled as
// NCCL's connect.cc does: 32 inside an H100 node, as NVIDIA/nccl#1685
// logs; 4 for a node on PCIe or behind one NIC) and a ring's two
// connections, plus NCCL's NVLS buffers on a communicator whose
// collectives auto runs with NVLS or NVLS-tree (1.5 GiB in a 72-GPU
// NVLink domain, 256 MiB on 8 H100: collectives.NVLSBuffers).
func communicatorBuffers(s *scenarios.Scenario) (int64, error) {
	hw := collectives.HardwareOf(s)
	t, err := topology.Build(s)
	if err != nil {
		return 0, fmt.Errorf("memory: NCCL buffers: %w", err)
	}
	// The groups that hold rank 0, shaped as topology places their ranks:
	// the world (t.All()), or K's intra and inter groups (IntraGroups(k)[0],
	// InterGroups(k)[0]), shaped without building them (ShapeOfRange).
	n := t.Ranks()
	groups := []collectives.Shape{collectives.ShapeOfRange(t, 0, 1, n)}
	// The collectives each communicator runs (zero/schedule.go gradSync and
	// the parameter all-gathers): an all-reduce over every rank at stage 0
	// (seed 001's ZeRO-1: and the parameters' all-gather), else all-gathers
	// and reduce-scatters over the shard group and all-reduces over K's
	// inter group.
	gather := []collectives.Op{collectives.AllGather, collectives.ReduceScatter}
	reduce := []collectives.Op{collectives.AllReduce}
	ops := [][]collectives.Op{gather}
	switch {
	case s.Parallelism.Stage == 0:
		ops[0] = reduce
	case s.Communication.Zero1AllReduce:
		ops[0] = []collectives.Op{collectives.AllReduce, collectives.AllGather}
	}
	if k := s.Parallelism.K; k > 1 && s.Parallelism.Stage > 0 && n%k == 0 {
		// The intra and inter groups; stage 0 all-reduces over every rank
		// whatever K (run's K line: no effect).
		groups = []collectives.Shape{collectives.ShapeOfRange(t, 0, 1, n/k), collectives.ShapeOfRange(t, 0, n/k, k)}
		ops = [][]collectives.Op{ops[0], reduce}
	}
	if GradientCommunicator(s) {
		// DeepSpeed's ZeRO-3 runs its collectives on two process groups of
		// the same ranks, so two communicators: parameters gather over the
		// world group, gradients reduce-scatter over a clone of it
		// (GradientCommunicator cites the sources).
		groups = append(groups, groups[0])
		ops = append(ops, []collectives.Op{collectives.ReduceScatter})
	}
	var c calc
	var total int64
	for i, g := range groups {
		b, err := NCCLBuffers(1, collectives.BufferChannels(hw, g), DefaultRingConnections)
		if err != nil {
			return 0, err
		}
		total = c.Add(total, b)
		// A communicator that runs NVLS or NVLS-tree also holds NCCL's
		// NVLS buffers (collectives.NVLSBuffers, RunsNVLS): under auto when
		// auto's choice runs either at some size, always when the scenario
		// forces one (every collective then runs it), never when it forces
		// another algorithm.
		if runsNVLS(s.Communication.Algorithm, hw, g, ops[i]) {
			total = c.Add(total, collectives.NVLSBuffers(hw, g))
		}
	}
	if c.Err != nil {
		return 0, fmt.Errorf("memory: NCCL buffers overflow: %w", c.Err)
	}
	return total, nil
}

// SameUnderAlgorithms reports whether the memory model's report of a
// scenario is the same under communication.algorithm a as under b: the
// algorithm enters it only through NCCL's NVLS buffers (runsNVLS), which
// ring, hierarchical and tree never set up, so a report of one of them
// serves the others (plan --algorithms ring,hierarchical,tree analyzed
// each candidate three times).
func SameUnderAlgorithms(a, b scenarios.Algorithm) bool {
	never := func(x scenarios.Algorithm) bool {
		return x == scenarios.AlgoRing || x == scenarios.AlgoHierarchical || x == scenarios.AlgoTree
	}
	return a == b || never(a) && never(b)
}

// runsNVLS says whether a communicator over g running ops under
// communication.algorithm a sets up NCCL's NVLS buffers: auto asks
// collectives.RunsNVLS; nvls and nvlstree run every collective with NVLS
// (NVLSBuffers is 0 where the hardware or shape has none); ring,
// hierarchical and tree never do.
func runsNVLS(a scenarios.Algorithm, hw collectives.Hardware, g collectives.Shape, ops []collectives.Op) bool {
	switch a {
	case scenarios.AlgoAuto, "":
		return collectives.RunsNVLS(hw, g, ops)
	case scenarios.AlgoNVLS, scenarios.AlgoNVLSTree:
		return true
	}
	return false
}

// memory.allocator_overhead's default, scenarios.DefaultAllocatorOverhead, is
// the fraction by which PyTorch's caching allocator's reserved peak exceeds
// the allocated peak in a large-model training step: freed blocks stay cached
// in their segments, and a later request of another size cannot always reuse
// them. At pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp at
// eb42ad6eca0ce61e7c581212b4bf32f991425571 (the constants after Note
// [Interaction with CUDA graph capture], and
// DeviceCachingAllocator::get_allocation_size), a request of at most 1 MiB
// (kSmallSize) takes a block of the small pool's 2 MiB segments
// (kSmallBuffer); one above 1 MiB and below 10 MiB (kMinLargeAlloc) a block of
// a 20 MiB segment (kLargeBuffer: "large" allocations may be packed in 20 MiB
// blocks; the file uses it there and declares it in a header), and one of 10
// MiB or more a segment of its size rounded up to 2 MiB (kRoundLarge); a
// large-pool block is split only when more than 1 MiB would remain
// (should_split: remaining > kSmallSize). The default is fitted: when chosen
// (b73d299) it put zerosim's reserved peak on torchtitan's Llama 3.1 8B 8-GPU
// row (82.4 GiB, Table 1 of docs/performance.md at eaea6f6a2fa9), a run of
// torchtitan's launcher with expandable_segments:True (a5e57e4a9,
// pytorch/torchtitan#643). Runs on the default segments publish larger
// reserves that depend on the run (torchtitan 83c879f18763 and #97, GMLake:
// docs/memory-model.md), with no rule found for them. It now applies where
// the reserved peak is not simulated (SimulatesReserve: PyTorch FSDP at
// stage 3 with memory.allocator_overhead unset simulates it, those rows
// included; allocseq.go), and wherever the scenario sets it.

// segment is the granularity zerosim rounds the reserved peak to: 2 MiB,
// kRoundLarge ("round up large allocations to 2 MiB", the rounding of a
// request of 10 MiB or more) in pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp at
// eb42ad6eca0ce61e7c581212b4bf32f991425571. A simplification, stated: the
// allocator rounds each request, not a total, and gives a 1–10 MiB request a
// 20 MiB segment (kLargeBuffer) and one of at most 1 MiB a 2 MiB one (the note
// above); zerosim counts bytes per component, not the allocator's requests, so
// the waste those segments leave is part of what memory.allocator_overhead
// absorbs, and the total alone is rounded.
const segment = allocRoundLarge

// Reserved is the caching allocator's reserved peak for an allocated peak:
// allocated·(1 + overhead), rounded up to the allocator's 2 MiB segment
// granularity.
func Reserved(allocated int64, overhead float64) (int64, error) {
	if allocated < 0 || overhead < 0 || math.IsNaN(overhead) || math.IsInf(overhead, 0) {
		return 0, fmt.Errorf("memory: reserved needs allocated ≥ 0 and a finite overhead ≥ 0 (got %d, %g)", allocated, overhead)
	}
	r := math.Ceil(float64(allocated) * (1 + overhead))
	if r > math.MaxInt64/2 {
		return 0, fmt.Errorf("memory: reserved peak of %d B with overhead %g overflows", allocated, overhead)
	}
	v := int64(r)
	return (v + segment - 1) / segment * segment, nil
}

// GatherPool is what DeepSpeed ZeRO-3's caching allocator holds, beyond the
// allocated peak, for parameters the host has released but the GPU has not yet
// used: memory.host_lead (default 1) of the gathered bytes of every unit
// released after its forward (not KeptAcrossBoundary; less the weights
// autograd keeps referenced, UnitInfo.SavedWeights, which stay allocated), under
// communication.boundary: deepspeed at stage 3 with communication.overlap on
// (ds_config zero_optimization.overlap_comm, DeepSpeed's default at stage 3:
// what `zerosim import deepspeed` writes); 0 otherwise.
//
// DeepSpeed 0.11.1 (deepspeedai/DeepSpeed
// e9503fe40ee127e74c8b0ea962aac4f0ae957624) gathers each module's parameters
// on its coordinator's allgather stream
// (deepspeed/runtime/zero/partitioned_param_coordinator.py
// __all_gather_params_: all_gather_coalesced, which allocates the gathered
// buffer, runs under get_accelerator().stream(self.__allgather_stream)) and
// releases them with record_stream on the compute stream
// (partition_parameters.py free_param: param.data.record_stream(
// current_stream()), then param.data = torch.empty(0)). PyTorch's caching
// allocator reuses such a block only once the compute stream has run past the
// point where it was freed (torch.Tensor.record_stream; pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp at
// eb42ad6eca0ce61e7c581212b4bf32f991425571: DeviceCachingAllocator::free calls
// insert_events, an event on each recorded stream, when the block's
// stream_uses is not empty). Nothing in DeepSpeed's forward makes the host
// wait for the compute stream: fetch_sub_module waits on its own fetch events,
// at most __max_ongoing_fetch_events = 2 outstanding, recorded on the
// allgather stream, which never waits for compute. So the host runs through
// the forward as fast as Python and the all-gathers go, and every parameter it
// gathers and releases there takes a new block while the GPU is still behind;
// the allocator keeps those blocks reserved afterwards (nvidia-smi and
// max_memory_reserved count them). In backward the host is held within two
// gradient reductions of the GPU (stage3.py __reduce_and_partition_ipg_grads:
// param_reduce_events, at most max_param_reduce_events = 2, recorded on
// reduce_and_partition_stream, which waits for the compute stream), so by the
// time backward gathers the GPU has passed the forward and the pool is reused,
// not grown.
//
// With overlap_comm false there is no pool: DeepSpeed then gathers on the
// compute stream itself (deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641,
// deepspeed/runtime/zero/parameter_offload.py:189-190, "__allgather_stream =
// ... Stream() if overlap_comm else get_accelerator().default_stream()",
// handed to the coordinator at :210 and entered at
// partitioned_param_coordinator.py:400 and :606; the same line is at
// e9503fe4's parameter_offload.py:256), so free_param's record_stream names
// the stream the block was allocated on, which the caching allocator ignores
// (pytorch/pytorch eb42ad6eca0ce61e7c581212b4bf32f991425571,
// c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::recordStream:
// "ignore uses on the allocation stream, since those don't require any
// special synchronization"): the freed block is reusable in stream order at
// once, however far the host runs ahead (qamem31 finding 1: ms-swift's
// zero3.json, overlap_comm false, measured 54 GB where the pool made zerosim
// +23 %).
//
// How far the host gets ahead is the one thing the code does not fix:
// memory.host_lead is the fraction of the forward's released parameters still
// unused by the GPU when the host reaches backward, 1 when the host finishes
// the forward before the GPU has left its first units (a large model's kernels
// against DeepSpeed's Python per module). The default is that bound, not a
// fit; a profile of the run measures it.
//
// Unless the model's own code makes the host wait: under
// scenarios.HostSyncEachLayer (packed documents under transformers'
// FlashAttention-2, which copies a test of the position_ids to the host in
// every attention layer; flash-attn's unpad_input under
// training.attention_unpad, which reads the longest sequence to the host
// with .item() in every block) the host stops at each layer's attention
// until the GPU has reached it. A unit the host releases after its forward is then
// reused once the GPU reaches the next layer's attention, which it must
// before the host gets past that layer: only the gathers the host issues in
// between (the next layer's prefetch) find it still pending and take new
// blocks, and the block comes back for the gathers after them. So the pool
// is one unit, the largest released in forward, not a fraction of the
// whole forward; memory.host_lead, when given, overrides it.
//
// PyTorch FSDP1 with its rate limiter off (communication.limit_all_gathers
// false) holds the same pool for the same reason, on its unshard stream:
// the host frees each unit's unsharded flat parameter with record_stream on
// the compute stream after the unit's forward and, with nothing to wait on,
// issues the next units' all-gathers into new blocks while the GPU is
// behind (scenarios.HostRunsAhead cites torch's lines). The limiter, on, is
// what holds that host within two freed units of the GPU; the replay's
// allocations (allocseq.go) assume it.
func GatherPool(s *scenarios.Scenario, units []UnitInfo) (int64, error) {
	if !s.HostRunsAhead() {
		return 0, nil
	}
	lead := scenarios.DefaultHostLead
	if v := s.Memory.HostLead; v != nil {
		lead = *v
	}
	kept := KeptAcrossBoundary(s)
	var c calc
	var released, largest int64
	for u, ui := range units {
		if u < len(kept) && !kept[u] {
			// The weights autograd still references (SavedWeights,
			// savedweights.go) were never freed: their storage is
			// allocated, counted in the peak, not a cached block.
			released = c.Add(released, ui.Gather-ui.SavedWeights)
			largest = max(largest, ui.Gather-ui.SavedWeights)
		}
	}
	if c.Err != nil {
		return 0, fmt.Errorf("memory: DeepSpeed gather pool overflows: %w", c.Err)
	}
	if s.HostSyncEachLayer() {
		return largest, nil
	}
	if lead >= 1 {
		return released, nil
	}
	return min(int64(math.Ceil(float64(released)*lead)), released), nil
}

// allocatorBytes is what the caching allocator holds of the model's peak:
// the peak less memory.runtime_context and memory.nccl_buffers, the items
// outside it.
func allocatorBytes(s *scenarios.Scenario, peak int64) int64 {
	return max(peak-int64(s.Memory.RuntimeContext)-int64(s.Memory.NCCLBuffers), 0)
}

// ProfilerPeaks turns the model's peak (which counts memory.runtime_context
// and memory.nccl_buffers as items when given) into what a profiler and
// nvidia-smi would show: the caching allocator's reserved peak (the allocated
// bytes outside those two items, times 1 + memory.allocator_overhead, plus
// pool, the blocks it holds beyond them: GatherPool) and the device peak
// (reserved plus the CUDA context and NCCL's buffers: the items when given,
// else DefaultCUDAContext and one ring communicator per process group the rank
// is in: the ZeRO group, plus the inter-group one when K > 1, plus DeepSpeed
// ZeRO-3's clone of the world group under communication.boundary: deepspeed).
//
// The pool is held only as far as the device has room for it: when cudaMalloc
// fails, the caching allocator frees its cached blocks, waiting for the events
// their recorded streams hold, and retries (pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp at
// eb42ad6eca0ce61e7c581212b4bf32f991425571, DeviceCachingAllocator::malloc:
// alloc_block, then release_available_cached_blocks and release_cached_blocks,
// whose synchronize_and_free_events waits for them), so the blocks the host
// released ahead of the GPU never take the device past its memory. The pool is
// cut to the whole segments the GPU's memory leaves beside the rest of the
// reserved peak, the CUDA context and NCCL's buffers (none when those already
// exceed it).
func ProfilerPeaks(s *scenarios.Scenario, peak, pool int64) (reserved, device int64, err error) {
	outside, err := outsideAllocator(s)
	if err != nil {
		return 0, 0, err
	}
	return profilerPeaksSimulated(s, peak, pool, 0, outside)
}

// profilerPeaksSimulated is ProfilerPeaks with the caching allocator's
// reserved peak simulated (SimulateReserved's PeakReserved: Report.AllocSim)
// when simulated > 0: the reserved peak is then simulated, or the
// allocator's part of peak in whole segments where that is more (a replay
// that holds more than the timeline's order), instead of a fraction above
// it; outside is the device's memory outside the allocator
// (outsideAllocator).
func profilerPeaksSimulated(s *scenarios.Scenario, peak, pool, simulated, outside int64) (reserved, device int64, err error) {
	if simulated < 0 {
		return 0, 0, fmt.Errorf("memory: simulated reserved peak %d B is negative", simulated)
	}
	overhead := allocatorOverhead(s)
	if simulated > 0 {
		overhead = 0
	}
	if reserved, err = profilerParts(s, peak, pool, overhead, outside); err != nil {
		return 0, 0, err
	}
	reserved = max(reserved, simulated)
	var c calc
	reserved = c.Add(reserved, heldPool(int64(s.Cluster.GPUMemory), reserved, outside, pool))
	device = c.Add(reserved, outside)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("memory: device peak overflows: %w", c.Err)
	}
	return reserved, device, nil
}

// heldGatherPool is the part of the gather pool (GatherPool) that the
// reserved peak holds (profilerPeaksOf, with the simulated reserve sim when
// not nil): the reserved peak with the pool less the one without it, the
// pool in whole segments cut to the room the GPU's memory leaves beside the
// rest of the reserve and the device's memory outside the allocator
// (outsideAllocator), whether that rest is the allocated peak's fraction
// (DeepSpeed) or simulated (FSDP1 without its rate limiter).
func heldGatherPool(s *scenarios.Scenario, peak, pool int64, sim *AllocSim, outside int64) (int64, error) {
	with, _, err := profilerPeaksOf(s, peak, pool, sim, outside)
	if err != nil {
		return 0, err
	}
	without, _, err := profilerPeaksOf(s, peak, 0, sim, outside)
	if err != nil {
		return 0, err
	}
	return max(with-without, 0), nil
}

// heldPool is pool in whole segments, at most the whole segments capacity
// leaves beside reserved and outside (no cut when capacity is unknown).
func heldPool(capacity, reserved, outside, pool int64) int64 {
	p := (pool + segment - 1) / segment * segment
	if capacity > 0 {
		room := (capacity - reserved - outside) / segment * segment
		p = min(p, max(room, 0))
	}
	return p
}

// DeviceNeed is the least the device holds at the allocated peak peak: the
// allocator's part of it in whole segments with no reserve above it and no
// gather pool, plus the CUDA context and NCCL's buffers, as ProfilerPeaks
// counts them. It is what nvidia-smi would show at the peak once the caching
// allocator has given back every cached block, which it does short of memory
// before it reports out-of-memory: a failed cudaMalloc makes
// DeviceCachingAllocator::malloc release the cached blocks and retry
// (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp at
// eb42ad6eca0ce61e7c581212b4bf32f991425571, release_cached_blocks, counted in
// num_alloc_retries). So a step whose DeviceNeed fits the GPU runs, with
// retries when ProfilerPeaks' device peak does not fit (published runs did:
// docs/validation.md's "retries" rows), and one whose DeviceNeed exceeds it
// cannot: the context and NCCL's buffers are outside the allocator. Every
// "fits" verdict is this figure within the GPU's memory (Report.Fits,
// zero.Result.Fits).
func DeviceNeed(s *scenarios.Scenario, peak int64) (int64, error) {
	outside, err := outsideAllocator(s)
	if err != nil {
		return 0, err
	}
	return deviceNeed(s, peak, outside)
}

// deviceNeed is DeviceNeed with the device's memory outside the allocator
// given (outsideAllocator).
func deviceNeed(s *scenarios.Scenario, peak, outside int64) (int64, error) {
	reserved, err := profilerParts(s, peak, 0, 0, outside)
	if err != nil {
		return 0, err
	}
	var c calc
	need := c.Add(reserved, outside)
	if c.Err != nil {
		return 0, fmt.Errorf("memory: device need overflows: %w", c.Err)
	}
	return need, nil
}

// SimulatesReserve reports whether the reserved peak of s is simulated
// (SimulateReserved) rather than taken as memory.allocator_overhead above
// the allocated peak (scenarios.Scenario.UnsimulatedReserve says where and
// why not). The caller checks the convention (zerosim's own).
func SimulatesReserve(s *scenarios.Scenario) bool { return s.UnsimulatedReserve() == "" }

// SegmentModeOf is the caching allocator's segment mode of s
// (memory.expandable_segments).
func SegmentModeOf(s *scenarios.Scenario) SegmentMode {
	if e := s.Memory.ExpandableSegments; e != nil && *e {
		return SegmentsExpandable
	}
	return SegmentsDefault
}

// ReservedModeOf says how the reserved peak of s is obtained, for the
// machine-readable outputs (Report.ReservedMode): "simulated-default" or
// "simulated-expandable" when sim (the report's AllocSim) is not nil, else
// "overhead F (SOURCE)", the fraction memory.allocator_overhead above the
// allocated peak and where it came from: "default"
// (scenarios.DefaultAllocatorOverhead), "memory.allocator_overhead" (the
// scenario's), or "calibration FILE" (communication.calibration's memory
// part).
func ReservedModeOf(s *scenarios.Scenario, sim *AllocSim) string {
	if sim != nil {
		if sim.Expandable {
			return "simulated-expandable"
		}
		return "simulated-default"
	}
	return fmt.Sprintf("overhead %s (%s)", strconv.FormatFloat(allocatorOverhead(s), 'f', -1, 64), s.OverheadSource())
}

// AllocatorOverheadOf is s's memory.allocator_overhead, else
// scenarios.DefaultAllocatorOverhead (which a simulated reserved peak does
// not use: SimulatesReserve).
func AllocatorOverheadOf(s *scenarios.Scenario) float64 { return allocatorOverhead(s) }

// allocatorOverhead is s's memory.allocator_overhead, else the default.
func allocatorOverhead(s *scenarios.Scenario) float64 {
	if o := s.Memory.AllocatorOverhead; o != nil {
		return *o
	}
	return scenarios.DefaultAllocatorOverhead
}

// outsideWords names what the device holds outside the caching allocator
// in the words of c's GPU's vendor, as the reports name them
// (reports.Vendor): on an AMD GPU (scenarios.Cluster.AMD: an AMD preset or
// cluster.gfx, the GPUs RCCL's model runs) the HIP runtime's context and
// RCCL's buffers, on any other CUDA's context and NCCL's. RCCL is AMD's
// port of NCCL and allocates its buffers the same way, so the figure is
// the same (the component keeps its key, memory.nccl_buffers).
func outsideWords(c *scenarios.Cluster) string {
	if c.AMD() {
		return "the HIP context and RCCL's buffers"
	}
	return "the CUDA context and NCCL's buffers"
}

// outsideAllocator is what the device holds outside the caching allocator
// of a rank of s: the CUDA context and NCCL's buffers, the items
// memory.runtime_context and memory.nccl_buffers when given, else
// DefaultCUDAContext and the buffers of the rank's communicators
// (communicatorBuffers). Analyze computes it once per report
// (Report.outside).
func outsideAllocator(s *scenarios.Scenario) (int64, error) {
	ctx, nccl := int64(s.Memory.RuntimeContext), int64(s.Memory.NCCLBuffers)
	if ctx == 0 {
		ctx = DefaultCUDAContext
	}
	if nccl == 0 {
		var err error
		if nccl, err = communicatorBuffers(s); err != nil {
			return 0, err
		}
	}
	var c calc
	outside := c.Add(ctx, nccl)
	if c.Err != nil {
		return 0, fmt.Errorf("memory: device peak overflows: %w", c.Err)
	}
	return outside, nil
}

// profilerParts is ProfilerPeaks' reserved peak at allocator overhead
// overhead without the gather pool, given what the device peak adds
// outside the allocator (outsideAllocator: the CUDA context and NCCL's
// buffers).
func profilerParts(s *scenarios.Scenario, peak, pool int64, overhead float64, outside int64) (reserved int64, err error) {
	if pool < 0 {
		return 0, fmt.Errorf("memory: reserved pool %d B is negative", pool)
	}
	if reserved, err = Reserved(allocatorBytes(s, peak), overhead); err != nil {
		return 0, err
	}
	var c calc
	// The pool must fit in int64 segments with the rest.
	c.Add(reserved, outside, c.Mul(c.Add(pool, segment-1)/segment, segment))
	if c.Err != nil {
		return 0, fmt.Errorf("memory: device peak overflows: %w", c.Err)
	}
	return reserved, nil
}

// SeenPeaks is what a profiler and nvidia-smi can show of the reserved
// and device peaks (ProfilerPeaks' reserved and device, the demand)
// on a GPU of capacity bytes, with need the device's need at the
// allocated peak (DeviceNeed): the demand where it fits, else, when need
// fits, the reserve cut to the whole segments the GPU leaves beside the
// memory outside the allocator (device − reserved), never below the
// allocated part itself (need − outside); capped says it was cut.
//
// PyTorch's caching allocator cannot reserve more than the device
// holds: when cudaMalloc fails, DeviceCachingAllocator::malloc releases
// its cached blocks (release_available_cached_blocks, then
// release_cached_blocks) and tries again, counting num_alloc_retries,
// and raises OutOfMemoryError only when the request still does not fit
// (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp at
// eb42ad6eca0ce61e7c581212b4bf32f991425571). So where the allocated
// peak fits, torch.cuda.max_memory_reserved and nvidia-smi stay within
// the GPU, and the reserve above it is paid in retries (VerdictOf's
// FitsWithRetries, which judges by the demand); where need itself
// exceeds the GPU the step does not run and the demand is returned as
// it is. capacity ≤ 0 (unknown) cuts nothing. The simulated allocator
// (AllocSim) caps its own reserve at its limit already.
func SeenPeaks(reserved, device, need, capacity int64) (seenReserved, seenDevice int64, capped bool) {
	if capacity <= 0 || device <= capacity || need > capacity {
		return reserved, device, false
	}
	outside := device - reserved
	cut := max((capacity-outside)/segment*segment, need-outside)
	if cut >= reserved {
		return reserved, device, false
	}
	return cut, cut + outside, true
}
