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

// TestSequencelessCPCountsOnce: a model without a sequence (seed000-k4's
// residual MLP, dp 4 × cp 2) has nothing for context parallelism to split,
// so each of a replica's cp ranks runs its whole micro-batch; a sample is
// still trained once. Tokens and model FLOPs per GPU are the step's over
// its N = dp·cp GPUs: mb·ga·dp samples (a sample one token), each 6·P
// model FLOPs (2 a parameter forward, twice that backward; no recompute,
// so HFU = MFU). Before, each cp rank's copy was counted, cp× as much.
func TestSequencelessCPCountsOnce(t *testing.T) {
	s := example(t, "seed000-k4", "cluster.host.cpu=intel", "training.grad_accum=3")
	r, err := Replay(s, Options{NoCollectives: true})
	if err != nil {
		t.Fatal(err)
	}
	mb, ga, dp, cp := s.Training.MicroBatch, s.Training.GradAccum, int64(s.Parallelism.DP), s.Parallelism.CP
	if s.Model.SeqLen != 0 || cp != 2 || dp != 4 {
		t.Fatalf("seed000-k4 is no longer a sequence-less model at dp 4 × cp 2: seq_len %d, dp %d, cp %d", s.Model.SeqLen, dp, cp)
	}
	samples := mb * ga * dp
	gpus := float64(int64(cp) * dp)
	secs, peak := r.StepTime.Seconds(), float64(s.Cluster.PeakBF16)
	tps := float64(samples) / gpus / secs
	mfu := 6 * float64(s.Model.Params) * float64(samples) / gpus / secs / peak
	u := r.Utilization
	if u.TokensPerStep != samples {
		t.Errorf("utilization's tokens per step %d, want mb·ga·dp = %d", u.TokensPerStep, samples)
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"tokens/s per GPU", u.TokensPerGPU, tps},
		{"result's tokens/s per GPU", r.TokensPerSecPerGPU(), tps},
		{"MFU", u.MFU, mfu},
		{"HFU", u.HFU, mfu},
	} {
		if math.Abs(c.got/c.want-1) > 1e-9 {
			t.Errorf("%s %.6g, want %.6g (%d samples over %g GPUs and %v)", c.what, c.got, c.want, samples, gpus, r.StepTime)
		}
	}
}
