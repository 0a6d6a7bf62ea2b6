package memory

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// One block's KV cache in keepLogitsYAML (Llama 2 7B, micro-batch 8,
// seq 2048, 32 key/value heads of 128, bf16): post-RoPE keys and values,
// 2 · (8·2048) · 32 · 128 · 2 B = 268,435,456 B; 32 blocks hold
// 8,589,934,592 B (8 GiB).
const (
	kvPerBlock = 2 * 8 * 2048 * 32 * 128 * 2
	kvWhole    = 32 * kvPerBlock
)

// TestKVCacheKept: training.hf_use_cache kept (dlrover's fsdp_llama2.py
// holds outputs until the next forward returns) puts the previous step's
// whole cache at rest; each block's forward adds its own, so the lm_head's
// forward holds two caches before the model returns and frees the old one;
// backward and the optimizer step hold one.
func TestKVCacheKept(t *testing.T) {
	r, c := keptTwice(t, CompKVCache, "kv cache", "training.hf_use_cache=kept", kvWhole)
	walkKVCache(t, r, c.AtRest, kvWhole)
}

// TestKVCacheForward: hf_use_cache forward (the loop keeps only the loss)
// holds nothing at rest, one whole cache at the head's forward, and none
// in backward.
func TestKVCacheForward(t *testing.T) {
	r := keepLogitsReport(t, "training.hf_use_cache=forward")
	c := r.Component(CompKVCache)
	if c.AtRest != 0 || c.Peak != kvWhole || c.PeakPhase != PhaseForward {
		t.Errorf("kv cache: %d at rest, %d at peak in %s; want 0, %d in forward", c.AtRest, c.Peak, c.PeakPhase, kvWhole)
	}
	walkKVCache(t, r, 0, 0)
	// The forward's peak, at lm_head's loss with or without the cache,
	// grows by the whole cache and by what a loss inside Hugging Face's
	// forward adds (HFShiftLogits): the shift_logits copy, 4·8·2047·32,000,
	// less the 16-bit logits its .float() frees first, 2·8·2048·32,000.
	hfLoss := int64(4*8*2047*32000 - 2*8*2048*32000)
	if got, want := forwardPeak(t, r)-forwardPeak(t, keepLogitsReport(t)), int64(kvWhole)+hfLoss; got != want {
		t.Errorf("forward peak grew by %d B, want the whole cache %d and Hugging Face's loss %d", got, int64(kvWhole), hfLoss)
	}
}

// walkKVCache checks that the cache grows by kvPerBlock at each block's
// forward, is freed by kvWhole at lm_head's forward only, and holds
// backward and optimizer at want.
func walkKVCache(t *testing.T, r *Report, rest, want int64) {
	t.Helper()
	head := unitIndex(t, r, "lm_head")
	cur, grows := rest, 0
	for _, e := range r.Timeline() {
		if e.Component == CompKVCache {
			cur += e.Delta
			switch {
			case e.Phase == PhaseForward && e.Delta == kvPerBlock:
				grows++
			case e.Phase == PhaseForward && e.Unit == head && e.Delta == -kvWhole && e.Op == OpRebind:
			default:
				t.Errorf("kv cache event %+v: want +%d at a block's forward or −%d at lm_head's", e, kvPerBlock, int64(kvWhole))
			}
		}
		if (e.Phase == PhaseBackward || e.Phase == PhaseOptimizer) && cur != want {
			t.Fatalf("at %+v the kv cache is %d B, want %d", e, cur, want)
		}
	}
	if grows != 32 || cur != rest {
		t.Errorf("%d block allocations (want 32), ending at %d B (want %d)", grows, cur, rest)
	}
}

// TestKVCacheGQAAndDType: the cache is at the key/value heads (8 of 32:
// a quarter) and in the projections' dtype (fp32 parameters without
// autocast: 4 B; under autocast bf16: 2 B).
func TestKVCacheGQAAndDType(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want int64
	}{
		{[]string{"model.kv_heads=8"}, kvWhole / 4},
		{[]string{"training.param_dtype=fp32", "training.shard_dtype=fp32"}, 2 * kvWhole},
		{[]string{"training.param_dtype=fp32", "training.shard_dtype=fp32", "training.autocast=bf16"}, kvWhole},
	} {
		r := keepLogitsReport(t, append(tc.set, "training.hf_use_cache=kept")...)
		if got := r.Component(CompKVCache).AtRest; got != tc.want {
			t.Errorf("%v: kv cache at rest %d, want %d", tc.set, got, tc.want)
		}
	}
}

// TestKVCacheNeedsFullRecompute: without whole-block checkpointing the
// cache is the attention's saved keys and values; the key is refused
// there with the fix.
func TestKVCacheNeedsFullRecompute(t *testing.T) {
	_, err := scenarios.Load("keep.yaml", []byte(keepLogitsYAML), []string{"training.hf_use_cache=kept", "training.recompute=none"})
	if err == nil || !strings.Contains(err.Error(), "training.hf_use_cache") || !strings.Contains(err.Error(), "recompute: full") {
		t.Fatalf("hf_use_cache under recompute none: %v, want an error naming the key and recompute: full", err)
	}
}

// TestKVCacheDocFigures holds docs/memory-model.md's worked example of
// training.hf_use_cache to the dlrover ATorch FSDP template
// (testdata/validation/dlrover-atorch-fsdp-llama2-7b.yaml: Llama 2 7B,
// micro-batch 4 × seq 4096, 32 key/value heads of 4096/32 = 128, bf16
// under autocast, hf_use_cache kept). Worked here from the template's
// dimensions: one block caches its keys and values, 2 · (4·4096) · 32 ·
// 128 · 2 B = 268,435,456 B; 32 blocks make 8 GiB per cache, and kept
// holds two at the loss, 16 GiB.
func TestKVCacheDocFigures(t *testing.T) {
	tmpl, err := os.ReadFile("../testdata/validation/dlrover-atorch-fsdp-llama2-7b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load("dlrover.yaml", tmpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Model
	if m.Hidden != 4096 || m.Heads != 32 || m.KVHeads != 32 || m.Layers != 32 || m.SeqLen != 4096 || s.Training.MicroBatch != 4 {
		t.Fatalf("template changed: hidden %d, heads %d/%d, layers %d, seq %d, micro-batch %d; the doc's example is 4096, 32/32, 32, 4096, 4", m.Hidden, m.Heads, m.KVHeads, m.Layers, m.SeqLen, s.Training.MicroBatch)
	}
	const perBlock = 2 * (4 * 4096) * 32 * (4096 / 32) * 2 // k and v, bf16
	const whole = 32 * perBlock
	r := mustAnalyze(t, s, Options{})
	c := r.Component(CompKVCache)
	if c.AtRest != whole || c.Peak != 2*whole {
		t.Errorf("kv cache: %d at rest, %d at peak; want %d and %d (two caches at the loss)", c.AtRest, c.Peak, int64(whole), int64(2*whole))
	}
	var grows int
	for _, e := range r.Timeline() {
		if e.Component == CompKVCache && e.Delta > 0 {
			grows++
			if e.Delta != perBlock {
				t.Errorf("kv cache grows by %d B at %+v, want %d per block", e.Delta, e, perBlock)
			}
		}
	}
	if grows != 32 {
		t.Errorf("%d kv cache allocations, want one per block (32)", grows)
	}
	gib := func(b int64) string {
		if b%int64(units.GiB) != 0 {
			t.Fatalf("%d B is not a whole number of GiB, as the doc writes it", b)
		}
		return fmt.Sprintf("%d GiB", b/int64(units.GiB))
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "memory's CompKVCache on the dlrover template (TestKVCacheDocFigures)",
		fmt.Sprintf("Llama 2 7B at batch 4 × 4096 (32 heads of 128, bf16) holds %s B per block, %s per cache; the dlrover ATorch FSDP rows", commas(perBlock), gib(whole)),
		fmt.Sprintf("need %s of it at the loss under `kept`", gib(c.Peak)))
}
