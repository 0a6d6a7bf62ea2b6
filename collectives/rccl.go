package collectives

// RCCL's cost model, as its tuner computes it, for AMD Instinct GPUs.
//
// AMD GPUs run RCCL, AMD's fork of NCCL, whose tuner keeps NCCL's shape
// (a collective of nBytes takes latency + nBytes / bandwidth, the
// (algorithm, protocol) of least time wins) with AMD's own constants.
// Source: ROCm/rccl at commit 0cbce2a7571c907554199fad7e905f16ec0a565c
// (2024-10-24; "tuning.cc:N" below is src/graph/tuning.cc at that commit,
// and so on for the other files):
//
//   - Base latency 12/12/17 µs (LL/LL128/Simple) for tree and ring alike
//     (tuning.cc:57–58).
//   - Per-hop latencies (hwLat), bus-bandwidth ratios (bwRatio, ≤ 2 nodes
//     and more) and per-size tree and ring correction factors come from one
//     of six per-platform tuning models (tuning.cc:67–261), the one the
//     matched topology model of src/graph/rome_models.cc names with
//     "tuning=" (parseOptions, rome_models.cc:1367–1368); with no model
//     matched the system keeps the calloc'd 0 (topo.cc:699), tuning_model_0.
//   - Bus bandwidth: a matched topology model's rings and trees carry
//     bwIntra = bwInter = totalBw/nChannels (parseGraph,
//     rome_models.cc:1228–1229), so busBw = nChannels·bw = totalBw
//     (tuning.cc:368–369), the sum of the GPU's xGMI links
//     (search.cc:31–39 getTotalBw), whatever the network; it is then
//     scaled by bwRatio (tuning.cc:377–380). Algorithm bandwidth: × nRanks/
//     nsteps for a ring, × 0.5 for a tree (tuning.cc:417–423).
//   - Latency (tuning.cc:429–456): a ring pays (nsteps − nInterSteps)
//     intra hops at max(hwLat intra, netOverhead, ×3 for Simple, across
//     nodes) and nInterSteps network hops, where an all-reduce's
//     nInterSteps is 2·nNodes across nodes (not NCCL's 2·(nNodes−1))
//     (tuning.cc:354–356); a tree 2·((ppn−1) intra + log2(nNodes) network)
//     hops. The graph's latencyInter is 0 for a model-matched graph
//     (search.cc:927; parseGraph does not set it).
//   - ncclTopoGetAlgoTime (tuning.cc:632–671) multiplies a tree's
//     bandwidth by treeCorrectionFactor[proto][min(log2(nBytes/64), 26)]
//     and, across nodes only, a ring's by ringCorrectionFactor; there is no
//     ring plateau and no channel rescaling on AMD (tuning.cc:650–666).
//   - Enabled: tree (all-reduce only) and ring (tuning.cc:358–363);
//     LL128 only on gfx90a built with ENABLE_LL128 and a topology model
//     with ll128Enabled (tuning.cc:509–517; enqueue.cc:1598 also skips it
//     unless every GPU pair is xGMI-connected), so never on gfx942;
//     tree/Simple is skipped on gfx94x when all ranks are on one node
//     (tuning.cc:365); never NVLS or NVLS-tree: every tuning model's
//     bwRatio for them is 0 (tuning.cc:84–252, applied at 377–380), and
//     the NVLS graph search needs an NVSwitch node (search.cc:997) that an
//     AMD topology never has (xml.cc:770–797 adds one xgmi link per
//     directly connected peer GPU, topo.cc:574–580 joins GPU to GPU).
//     CollNet is not modelled.
//
// Which tuning model an 8-GPU MI300X node gets: its GPUs are fully
// connected by 7 xGMI links each (nLinks 7). On one node RCCL drops the
// NICs (paths.cc:779–815: all GPUs xGMI-connected and nRanks = local
// GPUs), which matches rome_model_79 (8 GPUs, 0 NICs, 7 links,
// "noCpuCheck=1,mscclEnabled=1,tuning=5,disableNumaMatching=1",
// rome_models.cc:549–560); across nodes with one NIC per GPU it matches
// rome_model_81 (8 NICs, rome_models.cc:575–816, "noCpuCheck=1,tuning=5,
// disableNumaMatching=1") and with two per GPU rome_model_84 (16 NICs,
// rome_models.cc:818–829, "tuning=5"): tuning_model_5 (tuning.cc:224–252)
// in all three. Four NICs per node match rome_model_87
// (rome_models.cc:844–1070), which names no tuning: tuning_model_0. Other
// shapes (a communicator with fewer than 8 GPUs on a node) match no
// 8-GPU model: tuning_model_0, and the bus bandwidth RCCL's own topology
// search would find, which is not ported here (rcclBusBW).
//
// gfx950 (MI350X, MI355X) is not distinguished at 0cbce2a7: no source
// file names it, and that RCCL builds no kernels for it, so what runs on
// an MI350-series GPU is a later RCCL. There the gfx942 cases are extended
// to gfx950 unchanged: ncclTopoXGMISpeed returns GFX95X_XGMI_WIDTH 48.0
// for "gfx95" (src/graph/topo.h at 08814b0a9e0245c64cdc7317a4981681295643f8)
// and tuning.cc at 9e22c79d8dccb80075967c2a03f1a921c253c867 skips
// tree/Simple on one node and enables LL128 for "gfx942" or "gfx950"
// alike. So gfx950 is modelled here exactly as gfx942 with 0cbce2a7's
// tables; the later RCCL's other changes (its PAT algorithm, per-model LL
// ranges, nInterSteps 2·(nNodes−1)) are not modelled.
//
// Timing. Across nodes RCCL's tuner time is a ranking, not a
// time. tuning_model_5 scales the ring's and the tree's bandwidth down to
// 0.1 at the sizes where the other algorithm should win (ringCorr Simple
// is 0.1 up to 256 MiB, treeCorr Simple 0.1 up to 1 MiB), prices a ring's
// network step at 320 µs for Simple and gives a 2-node Simple tree 0.11 of
// the xGMI bus bandwidth. Taken as a time it runs backwards: a 2-node
// all-reduce of 256 MiB over 16 MI300X (tree/Simple, 18.5 GB/s algbw)
// would take 14.6 ms and one of 512 MiB (ring/Simple) 5.2 ms. It also says
// 3.7 ms for 64 MiB, where AMD's own 2-node MI350X sweep, on a later RCCL,
// measured a busbw of 155–190 GB/s (0.66–0.81 ms for 64 MiB over 16
// ranks; ROCm/rocm-systems pull request 9406, 2026-07-28). On one node
// tuning_model_5's ring/Simple has bwRatio 1 and no ring correction, and
// its time matches a measured one (TestRCCLMeasured8MiB), so there
// RCCL's time is the prediction; across nodes the prediction is the NCCL
// path's model (NCCL's latencies, bandwidth from the links at the share
// xgmiFraction gives) of the algorithm and protocol RCCL's ranking picks.
// For that 64 MiB point it picks tree/Simple, which the later RCCL ran too
// (the PR's sweep: TREE/SIMPLE at 190.33 GB/s after its tuning, RING/LL128
// at 155.58 before), and times it at 794.73 µs on the MI350X's xGMI
// (xGMI-CDNA4) and RoCE400: 20 % above the measured 661.1 µs
// (TestRCCLMeasured2NodeMI350X; docs/collectives.md).

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// AMD's one published cross-node RCCL time found: an all-reduce of 64 MiB
// (67,108,864 B) over 2 × 8 MI350X, 64 channels, by TREE/SIMPLE at a
// busbw of 190.33 GB/s in the "After" table of ROCm/rocm-systems pull
// request 9406 ("fix(rccl): Fixing MI350X 2-node allreduce regression",
// merged 2026-07-28; RING/LL128 at 155.58 GB/s in its "Before" table).
// The sweep prints busbw only; rccl-tests keeps nccl-tests' busbw, algbw ×
// 2(n−1)/n for an all-reduce (BusFactor), so the time is
// 2·15/16 × 64 MiB / busbw = 661.1 µs.
const (
	rccl2NodeBytes  = 64 << 20
	rccl2NodeRanks  = 16
	rccl2NodeBusBW  = 190.33e9 // B/s
	rccl2NodeGPU    = "MI350X"
	rccl2NodeFabric = "RoCE400"
)

// RCCL2NodeReference is that published time (measured, derived from the
// pull request's busbw as above) and zerosim's time for the same
// all-reduce on the MI350X preset over 2 nodes of 8, xGMI inside a node
// and RoCE400 (one NIC per GPU) between them (model: Model.Time with auto,
// which runs RCCL's ranking and the NCCL path's timing; the measured
// cluster's network is not stated). Both are computed, not stored:
// TestRCCLMeasured2NodeMI350X holds them against the pull request's figure
// and docs/collectives.md.
func RCCL2NodeReference() (measured, model units.Duration, err error) {
	measured = sat(math.Round(BusFactor(AllReduce, rccl2NodeRanks) * rccl2NodeBytes / rccl2NodeBusBW * 1e12))
	def, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", def, []string{"cluster.gpu=" + rccl2NodeGPU, "cluster.intra.preset=" + scenarios.XGMICDNA4,
		"cluster.inter.preset=" + rccl2NodeFabric, "cluster.nodes=2", "cluster.gpus_per_node=8", "parallelism.dp=16"})
	if err != nil {
		return 0, 0, fmt.Errorf("the 2-node MI350X reference cluster: %w", err)
	}
	c, err := NewModel(HardwareOf(s)).Time(AllReduce, Shape{Ranks: rccl2NodeRanks, Nodes: 2}, Auto, rccl2NodeBytes)
	if err != nil {
		return 0, 0, fmt.Errorf("the 2-node MI350X reference all-reduce: %w", err)
	}
	return measured, c.Time, nil
}

// RCCLArch is the LLVM target of an AMD GPU preset ("" for any other GPU):
// scenarios.GPUTarget, which gives its source.
func RCCLArch(gpu string) string { return scenarios.GPUTarget(gpu) }

// rcclXGMIWidth is RCCL's bandwidth of one xGMI link, GB/s, the figure its
// tuner builds the bus bandwidth from whatever the link's rate:
// GFX94X_XGMI_WIDTH 48.0 (topo.h:33 at 0cbce2a7) and GFX95X_XGMI_WIDTH
// 48.0 for gfx950 (src/graph/topo.h at
// 08814b0a9e0245c64cdc7317a4981681295643f8, ncclTopoXGMISpeed).
const rcclXGMIWidth = 48.0

// xgmiFraction is the share of an xGMI link's rate a collective reaches
// (intraBW, which times it): RCCL's width against the 64 GB/s per
// direction per link of the MI300X's xGMI preset (7 links × 64 = 448 GB/s,
// MI300X datasheet), 48/64, so an 8-GPU MI300X node's bus bandwidth is
// 7 × 48 = 336 GB/s, which the ROCm blog below calls the usable rate
// ("about 48 GB/s"). The MI350 series' links run at 76.8 GB/s (the
// xGMI-CDNA4 preset); no measured MI350-series xGMI rate was found, so
// the same share of it is taken (57.6 GB/s a link, 403.2 for 7), while
// RCCL's tuner still ranks at 48 (rcclIntraBW).
const xgmiFraction = rcclXGMIWidth / 64

// rcclIntraBW is the xGMI bandwidth RCCL's tuner ranks algorithms and
// protocols by (rcclBusBW), GB/s, for a communicator with ppn ranks on its
// node: rcclXGMIWidth for each of the ppn−1 links it reaches, whatever the
// links' rate (RCCL reads no rate off the link), times any calibrated
// efficiency. It is intraBW on the MI300X preset's 64 GB/s links; on the
// MI350 series' 76.8 GB/s links (xGMI-CDNA4) intraBW is 1.2 times it.
// Over PCIe it is intraBW.
func (m *Model) rcclIntraBW(ppn int) float64 {
	if m.HW.PCI {
		return m.intraBW(ppn)
	}
	return rcclXGMIWidth * float64(min(max(ppn-1, 1), xgmiLinks)) * m.Params.IntraEff
}

// xgmiLinks is an MI300X-class GPU's xGMI links, one to each of the 7
// other GPUs of its fully connected node (the xGMI link preset: AMD
// Instinct MI300X datasheet, 7 links × 64 GB/s per direction to the 7
// peers; AMD's ROCm blog "Understanding RCCL Bandwidth and xGMI Performance
// on AMD Instinct MI300X", 2025-03-02: "rated up to 64 GB/s for each
// point-to-point link", about 48 GB/s usable). Two GPUs share one link, so
// a communicator with fewer ranks on a node reaches fewer of them
// (intraBW).
const xgmiLinks = 7

// RCCL's getNetOverhead (tuning.cc:294–301, NCCL_NET_OVERHEAD unset) is
// NCCL's: 2.0 µs on an AMD x86 host, 1.0 on any other, so rcclCost takes
// netOverhead of the cluster's host CPU (cluster.host.cpu). Its default on
// the MI300X and MI350-series presets is AMD (scenarios.DefaultHostCPU:
// AMD's MLPerf Inference systems, 2 × EPYC 9374F beside 8 × MI300X,
// mlcommons/inference_results_v4.1 8xMI300X_2xEPYC-9374F.json, and 2 ×
// EPYC 9575F beside 8 × MI355X, v6.1 8xMI355X_2xEPYC_9575F.json).

// rcclTuningModel is one of RCCL's per-platform tuning tables
// (struct tuningModel, tuning.cc:67–72), its tree and ring columns only:
// index 0 is the tree, 1 the ring.
type rcclTuningModel struct {
	name string
	// hwLat[xGMI, PCI, network][tree, ring][proto], µs.
	hwLat [3][2][numProtos]float64
	// bwRatio[≤ 2 nodes, more][tree, ring][proto].
	bwRatio [2][2][numProtos]float64
	// treeCorr and ringCorr [proto][log2(nBytes/64)], 64 B to 4 GiB and
	// above.
	treeCorr, ringCorr [numProtos][27]float64
}

// rcclTuning0 is tuning_model_0 (tuning.cc:74–102).
var rcclTuning0 = rcclTuningModel{
	name: "tuning_model_0",
	hwLat: [3][2][numProtos]float64{
		{{0.8, 1.4, 2.5}, {0.8, 2.2, 3.6}},
		{{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
		{{11.8, 18.2, 20.8}, {9.5, 19.8, 15.1}},
	},
	bwRatio: [2][2][numProtos]float64{
		{{0.04, 0.22, 0.91}, {0.04, 0.34, 1.00}},
		{{0.04, 0.22, 0.95}, {0.04, 0.34, 1.00}},
	},
	treeCorr: [numProtos][27]float64{
		{0.1, 0.2, 0.1, 0.1, 0.9, 0.3, 0.4, 0.1, 0.2, 0.4, 0.2, 0.1, 0.3, 0.3, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
		{0.1, 0.3, 1.0, 0.1, 0.5, 1.0, 0.9, 1.0, 1.0, 1.0, 0.3, 0.1, 0.4, 0.5, 0.5, 0.4, 0.4, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
		{0.2, 1.0, 0.1, 0.1, 0.7, 0.2, 0.4, 0.1, 0.1, 0.3, 0.4, 0.3, 0.6, 0.8, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.9, 0.9, 0.9},
	},
	ringCorr: [numProtos][27]float64{
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.2, 0.3, 0.5, 0.3, 0.1, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.7, 0.5, 0.4, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3},
		{1.0, 0.8, 0.2, 1.0, 1.0, 0.3, 1.0, 0.1, 0.1, 0.2, 0.2, 0.1, 0.5, 1.0, 0.8, 0.8, 1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
	},
}

// rcclTuning5 is tuning_model_5 (tuning.cc:224–252), the 8-GPU fully
// xGMI-connected (MI300X) platforms'. Its LL128 entries are all 0.
var rcclTuning5 = rcclTuningModel{
	name: "tuning_model_5",
	hwLat: [3][2][numProtos]float64{
		{{0.9, 0.0, 2.3}, {0.8, 0.0, 2.1}},
		{{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
		{{10.5, 0.0, 25.0}, {9.5, 0.0, 320.0}},
	},
	bwRatio: [2][2][numProtos]float64{
		{{0.06, 0.00, 0.11}, {0.08, 0.00, 1.00}},
		{{0.06, 0.00, 0.59}, {0.08, 0.00, 1.00}},
	},
	treeCorr: [numProtos][27]float64{
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
		{},
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8},
	},
	ringCorr: [numProtos][27]float64{
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
		{},
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8, 1.0, 1.0, 1.0},
	},
}

// rcclBaseLat is RCCL's base latency per protocol, µs, the same for tree
// and ring (tuning.cc:57–58).
var rcclBaseLat = [numProtos]float64{12.0, 12.0, 17.0}

// rcclOneNodeChannels is the channels RCCL sets up on one node of 8
// MI300X-class GPUs: rome_model_79's 28 rings doubled (BufferChannels).
const rcclOneNodeChannels = 56

// rcclMatched is the RCCL topology model a communicator of shape sh
// matches on m's cluster ("" for none) and its tuning table: a
// communicator with 8 GPUs on each node (the fully connected MI300X-class
// node) matches rome_model_79 on one node and, across nodes,
// rome_model_81, _84 or _87 by the node's NICs (8, 16, 4).
func (m *Model) rcclMatched(sh Shape) (model string, t *rcclTuningModel) {
	if m.HW.PCI || sh.ppn() != 8 {
		return "", &rcclTuning0
	}
	if max(sh.Nodes, 1) == 1 {
		return "rome_model_79", &rcclTuning5
	}
	switch m.HW.NICsPerNode {
	case 8:
		return "rome_model_81", &rcclTuning5
	case 16:
		return "rome_model_84", &rcclTuning5
	case 4:
		return "rome_model_87", &rcclTuning0
	}
	return "", &rcclTuning0
}

// rcclBusBW is the bus bandwidth RCCL's tuner starts from, GB/s: a matched
// model's totalBw, the node's xGMI at RCCL's link width, network or not
// (rome_models.cc:1229). Without a matched model RCCL's own topology
// search sets it; that search is not ported, so the model takes what the
// NCCL path does: the GPU's xGMI at RCCL's width, bounded across nodes by
// the network of the node (netBW), both of the group's smallest node
// (Shape.minPPN): RCCL's init.cc keeps NCCL's least channels and
// bandwidths over the ranks' graphs (src/init.cc lines 1591–1594 at the
// commit above).
func (m *Model) rcclBusBW(sh Shape, matched bool) float64 {
	intra := m.rcclIntraBW(sh.minPPN())
	if matched || max(sh.Nodes, 1) == 1 {
		return intra
	}
	return math.Min(intra, m.netBW(sh))
}

// rcclCost is RCCL's model of op over sh with algorithm a and protocol p
// on nBytes, its tuner's rank and, on one node, Model.Cost for an AMD GPU
// (across nodes Cost times it by rcclPhys); ok is false when RCCL would
// not run that combination.
func (m *Model) rcclCost(op Op, sh Shape, a Algo, p Proto, nBytes units.Bytes) (Choice, bool) {
	if sh.Ranks <= 1 {
		return Choice{Algo: a, Proto: p}, true
	}
	t := 0 // tree
	switch {
	case op != AllReduce && op != AllGather && op != ReduceScatter:
		return Choice{}, false
	case a == Ring:
		t = 1
	case a == Tree && op == AllReduce:
	default:
		return Choice{}, false
	}
	nodes, ppn, n := max(sh.Nodes, 1), sh.ppn(), float64(sh.Ranks)
	if p == LL128 || t == 0 && p == Simple && nodes == 1 {
		return Choice{}, false
	}
	model, tm := m.rcclMatched(sh)
	bw := m.rcclBusBW(sh, model != "")
	ri := 0
	if nodes > 2 {
		ri = 1
	}
	bw *= tm.bwRatio[ri][t][p]
	nsteps, nInter := float64(sh.Ranks-1), float64(nodes-1)
	if op == AllReduce {
		nsteps, nInter = 2*float64(sh.Ranks-1), 0
		if nodes > 1 {
			nInter = 2 * float64(nodes)
		}
	}
	if t == 1 {
		bw *= n / nsteps
	} else {
		bw *= .5
	}
	ls := min(log2i(int(nBytes>>6)), 26)
	switch {
	case t == 0:
		bw *= tm.treeCorr[p][ls]
	case nodes > 1:
		bw *= tm.ringCorr[p][ls]
	}
	if !(bw > 0) || math.IsInf(bw, 0) {
		return Choice{}, false
	}
	// Latency, µs. The scenario's network latency beyond the NDR preset
	// (HW.InterLatency) is added per network hop, twice for Simple, as the
	// NCCL path adds it; RCCL itself would put a graph's latencyInter in
	// place of the network hwLat (tuning.cc:431) and add it again only for
	// Simple (line 433).
	hw := 0
	if m.HW.PCI {
		hw = 1
	}
	intraLat, interLat := m.hopLatencies(tm.hwLat[hw][t][p], tm.hwLat[2][t][p], p, m.HW.InterLatency)
	lat := rcclBaseLat[p] + m.Params.Fixed
	if t == 1 {
		if nodes > 1 {
			intraLat = m.ringStepFloor(intraLat, p)
		}
		lat += float64((nsteps-nInter)*intraLat) + float64(nInter*interLat)
	} else {
		lat += float64(2 * (float64(float64(ppn-1)*intraLat) + float64(float64(log2i(nodes))*interLat)))
	}
	latD := sat(lat * 1e6)
	// RCCL ranks at its link width (cost); the time runs at the links'
	// share (intraBW over rcclIntraBW: 1 on the MI300X preset, 1.2 on the
	// MI350 series'). Across nodes rcclPhys replaces the time.
	timeBW := bw
	if r := m.rcclIntraBW(sh.minPPN()); r > 0 && nodes == 1 {
		timeBW = bw * m.intraBW(sh.minPPN()) / r
	}
	c := Choice{Algo: a, Proto: p, Latency: latD, AlgBW: timeBW * 1e9}
	c.cost = sat(float64(latD) + math.Ceil(float64(nBytes)/(bw*1e9)*1e12))
	c.Time = sat(float64(latD) + math.Ceil(float64(nBytes)/(timeBW*1e9)*1e12))
	return c, true
}

// rcclTimedByNCCL says whether RCCL's choice over sh is timed by the NCCL
// path (rcclPhys): across nodes, where RCCL's time ranks but does not time
// (the header says why).
func rcclTimedByNCCL(sh Shape) bool { return sh.Ranks > 1 && max(sh.Nodes, 1) > 1 }

// rcclPhys times RCCL's choice c of op over sh by the NCCL path's model
// of the same algorithm and protocol on these links, keeping RCCL's cost
// (the rank Choose compares); ok is false when the NCCL path would not run
// it. NCCL's host-CPU rules (llMaxBws' CPU rows, getNetOverhead) were
// tuned on NVIDIA GPUs; this timing keeps NCCL's default host for them, as
// it did before cluster.host.cpu (RCCL's own overhead, in rcclCost,
// follows the host).
func (m *Model) rcclPhys(op Op, sh Shape, c Choice, nBytes units.Bytes) (Choice, bool) {
	pm := *m
	pm.HW.CPU = ""
	phys, ok := pm.ncclCost(op, sh, c.Algo, c.Proto, nBytes)
	if !ok {
		return Choice{}, false
	}
	phys.cost = c.cost
	return phys, true
}
