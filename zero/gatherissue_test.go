package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestForwardGatherIssuedDUnitsAhead: at stage 3 with prefetch depth d,
// unit u's forward all-gather is issued when unit u−d's forward starts
// (FSDP issues the next unit's all-gather from the current unit's
// pre-forward, the host one unit ahead of the GPU: depth 1,
// scenarios.DefaultPrefetchDepth cites it), and the first d units' at the
// step's start. Four 1 ms + 2 ms layers of 100M bf16 parameters on 2
// A100s, one micro-step.
func TestForwardGatherIssuedDUnitsAhead(t *testing.T) {
	for _, d := range []int{1, 2} {
		t.Run(fmt.Sprintf("depth %d", d), func(t *testing.T) {
			s := fourLayers(t, "parallelism.zero_stage=3", fmt.Sprintf("communication.prefetch_depth=%d", d))
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			fwdStart := map[int]units.Duration{}
			arrive := map[int]units.Duration{}
			for _, sp := range res.Spans[0] {
				switch task := &res.Schedule.Tasks[sp.Task]; {
				case task.Kind == Forward:
					fwdStart[task.Unit] = sp.Start
				case task.Phase == PhaseForwardAG:
					arrive[task.Unit] = sp.Arrive
				}
			}
			if len(arrive) != 4 {
				t.Fatalf("%d forward all-gathers, want one per layer", len(arrive))
			}
			for u := range 4 {
				var want units.Duration // the step's start
				if u >= d {
					want = fwdStart[u-d]
				}
				if arrive[u] != want {
					t.Errorf("unit %d's all-gather issued at %v, want %v (unit %d's forward starts)", u, arrive[u], want, u-d)
				}
			}
		})
	}
}

// hsdpYAML is K = 2 copies of the sharded state over the 4 GPUs of one
// A100 node (NVLink3, 300 GB/s, 500 ns): two shard groups of 2, four
// layers of 1e9 bf16 parameters in a bucket each, whose 2 GB of gradients
// take ≈ 3.3 ms to reduce-scatter alone, against a 1 ms backward.
const hsdpYAML = `version: 1
cluster: {nodes: 1, gpus_per_node: 4, gpu: A100-80GB}
model:
  kind: mlp
  hidden: 64
  groups: [{name: dense, precision: bf16}]
  layer_list:
    - {name: l0, params: 1000000000, fwd: 1ms, bwd: 1ms}
    - {name: l1, params: 1000000000, fwd: 1ms, bwd: 1ms}
    - {name: l2, params: 1000000000, fwd: 1ms, bwd: 1ms}
    - {name: l3, params: 1000000000, fwd: 1ms, bwd: 1ms}
parallelism: {dp: 4, zero_stage: 2, k: 2}
communication: {algorithm: ring, compute_interference: 0, bucket_size: 2GB}
`

// TestInterAllReduceStream: at K > 1 each bucket's reduce-scatter is
// followed by an all-reduce across the copies (interStream). FSDP2 runs
// that all-reduce on its own stream beside the next reduce-scatter, so
// l2's reduce-scatter, issued while l3's runs, starts as l3's ends, before
// l3's all-reduce ends (torchtitan's stage 2: FSDP2 with
// reshard_after_forward "never"; no stack behaves the same). Megatron
// issues both on one communication stream, so l2's reduce-scatter starts
// as l3's all-reduce ends (--num-distributed-optimizer-instances 2,
// --overlap-grad-reduce).
func TestInterAllReduceStream(t *testing.T) {
	for _, c := range []struct {
		name   string
		sets   []string
		beside bool
	}{
		{"torchtitan (FSDP2)", []string{"stack=torchtitan"}, true},
		{"no stack", nil, true},
		// --overlap-grad-reduce (the stack's default is off).
		{"megatron", []string{"stack=megatron", "parallelism.zero_stage=1", "communication.overlap=true"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Load("hsdp.yaml", []byte(hsdpYAML), c.sets)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			rs, ar := map[int]Span{}, map[int]Span{} // by the bucket's unit
			for _, sp := range res.Spans[0] {
				task := &res.Schedule.Tasks[sp.Task]
				if task.Bucket < 0 {
					continue
				}
				switch u := res.Schedule.Buckets[task.Bucket].FirstUnit; task.Phase {
				case PhaseBackwardRS:
					rs[u] = sp
				case PhaseInterAR:
					ar[u] = sp
				}
			}
			if len(rs) != 4 || len(ar) != 4 {
				t.Fatalf("%d reduce-scatters and %d inter-group all-reduces, want one of each per layer", len(rs), len(ar))
			}
			for u := 2; u >= 0; u-- {
				switch {
				case c.beside && (rs[u].Start != rs[u+1].End || rs[u].Start >= ar[u+1].End):
					t.Errorf("l%d's reduce-scatter starts at %v; want it as l%d's ends (%v), before l%d's all-reduce ends (%v)", u, rs[u].Start, u+1, rs[u+1].End, u+1, ar[u+1].End)
				case !c.beside && rs[u].Start != ar[u+1].End:
					t.Errorf("l%d's reduce-scatter starts at %v; want it as l%d's all-reduce ends (%v)", u, rs[u].Start, u+1, ar[u+1].End)
				}
			}
		})
	}
}
