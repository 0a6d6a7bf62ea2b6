package reports

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// TestHostSideLine: the host line names the CPU optimizer only when the
// CPU runs one (DeepSpeed's offload); activation offloading alone prints
// its copies each way, over NVLink-C2C on a Grace host.
func TestHostSideLine(t *testing.T) {
	gb200 := &scenarios.Cluster{GPU: "GB200"}
	h100 := &scenarios.Cluster{GPU: "H100-80GB"}
	h100.Host.PCIe.Preset = "PCIe5"
	h100.Host.MemoryBandwidth = 563_200_000_000
	for _, c := range []struct {
		h    zero.HostStats
		c    *scenarios.Cluster
		want string
	}{
		{zero.HostStats{PCIeDown: 1 << 30, PCIeUp: 1 << 30, PCIeDownTime: 5 * units.Millisecond, PCIeUpTime: 5 * units.Millisecond},
			gb200, "host side (per rank): activations NVLink-C2C GPU→host 1.00 GiB in 5ms, host→GPU 1.00 GiB in 5ms\n"},
		{zero.HostStats{PCIeDown: 1 << 30, PCIeUp: 1 << 30, PCIeDownTime: 5 * units.Millisecond, PCIeUpTime: 5 * units.Millisecond, CPUTime: 9 * units.Millisecond, CPUStep: true, Bottleneck: "cpu"},
			h100, "host side (per rank): PCIe GPU→host 1.00 GiB in 5ms, host→GPU 1.00 GiB in 5ms, CPU Adam 9ms (at the full 563.20 GB/s memory bandwidth of the node: a lower bound); the host is cpu-bound\n"},
	} {
		var b strings.Builder
		writeHostSide(&b, &c.h, c.c)
		if b.String() != c.want {
			t.Errorf("got %q, want %q", b.String(), c.want)
		}
	}
}
