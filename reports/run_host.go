package reports

import (
	"fmt"
	"io"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// writeHostSide writes the host side of an offloaded step next to the GPU
// side: PCIe bytes and busy time each way, the CPU optimizer's time, which
// of them bounds the host, and the node's host RAM.
func writeHostSide(w io.Writer, h *zero.HostStats) {
	if h == nil {
		return
	}
	fmt.Fprintf(w, "host side (per rank): PCIe down %s in %v, PCIe up %s in %v, CPU Adam %v; the host is %s-bound",
		units.Bytes(h.PCIeDown).IEC(), h.PCIeDownTime, units.Bytes(h.PCIeUp).IEC(), h.PCIeUpTime, h.CPUTime, h.Bottleneck)
	if h.RAMPerNode > 0 {
		fmt.Fprintf(w, "; host RAM %s per node", units.Bytes(h.RAMPerNode).IEC())
	}
	fmt.Fprintln(w)
}

// writeHostMemory writes the host RAM line of an offloading scenario's
// memory report.
func writeHostMemory(w io.Writer, r *memory.Report, u MemoryUnits) error {
	h := r.Host
	if h == nil {
		return nil
	}
	fits := "fits in " + u.format(h.Capacity)
	if !h.Fits {
		fits = "EXCEEDS " + u.format(h.Capacity)
	}
	s := fmt.Sprintf("host RAM: %s per rank, %s (%s B) per node, %s", u.format(h.PerRank), u.format(h.PerNode), commas(h.PerNode), fits)
	if h.NVMePerNode > 0 {
		s += fmt.Sprintf("; NVMe %s per node", u.format(h.NVMePerNode))
	}
	_, err := fmt.Fprintf(w, "%s (%s)\n", s, h.Note)
	return err
}

// runHostJSON is the host side of an offloaded step per rank: PCIe bytes and
// busy time each way, the CPU optimizer's time, the busier of PCIe and the
// CPU, and the node's host RAM.
type runHostJSON struct {
	PCIeDownBytes int64  `json:"pcie_down_bytes"`
	PCIeDownPS    int64  `json:"pcie_down_ps"`
	PCIeUpBytes   int64  `json:"pcie_up_bytes"`
	PCIeUpPS      int64  `json:"pcie_up_ps"`
	CPUPS         int64  `json:"cpu_ps"`
	Bottleneck    string `json:"bottleneck"`
	RAMPerNode    int64  `json:"host_ram_per_node_bytes"`
}

func hostJSON(h *zero.HostStats) *runHostJSON {
	if h == nil {
		return nil
	}
	return &runHostJSON{PCIeDownBytes: h.PCIeDown, PCIeDownPS: int64(h.PCIeDownTime), PCIeUpBytes: h.PCIeUp, PCIeUpPS: int64(h.PCIeUpTime),
		CPUPS: int64(h.CPUTime), Bottleneck: h.Bottleneck, RAMPerNode: h.RAMPerNode}
}
