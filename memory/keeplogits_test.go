package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// keepLogitsYAML is torchtitan 83c879f's Llama 2 7B FSDP2 run
// (testdata/validation/torchtitan-llama2-7b-h100-fsdp2.yaml): local batch
// 8, seq 2048, V = 32,000 on 8 H100, full activation checkpointing.
const keepLogitsYAML = `version: 1
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: H100-80GB
model:
  kind: transformer
  arch: llama
  hidden: 4096
  layers: 32
  heads: 32
  kv_heads: 32
  ffn: 11008
  vocab: 32000
  seq_len: 2048
communication:
  boundary: fsdp2
parallelism:
  dp: 8
  zero_stage: 3
training:
  shard_dtype: fp32
  reduce_dtype: fp32
  micro_batch: 8
  recompute: full
  attention: sdpa
`

func keepLogitsReport(t *testing.T, set ...string) *Report {
	t.Helper()
	s, err := scenarios.Load("keep.yaml", []byte(keepLogitsYAML), set)
	if err != nil {
		t.Fatal(err)
	}
	return mustAnalyze(t, s, Options{})
}

// unitIndex is the index of the unit called name.
func unitIndex(t *testing.T, r *Report, name string) int {
	t.Helper()
	for u, x := range r.Units {
		if x.Name == name {
			return u
		}
	}
	t.Fatalf("no unit %q", name)
	return -1
}

// TestKeptLogitsLifetime: with training.keep_logits fp32 (torchtitan
// 83c879f: model.py returns self.output(h).float(), train.py keeps pred
// through backward and until the next forward rebinds it) the rank holds
// 4·t·V = 4 · (8·2048) · 32,000 = 2,097,152,000 B of logits at rest (the
// previous step's), twice that at the head's forward (the new logits
// before the old are freed), and 2,097,152,000 B at every event of the
// backward, before, at and after lm_head's, and of the optimizer step.
// Without the key the component does not exist.
func TestKeptLogitsLifetime(t *testing.T) {
	const kept = 2_097_152_000
	if got := keepLogitsReport(t).Component(CompLogits); got.AtRest != 0 || got.Peak != 0 {
		t.Fatalf("unset: kept logits %d at rest, %d at peak, want none", got.AtRest, got.Peak)
	}
	r := keepLogitsReport(t, "training.keep_logits=fp32")
	c := r.Component(CompLogits)
	if c.AtRest != kept || c.Peak != 2*kept || c.PeakPhase != PhaseForward {
		t.Errorf("kept logits: %d at rest, %d at peak in %s; want %d, %d in forward", c.AtRest, c.Peak, c.PeakPhase, kept, 2*kept)
	}
	head := unitIndex(t, r, "lm_head")
	cur := c.AtRest
	var backward, afterHead, optimizer int
	for _, e := range r.Timeline() {
		if e.Component == CompLogits {
			cur += e.Delta
			if e.Phase != PhaseForward || e.Unit != head {
				t.Errorf("kept logits event %+v: only lm_head's forward allocates or frees them", e)
			}
		}
		switch e.Phase {
		case PhaseBackward:
			backward++
			if e.Unit < head {
				afterHead++
			}
		case PhaseOptimizer:
			optimizer++
		default:
			continue
		}
		if cur != kept {
			t.Fatalf("at %+v the kept logits are %d B, want %d (alive through backward and the optimizer step)", e, cur, kept)
		}
	}
	if backward == 0 || afterHead == 0 || optimizer == 0 || cur != kept {
		t.Errorf("walked %d backward events (%d after lm_head's), %d optimizer events, ending at %d B", backward, afterHead, optimizer, cur)
	}
}

// TestKeptLogitsUnderCP: under context parallelism a rank holds the
// logits of its own sequence shard, t = 8 · 2048/2 tokens at cp 2:
// 4 · 8,192 · 32,000 = 1,048,576,000 B at rest (review s19 B4: a mutation
// sizing them by the whole sequence survived).
func TestKeptLogitsUnderCP(t *testing.T) {
	r := keepLogitsReport(t, "training.keep_logits=fp32", "parallelism.cp=2", "parallelism.dp=4")
	if got := r.Component(CompLogits).AtRest; got != 1_048_576_000 {
		t.Errorf("cp 2: kept logits %d B at rest, want 1,048,576,000", got)
	}
}

// TestKeptLogitsMovePeak: the kept fp32 logits add 2,097,152,000 B to
// the allocated peak, in lm_head's backward for this run, and to the
// largest total over the backward after lm_head's (the blocks'
// backwards), where a lifetime ending with the head's backward would
// add nothing.
func TestKeptLogitsMovePeak(t *testing.T) {
	const kept = 2_097_152_000
	base := keepLogitsReport(t)
	keep := keepLogitsReport(t, "training.keep_logits=fp32")
	head := unitIndex(t, base, "lm_head")
	if keep.Peak-base.Peak != kept || keep.PeakPhase != PhaseBackward || keep.PeakUnit != head {
		t.Errorf("peak %d → %d (%+d, want %+d) in %s unit %d, want backward unit %d", base.Peak, keep.Peak, keep.Peak-base.Peak, kept, keep.PeakPhase, keep.PeakUnit, head)
	}
	if got := keep.AtRest - base.AtRest; got != kept {
		t.Errorf("at rest %+d, want %+d", got, kept)
	}
	afterHead := func(r *Report) int64 {
		cur, best := r.AtRest, int64(0)
		for _, e := range r.Timeline() {
			cur += e.Delta
			if e.Phase == PhaseBackward && e.Unit < head {
				best = max(best, cur)
			}
		}
		return best
	}
	b, k := afterHead(base), afterHead(keep)
	if k-b != kept {
		t.Errorf("largest total in backward after lm_head: %d → %d (%+d), want %+d", b, k, k-b, kept)
	}
}

// TestKeptLogitsNoDoubleCount: 16-bit logits kept by the loop are 2·t·V
// = 1,048,576,000 B. Under the eager fp32 loss they are a tensor of
// their own (log_softmax reads their fp32 copy and saves its output), so
// lm_head's activations are unchanged; under a compiled loss they are the
// graph input the loss saves, which lm_head's activations then leave
// out: the same 1,048,576,000 B fewer.
func TestKeptLogitsNoDoubleCount(t *testing.T) {
	const kept = 1_048_576_000
	for _, c := range []struct {
		name string
		set  []string
		less int64
	}{
		{"eager", nil, 0},
		{"compiled loss", []string{"training.compile=loss"}, kept},
		{"fused loss", []string{"training.cross_entropy=fused"}, kept},
	} {
		base := keepLogitsReport(t, c.set...)
		keep := keepLogitsReport(t, append(c.set, "training.keep_logits=bf16")...)
		head := unitIndex(t, base, "lm_head")
		if got := keep.Component(CompLogits).AtRest; got != kept {
			t.Errorf("%s: kept logits %d B at rest, want %d", c.name, got, kept)
		}
		if got := base.Units[head].Activation - keep.Units[head].Activation; got != c.less {
			t.Errorf("%s: lm_head keeps %d B less, want %d", c.name, got, c.less)
		}
	}
}

// forwardPeak is r's largest total during the forward.
func forwardPeak(t *testing.T, r *Report) int64 {
	t.Helper()
	for _, p := range r.PhasePeaks {
		if p.Phase == PhaseForward {
			return p.Bytes
		}
	}
	t.Fatal("no forward phase peak")
	return 0
}

// TestKeptLogitsForwardPeak: kept logits raise the forward's peak by
// their own size once, not twice. torchtitan 83c879f's lm_head forward
// and loss, in train.py's order: output = self.output(h).float() makes
// the new logits while pred still holds the previous step's; pred =
// model(...) then frees those; only then does cross_entropy run and
// save its tensors (log_softmax's output). So with F the total before
// the head, A the head's norm and projection input, L the kept logits
// and S what the loss saves, the largest total is
// max(F + A + 2L, F + A + L + S), against F + A + S without the key
// (the 16-bit output before .float(), a forward transient, is not
// counted either way). On the Llama 2 7B FSDP2 run (t = 8·2048 =
// 16,384, V = 32,000):
//   - eager fp32 loss, keep_logits fp32: L = S = 4·t·V = 2,097,152,000 B,
//     so + L = 2,097,152,000 (counting the old logits beside
//     log_softmax's output gave + 2L = 4,194,304,000);
//   - eager, bf16: L = 2·t·V = 1,048,576,000, S = 4·t·V: + L =
//     1,048,576,000 (+ 2L before);
//   - compiled loss, bf16: S = 0 with the key (the loss saves the loop's
//     pred), 2·t·V without: + L = 1,048,576,000 (unchanged);
//   - fused loss, bf16: S = 4·t = 65,536 with the key (the log-sum-exp),
//     4·t + 2·t·V without: + L − 4·t = 1,048,510,464.
func TestKeptLogitsForwardPeak(t *testing.T) {
	for _, c := range []struct {
		name     string
		set      []string
		keep     string
		increase int64
	}{
		{"eager fp32", nil, "fp32", 2_097_152_000},
		{"eager bf16", nil, "bf16", 1_048_576_000},
		{"compiled loss", []string{"training.compile=loss"}, "bf16", 1_048_576_000},
		{"fused loss", []string{"training.cross_entropy=fused"}, "bf16", 1_048_510_464},
	} {
		base := forwardPeak(t, keepLogitsReport(t, c.set...))
		keep := forwardPeak(t, keepLogitsReport(t, append(c.set, "training.keep_logits="+c.keep)...))
		if got := keep - base; got != c.increase {
			t.Errorf("%s: forward peak %d → %d (%+d), want %+d", c.name, base, keep, got, c.increase)
		}
	}
}
