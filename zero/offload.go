package zero

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Offload in the step schedule (ZeRO-Offload, Ren et al. 2021, §4: the
// gradients go down to the host, the CPU runs Adam, the 16-bit parameters
// come back up, 2M bytes each way per step; ZeRO-Infinity's offload_param
// for stage 3 copies each unit's parameter shard up before its gathers).
// DeepSpeed at edaa7221267243c7be7fb49c5d5f5c4fb97b4641:
//   - stage_1_and_2.py copies each reduced gradient partition into the
//     pinned fp32 CPU buffer as the buckets finish (cpu_offload,
//     async_inplace_copy_grad_to_fp32_buffer_from_gpu), steps
//     DeepSpeedCPUAdam on the CPU and copies the updated 16-bit partition
//     back before the parameter all-gather;
//   - stage3.py does the same per sub-group with offload_optimizer, and with
//     offload_param keeps the parameter partitions on the host and moves
//     them to the GPU when a module is fetched (partition_parameters.py
//     _all_gather_params: param.ds_tensor.to(device)).
//
// zerosim runs the copies on two streams of their own (down, up) and the
// CPU step on a third, each a timed task beside the compute stream:
//   - a PCIe copy of n bytes takes n / (the rank's PCIe share) + the link
//     latency; the share is cluster.host.pcie's bandwidth, divided among
//     the socket's GPUs with pcie_sharing: per_socket (every GPU copies at
//     once in the offload phases);
//   - the CPU Adam step over e elements reads and writes
//     scenarios.CPUAdamBytesPerParam bytes per element of host DRAM, the
//     node's memory_bandwidth shared by its GPUs' ranks; with nvme the
//     optimizer states also stream to and from NVMe (12 B read + 12 B
//     written per element at the rank's share of nvme_bandwidth), not
//     overlapped with the step (an upper bound: DeepSpeed pipelines the
//     swaps);
//   - offloaded parameters on nvme are read from NVMe before their PCIe
//     copy.
// PCIe is not a flow on the engine: the copies do not contend with the
// collectives' NIC traffic that shares the PCIe switch.

// hostPlan holds the offload durations of one schedule build.
type hostPlan struct {
	opt, params scenarios.OffloadDevice
	pcie        units.Bandwidth // per rank
	lat         units.Duration
	dram, nvme  units.Bandwidth // per rank
}

func newHostPlan(s *scenarios.Scenario) *hostPlan {
	o := s.Offload
	if !o.Any() {
		return nil
	}
	h := s.Cluster.Host
	gpn := int64(s.Cluster.GPUsPerNode)
	share := int64(1)
	if h.PCIeSharing == scenarios.PCIePerSocket && h.Sockets > 0 {
		share = max(gpn/int64(h.Sockets), 1)
	}
	return &hostPlan{opt: o.Optimizer, params: o.Params,
		pcie: units.Bandwidth(max(int64(h.PCIe.Bandwidth)/share, 1)), lat: h.PCIe.Latency,
		dram: units.Bandwidth(max(int64(h.MemoryBandwidth)/gpn, 1)), nvme: units.Bandwidth(max(int64(h.NVMeBandwidth)/gpn, 1))}
}

func hostTime(bytes int64, bw units.Bandwidth) (units.Duration, error) {
	d, err := units.CheckedTransferTime(units.Bytes(bytes), bw)
	if err != nil {
		return 0, fmt.Errorf("zero: an offload transfer of %d B at %d B/s takes longer than %v (check cluster.host)", bytes, int64(bw), units.Duration(math.MaxInt64))
	}
	return d, nil
}

func (h *hostPlan) copyTime(bytes int64) (units.Duration, error) {
	d, err := hostTime(bytes, h.pcie)
	if err != nil {
		return 0, err
	}
	return d + h.lat, nil
}

// gradDown adds the copy of a reduced gradient shard of bytes bytes to the
// host after task ready.
func (h *hostPlan) gradDown(b *builder, unit, bucket int, bytes int64, ready []int32) (int32, error) {
	d, err := h.copyTime(bytes)
	if err != nil {
		return 0, err
	}
	return b.add(Task{Kind: PCIeDown, Stream: HostDown, Phase: PhaseCompute, Unit: unit, Bucket: bucket, Dur: d, Bytes: bytes, After: ready}), nil
}

// step adds the CPU optimizer over elems elements after the gradient copies
// and the copy of the updated 16-bit shard (paramBytes) back up, unless the
// parameters stay on the host; it returns the last task.
func (h *hostPlan) step(b *builder, after []int32, elems, paramBytes int64) (int32, error) {
	n, err := units.Mul(elems, scenarios.CPUAdamBytesPerParam)
	if err != nil {
		return 0, fmt.Errorf("zero: CPU Adam bytes: %w", err)
	}
	d, err := hostTime(n, h.dram)
	if err != nil {
		return 0, err
	}
	if h.opt == scenarios.OffloadNVMe {
		sw, err := hostTime(24*elems, h.nvme)
		if err != nil {
			return 0, err
		}
		d += sw
	}
	b.sc.OptElems = elems
	t := b.add(Task{Kind: CPUAdam, Stream: HostCPU, Phase: PhaseCompute, Unit: -1, Bucket: -1, Dur: d, After: after})
	if h.params != scenarios.OffloadNone {
		return t, nil // the parameters live on the host: nothing goes up
	}
	up, err := h.copyTime(paramBytes)
	if err != nil {
		return 0, err
	}
	return b.add(Task{Kind: PCIeUp, Stream: HostUp, Phase: PhaseCompute, Unit: -1, Bucket: -1, Dur: up, Bytes: paramBytes, After: []int32{t}}), nil
}

// paramUp adds, with offload_param, the copy of unit u's parameter shard
// (bytes) to the GPU before its gather, with the gather's dependencies;
// it returns the gather's new dependencies.
func (h *hostPlan) paramUp(b *builder, u int, bytes int64, after, afterStart []int32) ([]int32, []int32, error) {
	if h == nil || h.params == scenarios.OffloadNone || bytes == 0 {
		return after, afterStart, nil
	}
	d, err := h.copyTime(bytes)
	if err != nil {
		return nil, nil, err
	}
	if h.params == scenarios.OffloadNVMe {
		r, err := hostTime(bytes, h.nvme)
		if err != nil {
			return nil, nil, err
		}
		d += r
	}
	t := b.add(Task{Kind: PCIeUp, Stream: HostUp, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: d, Bytes: bytes, After: after, AfterStart: afterStart})
	return []int32{t}, nil, nil
}

// HostStats is the host side of one rank's step under offload.
type HostStats struct {
	// PCIeDown and PCIeUp are the bytes copied to and from the host;
	// PCIeDownTime and PCIeUpTime the time their streams are busy.
	PCIeDown, PCIeUp         int64
	PCIeDownTime, PCIeUpTime units.Duration
	// CPUTime is the CPU optimizer's time (with its NVMe swaps).
	CPUTime units.Duration
	// Bottleneck names the busier host resource: "pcie" or "cpu".
	Bottleneck string
	// RAMPerNode is the node's host RAM in bytes (memory model).
	RAMPerNode int64
}

// hostStats sums the host tasks of the schedule (every rank runs them).
func hostStats(sc *Schedule) *HostStats {
	var h HostStats
	any := false
	for _, t := range sc.Tasks {
		switch t.Kind {
		case PCIeDown:
			h.PCIeDown += t.Bytes
			h.PCIeDownTime += t.Dur
		case PCIeUp:
			h.PCIeUp += t.Bytes
			h.PCIeUpTime += t.Dur
		case CPUAdam:
			h.CPUTime += t.Dur
		default:
			continue
		}
		any = true
	}
	if !any {
		return nil
	}
	h.Bottleneck = "cpu"
	if max(h.PCIeDownTime, h.PCIeUpTime) > h.CPUTime {
		h.Bottleneck = "pcie"
	}
	return &h
}
