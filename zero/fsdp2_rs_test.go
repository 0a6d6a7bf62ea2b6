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
// 15,866,350,000 B with fp32 reductions. By hand (P = 7e9 in an embedding
// of 131,072,000 and 32 blocks of b = 214,654,000; no activations: a bare
// parameter count), in block.1's backward: the fp32 shard, m and v 3·4P/8;
// blocks 31–2's reduced fp32 shards 30·4b/8 (block.2's being written) and
// block.1's bf16 gradients 2b; block.2's fp32 reduce-scatter input 4b, the
// one in flight; block.1 and the prefetched block.0 gathered, 2·2b.
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
	const (
		P, b = 7_000_000_000, 214_654_000
		hand = 3*4*P/8 + 30*4*b/8 + 2*b + 4*b + 2*2*b
	)
	if got, want := slices.Max(r.PeakMemory), r.MemoryModel.Peak; got != want || want != hand {
		t.Errorf("replay peak %d B, memory model %d B: want both %d B, by hand", got, want, int64(hand))
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
