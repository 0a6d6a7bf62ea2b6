package scenarios

import "testing"

// TestDefaultHostCPU: every GPU preset's default host, as the systems it
// ships in have it (the sources are at hosts): DGX-1/DGX-2 Xeons, DGX
// A100's EPYC 7742, DGX H100/H200/B200/B300 Xeons, Grace on GB200/GB300,
// EPYC 9374F on AMD's MI300X platform, EPYC 9575F on its MI355X system,
// EPYC 7R32/7R13 on AWS g5/g6;
// intel where no system was found (L40S, the RTX cards). Review s19 A5: an
// A10G row changed to intel passed every test.
func TestDefaultHostCPU(t *testing.T) {
	want := map[string]HostCPU{
		"V100-16GB": HostIntel, "V100-32GB": HostIntel,
		"A100-40GB": HostAMD, "A100-80GB": HostAMD, "A800-80GB": HostAMD,
		"H100-80GB": HostIntel, "H100-PCIe": HostIntel, "H200": HostIntel, "GH200-96GB": HostArm, "B200": HostIntel, "B300": HostIntel,
		"GB200": HostArm, "GB300": HostArm,
		"MI300X": HostAMD, "MI325X": HostAMD, "MI350X": HostAMD, "MI355X": HostAMD,
		"L40S": HostIntel, "A10G": HostAMD, "L4": HostAMD,
		"RTX4090": HostIntel, "RTX5090": HostIntel,
	}
	for _, g := range gpuPresets {
		w, ok := want[g.Name]
		if !ok {
			t.Errorf("GPU preset %s: no expected host here (add it with its system's CPU)", g.Name)
			continue
		}
		if got := DefaultHostCPU(g.Name); got != w {
			t.Errorf("%s: default host %s, want %s", g.Name, got, w)
		}
	}
}
