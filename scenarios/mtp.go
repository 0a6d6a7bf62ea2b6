package scenarios

// MTPModules is the number of DeepSeek-V3 multi-token-prediction modules
// in the model: the blocks whose dims carry mtp (the importer marks
// num_nextn_predict_layers of them, hfDeepseekV3). Each MTP module k
// (DeepSeek-V3 technical report, arXiv:2412.19437 §2.2, eq. 21–23)
// combines RMSNorm(h) of the previous depth's hidden state (hnorm) and
// RMSNorm(Emb(t_{i+k})) of the shifted tokens' embedding (enorm) by
// M_k = eh_proj, Linear(2h, h), runs one decoder layer and then "the shared
// output head" OutHead on its own normed output (shared_head.norm), whose
// cross-entropy loss L_MTP^k is added to the main loss with weight λ/D:
// the checkpoint's model.layers.61.{enorm,hnorm,eh_proj,shared_head.*}
// (deepseek-ai/DeepSeek-V3 README_WEIGHTS.md). The embedding and output
// head are the main model's, so every module adds one more pass through
// lm_head's weights: its GEMM, its logits and its loss.
func (m *Model) MTPModules() int64 {
	var n int64
	for _, l := range m.LayerList {
		if l.Dims != nil && l.Dims.MTP {
			n++
		}
	}
	return n
}
