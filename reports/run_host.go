package reports

import (
	"fmt"
	"io"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// writeHostSide writes the host side of an offloaded step next to the GPU
// side: the host link's bytes and busy time each way, the CPU optimizer's
// time, which of them bounds the host, and the node's host RAM. The link
// is named by hostLinkName (PCIe, or NVLink-C2C on a Grace superchip).
func writeHostSide(w io.Writer, h *zero.HostStats, c *scenarios.Cluster) {
	if h == nil {
		return
	}
	link, bound := hostLinkName(c), h.Bottleneck
	if bound == "pcie" && link != "PCIe" {
		bound = link
	}
	// The copies by direction (QA s31 L6: "down" read as host→GPU):
	// zero.HostStats' PCIeDown is the gradients copied to the host,
	// PCIeUp the updated parameters copied back. CPU Adam runs at the
	// node's whole memory_bandwidth, a datasheet peak (channels ×
	// transfer rate) that STREAM-like code does not reach: its time is a
	// lower bound.
	fmt.Fprintf(w, "host side (per rank): %s GPU→host %s in %v, host→GPU %s in %v, CPU Adam %v (at the full %s memory bandwidth of the node: a lower bound); the host is %s-bound",
		link, units.Bytes(h.PCIeDown).IEC(), h.PCIeDownTime, units.Bytes(h.PCIeUp).IEC(), h.PCIeUpTime, h.CPUTime, c.Host.MemoryBandwidth, bound)
	if h.RAMPerNode > 0 {
		fmt.Fprintf(w, "; host RAM %s per node", units.Bytes(h.RAMPerNode).IEC())
	}
	fmt.Fprintln(w)
}

// hostLinkName is the GPU↔host link's name: NVLink-C2C when the host side
// is the GPU system's own link without a preset (the GB200/GB300 NVL72's
// Grace, scenarios.DefaultHostSystem: its Link is empty, and
// cluster.host.pcie keeps no preset unless one is given), PCIe otherwise
// (a PCIe preset, the system's or the user's). QA14 #6: GB200's host link
// read "PCIe down … in" at C2C's 225 GB/s.
func hostLinkName(c *scenarios.Cluster) string {
	if c.Host.PCIe.Preset == "" && scenarios.DefaultHostSystem(c.HostPreset()).Link == "" {
		return "NVLink-C2C"
	}
	return "PCIe"
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
