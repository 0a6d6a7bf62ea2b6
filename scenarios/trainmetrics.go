package scenarios

import "fmt"

// maxTrainMetrics bounds training.train_metrics: an input guard, not a
// published figure (the Composer models cited below have one or two train
// metrics; 16 leaves room for a model with more and catches a typed byte
// count or token count).
const maxTrainMetrics = 16

// Train metrics: Composer's Trainer updates the model's train metrics on
// every micro-batch, after its backward, from the outputs the forward
// returned: _train_microbatch calls _eval_train_metrics(device_batch),
// which, under torch.no_grad() and the trainer's precision context
// (torch.autocast for amp_bf16), calls update_metric for each metric
// (composer/trainer/trainer.py lines 2046-2067 and 2309-2312 at
// mosaicml/composer v0.12.1, f15b07775729919b56baf092b6a7fcb90f48b246;
// lines 2071-2095 and 2340-2343 at v0.13.2, f25078aa3edc; lines
// 2472-2475 at v0.16.3, c82da77f). A language model's metrics are
// LanguageCrossEntropy and Perplexity (ComposerMosaicGPT.train_metrics,
// examples/llm/src/mosaic_gpt.py lines 513-516 at mosaicml/examples
// d14a7c94a0f805f56a7c865802082bf6d8ac8903) or LanguagePerplexity
// (MosaicGPT at mosaicml/examples 9fa3ceb9, mosaic_gpt.py lines 480-483;
// llm-foundry's ComposerMPTCausalLM, use_train_metrics True by default),
// and each update is a cross-entropy over the whole micro-batch's logits:
// LanguageCrossEntropy.update runs torch.nn.CrossEntropyLoss(reduction=
// 'sum') on them, Perplexity's (HFCrossEntropy.update) soft_cross_entropy,
// which is F.cross_entropy on class indices (composer/loss/loss.py lines
// 78-126 at v0.12.1), and LanguagePerplexity is a LanguageCrossEntropy
// (composer/metrics/nlp.py lines 89-106 and 188-214 at v0.12.1; 95-118
// and 264 at v0.13.2). training.train_metrics counts
// those cross-entropies; zero/archspec.go times them.

// resolveTrainMetrics validates training.train_metrics: a count from 0
// (the default) to maxTrainMetrics, above 0 only on a model with an
// output head whose logits the metrics read (a stack preset's value on a
// model without one is dropped), and not with Liger's fused linear
// cross-entropy, which never makes them.
func (l *loader) resolveTrainMetrics(s *Scenario) *Error {
	const p = "training.train_metrics"
	if !l.has(p) {
		return nil
	}
	n := s.Training.TrainMetrics
	if err := l.intRange(p, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if _, why := s.HeadUnit(); why != "" {
		if !l.written(p) {
			// stack llm-foundry's 2 on a model without logits (a toy
			// layer list): there is nothing for the metrics to read.
			s.Training.TrainMetrics = 0
			return nil
		}
		return l.errPath(p, fmt.Sprintf("train_metrics=%d has no logits to read: %s (delete the key)", n, why))
	}
	if s.Training.Liger {
		return l.errPath(p, fmt.Sprintf("train_metrics=%d reads the logits, which Liger's fused linear cross-entropy never makes (delete the key, or training.liger)", n))
	}
	return nil
}
