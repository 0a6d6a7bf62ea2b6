package collectives

import (
	"slices"

	"github.com/zerosim/zerosim/scenarios"
)

// ncclTuning is one NCCL release's tuner as the model reads it: the
// constants of ncclTopoTuneModel and the rules around them that changed
// between releases (NVIDIA/nccl src/graph/tuning.cc at the tags each entry
// names; the tables below were read from those files, tag by tag).
// Indices as the model's: algorithm (tTree, tRing, tNVLS, tNVLSTree,
// tPAT) × protocol (LL, LL128, Simple), µs and GB/s; hwLat by link
// (NVLink, PCI, network); the per-channel caps and llMaxBws by row (Volta,
// Ampere, Hopper, Blackwell) × nodes (1, 2, >2).
//
// What stays the model's whatever the release: the tree correction factors
// (treeCorrectionFactor: the same 23 values from 2.19 on, a 24th added in
// 2.29.2 for the NVLS tree), the NVLS traffic count and nvlsEfficiency
// (algBW: zerosim's own, not NCCL's formula of any release), the channel
// counts of src/graph/search.cc and connect.cc, the NVLS tuning of
// src/transport/nvls.cc and the chunking of src/enqueue.cc, which are
// modelled at commit 5067397c2676d5aed50042fc39e5c8ee96eb0027 only.
type ncclTuning struct {
	// releases are the scenarios.NCCLReleases entries this tuner is, and
	// tags the NVIDIA/nccl tags whose tuning.cc holds these figures.
	releases []string
	tags     string
	// baseLat is baseLat (ncclTunerConstants_t baseLatencies from 2.28.3
	// on); an algorithm NCCL's table leaves out (PAT before 2.28.3) is 0,
	// except PAT's 8 µs base time of 2.23–2.27 ("latencies = 8 // Base
	// time").
	baseLat latTable
	// hwLat is hwLat (hwLatencies); entries NCCL's table leaves out
	// are 0, as C zero-fills a static array.
	hwLat                                                                 [3][numTuned][numProtos]float64
	llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws [4][3]float64
	// perChMaxNVLSTreeBws caps an NVLS tree per channel from 2.28.3 on;
	// zero before (no cap: bw = min(bwIntra, bwInter)).
	perChMaxNVLSTreeBws bwTable
	// ringLL128OnePPN, when not 0, is the ring LL128 bandwidth factor with
	// fewer than two ranks per node (ppn < 2 ? 0.7 : 0.92, to 2.22).
	ringLL128OnePPN float64
	// ringLLQuarter: the ring LL of 2.19 and 2.20 takes a quarter of the
	// bus bandwidth across nodes or for all-reduce and a third otherwise
	// (busBw × (nNodes > 1 || allreduce || reduce ? 1/4 : 1/3), tuning.cc
	// line 180 at v2.19.1-1 and v2.19.4-1, line 181 at v2.20.3-1), not
	// half (from v2.21.5-1).
	ringLLQuarter bool
	// treeNetOnePPN: with one rank per node every algorithm's network
	// latency is the tree's ("With ppn=1 latencies are fully exposed, use
	// the Tree network latency", from 2.23).
	treeNetOnePPN bool
	// pat is PAT's bus bandwidth factor (.85 in 2.23, .75 from 2.24); 0
	// where NCCL has no PAT (before 2.23).
	pat float64
	// blackwell: the tables have a Blackwell row (from 2.25). Before,
	// compCapIndex takes Hopper's row for any compute capability of 9.0 or
	// more (the Blackwell rows below are Hopper's).
	blackwell bool
	// ll128CompCaps are the compute capabilities (× 10) LL128's default
	// switch enables, "switch (minCompCap) { case 70: … case 90: …
	// default: pEnable &= 0; }" (tuning.cc lines 293–297 at v2.19.1-1,
	// 426–430 at v2.24.3-1: 70, 80, 90; lines 431–437 at v2.25.1-1 and
	// 432–438 at v2.26.6-1 add case 100 and case 120 only, so B300/GB300's
	// 10.3 stays off); nil from v2.27.3-1, whose rule is "minCompCap <
	// 70" (line 463; line 470 at v2.27.7-1).
	ll128CompCaps []int
	// nvlsTreeX86: an NVLS tree's all-reduce on Blackwell with an x86 host
	// takes the tree correction (ncclTopoGetAlgoTime, from 2.29.2).
	nvlsTreeX86 bool
}

// ll128On reports whether LL128's default switch enables compute
// capability cc (× 10).
func (tu *ncclTuning) ll128On(cc int) bool {
	if tu.ll128CompCaps == nil {
		return cc >= 70
	}
	return slices.Contains(tu.ll128CompCaps, cc)
}

// latTable is a latency table of NCCL's tuner, µs, by algorithm and
// protocol; bwTable a bandwidth table, GB/s, by generation and nodes.
type (
	latTable = [numTuned][numProtos]float64
	bwTable  = [4][3]float64
)

// tuning is the tuner of the release hw names (Hardware.NCCL), the
// default's when it names none or one the tables lack.
func (hw Hardware) tuning() *ncclTuning {
	if tu, ok := tuningByRelease[hw.NCCL]; ok {
		return tu
	}
	return defaultTuning
}

// tuningByRelease is the entry of ncclTunings of each release it covers:
// every cost asks for its tuner (Hardware.tuning), and a scan of the
// table for a pinned release took as long as the rest of a cost.
var tuningByRelease = func() map[string]*ncclTuning {
	m := map[string]*ncclTuning{}
	for i := range ncclTunings {
		for _, r := range ncclTunings[i].releases {
			m[r] = &ncclTunings[i]
		}
	}
	return m
}()

// defaultTuning is scenarios.DefaultNCCLRelease's, the last of
// ncclTunings.
var defaultTuning = &ncclTunings[len(ncclTunings)-1]

// DefaultNCCL is the NCCL release the model times when a scenario names
// none.
const DefaultNCCL = scenarios.DefaultNCCLRelease

// ncclTunings are the tuners of scenarios.NCCLReleases, oldest first.
var ncclTunings = []ncclTuning{
	{
		releases: []string{"2.19"}, tags: "v2.19.1-1 to v2.19.4-1",
		baseLat: latTable{tTree: {6.8, 14.0, 0}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 28.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 23.0}, tNVLSTree: {0, 0, 23.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 28.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 28.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
		ringLL128OnePPN:      0.7,
		ringLLQuarter:        true,
		ll128CompCaps:        []int{70, 80, 90},
	},
	{
		releases: []string{"2.20"}, tags: "v2.20.3-1 and v2.20.5-1",
		baseLat: latTable{tTree: {6.8, 14.0, 0}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 28.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 23.0}, tNVLSTree: {0, 0, 23.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 28.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 28.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
		ringLL128OnePPN:      0.7,
		ringLLQuarter:        true,
		ll128CompCaps:        []int{70, 80, 90},
	},
	{
		releases: []string{"2.21", "2.22"}, tags: "v2.21.5-1 and v2.22.3-1",
		baseLat: latTable{tTree: {6.8, 14.0, 0}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 28.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 28.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 28.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
		ringLL128OnePPN:      0.7,
		ll128CompCaps:        []int{70, 80, 90},
	},
	{
		releases: []string{"2.23"}, tags: "v2.23.4-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
		treeNetOnePPN:        true,
		pat:                  0.85,
		ll128CompCaps:        []int{70, 80, 90},
	},
	{
		releases: []string{"2.24"}, tags: "v2.24.3-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		ll128CompCaps:        []int{70, 80, 90},
	},
	{
		releases: []string{"2.25", "2.26"}, tags: "v2.25.1-1 to v2.26.6-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
		ll128CompCaps:        []int{70, 80, 90, 100, 120},
	},
	{
		releases: []string{"2.27"}, tags: "v2.27.3-1 to v2.27.7-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
	},
	{
		releases: []string{"2.28.3"}, tags: "v2.28.3-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 4.0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 4.0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 14.0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
		perChMaxNVLSTreeBws:  bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 43.1}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
	},
	{
		releases: []string{"2.28.7"}, tags: "v2.28.7-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 4.0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 4.0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 14.0}, tPAT: {0, 0, 14.0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 34.6, 73.4}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
		perChMaxNVLSTreeBws:  bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 43.1}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
	},
	{
		releases: []string{"2.28.9"}, tags: "v2.28.9-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 4.0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 4.0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 20.9}, tPAT: {0, 0, 14.0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 34.6, 73.4}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
		perChMaxNVLSTreeBws:  bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 43.8}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
	},
	{
		releases: []string{"2.29.2"}, tags: "v2.29.2-1 and v2.29.3-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 4.0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 4.0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 20.9}, tPAT: {0, 0, 14.0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {34.5, 34.6, 34.5}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
		perChMaxNVLSTreeBws:  bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 43.8}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
		nvlsTreeX86:          true,
	},
	{
		releases: []string{"2.29.7"}, tags: "v2.29.7-1",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 4.0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 4.0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 20.9}, tPAT: {0, 0, 14.0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
		perChMaxNVLSTreeBws:  bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 43.8}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
		nvlsTreeX86:          true,
	},
	{
		releases: []string{"2.30"}, tags: "v2.30.3-1 to v2.30.7-1 and 5067397c",
		baseLat: latTable{tTree: {6.8, 14.0, 8.4}, tRing: {6.6, 14.0, 8.4}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {8.0, 8.0, 8.0}},
		hwLat: [3]latTable{
			{tTree: {0.6, 1.25, 4.0}, tRing: {0.6, 1.9, 3.4}, tNVLS: {0, 0, 25.0}, tNVLSTree: {0, 0, 25.0}, tPAT: {0, 0, 4.0}},
			{tTree: {1.0, 1.9, 4.0}, tRing: {1.0, 2.5, 5.7}, tNVLS: {0, 0, 0}, tNVLSTree: {0, 0, 0}, tPAT: {0, 0, 4.0}},
			{tTree: {5.0, 8.5, 14.0}, tRing: {2.7, 4.0, 14.0}, tNVLS: {0, 0, 18.0}, tNVLSTree: {0, 0, 20.9}, tPAT: {0, 0, 14.0}}},
		llMaxBws:             bwTable{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
		perChMaxRingLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
		perChMaxTreeLL128Bws: bwTable{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
		perChMaxTreeBws:      bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
		perChMaxNVLSTreeBws:  bwTable{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}},
		treeNetOnePPN:        true,
		pat:                  0.75,
		blackwell:            true,
		nvlsTreeX86:          true,
	},
}
