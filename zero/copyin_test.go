package zero

import (
	"os"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestCopyInBothAlive: a reduce-scatter's copy-in under reduce_dtype fp32
// allocates the fp32 input before it frees the unit's unsharded bf16
// gradients (FSDP2's foreach_reduce: "Only after the copy-in finishes can
// we free the gradients"; memory/timeline.go cites it), so at that instant
// both are alive, in the replay as in the walk. The replay ordered every
// free before every allocation of an instant, so the free ran ahead of its
// own allocation and torchtitan's DeepSeek-V3 671B (experts.60: 11.3 B
// routed-expert parameters, 22.5 GB of bf16 gradients, 45.1 GB of fp32
// input) replayed a peak 16.9–17.0 GiB below the walk's, at another task
// (QA2 finding 18: 561.70 GiB at block.60 beside the table's 578.60 GiB at
// experts.60 on 32 nodes). Rows: the shipped 671B toml on 16, 32 and 64
// nodes of 8 H100s; the walk's peaks are 209.96, 180.65 and 166.00 GiB.
// They were 15.25 GiB higher while flash padded MLA's attention output
// from d_v = 128 to d_qk = 192 under stack torchtitan too, whose
// deepseek_v3 pads nothing (memory.BlockDims.ValueUnpadded): the op
// policy keeps that output, 2·t·a·64 = 2·16,384·128·64 B more in each of
// the 61 blocks (ttPad below).
// The toml runs selective_ac_option 'op': they were 607.91, 578.60 and
// 563.95 GiB before the op policy counted MLA's mms (its 61 blocks keep
// 62,887,297,024 B less, memory.TestOpPolicyMMParity) and rebuilt the
// routed experts (memory.TestOpPolicyRoutedExperts: 5,866,848,256 B per
// MoE layer at t = 16,384, 57 layers' less at the peak, where experts.60
// rebuilds its own), and 237.89, 208.59 and 193.93 GiB while the policy
// counted the router gate's mm (torchtitan forces it recomputed
// uncounted: memory.TestOpPolicyRouterGateWired), which made each of the
// 58 MoE blocks keep its shared expert's w2 output beside the list,
// 2·t·h = 2·16,384·7168 = 234,881,024 B: 13,623,099,392 B less now.
func TestCopyInBothAlive(t *testing.T) {
	// The padded attention output the op policy kept per block: t = 4,096
	// tokens × micro-batch 4, 128 heads, 192 − 128 = 64 columns, 61
	// blocks.
	const ttPad = 61 * 2 * 16_384 * 128 * 64
	data, err := os.ReadFile("../scenarios/testdata/torchtitan/deepseek_v3_671b.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		nodes int
		peak  int64
	}{
		{16, 241_814_690_176 - ttPad},
		{32, 210_345_848_000 - ttPad},
		{64, 194_611_426_912 - ttPad},
	} {
		tt, err := scenarios.ImportTorchtitan("deepseek_v3_671b.toml", data, scenarios.TorchtitanCluster{Nodes: tc.nodes, GPUsPerNode: 8, GPU: "H100-80GB"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := scenarios.Load("deepseek_v3_671b.yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		peak, _ := res.Peak()
		if m := res.MemoryModel.Peak; peak != m || peak != tc.peak {
			t.Errorf("%d nodes: replayed peak %d, walked %d; want both %d", tc.nodes, peak, m, tc.peak)
		}
		// At the replay's peak, experts.60's gradients and its
		// reduce-scatter input are both alive.
		u := -1
		for i, ui := range res.MemoryModel.Units {
			if ui.Name == "experts.60" {
				u = i
			}
		}
		if u < 0 {
			t.Fatalf("%d nodes: no unit experts.60", tc.nodes)
		}
		ui := res.MemoryModel.Units[u]
		tl := res.Memory
		cur := append([]int64(nil), tl.AtRest...)
		var total int64
		for _, v := range cur {
			total += v
		}
		for _, pt := range tl.Points {
			cur[pt.Component] += pt.Delta
			if total += pt.Delta; total == tl.Peak {
				break
			}
		}
		at := map[string]int64{}
		for i, name := range tl.Components {
			at[name] = cur[i]
		}
		if ui.ReduceInput == 0 || at[string(memory.CompGrads)] < ui.Grad || at[string(memory.CompGradBuckets)] < ui.ReduceInput {
			t.Errorf("%d nodes: at the replay's peak grads %d, grad buckets %d; want experts.60's %d and %d alive together",
				tc.nodes, at[string(memory.CompGrads)], at[string(memory.CompGradBuckets)], ui.Grad, ui.ReduceInput)
		}
	}
}
