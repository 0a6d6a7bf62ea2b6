package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOffloadMemory: Llama-2-7B-sized 7e9 parameters on 1 × 8 GPUs at ZeRO-3
// (shards of 875,000,000): offloading the optimizer moves 16 B per shard
// element to the host (14e9 B per rank, 112e9 B per node) and takes the fp32
// master, Adam states and step temporaries off the GPU; offloading the
// params too moves the 2 B bf16 shard (1.75e9 B per rank). NVMe keeps 12 B
// of them on the drives.
func TestOffloadMemory(t *testing.T) {
	for _, tc := range []struct {
		opt, params               scenarios.OffloadDevice
		perRank, nvmePerNode, gpu int64 // gpu: at rest, bf16 params (2 B) + master, m, v (12 B) when on the GPU
	}{
		{scenarios.OffloadNone, scenarios.OffloadNone, 0, 0, 14 * 875_000_000},
		{scenarios.OffloadCPU, scenarios.OffloadNone, 14e9, 0, 2 * 875_000_000},
		{scenarios.OffloadCPU, scenarios.OffloadCPU, 15_750_000_000, 0, 0},
		{scenarios.OffloadNVMe, scenarios.OffloadNVMe, 3_500_000_000, 8 * (12 + 2) * 875_000_000, 0},
	} {
		s := bigModel(7e9, 8, 1, 8, 3)
		s.Offload = scenarios.Offload{Optimizer: tc.opt, Params: tc.params}
		if err := scenarios.Resolve(s); err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		if tc.opt == scenarios.OffloadNone {
			if r.Host != nil {
				t.Errorf("no offload: host %+v", r.Host)
			}
		} else if r.Host == nil || r.Host.PerRank != tc.perRank || r.Host.PerNode != 8*tc.perRank || r.Host.NVMePerNode != tc.nvmePerNode || !r.Host.Fits {
			t.Errorf("%s/%s: host %+v, want %d per rank, %d NVMe per node", tc.opt, tc.params, r.Host, tc.perRank, tc.nvmePerNode)
		}
		if r.AtRest != tc.gpu {
			t.Errorf("%s/%s: GPU at rest %d, want %d", tc.opt, tc.params, r.AtRest, tc.gpu)
		}
		if tc.opt != scenarios.OffloadNone && r.Component(CompStepTemp).Peak != 0 {
			t.Errorf("%s: optimizer temporaries on the GPU: %d", tc.opt, r.Component(CompStepTemp).Peak)
		}
	}
}
