package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestTorchtitanATenNormTraffic: torchtitan's nn.RMSNorms on
// aten::_fused_rms_norm (training.norm_impl aten_fused, stack
// torchtitan) move the fused kernel's 4 and 6 B an element
// (llamaParts.ATenNorm), q_norm and k_norm included, against the eager
// composite's 36 and 92; torchtitan's own Triton kernel (norm_impl fused)
// was the hidden norms' only. Llama 2 13B's block of TestFusedNormTraffic
// (t = 8,192, h 5120, q and k widths 10,240): the composite moves
// 2·(36 − 4)·h = 327,680 B a token more forward and 2·(92 − 6)·h =
// 880,640 more backward. Qwen3-style q/k norms over the 10,240-wide q
// and k add 4·10,240 = 40,960 and 6·10,240 = 61,440 B a token on the
// fused kernel, 36·10,240 = 368,640 and 92·10,240 = 942,080 on the
// composite (also under norm_impl fused). The final norm: 4·t·h =
// 167,772,160 and 6·t·h = 251,658,240 on the fused kernel, 36·t·h and
// 92·t·h on the composite.
func TestTorchtitanATenNormTraffic(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 5120, Heads: 40, KVHeads: 40, FFN: 13824, Vocab: 32000}
	const tok, th = 8192, 8192 * 5120
	const fwd, bwd = 3_649_044_480, 5_477_761_024 // fused hidden norms (TestFusedNormTraffic)
	const moreF, moreB = tok * 327_680, tok * 880_640
	const qkF, qkB = tok * 40_960, tok * 61_440     // q/k norms, fused kernel
	const qkCF, qkCB = tok * 368_640, tok * 942_080 // q/k norms, composite
	for _, c := range []struct {
		name         string
		stack        string
		impl         scenarios.NormImpl
		qk           bool
		fwd, bwd     int64
		normF, normB int64
	}{
		{"torchtitan aten_fused", "torchtitan", scenarios.NormATen, false, fwd, bwd, 4 * th, 6 * th},
		{"torchtitan aten_fused, q/k norms", "torchtitan", scenarios.NormATen, true, fwd + qkF, bwd + qkB, 4 * th, 6 * th},
		{"torchtitan composite", "torchtitan", "", false, fwd + moreF, bwd + moreB, 36 * th, 92 * th},
		{"torchtitan composite, q/k norms", "torchtitan", "", true, fwd + moreF + qkCF, bwd + moreB + qkCB, 36 * th, 92 * th},
		{"torchtitan fused_rmsnorm, q/k norms", "torchtitan", scenarios.NormFused, true, fwd + qkCF, bwd + qkCB, 4 * th, 6 * th},
	} {
		s := &scenarios.Scenario{Stack: c.stack}
		s.Training.NormImpl = c.impl
		f, b, err := blockElementwise(s, d, c.qk)
		if err != nil {
			t.Fatal(err)
		}
		if f != c.fwd || b != c.bwd {
			t.Errorf("%s: block moves %d / %d B, want %d / %d", c.name, f, b, c.fwd, c.bwd)
		}
		nf, nb, err := finalNormBytes(s, d)
		if err != nil || nf != c.normF || nb != c.normB {
			t.Errorf("%s: final norm moves %d / %d B (%v), want %d / %d", c.name, nf, nb, err, c.normF, c.normB)
		}
	}
}
