package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOpForceRecomputeFLOPs: training.op_force_recompute reaches the
// dense blocks' rerun (flopDims, RecomputeFLOPs). Llama 3 8B's block (h
// 4096, 8 kv heads of 128, f 14336) at t = 4,096 reruns wk, wo and w3
// under the op policy, 2·t·(h·1024 + h·h + h·f); with
// [feed_forward.w2] torchtitan's _custom_policy also reruns w2 outside
// its count (torchtitan/distributed/activation_checkpoint.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, lines 110-113) and the count
// is unchanged for the others: + 2·t·f·h.
func TestOpForceRecomputeFLOPs(t *testing.T) {
	const tk, h, f = 4096, 4096, 14336
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b, seq_len: 4096}\n" +
		"parallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op}\n"
	for _, c := range []struct {
		sets []string
		want int64
	}{
		{nil, 2 * tk * (h*1024 + h*h + h*f)},
		{[]string{"training.op_force_recompute=[feed_forward.w2]"}, 2 * tk * (h*1024 + h*h + 2*h*f)},
	} {
		s, err := scenarios.Load("s.yaml", []byte(doc), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := flopDims(s)
		if !ok {
			t.Fatal("no FLOP dims")
		}
		got, err := RecomputeFLOPs(d, recomputeOp)
		if err != nil || got != c.want {
			t.Errorf("%v: op reruns %d FLOPs (%v), want %d", c.sets, got, err, c.want)
		}
	}
}
