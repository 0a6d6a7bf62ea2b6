package memory

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
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
const DefaultCUDAContext int64 = 400_000_000

// NCCLConnectionBuffer is the device memory of one NCCL connection on one
// channel with the default protocol buffers (NCCL_BUFFSIZE 4 MiB for Simple
// plus the LL and LL128 buffers): the 10,485,760-byte allocations NCCL logs
// per channel and peer (NCCL_DEBUG_SUBSYS=ALLOC, NVIDIA/nccl#1685, 8 H100).
const NCCLConnectionBuffer int64 = 10 * 1 << 20

// DefaultNCCLChannels is the channel count NCCL opens between H100s over
// NVLink (32, logged in NVIDIA/nccl#1685); DefaultRingConnections is the
// two connections a ring keeps (to the previous and next rank, "regardless
// of the scale": sjeaugey in NVIDIA/nccl#864/#986).
const (
	DefaultNCCLChannels    = 32
	DefaultRingConnections = 2
)

// NCCLBuffers is the device memory of communicators NCCL communicators with
// channels channels and conns connections each (outside the caching
// allocator): communicators·channels·conns·NCCLConnectionBuffer. With the
// defaults, one ring communicator holds 640 MiB.
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

// memory.allocator_overhead's default, scenarios.DefaultAllocatorOverhead,
// is the fraction by which PyTorch's caching allocator's reserved peak
// exceeds the allocated peak in a large-model training step: freed blocks
// stay cached in their segments, and a later request of another size
// cannot always reuse them (c10/cuda/CUDACachingAllocator.cpp: blocks over
// 1 MiB are rounded to 2 MiB and split only within their segment). No
// source publishes both peaks for a run we have, so the default is fitted:
// when chosen (b73d299) it put zerosim's reserved peak on torchtitan's
// Llama 3.1 8B 8-GPU row (82.4 GiB, Table 1 of docs/performance.md at
// eaea6f6); TestValidation checks both rows (Tables 1 and 3) with it, and
// docs/validation.md shows their errors now.

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
	const seg = 2 << 20
	v := int64(r)
	return (v + seg - 1) / seg * seg, nil
}

// ProfilerPeaks turns the model's peak (which counts memory.runtime_context
// and memory.nccl_buffers as items when given) into what a profiler and
// nvidia-smi would show: the caching allocator's reserved peak (the
// allocated bytes outside those two items, times 1 + memory.
// allocator_overhead) and the device peak (reserved plus the CUDA context
// and NCCL's buffers: the items when given, else DefaultCUDAContext and one
// ring communicator per process group the rank is in: the ZeRO group, plus
// the inter-group one when K > 1, plus DeepSpeed ZeRO-3's clone of the world
// group under communication.boundary: deepspeed).
func ProfilerPeaks(s *scenarios.Scenario, peak int64) (reserved, device int64, err error) {
	ctx, nccl := int64(s.Memory.RuntimeContext), int64(s.Memory.NCCLBuffers)
	overhead := scenarios.DefaultAllocatorOverhead
	if o := s.Memory.AllocatorOverhead; o != nil {
		overhead = *o
	}
	if reserved, err = Reserved(max(peak-ctx-nccl, 0), overhead); err != nil {
		return 0, 0, err
	}
	if ctx == 0 {
		ctx = DefaultCUDAContext
	}
	if nccl == 0 {
		comms := 1
		if s.Parallelism.K > 1 {
			comms++
		}
		if s.Parallelism.Stage == 3 && s.Communication.Boundary == scenarios.BoundaryDeepSpeed {
			// DeepSpeed's ZeRO-3 runs its collectives on two process
			// groups of the same ranks, so two communicators: parameters
			// gather over the world group (deepspeedai/DeepSpeed
			// deepspeed/runtime/zero/partition_parameters.py at e9503fe4,
			// Init: ds_process_group = dist.get_world_group() when no group
			// is given) and gradients reduce-scatter over the engine's
			// data-parallel group, a clone of it (engine.py passes
			// dp_process_group=seq_data_parallel_group; utils/groups.py
			// _get_data_parallel_group without an mpu returns
			// _clone_world_group, dist.new_group over every rank).
			comms++
		}
		if nccl, err = NCCLBuffers(comms, DefaultNCCLChannels, DefaultRingConnections); err != nil {
			return 0, 0, err
		}
	}
	var c calc
	device = c.Add(reserved, ctx, nccl)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("memory: device peak overflows: %w", c.Err)
	}
	return reserved, device, nil
}
