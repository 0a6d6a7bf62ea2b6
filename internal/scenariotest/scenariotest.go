// Package scenariotest helps tests build scenarios by hand: the compute
// packages take only resolved scenarios, and a test's struct literal leaves
// out the cluster figures Load would require. It is used by tests only.
package scenariotest

import (
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Resolved fills the cluster figures a hand-built test scenario leaves out
// (A100-80GB-like: 80 GiB, 312 TFLOPS, 2039 GB/s, NVLink 300 GB/s, 25 GB/s
// network; one node of dp·cp GPUs when it has no nodes) and resolves it as
// Load would. It panics when scenarios.Resolve rejects the scenario: the
// test built it wrong.
func Resolved(s *scenarios.Scenario) *scenarios.Scenario {
	c := &s.Cluster
	if c.Nodes == 0 {
		c.Nodes, c.GPUsPerNode = 1, s.Parallelism.DP*max(s.Parallelism.CP, 1)
	}
	for _, f := range []struct {
		v   *int64
		def int64
	}{{(*int64)(&c.GPUMemory), int64(80 * units.GiB)}, {(*int64)(&c.PeakBF16), 312e12}, {(*int64)(&c.HBMBandwidth), 2039e9},
		{(*int64)(&c.Intra.Bandwidth), 300e9}, {(*int64)(&c.Inter.Bandwidth), 25e9}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if err := scenarios.Resolve(s); err != nil {
		panic(err)
	}
	return s
}
