package collectives

import (
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestUnevenGroupSpreadsCrossings: a group over nodes of unequal ranks
// (QA13 finding 3) crosses between them on its channels' NICs, as NCCL's
// rings do: every node searches its rings alone, channel c from the c-th
// NIC of its list, its own GPUs' first, and the communicator keeps the
// fewest channels any node found (NVIDIA/nccl src/graph/search.cc
// ncclTopoSearchRecNet and ncclTopoSelectNets, src/init.cc
// graphs[a]->nChannels = min over ranks, commit
// 5067397c2676d5aed50042fc39e5c8ee96eb0027), so the smallest node's g
// GPUs' NICs carry the crossings, B/g each, B = (n−1)·⌈S/n⌉ the ring's
// hop bytes. The group-order ring put all of B on one NIC. Alone the
// collective takes at least what that NIC needs: bytes / 50 GB/s.
//
// Hand counts:
//   - 8 + 4 H100 ranks (2 × 8 GPUs, group 0..11), S = 1,073,741,760 B
//     (= 12·89,478,480): B = 11·89,478,480 = 984,263,280; g = 4 channels,
//     246,065,820 B per NIC (4 divides B), on ranks 0–3 and 8–11 and no
//     other; network total 2·B (each node sends B), NVLink 12·B (every
//     rank one hop of B/4 per channel). At 50 GB/s a NIC needs
//     246,065,820 / 50e9 s = 4,921,316.4 ns per phase; the model alone
//     said 3.47 ms (283 GB/s through a 50 GB/s NIC). An all-reduce is
//     both phases on the same NICs: 9,842,632.8 ns.
//   - 72 + 24 GB200 ranks (2 × 72 GPUs, group 0..95), S = 1,073,740,800 B
//     (= 96·11,184,800): B = 95·11,184,800 = 1,062,556,000; g = 24,
//     ⌊B/24⌋ = 44,273,166 per NIC and the remainder B − 24·44,273,166 =
//     16 on channel 0's: 44,273,182 B on ranks 0 and 72, 44,273,166 on
//     ranks 1–23 and 73–95; 885,463.64 ns at 50 GB/s.
//   - 8 + 1 H100 ranks (group 0..8): a node of one rank has one NIC of
//     its own to cross on, and the ring in group order stands for it,
//     S = 9·119,304,640: B = 8·119,304,640 = 954,437,120 through rank 7's
//     NIC and rank 8's, 19,088,742.4 ns at 50 GB/s (the model said
//     5.02 ms); NVLink 7·B (ranks 0–6 to their next).
func TestUnevenGroupSpreadsCrossings(t *testing.T) {
	const nic = 50e9
	tests := []struct {
		name       string
		gpn, ranks int
		hw         Hardware
		op         Op
		S          units.Bytes
		busiest    units.Bytes // the busiest NIC's bytes sent (and received)
		crossing   []int       // the ranks whose NICs send
		net, nvl   units.Bytes // totals
		minTime    units.Duration
	}{
		{"8+4 H100 all-gather", 8, 12, h100(nic, 0), AllGather, 1_073_741_760, 246_065_820,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 2 * 984_263_280, 12 * 984_263_280, 4_921_316_400},
		{"8+4 H100 reduce-scatter", 8, 12, h100(nic, 0), ReduceScatter, 1_073_741_760, 246_065_820,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 2 * 984_263_280, 12 * 984_263_280, 4_921_316_400},
		{"8+4 H100 all-reduce", 8, 12, h100(nic, 0), AllReduce, 1_073_741_760, 2 * 246_065_820,
			[]int{0, 1, 2, 3, 8, 9, 10, 11}, 4 * 984_263_280, 24 * 984_263_280, 9_842_632_800},
		{"72+24 GB200 all-gather", 72, 96, Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: nic, NICsPerNode: 72},
			AllGather, 1_073_740_800, 44_273_182, append(seq(0, 24), seq(72, 96)...), 2 * 1_062_556_000, 96 * 1_062_556_000, 885_463_640},
		{"8+1 H100 all-gather", 8, 9, h100(nic, 0), AllGather, 1_073_741_760, 954_437_120,
			[]int{7, 8}, 2 * 954_437_120, 7 * 954_437_120, 19_088_742_400},
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
		// No faster than the busiest NIC moves its bytes, and alone at the
		// plan's time, which says so.
		took := units.Duration(h.End() - h.Start())
		if took < tc.minTime {
			t.Errorf("%s: alone %d ps, less than the busiest NIC needs (%d ps)", tc.name, took, tc.minTime)
		}
		if c := h.Plan.Choice; took != c.Time {
			t.Errorf("%s: alone %d ps, the plan says %d ps", tc.name, took, c.Time)
		}
		// Where the floor binds (every case but 72+24, whose NICs need
		// 885 µs of the model's 1,797), the bandwidth term is exactly the
		// busiest NIC's bytes at 50 GB/s (review s20 B: M7, M9, M11).
		if c := h.Plan.Choice; tc.gpn == 8 && c.Time-c.Latency != tc.minTime {
			t.Errorf("%s: bandwidth term %d ps, want the busiest NIC's %d ps", tc.name, c.Time-c.Latency, tc.minTime)
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
