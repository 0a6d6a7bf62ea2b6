package scenarios

import (
	"strings"
	"testing"
)

// zero3YAML is a valid stage-3 scenario on 2 nodes × 4 GPUs for the ZeRO++
// and offload cases.
const zero3YAML = `version: 1
cluster:
  nodes: 2
  gpus_per_node: 4
  gpu: A100-80GB
model:
  preset: gpt3-125m
parallelism:
  dp: 8
  zero_stage: 3
`

func TestZeroPPAndOffloadResolve(t *testing.T) {
	s, err := Load("s.yaml", []byte(zero3YAML+`communication:
  zero_quantized_weights: true
  zero_hpz_partition_size: 4
  zero_quantized_gradients: true
offload:
  optimizer: cpu
  params: nvme
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Communication
	if !c.ZeroQuantizedWeights || c.ZeroHPZPartitionSize != 4 || !c.ZeroQuantizedGradients || !c.ZeroPP() {
		t.Errorf("zero++ keys: %+v", c)
	}
	if s.Offload.Optimizer != OffloadCPU || s.Offload.Params != OffloadNVMe {
		t.Errorf("offload %+v", s.Offload)
	}
	h := s.Cluster.Host
	// The host link carries PCIe 4.0 x16's payload: 16 GT/s × 16 lanes ×
	// 128/130 / 8 = 31,507,692,307 B/s (985 MB/s a PCIe 3.0 lane in the
	// manual cited at linkPresets, twice that at 4.0's 16 GT/s).
	if h.Memory != DefaultHostMemory || h.PCIe.Preset != "PCIe4" || h.PCIe.Bandwidth != 31_507_692_307 || h.PCIeSharing != PCIePerGPU ||
		h.Sockets != 2 || h.MemoryBandwidth != 409_600_000_000 || h.NVMeBandwidth != DefaultNVMeBandwidth {
		t.Errorf("host defaults %+v", h)
	}
	// The host CPU is the GPU preset's system's: DGX A100's AMD EPYC 7742.
	if h.CPU != HostAMD || s.Cluster.CPU() != HostAMD {
		t.Errorf("host cpu %q, cluster cpu %q; want amd (DGX A100)", h.CPU, s.Cluster.CPU())
	}
	// Resolving again keeps the values (one validation for files and Go values).
	if err := Resolve(s); err != nil || s.Offload.Params != OffloadNVMe || s.Cluster.Host.Memory != DefaultHostMemory {
		t.Errorf("re-resolve: %v %+v", err, s.Offload)
	}

	// Without offload nothing is filled in, and "none" resolves to the
	// empty value (no offload section in the resolved scenario).
	s, err = Load("s.yaml", []byte(zero3YAML+"offload: {optimizer: none, params: none}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Offload.Any() || s.Cluster.Host != (Host{}) || s.Offload.Optimizer.String() != "none" {
		t.Errorf("no offload: %+v host %+v", s.Offload, s.Cluster.Host)
	}
	// Unfilled, the host CPU still follows the GPU preset; given, it wins.
	for _, c := range []struct {
		set  string
		want HostCPU
	}{{"cluster.gpu=A100-80GB", HostAMD}, {"cluster.gpu=H100-80GB", HostIntel}, {"cluster.gpu=B200", HostIntel},
		{"cluster.gpu=GB200", HostArm}, {"cluster.gpu=L40S", HostIntel}, {"cluster.gpu=L4", HostAMD}, {"cluster.host.cpu=intel", HostIntel}} {
		s, err := Load("s.yaml", []byte(zero3YAML), []string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Cluster.CPU(); got != c.want {
			t.Errorf("%s: host cpu %q, want %q", c.set, got, c.want)
		}
	}
	// hpZ of 0 or 1 is off, as DeepSpeed's > 1 test.
	s, err = Load("s.yaml", []byte(zero3YAML+"communication: {zero_hpz_partition_size: 1}\n"), nil)
	if err != nil || s.Communication.ZeroPP() {
		t.Errorf("hpz 1: %v, zero++ %v", err, s != nil && s.Communication.ZeroPP())
	}
}

func TestZeroPPAndOffloadErrors(t *testing.T) {
	z1 := strings.Replace(zero3YAML, "zero_stage: 3", "zero_stage: 1", 1)
	z0 := strings.Replace(zero3YAML, "zero_stage: 3", "zero_stage: 0", 1)
	for _, tc := range []struct{ name, in, want string }{
		{"qwZ at stage 1", z1 + "communication: {zero_quantized_weights: true}\n",
			"s.yaml:11:17: zero_quantized_weights is ZeRO++, which DeepSpeed runs at ZeRO stage 3 only (set zero_stage: 3, or remove the key)"},
		{"qgZ with k", zero3YAML + "  k: 2\ncommunication: {zero_quantized_gradients: true}\n",
			"s.yaml:12:17: zero_quantized_gradients is DeepSpeed's ZeRO++, which has no k (num_distributed_optimizer_instances); k=2 must be 1"},
		{"fp32 reduce with qgZ", zero3YAML + "communication: {zero_quantized_gradients: true}\ntraining: {reduce_dtype: fp32}\n",
			"s.yaml:12:12: reduce_dtype fp32 and communication.zero_quantized_gradients exclude each other: qgZ reduces quantized gradients (drop one)"},
		{"hpz not a divisor", zero3YAML + "communication: {zero_hpz_partition_size: 3}\n",
			"s.yaml:11:17: zero_hpz_partition_size=3 does not divide the 8 ranks (DeepSpeed builds groups of consecutive ranks; use a divisor such as 4, the GPUs of a node)"},
		{"hpz negative", zero3YAML + "communication: {zero_hpz_partition_size: -1}\n",
			"s.yaml:11:17: zero_hpz_partition_size=-1 is out of range (use 0 to 67108864)"},
		{"qwZ not a bool", zero3YAML + "communication: {zero_quantized_weights: yes please}\n",
			""},
		{"torchao fp8 with ZeRO++", strings.Replace(zero3YAML, "A100-80GB", "H100-80GB", 1) + "training: {fp8: torchao}\ncommunication: {zero_hpz_partition_size: 4}\n",
			"s.yaml:11:12: fp8 torchao gathers fp8 weights with FSDP2, and ZeRO++ (zero_quantized_weights, zero_hpz_partition_size, zero_quantized_gradients) is DeepSpeed's stage 3: no stack runs both (use fp8: te with ZeRO++, or remove the ZeRO++ keys)"},
		{"offload device", zero3YAML + "offload: {optimizer: gpu}\n",
			"s.yaml:11:11: optimizer \"gpu\" is unknown (use none, cpu or nvme)"},
		{"offload at stage 0", z0 + "offload: {optimizer: cpu}\n",
			"s.yaml:11:11: optimizer: cpu needs ZeRO stage 1, 2 or 3 (DeepSpeed offloads the partitioned optimizer; set zero_stage: 1 or more, or optimizer: none)"},
		{"params offload at stage 1", z1 + "offload: {params: cpu}\n",
			"s.yaml:11:11: params: cpu needs ZeRO stage 3 (DeepSpeed's offload_param is stage 3 only; set zero_stage: 3 or params: none)"},
		{"qwZ with ep", strings.Replace(zero3YAML, "zero_stage: 3", "zero_stage: 3\n  ep: 2", 1) + "communication: {zero_quantized_weights: true}\n",
			""},
		{"offload with k", zero3YAML + "  k: 2\noffload: {optimizer: cpu}\n",
			"s.yaml:12:1: offload is DeepSpeed's and has no k (num_distributed_optimizer_instances); k=2 must be 1"},
		{"unknown offload key", zero3YAML + "offload: {optimiser: cpu}\n",
			""},
		{"pcie preset", strings.Replace(zero3YAML, "gpu: A100-80GB", "gpu: A100-80GB\n  host: {pcie: {preset: PCIe9}}", 1),
			"s.yaml:6:17: preset \"PCIe9\" is unknown (use " + ListOr(linkNames()) + ")"},
		{"pcie sharing", strings.Replace(zero3YAML, "gpu: A100-80GB", "gpu: A100-80GB\n  host: {pcie_sharing: per_rack}", 1),
			"s.yaml:6:10: pcie_sharing \"per_rack\" is unknown (use per_gpu or per_socket)"},
		{"sockets do not divide", strings.Replace(zero3YAML, "gpu: A100-80GB", "gpu: A100-80GB\n  host: {pcie_sharing: per_socket, sockets: 3}", 1),
			"s.yaml:6:36: sockets=3 does not divide gpus_per_node=4 (pcie_sharing: per_socket puts the same number of GPUs on each socket)"},
		{"host cpu", strings.Replace(zero3YAML, "gpu: A100-80GB", "gpu: A100-80GB\n  host: {cpu: epyc}", 1),
			"s.yaml:6:10: cpu \"epyc\" is unknown (use intel, amd or arm)"},
		{"host memory 0", strings.Replace(zero3YAML, "gpu: A100-80GB", "gpu: A100-80GB\n  host: {memory: 0}", 1),
			"s.yaml:6:10: memory=0 is out of range (use the node's RAM such as 1TiB)"},
		{"nvme bandwidth 0", strings.Replace(zero3YAML, "gpu: A100-80GB", "gpu: A100-80GB\n  host: {nvme_bandwidth: 0GB/s}", 1),
			"s.yaml:6:10: nvme_bandwidth=0 is out of range (use a bandwidth > 0 such as 25GB/s)"},
	} {
		_, err := Load("s.yaml", []byte(tc.in), nil)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if tc.want != "" && err.Error() != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: message has more than one line: %q", tc.name, err)
		}
	}
}
