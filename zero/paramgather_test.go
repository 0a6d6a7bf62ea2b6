package zero

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// llama8bOPG is Llama 3 8B's block shape (hidden 4096, 32 heads, 8 KV
// heads, ffn 14,336, vocabulary 128,256, untied) with eight blocks, as
// swiss-ai/Megatron-LM's submit-llama3-8b.sh at e50c6ba0 runs it
// (QA s31 finding 5): Megatron-Core's distributed optimizer with
// --overlap-grad-reduce --overlap-param-gather, bf16 gradients, MBS 1, GA 2,
// seq 8192, on GH200 nodes of 4 with one 200 Gb/s NIC each (Alps: "four
// Grace-Hopper modules and four corresponding network interface cards",
// eth-cscs/cscs-docs docs/alps/hardware.md at 1690357c), 16 nodes. Buckets
// of 40 M parameters (80 MB of bf16): Megatron's default below dp 40.
const llama8bOPG = `version: 1
name: llama8b-opg
stack: megatron
cluster: {nodes: 16, gpus_per_node: 4, gpu: GH200-96GB, inter: {preset: HDR}}
model: {kind: transformer, arch: llama, hidden: 4096, layers: 8, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, seq_len: 8192}
parallelism: {dp: 64, zero_stage: 1, k: 1}
training: {micro_batch: 1, grad_accum: 2, param_dtype: bf16, reduce_dtype: param_dtype, attention_kernel: te}
communication: {overlap: true, bucket_size: 80MB, zero1_allreduce: false, overlap_param_gather: true, padding: megatron}
`

func loadOPG(t *testing.T, sets ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("llama8b-opg.yaml", []byte(llama8bOPG), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOverlapParamGatherChain holds the step's parameter all-gathers to
// Megatron-Core's forward pre-hook chain (paramgather.go cites the code):
//
//   - they run in the step's first micro-batch only, one per bucket, in
//     reverse buffer order ("all-gathers happen in reverse order of
//     buckets", distributed_data_parallel.py:211-218), the first the
//     embedding's;
//   - the first hook dispatches the first bucket and its successor, after
//     nothing; every later gather is dispatched by its predecessor's first
//     hook, so it waits for the compute before that hook, which is the
//     task right before the forward piece that waits for the predecessor;
//   - at 40 M parameters a block's buffer holds three buckets, [fc2],
//     [fc1 weight] and [fc1's norm, qkv and its norm, proj] (params[::-1],
//     param_and_grad_buffer.py:529-560), first used at linear_qkv,
//     linear_fc1 and linear_fc2: the first forward of a block runs in
//     three pieces that add up to its forward, and fc1's piece is twice
//     fc2's (SwiGLU's gate and up against down, 2·h·ffn against h·ffn
//     parameters); the second micro-batch's forward is one task.
func TestOverlapParamGatherChain(t *testing.T) {
	s := loadOPG(t)
	sc, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	var chain []int32 // the gathers in issue order
	for _, i := range sc.Order[ParamComm] {
		task := sc.Tasks[i]
		if task.Kind != AllGather {
			continue
		}
		if task.Phase != PhasePostOptAG || task.Micro != 0 {
			t.Errorf("task %d: all-gather of phase %v in micro-step %d, want the post-optimizer gathers in micro-step 0", i, task.Phase, task.Micro)
		}
		chain = append(chain, i)
	}
	if len(chain) != len(sc.Buckets) || len(chain) < 3 {
		t.Fatalf("%d all-gathers for %d buckets", len(chain), len(sc.Buckets))
	}
	if u := sc.Buckets[sc.Tasks[chain[0]].Bucket].FirstUnit; u != 0 {
		t.Errorf("the first all-gather is of a bucket of unit %d, want the embedding's (unit 0)", u)
	}
	// compute is the compute stream in issue order; next maps a compute
	// task to the one after it.
	next := map[int32]int32{}
	for j := 1; j < len(sc.Order[Compute]); j++ {
		next[sc.Order[Compute][j-1]] = sc.Order[Compute][j]
	}
	for j, i := range chain {
		task := sc.Tasks[i]
		if j > 0 && task.Bucket != sc.Tasks[chain[j-1]].Bucket-1 {
			t.Errorf("all-gather %d is of bucket %d after bucket %d, want reverse buffer order", j, task.Bucket, sc.Tasks[chain[j-1]].Bucket)
		}
		if j < 2 {
			if len(task.After) != 0 {
				t.Errorf("all-gather %d (bucket %d) waits for %v, want nothing (the first hook dispatches it)", j, task.Bucket, task.After)
			}
			continue
		}
		if len(task.After) != 1 || sc.Tasks[task.After[0]].Kind != Forward {
			t.Errorf("all-gather %d (bucket %d) waits for %v, want one forward task", j, task.Bucket, task.After)
			continue
		}
		hooked, ok := next[task.After[0]]
		if !ok || !slices.Contains(sc.Tasks[hooked].After, chain[j-1]) {
			t.Errorf("all-gather %d (bucket %d) is dispatched after task %d, but the compute after it does not wait for the gather before (%d)", j, task.Bucket, task.After[0], chain[j-1])
		}
	}
	pieces := map[[2]int][]units.Duration{} // (micro-step, unit) → its forward tasks
	for _, task := range sc.Tasks {
		if task.Kind == Forward {
			k := [2]int{task.Micro, task.Unit}
			pieces[k] = append(pieces[k], task.Dur)
		}
	}
	for u, c := range sc.Costs {
		for m := range 2 {
			p := pieces[[2]int{m, u}]
			var sum units.Duration
			for _, d := range p {
				sum += d
			}
			if sum != c.Fwd {
				t.Errorf("%s micro-step %d: forward pieces %v add up to %v, want %v", c.Name, m, p, sum, c.Fwd)
			}
			want := 1
			if m == 0 && strings.HasPrefix(c.Name, "block.") {
				want = 3
			}
			if len(p) != want {
				t.Errorf("%s micro-step %d: %d forward tasks, want %d", c.Name, m, len(p), want)
				continue
			}
			if want == 1 {
				continue
			}
			if d := p[1] - 2*p[2]; d > p[2]/1000 || -d > p[2]/1000 { // fc1 also holds its norm's h
				t.Errorf("%s: linear_fc1's piece %v is not twice linear_fc2's %v", c.Name, p[1], p[2])
			}
			if p[0] <= c.FwdAttn {
				t.Errorf("%s: the attention piece %v does not hold the core attention %v and the qkv and proj GEMMs", c.Name, p[0], c.FwdAttn)
			}
		}
	}
}

// TestOverlapParamGatherExposure replays llama8bOPG: the first gather
// (the embedding's 1.05 GB bucket) waits for nothing and the embedding's
// forward waits for it, so it is exposed whole; the output layer's, as
// large, is dispatched by the last block's linear_fc2 and mostly exposed
// too; the blocks' gathers (three buckets, 0.4 GB a block, at 25 GB/s per
// NIC) run under the ~9 ms forwards of the blocks before. Exposed
// all-gather time is therefore at least the first gather's and under half
// the gathers' total (before the chain the whole total was exposed: every
// gather ran in backward order, the embedding's last).
// The replay's memory peak is the memory model's: the events at the end of
// a unit's forward bind to its last piece.
func TestOverlapParamGatherExposure(t *testing.T) {
	s := loadOPG(t)
	res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Ranks[0]
	var first units.Duration
	for _, sp := range res.Spans[0] {
		task := res.Schedule.Tasks[sp.Task]
		if task.Kind == AllGather && res.Schedule.Buckets[task.Bucket].FirstUnit == 0 {
			first = sp.End - sp.Start
		}
	}
	if first == 0 {
		t.Fatal("no all-gather of the embedding's bucket in rank 0's timeline")
	}
	if st.ExposedAllGather < first || 2*st.ExposedAllGather >= st.AllGather {
		t.Errorf("exposed all-gather %v of %v in all, want at least the embedding's gather %v and under half the total", st.ExposedAllGather, st.AllGather, first)
	}
	if res.MemoryModel == nil || len(res.PeakMemory) == 0 {
		t.Fatalf("no memory model (%v) or replay peak (%d ranks) to compare", res.MemoryModel != nil, len(res.PeakMemory))
	}
	if res.PeakMemory[0] != res.MemoryModel.Peak {
		t.Errorf("replay peak %d B, memory model's %d B", res.PeakMemory[0], res.MemoryModel.Peak)
	}
}

// TestLastPiece binds the memory events at the end of a unit's forward to
// the end of its last piece: in llama8bOPG's first micro-step a block's
// first forward task leads to its third, and every other task (the
// second micro-step's forwards, the gathers between the pieces, the
// backward) is its own last piece.
func TestLastPiece(t *testing.T) {
	sc, err := Build(loadOPG(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int]bool{}
	for i, task := range sc.Tasks {
		got := lastPiece(sc.Tasks, int32(i))
		k := [2]int{task.Micro, task.Unit}
		switch {
		case task.Kind == Forward && task.Micro == 0 && strings.HasPrefix(sc.Costs[task.Unit].Name, "block.") && !seen[k]:
			seen[k] = true
			var want []int32
			for j := i; j < len(sc.Tasks); j++ {
				if n := sc.Tasks[j]; n.Kind == Forward && n.Unit == task.Unit && n.Micro == 0 {
					want = append(want, int32(j))
				}
			}
			if len(want) != 3 || got != want[2] {
				t.Errorf("%s: lastPiece(%d) = %d, want the last of its pieces %v", sc.Costs[task.Unit].Name, i, got, want)
			}
		case task.Kind != Forward || task.Micro == 1:
			if got != int32(i) {
				t.Errorf("task %d (%v micro-step %d): lastPiece = %d, want itself", i, task.Kind, task.Micro, got)
			}
		}
	}
}

// TestHookAt holds hookAt to the arithmetic its comment states, worked by
// hand: a block of linear_qkv 30, linear_proj 10, linear_fc1 40 and
// linear_fc2 20 elements (100 in all) whose forward is 1,100 ps, 100 of
// them the core attention. The other 1,000 ps are spread by parameters:
// qkv at 0; proj after qkv's 300 and the attention, 400; fc1 at
// 100 + 1000·40/100 = 500; fc2 at 100 + 1000·80/100 = 900. A unit that
// also holds a tensor of no block module (an embedding), or has no
// linear_qkv, is all at 0.
func TestHookAt(t *testing.T) {
	block := func(u int, extra ...string) []memory.ParamRange {
		var ps []memory.ParamRange
		for _, p := range []struct {
			name  string
			numel int64
		}{{"self_attention.linear_qkv.weight", 30}, {"self_attention.linear_proj.weight", 10}, {"mlp.linear_fc1.weight", 40}, {"mlp.linear_fc2.weight", 20}} {
			ps = append(ps, memory.ParamRange{Param: memory.Param{Name: "decoder.layers.0." + p.name, Numel: p.numel, Unit: u}})
		}
		for _, n := range extra {
			ps = append(ps, memory.ParamRange{Param: memory.Param{Name: n, Numel: 50, Unit: u}})
		}
		return ps
	}
	l := &memory.Layout{}
	l.Params = append(l.Params, block(0)...)
	l.Params = append(l.Params, block(1, "embedding.word_embeddings.weight")...)
	l.Params = append(l.Params, memory.ParamRange{Param: memory.Param{Name: "decoder.layers.2.mlp.linear_fc2.weight", Numel: 20, Unit: 2}})
	c := LayerCost{Fwd: 1100, FwdAttn: 100}
	got := hookAt([]LayerCost{c, c, c}, l)
	want := []units.Duration{0, 400, 500, 900, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(got, want) {
		t.Errorf("hookAt = %v, want %v", got, want)
	}
}

// TestOverlapParamGatherSmallBuckets runs llama8bOPG with 8 MB buckets
// (4 M bf16 parameters): the embedding (525 M parameters) spans many
// buckets, all first used at its forward's start, so one hook enters many
// buckets at once. Megatron still issues them in reverse buffer order
// (the chain, distributed_data_parallel.py:211-218), and every gather is
// waited on by the first-micro-step forward of the unit that first uses
// it (finish_param_sync waits for the group's handle). With a
// context-parallel ring (cp 2) the replay runs each first forward as one
// task (paramChain.forward).
func TestOverlapParamGatherSmallBuckets(t *testing.T) {
	for _, tc := range []struct {
		sets   []string
		pieces int // first-micro-step forward tasks of a block
	}{
		{[]string{"communication.bucket_size=8MB"}, 0},
		{[]string{"parallelism.cp=2", "parallelism.dp=32"}, 1},
	} {
		sc, err := Build(loadOPG(t, tc.sets...))
		if err != nil {
			t.Fatal(err)
		}
		waited := map[int32]bool{}
		forwards := map[int]int{}
		for _, task := range sc.Tasks {
			if task.Kind == Forward && task.Micro == 0 {
				forwards[task.Unit]++
				for _, d := range task.After {
					waited[d] = true
				}
			}
		}
		var prev = -1
		n := 0
		for _, i := range sc.Order[ParamComm] {
			task := sc.Tasks[i]
			if task.Kind != AllGather {
				continue
			}
			n++
			if prev >= 0 && task.Bucket != prev-1 {
				t.Errorf("%v: all-gather of bucket %d after bucket %d, want reverse buffer order", tc.sets, task.Bucket, prev)
			}
			prev = task.Bucket
			if !waited[i] {
				t.Errorf("%v: no first-micro-step forward waits for the all-gather of bucket %d", tc.sets, task.Bucket)
			}
		}
		if n != len(sc.Buckets) {
			t.Errorf("%v: %d all-gathers for %d buckets", tc.sets, n, len(sc.Buckets))
		}
		if tc.pieces > 0 {
			for u, c := range sc.Costs {
				if forwards[u] != tc.pieces {
					t.Errorf("%v: %s: %d first-micro-step forward tasks, want %d", tc.sets, c.Name, forwards[u], tc.pieces)
				}
			}
		}
	}
}
