package zero

import (
	"math"
	"testing"
)

// TestStepTokens: a step trains micro_batch · grad_accum · dp sequences of
// seq_len tokens (the cp ranks of a replica share its sequences), and
// tokens/s per GPU is those over the step and the N = dp·cp GPUs. The
// default example is Llama 2 7B at 4,096 tokens, micro-batch 1, dp 16.
func TestStepTokens(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
		want int64
	}{
		{"ga 3", []string{"training.grad_accum=3"}, 1 * 4096 * 3 * 16},                                                    // 196,608
		{"cp 2, dp 8, ga 2", []string{"parallelism.cp=2", "parallelism.dp=8", "training.grad_accum=2"}, 1 * 4096 * 2 * 8}, // 65,536
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Replay(loadDefault(t, c.sets...), Options{NoCollectives: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Tokens != c.want || r.Utilization.TokensPerStep != c.want {
				t.Errorf("tokens per step %d (utilization %d), want %d", r.Tokens, r.Utilization.TokensPerStep, c.want)
			}
			perGPU := float64(c.want) / r.StepTime.Seconds() / 16
			for _, got := range []float64{r.TokensPerSecPerGPU(), r.Utilization.TokensPerGPU} {
				if math.Abs(got/perGPU-1) > 1e-12 {
					t.Errorf("tokens/s per GPU %.6f, want %d tokens / %v / 16 GPUs = %.6f", got, c.want, r.StepTime, perGPU)
				}
			}
		})
	}
}
