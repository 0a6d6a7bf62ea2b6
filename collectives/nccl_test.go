package collectives

import (
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// TestNCCLLatencies: the model's latencies are tuning.cc's formulas on its
// tables, worked by hand for 2 × 8 H100 (nRanks 16, nNodes 2, ppn 8).
func TestNCCLLatencies(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	sh := Shape{Ranks: 16, Nodes: 2}
	for _, c := range []struct {
		a    Algo
		p    Proto
		size units.Bytes
		us   float64
	}{
		// Tree LL: base 6.8 + 2·((ppn−1)·0.6 + log2(2)·5.0) = 25.2.
		{Tree, LL, 64, 6.8 + 2*(7*0.6+1*5.0)},
		// Tree Simple: 8.4 + 2·(7·4.0 + 14) = 92.4, and its pipeline's
		// fill (treeSimpleFill): each of 16 channels' 4 B crosses 14
		// NVLink hops at 370.8/16 GB/s and one network hop beyond the
		// bottleneck at 170.568/16 (the tree's algbw, min(370.8, 2·384)
		// × 0.92 / 2).
		{Tree, Simple, 64, 8.4 + 2*(7*4.0+14) + 4*16*(14/370.8e3+1/170.568e3)},
		// Ring LL: 6.6 + (30−2)·max(0.6, netOverhead 1) + 2·2.7 = 40.0.
		{Ring, LL, 64, 6.6 + 28*1.0 + 2*2.7},
		// Ring Simple, 64 B (below the plateau): 8.4 + 28·max(3.4, 3) + 2·14.
		{Ring, Simple, 64, 8.4 + 28*3.4 + 2*14},
	} {
		ch, ok := m.Cost(AllReduce, sh, c.a, c.p, c.size)
		if !ok {
			t.Fatalf("%v/%v: not available", c.a, c.p)
		}
		if got := float64(ch.Latency) / 1e6; math.Abs(got-c.us) > 1e-6 {
			t.Errorf("%v/%v: latency %.4f µs, want %.4f", c.a, c.p, got, c.us)
		}
	}
}

// TestNCCLLatencyOneRankPerNode: NCCL takes the tree's network latency for
// every algorithm when ppn, the float nRanks/nNodes, is 1 (tuning.cc lines
// 281 and 386–387 at 5067397c): over 2 ranks on 2 nodes a ring LL
// all-reduce's two network steps cost 5.0 µs each, 6.6 + 2·5.0 = 16.6; over
// 3 ranks on 2 nodes (2 + 1, ppn 1.5) the ring's own 2.7, 6.6 + 2·max(0.6,
// netOverhead 1) + 2·2.7 = 14.0, though the integer mean is 1.
func TestNCCLLatencyOneRankPerNode(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	for _, c := range []struct {
		sh Shape
		us float64
	}{
		{Shape{Ranks: 2, Nodes: 2}, 6.6 + 2*5.0},
		{Shape{Ranks: 3, Nodes: 2, MinPerNode: 1}, 6.6 + 2*1.0 + 2*2.7},
	} {
		ch, ok := m.Cost(AllReduce, c.sh, Ring, LL, 64)
		if !ok {
			t.Fatalf("%+v: not available", c.sh)
		}
		if got := float64(ch.Latency) / 1e6; math.Abs(got-c.us) > 1e-6 {
			t.Errorf("%+v: latency %.4f µs, want %.4f", c.sh, got, c.us)
		}
	}
}

// TestTreeSimpleFill: a Simple tree's time on 2 × 8 H100 under TCPXO's
// NCCL_BUFFSIZE of 8 MiB is NCCL's latency, its pipeline's fill and its
// full bandwidth, worked by hand: each of 16 channels' chunks (1 MiB, or
// the channel's share below 16 MiB) crosses 14 NVLink hops at 370.8/16
// GB/s and one network hop beyond the bottleneck at 170.568/16 GB/s, so
// the fill grows with the size up to 16 MiB and then stays; NCCL still
// ranks the tree by its own cost (its bandwidth times the tree
// correction, no fill) and picks it over the ring, as it does on A3 Mega.
func TestTreeSimpleFill(t *testing.T) {
	m := NewModel(TCPXO(h100(25e9, 8*units.Microsecond)))
	sh := Shape{Ranks: 16, Nodes: 2}
	lat := 8.4 + 2*(7*4.0+14+2*8)
	perMiB := 16 * float64(units.MiB) * (14/370.8e3 + 1/170.568e3) // µs
	for _, c := range []struct {
		size units.Bytes
		fill float64 // µs
	}{{units.MiB, perMiB / 16}, {4 * units.MiB, perMiB / 4}, {16 * units.MiB, perMiB}, {64 * units.MiB, perMiB}, {units.GiB, perMiB}} {
		ch, ok := m.Cost(AllReduce, sh, Tree, Simple, c.size)
		if !ok {
			t.Fatal("tree Simple not available")
		}
		want := lat + c.fill + float64(c.size)/170.568e3
		if got := float64(ch.Time) / 1e6; math.Abs(got-want) > 0.01 {
			t.Errorf("%v: %.2f µs, want %.2f (fill %.2f)", c.size, got, want, c.fill)
		}
		if got := float64(ch.Latency) / 1e6; math.Abs(got-lat-c.fill) > 1e-3 {
			t.Errorf("%v: latency %.3f µs, want %.3f", c.size, got, lat+c.fill)
		}
		best, err := m.Choose(AllReduce, sh, Auto, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if best.Algo != Tree || best.Time != ch.Time {
			ring, _ := m.Cost(AllReduce, sh, Ring, Simple, c.size)
			t.Errorf("%v: auto picks %v/%v (%v), want NCCL's pick tree/Simple (%v; ring %v)", c.size, best.Algo, best.Proto, best.Time, ch.Time, ring.Time)
		}
	}
	// NCCL's default buffer (4 MiB) halves the chunk and the fill.
	ch, _ := NewModel(h100(25e9, 8*units.Microsecond)).Cost(AllReduce, sh, Tree, Simple, units.GiB)
	tx, _ := m.Cost(AllReduce, sh, Tree, Simple, units.GiB)
	if d := float64(tx.Latency-ch.Latency) / 1e6; math.Abs(d-perMiB/2) > 1e-3 {
		t.Errorf("8 MiB buffer adds %.3f µs of fill to 4 MiB's, want %.3f", d, perMiB/2)
	}
}

// TestNCCLBandwidths: ring Simple bus bandwidth is the smaller of NCCL's
// NVLink figure (18 links × 20.6 GB/s = 370.8) and the node's NICs as the
// ring search quantizes them (8 NICs × 2 channels × 24 GB/s = 384); NVLS on
// one node moves S·(1+1/g) per GPU at 85 % NVLS efficiency.
func TestNCCLBandwidths(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	ring, _ := m.Cost(AllReduce, Shape{Ranks: 32, Nodes: 4}, Ring, Simple, units.GiB)
	if want := 370.8e9 * 32 / 62; math.Abs(ring.AlgBW-want) > 1e3 {
		t.Errorf("ring algbw %.4g, want %.4g", ring.AlgBW, want)
	}
	slowNIC := NewModel(h100(12.5e9, 0)) // 8 × 2 × 6 GB/s
	ring, _ = slowNIC.Cost(AllGather, Shape{Ranks: 32, Nodes: 4}, Ring, Simple, units.GiB)
	if want := 96e9 * 32 / 31; math.Abs(ring.AlgBW-want) > 1e3 {
		t.Errorf("ring on 100 Gb/s NICs: algbw %.4g, want %.4g", ring.AlgBW, want)
	}
	// One rank per node (an inter group): its GPU's own NIC, 2 × 24 GB/s.
	rail, _ := m.Cost(AllReduce, Shape{Ranks: 4, Nodes: 4}, Ring, Simple, units.GiB)
	if want := 48e9 * 4 / 6; math.Abs(rail.AlgBW-want) > 1e3 {
		t.Errorf("one rank per node: algbw %.4g, want %.4g", rail.AlgBW, want)
	}
	nvls, ok := m.Cost(AllReduce, Shape{Ranks: 8, Nodes: 1}, NVLS, Simple, units.GiB)
	if want := 370.8e9 * 0.85 * 8 / 9; !ok || math.Abs(nvls.AlgBW-want) > 1e3 {
		t.Errorf("nvls algbw %.4g, want %.4g", nvls.AlgBW, want)
	}
}

// TestBlackwellNVLSTreeCorrection: on Blackwell with an x86 host NCCL
// scales an NVLS tree's all-reduce bandwidth by the tree correction up to
// 512 MiB (ncclTopoGetAlgoTime): 0.8 at 64 MiB (Simple, log2(64 MiB/64) =
// 20), none at 1 GiB, none on a Grace (Arm) host or on Hopper.
func TestBlackwellNVLSTreeCorrection(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	grace := b200
	grace.CPU = scenarios.HostArm
	for _, c := range []struct {
		size units.Bytes
		want float64
	}{{64 * units.MiB, 0.8}, {units.GiB, 1}} {
		x86, ok1 := NewModel(b200).Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLSTree, Simple, c.size)
		arm, ok2 := NewModel(grace).Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLSTree, Simple, c.size)
		if !ok1 || !ok2 || math.Abs(x86.AlgBW/arm.AlgBW-c.want) > 1e-9 {
			t.Errorf("%v: x86/arm algbw %.4g/%.4g, want ratio %.2f", c.size, x86.AlgBW, arm.AlgBW, c.want)
		}
	}
	h, _ := NewModel(h100(50e9, 0)).Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLSTree, Simple, 64*units.MiB)
	g, _ := NewModel(h100(50e9, 0)).Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLSTree, Simple, units.GiB)
	if h.AlgBW != g.AlgBW {
		t.Errorf("hopper nvls tree algbw %.4g at 64 MiB, %.4g at 1 GiB: want no correction", h.AlgBW, g.AlgBW)
	}
}

// TestNCCLChoice: small all-reduces pick LL, large ones Simple; NVLS only
// where the hardware has it; over PCIe no LL128.
func TestNCCLChoice(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	small, _ := m.Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, Auto, 1024)
	large, _ := m.Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, Auto, 4*units.GiB)
	if small.Proto != LL || large.Proto != Simple {
		t.Errorf("1 KiB %v/%v, 4 GiB %v/%v: want LL then Simple", small.Algo, small.Proto, large.Algo, large.Proto)
	}
	one, _ := m.Choose(AllReduce, Shape{Ranks: 8, Nodes: 1}, Auto, units.GiB)
	if one.Algo != NVLS {
		t.Errorf("1 GiB on one H100 node: %v, want nvls", one.Algo)
	}
	a100 := NewModel(Hardware{Arch: Ampere, IntraBW: 300e9, NICBW: 25e9, NICsPerNode: 8})
	if c, _ := a100.Choose(AllReduce, Shape{Ranks: 8, Nodes: 1}, Auto, units.GiB); c.Algo == NVLS {
		t.Error("NVLS on Ampere")
	}
	pci := NewModel(Hardware{Arch: Ampere, PCI: true, IntraBW: 32e9, NICBW: 12.5e9, NICsPerNode: 1})
	for _, s := range []units.Bytes{1 << 10, 1 << 20, 1 << 30} {
		if c, _ := pci.Choose(AllReduce, Shape{Ranks: 8, Nodes: 1}, Auto, s); c.Proto == LL128 {
			t.Errorf("%d B over PCIe: LL128", s)
		}
	}
	if _, err := m.Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLS, units.GiB); err == nil || !strings.Contains(err.Error(), "NVLS-tree or NCCL's own choice runs across nodes") {
		t.Errorf("nvls across nodes: %v", err)
	}
}

// TestTCPXOProfile: a scenario on the TCPXO link preset gets Google's
// required NCCL configuration (NCCL_PROTO=Simple, NVLS off), so every size
// runs Simple on ring or tree, and a small all-reduce over 2 × 8 H100 costs
// tree Simple's latency with the preset's network latency beyond NDR's
// (10 − 2 = 8 µs per hop, twice for Simple's flush): 8.4 + 2·(7·4.0 + 14 +
// 2·8) = 124.4 µs, where the published log measures 122.3–123.5 µs at 8 B
// to 512 B. On NDR the same cluster keeps NCCL's default (LL, NVLS).
func TestTCPXOProfile(t *testing.T) {
	def, _ := scenarios.Example("default")
	for _, c := range []struct {
		preset string
		tcpxo  bool
	}{{"NDR", false}, {"TCPXO", true}} {
		s, err := scenarios.Load("default.yaml", def, []string{"cluster.inter.preset=" + c.preset})
		if err != nil {
			t.Fatal(err)
		}
		hw := HardwareOf(s)
		if got := hw.Protos == 1<<Simple && !hw.NVLS; got != c.tcpxo {
			t.Fatalf("%s: protos %b, NVLS %v", c.preset, hw.Protos, hw.NVLS)
		}
		m := NewModel(hw)
		for _, size := range []units.Bytes{8, units.MiB, units.GiB} {
			ch, err := m.Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, Auto, size)
			if err != nil {
				t.Fatal(err)
			}
			if c.tcpxo && (ch.Proto != Simple || ch.Algo != Ring && ch.Algo != Tree) {
				t.Errorf("TCPXO %d B: %v/%v, want ring or tree, Simple", size, ch.Algo, ch.Proto)
			}
			if size == 8 {
				want := 8.4 + 2*(7*4.0+14+2*8)
				if !c.tcpxo {
					want = 6.8 + 2*(7*0.6+5.0) // tree LL, NDR
				}
				if got := float64(ch.Time) / 1e6; math.Abs(got-want) > 1e-3 {
					t.Errorf("%s 8 B: %.3f µs (%v/%v), want %.3f", c.preset, got, ch.Algo, ch.Proto, want)
				}
			}
		}
		// The calibration file keeps the protocol set, so its curves
		// still apply to the cluster it was made on.
		cal := &Calibration{HW: hw, Params: Nominal, Curves: []Curve{{Op: AllReduce, Shape: Shape{Ranks: 16, Nodes: 2}, Sizes: []int64{1 << 20, 2 << 20}, TimesUS: []float64{200, 250}}}}
		back, err := CalibrationOf(cal.File())
		if err != nil {
			t.Fatal(err)
		}
		if back.HW != hw || len(back.Model(hw).Curves) != 1 {
			t.Errorf("%s: calibration file round trip: %+v, want %+v", c.preset, back.HW, hw)
		}
	}
	f := (&Calibration{HW: TCPXO(h100(25e9, 0))}).File()
	f.Hardware.Protos = []string{"Simpel"}
	if _, err := CalibrationOf(f); err == nil || !strings.Contains(err.Error(), `hardware.protos: "Simpel"`) {
		t.Errorf("unknown protocol: %v", err)
	}
}

// TestModelOnFabric: alone on the links a timed collective takes the
// model's time (its work rounded up to whole bytes: within 1 ns); two at
// once on shared links take longer exactly when their bytes need more of
// the links than the model's bandwidth time gives (1 GiB), and as long as
// one alone when the model's time is mostly latency and protocol (1 MiB:
// the traffic is paced at its real bytes, timePlan).
func TestModelOnFabric(t *testing.T) {
	topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500}, Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2000}})
	m := NewModel(h100(50e9, 0))
	for _, size := range []units.Bytes{units.MiB, 64 * units.MiB, units.GiB} {
		spec := Spec{Op: AllReduce, Algo: Auto, Group: topo.All(), Bytes: size}
		eng := sim.New()
		h, err := NewFabricOptions(eng, topo, FabricOptions{Model: m}).Start(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		got, want := units.Duration(h.End()-h.Start()), h.Plan.Choice.Time
		if !h.Plan.Timed || got < want || got > want+units.Nanosecond {
			t.Errorf("%d B: engine %d ps, model %d ps (%v/%v)", size, got, want, h.Plan.Algo, h.Plan.Proto)
		}
		eng = sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: m})
		a, _ := f.Start(spec, nil)
		b, _ := f.Start(spec, nil)
		eng.Run()
		busiest := busiestNeed(h.Plan)
		crowded := 2*busiest > float64(h.Plan.Choice.Time-h.Plan.Choice.Latency)
		if both := units.Duration(max(a.End(), b.End()) - a.Start()); both < got || crowded != (both > got) {
			t.Errorf("%d B: two at once end at %v and %v, alone %v (links need %.0f ps a collective)", size, a.End(), b.End(), got, busiest)
		}
	}
}

// TestConcurrentTimedShareTheBottleneck: an all-gather and a
// reduce-scatter of 1 GiB over 2 nodes × 8 H100 at once share their
// bottleneck: together they take at least the latency plus what the
// busiest link needs for both (their paced traffic cannot go faster than
// the link) and at least one alone, at most twice one alone, and a faster
// link never makes the pair slower. Run as sequential phases (the model's
// time split by the phases' alpha–beta times) they shared it for part of
// their time only: 8.288 ms together against 5.5 ms alone at 225 GB/s
// NVLink, and with the NVLink the bottleneck, a faster NIC made the pair
// slower.
func TestConcurrentTimedShareTheBottleneck(t *testing.T) {
	pair := func(intra, inter units.Bandwidth) (alone, both, floor units.Duration) {
		topo := mustTopo(t, topology.Params{Nodes: 2, GPUsPerNode: 8,
			Intra: topology.LinkParams{Bandwidth: intra, Latency: 500}, Inter: topology.LinkParams{Bandwidth: inter, Latency: 2000}})
		hw := h100(inter, 0)
		hw.IntraBW = intra
		m := NewModel(hw)
		ag := Spec{Op: AllGather, Algo: Auto, Group: topo.All(), Bytes: units.GiB}
		rs := ag
		rs.Op = ReduceScatter
		eng := sim.New()
		h, err := NewFabricOptions(eng, topo, FabricOptions{Model: m}).Start(ag, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		alone = units.Duration(h.End() - h.Start())
		floor = max(alone, h.Plan.Choice.Latency+units.Duration(2*busiestNeed(h.Plan)))
		eng = sim.New()
		f := NewFabricOptions(eng, topo, FabricOptions{Model: m})
		a, _ := f.Start(ag, nil)
		b, _ := f.Start(rs, nil)
		eng.Run()
		return alone, units.Duration(max(a.End(), b.End()) - a.Start()), floor
	}
	for _, sweep := range []struct {
		name         string
		intra, inter []units.Bandwidth
	}{
		{"NVLink", []units.Bandwidth{225e9, 450e9, 900e9}, []units.Bandwidth{50e9, 50e9, 50e9}},
		{"NIC", []units.Bandwidth{450e9, 450e9, 450e9}, []units.Bandwidth{25e9, 50e9, 100e9}},
	} {
		var prev units.Duration
		for i := range sweep.intra {
			alone, both, floor := pair(sweep.intra[i], sweep.inter[i])
			t.Logf("NVLink %v, NIC %v: alone %v, together %v", sweep.intra[i], sweep.inter[i], alone, both)
			if both+units.Nanosecond < floor || both > 2*alone+units.Nanosecond {
				t.Errorf("NVLink %v, NIC %v: together %v, want between the latency plus both on the busiest link or one alone (%v) and twice alone (%v)", sweep.intra[i], sweep.inter[i], both, floor, 2*alone)
			}
			if i > 0 && both > prev {
				t.Errorf("%s sweep: NVLink %v, NIC %v: together %v, slower than %v at half the bandwidth", sweep.name, sweep.intra[i], sweep.inter[i], both, prev)
			}
			prev = both
		}
	}
}

// TestSearchFraction: NCCL's ring search lands on 96 % of a NIC at the
// standard speeds (100, 200, 400 and 800 Gb/s: two channels at 6, 12, 24
// and 48 GB/s), which the continuous searchFraction keeps exact.
func TestSearchFraction(t *testing.T) {
	for _, nic := range []float64{12.5, 25, 50, 100} {
		if got := searchStep(nic) / nic; math.Abs(got-searchFraction) > 1e-12 {
			t.Errorf("NIC %g GB/s: search gives %g of it, searchFraction is %g", nic, got, searchFraction)
		}
	}
	if searchFraction != 0.96 {
		t.Errorf("searchFraction %g, want 0.96 (48/50)", searchFraction)
	}
}

// TestHostLaunchFloor: one host thread driving G GPUs launches their
// kernels one after another, so a small collective takes G ×
// HostLaunchPerGPU. NVIDIA/nccl-tests issue #123 measured 8–128-byte
// ring all-reduces on a DGX-A100 with -g G (NCCL_ALGO=Ring,
// NCCL_MAX_NCHANNELS=1): 16.88, 20.8, 25.2, 29.5, 33.7 µs for G = 4…8.
// The constant is their mean per GPU, so this test holds the mechanism
// (time ∝ G, no intercept, above NCCL's own ring latency), not the
// constant; NCCL's model alone is ≥ 40 % under at G = 8.
func TestHostLaunchFloor(t *testing.T) {
	hw := Hardware{Arch: Ampere, IntraBW: 300e9, NICBW: 25e9, NICsPerNode: 8}
	for g, us := range map[int]float64{4: 16.88, 5: 20.8, 6: 25.2, 7: 29.5, 8: 33.7} {
		m := NewModel(hw)
		m.GPUsPerThread = g
		c, err := m.Time(AllReduce, Shape{Ranks: g, Nodes: 1}, Ring, 8)
		if err != nil {
			t.Fatal(err)
		}
		if e := (float64(c.Time)/1e6 - us) / us; math.Abs(e) > 0.02 {
			t.Errorf("-g %d: %v, measured %.2f µs (%+.1f %%)", g, c.Time, us, 100*e)
		}
		if c.Time != HostLaunchFloor(g) || c.Time-c.Latency > units.Nanosecond {
			t.Errorf("-g %d: %+v: want the host floor %v, (nearly) all latency", g, c, HostLaunchFloor(g))
		}
		m.GPUsPerThread = 1
		one, _ := m.Time(AllReduce, Shape{Ranks: g, Nodes: 1}, Ring, 8)
		if g == 8 && (float64(one.Time)/1e6-us)/us > -0.40 {
			t.Errorf("-g 8 without the floor: %v; NCCL's model alone should be ≥ 40 %% under %.1f µs", one.Time, us)
		}
		// Large sizes are the GPUs' time: the floor does not touch them.
		big, _ := m.Time(AllReduce, Shape{Ranks: g, Nodes: 1}, Ring, units.GiB)
		m.GPUsPerThread = g
		bigG, _ := m.Time(AllReduce, Shape{Ranks: g, Nodes: 1}, Ring, units.GiB)
		if big != bigG {
			t.Errorf("-g %d at 1 GiB: %+v, want %+v", g, bigG, big)
		}
	}
	if HostLaunchFloor(0) != 0 || HostLaunchFloor(1) != 0 {
		t.Error("one GPU per thread has no host floor")
	}
}

// TestHardwareOfPresets: each GPU preset maps to NCCL's generation by its
// compute capability (A100/A800 8.0 Ampere, H100 9.0 Hopper, B200/B300
// 10.x Blackwell) and its host CPU to its system's (DGX A100 AMD, DGX
// H100/B200/B300 Intel, the Grace-hosted superchips GB200 and GB300 Arm:
// scenarios.DefaultHostCPU), and a GPU NCCL has no tables for (AMD's,
// under RCCL) keeps Ampere's.
func TestHardwareOfPresets(t *testing.T) {
	def, _ := scenarios.Example("default")
	for _, c := range []struct {
		gpu  string
		arch Arch
		cpu  scenarios.HostCPU
	}{
		{"A100-80GB", Ampere, scenarios.HostAMD},
		{"A800-80GB", Ampere, scenarios.HostAMD},
		{"H100-80GB", Hopper, ""},
		{"GH200-96GB", Hopper, scenarios.HostArm}, // Hopper beside its Grace
		{"B200", Blackwell, ""},
		{"B300", Blackwell, ""},
		{"GB200", Blackwell, scenarios.HostArm},
		{"GB300", Blackwell, scenarios.HostArm},
		{"MI355X", Ampere, scenarios.HostAMD},
	} {
		s, err := scenarios.Load("default.yaml", def, []string{"cluster.gpu=" + c.gpu})
		if err != nil {
			t.Fatal(err)
		}
		if hw := HardwareOf(s); hw.Arch != c.arch || hw.CPU != c.cpu {
			t.Errorf("%s: arch %v, host %q; want %v, %q", c.gpu, hw.Arch, hw.CPU, c.arch, c.cpu)
		}
	}
	// The H100 PCIe card is Hopper (compute capability 9.0: NCCL's Hopper
	// tables) on an Intel host (the DGX H100 host assumed), and has no
	// NVSwitch, so no NVLS, over PCIe or two cards' NVLink bridge.
	for _, intra := range [][]string{{"cluster.intra.preset=PCIe5"}, {"cluster.intra.preset=NVLink4", "cluster.intra.bandwidth=300GB/s"}} {
		s, err := scenarios.Load("default.yaml", def, append([]string{"cluster.gpu=H100-PCIe", "cluster.nodes=1", "cluster.gpus_per_node=2", "parallelism.dp=2"}, intra...))
		if err != nil {
			t.Fatal(err)
		}
		if hw := HardwareOf(s); hw.Arch != Hopper || hw.CPU != "" || hw.NVLS {
			t.Errorf("H100-PCIe %v: arch %v, host %q, NVLS %v; want Hopper, NCCL's default host, no NVLS", intra, hw.Arch, hw.CPU, hw.NVLS)
		}
	}
}

// busiestNeed is the time the busiest link class of p needs for its bytes
// at full speed (linkNeed), in picoseconds.
func busiestNeed(p *Plan) float64 {
	var b float64
	for _, n := range linkNeed(p) {
		b = max(b, n)
	}
	return b
}

// TestWireFraction: the share of a link a timed collective's payload gets
// is NCCL's reach on that link (its topology's NVLink speed, 20.6 of 25
// GB/s a link on Hopper; its ring search's 48 of a 50 GB/s NIC; PCI_BW 12
// of 16) times what the protocol leaves for data (LL 8 of 16 bytes, LL128
// 15 of 16 words), and follows a calibrated efficiency.
func TestWireFraction(t *testing.T) {
	sh := Shape{Ranks: 16, Nodes: 2}
	pcie := h100(50e9, 0)
	pcie.PCI, pcie.IntraBW = true, 16e9
	tests := []struct {
		name  string
		hw    Hardware
		p     Params
		class topology.Class
		proto Proto
		want  float64
	}{
		{"H100 NVLink, Simple", h100(50e9, 0), Nominal, topology.Intra, Simple, 20.6 / 25},
		{"H100 NVLink, LL128", h100(50e9, 0), Nominal, topology.Intra, LL128, 20.6 / 25 * 15 / 16},
		{"NIC, Simple", h100(50e9, 0), Nominal, topology.Inter, Simple, 48.0 / 50},
		{"NIC, LL", h100(50e9, 0), Nominal, topology.Inter, LL, 48.0 / 50 / 2},
		{"NIC at half its calibrated efficiency", h100(50e9, 0), Params{IntraEff: 1, InterEff: 0.5}, topology.Inter, Simple, 0.48},
		{"PCIe, LL128", pcie, Nominal, topology.Intra, LL128, 12.0 / 16 * 15 / 16},
		{"no NIC speed", h100(0, 0), Nominal, topology.Inter, Simple, 1},
	}
	for _, tc := range tests {
		m := NewModel(tc.hw)
		m.Params = tc.p
		if got := m.wireFraction(tc.class, sh, tc.proto); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %.6f, want %.6f", tc.name, got, tc.want)
		}
	}
}

// TestHostCPU: across nodes NCCL's tuner reads the host CPU (tuning.cc at
// 5067397c): an AMD x86 host posts to the network at 2 µs where an Intel
// one takes 1 (getNetOverhead), three times that per intra-node step of a
// Simple ring, and caps LL by llMaxBws row 1 (index1). By hand, a ring
// Simple all-reduce of 64 MiB over 2 × 8 A100 (NVLink ring Simple 3.4 µs
// per step, network 14 µs, 28 intra and 2 inter steps, the 1.4 plateau):
// Intel (8.4 + 28·max(3.4, 3) + 2·14)·1.4 = 184.24 µs, AMD
// (8.4 + 28·max(3.4, 6) + 2·14)·1.4 = 286.16 µs. Ring LL's algbw: Intel
// min(39.0, 0.5·min(240, 192))·16/30 = 20.8 GB/s, AMD 22.5·16/30 = 12 GB/s.
// One node reads no host: the same latency on both.
func TestHostCPU(t *testing.T) {
	intel := Hardware{Arch: Ampere, IntraBW: 300e9, NICBW: 25e9, NICsPerNode: 8}
	amd := intel
	amd.CPU = scenarios.HostAMD
	for _, c := range []struct {
		hw           Hardware
		lat, llAlgBW float64 // µs, GB/s
	}{{intel, 184.24, 20.8}, {amd, 286.16, 12}} {
		m := NewModel(c.hw)
		ring, ok := m.Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, Ring, Simple, 64*units.MiB)
		if got := float64(ring.Latency) / 1e6; !ok || math.Abs(got-c.lat) > 1e-3 {
			t.Errorf("%q host: ring Simple latency %.3f µs, want %.3f", c.hw.CPU, got, c.lat)
		}
		ll, ok := m.Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, Ring, LL, 64*units.KiB)
		if !ok || math.Abs(ll.AlgBW/1e9-c.llAlgBW) > 1e-6 {
			t.Errorf("%q host: ring LL algbw %.4g GB/s, want %.4g", c.hw.CPU, ll.AlgBW/1e9, c.llAlgBW)
		}
		one, _ := m.Cost(AllReduce, Shape{Ranks: 8, Nodes: 1}, Ring, Simple, 64*units.MiB)
		if want := 8.4 + 14*3.4; math.Abs(float64(one.Latency)/1e6-want) > 1e-3 {
			t.Errorf("%q host, one node: latency %.3f µs, want %.3f", c.hw.CPU, float64(one.Latency)/1e6, want)
		}
	}
	// A scenario's cluster.host.cpu reaches the model, and the calibration
	// file keeps it.
	def, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", def, []string{"cluster.gpu=H100-80GB", "cluster.host.cpu=amd"})
	if err != nil {
		t.Fatal(err)
	}
	hw := HardwareOf(s)
	if hw.CPU != scenarios.HostAMD {
		t.Fatalf("cluster.host.cpu=amd: hardware host %q", hw.CPU)
	}
	back, err := CalibrationOf((&Calibration{HW: hw}).File())
	if err != nil || back.HW != hw || !strings.Contains(hw.Describe(), "AMD host") {
		t.Errorf("calibration round trip %+v (%v), want %+v; describe %q", back, err, hw, hw.Describe())
	}
	// An Intel host is one host whether the file leaves host_cpu out (as
	// files before cluster.host.cpu did, and File writes it) or says
	// intel: a calibration on it is measured on the same cluster, and on
	// the AMD one neither is.
	intelS, err := scenarios.Load("default.yaml", def, []string{"cluster.gpu=H100-80GB", "cluster.host.cpu=intel"})
	if err != nil {
		t.Fatal(err)
	}
	ihw := HardwareOf(intelS)
	f := (&Calibration{HW: ihw}).File()
	if f.Hardware.HostCPU != "" {
		t.Errorf("Intel host written as host_cpu %q, want it left out", f.Hardware.HostCPU)
	}
	for _, cpu := range []string{"", "intel"} {
		f.Hardware.HostCPU = cpu
		c, err := CalibrationOf(f)
		if err != nil || !c.Measured(ihw) || c.Measured(hw) {
			t.Errorf("host_cpu %q: measured on Intel %v, on AMD %v (%v); want true, false", cpu, err == nil && c.Measured(ihw), err == nil && c.Measured(hw), err)
		}
	}
}

// TestBufferChannels: the channels NCCL sets up per communicator, by hand
// from connect.cc at 5067397c (the search's channels doubled, at most 64;
// doubled again on Hopper+ across nodes below 16 when a channel runs above
// 45 GB/s): one H100 node 16 → 32 (NVIDIA/nccl#1685 logs 32); 2 × 8 H100
// with 8 NDR NICs a node: the ring graph's 8 channels of 48 GB/s (one per
// NIC, ringGraphChannels) → 16, not doubled again (connect.cc line 473 at
// v2.29.2-1 needs fewer than 16); 2 × 6 H100 on 6 NICs 6 → 12 → 24 (a 48
// GB/s channel, 12 < 16); 2 × 4 H100 on 4 NICs two per NIC 8 → 16; 8 H100
// on 800 Gb/s NICs two per NIC 16 → 32; one rank per node on an NDR NIC 2 → 4; a
// PCIe node 2 → 4; 8 GPUs sharing one 100 Gb/s NIC 2 → 4; one rank per
// node on a Blackwell XDR NIC (a 48 GB/s channel) 2 → 4 → 8.
func TestBufferChannels(t *testing.T) {
	pci := Hardware{Arch: Ampere, PCI: true, IntraBW: 32e9, NICBW: 12.5e9, NICsPerNode: 1}
	eth := Hardware{Arch: Ampere, IntraBW: 300e9, NICBW: 12.5e9, NICsPerNode: 1}
	xdr := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 100e9, NICsPerNode: 8}
	for _, c := range []struct {
		name string
		hw   Hardware
		sh   Shape
		want int
	}{
		{"H100 node", h100(50e9, 0), Shape{Ranks: 8, Nodes: 1}, 32},
		{"2 × 8 H100", h100(50e9, 0), Shape{Ranks: 16, Nodes: 2}, 2 * 8},
		{"2 × 6 H100", h100(50e9, 0), Shape{Ranks: 12, Nodes: 2}, 2 * 2 * 6},
		{"2 × 4 H100", h100(50e9, 0), Shape{Ranks: 8, Nodes: 2}, 2 * 2 * 4},
		{"2 × 8 H100 800G", h100(100e9, 0), Shape{Ranks: 16, Nodes: 2}, 2 * 2 * 8},
		{"H100 one rank a node", h100(50e9, 0), Shape{Ranks: 2, Nodes: 2}, 4},
		{"PCIe node", pci, Shape{Ranks: 8, Nodes: 1}, 4},
		{"A100, one shared NIC", eth, Shape{Ranks: 32, Nodes: 4}, 4},
		{"B300 one rank a node", xdr, Shape{Ranks: 4, Nodes: 4}, 8},
		{"B300 2 × 8", xdr, Shape{Ranks: 16, Nodes: 2}, 32},
		// RCCL on one node of 8 MI300X: rome_model_79's 28 rings, doubled
		// (connect.cc:660 at 0cbce2a7); NCCL's count across nodes.
		{"MI300X node", mi300x(), Shape{Ranks: 8, Nodes: 1}, 56},
		{"2 × 8 MI300X", mi300x(), Shape{Ranks: 16, Nodes: 2}, 32},
	} {
		if got := BufferChannels(c.hw, c.sh); got != c.want {
			t.Errorf("%s: %d channels, want %d", c.name, got, c.want)
		}
	}
}

// TestPAT: NCCL's PAT for all-gather and reduce-scatter over one GPU per
// node (tuning.cc at 5067397c, by hand). 16 nodes × 1 H100 on NDR (one 50
// GB/s NIC, 48 GB/s as the ring search sees it):
//   - PAT: 8.0 + log2(16)·14/3.5 + 16·2.8 = 68.8 µs; busBw 48 × 0.75 = 36
//     GB/s, not converted to algorithm bandwidth; 64 KiB: 68.8 + 1.820 =
//     70.620 µs.
//   - ring LL (what NCCL took before PAT): 6.6 + 15·5.0 (the tree's
//     network LL latency at ppn 1) = 81.6 µs; min(20.4, 48/2)·16/15 =
//     21.76 GB/s; 64 KiB: 84.612 µs.
//
// So Choose picks PAT at 64 KiB; at 1 GiB the ring's Simple (51.2 GB/s)
// wins. PAT is not offered with 8 GPUs a node, for all-reduce, or under
// TCPXO's NCCL_ALGO=Ring,Tree; on 2 nodes its 17.6 µs loses to ring LL's
// 11.6 µs.
func TestPAT(t *testing.T) {
	m := NewModel(h100(50e9, 0))
	sh := Shape{Ranks: 16, Nodes: 16}
	for _, op := range []Op{AllGather, ReduceScatter} {
		pat, ok := m.Cost(op, sh, PAT, Simple, 64*units.KiB)
		if !ok || math.Abs(float64(pat.Latency)/1e6-68.8) > 1e-6 || math.Abs(pat.AlgBW/1e9-36) > 1e-9 || math.Abs(float64(pat.Time)/1e6-70.620) > 1e-3 {
			t.Errorf("%v PAT: ok %v, latency %v, algbw %.4g, time %v; want 68.8 µs, 36 GB/s, 70.620 µs", op, ok, pat.Latency, pat.AlgBW, pat.Time)
		}
		ring, _ := m.Cost(op, sh, Ring, LL, 64*units.KiB)
		if math.Abs(float64(ring.Time)/1e6-84.612) > 1e-3 {
			t.Errorf("%v ring LL: %v, want 84.612 µs", op, ring.Time)
		}
		if c, _ := m.Choose(op, sh, Auto, 64*units.KiB); c.Algo != PAT {
			t.Errorf("%v 64 KiB over 16 × 1: %v/%v, want pat", op, c.Algo, c.Proto)
		}
		if c, _ := m.Choose(op, sh, Auto, 8*units.MiB); c.Algo != PAT {
			t.Errorf("%v 8 MiB over 16 × 1: %v/%v, want pat (docs/collectives.md: up to 8 MiB)", op, c.Algo, c.Proto)
		}
		if c, _ := m.Choose(op, sh, Auto, 16*units.MiB); c.Algo == PAT {
			t.Errorf("%v 16 MiB over 16 × 1: pat, want ring (docs/collectives.md: up to 8 MiB)", op)
		}
		if c, _ := m.Choose(op, sh, Auto, units.GiB); c.Algo != Ring || c.Proto != Simple {
			t.Errorf("%v 1 GiB over 16 × 1: %v/%v, want ring/Simple", op, c.Algo, c.Proto)
		}
		if c, _ := m.Choose(op, Shape{Ranks: 2, Nodes: 2}, Auto, 8); c.Algo != Ring {
			t.Errorf("%v 8 B over 2 × 1: %v, want ring (PAT 17.6 µs, ring LL 11.6)", op, c.Algo)
		}
		for _, p := range []Proto{LL, LL128} {
			if _, ok := m.Cost(op, sh, PAT, p, units.MiB); ok {
				t.Errorf("%v PAT with %v: NCCL runs PAT with Simple only", op, p)
			}
		}
	}
	if _, ok := m.Cost(AllGather, Shape{Ranks: 128, Nodes: 16}, PAT, Simple, units.MiB); ok {
		t.Error("PAT with 8 GPUs a node")
	}
	if _, ok := m.Cost(AllReduce, sh, PAT, Simple, units.MiB); ok {
		t.Error("PAT all-reduce")
	}
	if c, _ := NewModel(TCPXO(h100(25e9, 0))).Choose(AllGather, sh, Auto, 64*units.KiB); c.Algo == PAT {
		t.Error("PAT under TCPXO's NCCL_ALGO=Ring,Tree")
	}
	// The calibration file keeps NCCL_ALGO.
	hw := TCPXO(h100(25e9, 0))
	back, err := CalibrationOf((&Calibration{HW: hw}).File())
	if err != nil || back.HW != hw {
		t.Errorf("calibration round trip %+v (%v), want %+v", back, err, hw)
	}
	f := (&Calibration{HW: hw}).File()
	f.Hardware.Algos = []string{"Rign"}
	if _, err := CalibrationOf(f); err == nil || !strings.Contains(err.Error(), `hardware.algos: "Rign"`) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

// TestPluginLatency: NCCL chooses by the latency the network plugin
// reports (aws-ofi-nccl: 75 µs on p5), zerosim times the choice on the
// link's latency (the EFA-p5 preset's 18 µs, 16 beyond NDR). A 128 MiB
// all-gather over 2 × 8 H100, by hand (tuning.cc at 5067397c):
//   - ring Simple: 8.4 + 14·max(3.4, 3) + (14 + 2·16) = 102.0 µs, algbw
//     370.8·16/15 = 395.52 GB/s: 441.34 µs; ranked with 75 µs: 220.0 µs
//     of latency, 559.3 µs.
//   - ring LL128: 14 + 14·1.9 + (4 + 16) = 60.6 µs, algbw
//     min(0.92·370.8, 8·36.7)·16/15 = 313.17 GB/s (the ring graph's 8
//     channels of 48 GB/s, one per NIC: ringGraphChannels): 489.17 µs;
//     ranked with 75 µs: 119.6 µs of latency, 548.17 µs.
//
// So the physical model alone takes Simple (441.34 µs) and NCCL, ranking
// with 75 µs, LL128, which then takes 489.17 µs on the link. (At 256 MiB
// both take Simple since LL128 is capped at 8 × 36.7 GB/s.)
func TestPluginLatency(t *testing.T) {
	phys := h100(50e9, 16*units.Microsecond)
	efa := phys
	efa.PluginLatency = 75 * units.Microsecond
	sh, size := Shape{Ranks: 16, Nodes: 2}, units.Bytes(128*units.MiB)
	a, _ := NewModel(phys).Choose(AllGather, sh, Auto, size)
	b, _ := NewModel(efa).Choose(AllGather, sh, Auto, size)
	if a.Algo != Ring || a.Proto != Simple || math.Abs(float64(a.Time)/1e6-441.34) > 0.01 {
		t.Errorf("link latency alone: %v/%v %.2f µs, want ring/Simple 441.34", a.Algo, a.Proto, float64(a.Time)/1e6)
	}
	if b.Algo != Ring || b.Proto != LL128 || math.Abs(float64(b.Time)/1e6-489.17) > 0.01 {
		t.Errorf("ranked by the plugin's 75 µs: %v/%v %.2f µs, want ring/LL128 489.17", b.Algo, b.Proto, float64(b.Time)/1e6)
	}
	if math.Abs(float64(b.cost)/1e6-548.17) > 0.01 {
		t.Errorf("NCCL's cost of ring/LL128 with 75 µs: %.2f µs, want 548.17", float64(b.cost)/1e6)
	}
	// The EFA presets carry the plugin's figure, and a calibration file
	// keeps it.
	def, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", def, []string{"cluster.inter.preset=EFA-p5"})
	if err != nil {
		t.Fatal(err)
	}
	hw := HardwareOf(s)
	if hw.PluginLatency != 75*units.Microsecond || hw.InterLatency != 16*units.Microsecond {
		t.Errorf("EFA-p5: plugin latency %v, link latency beyond NDR %v; want 75µs, 16µs", hw.PluginLatency, hw.InterLatency)
	}
	back, err := CalibrationOf((&Calibration{HW: hw}).File())
	if err != nil || back.HW != hw {
		t.Errorf("calibration round trip %+v (%v), want %+v", back, err, hw)
	}
	// p4d's plugin reports the same 75 µs (platform-aws.cpp at 2daf7d30).
	p4d, err := scenarios.Load("default.yaml", def, []string{"cluster.inter.preset=EFA-p4d"})
	if err != nil {
		t.Fatal(err)
	}
	if got := HardwareOf(p4d).PluginLatency; got != 75*units.Microsecond {
		t.Errorf("EFA-p4d: plugin latency %v, want 75µs", got)
	}
	// InfiniBand's plugin reports none.
	ndr, err := scenarios.Load("default.yaml", def, []string{"cluster.inter.preset=NDR"})
	if err != nil {
		t.Fatal(err)
	}
	if got := HardwareOf(ndr).PluginLatency; got != 0 {
		t.Errorf("NDR: plugin latency %v, want 0", got)
	}
}
