package topology

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// MaxBandwidth is the largest link bandwidth accepted (25 TB/s per
// direction); the sim engine's exact rate arithmetic holds up to it.
const MaxBandwidth units.Bandwidth = 25e12

// Class is a link class.
type Class int

const (
	// Intra is the intra-node fabric (NVLink/NVSwitch): one egress and one
	// ingress port per GPU.
	Intra Class = iota
	// Inter is the inter-node network: NIC egress and ingress.
	Inter
	// NumClasses is the number of link classes.
	NumClasses
)

// Classes lists the link classes in report order.
func Classes() []Class { return []Class{Intra, Inter} }

// String is the class name used in reports: "nvlink" or "network".
func (c Class) String() string {
	switch c {
	case Intra:
		return "nvlink"
	case Inter:
		return "network"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Dir is the direction of a link as seen from its GPU or NIC.
type Dir int

const (
	Egress Dir = iota
	Ingress
)

// LinkID indexes Topology.Links.
type LinkID int

// Link is one direction of one port: a GPU's intra-node port or a NIC.
type Link struct {
	ID    LinkID
	Name  string // e.g. "node1/gpu0/nvlink-out", "node2/nic0/net-in"
	Class Class
	Dir   Dir
	Node  int
	// GPU is the GPU index in the node, or -1 for a NIC shared by the node.
	GPU       int
	Bandwidth units.Bandwidth
	Latency   units.Duration
}

// LinkParams is one link class's bandwidth (per direction, per port) and
// latency.
type LinkParams struct {
	Bandwidth units.Bandwidth
	Latency   units.Duration
}

// Override changes one node's links of a class: GPU < 0 means every port
// (or NIC) of the node. Zero Bandwidth or Latency keeps the class value.
type Override struct {
	Node      int
	GPU       int
	Class     Class
	Bandwidth units.Bandwidth
	Latency   units.Duration
}

// GPUSpeed scales one rank's compute speed (1 = nominal).
type GPUSpeed struct {
	Rank  int
	Speed float64
}

// Params builds a topology without a scenario (tests, CLI flags).
type Params struct {
	Nodes, GPUsPerNode int
	Intra, Inter       LinkParams
	// NICsPerNode = 0 means one NIC per GPU (rail-optimized, "per_gpu");
	// otherwise the node's GPUs share NICsPerNode NICs ("per_node"), GPU j
	// using NIC j·NICsPerNode/GPUsPerNode.
	NICsPerNode int
	// DP and CP give the ranks (N = DP·CP ≤ GPUs). DP = 0 means every GPU is
	// a rank (DP = GPUs/CP); CP = 0 means 1.
	DP, CP int
	// Placement lists the axes fastest first: [cp dp] (default) or [dp cp].
	Placement []string
	Overrides []Override
	Speeds    []GPUSpeed
}

// Path is what a transfer from one rank to another crosses.
type Path struct {
	Links   [2]LinkID // egress then ingress
	Class   Class
	Latency units.Duration // the larger latency of its links
}

// Topology is a cluster of Nodes × GPUsPerNode GPUs, its links and the
// placement of ranks on GPUs. It is immutable once built.
type Topology struct {
	nodes, gpn int
	nics       int // 0 = per GPU
	dp, cp     int
	dpFastest  bool
	links      []Link
	intraOut   []LinkID // per GPU
	intraIn    []LinkID
	nicOut     []LinkID // per GPU: the NIC it uses
	nicIn      []LinkID
	speed      []float64 // per rank
}

// New builds a topology from plain parameters.
func New(p Params) (*Topology, error) {
	if p.Nodes < 1 || p.GPUsPerNode < 1 {
		return nil, fmt.Errorf("topology: need at least 1 node and 1 GPU per node, got %d × %d", p.Nodes, p.GPUsPerNode)
	}
	if p.Nodes > 1<<20 || p.GPUsPerNode > 1<<10 || p.Nodes*p.GPUsPerNode > 1<<22 {
		return nil, fmt.Errorf("topology: %d × %d GPUs is too large", p.Nodes, p.GPUsPerNode)
	}
	gpus := p.Nodes * p.GPUsPerNode
	t := &Topology{nodes: p.Nodes, gpn: p.GPUsPerNode, nics: p.NICsPerNode}
	if p.NICsPerNode < 0 || p.NICsPerNode > p.GPUsPerNode {
		return nil, fmt.Errorf("topology: nics_per_node %d must be between 1 and gpus_per_node %d", p.NICsPerNode, p.GPUsPerNode)
	}
	t.cp = max(p.CP, 1)
	if p.CP < 0 || p.DP < 0 {
		return nil, fmt.Errorf("topology: dp %d and cp %d must be positive", p.DP, p.CP)
	}
	t.dp = p.DP
	if t.dp == 0 {
		if gpus%t.cp != 0 {
			return nil, fmt.Errorf("topology: cp %d does not divide %d GPUs", t.cp, gpus)
		}
		t.dp = gpus / t.cp
	}
	if t.dp > gpus || t.dp*t.cp > gpus {
		return nil, fmt.Errorf("topology: dp·cp = %d·%d ranks do not fit on %d GPUs", t.dp, t.cp, gpus)
	}
	switch strings.Join(p.Placement, ",") {
	case "", "cp,dp":
	case "dp,cp":
		t.dpFastest = true
	default:
		return nil, fmt.Errorf("topology: placement %v: use [cp, dp] or [dp, cp]", p.Placement)
	}
	for _, c := range []struct {
		name string
		lp   LinkParams
		used bool
	}{{"intra", p.Intra, p.GPUsPerNode > 1}, {"inter", p.Inter, p.Nodes > 1}} {
		if c.lp.Bandwidth < 0 || c.lp.Bandwidth > MaxBandwidth || (c.used && c.lp.Bandwidth == 0) {
			return nil, fmt.Errorf("topology: %s bandwidth %d B/s must be in (0, %v]", c.name, int64(c.lp.Bandwidth), MaxBandwidth)
		}
		if c.lp.Latency < 0 {
			return nil, fmt.Errorf("topology: %s latency %v is negative", c.name, c.lp.Latency)
		}
	}
	nics := gpus
	if p.NICsPerNode > 0 {
		nics = p.Nodes * p.NICsPerNode
	}
	t.links = make([]Link, 0, 2*gpus+2*nics)
	// Every name is a substring of one string (one allocation, not one per
	// link: a 16,384-GPU cluster has 65,536 links).
	var names strings.Builder
	names.Grow(26 * cap(t.links))
	ends := make([]int32, 0, cap(t.links))
	var num [20]byte
	add := func(l Link, kind string, idx int, suffix string) LinkID {
		l.ID = LinkID(len(t.links))
		names.WriteString("node")
		names.Write(strconv.AppendInt(num[:0], int64(l.Node), 10))
		names.WriteString(kind)
		names.Write(strconv.AppendInt(num[:0], int64(idx), 10))
		names.WriteString(suffix)
		ends = append(ends, int32(names.Len()))
		t.links = append(t.links, l)
		return l.ID
	}
	// Links that no transfer can use (one GPU per node, one node) are still
	// created, at 1 B/s if their class has no bandwidth, so IDs are regular.
	bw := func(lp LinkParams) units.Bandwidth { return max(lp.Bandwidth, 1) }
	t.intraOut = make([]LinkID, gpus)
	t.intraIn = make([]LinkID, gpus)
	t.nicOut = make([]LinkID, gpus)
	t.nicIn = make([]LinkID, gpus)
	for n := range p.Nodes {
		for g := range p.GPUsPerNode {
			i := n*p.GPUsPerNode + g
			t.intraOut[i] = add(Link{Class: Intra, Dir: Egress, Node: n, GPU: g, Bandwidth: bw(p.Intra), Latency: p.Intra.Latency}, "/gpu", g, "/nvlink-out")
			t.intraIn[i] = add(Link{Class: Intra, Dir: Ingress, Node: n, GPU: g, Bandwidth: bw(p.Intra), Latency: p.Intra.Latency}, "/gpu", g, "/nvlink-in")
		}
	}
	for n := range p.Nodes {
		if p.NICsPerNode == 0 {
			for g := range p.GPUsPerNode {
				i := n*p.GPUsPerNode + g
				t.nicOut[i] = add(Link{Class: Inter, Dir: Egress, Node: n, GPU: g, Bandwidth: bw(p.Inter), Latency: p.Inter.Latency}, "/gpu", g, "/net-out")
				t.nicIn[i] = add(Link{Class: Inter, Dir: Ingress, Node: n, GPU: g, Bandwidth: bw(p.Inter), Latency: p.Inter.Latency}, "/gpu", g, "/net-in")
			}
			continue
		}
		out := make([]LinkID, p.NICsPerNode)
		in := make([]LinkID, p.NICsPerNode)
		for k := range p.NICsPerNode {
			out[k] = add(Link{Class: Inter, Dir: Egress, Node: n, GPU: -1, Bandwidth: bw(p.Inter), Latency: p.Inter.Latency}, "/nic", k, "/net-out")
			in[k] = add(Link{Class: Inter, Dir: Ingress, Node: n, GPU: -1, Bandwidth: bw(p.Inter), Latency: p.Inter.Latency}, "/nic", k, "/net-in")
		}
		for g := range p.GPUsPerNode {
			k := g * p.NICsPerNode / p.GPUsPerNode
			t.nicOut[n*p.GPUsPerNode+g], t.nicIn[n*p.GPUsPerNode+g] = out[k], in[k]
		}
	}
	all := names.String()
	for i := range t.links {
		lo := int32(0)
		if i > 0 {
			lo = ends[i-1]
		}
		t.links[i].Name = all[lo:ends[i]]
	}
	for i, o := range p.Overrides {
		if err := t.override(o); err != nil {
			return nil, fmt.Errorf("topology: link override %d: %w", i, err)
		}
	}
	t.speed = make([]float64, t.dp*t.cp)
	for i := range t.speed {
		t.speed[i] = 1
	}
	for i, s := range p.Speeds {
		if s.Rank < 0 || s.Rank >= len(t.speed) {
			return nil, fmt.Errorf("topology: gpu override %d: rank %d is not in 0..%d", i, s.Rank, len(t.speed)-1)
		}
		if !(s.Speed > 0 && s.Speed <= 1e6) {
			return nil, fmt.Errorf("topology: gpu override %d: speed %v must be > 0", i, s.Speed)
		}
		t.speed[s.Rank] = s.Speed
	}
	return t, nil
}

func (t *Topology) override(o Override) error {
	if o.Node < 0 || o.Node >= t.nodes {
		return fmt.Errorf("node %d is not in 0..%d", o.Node, t.nodes-1)
	}
	if o.GPU >= t.gpn {
		return fmt.Errorf("gpu %d is not in 0..%d", o.GPU, t.gpn-1)
	}
	if o.Bandwidth < 0 || o.Bandwidth > MaxBandwidth {
		return fmt.Errorf("bandwidth %d B/s must be in (0, %v]", int64(o.Bandwidth), MaxBandwidth)
	}
	if o.Latency < 0 {
		return fmt.Errorf("latency %v is negative", o.Latency)
	}
	if o.Class != Intra && o.Class != Inter {
		return fmt.Errorf("unknown link class %d", int(o.Class))
	}
	var ids []LinkID
	for g := range t.gpn {
		if o.GPU >= 0 && g != o.GPU {
			continue
		}
		i := o.Node*t.gpn + g
		if o.Class == Intra {
			ids = append(ids, t.intraOut[i], t.intraIn[i])
		} else {
			ids = append(ids, t.nicOut[i], t.nicIn[i])
		}
	}
	for _, id := range ids {
		if o.Bandwidth > 0 {
			t.links[id].Bandwidth = o.Bandwidth
		}
		if o.Latency > 0 {
			t.links[id].Latency = o.Latency
		}
	}
	return nil
}

// Build builds the topology of a resolved scenario's cluster and
// parallelism.
func Build(s *scenarios.Scenario) (*Topology, error) {
	if s == nil {
		return nil, errors.New("topology: no scenario")
	}
	c := s.Cluster
	p := Params{
		Nodes: c.Nodes, GPUsPerNode: c.GPUsPerNode,
		Intra:     LinkParams{c.Intra.Bandwidth, c.Intra.Latency},
		Inter:     LinkParams{c.Inter.Bandwidth, c.Inter.Latency},
		DP:        s.Parallelism.DP,
		CP:        s.Parallelism.CP,
		Placement: c.Placement,
	}
	switch c.NICs {
	case "", "per_gpu":
	case "per_node":
		p.NICsPerNode = max(c.NICsPerNode, 1)
	default:
		return nil, fmt.Errorf("topology: cluster.nics %q: use per_gpu or per_node", c.NICs)
	}
	for i, o := range c.LinkOverrides {
		ov := Override{Node: o.Node, GPU: -1, Bandwidth: o.Bandwidth, Latency: o.Latency}
		if o.GPU != nil {
			ov.GPU = *o.GPU
		}
		switch o.Class {
		case "intra":
			ov.Class = Intra
		case "inter":
			ov.Class = Inter
		default:
			return nil, fmt.Errorf("topology: cluster.link_overrides[%d].class %q: use intra or inter", i, o.Class)
		}
		p.Overrides = append(p.Overrides, ov)
	}
	for _, g := range c.GPUOverrides {
		p.Speeds = append(p.Speeds, GPUSpeed{Rank: g.Rank, Speed: g.Speed})
	}
	return New(p)
}

// Nodes is the number of nodes.
func (t *Topology) Nodes() int { return t.nodes }

// GPUsPerNode is the number of GPUs per node.
func (t *Topology) GPUsPerNode() int { return t.gpn }

// Ranks is N = dp·cp, the number of ranks.
func (t *Topology) Ranks() int { return t.dp * t.cp }

// DP and CP are the data- and context-parallel sizes.
func (t *Topology) DP() int { return t.dp }

// CP is the context-parallel size.
func (t *Topology) CP() int { return t.cp }

// Links lists every link, indexed by LinkID. The slice is shared: do not
// modify it.
func (t *Topology) Links() []Link { return t.links }

// Coord is rank r's (dp, cp) coordinate: r = dp·CP + cp.
func (t *Topology) Coord(r int) (dp, cp int) { return r / t.cp, r % t.cp }

// Rank is the rank at coordinate (dp, cp).
func (t *Topology) Rank(dp, cp int) int { return dp*t.cp + cp }

// GPU is the global GPU index (node·GPUsPerNode + local) holding rank r:
// with placement [cp dp] ranks fill GPUs in order, with [dp cp] the dp
// coordinate varies fastest across GPUs.
func (t *Topology) GPU(r int) int {
	if t.dpFastest {
		dp, cp := t.Coord(r)
		return cp*t.dp + dp
	}
	return r
}

// Node is the node holding rank r.
func (t *Topology) Node(r int) int { return t.GPU(r) / t.gpn }

// Local is rank r's GPU index within its node.
func (t *Topology) Local(r int) int { return t.GPU(r) % t.gpn }

// Speed is rank r's GPU speed factor (1 = nominal).
func (t *Topology) Speed(r int) float64 { return t.speed[r] }

func (t *Topology) checkRank(r int) error {
	if r < 0 || r >= t.Ranks() {
		return fmt.Errorf("rank %d is not in 0..%d", r, t.Ranks()-1)
	}
	return nil
}

// Path returns the links a transfer from rank src to rank dst crosses: the
// source GPU's NVLink egress and the destination's NVLink ingress within a
// node, the source's NIC egress and the destination's NIC ingress between
// nodes.
func (t *Topology) Path(src, dst int) (Path, error) {
	if err := t.checkRank(src); err != nil {
		return Path{}, fmt.Errorf("topology: path source: %w", err)
	}
	if err := t.checkRank(dst); err != nil {
		return Path{}, fmt.Errorf("topology: path destination: %w", err)
	}
	if src == dst {
		return Path{}, fmt.Errorf("topology: path from rank %d to itself", src)
	}
	gs, gd := t.GPU(src), t.GPU(dst)
	var p Path
	if gs/t.gpn == gd/t.gpn {
		p = Path{Links: [2]LinkID{t.intraOut[gs], t.intraIn[gd]}, Class: Intra}
	} else {
		p = Path{Links: [2]LinkID{t.nicOut[gs], t.nicIn[gd]}, Class: Inter}
	}
	p.Latency = max(t.links[p.Links[0]].Latency, t.links[p.Links[1]].Latency)
	return p, nil
}

// All is the dp·cp group: ranks 0..N-1.
func (t *Topology) All() []int {
	g := make([]int, t.Ranks())
	for i := range g {
		g[i] = i
	}
	return g
}

// IntraGroups are the K groups of N/K contiguous ranks that each shard one
// optimizer instance (Megatron's intra distributed-optimizer groups).
func (t *Topology) IntraGroups(k int) ([][]int, error) {
	n := t.Ranks()
	if k < 1 || n%k != 0 {
		return nil, fmt.Errorf("topology: k = %d must divide N = %d", k, n)
	}
	size := n / k
	out := make([][]int, k)
	for i := range out {
		for j := range size {
			out[i] = append(out[i], i*size+j)
		}
	}
	return out, nil
}

// InterGroups are the N/K groups of K ranks i, i+N/K, i+2N/K, … that
// all-reduce between optimizer instances.
func (t *Topology) InterGroups(k int) ([][]int, error) {
	n := t.Ranks()
	if k < 1 || n%k != 0 {
		return nil, fmt.Errorf("topology: k = %d must divide N = %d", k, n)
	}
	size := n / k
	out := make([][]int, size)
	for i := range out {
		for j := range k {
			out[i] = append(out[i], i+j*size)
		}
	}
	return out, nil
}
