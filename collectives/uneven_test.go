package collectives

import (
	"fmt"
	"maps"
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestUnevenGroupSpreadsCrossings: a group over nodes of unequal ranks
// (QA13 finding 3) crosses between them on its channels' NICs, as NCCL's
// rings do: every node searches its rings alone, channel c from the c-th
// NIC of its list, its own GPUs' first, and the communicator keeps the
// fewest channels and the least bandwidth any node found (NVIDIA/nccl
// src/graph/search.cc ncclTopoSearchRecNet and ncclTopoSelectNets,
// src/init.cc lines 1439–1442, graphs[a]->nChannels, bwIntra and bwInter
// = min over ranks, commit 5067397c2676d5aed50042fc39e5c8ee96eb0027), so
// the smallest node's g GPUs' NICs carry the crossings, B/g each, B =
// (n−1)·⌈S/n⌉ the ring's hop bytes, and the model prices them: g NICs at
// the search's 48 GB/s (two channels of 24, Model.netBW), 4 × 48 =
// 192 GB/s for g = 4, as the even 4 + 4 group. The group-order ring put
// all of B on one NIC. Alone the collective takes at least what the
// busiest NIC needs at 50 GB/s, and the model's bandwidth term is its
// own, without a floor of the plan's NIC bytes (the floor gave 4.92 ms and
// 19.09 ms below, the NICs at 50 GB/s, where NCCL's model gives 5.13 and
// 19.88).
//
// Hand counts:
//   - 8 + 4 H100 ranks (2 × 8 GPUs, group 0..11), S = 1,073,741,760 B
//     (= 12·89,478,480): B = 11·89,478,480 = 984,263,280; g = 4 channels,
//     246,065,820 B per NIC (4 divides B), on ranks 0–3 and 8–11 and no
//     other; network total 2·B (each node sends B), NVLink 12·B (every
//     rank one hop of B/4 per channel). At 50 GB/s a NIC needs
//     4,921,316.4 ns per phase. The model: ring Simple, bus bandwidth
//     min(NVLink 370.8, 4 · 48) = 192 GB/s, algorithm bandwidth 192 ·
//     12/11, so the bandwidth term is B / 192 GB/s = 5,126,371,250 ps
//     (the mean ranks a node, 6, gave 6 · 48 = 288 GB/s and 3.47 ms in
//     all: faster than its NICs). An all-reduce by ring (NCCL_ALGO=Ring:
//     Hardware.Algos) is both phases on the same NICs: 9,842,632.8 ns at
//     50 GB/s, 2·B / 192 GB/s = 10,252,742,500 ps in the model. By
//     default NCCL's choice is the NVLS-tree: S / 192 GB/s (4 NICs, two
//     nodes each sending S) = 5,592,405,000 ps, lowered as NCCL's trees
//     over the same 4 channels (railTrees): ⌈S/8⌉ = 134,217,720 B up and
//     down each node edge per channel and tree, so ranks 0–3 and 8–11
//     each send and receive 2·⌈S/8⌉ = 268,435,440 B (5.37 ms at 50 GB/s,
//     within the model's time; the ring channels put 492,131,640 B there,
//     1.76 times the NIC's speed over it); network 16·⌈S/8⌉, NVLink
//     160·⌈S/8⌉ (per channel and tree the chains' 7 + 3 links up and
//     down).
//   - 72 + 24 GB200 ranks (2 × 72 GPUs, group 0..95), S = 1,073,740,800 B
//     (= 96·11,184,800): B = 95·11,184,800 = 1,062,556,000; g = 24,
//     ⌊B/24⌋ = 44,273,166 per NIC and the remainder B − 24·44,273,166 =
//     16 on channel 0's: 44,273,182 B on ranks 0 and 72, 44,273,166 on
//     ranks 1–23 and 73–95; 885,463.64 ns at 50 GB/s. The model: ring
//     LL128, bus min(NVLink 900 · 40.1/50 = 721.8, 24 · 48) · 0.92 =
//     664.056 GB/s (under the 32 channels' 40 GB/s each), algorithm
//     bandwidth · 96/95: S · 95 / (96 · 664.056 GB/s) = 1,600,099,991.6,
//     rounded up 1,600,099,992 ps.
//   - 8 + 1 H100 ranks (group 0..8): a node of one rank has one NIC of
//     its own to cross on, and the ring in group order stands for it,
//     S = 9·119,304,640: B = 8·119,304,640 = 954,437,120 through rank 7's
//     NIC and rank 8's, 19,088,742.4 ns at 50 GB/s; NVLink 7·B (ranks
//     0–6 to their next). The model: one NIC at 48 GB/s, B / 48 GB/s =
//     19,884,106,666.7, rounded up 19,884,106,667 ps (the mean, 4 NICs,
//     said 5.02 ms in all).
//   - 8 + 1 H100 ranks, a 1 GiB all-reduce: NCCL's choice is the tree
//     (NVLS-tree needs two GPUs on every node), whose model over two
//     nodes takes bwIntra (tuning.cc line 306), which the tree search
//     raises to twice bwInter (search.cc lines 1279–1281): busBw
//     min(2·48·0.92, 2 channels · 41.4 perChMaxTreeBw) = 82.8 GB/s,
//     algbw 41.4, so the bandwidth term is S / 41.4 GB/s =
//     25,935,791,304.3, rounded up 25,935,791,305 ps. NCCL's tree puts
//     S on each node's one crossing NIC (ranks 0 and 8: railTrees with
//     C = 1 channel, ⌈S/2⌉ up and down the node edge of each tree),
//     21,474,835.2 ns at 50 GB/s; NVLink 28·⌈S/2⌉ = 14·S (rank 0–7's
//     chain, 7 links up and down, two trees). The ring in group order
//     that stood for it put B = 16·⌈S/9⌉ = 1,908,874,240 B through rank
//     7's NIC, 73.6 GB/s over the model's time.
func TestUnevenGroupSpreadsCrossings(t *testing.T) {
	const nic = 50e9
	ringOnly := h100(nic, 0)
	ringOnly.Algos = 1 << Ring
	tests := []struct {
		name       string
		gpn, ranks int
		hw         Hardware
		op         Op
		S          units.Bytes
		algo       Algo           // what NCCL's model chooses
		busiest    units.Bytes    // the busiest NIC's bytes sent (and received)
		crossing   []int          // the ranks whose NICs send
		net, nvl   units.Bytes    // totals
		nicTime    units.Duration // the busiest NIC at 50 GB/s
		bwTerm     units.Duration // the model's bandwidth term
	}{
		{"8+4 H100 all-gather", 8, 12, h100(nic, 0), AllGather, 1_073_741_760, Ring, 246_065_820,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 2 * 984_263_280, 12 * 984_263_280, 4_921_316_400, 5_126_371_250},
		{"8+4 H100 reduce-scatter", 8, 12, h100(nic, 0), ReduceScatter, 1_073_741_760, Ring, 246_065_820,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 2 * 984_263_280, 12 * 984_263_280, 4_921_316_400, 5_126_371_250},
		{"8+4 H100 all-reduce, ring", 8, 12, ringOnly, AllReduce, 1_073_741_760, Ring, 2 * 246_065_820,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 4 * 984_263_280, 24 * 984_263_280, 9_842_632_800, 10_252_742_500},
		{"8+4 H100 all-reduce", 8, 12, h100(nic, 0), AllReduce, 1_073_741_760, NVLSTree, 268_435_440,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 16 * 134_217_720, 160 * 134_217_720, 5_368_708_800, 5_592_405_000},
		{"72+24 GB200 all-gather", 72, 96, Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: nic, NICsPerNode: 72},
			AllGather, 1_073_740_800, Ring, 44_273_182, append(seq(0, 24), seq(72, 96)...), 2 * 1_062_556_000, 96 * 1_062_556_000,
			885_463_640, 1_600_099_992},
		{"8+1 H100 all-gather", 8, 9, h100(nic, 0), AllGather, 1_073_741_760, Ring, 954_437_120,
			[]int{7, 8}, 2 * 954_437_120, 7 * 954_437_120, 19_088_742_400, 19_884_106_667},
		{"8+1 H100 all-reduce", 8, 9, h100(nic, 0), AllReduce, 1_073_741_760, Tree, 1_073_741_760,
			[]int{0, 8}, 2 * 1_073_741_760, 14 * 1_073_741_760, 21_474_835_200, 25_935_791_305},
	}
	for _, tc := range tests {
		topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: tc.gpn,
			Intra: topology.LinkParams{Bandwidth: tc.hw.IntraBW, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nic, Latency: 2000}})
		spec := Spec{Op: tc.op, Algo: Auto, Group: seq(0, tc.ranks), Bytes: tc.S}
		eng := sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(tc.hw)})
		h, err := f.Start(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		tr := f.Traffic()
		if got := tr.MaxSent(topology.Inter); got != tc.busiest {
			t.Errorf("%s: busiest NIC sends %d B, want %d", tc.name, got, tc.busiest)
		}
		crosses := map[int]bool{}
		for _, r := range tc.crossing {
			crosses[r] = true
		}
		var recv units.Bytes
		for r := range topo.Ranks() {
			s := tr.Sent[r][topology.Inter]
			recv = max(recv, tr.Recv[r][topology.Inter])
			if crosses[r] != (s > 0) {
				t.Errorf("%s: rank %d's NIC sends %d B (crossing: %v)", tc.name, r, s, crosses[r])
			}
		}
		if recv != tc.busiest {
			t.Errorf("%s: busiest NIC receives %d B, want %d", tc.name, recv, tc.busiest)
		}
		if tr.Total[topology.Inter] != tc.net || tr.Total[topology.Intra] != tc.nvl {
			t.Errorf("%s: network %d B, NVLink %d B; want %d and %d", tc.name, tr.Total[topology.Inter], tr.Total[topology.Intra], tc.net, tc.nvl)
		}
		// Alone at the plan's time, NCCL's model's for the group (the
		// smallest node's NICs), whose bandwidth term is the hand count's;
		// a ring's is no faster than its busiest NIC moves its bytes.
		c := h.Plan.Choice
		took := units.Duration(h.End() - h.Start())
		if c.Algo != tc.algo {
			t.Errorf("%s: %v, want %v", tc.name, c.Algo, tc.algo)
		}
		if took != c.Time {
			t.Errorf("%s: alone %d ps, the plan says %d ps", tc.name, took, c.Time)
		}
		if mt, err := NewModel(tc.hw).Time(tc.op, ShapeOf(topo, spec.Group), Auto, tc.S); err != nil || mt != c {
			t.Errorf("%s: the plan's choice %+v, the model's %+v (%v)", tc.name, c, mt, err)
		}
		if c.Time-c.Latency != tc.bwTerm {
			t.Errorf("%s: bandwidth term %d ps, want %d ps", tc.name, c.Time-c.Latency, tc.bwTerm)
		}
		if took < tc.nicTime {
			t.Errorf("%s: alone %d ps, less than the busiest NIC needs (%d ps)", tc.name, took, tc.nicTime)
		}
	}
}

// seq is the ranks a, a+1, …, b−1.
func seq(a, b int) []int {
	s := make([]int, 0, b-a)
	for r := a; r < b; r++ {
		s = append(s, r)
	}
	return s
}

// TestUnevenNeverFaster: for every collective NCCL's tuner times
// (all-reduce, all-gather, reduce-scatter; all-to-all is point-to-point,
// which it does not model), every algorithm and protocol and every size
// from 1 B to 4 GiB, a group over nodes of unequal ranks (one node of a,
// the others of b < a; 2 and 4 nodes) is never faster than the even group
// of b ranks on as many nodes, on the same hardware (H100 with rail or
// shared NICs and with a plugin's latency, A3 Mega under TCPXO, A100,
// V100 over PCIe, B200, GB200, MI300X).
//
// NCCL's basis (NVIDIA/nccl at 5067397c2676d5aed50042fc39e5c8ee96eb0027):
// every rank searches its graphs on its own node's GPUs and NICs (the
// node's topology holds the communicator's GPUs there only: src/graph/
// topo.cc ncclTopoGetSystem, lines 1799–1800 and 1886–1924), so the node
// of b ranks finds the graph every node of the even group finds, and
// src/init.cc lines 1439–1442 keep, per algorithm, the fewest channels and
// the least bwIntra and bwInter over all ranks: the uneven group's
// channels and bandwidths are at most the even group's. src/graph/
// tuning.cc then takes busBw = nChannels · bw (line 324) and, for a ring
// or NVLS, the algorithm bandwidth busBw · nRanks/nsteps (lines 376–382),
// which falls as nRanks grows; a tree's is busBw/2. So the uneven group's
// algorithm bandwidth is never above the even group's, whatever the size
// (asserted everywhere). Its latencies grow with nRanks (a ring's nsteps)
// and nRanks/nNodes (a tree's chain, line 416), so its time is not below
// either, but for two rules of NCCL's own that make more ranks cost less
// latency, which the time and cost checks leave out: the even group of
// one rank a node (b = 1) pays the tree's network latency on every network
// step ("with ppn=1 latencies are fully exposed", tuning.cc lines
// 386–388), and the ring Simple all-reduce's latency is ×1.4 once
// nBytes/(nChannels·nRanks) ≥ 64 (ncclTopoGetAlgoTime, lines 647–649), a
// threshold more ranks cross at a larger size. NCCL's choice (auto) is held by the cost it ranks by (Choice.cost), not
// the time: with a plugin's latency NCCL ranks with a latency the link
// does not have (PluginLatency), and may choose for the even group a
// combination slower than the one it chooses for the uneven. The mean
// ranks per node broke all of this: 8 + 4 H100 ranks were priced at 6
// NICs a node, 3.47 ms for a 1 GiB all-gather where 4 + 4 takes 4.94.
func TestUnevenNeverFaster(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	gb200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 4, CPU: scenarios.HostArm}
	shared := h100(50e9, 0)
	shared.NICsPerNode = 4
	efa := h100(100e9, 0)
	efa.PluginLatency = 75 * units.Microsecond
	hws := []struct {
		name string
		hw   Hardware
		gpn  int
	}{
		{"H100", h100(50e9, 0), 8},
		{"H100, 4 shared NICs", shared, 8},
		{"H100, plugin latency", efa, 8},
		{"A3 Mega TCPXO", TCPXO(h100(25e9, 8*units.Microsecond)), 8},
		{"A100", Hardware{Arch: Ampere, IntraBW: 300e9, NICBW: 25e9, NICsPerNode: 8}, 8},
		{"V100 PCIe", Hardware{Arch: Volta, PCI: true, IntraBW: 16e9, NICBW: 12.5e9, NICsPerNode: 1, CPU: scenarios.HostAMD}, 4},
		{"B200", b200, 8},
		{"GB200", gb200, 4},
		{"MI300X", mi300x(), 8},
	}
	var sizes []units.Bytes
	for s := units.Bytes(1); s <= 4*units.GiB; s *= 2 {
		sizes = append(sizes, s, s+s/3)
	}
	checked := 0
	for _, h := range hws {
		m := NewModel(h.hw)
		for nodes := 2; nodes <= 4; nodes += 2 {
			for b := 1; b < h.gpn; b++ {
				even := Shape{Ranks: nodes * b, Nodes: nodes}
				for a := b + 1; a <= h.gpn; a++ {
					uneven := nodeShape(a+(nodes-1)*b, nodes, b, 0, 0)
					for _, op := range []Op{AllReduce, AllGather, ReduceScatter} {
						for _, s := range sizes {
							name := fmt.Sprintf("%s, %d+%d×%d vs %d×%d, %v %d B", h.name, a, nodes-1, b, nodes, b, op, s)
							ue, err1 := m.Time(op, uneven, Auto, s)
							ev, err2 := m.Time(op, even, Auto, s)
							if err1 != nil || err2 != nil {
								t.Fatalf("%s: %v %v", name, err1, err2)
							}
							if b > 1 && ue.cost < ev.cost {
								t.Errorf("%s: auto %v/%v costs %d ps, less than the even group's %v/%v, %d ps", name, ue.Algo, ue.Proto, ue.cost, ev.Algo, ev.Proto, ev.cost)
							}
							for _, al := range ncclAlgos {
								for p := LL; p < numProtos; p++ {
									cu, ok1 := m.Cost(op, uneven, al, p, s)
									ce, ok2 := m.Cost(op, even, al, p, s)
									if ok1 && !ok2 {
										t.Errorf("%s: %v/%v runs on the uneven group only", name, al, p)
									}
									if !ok1 || !ok2 {
										continue
									}
									checked++
									if cu.AlgBW > ce.AlgBW || cu.Time-cu.Latency < ce.Time-ce.Latency {
										t.Errorf("%s: %v/%v algbw %g (%d ps), the even group's %g (%d ps)", name, al, p, cu.AlgBW, cu.Time-cu.Latency, ce.AlgBW, ce.Time-ce.Latency)
									}
									plateau := func(sh Shape) bool {
										return al == Ring && p == Simple && op == AllReduce && float64(s)/(m.channels(sh)*float64(sh.Ranks)) >= 64
									}
									if b > 1 && plateau(uneven) == plateau(even) && cu.Time < ce.Time {
										t.Errorf("%s: %v/%v %d ps, faster than the even group's %d ps", name, al, p, cu.Time, ce.Time)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// TestSharedNICsAsRailNICs (QA17 H1, QA18 H1): two groups of 12 over 3
// nodes of 8 H100 (8 + 4 and 4 + 8, K = 2 intra groups), all-gathering
// 1 GiB at once, with the node's network fixed at 84 GB/s: 8 NICs of
// 10.5 GB/s, one per GPU, or N = 1, …, 7 shared NICs of 84/N GB/s (GPU j's
// NIC ⌊j·N/8⌋). Under shared NICs the 4 GPUs a group has on the middle
// node reach only their own NICs (Hardware.shapeNICs: NCCL's search takes
// a NIC beyond PATH_PXN only while it has no channel), and its channels
// go round-robin over them (railCrossings), so no NIC sends more than its
// speed over the collective's time, alone or beside the other group.
// On the middle node group A's GPUs 0–3 and B's 4–7 reach disjoint NICs
// but with 3 NICs (A 0, 1; B 1, 2). With 1 NIC they share it, each
// priced at its 84 GB/s alone, 42 together; with 2, 4 or 6 NICs group A
// reaches 1, 2 or 3 of them, 42 GB/s whichever: all take the rail NICs'
// time (A's 4 NICs of 10.5 GB/s there). With 5 NICs A reaches 2 of
// 16.8 GB/s (33.6 GB/s), with 7 NICs 3 of 12 (36 GB/s): the bandwidth
// term grows by 42/33.6 = 1.25 and 42/36 = 7/6. With 3 NICs NIC 1
// carries both groups' channels, as two NCCL communicators that each
// balance their own channels would: twice one group's time alone.
//
// Hand counts, 3 NICs (28 GB/s; GPUs 0–7 on NICs 0, 0, 0, 1, 1, 1, 2,
// 2): S = 2³⁰, each group's ring hop bytes B = 11·⌈S/12⌉ = 11·89,478,486
// = 984,263,346 over C = 4 channels (g = 4 ranks on the small node, which
// reaches 2 NICs; 2 divides 4): ⌊B/4⌋ = 246,065,836 per channel and the
// remainder 2 on channel 0. The 8-rank nodes (0 for group A, 2 for B)
// list NICs 0, 1, 2: channels 0–3 on NICs 0, 1, 2, 0 through ranks 0, 3,
// 6, 1 of the node, so NIC 0 sends 2·246,065,836 + 2 = 492,131,674 and
// NICs 1 and 2 246,065,836 each. On node 1 group A's GPUs 0–3 list NICs
// 0 (GPUs 0–2) and 1 (GPU 3): channels 0, 2 on NIC 0 (GPUs 0, 1),
// 1, 3 on NIC 1 (GPU 3): 492,131,674 and 492,131,672; group B's GPUs 4–7
// list NICs 1 (GPUs 4, 5) and 2 (6, 7): channels 0, 2 on NIC 1, 1, 3 on
// NIC 2: 492,131,674 and 492,131,672. Node 1's NIC 1 sends
// 492,131,672 + 492,131,674 = 984,263,346 B, all of a group's B: at
// 28 GB/s at least 35,152,262.4 ns, twice the 17.6 ms each group's NICs
// need alone (the old lowering put channels 0–2 of group A on NIC 0,
// 3/4 of B there where the model priced B/2, and ran it at 1.5 × 28 GB/s).
func TestSharedNICsAsRailNICs(t *testing.T) {
	const S = 1 << 30
	const node = 84e9
	type nicKey = [2]int // (node, NIC)
	want3 := map[nicKey]units.Bytes{
		{0, 0}: 492_131_674, {0, 1}: 246_065_836, {0, 2}: 246_065_836,
		{1, 0}: 492_131_674, {1, 1}: 984_263_346, {1, 2}: 492_131_672,
		{2, 0}: 492_131_674, {2, 1}: 246_065_836, {2, 2}: 246_065_836,
	}
	took := map[int]units.Duration{} // both groups at once, by NICs a node
	var alone3 units.Duration        // group 0..11 alone on 3 NICs
	for _, tc := range []struct {
		nics    int // per node; 0: one per GPU (rail)
		minNICs int // Shape.MinNICs of group 0..11 (0: Hardware.nics's own)
	}{
		// The middle node's GPUs 0–3 reach NICs ⌊j·N/8⌋: 1 NIC (N = 1, 2),
		// 2 (N = 3, 4, 5: 0, 0, 0, 1 / 0, 0, 1, 1 / 0, 0, 1, 1), 3 (N = 6,
		// 7: 0, 0, 1, 2); unset where that is min(N, 4).
		{0, 0}, {1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 2}, {6, 3}, {7, 3}, {8, 0},
	} {
		nic := units.Bandwidth(node / max(tc.nics, 8*btoi(tc.nics == 0)))
		name := fmt.Sprintf("%d NICs of %v", tc.nics, nic)
		topo := mustTopo(t, topology.Params{Nodes: 3, GPUsPerNode: 8, NICsPerNode: tc.nics,
			Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nic, Latency: 2000}})
		hw := h100(nic, 0)
		if tc.nics > 0 {
			hw.NICsPerNode = tc.nics
		}
		if got := ShapeOfRange(topo, 0, 1, 12); got != (Shape{Ranks: 12, Nodes: 2, MinPerNode: 4, MinNICs: tc.minNICs}) {
			t.Errorf("%s: shape of 0..11 %+v", name, got)
		}
		// Alone (group 0..11) and both groups at once.
		for _, groups := range []int{1, 2} {
			end, sent := allGatherAtOnce(t, topo, hw, S, seq(0, 12), seq(12, 24)[:12*(groups-1)])
			checkNICRates(t, fmt.Sprintf("%s, %d group(s)", name, groups), sent, end, float64(nic))
			if groups == 1 && tc.nics == 3 {
				alone3 = end
			}
			if groups == 2 {
				took[tc.nics] = end
				if tc.nics == 3 && !maps.Equal(sent, want3) {
					t.Errorf("%s: bytes sent by (node, NIC) %v, want %v", name, sent, want3)
				}
			}
		}
	}
	for _, n := range []int{1, 2, 4, 6, 8} {
		if took[n] != took[0] {
			t.Errorf("%d shared NICs %v, rail NICs %v: the same 84 GB/s a node", n, took[n], took[0])
		}
	}
	for _, tc := range []struct {
		n     int
		ratio float64 // took[n] / took[0], or / alone[3] for n = 3
		tol   float64
	}{{3, 2, 0.004}, {5, 1.25, 0.002}, {7, 7.0 / 6, 0.002}} {
		base := took[0]
		if tc.n == 3 {
			base = alone3
		}
		// The latency terms (tens of µs of 18–37 ms) stay put: the two
		// groups at once pay it once (36.673 ms, not 2 × 18.365).
		if r := float64(took[tc.n]) / float64(base); math.Abs(r-tc.ratio) > tc.tol {
			t.Errorf("%d shared NICs %v, %v times %v, want %.4f times", tc.n, took[tc.n], r, base, tc.ratio)
		}
	}
}

// TestSharedNICsChannelsPerNIC: where the small node's ranks reach a
// number of NICs that does not divide its ranks, one channel per rank
// would load one NIC more than the model prices; the lowering rounds its
// channels up to a multiple of the NICs (railChannels), as NCCL's
// channel count is one of its NICs. 3 nodes of 6 H100 with 4 shared NICs
// of 25 GB/s (GPU j's NIC ⌊4j/6⌋: 0, 0, 1, 2, 2, 3), two groups of 9
// (K = 2): group A is node 0 and node 1's GPUs 0–2 (NICs 0, 0, 1), B node
// 1's GPUs 3–5 (NICs 2, 2, 3) and node 2.
//
// Hand counts: S = 2³⁰, B = 8·⌈S/9⌉ = 8·119,304,648 = 954,437,184 per
// group. g = 3 ranks on node 1 reach 2 NICs, so C = 4 channels of
// ⌊B/4⌋ = 238,609,296 (4 divides B). On node 1, A's channels 0–3 go to
// NICs 0, 1, 0, 1 (GPUs 0, 2, 1, 2): 477,218,592 B each, B/2, what the
// model prices (2 NICs); B's to NICs 2, 3, 2, 3, the same. Nodes 0 and 2
// list NICs 0–3 and put one channel on each. With 3 channels NIC 0 of
// node 1 sent 2·⌊B/3⌋ = 636,291,456 B, 2/3 of B, at 1.33 times the
// 25 GB/s the model's time allows for it.
func TestSharedNICsChannelsPerNIC(t *testing.T) {
	const S = 1 << 30
	const nic = 25e9
	topo := mustTopo(t, topology.Params{Nodes: 3, GPUsPerNode: 6, NICsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nic, Latency: 2000}})
	hw := h100(nic, 0)
	hw.NICsPerNode = 4
	if got := ShapeOfRange(topo, 0, 1, 9); got != (Shape{Ranks: 9, Nodes: 2, MinPerNode: 3, MinNICs: 2}) {
		t.Errorf("shape of 0..8 %+v", got)
	}
	const q = 238_609_296
	want := map[[2]int]units.Bytes{
		{0, 0}: q, {0, 1}: q, {0, 2}: q, {0, 3}: q,
		{1, 0}: 2 * q, {1, 1}: 2 * q, {1, 2}: 2 * q, {1, 3}: 2 * q,
		{2, 0}: q, {2, 1}: q, {2, 2}: q, {2, 3}: q,
	}
	for _, groups := range []int{1, 2} {
		end, sent := allGatherAtOnce(t, topo, hw, S, seq(0, 9), seq(9, 18)[:9*(groups-1)])
		checkNICRates(t, fmt.Sprintf("%d group(s)", groups), sent, end, nic)
		if groups == 2 && !maps.Equal(sent, want) {
			t.Errorf("bytes sent by (node, NIC) %v, want %v", sent, want)
		}
	}
}

// TestAllReduceWithinNICs: an all-reduce over a group of unequal ranks on
// its nodes, one-rank nodes included, or of equal ranks whose GPUs split
// unevenly over their node's shared NICs, sends no NIC above its speed
// over the collective's time, alone or with the other groups of its K, on
// rail NICs and 1 to g shared NICs a node, for NCCL's ring (64 MiB) and
// its tree or NVLS-tree (1 GiB), which run NCCL's trees over the channels
// (railTrees). Clusters: 3 × 8 H100 at 84 GB/s a node (as
// TestSharedNICsAsRailNICs) with K = 2 (8 + 4, 4 + 8) and K = 8 ({6, 7,
// 8}: 2 + 1; {15, 16, 17}: 1 + 2), 3 × 4 at 42 GB/s a node with K = 4
// ({3, 4, 5}: 1 + 2; {6, 7, 8}: 2 + 1), and all the GPUs of 2 × 8 and
// 2 × 4 (K = 1: 3, 5, 6 and 7 NICs split 8 GPUs unevenly, 3 NICs 4); with
// NVLS and without (A100-like H100: the tree instead of NVLS-tree).
//
// Hand count, 2 × 4 on 3 NICs of 14 GB/s (GPUs 0–3 on NICs 0, 0, 1, 2),
// 1 GiB: NCCL's NVLS-tree (the tree without NVLS) over C = 6 channels (4
// ranks rounded up to a multiple of the 3 NICs), two per NIC (channels
// 0–5 cross on NICs 0, 1, 2, 0, 1, 2 through GPUs 0, 2, 3, 1, 2, 3), each
// head sending ⌈S/12⌉ = 89,478,486 B up one tree and down the other: 4 ×
// 89,478,486 = 357,913,944 B on every NIC of both nodes, S/3 as the
// model prices it. The two-level pattern that stood for it sent S/2
// through NIC 0 (GPUs 0 and 1's inter-node rings), 1.39 times its speed
// over the model's time.
//
// Hand count, {6, 7, 8} alone, 1 GiB (S = 2³⁰): NCCL's model picks the
// tree (NVLS-tree needs two GPUs on each node: nvls.cc line 262), whose
// time over two nodes is its bwIntra (tuning.cc line 306), up to twice
// the one NIC's bwInter (search.cc lines 1279–1281, at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027). Its trees carry ⌈S/2⌉ each
// up and down the one node edge: the NIC of the head of node 0's chain
// (rank 6, its GPU's NIC ⌊6N/8⌋ under N shared NICs) and rank 8's (node
// 1's NIC 0) each send 2·⌈S/2⌉ = S = 1,073,741,824 B, and no other NIC
// sends. The ring in group order that stood for the tree sent
// 2·2·⌈S/3⌉ = 1,431,655,768 B through ranks 7 and 8, 1.18 times a
// 10.5 GB/s rail NIC's speed over the tree's time.
func TestAllReduceWithinNICs(t *testing.T) {
	noNVLS := func(hw Hardware) Hardware { hw.NVLS = false; return hw }
	for _, cl := range []struct {
		nodes, gpn int
		node       float64 // a node's network, B/s
		ks         []int
	}{{3, 8, 84e9, []int{2, 8}}, {3, 4, 42e9, []int{4}}, {2, 8, 84e9, []int{1}}, {2, 4, 42e9, []int{1}}} {
		for nics := 0; nics <= cl.gpn; nics++ {
			nic := units.Bandwidth(cl.node / float64(max(nics, cl.gpn*btoi(nics == 0))))
			topo := mustTopo(t, topology.Params{Nodes: cl.nodes, GPUsPerNode: cl.gpn, NICsPerNode: nics,
				Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: nic, Latency: 2000}})
			base := h100(nic, 0)
			if nics > 0 {
				base.NICsPerNode = nics
			}
			for _, hw := range []Hardware{base, noNVLS(base)} {
				for _, k := range cl.ks {
					gs, err := topo.IntraGroups(k)
					if err != nil {
						t.Fatal(err)
					}
					for _, S := range []units.Bytes{64 * units.MiB, units.GiB} {
						name := fmt.Sprintf("%d × %d, %d NICs of %v, NVLS %v, K %d, %d B", cl.nodes, cl.gpn, nics, nic, hw.NVLS, k, S)
						end, sent, _ := collectiveAtOnce(t, topo, hw, AllReduce, S, gs...)
						checkNICRates(t, name+", every group at once", sent, end, float64(nic))
						for _, g := range gs {
							if topo.Node(g[0]) == topo.Node(g[len(g)-1]) {
								continue // one node
							}
							name := fmt.Sprintf("%s, group %v", name, g)
							end, sent, algos := collectiveAtOnce(t, topo, hw, AllReduce, S, g)
							checkNICRates(t, name+" alone", sent, end, float64(nic))
							if len(g) == 3 && S == units.GiB {
								// 2 + 1 or 1 + 2: the tree, the hand count
								// above (each node's chain head is its first
								// rank), where its algbw min(0.92·net,
								// 41.4) beats the ring's 0.75·net, net =
								// 0.96 × the one NIC: below 57.5 GB/s.
								if tree := algos[0] == Tree; tree != (nic < 57.5e9) {
									t.Errorf("%s: NCCL's model chose %v", name, algos[0])
								}
								last := g[len(g)-1]
								head := g[1]
								if topo.Node(head) == topo.Node(g[0]) {
									head = last
								}
								want := map[[2]int]units.Bytes{{topo.Node(g[0]), topo.NIC(g[0])}: S, {topo.Node(last), topo.NIC(head)}: S}
								if algos[0] == Tree && !maps.Equal(sent, want) {
									t.Errorf("%s: bytes sent by (node, NIC) %v, want %v", name, sent, want)
								}
							}
							if cl.gpn == 4 && cl.nodes == 2 && nics == 3 && S == units.GiB {
								const q = 4 * 89_478_486
								want := map[[2]int]units.Bytes{{0, 0}: q, {0, 1}: q, {0, 2}: q, {1, 0}: q, {1, 1}: q, {1, 2}: q}
								if algos[0] != NVLSTree && algos[0] != Tree || !maps.Equal(sent, want) {
									t.Errorf("%s: %v, bytes sent by (node, NIC) %v, want a tree's %v", name, algos[0], sent, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestRailTreesOverThreeNodes: NCCL's trees over three nodes of unequal
// ranks (3 × 8 H100, group 6..17: 2 + 8 + 2, NCCL_ALGO=Tree), by hand
// from ncclGetDtree (NVIDIA/nccl src/graph/trees.cc at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027): tree 0 is the binary tree
// over nodes 0, 1, 2 (node 2 the child of 0, node 1 of 2), tree 1 its
// shift by one, three being odd (node 1 the root, node 0 its child, node
// 2 node 0's). C = 2 channels (the smallest node's 2 ranks), the heads of
// channel c ranks 6+c, 8+c and 16+c, each edge of each tree carrying
// X = ⌈S/4⌉ = 2²⁸ B up and down per channel: node 0's heads send down to
// node 2 in tree 0 and, in tree 1, up to node 1 and down to node 2, 3X;
// node 1's up to node 2 and down to node 0, 2X; node 2's up and down in
// tree 0 and up in tree 1, 3X. The network carries 2 trees · 2 edges · 2
// directions · 2 channels · X = 4·S, NVLink per channel and tree the
// chains' 1 + 7 + 1 links up and down: 72·X = 18·S.
func TestRailTreesOverThreeNodes(t *testing.T) {
	const S = 1 << 30
	const X = S / 4
	topo := mustTopo(t, topology.Params{Nodes: 3, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	hw := h100(50e9, 0)
	hw.Algos = 1 << Tree
	eng := sim.New()
	f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(hw)})
	h, err := f.Start(Spec{Op: AllReduce, Algo: Auto, Group: seq(6, 18), Bytes: S}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.Run()
	if h.Plan.Choice.Algo != Tree {
		t.Fatalf("NCCL_ALGO=Tree ran %v", h.Plan.Choice.Algo)
	}
	tr := f.Traffic()
	want := map[int]units.Bytes{6: 3 * X, 7: 3 * X, 8: 2 * X, 9: 2 * X, 16: 3 * X, 17: 3 * X}
	for r := range topo.Ranks() {
		if got := tr.Sent[r][topology.Inter]; got != want[r] {
			t.Errorf("rank %d's NIC sends %d B, want %d", r, got, want[r])
		}
	}
	if tr.Total[topology.Inter] != 4*S || tr.Total[topology.Intra] != 18*S {
		t.Errorf("network %d B, NVLink %d B; want %d and %d", tr.Total[topology.Inter], tr.Total[topology.Intra], 4*S, 18*S)
	}
	took := units.Duration(h.End() - h.Start())
	if took != h.Plan.Choice.Time {
		t.Errorf("alone %v, the model's %v", took, h.Plan.Choice.Time)
	}
	sent := map[[2]int]units.Bytes{}
	for r, b := range want {
		sent[[2]int{topo.Node(r), topo.NIC(r)}] = b
	}
	checkNICRates(t, "2 + 8 + 2", sent, took, 50e9)
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// allGatherAtOnce starts an all-gather of S bytes over each non-empty
// group at once on topo, NCCL's model of hw timing them, and returns the
// longest's time and the bytes each (node, NIC) sent (NICs that sent
// nothing left out).
func allGatherAtOnce(t *testing.T, topo *topology.Topology, hw Hardware, S units.Bytes, groups ...[]int) (units.Duration, map[[2]int]units.Bytes) {
	t.Helper()
	end, sent, _ := collectiveAtOnce(t, topo, hw, AllGather, S, groups...)
	return end, sent
}

// collectiveAtOnce is allGatherAtOnce for op, and the algorithm NCCL's
// model chose for each non-empty group.
func collectiveAtOnce(t *testing.T, topo *topology.Topology, hw Hardware, op Op, S units.Bytes, groups ...[]int) (units.Duration, map[[2]int]units.Bytes, []Algo) {
	t.Helper()
	eng := sim.New()
	f := NewFabricOptions(eng, topo, FabricOptions{Model: NewModel(hw)})
	var hs []*Handle
	var algos []Algo
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		h, err := f.Start(Spec{Op: op, Algo: Auto, Group: g, Bytes: S}, nil)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		algos = append(algos, h.Plan.Choice.Algo)
	}
	eng.Run()
	var end units.Duration
	for _, h := range hs {
		end = max(end, units.Duration(h.End()-h.Start()))
	}
	sent := map[[2]int]units.Bytes{}
	for r := range topo.Ranks() {
		if b := f.Traffic().Sent[r][topology.Inter]; b > 0 {
			sent[[2]int{topo.Node(r), topo.NIC(r)}] += b
		}
	}
	return end, sent, algos
}

// checkNICRates fails when a NIC of sent sends above nic bytes/s over
// end.
func checkNICRates(t *testing.T, label string, sent map[[2]int]units.Bytes, end units.Duration, nic float64) {
	t.Helper()
	for k, b := range sent {
		if rate := float64(b) / end.Seconds(); rate > nic*1.0001 {
			t.Errorf("%s: node %d NIC %d sends %d B in %v: %.2f GB/s on a %.2f GB/s NIC", label, k[0], k[1], b, end, rate/1e9, nic/1e9)
		}
	}
}
