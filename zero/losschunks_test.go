package zero

import (
	"os"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestReplayChunkedLoss: torchtitan's chunked loss (training.loss_chunks 8,
// ChunkedLossWrapper at b5bcd76c6) on the Llama 3.1 8B run of
// docs/performance.md at 1 × 8192 tokens per rank, with [norm, lm_head]
// one FSDP2 group (boundary fsdp2_head), changes memory only:
//
//   - the same collectives, bytes and step time: the wrapper runs the
//     head's forward and backward chunk by chunk between the model's
//     forward and the decoder's backward, the same FLOPs at the same
//     place, and reduce-scatters lm_head's gradient once, after the last
//     chunk (set_requires_gradient_sync(False) for chunks 0..N-2,
//     torchtitan/components/loss.py lines 658-680), as one pass does
//     after its head backward;
//   - the replayed peak equals the walked one, and both runs peak in the
//     head's backward, the chunked one lower by what the chunks save less
//     what the wrapper adds, by hand (t = 8192, t_c = 1024, V = 128,256,
//     D = 4096): 12·(t − t_c)·V − 4·t·D − 4·V·D = 11,032,068,096 −
//     134,217,728 − 2,101,346,304 = 8,796,504,064 B (the loss's fp32
//     log-probabilities and two fp32 gradients of 7168 tokens fewer,
//     against the fp32 gradient buffer and lm_head's fp32 gradient summed
//     over the chunks; memory.TestChunkedLossHandDerived).
func TestReplayChunkedLoss(t *testing.T) {
	data, err := os.ReadFile("../testdata/validation/torchtitan-llama3.1-8b-h100.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var peaks []int64
	var runs []*Result
	for _, n := range []string{"1", "8"} {
		s, err := scenarios.Load("tt.yaml", data, []string{"communication.boundary=fsdp2_head", "training.micro_batch=1", "training.loss_chunks=" + n})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		peak, _ := res.Peak()
		if m := res.MemoryModel.Peak; peak != m {
			t.Errorf("loss_chunks %s: replayed peak %d, walked %d", n, peak, m)
		}
		peaks, runs = append(peaks, peak), append(runs, res)
	}
	if d := peaks[0] - peaks[1]; d != 8_796_504_064 {
		t.Errorf("peak %d → %d: %d lower, want 8,796,504,064", peaks[0], peaks[1], d)
	}
	a, b := runs[0], runs[1]
	if a.StepTime != b.StepTime || a.Compute != b.Compute {
		t.Errorf("step %v, compute %v → %v, %v: want the same", a.StepTime, a.Compute, b.StepTime, b.Compute)
	}
	type coll struct {
		k     Kind
		ph    Phase
		bytes int64
	}
	list := func(r *Result) []coll {
		var out []coll
		for _, c := range r.Collectives {
			out = append(out, coll{c.Kind, c.Phase, c.Bytes})
		}
		return out
	}
	if !slices.Equal(list(a), list(b)) || a.CollectiveCount != b.CollectiveCount {
		t.Errorf("collectives differ: %d → %d", a.CollectiveCount, b.CollectiveCount)
	}
}
