package memory

import "fmt"

// MTPInputActivation is what a DeepSeek-V3 multi-token-prediction module
// keeps for backward before its decoder layer (scenarios.Model.MTPModules):
// h'_i = M_k[RMSNorm(h_i^{k−1}); RMSNorm(Emb(t_{i+k}))] (DeepSeek-V3
// technical report, arXiv:2412.19437 §2.2, eq. 21), the checkpoint's
// hnorm, enorm and eh_proj (model.layers.61.*, deepseek-ai/DeepSeek-V3
// README_WEIGHTS.md). hnorm and enorm are RMSNorms of width h that keep
// what the block's eager RMSNorms keep (BlockTensors' normOf: x.float()
// 4·t·h, rstd 4·t, the bf16 normalized tensor 2·t·h); the concatenation
// keeps nothing (cat's backward splits the gradient) and eh_proj, a
// Linear(2h, h, bias=False), keeps its bf16 input, 2·t·2h. Its output is
// the decoder layer's input, which BlockActivation counts. Together:
// 2·(6·t·h + 4·t) + 4·t·h = 16·t·h + 8·t. The module's output head and
// loss keep what the main head's do (HeadActivation, on lm_head).
func MTPInputActivation(d BlockDims) (int64, error) {
	var c calc
	t := c.Mul(d.Seq, d.Batch)
	v := c.Add(c.Mul(16, t, d.Hidden), c.Mul(8, t))
	if c.Err != nil {
		return 0, fmt.Errorf("MTP module activation size overflows: %w", c.Err)
	}
	return v, nil
}
