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
// keptTwice checks component comp of keepLogitsReport, called what in
// errors: none without set; with set, whole at rest (the previous step's)
// and twice that at its peak, in the forward (the new before the old is
// freed). It returns the report with set and the component.
// TestKeptLogitsLifetime and TestKVCacheKept share it.
func keptTwice(t *testing.T, comp Comp, what, set string, whole int64) (*Report, Component) {
	t.Helper()
	if got := keepLogitsReport(t).Component(comp); got.AtRest != 0 || got.Peak != 0 {
		t.Fatalf("unset: %s %d at rest, %d at peak, want none", what, got.AtRest, got.Peak)
	}
	r := keepLogitsReport(t, set)
	c := r.Component(comp)
	if c.AtRest != whole || c.Peak != 2*whole || c.PeakPhase != PhaseForward {
		t.Errorf("%s: %d at rest, %d at peak in %s; want %d, %d in forward", what, c.AtRest, c.Peak, c.PeakPhase, whole, 2*whole)
	}
	return r, c
}

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
	const kept = 4 * (8 * 2048) * 32_000 // 2,097,152,000 B
	r, c := keptTwice(t, CompLogits, "kept logits", "training.keep_logits=fp32", kept)
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
	if got, want := r.Component(CompLogits).AtRest, int64(4*(8*2048/2)*32_000); got != want {
		t.Errorf("cp 2: kept logits %d B at rest, want %d", got, want)
	}
}

// TestKeptLogitsMovePeak: the kept fp32 logits add 2,097,152,000 B to
// the allocated peak, in lm_head's backward for this run, and to the
// largest total over the backward after lm_head's (the blocks'
// backwards), where a lifetime ending with the head's backward would
// add nothing.
func TestKeptLogitsMovePeak(t *testing.T) {
	const kept = 4 * (8 * 2048) * 32_000 // 2,097,152,000 B
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
	const kept = 2 * (8 * 2048) * 32_000 // 1,048,576,000 B
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
// their own size once, not twice, and under an eager loss not at all,
// since the loss's forward temporaries (HeadLossTemps) dominate there.
// torchtitan 83c879f's lm_head forward and loss, in train.py's order:
// output = self.output(h).float() makes the new logits from the 16-bit
// projection output while pred still holds the previous step's; pred =
// model(...) then frees those; only then does cross_entropy run and save
// its tensors (log_softmax's output). Without the key (torchtitan
// 9dec370) the 16-bit logits live through the loss, whose fp32 upcast is
// log_softmax's input. So with F the total before the head, A the head's
// norm and projection input, L the kept logits, S what the loss saves, P
// = 2·t·V the 16-bit logits and U = 4·t·V the upcast, the largest total
// is F + A + P + U + S without the key, F + A + 2L + P with fp32 kept
// logits (no upcast: they are the loss's input), and max(F + A + 2L,
// F + A + L + U + S) with 16-bit ones. On the Llama 2 7B FSDP2 run (t =
// 8·2048 = 16,384, V = 32,000, t·V = 524,288,000):
//   - eager fp32 loss, keep_logits fp32: L = S = U = 4·t·V: 10·t·V either
//     way, + 0 (it was + L = 2,097,152,000 when the temporaries were left
//     out, and + 2L before the rebinding was modelled);
//   - eager, bf16: L = P = 2·t·V: 10·t·V either way, + 0 (+ L =
//     1,048,576,000 without the temporaries);
//   - compiled loss, bf16: no temporaries; S = 0 with the key (the loss
//     saves the loop's pred), 2·t·V without: + L = 1,048,576,000;
//   - fused loss, bf16: no temporaries; S = 4·t = 65,536 with the key
//     (the log-sum-exp), 4·t + 2·t·V without: + L − 4·t = 1,048,510,464.
func TestKeptLogitsForwardPeak(t *testing.T) {
	for _, c := range []struct {
		name     string
		set      []string
		keep     string
		increase int64
	}{
		{"eager fp32", nil, "fp32", 0},
		{"eager bf16", nil, "bf16", 0},
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

// TestHeadLossTemps: the head's forward temporaries around the loss
// (HeadLossTemps), by hand on the same run (t = 16,384, V = 32,000, t·V =
// 524,288,000): without the key, the 16-bit logits P = 2·t·V =
// 1,048,576,000 (torchtitan 9dec370's pred, deleted after the loss) and
// the fp32 upcast U = 4·t·V = 2,097,152,000; with 16-bit kept logits the
// upcast only; with fp32 kept logits (the model's .float()) the 16-bit
// projection output only; a compiled or fused loss neither. The component
// peaks at the head's forward with P + U, none at rest, and the eager
// loss's forward peak exceeds the compiled one's by P + U + (4 − 2)·t·V
// (what the eager loss saves, log_softmax's fp32 output, against the
// compiled loss's 16-bit pred) = 4,194,304,000 B.
func TestHeadLossTemps(t *testing.T) {
	base := BlockDims{Arch: "llama", Seq: 2048, Batch: 8, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Vocab: 32000, LossFP32: true}
	for _, c := range []struct {
		name           string
		d              func(BlockDims) BlockDims
		logits, upcast int64
	}{
		{"eager", func(d BlockDims) BlockDims { return d }, 1_048_576_000, 2_097_152_000},
		{"kept 16-bit", func(d BlockDims) BlockDims { d.KeepLogits = 2; return d }, 0, 2_097_152_000},
		{"kept fp32", func(d BlockDims) BlockDims { d.KeepLogits = 4; return d }, 1_048_576_000, 0},
		{"16-bit loss", func(d BlockDims) BlockDims { d.LossFP32 = false; return d }, 1_048_576_000, 0},
		{"compiled", func(d BlockDims) BlockDims { d.LossCompiled = true; return d }, 0, 0},
		{"fused", func(d BlockDims) BlockDims { d.LossFused = true; return d }, 0, 0},
		// Megatron's VocabParallelCrossEntropy saves its fp32 copy.
		{"megatron", func(d BlockDims) BlockDims { d.LossSavesUpcast = true; return d }, 1_048_576_000, 0},
		{"no vocabulary", func(d BlockDims) BlockDims { d.Vocab = 0; return d }, 0, 0},
	} {
		logits, upcast, err := HeadLossTemps(c.d(base))
		if err != nil || logits != c.logits || upcast != c.upcast {
			t.Errorf("%s: %d, %d (%v), want %d, %d", c.name, logits, upcast, err, c.logits, c.upcast)
		}
	}
	bad := base
	bad.KeepLogits = 3
	if _, _, err := HeadLossTemps(bad); err == nil {
		t.Error("kept logits of 3 bytes: no error")
	}
	if got := keepLogitsReport(t, "stack=megatron", "parallelism.zero_stage=1").Component(CompLossTemp).Peak; got != 1_048_576_000 {
		t.Errorf("stack megatron: loss temporaries peak %d B, want the 16-bit logits' 1,048,576,000 (the upcast is the saved output)", got)
	}
	eager := keepLogitsReport(t)
	comp := eager.Component(CompLossTemp)
	if comp.Peak != 3_145_728_000 || comp.AtRest != 0 || comp.PeakPhase != PhaseForward {
		t.Errorf("loss temporaries %+v, want a forward peak of 3145728000 B, none at rest", comp)
	}
	if got := forwardPeak(t, eager) - forwardPeak(t, keepLogitsReport(t, "training.compile=loss")); got != 4_194_304_000 {
		t.Errorf("eager loss's forward peak is %d B above the compiled one's, want 4194304000", got)
	}
	if got := keepLogitsReport(t, "training.compile=loss").Component(CompLossTemp); got.Peak != 0 {
		t.Errorf("compiled loss: loss temporaries %+v, want none", got)
	}
}

// TestLossTempNote (QA18 M3): the loss temporaries' note names what the
// scenario has: both under the eager fp32 loss, the 16-bit logits alone
// under stack: megatron (its upcast is the saved output), the upcast alone
// when the loop keeps 16-bit logits, the projection's output when it keeps
// fp32 ones.
func TestLossTempNote(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "the 16-bit logits while the loss runs and the loss's fp32 upcast of the 16-bit logits (head forward only)"},
		{[]string{"stack=megatron", "parallelism.zero_stage=1"}, "the 16-bit logits while the loss runs (head forward only)"},
		{[]string{"training.keep_logits=bf16"}, "the loss's fp32 upcast of the 16-bit logits (head forward only)"},
		{[]string{"training.keep_logits=fp32"}, "the projection's 16-bit output until .float() copies it into the kept fp32 logits (head forward only)"},
	} {
		if got := keepLogitsReport(t, c.sets...).Component(CompLossTemp).Note; got != c.want {
			t.Errorf("%v: note %q, want %q", c.sets, got, c.want)
		}
	}
}
