package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestAutocastDocFigures holds the figures docs/compute-model.md and
// docs/memory-model.md quote for training.autocast on Llama 3 8B (the
// llama3.1-8b preset) on 8 H100-80GB, DDP, micro-batch 1 at 4,096 tokens,
// full recompute: fp32 parameters under autocast bf16 against what the
// importers wrote before, bf16 parameters beside an fp32 master with fp32
// gradients (training.reduce_dtype fp32: the fp32 grad buffer,
// 2 + 4 + 4 + 8 = 18 B per parameter). Each figure is replayed: the step,
// the memory at rest and the peak, before → after.
func TestAutocastDocFigures(t *testing.T) {
	const yaml = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama3.1-8b, seq_len: 4096}
parallelism: {dp: 8, zero_stage: 0}
training: {micro_batch: 1, recompute: full}
`
	var step [2]float64
	var rest, peak [2]float64
	for i, sets := range [][]string{
		{"training.param_dtype=bf16", "training.reduce_dtype=fp32"},
		{"training.param_dtype=fp32", "training.autocast=bf16"},
	} {
		s, err := scenarios.Load("llama3-8b.yaml", []byte(yaml), sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := r.Peak()
		step[i] = r.StepTime.Seconds() * 1e3
		rest[i], peak[i] = float64(r.MemoryModel.AtRest)/(1<<30), float64(p)/(1<<30)
	}
	const from = "TestAutocastDocFigures (llama3.1-8b on 8 H100-80GB, DDP, micro-batch 1 × 4,096, recompute full; param_dtype bf16 + reduce_dtype fp32 → param_dtype fp32 + autocast bf16)"
	golden.CheckQuotes(t, "../docs/compute-model.md", from,
		fmt.Sprintf("step went %.1f → %.1f ms", step[0], step[1]))
	golden.CheckQuotes(t, "../docs/memory-model.md", from,
		fmt.Sprintf("at rest %.2f → %.2f GiB", rest[0], rest[1]),
		fmt.Sprintf("peak %.2f → %.2f GiB", peak[0], peak[1]))
}
