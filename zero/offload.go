package zero

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/units"
)

// Offload in the step schedule (ZeRO-Offload, Ren et al. 2021, arXiv
// 2101.06840, §4: the
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
// CPU step on a third, as flows on the engine (hostNet):
//   - a PCIe copy of n bytes is a flow over the rank's link in that
//     direction (cluster.host.pcie; one link per socket shared by its GPUs
//     with pcie_sharing: per_socket) after the link latency;
//   - the CPU Adam step over e elements is a flow of
//     scenarios.CPUAdamBytesPerParam·e bytes over the node's DRAM
//     (memory_bandwidth, shared by the node's ranks); with nvme the
//     optimizer states then stream to and from NVMe (12 B read + 12 B
//     written per element over the node's nvme_bandwidth), not overlapped
//     with the step (an upper bound: DeepSpeed pipelines the swaps);
//   - offloaded parameters on nvme are read from NVMe before their PCIe
//     copy.
// The PCIe links are the host's own resources: the copies do not contend
// with the NIC traffic that shares a PCIe switch. The tasks' durations are
// the uncontended estimates (each rank its share), used only without an
// engine.

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
	pcie, lat := hostLink(s)
	return &hostPlan{opt: o.Optimizer, params: o.Params, pcie: pcie, lat: lat,
		dram: units.Bandwidth(max(int64(h.MemoryBandwidth)/gpn, 1)), nvme: units.Bandwidth(max(int64(h.NVMeBandwidth)/gpn, 1))}
}

// hostLink is a rank's share of its host link per direction
// (cluster.host.pcie; a socket's link shared by its GPUs under
// pcie_sharing: per_socket) and the link's latency: the uncontended
// rate of a copy to or from the host.
func hostLink(s *scenarios.Scenario) (units.Bandwidth, units.Duration) {
	h := s.Cluster.Host
	share := int64(1)
	if h.PCIeSharing == scenarios.PCIePerSocket && h.Sockets > 0 {
		share = max(int64(s.Cluster.GPUsPerNode)/int64(h.Sockets), 1)
	}
	return units.Bandwidth(max(int64(h.PCIe.Bandwidth)/share, 1)), h.PCIe.Latency
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
	t := b.add(Task{Kind: CPUAdam, Stream: HostCPU, Phase: PhaseCompute, Unit: -1, Bucket: -1, Dur: d, Bytes: n, After: after})
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
	// CPUStep says the CPU runs the optimizer (DeepSpeed's offload);
	// without it the copies are activation offloading's alone.
	CPUStep bool
	// RAMPerNode is the node's host RAM in bytes (memory model).
	RAMPerNode int64
}

// hostRunner runs one rank's offload task and calls done when it ends.
type hostRunner interface {
	Run(rank int, t *Task, done func())
}

// hostNet runs the offload tasks as flows on the engine, so ranks that
// share a resource share its bandwidth: each rank's PCIe link (one per
// socket, shared by its GPUs, with pcie_sharing: per_socket), one direction
// each way; each node's DRAM (the CPU Adam roofline) and NVMe.
type hostNet struct {
	eng     *sim.Engine
	gpn     int
	perSock int // GPUs per PCIe link
	pcie    int64
	lat     units.Duration
	dram    int64
	nvme    int64
	optNVMe bool
	parNVMe bool
	res     map[hostKey]*sim.Resource
}

type hostKey struct {
	what  string
	index int
}

func newHostNet(eng *sim.Engine, s *scenarios.Scenario) *hostNet {
	h := s.Cluster.Host
	gpn := s.Cluster.GPUsPerNode
	per := 1
	if h.PCIeSharing == scenarios.PCIePerSocket && h.Sockets > 0 {
		per = max(gpn/h.Sockets, 1)
	}
	return &hostNet{eng: eng, gpn: gpn, perSock: per, pcie: int64(h.PCIe.Bandwidth), lat: h.PCIe.Latency,
		dram: int64(h.MemoryBandwidth), nvme: int64(h.NVMeBandwidth),
		optNVMe: s.Offload.Optimizer == scenarios.OffloadNVMe, parNVMe: s.Offload.Params == scenarios.OffloadNVMe,
		res: map[hostKey]*sim.Resource{}}
}

func (h *hostNet) resource(what string, index int, bw int64) *sim.Resource {
	k := hostKey{what, index}
	r := h.res[k]
	if r == nil {
		r = sim.NewResource(fmt.Sprintf("%s%d", what, index), bw)
		h.res[k] = r
	}
	return r
}

// chain starts flows one after the other, then calls done.
func (h *hostNet) chain(steps []func(next func()), done func()) {
	if len(steps) == 0 {
		done()
		return
	}
	steps[0](func() { h.chain(steps[1:], done) })
}

func (h *hostNet) flow(r *sim.Resource, bytes int64) func(func()) {
	return func(next func()) {
		if bytes <= 0 {
			next()
			return
		}
		h.eng.StartFlow(bytes, []*sim.Resource{r}, next)
	}
}

func (h *hostNet) Run(rank int, t *Task, done func()) {
	node := rank / h.gpn
	link := node*h.gpn + rank%h.gpn/h.perSock // the rank's PCIe link
	var steps []func(func())
	switch t.Kind {
	case PCIeDown, PCIeUp:
		dir := "pcie-down"
		if t.Kind == PCIeUp {
			dir = "pcie-up"
			if h.parNVMe && t.Unit >= 0 {
				steps = append(steps, h.flow(h.resource("nvme", node, h.nvme), t.Bytes))
			}
		}
		pcie := h.resource(dir, link, h.pcie)
		steps = append(steps, func(next func()) {
			h.eng.At(h.eng.Now()+sim.Time(h.lat), func() { h.flow(pcie, t.Bytes)(next) })
		})
	case CPUAdam:
		steps = append(steps, h.flow(h.resource("dram", node, h.dram), t.Bytes))
		if h.optNVMe {
			steps = append(steps, h.flow(h.resource("nvme", node, h.nvme), t.Bytes/scenarios.CPUAdamBytesPerParam*24))
		}
	}
	h.chain(steps, done)
}

// hostStats sums the host tasks of rank 0 as they ran (every rank runs the
// same ones; with pcie_sharing per_socket or a shared DRAM they ran at the
// shared rate).
func (e *executor) hostStats() *HostStats {
	var h HostStats
	any := false
	for i, t := range e.sc.Tasks {
		if !t.Kind.IsHost() {
			continue
		}
		at := e.at(0, int32(i))
		d := e.end[at] - e.start[at]
		switch t.Kind {
		case PCIeDown:
			h.PCIeDown += t.Bytes
			h.PCIeDownTime += d
		case PCIeUp:
			h.PCIeUp += t.Bytes
			h.PCIeUpTime += d
		case CPUAdam:
			h.CPUTime += d
			h.CPUStep = true
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
