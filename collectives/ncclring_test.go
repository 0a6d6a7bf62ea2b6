package collectives

import (
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestNCCLRingWireBytes holds the wire bytes of the traffic a Model puts on
// the links when it picks NCCL's ring (Auto) to counts from the ring's
// definition (railRings; NVIDIA/nccl src/graph/search.cc and connect.cc at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027): over m nodes of g = 8 GPUs
// (n = 8m ranks) NCCL runs g channels, each one ring through all n ranks
// on S/g of the buffer, entering and leaving every node once on its own
// rail. A reduce-scatter or all-gather ring hop carries b = B/8 bytes,
// B = (n−1)·⌈S/n⌉ the flat ring's (8 divides it here; the exact split of
// the rest: TestNCCLRingExactSplit); each channel crosses between nodes m
// times (network: 8·m·b = m·(n−1)/n·S when n divides S) and makes
// g·m NVLink transfers (g−1 ring hops per node and the PXN hop from the
// node's last rank to the rank beside the channel's NIC): NVLink 8·8·m·b.
// All-reduce is both phases (twice). On one node the channels are rings
// over NVLink only: n·(n−1)·⌈S/n⌉ per phase, as the flat ring. The
// hierarchical pattern sent (m−1)·S over the network instead.
func TestNCCLRingWireBytes(t *testing.T) {
	const S = units.GiB
	tests := []struct {
		nodes       int
		op          Op
		nvl, net    units.Bytes // hand counts
		netFraction string      // the network bytes in units of S
	}{
		{1, AllGather, 8 * 7 * S / 8, 0, "0"},
		{1, ReduceScatter, 8 * 7 * S / 8, 0, "0"},
		{1, AllReduce, 2 * 8 * 7 * S / 8, 0, "0"},
		// n = 16: b = 15·2²³ B.
		{2, AllGather, 8 * 8 * 2 * 15 << 23, 8 * 2 * 15 << 23, "1.875"},
		{2, ReduceScatter, 8 * 8 * 2 * 15 << 23, 8 * 2 * 15 << 23, "1.875"},
		{2, AllReduce, 2 * 8 * 8 * 2 * 15 << 23, 2 * 8 * 2 * 15 << 23, "3.75"},
		// n = 32: b = 31·2²².
		{4, AllGather, 8 * 8 * 4 * 31 << 22, 8 * 4 * 31 << 22, "3.875"},
		{4, ReduceScatter, 8 * 8 * 4 * 31 << 22, 8 * 4 * 31 << 22, "3.875"},
		{4, AllReduce, 2 * 8 * 8 * 4 * 31 << 22, 2 * 8 * 4 * 31 << 22, "7.75"},
		// n = 64: b = 63·2²¹.
		{8, AllGather, 8 * 8 * 8 * 63 << 21, 8 * 8 * 63 << 21, "7.875"},
		{8, ReduceScatter, 8 * 8 * 8 * 63 << 21, 8 * 8 * 63 << 21, "7.875"},
		{8, AllReduce, 2 * 8 * 8 * 8 * 63 << 21, 2 * 8 * 8 * 63 << 21, "15.75"},
	}
	for _, tc := range tests {
		topo := mustTopo(t, topology.Params{Nodes: tc.nodes, GPUsPerNode: 8,
			Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
		m := NewModel(Hardware{Arch: Ampere, IntraBW: 450e9, NICBW: 50e9, NICsPerNode: 8})
		spec := Spec{Op: tc.op, Algo: Auto, Group: topo.All(), Bytes: S}
		eng := sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: m})
		h, err := f.Start(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		if h.Plan.Algo != Ring {
			t.Fatalf("%d nodes %v: the model chose %v, the test needs ring", tc.nodes, tc.op, h.Plan.Algo)
		}
		tr := f.Traffic()
		if tr.Total[topology.Intra] != tc.nvl || tr.Total[topology.Inter] != tc.net {
			t.Errorf("%d nodes %v: nvlink %d B, network %d B; want %d and %d (network %s·S)",
				tc.nodes, tc.op, tr.Total[topology.Intra], tr.Total[topology.Inter], tc.nvl, tc.net, tc.netFraction)
		}
		// Every NIC port carries the same bytes: rail c's crossings
		// leave and enter on NIC c.
		if tc.nodes > 1 {
			per := tc.net / units.Bytes(tc.nodes*8)
			for r := range topo.Ranks() {
				if got := tr.Sent[r][topology.Inter]; got != per {
					t.Errorf("%d nodes %v: rank %d sends %d B on its NIC, want %d", tc.nodes, tc.op, r, got, per)
				}
				if got := tr.Recv[r][topology.Inter]; got != per {
					t.Errorf("%d nodes %v: rank %d receives %d B on its NIC, want %d", tc.nodes, tc.op, r, got, per)
				}
			}
		}
		// Alone it takes the model's time, to the picosecond.
		if got, want := units.Duration(h.End()-h.Start()), h.Plan.Choice.Time; got != want {
			t.Errorf("%d nodes %v: engine %d ps, model %d ps", tc.nodes, tc.op, got, want)
		}
	}
}

// TestModelPatternFollowsChoice: the traffic pattern is the algorithm the
// model picks at each size, also for sizes derived from a cached lowering
// (Fabric.Prepare): tree at 1 KiB and ring at 1 GiB for an all-reduce over
// 2 nodes × 8 A100-class GPUs, in either order.
func TestModelPatternFollowsChoice(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	m := NewModel(Hardware{Arch: Ampere, IntraBW: 450e9, NICBW: 50e9, NICsPerNode: 8})
	for _, order := range [][]units.Bytes{{units.KiB, units.GiB}, {units.GiB, units.KiB}} {
		f := NewFabricOptions(sim.New(), topo, FabricOptions{Model: m})
		for _, s := range order {
			pr, err := f.Prepare(Spec{Op: AllReduce, Algo: Auto, Group: topo.All(), Bytes: s}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := pr.Plan()
			// Ring: one phase of rail rings per direction; tree: the
			// two-level pattern's 4 phases.
			want, wantAlgo := "ring-rs ring-ag", Ring
			if s == units.KiB {
				want, wantAlgo = "intra-rs inter-rs inter-ag intra-ag", Tree
			}
			var names []string
			for _, ph := range p.Phases {
				names = append(names, ph.Name)
			}
			if got := strings.Join(names, " "); p.Algo != wantAlgo || got != want {
				t.Errorf("order %v, %d B: %v with phases %q, want %v with %q", order, s, p.Algo, got, wantAlgo, want)
			}
		}
	}
}

// TestTimedAloneIsTheModel: alone, a collective a Model times ends exactly
// at the model's time (Choice.Time), to the picosecond, for every op,
// algorithm the model may pick (A100 and H100 with NVLS) and group shape, on sizes that divide
// nothing evenly: the sub-byte rest of the bandwidth time the links cannot
// carry in whole bytes is latency (timePlan), so a faster link never makes
// a collective end later by a rounding.
func TestTimedAloneIsTheModel(t *testing.T) {
	sizes := []units.Bytes{1, 1000, 4097, 1 << 20, 123456789, units.GiB + 7, 10*units.GiB + 12345}
	timed := 0
	for _, nodes := range []int{1, 2, 3, 4, 8} {
		for _, nic := range []units.Bandwidth{25e9, 50e9, 100e9, 400e9} {
			topo := mustTopo(t, topology.Params{Nodes: nodes, GPUsPerNode: 8,
				Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nic, Latency: 2000}})
			for _, m := range []*Model{NewModel(Hardware{Arch: Ampere, IntraBW: 450e9, NICBW: nic, NICsPerNode: 8}), NewModel(h100(nic, 0))} {
				for _, op := range []Op{AllGather, ReduceScatter, AllReduce} {
					for _, algo := range []Algo{Auto, NVLS, NVLSTree} {
						for _, S := range sizes {
							spec := Spec{Op: op, Algo: algo, Group: topo.All(), Bytes: S}
							eng := sim.New()
							h, err := NewFabricOptions(eng, topo, FabricOptions{Model: m}).Start(spec, nil)
							if err != nil {
								continue // the model has no such algorithm here
							}
							eng.Run()
							if !h.Plan.Timed {
								continue // alpha–beta: the lowering's own time
							}
							timed++
							if got, want := units.Duration(h.End()-h.Start()), h.Plan.Choice.Time; got != want {
								t.Errorf("%d nodes, NIC %v, %v %v (%v) %d B: alone %d ps, model %d ps", nodes, nic, op, algo, h.Plan.Algo, S, got, want)
							}
						}
					}
				}
			}
		}
	}
	if timed < 100 {
		t.Errorf("%d timed collectives, want the grid's", timed)
	}
}

// TestNCCLRingExactSplit: the channels split the ring's hop bytes exactly,
// with no padding per channel: an all-gather of S = 2³⁰+7 B over 2 nodes ×
// 8 GPUs (n = 16) has hop bytes B = 15·⌈S/16⌉ = 15·(2²⁶+1) = 1006632975,
// split as ⌊B/8⌋ = 125829121 on channels 1–7 and 125829128 (7 more) on
// channel 0: the network carries 2·B (each node's 8 channels leave it
// once), NVLink 2·8·B, and rank 0, channel 0's NIC, sends 7 B more than
// the other ranks on its NIC.
func TestNCCLRingExactSplit(t *testing.T) {
	const S = units.GiB + 7
	const B = 15 * (1<<26 + 1)
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	m := NewModel(Hardware{Arch: Ampere, IntraBW: 450e9, NICBW: 50e9, NICsPerNode: 8})
	eng := sim.New()
	f := NewFabricOptions(eng, topo, FabricOptions{Model: m})
	h, err := f.Start(Spec{Op: AllGather, Algo: Auto, Group: topo.All(), Bytes: S}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.Run()
	if h.Plan.Algo != Ring {
		t.Fatalf("the model chose %v, the test needs ring", h.Plan.Algo)
	}
	tr := f.Traffic()
	if tr.Total[topology.Inter] != 2*B || tr.Total[topology.Intra] != 2*8*B {
		t.Errorf("network %d B, nvlink %d B; want %d and %d", tr.Total[topology.Inter], tr.Total[topology.Intra], 2*B, 2*8*B)
	}
	for r := range topo.Ranks() {
		want := units.Bytes(125829121)
		if r%8 == 0 {
			want = 125829128
		}
		if got := tr.Sent[r][topology.Inter]; got != want {
			t.Errorf("rank %d sends %d B on its NIC, want %d", r, got, want)
		}
	}
}

// TestFasterNICNeverSlowsNVLink: NCCL's ring all-gather over 2 nodes × 8
// H100 takes the model's time at 50 and at 100 GB/s NICs (its NVLink
// hops, not the NIC, bound NCCL's model at both), so its traffic on
// NVLink is the same at both and an all-gather inside node 0 beside it
// (hpZ's secondary gather) ends no later at the faster NIC. As one flow
// group in lockstep, timed at the lowering's bottleneck, the ring took
// 8·50 of each 450 GB/s NVLink port at 50 GB/s NICs and all of it at 100,
// where NVLink becomes the bottleneck: the gather beside it got slower as
// the NIC got faster (commit 9ce00bf has the figures). From 128 MiB up
// (Simple at both speeds): below it NCCL's ring LL128 is capped at 8 ×
// 36.7 GB/s with 50 GB/s NICs (one ring channel per NIC) and not with
// 100 GB/s ones (two per NIC; ringGraphChannels), so the model's time
// differs there by NCCL's own rule. Each link class's
// transfers now run as a group of their own, timed or paced on that
// class's links (timePlan), so what the ring holds on NVLink does not
// depend on which class is slowest.
func TestFasterNICNeverSlowsNVLink(t *testing.T) {
	type result struct{ ring, local, ringAlone units.Duration }
	run := func(nic units.Bandwidth, size units.Bytes) result {
		topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
			Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nic, Latency: 2000}})
		m := NewModel(h100(nic, 0))
		ring := Spec{Op: AllGather, Algo: Auto, Group: topo.All(), Bytes: size}
		local := Spec{Op: AllGather, Algo: Auto, Group: topo.All()[:8], Bytes: size}
		eng := sim.New()
		h, err := NewFabricOptions(eng, topo, FabricOptions{Model: m}).Start(ring, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		alone := units.Duration(h.End() - h.Start())
		eng = sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: m})
		a, err := f.Start(ring, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.Start(local, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		if a.Plan.Algo != Ring {
			t.Fatalf("NIC %v, %d B: NCCL's model picks %v for the 16-rank all-gather, want ring", nic, size, a.Plan.Algo)
		}
		return result{units.Duration(a.End() - a.Start()), units.Duration(b.End() - b.Start()), alone}
	}
	for _, size := range []units.Bytes{128 * units.MiB, 256 * units.MiB, units.GiB} {
		slow, fast := run(50e9, size), run(100e9, size)
		t.Logf("%d B: NIC 50 GB/s ring %v (alone %v), local %v; 100 GB/s ring %v (alone %v), local %v", size, slow.ring, slow.ringAlone, slow.local, fast.ring, fast.ringAlone, fast.local)
		if slow.ringAlone != fast.ringAlone {
			t.Fatalf("%d B: the ring alone takes %v at 50 GB/s NICs, %v at 100: the law needs the model's time unchanged", size, slow.ringAlone, fast.ringAlone)
		}
		if fast.local > slow.local || fast.ring > slow.ring {
			t.Errorf("%d B: at 100 GB/s NICs the ring takes %v and the gather in node 0 %v, at 50 GB/s %v and %v: a faster NIC slowed them", size, fast.ring, fast.local, slow.ring, slow.local)
		}
	}
}

// TestPacedHoldsWireBytes: a timed collective's transfers over a link class
// whose links need less than the model's time are paced at their wire
// bytes (payload over Model.wireFraction: the protocol's flags and the
// share of the link NCCL reaches) over their phase's time, so a flow
// beside them on one of those links gets the link's bandwidth less l·wire/t
// for the l transfers crossing it, not less l·payload/t. On 2 nodes × 8 H100
// with 25 GB/s NICs NCCL's ring all-gather of 1 GiB (Simple) is bound by
// the NIC and its NVLink transfers are paced; 4 MiB runs LL128, where
// the flags widen the wire further.
func TestPacedHoldsWireBytes(t *testing.T) {
	tests := []struct {
		nic   units.Bandwidth
		bytes units.Bytes
		proto Proto
	}{
		{25e9, units.GiB, Simple},
		{25e9, 4 * units.MiB, LL128},
	}
	for _, tc := range tests {
		const nvlink = 450e9
		topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
			Intra: topology.LinkParams{Bandwidth: nvlink, Latency: 500}, Inter: topology.LinkParams{Bandwidth: tc.nic, Latency: 2000}})
		m := NewModel(h100(tc.nic, 0))
		eng := sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: m})
		spec := Spec{Op: AllGather, Algo: Auto, Group: topo.All(), Bytes: tc.bytes}
		p, err := f.Prepare(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl := p.Plan()
		if pl.Algo != Ring || pl.Choice.Proto != tc.proto || len(pl.Phases) != 1 {
			t.Fatalf("NIC %v, %d B: %v %v in %d phases, the test needs one ring phase on %v", tc.nic, tc.bytes, pl.Algo, pl.Choice.Proto, len(pl.Phases), tc.proto)
		}
		ph := &pl.Phases[0]
		// The probe's link: the first NVLink transfer's first link, and
		// the transfers crossing it (all over NVLink).
		var link topology.LinkID = -1
		load := 0
		for j, path := range ph.paths {
			if link < 0 && path.Class == topology.Intra {
				link = path.Links[0]
			}
			if link >= 0 && (path.Links[0] == link || path.Links[1] == link) {
				if path.Class != topology.Intra {
					t.Fatalf("transfer %d over the network crosses NVLink link %d", j, link)
				}
				load++
			}
		}
		sh := ShapeOf(topo, spec.Group)
		wire := math.Ceil(float64(ph.Bytes) / m.wireFraction(topology.Intra, sh, tc.proto))
		held := float64(load) * wire * 1e12 / float64(pl.Choice.Time-pl.Choice.Latency)
		if held >= nvlink*float64(load)/float64(load+1) {
			t.Fatalf("NIC %v, %d B: %d transfers at %.0f B/s hold more than their fair share of the link: the test needs them paced", tc.nic, tc.bytes, load, held)
		}
		probe := eng.StartFlow(1<<50, []*sim.Resource{f.resource(link)}, nil)
		h, err := f.StartPrepared(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got float64
		eng.At(sim.Time(ph.Latency)+1, func() { got = probe.Rate() })
		eng.RunUntil(sim.Time(pl.Choice.Time) + 1)
		if !h.Done() {
			t.Fatalf("NIC %v, %d B: the collective has not ended at the model's time", tc.nic, tc.bytes)
		}
		// Paces are rounded down to a work unit a picosecond (under 1.4 MB/s a transfer).
		if want := nvlink - held; math.Abs(got-want) > float64(load)*1.4e6 {
			t.Errorf("NIC %v, %d B: the flow beside %d paced transfers gets %.0f B/s, want %.0f (%.0f B/s less %d × %.0f wire B over %d ps)",
				tc.nic, tc.bytes, load, got, want, nvlink, load, wire, pl.Choice.Time-pl.Choice.Latency)
		}
	}
}

// TestAllToAllIsPointToPoint: an all-to-all runs as NCCL's grouped sends to
// every peer whatever algorithm was asked for (nccl-tests alltoall.cu, see
// Lower), so its plan names no ring or tree: alpha–beta and with a Model.
func TestAllToAllIsPointToPoint(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	for _, algo := range []Algo{Auto, Ring, Hierarchical} {
		for _, m := range []*Model{nil, NewModel(h100(50e9, 0))} {
			h, err := NewFabricOptions(sim.New(), topo, FabricOptions{Model: m}).Start(Spec{Op: AllToAll, Algo: algo, Group: topo.All(), Bytes: units.MiB}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h.Plan.Algo != PointToPoint || h.Plan.Algo.String() != "point-to-point" {
				t.Errorf("all-to-all asked %v (model %t): plan %v", algo, m != nil, h.Plan.Algo)
			}
		}
	}
}
