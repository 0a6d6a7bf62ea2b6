package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestGatedDeltaNetTensors sums, for a Qwen3-Next-80B-A3B Gated DeltaNet
// block (h 2048, 16 key heads and 32 value heads of 128, s 4096, b 1, its
// MoE's shared expert beside), what the kernels transformers calls keep
// (gatedDeltaNet cites them): CausalConv1dFn's x, sigmoid's beta,
// softplus's fp32 input and output, ChunkGatedDeltaRuleFunction's q, k
// (l2-normed at 32 heads) and their fp32 rstd, v, the fp32 cumulative g
// and A (64 columns), FusedRMSNormGated's input, gate and fp32 rstd, and
// out_proj's input, and checks that no softmax-attention tensor is left
// and that every policy treats the block as the gatedDeltaNet comment
// says. The gated-attention block (OutputGate) keeps the sigmoid output
// and the gated product beside the ordinary attention's tensors.
func TestGatedDeltaNetTensors(t *testing.T) {
	const s, b, h, hk, hv, dk, dv = 4096, 1, 2048, 16, 32, 128, 128
	tok := int64(s * b)
	K, V := int64(hk*dk), int64(hv*dv)
	want := 2*tok*(2*K+V) + 2*tok*hv + 2*4*tok*hv + 2*2*tok*hv*dk + 2*4*tok*hv + 2*tok*V + 4*tok*hv + 2*tok*hv*64 +
		2*2*tok*V + 4*tok*hv + 2*tok*V
	if want != 288_620_544 { // 70,464 B per token
		t.Fatalf("hand count %d", want)
	}
	base := BlockDims{Arch: "llama", Seq: s, Batch: b, Hidden: h, Heads: 16, KVHeads: 2, Attention: AttentionFlash, NoFFN: true, SharedFFN: 512, SharedGate: true}
	gdn := base
	gdn.LinearAttention, gdn.LinearKeyHeads, gdn.LinearValueHeads, gdn.LinearKeyHeadDim, gdn.LinearValueHeadDim = scenarios.LinearGatedDeltaNet, hk, hv, dk, dv
	ts, err := BlockTensors(gdn)
	if err != nil {
		t.Fatal(err)
	}
	var all int64
	mixer := mixerBytes(ts)
	for _, x := range ts {
		all += x.Bytes
		if strings.Contains(x.Name, "log-sum-exp") || strings.Contains(x.Name, "RoPE") || x.Core {
			t.Errorf("a Gated DeltaNet block keeps %q", x.Name)
		}
	}
	if mixer != want {
		t.Errorf("Gated DeltaNet tensors %d B, want %d", mixer, want)
	}
	for _, c := range []struct {
		policy string
		stored int64
	}{
		{PolicyNone, all},
		{PolicySelective, all},
		{PolicyFull, 2 * tok * h},
		// mms in forward order (opParity): in_proj_qkvz 1*, in_proj_ba
		// 2, out_proj 3*, the shared expert's w1 4, w3 5* (kept by
		// autograd anyway: the product's factor), w2 6 and
		// shared_expert_gate 7* (its 2·t output only the sigmoid reads).
		// The block holds no routed experts here (RouterExperts 0).
		{PolicyOp, 2*tok*h + 2*tok*(2*K+2*V) + 2*tok*h + 2*tok*512 + 2*tok},
	} {
		got, _, err := BlockActivation(gdn, c.policy)
		if err != nil || got != c.stored {
			t.Errorf("%s: stored %d (%v), want %d", c.policy, got, err, c.stored)
		}
	}
	gated := base
	gated.HeadDim = 256
	plain, _, err := BlockActivation(gated, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	gated.OutputGate = true
	withGate, _, err := BlockActivation(gated, PolicyNone)
	if err != nil || withGate-plain != 2*2*tok*16*256 {
		t.Errorf("output gate adds %d B (%v), want 4·t·a·d = %d", withGate-plain, err, 2*2*tok*16*256)
	}
	bad := gdn
	bad.LinearValueHeadDim = 0
	if _, err := BlockTensors(bad); err == nil || !strings.Contains(err.Error(), "linear_value_head_dim > 0") {
		t.Errorf("a Gated DeltaNet without value width: %v", err)
	}
}

// TestQwen3NextUnitActivations: a scenario on the published
// Qwen3-Next-80B-A3B config sizes its Gated DeltaNet blocks with
// gatedDeltaNet and its gated-attention blocks with the output gate; the
// Gated DeltaNet's tensors and block.0's stored bytes are the figures
// docs/memory-model.md quotes ("Linear attention").
func TestQwen3NextUnitActivations(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {hf_config: qwen3-next-80b-a3b-instruct.json, layers: 4, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n" +
		"training: {micro_batch: 1, attention: flash}\n"
	sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	stored, _, err := unitActivations(sc)
	if err != nil {
		t.Fatal(err)
	}
	base := BlockDims{Arch: BlockStyle(&sc.Model), Seq: 4096, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 2, Vocab: 151936, Attention: AttentionFlash,
		LossFP32: true, NoFFN: true, SharedFFN: 512, SharedGate: true}
	// Qwen3NextRMSNorm: both hidden norms fp32 up to (1 + weight), and
	// the attention blocks' per-head q_norm and k_norm (qkNorms).
	base.Norms = scenarios.NormsFP32
	gdn := base
	gdn.LinearAttention, gdn.LinearKeyHeads, gdn.LinearValueHeads, gdn.LinearKeyHeadDim, gdn.LinearValueHeadDim = scenarios.LinearGatedDeltaNet, 16, 32, 128, 128
	gated := base
	gated.HeadDim, gated.OutputGate, gated.QKNorm = 256, true, scenarios.QKNormGemma
	for _, c := range []struct {
		unit string
		d    BlockDims
	}{{"block.0", gdn}, {"block.3", gated}} {
		want, _, err := BlockActivation(c.d, PolicyNone)
		if err != nil {
			t.Fatal(err)
		}
		for u, l := range sc.Model.LayerList {
			if l.Name == c.unit && stored[u] != want {
				t.Errorf("%s keeps %d B, want %d", c.unit, stored[u], want)
			}
		}
	}
	if l := sc.Model.LayerList[1]; l.Name != "block.0" {
		t.Fatalf("unit 1 is %s, want block.0", l.Name)
	}
	// The head's final norm is a Qwen3NextRMSNorm too (review s20 A F3),
	// by hand with t = 4096, h = 2048, V = 151,936: x.float() 4·t·h
	// 33,554,432 + rstd 4·t 16,384 + the fp32 normalized tensor before
	// (1 + weight) 4·t·h 33,554,432 + lm_head input 2·t·h 16,777,216 +
	// the fp32 loss input 4·t·V 2,489,319,424 = 2,573,221,888 B.
	last := len(sc.Model.LayerList) - 1
	if l := sc.Model.LayerList[last]; l.Name != "lm_head" || stored[last] != 2_573_221_888 {
		t.Errorf("unit %d (%s) keeps %d B, want lm_head 2,573,221,888 B", last, l.Name, stored[last])
	}
	ts, err := BlockTensors(gdn)
	if err != nil {
		t.Fatal(err)
	}
	mixer := mixerBytes(ts)
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestQwen3NextUnitActivations (qwen3-next-80b-a3b-instruct.json, s 4096, b 1, flash, no checkpointing)",
		fmt.Sprintf("%s B (%s B per token) for the Gated DeltaNet, %s B for the block with its norms and shared expert.",
			commas(mixer), commas(mixer/4096), commas(stored[1])))
}

// mixerBytes sums the tensors a block keeps after the attention norm's
// output and before the ffn norm: its token mixer's.
func mixerBytes(ts []SavedTensor) int64 {
	var n int64
	in := false
	for _, x := range ts {
		switch {
		case strings.HasPrefix(x.Name, "attention norm output"):
			in = true
			continue
		case strings.HasPrefix(x.Name, "ffn norm"):
			in = false
		}
		if in {
			n += x.Bytes
		}
	}
	return n
}
