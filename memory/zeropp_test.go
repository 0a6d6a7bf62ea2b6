package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func zeroPPScenario(t *testing.T, comm string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("s.yaml", []byte(`version: 1
cluster: {nodes: 4, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: llama2-7b, seq_len: 4096}
parallelism: {dp: 32, zero_stage: 3}
training: {micro_batch: 1, recompute: full}
communication: {`+comm+`}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestZeroPPMemory: hpZ's secondary partition grows to the gathered bf16
// bytes / h over forward (2P/h plus padding), stays through backward and is
// gone at rest; qwZ holds int8 + scale buffers only while gathers are in
// flight. Both rows are absent without ZeRO++.
func TestZeroPPMemory(t *testing.T) {
	base := mustAnalyze(t, zeroPPScenario(t, ""), Options{})
	for _, c := range base.Components {
		if c.Name == string(CompHPZ) || c.Name == string(CompQuant) {
			t.Errorf("ZeRO-3 report has a %q row", c.Name)
		}
	}
	r := mustAnalyze(t, zeroPPScenario(t, "zero_hpz_partition_size: 8, zero_quantized_weights: true"), Options{})
	var gathered int64
	for _, u := range r.Units {
		gathered += u.Gather
	}
	hpz := r.Component(CompHPZ)
	// Every unit's gathered bf16 bytes / 8: 2·6,738,415,616/8 = 1,684,603,904
	// plus the units' padding to a multiple of 32 ranks.
	if hpz.AtRest != 0 || hpz.Peak != gathered/8 || hpz.Peak < 2*6_738_415_616/8 {
		t.Errorf("hpz secondary: at rest %d, peak %d, want 0 and %d", hpz.AtRest, hpz.Peak, gathered/8)
	}
	q := r.Component(CompQuant)
	// The largest unit (embedding or lm_head, 131,072,000 elements): int8
	// payload + fp32 scales, two in flight with prefetch 1.
	one := QWZGatherBytes(131_072_000, 32)
	if q.AtRest != 0 || q.Peak < one || q.Peak > 2*one+2*QWZGatherBytes(202_383_360, 32) {
		t.Errorf("quantization buffers: at rest %d, peak %d (one embedding gather %d)", q.AtRest, q.Peak, one)
	}
	if r.AtRest != base.AtRest || r.Peak <= base.Peak {
		t.Errorf("ZeRO++ at rest %s peak %s vs ZeRO-3 %s %s: want equal at rest, higher peak",
			units.Bytes(r.AtRest).IEC(), units.Bytes(r.Peak).IEC(), units.Bytes(base.AtRest).IEC(), units.Bytes(base.Peak).IEC())
	}
}
