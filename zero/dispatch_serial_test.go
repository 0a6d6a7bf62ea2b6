package zero

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestDedupPhasesSerialBias measures what running a deduplicating
// dispatcher's two phases back to back costs, where DeepEP pipelines them
// (internode.cu's RDMA senders and NVLink forwarders): on rank 0's
// timeline, each node phase that follows its rail phase adds min(rail,
// node) over the max(rail, node) a perfect pipeline would take. Megatron-
// Bridge's Qwen3-30B-A3B row (2 × 8 H100, ep 16, grad_accum 64; QA5's
// mb_qwen30.yaml) under deepep: the sum of those minima is the upper bound
// of the bias the ep note and docs/compute-model.md state: 2.65 s (the
// node phases, the shorter each time) of the 13.50 s step, 19.6 %.
func TestDedupPhasesSerialBias(t *testing.T) {
	doc := "version: 1\nstack: megatron\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096}\n" +
		"parallelism: {dp: 16, zero_stage: 1, ep: 16}\ntraining: {micro_batch: 1, grad_accum: 64, recompute: none, fp8: te, reduce_dtype: param_dtype}\n"
	s, err := scenarios.Load("../scenarios/testdata/q.yaml", []byte(doc), []string{"communication.moe_dispatcher=deepep"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	var overlap, rail, node float64
	spans := r.Spans[0]
	for i := 1; i < len(spans); i++ {
		a, b := r.Schedule.Tasks[spans[i-1].Task], r.Schedule.Tasks[spans[i].Task]
		if b.Group != GroupEPNode || a.Group != GroupEPRail || a.Unit != b.Unit {
			continue
		}
		ra, nb := (spans[i-1].End - spans[i-1].Start).Seconds(), (spans[i].End - spans[i].Start).Seconds()
		rail += ra
		node += nb
		overlap += min(ra, nb)
	}
	step := r.StepTime.Seconds()
	t.Logf("step %.3f s; rail phases %.3f s, node phases %.3f s; serial minus pipelined ≤ %.3f s (%.1f %%)", step, rail, node, overlap, 100*overlap/step)
	if overlap < 2.645 || overlap > 2.655 || step < 13.495 || step > 13.505 {
		t.Errorf("serial phases add up to %.3f s of a %.3f s step, want the 2.65 s of 13.50 s the ep note states", overlap, step)
	}
	stated := fmt.Sprintf("up to %.2f s of a %.2f s step, %.1f %%", overlap, step, 100*overlap/step)
	found := false
	for _, w := range s.Warnings {
		found = found || strings.Contains(w, stated)
	}
	if !found {
		t.Errorf("no load note states the measured bias %q: %q", stated, s.Warnings)
	}
}
