package scenarios

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestHostDefaultsFollowTheSystem (QA13 F5): cluster.host's memory,
// memory_bandwidth, link and sockets default to the GPU preset's system's,
// as cpu does, scaled by gpus_per_node where the system is built of
// superchips. By hand:
//   - DGX A100: 1 TiB, 2 × 8 channels × DDR4-3200 = 409.6 GB/s, PCIe4's
//     payload 32e9 × 128/130 = 31,507,692,307 B/s.
//   - DGX H100 and HGX B200: 32 × 64 GB = 2 TiB, 16 channels at DDR5-4400
//     (two DIMMs a channel) × 8 B = 563.2 GB/s, PCIe5's payload 64e9 ×
//     128/130 = 63,015,384,615 B/s.
//   - GB200/GB300 on a rack node of 72: 72 × 240 GB = 17.28 TB, 72 × 256
//     GB/s = 18.432 TB/s (36 Grace × 512), 36 sockets, C2C 450 GB/s per
//     direction a Grace, 225 a GPU; a tray of 4: 960 GB, 1.024 TB/s, 2.
//   - AMD's MI300X platform: 24 × 64 GiB = 1.5 TiB, 24 channels at
//     DDR5-4800 × 8 B = 921.6 GB/s, PCIe5.
//   - AMD's MI355X system: 24 × 128 GiB = 3 TiB, the MI300X platform's
//     921.6 GB/s (its DIMM speed not published), PCIe5.
//   - GH200: one Grace a GPU, 480GB at 512 GB/s and C2C 450 GB/s per
//     direction each.
//   - B300 and L40S: no host table found, DGX A100's.
func TestHostDefaultsFollowTheSystem(t *testing.T) {
	const doc = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}\nmodel: {preset: gpt3-125m}\nparallelism: {dp: auto, zero_stage: 3}\noffload: {optimizer: cpu}\n"
	for _, c := range []struct {
		sets    []string
		mem     units.Bytes
		bw, pci units.Bandwidth
		sockets int
	}{
		{nil, units.TiB, 409_600_000_000, 31_507_692_307, 2},
		{[]string{"cluster.gpu=H100-80GB"}, 2 * units.TiB, 563_200_000_000, 63_015_384_615, 2},
		{[]string{"cluster.gpu=H200"}, 2 * units.TiB, 563_200_000_000, 63_015_384_615, 2},
		{[]string{"cluster.gpu=B200"}, 2 * units.TiB, 563_200_000_000, 63_015_384_615, 2},
		{[]string{"cluster.gpu=GB200", "cluster.gpus_per_node=72"}, 17_280_000_000_000, 18_432_000_000_000, 225_000_000_000, 36},
		{[]string{"cluster.gpu=GB300", "cluster.gpus_per_node=72"}, 17_280_000_000_000, 18_432_000_000_000, 225_000_000_000, 36},
		{[]string{"cluster.gpu=GB200", "cluster.gpus_per_node=4", "cluster.nodes=1"}, 960_000_000_000, 1_024_000_000_000, 225_000_000_000, 2},
		{[]string{"cluster.gpu=GB200", "cluster.gpus_per_node=72", "cluster.host.pcie_sharing=per_socket"}, 17_280_000_000_000, 18_432_000_000_000, 450_000_000_000, 36},
		{[]string{"cluster.gpu=GB200", "cluster.gpus_per_node=72", "cluster.host.pcie.preset=PCIe5"}, 17_280_000_000_000, 18_432_000_000_000, 63_015_384_615, 36},
		{[]string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, 1536 * units.GiB, 921_600_000_000, 63_015_384_615, 2},
		// MI325X takes the MI300X platform's host (review s20 B M33: the
		// MI3 prefix); MI350X and MI355X AMD's 8 × MI355X system's, whose
		// MLPerf v6.1 file gives 3.0 TB of 24 × 128GB DIMMs (3 TiB) on
		// PCIe Gen 5 x16 and no DIMM speed (the MI300X platform's 921.6
		// GB/s kept); an odd GB200 tray of 3 GPUs has ⌈3/2⌉ = 2 Graces:
		// 720 GB, 768 GB/s (M31, sockets rounded up).
		{[]string{"cluster.gpu=MI325X", "cluster.intra.preset=xGMI"}, 1536 * units.GiB, 921_600_000_000, 63_015_384_615, 2},
		{[]string{"cluster.gpu=MI355X", "cluster.intra.preset=xGMI"}, 3072 * units.GiB, 921_600_000_000, 63_015_384_615, 2},
		{[]string{"cluster.gpu=MI350X", "cluster.intra.preset=xGMI"}, 3072 * units.GiB, 921_600_000_000, 63_015_384_615, 2},
		{[]string{"cluster.gpu=GB200", "cluster.gpus_per_node=3", "cluster.nodes=1"}, 720_000_000_000, 768_000_000_000, 225_000_000_000, 2},
		// GH200: one Grace a GPU (480GB, 512 GB/s, C2C 450 GB/s per
		// direction its GPU's alone); a CSCS Alps node of 4: 1.92 TB,
		// 2.048 TB/s, 4 sockets.
		{[]string{"cluster.gpu=GH200-96GB", "cluster.gpus_per_node=4"}, 1_920_000_000_000, 2_048_000_000_000, 450_000_000_000, 4},
		{[]string{"cluster.gpu=B300"}, units.TiB, 409_600_000_000, 31_507_692_307, 2},
		{[]string{"cluster.gpu=L40S"}, units.TiB, 409_600_000_000, 31_507_692_307, 2},
		{[]string{"cluster.gpu=GB200", "cluster.gpus_per_node=72", "cluster.host.memory=2TiB", "cluster.host.memory_bandwidth=1TB/s", "cluster.host.sockets=4"}, 2 * units.TiB, 1e12, 225_000_000_000, 4},
	} {
		s, err := Load("h.yaml", []byte(doc), c.sets)
		if err != nil {
			t.Fatalf("%q: %v", c.sets, err)
		}
		h := s.Cluster.Host
		if h.Memory != c.mem || h.MemoryBandwidth != c.bw || h.PCIe.Bandwidth != c.pci || h.Sockets != c.sockets {
			t.Errorf("%q: memory %d, bandwidth %d, link %d, sockets %d; want %d, %d, %d, %d", c.sets, h.Memory, h.MemoryBandwidth, h.PCIe.Bandwidth, h.Sockets, c.mem, c.bw, c.pci, c.sockets)
		}
		// Resolving again keeps them (the resolved scenario re-encodes).
		if err := Resolve(s); err != nil || s.Cluster.Host != h {
			t.Errorf("%q: re-resolve %v: %+v, want %+v", c.sets, err, s.Cluster.Host, h)
		}
	}
}

// TestHostDefaultsOfAGFXTarget: an AMD GPU described by its figures takes
// the host of its target's system: gfx942 AMD's 8 × MI300X platform (1.5
// TiB), gfx950 AMD's 8 × MI355X system (3 TiB of 24 × 128GB DIMMs, its
// MLPerf Inference v6.1 system file); both AMD hosts on PCIe5.
func TestHostDefaultsOfAGFXTarget(t *testing.T) {
	const doc = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 288GB, peak_bf16: 2300TFLOPS, hbm_bandwidth: 8TB/s, gfx: %s, intra: {preset: xGMI}, inter: {preset: RoCE400}}\n" +
		"model: {preset: gpt3-125m}\nparallelism: {dp: auto, zero_stage: 3}\noffload: {optimizer: cpu}\n"
	for gfx, mem := range map[string]units.Bytes{"gfx942": 1536 * units.GiB, "gfx950": 3072 * units.GiB} {
		s, err := Load("h.yaml", []byte(fmt.Sprintf(doc, gfx)), nil)
		if err != nil {
			t.Fatalf("%s: %v", gfx, err)
		}
		if h := s.Cluster.Host; h.Memory != mem || h.MemoryBandwidth != 921_600_000_000 || h.PCIe.Bandwidth != 63_015_384_615 || h.CPU != HostAMD {
			t.Errorf("%s: host %+v, want %d B, 921.6 GB/s, PCIe5, amd", gfx, h, mem)
		}
	}
}
