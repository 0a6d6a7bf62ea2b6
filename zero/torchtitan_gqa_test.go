package zero

import (
	"fmt"
	"os"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestTorchtitanGQADoc: docs/stacks.md quotes what torchtitan 238fa99's
// attention (SDPA with enable_gqa under cuDNN's priority, written by
// import torchtitan as training.attention flash, attention_kernel cudnn)
// does to llama3_8b.toml on 16 × 8 H100 against the preset's sdpa with
// fa2 (repeat_kv): the step and the peak of each. Under op-level
// checkpointing k and v are recomputed, so the peak does not move; the
// cuDNN kernel's published rate on Hopper (0.5732 against fa2's 0.35)
// shortens the step.
func TestTorchtitanGQADoc(t *testing.T) {
	data, err := os.ReadFile("../scenarios/testdata/torchtitan/llama3_8b.toml")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := scenarios.ImportTorchtitan("llama3_8b.toml", data, scenarios.TorchtitanCluster{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB"})
	if err != nil {
		t.Fatal(err)
	}
	var step [2]float64
	var peak [2]int64
	for i, sets := range [][]string{nil, {"training.attention=sdpa", "training.attention_kernel=fa2"}} {
		s, err := scenarios.Load("llama3_8b.yaml", tt.Scenario(), sets)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && (s.Training.Attention != scenarios.AttentionFlash || s.Training.AttentionKernel != scenarios.KernelCuDNN) {
			t.Fatalf("imported attention %s, kernel %s; want flash, cudnn", s.Training.Attention, s.Training.AttentionKernel)
		}
		r, err := Replay(s, Options{NoCollectives: true})
		if err != nil {
			t.Fatal(err)
		}
		step[i] = r.StepTime.Seconds() * 1e3
		peak[i], _ = r.Peak()
	}
	if !(step[0] < step[1]) || peak[0] != peak[1] {
		t.Errorf("cudnn/flash step %.1f ms peak %d B; sdpa/fa2 step %.1f ms peak %d B: want a shorter step and the same peak", step[0], peak[0], step[1], peak[1])
	}
	golden.CheckQuotes(t, "../docs/stacks.md", "TestTorchtitanGQADoc (import torchtitan llama3_8b.toml --nodes 16 --gpu H100-80GB, replayed)",
		fmt.Sprintf("%.1f → %.1f ms a step", step[1], step[0]),
		fmt.Sprintf("peak unchanged at %.2f GiB", float64(peak[0])/(1<<30)))
}
