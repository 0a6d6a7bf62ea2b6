package scenarios

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// DegradedLink is a cluster.link_overrides entry slower than its class: a
// lower bandwidth, a longer latency or both.
type DegradedLink struct {
	Node int
	// GPU is the GPU whose NIC or NVLink port it is; −1: every NIC of the
	// node.
	GPU                         int
	Class                       LinkClass
	Bandwidth, NominalBandwidth units.Bandwidth
	Latency, NominalLatency     units.Duration
}

// SlowBandwidth and SlowLatency say which of its figures is slower than
// the class's.
func (d DegradedLink) SlowBandwidth() bool {
	return d.Bandwidth > 0 && d.Bandwidth < d.NominalBandwidth
}
func (d DegradedLink) SlowLatency() bool { return d.Latency > d.NominalLatency }

// Change says what is slower than the class: "1.00 GB/s instead of
// 50.00 GB/s", "latency 500µs instead of 2µs", or both.
func (d DegradedLink) Change() string {
	var parts []string
	if d.SlowBandwidth() {
		parts = append(parts, fmt.Sprintf("%v instead of %v", d.Bandwidth, d.NominalBandwidth))
	}
	if d.SlowLatency() {
		parts = append(parts, fmt.Sprintf("latency %v instead of %v", d.Latency, d.NominalLatency))
	}
	return strings.Join(parts, ", ")
}

// Figures are its slower figures: "1.00 GB/s", "latency 500µs" or both.
func (d DegradedLink) Figures() string {
	var parts []string
	if d.SlowBandwidth() {
		parts = append(parts, d.Bandwidth.String())
	}
	if d.SlowLatency() {
		parts = append(parts, "latency "+d.Latency.String())
	}
	return strings.Join(parts, ", ")
}

// Where names the link's place: "node 1" or "node 1 gpu 2".
func (d DegradedLink) Where() string {
	if d.GPU >= 0 {
		return fmt.Sprintf("node %d gpu %d", d.Node, d.GPU)
	}
	return fmt.Sprintf("node %d", d.Node)
}

// DegradedLinks lists c's link overrides slower than their class in
// bandwidth or latency, in order: what run, plan --network and the
// findings name as degraded.
func (c *Cluster) DegradedLinks() []DegradedLink {
	var out []DegradedLink
	for _, o := range c.LinkOverrides {
		nominal := c.Inter
		if o.Class == LinkIntra {
			nominal = c.Intra
		}
		d := DegradedLink{Node: o.Node, GPU: -1, Class: o.Class, Bandwidth: o.Bandwidth, NominalBandwidth: nominal.Bandwidth,
			Latency: o.Latency, NominalLatency: nominal.Latency}
		if o.GPU != nil && *o.GPU >= 0 {
			d.GPU = *o.GPU
		}
		if d.SlowBandwidth() || d.SlowLatency() {
			out = append(out, d)
		}
	}
	return out
}
