package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestNoSyncGradientLevel follows the rank's gradient memory through the
// walk under FSDP's no_sync, not only what the forward puts on and the
// optimizer frees (TestNoSyncHeldGradients): four layers of 100M bf16
// parameters over 2 GPUs, a = 4 micro-steps, FSDP1.
//
//   - Stage 3: the held unsharded gradients, 4 × 100M × 2 B = 800 MB, go on
//     as the last micro-step's forward starts. Each unit's backward makes
//     its new gradient, 100M × 2 B = 200 MB, beside them; its reduce-scatter
//     leaves the unit's shard, 100M × 2 B / 2 = 100 MB, and frees the
//     unit's held gradient (FSDP1's _post_backward_hook sets
//     flat_param.grad = None and reduce-scatters it). So the level peaks at
//     unit 3's reduce-scatter, 800 + 200 + 100 = 1,100 MB, falls by a unit
//     at each, and stands at the four shards, 400 MB, when the optimizer
//     runs: the least between the forward and the optimizer too.
//   - FSDP1's stage 2 reduces as its stage 3 (shardsPerUnit): the same
//     levels.
//   - Stage 2 outside FSDP (boundary reshard): the gradient buckets carry
//     the reduction; the held 800 MB is the whole of the gradient
//     component, each unit's part freed by its bucket's reduction in the
//     last micro-step: nothing left at the optimizer.
func TestNoSyncGradientLevel(t *testing.T) {
	const params = noSyncLayerParams
	yaml := noSyncMLP("")
	const held, unsharded, shard = 4 * params * 2, params * 2, params * 2 / 2
	for _, c := range []struct {
		stage          int
		boundary       string
		low, peak, end int64
	}{
		{3, "fsdp1", 4 * shard, held + unsharded + shard, 4 * shard},
		{2, "fsdp1", 4 * shard, held + unsharded + shard, 4 * shard},
		{2, "reshard", 0, held, 0},
	} {
		t.Run(fmt.Sprintf("stage %d %s", c.stage, c.boundary), func(t *testing.T) {
			s, err := scenarios.Load("four-layers.yaml", []byte(yaml), []string{fmt.Sprintf("parallelism.zero_stage=%d", c.stage),
				"communication.boundary=" + c.boundary, "training.grad_sync=last", "training.grad_accum=4"})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Analyze(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var level, low, peak, end int64
			low = -1
			for _, e := range r.Timeline() {
				if e.Component != CompGrads {
					continue
				}
				if e.Phase == PhaseOptimizer {
					end = level
				}
				level += e.Delta
				if e.Phase == PhaseForward || e.Phase == PhaseBackward {
					if low < 0 || level < low {
						low = level
					}
					peak = max(peak, level)
				}
			}
			if low != c.low || peak != c.peak || end != c.end {
				t.Errorf("gradients between the forward and the optimizer: least %d B, most %d B, %d B at the optimizer; want %d, %d and %d", low, peak, end, c.low, c.peak, c.end)
			}
			if level != 0 {
				t.Errorf("%d B of gradients left after the step, want 0", level)
			}
		})
	}
}

// TestNoSyncSeedConventions: the seed conventions count model states by
// their tables' formulas, seed 002's "Memory per GPU" (2 + 14/N)·P at
// stage 2 and 16·P/N at stage 3 (P = 400M here, N = 2: 3,600,000,000 and
// 3,200,000,000 B at rest), with a fixed 2 bytes of gradient per
// parameter; no_sync's held unsharded gradients are outside them, so
// grad_sync last changes neither the figure at rest nor the peak.
func TestNoSyncSeedConventions(t *testing.T) {
	const params = noSyncLayerParams
	yaml := noSyncMLP("")
	const p, n = 4 * params, 2
	for _, c := range []struct {
		stage  int
		atRest int64
	}{{2, 2*p + 14*p/n}, {3, 16 * p / n}} {
		for _, cv := range []Convention{ConventionSeed000, ConventionSeed002} {
			peak := map[string]int64{}
			for _, sync := range []string{"every", "last"} {
				s, err := scenarios.Load("four-layers.yaml", []byte(yaml), []string{fmt.Sprintf("parallelism.zero_stage=%d", c.stage),
					"communication.boundary=fsdp1", "training.grad_sync=" + sync, "training.grad_accum=4"})
				if err != nil {
					t.Fatal(err)
				}
				r, err := Analyze(s, Options{Convention: cv})
				if err != nil {
					t.Fatal(err)
				}
				if cv == ConventionSeed002 && r.AtRest != c.atRest {
					t.Errorf("stage %d, %v, grad_sync %s: %d B at rest, want %d", c.stage, cv, sync, r.AtRest, c.atRest)
				}
				peak[sync] = r.Peak
			}
			if peak["last"] != peak["every"] {
				t.Errorf("stage %d, %v: peak %d B under no_sync, %d B reducing every micro-step; want them equal", c.stage, cv, peak["last"], peak["every"])
			}
		}
	}
}

// TestNoSyncHeadGradient: the output projection's gradient, which the eager
// loss's backward makes after the loss (OpHeadGrad), goes into its held
// gradient under no_sync like every other unit's: on llama2-7b (the
// default example) at stage 3 under FSDP1 with grad_sync last, the
// gradients at the optimizer are the last micro-step's shards alone (each
// reduce-scatter freed its unit's held gradient, the head's too), and the
// level never exceeds the held ones and the shards by more than one unit's
// new gradient.
func TestNoSyncHeadGradient(t *testing.T) {
	data, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	s, err := scenarios.Load("default.yaml", data, []string{"parallelism.zero_stage=3", "communication.boundary=fsdp1",
		"training.grad_sync=last", "training.grad_accum=2"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var held, shards, step int64
	head := false
	for _, u := range r.Units {
		held += u.HeldGrad
		shards += u.ShardGrad
		step = max(step, u.Grad)
		head = head || u.AfterLogits > 0
	}
	if held == 0 || !head {
		t.Fatalf("held %d B, a head under the eager loss %v: the case no longer covers the head's gradient", held, head)
	}
	var level, peak, end int64
	headGrad := false
	for _, e := range r.Timeline() {
		if e.Component != CompGrads {
			continue
		}
		if e.Phase == PhaseOptimizer {
			end = level
		}
		headGrad = headGrad || e.Op == OpHeadGrad
		level += e.Delta
		peak = max(peak, level)
	}
	if !headGrad {
		t.Fatal("no OpHeadGrad gradient event: the case no longer covers the head's gradient")
	}
	if end != shards {
		t.Errorf("%d B of gradients at the optimizer, want the %d of shards (the %d held freed by the reduce-scatters)", end, shards, held)
	}
	if peak > held+shards+step {
		t.Errorf("gradients peak at %d B, above the %d held, %d of shards and one unit's %d", peak, held, shards, step)
	}
}
