package topology

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// MaxBandwidth is the largest link bandwidth accepted (25 TB/s per
// direction); the sim engine's exact rate arithmetic holds up to it. The
// loader refuses a scenario's link past it at its key.
const MaxBandwidth = scenarios.MaxBandwidth

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
	// DPFastest places the dp axis on neighbouring GPUs (placement
	// [dp, cp]); the default is cp fastest ([cp, dp]).
	DPFastest bool
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
	// Links are implicit: IDs follow from the layout (see linkID), their
	// parameters from the class (params) unless overridden (ov, per link,
	// nil without overrides). Links() materializes them on first use, so a
	// caller that needs a few ports of a large cluster does not pay for all.
	nlinks    int
	params    [NumClasses]LinkParams // bandwidth at least 1 B/s
	ov        []LinkParams
	linksOnce sync.Once
	links     []Link
	speed     []float64 // per rank; nil: every rank 1
}

// New builds a topology from plain parameters.
func New(p Params) (*Topology, error) {
	if p.Nodes < 1 || p.GPUsPerNode < 1 {
		return nil, fmt.Errorf("topology: need at least 1 node and 1 GPU per node, got %d × %d", p.Nodes, p.GPUsPerNode)
	}
	if p.Nodes > 1<<20 || p.GPUsPerNode > 1<<10 || p.Nodes*p.GPUsPerNode > scenarios.MaxGPUs {
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
	t.dpFastest = p.DPFastest
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
	t.nlinks = 2*gpus + 2*nics
	// Links that no transfer can use (one GPU per node, one node) still
	// exist, at 1 B/s if their class has no bandwidth, so IDs are regular.
	bw := func(lp LinkParams) LinkParams { return LinkParams{max(lp.Bandwidth, 1), lp.Latency} }
	t.params = [NumClasses]LinkParams{Intra: bw(p.Intra), Inter: bw(p.Inter)}
	for i, o := range p.Overrides {
		if err := t.override(o); err != nil {
			return nil, fmt.Errorf("topology: link override %d: %w", i, err)
		}
	}
	// Per-rank speeds only when some rank has one (nil: every rank 1, no
	// slice of N float64 for the usual nominal cluster).
	if len(p.Speeds) > 0 {
		t.speed = make([]float64, t.dp*t.cp)
		for i := range t.speed {
			t.speed[i] = 1
		}
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
		ids = append(ids, t.linkID(o.Class, Egress, i), t.linkID(o.Class, Ingress, i))
	}
	if t.ov == nil {
		t.ov = make([]LinkParams, t.nlinks)
		for id := range t.ov {
			t.ov[id] = t.params[t.class(LinkID(id))]
		}
	}
	for _, id := range ids {
		if o.Bandwidth > 0 {
			t.ov[id].Bandwidth = o.Bandwidth
		}
		if o.Latency > 0 {
			t.ov[id].Latency = o.Latency
		}
	}
	return nil
}

// Link layout: GPU i's NVLink egress and ingress are 2i and 2i+1; after
// them (base 2·GPUs), GPU i's NIC ports 2i and 2i+1 with one NIC per GPU,
// or NIC k of node n's ports 2(n·NICs+k) and 2(n·NICs+k)+1 with shared NICs.

// linkID is the link of class c and direction d that GPU i uses.
func (t *Topology) linkID(c Class, d Dir, i int) LinkID {
	if c == Intra {
		return LinkID(2*i + int(d))
	}
	base := 2 * t.nodes * t.gpn
	if t.nics == 0 {
		return LinkID(base + 2*i + int(d))
	}
	n, g := i/t.gpn, i%t.gpn
	return LinkID(base + 2*(n*t.nics+t.nicOfLocal(g)) + int(d))
}

func (t *Topology) class(id LinkID) Class {
	if int(id) < 2*t.nodes*t.gpn {
		return Intra
	}
	return Inter
}

// linkParams is link id's bandwidth and latency.
func (t *Topology) linkParams(id LinkID) LinkParams {
	if t.ov != nil {
		return t.ov[id]
	}
	return t.params[t.class(id)]
}

// Params is link id's bandwidth and latency (Links()[id]'s, without building
// every link). It panics if id is out of range (a caller bug).
func (t *Topology) Params(id LinkID) LinkParams {
	if id < 0 || int(id) >= t.nlinks {
		panic("topology: link id out of range")
	}
	return t.linkParams(id)
}

// ClassParams is link class c's bandwidth and latency as the cluster
// gives them, before any override: what a collective's cost model assumes
// of every link of the class.
func (t *Topology) ClassParams(c Class) LinkParams { return t.params[c] }

// Overridden reports whether link id's bandwidth or latency is not its
// class's (a cluster.link_overrides entry changed it). It panics if id is
// out of range (a caller bug).
func (t *Topology) Overridden(id LinkID) bool {
	return t.Params(id) != t.params[t.class(id)]
}

// LinkClass is link id's class (Links()[id].Class, without building the
// link). It panics if id is out of range (a caller bug).
func (t *Topology) LinkClass(id LinkID) Class {
	if id < 0 || int(id) >= t.nlinks {
		panic("topology: link id out of range")
	}
	return t.class(id)
}

// NumLinks is the number of links (len(Links()), without building them).
func (t *Topology) NumLinks() int { return t.nlinks }

// Link is link id (Links()[id], without building every link). It panics if
// id is out of range (a caller bug).
func (t *Topology) Link(id LinkID) Link {
	if id < 0 || int(id) >= t.nlinks {
		panic("topology: link id out of range")
	}
	var num [20]byte
	l, kind, idx, suffix := t.link(id)
	b := make([]byte, 0, 32)
	b = append(b, "node"...)
	b = append(b, strconv.AppendInt(num[:0], int64(l.Node), 10)...)
	b = append(b, kind...)
	b = append(b, strconv.AppendInt(num[:0], int64(idx), 10)...)
	b = append(b, suffix...)
	l.Name = string(b)
	return l
}

// link is link id without its name, and the name's parts: "node<Node>"
// kind idx suffix.
func (t *Topology) link(id LinkID) (l Link, kind string, idx int, suffix string) {
	gpus := t.nodes * t.gpn
	d := Dir(id % 2)
	lp := t.linkParams(id)
	l = Link{ID: id, Dir: d, Bandwidth: lp.Bandwidth, Latency: lp.Latency}
	if int(id) < 2*gpus {
		i := int(id) / 2
		l.Class, l.Node, l.GPU = Intra, i/t.gpn, i%t.gpn
		return l, "/gpu", l.GPU, [...]string{"/nvlink-out", "/nvlink-in"}[d]
	}
	j := (int(id) - 2*gpus) / 2
	suffix = [...]string{"/net-out", "/net-in"}[d]
	l.Class = Inter
	if t.nics == 0 {
		l.Node, l.GPU = j/t.gpn, j%t.gpn
		return l, "/gpu", l.GPU, suffix
	}
	l.Node, l.GPU = j/t.nics, -1
	return l, "/nic", j % t.nics, suffix
}

// buildLinks materializes every link, names cut from one string (not one
// allocation per link: a 16,384-GPU cluster has 65,536 links).
func (t *Topology) buildLinks() {
	links := make([]Link, t.nlinks)
	var names strings.Builder
	names.Grow(26 * t.nlinks)
	ends := make([]int32, t.nlinks)
	var num [20]byte
	for id := range links {
		l, kind, idx, suffix := t.link(LinkID(id))
		names.WriteString("node")
		names.Write(strconv.AppendInt(num[:0], int64(l.Node), 10))
		names.WriteString(kind)
		names.Write(strconv.AppendInt(num[:0], int64(idx), 10))
		names.WriteString(suffix)
		ends[id] = int32(names.Len())
		links[id] = l
	}
	all := names.String()
	for i := range links {
		lo := int32(0)
		if i > 0 {
			lo = ends[i-1]
		}
		links[i].Name = all[lo:ends[i]]
	}
	t.links = links
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
		DPFastest: len(c.Placement) > 0 && c.Placement[0] == scenarios.AxisDP,
	}
	if c.NICs == scenarios.NICPerNode {
		p.NICsPerNode = c.NICsPerNode
	}
	for _, o := range c.LinkOverrides {
		ov := Override{Node: o.Node, GPU: -1, Bandwidth: o.Bandwidth, Latency: o.Latency}
		if o.GPU != nil {
			ov.GPU = *o.GPU
		}
		ov.Class = Intra
		if o.Class == scenarios.LinkInter {
			ov.Class = Inter
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
// It is built on first use (safe for concurrent callers).
func (t *Topology) Links() []Link {
	t.linksOnce.Do(t.buildLinks)
	return t.links
}

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

// SharedNICs is the NICs per node when the node's GPUs share them
// (per_node, fewer NICs than GPUs), 0 when each GPU has its own.
func (t *Topology) SharedNICs() int {
	if t.nics == 0 || t.nics == t.gpn {
		return 0
	}
	return t.nics
}

// NIC is the node-local index of the NIC rank r's inter-node traffic
// crosses: its GPU's own, or under shared NICs NIC j·NICs/GPUsPerNode of
// GPU j (linkID).
func (t *Topology) NIC(r int) int {
	if t.nics == 0 {
		return t.Local(r)
	}
	return t.nicOfLocal(t.Local(r))
}

// nicOfLocal is the shared NIC of a node's GPU g: NIC g·NICs/GPUsPerNode.
func (t *Topology) nicOfLocal(g int) int { return g * t.nics / t.gpn }

// Speed is rank r's GPU speed factor (1 = nominal).
func (t *Topology) Speed(r int) float64 {
	if t.speed == nil {
		if err := t.checkRank(r); err != nil {
			panic("topology: " + err.Error()) // as indexing t.speed would
		}
		return 1
	}
	return t.speed[r]
}

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
		p = Path{Links: [2]LinkID{t.linkID(Intra, Egress, gs), t.linkID(Intra, Ingress, gd)}, Class: Intra}
	} else {
		p = Path{Links: [2]LinkID{t.linkID(Inter, Egress, gs), t.linkID(Inter, Ingress, gd)}, Class: Inter}
	}
	p.Latency = max(t.linkParams(p.Links[0]).Latency, t.linkParams(p.Links[1]).Latency)
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
