package collectives

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

func mustTopo(t testing.TB, p topology.Params) *topology.Topology {
	t.Helper()
	topo, err := topology.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// uniform is n nodes × g GPUs with every link at bw and latency lat.
func uniform(t testing.TB, nodes, gpus int, bw units.Bandwidth, lat units.Duration) *topology.Topology {
	return mustTopo(t, topology.Params{Nodes: nodes, GPUsPerNode: gpus,
		Intra: topology.LinkParams{Bandwidth: bw, Latency: lat}, Inter: topology.LinkParams{Bandwidth: bw, Latency: lat}})
}

// runAlone runs spec alone on a fresh engine and returns its duration.
func runAlone(t testing.TB, topo *topology.Topology, spec Spec) units.Duration {
	t.Helper()
	eng := sim.New()
	f := NewFabric(eng, topo)
	eng.RunUntil(12345) // start at a non-zero time
	h, err := f.Start(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.Run()
	if !h.Done() {
		t.Fatal("collective did not finish")
	}
	return units.Duration(h.End() - h.Start())
}

// TestAlphaBetaReferences holds the alpha–beta reference times (all links
// 300e9 B/s, 500 ns per step; hierarchical: 8 GPUs per node at 300e9 B/s ×
// 4 nodes at 25e9 B/s). Exact picoseconds are hand-computed from
// (n−1)·α + ⌈(n−1)·⌈S/n⌉·1e12/B⌉; the rounded µs are the published figures.
func TestAlphaBetaReferences(t *testing.T) {
	ring1 := uniform(t, 1, 8, 300e9, 500*units.Nanosecond)
	ring8 := uniform(t, 8, 1, 300e9, 500*units.Nanosecond)
	hier := mustTopo(t, topology.Params{Nodes: 4, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 500 * units.Nanosecond}})
	got1 := map[string]units.Duration{} // each case's closed form
	for _, c := range []struct {
		name   string
		topo   *topology.Topology
		op     Op
		algo   Algo
		size   units.Bytes
		ps     units.Duration
		micros string
	}{
		{"ring AR 64MiB (1 node)", ring1, AllReduce, Ring, 64 * units.MiB, 398468374, "398.5"},
		{"ring AR 64MiB (8 nodes)", ring8, AllReduce, Ring, 64 * units.MiB, 398468374, "398.5"},
		{"ring RS 64MiB", ring1, ReduceScatter, Ring, 64 * units.MiB, 199234187, "199.2"},
		{"ring AG 64MiB", ring8, AllGather, Ring, 64 * units.MiB, 199234187, "199.2"},
		{"ring AR 1GiB", ring1, AllReduce, Ring, units.GiB, 6270493974, "6270.5"},
		{"hier AR 64MiB", hier, AllReduce, Hierarchical, 64 * units.MiB, 904784854, "904.8"},
		{"hier AR 1GiB", hier, AllReduce, Hierarchical, units.GiB, 14326557654, "14326.6"},
		{"auto AR 1GiB = hier", hier, AllReduce, Auto, units.GiB, 14326557654, "14326.6"},
	} {
		spec := Spec{Op: c.op, Algo: c.algo, Group: c.topo.All(), Bytes: c.size}
		got, err := ClosedForm(c.topo, spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.ps {
			t.Errorf("%s: closed form %d ps, want %d", c.name, got, c.ps)
		}
		if s := fmt.Sprintf("%.1f", got.Micros()); s != c.micros {
			t.Errorf("%s: %s µs, want %s", c.name, s, c.micros)
		}
		if sim := runAlone(t, c.topo, spec); sim != c.ps {
			t.Errorf("%s: engine %d ps, want %d", c.name, sim, c.ps)
		}
		got1[c.name] = got
	}
	// docs/collectives.md's "Reference values (tests)" quote them.
	ps := func(name string) string {
		d := got1[name]
		s := strconv.FormatInt(int64(d), 10)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return fmt.Sprintf("%s ps", s)
	}
	us := func(name string) string { return fmt.Sprintf("%.1f", got1[name].Micros()) }
	golden.CheckQuotes(t, "../docs/collectives.md", "ClosedForm (TestAlphaBetaReferences)",
		"| ring RS or AG, 64 MiB | "+ps("ring RS 64MiB")+" | "+us("ring RS 64MiB")+" |",
		"| ring AR, 64 MiB | "+ps("ring AR 64MiB (1 node)")+" | "+us("ring AR 64MiB (1 node)")+" |",
		"| ring AR, 1 GiB | "+ps("ring AR 1GiB")+" | "+us("ring AR 1GiB")+" |",
		"64 MiB = "+ps("hier AR 64MiB")+" ("+us("hier AR 64MiB")+" µs), 1 GiB = "+ps("hier AR 1GiB")+" ("+us("hier AR 1GiB")+" µs).")
}

// TestEngineMatchesClosedForm: alone on the links, the engine's finish time
// equals ClosedForm to the picosecond, over random clusters, groups, sizes,
// ops and algorithms.
func TestEngineMatchesClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	defer func() {
		if checked < 200 {
			t.Errorf("only %d of 300 random cases were valid", checked)
		}
	}()
	for i := range 300 {
		p := topology.Params{
			Nodes: 1 + rng.IntN(6), GPUsPerNode: 1 + rng.IntN(8),
			Intra: topology.LinkParams{Bandwidth: units.Bandwidth(1+rng.IntN(900)) * 1e9, Latency: units.Duration(rng.IntN(3000)) * units.Nanosecond},
			Inter: topology.LinkParams{Bandwidth: units.Bandwidth(1 + rng.Int64N(400e9)), Latency: units.Duration(rng.IntN(10000)) * units.Nanosecond},
		}
		if rng.IntN(3) == 0 {
			p.NICsPerNode = 1 + rng.IntN(p.GPUsPerNode)
		}
		if rng.IntN(4) == 0 && p.Nodes > 1 {
			gpu := rng.IntN(p.GPUsPerNode)
			p.Overrides = []topology.Override{{Node: rng.IntN(p.Nodes), GPU: gpu, Class: topology.Inter, Bandwidth: 3e9, Latency: 7 * units.Microsecond}}
		}
		topo := mustTopo(t, p)
		n := topo.Ranks()
		group := rng.Perm(n)[:1+rng.IntN(n)]
		if rng.IntN(2) == 0 {
			slices.Sort(group)
		}
		spec := Spec{Op: Op(rng.IntN(3)), Algo: Algo(rng.IntN(4)), Group: group, Bytes: units.Bytes(rng.Int64N(1 << 32))}
		if spec.Algo == Tree {
			spec.Op = AllReduce
		}
		want, err := ClosedForm(topo, spec)
		if err != nil {
			continue // hierarchical on an uneven group: an error, checked elsewhere
		}
		checked++
		if got := runAlone(t, topo, spec); got != want {
			t.Errorf("case %d (%+v, %v %v on %v, %d B): engine %d ps, closed form %d ps", i, p, spec.Op, spec.Algo, group, spec.Bytes, got, want)
		}
	}
}

// TestTransferTimeCrossCheck: sim.TransferTime and units.TransferTime agree.
func TestTransferTimeCrossCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 10000 {
		b := rng.Int64N(1 << 44)
		bw := 1 + rng.Int64N(int64(topology.MaxBandwidth))
		if s, u := sim.TransferTime(b, bw), units.TransferTime(units.Bytes(b), units.Bandwidth(bw)); int64(s) != int64(u) {
			t.Fatalf("case %d: %d B at %d B/s: sim %d, units %d", i, b, bw, s, u)
		}
	}
	if int64(topology.MaxBandwidth) > sim.MaxBandwidth {
		t.Fatalf("topology.MaxBandwidth %d > sim.MaxBandwidth %d", topology.MaxBandwidth, sim.MaxBandwidth)
	}
}

// TestContention: two equal collectives at once on the same group take
// exactly twice the bandwidth time (latencies overlap); two inter-node
// flows from one node take as long as one on separate rails (per_gpu NICs)
// and twice as long on one shared NIC (per_node).
func TestContention(t *testing.T) {
	topo := uniform(t, 4, 1, 25e9, units.Microsecond)
	spec := Spec{Op: AllReduce, Algo: Ring, Group: topo.All(), Bytes: 64 * units.MiB}
	eng := sim.New()
	f := NewFabric(eng, topo)
	a, _ := f.Start(spec, nil)
	b, _ := f.Start(spec, nil)
	eng.Run()
	// Per phase: 3 µs latency + 3·16 MiB at 25 GB/s, shared by two.
	phase := 3*units.Microsecond + units.TransferTime(2*3*16*units.MiB, 25e9)
	if a.End() != sim.Time(2*phase) || b.End() != sim.Time(2*phase) {
		t.Errorf("two all-reduces end at %d and %d, want %d", a.End(), b.End(), 2*phase)
	}

	for _, c := range []struct {
		name string
		nics int
		mul  int64
	}{{"per_gpu rails", 0, 1}, {"per_node NIC", 1, 2}} {
		topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 2, NICsPerNode: c.nics,
			Intra: topology.LinkParams{Bandwidth: 300e9}, Inter: topology.LinkParams{Bandwidth: 25e9}})
		eng := sim.New()
		f := NewFabric(eng, topo)
		var flows []*sim.Flow
		for g := range 2 { // rank g of node 0 → rank 2+g of node 1
			path, err := topo.Path(g, 2+g)
			if err != nil || path.Class != topology.Inter {
				t.Fatalf("%s: path %v %v", c.name, path, err)
			}
			flows = append(flows, eng.StartFlow(1e9, []*sim.Resource{f.Resource(path.Links[0]), f.Resource(path.Links[1])}, nil))
		}
		eng.Run()
		want := sim.Time(c.mul) * sim.TransferTime(1e9, 25e9)
		for i, fl := range flows {
			if fl.End() != want {
				t.Errorf("%s: flow %d ends %d, want %d", c.name, i, fl.End(), want)
			}
		}
	}
}

// TestSeed000SlowLink holds seed 000's K example: N = 8, dp = 4 across 4
// nodes (slow network), cp = 2 inside each node (NVLink), gradient buffer S.
func TestSeed000SlowLink(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 4, GPUsPerNode: 2, DP: 4, CP: 2,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 5 * units.Microsecond}})
	const S units.Bytes = 64 * units.MiB // divisible by 8
	net, nv := topology.Inter, topology.Intra
	run := func(t *testing.T, specs ...Spec) Traffic {
		eng := sim.New()
		f := NewFabric(eng, topo)
		for _, s := range specs {
			if _, err := f.Start(s, nil); err != nil {
				t.Fatal(err)
			}
			eng.Run()
		}
		return f.Traffic()
	}
	all := topo.All()
	// K = 1, flat ring: RS then AG over the 8 ranks.
	k1 := run(t, Spec{Op: ReduceScatter, Algo: Ring, Group: all, Bytes: S}, Spec{Op: AllGather, Algo: Ring, Group: all, Bytes: S})
	if got, want := k1.MaxSent(net), 7*S/4; got != want { // 7/8·S + 7/8·S
		t.Errorf("K=1 ring: busiest rank sends %d B on the network, want 1.75·S = %d", got, want)
	}
	if got, want := k1.Total[net], 7*S; got != want {
		t.Errorf("K=1 ring: network total %d, want 7·S = %d", got, want)
	}
	// K = 4: intra RS over the 2 ranks of a node, inter AR of S/2 over 4
	// ranks, intra AG.
	intra, err := topo.IntraGroups(4)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := topo.InterGroups(4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(intra[1], []int{2, 3}) || !slices.Equal(inter[1], []int{1, 3, 5, 7}) {
		t.Fatalf("groups: intra %v inter %v", intra, inter)
	}
	var specs []Spec
	for _, g := range intra {
		specs = append(specs, Spec{Op: ReduceScatter, Algo: Ring, Group: g, Bytes: S})
	}
	for _, g := range inter {
		specs = append(specs, Spec{Op: AllReduce, Algo: Ring, Group: g, Bytes: S / 2})
	}
	for _, g := range intra {
		specs = append(specs, Spec{Op: AllGather, Algo: Ring, Group: g, Bytes: S})
	}
	k4 := run(t, specs...)
	for r := range 8 {
		if got, want := k4.Sent[r][net], 3*S/4; got != want {
			t.Errorf("K=4: rank %d sends %d B on the network, want 0.75·S = %d", r, got, want)
		}
		if got, want := k4.Sent[r][nv], S; got != want { // S/2 RS + S/2 AG
			t.Errorf("K=4: rank %d sends %d B on NVLink, want S = %d", r, got, want)
		}
	}
	if got, want := k4.Total[net], 6*S; got != want {
		t.Errorf("K=4: network total %d, want 6·S = %d", got, want)
	}
	// K = 1 hierarchical all-reduce: the same 0.75·S per rank.
	h := run(t, Spec{Op: AllReduce, Algo: Hierarchical, Group: all, Bytes: S})
	for r := range 8 {
		if got, want := h.Sent[r][net], 3*S/4; got != want {
			t.Errorf("K=1 hierarchical: rank %d sends %d B on the network, want %d", r, got, want)
		}
	}
	// Seed accounting (logical, per rank): K=1 is RS + AG ≈ S + S = 2S (the
	// n→∞ limit; exactly 2·7/8·S); K=4 puts only the inter all-reduce on
	// the slow link, 2·(K−1)/K·S/2 = 6S/8 exactly; the drop is 62.5 %.
	vRS, _ := Volume(Spec{Op: ReduceScatter, Group: all, Bytes: S})
	vAG, _ := Volume(Spec{Op: AllGather, Group: all, Bytes: S})
	if vRS+vAG != 7*S/4 {
		t.Errorf("K=1 logical volume %d, want 2·7/8·S = %d", vRS+vAG, 7*S/4)
	}
	vInter, _ := Volume(Spec{Op: AllReduce, Group: inter[0], Bytes: S / 2})
	if vInter != 6*S/8 {
		t.Errorf("K=4 slow-link logical volume %d, want 6S/8 = %d", vInter, 6*S/8)
	}
	seedK1 := 2 * S // "~2P"
	if drop := 100 * float64(seedK1-vInter) / float64(seedK1); drop != 62.5 {
		t.Errorf("slow-link drop %.2f %%, want 62.5 %%", drop)
	}
}

func TestVolume(t *testing.T) {
	for _, c := range []struct {
		op   Op
		n    int
		s    units.Bytes
		want units.Bytes
	}{
		{ReduceScatter, 8, 800, 700},
		{AllGather, 8, 800, 700},
		{AllReduce, 8, 800, 1400},
		{AllReduce, 4, 10, 2 * 3 * 3}, // ⌈10/4⌉ = 3
		{AllReduce, 1, 10, 0},
		{ReduceScatter, 3, 0, 0},
	} {
		g := make([]int, c.n)
		got, err := Volume(Spec{Op: c.op, Group: g, Bytes: c.s})
		if err != nil || got != c.want {
			t.Errorf("Volume(%v, n=%d, %d) = %d, %v; want %d", c.op, c.n, c.s, got, err, c.want)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	topo := uniform(t, 2, 2, 1e9, 0)
	odd := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 4, Intra: topology.LinkParams{Bandwidth: 1e9}, Inter: topology.LinkParams{Bandwidth: 1e9}})
	for _, c := range []struct {
		name string
		topo *topology.Topology
		spec Spec
	}{
		{"empty", topo, Spec{Op: AllReduce}},
		{"negative", topo, Spec{Op: AllReduce, Group: []int{0, 1}, Bytes: -1}},
		{"duplicate", topo, Spec{Op: AllReduce, Group: []int{0, 1, 0}, Bytes: 8}},
		{"out of range", topo, Spec{Op: AllReduce, Group: []int{0, 4}, Bytes: 8}},
		{"tree RS", topo, Spec{Op: ReduceScatter, Algo: Tree, Group: []int{0, 1}, Bytes: 8}},
		{"bad op", topo, Spec{Op: 7, Group: []int{0, 1}, Bytes: 8}},
		{"bad algo", topo, Spec{Op: AllReduce, Algo: 9, Group: []int{0, 1}, Bytes: 8}},
		{"uneven hierarchical", odd, Spec{Op: AllReduce, Algo: Hierarchical, Group: []int{0, 1, 4}, Bytes: 8}},
	} {
		if _, err := ClosedForm(c.topo, c.spec); err == nil {
			t.Errorf("%s: no error", c.name)
		}
		if _, err := NewFabric(sim.New(), c.topo).Start(c.spec, nil); err == nil {
			t.Errorf("%s: Start: no error", c.name)
		}
	}
	// Auto on the uneven group falls back to a ring.
	if a := Resolve(odd, Spec{Group: []int{0, 1, 4}}); a != Ring {
		t.Errorf("auto on uneven group = %v, want ring", a)
	}
	if a := Resolve(odd, Spec{Group: []int{0, 1, 4, 5}}); a != Hierarchical {
		t.Errorf("auto on 2×2 group = %v, want hierarchical", a)
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]Op{"allreduce": AllReduce, "reduce-scatter": ReduceScatter, "all_gather": AllGather} {
		if got, err := ParseOp(s); err != nil || got != want {
			t.Errorf("ParseOp(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseOp("broadcast"); err == nil {
		t.Error("ParseOp(broadcast): no error")
	}
	for s, want := range map[string]Algo{"": Auto, "ring": Ring, "alphabeta-ring": Ring, "hierarchical": Hierarchical, "tree": Tree} {
		if got, err := ParseAlgo(s); err != nil || got != want {
			t.Errorf("ParseAlgo(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseAlgo("butterfly"); err == nil {
		t.Error("ParseAlgo(butterfly): no error")
	}
}

// TestTrafficProperties: over random groups and sizes, bytes sent = bytes
// received per class, per-rank and per-link bytes sum to the class totals,
// and the ring volume equals the busiest rank's wire bytes.
func TestTrafficProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		topo := mustTopo(t, topology.Params{Nodes: 1 + rng.IntN(5), GPUsPerNode: 1 + rng.IntN(8), NICsPerNode: rng.IntN(2),
			Intra: topology.LinkParams{Bandwidth: 100e9}, Inter: topology.LinkParams{Bandwidth: 10e9}})
		n := topo.Ranks()
		group := rng.Perm(n)[:1+rng.IntN(n)]
		spec := Spec{Op: Op(rng.IntN(3)), Algo: Algo(rng.IntN(3)), Group: group, Bytes: units.Bytes(rng.Int64N(1 << 30))}
		tr, err := Wire(topo, spec)
		if err != nil {
			continue
		}
		for _, c := range topology.Classes() {
			var sent, recv, out, in units.Bytes
			for r := range n {
				sent += tr.Sent[r][c]
				recv += tr.Recv[r][c]
			}
			for _, l := range topo.Links() {
				if l.Class != c {
					continue
				}
				if l.Dir == topology.Egress {
					out += tr.Link[l.ID]
				} else {
					in += tr.Link[l.ID]
				}
			}
			if sent != tr.Total[c] || recv != tr.Total[c] || out != tr.Total[c] || in != tr.Total[c] {
				t.Fatalf("case %d %v: class %v: sent %d recv %d egress %d ingress %d total %d", i, spec, c, sent, recv, out, in, tr.Total[c])
			}
		}
		if spec.Algo == Ring && len(group) > 1 {
			v, _ := Volume(spec)
			var busiest units.Bytes
			for r := range n {
				busiest = max(busiest, tr.Sent[r][topology.Intra]+tr.Sent[r][topology.Inter])
			}
			if busiest != v {
				t.Fatalf("case %d: ring busiest rank sends %d, volume %d", i, busiest, v)
			}
		}
	}
}

type trace struct{ times []sim.Time }

func (tr *trace) Event(t sim.Time, _ uint64) { tr.times = append(tr.times, t) }

// concurrent runs a seeded mix of overlapping collectives and returns the
// engine's event times and each collective's end.
func concurrent(seed uint64) ([]sim.Time, []sim.Time) {
	rng := rand.New(rand.NewPCG(seed, 9))
	topo, _ := topology.New(topology.Params{Nodes: 4, GPUsPerNode: 4, NICsPerNode: 2,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond}, Inter: topology.LinkParams{Bandwidth: 25e9, Latency: 5 * units.Microsecond}})
	eng := sim.New()
	tr := &trace{}
	eng.SetTracer(tr)
	f := NewFabric(eng, topo)
	var hs []*Handle
	for range 40 {
		group := rng.Perm(16)[:2+rng.IntN(15)]
		spec := Spec{Op: Op(rng.IntN(3)), Algo: Ring, Group: group, Bytes: units.Bytes(rng.Int64N(1 << 26))}
		eng.At(sim.Time(rng.Int64N(1e9)), func() {
			h, err := f.Start(spec, nil)
			if err != nil {
				panic(err)
			}
			hs = append(hs, h)
		})
	}
	eng.Run()
	var ends []sim.Time
	for _, h := range hs {
		ends = append(ends, h.End())
	}
	return tr.times, ends
}

// TestDeterministicConcurrent: identical traces under GOMAXPROCS 1 and 2,
// times never decrease.
func TestDeterministicConcurrent(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		old := runtime.GOMAXPROCS(1)
		a, ea := concurrent(seed)
		runtime.GOMAXPROCS(2)
		b, eb := concurrent(seed)
		runtime.GOMAXPROCS(old)
		if !slices.Equal(a, b) || !slices.Equal(ea, eb) {
			t.Fatalf("seed %d: runs differ", seed)
		}
		if !slices.IsSorted(a) {
			t.Fatalf("seed %d: time went backwards", seed)
		}
	}
}

// TestTree: the double binary tree's closed form on uniform links. n = 8:
// depth 3 (7→6→4→0), every rank sends 4 halves (interior in one tree: up +
// 2 down; leaf in the other: up), so 6·α + TransferTime(2·S, B). n = 2: the
// two trees share the one edge, 2·α + TransferTime(S, B), the ring's time.
func TestTree(t *testing.T) {
	const alpha = 500 * units.Nanosecond
	for _, c := range []struct {
		n    int
		want units.Duration
	}{
		{8, 6*alpha + units.TransferTime(2*64*units.MiB, 300e9)},
		{2, 2*alpha + units.TransferTime(64*units.MiB, 300e9)},
		{16, 8*alpha + units.TransferTime(2*64*units.MiB, 300e9)},
	} {
		topo := uniform(t, 1, c.n, 300e9, alpha)
		spec := Spec{Op: AllReduce, Algo: Tree, Group: topo.All(), Bytes: 64 * units.MiB}
		got, err := ClosedForm(topo, spec)
		if err != nil || got != c.want {
			t.Errorf("tree n=%d: %d ps, %v; want %d", c.n, got, err, c.want)
		}
		if sim := runAlone(t, topo, spec); sim != c.want {
			t.Errorf("tree n=%d: engine %d ps, want %d", c.n, sim, c.want)
		}
		if c.n == 2 {
			ring, _ := ClosedForm(topo, Spec{Op: AllReduce, Algo: Ring, Group: topo.All(), Bytes: 64 * units.MiB})
			if ring != got {
				t.Errorf("tree n=2 %d ≠ ring %d", got, ring)
			}
		}
	}
}

// TestEachTransfer: the per-transfer walk sums to Wire's totals.
func TestEachTransfer(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 4, GPUsPerNode: 2, Intra: topology.LinkParams{Bandwidth: 300e9}, Inter: topology.LinkParams{Bandwidth: 25e9}})
	for _, algo := range []Algo{Ring, Hierarchical, Tree} {
		spec := Spec{Op: AllReduce, Algo: algo, Group: topo.All(), Bytes: 1000}
		p, err := Lower(topo, spec)
		if err != nil {
			t.Fatal(err)
		}
		var sum [topology.NumClasses]units.Bytes
		sent := make([]units.Bytes, topo.Ranks())
		p.EachTransfer(func(src, dst int, c topology.Class, b units.Bytes) {
			sum[c] += b
			sent[src] += b
		})
		w, _ := Wire(topo, spec)
		if sum != w.Total {
			t.Errorf("%v: EachTransfer sums %v, Wire %v", algo, sum, w.Total)
		}
		for r := range sent {
			if sent[r] != w.Sent[r][topology.Intra]+w.Sent[r][topology.Inter] {
				t.Errorf("%v: rank %d sent %d", algo, r, sent[r])
			}
		}
	}
}

// TestPlanCache: the Fabric reuses a plan only for the same spec and group
// order, even when the caller reuses and edits its group slice.
func TestPlanCache(t *testing.T) {
	topo := uniform(t, 2, 2, 100e9, units.Microsecond)
	f := NewFabric(sim.New(), topo)
	group := []int{0, 1, 2, 3}
	a, _ := f.Start(Spec{Op: AllGather, Algo: Ring, Group: group, Bytes: 4096}, nil)
	b, _ := f.Start(Spec{Op: AllGather, Algo: Ring, Group: group, Bytes: 4096}, nil)
	group[0], group[1] = 1, 0
	c, _ := f.Start(Spec{Op: AllGather, Algo: Ring, Group: group, Bytes: 4096}, nil)
	d, _ := f.Start(Spec{Op: AllGather, Algo: Ring, Group: group, Bytes: 8192}, nil)
	if a.Plan != b.Plan || a.Plan == c.Plan || c.Plan == d.Plan {
		t.Fatal("plan cache: wrong sharing")
	}
	if !slices.Equal(a.Plan.Spec.Group, []int{0, 1, 2, 3}) || !slices.Equal(c.Plan.Spec.Group, []int{1, 0, 2, 3}) {
		t.Fatalf("cached groups %v %v", a.Plan.Spec.Group, c.Plan.Spec.Group)
	}
	f.Engine().Run()
	if tr := f.Traffic(); tr.Total[topology.Intra]+tr.Total[topology.Inter] != 4*3*(1024+1024+1024+2048) {
		t.Fatalf("traffic %v", tr.Total)
	}
}

// TestTrafficOverflow: a collective whose bytes overflow int64 is refused
// and leaves the counters unchanged.
func TestTrafficOverflow(t *testing.T) {
	topo := uniform(t, 1, 4, 100e9, 0)
	f := NewFabric(sim.New(), topo)
	big := units.Bytes(1 << 62)
	if _, err := f.Start(Spec{Op: AllReduce, Algo: Ring, Group: topo.All(), Bytes: big}, nil); err == nil {
		t.Fatal("no overflow error")
	}
	if tr := f.Traffic(); tr.Total != [topology.NumClasses]units.Bytes{} {
		t.Fatalf("traffic after refused start: %v", tr.Total)
	}
	// A time beyond int64 picoseconds is an error, not a panic.
	for _, size := range []units.Bytes{1 << 62, 1 << 40} {
		_, err := ClosedForm(uniform(t, 1, 2, 1, 0), Spec{Op: AllGather, Algo: Ring, Group: []int{0, 1}, Bytes: size})
		if err == nil {
			t.Errorf("%d B at 1 B/s: no overflow error", size)
		}
	}
}

// TestSetStretch: a ring all-reduce over 4 ranks at 25 GB/s with 1 µs per
// step is two phases of 3 µs latency and 3·16 MiB at 25 GB/s (P =
// 2,013,265,920 ps) each. Stretched by 1.25 from 1 ms to 2 ms (inside the
// first phase's transfer) it moves 0.8 ms' worth of bytes in that
// millisecond and ends 0.2 ms late; stretched from its start it takes
// 1.25·P per phase and the latencies unchanged; a stretch set and reset
// before the transfers start changes nothing.
func TestSetStretch(t *testing.T) {
	topo := uniform(t, 4, 1, 25e9, units.Microsecond)
	spec := Spec{Op: AllReduce, Algo: Ring, Group: topo.All(), Bytes: 64 * units.MiB}
	const P, lat, ms = sim.Time(2_013_265_920), sim.Time(3_000_000), sim.Time(1e9)
	nominal := 2 * (lat + P)
	for _, c := range []struct {
		name string
		at   []sim.Time // toggles: stretched from at[0] to at[1], …
		want sim.Time
	}{
		{"none", nil, nominal},
		{"1 ms to 2 ms", []sim.Time{ms, 2 * ms}, nominal + ms/5},
		{"throughout", []sim.Time{0}, 2*lat + 2*P*5/4},
		{"before the transfers", []sim.Time{0, lat / 2}, nominal},
	} {
		eng := sim.New()
		f := NewFabric(eng, topo)
		h, err := f.Start(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, at := range c.at {
			on := i%2 == 0
			eng.At(at, func() {
				if on {
					h.SetStretch(1_250_000, 1_000_000)
				} else {
					h.SetStretch(1_000_000, 1_000_000)
				}
			})
		}
		eng.Run()
		if h.End() != c.want {
			t.Errorf("%s: ends at %d ps, want %d (%+d)", c.name, h.End(), c.want, h.End()-c.want)
		}
	}
}
