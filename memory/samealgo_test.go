package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestSameUnderAlgorithms: plan takes the memory report of a candidate
// under one algorithm for another when SameUnderAlgorithms says they are
// the same, so it must hold: on 2 × 8 H100 (NVLink, where auto's
// communicators set up NVLS buffers) ring, hierarchical and tree give the
// same device figure, and nvls (NCCL_ALGO=NVLS), which the function does
// not pair with them, gives more: its NVLS buffers.
func TestSameUnderAlgorithms(t *testing.T) {
	data, _ := scenarios.Example("default")
	device := map[scenarios.Algorithm]int64{}
	for _, a := range []scenarios.Algorithm{scenarios.AlgoNVLS, scenarios.AlgoRing, scenarios.AlgoHierarchical, scenarios.AlgoTree} {
		s, err := scenarios.Load("default", data, []string{"cluster.nodes=2", "parallelism.dp=16", "communication.algorithm=" + string(a)})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze(s, Options{Reserve: ReserveWhereFits})
		if err != nil {
			t.Fatal(err)
		}
		device[a] = rep.Device
	}
	for _, a := range []scenarios.Algorithm{scenarios.AlgoHierarchical, scenarios.AlgoTree} {
		if !SameUnderAlgorithms(scenarios.AlgoRing, a) || device[a] != device[scenarios.AlgoRing] {
			t.Errorf("%s: device %d, ring %d: want the same, and SameUnderAlgorithms true", a, device[a], device[scenarios.AlgoRing])
		}
	}
	if SameUnderAlgorithms(scenarios.AlgoNVLS, scenarios.AlgoRing) || SameUnderAlgorithms(scenarios.AlgoAuto, scenarios.AlgoRing) || device[scenarios.AlgoNVLS] <= device[scenarios.AlgoRing] {
		t.Errorf("nvls: device %d, ring %d: want NVLS buffers under nvls, and SameUnderAlgorithms false with nvls and auto", device[scenarios.AlgoNVLS], device[scenarios.AlgoRing])
	}
}
