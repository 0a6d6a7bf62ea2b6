package scenarios

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// OffloadDevice is where offload.optimizer or offload.params lives:
// DeepSpeed's offload_optimizer.device / offload_param.device ("none",
// "cpu", "nvme"; deepspeed/runtime/zero/offload_config.py,
// OffloadDeviceEnum, deepspeedai/DeepSpeed at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641). "none" resolves to the empty
// value, so a scenario without offload prints no offload section.
type OffloadDevice string

const (
	OffloadNone OffloadDevice = ""
	OffloadCPU  OffloadDevice = "cpu"
	OffloadNVMe OffloadDevice = "nvme"
)

// String returns none, cpu or nvme.
func (d OffloadDevice) String() string {
	if d == OffloadNone {
		return "none"
	}
	return string(d)
}

// Offload places the optimizer (fp32 master params, Adam m and v, and its
// step) and the parameters on the host.
type Offload struct {
	// Optimizer is ZeRO-Offload's offload_optimizer (stages 1–3): the
	// gradients go down over PCIe, the step runs on the CPU, the 16-bit
	// parameters come back up. nvme keeps the states on NVMe (ZeRO-Infinity).
	Optimizer OffloadDevice `yaml:"optimizer,omitempty"`
	// Params is ZeRO-3's offload_param: the parameter shards live on the
	// host (or NVMe) and are copied up before each gather.
	Params OffloadDevice `yaml:"params,omitempty"`
}

// Any reports whether anything is offloaded.
func (o Offload) Any() bool { return o.Optimizer != OffloadNone || o.Params != OffloadNone }

// PCIeSharing says how GPUs share the host link (cluster.host.pcie_sharing).
type PCIeSharing string

const (
	// PCIePerGPU gives every GPU its own x16 link to the host (default).
	PCIePerGPU PCIeSharing = "per_gpu"
	// PCIePerSocket shares one link per CPU socket among the socket's GPUs
	// (host.sockets sockets per node).
	PCIePerSocket PCIeSharing = "per_socket"
)

// Host is one node's host side, used by offload.
type Host struct {
	// Memory is the node's host RAM.
	Memory units.Bytes `yaml:"memory,omitempty"`
	// PCIe is the GPU↔host link, per direction (a link preset such as PCIe4,
	// or bandwidth and latency).
	PCIe Link `yaml:"pcie,omitempty"`
	// PCIeSharing is per_gpu (default) or per_socket.
	PCIeSharing PCIeSharing `yaml:"pcie_sharing,omitempty"`
	// Sockets is the CPU sockets per node (default 2).
	Sockets int `yaml:"sockets,omitempty"`
	// CPU is the host CPU's vendor and architecture, which NCCL's tuner
	// reads for multi-node collectives (intel, amd or arm; default: the
	// GPU preset's DGX or cloud host, DefaultHostCPU). Cluster.CPU gives it
	// when the host section is not filled in.
	CPU HostCPU `yaml:"cpu,omitempty"`
	// MemoryBandwidth is the node's DRAM bandwidth, the roofline of the CPU
	// Adam step (CPUAdamBytesPerParam bytes per parameter).
	MemoryBandwidth units.Bandwidth `yaml:"memory_bandwidth,omitempty"`
	// NVMeBandwidth is the node's aggregate NVMe bandwidth (offload to nvme).
	NVMeBandwidth units.Bandwidth `yaml:"nvme_bandwidth,omitempty"`
}

// Host defaults, filled in when the scenario offloads anything. They
// describe an NVIDIA DGX A100 node; set your own for other machines.
const (
	// DefaultHostMemory: DGX A100 datasheet (NVIDIA, 2020), "System Memory
	// 1TB" (the 320 GB system; the 640 GB system has 2 TB).
	DefaultHostMemory = units.TiB
	// DefaultHostPCIe: every A100 SXM4 reaches the host over PCIe 4.0 x16
	// through a PCIe switch (DGX A100 datasheet); the PCIe4 link preset,
	// 32 GB/s line rate per direction (PCI-SIG, PCIe 4.0: 16 GT/s × 16
	// lanes), of which the host link carries the payload rate,
	// 31,507,692,307 B/s after 128b/130b encoding (PayloadBandwidth).
	DefaultHostPCIe = "PCIe4"
	// DefaultHostSockets: 2 × AMD EPYC 7742 (DGX A100 datasheet).
	DefaultHostSockets = 2
	// DefaultHostMemoryBandwidth: 2 sockets × 8 channels × DDR4-3200
	// (25.6 GB/s a channel) = 409.6 GB/s (AMD EPYC 7742 product page: 8
	// memory channels, DDR4-3200, 204.8 GB/s per socket).
	DefaultHostMemoryBandwidth units.Bandwidth = 409_600_000_000
	// DefaultNVMeBandwidth: DGX A100's 4 U.2 NVMe data drives (datasheet:
	// "15 TB (4× 3.84 TB) U.2 NVMe"), each on a PCIe 4.0 x4 link of
	// 7.877 GB/s (16 GT/s × 4 lanes × 128/130 / 8): 31.5 GB/s, the link
	// ceiling. Drives read and write below it; set the figure fio measures.
	DefaultNVMeBandwidth units.Bandwidth = 31_507_692_307
)

// HostCPU is a host CPU's vendor and architecture as NCCL's tuner tells
// them apart (comm->cpuVendor, comm->cpuArch; NVIDIA/nccl
// src/graph/tuning.cc at 5067397c2676d5aed50042fc39e5c8ee96eb0027):
// across nodes an AMD x86 host costs 2 µs per network post where an Intel
// or any other host costs 1 (getNetOverhead, lines 228–233) and takes the
// AMD row of the ring/tree LL bandwidth caps (llMaxBws index1, lines
// 268–272), and only an x86 host gets the Blackwell NVLS-tree correction
// (ncclTopoGetAlgoTime, lines 643–646). NCCL's "mixed" vendor (nodes of
// both) is not offered: a cluster is modelled with one host.
type HostCPU string

const (
	HostIntel HostCPU = "intel"
	HostAMD   HostCPU = "amd"
	HostArm   HostCPU = "arm"
)

// hostCPUs are the GPU presets' default hosts: the vendor of the CPU in
// the system the preset's GPU ships in, by GPU preset name prefix.
var hostCPUs = []struct {
	prefix string
	cpu    HostCPU
	source string
}{
	{"V100", HostIntel, "DGX-1 2 × Xeon E5-2698 v4, DGX-2 2 × Xeon Platinum 8168 (vengineer.hatenablog.com 2023-01-21, listing the DGX datasheets)"},
	{"A100", HostAMD, "DGX A100: 2 × AMD EPYC 7742 (DGX A100 datasheet, as hardwaretimes.com's DGX A100 launch article and DefaultHostSockets quote it)"},
	{"A800", HostAMD, "the A100 with NVLink cut: no DGX A800 datasheet found, so DGX A100's 2 × AMD EPYC 7742"},
	{"H100", HostIntel, "DGX H100: 2 × Intel Xeon Platinum 8480C (vengineer.hatenablog.com's DGX H100/B200 datasheet comparison, 2024-06-25)"},
	{"H800", HostIntel, "the H100 with NVLink cut: DGX H100's 2 × Intel Xeon Platinum 8480C"},
	{"H200", HostIntel, "DGX H200: 'Dual Intel Xeon Platinum 8480C Processors, 112 cores total' (the DGX H200 datasheet as quoted in the huggingface dataset adelineclarissa/MMLU-Bench; NVIDIA's MLPerf Inference v4.1 H200 system, H200-SXM-141GBx8_TRT_MaxQ.json in mlcommons/inference_results_v4.1, also 2 × 8480C)"},
	{"B200", HostIntel, "DGX B200: 2 × Intel Xeon 8570 (NVIDIA DGX B200 User Guide, docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html)"},
	{"B300", HostIntel, "DGX B300: 2 × Intel Xeon 6776P (STH as reposted by vuink.com, 'Intel Xeon 6 priority cores as a big NVIDIA GPU AI server feature'; no NVIDIA DGX B300 page found)"},
	{"GB200", HostArm, "NVIDIA Grace (72 Arm Neoverse V2 cores) on the superchip (NVIDIA developer blog, 'NVIDIA Grace CPU Superchip Architecture In Depth')"},
	{"GB300", HostArm, "NVIDIA Grace on the superchip, as GB200"},
	{"MI3", HostAMD, "AMD's 8 × MI300X platform: 2 × AMD EPYC 9374F (AMD's MLPerf Inference v4.1 system file 8xMI300X_2xEPYC-9374F.json, mlcommons/inference_results_v4.1); RCCL's getNetOverhead reads it (collectives/rccl.go)"},
	{"L40S", HostIntel, "no L40S system datasheet found: intel, NCCL's case for any host not AMD x86"},
	{"A10G", HostAMD, "AWS g5: 2nd Gen AMD EPYC 7R32 (aws/aperf docs/PMU.md, the EC2 instance table)"},
	{"L4", HostAMD, "AWS g6: AMD EPYC 7R13 (aws/aperf docs/PMU.md, the EC2 instance table)"},
}

// DefaultHostCPU is the host CPU of the system gpu (a GPU preset name)
// ships in (hostCPUs, each with its source); intel for a GPU with no
// system datasheet found (the RTX cards, a custom GPU), which
// NCCL's tuner treats as it treats any host that is not AMD x86.
func DefaultHostCPU(gpu string) HostCPU {
	for _, h := range hostCPUs {
		if strings.HasPrefix(gpu, h.prefix) {
			return h.cpu
		}
	}
	return HostIntel
}

// CPU is the cluster's host CPU: cluster.host.cpu when given (or filled
// in with the host section), else the GPU preset's default host.
func (c *Cluster) CPU() HostCPU {
	if c.Host.CPU != "" {
		return c.Host.CPU
	}
	return DefaultHostCPU(c.GPU)
}

// CPUAdamBytesPerParam is the DRAM traffic of DeepSpeed's CPU Adam per
// parameter: it reads the fp32 param, grad, exp_avg and exp_avg_sq (16 B) and
// writes param, exp_avg and exp_avg_sq (12 B) (csrc/adam/cpu_adam_impl.cpp,
// Adam_Optimizer::Step_AVX, deepspeedai/DeepSpeed at edaa722). The 16-bit
// copy for the GPU is counted on PCIe.
const CPUAdamBytesPerParam = 28

func (l *loader) resolveOffload(s *Scenario) *Error {
	o := &s.Offload
	for _, f := range []struct {
		key string
		dev *OffloadDevice
	}{{"offload.optimizer", &o.Optimizer}, {"offload.params", &o.Params}} {
		if *f.dev == "none" {
			*f.dev = OffloadNone
		}
		if d := *f.dev; d != OffloadNone && d != OffloadCPU && d != OffloadNVMe {
			return l.errPath(f.key, fmt.Sprintf("%s %q is unknown %s", leaf(f.key), string(d), unknownValue(string(d), []string{"none", "cpu", "nvme"}, "")))
		}
	}
	p := s.Parallelism
	if o.Optimizer != OffloadNone && p.Stage == 0 {
		return l.errPath("offload.optimizer", fmt.Sprintf("optimizer: %s needs ZeRO stage 1, 2 or 3 (DeepSpeed offloads the partitioned optimizer; set zero_stage: 1 or more, or optimizer: none)", o.Optimizer))
	}
	if o.Params != OffloadNone && p.Stage != 3 {
		return l.errPath("offload.params", fmt.Sprintf("params: %s needs ZeRO stage 3 (DeepSpeed's offload_param is stage 3 only; set zero_stage: 3 or params: none)", o.Params))
	}
	if o.Any() && p.EP > 1 {
		return l.errPath("offload", fmt.Sprintf("offload is modelled for dense data parallelism; ep=%d must be 1", p.EP))
	}
	if o.Any() && p.K > 1 {
		return l.errPath("offload", fmt.Sprintf("offload is DeepSpeed's and has no k (num_distributed_optimizer_instances); k=%d must be 1", p.K))
	}
	return l.resolveHost(s)
}

// resolveHost checks the host keys that are given and, when the scenario
// offloads, fills the defaults of the others.
func (l *loader) resolveHost(s *Scenario) *Error {
	h := &s.Cluster.Host
	fill := s.Offload.Any() || l.has("cluster.host")
	if !fill {
		return nil
	}
	if !l.has("cluster.host.memory") {
		h.Memory = DefaultHostMemory
	}
	if h.Memory <= 0 {
		return l.errPath("cluster.host.memory", "memory=0 is out of range (use the node's RAM such as 1TiB)")
	}
	lk := &h.PCIe
	preset := DefaultHostPCIe
	if l.has("cluster.host.pcie.preset") {
		if _, ok := findLink(lk.Preset); !ok {
			return l.errPath("cluster.host.pcie.preset", fmt.Sprintf("preset %q is unknown %s", lk.Preset, unknownValue(lk.Preset, linkNames(), "")))
		}
		preset = lk.Preset
	}
	lk.Preset = preset
	lp, _ := findLink(preset)
	if !l.has("cluster.host.pcie.bandwidth") {
		lk.Bandwidth = PayloadBandwidth(lp)
	}
	if !l.has("cluster.host.pcie.latency") {
		lk.Latency = lp.Latency
	}
	if lk.Bandwidth <= 0 {
		return l.errPath("cluster.host.pcie.bandwidth", "bandwidth=0 is out of range (use a bandwidth > 0 such as 32GB/s)")
	}
	if err := enum(l, "cluster.host.pcie_sharing", &h.PCIeSharing, PCIePerGPU, PCIePerGPU, PCIePerSocket); err != nil {
		return err
	}
	if !l.has("cluster.host.sockets") {
		h.Sockets = DefaultHostSockets
	}
	if err := l.intRange("cluster.host.sockets", int64(h.Sockets), 1, MaxGPUsPerNode); err != nil {
		return err
	}
	if err := enum(l, "cluster.host.cpu", &h.CPU, DefaultHostCPU(s.Cluster.GPU), HostIntel, HostAMD, HostArm); err != nil {
		return err
	}
	if h.PCIeSharing == PCIePerSocket && s.Cluster.GPUsPerNode%h.Sockets != 0 {
		return l.errPath("cluster.host.sockets", fmt.Sprintf("sockets=%d does not divide gpus_per_node=%d (pcie_sharing: per_socket puts the same number of GPUs on each socket)", h.Sockets, s.Cluster.GPUsPerNode))
	}
	for _, f := range []struct {
		key string
		v   *units.Bandwidth
		def units.Bandwidth
		eg  string
	}{{"memory_bandwidth", &h.MemoryBandwidth, DefaultHostMemoryBandwidth, "409.6GB/s"}, {"nvme_bandwidth", &h.NVMeBandwidth, DefaultNVMeBandwidth, "25GB/s"}} {
		p := "cluster.host." + f.key
		if !l.has(p) {
			*f.v = f.def
		}
		if *f.v <= 0 {
			return l.errPath(p, fmt.Sprintf("%s=0 is out of range (use a bandwidth > 0 such as %s)", f.key, f.eg))
		}
	}
	return nil
}
