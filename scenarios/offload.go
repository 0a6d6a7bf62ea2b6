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
	// Memory is the node's host RAM (default: the GPU preset's system's,
	// DefaultHostSystem).
	Memory units.Bytes `yaml:"memory,omitempty"`
	// PCIe is the GPU↔host link, per direction (a link preset such as PCIe4,
	// or bandwidth and latency).
	PCIe Link `yaml:"pcie,omitempty"`
	// PCIeSharing is per_gpu (default) or per_socket.
	PCIeSharing PCIeSharing `yaml:"pcie_sharing,omitempty"`
	// Sockets is the CPU sockets per node (default: the system's, 2 on
	// the DGX and HGX hosts, one per superchip on GB200/GB300).
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

// DGX A100's host, filled in when the scenario offloads anything on a GPU
// whose system is DGX A100 or has no host table found (hosts gives the
// others); set your own for other machines.
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

// HostSystem is the host side of the system a GPU preset ships in, the
// defaults of cluster.host's memory, memory_bandwidth, pcie and sockets.
// Figures are per node, or per GPU where the system is built of trays or
// superchips that a node (an NVLink domain: docs/scenario-format.md,
// cluster) holds any number of: then gpus_per_node scales them.
type HostSystem struct {
	// Name is the system, as the docs' host table names it.
	Name string
	// Memory and MemoryBandwidth are per node; MemoryPerGPU and
	// BandwidthPerGPU, when > 0, are per GPU instead.
	Memory, MemoryPerGPU             units.Bytes
	MemoryBandwidth, BandwidthPerGPU units.Bandwidth
	// Link is the GPU↔host link preset (its payload rate); when empty,
	// LinkBandwidth per direction per socket and LinkLatency.
	Link          string
	LinkBandwidth units.Bandwidth
	LinkLatency   units.Duration
	// Sockets is the CPU sockets per node; GPUsPerSocket, when > 0, gives
	// one socket per that many GPUs instead (a superchip's Grace).
	Sockets, GPUsPerSocket int
	// Source cites every figure.
	Source string
}

// dgxA100 is DGX A100's host, the defaults above; the default of every
// GPU whose system has no host table found.
var dgxA100 = HostSystem{Name: "DGX A100", Memory: DefaultHostMemory, MemoryBandwidth: DefaultHostMemoryBandwidth, Link: DefaultHostPCIe, Sockets: DefaultHostSockets,
	Source: "DGX A100 datasheet: 1TB (the 320 GB system), 2 × AMD EPYC 7742 at 8 channels of DDR4-3200 each, PCIe 4.0 x16 per GPU (DefaultHostMemory and the constants above)"}

// hosts are the systems the GPU presets ship in, by GPU preset name
// prefix: the host side (sys; nil: no host table found, DGX A100's is
// taken, QA13 F5) and the CPU vendor NCCL's tuner reads (cpu, with its
// source; HostCPU). DDR bandwidth is channels × 8 B × the transfer rate the
// DIMM population runs at.
var hosts = []hostRow{
	{"V100", nil, HostIntel, "DGX-1 2 × Xeon E5-2698 v4, DGX-2 2 × Xeon Platinum 8168 (vengineer.hatenablog.com 2023-01-21, listing the DGX datasheets)"},
	{"A100", &dgxA100, HostAMD, "DGX A100: 2 × AMD EPYC 7742 (DGX A100 datasheet, as hardwaretimes.com's DGX A100 launch article and DefaultHostSockets quote it)"},
	{"A800", &dgxA100, HostAMD, "the A100 with NVLink cut: no DGX A800 datasheet found, so DGX A100's 2 × AMD EPYC 7742"},
	{"H100-PCIe", &dgxH100, HostIntel, "no H100 PCIe server's host table found: DGX H100's (2 × Intel Xeon Platinum 8480C, a PCIe Gen5 x16 link per GPU), an assumption"},
	{"H100", &dgxH100, HostIntel, "DGX H100: 2 × Intel Xeon Platinum 8480C (vengineer.hatenablog.com's DGX H100/B200 datasheet comparison, 2024-06-25)"},
	{"H800", &dgxH100, HostIntel, "the H100 with NVLink cut: DGX H100's 2 × Intel Xeon Platinum 8480C"},
	{"H200", &dgxH100, HostIntel, "DGX H200: 'Dual Intel Xeon Platinum 8480C Processors, 112 cores total' (the DGX H200 datasheet as quoted in the huggingface dataset adelineclarissa/MMLU-Bench; NVIDIA's MLPerf Inference v4.1 H200 system, H200-SXM-141GBx8_TRT_MaxQ.json in mlcommons/inference_results_v4.1, also 2 × 8480C)"},
	{"B200", &hgxB200, HostIntel, "DGX B200: 2 × Intel Xeon 8570 (NVIDIA DGX B200 User Guide, docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html)"},
	{"B300", nil, HostIntel, "DGX B300: 2 × Intel Xeon 6776P (STH as reposted by vuink.com, 'Intel Xeon 6 priority cores as a big NVIDIA GPU AI server feature'; no NVIDIA DGX B300 page found)"},
	{"GH200", &graceHopper, HostArm, "NVIDIA Grace (72 Arm Neoverse V2 cores) on the superchip, one per GPU (NVIDIA developer blog, 'NVIDIA Grace CPU Superchip Architecture In Depth')"},
	{"GB200", &graceBlackwell, HostArm, "NVIDIA Grace (72 Arm Neoverse V2 cores) on the superchip (NVIDIA developer blog, 'NVIDIA Grace CPU Superchip Architecture In Depth')"},
	{"GB300", &graceBlackwell, HostArm, "NVIDIA Grace on the superchip, as GB200"},
	{"MI35", &mi355xPlatform, HostAMD, "AMD's 8 × MI355X system: 2 × AMD EPYC 9575F (AMD's MLPerf Inference v6.1 system file 8xMI355X_2xEPYC_9575F.json); RCCL's getNetOverhead reads it (collectives/rccl.go)"},
	{"MI3", &mi300xPlatform, HostAMD, "AMD's 8 × MI300X platform: 2 × AMD EPYC 9374F (AMD's MLPerf Inference v4.1 system file 8xMI300X_2xEPYC-9374F.json, mlcommons/inference_results_v4.1); RCCL's getNetOverhead reads it (collectives/rccl.go)"},
	{"L40S", nil, HostIntel, "no L40S system datasheet found: intel, NCCL's case for any host not AMD x86"},
	{"A10G", nil, HostAMD, "AWS g5: 2nd Gen AMD EPYC 7R32 (aws/aperf docs/PMU.md, the EC2 instance table)"},
	{"L4", nil, HostAMD, "AWS g6: AMD EPYC 7R13 (aws/aperf docs/PMU.md, the EC2 instance table)"},
}

// hostRow is one row of hosts.
type hostRow struct {
	prefix    string
	sys       *HostSystem
	cpu       HostCPU
	cpuSource string
}

// hgxB200 is an 8 × B200 system's host.
var hgxB200 = HostSystem{Name: "HGX B200", Memory: 2 * units.TiB, MemoryBandwidth: 563_200_000_000, Link: "PCIe5", Sockets: 2,
	Source: "Nebius's 8 × B200 system in MLPerf Inference v6.0 (closed/Nebius/systems/nebius_b200_n1.json, mlcommons/inference_results_v6.0): " +
		"2 × Intel Xeon Platinum 8580, 32 × 64GB DDR5 (2 TiB), accelerator_host_interconnect \"PCIe Gen5 x16\"; 32 DIMMs on 2 × 8 channels run 2 a channel, " +
		"at DDR5-4400 (Intel 5th Gen Xeon: DDR5-5600 at one DIMM a channel, 4400 at two): 16 × 8 B × 4.4 GT/s = 563.2 GB/s. " +
		"DGX B200's host (2 × Xeon 8570, hosts) is the same Xeon generation; its memory table was not read"}

// mi300xPlatform is AMD's 8 × MI300X platform's host (MI325X takes it:
// no MI325X system file was found). The system file was read at
// mlcommons/inference_results_v4.1 a2f5d66d17e8f75c02fd74dfe810ecca6a046696
// (host_memory_capacity "1.5TiB", "24x 64GB Micron MTC40F2046S1RC48BA1
// MHCC", "2xAMD EPYC 9374F", "PCIe Gen5 x16").
var mi300xPlatform = HostSystem{Name: "AMD 8 × MI300X platform", Memory: 1536 * units.GiB, MemoryBandwidth: 921_600_000_000, Link: "PCIe5", Sockets: 2,
	Source: "AMD's MLPerf Inference v4.1 system file 8xMI300X_2xEPYC-9374F.json (mlcommons/inference_results_v4.1): 1.5TiB of 24 × 64GB " +
		"DDR5-4800 RDIMMs (Micron MTC40F2046S1RC48BA1), 2 × EPYC 9374F (12 channels each, one DIMM a channel): 24 × 8 B × 4.8 GT/s = 921.6 GB/s; " +
		"accelerator_host_interconnect \"PCIe Gen5 x16\". MI325X takes it, as its host CPU does"}

// mi355xPlatform is AMD's 8 × MI355X system's host, taken for the MI350X
// too (the MI350 series' air-cooled part: no MI350X system file was
// found, an assumption). Its memory bandwidth is an assumption: the file
// names the DIMMs (Micron MTC40F2047S1RC64BB1, "RC64" where the MI300X
// file's DDR5-4800 parts read "RC48") but not their speed, so the MI300X
// platform's 24 channels at DDR5-4800 are kept, a floor for 24 DIMMs on
// 24 channels; set cluster.host.memory_bandwidth for a measured figure.
var mi355xPlatform = HostSystem{Name: "AMD 8 × MI355X system", Memory: 3072 * units.GiB, MemoryBandwidth: 921_600_000_000, Link: "PCIe5", Sockets: 2,
	Source: "AMD's MLPerf Inference v6.1 system file closed/AMD/systems/8xMI355X_2xEPYC_9575F.json (as mirrored in " +
		"intel-ai-tce/inference_results_v6.1 @ 5174fca85775b97127da8e3ff07f1bb776880fc4): host_memory_capacity \"3.0 TB\" of 24 × 128GB " +
		"RDIMMs (17 + 7 Micron MTC40F2047S1RC64BB1), 2 × AMD EPYC 9575F (system name; 12 channels each, one DIMM a channel), " +
		"accelerator_host_interconnect \"PCIe Gen 5 x16\". Bandwidth: the DIMM speed is not stated, so the MI300X platform's " +
		"24 × 8 B × 4.8 GT/s = 921.6 GB/s is kept as a floor. The MI350X takes it"}

// dgxH100 is DGX H100's and DGX H200's host. Read at
// mlcommons/inference_results_v4.1 a2f5d66d17e8f75c02fd74dfe810ecca6a046696
// in closed/NVIDIA/systems/H200-SXM-141GBx8_TRT.json, the same system as the
// MaxQ file Source names (which that commit's index does not hold):
// host_memory_capacity "2 TB", "32x 64GB MTC40F2046S1RC48BA1", 2 × "Intel(R)
// Xeon(R) Platinum 8480C", "PCIe Gen5 x16".
var dgxH100 = HostSystem{Name: "DGX H100/H200", Memory: 2 * units.TiB, MemoryBandwidth: 563_200_000_000, Link: "PCIe5", Sockets: 2,
	Source: "NVIDIA's DGX H200 system in MLPerf Inference v4.1 (H200-SXM-141GBx8_TRT_MaxQ.json, mlcommons/inference_results_v4.1): 2 × Intel Xeon Platinum 8480C, " +
		"\"2 TB\" of 32 × 64GB DDR5-4800 RDIMMs (Micron MTC40F2046S1RC48BA1), accelerator_host_interconnect \"PCIe Gen5 x16\" (DGX H100: the same host); " +
		"32 DIMMs on 2 × 8 channels run 2 a channel, at DDR5-4400 (Intel 4th Gen Xeon: DDR5-4800 at one DIMM a channel, 4400 at two, as Dell's " +
		"PowerEdge XE9680 manual's memory table gives it): 16 × 8 B × 4.4 GT/s = 563.2 GB/s"}

// graceBlackwell is a GB200/GB300 NVL72 rack's host side, per GPU: each
// Grace CPU serves the 2 GPUs of its superchip.
var graceBlackwell = HostSystem{Name: "GB200/GB300 NVL72 (Grace)", MemoryPerGPU: 240_000_000_000, BandwidthPerGPU: 256_000_000_000,
	LinkBandwidth: 450_000_000_000, LinkLatency: pcieHopLatency, GPUsPerSocket: 2,
	Source: "NVIDIA GB200 NVL72 specifications (nvidia.com/en-us/data-center/gb200-nvl72): 36 Grace CPUs for 72 GPUs with up to 17TB of LPDDR5X " +
		"at up to 18.4 TB/s, 480GB at 512 GB/s a Grace (36 × 512 = 18.4 TB/s), and NVLink-C2C at 900 GB/s bidirectional between a Grace and " +
		"its superchip's 2 GPUs: 450 GB/s per direction a Grace, taken as shared by the 2 (pcie_sharing: per_socket, or 225 GB/s a GPU per_gpu). " +
		"Per GPU: 240GB and 256 GB/s. The C2C latency is not published: PCIe's 1 µs. GB300 NVL72: the same Grace, its own table not found"}

// graceHopper is a GH200 superchip's host: its one Grace, the Grace of the
// GB200 NVL72 specifications above (480GB of LPDDR5X at 512 GB/s), and
// NVLink-C2C at 900 GB/s bidirectional between it and its one GPU (the
// same link: stas00/ml-engineering network/README.md at
// 744d01e18b79512572f64a6bbd8b5f4a725203a7, "NVLink-C2C": "a
// high-bandwidth connection between Grace CPU and GPUs on GH200 and
// GB200+ modules"), 450 GB/s per direction, the GPU's alone.
var graceHopper = HostSystem{Name: "GH200 (Grace)", MemoryPerGPU: 480_000_000_000, BandwidthPerGPU: 512_000_000_000,
	LinkBandwidth: 450_000_000_000, LinkLatency: pcieHopLatency, GPUsPerSocket: 1,
	Source: "the Grace of the GB200 NVL72 specifications (480GB of LPDDR5X at 512 GB/s a Grace) and NVLink-C2C at 900 GB/s bidirectional, one Grace a GH200: " +
		"per GPU 480GB, 512 GB/s and 450 GB/s per direction. The C2C latency is not published: PCIe's 1 µs"}

// DefaultHostSystem is the host side of the system gpu (a GPU preset name)
// ships in (hosts), DGX A100's when none was found (V100, L40S, the RTX
// cards, A10G and L4 in AWS's g5 and g6, B300: no host memory table of the
// DGX B300 found, a custom GPU).
func DefaultHostSystem(gpu string) HostSystem {
	if h := hostOf(gpu); h != nil && h.sys != nil {
		return *h.sys
	}
	return dgxA100
}

// hostOf is the row of hosts for gpu (a GPU preset name), nil when none.
func hostOf(gpu string) *hostRow {
	for i := range hosts {
		if strings.HasPrefix(gpu, hosts[i].prefix) {
			return &hosts[i]
		}
	}
	return nil
}

// nodeMemory is the system's host RAM on a node of gpn GPUs.
func (h HostSystem) nodeMemory(gpn int) units.Bytes {
	if h.MemoryPerGPU > 0 {
		return h.MemoryPerGPU * units.Bytes(gpn)
	}
	return h.Memory
}

// nodeBandwidth is the system's DRAM bandwidth on a node of gpn GPUs.
func (h HostSystem) nodeBandwidth(gpn int) units.Bandwidth {
	if h.BandwidthPerGPU > 0 {
		return h.BandwidthPerGPU * units.Bandwidth(gpn)
	}
	return h.MemoryBandwidth
}

// nodeSockets is the system's CPU sockets on a node of gpn GPUs.
func (h HostSystem) nodeSockets(gpn int) int {
	if h.GPUsPerSocket > 0 {
		return max((gpn+h.GPUsPerSocket-1)/h.GPUsPerSocket, 1)
	}
	return h.Sockets
}

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

// DefaultHostCPU is the host CPU of the system gpu (a GPU preset name)
// ships in (hosts, each with its source); intel for a GPU with no system
// datasheet found (the RTX cards, a custom GPU), which NCCL's tuner treats
// as it treats any host that is not AMD x86.
func DefaultHostCPU(gpu string) HostCPU {
	if h := hostOf(gpu); h != nil {
		return h.cpu
	}
	return HostIntel
}

// CPU is the cluster's host CPU: cluster.host.cpu when given (or filled
// in with the host section), else the GPU preset's default host.
func (c *Cluster) CPU() HostCPU {
	if c.Host.CPU != "" {
		return c.Host.CPU
	}
	return DefaultHostCPU(c.HostPreset())
}

// CPUAdamBytesPerParam is the DRAM traffic of DeepSpeed's CPU Adam per
// parameter: it reads the fp32 param, grad, exp_avg and exp_avg_sq (16 B) and
// writes param, exp_avg and exp_avg_sq (12 B) (csrc/adam/cpu_adam_impl.cpp,
// Adam_Optimizer::Step_AVX, deepspeedai/DeepSpeed at edaa722). The 16-bit
// copy for the GPU is counted on PCIe.
const CPUAdamBytesPerParam = 28

// FSDPOffloadNotModelled is the one sentence every input that asks for
// PyTorch FSDP's CPU offload is refused with (FSDP1's CPUOffload, FSDP2's
// CPUOffloadPolicy): the offload zerosim models is DeepSpeed's, whose fp32
// master partition, host optimizer (CPUAdam) and copies FSDP does not
// have, so an FSDP run read as it would be modelled wrongly, not roughly
// (qamem32 N1: an FSDP1 CPUOffload run's reserved peak 26.6 % low).
const FSDPOffloadNotModelled = "FSDP's CPU offload (parameters and gradients on the host, the optimizer stepped by the CPU) is not modelled (zerosim's offload is DeepSpeed's ZeRO-Offload)"

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
			return l.errAlone(f.key, fmt.Sprintf("%s %q is unknown %s", leaf(f.key), string(d), unknownValue(string(d), []string{"none", "cpu", "nvme"}, "")))
		}
	}
	p := s.Parallelism
	if o.Optimizer != OffloadNone && p.Stage == 0 {
		return l.errPath("offload.optimizer", fmt.Sprintf("optimizer: %s needs ZeRO stage 1, 2 or 3 (DeepSpeed offloads the partitioned optimizer; set zero_stage: 1 or more, or optimizer: none)", o.Optimizer))
	}
	if o.Params != OffloadNone && p.Stage != 3 {
		return l.errPath("offload.params", fmt.Sprintf("params: %s needs ZeRO stage 3 (DeepSpeed's offload_param is stage 3 only; set zero_stage: 3 or params: none)", o.Params))
	}
	if o.Any() && s.Communication.Boundary.FSDP() {
		key, dev := "offload.params", o.Params
		if dev == OffloadNone {
			key, dev = "offload.optimizer", o.Optimizer
		}
		return l.errPath(key, fmt.Sprintf("%s %s beside communication.boundary %s: %s; set offload to none for the run on the GPUs, or communication.boundary: deepspeed for a DeepSpeed ZeRO-Offload run", key, dev, s.Communication.Boundary, FSDPOffloadNotModelled))
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
	fill := s.Offload.Any() || s.Training.ActivationOffloadLayers > 0 || l.has("cluster.host")
	if !fill {
		return nil
	}
	sys, gpn := DefaultHostSystem(s.Cluster.HostPreset()), s.Cluster.GPUsPerNode
	if !l.has("cluster.host.memory") {
		h.Memory = sys.nodeMemory(gpn)
	}
	if h.Memory <= 0 {
		return l.errPath("cluster.host.memory", "memory=0 is out of range (use the node's RAM such as 1TiB)")
	}
	if err := enum(l, "cluster.host.pcie_sharing", &h.PCIeSharing, PCIePerGPU, PCIePerGPU, PCIePerSocket); err != nil {
		return err
	}
	if err := l.resolveHostLink(h, sys, gpn); err != nil {
		return err
	}
	if !l.has("cluster.host.sockets") {
		h.Sockets = sys.nodeSockets(gpn)
	}
	if err := l.intRange("cluster.host.sockets", int64(h.Sockets)); err != nil {
		return err
	}
	if err := enum(l, "cluster.host.cpu", &h.CPU, DefaultHostCPU(s.Cluster.HostPreset()), HostIntel, HostAMD, HostArm); err != nil {
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
	}{{"memory_bandwidth", &h.MemoryBandwidth, sys.nodeBandwidth(gpn), "409.6GB/s"}, {"nvme_bandwidth", &h.NVMeBandwidth, DefaultNVMeBandwidth, "25GB/s"}} {
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

// resolveHostLink fills cluster.host.pcie: a preset's payload rate, or the
// system's own link (sys.LinkBandwidth per socket, a GPU's share of it
// under pcie_sharing: per_gpu).
func (l *loader) resolveHostLink(h *Host, sys HostSystem, gpn int) *Error {
	lk := &h.PCIe
	preset := sys.Link
	if l.has("cluster.host.pcie.preset") {
		if _, ok := FindLink(lk.Preset); !ok {
			return l.errAlone("cluster.host.pcie.preset", fmt.Sprintf("preset %q is unknown %s", lk.Preset, unknownValue(lk.Preset, linkNames(), "")))
		}
		preset = lk.Preset
	}
	lk.Preset = preset
	bw, lat := sys.LinkBandwidth, sys.LinkLatency
	if lp, ok := FindLink(preset); ok {
		bw, lat = PayloadBandwidth(lp), lp.Latency
	} else if h.PCIeSharing == PCIePerGPU && sys.GPUsPerSocket > 1 {
		bw /= units.Bandwidth(min(sys.GPUsPerSocket, max(gpn, 1)))
	}
	if !l.has("cluster.host.pcie.bandwidth") {
		lk.Bandwidth = bw
	}
	if !l.has("cluster.host.pcie.latency") {
		lk.Latency = lat
	}
	if lk.Bandwidth <= 0 {
		return l.errPath("cluster.host.pcie.bandwidth", "bandwidth=0 is out of range (use a bandwidth > 0 such as 32GB/s)")
	}
	return l.maxBandwidth("cluster.host.pcie.bandwidth", lk.Bandwidth)
}
