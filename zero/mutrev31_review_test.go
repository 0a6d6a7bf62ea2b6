package zero

import (
	"math"
	"strconv"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAttentionEfficiencyOfHeadDim: the attention efficiency a scenario
// runs at is its kernel's rate at the model's head_dim, not at 128: a
// Llama 3.2 1B-shaped model (hidden 2048, 32 heads: head_dim 64) with
// cuDNN on an H100 runs at the published rate times FlashAttention's
// head_dim-64 over head_dim-128 ratio from the published figure
// (headdim.csv), under the GEMM ceiling.
func TestAttentionEfficiencyOfHeadDim(t *testing.T) {
	fig := readHeadDimFigure(t)
	s, err := scenarios.Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
		"model: {kind: transformer, arch: llama, hidden: 2048, layers: 2, heads: 32, kv_heads: 8, ffn: 8192, vocab: 32000, seq_len: 4096}\n"+
		"parallelism: {dp: 8, zero_stage: 1}\ntraining: {attention_kernel: cudnn}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := min(publishedAttentionRate("H100-80GB", scenarios.KernelCuDNN)*fig.ratio(t, "cudnn", "H100", 64), GEMMCeiling("H100-80GB"))
	if got := AttentionEfficiencyOf(s); math.Abs(got-want) > 1e-12 {
		t.Errorf("head_dim 64, cuDNN on H100: attention efficiency %g, want the published rate × the figure's 64/128 ratio = %g", got, want)
	}
}

// TestHeadDimScaleB300: the B300 takes the GB300's cuDNN figure (the same
// Blackwell Ultra die; cudnn-frontend's GB300 file) at head_dim 256, not
// the GB200's.
func TestHeadDimScaleB300(t *testing.T) {
	if b, gb := HeadDimScale("B300", scenarios.KernelCuDNN, 256), HeadDimScale("GB300", scenarios.KernelCuDNN, 256); b != gb || b == HeadDimScale("GB200", scenarios.KernelCuDNN, 256) {
		t.Errorf("cuDNN at head_dim 256: B300 %.4f, GB300 %.4f, GB200 %.4f; want the B300 on the GB300's figure", b, gb, HeadDimScale("GB200", scenarios.KernelCuDNN, 256))
	}
}

// TestModelHeadDimSkipsLinearAttention: a linear-attention block (Qwen3-
// Next's Gated DeltaNet layers carry heads and a head_dim of their own)
// runs no softmax attention kernel, so the model's head_dim is the first
// softmax block's.
func TestModelHeadDimSkipsLinearAttention(t *testing.T) {
	s := &scenarios.Scenario{}
	s.Model.Hidden, s.Model.Heads = 2048, 16
	s.Model.LayerList = []scenarios.Layer{
		{Name: "block.0", Dims: &scenarios.BlockDims{Hidden: 2048, Heads: 16, HeadDim: 128, LinearAttention: "gated_deltanet"}},
		{Name: "block.1", Dims: &scenarios.BlockDims{Hidden: 2048, Heads: 16, HeadDim: 256}},
	}
	if got := ModelHeadDim(s); got != 256 {
		t.Errorf("linear attention first, then a softmax block of head_dim 256: %d, want 256", got)
	}
}

// TestFP8GatherCastRoundsUp: with torchao's float8 all-gather (compiled
// blocks) the weight casts are 3 B per shard element for each of stage
// 3's two gathers, rounded up to whole bytes per rank: a linear of 5·3 =
// 15 weights costs ⌈6 · 15 / 2⌉ = 45 B over dp 2 and ⌈6 · 15 / 8⌉ = 12 B
// (not ⌊90/8⌋ = 11) over dp 8; the rest of the unit's casts (the inputs')
// does not depend on dp, so the two differ by 33 B.
func TestFP8GatherCastRoundsUp(t *testing.T) {
	fwd := func(dp int) int64 {
		s, err := scenarios.Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: "+strconv.Itoa(dp)+", gpu: H100-80GB}\nstack: torchtitan\n"+
			"model: {preset: llama3.1-8b}\nparallelism: {dp: "+strconv.Itoa(dp)+", zero_stage: 3}\ntraining: {fp8: torchao, compile: blocks}\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := fp8CastTraffic(s, scenarios.Layer{Name: "block.0", Block: true}, []FP8Linear{{Rows: 4, K: 3, N: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if d := fwd(2) - fwd(8); d != 45-12 {
		t.Errorf("gathered weight casts over dp 2 less over dp 8: %d B, want ⌈90/2⌉ − ⌈90/8⌉ = 33", d)
	}
}
