package sweep

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestProbesJudgeOnce: leastNodes' search for room on the device (from the
// least nodes the allocated peak fits on) asks the judge again at sizes its
// first search already replayed; each size is judged, so replayed, once.
func TestProbesJudgeOnce(t *testing.T) {
	src := Source{File: "s.yaml", Data: []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama3.1-8b, seq_len: 2048}
parallelism: {dp: 8, zero_stage: 3}
`)}
	p := &probes[int]{jd: judge{memory.ConventionZerosim}, load: func(j int) (*scenarios.Scenario, error) {
		return src.Load(fmt.Sprintf("cluster.nodes=%d", j), fmt.Sprintf("parallelism.dp=%d", 8*j))
	}}
	first := p.decide(1)
	again := p.decide(1)
	if p.failed != nil {
		t.Fatal(p.failed)
	}
	if !first.Replayed || again != first {
		t.Fatalf("verdicts %+v then %+v: want one replayed verdict", first, again)
	}
	if p.judged != 1 {
		t.Errorf("judged %d times, want once", p.judged)
	}
}
