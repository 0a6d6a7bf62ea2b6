package collectives

// NCCL's cost model, as its tuner computes it, with the bandwidths taken
// from the cluster's links instead of NCCL's topology search.
//
// Source: NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel,
// ncclTopoGetAlgoTime, ncclTunerConstantsDefaults) and src/graph/search.cc
// (speed arrays), src/graph/topo.h (NVLink bandwidth per link), commit
// 5067397c2676d5aed50042fc39e5c8ee96eb0027. A collective of nBytes takes
// latency + nBytes / algbw, where the latency is NCCL's base latency of the
// (algorithm, protocol) plus its per-hop hardware latencies (NVLink or PCI
// inside a node, network between nodes), and algbw is the bus bandwidth the
// algorithm reaches converted to algorithm bandwidth. NCCL picks the
// (algorithm, protocol) of least time; so does Choose.

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Proto is an NCCL protocol.
type Proto int

const (
	// LL is NCCL's low-latency protocol: 8-byte stores of 4 data bytes and
	// a flag, half the bandwidth.
	LL Proto = iota
	// LL128 stores 120 data bytes per 128-byte line.
	LL128
	// Simple is the bulk protocol: full bandwidth, a fence per step.
	Simple
	numProtos
)

// String is NCCL's name of the protocol.
func (p Proto) String() string {
	switch p {
	case LL:
		return "LL"
	case LL128:
		return "LL128"
	case Simple:
		return "Simple"
	}
	return fmt.Sprintf("proto(%d)", int(p))
}

// Arch is a GPU generation, the index of NCCL's per-architecture tables.
type Arch int

const (
	Volta Arch = iota
	Ampere
	Hopper
	Blackwell
)

// String names the generation.
func (a Arch) String() string {
	return [...]string{"Volta", "Ampere", "Hopper", "Blackwell"}[a]
}

// Hardware is what NCCL's tuner needs to know about a cluster: the GPU
// generation, whether the NVSwitch does in-network reduction (NVLS), and
// the bandwidth and latency of its links (nominal: datasheet figures).
type Hardware struct {
	Arch Arch
	// GFX is an AMD GPU's LLVM target (gfx942, gfx950), timed by RCCL's
	// tuner instead (rccl.go); "" for NVIDIA GPUs.
	GFX string
	// PCI: the GPUs of a node talk over PCIe, not NVLink.
	PCI bool
	// NVLS: NVLink SHARP (Hopper or later with third-generation NVSwitch).
	NVLS bool
	// IntraBW is one GPU's NVLink (or PCIe) bandwidth per direction.
	IntraBW units.Bandwidth
	// NICBW is one NIC's bandwidth per direction; NICsPerNode NICs per node.
	NICBW       units.Bandwidth
	NICsPerNode int
	// InterLatency is the network's latency per hop beyond what NCCL's
	// network hardware latencies already hold (NCCL adds it as the graph's
	// latencyInter, twice for Simple: the flush; 0 for InfiniBand, whose
	// plugin reports none). IntraLatency is the same for the intra-node
	// links. HardwareOf takes them as the scenario's link latencies beyond
	// those of the links NCCL's tables were measured on: InfiniBand (the
	// NDR preset) between nodes, NVLink or PCIe (their presets) inside.
	InterLatency units.Duration
	IntraLatency units.Duration
	// PluginLatency, when not zero, is the latencyInter NCCL's tuner adds
	// in place of InterLatency because the network plugin reports it
	// (search.cc line 745 at the commit above: graph->latencyInter =
	// net->net.latency, the plugin's props.latency), where that figure is
	// a tuning value and not the link's. NCCL chooses its algorithm and
	// protocol by it (Choose ranks by it); the time is the chosen
	// combination's with the link's InterLatency. HardwareOf copies the
	// inter link preset's PluginLatency (scenarios.LinkPreset, which
	// cites aws-ofi-nccl's 75 µs on the EFA-p4d and EFA-p5 presets).
	PluginLatency units.Duration
	// Protos, when not zero, is the set of protocols NCCL may choose (bit
	// 1<<p for Proto p), as NCCL_PROTO restricts it; zero is NCCL's
	// default (all three).
	Protos uint8
	// Algos, when not zero, is the set of algorithms NCCL may choose (bit
	// 1<<a for Algo a), as NCCL_ALGO restricts it; zero is NCCL's default.
	Algos uint8
	// CPU is the GPUs' host CPU (scenarios.HostCPU: amd, arm, or the
	// empty value for intel, as hostCPU stores it). Across
	// nodes NCCL's tuner charges an AMD x86 host twice Intel's network
	// post overhead and caps LL bandwidth by its AMD row; it corrects the
	// Blackwell NVLS tree on x86 hosts only (tuning.cc getNetOverhead,
	// ncclTopoTuneModel index1, ncclTopoGetAlgoTime).
	CPU scenarios.HostCPU
	// CompCap is the GPU's compute capability × 10 where it is not its
	// generation's first (103: B300 and GB300, NVIDIA's "CUDA GPU Compute
	// Capability" table, developer.nvidia.com/cuda-gpus); 0 is Arch's
	// (70, 80, 90, 100). NCCL's LL128 switch reads it (ncclTuning.
	// ll128CompCaps).
	CompCap int
	// NCCL is the NCCL release whose tuner the model runs
	// (scenarios.NCCLReleases: "2.21", "2.28.9"; communication.
	// nccl_version); "" is DefaultNCCL, the commit above.
	NCCL string
	// BuffSize is NCCL_BUFFSIZE, the Simple protocol's buffer per
	// connection; zero is NCCL's default, 4 MiB (DEFAULT_BUFFSIZE, 1 << 22,
	// src/init.cc line 813 at the commit above).
	// A tree's Simple chunk is one of its NCCL_STEPS (8) steps.
	BuffSize units.Bytes
}

// TCPXO is hw under the NCCL configuration Google requires for
// GPUDirect-TCPXO on A3 Mega (GoogleCloudPlatform/container-engine-accelerators
// gpudirect-tcpxo/README.md, "NCCL configs" of every release from May 2024
// (nccl-plugin-gpudirecttcpx v1.0.2, NCCL 2.21.5) on, and
// google/nccl-plugin-gpudirect-tcpxo tcpxo_scripts/nccl-env-profile-simple.sh
// at commit 04815d1bb89971577c7330f9873b70644b3a5934): NCCL_PROTO=Simple,
// NCCL_ALGO=Ring,Tree and NCCL_NVLS_ENABLE=0 (Protos, Algos, NVLS). Without LL and LL128 every
// collective pays the Simple protocol's base latency and its per-hop
// network latency (14 µs, tuning.cc) plus the flush, so a small all-reduce
// over two A3 Mega VMs costs ~124 µs (tree: 8.4 + 2·(7·4.0 + 14 + 2·8) µs),
// where LL would take ~40 µs. The plugin reports latency 0 to NCCL
// (tcpdirect_plugin/fastrak_offload/nccl_shim.cc GetProperties at the same
// commit), so the physical latency of the link preset is the only network
// latency beyond NCCL's table. Later profiles (nccl-env-profile.sh at that
// commit, and the optional -ll128 profile of February 2025) add LL128:
// set Protos to 1<<Simple | 1<<LL128 for them.
//
// Every one of those profiles also sets NCCL_BUFFSIZE=8388608 (twice NCCL's
// default), so a tree's Simple chunk is 1 MiB: with 16 channels the tree's
// pipeline holds up to 16 MiB before its first chunk is done, which is what
// makes an A3 Mega all-reduce of 1–16 MiB grow by ~50 µs per MiB and then
// barely move from 16 to 32 MiB (treeSimpleFill). The rest of the profile
// changes nothing else modelled here: NCCL_ALGO=Ring,Tree also excludes
// PAT (an all-gather or reduce-scatter over one GPU per node). The plugin
// reports its network as NCCL_NET_DEVICE_HOST (nccl_shim.cc at the commit
// above: props.netDeviceType in GetProperties, line 968, and its send and
// receive device handles, lines 230 and 246; the same in every release the
// repository holds, v1.0.12 to v1.0.17), so neither ncclPatEnable's
// device-offload refusal nor ncclTopoPostset's doubling of the channels
// under NCCL_NET_DEVICE_UNPACK (NVIDIA/nccl src/graph/tuning.cc line 221
// and src/graph/connect.cc lines 485–490 at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027, where comm->netDeviceType is
// moreover never assigned, staying HOST) applies: BufferChannels doubles
// nothing for it; NCCL_MIN_NCHANNELS=4 is
// below the 16 channels of 8 NICs; NCCL_P2P_*_CHUNKSIZE are send/receive's;
// NCCL_DYNAMIC_CHUNK_SIZE is read by no open NCCL or plugin source;
// NCCL_FASTRAK_NUM_FLOWS=2 splits each connection over two TCP flows of
// the same NIC. Google's tuner plugin (NCCL_TUNER_CONFIG_PATH,
// a3plus_tuner_config.textproto) may set algorithm, protocol and channels
// per size; its rules ship only in the installer image, so the model keeps
// NCCL's own choice (tree/Simple from 1 MiB on two A3 Mega VMs, which the
// shared log's times follow).
func TCPXO(hw Hardware) Hardware {
	hw.Protos = 1 << Simple
	hw.Algos = 1<<Ring | 1<<Tree
	hw.NVLS = false
	hw.BuffSize = 8 << 20
	return hw
}

// compCap is hw's compute capability × 10 (CompCap, or its generation's).
func (hw Hardware) compCap() int {
	if hw.CompCap != 0 {
		return hw.CompCap
	}
	return [...]int{70, 80, 90, 100}[hw.Arch]
}

// HardwareOf reads a resolved scenario's cluster.
func HardwareOf(s *scenarios.Scenario) Hardware {
	c := &s.Cluster
	hw := Hardware{Arch: Ampere, IntraBW: c.Intra.Bandwidth, NICBW: c.Inter.Bandwidth, NICsPerNode: c.GPUsPerNode,
		InterLatency: extraLatency(c.Inter.Latency, "NDR")}
	// The resolved scenario names its GPU and link presets exactly
	// (scenarios.GPUPresets, LinkPresets); a GPU it does not know is
	// modelled as Ampere (NCCL's tables for compute capability 8.x).
	gpu := c.GPU
	switch {
	case strings.HasPrefix(gpu, "V100"):
		hw.Arch = Volta
	case strings.HasPrefix(gpu, "H100"), strings.HasPrefix(gpu, "H200"), strings.HasPrefix(gpu, "H800"), strings.HasPrefix(gpu, "GH200"):
		hw.Arch = Hopper
	case strings.HasPrefix(gpu, "B100"), strings.HasPrefix(gpu, "B200"), strings.HasPrefix(gpu, "GB200"),
		strings.HasPrefix(gpu, "B300"), strings.HasPrefix(gpu, "GB300"):
		hw.Arch = Blackwell
		if strings.Contains(gpu, "B300") {
			hw.CompCap = 103
		}
	}
	// The host CPU: cluster.host.cpu, or the GPU preset's system's
	// (scenarios.DefaultHostCPU: Arm on the Grace Blackwell superchips).
	hw.CPU = hostCPU(c.CPU())
	hw.PCI = strings.HasPrefix(c.Intra.Preset, "PCIe")
	if hw.PCI {
		hw.IntraLatency = extraLatency(c.Intra.Latency, "PCIe4")
	} else {
		hw.IntraLatency = extraLatency(c.Intra.Latency, "NVLink4")
	}
	// NVLS needs an NVSwitch of the third generation or later, i.e. an
	// SXM Hopper/Blackwell node on NVLink4 or later: no NVLS graph when
	// there is no NVS node or ccMin < 90 (src/graph/search.cc line 1124
	// at 5067397c2676d5aed50042fc39e5c8ee96eb0027), and none on fewer
	// than 2 GPUs (src/transport/nvls.cc line 262). A PCIe card
	// (H100-PCIe) has no NVSwitch even over an NVLink bridge.
	hw.NVLS = hw.Arch >= Hopper && !hw.PCI && c.GPUsPerNode > 1 && !strings.HasSuffix(gpu, "-PCIe")
	if c.NICs == scenarios.NICPerNode {
		hw.NICsPerNode = max(c.NICsPerNode, 1)
	}
	if c.Inter.Preset == "TCPXO" {
		hw = TCPXO(hw)
	}
	// The network plugin's latency, a column of the link presets.
	if p, ok := scenarios.FindLink(c.Inter.Preset); ok {
		hw.PluginLatency = p.PluginLatency
	}
	// communication.nccl_version: the NCCL release whose tuner runs
	// (Resolve checked it).
	if v := s.Communication.NCCLVersion; v != "" {
		if r, err := scenarios.ParseNCCLVersion(v); err == nil && r != DefaultNCCL {
			hw.NCCL = r
		}
	}
	// An AMD GPU, a preset's or one cluster.gfx names (scenarios.Cluster.
	// Target), runs RCCL's model.
	hw.GFX = c.Target()
	// communication.nccl_algo and nccl_proto replace what the preset
	// sets, as the environment variables replace a profile's (pin.go);
	// Resolve checked them.
	if v := s.Communication.NCCLAlgo; v != "" {
		if m, err := ParseNCCLAlgos(v); err == nil {
			hw.Algos = m
		}
	}
	if v := s.Communication.NCCLProto; v != "" {
		if m, err := ParseNCCLProtos(v); err == nil {
			hw.Protos = m
		}
	}
	return hw
}

// hostCPU is cpu as Hardware.CPU stores it: Intel is the zero value, as in
// a calibration file without host_cpu, so that a calibration written on
// an Intel host with or without host_cpu: intel is measured on it
// (Measured compares Hardware with ==).
func hostCPU(cpu scenarios.HostCPU) scenarios.HostCPU {
	if cpu == scenarios.HostIntel {
		return ""
	}
	return cpu
}

// extraLatency is lat beyond the latency of the link preset named base,
// never negative.
func extraLatency(lat units.Duration, base string) units.Duration {
	if p, ok := scenarios.FindLink(base); ok {
		return max(lat-p.Latency, 0)
	}
	return max(lat, 0)
}

// NCCL's tuner indices: algorithm (tree, ring, nvls, nvlsTree, pat) ×
// protocol (LL, LL128, Simple); latencies in µs, bandwidths in GB/s. The
// constants are each release's (ncclTuning, ncclversion.go); those below
// are the model's at the commit above.
const (
	tTree = iota
	tRing
	tNVLS
	tNVLSTree
	tPAT
	numTuned
)

// NCCL's tuner constants that do not vary by release here (tuning.cc at
// 5067397c, the commit above; the per-release tables are ncclversion.go's).
var (
	// nvlsEfficiency per generation (tuning.cc lines 139–144).
	nvlsEfficiency = [4]float64{0, 0, 0.85, 0.74}
	// treeCorrectionFactor[proto][log2(nBytes/64)], 64 B to 256 MiB
	// (tuning.cc): trees run below their model at medium sizes.
	treeCorrectionFactor = [numProtos][24]float64{
		{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
		{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
		{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
	}
	// NCCL's bandwidth per NVLink link (topo.h SMxx_NVLINK_BW, GB/s) against
	// the datasheet's 25 GB/s per link per direction (50 for Blackwell):
	// what one link delivers to NCCL.
	nvlinkFraction = [4]float64{20.0 / 25, 20.0 / 25, 20.6 / 25, 40.1 / 50}
	// sm90SpeedArrayInter (search.cc): the per-channel network speeds the
	// ring search tries, GB/s (the same steps for every generation at
	// the NIC speeds that matter here).
	speedArrayInter = []float64{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}
)

// pciFraction is NCCL's PCI_BW (12 GB/s, topo.h) against PCIe 3.0 x16's
// nominal 16 GB/s per direction.
const pciFraction = 12.0 / 16

// netOverhead is NCCL's network post overhead on host cpu, µs:
// getNetOverhead (tuning.cc lines 228–233 at the commit above) returns 1.0
// on an Intel x86 host, 2.0 on an AMD x86 host and 1.0 on any other
// (NCCL_NET_OVERHEAD unset).
func netOverhead(cpu scenarios.HostCPU) float64 {
	if cpu == scenarios.HostAMD {
		return 2.0
	}
	return 1.0
}

// llMaxRow is the llMaxBws row NCCL takes across nodes: 1 on an AMD (or
// mixed) host, 0 on any other (tuning.cc lines 268–272, index1).
func llMaxRow(cpu scenarios.HostCPU) int {
	if cpu == scenarios.HostAMD {
		return 1
	}
	return 0
}

// Shape is a communicator as NCCL's tuner sees it: ranks, nodes, ranks per
// node (nRanks/nNodes), and the ranks on its smallest node.
type Shape struct {
	Ranks, Nodes int
	// MinPerNode is the ranks on the node holding fewest of the group's,
	// NCCL's comm->minLocalRanks (src/init.cc lines 1392–1397 at
	// 5067397c2676d5aed50042fc39e5c8ee96eb0027), where it differs from
	// Ranks/Nodes (a group over nodes of unequal ranks: ShapeOf); 0 where
	// it does not, so an even group's shape is its {Ranks, Nodes}, as a
	// calibration curve's is.
	MinPerNode int
	// MinNICs is the fewest NICs the group's ranks on any one node cross
	// where the node's GPUs share NICs and that differs from the rule
	// Hardware.nics gives (min(NICs, MinPerNode)): a group on part of a
	// node reaches only the NICs local to its own GPUs (Hardware.shapeNICs);
	// 0 where it does not differ.
	MinNICs int
}

// ppn is NCCL's nRanks/nNodes, the mean ranks per node (rounded down, as
// tuning.cc's integer uses of it are): the tuner's latencies and pipeline
// depths read it; its bandwidths and channels are the smallest node's
// (minPPN).
func (s Shape) ppn() int { return s.Ranks / max(s.Nodes, 1) }

// minPPN is the ranks on the group's smallest node (MinPerNode), the node
// whose graph sets the communicator's channels and bandwidths: every rank
// searches its rings and trees on its own node's GPUs and NICs (the
// topology holds the communicator's GPUs of that node only: src/graph/
// topo.cc ncclTopoGetSystem detects each rank's own GPU and fuses the XML
// of the node's ranks, lines 1799–1800 and 1886–1924), and init.cc then
// keeps, for every algorithm, the fewest channels and the least bwIntra
// and bwInter any rank found (src/init.cc lines 1439–1442 at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027), which ncclTopoTuneModel
// multiplies (src/graph/tuning.cc line 324: busBw = nChannels · bw).
func (s Shape) minPPN() int {
	if s.MinPerNode > 0 {
		return s.MinPerNode
	}
	return s.ppn()
}

// Choice is one (algorithm, protocol) with its modelled cost.
type Choice struct {
	Algo    Algo
	Proto   Proto
	Latency units.Duration // NCCL's latency, launch cost included
	// AlgBW is the algorithm bandwidth in bytes per second (nBytes / time
	// of the bandwidth term).
	AlgBW float64
	Time  units.Duration // Latency + nBytes/AlgBW
	// cost is what NCCL's own cost model says the combination takes, by
	// which Choose ranks the combinations: Time without the tree Simple
	// pipeline fill, which NCCL's model does not know (treeSimpleFill).
	cost units.Duration
}

// Params are the calibrated corrections of the model: a bandwidth
// efficiency per link class (1 = nominal), an extra latency per hop per
// class and an extra fixed cost per collective (0 = NCCL's tables).
type Params struct {
	IntraEff, InterEff float64
	IntraHop, InterHop float64 // µs added per intra-node / inter-node step
	Fixed              float64 // µs added per collective
}

// Nominal is the uncorrected model.
var Nominal = Params{IntraEff: 1, InterEff: 1}

// Model is NCCL's cost model for one cluster.
type Model struct {
	HW     Hardware
	Params Params
	// Curves holds measured curves (from a calibration) used instead of the
	// model at their shape and size range.
	Curves []Curve
	// GPUsPerThread is how many GPUs one host thread drives (nccl-tests
	// -g G); 0 or 1 is one GPU per process, as training runs. With G > 1
	// every collective costs at least HostLaunchFloor(G).
	GPUsPerThread int
}

// HostLaunchPerGPU is the host's cost of launching one GPU's part of a
// grouped NCCL collective from a thread that drives several GPUs.
//
// Mechanism. With nThread 1 nGpus G, nccl-tests issues, per iteration,
// ncclGroupStart, one NCCL call per GPU and ncclGroupEnd from one host
// thread (NVIDIA/nccl-tests src/common.cu startColl at commit
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432), runs its `iters` iterations
// back to back and reports the wall time over all of them divided by
// iters (the timer around the loop, then completeColl's stream
// synchronize). NCCL's ncclGroupEnd then walks the group's communicators
// one after another on that thread: per communicator cudaSetDevice,
// host setup (ncclEnqueueHostSetup), the launch barrier, cudaSetDevice
// and ncclLaunchKernel (cudaLaunchKernel under the default launch mode
// "Parallel"), then event recording (NVIDIA/nccl src/group.cc
// ncclGroupEnd and src/enqueue.cc ncclLaunchKernel at 2.9.9-1, commit
// 3fec2fa5eea34917f09e2282afc38863b454eae1). So an iteration takes at
// least G serial per-GPU launch costs on the host, and once that exceeds
// the GPUs' time the measured time is host-bound:
// time ≈ max(GPU time, G × HostLaunchPerGPU). NVIDIA's nccl-tests
// maintainer names the cause: "higher latency on B200 is due to using
// multiple GPUs per node (-g 8) instead of one GPU per process which is
// the recommended method for multi-GPU jobs due to the CUDA latency
// overheads of single process jobs" (AddyLaddy, NVIDIA/nccl-tests issue
// #333, 2025-07-21).
//
// Constant. Measured on a DGX-A100 in NVIDIA/nccl-tests issue #123
// (ConnollyLeon, 2022-12-14, "NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=1 ...
// ./all_reduce_perf -b 8 -e 128 -f 2 -n 100 -g GPU_NUM"): 8–128-byte
// all-reduce times of 16.88, 20.8, 25.2, 29.5 and 33.7 µs for -g 4, 5,
// 6, 7 and 8, that is 4.22, 4.16, 4.20, 4.21 and 4.21 µs per GPU:
// proportional to G with no intercept, where NCCL's own ring LL model
// (6.6 µs + 2(G−1) × 0.6 µs) grows by 1.2 µs per GPU. 4.2 µs per GPU.
// It is a host figure (CPU, driver, NCCL version): a log from another host
// can differ, and calibrate fits around it.
const HostLaunchPerGPU = 4200 * units.Nanosecond

// HostLaunchFloor is the least time of one collective issued by a host
// thread that drives gpusPerThread GPUs (HostLaunchPerGPU); 0 for one GPU
// per thread, where NCCL's own launch cost (its base latency) holds it.
func HostLaunchFloor(gpusPerThread int) units.Duration {
	if gpusPerThread <= 1 {
		return 0
	}
	return units.Duration(gpusPerThread) * HostLaunchPerGPU
}

// hostBound raises c to the host launch floor of m's GPUs per thread: the
// extra time is latency (the GPUs wait for the host, not for bytes).
func (m *Model) hostBound(c Choice) Choice {
	if f := HostLaunchFloor(m.GPUsPerThread); c.Time < f {
		c.Latency += f - c.Time
		c.Time = f
	}
	return c
}

// NewModel is the nominal model of hw.
func NewModel(hw Hardware) *Model { return &Model{HW: hw, Params: Nominal} }

// Tuner names the cost model m is: "RCCL's cost model, gfx942" for an AMD
// GPU (rccl.go: its choice everywhere, its time on one node), else
// "NCCL's cost model" ("NCCL 2.21's cost model" where the hardware names
// a release: Hardware.NCCL).
func (m *Model) Tuner() string {
	if m.HW.GFX != "" {
		return "RCCL's cost model, " + m.HW.GFX
	}
	if m.HW.NCCL != "" {
		return "NCCL " + m.HW.NCCL + "'s cost model"
	}
	return "NCCL's cost model"
}

// intraBW is NCCL's NVLink (or PCIe) bandwidth of one GPU, GB/s, in a
// communicator with ppn ranks on its node. On an AMD GPU's fully connected
// xGMI node a rank reaches its node's peers over one link each, so a
// communicator uses ppn−1 of the GPU's xgmiLinks (RCCL's rings and trees
// follow the direct links); NVLink's NVSwitch gives any group the GPU's
// whole bandwidth.
func (m *Model) intraBW(ppn int) float64 {
	f := nvlinkFraction[m.HW.Arch]
	if m.HW.GFX != "" {
		f = xgmiFraction * float64(min(max(ppn-1, 1), xgmiLinks)) / xgmiLinks
	}
	if m.HW.PCI {
		f = pciFraction
	}
	return float64(m.HW.IntraBW) / 1e9 * f * m.Params.IntraEff
}

// wireFraction is the share of a link of class c that a collective's
// payload gets when NCCL runs it with protocol p on a communicator of
// shape sh: what NCCL's model reaches on that link (intraBW, netBW: its
// topology's NVLink and PCIe speeds, its ring search's NIC speed, and any
// calibrated efficiency) times what the protocol leaves for data on the
// wire. LL sends each 8 bytes of data with two 4-byte flags in a 16-byte
// line (union ncclLLFifoLine), LL128 one flag word in each line of 16
// 8-byte words (NCCL_LL128_DATAELEMS = NCCL_LL128_LINEELEMS − 1), Simple
// data alone (NVIDIA/nccl src/include/device.h at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027). A timed collective's traffic
// holds its links at its payload over this fraction (timePlan).
func (m *Model) wireFraction(c topology.Class, sh Shape, p Proto) float64 {
	f := 1.0
	switch {
	case c == topology.Inter && m.HW.NICBW > 0:
		f = m.netBW(sh) / (float64(m.HW.shapeNICs(sh)) * float64(m.HW.NICBW) / 1e9)
	case c == topology.Intra && m.HW.IntraBW > 0:
		f = m.intraBW(sh.minPPN()) / (float64(m.HW.IntraBW) / 1e9)
	}
	switch p {
	case LL:
		f /= 2
	case LL128:
		f *= 15.0 / 16
	}
	if f <= 0 || f > 1 || math.IsNaN(f) {
		return 1
	}
	return f
}

// nics is how many NICs of a node a communicator with ppn ranks there
// uses: its GPUs' own NICs (rail-optimized, one per GPU), or the node's
// shared ones, at most one per rank. A node whose NICs outnumber the
// communicator's GPUs on it (4 of an H100 node's 8 GPUs, 8 NICs) crosses
// on no more NICs than it has GPUs: NCCL's ring search starts each channel
// at a NIC and walks the node's GPUs (src/graph/search.cc
// ncclTopoSearchRecNet, lines 724–816 at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027), taking the path's bandwidth
// from every link it crosses (ncclTopoFollowPath), so a channel to a NIC
// of a GPU outside the communicator still enters and leaves through one
// of the communicator's GPUs' PCIe links, which the channels to their own
// NICs fill already (Gen5 x16, 16 × 240 / 80 = 48 GB/s per direction:
// topo.cc lines 545–557 and 657; the search's 48 GB/s step); no PXN path
// reaches it either, since its local GPU is not in the node's topology
// (paths.cc lines 817–842: ncclTopoGetLocalGpu, topo.cc lines 2110–2135,
// finds none, localGpuIndex −1). Four GPUs find 4 channels
// of 48 GB/s, which ncclTopoDupChannels makes 8 of 24 (search.cc lines
// 1036–1048: nChannels 4 is not > 4), what 4 NICs at two channels each
// give here.
func (hw Hardware) nics(ppn int) int { return max(min(hw.NICsPerNode, ppn), 1) }

// shapeNICs is the NICs a communicator of shape sh crosses on its
// smallest node: Shape.MinNICs where the shape has it, else nics of the
// smallest node's ranks. Where a node's GPUs share NICs, the ranks of a
// group on part of a node reach only the NICs local to their own GPUs:
// NCCL's search adds a NIC to the candidates only when its path from the
// GPU is of type typeInter or less (src/graph/search.cc at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027: ncclTopoSelectNets lists each
// GPU's preferred NICs first, lines 547–553, then the others by path type
// up to typeInter, lines 564–580; ncclTopoFollowPath refuses a path of a
// type above it, lines 146–149), and relaxes typeInter past PATH_PXN only
// while it has found no channel (lines 1229–1233); a NIC
// whose own GPUs are outside the communicator is reached through the CPU
// (PATH_PHB or PATH_SYS, beyond PXN, which needs a peer GPU of the
// communicator beside the NIC: paths.cc lines 817–842).
func (hw Hardware) shapeNICs(sh Shape) int {
	if sh.MinNICs > 0 {
		return sh.MinNICs
	}
	return hw.nics(sh.minPPN())
}

// netBW is the network bandwidth of one node of a communicator of shape
// sh, GB/s: two channels per NIC the communicator uses (search.cc
// ncclTopoCompute), together at searchFraction of the NIC's nominal
// speed. A communicator's is its smallest node's (Shape.minPPN,
// shapeNICs).
func (m *Model) netBW(sh Shape) float64 {
	nic := float64(m.HW.NICBW) / 1e9
	return nic * searchFraction * float64(m.HW.shapeNICs(sh)) * m.Params.InterEff
}

// searchFraction is what NCCL's ring search settles on for a NIC: the
// fastest step of speedArrayInter that two channels fit in one NIC, against
// the NIC's speed. At 100, 200, 400 and 800 Gb/s (12.5, 25, 50 and 100 GB/s,
// two channels per NIC, the last at the array's 48 GB/s cap) it is
// 12/12.5 = 24/25 = 48/50 = 96/100 = 0.96. Between those speeds the search's
// steps would make the bandwidth jump (a 17.4 GB/s NIC would count as 12),
// while the transfer itself runs at the link's speed; the continuous 0.96
// keeps the standard speeds exact and the step time continuous in the NIC's
// bandwidth.
var searchFraction = searchStep(50) / 50

// searchStep is the per-node speed NCCL's search finds for one NIC of nic
// GB/s: twice the fastest speedArrayInter step two channels fit in.
func searchStep(nic float64) float64 {
	for _, s := range speedArrayInter {
		if 2*s <= nic*1.0001 {
			return 2 * s
		}
	}
	return nic
}

// channels is the number of channels NCCL's search builds: two per NIC
// across nodes, 16 inside an NVLink node, 2 over PCIe (MAXCHANNELS/2).
// Across nodes it is the smallest node's (Shape.minPPN): init.cc keeps
// the fewest channels any rank found (lines 1439–1442 at the commit
// above).
func (m *Model) channels(sh Shape) float64 {
	switch {
	case sh.Nodes > 1:
		return float64(min(2*m.HW.shapeNICs(sh), 32))
	case m.HW.PCI:
		return 2
	}
	return 16
}

// ringGraphChannels is the number of channels of NCCL's ring graph across
// nodes, the count ncclTopoTuneModel multiplies the per-channel caps by
// (graphs[NCCL_ALGO_RING]->nChannels). The ring search tries the fastest
// speed first and puts one channel on each NIC that speed fits in
// (ncclTopoSearchRecNet skips a NIC slower than the speed and subtracts
// the speed from the one it takes, src/graph/search.cc lines 680 and 690
// at v2.29.2-1, ebd1e929285881cb4df02c3459588a2e12b2d8c0): at a 400 Gb/s
// NIC that is 48 GB/s (sm90SpeedArrayInter's first step; sm100's 96 does
// not fit), one channel per NIC. ncclTopoDupChannels then doubles the
// channels at half the speed, except on Hopper or later when the speed is
// under 50 GB/s and the search found more than 4 channels ("if (ccMin > 80
// && graph->bwIntra < 50.0 && graph->nChannels > 4) return", line 965 at
// v2.29.2-1; line 919 at v2.24.3-1, 6aae37927840b2bd7b7d42d2f0050e75f88ee97f,
// and in every release from v2.18.3-1 on). So on a node that crosses
// on more than 4 NDR NICs (an H100 node's 8) the ring graph keeps one
// channel of 48 GB/s per NIC, where 4 or fewer NICs get two of 24
// (channels). A published NCCL_DEBUG=INFO run of 2 × 8 H-class GPUs (NV18)
// with eight 400 Gb/s RoCE NICs, one PIX to each GPU, NCCL 2.28.9, logs it:
// "Pattern 4, crossNic 2, nChannels 8, bw 48.000000/48.000000, type
// NVL/PIX" (https://weiziyang.wiki/posts/gpu-networking/llm-gpu-collective-communication-guide,
// 2026-09-10, experiment 0). ncclTopoTuneModel caps the ring's LL128 bus
// bandwidth at these channels × perChMaxRingLL128Bw (tuning.cc line 305 at
// v2.29.2-1: 36.7 GB/s a channel on Hopper), below a 48 GB/s channel's
// 0.92 × 48, so its tuner leaves LL128 for Simple at a few hundred MiB
// where two channels per NIC would keep it near 1 GiB: on 4 and 10 nodes of
// 8 H100 the published all-gathers' times jump there (docs/calibration.md).
// Only the ring's LL128 cap takes this count; the rest of the model keeps
// channels.
func (m *Model) ringGraphChannels(sh Shape) float64 {
	if m.ringGraphUndoubled(sh) {
		return float64(min(m.HW.shapeNICs(sh), 32))
	}
	return m.channels(sh)
}

// ringGraphUndoubled reports whether ncclTopoDupChannels leaves NCCL's
// ring graph at one 48 GB/s channel per NIC (ringGraphChannels): a
// cross-node NCCL communicator on Hopper or later that crosses on more
// than 4 NICs of 48 to 96 GB/s.
func (m *Model) ringGraphUndoubled(sh Shape) bool {
	nic := float64(m.HW.NICBW) / 1e9
	return sh.Nodes > 1 && m.HW.Arch >= Hopper && m.HW.GFX == "" && m.HW.shapeNICs(sh) > 4 &&
		nic*1.0001 >= speedArrayInter[0] && nic < 2*speedArrayInter[0]
}

// maxChannels is NCCL's MAXCHANNELS (src/include/device.h at the commit
// above): 64, of which the ring search may use half (init.cc
// ringGraph->maxChannels = MAXCHANNELS / 2).
const maxChannels = 64

// BufferChannels is the number of channels NCCL sets up for a communicator
// of shape sh on hw, each holding its buffers for every connection (what
// memory.NCCLBuffers counts): the channels the ring search finds (the
// model's channels: two per NIC across nodes, 16 inside an NVLink node, 2
// over PCIe), which ncclTopoPostset duplicates, min(MAXCHANNELS,
// 2·nChannels) (src/graph/connect.cc lines 459–460 at the commit above),
// and on Hopper or later across nodes doubles again while fewer than 16
// when a channel's speed exceeds 45 GB/s ("4 compute channels per search
// channel", lines 480–483; the channel's speed is the search's NIC step).
// Inside an H100 node that is 32 channels, the count NCCL logs there
// (NVIDIA/nccl#1685). Where the ring graph keeps one 48 GB/s channel per
// NIC (ringGraphChannels: more than 4 NDR-class NICs on Hopper or later)
// the search's channels are that graph's, and its channel speed is 48:
// on an 8-NIC H100 node 8, duplicated to 16 (connect.cc line 452 at
// v2.29.2-1, ebd1e929285881cb4df02c3459588a2e12b2d8c0), not doubled again
// (line 473 needs fewer than 16), where two channels per NIC would give
// 32. The published 2 × 8 NCCL_DEBUG=INFO run ringGraphChannels cites logs
// rings 00–15, 16 channels, of which 00/01/08/09 leave the node.
//
// On an AMD GPU (RCCL), one node of 8 fully connected GPUs matches
// rome_model_79, whose ringBase lists 28 rings (ROCm/rccl
// src/graph/rome_models.cc at 0cbce2a7), which connect.cc doubles to 56
// (lines 629–660: maxChannels is MAXCHANNELS on gfx94x, nChannels·2 when
// at most half of it); RCCL's channel counts across nodes are not
// ported, and NCCL's stand in for them.
func BufferChannels(hw Hardware, sh Shape) int {
	m := NewModel(hw)
	if name, _ := m.rcclMatched(sh); hw.GFX != "" && name == "rome_model_79" {
		return rcclOneNodeChannels
	}
	search, bwIntra := m.channels(sh), searchStep(float64(hw.NICBW)/1e9)/2
	if m.ringGraphUndoubled(sh) {
		// The ring graph keeps one 48 GB/s channel per NIC
		// (ringGraphChannels). The tree graph's search is held to the
		// ring's count (init.cc lines 1068–1069 at v2.29.2-1:
		// treeGraph->minChannels = maxChannels = ringGraph->nChannels),
		// and comm->nChannels is the smaller of the two (line 1243).
		// Were the tree to find only half, 4 of 8, connect.cc's line 473
		// (the ring graph's 48 GB/s > 45, 8 < 16) would double the 8 to
		// 16 all the same.
		search, bwIntra = m.ringGraphChannels(sh), speedArrayInter[0]
	}
	n := min(maxChannels, 2*int(search))
	if hw.Arch >= Hopper && sh.Nodes > 1 && n < 16 && bwIntra > 45 {
		n *= 2
	}
	return n
}

func log2i(n int) int {
	if n <= 0 {
		return 0
	}
	return bits.Len(uint(n)) - 1
}

// Cost is NCCL's model of op over sh with algorithm a and protocol p on
// nBytes; ok is false when NCCL would not run that combination.
func (m *Model) Cost(op Op, sh Shape, a Algo, p Proto, nBytes units.Bytes) (Choice, bool) {
	if m.HW.GFX != "" {
		c, ok := m.rcclCost(op, sh, a, p, nBytes)
		if ok && rcclTimedByNCCL(sh) {
			return m.rcclPhys(op, sh, c, nBytes)
		}
		return c, ok
	}
	return m.ncclCost(op, sh, a, p, nBytes)
}

// ncclCost is Cost by NCCL's model.
func (m *Model) ncclCost(op Op, sh Shape, a Algo, p Proto, nBytes units.Bytes) (Choice, bool) {
	if sh.Ranks <= 1 {
		return Choice{Algo: a, Proto: p}, true
	}
	c, ok := m.comm(op, sh, a, p, nBytes)
	if !ok {
		return Choice{}, false
	}
	algBW := c.algBW()
	if algBW <= 0 || math.IsInf(algBW, 0) || math.IsNaN(algBW) {
		return Choice{}, false
	}
	fill := 0.0 // µs: bytes / (GB/s) · 1e-3
	switch {
	case c.t == tNVLS || c.t == tNVLSTree:
		fill = c.nvlsFill() / algBW * 1e-3
	case c.t == tTree && p == LL128:
		fill = treeLL128Fill(nBytes, c.nCh, float64(c.ppn), c.nodes) / algBW * 1e-3
	}
	bwD := sat(math.Ceil(float64(nBytes) / (algBW * 1e9) * 1e12))
	lat := c.latency()
	latD := sat((lat + fill) * 1e6)
	ch := Choice{Algo: a, Proto: p, Latency: latD, AlgBW: algBW * 1e9, Time: sat(float64(latD) + float64(bwD))}
	ch.cost = ch.Time
	if c.t == tTree && p == Simple {
		// NCCL's tuner ranks a Simple tree by its bandwidth times its
		// empirical correction at medium sizes (the cost above); the tree
		// runs at its full bandwidth once its pipeline is full, and the
		// fill (treeSimpleFill), which that correction stands in for, is
		// in its time instead.
		raw := algBW / c.treeCorrection()
		bwD = sat(math.Ceil(float64(nBytes) / (raw * 1e9) * 1e12))
		latD = sat((lat + c.treeSimpleFill(raw)) * 1e6)
		ch.Latency, ch.AlgBW, ch.Time = latD, raw*1e9, sat(float64(latD)+float64(bwD))
	}
	if pl := c.m.HW.PluginLatency; pl != 0 && c.nodes > 1 {
		// NCCL ranks with the plugin's latencyInter (PluginLatency).
		ch.cost = sat(float64(ch.cost) + float64((c.latencyWith(pl)-lat)*1e6))
	}
	return ch, true
}

// treeSimpleFill is the time, µs, a Simple tree's pipeline takes to fill:
// every chunk passes 2(ppn−1) NVLink hops (the chain up inside its node
// and down again) and 2·log2(nodes) network hops (up the tree between
// nodes and down), one whole chunk per hop (the Simple protocol's step,
// src/device/all_reduce.h runTreeUpDown at the commit above), so the last
// chunk of a channel is done (hops − 1) hop times after the bottleneck
// hop has passed it (the bandwidth term). NCCL gives each channel
// nBytes/channels (enqueue.cc: countPerChannels) in chunks of
// NCCL_BUFFSIZE/NCCL_STEPS (computeCollChunkInfo: a Simple tree's
// chunkSteps is 1; 512 KiB by default, 1 MiB under TCPXO's 8 MiB buffer),
// the last one shorter: below channels × chunk bytes the chunk is the
// whole channel's share and the fill grows with the size. An NVLink hop
// moves a channel's chunk at its share of the GPU's NVLink (all channels
// cross it at once), a network hop at the channel's share of the
// algorithm bandwidth (the network is the pipeline's bottleneck across
// nodes); across nodes one network hop is the bottleneck already counted.
func (c *comm) treeSimpleFill(algBW float64) float64 {
	buff := c.m.HW.BuffSize
	if buff <= 0 {
		buff = defaultBuffSize
	}
	chunk := math.Min(float64(buff)/ncclSteps, float64(c.nBytes)/c.nCh)
	intraHops, netHops := 2*float64(c.ppn-1), 2*float64(log2i(c.nodes))
	perByte := 0.0 // s per byte of one channel's chunk, summed over hops
	if c.ppn > 1 {
		perByte += intraHops * c.nCh / (c.intra * 1e9)
	}
	if netHops > 0 {
		perByte += (netHops - 1) * c.nCh / (algBW * 1e9)
	} else if c.ppn > 1 {
		perByte -= c.nCh / (c.intra * 1e9)
	}
	return max(chunk*perByte*1e6, 0)
}

// defaultBuffSize is NCCL's Simple buffer per connection and ncclSteps
// the steps it is cut into (init.cc DEFAULT_BUFFSIZE, device.h NCCL_STEPS
// at the commit above).
const (
	defaultBuffSize = 4 << 20
	ncclSteps       = 8
)

// comm is one (collective, communicator, algorithm, protocol, size) as
// ncclTopoTuneModel and ncclTopoGetAlgoTime see it.
type comm struct {
	m               *Model
	tu              *ncclTuning // the release's tuner (Hardware.NCCL)
	op              Op
	t               int // tuner algorithm index
	p               Proto
	nBytes          units.Bytes
	sh              Shape
	n, nodes, ppn   int
	nsteps, nInter  int     // NCCL's steps and inter-node steps
	intra, net, nCh float64 // GB/s per GPU, per node (ring search), channels
	idx2, arch      int     // nodes index (1, 2, >2) and generation of the tables
}

// comm sets up c, or ok false when NCCL would not run the combination.
func (m *Model) comm(op Op, sh Shape, a Algo, p Proto, nBytes units.Bytes) (c comm, ok bool) {
	c = comm{m: m, tu: m.HW.tuning(), op: op, p: p, nBytes: nBytes, sh: sh, n: sh.Ranks, nodes: max(sh.Nodes, 1), ppn: sh.ppn(), arch: int(m.HW.Arch)}
	switch {
	case op != AllReduce && op != AllGather && op != ReduceScatter:
		return c, false // all-to-all: point-to-point, not tuned
	case a == Ring:
		c.t = tRing
	case a == Tree && op == AllReduce:
		c.t = tTree
	case a == NVLS && m.HW.NVLS && c.nodes == 1 && p == Simple && c.ppn >= 2 && (op == AllReduce || c.ppn <= maxNVLSArity):
		// Across nodes NVLS needs CollNet (SHARP switches): not modelled.
		// Over more than 32 local ranks NCCL runs NVLS for all-reduce
		// only (enqueue.cc line 2004 at the commit above: maxNVLSArity).
		c.t = tNVLS
	case a == NVLSTree && m.HW.NVLS && c.nodes > 1 && op == AllReduce && p == Simple && sh.minPPN() >= 2:
		// Every node needs two of the group's GPUs: a rank whose node has
		// one turns NVLS off (nvls.cc line 262, gpuCount < 2), so its NVLS
		// graph has no channels, the communicator keeps the fewest any rank
		// found (init.cc line 1439) and with none turns NVLS off for all
		// (line 1453), at the commit above.
		c.t = tNVLSTree
	case a == PAT && op != AllReduce && p == Simple && c.n > 1 && c.nodes == c.n && c.tu.pat > 0:
		// PAT runs all-gather and reduce-scatter with Simple only, and
		// ncclPatEnable (tuning.cc lines 215–223) turns it on only when
		// every node has one rank ("PAT only supports 1 GPU per node"),
		// on SM60 or later (every generation here) and with the network
		// on the host (netDeviceType HOST, as every network modelled
		// here reports, GPUDirect-TCPXO's included: TCPXO; its
		// NCCL_ALGO=Ring,Tree excludes PAT). enqueue.cc (line 2010) also skips it for a
		// reduce-scatter with an average (PreMulSum or SumPostDiv), which
		// the model cannot tell from a sum: it assumes a sum. NCCL has
		// PAT from 2.23 (ncclTuning.pat).
		c.t = tPAT
	default:
		return c, false
	}
	c.idx2 = min(c.nodes, 3) - 1
	c.nsteps, c.nInter = c.n-1, c.nodes-1
	if op == AllReduce {
		c.nsteps, c.nInter = 2*(c.n-1), 2*(c.nodes-1)
	}
	// The bandwidths and channels are the smallest node's (Shape.minPPN:
	// init.cc keeps the least any rank's graph has), not those of the mean
	// ranks per node: over 8 + 4 H100 ranks the 4-GPU node's ring graph is
	// what 4 + 4 ranks find, and so is the communicator's.
	least := sh.minPPN()
	c.intra, c.net = math.Inf(1), math.Inf(1)
	if c.ppn > 1 {
		c.intra = m.intraBW(least)
	}
	if c.nodes > 1 {
		c.net = m.netBW(sh)
	}
	c.nCh = m.channels(sh)
	return c, true
}

// algBW is the algorithm bandwidth, GB/s: NCCL's bus bandwidth of the
// algorithm and protocol (from the links) converted as tuning.cc does.
func (c *comm) algBW() float64 {
	tu := c.tu
	llMax := tu.llMaxBws[llMaxRow(c.m.HW.CPU)][c.idx2]
	if c.nodes == 1 {
		llMax = tu.llMaxBws[c.arch][0]
	}
	n, nsteps := float64(c.n), float64(c.nsteps)
	switch c.t {
	case tRing:
		// Each channel crosses every node once, on its own NIC (rail
		// aligned): the node's NICs together carry what one GPU's NVLink
		// does.
		bus := math.Min(c.intra, c.net)
		switch c.p {
		case LL:
			f := .5
			if tu.ringLLQuarter {
				f = 1.0 / 3
				if c.nodes > 1 || c.op == AllReduce {
					f = 1.0 / 4
				}
			}
			bus = math.Min(llMax, bus*f)
		case LL128:
			// busBw × 0.92 (120/128), tuning.cc line 329 at 5067397c.
			f := 0.92
			if tu.ringLL128OnePPN != 0 && n/float64(c.nodes) < 2 {
				f = tu.ringLL128OnePPN
			}
			bus = math.Min(bus*f, c.m.ringGraphChannels(c.sh)*tu.perChMaxRingLL128Bws[c.arch][c.idx2])
		}
		return bus * n / nsteps
	case tTree:
		// Chains inside nodes, a double binary tree between them: with two
		// nodes each node's NICs carry half of what a ring puts on them.
		inter := c.net
		if c.nodes <= 2 {
			inter = 2 * c.net
		}
		// The refinements of tuning.cc:330-335 at the commit above: .92
		// and perChMaxTreeBw, LL 1/3.8 and llMaxBw, LL128 7/9 on one node
		// else 120/128 and perChMaxTreeLL128Bw.
		bus := math.Min(math.Min(c.intra, inter)*.92, c.nCh*tu.perChMaxTreeBws[c.arch][c.idx2])
		switch c.p {
		case LL:
			bus = math.Min(bus/3.8, llMax)
		case LL128:
			f := 120.0 / 128
			if c.nodes == 1 {
				f = 7.0 / 9
			}
			bus = math.Min(bus*f, c.nCh*tu.perChMaxTreeLL128Bws[c.arch][c.idx2])
		}
		return bus * .5 * c.treeCorrection()
	case tPAT:
		// PAT's graph is the tree's (init.cc graphs[NCCL_ALGO_PAT] =
		// treeGraph), whose speed with one GPU per node is its NICs': its
		// channels' bandwidth, × 0.75 (tuning.cc line 337), and NCCL does
		// not convert it from bus to algorithm bandwidth for an
		// all-gather or reduce-scatter off the ring (lines 376–382).
		return c.net * tu.pat
	}
	// NVLS: the switch reduces, so every GPU moves S·(1+1/g) over its
	// NVLink per direction for an all-reduce (S·(g−1)/g for reduce-scatter
	// or all-gather), at NCCL's NVLS efficiency. This traffic count is
	// zerosim's own: ncclTopoTuneModel (at the commit above) instead takes
	// bwIntra·nvlsEfficiency·(nChannels−1)/nChannels of its NVLS graph, ×2
	// for all-reduce ("AllReduce pipelines two operations") and ×(ppn−1)/ppn
	// otherwise. Across nodes g is the smallest node's ranks (Shape.minPPN):
	// its GPUs each move the most, S·(1+1/g), and the collective waits for
	// them, as NCCL's bandwidths are the least any rank's graph has
	// (init.cc lines 1439–1442).
	g := float64(c.sh.minPPN())
	eff := c.intra * nvlsEfficiency[c.arch]
	bw := eff * g / (g - 1)
	if c.op == AllReduce {
		bw = eff * g / (g + 1)
	}
	if c.t == tNVLSTree {
		// Each node's heads exchange S per direction with two nodes; a
		// tree interior node of more handles 2S.
		inter := c.net
		if c.nodes > 2 {
			inter = c.net / 2
		}
		bw = math.Min(bw, inter)
		if cp := tu.perChMaxNVLSTreeBws[c.arch][c.idx2]; cp > 0 {
			bw = math.Min(bw, c.nCh*cp*n/nsteps)
		}
		// On Blackwell with an x86 host NCCL corrects an NVLS tree's
		// all-reduce bandwidth by the tree's factor, up to 512 MiB
		// (ncclTopoGetAlgoTime at the commit above).
		if ls := log2i(int(c.nBytes >> 6)); tu.nvlsTreeX86 && c.op == AllReduce && c.arch >= int(Blackwell) && c.m.HW.CPU != scenarios.HostArm && c.nBytes>>6 > 0 && ls < 24 {
			bw *= treeCorrectionFactor[c.p][ls]
		}
	}
	return bw
}

// treeCorrection is NCCL's correction of a tree's bandwidth at the size
// (treeCorrectionFactor, applied for logSize < 23 by ncclTopoGetAlgoTime),
// 1 for other algorithms.
func (c *comm) treeCorrection() float64 {
	if ls := log2i(int(c.nBytes >> 6)); c.t == tTree && c.nBytes>>6 > 0 && ls < 23 {
		return treeCorrectionFactor[c.p][ls]
	}
	return 1
}

// latency is NCCL's latency of the collective, µs: base latency plus the
// per-hop hardware latencies (tuning.cc), with the calibrated corrections.
func (c *comm) latency() float64 { return c.latencyWith(c.m.HW.InterLatency) }

// hopLatencies are the latency (µs) of a step inside a node and of one
// across the network, from the tuner's hardware latencies of the
// algorithm and protocol: plus the calibration's per-hop corrections
// (Params) and the scenario's link latencies beyond the tables (intra:
// HW.IntraLatency; the network's extra twice for Simple, the flush). RCCL's
// path takes them the same way (rccl.go).
func (m *Model) hopLatencies(intraHW, netHW float64, p Proto, extra units.Duration) (intra, inter float64) {
	intra = intraHW + m.Params.IntraHop + float64(m.HW.IntraLatency)/1e6
	li := float64(extra) / 1e6
	inter = netHW + m.Params.InterHop + li
	if p == Simple {
		inter += li // the flush
	}
	return intra, inter
}

// ringStepFloor is a ring step inside a node when the ring crosses nodes:
// "Inter-node rings still have to launch nsteps * net overhead", three
// times it for Simple (ncclTopoTuneModel, tuning.cc lines 404–412 at the
// commit above): 3 µs a step on an Intel host, 6 µs on an AMD one.
func (m *Model) ringStepFloor(intra float64, p Proto) float64 {
	o := netOverhead(m.HW.CPU)
	if p == Simple {
		o *= 3
	}
	return math.Max(intra, o)
}

// latencyWith is latency with extra as the network latency per hop beyond
// NCCL's tables (NCCL's latencyInter).
func (c *comm) latencyWith(extra units.Duration) float64 {
	m, p := c.m, c.p
	hw := 0
	if m.HW.PCI {
		hw = 1
	}
	tu := c.tu
	netHW := tu.hwLat[2][c.t][p]
	if c.n == c.nodes && tu.treeNetOnePPN {
		// "With ppn=1 latencies are fully exposed, use the Tree network
		// latency" (ncclTopoTuneModel at the commit above, tuning.cc lines
		// 386–387), where ppn is the float nRanks/nNodes (line 281): one
		// rank on every node, not 3 ranks on 2 nodes as the integer mean
		// would have it.
		netHW = tu.hwLat[2][tTree][p]
	}
	intraLat, interLat := m.hopLatencies(tu.hwLat[hw][c.t][p], netHW, p, extra)
	lat := tu.baseLat[c.t][p] + m.Params.Fixed
	switch c.t {
	case tRing:
		if c.nodes > 1 {
			intraLat = m.ringStepFloor(intraLat, p)
		}
		lat += float64(float64(c.nsteps-c.nInter)*intraLat) + float64(float64(c.nInter)*interLat)
		if p == Simple && c.nodes > 1 && c.op == AllReduce && float64(c.nBytes)/(c.nCh*float64(c.n)) >= 64 {
			f := 1.4
			if m.HW.Arch < Ampere {
				f = 1.9
			}
			lat *= f // the ring's plateau (ncclTopoGetAlgoTime: minCompCap < 80 ? 1.9 : 1.4)
		}
	case tTree:
		lat += float64(2 * (float64(float64(c.ppn-1)*intraLat) + float64(float64(log2i(c.nodes))*interLat)))
	case tNVLS:
		lat = intraLat + m.Params.Fixed
	case tNVLSTree:
		lat += intraLat + float64(2*float64(log2i(c.nodes))*interLat)
	case tPAT:
		// "Log latency" plus "still a linear part" (tuning.cc lines
		// 429–434): log2(nNodes)·interLat/3.5 + 2.8 µs per rank, interLat
		// the tree's network Simple latency (ppn is 1) with the flush.
		lat += float64(float64(log2i(c.nodes))*interLat/3.5) + float64(float64(c.n)*2.8)
	}
	return lat
}

// nvlsChunkSize is NCCL's default NVLS chunk (NCCL_NVLS_CHUNKSIZE, 128 KiB,
// src/transport/nvls.cc line 160 at the commit above).
const nvlsChunkSize = 128 << 10

// maxNVLSArity is NCCL_MAX_NVLS_ARITY (src/include/device.h line 213 at
// the commit above): the NVLS graph has at most 32 heads (search.cc line
// 1127: maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)), and NVLS and
// NVLS-tree run no all-gather or reduce-scatter over more than 32 local
// ranks (enqueue.cc line 2004, ncclPrepareTasks' cost table).
const maxNVLSArity = 32

// NVLSTuning is what NCCL's ncclNvlsTuning (src/transport/nvls.cc lines
// 154–245 at the commit above) sets for a communicator of shape sh on hw:
// the NVLS channels (comm->nvlsChannels, also the channels an NVLS or
// NVLS-tree collective runs on: enqueue.cc line 2089), the NVLS chunk
// (comm->nvlsChunkSize, the step of its buffers) and the NVLS-tree's
// largest chunk (comm->nvlsTreeMaxChunkSize); Heads is the NVLS graph's
// heads (channel->nvls.nHeads).
type NVLSTuning struct {
	Channels, Heads     int
	Chunk, TreeMaxChunk int64
}

// NVLSTune is NCCL's NVLS tuning of sh on hw (NVLSTuning):
//   - channels: 16 before Blackwell (NVLS_NCHANNELS_SM90), 24 on one
//     Blackwell NVLink domain (NVLS_NCHANNELS_SM100_NVL), 32 across
//     Blackwell nodes (NVLS_NCHANNELS_SM100; nvls.cc lines 155–157, 210–214)
//     unless ncclNvlsTreeSm100Tuning (lines 164–200) sets them by the NIC's
//     speed (comm->minNetBw, the GPU's path to its NIC: the NIC's GB/s):
//     two nodes at ≥ 48 GB/s 32; ≥ 96 GB/s 24 up to 8 ranks a node, else
//     32; ≥ 48 GB/s 24;
//   - chunk 128 KiB (NCCL_NVLS_CHUNKSIZE), 256 KiB on two Blackwell nodes
//     of ≤ 4 ranks at ≥ 48 GB/s or at ≥ 96 GB/s with ≤ 8 ranks;
//   - the tree's largest chunk: that tuning's 64–256 KiB (64 KiB when the
//     GPU reaches its NIC through PCIe switches, PATH_PXB, as on an x86
//     HGX board; a Grace host's GPU reaches it through C2C, PATH_P2C,
//     src/graph/paths.cc line 206, taken here as the Arm host), else 64
//     KiB from 4 nodes on and the chunk below (lines 224–229);
//   - heads: one per GPU inside a node (search.cc line 1135: every GPU
//     pulls), one per NIC across nodes (line 755: the NVLS search pairs
//     NICs with their GPUs), at most maxNVLSArity.
//
// The ranks a node that all of these read are the smallest node's: the
// SM100 tuning takes ppn = comm->minLocalRanks (nvls.cc line 167), and
// each node finds its own heads, of which the communicator keeps the
// fewest (src/graph/connect.cc lines 431–434, minHeadNum, passed to
// connectNvls at line 514). On an even group that is Ranks/Nodes; over 8 +
// 4 B200 ranks it is 4 (256 KiB chunks, 4 heads), not the mean 6.
func NVLSTune(hw Hardware, sh Shape) NVLSTuning {
	ppn, nodes := sh.minPPN(), max(sh.Nodes, 1)
	t := NVLSTuning{Channels: 16, Heads: min(ppn, maxNVLSArity), Chunk: nvlsChunkSize}
	if nodes > 1 {
		t.Heads = min(t.Heads, hw.shapeNICs(sh))
	}
	var treeMax int64
	if hw.Arch >= Blackwell {
		t.Channels = 24
		if nodes > 1 {
			t.Channels = 32
			nic := float64(hw.NICBW) / 1e9
			pxb := hw.CPU != scenarios.HostArm
			switch {
			case nodes == 2 && nic >= 48:
				treeMax = 128 << 10
				if ppn <= 4 {
					t.Chunk, treeMax = 256<<10, 256<<10
				} else if ppn >= 16 || ppn <= 8 && pxb && nic < 96 {
					treeMax = 64 << 10
				}
			case nic >= 96:
				if ppn <= 8 {
					t.Channels, t.Chunk, treeMax = 24, 256<<10, 256<<10
				} else if ppn < 32 {
					treeMax = 128 << 10
				} else {
					treeMax = 64 << 10
				}
			case nic >= 48:
				t.Channels, treeMax = 24, 128<<10
				if pxb {
					treeMax = 64 << 10
				}
			}
		}
	}
	t.TreeMaxChunk = treeMax
	if treeMax == 0 {
		t.TreeMaxChunk = t.Chunk
		if nodes >= 4 {
			t.TreeMaxChunk = 64 << 10
		}
	}
	return t
}

// nvlsFill is the bytes an NVLS pipeline holds before its first chunk
// completes: every stage (the switch's reduce and multicast, and with a
// tree each network hop up and down) holds one chunk per concurrent
// operation (NCCL's concurrentOps, NVLS channels × heads), with NCCL's
// chunk (NVLSTune's, shrunk for small buffers: enqueue.cc
// calcCollChunking, lines 2259–2290 at the commit above). A chunk holds
// no more than the op's share of the buffer: one loop of an NVLS
// collective covers channels × heads × chunk bytes (enqueue.cc lines
// 2333–2362, loopSize and nLoops = DIVUP(nBytes, loopSize)), so below
// that each op moves nBytes/(channels × heads), and the fill is at most
// stages × nBytes.
func (c *comm) nvlsFill() float64 {
	tu := NVLSTune(c.m.HW, c.sh)
	ops := float64(tu.Channels * tu.Heads)
	b := float64(c.nBytes)
	chunk := float64(tu.Chunk)
	stages := 2.0
	if c.t == tNVLS {
		for _, r := range []struct{ mul, to float64 }{{64, 65536}, {8, 32768}, {2, 16384}} {
			if b < r.mul*ops*chunk && chunk > r.to {
				chunk = r.to
			}
		}
	} else {
		chunk = math.Min(chunk, float64(tu.TreeMaxChunk))
		for _, r := range []struct{ mul, to float64 }{{32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}} {
			if b < r.mul*ops*chunk && chunk > r.to {
				chunk = r.to
			}
		}
		stages += 2 * float64(log2i(c.nodes))
	}
	return stages * math.Min(chunk, b/ops) * ops
}

// SaturatedTime is where sat saturates NCCL's cost-model times: a time at
// or past it is "at least", not a time (a collective reports
// ErrTimeOverflow at it; the replay reports a step that reaches it).
const SaturatedTime = units.Duration(math.MaxInt64 / 2)

// sat is ps rounded, saturated at SaturatedTime, half the int64 range (the
// engine saturates at the range too).
func sat(ps float64) units.Duration {
	if !(ps < float64(SaturatedTime)) {
		return SaturatedTime
	}
	return units.Duration(math.Round(max(ps, 0)))
}

// treeLL128Fill is the bytes a tree LL128 pipeline holds before its first
// chunk completes: NCCL's own depth for it, nstepsLL128 = 1 + log2(nNodes)
// + 0.1·ppn, chunks of one LL128 step (120 of every 128 bytes of
// DEFAULT_LL128_BUFFSIZE / NCCL_STEPS, init.cc) halved until each channel
// has enough of them (enqueue.cc calcCollChunking), on every channel.
func treeLL128Fill(nBytes units.Bytes, nCh, ppn float64, nodes int) float64 {
	const ll128Step = 120 * 640 * 8 * 8 / 8 // NCCL_LL128_ELEMS_PER_THREAD · MAX_NTHREADS · NCCL_STEPS · 8 B / NCCL_STEPS
	chunk := float64(ll128Step / 16 * 15)
	steps := 1 + float64(log2i(nodes)) + float64(0.1*ppn)
	perCh := func() float64 { return math.Floor(float64(nBytes) / (nCh * chunk)) }
	for perCh() < math.Floor(steps*64/ppn) && chunk > 131072 {
		chunk /= 2
	}
	for perCh() < math.Floor(steps*16/ppn) && chunk > 32768 {
		chunk /= 2
	}
	return steps * chunk * nCh
}

// ncclAlgos are the algorithms Choose considers, in NCCL's order (CollNet
// aside: it needs SHARP switches, not modelled).
var ncclAlgos = []Algo{Tree, Ring, NVLS, NVLSTree, PAT}

// Choose is the (algorithm, protocol) of least modelled time for op over sh
// on nBytes, among a (Auto: every algorithm NCCL has here). LL128 is on
// only where NCCL enables it by default (Volta and later over NVLink).
func (m *Model) Choose(op Op, sh Shape, a Algo, nBytes units.Bytes) (Choice, error) {
	algos := ncclAlgos
	if a != Auto {
		algos = []Algo{a}
	}
	best := Choice{Time: -1}
	// On AMD across nodes RCCL's cost ranks and the NCCL path times
	// (Cost): rank every combination by rcclCost, then time only the
	// cheapest that the NCCL path runs, in the order of the loop on ties.
	rccl := m.HW.GFX != "" && rcclTimedByNCCL(sh)
	ranked := make([]Choice, 0, 2*numProtos) // rcclCost runs tree and ring
	// Before 2.27 NCCL's LL128 switch enables only the compute
	// capabilities it lists (ncclTuning.ll128CompCaps: no 10.0 before
	// 2.25, no 10.3 before 2.27), whatever NCCL_PROTO says.
	ll128 := m.HW.GFX != "" || m.HW.tuning().ll128On(m.HW.compCap())
	for _, al := range algos {
		if m.HW.Algos != 0 && m.HW.Algos&(1<<al) == 0 {
			continue
		}
		for p := LL; p < numProtos; p++ {
			// LL128 is off over PCIe by default; a protocol NCCL_PROTO
			// names (or does not disable) is on (ParseNCCLProtos).
			if p == LL128 && m.HW.PCI && m.HW.Protos == 0 || m.HW.Protos != 0 && m.HW.Protos&(1<<p) == 0 {
				continue
			}
			if p == LL128 && !ll128 {
				continue
			}
			if rccl {
				if c, ok := m.rcclCost(op, sh, al, p, nBytes); ok {
					ranked = append(ranked, c)
				}
				continue
			}
			c, ok := m.Cost(op, sh, al, p, nBytes)
			if ok && (best.Time < 0 || c.cost < best.cost) {
				best = c
			}
		}
	}
	for len(ranked) > 0 {
		i := 0
		for j := range ranked {
			if ranked[j].cost < ranked[i].cost {
				i = j
			}
		}
		if c, ok := m.rcclPhys(op, sh, ranked[i], nBytes); ok {
			best = c
			break
		}
		ranked = slices.Delete(ranked, i, i+1)
	}
	if best.Time < 0 {
		why := pinWhy(a)
		if a == Auto && (m.HW.Algos != 0 || m.HW.Protos != 0) {
			// NCCL's own refusal (enqueue.cc topoGetAlgoInfo, lines
			// 2052–2065 at the commit above): no combination is left.
			if names := algoNames(m.HW.Algos); len(names) == 1 {
				why = pinWhy(ncclAlgos[slices.Index(ncclAlgoNames[:], names[0])])
			}
			return Choice{}, fmt.Errorf("collectives: %w for %v over %d ranks on %d nodes on this hardware:%s%s", ErrNoAlgorithm, op, sh.Ranks, sh.Nodes, m.HW.pinText(), why)
		}
		return Choice{}, fmt.Errorf("collectives: %v %w %v over %d ranks on %d nodes on this hardware%s", a, ErrCannotRun, op, sh.Ranks, sh.Nodes, why)
	}
	return best, nil
}

// Slowness says why the tuner's choice is slower than another
// combination the model times (FasterThanChoice).
type Slowness uint8

const (
	// SlowCost: the tuner's cost ranks its choice first, as the tuner
	// does (on AMD across nodes RCCL ranks by rcclCost and NCCL's path
	// times the choice: rccl.go).
	SlowCost Slowness = iota
	// SlowTreeFill: NCCL ranks a Simple tree by its cost, which leaves out
	// the pipeline fill its time holds (treeSimpleFill).
	SlowTreeFill
	// SlowPluginLatency: across nodes NCCL ranks by the network plugin's
	// latency (Hardware.PluginLatency), not the link's.
	SlowPluginLatency
)

// Library is the collectives library whose tuner m models: "RCCL" on an
// AMD GPU (Hardware.GFX), "NCCL" otherwise.
func (m *Model) Library() string {
	if m.HW.GFX != "" {
		return "RCCL"
	}
	return "NCCL"
}

// FasterThanChoice is, where auto's choice for op over sh on nBytes is
// not the fastest combination the model times, that choice, the fastest
// and why the tuner chose it (ok true). NCCL ranks a Simple tree by its
// cost, its bandwidth with the empirical correction and no pipeline fill
// (ncclTopoGetAlgoTime in src/graph/tuning.cc at the commit above), and
// Choose ranks as NCCL does, while the tree's time holds the fill
// (treeSimpleFill): in that window NCCL's choice, and so auto's time, is
// above another algorithm's (QA17 L4: 8 × 8 H100, 512 MiB, tree/Simple
// 3,858.6 µs, NVLS-tree 3,296.1 µs). Only times differing by more than
// 1 % count.
func (m *Model) FasterThanChoice(op Op, sh Shape, nBytes units.Bytes) (chosen, fastest Choice, why Slowness, ok bool) {
	m = &Model{HW: m.HW, Params: m.Params, GPUsPerThread: m.GPUsPerThread} // the model's times, not a calibration's curves
	chosen, err := m.Time(op, sh, Auto, nBytes)
	if err != nil || sh.Ranks < 2 || nBytes <= 0 {
		return chosen, chosen, SlowCost, false
	}
	fastest = chosen
	for _, a := range ncclAlgos {
		if c, err := m.Time(op, sh, a, nBytes); err == nil && c.Time < fastest.Time {
			fastest = c
		}
	}
	switch {
	case m.HW.GFX != "":
	case chosen.Algo == Tree && chosen.Proto == Simple:
		why = SlowTreeFill
	case m.HW.PluginLatency != 0 && sh.Nodes > 1:
		why = SlowPluginLatency
	}
	return chosen, fastest, why, float64(fastest.Time) < 0.99*float64(chosen.Time)
}

// pinWhy says why algorithm a may not run, for Choose's error.
func pinWhy(a Algo) string {
	switch a {
	case NVLS:
		return " (NVLS needs Hopper or later GPUs on an NVSwitch, two or more GPUs per node, and one node: across nodes NCCL needs SHARP switches; NVLS-tree or NCCL's own choice runs across nodes)"
	case NVLSTree:
		return " (NVLS-tree needs Hopper or later GPUs on an NVSwitch, two or more of the group's GPUs on each node, more than one node, and all-reduce; NCCL's own choice runs the rest)"
	case Tree:
		return " (NCCL's tree runs all-reduce only)"
	case PAT:
		return " (PAT runs all-gather and reduce-scatter over one GPU per node, Simple only)"
	}
	return ""
}

// NVLSBuffers is the device memory, bytes, NCCL allocates for NVLS on a
// communicator of shape sh on hw once it runs NVLS or NVLS-tree, 0 where
// neither can run: ncclNvlsBufferSetup's nvlsTotalSize = nvlsChannels · 2
// · (nvlsChunkSize · NCCL_STEPS) · nHeads, one cuMemCreate of that size
// (src/transport/nvls.cc lines 425–437 and 357 at the commit above; the
// channels, chunk and heads are NVLSTune's). 24 × 2 × 1 MiB × 32 = 1.5 GiB
// in a 72-GPU NVLink domain, 16 × 2 × 1 MiB × 8 = 256 MiB on 8 H100.
func NVLSBuffers(hw Hardware, sh Shape) int64 {
	if !hw.NVLS || hw.PCI || sh.minPPN() < 2 || hw.GFX != "" {
		return 0
	}
	t := NVLSTune(hw, sh)
	return int64(t.Channels) * 2 * t.Chunk * ncclSteps * int64(t.Heads)
}

// RunsNVLS reports whether auto runs NVLS or NVLS-tree for any of ops over
// sh at a power-of-two size from 1 MiB to 1 GiB (the sizes of a training
// step's bucketed collectives). NCCL sets its NVLS buffers up at the first
// collective that runs either (NCCL_RUNTIME_CONNECT, on by default:
// src/init.cc lines 61 and 1552, enqueue.cc lines 494–499 marking NVLS for
// an NVLS-tree, group.cc line 165 calling ncclNvlsBufferSetup at the
// commit above), so a communicator that never does holds none.
func RunsNVLS(hw Hardware, sh Shape, ops []Op) bool {
	if NVLSBuffers(hw, sh) == 0 {
		return false
	}
	m := NewModel(hw)
	for _, op := range ops {
		for s := units.Bytes(units.MiB); s <= units.GiB; s *= 2 {
			if c, err := m.Choose(op, sh, Auto, s); err == nil && (c.Algo == NVLS || c.Algo == NVLSTree) {
				return true
			}
		}
	}
	return false
}
