package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFusedNormTraffic counts by hand the memory-bound bytes of a Llama
// block and of the final norm under torchtitan's fused_rmsnorm
// (training.norm_impl: fused; torchtitan/models/norms.py at
// 157a12c562288b3bccb077003a97f18a4ca657aa): _rms_norm_fwd_kernel reads x
// and writes y, 2 + 2 B per element; _rms_norm_bwd_kernel_sm reads x and
// dy and writes dx, 6 B. Llama 2 13B at seq 4096, local batch 2 (t =
// 8,192): h 5120, a = kv_h = 40 (q and k widths 10,240), f 13824, complex
// RoPE (20 B each way), flash attention. Per token, forward: two norms
// 2·4·h = 40,960, RoPE 20·10,240 = 204,800, two residual adds 2·6·h =
// 61,440, SwiGLU 10·f = 138,240: 445,440 B, × t = 3,649,044,480. Backward:
// norms 2·6·h = 61,440, RoPE 204,800, residual adds 61,440, the gradient
// additions of the norm outputs 3·6·h = 92,160, SwiGLU 18·f = 248,832:
// 668,672 B, × t = 5,477,761,024. The eager fp32 chain moves 2·(36 − 4)·h
// = 327,680 B a token more forward and 2·(92 − 6)·h = 880,640 more
// backward. The final norm: 4·t·h = 167,772,160 and 6·t·h = 251,658,240.
func TestFusedNormTraffic(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 4096, Batch: 2, Hidden: 5120, Heads: 40, KVHeads: 40, FFN: 13824, Vocab: 32000}
	s := &scenarios.Scenario{}
	s.Training.NormImpl = scenarios.NormFused
	for _, c := range []struct {
		impl     scenarios.NormImpl
		fwd, bwd int64
	}{
		{scenarios.NormFused, 3_649_044_480, 5_477_761_024},
		{"", 3_649_044_480 + 8192*327_680, 5_477_761_024 + 8192*880_640},
	} {
		s.Training.NormImpl = c.impl
		f, b, err := blockElementwise(s, d, false)
		if err != nil {
			t.Fatal(err)
		}
		if f != c.fwd || b != c.bwd {
			t.Errorf("norm_impl %q: block moves %d / %d B, want %d / %d", c.impl, f, b, c.fwd, c.bwd)
		}
	}
	s.Training.NormImpl = scenarios.NormFused
	f, b, err := finalNormBytes(s, d)
	if err != nil {
		t.Fatal(err)
	}
	if f != 167_772_160 || b != 251_658_240 {
		t.Errorf("fused final norm moves %d / %d B, want 167,772,160 / 251,658,240", f, b)
	}
}
