// Package scenariotest helps tests build scenarios by hand: the compute
// packages take only resolved scenarios, and a test's struct literal leaves
// out the cluster figures Load would require. It is used by tests only.
package scenariotest

import (
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// FSDP2Llama7B is a scenario file the allocator-replay tests share: Llama 2
// 7B under FSDP2 at ZeRO-3 on one node of 8 H100, fp32 shards and
// reduction, full recompute, micro-batch 2 of 2,048 tokens.
const FSDP2Llama7B = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 2048}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 2, recompute: full, attention: sdpa, shard_dtype: fp32, reduce_dtype: fp32}
communication: {boundary: fsdp2}
`

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
