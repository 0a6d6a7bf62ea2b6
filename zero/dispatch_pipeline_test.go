package zero

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestDedupPhasesPipelined holds a deduplicating dispatcher's two phases
// to DeepEP's pipeline (builder.a2aAfter): on Megatron-Bridge's
// Qwen3-30B-A3B row (2 × 8 H100, ep 16, grad_accum 64; QA5's
// mb_qwen30.yaml) under deepep, with Megatron's overlap off, every node
// phase starts when its rail phase starts, and the compute after them
// starts no earlier than both have ended, exactly then when nothing else
// holds it; so each dispatch and combine takes the longer phase, not the
// sum. Every rank runs (Full): a rail phase whose communicator starts it
// after its last member arrived must still release the node phase waiting
// for that start (executor.begin's began).
func TestDedupPhasesPipelined(t *testing.T) {
	doc := "version: 1\nstack: megatron\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096}\n" +
		"parallelism: {dp: 16, zero_stage: 1, ep: 16}\ntraining: {micro_batch: 1, grad_accum: 64, recompute: none, fp8: te, reduce_dtype: param_dtype}\n"
	s, err := scenarios.Load("../scenarios/testdata/q.yaml", []byte(doc), []string{"communication.moe_dispatcher=deepep"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Schedule.Overlap {
		t.Fatal("the row runs with Megatron's overlap on; the test wants it off (the phases must overlap each other all the same)")
	}
	tasks := r.Schedule.Tasks
	start := make([]units.Duration, len(tasks))
	end := make([]units.Duration, len(tasks))
	for i := range start {
		start[i], end[i] = -1, -1
	}
	for _, sp := range r.Spans[0] {
		start[sp.Task], end[sp.Task] = sp.Start, sp.End
	}
	consumers := make([][]int, len(tasks))
	for i, tk := range tasks {
		for _, d := range tk.After {
			consumers[d] = append(consumers[d], i)
		}
	}
	var pairs, exact int
	var shorter float64
	for i, node := range tasks {
		if node.Group != GroupEPNode {
			continue
		}
		if len(node.AfterStart) != 1 || tasks[node.AfterStart[0]].Group != GroupEPRail {
			t.Fatalf("task %d: a node phase not tied to a rail phase's start: %+v", i, node)
		}
		rail := node.AfterStart[0]
		if node.Stream != EPComm || tasks[rail].Stream != Compute {
			t.Fatalf("task %d: node phase on %v, rail phase on %v; want ep-comm and compute", i, node.Stream, tasks[rail].Stream)
		}
		pairs++
		if start[i] != start[rail] {
			t.Errorf("unit %d %v: node phase starts at %v, its rail phase at %v", node.Unit, node.Phase, start[i], start[rail])
		}
		both := max(end[i], end[rail])
		shorter += min(end[i]-start[i], end[rail]-start[rail]).Seconds()
		for _, c := range consumers[i] {
			if start[c] < both {
				t.Errorf("unit %d %v: task %d (%v) starts at %v, before both phases have ended (%v)", node.Unit, node.Phase, c, tasks[c].Kind, start[c], both)
			}
			if start[c] == both && end[rail] > end[i] {
				exact++ // held by the rail phase, through the compute stream
			}
		}
	}
	if pairs == 0 || exact == 0 {
		t.Fatalf("%d phase pairs, %d computes released by a longer rail phase's end: the row has none to test", pairs, exact)
	}
	if shorter < 2.645 || shorter > 2.655 {
		t.Errorf("the phases overlap by %.3f s in all; docs/compute-model.md states 2.65 s", shorter)
	}
	t.Logf("step %.3f s; %d phase pairs overlap by %.3f s; %d computes waited for a longer rail phase", r.StepTime.Seconds(), pairs, shorter, exact)
}

// TestCheckNodePhases: a gather that waited for a node phase alone would
// start while its rail phase still runs; Build refuses that schedule, and
// the pipelined row's own schedule passes.
func TestCheckNodePhases(t *testing.T) {
	tasks := []Task{
		{Kind: AllToAll, Stream: Compute, Group: GroupEPRail, Unit: 3},
		{Kind: AllToAll, Stream: EPComm, Group: GroupEPNode, Unit: 3, AfterStart: []int32{0}},
		{Kind: Forward, Stream: Compute, Unit: 4, After: []int32{1}},
		{Kind: AllGather, Stream: ParamComm, Unit: 5, After: []int32{1}},
	}
	if err := checkNodePhases(tasks[:3]); err != nil {
		t.Errorf("a compute task after the node phase: %v", err)
	}
	if err := checkNodePhases(tasks); err == nil || !strings.Contains(err.Error(), "task 3 (all-gather on param-comm) waits for the node phase of unit 3") {
		t.Errorf("a gather after the node phase alone: %v", err)
	}
}
