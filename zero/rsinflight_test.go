package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestReduceScattersInFlight: each stack bounds how many units' gradient
// syncs may be pending while a ZeRO-3 backward computes
// (memory.ReduceScatterLags), and the replay holds no more unreduced
// gradients than that bound, which the memory walk counts:
//
//   - DeepSpeed (reshard, the default, and boundary deepspeed): the host
//     blocks when more than max_param_reduce_events = 2 reductions of
//     reduce_bucket_size elements are outstanding (stage3.py
//     __reduce_and_partition_ipg_grads at edaa7221267243c7be7fb49c5d5f5c4fb97b4641), so at most three
//     buckets' elements are in flight: with the default 40 MB buckets of
//     bf16, 3 × 20,000,000 elements, less than one GPT-3 175B block
//     (12·h² + 13·h = 1,812,529,152 parameters at h = 12,288), one unit;
//     with 4 GB buckets, 3 × 2,000,000,000 elements, the three blocks
//     they hold (5.44e9; a fourth, 7.25e9, overflows them, and DeepSpeed
//     has reduced all of it but the buckets in flight).
//   - FSDP2: post_backward waits for the previous reduce-scatter's event,
//     one unit.
//   - FSDP1: nothing bounds them; the replay piles them up behind a slow
//     network beyond the walk, which counts only the one overlap always
//     keeps.
//
// The cases are the QA finding's (GPT-3 175B on 16,384 H100s with hpZ 8,
// and with qwZ: 120.43 and 60.26 GiB replayed on main against 59.50 and
// 23.91 GiB walked) and 8 of its blocks on 32 GPUs behind one 100 GbE NIC
// per node with hpZ 8, whose reduce-scatters lag the backward. Where the
// bound binds the replay's peak is the walk's (within 0.5 %), the
// gradients it holds at its peak are n + 1 blocks' unsharded bf16
// gradients (the one computing and n in flight) and the tied output
// projection's bf16 weight gradient, which autograd holds from the head's
// backward to the embedding's (GPT-3's vocabulary of 50,257 × h × 2 B:
// memory's tiedHeadGrad), plus at most every sharded gradient, and no
// backward starts with more than n syncs pending.
func TestReduceScattersInFlight(t *testing.T) {
	const h = 12288
	block := int64(12*h*h + 13*h) // GPT-3 175B block parameters
	tied := int64(50257 * h * 2)  // the tied head's bf16 weight gradient
	small := []string{"cluster.nodes=4", "parallelism.dp=32", "cluster.inter.preset=Eth100", "cluster.nics=per_node",
		"cluster.nics_per_node=1", "model.layers=8", "communication.zero_hpz_partition_size=8"}
	for _, c := range []struct {
		name string
		sets []string
		n    int // the stack's bound; -1: none
		// peakGrads: at the replay's peak the gradients hold n+1 blocks
		// (the peak is in a block's backward)
		peakGrads bool
	}{
		{"16k hpZ 8, DeepSpeed's bound", []string{"communication.zero_hpz_partition_size=8"}, 1, true},
		{"16k qwZ, DeepSpeed's bound", []string{"communication.zero_quantized_weights=true"}, 1, false},
		{"16k hpZ 8, boundary deepspeed", []string{"communication.zero_hpz_partition_size=8", "communication.boundary=deepspeed"}, 1, true},
		{"32 GPUs hpZ 8, DeepSpeed's bound", small, 1, true},
		{"32 GPUs hpZ 8, 4 GB buckets", append(small[:len(small):len(small)], "communication.bucket_size=4GB"), 3, true},
		{"32 GPUs hpZ 8, FSDP2", append(small[:len(small):len(small)], "communication.boundary=fsdp2"), 1, false},
		{"32 GPUs hpZ 8, FSDP1", append(small[:len(small):len(small)], "communication.boundary=fsdp1"), -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := example(t, "gpt3-175b-16k", c.sets...)
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			peak, _ := res.Peak()
			walk := res.MemoryModel.Peak
			inFlight := maxPending(res)
			if c.n < 0 {
				// No bound: the network lags, the syncs pile up and the
				// replay holds more than the walk counts.
				if inFlight <= 1 || peak <= walk {
					t.Errorf("FSDP1: %d syncs pending at most, replay %d B against walk %d B: want more than one pending and the replay above the walk", inFlight, peak, walk)
				}
				return
			}
			if inFlight != c.n {
				t.Errorf("at most %d syncs pending as a backward starts, want the bound %d (reached: the network lags)", inFlight, c.n)
			}
			if d := float64(peak)/float64(walk) - 1; d > 0.005 || d < -0.005 {
				t.Errorf("replay peak %s, walk %s: %+.2f %%, want within 0.5 %%", gib(peak), gib(walk), 100*d)
			}
			if !c.peakGrads {
				return
			}
			grads, rest := componentAtPeak(t, res, "grads")
			low := int64(c.n+1)*2*block + tied + rest // DeepSpeed's gradient partitions live at rest
			var shards int64
			for _, u := range res.MemoryModel.Units {
				shards += u.ShardGrad
			}
			if grads < low || grads > low+shards {
				t.Errorf("grads at the replay's peak %d B, want %d blocks' bf16 gradients, the tied head's %d B and the %d B at rest (%d B) plus at most the shards (%d B)", grads, c.n+1, tied, rest, low, shards)
			}
		})
	}
}

// maxPending is the most units of the last micro-step whose backward has
// ended and whose gradient sync (reduce-scatter, inter-group all-reduce)
// has not, as the backward of an earlier unit of rank 0 starts.
func maxPending(res *Result) int {
	sc := res.Schedule
	last := sc.Micro - 1
	bwdStart, bwdEnd, syncEnd := map[int]units.Duration{}, map[int]units.Duration{}, map[int]units.Duration{}
	for _, sp := range res.Spans[0] {
		task := sc.Tasks[sp.Task]
		if task.Micro != last {
			continue
		}
		switch {
		case task.Kind == Backward:
			bwdStart[task.Unit], bwdEnd[task.Unit] = sp.Start, sp.End
		case task.Phase == PhaseBackwardRS || task.Phase == PhaseInterAR:
			syncEnd[task.Unit] = max(syncEnd[task.Unit], sp.End)
		}
	}
	most := 0
	for u, start := range bwdStart {
		n := 0
		for w, end := range syncEnd {
			if w > u && bwdEnd[w] <= start && end > start {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// componentAtPeak is the named component of the memory timeline (rank
// Options.MemoryRank) when its total first reaches its peak, and at rest.
func componentAtPeak(t *testing.T, res *Result, name string) (int64, int64) {
	t.Helper()
	m := res.Memory
	ci := -1
	for i, c := range m.Components {
		if c == name {
			ci = i
		}
	}
	if ci < 0 {
		t.Fatalf("no component %q", name)
	}
	cur := append([]int64(nil), m.AtRest...)
	var total int64
	for _, v := range cur {
		total += v
	}
	for _, p := range m.Points {
		cur[p.Component] += p.Delta
		if total += p.Delta; total == m.Peak {
			break
		}
	}
	return cur[ci], m.AtRest[ci]
}

// TestMoEWalkMatchesReplay: on an MoE whose expert units are far larger
// than DeepSpeed's three buckets in flight and whose attention units are
// smaller (gpt-oss-20b: 32 experts of 3·h·f + 2·f + h = 24,891,840
// parameters each at h = f = 2,880, over 796 M a block, against the
// attention's tens of millions; the default 40 MB buckets of bf16 hold
// 3 × 20,000,000 elements), every unit leaves one sync pending
// (memory.ReduceScatterLags): the attention unit fits in the buckets and
// the expert unit after it does not. The walk then holds, at an expert
// unit's backward, its own unsharded gradient and the attention unit's
// beside it, not the next expert unit's too, and the memory model's peak
// is the replayed step's to the byte (QA30 M1: gpt-oss-120b walked 73.01
// GiB against 68.85 GiB replayed; this scenario walked 13,554,563,824 B
// against 11,968,148,088 B replayed, one expert unit's gradient apart).
func TestMoEWalkMatchesReplay(t *testing.T) {
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/gpt-oss-20b.json, seq_len: 1024, layers: 4}\n" +
		"parallelism: {dp: 8, zero_stage: 3}\ntraining: {recompute: full, micro_batch: 1, attention: flash}\n"
	s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 3 * 40_000_000 / 2 // three 40 MB buckets of bf16 elements
	const expert = 32 * (3*2880*2880 + 2*2880 + 2880)
	layers := s.Model.LayerList
	experts := 0
	small := 0 // units the buckets hold: the attention's
	for _, l := range layers {
		switch {
		case int64(l.Params) >= expert:
			experts++
		case int64(l.Params) <= budget:
			small++
		}
	}
	if experts != 4 || small < 4 {
		t.Fatalf("%d expert units and %d within the buckets, want the 4 blocks' each", experts, small)
	}
	for u, n := range memory.ReduceScatterLags(s) {
		if n != 1 {
			t.Errorf("unit %d: %d syncs pending, want 1", u, n)
		}
	}
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := res.Peak()
	if walk := res.MemoryModel.Peak; walk != peak {
		t.Errorf("memory model's peak %d B, replayed %d B: want the same", walk, peak)
	}
	// At the peak no two expert units' unsharded gradients are alive.
	grads, rest := componentAtPeak(t, res, "grads")
	var shards int64
	for _, u := range res.MemoryModel.Units {
		shards += u.ShardGrad
	}
	if grads-rest >= 2*2*expert+shards {
		t.Errorf("grads at the peak %d B above rest: want under two expert units' bf16 gradients (%d B) and the shards (%d B)", grads-rest, 2*2*expert, shards)
	}
}

// TestFSDP1ReplayAboveWalkDoc holds docs/memory-model.md's figures for
// FSDP1's unbounded reduce-scatters: GPT-3 175B on 16,384 GPUs with hpZ 8
// under `boundary: fsdp1`, the walk's peak against the replay's.
func TestFSDP1ReplayAboveWalkDoc(t *testing.T) {
	s := example(t, "gpt3-175b-16k", "communication.zero_hpz_partition_size=8", "communication.boundary=fsdp1")
	res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := res.Peak()
	gib := func(b int64) float64 { return float64(b) / float64(units.GiB) }
	golden.CheckQuotes(t, "../docs/memory-model.md", "TestFSDP1ReplayAboveWalkDoc (gpt3-175b-16k, hpZ 8, boundary fsdp1)",
		fmt.Sprintf("under `boundary: fsdp1`: %.2f GiB walked, %.2f GiB replayed)", gib(res.MemoryModel.Peak), gib(peak)))
}
