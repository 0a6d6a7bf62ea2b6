package zero

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestReplayChunkedLoss: torchtitan's chunked loss (training.loss_chunks 8,
// ChunkedLossWrapper at b5bcd76c6) on the Llama 3.1 8B run of
// docs/performance.md at 1 × 8192 tokens per rank, with [norm, lm_head]
// one FSDP2 group (boundary fsdp2_head), changes memory only:
//
//   - the same collectives and bytes: the wrapper runs the head's
//     forward and backward chunk by chunk between the model's forward and
//     the decoder's backward, the same FLOPs at the same place, and
//     reduce-scatters lm_head's gradient once, after the last chunk
//     (set_requires_gradient_sync(False) for chunks 0..N-2,
//     torchtitan/components/loss.py lines 658-680), as one pass does
//     after its head backward; the compute grows by less than a
//     millisecond (TestChunkedLossCompute);
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
	// The compute grows by the chunks' GEMM shapes and the buffer's
	// traffic only (TestChunkedLossCompute): under a millisecond here.
	if d := b.Compute - a.Compute; d < 0 || d > units.Millisecond {
		t.Errorf("compute %v → %v: want at most 1 ms more", a.Compute, b.Compute)
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
	if len(list(a)) == 0 || !slices.Equal(list(a), list(b)) || a.CollectiveCount != b.CollectiveCount {
		t.Errorf("collectives differ or none: %d → %d", a.CollectiveCount, b.CollectiveCount)
	}
	// The peaks and steps the documents quote, one pass → 8 chunks.
	const from = "TestReplayChunkedLoss (testdata/validation/torchtitan-llama3.1-8b-h100.yaml, boundary fsdp2_head, micro-batch 1, loss_chunks 1 → 8)"
	gib := func(b int64) string { return fmt.Sprintf("%.2f", float64(b)/(1<<30)) }
	golden.CheckQuotes(t, "../docs/stacks.md", from,
		fmt.Sprintf("peak %s → %s GiB, step %.3f → %.3f s", gib(peaks[0]), gib(peaks[1]), a.StepTime.Seconds(), b.StepTime.Seconds()))
	golden.CheckQuotes(t, "../docs/memory-model.md", from,
		fmt.Sprintf("%s B lower, %s → %s GiB", commas(peaks[0]-peaks[1]), gib(peaks[0]), gib(peaks[1])))
}

// TestChunkedLossCompute: the chunked loss runs the output projection's
// three GEMMs once per chunk at t/N rows: the same FLOPs, each GEMM timed
// at its own shape. By hand, for Llama 3.1 8B's head (t = 8192 tokens,
// h = 4096, V = 128,256) in 8 chunks on a 132-SM GPU of 1 PFLOP/s at full
// efficiency with 10 TB/s (every GEMM compute-bound):
//
//   - forward, t_c×h by h×V: 2·1024·4096·128,256 = 1,075,889,307,648 FLOPs
//     a chunk over ⌈1024/256⌉·⌈128,256/128⌉ = 4,008 tiles, 31 waves of
//     132 SMs (4,092 slots): 8 × 1,075,889,307,648 / (10¹⁵ · 4,008/4,092)
//     s; one pass over 32,064 tiles fills 243 waves (32,076 slots):
//     8,607,114,461,184 / (10¹⁵ · 32,064/32,076) s;
//   - backward: the input gradient (t_c×V by V×h: 4·32 = 128 tiles, one
//     wave; one pass 1,024 tiles, 8 waves) and the weight gradient (h×t_c
//     by t_c×V: 16·1,002 = 16,032 tiles in both) fill their waves alike,
//     so they take the same time; the wrapper's buffer adds 24 B per
//     element of [t, h] (zeros_like 4, the chunks' cast 2 + 4 and copy
//     4 + 4, the cast back 4 + 2): 24·8192·4096 B / 10¹³ B/s.
func TestChunkedLossCompute(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 128256}
	plan := func(chunks int64) UnitCompute {
		p, err := PlanCompute(ComputeSpec{Dims: d, GPU: GPUShape{Peak: 1e15, HBM: 1e13, SMs: 132}, Eff: Efficiency{GEMM: 1, Attention: 1, HBM: 1},
			Blocks: []bool{false}, Head: 0, HeadChunks: chunks})
		if err != nil {
			t.Fatal(err)
		}
		return p[0]
	}
	one, eight := plan(1), plan(8)
	if one.FwdFLOPs != eight.FwdFLOPs || one.BwdFLOPs != eight.BwdFLOPs {
		t.Errorf("FLOPs %d, %d → %d, %d: want the same", one.FwdFLOPs, one.BwdFLOPs, eight.FwdFLOPs, eight.BwdFLOPs)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	if want := 8 * 1_075_889_307_648.0 / (1e15 * 4008 / 4092); !near(eight.Fwd, want) {
		t.Errorf("8 chunks: forward %.9g s, want %.9g", eight.Fwd, want)
	}
	if want := 8_607_114_461_184.0 / (1e15 * 32064 / 32076); !near(one.Fwd, want) {
		t.Errorf("one pass: forward %.9g s, want %.9g", one.Fwd, want)
	}
	if d, want := eight.Bwd-one.Bwd, 24*8192*4096/1e13; math.Abs(d-want) > 1e-12 {
		t.Errorf("backward %.9g → %.9g s: %.9g more, want %.9g", one.Bwd, eight.Bwd, d, want)
	}
}

// TestLossChunkChecksAgree: the loader, the memory model and the compute
// plan refuse a chunk count that does not divide the rank's tokens with
// the one check, scenarios.LossChunkTokens, and take one that does.
func TestLossChunkChecksAgree(t *testing.T) {
	const tokens = 8192
	for _, chunks := range []int64{3, 8} {
		_, want := scenarios.LossChunkTokens(tokens, chunks)
		if (want != nil) != (tokens%chunks != 0) {
			t.Fatalf("%d chunks of %d tokens: LossChunkTokens says %v; 8,192 = 2^13 divides by 8, not by 3", chunks, tokens, want)
		}
		_, _, mem := memory.ChunkedLossBuffers(memory.BlockDims{Arch: "llama", Seq: tokens, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 128256, LossChunks: chunks})
		_, plan := PlanCompute(ComputeSpec{Dims: FLOPDims{Arch: "llama", Seq: tokens, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 128256},
			GPU: GPUShape{Peak: 1e15, HBM: 1e13, SMs: 132}, Eff: Efficiency{GEMM: 1, Attention: 1, HBM: 1}, Blocks: []bool{false}, Head: 0, HeadChunks: chunks})
		if want == nil {
			if mem != nil || plan != nil {
				t.Errorf("%d chunks of %d tokens: memory %v, compute plan %v; want both taken", chunks, tokens, mem, plan)
			}
			continue
		}
		for name, err := range map[string]error{"memory": mem, "compute plan": plan} {
			if err == nil || !strings.Contains(err.Error(), want.Error()) {
				t.Errorf("%d chunks of %d tokens: %s error %v, want %q", chunks, tokens, name, err, want)
			}
		}
	}
}
