package memory

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestOpSaveAllToAllDocFigure holds docs/memory-model.md's "2·2·s·b·k·h
// bytes per layer this counts (39 GiB over its 26 MoE layers)" to the DeepSeek-V3 16B
// template of torchtitan c4e2291's runs
// (testdata/validation/torchtitan-dsv3-16b-h100-c4e2291.yaml: seq 4096,
// local batch 8, top-6 of 64 routed experts, hidden 2048, op policy at
// ep 4): with training.op_save_all_to_all each of its 26 MoE layers (27
// blocks, the first dense) keeps the dispatch's and the combine's
// received tokens, 2 · (4096·8·6·2048 · 2 B) = 1,610,612,736 B, 26 of
// them 41,875,931,136 B = 39.0 GiB more kept activations than without
// the key.
func TestOpSaveAllToAllDocFigure(t *testing.T) {
	tmpl, err := os.ReadFile("../testdata/validation/torchtitan-dsv3-16b-h100-c4e2291.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kept := func(save string) (total int64, moe int) {
		t.Helper()
		s, err := scenarios.Load("dsv3.yaml", tmpl, []string{"training.op_save_all_to_all=" + save})
		if err != nil {
			t.Fatal(err)
		}
		if s.Model.SeqLen != 4096 || s.Training.MicroBatch != 8 || s.Parallelism.EP != 4 || s.Training.Recompute != scenarios.RecomputeOp {
			t.Fatalf("template changed: seq %d, micro-batch %d, ep %d, recompute %s; the doc's figure is for 4096, 8, 4, op", s.Model.SeqLen, s.Training.MicroBatch, s.Parallelism.EP, s.Training.Recompute)
		}
		for _, l := range s.Model.LayerList {
			if strings.HasPrefix(l.Name, "experts.") {
				moe++
				if d := l.Dims; d == nil || d.TopK != 6 || d.Hidden != 2048 {
					t.Fatalf("%s: dims %+v; the doc's figure is for top-6, hidden 2048", l.Name, d)
				}
			}
		}
		for _, u := range mustAnalyze(t, s, Options{}).Units {
			total += u.Activation
		}
		return total, moe
	}
	without, moe := kept("false")
	with, _ := kept("true")
	const perLayer = 2 * 2 * 4096 * 8 * 6 * 2048 // 2·2·s·b·k·h
	if moe != 26 {
		t.Fatalf("%d MoE layers, want 26", moe)
	}
	if got, want := with-without, int64(moe)*perLayer; got != want {
		t.Errorf("op_save_all_to_all keeps %d B more, want %d (26 · 2·2·s·b·k·h)", got, want)
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "memory.moeActivation on the torchtitan c4e2291 template (TestOpSaveAllToAllDocFigure)",
		fmt.Sprintf("2·2·s·b·k·h bytes per layer this counts (%.0f GiB over its %d MoE layers)", float64(with-without)/float64(units.GiB), moe))
}
