package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestMoEDocFigures holds docs/compute-model.md's MoE figures to the
// replay: the routed experts' compute at full speed (Result.Compute) of
// DeepSeek-V3 and Qwen3-30B-A3B at two ep each, and the step of the
// Megatron-Bridge Qwen3-30B-A3B row's scenario under full and no
// checkpointing, and under no checkpointing with the recipe's HybridEP
// dispatcher.
func TestMoEDocFigures(t *testing.T) {
	replay := func(doc string) *Result {
		t.Helper()
		s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(s, Options{NoCollectives: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var quotes []string
	for _, c := range []struct {
		model         string
		nodes, dp, ep int
		doc           string
	}{
		{"deepseek-v3.json", 64, 512, 1, "computes for %v at full speed at ep 1"},
		{"deepseek-v3.json", 64, 512, 64, "and %v at ep 64"},
		{"qwen3-30b-a3b.json", 2, 16, 1, "full recompute) for %v at ep 1"},
		{"qwen3-30b-a3b.json", 2, 16, 16, "and %v at ep 16"},
	} {
		r := replay(fmt.Sprintf("version: 1\ncluster: {nodes: %d, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: %s, seq_len: 4096}\n"+
			"parallelism: {dp: %d, zero_stage: 3, ep: %d}\ntraining: {micro_batch: 1, recompute: full}\n", c.nodes, c.model, c.dp, c.ep))
		quotes = append(quotes, fmt.Sprintf(c.doc, docDuration(r.Compute)))
	}
	step := map[string]string{}
	for _, rc := range []string{"full", "none"} {
		r := replay("version: 1\nstack: megatron\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: qwen3-30b-a3b.json, seq_len: 4096}\n" +
			"parallelism: {dp: 16, zero_stage: 1, ep: 16}\ntraining: {micro_batch: 1, grad_accum: 64, recompute: " + rc + ", fp8: te_current, reduce_dtype: param_dtype}\n")
		step[rc] = docDuration(r.StepTime)
	}
	quotes = append(quotes, fmt.Sprintf("takes %s a step under `full` against %s under `none`", step["full"], step["none"]))
	// The row as the recipe ran it: the flex dispatcher over HybridEP.
	r := replay("version: 1\nstack: megatron\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: qwen3-30b-a3b.json, seq_len: 4096}\n" +
		"parallelism: {dp: 16, zero_stage: 1, ep: 16}\ntraining: {micro_batch: 1, grad_accum: 64, recompute: none, fp8: te_current, reduce_dtype: param_dtype}\ncommunication: {moe_dispatcher: hybridep}\n")
	quotes = append(quotes, fmt.Sprintf("`moe_dispatcher: hybridep`, recompute none) zerosim gives %s a step", docDuration(r.StepTime)))
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestMoEDocFigures (zerosim run of its scenarios)", quotes...)
}

// docDuration is d as the document writes it: seconds to the millisecond
// from one second up, else milliseconds to a tenth.
func docDuration(d units.Duration) string {
	if d >= units.Second {
		return fmt.Sprintf("%.3f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f ms", d.Seconds()*1e3)
}
