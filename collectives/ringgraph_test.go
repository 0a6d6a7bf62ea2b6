package collectives

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestRingGraphChannels: NCCL's ring graph across nodes has one channel
// per NIC at 48 GB/s where a Hopper-or-later node crosses on more than 4
// NICs of 400 Gb/s (ncclTopoDupChannels keeps them), and two per NIC
// otherwise: 4 or fewer NICs, an Ampere node (ccMin 80 doubles), 800 Gb/s
// NICs (two channels of 48 fit each), or inside one node.
func TestRingGraphChannels(t *testing.T) {
	hw := func(a Arch, nic units.Bandwidth) Hardware {
		return Hardware{Arch: a, NVLS: a >= Hopper, IntraBW: 450e9, NICBW: nic, NICsPerNode: 8}
	}
	for _, c := range []struct {
		name string
		hw   Hardware
		sh   Shape
		want float64
	}{
		{"10 × 8 H100, 8 NDR NICs", hw(Hopper, 50e9), Shape{Ranks: 80, Nodes: 10}, 8},
		{"10 × 4 H100, 4 of 8 NDR NICs", hw(Hopper, 50e9), Shape{Ranks: 40, Nodes: 10}, 8},
		{"2 × 8 B200, 8 NDR NICs", hw(Blackwell, 50e9), Shape{Ranks: 16, Nodes: 2}, 8},
		{"2 × 8 H100, 8 × 800 Gb/s", hw(Hopper, 100e9), Shape{Ranks: 16, Nodes: 2}, 16},
		{"2 × 8 A100, 8 NDR NICs", hw(Ampere, 50e9), Shape{Ranks: 16, Nodes: 2}, 16},
		{"1 × 8 H100", hw(Hopper, 50e9), Shape{Ranks: 8, Nodes: 1}, 16},
	} {
		if got := NewModel(c.hw).ringGraphChannels(c.sh); got != c.want {
			t.Errorf("%s: %v ring graph channels, want %v", c.name, got, c.want)
		}
	}
	// RCCL (an AMD GPU's gfx target) has no ncclTopoDupChannels exception:
	// the cap takes the model's channels, whatever arch the hardware
	// carries.
	amd := hw(Hopper, 50e9)
	amd.GFX = "gfx950"
	sh := Shape{Ranks: 16, Nodes: 2}
	if m := NewModel(amd); m.ringGraphChannels(sh) != m.channels(sh) {
		t.Errorf("gfx950 with 8 NDR NICs: %v ring graph channels, want the model's %v", m.ringGraphChannels(sh), m.channels(sh))
	}
}

// TestRingLL128CapSwitch: on 4 × 8 H100 with eight 400 Gb/s NICs (the
// Voltage Park log, NCCL 2.24.3) the ring's LL128 runs at its 8 channels
// × 36.7 GB/s (algbw 8 · 36.7 · 32/31), and NCCL's tuner leaves it for
// Simple between 64 and 128 MiB, where the log's all-gather time jumps
// (390.73 → 749.73 µs, testdata/nccl-tests/h100_4node_allgather_voltagepark.log);
// with two channels per NIC the cap did not bind and LL128 ran to 256 MiB.
func TestRingLL128CapSwitch(t *testing.T) {
	m := NewModel(versioned(h100(50e9, 0), "2.24"))
	sh := Shape{Ranks: 32, Nodes: 4}
	c, ok := m.Cost(AllGather, sh, Ring, LL128, units.GiB)
	if want := 8 * 36.7 * 32 / 31 * 1e9; !ok || math.Abs(c.AlgBW-want) > 1 {
		t.Errorf("ring LL128 algbw %.0f B/s, want %.0f", c.AlgBW, want)
	}
	for _, r := range []struct {
		size  units.Bytes
		proto Proto
	}{{64 * units.MiB, LL128}, {128 * units.MiB, Simple}} {
		ch, err := m.Choose(AllGather, sh, Auto, r.size)
		if err != nil || ch.Algo != Ring || ch.Proto != r.proto {
			t.Errorf("%v: %v/%v (%v), want ring/%v", r.size, ch.Algo, ch.Proto, err, r.proto)
		}
	}
}
