package zero

import (
	"math"
	"testing"
)

// TestFinalNormAndEmbeddingCharged: the final norm costs what one of the
// blocks' RMSNorms costs (docs/compute-model.md's eager RMSNorm row, 36·h
// and 92·h bytes a token; Megatron's TENorm 4·h and 6·h) and the embedding
// its lookup (4·h a token) and its scatter-add backward into the V×h
// gradient (2·V·h + 12·h a token, PyTorch's embedding_backward_cuda_kernel),
// at the HBM roofline; both were free (QA23 L7). Llama 2 7B: h 4,096,
// V 32,000, 4,096 tokens a micro-batch.
func TestFinalNormAndEmbeddingCharged(t *testing.T) {
	const h, v, tok = 4096, 32000, 4096
	for _, tc := range []struct {
		sets                 []string
		normFwd, normBwd     float64 // bytes a token per h
		embedFwd, embedBwdPT float64
	}{
		{nil, 36, 92, 4, 12},
		{[]string{"stack=megatron"}, 4, 6, 4, 12},
	} {
		s := loadDefault(t, tc.sets...)
		costs, err := Costs(s)
		if err != nil {
			t.Fatal(err)
		}
		bw := float64(s.Cluster.HBMBandwidth) * DefaultHBMEfficiency
		ps := func(bytes float64) float64 { return bytes / bw * 1e12 }
		want := map[string][2]float64{
			"final_norm": {ps(tc.normFwd * h * tok), ps(tc.normBwd * h * tok)},
			"embedding":  {ps(tc.embedFwd * h * tok), ps(2*v*h + tc.embedBwdPT*h*tok)},
		}
		seen := 0
		for _, c := range costs {
			w, ok := want[c.Name]
			if !ok {
				continue
			}
			seen++
			if math.Abs(float64(c.Fwd)-w[0]) > 2 || math.Abs(float64(c.Bwd)-w[1]) > 2 {
				t.Errorf("%v %s: forward %v, backward %v; want %.0f ps and %.0f ps", tc.sets, c.Name, c.Fwd, c.Bwd, w[0], w[1])
			}
		}
		if seen != 2 {
			t.Errorf("%v: %d of embedding and final_norm in the layer list", tc.sets, seen)
		}
	}
}
