package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestOpRecomputeAttention: torchtitan's op policy before b39377f, whose
// _save_list lacked _scaled_dot_product_cudnn_attention
// (torchtitan/models/llama3/infra/parallelize.py lines 234-243 at
// 6fc499f6f), keeps neither the cuDNN kernel's output nor its
// log-sum-exp: they move from what a block keeps to what its backward
// rebuilds. By hand for Llama 3 8B at seq 8192, micro-batch 1 (t = 8192,
// h = 4096, a = 32 heads), the run of torchao's B200 float8 table:
//
//	attention output  2·t·h   = 2·8192·4096  = 67,108,864
//	log-sum-exp       4·a·s·b = 4·32·8192·1  =  1,048,576
//	                                           68,157,440 bytes per block
//
// (32 blocks: 2,181,038,080 bytes, 2.03 GiB). The same under flash (k, v
// unrepeated), sdpa (repeat_kv) and compiled; nothing moves under the
// other policies, which do not read the flag.
func TestOpRecomputeAttention(t *testing.T) {
	const perBlock = 2*8192*4096 + 4*32*8192*1
	if perBlock != 68_157_440 {
		t.Fatalf("hand sum %d", perBlock)
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestOpRecomputeAttention",
		fmt.Sprintf("2·t·h + 4·a·s·b = %s bytes per block", commas(perBlock)),
		fmt.Sprintf("%.2f GiB over 32 blocks", float64(32*perBlock)/(1<<30)))
	for _, c := range []struct {
		attention string
		compiled  bool
	}{{AttentionSDPA, false}, {AttentionSDPA, true}, {AttentionFlash, false}, {AttentionFlash, true}} {
		d := BlockDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Attention: c.attention, Compiled: c.compiled}
		checkOpRecomputeMoves(t, fmt.Sprintf("%s compiled %v", c.attention, c.compiled), d, perBlock)
	}
}

// checkOpRecomputeMoves checks that op_recompute_attention moves exactly
// moved bytes of block d from what it keeps to what its backward
// rebuilds under the op policy, and none under the other policies.
func checkOpRecomputeMoves(t *testing.T, name string, d BlockDims, moved int64) {
	t.Helper()
	for _, policy := range []string{PolicyNone, PolicySelective, PolicyOp, PolicyFull} {
		keep, rebuild, err := BlockActivationTensors(d, policy)
		if err != nil {
			t.Fatal(err)
		}
		d2 := d
		d2.OpRecomputeAttention = true
		keep2, rebuild2, err := BlockActivationTensors(d2, policy)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if policy == PolicyOp {
			want = moved
		}
		if dk, dr := sum(keep)-sum(keep2), sum(rebuild2)-sum(rebuild); dk != want || dr != want {
			t.Errorf("%s %s: op_recompute_attention keeps %d fewer bytes and rebuilds %d more, want %d and %d", name, policy, dk, dr, want, want)
		}
	}
}
