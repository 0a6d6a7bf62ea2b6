package scenarios

import (
	"strings"
	"testing"
)

// TestImpossibleHardwareWarns (qa19 L8): a node of more GPUs than one
// NVLink domain of its GPU holds (H100: 256, the NVLink Switch System;
// GB200: 72, an NVL72 rack) and a NIC above InfiniBand XDR's 800 Gb/s
// (100 GB/s) warn at their key with the published figure; a node of one
// domain and an XDR NIC say nothing. GB200 at 144 a node warned of nothing
// while 64 and 4 did. Also the presets the first cases do not reach (HGX
// B200: 8 GPUs on one baseboard's NVLink5 switches; HGX A800 8-GPU; an
// AMD MI300X platform: 8 GPUs on Infinity Fabric), a PCIe intra preset
// left alone,
// and one warning, not two, for a GB200 node above a rack that is no
// multiple of an NVL36 (warnNVLTray leaves nodes above a rack to
// warnImpossibleHardware).
func TestImpossibleHardwareWarns(t *testing.T) {
	file := []byte(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b}
parallelism: {dp: 16, zero_stage: 3}
`)
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, ""},
		{[]string{"cluster.gpus_per_node=256", "parallelism.dp=512"}, ""},
		{[]string{"cluster.gpus_per_node=1024", "parallelism.dp=2048"}, "gpus_per_node=1024 is more H100-80GB GPUs than one NVLink domain holds (256: NVLink4's Switch System, up to 256 connected Hopper GPUs (DGX GH200), NVIDIA's NVLink page)"},
		{[]string{"cluster.gpu=GB200", "cluster.intra.preset=NVLink5", "cluster.gpus_per_node=72", "parallelism.dp=144"}, ""},
		{[]string{"cluster.gpu=GB200", "cluster.intra.preset=NVLink5", "cluster.gpus_per_node=144", "parallelism.dp=288"}, "gpus_per_node=144 is more GB200 GPUs than one NVLink domain holds (72: GB200 NVL72 rack"},
		{[]string{"cluster.gpu=B200", "cluster.intra.preset=NVLink5"}, ""},
		{[]string{"cluster.gpu=B200", "cluster.intra.preset=NVLink5", "cluster.gpus_per_node=16", "parallelism.dp=32"}, "gpus_per_node=16 is more B200 GPUs than one NVLink domain holds (8: "},
		{[]string{"cluster.gpu=A800-80GB", "cluster.intra.preset=NVLink3-A800"}, ""},
		{[]string{"cluster.gpu=A800-80GB", "cluster.intra.preset=NVLink3-A800", "cluster.gpus_per_node=16", "parallelism.dp=32"}, "gpus_per_node=16 is more A800-80GB GPUs than one NVLink domain holds (8: HGX A800 8-GPU"},
		{[]string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, ""},
		{[]string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI", "cluster.gpus_per_node=16", "parallelism.dp=32"}, "gpus_per_node=16 is more MI300X GPUs than one Infinity Fabric (xGMI) domain holds (8: 8 GPUs fully connected by Infinity Fabric, AMD Instinct MI300X platform), and zerosim's node is one Infinity Fabric (xGMI) domain: its collectives would run over xGMI between"},
		{[]string{"cluster.intra.preset=PCIe5", "cluster.gpus_per_node=512", "parallelism.dp=1024"}, ""},
		{[]string{"cluster.gpu=GB200", "cluster.intra.preset=NVLink5", "cluster.gpus_per_node=100", "parallelism.dp=200"}, "gpus_per_node=100 is more GB200 GPUs than one NVLink domain holds (72: "},
		{[]string{"cluster.inter.bandwidth=800Gbps"}, ""},
		// Just over XDR (final read R2: a bound of twice XDR passed).
		{[]string{"cluster.inter.bandwidth=808Gbps"}, "s.yaml: --set cluster.inter.bandwidth=808Gbps: inter bandwidth 101.00 GB/s per NIC is more than the fastest NIC with a published line rate"},
		{[]string{"cluster.inter.bandwidth=3200Gbps"}, "s.yaml: --set cluster.inter.bandwidth=3200Gbps: inter bandwidth 400.00 GB/s per NIC is more than the fastest NIC with a published line rate, 100.00 GB/s (ConnectX-8 SuperNIC, InfiniBand XDR, 800 Gb/s"},
	} {
		s, err := Load("s.yaml", file, c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "domain holds") || strings.Contains(w, "fastest NIC") {
				got = append(got, w)
			}
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%v: warnings %q, want none", c.sets, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%v: warnings %q, want one with %q", c.sets, got, c.want)
		}
	}
}
