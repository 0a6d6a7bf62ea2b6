package collectives

import (
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestFasterThanChoiceSays (final read R2 F11): FasterThanChoice says why
// the tuner's choice is slower than the fastest combination. On 8 × 8
// H100 a 512 MiB all-reduce runs tree/Simple at 3,858.6 µs against
// NVLS-tree's 3,296.1 (QA17 L4): NCCL ranks the Simple tree without its
// pipeline fill. Behind a network plugin that reports 50 µs (NVLS off),
// on 4 NICs a node, NCCL picks tree/LL128 at 256 MiB by that latency
// (with 8 NDR NICs the ring's LL128 is capped at 8 × 36.7 GB/s,
// ringGraphChannels, and is no longer the faster one). On MI300X (gfx942)
// RCCL's cost picks tree/Simple for 8 MiB over 2 nodes although ring is
// faster: its cost, not the fill, whatever the algorithm. A 1 MiB
// all-reduce over 2 × 8 H100 runs the fastest.
func TestFasterThanChoiceSays(t *testing.T) {
	h100 := Hardware{Arch: Hopper, NVLS: true, IntraBW: 450e9, NICBW: 50e9, NICsPerNode: 8}
	plugin, amd := h100, h100
	plugin.NVLS, plugin.PluginLatency, plugin.NICsPerNode = false, 50e6, 4
	amd.NVLS, amd.GFX = false, "gfx942"
	for _, c := range []struct {
		hw              Hardware
		sh              Shape
		size            units.Bytes
		chosen, fastest Algo
		why             Slowness
		ok              bool
	}{
		{h100, Shape{Ranks: 64, Nodes: 8}, 512 * units.MiB, Tree, NVLSTree, SlowTreeFill, true},
		{plugin, Shape{Ranks: 64, Nodes: 8}, 256 * units.MiB, Tree, Ring, SlowPluginLatency, true},
		{amd, Shape{Ranks: 16, Nodes: 2}, 8 * units.MiB, Tree, Ring, SlowCost, true},
		{h100, Shape{Ranks: 16, Nodes: 2}, units.MiB, 0, 0, SlowCost, false},
	} {
		chosen, fastest, why, ok := NewModel(c.hw).FasterThanChoice(AllReduce, c.sh, c.size)
		if ok != c.ok || ok && (chosen.Algo != c.chosen || fastest.Algo != c.fastest || why != c.why) {
			t.Errorf("%s %v %v: %v/%v against %v/%v, why %d, ok %v; want %v against %v, why %d, ok %v",
				c.hw.Describe(), c.sh, c.size, chosen.Algo, chosen.Proto, fastest.Algo, fastest.Proto, why, ok, c.chosen, c.fastest, c.why, c.ok)
		}
	}
	chosen, fastest, _, _ := NewModel(h100).FasterThanChoice(AllReduce, Shape{Ranks: 64, Nodes: 8}, 512*units.MiB)
	if (chosen.Time+50_000)/100_000 != 38586 || (fastest.Time+50_000)/100_000 != 32961 { // 0.1 µs
		t.Errorf("QA17 L4: %v against %v, want 3,858.6 µs against 3,296.1", chosen.Time, fastest.Time)
	}
}
