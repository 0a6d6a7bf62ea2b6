package collectives

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestAllToAll: n ranks each send ⌈S/n⌉ to every other rank at once, so
// every port carries (n−1)·⌈S/n⌉ in one step: α + (n−1)·⌈S/n⌉/B, on the
// engine and in closed form; across nodes the inter-node share goes over
// the NICs and shows in the inter class.
func TestAllToAll(t *testing.T) {
	const S = 64 << 20
	one := uniform(t, 1, 8, 300e9, 500*units.Nanosecond)
	spec := Spec{Op: AllToAll, Algo: Auto, Group: []int{0, 1, 2, 3, 4, 5, 6, 7}, Bytes: S}
	want := 500*units.Nanosecond + units.TransferTime(7*S/8, 300e9)
	cf, err := ClosedForm(one, spec)
	if err != nil || cf != want {
		t.Fatalf("closed form %v, %v; want %v", cf, err, want)
	}
	if got := runAlone(t, one, spec); got != want {
		t.Errorf("engine %v, want %v", got, want)
	}
	if v, _ := Volume(spec); v != 7*S/8 {
		t.Errorf("volume %d, want %d", v, 7*S/8)
	}
	two := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 4,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2 * units.Microsecond}})
	p, err := Lower(two, spec)
	if err != nil {
		t.Fatal(err)
	}
	var wire [topology.NumClasses]int64
	p.EachTransfer(func(_, _ int, c topology.Class, b units.Bytes) { wire[c] += int64(b) })
	// 8 ranks × 3 same-node peers and × 4 other-node peers, S/8 each.
	if wire[topology.Intra] != 8*3*S/8 || wire[topology.Inter] != 8*4*S/8 {
		t.Errorf("wire intra %d inter %d, want %d %d", wire[topology.Intra], wire[topology.Inter], 8*3*S/8, 8*4*S/8)
	}
	// The NIC carries 4 transfers of S/8: 2µs + 4·S/8 at 50 GB/s.
	if got, want := runAlone(t, two, spec), 2*units.Microsecond+units.TransferTime(4*S/8, 50e9); got != want {
		t.Errorf("two nodes: engine %v, want %v", got, want)
	}
}

// TestAllToAllTooLarge: an all-to-all over more than MaxAllToAllRanks
// ranks is refused before any pair is lowered (2,049 ranks would be
// 4,196,352 pairs); a smaller one on the same cluster is lowered.
func TestAllToAllTooLarge(t *testing.T) {
	const n = MaxAllToAllRanks + 1
	topo := mustTopo(t, topology.Params{Nodes: n, GPUsPerNode: 1,
		Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2 * units.Microsecond}})
	group := make([]int, n)
	for i := range group {
		group[i] = i
	}
	_, err := Lower(topo, Spec{Op: AllToAll, Group: group, Bytes: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "2049 ranks send to 4196352 ordered pairs") || !strings.Contains(err.Error(), "use at most 2048 ranks") {
		t.Errorf("all-to-all over %d ranks: %v", n, err)
	}
	if _, err := Lower(topo, Spec{Op: AllToAll, Group: group[:64], Bytes: 1 << 20}); err != nil {
		t.Errorf("all-to-all over 64 ranks: %v", err)
	}
}

// TestBenchSizes: --size is one size or LO:HI doubling from LO (as
// nccl-tests -b LO -e HI -f 2); a third part, nccl-tests' -f step, is
// refused by name rather than as "not a size".
func TestBenchSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []units.Bytes
		err  string
	}{
		{"64MiB", []units.Bytes{64 << 20}, ""},
		{"1KiB:8KiB", []units.Bytes{1 << 10, 2 << 10, 4 << 10, 8 << 10}, ""},
		{"1KiB:10KiB", []units.Bytes{1 << 10, 2 << 10, 4 << 10, 8 << 10}, ""},
		{"1KiB:1MiB:3", nil, `"1KiB:1MiB:3": a range is LO:HI, one row per power of two from LO (nccl-tests' -f 2); a step such as :3 is not taken (drop it)`},
		{"8KiB:1KiB", nil, "a range needs 0 < LO ≤ HI"},
	} {
		got, err := BenchSizes(c.in)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v, %q", c.in, got, err, c.want, c.err)
		}
	}
}

// TestBenchCount: nccl-tests' count column is the paramcount of each op's
// GetCollByteCount (NVIDIA/nccl-tests a0b82b2260cf5152b9f8c061bbf7eaf0ba096432): all_reduce_perf prints the
// buffer's elements, all_gather_perf and reduce_scatter_perf one rank's
// chunk and alltoall_perf one peer's block, rounded down to 16 bytes:
// (count/nranks) & ~7 for bf16. zerosim printed the buffer's elements for
// every op (524288 for a 1 MiB all-gather over 16 ranks).
func TestBenchCount(t *testing.T) {
	for _, c := range []struct {
		op   Op
		size units.Bytes
		n    int
		want int64
	}{
		{AllReduce, 1 << 20, 16, 524288},
		{AllGather, 1 << 20, 16, 32768},
		{ReduceScatter, 1 << 20, 16, 32768},
		{AllToAll, 1 << 20, 16, 32768},
		{AllGather, 1000, 3, 160}, // 500 elements / 3 = 166, down to a multiple of 8
		{AllGather, 8, 16, 0},
	} {
		if got := BenchCount(c.op, c.size, c.n); got != c.want {
			t.Errorf("%v of %d B over %d ranks: count %d, want %d", c.op, c.size, c.n, got, c.want)
		}
	}
	// The row runs and prints the buffer its count makes, as nccl-tests'
	// size column: 1000 B asked of an all-gather over 3 ranks is 3·160·2 =
	// 960 B.
	topo := mustTopo(t, topology.Params{Nodes: 1, GPUsPerNode: 3, Intra: topology.LinkParams{Bandwidth: 300e9, Latency: 500}})
	row, err := (&Bench{Op: AllGather, Algo: Ring, Groups: [][]int{{0, 1, 2}}}).Run(topo, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if row.Size != 960 || row.Count != 160 {
		t.Errorf("all-gather of 1000 B over 3 ranks: size %d, count %d; want 960 and 160", row.Size, row.Count)
	}
}
