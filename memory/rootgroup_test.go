package memory

import (
	"testing"
)

// FSDP2's root group (rootgroup.go) on Llama 2 7B over 8 ranks (V = 32,000,
// h = 4,096: the embedding and the untied output 131,072,000 parameters
// each, the final norm 4,096; every dim 0 divides by 8, no padding):
//
//   - forward: one all-gather of the group, (2·131,072,000 + 4,096) · 2 B =
//     524,296,192 B, at the embedding; none at the final norm or the output;
//   - backward: the group released once, at the embedding, and reduced once
//     after every block's backward: one fp32 input of (2·131,072,000 +
//     4,096) · 4 B = 1,048,592,384 B and one output of 1/8 of it,
//     131,074,048 B;
//   - the replay, at the first block's backward (after the output's),
//     holds three compute-stream blocks of 131,072,000 · 2 B = 262,144,000
//     B: the embedding's and the output's unsharded parameters and the
//     output's gradient (with every unit its own group only the
//     embedding's: the output released and reduced after its backward).
func TestFSDP2RootGroup(t *testing.T) {
	s := loadFSDP(t, "memory.fsdp2_rs_own_stream=true")
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb, norm, head := unitIndex(t, r, "embedding"), unitIndex(t, r, "final_norm"), unitIndex(t, r, "lm_head")
	const gather, rsIn, rsOut, vh2 = 524_296_192, 1_048_592_384, 131_074_048, 262_144_000
	lastBlock := -1 // the index of the last block's backward event
	var gathers, releases, inputs, outputs []Event
	for i, e := range r.Timeline() {
		root := e.Unit == emb || e.Unit == norm || e.Unit == head
		if e.Phase == PhaseBackward && !root && e.Unit >= 0 {
			lastBlock = i
		}
		switch {
		case !root:
		case e.Component == CompGathered && e.Op == OpAllGather:
			gathers = append(gathers, e)
		case e.Component == CompGathered && e.Op == OpRelease:
			releases = append(releases, e)
		case e.Component == CompGradBuckets && e.Delta > 0:
			inputs = append(inputs, e)
			if i < lastBlock {
				t.Errorf("the root's reduce-scatter input at event %d, before the blocks' backward ends (%d)", i, lastBlock)
			}
		case e.Component == CompGrads && e.Op == OpReduceScatter && e.Delta > 0:
			outputs = append(outputs, e)
		}
	}
	for _, c := range []struct {
		what  string
		evs   []Event
		delta int64
	}{{"forward all-gather", gathers, gather}, {"release", releases, -gather}, {"reduce-scatter input", inputs, rsIn}, {"reduce-scatter output", outputs, rsOut}} {
		if len(c.evs) != 1 || c.evs[0].Unit != emb || c.evs[0].Delta != c.delta {
			t.Errorf("root %s: %+v; want one event of the embedding of %d B", c.what, c.evs, c.delta)
		}
	}
	// The replay up to the first block's backward compute.
	cut := *r
	cut.events = nil
	for _, e := range r.events {
		cut.events = append(cut.events, e)
		if e.Phase == PhaseBackward && e.Op == OpCompute && e.Unit != head && e.Unit != norm && e.Delta > 0 {
			break
		}
	}
	_, a, err := simulate(s, &cut, SegmentsDefault, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range a.liveBlocks() {
		if b.size == vh2 && b.seg.stream == StreamCompute {
			n++
		}
	}
	if n != 3 {
		t.Errorf("at the first block's backward: %d compute-stream blocks of %d B, want 3 (the embedding's and the output's parameters, the output's gradient)", n, vh2)
	}
}
