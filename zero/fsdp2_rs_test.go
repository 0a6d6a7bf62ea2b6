package zero

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFSDP2OneReduceScatterInFlight: under communication.boundary fsdp2
// the backward of unit u waits for unit u+2's gradient sync (FSDP2's
// post_backward makes the compute stream wait for the previous
// reduce-scatter before it issues the next), so on seed 002's 7B on 8 RTX
// 4090s, whose step is 98 % communication, the replay's memory peak is the
// memory model's (unreduced gradients do not pile up behind the network):
// 15,866,350,000 B with fp32 reductions.
func TestFSDP2OneReduceScatterInFlight(t *testing.T) {
	data, ok := scenarios.Example("seed002-7b")
	if !ok {
		t.Fatal("no seed002-7b example")
	}
	sets := []string{"training.shard_dtype=fp32", "training.reduce_dtype=fp32", "communication.boundary=fsdp2"}
	s, err := scenarios.Load("seed002-7b.yaml", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Max(r.PeakMemory), r.MemoryModel.Peak; got != want || want != 15_866_350_000 {
		t.Errorf("replay peak %d B, memory model %d B: want both 15,866,350,000 B", got, want)
	}
	// Every backward after the first two waits for the sync of the unit
	// two before it in backward order.
	L := len(r.Schedule.Costs)
	bwd := map[int]int32{}
	sync := map[int][]int32{}
	for i, task := range r.Schedule.Tasks {
		switch {
		case task.Kind == Backward:
			bwd[task.Unit] = int32(i)
		case task.Phase == PhaseBackwardRS:
			sync[task.Unit] = append(sync[task.Unit], int32(i))
		}
	}
	if len(sync) < L-1 {
		t.Fatalf("%d units with a reduce-scatter of %d", len(sync), L)
	}
	for u := L - 3; u >= 0; u-- {
		after := r.Schedule.Tasks[bwd[u]].After
		for _, rs := range sync[u+2] {
			if !slices.Contains(after, rs) {
				t.Errorf("unit %d's backward does not wait for unit %d's reduce-scatter (task %d)", u, u+2, rs)
			}
		}
	}
}
