package zero

import (
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// headDelta checks that long and short list the same units and that the
// LM head's forward in long exceeds short's by wantF seconds and its
// backward by wantB, every other unit unchanged (within 2 ps).
func headDelta(t *testing.T, long, short []LayerCost, wantF, wantB float64) {
	t.Helper()
	if len(long) != len(short) {
		t.Fatalf("%d units against %d, want the same units", len(long), len(short))
	}
	heads := 0
	for i := range long {
		var wf, wb float64
		if long[i].Name == "lm_head" {
			heads++
			wf, wb = wantF, wantB
		}
		if got := (long[i].Fwd - short[i].Fwd).Seconds(); math.Abs(got-wf) > 2e-12 {
			t.Errorf("unit %s: forward %.6g s longer, want %.6g s", long[i].Name, got, wf)
		}
		if got := (long[i].Bwd - short[i].Bwd).Seconds(); math.Abs(got-wb) > 2e-12 {
			t.Errorf("unit %s: backward %.6g s longer, want %.6g s", long[i].Name, got, wb)
		}
	}
	if heads != 1 {
		t.Errorf("%d units named lm_head, want 1", heads)
	}
}

// TestTrainMetricsTraffic: Composer's two train metrics
// (LanguageCrossEntropy and Perplexity, scenarios/trainmetrics.go) each
// run F.cross_entropy on the bf16 logits under autocast after the
// backward, 10 B per logit (log_softmax reads and writes 2 + 2, autocast's
// fp32 copy for nll_loss reads 2 and writes 4): llama2-7b, micro-batch 2
// of 4,096 tokens, vocabulary 32,000, t·V = 262,144,000 logits, 20 B each
// = 5,242,880,000 B on the head's forward at A100-80GB's 2,039 GB/s ×
// DefaultHBMEfficiency; the backward and every other unit unchanged.
func TestTrainMetricsTraffic(t *testing.T) {
	load := func(sets ...string) []LayerCost { return llama7bZeRO3Costs(t, 2, sets...) }
	with, without := load("training.train_metrics=2"), load()
	hbm := 2039e9 * DefaultHBMEfficiency
	const tv = 2 * 4096 * 32000
	headDelta(t, with, without, 2*10*tv/hbm, 0)
	// One metric is half of it.
	headDelta(t, load("training.train_metrics=1"), without, 10*tv/hbm, 0)
	// On fp32 logits (param_dtype fp32, no autocast) log_softmax reads
	// and writes 4 B each: 8 B a logit a metric.
	f32 := func(sets ...string) []LayerCost {
		return load(append([]string{"training.param_dtype=fp32", "training.shard_dtype=fp32"}, sets...)...)
	}
	headDelta(t, f32("training.train_metrics=2"), f32(), 2*8*tv/hbm, 0)
}

// TestFusedLossTraffic: flash-attn's fused cross-entropy (csrc/xentropy
// at v0.2.8) reads each bf16 logit twice forward (4 B, as the bf16
// loss's log_softmax read and write) and reads it and writes its
// gradient backward (4 B, where the bf16 loss's backward moves twice its
// forward, 8 B): the head's backward is 4·t·V B shorter, its forward the
// same. Against the fp32 loss (14 B forward, 28 backward) it is 10·t·V
// and 24·t·V shorter. llama2-7b, micro-batch 2: t·V = 262,144,000.
func TestFusedLossTraffic(t *testing.T) {
	load := func(sets ...string) []LayerCost { return llama7bZeRO3Costs(t, 2, sets...) }
	fused := load("training.cross_entropy=fused")
	hbm := 2039e9 * DefaultHBMEfficiency
	const tv = 2 * 4096 * 32000
	headDelta(t, load("training.cross_entropy=bf16"), fused, 0, 4*tv/hbm)
	headDelta(t, load("training.cross_entropy=fp32"), fused, 10*tv/hbm, 24*tv/hbm)
}

// TestTrainMetricsRefused: training.train_metrics is a count from 0 to
// 16, not with Liger's fused linear cross-entropy.
func TestTrainMetricsRefused(t *testing.T) {
	const doc = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: llama2-7b}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 1}
`
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"training.train_metrics=17"}, "training.train_metrics"},
		{[]string{"training.train_metrics=-1"}, "training.train_metrics"},
	} {
		_, err := scenarios.Load("s.yaml", []byte(doc), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.sets, err, c.want)
		}
	}
	if _, err := scenarios.Load("s.yaml", []byte(doc), []string{"training.train_metrics=2", "training.liger=true"}); err == nil || !strings.Contains(err.Error(), "train_metrics") {
		t.Errorf("train_metrics with liger: error %v, want one naming training.train_metrics", err)
	}
}
