package collectives

import (
	"math"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestNCCLTuningsCoverReleases: every release a scenario may name has
// exactly one tuner, and the default is the last, the commit the model
// pins.
func TestNCCLTuningsCoverReleases(t *testing.T) {
	var got []string
	for _, tu := range ncclTunings {
		got = append(got, tu.releases...)
	}
	if !slices.Equal(got, scenarios.NCCLReleases) {
		t.Errorf("tuners cover %q; scenarios.NCCLReleases are %q", got, scenarios.NCCLReleases)
	}
	if !slices.Contains(defaultTuning.releases, DefaultNCCL) || (Hardware{}).tuning() != defaultTuning {
		t.Errorf("the default tuner is %q, want %s", defaultTuning.releases, DefaultNCCL)
	}
	for i := range ncclTunings {
		for _, r := range ncclTunings[i].releases {
			if got := versioned(Hardware{}, r).tuning(); got != &ncclTunings[i] {
				t.Errorf("NCCL %s runs the tuner of %q, want its own (%q)", r, got.releases, ncclTunings[i].releases)
			}
		}
	}
}

// versioned is hw under NCCL release v.
func versioned(hw Hardware, v string) Hardware {
	hw.NCCL = v
	return hw
}

// TestNCCLVersionLatencies holds the latencies that changed between NCCL
// releases, from tuning.cc's formulas by hand (µs; H100 nodes on NDR
// InfiniBand, which adds nothing to NCCL's tables; 8-byte collectives,
// whose bandwidth and fill terms are below 0.01 µs):
//   - NVLS tree, 2 × 8: baseLat 0 + NVLink hop + 2·log2(2)·network hop:
//     23 + 2·14 (2.19, 2.20), 25 + 2·14 (2.21 to 2.28.7), 25 + 2·20.9
//     (2.28.9 on);
//   - tree Simple, 2 × 8: baseLat + 2·((8−1)·NVLink hop + log2(2)·network
//     hop): 0 + 2·(7·28 + 28) to 2.22, 8.4 + 2·(7·4 + 14) from 2.23;
//   - ring LL, 2 × 1: baseLat 6.6 + 2(nodes−1) network hops, the ring's
//     2.7 µs to 2.22, the tree's 5.0 from 2.23 ("With ppn=1 latencies are
//     fully exposed, use the Tree network latency").
func TestNCCLVersionLatencies(t *testing.T) {
	hw := h100(50e9, 0)
	const (
		nvlinkNVLSTree219, nvlinkNVLSTree221 = 23.0, 25.0
		netNVLSTree, netNVLSTree2289         = 14.0, 20.9
		treeSimpleHop222                     = 28.0
		baseTreeSimple223, nvlinkTreeSimple  = 8.4, 4.0
		netTreeSimple                        = 14.0
		baseRingLL, netRingLL, netTreeLL     = 6.6, 2.7, 5.0
	)
	cases := []struct {
		release string
		algo    Algo
		proto   Proto
		sh      Shape
		want    float64
	}{
		{"2.19", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree219 + 2*netNVLSTree},
		{"2.20", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree219 + 2*netNVLSTree},
		{"2.21", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree221 + 2*netNVLSTree},
		{"2.26", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree221 + 2*netNVLSTree},
		{"2.28.7", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree221 + 2*netNVLSTree},
		{"2.28.9", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree221 + 2*netNVLSTree2289},
		{"", NVLSTree, Simple, Shape{Ranks: 16, Nodes: 2}, nvlinkNVLSTree221 + 2*netNVLSTree2289},
		{"2.22", Tree, Simple, Shape{Ranks: 16, Nodes: 2}, 2 * (7*treeSimpleHop222 + treeSimpleHop222)},
		{"2.23", Tree, Simple, Shape{Ranks: 16, Nodes: 2}, baseTreeSimple223 + 2*(7*nvlinkTreeSimple+netTreeSimple)},
		{"2.30", Tree, Simple, Shape{Ranks: 16, Nodes: 2}, baseTreeSimple223 + 2*(7*nvlinkTreeSimple+netTreeSimple)},
		{"2.22", Ring, LL, Shape{Ranks: 2, Nodes: 2}, baseRingLL + 2*netRingLL},
		{"2.23", Ring, LL, Shape{Ranks: 2, Nodes: 2}, baseRingLL + 2*netTreeLL},
	}
	for _, c := range cases {
		ch, ok := NewModel(versioned(hw, c.release)).Cost(AllReduce, c.sh, c.algo, c.proto, 8)
		if got := float64(ch.Time) / 1e6; !ok || math.Abs(got-c.want) > 0.01 {
			t.Errorf("NCCL %q: %v/%v over %d ranks on %d nodes, 8 B: %.3f µs (ok %v), want %.3f", c.release, c.algo, c.proto, c.sh.Ranks, c.sh.Nodes, got, ok, c.want)
		}
	}
}

// TestNCCLVersionBandwidths holds the bandwidth rules that changed between
// releases, by hand from tuning.cc (algorithm bandwidth, GB/s):
//   - ring LL128 over 2 × 1 H100 (one 50 GB/s NIC: 48 GB/s of the search,
//     2 channels, cap 2 × 36.7): × 0.7 with one rank per node to 2.22,
//     × 0.92 from 2.23; all-reduce's algbw is the bus bandwidth × 2/2;
//   - ring LL on one Ampere node (NVLink 300 GB/s × 20/25 = 240): 2.19
//     and 2.20 take a third for all-gather and a quarter for all-reduce
//     (tuning.cc line 180 at v2.19.4-1, 181 at v2.20.5-1), 2.21 a half
//     (line 180 at v2.21.5-1), capped by llMaxBws' Ampere row (87.7);
//     algbw × 8/7 (all-gather) and × 8/14 (all-reduce);
//   - ring LL on one H100 node (450 × 20.6/25 = 370.8, half 185.4): the
//     Hopper row of llMaxBws is Ampere's 87.7 to 2.20, 141 from 2.21;
//   - PAT all-gather over 4 × 1 H100 (48 GB/s): none to 2.22, × .85 in
//     2.23, × .75 from 2.24;
//   - tree LL128 over 2 × 8 B200 at 1 GiB (no tree correction from 512 MiB):
//     min(NVLink 900 × 40.1/50, 2 × 8 × 48) × .92 × 120/128 = 622.55, capped
//     at 16 channels × perChMaxTreeLL128Bws[Blackwell][2 nodes]: 2 × 36.7
//     from 2.25 (no cap), 31.67 from 2.28.3; before 2.25 Blackwell reads
//     Hopper's 36.7; algbw is half the bus bandwidth.
func TestNCCLVersionBandwidths(t *testing.T) {
	h := h100(50e9, 0)
	a100 := a100SXM(25e9, 8, 0)
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	const net1 = 48.0 // one 400 Gb/s NIC as NCCL's search finds it
	treeLL128B200 := math.Min(900*40.1/50, 2*8*net1) * .92 * 120 / 128
	cases := []struct {
		release string
		hw      Hardware
		op      Op
		algo    Algo
		proto   Proto
		sh      Shape
		size    units.Bytes
		want    float64 // 0: NCCL has no such combination
	}{
		{"2.22", h, AllReduce, Ring, LL128, Shape{Ranks: 2, Nodes: 2}, units.GiB, net1 * 0.7},
		{"2.23", h, AllReduce, Ring, LL128, Shape{Ranks: 2, Nodes: 2}, units.GiB, net1 * 0.92},
		{"2.19", a100, AllGather, Ring, LL, Shape{Ranks: 8, Nodes: 1}, units.MiB, 240.0 / 3 * 8 / 7},
		{"2.20", a100, AllGather, Ring, LL, Shape{Ranks: 8, Nodes: 1}, units.MiB, 240.0 / 3 * 8 / 7},
		{"2.20", a100, AllReduce, Ring, LL, Shape{Ranks: 8, Nodes: 1}, units.MiB, 240.0 / 4 * 8 / 14},
		{"2.21", a100, AllGather, Ring, LL, Shape{Ranks: 8, Nodes: 1}, units.MiB, 87.7 * 8 / 7},
		{"2.19", h, AllReduce, Ring, LL, Shape{Ranks: 8, Nodes: 1}, units.MiB, 87.7 * 8 / 14},
		{"2.21", h, AllReduce, Ring, LL, Shape{Ranks: 8, Nodes: 1}, units.MiB, 141.0 * 8 / 14},
		{"2.22", h, AllGather, PAT, Simple, Shape{Ranks: 4, Nodes: 4}, units.MiB, 0},
		{"2.23", h, AllGather, PAT, Simple, Shape{Ranks: 4, Nodes: 4}, units.MiB, net1 * .85},
		{"2.24", h, AllGather, PAT, Simple, Shape{Ranks: 4, Nodes: 4}, units.MiB, net1 * .75},
		{"2.24", b200, AllReduce, Tree, LL128, Shape{Ranks: 16, Nodes: 2}, units.GiB, 16 * 36.7 / 2},
		{"2.26", b200, AllReduce, Tree, LL128, Shape{Ranks: 16, Nodes: 2}, units.GiB, treeLL128B200 / 2},
		{"2.28.3", b200, AllReduce, Tree, LL128, Shape{Ranks: 16, Nodes: 2}, units.GiB, 16 * 31.67 / 2},
	}
	for _, c := range cases {
		ch, ok := NewModel(versioned(c.hw, c.release)).Cost(c.op, c.sh, c.algo, c.proto, c.size)
		if c.want == 0 {
			if ok {
				t.Errorf("NCCL %s: %v/%v %v over %d ranks runs (%.2f GB/s); NCCL has none", c.release, c.algo, c.proto, c.op, c.sh.Ranks, ch.AlgBW/1e9)
			}
			continue
		}
		if got := ch.AlgBW / 1e9; !ok || math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("NCCL %s: %v/%v %v over %d ranks on %d nodes: algbw %.4f GB/s (ok %v), want %.4f", c.release, c.algo, c.proto, c.op, c.sh.Ranks, c.sh.Nodes, got, ok, c.want)
		}
	}
}

// TestNCCLVersionBlackwellLL128: before 2.25 NCCL's LL128 switch disables
// compute capability 10.0 (tuning.cc "default: pEnable &= 0" at
// v2.24.3-1), so a B200 cluster pinned to LL128 has no combination left;
// from 2.25 it runs.
func TestNCCLVersionBlackwellLL128(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8, Protos: 1 << LL128}
	for _, c := range []struct {
		release string
		runs    bool
	}{{"2.24", false}, {"2.25", true}, {"", true}} {
		_, err := NewModel(versioned(b200, c.release)).Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, Auto, units.MiB)
		if (err == nil) != c.runs {
			t.Errorf("NCCL %q, B200, NCCL_PROTO=LL128: err %v, want runs %v", c.release, err, c.runs)
		}
	}
}

// TestNCCLVersionNVLSTreeCorrection: from 2.29.2 ncclTopoGetAlgoTime
// corrects an NVLS tree's all-reduce on Blackwell with an x86 host by
// the tree factor, 0.5 for Simple at 1 MiB (log2(1 MiB / 64) = 14); 2.28.9
// does not.
func TestNCCLVersionNVLSTreeCorrection(t *testing.T) {
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8}
	bw := func(v string) float64 {
		ch, ok := NewModel(versioned(b200, v)).Cost(AllReduce, Shape{Ranks: 16, Nodes: 2}, NVLSTree, Simple, units.MiB)
		if !ok {
			t.Fatalf("NCCL %s: no NVLS tree", v)
		}
		return ch.AlgBW
	}
	if r := bw("2.29.2") / bw("2.28.9"); math.Abs(r-0.5) > 1e-9 {
		t.Errorf("NVLS tree algbw 2.29.2 / 2.28.9 = %.4f, want the tree correction 0.5", r)
	}
}

// TestAccuracyByNCCLRelease is the nominal model's accuracy on every
// shipped log whose NCCL version is known, at the default tuner (2.30) and
// at the log's own release (the table of the accuracy tests, over 1 MiB–1
// GiB; the GB200 racks over all their rows, as TestGB200RackAccuracy), and
// holds the latter's figures. The A3 Mega log's 2.21.5 is its installer's
// (accuracy_test.go, sharedLogs), not printed in the log: under 2.21's
// tuner (tree Simple at 28 µs a hop and no base latency, tuning.cc at
// v2.21.5-1) NCCL's own ranking picks the ring below 128 MiB and prices the
// tree at 480 µs (2·(7·28 + 28 + 2·8), TCPXO's 8 µs beyond NDR twice, the
// flush) where the log's small all-reduce takes 123 µs, the
// default's tree Simple latency (8.4 + 2·(7·4 + 14 + 2·8) = 124.4 µs): the
// log runs as the 2.23-and-later tuner has it (or as Google's tuner plugin
// chose), and 2.21's tables miss it.
func TestAccuracyByNCCLRelease(t *testing.T) {
	type row struct {
		name, release string
		errs          func(hw Hardware) accuracy
		hw            Hardware
		held          accuracy // at release
	}
	onLog := func(sl sharedLog) func(Hardware) accuracy {
		return func(hw Hardware) accuracy { sl.hw = hw; return logErrors(t, sl, NewModel(hw)) }
	}
	onRack := func(r gb200Rack) func(Hardware) accuracy {
		return func(hw Hardware) accuracy {
			lg := readShared(t, sharedLog{file: r.file})
			c := CurveOf(&lg)
			var errs []float64
			for j, s := range c.Sizes {
				ch, err := NewModel(hw).Time(lg.Op, Shape{Ranks: 72 * r.racks, Nodes: r.racks}, Auto, units.Bytes(s))
				if err != nil {
					t.Fatal(err)
				}
				errs = append(errs, float64(ch.Time)/1e6/c.TimesUS[j]-1)
			}
			md, mx := Summary(errs)
			return accuracy{md, mx}
		}
	}
	rows := []row{
		{sharedLogs[1].file, "2.26", onLog(sharedLogs[1]), sharedLogs[1].hw, accuracy{0.033, 0.081}},
		{sharedLogs[2].file, "2.26", onLog(sharedLogs[2]), sharedLogs[2].hw, accuracy{0.069, 0.253}},
		{sharedLogs[3].file, "2.21", onLog(sharedLogs[3]), sharedLogs[3].hw, accuracy{0.221, 0.587}},
		{publishedLogs[0].file, "2.23", onLog(publishedLogs[0].sharedLog), publishedLogs[0].hw, accuracy{0.035, 0.218}},
	}
	for _, r := range gb200Racks {
		rows = append(rows, row{r.file, "2.26", onRack(r), gb200CoreWeave(), r.known})
	}
	for _, r := range rows {
		before := r.errs(r.hw)
		after := r.errs(versioned(r.hw, r.release))
		t.Logf("| %s | %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% |", r.name, r.release, 100*before.median, 100*before.max, 100*after.median, 100*after.max)
		if math.Abs(after.median-r.held.median) > 0.005 || math.Abs(after.max-r.held.max) > 0.005 {
			t.Errorf("%s at NCCL %s: median %.1f %%, max %.1f %%; held at %.1f %% and %.1f %%", r.name, r.release, 100*after.median, 100*after.max, 100*r.held.median, 100*r.held.max)
		}
	}
}

// TestCalibrationKeepsNCCLVersion: a calibration fitted under a release
// writes it (hardware.nccl_version) and reads it back, so the file is
// measured on that release's hardware and no other (Measured).
func TestCalibrationKeepsNCCLVersion(t *testing.T) {
	hw := versioned(h100(50e9, 0), "2.26")
	c := &Calibration{HW: hw, Params: Nominal, Curves: []Curve{{Op: AllReduce, Shape: Shape{Ranks: 16, Nodes: 2}, Sizes: []int64{1 << 20}, TimesUS: []float64{70}}}}
	f := c.File()
	if f.Hardware.NCCLVersion != "2.26" {
		t.Fatalf("hardware.nccl_version %q, want 2.26", f.Hardware.NCCLVersion)
	}
	back, err := CalibrationOf(f)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Measured(hw) || back.Measured(h100(50e9, 0)) {
		t.Errorf("read back %+v: measured on 2.26 %v, on the default %v; want true, false", back.HW, back.Measured(hw), back.Measured(h100(50e9, 0)))
	}
	// A B300's compute capability (10.3, which LL128's switch reads) is
	// kept the same way.
	b300 := Hardware{Arch: Blackwell, CompCap: 103, NVLS: true, IntraBW: 900e9, NICBW: 100e9, NICsPerNode: 8, NCCL: "2.26"}
	c.HW = b300
	if back, err = CalibrationOf(c.File()); err != nil || !back.Measured(b300) {
		t.Errorf("B300 read back %+v (err %v): not measured on %+v", back, err, b300)
	}
}

// TestTreeOneRankPerNodeLL128 is the mechanism behind the known miss of
// the tree all-reduce over one H100 per node (testdata/nccl-tests
// h100_2node_1gpu_allreduce_roce_tree.log, whose errors unseenLogs holds:
// +17 % to +31 % from 4 MiB): at 4 MiB and from 16 MiB NCCL's cost ranks
// LL128 first (tuning.cc at 5067397c and at v2.21.5-1 alike), and NCCL's
// own LL128 tree bandwidth there is the search's 2 channels × 36.7 GB/s
// (perChMaxTreeLL128Bws[Hopper][2 nodes]) × treeCorrectionFactor (0.8 at
// 4 MiB, 0.9 at 16 and 32 MiB) / 2, 33.03 GB/s from 16 MiB, where the
// log's rows grow at 42.8 GB/s from 16 to 32 MiB; the model adds its LL128
// fill (treeLL128Fill: 2.1 steps × a 72,000 B chunk, 36,000 at 4 MiB, × 2
// channels) to NCCL's time. The latency
// is baseLat 14 + 2 × (tree network LL128 8.5 + RoCE's 1 µs beyond NDR) =
// 33 µs. Timing LL128 like Simple instead (the tree's bandwidth without
// the correction, plus the fill) would take these rows from +30 % to
// +18 %, but moves the logs of eight ranks per node away (nominal max:
// 2 × 8 H100 8.9 → 15.9 %, 4 × 8 H100 25.3 → 35.4 %, OCI A100 median 3.5
// → 9.0 %, GCP B200 max 35.4 → 38.6 %), where NCCL's correction describes
// what the tree runs at: it is kept.
func TestTreeOneRankPerNodeLL128(t *testing.T) {
	const lat = 14 + 2*(8.5+1) // µs
	m := NewModel(h100(50e9, units.Microsecond))
	for _, c := range []struct {
		size       units.Bytes
		proto      Proto
		correction float64 // treeCorrectionFactor[LL128][log2(size/64)]
		fill       float64 // B: 2.1 steps × chunk × 2 channels
	}{
		{2 * units.MiB, Simple, 0, 0},
		{4 * units.MiB, LL128, 0.8, 2.1 * 36000 * 2},
		{8 * units.MiB, Simple, 0, 0},
		{16 * units.MiB, LL128, 0.9, 2.1 * 72000 * 2},
		{32 * units.MiB, LL128, 0.9, 2.1 * 72000 * 2},
	} {
		ch, err := m.Time(AllReduce, Shape{Ranks: 2, Nodes: 2}, Tree, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Proto != c.proto {
			t.Errorf("%v: tree/%v, want tree/%v", c.size, ch.Proto, c.proto)
			continue
		}
		if c.proto != LL128 {
			continue
		}
		algbw := 2 * 36.7 * c.correction / 2
		want := lat + (c.fill+float64(c.size))/(algbw*1e3)
		if got := float64(ch.Time) / 1e6; math.Abs(got-want) > 0.01 || math.Abs(ch.AlgBW/1e9-algbw) > 1e-9 {
			t.Errorf("%v: tree/LL128 %.2f µs at %.4f GB/s, want %.2f at %.4f", c.size, got, ch.AlgBW/1e9, want, algbw)
		}
	}
}

// TestNCCLVersionRingLLTime holds 2.19's ring LL by hand from tuning.cc at
// v2.19.1-1 (the same lines at v2.19.4-1): line 180 gives ring LL
// min(llMaxBw, busBw × (nNodes > 1 || allreduce || reduce ? 1/4 : 1/3)),
// half only from v2.21.5-1. One A100 node of 8 (NVLink 300 GB/s × 20/25 =
// 240 GB/s of the search, llMaxBws[Ampere][1 node] 87.7), 1 MiB:
//   - all-gather: baseLat 6.6 + 7 steps × NVLink ring LL 0.6 = 10.8 µs, and
//     algbw 240/3 × 8/7 (the half would hit the 87.7 cap: 100.2 GB/s);
//   - all-reduce: 6.6 + 14 × 0.6 = 15.0 µs, and algbw 240/4 × 8/14 (the
//     half: 87.7 × 8/14).
func TestNCCLVersionRingLLTime(t *testing.T) {
	const (
		baseRingLL, nvlinkRingLL = 6.6, 0.6
		busA100                  = 240.0
		mib                      = 1 << 20
	)
	a100 := a100SXM(25e9, 8, 0)
	for _, c := range []struct {
		op   Op
		want float64 // µs
	}{
		{AllGather, baseRingLL + 7*nvlinkRingLL + mib/(busA100/3*8/7*1e3)},
		{AllReduce, baseRingLL + 14*nvlinkRingLL + mib/(busA100/4*8/14*1e3)},
	} {
		ch, ok := NewModel(versioned(a100, "2.19")).Cost(c.op, Shape{Ranks: 8, Nodes: 1}, Ring, LL, units.MiB)
		if got := float64(ch.Time) / 1e6; !ok || math.Abs(got-c.want) > 0.01 {
			t.Errorf("NCCL 2.19: ring/LL %v over one A100 node, 1 MiB: %.3f µs (ok %v), want %.3f", c.op, got, ok, c.want)
		}
	}
}

// TestNCCLVersionPatchLevels holds the constants that make 2.28 and 2.29
// patch-level releases, and the default's NVLS tree cap, one time each,
// by hand from tuning.cc at the tag named (all-reduce, 1 GiB, Intel host;
// from 512 MiB no tree correction applies):
//   - ring LL128 over 2 × 8 B200 with a 800 Gb/s NIC per GPU: baseLat 14 +
//     28 NVLink steps × 1.9 + 2 network steps × 4.0 = 75.2 µs; bus
//     min(NVLink 900 × 40.1/50 = 721.8, 8 × 96) × .92 = 664.056 GB/s, capped
//     at 16 channels × perChMaxRingLL128Bws[Blackwell][2 nodes]: 73.4 at
//     v2.28.3-1 (no cap), 34.6 at v2.28.7-1, 40 at v2.29.7-1 and in the
//     default; algbw × 16/30;
//   - the same on one node of 8 (14 NVLink steps: 14 + 14 × 1.9 = 40.6 µs),
//     capped at perChMaxRingLL128Bws[Blackwell][1 node]: 73.4 at v2.28.7-1
//     (no cap), 34.5 at v2.29.2-1, 40 at v2.29.7-1;
//   - NVLS tree over 4 × 8 B200 with two 1.6 Tb/s NICs a node (4 channels,
//     so the per-channel cap binds): NVLink hop 25 + 2·log2(4) network hops
//     of 20.9 (14 at v2.28.3-1) µs; bandwidth min(721.8 × nvlsEfficiency
//     .74 × 8/9, 2 × 192 / 2, 4 × perChMaxNVLSTreeBws[Blackwell][>2 nodes]
//     × 32/62): 43.1 at v2.28.3-1, 43.8 at v2.28.9-1, 80 in the default
//     (v2.30.3-1); its fill is 6 stages (2 + 2·log2(4)) × 48 operations (24
//     NVLS channels × 2 heads) × a 256 KiB chunk (nvls.cc, the model's at
//     5067397c), crossed at the same bandwidth.
func TestNCCLVersionPatchLevels(t *testing.T) {
	const (
		gib                   = 1 << 30
		busRing               = 721.8 * .92
		latRing2, latRing1    = 14 + 28*1.9 + 2*4.0, 14 + 14*1.9
		latTree2283, latTree  = 25 + 4*14.0, 25 + 4*20.9
		nvlsIntra, nvlsTreeIB = 721.8 * .74 * 8 / 9, 2 * 192.0 / 2
		nvlsFill              = 6 * 48 * 256 << 10
	)
	b200 := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 100e9, NICsPerNode: 8}
	b200Fat := Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 200e9, NICsPerNode: 2}
	ring := func(lat, bus, steps float64, ranks float64) float64 { return lat + gib/(bus*ranks/steps*1e3) }
	tree := func(lat, cp float64) float64 {
		bw := math.Min(math.Min(nvlsIntra, nvlsTreeIB), 4*cp*32/62)
		return lat + (nvlsFill+gib)/(bw*1e3)
	}
	cases := []struct {
		release string
		hw      Hardware
		algo    Algo
		proto   Proto
		sh      Shape
		want    float64 // µs
	}{
		{"2.28.3", b200, Ring, LL128, Shape{Ranks: 16, Nodes: 2}, ring(latRing2, busRing, 30, 16)},
		{"2.28.7", b200, Ring, LL128, Shape{Ranks: 16, Nodes: 2}, ring(latRing2, 16*34.6, 30, 16)},
		{"2.29.7", b200, Ring, LL128, Shape{Ranks: 16, Nodes: 2}, ring(latRing2, 16*40.0, 30, 16)},
		{"", b200, Ring, LL128, Shape{Ranks: 16, Nodes: 2}, ring(latRing2, 16*40.0, 30, 16)},
		{"2.28.7", b200, Ring, LL128, Shape{Ranks: 8, Nodes: 1}, ring(latRing1, busRing, 14, 8)},
		{"2.29.2", b200, Ring, LL128, Shape{Ranks: 8, Nodes: 1}, ring(latRing1, 16*34.5, 14, 8)},
		{"2.29.7", b200, Ring, LL128, Shape{Ranks: 8, Nodes: 1}, ring(latRing1, 16*40.0, 14, 8)},
		{"2.28.3", b200Fat, NVLSTree, Simple, Shape{Ranks: 32, Nodes: 4}, tree(latTree2283, 43.1)},
		{"2.28.9", b200Fat, NVLSTree, Simple, Shape{Ranks: 32, Nodes: 4}, tree(latTree, 43.8)},
		{"", b200Fat, NVLSTree, Simple, Shape{Ranks: 32, Nodes: 4}, tree(latTree, 80.0)},
	}
	for _, c := range cases {
		ch, ok := NewModel(versioned(c.hw, c.release)).Cost(AllReduce, c.sh, c.algo, c.proto, units.GiB)
		if got := float64(ch.Time) / 1e6; !ok || math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("NCCL %q: %v/%v all-reduce over %d ranks on %d nodes, 1 GiB: %.3f µs (ok %v), want %.3f", c.release, c.algo, c.proto, c.sh.Ranks, c.sh.Nodes, got, ok, c.want)
		}
	}
}

// TestNCCLVersionLL128CompCap: NCCL's LL128 switch enables the compute
// capabilities it lists before 2.27 (tuning.cc "case 100: … case 120: …
// default: pEnable &= 0", lines 431–437 at v2.25.1-1, 432–438 at
// v2.26.6-1), so B300 and GB300 (10.3) have no LL128 under 2.25–2.26 while
// B200 (10.0) does; from 2.27 ("minCompCap < 70", line 463 at v2.27.3-1)
// both run it. A cluster pinned to LL128 has no combination where it is
// off. The B300 cluster is described as a scenario would (HardwareOf).
func TestNCCLVersionLL128CompCap(t *testing.T) {
	def, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	for _, c := range []struct {
		gpu, release string
		runs         bool
	}{
		{"B300", "2.24", false}, {"B300", "2.25", false}, {"B300", "2.26", false}, {"B300", "2.27", true}, {"B300", "", true},
		{"GB300", "2.26", false}, {"GB300", "2.28.9", true},
		{"B200", "2.24", false}, {"B200", "2.25", true}, {"B200", "2.26", true},
	} {
		sets := []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=" + c.gpu, "cluster.intra.preset=NVLink5", "parallelism.dp=auto"}
		if c.release != "" {
			sets = append(sets, "communication.nccl_version="+c.release)
		}
		s, err := scenarios.Load("default.yaml", def, sets)
		if err != nil {
			t.Fatalf("%s %s: %v", c.gpu, c.release, err)
		}
		hw := HardwareOf(s)
		hw.Protos = 1 << LL128
		_, err = NewModel(hw).Choose(AllReduce, Shape{Ranks: 16, Nodes: 2}, Auto, units.MiB)
		if (err == nil) != c.runs {
			t.Errorf("NCCL %q, %s (compute capability %d), NCCL_PROTO=LL128: err %v, want runs %v", c.release, c.gpu, hw.compCap(), err, c.runs)
		}
	}
}
