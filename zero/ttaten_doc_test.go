package zero

import (
	"fmt"
	"os"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/memory"
)

// TestTorchtitanATenNormStacksDoc holds what docs/stacks.md says
// torchtitan's torch.nn.RMSNorm on aten::_fused_rms_norm does to Llama 3.1
// 8B on 8 H100 at 1 × 8192 tokens without recompute (the
// torchtitan-llama3.1-8b-h100 template under stack torchtitan): the
// activations' peak, the replayed peak and the step, norm_impl fp32 →
// aten_fused, as zerosim run prints them.
func TestTorchtitanATenNormStacksDoc(t *testing.T) {
	data, err := os.ReadFile("../testdata/validation/torchtitan-llama3.1-8b-h100.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var act, peak [2]string
	var step [2]string
	for i, n := range []string{"fp32", "aten_fused"} {
		res, _ := loadReplay(t, "tt.yaml", data, []string{"stack=torchtitan", "training.recompute=none", "training.micro_batch=1", "training.norm_impl=" + n})
		p, _ := res.Peak()
		gib := func(b int64) string { return fmt.Sprintf("%.2f", float64(b)/(1<<30)) }
		act[i], peak[i], step[i] = gib(res.MemoryModel.Component(memory.CompActivations).Peak), gib(p), docDuration(res.StepTime)
	}
	golden.CheckQuotes(t, "../docs/stacks.md", "TestTorchtitanATenNormStacksDoc (torchtitan-llama3.1-8b-h100.yaml, stack torchtitan, recompute none, micro-batch 1, norm_impl fp32 → aten_fused)",
		fmt.Sprintf("activations %s → %s GiB, peak %s → %s GiB, step %s → %s.", act[0], act[1], peak[0], peak[1], step[0], step[1]))
}
