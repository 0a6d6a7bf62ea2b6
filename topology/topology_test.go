package topology

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func seedParams() Params {
	return Params{Nodes: 4, GPUsPerNode: 2, DP: 4, CP: 2,
		Intra: LinkParams{300e9, 500 * units.Nanosecond}, Inter: LinkParams{25e9, 5 * units.Microsecond}}
}

// TestSeed000Placement: seed 000's N = 8 example, cp fastest: rank =
// dp·CP + cp, cp neighbours share a node.
func TestSeed000Placement(t *testing.T) {
	topo, err := New(seedParams())
	if err != nil {
		t.Fatal(err)
	}
	for r := range 8 {
		dp, cp := topo.Coord(r)
		if dp != r/2 || cp != r%2 || topo.Rank(dp, cp) != r || topo.Node(r) != r/2 || topo.Local(r) != r%2 {
			t.Errorf("rank %d: coord (%d,%d) node %d local %d", r, dp, cp, topo.Node(r), topo.Local(r))
		}
	}
	intra, _ := topo.IntraGroups(4)
	inter, _ := topo.InterGroups(4)
	if want := [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}; !equal(intra, want) {
		t.Errorf("intra groups %v, want %v", intra, want)
	}
	if want := [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}}; !equal(inter, want) {
		t.Errorf("inter groups %v, want %v", inter, want)
	}
	k1, _ := topo.IntraGroups(1)
	if !equal(k1, [][]int{topo.All()}) {
		t.Errorf("K=1 intra group %v", k1)
	}
	if _, err := topo.IntraGroups(3); err == nil {
		t.Error("IntraGroups(3) on N=8: no error")
	}
	if _, err := topo.InterGroups(0); err == nil {
		t.Error("InterGroups(0): no error")
	}
	// [dp, cp]: dp neighbours share a node instead.
	p := seedParams()
	p.DPFastest = true
	dpf, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{dpf.GPU(0), dpf.GPU(1), dpf.GPU(2)}; !slices.Equal(got, []int{0, 4, 1}) {
		t.Errorf("dp-fastest GPUs of ranks 0,1,2 = %v, want [0 4 1]", got)
	}
}

func equal(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

func TestPaths(t *testing.T) {
	p := seedParams()
	p.Overrides = []Override{{Node: 3, GPU: -1, Class: Inter, Bandwidth: 5e9, Latency: 20 * units.Microsecond}}
	topo, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	links := topo.Links()
	for _, c := range []struct {
		src, dst int
		class    Class
		names    []string
		lat      units.Duration
	}{
		{0, 1, Intra, []string{"node0/gpu0/nvlink-out", "node0/gpu1/nvlink-in"}, 500 * units.Nanosecond},
		{1, 2, Inter, []string{"node0/gpu1/net-out", "node1/gpu0/net-in"}, 5 * units.Microsecond},
		{7, 0, Inter, []string{"node3/gpu1/net-out", "node0/gpu0/net-in"}, 20 * units.Microsecond},
	} {
		path, err := topo.Path(c.src, c.dst)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, id := range path.Links {
			names = append(names, links[id].Name)
		}
		if path.Class != c.class || !slices.Equal(names, c.names) || path.Latency != c.lat {
			t.Errorf("path %d→%d: %v %v %v, want %v %v %v", c.src, c.dst, path.Class, names, path.Latency, c.class, c.names, c.lat)
		}
	}
	if bw := links[mustPath(t, topo, 7, 0).Links[0]].Bandwidth; bw != 5e9 {
		t.Errorf("overridden NIC bandwidth %d", bw)
	}
	for _, c := range [][2]int{{0, 0}, {-1, 0}, {0, 8}} {
		if _, err := topo.Path(c[0], c[1]); err == nil {
			t.Errorf("Path(%d,%d): no error", c[0], c[1])
		}
	}
	if Intra.String() != "nvlink" || Inter.String() != "network" {
		t.Errorf("class names %q %q", Intra, Inter)
	}
}

func mustPath(t *testing.T, topo *Topology, s, d int) Path {
	p, err := topo.Path(s, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSharedNICs: with nics=per_node, GPUs of a node share NICs in blocks.
func TestSharedNICs(t *testing.T) {
	topo, err := New(Params{Nodes: 2, GPUsPerNode: 4, NICsPerNode: 2, Intra: LinkParams{Bandwidth: 1e9}, Inter: LinkParams{Bandwidth: 1e9}})
	if err != nil {
		t.Fatal(err)
	}
	nic := func(r int) string { return topo.Links()[mustPath(t, topo, r, (r+4)%8).Links[0]].Name }
	if got := []string{nic(0), nic(1), nic(2), nic(3)}; !slices.Equal(got, []string{"node0/nic0/net-out", "node0/nic0/net-out", "node0/nic1/net-out", "node0/nic1/net-out"}) {
		t.Errorf("NICs of node 0's GPUs: %v", got)
	}
}

func TestErrors(t *testing.T) {
	ok := seedParams()
	for _, c := range []struct {
		name string
		edit func(p *Params)
		want string
	}{
		{"no nodes", func(p *Params) { p.Nodes = 0 }, "at least 1 node"},
		{"too many ranks", func(p *Params) { p.DP = 8 }, "do not fit"},
		{"no inter bw", func(p *Params) { p.Inter.Bandwidth = 0 }, "inter bandwidth"},
		{"too fast", func(p *Params) { p.Intra.Bandwidth = MaxBandwidth + 1 }, "intra bandwidth"},
		{"negative latency", func(p *Params) { p.Inter.Latency = -1 }, "negative"},
		{"override node", func(p *Params) { p.Overrides = []Override{{Node: 9, GPU: -1, Class: Inter}} }, "node 9"},
		{"override gpu", func(p *Params) { p.Overrides = []Override{{Node: 0, GPU: 5, Class: Intra}} }, "gpu 5"},
		{"speed", func(p *Params) { p.Speeds = []GPUSpeed{{Rank: 1, Speed: 0}} }, "speed"},
		{"speed rank", func(p *Params) { p.Speeds = []GPUSpeed{{Rank: 8, Speed: 1}} }, "rank 8"},
		{"nics", func(p *Params) { p.NICsPerNode = 3 }, "nics_per_node"},
	} {
		p := ok
		c.edit(&p)
		_, err := New(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

func TestBuild(t *testing.T) {
	gpu1 := 1
	s := &scenarios.Scenario{
		Cluster: scenarios.Cluster{Nodes: 4, GPUsPerNode: 2, NICs: "per_node", NICsPerNode: 1,
			Intra:         scenarios.Link{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
			Inter:         scenarios.Link{Bandwidth: 25e9, Latency: 5 * units.Microsecond},
			LinkOverrides: []scenarios.LinkOverride{{Node: 2, GPU: &gpu1, Class: "intra", Bandwidth: 100e9}},
			GPUOverrides:  []scenarios.GPUOverride{{Rank: 3, Speed: 0.8}}},
		Parallelism: scenarios.Parallelism{DP: 4, CP: 2},
	}
	topo, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if topo.Ranks() != 8 || topo.Speed(3) != 0.8 || topo.Speed(2) != 1 {
		t.Errorf("ranks %d speeds %v %v", topo.Ranks(), topo.Speed(3), topo.Speed(2))
	}
	// Without GPU overrides every rank runs at 1 (no per-rank slice).
	s.Cluster.GPUOverrides = nil
	if nominal, err := Build(s); err != nil || nominal.Speed(0) != 1 || nominal.Speed(7) != 1 {
		t.Errorf("no gpu overrides: speeds %v %v (%v), want 1", nominal.Speed(0), nominal.Speed(7), err)
	}
	s.Cluster.GPUOverrides = []scenarios.GPUOverride{{Rank: 3, Speed: 0.8}}
	if l := topo.Links()[mustPath(t, topo, 5, 4).Links[0]]; l.Bandwidth != 100e9 || l.Name != "node2/gpu1/nvlink-out" {
		t.Errorf("override: %+v", l)
	}
	if l := topo.Links()[mustPath(t, topo, 1, 2).Links[0]]; l.Name != "node0/nic0/net-out" {
		t.Errorf("shared NIC: %+v", l)
	}
	if _, err := Build(nil); err == nil {
		t.Error("nil scenario: no error")
	}
}

// Link and Params give Links()[id] without building every link, for one
// NIC per GPU, shared NICs and overridden links; the IDs follow the layout
// (NVLink ports of every GPU, then the network ports).
func TestLinkAccessors(t *testing.T) {
	gpu1 := 1
	for _, p := range []Params{
		{Nodes: 3, GPUsPerNode: 4, Intra: LinkParams{300e9, 500}, Inter: LinkParams{25e9, 2000}},
		{Nodes: 3, GPUsPerNode: 4, NICsPerNode: 2, Intra: LinkParams{300e9, 500}, Inter: LinkParams{25e9, 2000}},
		{Nodes: 2, GPUsPerNode: 1, Intra: LinkParams{0, 0}, Inter: LinkParams{25e9, 2000},
			Overrides: []Override{{Node: 1, GPU: -1, Class: Inter, Bandwidth: 5e9, Latency: 9000}}},
		{Nodes: 3, GPUsPerNode: 4, NICsPerNode: 1, Intra: LinkParams{300e9, 500}, Inter: LinkParams{25e9, 2000},
			Overrides: []Override{{Node: 2, GPU: gpu1, Class: Intra, Bandwidth: 100e9}, {Node: 0, GPU: -1, Class: Inter, Latency: 7000}}},
	} {
		topo, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		links := topo.Links()
		if topo.NumLinks() != len(links) {
			t.Errorf("%+v: NumLinks %d, %d links", p, topo.NumLinks(), len(links))
		}
		for id, l := range links {
			if got := topo.Link(LinkID(id)); got != l || l.ID != LinkID(id) {
				t.Errorf("%+v: Link(%d) = %+v, Links()[%d] = %+v", p, id, got, id, l)
			}
			if got := topo.Params(LinkID(id)); got != (LinkParams{l.Bandwidth, l.Latency}) {
				t.Errorf("%+v: Params(%d) = %+v, link %+v", p, id, got, l)
			}
		}
	}
	topo, err := New(Params{Nodes: 2, GPUsPerNode: 2, Intra: LinkParams{300e9, 500}, Inter: LinkParams{25e9, 2000}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node0/gpu0/nvlink-out", "node0/gpu0/nvlink-in", "node0/gpu1/nvlink-out", "node0/gpu1/nvlink-in",
		"node1/gpu0/nvlink-out", "node1/gpu0/nvlink-in", "node1/gpu1/nvlink-out", "node1/gpu1/nvlink-in",
		"node0/gpu0/net-out", "node0/gpu0/net-in", "node0/gpu1/net-out", "node0/gpu1/net-in",
		"node1/gpu0/net-out", "node1/gpu0/net-in", "node1/gpu1/net-out", "node1/gpu1/net-in"}
	for id, name := range want {
		if got := topo.Link(LinkID(id)).Name; got != name {
			t.Errorf("link %d: %q, want %q", id, got, name)
		}
	}
}

// TestOverridden: a link override changes its links' parameters, not its
// class's (ClassParams, what a cost model assumes), and Overridden names
// exactly the links it changed.
func TestOverridden(t *testing.T) {
	intra := LinkParams{Bandwidth: 300e9, Latency: 500}
	inter := LinkParams{Bandwidth: 50e9, Latency: 2000}
	topo, err := New(Params{Nodes: 2, GPUsPerNode: 4, Intra: intra, Inter: inter,
		Overrides: []Override{{Node: 1, GPU: 2, Class: Inter, Bandwidth: 1e9}}})
	if err != nil {
		t.Fatal(err)
	}
	if topo.ClassParams(Intra) != intra || topo.ClassParams(Inter) != inter {
		t.Errorf("class parameters %v, %v; want the cluster's %v, %v", topo.ClassParams(Intra), topo.ClassParams(Inter), intra, inter)
	}
	var changed []LinkID
	for id := range LinkID(topo.NumLinks()) {
		if topo.Overridden(id) {
			changed = append(changed, id)
		}
	}
	// GPU 6 (node 1, local 2): its NIC's egress and ingress.
	if want := []LinkID{topo.linkID(Inter, Egress, 6), topo.linkID(Inter, Ingress, 6)}; len(changed) != 2 || changed[0] != want[0] || changed[1] != want[1] {
		t.Errorf("overridden links %v, want %v", changed, want)
	}
}
