package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMegatronExpertActivation holds what Megatron-LM's routed experts keep
// (MegatronExpertActivation) to a hand count for Qwen3-30B-A3B at s = 4096,
// b = 1 (k = 8, h = 2048, f = 768; 32,768 rows): 32,768·(2·2,048 + 6·768 +
// 4) = 32,768·8,708 = 285,343,744 B, where ExpertActivation's modeling
// files keep 32,768·(4·2,048 + 6·768) = 419,430,400 B; full recompute keeps
// none and rebuilds them. A scenario under stack: megatron gives its
// experts unit that count plus the router's (RouterTensors); without the
// stack, ExpertActivation's.
func TestMegatronExpertActivation(t *testing.T) {
	for _, c := range []struct {
		recompute         scenarios.Recompute
		stored, transient int64
	}{{scenarios.RecomputeNone, 285343744, 0}, {scenarios.RecomputeFull, 0, 285343744}} {
		st, tr, err := MegatronExpertActivation(4096, 1, 8, 2048, 768, c.recompute)
		if err != nil {
			t.Fatal(err)
		}
		if st != c.stored || tr != c.transient {
			t.Errorf("%s: stored %d, transient %d, want %d, %d", c.recompute, st, tr, c.stored, c.transient)
		}
	}
	if _, _, err := MegatronExpertActivation(1<<40, 1, 8, 1<<40, 768, scenarios.RecomputeNone); err == nil {
		t.Error("an overflowing size was accepted")
	}
	ts, err := RouterTensors(4096, 2048, 128, 8, scenarios.RouterSoftmaxTopK, true)
	if err != nil {
		t.Fatal(err)
	}
	var router int64
	for _, x := range ts {
		router += x.Bytes
	}
	for _, c := range []struct {
		stack string
		want  int64
	}{{"stack: megatron\n", 285343744 + router}, {"", 419430400 + router}} {
		y := fmt.Sprintf("version: 1\n%scluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, layers: 2, seq_len: 4096}\n"+
			"parallelism: {dp: 16, zero_stage: 1, ep: 16}\ntraining: {micro_batch: 1, recompute: none}\n", c.stack)
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		stored, _, err := unitActivations(s)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for u, l := range s.Model.LayerList {
			if l.Name == "experts.0" {
				found = true
				if stored[u] != c.want {
					t.Errorf("%q: experts.0 keeps %d B, want %d", c.stack, stored[u], c.want)
				}
			}
		}
		if !found {
			t.Fatal("no unit experts.0")
		}
	}
}
