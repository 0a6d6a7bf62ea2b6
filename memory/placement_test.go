package memory

import (
	"math"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// checkpointed lists the 1-based blocks of n that pl checkpoints.
func checkpointed(pl Placement, n int) []int {
	var out []int
	for i := range n {
		if pl.Checkpointed(i) {
			out = append(out, i+1)
		}
	}
	return out
}

// seq is from, from+step, … up to to.
func seq(from, to, step int) []int {
	var out []int
	for b := from; b <= to; b += step {
		out = append(out, b)
	}
	return out
}

// TestFractionCheckpointed checks fms-fsdp's placement by hand
// (fms_fsdp/policies/ac_handler.py at ed74fd5: block b, counted from 1, is
// wrapped when b·p ≥ cut_off, cut_off = 1/2 then +1 per wrapped block):
//
//   - p = 1/2: b = 1: 0.5 ≥ 0.5 wraps (cut 1.5); b = 2: 1 < 1.5; b = 3: 1.5
//     wraps (2.5); … the odd blocks, the last of 8 or 40 not, where
//     recompute_every: 2 wraps the even ones, the last included;
//   - p = 1/3: b·p reaches 0.5, 1.5, 2.5 at b = 2, 5, 8 (the docstring's
//     [no-ac, ac, no-ac, …]): 13 of 40, b ≡ 2 (mod 3);
//   - p = 2/3: 0.67 ≥ 0.5 (b = 1), 2.0 ≥ 1.5 (3), 2.67 ≥ 2.5 (4), 4.0 ≥ 3.5
//     (6), 4.67 ≥ 4.5 (7): the docstring's [ac, no-ac, ac, ac, no-ac, ac,
//     …], b ≢ 2 (mod 3): 27 of 40, which no recompute_every gives;
//   - p = 1: every block.
func TestFractionCheckpointed(t *testing.T) {
	var twoThirds40 []int
	for b := 1; b <= 40; b++ {
		if b%3 != 2 {
			twoThirds40 = append(twoThirds40, b)
		}
	}
	for _, c := range []struct {
		name string
		pl   Placement
		n    int
		want []int
	}{
		{"p=1/2 of 8", Placement{Fraction: 1.0 / 2}, 8, []int{1, 3, 5, 7}},
		{"p=1/2 of 40", Placement{Fraction: 1.0 / 2}, 40, seq(1, 39, 2)},
		{"every 2 of 8", Placement{Every: 2}, 8, []int{2, 4, 6, 8}},
		{"every 2 of 40", Placement{Every: 2}, 40, seq(2, 40, 2)},
		{"p=1/3 of 8", Placement{Fraction: 1.0 / 3}, 8, []int{2, 5, 8}},
		{"p=1/3 of 40", Placement{Fraction: 1.0 / 3}, 40, seq(2, 38, 3)},
		{"p=2/3 of 8", Placement{Fraction: 2.0 / 3}, 8, []int{1, 3, 4, 6, 7}},
		{"p=2/3 of 40", Placement{Fraction: 2.0 / 3}, 40, twoThirds40},
		{"p=1 of 8", Placement{Fraction: 1}, 8, seq(1, 8, 1)},
		{"p=1 of 40", Placement{Fraction: 1}, 40, seq(1, 40, 1)},
		// A fraction wins over Every (the loader refuses both).
		{"p=1/2 with every 3", Placement{Every: 3, Fraction: 0.5}, 8, []int{1, 3, 5, 7}},
	} {
		if got := checkpointed(c.pl, c.n); !slices.Equal(got, c.want) {
			t.Errorf("%s: blocks %v, want %v", c.name, got, c.want)
		}
	}
	if got := len(checkpointed(Placement{Fraction: 2.0 / 3}, 40)); got != 27 {
		t.Errorf("p=2/3 of 40: %d blocks, want 27", got)
	}
}

// TestFractionCheckpointedLoop runs fms-fsdp's check_fn as written (float64
// products against a cut_off that starts at 1/2) for many p, decimals and
// quotients as Python's eval forms them, up to scenarios.MaxLayers blocks,
// and checks the closed form FractionCheckpointed against it.
func TestFractionCheckpointedLoop(t *testing.T) {
	ps := []float64{1, math.Nextafter(1, 0), 1 - 0x1p-40, 0.1, 0.3, 0.7, 0.9, 0.25, 0.75, 0.01, 0.99, 0.999999}
	for d := 1; d <= 64; d++ {
		for n := 1; n <= d; n++ {
			ps = append(ps, float64(n)/float64(d))
		}
	}
	const blocks = 1024
	for _, p := range ps {
		cut := 0.5
		for b := 1; b <= blocks; b++ {
			want := float64(b)*p >= cut
			if want {
				cut++
			}
			if got := FractionCheckpointed(b-1, p); got != want {
				t.Fatalf("p=%v block %d: %t, fms-fsdp's loop %t", p, b, got, want)
			}
		}
	}
}

// TestFractionPeakAgainstEveryTwo compares fms-fsdp's p = 1/2 with
// recompute_every: 2 on a 4-block Llama (h 1024, 8 heads = 8 KV heads, ffn
// 2816, vocab 1024, s 2048, b 1: t = 2048; flash attention, recompute
// full, ZeRO stage 0), derived by hand from docs/memory-model.md's tables.
// A block under none keeps N = 24·t·h (norms 4+2 each, their outputs 2
// each, q 2, k and v 2 each, attention output 2) + 8·t·f (w1, silu, w3,
// w2 input) + 8·t (two rstd) + 4·a·t (log-sum-exp) = 96,550,912 B; a
// checkpointed one its input, I = 2·t·h = 4,194,304 B, and rebuilds N in
// its backward. Both placements keep 2N + 2I. Every 2nd checkpoints the
// last block, whose recomputation lands on top of all of it: the
// activations peak at block.3's backward at 3N + 2I = 298,041,344 B. p =
// 1/2 leaves the last block out and checkpoints block.0, .2: each
// recomputation follows the free of the block after it, so the blocks'
// backward never passes 2N + 2I and the peak moves to lm_head's backward,
// 2N + 2I + the head's 25,174,016 kept (final norm 4·t·h + 4·t + 2·t·h,
// its output 2·t·h, fp32 log-probabilities 4·t·V) + 16,777,216 transient
// (2 × 4·t·V) = 243,441,664 B: 54,599,680 B below every 2nd.
func TestFractionPeakAgainstEveryTwo(t *testing.T) {
	const tk, h, f, a = 2048, 1024, 2816, 8
	const n = 24*tk*h + 8*tk*f + 8*tk + 4*a*tk
	const in = 2 * tk * h
	const head = 4*tk*h + 4*tk + 2*tk*h + 2*tk*h + 4*tk*1024 + 2*4*tk*1024
	if n != 96550912 || head != 41951232 {
		t.Fatalf("hand sums: N %d, head %d", n, head)
	}
	for _, c := range []struct {
		name      string
		tr        scenarios.Training
		peakUnit  int
		peak      int64
		recompute []int64 // per block
	}{
		{"every 2", scenarios.Training{MicroBatch: 1, Recompute: "full", RecomputeEvery: 2}, 4, 3*n + 2*in, []int64{0, n, 0, n}},
		{"p=1/2", scenarios.Training{MicroBatch: 1, Recompute: "full", RecomputeFraction: "1/2"}, 6, 2*n + 2*in + head, []int64{n, 0, n, 0}},
	} {
		s := resolved(&scenarios.Scenario{
			Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 2, GPU: "A100-80GB"},
			Model:       scenarios.Model{Kind: "transformer", Arch: "llama", Hidden: h, Layers: 4, Heads: a, KVHeads: a, FFN: f, Vocab: 1024, SeqLen: tk},
			Parallelism: scenarios.Parallelism{DP: 2, Stage: 0},
			Training:    c.tr,
		})
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Peak - r.AtRest; got != c.peak || r.PeakUnit != c.peakUnit {
			t.Errorf("%s: peak %d over rest at unit %d, want %d at unit %d", c.name, got, r.PeakUnit, c.peak, c.peakUnit)
		}
		if got := r.Component(CompActivations).AtTotalPeak; got != c.peak {
			t.Errorf("%s: activations at the peak %d, want %d", c.name, got, c.peak)
		}
		for b, want := range c.recompute {
			if got := r.Units[b+1].Recompute; got != want {
				t.Errorf("%s: block.%d rebuilds %d, want %d", c.name, b, got, want)
			}
		}
	}
}
