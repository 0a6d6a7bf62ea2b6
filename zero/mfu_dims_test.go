package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestModelAttentionWidthBlockDims: a block whose dims give some of its
// attention's widths and leave the others to the model's (every dims key
// may be 0 or absent, docs/scenario-format.md) counts the heads and
// head_dim the compute model gives it (layerFLOPDims: the block's heads
// or the model's; its head_dim or hidden/heads), so that MFU and the
// executed FLOPs count the same attention. Hand counts at hidden 1,024
// and 8 heads of 128: heads·(qk + v).
func TestModelAttentionWidthBlockDims(t *testing.T) {
	for _, c := range []struct {
		name string
		dims *scenarios.BlockDims
		want int64
	}{
		{"no dims", nil, 8 * (128 + 128)},
		{"kv_heads only", &scenarios.BlockDims{KVHeads: 2}, 8 * (128 + 128)},
		{"head_dim 256 at the model's 8 heads", &scenarios.BlockDims{HeadDim: 256}, 8 * (256 + 256)},
		{"value_head_dim 64 at the model's 8 heads", &scenarios.BlockDims{ValueHeadDim: 64}, 8 * (128 + 64)},
		{"16 heads of hidden/16", &scenarios.BlockDims{Heads: 16}, 16 * (64 + 64)},
		{"16 heads of 256", &scenarios.BlockDims{Heads: 16, HeadDim: 256}, 16 * (256 + 256)},
		{"linear attention", &scenarios.BlockDims{LinearAttention: "gated_delta_net"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &scenarios.Scenario{Model: scenarios.Model{Kind: scenarios.KindTransformer, Hidden: 1024, Heads: 8, SeqLen: 4096,
				LayerList: []scenarios.Layer{{Name: "embedding"}, {Name: "block.0", Block: true, Dims: c.dims}}},
				Parallelism: scenarios.Parallelism{CP: 1}}
			base, ok := flopDims(s)
			if !ok {
				t.Fatal("no FLOP dims")
			}
			got, err := modelAttentionWidth(s, base)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("attention width %d, want %d", got, c.want)
			}
		})
	}
}
