package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAutocastFSDPCasts holds training.autocast under PyTorch FSDP at
// zero_stage 3, recompute full, to bytes derived from autocastYAML's
// shapes (autocast_test.go): a block's matmul weights cast to bf16 are
// 36,864 × 2 = 73,728 B, its largest (gate_proj, up_proj, down_proj,
// 64×128) 8,192 × 2 = 16,384 B; lm_head's 16,384 × 2 = 32,768 B.
//
//   - FSDP2 runs the forward on leaf nn.Parameters, whose casts autocast's
//     cache keeps to the forward's end: 2·73,728 + 32,768 = 180,224 B
//     there, as under DDP.
//   - FSDP1 runs it on views of the flat parameter, which the cache skips:
//     a checkpointed block's cast lives while its matmul runs (16,384 B at
//     most), lm_head's, saved by its matmul, to its backward; the forward's
//     casts peak at 32,768 B. Each block's recomputation casts its
//     73,728 B anew in both.
//
// The checkpointed block keeps its input, the fp32 residual stream under
// autocast: 4 B × 16 tokens × 64 = 4,096 B, where bf16 parameters keep
// 2,048.
func TestAutocastFSDPCasts(t *testing.T) {
	const blockCasts, headCasts, largest = acBlockCasts, acHeadCasts, acLargestCast
	for _, c := range []struct {
		boundary      string
		fwdPeak       int64
		bwdPeak       int64
		perOp, cached bool
	}{
		{"fsdp2", 2*blockCasts + headCasts, blockCasts, false, true},
		{"fsdp1", headCasts, blockCasts, true, false},
	} {
		s, err := scenarios.Load("s.yaml", []byte(autocastYAML), []string{"parallelism.zero_stage=3", "communication.boundary=" + c.boundary, "training.recompute=full"})
		if err != nil {
			t.Fatalf("%s: %v", c.boundary, err)
		}
		r := mustAnalyze(t, s, Options{})
		var cur, fwd, bwd int64
		for _, e := range r.Timeline() {
			if e.Component != CompCasts {
				continue
			}
			cur += e.Delta
			if e.Phase == PhaseForward {
				fwd = max(fwd, cur)
			} else {
				bwd = max(bwd, cur)
			}
		}
		if cur != 0 || fwd != c.fwdPeak || bwd != c.bwdPeak {
			t.Errorf("%s: casts peak %d B in forward, %d in backward, end at %d; want %d, %d, 0", c.boundary, fwd, bwd, cur, c.fwdPeak, c.bwdPeak)
		}
		rebuilt := 0
		for u, ui := range r.Units {
			if !ui.CastsRebuilt {
				continue
			}
			rebuilt++
			if ui.CastsPerOp != c.perOp || (c.perOp && ui.CastPeak != largest) {
				t.Errorf("%s: unit %d CastsPerOp %t CastPeak %d, want %t and %d", c.boundary, u, ui.CastsPerOp, ui.CastPeak, c.perOp, largest)
			}
			if ui.Activation != 4*16*64 {
				t.Errorf("%s: checkpointed unit %d keeps %d B, want the fp32 input 4,096", c.boundary, u, ui.Activation)
			}
		}
		if rebuilt != 2 {
			t.Errorf("%s: %d units rebuild their casts, want the two checkpointed blocks", c.boundary, rebuilt)
		}
		if s.AutocastCached() != c.cached {
			t.Errorf("%s: AutocastCached %t, want %t", c.boundary, s.AutocastCached(), c.cached)
		}
	}
	// bf16 parameters without autocast: the input in bf16.
	s, err := scenarios.Load("s.yaml", []byte(autocastYAML), []string{"parallelism.zero_stage=3", "communication.boundary=fsdp1", "training.recompute=full", "training.autocast=none", "training.param_dtype=bf16", "training.shard_dtype=fp32"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, s, Options{})
	blocks := 0
	for u, l := range s.Model.LayerList {
		if !l.Block {
			continue
		}
		blocks++
		if r.Units[u].Activation != 2*16*64 {
			t.Errorf("bf16: block unit %d keeps %d B, want 2,048", u, r.Units[u].Activation)
		}
	}
	if blocks != 2 {
		t.Errorf("bf16: %d block units, want autocastYAML's 2", blocks)
	}
}

// TestAutocastFSDP1CastsAllocator: the caching-allocator replay (allocseq)
// follows UnitInfo.CastsPerOp. Under FSDP1 a checkpointed block's forward
// casts live one matmul at a time (FSDP1's flat-parameter views escape
// autocast's cache, scenarios/autocast_fsdp.go), so the allocator is asked
// for the largest, gate_proj's 64×128 bf16 cast, 16,384 B, not for every
// weight's; the recomputation in backward casts all seven again: q 64×64
// and o 64×64 (8,192 B each), k and v 32×64 (4,096 B each), gate, up and
// down 64×128 (16,384 B each), 73,728 B. Every size is a multiple of the
// allocator's 512-B rounding, so the allocated bytes move by exactly these.
func TestAutocastFSDP1CastsAllocator(t *testing.T) {
	const onePeak, allCasts = 16_384, 2*8_192 + 2*4_096 + 3*16_384
	s, err := scenarios.Load("s.yaml", []byte(autocastYAML), []string{"parallelism.zero_stage=3", "communication.boundary=fsdp1", "training.recompute=full"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, s, Options{})
	sim, err := SimulateReserved(s, r, SegmentsDefault, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := r.Timeline()
	seen := map[Phase]int{}
	for i, e := range evs {
		if e.Component != CompCasts || e.Delta <= 0 || !s.Model.LayerList[e.Unit].Block {
			continue
		}
		var before, after int64
		found := false
		for _, p := range sim.Series {
			if p.Event < i {
				before = p.Allocated
			}
			if p.Event == i {
				after, found = p.Allocated, true
			}
		}
		want := int64(allCasts)
		if e.Phase == PhaseForward {
			want = onePeak
		}
		if !found || after-before != want {
			t.Errorf("event %d (%s casts of unit %d): allocated +%d B (point found %t), want +%d", i, e.Phase, e.Unit, after-before, found, want)
		}
		seen[e.Phase]++
	}
	if seen[PhaseForward] != 2 || len(seen) != 2 {
		t.Errorf("block cast events by phase %v, want the two blocks' in forward and in backward", seen)
	}
}
