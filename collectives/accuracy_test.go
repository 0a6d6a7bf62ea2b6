package collectives

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// sharedLog is one published nccl-tests log of testdata/nccl-tests with the
// cluster's nominal hardware (datasheet figures, as a scenario gives them).
type sharedLog struct {
	file         string
	ranks, nodes int
	hw           Hardware
}

// h100 is an H100 SXM node: NVLink4 450 GB/s per direction (18 links × 25
// GB/s, H100 datasheet), NVSwitch with NVLS, one NIC per GPU, on the link
// presets' latencies: NDR adds nothing to NCCL's tables, Ethernet's 10 µs
// adds 8 µs per network hop. The host is Intel (the zero CPU) for all four
// shared logs: Dell's XE9680 is an Intel Xeon system (Dell's MLPerf
// Inference v3.1 system file XE9680_H100_SXM_80GBx8_TRT.json,
// mlcommons/inference_results_v3.1: 2 × Xeon Platinum 8470; the 4-node
// log names the same cluster); no A3 Mega host figure was found, so
// it keeps DGX H100's Intel; the 1-node log crosses no network, where
// NCCL reads no host.
func h100(nic units.Bandwidth, interLat units.Duration) Hardware {
	return Hardware{Arch: Hopper, NVLS: true, IntraBW: 450e9, NICBW: nic, NICsPerNode: 8, InterLatency: interLat}
}

var sharedLogs = []sharedLog{
	{"h100_1node_allreduce_nvls_nccltests290.log", 8, 1, h100(50e9, 0)},
	// ConnectX-7 NDR 400 Gb/s.
	{"h100_2node_allreduce_default_xe9680_nccltests309.log", 16, 2, h100(50e9, 0)},
	{"h100_4node_allreduce_default_nccltests309.log", 32, 4, h100(50e9, 0)},
	// A3 Mega: 8 × 200 Gb/s GPUDirect-TCPXO NICs per VM (README), under
	// Google's required NCCL configuration (Simple only, no NVLS,
	// NCCL_BUFFSIZE 8 MiB). The log's VMs ran installer v1.0.4 (NCCL
	// 2.21.5, NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple: the image the post's
	// repository builds, lessizzmore/create-a3mega-ztan-fork
	// startup_script_ubuntu.sh at af0ffd4ac322390e258dd95e4babf21307cbae1d,
	// and GoogleCloudPlatform/container-engine-accelerators
	// gpudirect-tcpxo/README.md "Aug 06, 2024" at
	// 992db81257553607f1477945f1b3219632991829).
	{"h100_2node_allreduce_gcp_a3mega_tcpxo.log", 16, 2, TCPXO(h100(25e9, 8*units.Microsecond))},
}

func readShared(t *testing.T, l sharedLog) Log {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "nccl-tests", l.file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logs, err := ParseLogs(l.file, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 {
		t.Fatalf("%s: %d runs", l.file, len(logs))
	}
	return logs[0]
}

// accuracy is one log's |time error| over 1 MiB–1 GiB: median and max.
type accuracy struct{ median, max float64 }

// logErrors is m's accuracy on a shared log (curves interpolated where m
// has them).
func logErrors(t *testing.T, sl sharedLog, m *Model) accuracy {
	t.Helper()
	return logErrorsAlgo(t, sl, m, Auto)
}

// logErrorsAlgo is logErrors with the algorithm the log's run forced
// (NCCL_ALGO), Auto when it did not.
func logErrorsAlgo(t *testing.T, sl sharedLog, m *Model, algo Algo) accuracy {
	t.Helper()
	return logErrorsHost(t, sl, m, algo, true)
}

// logErrorsHost is logErrorsAlgo; host false models the run as one GPU per
// host thread whatever its "# nThread T nGpus G" line says (the figures
// without the host launch floor).
func logErrorsHost(t *testing.T, sl sharedLog, m *Model, algo Algo, host bool) accuracy {
	t.Helper()
	lg := readShared(t, sl)
	c := CurveOf(&lg)
	m.GPUsPerThread = 1
	if host {
		m.GPUsPerThread = lg.GPUsPerThread
	}
	var errs []float64
	for j, s := range c.Sizes {
		if units.Bytes(s) < units.MiB || units.Bytes(s) > units.GiB {
			continue
		}
		ch, err := m.Time(lg.Op, Shape{Ranks: sl.ranks, Nodes: sl.nodes}, algo, units.Bytes(s))
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, (float64(ch.Time)/1e6-c.TimesUS[j])/c.TimesUS[j])
	}
	md, mx := Summary(errs)
	return accuracy{md, mx}
}

// calibrateShared fits the model to the 2- and 4-node logs of the XE9680
// cluster (nccl-tests issue 309), as `zerosim calibrate` does.
func calibrateShared(t *testing.T) *Calibration {
	t.Helper()
	var curves []Curve
	for _, sl := range sharedLogs[1:3] {
		lg := readShared(t, sl)
		lg.Nodes = sl.nodes
		curves = append(curves, CurveOf(&lg))
	}
	fit, err := FitModel(sharedLogs[1].hw, curves, 0, 16*units.GiB)
	if err != nil {
		t.Fatal(err)
	}
	return &Calibration{HW: sharedLogs[1].hw, Params: fit.Params, Curves: curves}
}

// TestUncalibratedAccuracy holds NCCL's nominal model against every shared
// log over 1 MiB–1 GiB (issue 15: median ≤ 25 %, max ≤ 50 %). The GCP
// TCPXO log runs under Google's NCCL configuration (TCPXO: Simple only,
// an 8 MiB NCCL_BUFFSIZE): NCCL's tree with 1 MiB chunks, whose pipeline
// fill (treeSimpleFill) grows with the size up to 16 MiB and makes its
// 1–16 MiB rows look like ~20 GB/s.
func TestUncalibratedAccuracy(t *testing.T) {
	b := accuracy{0.25, 0.50} // issue 15's criterion, on every log
	for _, sl := range sharedLogs {
		a := logErrors(t, sl, NewModel(sl.hw))
		t.Logf("%s: median %.1f %%, max %.1f %%", sl.file, 100*a.median, 100*a.max)
		if a.median > b.median || a.max > b.max {
			t.Errorf("%s: median %.1f %%, max %.1f %%; want ≤ %.0f %% and ≤ %.0f %%", sl.file, 100*a.median, 100*a.max, 100*b.median, 100*b.max)
		}
	}
}

// TestCalibratedAccuracy calibrates on the 2- and 4-node logs of one
// cluster and predicts the 1-node log (same hardware, another node count)
// and the GCP log (another cluster, whose NCCL configuration comes from
// its hardware, not from the fit): median ≤ 10 %, max ≤ 25 %; in-sample,
// the calibration's curves give the logs back (median ≤ 3 %).
func TestCalibratedAccuracy(t *testing.T) {
	cal := calibrateShared(t)
	t.Logf("fitted %+v", cal.Params)
	bounds := map[string]accuracy{
		"h100_1node_allreduce_nvls_nccltests290.log":           {0.10, 0.25},
		"h100_2node_allreduce_default_xe9680_nccltests309.log": {0.03, 0.03},
		"h100_4node_allreduce_default_nccltests309.log":        {0.03, 0.03},
		"h100_2node_allreduce_gcp_a3mega_tcpxo.log":            {0.10, 0.25},
	}
	for _, sl := range sharedLogs {
		a := logErrors(t, sl, cal.Model(sl.hw))
		t.Logf("calibrated %s: median %.1f %%, max %.1f %%", sl.file, 100*a.median, 100*a.max)
		if b := bounds[sl.file]; a.median > b.median || a.max > b.max {
			t.Errorf("calibrated %s: median %.1f %%, max %.1f %%; want ≤ %.0f %% and ≤ %.0f %%", sl.file, 100*a.median, 100*a.max, 100*b.median, 100*b.max)
		}
	}
}

// TestTCPXOAllGather holds the nominal model, under Google's TCPXO
// configuration, against a second published A3 Mega run: all_gather_perf
// over 2 × 8 H100 with GPUDirect-TCPXO (nccl-plugin-gpudirecttcpx v1.0.15,
// NCCL 2.28.7), from MG-Cafe/TCPXO-Enabled-A3-Mega-H100-Benchmarks
// docs/benchmark-report.md at commit 326d6034988ecccf2f7b9ca6fe6f6ca08fe08242
// ("Test 3"; the post gives these rows only). Issue 15's uncalibrated
// criterion: median ≤ 25 %, max ≤ 50 % over 1 MiB–1 GiB.
func TestTCPXOAllGather(t *testing.T) {
	rows := []struct {
		size units.Bytes
		us   float64
	}{
		{units.MiB, 145.37}, {4 * units.MiB, 156.10}, {16 * units.MiB, 215.98}, {64 * units.MiB, 449.45},
		{128 * units.MiB, 796.94}, {256 * units.MiB, 1504.90}, {512 * units.MiB, 2905.13}, {units.GiB, 5496.77},
	}
	m := NewModel(sharedLogs[3].hw)
	var errs []float64
	for _, r := range rows {
		c, err := m.Time(AllGather, Shape{Ranks: 16, Nodes: 2}, Auto, r.size)
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, (float64(c.Time)/1e6-r.us)/r.us)
	}
	md, mx := Summary(errs)
	t.Logf("TCPXO all-gather: median %.1f %%, max %.1f %%", 100*md, 100*mx)
	if md > 0.25 || mx > 0.50 {
		t.Errorf("TCPXO all-gather: median %.1f %%, max %.1f %%; want ≤ 25 %% and ≤ 50 %%", 100*md, 100*mx)
	}
}

// publishedLog is a published nccl-tests log of hardware beyond the shared
// four (testdata/nccl-tests; each file's "##" lines give its source) with
// the nominal hardware the source states, the algorithm its run forced
// (the zero Algo, Auto, when none) and, for a log the model misses, the figures it
// reaches (a known miss: the test holds them so that they cannot worsen
// unseen, and says why in miss).
type publishedLog struct {
	sharedLog
	algo  Algo
	known *accuracy
	miss  string
}

// amdHost is hw on an AMD x86 host.
func amdHost(hw Hardware) Hardware {
	hw.CPU = scenarios.HostAMD
	return hw
}

// a100SXM is an A100 SXM4 node: NVLink3 through NVSwitch, 12 links × 25
// GB/s per direction (A100 datasheet; NCCL counts 20 GB/s per link,
// topo.h SM80_NVLINK_BW), no NVLS.
func a100SXM(nic units.Bandwidth, nics int, interLat units.Duration) Hardware {
	return Hardware{Arch: Ampere, IntraBW: 300e9, NICBW: nic, NICsPerNode: nics, InterLatency: interLat}
}

var publishedLogs = []publishedLog{
	// OCI BM.GPU4.8: a RoCE cluster network of 16 × 100 Gb/s ports, two
	// per GPU. NCCL merges the two ports of a dual-port NIC into one 200
	// Gb/s device (NCCL_IB_MERGE_NICS, default 1: ncclIbMatchVfPath "Merge
	// multi-port NICs into the same PCI device", NVIDIA/nccl
	// src/transport/net_ib.cc at commit
	// 48bb7fec7953112ff37499a272317f6663f8f600), so it sees 8 NICs of 25
	// GB/s. RoCE: the RoCE200 link preset's 3 µs, 1 µs beyond NDR's. The
	// host is AMD: BM.GPU4.8 is OCI's "AMD Rome platform" (OCI Python SDK
	// reference, oci.core.models.AmdRomeBmGpuPlatformConfig: "a bare metal
	// GPU instance that uses the BM.GPU4.8 shape (the AMD Rome
	// platform)"), so NCCL charges 2 µs per network post and caps ring and
	// tree LL by its AMD row (tuning.cc getNetOverhead, index1).
	{sharedLog: sharedLog{"a100_2node_allreduce_oci_bmgpu48_roce.log", 16, 2, amdHost(a100SXM(25e9, 8, units.Microsecond))}},
	// GCP A4: B200 on NVLink5 (18 links × 50 GB/s per direction, the
	// NVLink5 preset), NVSwitch with NVLS, 8 × ConnectX-7 400 Gb/s RoCE per
	// VM (one per GPU); RoCE400's 3 µs, 1 µs beyond NDR's. The post keeps
	// the rows from 8 MiB on. The host is taken as Intel: no A4 host
	// figure was found, and DGX B200's is 2 × Intel Xeon 8570
	// (scenarios.DefaultHostCPU).
	{sharedLog: sharedLog{"b200_2node_allreduce_gcp_a4_roce.log", 16, 2,
		Hardware{Arch: Blackwell, NVLS: true, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 8, InterLatency: units.Microsecond}}},
	// SuperBench's fixtures: one A100 node driven by one thread (-g 8),
	// nccl-tests and NCCL of mid-2021. The model holds each log's own
	// "# nThread T nGpus G" (HostLaunchFloor): the 34 µs floor is the
	// 8 serial launches; before it, all-gather and reduce-scatter reached
	// max 70.9 % and 70.6 % (all-reduce unchanged, 19.3 %, 52.0 %).
	{sharedLog: sharedLog{"a100_1node_all_reduce_superbench.log", 8, 1, a100SXM(25e9, 8, 0)},
		known: &accuracy{0.194, 0.521}, miss: a100SuperBenchMiss},
	{sharedLog: sharedLog{"a100_1node_all_gather_superbench.log", 8, 1, a100SXM(25e9, 8, 0)},
		known: &accuracy{0.401, 0.560}, miss: a100SuperBenchMiss},
	{sharedLog: sharedLog{"a100_1node_reduce_scatter_superbench.log", 8, 1, a100SXM(25e9, 8, 0)},
		known: &accuracy{0.358, 0.598}, miss: a100SuperBenchMiss},
	// AWS p4d.24xlarge: 4 × 100 Gb/s EFA per instance (the EFA-p4d
	// preset: 18 µs, 16 µs beyond NDR's), ring forced (NCCL_ALGO=RING).
	// The host is Intel: p4d runs Xeon P-8275CL, Cascade Lake (aws/aperf
	// docs/PMU.md, the EC2 instance table), not DGX A100's AMD EPYC. No
	// PluginLatency: the plugin of March 2021 reported no latency to NCCL
	// (aws-ofi-nccl first set one in bf7ca48d, 2023-01-12, 150 µs; 75 µs
	// per platform from d87d61e0, 2023-05-31).
	{sharedLog: sharedLog{"a100_2node_allreduce_aws_p4d_efa_ring.log", 16, 2, a100SXM(12.5e9, 4, 16*units.Microsecond)},
		algo: Ring, known: &accuracy{0.506, 0.703}, miss: "NCCL 2.8.3 and the aws-ofi-nccl plugin of March 2021 over EFA: 167 µs for 8 bytes " +
			"(NCCL's ring model with the EFA preset: 72 µs) and 32.7 GB/s busbw at 1 GiB where the ring carries 48 (0.96 × 4 × 12.5 GB/s); " +
			"the fabric's software of that time, not NCCL's algorithm, sets both, and a nominal model cannot know it (calibrate)"},
}

// a100SuperBenchMiss is why the SuperBench A100 fixtures miss.
const a100SuperBenchMiss = "one thread launches all 8 GPUs' kernels (-g 8): the host launch floor (8 × 4.2 µs, nccl-tests issue #123) " +
	"gives its 34 µs below 64 KiB, but from 128 KiB to 32 MiB the GPUs themselves run slower than NCCL's LL/LL128/Simple model " +
	"(75 µs for a 1 MiB all-reduce: model 36 µs, floor 34 µs; 73 µs for a 1 MiB all-gather: model 21 µs), which no host cost explains " +
	"(the floor is flat in size); the NCCL of July 2021 is not named, its tuning is older than the tables modelled (commit 5067397c)"

// TestPublishedAccuracy holds NCCL's nominal model, uncalibrated and with
// algorithm auto (or the one the run forced), against published logs of
// other hardware: issue 15's criterion, median ≤ 25 % and max ≤ 50 % over
// 1 MiB–1 GiB on every log; a known miss is held at the figures it reaches.
func TestPublishedAccuracy(t *testing.T) {
	for _, pl := range publishedLogs {
		a := logErrorsAlgo(t, pl.sharedLog, NewModel(pl.hw), pl.algo) // zero: Auto
		b := logErrorsHost(t, pl.sharedLog, NewModel(pl.hw), pl.algo, false)
		g := readShared(t, pl.sharedLog).GPUsPerThread
		want := accuracy{0.25, 0.50}
		if pl.known != nil {
			want = accuracy{max(want.median, pl.known.median+0.005), max(want.max, pl.known.max+0.005)}
			t.Logf("%s (nGpus %d): median %.1f %%, max %.1f %%; without the host launch floor %.1f %%, %.1f %% (known miss: %s)", pl.file, g, 100*a.median, 100*a.max, 100*b.median, 100*b.max, pl.miss)
		} else {
			t.Logf("%s (nGpus %d): median %.1f %%, max %.1f %%; without the host launch floor %.1f %%, %.1f %%", pl.file, g, 100*a.median, 100*a.max, 100*b.median, 100*b.max)
		}
		if a.median > want.median || a.max > want.max {
			t.Errorf("%s: median %.1f %%, max %.1f %%; want ≤ %.1f %% and ≤ %.1f %%", pl.file, 100*a.median, 100*a.max, 100*want.median, 100*want.max)
		}
	}
}

// gb200Rack is one of CoreWeave's published GB200 NVL72 all_reduce_perf
// runs (testdata/nccl-tests/gb200_nvl72_*_coreweave.log: README.md of
// coreweave/nccl-tests at 0120901ac7a1e6425640a57540e142070452f8a2,
// "Expected Performance / GB200", NCCL 2.26.2): racks NVLink domains of 72
// GB200, each one node to NCCL (MNNVL), and the errors the nominal model
// reaches on it (known: held so that they cannot worsen unseen; never
// fitted to).
type gb200Rack struct {
	file  string
	racks int
	known accuracy
}

var gb200Racks = []gb200Rack{
	{"gb200_nvl72_1rack_allreduce_coreweave.log", 1, accuracy{0.171, 0.211}},
	{"gb200_nvl72_2rack_allreduce_coreweave.log", 2, accuracy{0.116, 0.171}},
	{"gb200_nvl72_20rack_allreduce_coreweave.log", 20, accuracy{0.278, 0.337}},
}

// gb200CoreWeave is the hardware of those runs as the example jobs ran it:
// NVLink5 (18 links × 50 GB/s per direction), one 400 Gb/s InfiniBand HCA
// per GPU (4 per tray: NCCL_IB_HCA=ibp, UCX_NET_DEVICES=ibp0..3), Grace
// hosts, and NCCL_NVLS_ENABLE=0 and NCCL_COLLNET_ENABLE=0 (slurm/
// nccl-test-distributed-gb200-nvl72-enroot.slurm and mpi-operator/
// nccl-test-distributed-gb200-nvl72-mpijob.yaml at the same commit; the
// rows came with those jobs in bee97e7): no NVLS, no SHARP. 72-rank NVLS
// is therefore not validated by them.
func gb200CoreWeave() Hardware {
	return Hardware{Arch: Blackwell, IntraBW: 900e9, NICBW: 50e9, NICsPerNode: 72, CPU: scenarios.HostArm}
}

// rackErrors is the nominal model's signed errors on every row of r.
func rackErrors(t *testing.T, r gb200Rack) (errs []float64, algos []string) {
	t.Helper()
	lg := readShared(t, sharedLog{file: r.file})
	c := CurveOf(&lg)
	m := NewModel(gb200CoreWeave())
	for j, s := range c.Sizes {
		ch, err := m.Time(lg.Op, Shape{Ranks: 72 * r.racks, Nodes: r.racks}, Auto, units.Bytes(s))
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, (float64(ch.Time)/1e6-c.TimesUS[j])/c.TimesUS[j])
		if a := ch.Algo.String() + "/" + ch.Proto.String(); !slices.Contains(algos, a) {
			algos = append(algos, a)
		}
	}
	return errs, algos
}

// TestGB200RackAccuracy holds the nominal model's errors on CoreWeave's
// GB200 NVL72 logs at the figures it reaches (a validation datum, not a
// fit: nothing is tuned to them).
func TestGB200RackAccuracy(t *testing.T) {
	for _, r := range gb200Racks {
		errs, algos := rackErrors(t, r)
		md, mx := Summary(errs)
		t.Logf("%s: median %.1f %%, max %.1f %% (%s)", r.file, 100*md, 100*mx, strings.Join(algos, ", "))
		if md > r.known.median+0.005 || mx > r.known.max+0.005 {
			t.Errorf("%s: median %.1f %%, max %.1f %%; held at %.1f %% and %.1f %%", r.file, 100*md, 100*mx, 100*r.known.median, 100*r.known.max)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the accuracy table of docs/calibration.md")

// TestAccuracyDoc keeps docs/calibration.md's accuracy tables equal to what
// the model gives on the shared logs, CoreWeave's racks and the unseen logs
// (unseenLogs) (-update rewrites them).
func TestAccuracyDoc(t *testing.T) {
	cal := calibrateShared(t)
	var b strings.Builder
	b.WriteString("| log | GPUs × nodes | nominal: median | nominal: max | calibrated: role | calibrated: median | calibrated: max | fitted model alone: median | max |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for i, sl := range sharedLogs {
		nom := logErrors(t, sl, NewModel(sl.hw))
		c := logErrors(t, sl, cal.Model(sl.hw))
		f := logErrors(t, sl, &Model{HW: sl.hw, Params: cal.Params})
		role := "predicted (other node count)"
		switch i {
		case 1, 2:
			role = "in sample (curve)"
		case 3:
			role = "predicted (other cluster)"
		}
		fmt.Fprintf(&b, "| %s | %d × %d | %.1f %% | %.1f %% | %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% |\n", sl.file, sl.ranks/sl.nodes, sl.nodes,
			100*nom.median, 100*nom.max, role, 100*c.median, 100*c.max, 100*f.median, 100*f.max)
	}
	p := cal.Params
	fmt.Fprintf(&b, "\nFitted on the 2- and 4-node logs: intra efficiency %.3f, inter efficiency %.3f, intra hop %+.2f µs, inter hop %+.2f µs, fixed %+.2f µs.\n",
		p.IntraEff, p.InterEff, p.IntraHop, p.InterHop, p.Fixed)
	var r strings.Builder
	r.WriteString("| log | GPUs × nodes | rows | auto runs | nominal: median | nominal: max | worst row |\n")
	r.WriteString("|---|---|---|---|---|---|---|\n")
	for _, k := range gb200Racks {
		errs, algos := rackErrors(t, k)
		md, mx := Summary(errs)
		lg := readShared(t, sharedLog{file: k.file})
		c := CurveOf(&lg)
		w := 0
		for i := range errs {
			if math.Abs(errs[i]) > math.Abs(errs[w]) {
				w = i
			}
		}
		fmt.Fprintf(&r, "| %s | 72 × %d | %d | %s | %.1f %% | %.1f %% | %s: %+.1f %% |\n", k.file, k.racks, len(errs), strings.Join(algos, ", "),
			100*md, 100*mx, units.Bytes(c.Sizes[w]), 100*errs[w])
	}
	golden.CheckBlocks(t, "../docs/calibration.md", *update, golden.Block{
		Begin: "<!-- accuracy table: generated by TestAccuracyDoc in collectives/ (go test ./collectives -run TestAccuracyDoc -update) -->\n",
		End:   "<!-- end of accuracy table -->", Text: b.String()}, golden.Block{
		Begin: "<!-- GB200 table: generated by TestAccuracyDoc in collectives/ (go test ./collectives -run TestAccuracyDoc -update) -->\n",
		End:   "<!-- end of GB200 table -->", Text: r.String()}, golden.Block{
		Begin: "<!-- unseen table: generated by TestAccuracyDoc in collectives/ (go test ./collectives -run TestAccuracyDoc -update) -->\n",
		End:   "<!-- end of unseen table -->", Text: unseenTable(t)})
}

// TestTCPXODocFigures keeps the A3 Mega figures docs/calibration.md quotes
// equal to the model's and the shared log's: a small all-reduce (8–512 B),
// the measured growth from 1 to 16 MiB and the tree Simple pipeline's
// plateau at 16 and 32 MiB.
func TestTCPXODocFigures(t *testing.T) {
	sl := sharedLogs[3]
	lg := readShared(t, sl)
	c := CurveOf(&lg)
	m := NewModel(sl.hw)
	model := func(b units.Bytes) float64 {
		ch, err := m.Time(lg.Op, Shape{Ranks: sl.ranks, Nodes: sl.nodes}, Auto, b)
		if err != nil {
			t.Fatal(err)
		}
		return float64(ch.Time) / 1e6
	}
	measured := func(b units.Bytes) float64 {
		for j, s := range c.Sizes {
			if s == int64(b) {
				return c.TimesUS[j]
			}
		}
		t.Fatalf("%s: no row of %d B", sl.file, b)
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, s := range c.Sizes {
		if s <= 512 {
			lo, hi = math.Min(lo, c.TimesUS[j]), math.Max(hi, c.TimesUS[j])
		}
	}
	want := []string{
		fmt.Sprintf("%.0f µs modelled for a small all-reduce, %.0f–%.0f µs measured", model(8), lo, hi),
		fmt.Sprintf("grows by ~%.0f µs per MiB", (measured(16*units.MiB)-measured(units.MiB))/15),
		fmt.Sprintf("(measured %.0f and %.0f µs, modelled %.0f and %.0f)", measured(16*units.MiB), measured(32*units.MiB), model(16*units.MiB), model(32*units.MiB)),
	}
	// The link presets' table (docs/scenario-format.md, copied into the
	// README) quotes the small all-reduce too.
	preset := fmt.Sprintf("(%.0f µs modelled, %.0f–%.0f µs measured", model(8), lo, hi)
	for path, ws := range map[string][]string{"../docs/calibration.md": want, "../docs/scenario-format.md": {preset}, "../README.md": {preset}} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Join(strings.Fields(string(data)), " ")
		for _, w := range ws {
			if !strings.Contains(doc, w) {
				t.Errorf("%s does not say %q", path, w)
			}
		}
	}
}

// TestSuperBenchDocFigures keeps the figures quoted about SuperBench's A100
// -g 8 logs (a100SuperBenchMiss, docs/collectives.md) equal to the model's
// and the logs': the 1 MiB all-reduce and all-gather, measured against the
// model with and without the host launch floor, and the largest
// measured/modelled ratio from 128 KiB to 32 MiB.
func TestSuperBenchDocFigures(t *testing.T) {
	at := func(pl publishedLog, g int, b units.Bytes) (measured, model float64) {
		lg := readShared(t, pl.sharedLog)
		c := CurveOf(&lg)
		m := NewModel(pl.hw)
		m.GPUsPerThread = g
		ch, err := m.Time(lg.Op, Shape{Ranks: pl.ranks, Nodes: pl.nodes}, Auto, b)
		if err != nil {
			t.Fatal(err)
		}
		for j, s := range c.Sizes {
			if s == int64(b) {
				return c.TimesUS[j], float64(ch.Time) / 1e6
			}
		}
		t.Fatalf("%s: no row of %d B", pl.file, b)
		return 0, 0
	}
	ar, ag := publishedLogs[2], publishedLogs[3]
	arMeas, arModel := at(ar, 1, units.MiB)
	agMeas, agModel := at(ag, 1, units.MiB)
	want := fmt.Sprintf("(%.0f µs for a 1 MiB all-reduce: model %.0f µs, floor %.0f µs; %.0f µs for a 1 MiB all-gather: model %.0f µs)",
		arMeas, arModel, float64(HostLaunchFloor(8))/1e6, agMeas, agModel)
	if !strings.Contains(a100SuperBenchMiss, want) {
		t.Errorf("a100SuperBenchMiss does not say %q", want)
	}
	worst := 0.0
	for _, pl := range publishedLogs[2:5] {
		for b := 128 * units.KiB; b <= 32*units.MiB; b *= 2 {
			meas, model := at(pl, 8, b)
			worst = max(worst, meas/model)
		}
	}
	const path = "../docs/collectives.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprintf("from 128 KiB to 32 MiB they run up to %.1f× slower than NCCL's model", worst); !strings.Contains(strings.Join(strings.Fields(string(data)), " "), w) {
		t.Errorf("%s does not say %q", path, w)
	}
}

// TestFitHoldsUnidentified (F7): the 2-node XE9680 log's rows from 64 MiB
// up do not measure the network hop or the fixed cost (a 1 µs change moves
// them by at most 0.40 % and 0.20 %, below MinShare): they stay nominal.
// Nor the network's efficiency, on any row: on 2 nodes NCCL counts a
// tree's network twice over (tuning.cc: "Handle 2 node case"), so NVLink
// holds the trees, and the ring's LL128 is held at its 8 channels × 36.7
// GB/s (ringGraphChannels), so no row moves with the NIC's rate. The
// whole log measures the other four and fits intra hop +0.19 µs, inter hop
// −0.36, fixed −0.18; the 1-node log, no network at all.
func TestFitHoldsUnidentified(t *testing.T) {
	lg := readShared(t, sharedLogs[1])
	lg.Nodes = 2
	whole := CurveOf(&lg)
	// The largest share a 1 µs step of the network hop (k 3) and of the
	// fixed cost (k 4), either way, moves a row from 64 MiB up by.
	m := NewModel(sharedLogs[1].hw)
	m.GPUsPerThread = whole.GPUsPerThread
	for _, p := range []struct {
		k    int
		want string // %, as the comments and docs/calibration.md say
	}{{3, "0.40"}, {4, "0.20"}} {
		share := 0.0
		for _, s := range whole.Sizes {
			if units.Bytes(s) < 64*units.MiB {
				continue
			}
			m.Params = Nominal
			t0, err := m.Time(whole.Op, whole.Shape, Auto, units.Bytes(s))
			if err != nil {
				t.Fatal(err)
			}
			for _, sign := range []float64{-1, 1} {
				x := make([]float64, 5)
				x[p.k] = sign
				m.Params = paramVec(x)
				t1, err := m.Time(whole.Op, whole.Shape, Auto, units.Bytes(s))
				if err != nil {
					t.Fatal(err)
				}
				share = max(share, math.Abs(float64(t1.Time)/float64(t0.Time)-1))
			}
		}
		t.Logf("1 µs of %s: at most %.4f %%", scenarios.CalParamNames[p.k].Name, 100*share)
		if fmt.Sprintf("%.2f", 100*share) != p.want || share >= MinShare {
			t.Errorf("1 µs of %s moves a row from 64 MiB up by at most %.3f %%; the comments say %s %% (MinShare %g)", scenarios.CalParamNames[p.k].Name, 100*share, p.want, MinShare)
		}
	}
	for _, c := range []struct {
		name string
		lo   units.Bytes
		held []string
		// want: the fitted intra hop, inter hop and fixed cost (µs) as the
		// comment gives them, nil where held.
		want []float64
	}{
		{"from 64 MiB", 64 * units.MiB, []string{"inter efficiency", "inter hop", "fixed"}, nil},
		{"whole log", 0, []string{"inter efficiency"}, []float64{0.19, -0.36, -0.18}},
	} {
		fit, err := FitModel(sharedLogs[1].hw, []Curve{whole}, c.lo, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		held := map[string]float64{"intra efficiency": fit.Params.IntraEff - 1, "inter efficiency": fit.Params.InterEff - 1, "intra hop": fit.Params.IntraHop, "inter hop": fit.Params.InterHop, "fixed": fit.Params.Fixed}
		if h := heldNames(fit); !slices.Equal(h, c.held) {
			t.Errorf("%s: held %q, want %q (fitted %+v)", c.name, h, c.held, fit.Params)
		}
		for _, h := range c.held {
			if held[h] != 0 {
				t.Errorf("%s: %s moved by %g from nominal", c.name, h, held[h])
			}
		}
		if c.want != nil {
			got := []float64{fit.Params.IntraHop, fit.Params.InterHop, fit.Params.Fixed}
			for i, w := range c.want {
				if fmt.Sprintf("%+.2f", got[i]) != fmt.Sprintf("%+.2f", w) {
					t.Errorf("%s: fitted %s %+.3f µs, the comment says %+.2f", c.name, scenarios.CalParamNames[2+i].Name, got[i], w)
				}
			}
		}
	}
	one := readShared(t, sharedLogs[0])
	one.Nodes = 1
	fit, err := FitModel(sharedLogs[0].hw, []Curve{CurveOf(&one)}, 0, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if h := heldNames(fit); !slices.Contains(h, "inter efficiency") || !slices.Contains(h, "inter hop") || fit.Params.InterEff != 1 || fit.Params.InterHop != 0 {
		t.Errorf("1-node log: held %q, fitted %+v; want the network held at nominal", h, fit.Params)
	}
}

// heldNames are fit's held parameters by name.
func heldNames(fit *Fit) []string {
	var n []string
	for _, k := range fit.Held {
		n = append(n, scenarios.CalParamNames[k].Name)
	}
	return n
}
