package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// chunkedLossYAML is torchtitan's llama3_8b at b5bcd76c6
// (torchtitan/models/llama3/config_registry.py lines 194-226: Llama 3.1 8B,
// 1 × 8192 tokens per micro-batch and rank, ChunkedLossWrapper with its
// default 8 chunks) on 8 H100 under FSDP2 with [norm, lm_head] one group
// (torchtitan/distributed/fsdp.py lines 258-265), bf16 parameters reduced
// in fp32 (MixedPrecisionPolicy(param_dtype, reduce_dtype), lines 223-227;
// mixed_precision_reduce "float32").
const chunkedLossYAML = `version: 1
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: H100-80GB
model:
  kind: transformer
  arch: llama
  hidden: 4096
  layers: 32
  heads: 32
  kv_heads: 8
  ffn: 14336
  vocab: 128256
  seq_len: 8192
communication:
  boundary: fsdp2_head
parallelism:
  dp: 8
  zero_stage: 3
training:
  shard_dtype: fp32
  reduce_dtype: fp32
  micro_batch: 1
  recompute: op
  attention: sdpa
`

func chunkedLossReport(t *testing.T, set ...string) *Report {
	t.Helper()
	s, err := scenarios.Load("chunked.yaml", []byte(chunkedLossYAML), set)
	if err != nil {
		t.Fatal(err)
	}
	return mustAnalyze(t, s, Options{})
}

// headProfilePeak is the highest running sum of the head unit's own
// activation, loss-temporary and gradient events over the forward and
// backward, from 0: what the head and its loss add on top of the rest of
// the step (its gathered parameters and reduce-scatter input apart).
func headProfilePeak(r *Report, head int) int64 {
	var cur, peak int64
	for _, e := range r.Timeline() {
		if e.Unit != head || e.Phase == PhaseOptimizer {
			continue
		}
		switch e.Component {
		case CompActivations, CompLossTemp, CompGrads:
			cur += e.Delta
			peak = max(peak, cur)
		}
	}
	return peak
}

// TestChunkedLossHandDerived: Llama 3.1 8B, t = 8192 tokens per rank,
// V = 128,256, D = 4096, training.loss_chunks 8 (t_c = 1024 tokens a
// chunk), derived by hand from torchtitan/components/loss.py at b5bcd76c6
// and FSDP2's post_backward:
//
//   - a chunk's 16-bit logits 2·t_c·V = 262,668,288 B, the loss's fp32
//     upcast 4·t_c·V = 525,336,576 B and log_softmax's saved fp32 output
//     4·t_c·V = 525,336,576 B; its backward's two fp32 gradients
//     8·t_c·V; MmBackward0's logits gradient 2·t_c·V = 262,668,288 B and
//     the chunk's hidden-state gradient 2·t_c·D = 8,388,608 B;
//   - GradAccumulator's fp32 [t, D] buffer 4·t·D = 134,217,728 B and its
//     bf16 cast 2·t·D = 67,108,864 B;
//   - lm_head's unsharded gradient summed in reduce_dtype fp32 across the
//     chunks, 4·V·D = 2,101,346,304 B.
//
// Loss temporaries at their peak: 2·t_c·V + 4·t_c·V + 4·t·D =
// 922,222,592 B (879.5 MiB), where one pass over t holds 6·t·V =
// 6,304,038,912 B (5.87 GiB).
//
// The head's own profile (headProfilePeak) peaks as the last chunk's loss
// backward starts: the head's model part M (the final norm's fp32 input
// and rstd, its bf16 output, lm_head's input: 4·t·D + 4·t + 2·t·D + 2·t·D
// = 268,468,224 B) + the buffer + the summed gradient + the saved
// log-probabilities 4·t_c·V + the two gradients 8·t_c·V = 268,468,224 +
// 134,217,728 + 2,101,346,304 + 1,576,009,728 = 4,080,041,984 B; one pass
// peaks at M + 12·t·V = 268,468,224 + 12,608,077,824 = 12,876,546,048 B.
func TestChunkedLossHandDerived(t *testing.T) {
	const (
		chunkLogits = 262_668_288
		chunkUpcast = 525_336_576
		buffer      = 134_217_728
		grad16      = 67_108_864
		held        = 2_101_346_304
		lossTemps   = 922_222_592
		onePassTemp = 6_304_038_912
		chunkedPeak = 4_080_041_984
		onePassPeak = 12_876_546_048
	)
	one := chunkedLossReport(t)
	r := chunkedLossReport(t, "training.loss_chunks=8")
	head := unitIndex(t, r, "lm_head")
	u := r.Units[head]
	if u.LossLogits != chunkLogits || u.LossUpcast != chunkUpcast || u.AfterLogits != chunkUpcast {
		t.Errorf("chunk's logits, upcast, saved log-probabilities = %d, %d, %d; want %d, %d, %d", u.LossLogits, u.LossUpcast, u.AfterLogits, chunkLogits, chunkUpcast, chunkUpcast)
	}
	if len(u.HeadMm) != 2 || u.HeadMm[0] != chunkLogits || u.HeadMm[1] != 8_388_608 {
		t.Errorf("MmBackward0's tensors %v, want [%d 8388608]", u.HeadMm, chunkLogits)
	}
	if u.LossBuffer != buffer || u.LossGrad16 != grad16 || u.LossHeldGrad != held {
		t.Errorf("buffer, bf16 cast, held lm_head gradient = %d, %d, %d; want %d, %d, %d", u.LossBuffer, u.LossGrad16, u.LossHeldGrad, buffer, grad16, held)
	}
	if got := r.Component(CompLossTemp).Peak; got != lossTemps {
		t.Errorf("loss temporaries peak %d, want %d", got, lossTemps)
	}
	if got := one.Component(CompLossTemp).Peak; got != onePassTemp {
		t.Errorf("one pass: loss temporaries peak %d, want %d", got, onePassTemp)
	}
	if got := headProfilePeak(r, head); got != chunkedPeak {
		t.Errorf("chunked head profile peaks at %d, want %d", got, chunkedPeak)
	}
	if got := headProfilePeak(one, unitIndex(t, one, "lm_head")); got != onePassPeak {
		t.Errorf("one pass: head profile peaks at %d, want %d", got, onePassPeak)
	}
	if o := one.Units[unitIndex(t, one, "lm_head")]; o.LossBuffer != 0 || o.LossGrad16 != 0 || o.LossHeldGrad != 0 {
		t.Errorf("one pass: chunked-loss buffers %d, %d, %d, want none", o.LossBuffer, o.LossGrad16, o.LossHeldGrad)
	}
	// The loss temporaries the documents quote, the model's.
	chunked, whole := r.Component(CompLossTemp).Peak, one.Component(CompLossTemp).Peak
	const from = "TestChunkedLossHandDerived (Llama 3.1 8B, t = 8192, loss_chunks 8 against one pass: CompLossTemp's peak)"
	golden.CheckQuotes(t, "../docs/memory-model.md", from,
		fmt.Sprintf("loss temporaries are %s B (%.1f MiB) instead of %s B (%.2f GiB)", commas(chunked), float64(chunked)/(1<<20), commas(whole), float64(whole)/(1<<30)))
	golden.CheckQuotes(t, "../docs/stacks.md", from,
		fmt.Sprintf("loss temporaries %.2f GiB → %.1f MiB", float64(whole)/(1<<30), float64(chunked)/(1<<20)))
}

// TestChunkedLossRefused: training.loss_chunks is refused with the key's
// position where zerosim does not model torchtitan's wrapper.
func TestChunkedLossRefused(t *testing.T) {
	for _, set := range [][]string{
		{"training.loss_chunks=3"}, // 8192 tokens % 3 != 0
		{"training.loss_chunks=0"}, // below 1
		{"training.loss_chunks=8", "communication.boundary=fsdp2"},
		{"training.loss_chunks=8", "training.cross_entropy=fused"},
		{"training.loss_chunks=8", "training.compile=loss"},
		{"training.loss_chunks=8", "training.keep_logits=bf16"},
	} {
		if _, err := scenarios.Load("chunked.yaml", []byte(chunkedLossYAML), set); err == nil {
			t.Errorf("%v: loaded, want an error", set)
		}
	}
	if _, err := scenarios.Load("chunked.yaml", []byte(chunkedLossYAML), []string{"training.loss_chunks=1"}); err != nil {
		t.Errorf("loss_chunks=1: %v", err)
	}
}

// The caching-allocator simulation replays the chunked loss's held lm_head
// gradient, allocated in forward, as that one tensor: not as gradient
// accumulation's earlier micro-steps (whose sharded gradients the timeline
// also allocates in forward), which would replay two micro-steps and keep
// the first one's fp32 gradient shards, a whole P·4/N, through the second.
// At grad_accum 1 the simulation starts each step within one large
// segment (kRoundLarge, 2 MiB: c10/cuda/CUDACachingAllocator.cpp) of the
// model's at-rest bytes, and its allocated peak lies between the model's
// and the model's plus the largest unit's gathered parameters (the bound
// zero's TestSimulatedReserveFollowsTheModel holds every validation row
// to); with the two micro-steps it starts P·4/N = 4.0 GB above.
func TestChunkedLossSimulatesOneMicroStep(t *testing.T) {
	const segment = 2 << 20
	for _, chunks := range []string{"1", "8"} {
		r := chunkedLossReport(t, "training.loss_chunks="+chunks)
		sim := r.AllocSim
		if sim == nil || len(sim.Series) == 0 {
			t.Fatalf("loss_chunks %s: not simulated", chunks)
		}
		var rest int64
		for _, c := range r.Components {
			rest += c.AtRest
		}
		rest -= r.Component(CompRuntime).AtRest + r.Component(CompNCCL).AtRest
		if start := sim.Series[0]; start.Event != -1 || start.Allocated < rest || start.Allocated > rest+segment {
			t.Errorf("loss_chunks %s: the step starts at %d B allocated (event %d), the model's at-rest bytes in the allocator are %d B", chunks, start.Allocated, start.Event, rest)
		}
		var gather int64
		for _, u := range r.Units {
			gather = max(gather, u.Gather)
		}
		if alloc := r.Peak - r.Component(CompRuntime).AtRest - r.Component(CompNCCL).AtRest; sim.PeakAllocated < alloc || sim.PeakAllocated > alloc+gather {
			t.Errorf("loss_chunks %s: simulated allocated peak %d B, the model's %d B (at most %d)", chunks, sim.PeakAllocated, alloc, alloc+gather)
		}
	}
}
