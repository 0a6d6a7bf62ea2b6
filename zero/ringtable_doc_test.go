package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestRingEveryBlockDoc holds every row of docs/compute-model.md's table of
// the ring on every softmax block (one node of 8 H100, 32,768 tokens: the
// step and the ring's logical bytes per rank) to the replays its command
// runs.
func TestRingEveryBlockDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("seven replays at 32,768 tokens")
	}
	var quotes []string
	for _, c := range []struct {
		preset string
		cp     int
	}{
		{"mixtral-8x7b", 2}, {"mixtral-8x7b", 4}, {"qwen3-30b-a3b", 2}, {"qwen3-30b-a3b", 4},
		{"deepseek-v2-lite", 2}, {"deepseek-v2-lite", 4}, {"llama3.1-8b", 2},
	} {
		res, err := Replay(loadDefault(t, "model.preset="+c.preset, "cluster.nodes=1", fmt.Sprintf("parallelism.dp=%d", 8/c.cp),
			fmt.Sprintf("parallelism.cp=%d", c.cp), "model.seq_len=32768", "training.micro_batch=1", "parallelism.zero_stage=3"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ring := cpRingPhase(t, res)
		step := fmt.Sprintf("%.1f ms", float64(res.StepTime)/1e9)
		bytes := fmt.Sprintf("%.1f GiB", float64(ring.Logical)/(1<<30))
		quotes = append(quotes, fmt.Sprintf("| %s | %d | %s | %s |", c.preset, c.cp, step, bytes))
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestRingEveryBlockDoc (zerosim run default --set model.preset=P --set cluster.nodes=1 --set parallelism.dp=8/cp --set parallelism.cp=cp --set model.seq_len=32768 --set training.micro_batch=1 --set parallelism.zero_stage=3)", quotes...)
}
