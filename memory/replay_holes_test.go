package memory

import (
	"fmt"
	"testing"
)

// Review tests of the replay's loss temporaries, stream
// choices and copy-outs, each with hand-computed values: loadFSDP's
// Llama 2 7B shape at micro_batch 4, t = 4·2048 = 8,192 tokens, V =
// 32,000, tV = 262,144,000 B; the head's model part (final norm and the
// projection's input) 268,468,224 B. micro_batch 4, not 2: at 2 the
// head's weight gradient (V·h·2 = 2tV there) would fill the 16-bit
// logits' hole exactly once the loss's gradients are freed.
const holeTV = 262_144_000

// replayFirstMicroStep replays the first micro-step of scenario sets'
// events up to and including the first event stop accepts, from the
// process's start and with no optimizer state (simulate's later steps
// would fill the holes the tests look at).
func replayFirstMicroStep(t *testing.T, sets []string, mode SegmentMode, stop func(Event) bool) (*Allocator, *Report) {
	t.Helper()
	s := loadFSDP(t, sets...)
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cut := *r
	cut.events = nil
	for _, e := range r.events {
		cut.events = append(cut.events, e)
		if stop(e) {
			break
		}
	}
	a, err := NewAllocator(mode, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, params := newSimState(s, &cut, a)
	st.microStep(1, false, false, params)
	if st.err != nil {
		t.Fatal(st.err)
	}
	return a, r
}

// freeOn are the sizes of a's free blocks on stream of at least least
// bytes.
func freeOn(a *Allocator, stream int, least int64) []int64 {
	var fr []int64
	for p := range a.free {
		for _, b := range a.freeBlocks(p) {
			if b.seg.stream == stream && b.size >= least {
				fr = append(fr, b.size)
			}
		}
	}
	return fr
}

// TestHeadForwardEventOrder: the head's forward events, in order, under
// each training.keep_logits: the 16-bit projection output (2tV) and the
// eager loss's fp32 upcast (4tV) around the loss's saved output (4tV);
// kept fp32 logits are the upcast itself, made before the previous
// step's are rebound away; kept 16-bit logits are the projection output,
// rebound before the upcast. FSDP2's copy-out marker (OpCopyOut) comes
// first; the loss's saved tensors are OpLossSaved.
func TestHeadForwardEventOrder(t *testing.T) {
	const tV, m = holeTV, 268_468_224
	type ev struct {
		c Comp
		o Op
		d int64
	}
	// FSDP2's copy-out marker first (OpCopyOut), the loss's saved
	// tensors as OpLossSaved.
	cp := ev{CompGathered, OpCopyOut, 0}
	for _, c := range []struct {
		keep string
		want []ev
	}{
		{"", []ev{cp, {CompActivations, OpCompute, m}, {CompLossTemp, OpCompute, 2 * tV}, {CompLossTemp, OpCompute, 4 * tV}, {CompActivations, OpLossSaved, 4 * tV}, {CompLossTemp, OpCompute, -4 * tV}, {CompLossTemp, OpCompute, -2 * tV}}},
		{"fp32", []ev{cp, {CompActivations, OpCompute, m}, {CompLossTemp, OpCompute, 2 * tV}, {CompLogits, OpCompute, 4 * tV}, {CompLossTemp, OpCompute, -2 * tV}, {CompLogits, OpRebind, -4 * tV}, {CompActivations, OpLossSaved, 4 * tV}}},
		{"bf16", []ev{cp, {CompActivations, OpCompute, m}, {CompLogits, OpCompute, 2 * tV}, {CompLogits, OpRebind, -2 * tV}, {CompLossTemp, OpCompute, 4 * tV}, {CompActivations, OpLossSaved, 4 * tV}, {CompLossTemp, OpCompute, -4 * tV}}},
	} {
		sets := []string{"training.micro_batch=4"}
		if c.keep != "" {
			sets = append(sets, "training.keep_logits="+c.keep)
		}
		r, err := Analyze(loadFSDP(t, sets...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		head := len(r.Units) - 1
		var got []ev
		for _, e := range r.events {
			if e.Phase == PhaseForward && e.Unit == head && e.Op != OpAllGather {
				got = append(got, ev{e.Component, e.Op, e.Delta})
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("keep_logits %q: head forward %v, want %v", c.keep, got, c.want)
		}
	}
}

// TestLossTempsLeaveHoles: the eager loss's temporaries, freed, leave
// holes on the compute stream that the backward's loss gradients must
// fit: after the loss, free blocks of 2tV and 4tV (one 6tV run under
// expandable segments); after the loss's two 4tV gradients (the head's
// weight gradient comes once they are freed: OpHeadGrad), the first in
// the 4tV hole, the second in a new 4tV segment (the 2tV hole, or the
// 2tV left of the 6tV run, too small), one 2tV, the compute stream's
// reserve grown by exactly 4tV.
func TestLossTempsLeaveHoles(t *testing.T) {
	const tV = holeTV
	for _, c := range []struct {
		mode          SegmentMode
		endFwd, after []int64
		grow          int64
	}{
		{SegmentsDefault, []int64{2 * tV, 4 * tV}, []int64{2 * tV}, 4 * tV},
		{SegmentsExpandable, []int64{6 * tV}, []int64{2 * tV}, 4 * tV},
	} {
		sets := []string{"training.micro_batch=4"}
		a1, r := replayFirstMicroStep(t, sets, c.mode, func(e Event) bool { return e.Component == CompLossTemp && e.Delta == -2*tV })
		head := len(r.Units) - 1
		a2, _ := replayFirstMicroStep(t, sets, c.mode, func(e Event) bool {
			return e.Phase == PhaseBackward && e.Unit == head && e.Component == CompActivations && e.Delta > 0
		})
		if got := freeOn(a1, StreamCompute, 50<<20); fmt.Sprint(got) != fmt.Sprint(c.endFwd) {
			t.Errorf("mode %v: free after the loss %v, want %v", c.mode, got, c.endFwd)
		}
		if got := freeOn(a2, StreamCompute, 50<<20); fmt.Sprint(got) != fmt.Sprint(c.after) {
			t.Errorf("mode %v: free after the loss gradients %v, want %v", c.mode, got, c.after)
		}
		if got := reservedOn(a2, StreamCompute) - reservedOn(a1, StreamCompute); got != c.grow {
			t.Errorf("mode %v: compute reserve grew %d, want %d", c.mode, got, c.grow)
		}
	}
}

// TestKeptFP32ProjectionHole: under keep_logits fp32 (torchtitan
// 83c879f) the 16-bit projection output, copied by .float() and freed,
// leaves a 2tV hole below the kept logits that the loss's saved 4tV
// output cannot use: after the loss saved it, the compute stream's only
// large free block is that hole.
func TestKeptFP32ProjectionHole(t *testing.T) {
	const tV = holeTV
	for _, mode := range []SegmentMode{SegmentsDefault, SegmentsExpandable} {
		a, _ := replayFirstMicroStep(t, []string{"training.micro_batch=4", "training.keep_logits=fp32"}, mode, func(e Event) bool {
			return e.Phase == PhaseForward && e.Component == CompActivations && e.Delta == 4*tV
		})
		if got := freeOn(a, StreamCompute, 50<<20); fmt.Sprint(got) != fmt.Sprint([]int64{2 * tV}) {
			t.Errorf("mode %v: free after the loss %v, want [%d]", mode, got, 2*tV)
		}
	}
}

// TestBackwardPrefetchNotCopiedOut: FSDP2 copies a unit out at its own
// pre-forward or pre-backward only; at a block's backward compute, the
// block before it, prefetched, is still one all-gather output on the
// all-gather stream (copying out earlier pending units is the forward's
// rule, not the backward's).
func TestBackwardPrefetchNotCopiedOut(t *testing.T) {
	s := loadFSDP(t)
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := len(r.Units) - 4 // a block resharded after forward (FSDP2 keeps the last)
	a, _ := replayFirstMicroStep(t, nil, SegmentsDefault, func(e Event) bool {
		return e.Phase == PhaseBackward && e.Unit == u && e.Op == OpCompute && e.Delta > 0
	})
	size := allocRoundSize(r.Units[u-1].Gather)
	gather := 0
	for _, b := range a.liveBlocks() {
		if b.size == size && b.seg.stream == StreamGather {
			gather++
		}
	}
	if gather != 1 {
		t.Errorf("unit %d's all-gather output on the all-gather stream: %d blocks of %d B, want 1", u-1, gather, size)
	}
}

// TestLossTempsUnderCP: a cp rank's loss temporaries are its sequence
// shard's: at cp 2, dp 4, t = 8·2048/2 = 8,192, the 16-bit logits and
// their fp32 upcast 6·8,192·32,000 = 1,572,864,000 B at the head's
// forward.
func TestLossTempsUnderCP(t *testing.T) {
	r := keepLogitsReport(t, "parallelism.cp=2", "parallelism.dp=4")
	if got := r.Component(CompLossTemp).Peak; got != 1_572_864_000 {
		t.Errorf("cp 2: loss temporaries peak %d B, want 1,572,864,000", got)
	}
}

// TestFSDP1InputOnReduceStream: FSDP1 allocates its fp32 reduce-scatter
// input on the post-backward stream, so under expandable segments that
// stream reserves more than the packed sharded gradients it also holds.
func TestFSDP1InputOnReduceStream(t *testing.T) {
	s := loadFSDP(t, "memory.expandable_segments=true", "communication.boundary=fsdp1")
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	packed, _, _ := packedShardGrads(s, r)
	_, a, err := simulate(s, r, SegmentsExpandable, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := reservedOn(a, StreamReduce); got <= packed {
		t.Errorf("fsdp1: the reduce-scatter stream reserves %d B, want more than the packed sharded gradients' %d B", got, packed)
	}
}
