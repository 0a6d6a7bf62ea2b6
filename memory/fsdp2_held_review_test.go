package memory

import "testing"

// TestFSDP2HoldsAllGatherOutputThroughForward: FSDP2 keeps a unit's
// all-gather output alive after its copy-out until the next group's
// copy-out ("we must keep the current all-gather result alive until that
// copy-in finishes ... the next parameter group is responsible for freeing
// the current's all-gather result", pytorch/pytorch#117973), so while the
// first block's forward allocates its activations the all-gather stream
// holds that block's output besides the outputs of the blocks gathered
// ahead of their copy-out. The count of the latter comes from the
// timeline's events alone (forward all-gathers without a copy-out yet);
// a replay that freed the output at the copy-out, as it does in backward,
// would hold one block fewer.
func TestFSDP2HoldsAllGatherOutputThroughForward(t *testing.T) {
	s := loadFSDP(t)
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := unitIndex(t, r, "block.0")
	size := allocRoundSize(r.Units[u].Gather)
	cut := *r
	cut.events = nil
	gathered := map[int]bool{}
	for _, e := range r.events {
		cut.events = append(cut.events, e)
		if e.Phase != PhaseForward {
			continue
		}
		switch {
		case e.Op == OpAllGather && e.Component == CompGathered && e.Delta > 0:
			gathered[e.Unit] = true
		case e.Op == OpCopyOut:
			delete(gathered, e.Unit)
		}
		if e.Op == OpCompute && e.Component == CompActivations && e.Unit == u && e.Delta > 0 {
			break
		}
	}
	ahead := 0
	for v := range gathered {
		if allocRoundSize(r.Units[v].Gather) == size {
			ahead++
		}
	}
	_, a, err := simulate(s, &cut, SegmentsDefault, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, b := range a.liveBlocks() {
		if b.size == size && b.seg.stream == StreamGather {
			live++
		}
	}
	if live != 1+ahead {
		t.Errorf("during block.0's forward: %d all-gather outputs of %d B live, want block.0's held one and %d gathered ahead", live, size, ahead)
	}
}
